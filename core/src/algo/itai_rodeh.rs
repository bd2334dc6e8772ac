//! # Itai-Rodeh (randomised election on an anonymous ring)
//!
//! * Source: A. Itai, M. Rodeh, "Symmetry breaking in distributed
//!   networks", Information and Computation 88(1), 1990; the asynchronous
//!   version with round numbers of W. Fokkink, Distributed Algorithms: an
//!   Intuitive Approach (MIT Press, 2nd ed. 2018), "Itai-Rodeh election
//!   algorithm".
//! * Network: an anonymous ring (ids are not used: every node may have the
//!   same one), sending to the right only, so a unidirectional or oriented
//!   bidirectional ring; the ring size n known; FIFO links (Fokkink's
//!   assumption).
//! * Winner: the initiator whose random draws win ([`Candidates::Drawn`]):
//!   no id is expected to win, and the winner rule plays no part.
//! * Messages: in an election round with a active nodes each sends one
//!   message, which crosses at most n links (it is purged by a node whose
//!   (round, id) beats it, or comes back to its sender after n), so a round
//!   costs at most a·n ≤ k·n messages, and the notification n more. The
//!   number of rounds is unbounded: the greatest draw may be shared round
//!   after round, with a probability that shrinks geometrically but never
//!   reaches 0. So there is no worst case: the entry's bound is
//!   [`UNBOUNDED`] (users read "unbounded", never
//!   a figure), and termination holds with probability 1, not on every
//!   draw. The expected number of rounds with a active nodes drawing from
//!   {1..n} is E(a) = 1 + Σ_{j≥2} P(a, j) E(j), P(a, j) the probability
//!   that exactly j of a draws hold the maximum: 1.69 at n = a = 3, falling
//!   to 1.43 at n = a = 64; `cargo run -p ringleader-core --release
//!   --example itai_rodeh` samples it (docs/algorithms.md has the figures).
//!
//! At the start of each round an active node draws an id from {1..n} (from
//! its own random stream, [`NodeContext::coin`], the same bits in the
//! simulator, the checker and the LIVE runtime for a seed) and sends
//! (id, round, 1, unique) to the right. A passive node passes every message
//! on, one hop further. An active node that receives a message of hop n has
//! its own back: if no other node drew its id in its round (`unique`) it
//! leads, and sends the notification round the ring; otherwise it starts
//! the next round with a new draw. A message of hop below n that carries
//! the node's own (round, id) is passed on marked not unique; one with a
//! greater (round, id), lexicographically, makes the node passive and is
//! passed on; a smaller one is purged. Only initiators are active; a node a
//! message wakes first is passive. Safety holds on every schedule: two
//! leaders would each need their message to pass the other active in the
//! same round with a smaller id and come back.

use super::oneshot::{Ending, OneShotNode, Wake};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, ORIENTED_RINGS, Provision, UNBOUNDED};

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "itai-rodeh",
    title: "Itai-Rodeh (randomised, anonymous ring)",
    source: "A. Itai, M. Rodeh, Symmetry breaking in distributed networks, Information and Computation 88(1), \
             1990; W. Fokkink, Distributed Algorithms: an Intuitive Approach, MIT Press, 2nd ed. 2018 \
             (Itai-Rodeh election algorithm)",
    description: "Ids are ignored: each active node draws a random id from 1..n every round and sends it round \
                  the ring; the greatest (round, id) survives, a node whose id came back unique leads, and \
                  nodes that drew the same greatest id draw again in the next round.",
    topologies: ORIENTED_RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::Drawn,
    bound_formula: "unbounded (probabilistic): at most k·n per round + n, rounds unbounded",
    bound: &|_, _| UNBOUNDED,
    timer_events: |_| 0,
    heap_bytes_per_position: 325,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(ItaiRodeh::new),
    extras: Extras { anonymous: true, ..Extras::NONE },
};

/// The largest round a message may name: past it a message is refused as
/// implausible (a round beyond it has probability below 2^-1000000).
pub const MAX_ROUND: u32 = 1_000_000;

/// Where a node stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Status {
    /// Not woken yet.
    Asleep,
    /// Competing, with its round and its draw.
    Active { round: u32, drawn: u64 },
    /// Passing messages on (beaten, or woken by a message).
    Passive,
    /// Decided (the leader, or a follower that passed the notification on).
    Done,
}

/// One node of Itai-Rodeh.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ItaiRodeh {
    /// Its own id, named only in the notification (the nodes may share it).
    id: u64,
    /// The ring size.
    n: u32,
    /// Its random stream's seed.
    coin: u64,
    status: Status,
    end: Ending,
}

impl ItaiRodeh {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        ItaiRodeh { id: c.id, n: c.n.max(1), coin: c.coin, status: Status::Asleep, end: Ending::default() }
    }

    /// The id this node draws in `round`: uniform in 1..=n, from its stream.
    pub fn draw(&self, round: u32) -> u64 {
        draw(self.coin, round, self.n)
    }

    /// Start `round`: draw, and send the draw round the ring.
    fn begin(&mut self, round: u32, out: &mut Outbox) {
        let drawn = self.draw(round);
        self.status = Status::Active { round, drawn };
        out.send(RIGHT, Msg::RandomId { id: drawn, round, hops: 1, unique: true });
    }

    /// Refuse a message no correct node sends: an id outside 1..=n, hop 0 or past n, round 0 or past
    /// [`MAX_ROUND`].
    fn plausible(&self, id: u64, round: u32, hops: u32) -> Result<(), AlgoError> {
        let bad = |field, value: u64, max: u64| AlgoError::Implausible { algorithm: SPEC.name, field, value, max };
        if id == 0 || id > u64::from(self.n) {
            return Err(bad("id", id, u64::from(self.n)));
        }
        if hops == 0 || hops > self.n {
            return Err(bad("hops", u64::from(hops), u64::from(self.n)));
        }
        if round == 0 || round > MAX_ROUND {
            return Err(bad("round", u64::from(round), u64::from(MAX_ROUND)));
        }
        Ok(())
    }

    /// Pass a message on, one hop further (a passive node, or one beaten by it).
    fn pass(&self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::RandomId { id, round, hops, unique } = msg else { return Err(Self::unexpected(msg)) };
        if hops >= self.n {
            // Only its sender takes a message of hop n.
            return Err(AlgoError::Invalid(format!(
                "itai-rodeh: a message of hop {hops} reached a node that did not send it (n = {})",
                self.n
            )));
        }
        out.send(other(port), Msg::RandomId { id, round, hops: hops + 1, unique });
        Ok(())
    }

    /// An active node of `round` that drew `drawn` takes a message.
    fn contest(&mut self, port: Port, msg: Msg, (round, drawn): (u32, u64), out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::RandomId { id, round: r, hops, unique } = msg else { return Err(Self::unexpected(msg)) };
        if hops == self.n {
            if (r, id) != (round, drawn) {
                return Err(AlgoError::Invalid(format!(
                    "itai-rodeh: a message of hop n carries round {r}, id {id}, not this node's round {round}, id {drawn}"
                )));
            }
            if unique {
                self.status = Status::Done;
                self.end.elect(self.id, out);
            } else if round >= MAX_ROUND {
                return Err(AlgoError::Invalid(format!("itai-rodeh: no round after {MAX_ROUND}")));
            } else {
                self.begin(round + 1, out);
            }
            return Ok(());
        }
        match (r, id).cmp(&(round, drawn)) {
            std::cmp::Ordering::Equal => {
                out.send(other(port), Msg::RandomId { id, round: r, hops: hops + 1, unique: false });
            }
            std::cmp::Ordering::Greater => {
                self.status = Status::Passive;
                self.pass(port, msg, out)?;
            }
            std::cmp::Ordering::Less => {}
        }
        Ok(())
    }
}

/// The id a node whose stream is `coin` draws in `round`, uniform in 1..=n (a SplitMix64 step).
pub fn draw(coin: u64, round: u32, n: u32) -> u64 {
    let mut z = coin ^ u64::from(round).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x6974_6169;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    1 + z % u64::from(n.max(1))
}

impl OneShotNode for ItaiRodeh {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::InStep;

    fn status(&self) -> &'static str {
        match self.status {
            Status::Asleep => "asleep",
            Status::Active { .. } => "active",
            Status::Passive => "passive",
            Status::Done => self.end.role_name(),
        }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.begin(1, out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::RandomId { id, round, hops, .. } => {
                self.plausible(id, round, hops)?;
                match self.status {
                    // A node a message wakes first does not compete.
                    Status::Asleep | Status::Passive => {
                        self.status = Status::Passive;
                        self.pass(port, msg, out)
                    }
                    Status::Active { round: own, drawn } => self.contest(port, msg, (own, drawn), out),
                    // Decided: the leader purges what is left of earlier rounds; a follower passes it on.
                    Status::Done if self.end.role_name() == "leader" => Ok(()),
                    Status::Done => self.pass(port, msg, out),
                }
            }
            Msg::Notify { leader } => {
                if self.end.decided() && self.end.role_name() == "leader" {
                    return Ok(()); // the notification is back
                }
                self.status = Status::Done;
                self.end.notified(port, leader, out);
                Ok(())
            }
            _ => Err(Self::unexpected(msg)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, send};
    use crate::algo::{LEFT, Role};

    /// A node of a ring of 4 with id 7 and random stream `coin`.
    fn node(coin: u64) -> ItaiRodeh {
        ItaiRodeh::new(&NodeContext { id: 7, n: 4, coin, ..crate::algo::harness::ring_context(7, Rule::Max) })
    }

    fn rid(id: u64, round: u32, hops: u32, unique: bool) -> Msg {
        Msg::RandomId { id, round, hops, unique }
    }

    /// Draws are uniform-looking in 1..=n, differ by round and by stream, and repeat for the same
    /// stream and round (the simulator, the checker and the runtime draw alike).
    #[test]
    fn draws_are_in_range_and_repeatable() {
        let mut seen = [0u32; 5];
        for coin in 0..2_000 {
            let d = draw(coin, 1, 4);
            assert!((1..=4).contains(&d));
            seen[d as usize] += 1;
            assert_eq!(d, draw(coin, 1, 4));
        }
        assert!(seen[1..].iter().all(|&c| c > 400), "{seen:?}");
        assert!((1..20).any(|r| draw(5, r, 4) != draw(5, 1, 4)), "rounds draw anew");
    }

    /// An initiator sends its round-1 draw, one hop, unique.
    #[test]
    fn an_initiator_sends_its_draw() {
        let d = node(9).draw(1);
        Probe::new(node(9)).start(&[send(RIGHT, rid(d, 1, 1, true))]).in_state("active");
    }

    /// A message waking a node makes it passive: it passes the message on one hop further.
    #[test]
    fn a_woken_node_is_passive_and_passes_on() {
        Probe::new(node(9)).on(LEFT, rid(2, 1, 1, true), &[send(RIGHT, rid(2, 1, 2, true))]).in_state("passive");
    }

    /// An active node: a greater (round, id) beats it, its own (round, id) is marked not unique,
    /// a smaller one is purged.
    #[test]
    fn an_active_node_compares_round_then_id() {
        let d = node(9).draw(1);
        Probe::started(node(9)).on(LEFT, rid(d, 1, 2, true), &[send(RIGHT, rid(d, 1, 3, false))]);
        Probe::started(node(9)).on(LEFT, rid(1, 2, 2, true), &[send(RIGHT, rid(1, 2, 3, true))]).in_state("passive");
        if d > 1 {
            Probe::started(node(9)).on(LEFT, rid(d - 1, 1, 2, true), &[]).in_state("active");
        }
    }

    /// Its own message back after n hops: unique, it leads and notifies (the notification stops
    /// when back); not unique, it draws again in round 2.
    #[test]
    fn its_own_draw_back_elects_or_starts_a_round() {
        let d = node(9).draw(1);
        let notify = Msg::Notify { leader: 7 };
        Probe::started(node(9))
            .on(LEFT, rid(d, 1, 4, true), &[decide(Role::Leader, 7), send(RIGHT, notify)])
            .on(LEFT, notify, &[])
            .in_state("leader");
        let d2 = node(9).draw(2);
        Probe::started(node(9)).on(LEFT, rid(d, 1, 4, false), &[send(RIGHT, rid(d2, 2, 1, true))]);
    }

    /// Every set of initiators on anonymous rings of 2 to 6 nodes (every id 1) and on distinct
    /// ids, 20 seeds each, in the simulator: one leader, every node agreeing, and at most k·n
    /// messages per round the run took plus the notification's n.
    #[test]
    fn every_run_elects_within_k_n_per_round() {
        use crate::sim::{self, SimConfig};
        use crate::topology::{Topology, TopologyKind};
        for n in 2..=6u32 {
            let topo = Topology::build(TopologyKind::RingUni, n, 1).unwrap();
            for ids in [vec![1; n as usize], (1..=u64::from(n)).collect()] {
                for set in 1..1u32 << n {
                    let initiators: Vec<u32> = (0..n).filter(|p| set >> p & 1 == 1).collect();
                    for seed in 0..20 {
                        let cfg = SimConfig { seed, log_arrows: true, ..SimConfig::default() };
                        let r = sim::run(&SPEC, &topo, &ids, &initiators, Rule::Max, &cfg);
                        let ctx = format!("n {n}, ids {ids:?}, initiators {initiators:?}, seed {seed}");
                        assert!(r.verdict.violations.is_empty() && r.verdict.agreed, "{ctx}: {:?}", r.verdict);
                        let round = |m: Msg| if let Msg::RandomId { round, .. } = m { Some(round) } else { None };
                        let rounds = r.arrows.iter().filter_map(|a| a.msg.and_then(round)).max().unwrap();
                        let sent: u64 = r.sent_per_node.iter().sum();
                        let (k, n) = (initiators.len() as u64, u64::from(n));
                        assert!(sent <= u64::from(rounds) * k * n + n, "{ctx}: {sent} messages in {rounds} rounds");
                    }
                }
            }
        }
    }

    /// Implausible fields are refused before they touch the state.
    #[test]
    fn implausible_messages_are_refused() {
        let mut p = Probe::started(node(9));
        for m in [rid(0, 1, 1, true), rid(5, 1, 1, true), rid(1, 1, 0, true), rid(1, 1, 5, true), rid(1, 0, 1, true)] {
            assert!(matches!(p.refuses(LEFT, m), AlgoError::Implausible { .. }), "{m:?}");
        }
        let mut passive = Probe::new(node(9));
        assert!(matches!(passive.refuses(LEFT, rid(1, 1, 4, true)), AlgoError::Invalid(_)));
    }
}
