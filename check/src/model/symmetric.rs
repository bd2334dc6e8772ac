//! The symmetric execution (Angluin's argument, Santoro's "Election:
//! Impossibility Result"): on a ring that looks the same from every node (a
//! rotation maps each node's ports onto the next one's, as on an oriented
//! ring or a complete network with chordal labels) where every node starts in the same state (the same id, every node
//! an initiator), a synchronous scheduler can make every node take the same
//! step in lock-step rounds, so that after every round every node is again
//! in the same state. A deterministic algorithm then either has every node
//! decide alike (every node leads: more than one leader) or no node ever
//! decides. [`ElectionModel::symmetric`] runs that schedule and reports it
//! as a [`Counterexample`] with its rounds in words.

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ringleader_core::algo::{LEFT, Msg, Port, RIGHT, Role};

use super::ElectionModel;
use super::state::{Sent, System};
use crate::{Counterexample, Limits, Step, resident_mib};

/// The property a symmetric run that comes back to a state it passed breaks: it goes round for ever.
pub const ENDS: &str = "the election ends";

/// The most rounds a symmetric run is followed for.
pub const MAX_ROUNDS: usize = 10_000;

/// A symmetric run reads the process's resident memory every this many
/// rounds (and before its first), against [`Limits::max_memory_mib`].
pub const MEMORY_READ_ROUNDS: usize = 64;

impl ElectionModel {
    /// The symmetric execution of this election, when there is one: a
    /// one-shot election on a ring a rotation maps onto itself, every node
    /// an initiator, every node's state machine the same at the start (the
    /// same id, the same random bits). Each round every node takes the same
    /// step (wakes, takes the oldest message on the same port, or fires the
    /// same timer; or time passes), and every node is in the same state
    /// after it; the run ends at the first round after which a property
    /// ([`ElectionModel::properties`]) is broken, or when it comes back to a
    /// state it passed ([`ENDS`]: no node ever decides anything new). `None`
    /// where there is no such run, or it ends without breaking anything
    /// within [`MAX_ROUNDS`].
    pub fn symmetric(&self) -> Option<Counterexample> {
        self.symmetric_within(&Limits::default(), Instant::now(), None).ok().flatten()
    }

    /// [`Self::symmetric`] within a check's limits: its timeout (from
    /// `started`, when the check began), its memory and its caller's
    /// `cancel`, read before every round (the memory every
    /// `MEMORY_READ_ROUNDS`). `Err` names the limit that cut the run
    /// short, as [`crate::Report::limit`] does: "time", "memory" or
    /// "stopped".
    pub fn symmetric_within(
        &self,
        limits: &Limits,
        started: Instant,
        cancel: Option<&AtomicBool>,
    ) -> Result<Option<Counterexample>, &'static str> {
        let limited = |round: usize| {
            [
                (cancel.is_some_and(|c| c.load(Ordering::Relaxed)), "stopped"),
                (limits.timeout.is_some_and(|t| started.elapsed() >= t), "time"),
                (
                    limits.max_memory_mib > 0
                        && (round - 1).is_multiple_of(MEMORY_READ_ROUNDS)
                        && resident_mib().is_some_and(|m| m > limits.max_memory_mib),
                    "memory",
                ),
            ]
            .into_iter()
            .find_map(|(hit, what)| hit.then_some(what))
        };
        let e = &self.election;
        let n = e.topology.len();
        if self.is_kept() || e.initiators.len() != n as usize || !self.rotation_maps_the_ring() {
            return Ok(None);
        }
        let mut s = self.initial();
        if !same_everywhere(&s) {
            return Ok(None);
        }
        let hasher = foldhash::quality::FixedState::with_seed(0x5e77);
        let mut seen = HashSet::new();
        let (mut steps, mut rounds) = (Vec::new(), Vec::new());
        for round in 1..=MAX_ROUNDS {
            if let Some(what) = limited(round) {
                return Err(what);
            }
            seen.insert(hasher.hash_one((&s.nodes, &s.links, &s.timers, &s.unstarted)));
            let Some((taken, what)) = self.lockstep(&s) else { return Ok(None) };
            let before = s.clone();
            // What every node sent this round (position 0's stand for every node's).
            let mut sent = Vec::new();
            for &step in &taken {
                let Some(next) = self.next_state_logged(&s, step, Some(&mut sent)) else { return Ok(None) };
                s = next;
            }
            steps.extend_from_slice(&taken);
            if !same_everywhere(&s) {
                return Ok(None);
            }
            rounds.push(self.round_words(round, &what, &before, &s, &sent));
            let broken = (0..self.properties().len()).find(|&i| !self.holds(i, &s)).map(|i| self.properties()[i]);
            let again = !seen.insert(hasher.hash_one((&s.nodes, &s.links, &s.timers, &s.unstarted)));
            if let Some(property) = broken.or(again.then_some(ENDS)) {
                rounds.push(self.ending(property, round, &s));
                let error = s.error().map(str::to_string);
                return Ok(Some(Counterexample {
                    property,
                    steps,
                    decisions: s.decisions(),
                    beliefs: s.beliefs(),
                    error,
                    rounds,
                }));
            }
        }
        Ok(None)
    }

    /// A rotation by one position maps every port onto the same port of the next node: port q of
    /// every node leads the same distance round and arrives on the same port.
    fn rotation_maps_the_ring(&self) -> bool {
        let t = &self.election.topology;
        let n = t.len();
        let first = t.ports(0);
        (0..n).all(|p| {
            let ports = t.ports(p);
            ports.len() == first.len()
                && ports.iter().zip(first).all(|(l, f)| {
                    l.peer == (p + f.peer) % n && l.remote_port == f.remote_port && l.outgoing == f.outgoing
                })
        })
    }

    /// The steps of one lock-step round from `s` (every node the same step, in position order) and
    /// what every node does, in words; `None` when no step is open to every node alike.
    fn lockstep(&self, s: &System) -> Option<(Vec<Step>, String)> {
        let t = &self.election.topology;
        let n = t.len();
        if !s.unstarted.is_empty() {
            return Some((s.unstarted.iter().map(|&p| Step::Start(p)).collect(), "wakes up and starts".into()));
        }
        for q in 0..t.ports(0).len() {
            let heads: Option<Vec<Msg>> =
                (0..n).map(|p| Self::on_link(s, self.link_base[p as usize] + q).first().map(|f| f.msg)).collect();
            if let Some(heads) = heads {
                let port = q as Port;
                let steps = (0..n).zip(&heads).map(|(from, &msg)| Step::Deliver { from, port, msg }).collect();
                let arrives = t.ports(0)[q].remote_port;
                let what = format!("receives {} on its {}", heads[0].in_words(), port_words(arrives));
                return Some((steps, what));
            }
        }
        let due: Vec<_> = s.timers.iter().filter(|t| t.left == 0 && t.node == 0).map(|t| t.timer).collect();
        if let Some(&timer) = due.first() {
            let steps = (0..n).map(|node| Step::Fire { node, timer }).collect();
            return Some((steps, format!("fires its {}", self.timer_words(0, timer))));
        }
        let mut actions = Vec::new();
        self.actions(s, &mut actions);
        actions.into_iter().find(|a| matches!(a, Step::Tick(_))).map(|tick| (vec![tick], String::new()))
    }

    /// One round in words: what every node did, what it sent and decided, the state every node is in.
    fn round_words(&self, round: usize, what: &str, before: &System, after: &System, sent: &[Sent]) -> String {
        if what.is_empty() {
            return format!("round {round}: time passes; every node still in state \"{}\"", state_of(after));
        }
        let mut did = vec![format!("every node {what}")];
        if let (None, Some(d)) = (before.nodes[0].decision(), after.nodes[0].decision()) {
            did.push(if d.role == Role::Leader {
                "decides it leads".to_string()
            } else {
                format!("decides it follows {}", d.leader)
            });
        }
        for m in sent.iter().filter(|m| m.from == 0) {
            did.push(format!("sends {} on its {}", m.msg.in_words(), port_words(m.port)));
        }
        format!("round {round}: {}; every node now in the same state, \"{}\"", did.join(", "), state_of(after))
    }

    /// How the symmetric run ends, in words.
    fn ending(&self, property: &str, rounds: usize, s: &System) -> String {
        let n = s.nodes.len();
        let alike = format!("every node in the same state after each of {rounds} rounds");
        let leaders = s.decisions().iter().flatten().filter(|d| d.role == Role::Leader).count();
        if property == ENDS {
            return format!(
                "{alike}: the run is back where it was after an earlier round, so it goes round for ever and no \
                 node ever decides differently from the others: \"{ENDS}\" is broken"
            );
        }
        if leaders == n {
            return format!("{alike}: all {n} nodes decide they lead, so \"{property}\" is broken");
        }
        format!("{alike}: \"{property}\" is broken ({} of {n} nodes decided)", s.decisions().iter().flatten().count())
    }
}

/// Every node's state machine and shell equal (the same state, the same decision).
fn same_everywhere(s: &System) -> bool {
    s.nodes.iter().all(|node| *node == s.nodes[0])
}

/// The state every node is in, by its algorithm's name for it.
fn state_of(s: &System) -> &'static str {
    s.nodes[0].algorithm().state()
}

/// A ring port in words.
fn port_words(port: Port) -> String {
    match port {
        LEFT => "left port".into(),
        RIGHT => "right port".into(),
        other => format!("port {other}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use crate::{CheckAsk, Limits, check_with};

    /// AsFar on [4, 4, 4], whose symmetric run breaks "at most one leader": unlimited, that run is
    /// the check's first counterexample; a check stopped by its caller, out of time or over its
    /// memory (1 MiB) runs no symmetric run past its limit, on one thread or two: no counterexample
    /// in rounds, and the report is incomplete, naming the limit.
    #[test]
    fn the_symmetric_run_obeys_the_checks_limits() {
        let checked = CheckAsk { algorithm: "as-far".into(), ids: vec![4; 3], ..CheckAsk::default() }.check().unwrap();
        let run = |limits: Limits, cancel: Option<&AtomicBool>| {
            check_with(checked.election.clone(), Limits { fifo: checked.fifo, ..limits }, cancel, |_| {})
        };
        let free = run(Limits::default(), None);
        assert!(free.complete && !free.counterexamples[0].rounds.is_empty(), "{free:?}");
        let stopped = AtomicBool::new(true);
        for threads in [1, 2] {
            let cut = [
                (run(Limits { threads, ..Limits::default() }, Some(&stopped)), "stopped"),
                (run(Limits { threads, timeout: Some(Duration::ZERO), ..Limits::default() }, None), "time"),
                (run(Limits { threads, max_memory_mib: 1, ..Limits::default() }, None), "memory"),
            ];
            for (r, limit) in cut {
                assert_eq!((r.complete, r.limit), (false, Some(limit)), "{threads} threads: {r:?}");
                assert!(r.counterexamples.iter().all(|c| c.rounds.is_empty()), "{threads} threads, {limit}: {r:?}");
            }
        }
    }
}
