//! # Yo-Yo (Santoro)
//!
//! * Source: N. Santoro, *Design and Analysis of Distributed Algorithms*,
//!   Wiley 2007, §3.8.3 "Election in arbitrary networks: YO-YO" (minimum
//!   finding by orientation, YO- and -YO, pruning).
//! * Network: any connected graph, bidirectional links, no FIFO, no sense of
//!   direction; a node knows only its degree, not n, m or its neighbours' ids.
//! * Winner: the best id of all (Santoro's minimum; mirrored, the maximum);
//!   a node woken by a message takes part as an initiator does.
//! * Messages: at most 2m + 2m·(⌈log2 n⌉ + 1) + n − 1. The setup costs
//!   exactly 2m (each node's id to every neighbour). An iteration sends at
//!   most one `yo_down` and one `yo_up` over each link still there: at most
//!   2m. Each iteration eliminates at least half of the sources (Santoro's
//!   Lemma: two sources whose values meet at a node cannot both survive,
//!   and every surviving source but the best is paired with one that does
//!   not), so after ⌈log2 s⌉ iterations (s < n initial sources) one source
//!   is left, and the pruning of the next iteration strips the graph to it:
//!   ⌈log2 n⌉ + 1 iterations. The notification goes down the tree of the
//!   leaves' links: n − 1.
//!
//! **Setup.** A node wakes (a start, or any message) and sends its id to
//! every neighbour (`Election { id, .. }`). With every neighbour's id it
//! orients each link from the better id to the worse (min rule: from the
//! smaller): a node with no in-link is a *source* (a local best), one with
//! no out-link a *sink*, the others *internal*. The orientation is acyclic.
//!
//! **YO-.** A source sends its own id down its out-links (`yo_down`). An
//! internal node waits for a value on every in-link, keeps the best, and
//! sends it down its out-links; a sink waits for every in-link.
//!
//! **-YO.** A sink answers every in-link: YES where the best value came
//! down, NO elsewhere (`yo_up`). An internal node waits for the vote of
//! every out-link, then answers every in-link likewise, except that one NO
//! from below makes it answer NO everywhere. A source that gets a NO stops
//! being a candidate. Every link that carried a NO is flipped, so a beaten
//! source gets an in-link and the orientation stays acyclic.
//!
//! **Pruning** (in the same `yo_up`): a node that got one value from
//! several in-links keeps one of those links (its lowest port) and asks the
//! others to cut theirs (`prune`); a node left a sink with one in-link is
//! useless and leaves, cutting that link too (`leaf`: the receiver becomes
//! its parent for the notification). A node whose out-links are all cut in
//! the -YO becomes a sink and may leave in the same answer, so pruning
//! cascades up. With one source s left, every node receives only s: each
//! keeps one in-link, and the whole DAG, now a tree, leaves bottom-up in
//! one -YO. The source that ends with every link cut and every vote YES is
//! the leader; it notifies its leaves (`Notify`), each its own, n − 1 in all.
//!
//! **No FIFO needed.** A link carries one `yo_down` and one `yo_up` per
//! iteration, the second only after the first, and a node's next
//! iteration's `yo_down` is sent only after its neighbours' answers; the one
//! message that can come early is a `yo_down` of the next iteration
//! overtaking the NO that flipped its link (or an id of the setup): it is
//! held, one per port, until the node has taken the NO.

use super::oneshot::Ending;
use super::{AlgoError, Algorithm, Decision, Input, Msg, NodeContext, Outbox, Port, Role, Rule, TimerId};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, ceil_log2};
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "yo-yo",
    title: "Yo-Yo (Santoro)",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, 3.8.3 (Election in arbitrary \
             networks: YO-YO)",
    description: "Every node orients its links from the better id to the worse; the sources push their ids \
                  down the acyclic orientation (YO-), every node keeping the best, and YES/NO votes come back \
                  up (-YO): a source that gets a NO drops out, links that carried a NO flip, duplicate links \
                  and useless leaves are pruned. The last source, left with no links, leads and notifies the \
                  nodes that left through it.",
    topologies: &[
        TopologyKind::Graph,
        TopologyKind::Tree,
        TopologyKind::Mesh,
        TopologyKind::Complete,
        TopologyKind::RingBi,
        TopologyKind::RingBiUnoriented,
    ],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Min,
    candidates: Candidates::All,
    bound_formula: "2m + 2m(ceil(log2 n) + 1) + n - 1 (m = links of the overlay)",
    bound: &|n, k| bound_on(n, n.max(n * n.saturating_sub(1) / 2), k),
    timer_events: |_| 0,
    heap_bytes_per_position: 749,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(YoYo::new),
    extras: Extras { bound_on: Some(bound_on), ..Extras::NONE },
};

/// Santoro's bound on the overlay: setup 2m, at most ⌈log2 n⌉ + 1
/// iterations of at most 2m, the notification n − 1.
fn bound_on(n: u64, m: u64, _k: u64) -> u64 {
    2 * m + 2 * m * (ceil_log2(n) + 1) + n.saturating_sub(1)
}

/// Which way a link points in the current orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Link {
    /// Towards this node: a value comes down it, this node's vote goes up.
    In,
    /// Away from this node.
    Out,
    /// Pruned.
    Gone,
}

/// Where a node stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Asleep,
    /// Sent its id, waiting for every neighbour's.
    Setup,
    /// YO-: waiting for a value on every in-link.
    Down,
    /// -YO: sent its value down, waiting for every out-link's vote.
    Up,
    /// Pruned as a leaf: waiting for its parent's notification.
    Left,
    /// Decided.
    Done,
}

/// A vote received on an out-link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Vote {
    yes: bool,
    prune: bool,
    leaf: bool,
}

/// One node of Yo-Yo.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct YoYo {
    id: u64,
    rule: Rule,
    phase: Phase,
    /// Neighbours' ids, per port (setup).
    nbr: Vec<Option<u64>>,
    /// Each port's link in the current orientation.
    link: Vec<Link>,
    /// Values received this iteration, per in-link.
    got: Vec<Option<u64>>,
    /// Votes received this iteration, per out-link.
    votes: Vec<Option<Vote>>,
    /// The best value this iteration (a source's own id).
    value: u64,
    /// Ports of the neighbours that left through this node.
    child: Vec<bool>,
    /// The port this node left through.
    parent: Option<Port>,
    /// A `yo_down` that came before the node could take it, per port.
    held: Vec<Option<u64>>,
    /// The current iteration (1 after the setup).
    iteration: u32,
    /// Values (YO-) or votes (-YO) still to come in this phase.
    waiting: u32,
    /// How many `held` ports hold a value.
    holding: u32,
    end: Ending,
}

impl YoYo {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        let d = c.ports as usize;
        YoYo {
            id: c.id,
            rule: c.rule,
            phase: Phase::Asleep,
            nbr: vec![None; d],
            link: vec![Link::Gone; d],
            got: vec![None; d],
            votes: vec![None; d],
            value: c.id,
            child: vec![false; d],
            parent: None,
            held: vec![None; d],
            iteration: 0,
            waiting: 0,
            holding: 0,
            end: Ending::default(),
        }
    }

    fn degree(&self) -> u32 {
        self.nbr.len() as u32
    }

    fn ports_where(&self, l: Link) -> impl Iterator<Item = usize> + '_ {
        self.link.iter().enumerate().filter(move |(_, x)| **x == l).map(|(p, _)| p)
    }

    /// Wake: send the own id to every neighbour.
    fn wake(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.phase != Phase::Asleep {
            return Ok(());
        }
        self.phase = Phase::Setup;
        for p in 0..self.degree() {
            out.send(p, Msg::Election { id: self.id, stage: 0, hops: 0 });
        }
        self.maybe_oriented(out)
    }

    /// With every neighbour's id: orient the links and start iteration 1.
    fn maybe_oriented(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.phase != Phase::Setup || self.nbr.iter().any(Option::is_none) {
            return Ok(());
        }
        for (p, nbr) in self.nbr.iter().enumerate() {
            let Some(j) = *nbr else { continue };
            self.link[p] = if self.rule.beats(self.id, j) { Link::Out } else { Link::In };
        }
        self.begin_iteration(out)
    }

    fn begin_iteration(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        self.iteration += 1;
        self.got.fill(None);
        self.votes.fill(None);
        self.phase = Phase::Down;
        self.waiting = self.ports_where(Link::In).count() as u32;
        self.check_down(out)
    }

    /// YO-: once every in-link has its value, pass the best on (or, a sink, answer).
    fn check_down(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.phase != Phase::Down || self.waiting > 0 {
            return Ok(());
        }
        let best = self.rule.winner(self.ports_where(Link::In).filter_map(|p| self.got[p]));
        self.value = best.unwrap_or(self.id);
        if self.ports_where(Link::Out).next().is_none() {
            return self.answer(true, out);
        }
        let value = self.value;
        for p in 0..self.degree() {
            if self.link[p as usize] == Link::Out {
                out.send(p, Msg::YoDown { id: value });
            }
        }
        self.phase = Phase::Up;
        self.waiting = self.ports_where(Link::Out).count() as u32;
        Ok(())
    }

    /// -YO: once every out-link has voted, answer.
    fn check_up(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.phase != Phase::Up || self.waiting > 0 {
            return Ok(());
        }
        // The vote on a cut link does not count: the value it answers came down a kept link too.
        let all_yes = self.ports_where(Link::Out).all(|p| self.votes[p].is_some_and(|v| v.yes || v.prune));
        self.answer(all_yes, out)
    }

    /// The end of this node's iteration: take the votes from below (cut,
    /// flip), vote to the in-links with pruning, and go on, leave or lead.
    fn answer(&mut self, all_yes: bool, out: &mut Outbox) -> Result<(), AlgoError> {
        let ins: Vec<usize> = self.ports_where(Link::In).collect();
        // Votes from the out-links: pruned links go, NO links flip.
        let (mut remaining_out, mut flipped) = (0, false);
        for p in 0..self.link.len() {
            if self.link[p] != Link::Out {
                continue;
            }
            let Some(v) = self.votes[p] else { continue };
            if v.prune {
                self.link[p] = Link::Gone;
                self.child[p] = v.leaf;
            } else if !v.yes {
                self.link[p] = Link::In;
                flipped = true;
            } else {
                remaining_out += 1;
            }
        }
        if ins.is_empty() {
            // A source.
            if self.link.iter().all(|l| *l == Link::Gone) {
                if !all_yes {
                    return Err(AlgoError::Invalid(format!(
                        "source {} lost every link with a NO in iteration {}",
                        self.id, self.iteration
                    )));
                }
                return self.lead(out);
            }
            return self.begin_iteration(out);
        }
        // A sink now, with every out-link cut (none flipped in).
        let sink = remaining_out == 0 && !flipped;
        // One in-link per value is kept: the first port that brought it.
        let mut by_value: Vec<(Option<u64>, usize, usize)> =
            ins.iter().enumerate().map(|(i, &p)| (self.got[p], p, i)).collect();
        by_value.sort_unstable();
        let mut kept = vec![false; ins.len()];
        for (j, &(v, _, i)) in by_value.iter().enumerate() {
            kept[i] = j == 0 || by_value[j - 1].0 != v;
        }
        let leaf = sink && kept.iter().filter(|k| **k).count() == 1;
        for (i, &p) in ins.iter().enumerate() {
            let yes = all_yes && self.got[p] == Some(self.value);
            let prune = !kept[i] || leaf;
            out.send(p as Port, Msg::YoUp { yes, prune, leaf: leaf && kept[i] });
            self.link[p] = if prune {
                Link::Gone
            } else if yes {
                Link::In
            } else {
                Link::Out
            };
            if leaf && kept[i] {
                self.parent = Some(p as Port);
            }
        }
        if leaf {
            self.phase = Phase::Left;
            return Ok(());
        }
        self.begin_iteration(out)
    }

    /// The last source: lead, and notify the nodes that left through it.
    fn lead(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        self.phase = Phase::Done;
        self.end.decide(Role::Leader, self.id, out);
        self.notify_children(self.id, out);
        Ok(())
    }

    fn notify_children(&self, leader: u64, out: &mut Outbox) {
        for (p, c) in self.child.iter().enumerate() {
            if *c {
                out.send(p as Port, Msg::Notify { leader });
            }
        }
    }

    /// Take the held `yo_down`s the node can take now, until none is left that it can.
    fn release_held(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        while self.holding > 0 {
            let ready = (0..self.held.len()).find(|&p| {
                self.held[p].is_some() && self.phase == Phase::Down && self.link[p] == Link::In && self.got[p].is_none()
            });
            let Some(p) = ready else { return Ok(()) };
            let v = self.held[p].take();
            self.holding -= 1;
            self.got[p] = v;
            self.waiting -= 1;
            self.check_down(out)?;
        }
        Ok(())
    }

    fn invalid(&self, port: Port, msg: Msg) -> AlgoError {
        AlgoError::Invalid(format!(
            "{msg:?} on port {port} in {:?} of iteration {} (link {:?})",
            self.phase,
            self.iteration,
            self.link.get(port as usize)
        ))
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        if port >= self.degree() {
            return Err(AlgoError::BadPort { port });
        }
        let p = port as usize;
        match msg {
            Msg::Election { id, stage: 0, hops: 0 } => {
                self.wake(out)?;
                if self.phase != Phase::Setup || self.nbr[p].is_some() || id == self.id {
                    return Err(self.invalid(port, msg));
                }
                self.nbr[p] = Some(id);
                self.maybe_oriented(out)?;
            }
            Msg::YoDown { id } => {
                self.wake(out)?;
                if self.phase == Phase::Down && self.link[p] == Link::In && self.got[p].is_none() {
                    self.got[p] = Some(id);
                    self.waiting -= 1;
                    self.check_down(out)?;
                } else if self.held[p].is_none()
                    && (self.phase == Phase::Setup
                        || (self.phase == Phase::Up
                            && self.link[p] == Link::Out
                            && self.votes[p].is_none_or(|v| !v.yes && !v.prune)))
                {
                    // The next iteration's value, ahead of the NO that flips this link (or of an id).
                    self.held[p] = Some(id);
                    self.holding += 1;
                    return Ok(());
                } else {
                    return Err(self.invalid(port, msg));
                }
            }
            Msg::YoUp { yes, prune, leaf } => {
                if self.phase != Phase::Up || self.link[p] != Link::Out || self.votes[p].is_some() || (leaf && !prune) {
                    return Err(self.invalid(port, msg));
                }
                self.votes[p] = Some(Vote { yes, prune, leaf });
                self.waiting -= 1;
                self.check_up(out)?;
            }
            Msg::Notify { leader } => {
                if self.phase != Phase::Left || self.parent != Some(port) || leader == self.id {
                    return Err(self.invalid(port, msg));
                }
                self.phase = Phase::Done;
                self.end.decide(Role::Follower, leader, out);
                self.notify_children(leader, out);
            }
            Msg::Election { .. } => return Err(self.invalid(port, msg)),
            _ => return Err(AlgoError::UnexpectedKind { algorithm: "yo-yo", kind: msg.kind().name() }),
        }
        self.release_held(out)
    }
}

impl Algorithm for YoYo {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                self.wake(out)?;
                self.release_held(out)
            }
            Input::Message { port, msg } => self.receive(port, msg, out),
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => Ok(()),
        }
    }

    fn state(&self) -> &'static str {
        match (self.phase, self.end.decision()) {
            (_, Some(Decision { role: Role::Leader, .. })) => "leader",
            (_, Some(_)) => "follower",
            (Phase::Asleep, None) => "asleep",
            (Phase::Setup, None) => "setup",
            (Phase::Down, None) => "yo-down",
            (Phase::Up, None) => "yo-up",
            (Phase::Left | Phase::Done, None) => "pruned",
        }
    }

    fn watched(&self, _port: Port) -> bool {
        true
    }

    fn suspects(&self, _port: Port) -> bool {
        false
    }

    fn timer_name(&self, _timer: TimerId) -> Option<&'static str> {
        None
    }

    fn held(&self) -> usize {
        self.holding as usize
    }

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::catalogue;
    use crate::algo::harness::sweeps::{all_then_one, random_graphs, small_graph_arrangements};
    use crate::algo::harness::{Probe, decide, send};
    use crate::sim::SimConfig;
    use crate::topology::Topology;

    fn id(id: u64) -> Msg {
        Msg::Election { id, stage: 0, hops: 0 }
    }

    fn down(id: u64) -> Msg {
        Msg::YoDown { id }
    }

    fn up(yes: bool, prune: bool, leaf: bool) -> Msg {
        Msg::YoUp { yes, prune, leaf }
    }

    fn node(id: u64, ports: u32) -> YoYo {
        YoYo::new(&NodeContext { id, rule: Rule::Min, n: 8, coin: 0, ports, ..Default::default() })
    }

    /// A woken node sends its id on every port; with every neighbour's id, a local minimum is a source
    /// and sends its id down every link at once.
    #[test]
    fn setup_then_a_source_sends_its_id_down() {
        Probe::new(node(2, 2))
            .start(&[send(0, id(2)), send(1, id(2))])
            .in_state("setup")
            .on(0, id(5), &[])
            .on(1, id(7), &[send(0, down(2)), send(1, down(2))])
            .in_state("yo-up");
    }

    /// A sink answers YES where the best value came down and NO elsewhere; a node woken by an id wakes
    /// first (sending its own).
    #[test]
    fn sink_votes_yes_for_the_best_and_no_elsewhere() {
        Probe::new(node(9, 2))
            .on(0, id(3), &[send(0, id(9)), send(1, id(9))])
            .on(1, id(4), &[])
            .on(0, down(3), &[])
            .on(1, down(4), &[send(0, up(true, false, false)), send(1, up(false, false, false))])
            .in_state("yo-down");
    }

    /// A sink with one in-link is a useless leaf: it answers YES, prunes the link and leaves, then
    /// takes its parent's notification.
    #[test]
    fn a_leaf_sink_leaves_and_is_notified() {
        Probe::new(node(9, 1))
            .start(&[send(0, id(9))])
            .on(0, id(3), &[])
            .on(0, down(3), &[send(0, up(true, true, true))])
            .in_state("pruned")
            .on(0, Msg::Notify { leader: 1 }, &[decide(Role::Follower, 1)])
            .in_state("follower");
    }

    /// The same value on two in-links: one link is kept (the lowest port), the other asked to prune.
    #[test]
    fn duplicate_values_prune_all_links_but_one() {
        Probe::new(node(9, 3))
            .start(&[send(0, id(9)), send(1, id(9)), send(2, id(9))])
            .on(0, id(3), &[])
            .on(1, id(4), &[])
            .on(2, id(5), &[])
            .on(2, down(3), &[])
            .on(1, down(4), &[])
            .on(
                0,
                down(3),
                &[send(0, up(true, false, false)), send(1, up(false, false, false)), send(2, up(true, true, false))],
            );
    }

    /// An internal node passes the best value down, and one NO from below makes it answer NO on every
    /// in-link; the NO links flip, so it next waits for a value from its former out-link.
    #[test]
    fn internal_node_relays_and_a_no_spreads_up() {
        Probe::new(node(5, 2))
            .start(&[send(0, id(5)), send(1, id(5))])
            .on(0, id(3), &[])
            .on(1, id(8), &[])
            .on(0, down(3), &[send(1, down(3))])
            .on(1, up(false, false, false), &[send(0, up(false, false, false))])
            .in_state("yo-down")
            .on(1, down(2), &[send(0, down(2))]);
    }

    /// The source whose every link was cut with a YES leads and notifies its leaves; a source that
    /// gets a NO stops being one.
    #[test]
    fn last_source_leads_a_beaten_one_waits() {
        Probe::new(node(1, 2))
            .start(&[send(0, id(1)), send(1, id(1))])
            .on(0, id(4), &[])
            .on(1, id(6), &[send(0, down(1)), send(1, down(1))])
            .on(0, up(true, true, true), &[])
            .on(1, up(true, true, false), &[decide(Role::Leader, 1), send(0, Msg::Notify { leader: 1 })]);
        Probe::new(node(2, 1))
            .start(&[send(0, id(2))])
            .on(0, id(4), &[send(0, down(2))])
            .on(0, up(false, false, false), &[])
            .in_state("yo-down");
    }

    /// Without FIFO the next iteration's value may overtake the NO that flips its link: it is held,
    /// then taken once the NO has arrived.
    #[test]
    fn an_early_value_is_held_until_its_link_flips() {
        let mut p = Probe::new(node(2, 1)).start(&[send(0, id(2))]).on(0, id(4), &[send(0, down(2))]);
        p = p.on(0, down(1), &[]);
        assert_eq!(p.node.held(), 1);
        p.on(0, up(false, false, false), &[send(0, up(true, true, true))]).in_state("pruned");
    }

    /// Messages no run produces are refused, never a panic: a vote on an in-link, a second id from a
    /// port, a leaf flag without prune, a notification not from the parent, a bad port, a foreign kind.
    #[test]
    fn impossible_messages_are_errors() {
        let mut p = Probe::new(node(5, 2)).start(&[send(0, id(5)), send(1, id(5))]).on(0, id(3), &[]);
        p.refuses(0, id(3));
        p.refuses(1, up(true, false, false));
        p.refuses(2, id(1));
        p.refuses(0, Msg::Wakeup);
        p.refuses(0, Msg::Notify { leader: 1 });
        let mut p = p.on(1, id(8), &[]).on(0, down(3), &[send(1, down(3))]);
        p.refuses(1, up(true, false, true));
        p.refuses(0, up(true, false, false));
        p.refuses(0, down(3));
    }

    /// The runs of `ids` on `topo` ([`all_then_one`], minimum rule): at least the id exchange (2m) and
    /// exactly n − 1 notifications.
    fn check(topo: &Topology, ids: &[u64], cfgs: &[SimConfig]) {
        all_then_one(catalogue::find("yo-yo").unwrap(), topo, ids, Rule::Min, cfgs, |r| {
            assert!(r.counters.election_messages >= 2 * topo.edge_count() as u64, "{ids:?}");
            assert_eq!(r.counters.notification_messages, topo.len() as u64 - 1, "{ids:?}");
        });
    }

    /// Every arrangement of ids on small graphs (a triangle with a tail, a 4-cycle with a chord, a
    /// 5-cycle, a 6-node graph of two triangles joined by two links, K4) under FIFO, non-FIFO and unit
    /// delays: the minimum leads, n − 1 notifications, and the count is within Santoro's bound.
    #[test]
    fn every_arrangement_of_small_graphs_within_the_bound() {
        let cfgs = [
            SimConfig { seed: 3, ..SimConfig::default() },
            SimConfig { seed: 5, fifo: false, max_delay: 32, ..SimConfig::default() },
            SimConfig { unit_delay: true, ..SimConfig::default() },
        ];
        small_graph_arrangements(|topo, ids| check(topo, ids, &cfgs));
    }

    /// Random connected graphs from seeds (n = 5..38) and a path: the minimum leads within the bound
    /// on FIFO and non-FIFO schedules.
    #[test]
    fn random_graphs_within_the_bound() {
        let cfgs = [
            SimConfig { seed: 1, ..SimConfig::default() },
            SimConfig { seed: 2, fifo: false, max_delay: 64, ..SimConfig::default() },
        ];
        for (topo, ids) in random_graphs() {
            check(&topo, &ids, &cfgs);
        }
        let path = Topology::graph(7, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6)]).unwrap();
        check(&path, &[4, 2, 6, 1, 7, 3, 5], &cfgs);
    }
}
