//! # HyperElect: election on an oriented hypercube
//!
//! * Source: N. Santoro, *Design and Analysis of Distributed Algorithms*,
//!   Wiley 2007, ch. 3, "Election in Cube Networks", protocol HyperElect
//!   (duels between hypercubes of growing dimension; the bound
//!   7N − (log N)² − 3 log N − 7).
//! * Network: the hypercube on N = 2^d positions with its dimensional sense
//!   of direction: port i leads across dimension i, the same at every node
//!   (the [`TopologyKind::Hypercube`] overlay). Bidirectional links, no FIFO
//!   needed. A node knows d (its number of ports), not the others' ids.
//! * Winner: the best id under the rule (max by default); every node takes
//!   part (a node asleep joins when the first message reaches it).
//! * Messages: at most 7N − d² − 3d − 7 (Santoro's bound, derived below),
//!   at least 3N − 3; between the two, the count depends on where each
//!   duel's winner sits, which the ids alone fix: not on the schedule nor
//!   on who initiates. Ideal time O(d³): the stages follow one another
//!   and a stage-i `Match` crosses at most 1 + i(i − 1)/2 links.
//!
//! **Stages.** A position's number, bit by bit, says where it is: the
//! positions that agree on bits i and above form a cube of dimension i. In
//! stage i (1 ≤ i ≤ d) the *duelist* of each cube of dimension i − 1 (its
//! best id so far; at stage 1 every node) sends `Match(id, i)` across
//! dimension i − 1, into the neighbouring cube of dimension i − 1, whose
//! duelist sends one the other way. Each duelist compares the id it gets
//! with its own: the better one goes on to stage i + 1, the other is
//! *defeated*. The duelist that wins stage d leads.
//!
//! **Routes.** A `Match` reaches the node facing its sender, not
//! necessarily the duelist there. A defeated node knows the way to the
//! duelist that beat it: the `path` the winner's `Match` carried (the XOR
//! of the two positions: the dimensions to cross, in any order). So a
//! `Match` that reaches a defeated node is sent on along that node's path
//! (`route`: the dimensions still to cross; the nodes on the way pass it on
//! without looking), and again from each defeated node it reaches, until a
//! duelist takes it. A duelist that has not reached the `Match`'s stage yet
//! holds it; it takes it once its stage comes, or sends it on to its winner
//! if it is beaten first. A defeated node of stage j is at most j links from
//! its winner, and the winners a route passes were beaten at increasing
//! stages, so a stage-i `Match` crosses at most 1 + (1 + 2 + … + (i − 1)) =
//! 1 + i(i − 1)/2 links.
//!
//! **Notification.** The leader sends `Notify` on every port; a node that
//! gets it on port k follows and sends it on every port above k: a binomial
//! spanning tree, N − 1 messages, one per node.
//!
//! **The count, derived.** Stage i has N/2^(i−1) duelists, each sending one
//! `Match` of at most 1 + i(i − 1)/2 links, so
//!
//! M ≤ Σ_{i=1..d} N/2^(i−1) · (1 + i(i − 1)/2) + (N − 1).
//!
//! With Σ_{i≥1} i(i − 1)/2^i = 4 and the tails of the two sums in closed
//! form this is 7N − d² − 3d − 7, Santoro's bound (N = 2: 3, N = 4: 11,
//! N = 8: 31, N = 16: 77; [`worst_count`] computes the sum and a test holds
//! it equal to the formula for every d up to 20). When every duel is won at
//! the node facing the loser's `Match` no `Match` is routed: Σ N/2^(i−1) +
//! N − 1 = 3N − 3 ([`best_count`]), and no run sends fewer: every stage-i
//! duelist's `Match` crosses at least its one link. A test runs every
//! arrangement of N = 4 and 8 and random ones of N = 16 and 32 against both.

use super::oneshot::{Ending, OneShotNode, Wake};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, Role, Rule};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, HYPERCUBES, Provision, floor_log2};
#[cfg(doc)]
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "hyper-elect",
    title: "HyperElect: election on an oriented hypercube",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 \
             (Election in Cube Networks: HyperElect)",
    description: "Duels between cubes of growing dimension: in stage i the duelist of each (i-1)-cube sends its id \
                  across dimension i-1, routed by defeated nodes to the duelist there; the better id goes on. The \
                  winner of stage d leads and notifies along a binomial spanning tree.",
    topologies: HYPERCUBES,
    assumptions: Assumptions { bidirectional: true, oriented: true, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "7n - (log n)^2 - 3log n - 7",
    bound: &|n, _| bound(n),
    timer_events: |_| 0,
    heap_bytes_per_position: 406,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(HyperElect::new),
    extras: Extras { schedule_independent: true, ..Extras::NONE },
};

/// Santoro's bound 7N − d² − 3d − 7 with d = log2 N (0 below N = 2).
pub fn bound(n: u64) -> u64 {
    let d = floor_log2(n);
    (7 * n).saturating_sub(d * d + 3 * d + 7)
}

/// The largest count the routes allow on N = 2^d positions: every stage-i
/// `Match` crossing 1 + i(i − 1)/2 links, plus the N − 1 notifications.
pub fn worst_count(n: u64) -> u64 {
    let d = floor_log2(n);
    (1..=d).map(|i| (n >> (i - 1)) * (1 + i * (i - 1) / 2)).sum::<u64>() + n.saturating_sub(1)
}

/// The count when no `Match` needs a route: 3N − 3.
pub fn best_count(n: u64) -> u64 {
    (3 * n).saturating_sub(3)
}

/// What a node is in the duels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Part {
    Asleep,
    /// Sent its `Match` of `stage` (d + 1 once it has won them all).
    Duelist { stage: u32 },
    /// Beaten; its winner is at `path` (XOR of the two positions).
    Defeated { path: u32 },
}

/// One node of HyperElect.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HyperElect {
    id: u64,
    rule: Rule,
    /// d: the hypercube's dimension, the node's number of ports.
    dims: u32,
    part: Part,
    /// `Match`es of stages this duelist has not reached, as they arrived.
    held: Vec<Msg>,
    end: Ending,
}

impl HyperElect {
    /// A sleeping node with one port per dimension.
    pub fn new(c: &NodeContext) -> Self {
        HyperElect { id: c.id, rule: c.rule, dims: c.ports, part: Part::Asleep, held: Vec::new(), end: Ending::default() }
    }

    /// Enter `stage`: challenge the cube across dimension stage − 1, or lead past the last.
    fn enter(&mut self, stage: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        self.part = Part::Duelist { stage };
        if stage > self.dims {
            if self.end.decision().is_some() {
                return Err(AlgoError::Invalid("won the last duel after being notified of a leader".into()));
            }
            self.end.decide(Role::Leader, self.id, out);
            for p in 0..self.dims {
                out.send(p, Msg::Notify { leader: self.id });
            }
            return Ok(());
        }
        let dim = stage - 1;
        out.send(dim, Msg::HyperMatch { id: self.id, stage, path: 1 << dim, route: 0 });
        // A `Match` of the new stage may already be waiting.
        if let Some(i) = self.held.iter().position(|m| matches!(m, Msg::HyperMatch { stage: s, .. } if *s == stage)) {
            let m = self.held.remove(i);
            self.take(m, out)?;
        }
        Ok(())
    }

    /// Send `msg` on towards the duelist at `route` from here.
    fn forward(msg: Msg, route: u32, out: &mut Outbox) {
        if let Msg::HyperMatch { id, stage, path, .. } = msg {
            let dim = route.trailing_zeros();
            let bit = 1 << dim;
            out.send(dim, Msg::HyperMatch { id, stage, path: path ^ bit, route: route ^ bit });
        }
    }

    /// A `Match` that ends its route here: duel, hold, or send it to this node's winner.
    fn take(&mut self, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::HyperMatch { id, stage, path, .. } = msg else { return Err(Self::unexpected(msg)) };
        match self.part {
            Part::Asleep => Err(AlgoError::Invalid("a match reached a sleeping node".into())),
            Part::Defeated { path: to_winner } => {
                Self::forward(msg, to_winner, out);
                Ok(())
            }
            Part::Duelist { stage: mine } if stage > mine => {
                if self.held.iter().any(|m| matches!(m, Msg::HyperMatch { stage: s, .. } if *s == stage)) {
                    return Err(AlgoError::Invalid(format!("two matches of stage {stage} for one duelist")));
                }
                self.held.push(msg);
                Ok(())
            }
            Part::Duelist { stage: mine } if stage < mine => {
                Err(AlgoError::Invalid(format!("a match of stage {stage} reached a duelist of stage {mine}")))
            }
            Part::Duelist { .. } => {
                // The opponent's path has exactly bit stage − 1 among its top bits.
                if path >> (stage - 1) != 1 {
                    return Err(AlgoError::Invalid(format!("a stage-{stage} match from outside the cube, path {path:#b}")));
                }
                if id == self.id {
                    return Err(AlgoError::Invalid(format!("the opponent has my id {id}")));
                }
                if self.rule.beats(self.id, id) {
                    return self.enter(stage + 1, out);
                }
                self.part = Part::Defeated { path };
                for m in std::mem::take(&mut self.held) {
                    Self::forward(m, path, out);
                }
                Ok(())
            }
        }
    }

    fn on_match(&mut self, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::HyperMatch { stage, path, route, .. } = msg else { return Err(Self::unexpected(msg)) };
        let all = if self.dims >= 32 { u32::MAX } else { (1 << self.dims) - 1 };
        if stage == 0 || stage > self.dims || path & !all != 0 || route & !all != 0 || path == 0 {
            return Err(AlgoError::Invalid(format!("{msg:?} does not fit a {}-cube", self.dims)));
        }
        if self.part == Part::Asleep {
            self.start(None, out);
        }
        if route != 0 {
            Self::forward(msg, route, out);
            return Ok(());
        }
        self.take(msg, out)
    }

    fn on_notify(&mut self, port: Port, leader: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.part == Part::Asleep || self.end.decision().is_some() || leader == self.id {
            return Err(AlgoError::Invalid(format!("notified of {leader} on port {port} in {:?}", self.part)));
        }
        self.end.decide(Role::Follower, leader, out);
        for p in port + 1..self.dims {
            out.send(p, Msg::Notify { leader });
        }
        Ok(())
    }
}

impl OneShotNode for HyperElect {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::InStep;

    fn ports(&self) -> u32 {
        self.dims
    }

    fn status(&self) -> &'static str {
        match (self.part, self.end.decision()) {
            (Part::Asleep, _) => "asleep",
            (_, Some(d)) if d.role == Role::Leader => "leader",
            (_, Some(_)) => "follower",
            (Part::Duelist { .. }, None) => "duelist",
            (Part::Defeated { .. }, None) => "defeated",
        }
    }

    fn held(&self) -> usize {
        self.held.len()
    }

    /// Stage 1: challenge the neighbour across dimension 0 (a lone node leads).
    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        // Entering stage 1 holds nothing yet, so it cannot fail.
        let _ = self.enter(1, out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::HyperMatch { .. } => self.on_match(msg, out),
            Msg::Notify { leader } => self.on_notify(port, leader, out),
            _ => Err(Self::unexpected(msg)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, send};

    fn node(id: u64, dims: u32) -> HyperElect {
        HyperElect::new(&NodeContext { id, rule: Rule::Max, n: 1 << dims, coin: 0, ports: dims, ..Default::default() })
    }

    fn mat(id: u64, stage: u32, path: u32, route: u32) -> Msg {
        Msg::HyperMatch { id, stage, path, route }
    }

    /// Santoro's bound is the sum of the worst routes, for every dimension.
    #[test]
    fn the_bound_is_the_sum_of_the_worst_routes() {
        for d in 1..=20 {
            assert_eq!(worst_count(1 << d), bound(1 << d), "d = {d}");
        }
        assert_eq!([2, 4, 8, 16, 32].map(bound), [3, 11, 31, 77, 177]);
    }

    /// A duelist challenges across dimension 0, wins with the better id, challenges across dimension 1, and
    /// after the last dimension leads and notifies on every port.
    #[test]
    fn a_duelist_climbs_the_dimensions_and_leads() {
        Probe::new(node(9, 2))
            .start(&[send(0, mat(9, 1, 1, 0))])
            .on(0, mat(4, 1, 1, 0), &[send(1, mat(9, 2, 2, 0))])
            .in_state("duelist")
            .on(1, mat(7, 2, 3, 0), &[decide(Role::Leader, 9), send(0, Msg::Notify { leader: 9 }), send(1, Msg::Notify { leader: 9 })])
            .in_state("leader");
    }

    /// A beaten duelist remembers its winner's path and routes later matches there, one dimension at a time;
    /// a node on the way passes a match on by its route.
    #[test]
    fn a_defeated_node_routes_to_its_winner() {
        Probe::new(node(3, 3))
            .start(&[send(0, mat(3, 1, 1, 0))])
            .on(0, mat(8, 1, 1, 0), &[])
            .in_state("defeated")
            .on(2, mat(5, 3, 4, 0), &[send(0, mat(5, 3, 5, 0))]);
        Probe::new(node(3, 3)).start(&[send(0, mat(3, 1, 1, 0))]).on(1, mat(5, 3, 6, 1), &[send(0, mat(5, 3, 7, 0))]);
    }

    /// A match of a later stage waits at a duelist; when the duelist loses it goes on to the winner.
    #[test]
    fn a_match_waits_for_its_stage() {
        Probe::new(node(3, 3))
            .start(&[send(0, mat(3, 1, 1, 0))])
            .on(1, mat(6, 2, 2, 0), &[])
            .on(0, mat(8, 1, 1, 0), &[send(0, mat(6, 2, 3, 0))]);
        // Winning instead, the held match is the next duel.
        Probe::new(node(9, 3))
            .start(&[send(0, mat(9, 1, 1, 0))])
            .on(1, mat(6, 2, 2, 0), &[])
            .on(0, mat(8, 1, 1, 0), &[send(1, mat(9, 2, 2, 0)), send(2, mat(9, 3, 4, 0))]);
    }

    /// The notification follows a binomial tree: received on port k, it goes on on the ports above k.
    #[test]
    fn notification_goes_up_the_dimensions() {
        Probe::new(node(2, 3))
            .start(&[send(0, mat(2, 1, 1, 0))])
            .on(0, mat(8, 1, 1, 0), &[])
            .on(0, Msg::Notify { leader: 8 }, &[decide(Role::Follower, 8), send(1, Msg::Notify { leader: 8 }), send(2, Msg::Notify { leader: 8 })]);
    }

    /// A sleeping node reached by a match wakes, challenges its own neighbour, then takes the match.
    #[test]
    fn a_match_wakes_a_sleeping_node() {
        Probe::new(node(5, 2)).on(1, mat(7, 2, 2, 0), &[send(0, mat(5, 1, 1, 0))]).in_state("duelist");
    }

    /// Messages that cannot happen are refused: stages and paths outside the cube, a match from the wrong
    /// cube, a second notification, other algorithms' kinds.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = Probe::new(node(1, 2));
        a.refuses(0, mat(4, 3, 1, 0));
        a.refuses(0, mat(4, 1, 8, 0));
        a.refuses(0, mat(4, 1, 0, 0));
        a.refuses(0, Msg::Notify { leader: 4 });
        a.refuses(0, Msg::Wakeup);
        let mut b = Probe::new(node(1, 2)).start(&[send(0, mat(1, 1, 1, 0))]);
        b.refuses(0, mat(4, 1, 3, 0));
        b.refuses(0, mat(1, 1, 1, 0));
    }
}
