//! # ProbAsFar (randomized AsFar)
//!
//! * Source: Santoro ch. 3, table "Election in Bidirectional
//!   Links": ProbAsFar, worst n², average 0.49 n log n + O(n).
//! * Network: bidirectional ring, oriented or not (each node picks one of its
//!   own ports at random); no FIFO.
//! * Winner: the maximum (as Chang-Roberts), or the minimum when mirrored.
//! * Messages: at most n(n+1)/2 election + n notification, as AsFar: an id
//!   travels only until it meets a node whose own id (or a seen id) beats it,
//!   so the id of rank r crosses at most n − r + 1 links (the r − 1 better
//!   ids sit somewhere on its way round) and the winner's crosses n. On
//!   average fewer than AsFar, because ids going opposite ways stop each other.
//!
//! Each node sends its own id on the port chosen by its random bit
//! (`coin & 1`: [`RIGHT`](super::RIGHT) or [`LEFT`](super::LEFT)); an id is forwarded away from the port
//! it came on while it beats every id the node has seen (either way) and the
//! node's own. The id that comes back to its owner (on the other port) wins;
//! the winner sends a notification round the ring. A sleeping node woken by
//! an id that beats its own only forwards it (its own id could not win).
//!
//! Corrections: Santoro's slides give no pseudo-code, only the name and
//! the figures; "best seen" is shared by both directions here (dropping an id
//! some better id already passed is safe, and keeps AsFar's worst case).

use super::as_far::{AsFarNode, AsFarVariant};
use crate::spec::{AlgorithmSpec, Assumptions, BI_RINGS, Candidates, Extras, Provision};
use super::{NodeContext, Port, Rule};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "prob-as-far",
    title: "ProbAsFar (randomized AsFar)",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3, table of bidirectional \
             election algorithms (ProbAsFar)",
    description: "AsFar where each node sends its id in a direction chosen by its random bit; \
                  ids go as far as they can in their own direction, the one that returns wins, \
                  and the winner's notification goes round once.",
    topologies: BI_RINGS,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n(n+1)/2 + n",
    bound: &|n, _| n * (n + 1) / 2 + n,
    timer_events: |_| 0,
    heap_bytes_per_position: 257,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(ProbAsFar::new),
    extras: Extras::NONE,
};

/// ProbAsFar: its own id goes out on the port its random bit picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Drawn;

impl AsFarVariant for Drawn {
    const NAME: &'static str = SPEC.name;
}

/// One node of ProbAsFar: AsFar's rules, [`AsFarNode`] with its own id sent
/// on the port its random bit picks.
pub type ProbAsFar = AsFarNode<Drawn>;

impl ProbAsFar {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        AsFarNode::sending(c, (c.coin & 1) as Port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::Feed;
    use crate::algo::Decision;
    use crate::algo::harness::{election, ring_context, started};
    use crate::algo::{Effect, LEFT, Msg, Outbox, RIGHT, Role};

    fn node(id: u64, coin: u64) -> ProbAsFar {
        ProbAsFar::new(&NodeContext { coin, ..ring_context(id, Rule::Max) })
    }

    fn el(id: u64) -> Msg {
        election(id, 0)
    }

    /// The random bit picks the port the own id goes out on.
    #[test]
    fn coin_picks_the_direction() {
        for (coin, port) in [(0, LEFT), (1, RIGHT), (6, LEFT), (7, RIGHT)] {
            let mut a = node(3, coin);
            let mut out = Outbox::default();
            a.on_start(&mut out);
            assert_eq!(out.effects(), &[Effect::Send { port, msg: el(3) }], "coin {coin}");
        }
    }

    /// Ids are relayed away from the port they came on, in both directions,
    /// and dropped once a better id was seen going either way.
    #[test]
    fn forwards_both_ways_and_drops_beaten_ids() {
        let (mut a, mut out) = started(node(3, 1));
        a.on_message(RIGHT, el(5), &mut out).unwrap();
        assert_eq!(out.effects(), &[Effect::Send { port: LEFT, msg: el(5) }]);
        out.clear();
        a.on_message(LEFT, el(4), &mut out).unwrap();
        assert!(out.effects().is_empty(), "4 loses to 5, seen the other way");
        a.on_message(LEFT, el(8), &mut out).unwrap();
        assert_eq!(out.effects(), &[Effect::Send { port: RIGHT, msg: el(8) }]);
    }

    /// The own id returning (from the other side) elects and starts one notification.
    #[test]
    fn own_id_back_elects() {
        let (mut a, mut out) = started(node(9, 0));
        a.on_message(RIGHT, el(9), &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[
                Effect::Decide(Decision { role: Role::Leader, leader: 9 }),
                Effect::Send { port: RIGHT, msg: Msg::Notify { leader: 9 } }
            ]
        );
    }
}
