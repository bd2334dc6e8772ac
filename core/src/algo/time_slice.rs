//! # TimeSlice (Lynch)
//!
//! * Source: N. Lynch, *Distributed Algorithms*, Morgan Kaufmann 1996,
//!   §3.5.1 (TimeSlice); the lower bound it beats: G. N. Frederickson,
//!   N. A. Lynch, "Electing a leader in a synchronous ring", JACM 34(1), 1987.
//! * Network: ring, n known, ids positive; sends to the right only (runs on
//!   unidirectional rings and, with its local right, on any bidirectional
//!   ring); no FIFO. **Synchronous** for its message count: every node starts
//!   at time 0 and a hop takes less than a round ([`ROUND_MS`]).
//! * Winner: the minimum. Under the mirrored rule (max) the slices would have
//!   to count down from a bound on the ids every node knows, which the
//!   catalogue does not give; every node then sends in slice 0 and the
//!   election is AsFar's (same bound, no silence).
//! * Messages, under the synchrony assumption with every node starting:
//!   exactly **2n**: the smallest id goes once round the ring (n `Election`s)
//!   and the winner's notification goes once round (n `Notify`s). On every
//!   other schedule (late or woken nodes, long delays, no FIFO) at most
//!   AsFar's n(n+1)/2 + n.
//! * Time: the smallest id m sends at (m − 1)·n rounds, so the leader knows
//!   after about m·n rounds and everybody n rounds later: (m + 1)·n rounds,
//!   of [`ROUND_MS`] each.
//!
//! ## Silence is information
//!
//! Time is cut into slices of n rounds; slice v − 1 (rounds (v − 1)·n + 1 ..
//! v·n in Lynch's numbering) belongs to id v. A node with id v that has
//! heard nothing better by the start of its slice sends its id; under
//! synchrony nobody has sent before, so v is the smallest id, and its token
//! goes round the ring within its slice (n hops, each under a round). Every
//! other node relays it, and having heard a better id, never sends its own.
//! So the only election messages are the n hops of the smallest id.
//!
//! A node does not tick every round: it sets one timer ([`SLICE_TIMER`]) for
//! the start of its slice, (v − 1)·n·[`ROUND_MS`] after it wakes, and
//! cancels it when a better id passes. The simulator jumps over the empty
//! rounds in between (time leaps to the next timer when nothing is in
//! flight), so a run costs its messages, not its rounds: ids up to 10^6 on
//! 1,000 nodes simulate in milliseconds (`cargo run --release -p
//! ringleader-core --example time_slice`).
//!
//! ## Every schedule: AsFar's filter, and a notification
//!
//! Synchrony gives the count, never the correctness. A node forwards an
//! arriving id only if it beats everything it has seen (its own id
//! included), and swallows it otherwise; the id that comes back to its
//! owner wins. That is AsFar's rule (see [`super::as_far`]): the best id is
//! never swallowed and its owner's timer is never cancelled, so it goes
//! round; no other id does. Breaking synchrony (nodes that wake late, long
//! delays) only lets more ids travel, each as far as AsFar would let it.
//!
//! In Lynch's synchronous model every relay also knows that the token it
//! relays is the winner (nothing else can be travelling in that slice), so
//! the n token hops are the whole cost. Here a follower that decided on the
//! token alone would be wrong on a schedule that delays a better id past its
//! slice, so followers decide on the winner's `Notify` instead: n more
//! messages, on every schedule, and 2n exactly under synchrony.

use super::oneshot::{self, Ending};
use super::{
    AlgoError, Algorithm, Decision, Effect, Input, Msg, NodeContext, Outbox, Port, RIGHT, Role, Rule, TimerId, other,
};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, RINGS};

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "time-slice",
    title: "TimeSlice (synchronous, n known)",
    source: "N. A. Lynch, Distributed Algorithms, Morgan Kaufmann 1996, 3.5.1 (TimeSlice); G. N. Frederickson, \
             N. A. Lynch, Electing a leader in a synchronous ring, JACM 34(1), 1987",
    description: "Silence is information: time is cut into slices of n rounds, slice v - 1 belonging to id v. \
                  A node that has heard nothing better by its slice sends its id, which goes round; so \
                  under synchrony only the smallest id moves, and the winner's notification follows: \
                  exactly 2n messages, in about (min id + 1) * n rounds. Ids are filtered as in AsFar, so a \
                  schedule that breaks synchrony costs messages, never correctness.",
    topologies: RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
    rule: Rule::Min,
    candidates: Candidates::All,
    bound_formula: "n(n+1)/2 + n",
    bound: &|n, _| n * (n + 1) / 2 + n,
    timer_events: |n| n,
    heap_bytes_per_position: 418,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(TimeSlice::new),
    extras: Extras { live_wait_ms: Some(live_wait_ms), ..Extras::NONE },
};

/// Length of a round, in milliseconds (virtual milliseconds in the
/// simulator). **Synchrony assumption**: every node starts at time 0 and a
/// hop takes less than a round, so a token goes round the ring within its
/// slice of n rounds. The simulator's default delays (1..=16) and unit delays
/// keep it with every node initiating; live on loopback a hop takes well
/// under a millisecond.
pub const ROUND_MS: u64 = 20;

/// The longest a node waits for its slice, in milliseconds (about 35 years):
/// ids whose slice would start later all send at this time, which keeps
/// every timer's deadline far from overflowing; AsFar's filter keeps them
/// correct, only the silence is lost.
pub const MAX_WAIT_MS: u64 = 1 << 50;

crate::timers! {
    /// The start of this node's slice.
    SLICE_TIMER = 0 => "slice";
}

/// Milliseconds from waking to the start of id `id`'s slice on a ring of
/// `n` under `rule`: (id − 1)·n rounds for the minimum rule, 0 for the max
/// rule (see the module header); at most [`MAX_WAIT_MS`].
pub fn wait_ms(id: u64, n: u32, rule: Rule) -> u64 {
    match rule {
        Rule::Min => id.saturating_sub(1).saturating_mul(u64::from(n)).saturating_mul(ROUND_MS).min(MAX_WAIT_MS),
        Rule::Max => 0,
    }
}

/// How long a LIVE run with `ids` and these initiators stays silent before
/// the first token leaves: the best initiator's slice (a node that does not
/// initiate waits for a message; the catalogue's `live_wait_ms`).
fn live_wait_ms(ids: &[u64], initiators: &[u32], rule: Rule) -> u64 {
    let n = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    let starting = initiators.iter().filter_map(|&p| ids.get(p as usize).copied());
    rule.winner(starting).map_or(0, |best| wait_ms(best, n, rule))
}

/// Rounds until the last node knows the leader when the smallest id is `min`
/// on a ring of `n`, under synchrony with every node starting at once: the
/// token leaves after (min − 1)·n rounds, and the token and the notification
/// take n hops each, at most a round each.
pub fn synchronous_rounds(min: u64, n: u32) -> u64 {
    min.saturating_add(1).saturating_mul(u64::from(n))
}

/// One node of TimeSlice.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeSlice {
    id: u64,
    rule: Rule,
    n: u32,
    awake: bool,
    /// The best id seen (its own at first).
    best: u64,
    /// Its own id has gone out.
    sent: bool,
    /// Its slice timer is armed.
    waiting: bool,
    end: Ending,
}

impl TimeSlice {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        TimeSlice {
            id: c.id,
            rule: c.rule,
            n: c.n,
            awake: false,
            best: c.id,
            sent: false,
            waiting: false,
            end: Ending::default(),
        }
    }

    /// Wake: send at once if its slice is the first, else wait for it.
    fn wake(&mut self, out: &mut Outbox) {
        self.awake = true;
        match wait_ms(self.id, self.n, self.rule) {
            0 => self.send_own(out),
            after_ms => {
                self.waiting = true;
                out.push(Effect::SetTimer { timer: SLICE_TIMER, after_ms });
            }
        }
    }

    fn send_own(&mut self, out: &mut Outbox) {
        self.sent = true;
        out.send(RIGHT, Msg::Election { id: self.id, stage: 0, hops: 0 });
    }

    /// A better id passed: its own will never be needed.
    fn stand_down(&mut self, out: &mut Outbox) {
        if self.waiting {
            self.waiting = false;
            out.push(Effect::CancelTimer { timer: SLICE_TIMER });
        }
    }

    fn on_election(&mut self, port: Port, id: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        if id == self.id {
            if !self.sent {
                return Err(AlgoError::Invalid(format!("own id {id} reached a node that never sent it")));
            }
            if !self.end.decided() {
                self.end.elect(id, out);
            }
            return Ok(());
        }
        if !self.awake {
            // Woken by a message: it starts its slices now, unless the id
            // beats its own (then it never sends).
            if self.rule.beats(id, self.id) {
                self.awake = true;
            } else {
                self.wake(out);
            }
        }
        if self.rule.beats(id, self.best) && !self.end.decided() {
            self.best = id;
            self.stand_down(out);
            out.send(other(port), Msg::Election { id, stage: 0, hops: 0 });
        }
        Ok(())
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        oneshot::ring_port(port)?;
        match msg {
            Msg::Election { id, .. } => self.on_election(port, id, out),
            Msg::Notify { leader } => {
                self.awake = true;
                self.stand_down(out);
                self.end.notified(port, leader, out);
                Ok(())
            }
            _ => Err(AlgoError::UnexpectedKind { algorithm: SPEC.name, kind: msg.kind().name() }),
        }
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        if timer != SLICE_TIMER || !self.waiting {
            return;
        }
        self.waiting = false;
        // Nothing better heard: its slice has come.
        if self.best == self.id && !self.sent && !self.end.decided() {
            self.send_own(out);
        }
    }
}

impl Algorithm for TimeSlice {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                if !self.awake {
                    self.wake(out);
                }
            }
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }

    fn state(&self) -> &'static str {
        match self.end.decision() {
            _ if !self.awake => "asleep",
            None if self.waiting => "waiting",
            None if self.best == self.id => "candidate",
            None => "relay",
            Some(Decision { role: Role::Leader, .. }) => "leader",
            Some(Decision { role: Role::Follower, .. }) => "follower",
        }
    }

    fn held(&self) -> usize {
        0
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
    }

    fn watched(&self, _port: Port) -> bool {
        true
    }

    fn suspects(&self, _port: Port) -> bool {
        false
    }

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::LEFT;
    use crate::algo::catalogue::find;
    use crate::algo::harness::sweeps::synchronous_rings;
    use crate::algo::harness::{Probe, decide, election as el, send};
    use crate::sim::{self, SimConfig};
    use crate::topology::{IdOrder, Topology, TopologyKind};

    fn node(id: u64, n: u32) -> TimeSlice {
        TimeSlice::new(&NodeContext { id, rule: Rule::Min, n, coin: 0, ports: 2, ..Default::default() })
    }

    fn wait(id: u64, n: u32) -> Effect {
        Effect::SetTimer { timer: SLICE_TIMER, after_ms: (id - 1) * u64::from(n) * ROUND_MS }
    }

    /// Id 1 owns the first slice and sends at once; id 4 on a ring of 5 sets one timer for its slice,
    /// 3 * 5 rounds later, and sends when it fires.
    #[test]
    fn sends_at_the_start_of_its_slice() {
        Probe::new(node(1, 5)).start(&[send(RIGHT, el(1, 0))]).in_state("candidate");
        let mut p = Probe::new(node(4, 5)).start(&[wait(4, 5)]).in_state("waiting");
        let mut out = Outbox::default();
        p.node.step(Input::Timer(SLICE_TIMER), &mut out).unwrap();
        assert_eq!(out.effects(), &[send(RIGHT, el(4, 0))]);
    }

    /// A better id cancels the slice timer and is relayed; a worse one is swallowed; the own id back elects
    /// and starts the notification, which stops when it is back.
    #[test]
    fn relays_better_swallows_worse_elects_on_return() {
        let cancel = Effect::CancelTimer { timer: SLICE_TIMER };
        Probe::new(node(4, 5))
            .start(&[wait(4, 5)])
            .on(LEFT, el(2, 0), &[cancel, send(RIGHT, el(2, 0))])
            .on(LEFT, el(3, 0), &[])
            .in_state("relay")
            .on(LEFT, Msg::Notify { leader: 2 }, &[decide(Role::Follower, 2), send(RIGHT, Msg::Notify { leader: 2 })]);
        Probe::new(node(1, 5))
            .start(&[send(RIGHT, el(1, 0))])
            .on(LEFT, el(3, 0), &[])
            .on(LEFT, el(1, 0), &[decide(Role::Leader, 1), send(RIGHT, Msg::Notify { leader: 1 })])
            .on(LEFT, Msg::Notify { leader: 1 }, &[]);
    }

    /// A sleeping node woken by a worse id starts waiting for its slice; by a better one, only relays.
    #[test]
    fn woken_nodes_wait_or_relay() {
        Probe::new(node(3, 4)).on(LEFT, el(5, 0), &[wait(3, 4)]).in_state("waiting");
        Probe::new(node(3, 4)).on(LEFT, el(2, 0), &[send(RIGHT, el(2, 0))]).in_state("relay");
    }

    /// Its own id arriving before it sent it, or a kind it does not use, is refused.
    #[test]
    fn impossible_messages_are_refused() {
        let mut p = Probe::new(node(3, 4)).start(&[wait(3, 4)]);
        p.refuses(LEFT, el(3, 0));
        p.refuses(LEFT, Msg::Wakeup);
    }

    /// Far slices are capped, so no deadline overflows.
    #[test]
    fn waits_are_capped() {
        assert_eq!(wait_ms(u64::MAX, u32::MAX, Rule::Min), MAX_WAIT_MS);
        assert_eq!(wait_ms(7, 3, Rule::Max), 0);
    }

    fn run(kind: TopologyKind, ids: &[u64], cfg: &SimConfig) -> crate::report::SimReport {
        let topo = Topology::build(kind, ids.len() as u32, cfg.seed).unwrap();
        let all: Vec<u32> = (0..ids.len() as u32).collect();
        sim::run(&SPEC, &topo, ids, &all, Rule::Min, cfg)
    }

    /// Under synchrony (every node starting, delays below a round: the default schedule and unit delays),
    /// every arrangement of 1..=n for n up to 7, on every ring kind, costs exactly n election and n
    /// notification messages, elects id 1, and ends by (1 + 1) * n rounds.
    #[test]
    fn exactly_2n_on_every_small_arrangement_under_synchrony() {
        synchronous_rings(find("time-slice").unwrap(), |ids, kind, _, r| {
            let n = ids.len() as u32;
            let n64 = u64::from(n);
            assert_eq!((r.counters.election_messages, r.counters.notification_messages), (n64, n64), "{ids:?} {kind:?}");
            assert!(r.end_time <= synchronous_rounds(1, n) * ROUND_MS, "{ids:?}: ended at {}", r.end_time);
        });
    }

    /// With large ids the count is still 2n, and the run ends in the smallest id's slice: after
    /// (min - 1) * n rounds and before (min + 1) * n.
    #[test]
    fn large_ids_cost_2n_and_end_in_the_smallest_slice() {
        for (n, seed) in [(10u32, 1u64), (64, 2), (200, 3)] {
            let ids = IdOrder::Random(seed).arrange(n).unwrap();
            let ids: Vec<u64> = ids.iter().map(|&i| i * 4_999 + 100_000).collect();
            let min = *ids.iter().min().unwrap();
            let r = run(TopologyKind::RingUni, &ids, &SimConfig { seed, ..SimConfig::default() });
            assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
            assert_eq!(r.counters.messages, 2 * u64::from(n));
            assert!(r.end_time > wait_ms(min, n, Rule::Min) && r.end_time <= synchronous_rounds(min, n) * ROUND_MS);
        }
    }
}
