//! # VariableSpeeds (Lynch)
//!
//! * Source: N. Lynch, *Distributed Algorithms*, Morgan Kaufmann 1996,
//!   §3.5.2 (VariableSpeeds), after G. N. Frederickson, N. A. Lynch,
//!   "Electing a leader in a synchronous ring", JACM 34(1), 1987.
//! * Network: ring, n unknown, ids positive; sends to the right only (runs on
//!   unidirectional rings and, with its local right, on any bidirectional
//!   ring); no FIFO. **Synchronous** for its message count: a hop takes less
//!   than a round ([`ROUND_MS`]). Nodes may start at different times; a node
//!   reached by a token before it starts by itself never sends its own.
//! * Winner: the minimum among the nodes that start by themselves. Under the
//!   mirrored rule (max) the speeds would have to fall with the ids from a
//!   bound every node knows, which the catalogue does not give; tokens then
//!   travel at full speed and the election is AsFar's among the starters.
//! * Messages, in lock-step with every node starting at once (Lynch's
//!   analysis): the token of id v crosses one link every 2^v rounds, its
//!   first after 2^v rounds too. The smallest id m crosses n links, by round
//!   n·2^m; by then the token of id v > m has crossed at most
//!   n·2^m / 2^v = n / 2^(v − m) links, and after it every node has seen m
//!   and swallows v. So all tokens together cross fewer than
//!   n + n(1/2 + 1/4 + ...) = **2n** links; the winner's notification adds
//!   n. In the simulator unit delays are that lock-step exactly; the default
//!   delays (1..=16 time units a hop, rounds of 20) stretch m's tour by up to
//!   15 units a link and the bound with it, to fewer than 2.375n
//!   ([`stretched_bound`]). On every schedule (late starts, long delays, no
//!   FIFO) at most AsFar's n(n+1)/2 + n, since each token still travels only
//!   as far as AsFar would let it.
//! * Time: about n·2^m rounds to elect, n more to notify.
//!
//! ## Speeds instead of slices
//!
//! TimeSlice ([`super::time_slice`]) needs n to cut time into slices. Here
//! every starter sends its id, but the token of id v waits 2^v rounds
//! ([`hold_ms`]) at every node, its owner included, before it goes on, so
//! small ids run fast and large ones crawl. A node relays a token only if its id beats
//! everything the node has seen (its own id if it started by itself), and a
//! better token arriving while a worse one waits replaces it: the worse one
//! would be swallowed further on anyway. The smallest token catches every
//! other one, and comes back to its owner, which leads and sends the
//! notification round.
//!
//! A node does not tick every round: a waiting token is one timer
//! ([`HOLD_TIMER`]) set for the round it leaves, so the simulator jumps over
//! the rounds in between. Holds are capped at [`MAX_HOLD_MS`] (ids above 45
//! all crawl alike): the order of speeds is then lost among those ids, never
//! correctness.
//!
//! A node woken by a token is no candidate (Lynch's non-starter): it relays
//! whatever beats what it has seen, and its own id plays no part, or a
//! small non-starter would swallow every starter's token. Lynch adds wake-up
//! messages so that starts differ by less than n rounds, which bounds the
//! time; without them the safety and the bound above are the same, and no
//! wake-up message is sent.

use super::oneshot::{self, Ending};
use super::{
    AlgoError, Algorithm, Decision, Effect, Input, Msg, NodeContext, Outbox, Port, RIGHT, Role, Rule, TimerId, other,
};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, RINGS};

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "variable-speeds",
    title: "VariableSpeeds (synchronous, n unknown)",
    source: "N. A. Lynch, Distributed Algorithms, Morgan Kaufmann 1996, 3.5.2 (VariableSpeeds); G. N. Frederickson, \
             N. A. Lynch, Electing a leader in a synchronous ring, JACM 34(1), 1987",
    description: "Every node that starts by itself sends its id, but the token of id v waits 2^v rounds at \
                  each node (its owner too), so small ids run fast and large ones crawl; a node relays only \
                  a token better than all it has seen. The smallest token overtakes and ends all others: \
                  under synchrony fewer than 2n election messages plus n notifications, in about n * 2^min \
                  rounds.",
    topologies: RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
    rule: Rule::Min,
    candidates: Candidates::Initiators,
    bound_formula: "n(n+1)/2 + n",
    bound: &|n, _| n * (n + 1) / 2 + n,
    timer_events: |n| 2 * n,
    heap_bytes_per_position: 450,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(VariableSpeeds::new),
    extras: Extras { live_wait_ms: Some(live_wait_ms), ..Extras::NONE },
};

/// Length of a round, in milliseconds (virtual milliseconds in the
/// simulator); a hop must take less (the simulator's default delays are
/// 1..=16).
pub const ROUND_MS: u64 = 20;

/// The longest a token waits at a node, in milliseconds (2^50, about 35
/// years): reached from id 46 on.
pub const MAX_HOLD_MS: u64 = 1 << 50;

crate::timers! {
    /// The waiting token leaves.
    HOLD_TIMER = 0 => "hold";
}

/// How long the token of `id` waits at each node (its owner included) under
/// `rule`: 2^id rounds less the one time unit a unit-delay hop takes, so
/// that with unit delays a hop takes exactly 2^id rounds, Lynch's speed (at
/// most [`MAX_HOLD_MS`]); none for the max rule.
pub fn hold_ms(id: u64, rule: Rule) -> u64 {
    match rule {
        Rule::Min => 1u64
            .checked_shl(id.min(63) as u32)
            .unwrap_or(u64::MAX)
            .saturating_mul(ROUND_MS)
            .min(MAX_HOLD_MS)
            .saturating_sub(1),
        Rule::Max => 0,
    }
}

/// How long a LIVE run with `ids` and these initiators lasts at least: the
/// best initiator's token (only initiators compete) waits at each of the n
/// nodes (the catalogue's `live_wait_ms`).
fn live_wait_ms(ids: &[u64], initiators: &[u32], rule: Rule) -> u64 {
    let starting = initiators.iter().filter_map(|&p| ids.get(p as usize).copied());
    rule.winner(starting).map_or(0, |best| hold_ms(best, rule).saturating_mul(ids.len() as u64))
}

/// The bound on election messages with every node starting and every hop
/// taking 1..=16 time units (the simulator's default schedule): a hop of the
/// smallest id m takes at most 2^m rounds + 15 units, at most 1.375 times
/// 2^m rounds (m ≥ 1, rounds of 20), which stretches Lynch's sum
/// n·Σ 2^(m − v) < n by as much: fewer than 2.375n in all, this value.
pub fn stretched_bound(n: u32) -> u64 {
    (19 * u64::from(n)).div_ceil(8)
}

/// One node of VariableSpeeds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariableSpeeds {
    id: u64,
    rule: Rule,
    awake: bool,
    /// Started by itself: its own id competes.
    starter: bool,
    /// The best id seen (`None`: a non-starter that has seen nothing yet).
    best: Option<u64>,
    /// The token waiting to leave, and the port it leaves on (its timer is armed).
    held: Option<(u64, Port)>,
    end: Ending,
}

impl VariableSpeeds {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        VariableSpeeds {
            id: c.id,
            rule: c.rule,
            awake: false,
            starter: false,
            best: None,
            held: None,
            end: Ending::default(),
        }
    }

    fn start(&mut self, out: &mut Outbox) {
        self.awake = true;
        self.starter = true;
        self.best = Some(self.id);
        // Its own token too leaves at its speed: one link every 2^id rounds.
        self.hold(self.id, RIGHT, out);
    }

    /// Keep token `id` until it is due to leave on `port` (at once for the max rule).
    fn hold(&mut self, id: u64, port: Port, out: &mut Outbox) {
        self.held = Some((id, port));
        match hold_ms(id, self.rule) {
            0 => self.release(out),
            after_ms => out.push(Effect::SetTimer { timer: HOLD_TIMER, after_ms }),
        }
    }

    fn on_election(&mut self, port: Port, id: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        self.awake = true;
        if id == self.id {
            if !self.starter {
                return Err(AlgoError::Invalid(format!("own id {id} reached a node that never sent it")));
            }
            if !self.end.decided() {
                self.end.elect(id, out);
            }
            return Ok(());
        }
        let better = self.best.is_none_or(|b| self.rule.beats(id, b));
        if better && !self.end.decided() {
            self.best = Some(id);
            // A worse token waiting here is dropped: it would be swallowed further on.
            self.hold(id, other(port), out);
        }
        Ok(())
    }

    fn release(&mut self, out: &mut Outbox) {
        if let Some((id, port)) = self.held.take() {
            out.send(port, Msg::Election { id, stage: 0, hops: 0 });
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        oneshot::ring_port(port)?;
        match msg {
            Msg::Election { id, .. } => self.on_election(port, id, out),
            Msg::Notify { leader } => {
                self.awake = true;
                if self.held.take().is_some() {
                    out.push(Effect::CancelTimer { timer: HOLD_TIMER });
                }
                self.end.notified(port, leader, out);
                Ok(())
            }
            _ => Err(AlgoError::UnexpectedKind { algorithm: SPEC.name, kind: msg.kind().name() }),
        }
    }
}

impl Algorithm for VariableSpeeds {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                if !self.awake {
                    self.start(out);
                }
            }
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => {
                if timer == HOLD_TIMER {
                    self.release(out);
                }
            }
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
            None if self.held.is_some() => "holding",
            None if self.starter && self.best == Some(self.id) => "candidate",
            None => "relay",
            Some(Decision { role: Role::Leader, .. }) => "leader",
            Some(Decision { role: Role::Follower, .. }) => "follower",
        }
    }

    fn held(&self) -> usize {
        usize::from(self.held.is_some())
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
    use crate::algo::harness::sweeps::synchronous_rings;
    use crate::algo::harness::{Probe, decide, election as el, send};
    use crate::sim::{self, SimConfig};
    use crate::topology::{IdOrder, Topology, TopologyKind};

    fn node(id: u64) -> VariableSpeeds {
        VariableSpeeds::new(&NodeContext { id, rule: Rule::Min, n: 8, coin: 0, ports: 2, ..Default::default() })
    }

    fn hold(id: u64) -> Effect {
        Effect::SetTimer { timer: HOLD_TIMER, after_ms: (1 << id) * ROUND_MS - 1 }
    }

    /// A starter's own token and every better token wait 2^id rounds before they go on, a worse one is
    /// swallowed, and a better one arriving meanwhile replaces the waiting one.
    #[test]
    fn tokens_wait_by_their_speed_and_better_ones_replace_worse() {
        let mut p = Probe::new(node(5))
            .start(&[hold(5)])
            .on(LEFT, el(7, 0), &[])
            .on(LEFT, el(4, 0), &[hold(4)])
            .in_state("holding")
            .on(LEFT, el(2, 0), &[hold(2)]);
        let mut out = Outbox::default();
        p.node.step(Input::Timer(HOLD_TIMER), &mut out).unwrap();
        assert_eq!(out.effects(), &[send(RIGHT, el(2, 0))], "only the better token leaves");
        assert_eq!(p.node.state(), "relay");
    }

    /// A node woken by a token is no candidate: it relays even a token worse than its own id, and its own
    /// id coming back to it is refused.
    #[test]
    fn non_starters_relay_whatever_is_best_so_far() {
        let mut p = Probe::new(node(1)).on(LEFT, el(3, 0), &[hold(3)]).on(LEFT, el(6, 0), &[]);
        p.refuses(LEFT, el(1, 0));
    }

    /// The own token back elects and starts the notification; a follower decides on it and passes it on.
    #[test]
    fn own_token_back_elects_and_notifies() {
        let mut own = Probe::new(node(3)).start(&[hold(3)]);
        let mut out = Outbox::default();
        own.node.step(Input::Timer(HOLD_TIMER), &mut out).unwrap();
        assert_eq!(out.effects(), &[send(RIGHT, el(3, 0))]);
        own.on(LEFT, el(3, 0), &[decide(Role::Leader, 3), send(RIGHT, Msg::Notify { leader: 3 })]).on(
            LEFT,
            Msg::Notify { leader: 3 },
            &[],
        );
        Probe::new(node(6))
            .start(&[hold(6)])
            .on(
                LEFT,
                Msg::Notify { leader: 3 },
                &[
                    Effect::CancelTimer { timer: HOLD_TIMER },
                    decide(Role::Follower, 3),
                    send(RIGHT, Msg::Notify { leader: 3 }),
                ],
            )
            .in_state("follower");
    }

    /// Holds are capped, so no deadline overflows; the max rule does not hold.
    #[test]
    fn holds_are_capped() {
        assert_eq!(hold_ms(u64::MAX, Rule::Min), MAX_HOLD_MS - 1);
        assert_eq!(hold_ms(3, Rule::Max), 0);
    }

    /// With every node starting, every arrangement of 1..=n for n up to 7 on every ring kind elects id 1 with
    /// exactly n notifications and, in lock-step (unit delays: every hop exactly 2^id rounds), fewer than 2n
    /// election messages (Lynch's analysis); on the default schedule (delays up to 16 of a 20-unit round)
    /// fewer than 2.375n ([`stretched_bound`]).
    #[test]
    fn fewer_than_2n_on_every_small_arrangement_under_synchrony() {
        synchronous_rings(&SPEC, |ids, kind, cfg, r| {
            let n = ids.len() as u32;
            let bound = if cfg.unit_delay { 2 * u64::from(n) } else { stretched_bound(n) };
            assert!(r.counters.election_messages < bound, "{ids:?} {kind:?}: {}", r.counters.election_messages);
            assert_eq!(r.counters.notification_messages, u64::from(n));
        });
    }

    /// Random arrangements of larger rings (ids 1..=n, so speeds up to 2^n rounds a hop: the simulator jumps
    /// over the waiting) stay under 2n election messages in lock-step.
    #[test]
    fn larger_rings_stay_under_2n() {
        for (n, seed) in [(16u32, 1u64), (30, 2), (40, 3)] {
            let ids = IdOrder::Random(seed).arrange(n).unwrap();
            let all: Vec<u32> = (0..n).collect();
            let topo = Topology::build(TopologyKind::RingUni, n, seed).unwrap();
            let r = sim::run(
                &SPEC,
                &topo,
                &ids,
                &all,
                Rule::Min,
                &SimConfig { seed, unit_delay: true, ..SimConfig::default() },
            );
            assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
            assert!(r.counters.election_messages < 2 * u64::from(n), "n = {n}: {}", r.counters.election_messages);
        }
    }
}
