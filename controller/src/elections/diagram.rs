//! The space-time diagram of a LIVE election, drawn from the nodes' message
//! logs: each send paired with its receipts (a lost message has none, a
//! duplicated one two), in microseconds since the first send; a kept
//! leadership's also with its terms and the crashes and partitions injected
//! while it ran.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ringleader_core::algo::{Msg, MsgKind};
use ringleader_core::diagram::{self, Arrow, Mark, StateChange, Term};
use ringleader_core::faults::{Outage, Split};
use ringleader_proto::v1 as pb;

use super::agent;
use super::run::{ActiveFaults, Drawing, Plan};
use crate::cluster::Node;

/// The pieces of a LIVE election's space-time diagram.
pub(super) struct LiveDiagram {
    title: String,
    nodes: Vec<String>,
    ids: Vec<u64>,
    arrows: Vec<Arrow>,
    /// Each node's state when prepared and its changes, as the nodes logged them.
    states: States,
    /// Unix time (µs) of the first send: the origin of the time axis.
    origin_us: u64,
    /// What is missing from the picture (unread logs, truncation).
    notes: Vec<String>,
    /// The positions form a ring (its wrap-around drawn across the edges).
    ring: bool,
    drawing: Drawing,
    outages: Vec<Outage>,
    splits: Vec<Split>,
    terms: Vec<Term>,
    marks: Vec<Mark>,
    /// The initiators' positions.
    initiators: Vec<u32>,
}

/// A change of belief of a kept leadership, as its diagram draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Belief {
    /// Microseconds since the leadership started.
    pub(super) at_us: u64,
    /// The node's position.
    pub(super) position: u32,
    /// The term of the belief.
    pub(super) term: u64,
    /// The leader it names (`None`: none known, it elects).
    pub(super) leader: Option<u64>,
}

/// Read the nodes' message logs of a LIVE election into its diagram.
pub(super) async fn read(
    plan: &Plan,
    drawing: Drawing,
    nodes: &[Arc<Node>],
    election_id: &str,
    timeout: Duration,
) -> LiveDiagram {
    let logs = agent::message_logs(nodes, election_id, timeout).await;
    let names: Vec<String> = nodes.iter().map(|n| n.name()).collect();
    let title = format!("{}, n = {}, k = {}, LIVE", plan.spec.name, plan.n(), plan.k());
    LiveDiagram {
        ring: plan.topology.kind().is_ring(),
        drawing,
        initiators: plan.initiators.clone(),
        ..LiveDiagram::from_logs(title, &names, &plan.ids, &logs)
    }
}

impl LiveDiagram {
    /// The diagram of the logs of positions named `names` with ids `ids` (`None`: a log not read).
    fn from_logs(title: String, names: &[String], ids: &[u64], logs: &[Option<pb::MessageLog>]) -> LiveDiagram {
        let mut notes = Vec::new();
        let unread: Vec<String> =
            logs.iter().enumerate().filter(|(_, l)| l.is_none()).map(|(i, _)| names[i].clone()).collect();
        if !unread.is_empty() {
            notes.push(format!("no log from {}", unread.join(", ")));
        }
        let truncated: u64 = logs.iter().flatten().map(|l| l.truncated).sum();
        if truncated > 0 {
            notes.push(format!("{truncated} log entries over the limit left out"));
        }
        let nodes = names.iter().zip(ids).map(|(n, id)| format!("{n} (id {id})")).collect();
        let (arrows, origin_us, all) = arrows(logs);
        if all > arrows.len() {
            notes.push(format!("first {} of {all} messages drawn", arrows.len()));
        }
        let states = States::read(logs, origin_us);
        LiveDiagram {
            title,
            nodes,
            ids: ids.to_vec(),
            arrows,
            states,
            origin_us,
            notes,
            ring: false,
            drawing: Drawing::default(),
            outages: Vec::new(),
            splits: Vec::new(),
            terms: Vec::new(),
            marks: Vec::new(),
            initiators: Vec::new(),
        }
    }

    /// Add what a kept leadership lived through: its `beliefs` (times since
    /// `started_us`, a unix time in µs) give the terms and where a node gave
    /// up on its leader ("suspects") or a leader on itself ("steps down"), and
    /// `faults` (unix times in µs, what [`crate::faults::Faults::changes_since`]
    /// gives) the crashes, recoveries and partitions.
    pub(super) fn with_history(
        mut self,
        started_us: u64,
        beliefs: &[Belief],
        ids: &[u64],
        faults: &[(u64, ActiveFaults)],
    ) -> LiveDiagram {
        let at = |unix_us: u64| unix_us.saturating_sub(self.origin_us);
        let mut believed: Vec<Option<u64>> = vec![None; ids.len()];
        for b in beliefs {
            let p = b.position as usize;
            let Some(own) = ids.get(p) else { continue };
            let when = at(started_us + b.at_us);
            if b.leader == Some(*own) && self.terms.last().is_none_or(|t| b.term > t.term) {
                self.terms.push(Term { from: when, term: b.term, leader: b.position });
            }
            if b.leader.is_none() {
                match believed[p] {
                    Some(l) if l == *own => {
                        self.marks.push(Mark { node: b.position, at: when, label: "steps down".into() })
                    }
                    Some(_) => self.marks.push(Mark { node: b.position, at: when, label: "suspects".into() }),
                    None => {}
                }
            }
            believed[p] = b.leader;
        }
        let n = self.nodes.len();
        let mut before = ActiveFaults::default();
        for (t, now) in faults {
            for p in now.crashed.iter().filter(|p| !before.crashed.contains(p) && **p < n) {
                self.outages.push(Outage { position: *p as u32, crashed: at(*t), recovered: None });
            }
            for p in before.crashed.iter().filter(|p| !now.crashed.contains(p)) {
                if let Some(o) = self.outages.iter_mut().rev().find(|o| o.position == *p as u32) {
                    o.recovered = Some(at(*t));
                }
            }
            if now.cut_off != before.cut_off {
                if let Some(open) = self.splits.last_mut().filter(|s| s.until.is_none()) {
                    open.until = Some(at(*t));
                }
                if !now.cut_off.is_empty() {
                    let rest = (0..n).filter(|p| !now.cut_off.contains(p)).map(|p| p as u32).collect();
                    let cut = now.cut_off.iter().map(|&p| p as u32).collect();
                    self.splits.push(Split { from: at(*t), until: None, groups: vec![cut, rest] });
                }
            }
            before = now.clone();
        }
        self
    }

    /// The diagram of a leadership still running, titled with the messages drawn so far.
    pub(super) fn svg_so_far(mut self, leader: Option<u32>) -> String {
        let drawn = self.arrows.len() as u64;
        self.title.push_str(" so far");
        self.svg(leader, drawn)
    }

    /// The SVG, its caption naming `messages` and whatever is missing.
    pub(super) fn svg(self, leader: Option<u32>, messages: u64) -> String {
        let mut title = format!("{}: {messages} messages", self.title);
        for note in &self.notes {
            title.push_str(&format!("; {note}"));
        }
        let states = self.states.changes();
        let d = diagram::Diagram {
            title,
            nodes: self.nodes,
            ids: &self.ids,
            arrows: &self.arrows,
            leader,
            time_unit: "µs",
            ring: self.ring,
            labels: self.drawing.labels,
            axis: self.drawing.axis,
            outages: &self.outages,
            splits: &self.splits,
            terms: &self.terms,
            marks: &self.marks,
            states: &states,
            initiators: &self.initiators,
        };
        diagram::svg(&d)
    }
}

/// At most this many distinct state names one election's diagram keeps (see [`States`]).
const MAX_STATE_NAMES: usize = 256;

/// The longest state name drawn, in bytes.
const MAX_STATE_NAME_BYTES: usize = 32;

/// One election's logged states, with the names they use. The names come
/// from the network, so each diagram keeps its own, at most
/// [`MAX_STATE_NAMES`] of at most [`MAX_STATE_NAME_BYTES`] (each algorithm
/// has a handful); any other is drawn as `other`. They go with the diagram:
/// a node that logs names without end fills its own election's table only.
#[derive(Debug, Default)]
struct States {
    /// The distinct names, in the order first seen.
    names: Vec<Box<str>>,
    /// (time, position, index into `names`; `None`: `other`), in time order.
    changes: Vec<(u64, u32, Option<u16>)>,
}

impl States {
    /// Every node's logged states, times relative to `origin` (a unix time in µs; a state
    /// logged before it, the one a node was prepared in, at 0), in time order.
    fn read(logs: &[Option<pb::MessageLog>], origin: u64) -> States {
        let mut states = States::default();
        for (p, log) in logs.iter().enumerate() {
            for s in log.iter().flat_map(|l| &l.states) {
                let name = states.intern(&s.state);
                states.changes.push((s.at_us.saturating_sub(origin), p as u32, name));
            }
        }
        states.changes.sort_by_key(|c| c.0);
        states
    }

    /// The index of `name` in this election's table, added if there is room (`None`: `other`).
    fn intern(&mut self, name: &str) -> Option<u16> {
        if let Some(i) = self.names.iter().position(|n| **n == *name) {
            return Some(i as u16);
        }
        if name.is_empty() || name.len() > MAX_STATE_NAME_BYTES || self.names.len() >= MAX_STATE_NAMES {
            return None;
        }
        self.names.push(name.into());
        Some(self.names.len() as u16 - 1)
    }

    /// The changes as the diagram draws them, their names borrowed from the table.
    fn changes(&self) -> Vec<StateChange<'_>> {
        let name = |i: Option<u16>| i.and_then(|i| self.names.get(i as usize)).map_or("other", |n| &**n);
        self.changes.iter().map(|&(time, position, i)| StateChange { time, position, state: name(i) }).collect()
    }
}

/// Pair each logged send with its receipts, times relative to the first
/// send (returned, a unix time in µs), in sending order and at most
/// [`diagram::MAX_ARROWS`] (how many there were is returned too). Kinds the controller does not know are left out;
/// a body it cannot read leaves the arrow unlabelled.
fn arrows(logs: &[Option<pb::MessageLog>]) -> (Vec<Arrow>, u64, usize) {
    let kind = |name: &str| MsgKind::ALL.into_iter().find(|k| k.name() == name);
    // (sender, seq) -> (receiver, kind, sending time, the message if its body was logged)
    type Send = (u32, MsgKind, u64, Option<Msg>);
    let mut sends: HashMap<(u32, u64), Send> = HashMap::new();
    let mut origin = u64::MAX;
    for (from, log) in logs.iter().enumerate() {
        for s in log.iter().flat_map(|l| &l.sent) {
            if let Some(k) = kind(&s.kind) {
                let msg = s.body.as_ref().and_then(|b| Msg::try_from(b).ok()).filter(|m| m.kind() == k);
                sends.insert((from as u32, s.seq), (s.to, k, s.at_us, msg));
                origin = origin.min(s.at_us);
            }
        }
    }
    if sends.is_empty() {
        origin = 0;
    }
    let mut arrows = Vec::with_capacity(sends.len());
    let mut received: HashSet<(u32, u64)> = HashSet::new();
    for (to, log) in logs.iter().enumerate() {
        for r in log.iter().flat_map(|l| &l.received) {
            if let Some(&(_, k, sent, msg)) = sends.get(&(r.from, r.seq)) {
                received.insert((r.from, r.seq));
                arrows.push(Arrow {
                    from: r.from,
                    to: to as u32,
                    kind: k,
                    sent: sent.saturating_sub(origin),
                    received: Some(r.at_us.saturating_sub(origin)),
                    msg,
                    slow: false,
                    in_flight: false,
                });
            }
        }
    }
    for (&(from, seq), &(to, kind, sent, msg)) in &sends {
        if !received.contains(&(from, seq)) {
            let sent = sent.saturating_sub(origin);
            arrows.push(Arrow { from, to, kind, sent, received: None, msg, slow: false, in_flight: false });
        }
    }
    arrows.sort_by_key(|a| (a.sent, a.from, a.to));
    let all = arrows.len();
    arrows.truncate(diagram::MAX_ARROWS);
    (arrows, origin, all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(seq: u64, to: u32, kind: &str, at_us: u64) -> pb::LoggedSend {
        pb::LoggedSend { seq, to, kind: kind.into(), at_us, body: None }
    }

    fn receipt(from: u32, seq: u64, at_us: u64) -> pb::LoggedReceipt {
        pb::LoggedReceipt { from, seq, kind: String::new(), at_us }
    }

    /// A send received twice makes two arrows, a send never received one arrow without an arrival,
    /// a send of an unknown kind none; times count from the first send, in sending order.
    #[test]
    fn sends_pair_with_their_receipts() {
        let logs = [
            Some(pb::MessageLog {
                sent: vec![sent(1, 1, "election", 1_000), sent(2, 1, "notify", 1_500), sent(3, 1, "gossip", 1_600)],
                ..Default::default()
            }),
            Some(pb::MessageLog {
                received: vec![receipt(0, 1, 1_200), receipt(0, 1, 1_300), receipt(0, 3, 1_700)],
                ..Default::default()
            }),
        ];
        let election = |received| Arrow {
            from: 0,
            to: 1,
            kind: MsgKind::Election,
            sent: 0,
            received,
            msg: None,
            slow: false,
            in_flight: false,
        };
        assert_eq!(
            arrows(&logs).0,
            [
                election(Some(200)),
                election(Some(300)),
                Arrow {
                    from: 0,
                    to: 1,
                    kind: MsgKind::Notify,
                    sent: 500,
                    received: None,
                    msg: None,
                    slow: false,
                    in_flight: false
                },
            ]
        );
        assert_eq!(arrows(&[None, None]).0, []);
    }

    /// The nodes' logged states become the diagram's state bands, times from the first send (the
    /// state a node was prepared in, logged before it, at 0), in time order; an unknown-length or
    /// empty name from the network is drawn as `other`, and a name is kept once.
    #[test]
    fn logged_states_become_state_bands() {
        let state = |state: &str, at_us| pb::LoggedState { state: state.into(), at_us };
        let logs = [
            Some(pb::MessageLog {
                sent: vec![sent(1, 1, "election", 1_000)],
                states: vec![state("asleep", 900), state("candidate", 1_000), state("leader", 1_400)],
                ..Default::default()
            }),
            Some(pb::MessageLog {
                received: vec![receipt(0, 1, 1_200)],
                states: vec![state("asleep", 950), state("defeated", 1_200), state(&"x".repeat(40), 1_300)],
                ..Default::default()
            }),
        ];
        let names = ["node-0".to_string(), "node-1".to_string()];
        let d = LiveDiagram::from_logs("as-far".into(), &names, &[2, 1], &logs);
        let got: Vec<(u64, u32, &str)> = d.states.changes().iter().map(|s| (s.time, s.position, s.state)).collect();
        assert_eq!(
            got,
            [
                (0, 0, "asleep"),
                (0, 0, "candidate"),
                (0, 1, "asleep"),
                (200, 1, "defeated"),
                (300, 1, "other"),
                (400, 0, "leader")
            ]
        );
        assert_eq!(d.states.names.iter().filter(|n| &***n == "asleep").count(), 1, "kept once");
        let svg = d.svg(Some(0), 1);
        assert!(svg.contains(r#"data-state="defeated""#) && svg.contains(r#"data-state="leader""#), "bands drawn");
    }

    /// One election cannot change how another draws its states: a node that logs 300 distinct
    /// state names (a hostile one) has its election draw the first MAX_STATE_NAMES of them by name
    /// and the rest as `other`, and an election read after it still draws its own states by name
    /// (before, the names were one table for the process, full from then on until a restart).
    #[test]
    fn each_election_keeps_its_own_state_names() {
        let state = |state: String, at_us| pb::LoggedState { state, at_us };
        let names = ["node-0".to_string(), "node-1".to_string()];
        let hostile = [
            Some(pb::MessageLog {
                sent: vec![sent(1, 1, "election", 1_000)],
                states: (0..300).map(|i| state(format!("hostile-{i}"), 1_000 + i)).collect(),
                ..Default::default()
            }),
            Some(pb::MessageLog { received: vec![receipt(0, 1, 1_200)], ..Default::default() }),
        ];
        let svg = LiveDiagram::from_logs("raft".into(), &names, &[1, 2], &hostile).svg(None, 1);
        assert!(svg.contains(r#"data-state="hostile-0""#) && svg.contains(r#"data-state="hostile-255""#));
        assert!(!svg.contains(r#"data-state="hostile-256""#) && svg.contains(r#"data-state="other""#));
        let own = [
            Some(pb::MessageLog {
                sent: vec![sent(1, 1, "election", 1_000)],
                states: vec![state("own-candidate".into(), 1_000), state("own-leader".into(), 1_100)],
                ..Default::default()
            }),
            Some(pb::MessageLog {
                received: vec![receipt(0, 1, 1_200)],
                states: vec![state("own-follower".into(), 1_200)],
                ..Default::default()
            }),
        ];
        let svg = LiveDiagram::from_logs("raft".into(), &names, &[1, 2], &own).svg(Some(0), 1);
        for name in ["own-candidate", "own-leader", "own-follower"] {
            assert!(svg.contains(&format!(r#"data-state="{name}""#)), "{name} drawn by name");
        }
        assert!(!svg.contains(r#"data-state="other""#));
    }

    /// Logs that could not be read or were truncated are named in the caption's notes, and every
    /// node is labelled with its id.
    #[test]
    fn missing_logs_are_noted() {
        let names = ["node-0".to_string(), "node-1".to_string(), "node-2".to_string()];
        let logs = [None, Some(pb::MessageLog { truncated: 7, ..Default::default() }), None];
        let d = LiveDiagram::from_logs("as-far".into(), &names, &[30, 10, 20], &logs);
        assert_eq!(d.notes, ["no log from node-0, node-2", "7 log entries over the limit left out"]);
        assert_eq!(d.nodes, ["node-0 (id 30)", "node-1 (id 10)", "node-2 (id 20)"]);
        assert!(d.arrows.is_empty());
    }

    /// More messages than a diagram draws: the caption says how many of how many are drawn (the
    /// controller cut them to MAX_ARROWS before drawing, and the page said "all 5000 messages" of
    /// an election that sent 8,127).
    #[test]
    fn a_cut_diagram_says_so() {
        let total = diagram::MAX_ARROWS as u64 + 10;
        let names = ["node-0".to_string(), "node-1".to_string()];
        let logs = [
            Some(pb::MessageLog {
                sent: (0..total).map(|i| sent(i, 1, "election", i)).collect(),
                ..Default::default()
            }),
            Some(pb::MessageLog { received: (0..total).map(|i| receipt(0, i, i + 1)).collect(), ..Default::default() }),
        ];
        let d = LiveDiagram::from_logs("as-far".into(), &names, &[1, 2], &logs);
        assert_eq!(d.arrows.len(), diagram::MAX_ARROWS);
        let svg = d.svg(None, total);
        assert!(svg.contains(&format!("first {} of {total} messages drawn", diagram::MAX_ARROWS)), "{}", &svg[..600]);
    }

    /// A logged body labels its arrow with what it carried; a body of another kind than the log
    /// says is ignored, not trusted.
    #[test]
    fn logged_bodies_say_what_arrows_carry() {
        let election = Msg::Election { id: 42, stage: 0, hops: 3 };
        let mut with_body = sent(1, 1, "election", 10);
        with_body.body = Some(election.into());
        let mut wrong_kind = sent(2, 1, "notify", 20);
        wrong_kind.body = Some(election.into());
        let logs = [
            Some(pb::MessageLog { sent: vec![with_body, wrong_kind], ..Default::default() }),
            Some(pb::MessageLog { received: vec![receipt(0, 1, 15), receipt(0, 2, 25)], ..Default::default() }),
        ];
        let (got, origin, _) = arrows(&logs);
        assert_eq!(origin, 10);
        assert_eq!(got[0].msg, Some(election));
        assert_eq!(got[1].msg, None);
    }

    /// A kept leadership's history becomes terms (each from its first leader's claim, times moved
    /// to the diagram's origin), marks where a follower gives up on its leader or a leader on
    /// itself, outages (a crash until the recovery) and partitions (the cut-off
    /// nodes against the rest, until healed).
    #[test]
    fn a_kept_history_becomes_terms_outages_and_partitions() {
        let names = ["node-0".to_string(), "node-1".to_string(), "node-2".to_string()];
        let logs =
            [Some(pb::MessageLog { sent: vec![sent(1, 1, "election", 1_000_000)], ..Default::default() }), None, None];
        let d = LiveDiagram::from_logs("bully".into(), &names, &[1, 2, 3], &logs);
        let belief = |position: u32, term: u64, leader: Option<u64>, at_ms: u64| Belief {
            at_us: at_ms * 1_000,
            position,
            term,
            leader,
        };
        let timeline = [
            belief(2, 1, Some(3), 5),
            belief(0, 1, Some(3), 6),
            belief(1, 1, Some(3), 7),
            belief(1, 2, None, 300),
            belief(1, 2, Some(2), 400),
            belief(2, 2, None, 450),
        ];
        let crashed = |c: Vec<usize>, cut: Vec<usize>| ActiveFaults { crashed: c, cut_off: cut, ..Default::default() };
        let faults = [
            (1_100_000, crashed(vec![2], vec![])),
            (1_700_000, crashed(vec![], vec![0])),
            (1_900_000, crashed(vec![], vec![])),
        ];
        // Started 2 ms before the first send.
        let d = d.with_history(998_000, &timeline, &[1, 2, 3], &faults);
        assert_eq!(d.terms, [Term { from: 3_000, term: 1, leader: 2 }, Term { from: 398_000, term: 2, leader: 1 }]);
        assert_eq!(d.outages, [Outage { position: 2, crashed: 100_000, recovered: Some(700_000) }]);
        assert_eq!(d.splits, [Split { from: 700_000, until: Some(900_000), groups: vec![vec![0], vec![1, 2]] }]);
        let mark = |node: u32, at: u64, label: &str| Mark { node, at, label: label.into() };
        assert_eq!(d.marks, [mark(1, 298_000, "suspects"), mark(2, 448_000, "steps down")]);
        let svg = d.svg(Some(1), 1);
        assert!(
            svg.contains(r#"class="term""#) && svg.contains(r#"class="down""#) && svg.contains(r#"class="partition""#)
        );
    }
}
