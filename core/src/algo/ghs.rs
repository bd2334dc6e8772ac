//! # GHS: election by a minimum spanning tree (Gallager, Humblet, Spira 1983)
//!
//! * Source: R. G. Gallager, P. A. Humblet, P. M. Spira, "A distributed
//!   algorithm for minimum-weight spanning trees", ACM TOPLAS 5(1), 1983
//!   (the algorithm, its message bound 5N log2 N + 2E); N. Lynch,
//!   *Distributed Algorithms*, §15.5; Santoro, *Design and Analysis of
//!   Distributed Algorithms*, §3.8.2 (Mega-Merger, the same construction as
//!   an election). This is the GHS presentation: levels, fragment names,
//!   `Connect`, `Initiate`, `Test`, `Accept`, `Reject`, `Report`,
//!   `Change-root`, with the paper's rules and deferrals.
//! * Network: any connected simple graph, bidirectional **FIFO** links (GHS
//!   assumes them: a `Report` must not overtake the `Initiate` before it, a
//!   `Connect` not the `Test`s before it), no sense of direction; a node
//!   knows only its degree.
//! * Edge weights: the weight of a link is the pair (smaller endpoint id,
//!   larger endpoint id), compared lexicographically: distinct whenever the
//!   ids are (on a simple graph), and both endpoints know it once they know
//!   each other's id. A node learns its neighbours' ids by sending its own on
//!   every link when it wakes (`election`): 2m messages, counted.
//! * Winner: the best id of all (max; mirrored, min). GHS builds the tree and
//!   ends at the two endpoints of the last core edge; the election rides on
//!   its reports: every `Report` also carries the best id of the sender's
//!   subtree, and the last reports cover every node (a node the final
//!   fragment absorbed while searching joins the search), so both core nodes
//!   learn the best id and send `notify` down the tree.
//! * Messages: at most 5n⌊log2 n⌋ + 2m (GHS's bound: a fragment of level L
//!   has at least 2^L nodes, so levels stop at ⌊log2 n⌋; per level a node
//!   receives at most one `Initiate` and one `Accept`, and sends at most one
//!   accepted `Test`, one `Report` and one `Change-root` or `Connect`, with
//!   level 0 costing one `Connect` and the last level no `Connect`; every
//!   link is rejected once, by a `Test` and a `Reject` or two crossing
//!   `Test`s: 2m), plus 2m for the ids, plus n − 2 notifications (the tree's
//!   links but the core): 5n⌊log2 n⌋ + 4m + n − 2.
//!
//! Deferred messages (a `Connect` or `Test` from a fragment whose level this
//! node has not reached, a `Report` on the core while still searching, any
//! GHS message before the node knows every neighbour's weight) wait in the
//! node's own queue, part of its state, and are retried after every step in
//! the order they came.

use super::oneshot::Ending;
use super::{AlgoError, Algorithm, Decision, Input, Msg, NodeContext, Outbox, Port, Role, Rule, TimerId};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, floor_log2};
use crate::topology::TopologyKind;

/// The highest fragment level a message may carry: a fragment of level L
/// holds at least 2^L nodes, so no run on fewer than 2^32 nodes reaches 32.
/// A higher level is refused as implausible before it touches any state.
pub const MAX_LEVEL: u32 = 31;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "ghs",
    title: "GHS minimum spanning tree election (Gallager-Humblet-Spira 1983)",
    source: "R. G. Gallager, P. A. Humblet, P. M. Spira, A distributed algorithm for minimum-weight spanning \
             trees, ACM TOPLAS 5(1), 1983; N. Lynch, Distributed Algorithms, 15.5; N. Santoro, Design and \
             Analysis of Distributed Algorithms, 3.8.2 (Mega-Merger)",
    description: "Nodes learn their neighbours' ids (a link's weight is its two endpoint ids), then build the \
                  minimum spanning tree by GHS: fragments with levels and names find their minimum outgoing \
                  link (Initiate, Test, Accept/Reject, Report), move their root to it (Change-root) and \
                  Connect, merging at equal levels and absorbing lower ones. The reports also carry the best \
                  id, so the last core's two nodes learn the winner and notify down the tree.",
    topologies: &[TopologyKind::Graph, TopologyKind::Tree, TopologyKind::Mesh, TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "5n floor(log2 n) + 4m + n - 2 (m = links: GHS's 5n log n + 2m, 2m ids, n - 2 notifications)",
    bound: &|n, k| bound_on(n, n.max(n * n.saturating_sub(1) / 2), k),
    timer_events: |_| 0,
    heap_bytes_per_position: 841,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(Ghs::new),
    extras: Extras { bound_on: Some(bound_on), ..Extras::NONE },
};

/// GHS's 5n⌊log2 n⌋ + 2m, the ids' 2m, the notification's n − 2.
fn bound_on(n: u64, m: u64, _k: u64) -> u64 {
    5 * n * floor_log2(n) + 4 * m + n.saturating_sub(2)
}

/// A link's weight: its endpoints' ids, the smaller first.
type Weight = (u64, u64);

/// A link's state in GHS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Edge {
    /// Not yet known to be in the tree or out of it.
    Basic,
    /// A link of the tree.
    Branch,
    /// Inside the fragment, not in the tree.
    Rejected,
}

/// GHS's node state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Search {
    /// Learning its neighbours' ids (GHS's Sleeping).
    Hello,
    /// Looking for the fragment's best outgoing link.
    Find,
    /// Reported (or at level 0).
    Found,
}

/// One node of GHS.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ghs {
    id: u64,
    rule: Rule,
    awake: bool,
    /// Neighbours' ids, per port.
    nbr: Vec<Option<u64>>,
    se: Vec<Edge>,
    sn: Search,
    level: u32,
    /// The fragment's name: its core's weight.
    fname: Weight,
    best_edge: Option<Port>,
    /// `None`: infinite.
    best_wt: Option<Weight>,
    test_edge: Option<Port>,
    in_branch: Option<Port>,
    find_count: u32,
    /// The best id in this node's subtree in the current search.
    top: u64,
    /// Messages deferred, in arrival order.
    queue: Vec<(Port, Msg)>,
    /// The ports by increasing weight (once every weight is known).
    order: Vec<Port>,
    /// `order` before it holds no basic link (a link never becomes basic again).
    cursor: u32,
    end: Ending,
}

/// `w` in a `Report`'s fields ((0, 0): infinite).
fn wire(w: Option<Weight>) -> Weight {
    w.unwrap_or((0, 0))
}

/// Is `a` lighter than `b` (`None` infinite)?
fn lighter(a: Option<Weight>, b: Option<Weight>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

impl Ghs {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        let d = c.ports as usize;
        Ghs {
            id: c.id,
            rule: c.rule,
            awake: false,
            nbr: vec![None; d],
            se: vec![Edge::Basic; d],
            sn: Search::Hello,
            level: 0,
            fname: (0, 0),
            best_edge: None,
            best_wt: None,
            test_edge: None,
            in_branch: None,
            find_count: 0,
            top: c.id,
            queue: Vec::new(),
            order: Vec::new(),
            cursor: 0,
            end: Ending::default(),
        }
    }

    fn degree(&self) -> u32 {
        self.nbr.len() as u32
    }

    /// The weight of the link on `p` (once its neighbour's id is known).
    fn weight(&self, p: Port) -> Weight {
        let j = self.nbr[p as usize].unwrap_or(self.id);
        (self.id.min(j), self.id.max(j))
    }

    /// Wake: send the own id on every link.
    fn wake(&mut self, out: &mut Outbox) {
        if self.awake {
            return;
        }
        self.awake = true;
        for p in 0..self.degree() {
            out.send(p, Msg::Election { id: self.id, stage: 0, hops: 0 });
        }
        self.maybe_ready(out);
    }

    /// With every weight known: GHS's wakeup (Connect on the lightest link).
    fn maybe_ready(&mut self, out: &mut Outbox) {
        if self.sn != Search::Hello || self.nbr.iter().any(Option::is_none) {
            return;
        }
        self.sn = Search::Found;
        if self.degree() == 0 {
            self.end.decide(Role::Leader, self.id, out);
            return;
        }
        let mut order: Vec<Port> = (0..self.degree()).collect();
        order.sort_unstable_by_key(|&p| self.weight(p));
        let m = order[0];
        self.order = order;
        self.se[m as usize] = Edge::Branch;
        self.level = 0;
        self.find_count = 0;
        out.send(m, Msg::GhsConnect { level: 0 });
    }

    /// GHS's `test`: probe the lightest basic link, or report.
    fn test(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        while let Some(&p) = self.order.get(self.cursor as usize) {
            if self.se[p as usize] == Edge::Basic {
                break;
            }
            self.cursor += 1;
        }
        match self.order.get(self.cursor as usize).copied() {
            Some(p) => {
                self.test_edge = Some(p);
                out.send(p, Msg::GhsTest { level: self.level, core_lo: self.fname.0, core_hi: self.fname.1 });
                Ok(())
            }
            None => {
                self.test_edge = None;
                self.report(out)
            }
        }
    }

    /// GHS's `report`: once every child reported and the own test is done.
    fn report(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.find_count == 0 && self.test_edge.is_none() {
            self.sn = Search::Found;
            let Some(ib) = self.in_branch else {
                return Err(AlgoError::Invalid(format!("node {} reports without an in-branch", self.id)));
            };
            let (best_lo, best_hi) = wire(self.best_wt);
            out.send(ib, Msg::GhsReport { best_lo, best_hi, top: self.top });
        }
        Ok(())
    }

    /// GHS's `change-root`.
    fn change_root(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        let Some(b) = self.best_edge else {
            return Err(AlgoError::Invalid(format!("node {} changes root without a best edge", self.id)));
        };
        if self.se[b as usize] == Edge::Branch {
            out.send(b, Msg::GhsChangeRoot);
        } else {
            out.send(b, Msg::GhsConnect { level: self.level });
            self.se[b as usize] = Edge::Branch;
        }
        Ok(())
    }

    /// The search is over everywhere: the best id leads; notify the tree.
    fn halt(&mut self, leader: u64, out: &mut Outbox) {
        self.end.decide_for(self.id, leader, out);
        for p in 0..self.degree() {
            if self.se[p as usize] == Edge::Branch && Some(p) != self.in_branch {
                out.send(p, Msg::Notify { leader });
            }
        }
    }

    fn invalid(&self, port: Port, msg: Msg) -> AlgoError {
        AlgoError::Invalid(format!(
            "{msg:?} on port {port} at level {} ({:?}, edge {:?}, in-branch {:?}, test {:?}, decided {})",
            self.level,
            self.sn,
            self.se.get(port as usize),
            self.in_branch,
            self.test_edge,
            self.end.decided()
        ))
    }

    /// One GHS message: `Ok(false)` defers it (nothing changed).
    fn process(&mut self, j: Port, msg: Msg, out: &mut Outbox) -> Result<bool, AlgoError> {
        let ju = j as usize;
        if self.sn == Search::Hello {
            return Ok(false);
        }
        if self.end.decided() {
            return Err(self.invalid(j, msg));
        }
        match msg {
            Msg::GhsConnect { level } => {
                if level < self.level {
                    self.se[ju] = Edge::Branch;
                    let find = self.sn == Search::Find;
                    out.send(
                        j,
                        Msg::GhsInitiate { level: self.level, core_lo: self.fname.0, core_hi: self.fname.1, find },
                    );
                    if find {
                        self.find_count += 1;
                    }
                } else if self.se[ju] == Edge::Basic {
                    return Ok(false);
                } else {
                    // Both ends chose this link: merge into a fragment one level up, named after it.
                    let w = self.weight(j);
                    out.send(j, Msg::GhsInitiate { level: self.level + 1, core_lo: w.0, core_hi: w.1, find: true });
                }
            }
            Msg::GhsInitiate { level, core_lo, core_hi, find } => {
                if self.se[ju] != Edge::Branch {
                    return Err(self.invalid(j, msg));
                }
                self.level = level;
                self.fname = (core_lo, core_hi);
                self.sn = if find { Search::Find } else { Search::Found };
                self.in_branch = Some(j);
                self.best_edge = None;
                self.best_wt = None;
                self.top = self.id;
                for i in 0..self.degree() {
                    if i != j && self.se[i as usize] == Edge::Branch {
                        out.send(i, msg);
                        if find {
                            self.find_count += 1;
                        }
                    }
                }
                if find {
                    self.test(out)?;
                }
            }
            Msg::GhsTest { level, core_lo, core_hi } => {
                if level > self.level {
                    return Ok(false);
                }
                if (core_lo, core_hi) != self.fname {
                    out.send(j, Msg::GhsAccept);
                } else {
                    if self.se[ju] == Edge::Basic {
                        self.se[ju] = Edge::Rejected;
                    }
                    if self.test_edge != Some(j) {
                        out.send(j, Msg::GhsReject);
                    } else {
                        self.test(out)?;
                    }
                }
            }
            Msg::GhsAccept => {
                if self.test_edge != Some(j) {
                    return Err(self.invalid(j, msg));
                }
                self.test_edge = None;
                let w = Some(self.weight(j));
                if lighter(w, self.best_wt) {
                    self.best_edge = Some(j);
                    self.best_wt = w;
                }
                self.report(out)?;
            }
            Msg::GhsReject => {
                if self.test_edge != Some(j) {
                    return Err(self.invalid(j, msg));
                }
                if self.se[ju] == Edge::Basic {
                    self.se[ju] = Edge::Rejected;
                }
                self.test(out)?;
            }
            Msg::GhsReport { best_lo, best_hi, top } => {
                let w = ((best_lo, best_hi) != (0, 0)).then_some((best_lo, best_hi));
                if self.se[ju] != Edge::Branch {
                    return Err(self.invalid(j, msg));
                }
                if Some(j) != self.in_branch {
                    if self.find_count == 0 {
                        return Err(self.invalid(j, msg));
                    }
                    self.find_count -= 1;
                    self.top = self.rule.best(self.top, top);
                    if lighter(w, self.best_wt) {
                        self.best_wt = w;
                        self.best_edge = Some(j);
                    }
                    self.report(out)?;
                } else if self.sn == Search::Find {
                    return Ok(false);
                } else if lighter(self.best_wt, w) {
                    self.change_root(out)?;
                } else if w.is_none() && self.best_wt.is_none() {
                    let leader = self.rule.best(self.top, top);
                    self.halt(leader, out);
                }
            }
            Msg::GhsChangeRoot => {
                if self.se[ju] != Edge::Branch || self.sn != Search::Found {
                    return Err(self.invalid(j, msg));
                }
                self.change_root(out)?;
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: "ghs", kind: msg.kind().name() }),
        }
        Ok(true)
    }

    /// Retry the deferred messages, in arrival order, until none can be taken.
    fn drain(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        'again: loop {
            for i in 0..self.queue.len() {
                let (p, m) = self.queue[i];
                if self.process(p, m, out)? {
                    self.queue.remove(i);
                    continue 'again;
                }
            }
            return Ok(());
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        if port >= self.degree() {
            return Err(AlgoError::BadPort { port });
        }
        match msg {
            Msg::Election { id, stage: 0, hops: 0 } => {
                self.wake(out);
                if self.nbr[port as usize].is_some() || id == self.id {
                    return Err(self.invalid(port, msg));
                }
                self.nbr[port as usize] = Some(id);
                self.maybe_ready(out);
            }
            Msg::Notify { leader } => {
                if self.end.decided() || self.in_branch != Some(port) || self.sn != Search::Found {
                    return Err(self.invalid(port, msg));
                }
                self.halt(leader, out);
            }
            Msg::GhsConnect { .. }
            | Msg::GhsInitiate { .. }
            | Msg::GhsTest { .. }
            | Msg::GhsAccept
            | Msg::GhsReject
            | Msg::GhsReport { .. }
            | Msg::GhsChangeRoot => {
                if let Msg::GhsConnect { level } | Msg::GhsInitiate { level, .. } | Msg::GhsTest { level, .. } = msg
                    && level > MAX_LEVEL
                {
                    // A fragment of level L holds at least 2^L nodes, so no run's level reaches 32.
                    return Err(AlgoError::Implausible {
                        algorithm: SPEC.name,
                        field: "level",
                        value: u64::from(level),
                        max: u64::from(MAX_LEVEL),
                    });
                }
                self.wake(out);
                if !self.process(port, msg, out)? {
                    // At most one deferred message per link and a report: more is no run's.
                    if self.queue.len() > 2 * self.nbr.len() + 2 {
                        return Err(self.invalid(port, msg));
                    }
                    self.queue.push((port, msg));
                    return Ok(());
                }
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: "ghs", kind: msg.kind().name() }),
        }
        self.drain(out)
    }
}

impl Algorithm for Ghs {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                self.wake(out);
                self.drain(out)
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
        match (self.awake, self.sn, self.end.decision()) {
            (_, _, Some(Decision { role: Role::Leader, .. })) => "leader",
            (_, _, Some(_)) => "follower",
            (false, _, None) => "asleep",
            (true, Search::Hello, None) => "hello",
            (true, Search::Find, None) => "find",
            (true, Search::Found, None) => "found",
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
        self.queue.len()
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

    fn node(id: u64, ports: u32) -> Ghs {
        Ghs::new(&NodeContext { id, rule: Rule::Max, n: 8, coin: 0, ports, ..Default::default() })
    }

    fn initiate(level: u32, core: Weight, find: bool) -> Msg {
        Msg::GhsInitiate { level, core_lo: core.0, core_hi: core.1, find }
    }

    fn report(best: Weight, top: u64) -> Msg {
        Msg::GhsReport { best_lo: best.0, best_hi: best.1, top }
    }

    /// A woken node sends its id on every link; once it knows every weight it connects, at level 0,
    /// over its lightest link (weights are the endpoint ids, smaller first).
    #[test]
    fn wakes_learns_weights_and_connects_on_the_lightest_link() {
        Probe::new(node(5, 3))
            .start(&[send(0, id(5)), send(1, id(5)), send(2, id(5))])
            .in_state("hello")
            .on(0, id(9), &[])
            .on(1, id(2), &[])
            .on(2, id(7), &[send(1, Msg::GhsConnect { level: 0 })])
            .in_state("found");
    }

    /// Two level-0 fragments connecting over the same link merge: each answers the other's Connect with
    /// Initiate at level 1 named after that link; a leaf then has no basic link and reports at once, its
    /// best id included.
    #[test]
    fn equal_levels_merge_and_a_leaf_reports() {
        Probe::new(node(5, 1))
            .start(&[send(0, id(5))])
            .on(0, id(2), &[send(0, Msg::GhsConnect { level: 0 })])
            .on(0, Msg::GhsConnect { level: 0 }, &[send(0, initiate(1, (2, 5), true))])
            .on(0, initiate(1, (2, 5), true), &[send(0, report((0, 0), 5))])
            .in_state("found")
            .on(0, report((0, 0), 2), &[decide(Role::Leader, 5)]);
    }

    /// A Test from a fragment of a higher level waits in the queue until this node reaches that level;
    /// a Test with another fragment's name is accepted, one with the own name rejected.
    #[test]
    fn tests_wait_for_the_level_then_accept_or_reject() {
        let mut p = Probe::new(node(5, 2))
            .start(&[send(0, id(5)), send(1, id(5))])
            .on(0, id(2), &[])
            .on(1, id(8), &[send(0, Msg::GhsConnect { level: 0 })])
            .on(1, Msg::GhsTest { level: 1, core_lo: 8, core_hi: 9 }, &[]);
        assert_eq!(p.node.held(), 1);
        p = p.on(0, Msg::GhsConnect { level: 0 }, &[send(0, initiate(1, (2, 5), true))]);
        p = p.on(
            0,
            initiate(1, (2, 5), true),
            &[send(1, Msg::GhsTest { level: 1, core_lo: 2, core_hi: 5 }), send(1, Msg::GhsAccept)],
        );
        assert_eq!(p.node.held(), 0);
        p.on(1, Msg::GhsAccept, &[send(0, report((5, 8), 5))]);
        Probe::new(node(5, 2))
            .start(&[send(0, id(5)), send(1, id(5))])
            .on(0, id(2), &[])
            .on(1, id(8), &[send(0, Msg::GhsConnect { level: 0 })])
            .on(0, Msg::GhsConnect { level: 0 }, &[send(0, initiate(1, (2, 5), true))])
            .on(0, initiate(1, (2, 5), true), &[send(1, Msg::GhsTest { level: 1, core_lo: 2, core_hi: 5 })])
            .on(1, Msg::GhsTest { level: 1, core_lo: 2, core_hi: 5 }, &[send(0, report((0, 0), 5))]);
    }

    /// Messages no run produces are refused, never a panic: an Accept without a test, an Initiate on a
    /// basic link, a Report from outside the tree, a second id, a bad port, a foreign kind.
    #[test]
    fn impossible_messages_are_errors() {
        let mut p = Probe::new(node(5, 2)).start(&[send(0, id(5)), send(1, id(5))]).on(0, id(2), &[]);
        p.refuses(0, id(3));
        p.refuses(2, id(3));
        p.refuses(0, Msg::Wakeup);
        let mut p = p.on(1, id(8), &[send(0, Msg::GhsConnect { level: 0 })]);
        p.refuses(1, Msg::GhsAccept);
        p.refuses(1, initiate(1, (1, 2), true));
        p.refuses(1, report((0, 0), 3));
        p.refuses(1, Msg::Notify { leader: 9 });
    }

    /// The runs of `ids` on `topo` under `rule` ([`all_then_one`]): GHS's part (all but the id
    /// exchange and the notifications) within 5n⌊log2 n⌋ + 2m, and exactly n − 2 notifications.
    fn check(topo: &Topology, ids: &[u64], cfgs: &[SimConfig], rule: Rule) {
        let n = topo.len() as u64;
        let m = topo.edge_count() as u64;
        all_then_one(catalogue::find("ghs").unwrap(), topo, ids, rule, cfgs, |r| {
            let ghs = r.counters.messages - 2 * m - r.counters.notification_messages;
            assert!(ghs <= 5 * n * floor_log2(n) + 2 * m, "GHS part {ghs} on {ids:?}");
            assert_eq!(r.counters.notification_messages, n - 2, "{ids:?}");
        });
    }

    /// Every arrangement of ids on small graphs (a triangle with a tail, a 4-cycle with a chord, a
    /// 5-cycle, K4, a 6-node graph of two linked triangles), FIFO random and unit delays, all or one
    /// initiator: the best id leads, n − 2 notifications, GHS's part within 5n⌊log2 n⌋ + 2m.
    #[test]
    fn every_arrangement_of_small_graphs_within_the_bound() {
        let cfgs =
            [SimConfig { seed: 3, ..SimConfig::default() }, SimConfig { unit_delay: true, ..SimConfig::default() }];
        small_graph_arrangements(|topo, ids| check(topo, ids, &cfgs, Rule::Max));
        let k4 = Topology::graph(4, &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]).unwrap();
        check(&k4, &[3, 1, 4, 2], &cfgs, Rule::Min);
    }

    /// Random connected graphs from seeds (n = 5..38): the best id leads within the bound.
    #[test]
    fn random_graphs_within_the_bound() {
        let cfgs = [
            SimConfig { seed: 1, ..SimConfig::default() },
            SimConfig { seed: 2, max_delay: 64, ..SimConfig::default() },
        ];
        for (topo, ids) in random_graphs() {
            check(&topo, &ids, &cfgs, Rule::Max);
        }
    }

    /// A forged level (u32::MAX on Initiate, then on Connect, over a link the peer made a branch)
    /// is refused as implausible; before the fix the merge's `level + 1` overflowed.
    #[test]
    fn a_forged_level_is_refused() {
        use crate::algo::harness::Feeder;
        let (node, ports) = crate::algo::harness::node(&SPEC, 2, false).unwrap();
        let mut f = Feeder::new(node, ports);
        f.start();
        let _ = f.message(0, Msg::Election { id: 2, stage: 0, hops: 0 });
        let forged = [
            Msg::GhsInitiate { level: u32::MAX, core_lo: 1, core_hi: 2, find: false },
            Msg::GhsConnect { level: u32::MAX },
            Msg::GhsTest { level: MAX_LEVEL + 1, core_lo: 1, core_hi: 2 },
        ];
        for msg in forged {
            let r = f.message(0, msg);
            assert!(matches!(r, Err(AlgoError::Implausible { field: "level", .. })), "{msg:?}: {r:?}");
        }
    }
}
