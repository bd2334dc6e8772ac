//! # Mesh: corner election
//!
//! * Source: N. Santoro, *Design and Analysis of Distributed Algorithms*,
//!   Wiley 2007, ch. 3, "Election in Mesh Networks" (the slides' "Mesh"):
//!   wake-up, election among the four corners on the border, notification by
//!   flooding.
//! * Network: a rows × cols mesh (both at least 2), bidirectional links, each
//!   port labelled with its compass direction (the common sense of direction
//!   the border election uses); no FIFO needed. A node does not know n,
//!   rows or cols.
//! * Winner: the best of the four corners' ids under the rule (max by
//!   default); interior and border nodes never compete.
//! * Messages, with m = 2n − rows − cols links, border length
//!   B = 2(rows + cols) − 4 and k* nodes waking spontaneously: exactly
//!   (2m − n + k*) wake-ups + E border election messages + (2m − n + 1)
//!   notifications, where E depends on the corner ids only:
//!   3·L + 4·S ≤ E ≤ 6·L + 4·S with L = max(rows, cols) − 1, S =
//!   min(rows, cols) − 1 (see [`border_election_messages`]). With all k
//!   initiators awake before a message reaches them (k* = k) the worst case
//!   is 6n + k + 2·max(rows, cols) − 9 ≤ 7n + k − 9: O(n) for every shape.
//!   Ideal time O(rows + cols).
//!
//! **Wake-up.** An initiator sends `Wakeup` to every neighbour; a sleeping
//! node woken by any message on port p sends `Wakeup` to every port but p.
//! Every node wakes exactly once, so a spontaneous waker sends deg wake-ups
//! and every other node deg − 1: Σ deg − (n − k*) = 2m − n + k*, whatever
//! the schedule.
//!
//! **Border election (AsFar on the border ring).** A node with fewer than
//! four ports is on the border, which is a ring of B nodes. The compass
//! orients it clockwise: a border node's clockwise port is, by the first rule
//! that applies, East if it has no North port, South if it has no East port,
//! West if it has no South port, North if it has no West port; the
//! counter-clockwise port mirrors it (West if no North, South if no West,
//! East if no South, North if no East). On a 2 × k or k × 2 mesh every node
//! is on the border and the middle ones have a third port across to the
//! other row (column): a chord, which the rules never pick. A corner (two
//! ports) sends its id clockwise when it wakes; a border node relays border
//! messages clockwise; a corner forwards an id that beats its own and
//! swallows the others. Each corner's id therefore travels exactly to the
//! first corner clockwise with a better id: the count depends on the ids,
//! never on the schedule. The best corner's id alone comes back, after B
//! links: that corner decides it leads.
//!
//! **Notification by flooding.** The leader sends `Notify` on both its
//! ports; a node receiving its first `Notify` decides and forwards it on all
//! its other ports; later ones are checked and dropped. 2 + Σ_{v ≠ leader}
//! (deg v − 1) = 2m − n + 1 messages. Border relays keep relaying after they
//! decide, so ids still in flight finish their deterministic trip.
//!
//! Bound of the border election: let M be the best corner and x1, x2, x3 the
//! others clockwise from M, with sides s1 = M→x1, s2, s3, s4 = x3→M (the
//! sides alternate between cols − 1 and rows − 1, so s1 = s3, s2 = s4).
//! M's id crosses B links, x3's exactly s4, x2's s3 or s3 + s4, x1's s2, s2 +
//! s3 or s2 + s3 + s4. So E ≤ B + s2 + 2·s3 + 3·s4 = 4·s1 + 6·s2 ≤ 6L + 4S,
//! reached when the corners' ids decrease clockwise from M and M starts a
//! short side; and E ≥ B + s2 + s3 + s4 = 2B − s1 ≥ 3L + 4S, reached when
//! they increase clockwise towards M and M starts a long side.
//!
//! Correction to Santoro's slides: none of their steps is wrong, but they are
//! silent on three points this file settles: which ports form the border ring
//! (on 2 × k meshes some border nodes have a port that is not on it), which way
//! border messages go (the compass gives a common clockwise), and what the
//! corners run (AsFar, comparing with their own id so that the count does not
//! depend on the schedule). Their "if it is a square mesh" is not needed for
//! O(n): B ≤ n and m < 2n for every rows × cols with both at least 2.

use super::oneshot::{self, Ending, OneShotNode, Wake};
use crate::spec::{AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, Provision, mirror};
use super::{AlgoError, Compass, Decision, Msg, NodeContext, Outbox, Port, PortInfo, Role, Rule};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "mesh-corners",
    title: "Mesh: corner election",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 (Election in Mesh Networks)",
    description: "Wake-up flood, then AsFar among the four corners on the border ring, oriented clockwise \
                  by the compass labels (border nodes relay, a corner forwards only ids that beat its own); \
                  the corner whose id comes back leads and floods the notification.",
    topologies: &[TopologyKind::Mesh],
    assumptions: Assumptions { bidirectional: true, oriented: true, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::MeshCorners,
    bound_formula: "6n + k + 2max(rows, cols) - 9",
    bound: &|n, k| (6 * n + k + 2 * longest_side(n)).saturating_sub(9),
    timer_events: |_| 0,
    heap_bytes_per_position: 440,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(MeshCorners::new),
    extras: Extras {
        bound_on: Some(|n, m, k| (6 * n + k + 2 * longest_side_of(n, m)).saturating_sub(9)),
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "on every rows x cols shape, corner ids decreasing clockwise from a corner that starts a short side: \
                          6(max(rows,cols)-1) + 4(min(rows,cols)-1) border messages (6n + k + 2 max(rows,cols) - 9 in all)",
            ids: |n, r| mirror(worst_case_ids(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "on every rows x cols shape, corner ids increasing clockwise towards a corner that starts a long side: \
                          3(max(rows,cols)-1) + 4(min(rows,cols)-1) border messages",
            ids: |n, r| mirror(best_case_ids(n), n, r),
        }),
        ..Extras::NONE
    },
};

/// One node of the mesh corner election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeshCorners {
    id: u64,
    rule: Rule,
    ports: u32,
    /// Border port leading clockwise (`None` inside the mesh).
    cw: Option<Port>,
    /// Border port clockwise messages arrive on (`None` inside the mesh).
    ccw: Option<Port>,
    /// Two ports: a candidate.
    corner: bool,
    awake: bool,
    end: Ending,
}

/// The clockwise and counter-clockwise border ports of a node with these
/// ports (both `None` for an interior node; see the module header).
pub fn border_ports(info: &[PortInfo]) -> (Option<Port>, Option<Port>) {
    let find = |d: Compass| info.iter().position(|p| p.label == d).map(|p| p as Port);
    let (n, e, s, w) = (find(Compass::North), find(Compass::East), find(Compass::South), find(Compass::West));
    let cw = match (n, e, s, w) {
        (None, Some(e), _, _) => Some(e),
        (_, None, Some(s), _) => Some(s),
        (_, _, None, Some(w)) => Some(w),
        (Some(n), _, _, None) => Some(n),
        _ => None,
    };
    let ccw = match (n, e, s, w) {
        (None, _, _, Some(w)) => Some(w),
        (_, _, Some(s), None) => Some(s),
        (_, Some(e), None, _) => Some(e),
        (Some(n), None, _, _) => Some(n),
        _ => None,
    };
    (cw, ccw)
}

impl MeshCorners {
    /// A sleeping node; its place on the mesh comes from the compass labels
    /// of `c.port_info`.
    pub fn new(c: &NodeContext) -> Self {
        let (cw, ccw) = border_ports(c.port_info);
        MeshCorners {
            id: c.id,
            rule: c.rule,
            ports: c.ports,
            cw,
            ccw,
            corner: c.ports == 2 && cw.is_some(),
            awake: false,
            end: Ending::default(),
        }
    }

    fn decide(&mut self, role: Role, leader: u64, from: Option<Port>, out: &mut Outbox) {
        self.end.decide(role, leader, out);
        oneshot::send_all_but(self.ports, from, Msg::Notify { leader }, out);
    }

    fn on_election(&mut self, port: Port, id: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        let (Some(cw), Some(ccw)) = (self.cw, self.ccw) else {
            return Err(AlgoError::Invalid(format!("border message on port {port} of a node inside the mesh")));
        };
        if port != ccw {
            return Err(AlgoError::Invalid(format!(
                "border message on port {port}; clockwise messages arrive on port {ccw}"
            )));
        }
        if !self.awake {
            self.start(Some(port), out);
        }
        if !self.corner || self.rule.beats(id, self.id) {
            out.send(cw, Msg::Election { id, stage: 0, hops: 0 });
        } else if id == self.id {
            if self.end.decided() {
                return Err(AlgoError::Invalid(format!("id {id} came round the border twice")));
            }
            self.decide(Role::Leader, id, None, out);
        }
        // A corner swallows ids worse than its own.
        Ok(())
    }

    fn on_notify(&mut self, port: Port, leader: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        match self.end.decision() {
            Some(d) if d.leader == leader => Ok(()),
            Some(d) => Err(AlgoError::Invalid(format!("notified of leader {leader} after deciding for {}", d.leader))),
            None if leader == self.id => {
                Err(AlgoError::Invalid(format!("notified that this node ({leader}) leads, but its id never came back")))
            }
            None => {
                if !self.awake {
                    self.start(Some(port), out);
                }
                self.decide(Role::Follower, leader, Some(port), out);
                Ok(())
            }
        }
    }
}

impl OneShotNode for MeshCorners {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::OnWakeup;

    fn ports(&self) -> u32 {
        self.ports
    }

    fn status(&self) -> &'static str {
        match (self.awake, self.end.decision()) {
            (false, _) => "asleep",
            (true, None) if self.corner => "candidate",
            (true, None) => "awake",
            (_, Some(Decision { role: Role::Leader, .. })) => "leader",
            (_, Some(_)) => "follower",
        }
    }

    fn asleep(&self) -> bool {
        !self.awake
    }

    /// Flood the wake-up to every neighbour but the one it came from; a
    /// corner then enters its id.
    fn start(&mut self, woken_by: Option<Port>, out: &mut Outbox) {
        self.awake = true;
        oneshot::send_all_but(self.ports, woken_by, Msg::Wakeup, out);
        if self.corner
            && let Some(cw) = self.cw
        {
            out.send(cw, Msg::Election { id: self.id, stage: 0, hops: 0 });
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, .. } => self.on_election(port, id, out),
            Msg::Notify { leader } => self.on_notify(port, leader, out),
            _ => Err(Self::unexpected(msg)),
        }
    }
}

/// Positions of the corners of a rows × cols mesh in clockwise order from
/// the north-west one, and the length of the side that starts at each.
pub fn corners(rows: u32, cols: u32) -> [(u32, u64); 4] {
    let n = rows * cols;
    let (h, v) = (cols as u64 - 1, rows as u64 - 1);
    [(0, h), (cols - 1, v), (n - 1, h), (n - cols, v)]
}

/// Border election messages on a rows × cols mesh with these ids: each
/// corner's id crosses the links up to the first corner clockwise whose id
/// beats it (the whole border, 2(rows + cols) − 4 links, for the best one).
pub fn border_election_messages(rows: u32, cols: u32, ids: &[u64], rule: Rule) -> u64 {
    let c = corners(rows, cols);
    let id = |i: usize| ids[c[i % 4].0 as usize];
    (0..4)
        .map(|i| {
            let mut links = 0;
            for j in i..i + 4 {
                links += c[j % 4].1;
                if rule.beats(id(j + 1), id(i)) {
                    break;
                }
            }
            links
        })
        .sum()
}

/// Every message of an election on a rows × cols mesh with these ids when
/// `spontaneous` nodes wake by themselves (the initiators, when they wake
/// before any message reaches them): wake-ups, border election, notification.
pub fn message_count(rows: u32, cols: u32, ids: &[u64], spontaneous: u64, rule: Rule) -> u64 {
    let n = rows as u64 * cols as u64;
    let links = 2 * n - rows as u64 - cols as u64;
    (2 * links - n + spontaneous) + border_election_messages(rows, cols, ids, rule) + (2 * links - n + 1)
}

/// The longest side a mesh of n positions can have: n / p for the smallest
/// prime factor p of n (1 when n is prime and no mesh exists).
pub fn longest_side(n: u64) -> u64 {
    (2..).take_while(|d| d * d <= n).find(|d| n.is_multiple_of(*d)).map_or(1, |d| n / d)
}

/// The longest side of the rows × cols mesh with n positions and m links
/// (m = 2n − rows − cols, so rows + cols = 2n − m); [`longest_side`] when no
/// mesh has that many links.
pub fn longest_side_of(n: u64, m: u64) -> u64 {
    let sum = (2 * n).saturating_sub(m);
    (2..)
        .take_while(|d| d * d <= n)
        .find(|d| n.is_multiple_of(*d) && d + n / d == sum)
        .map_or_else(|| longest_side(n), |d| n / d)
}

/// Ids 1..=n (max rule) costing the most border election messages on
/// *every* rows × cols mesh of n positions: 6·L + 4·S (module header).
///
/// Positions 0 (north-west) and n − 1 (south-east) are corners of every
/// shape; the north-east corner cols − 1 (below n/2) and the south-west
/// corner n − cols (at least n/2) differ from shape to shape, so every shape
/// can get its own order. Wide shapes (rows ≤ cols) need ids decreasing
/// clockwise from the south-west corner (it starts a short side): SW > NW >
/// NE > SE; tall shapes from the north-west corner: NW > NE > SE > SW. Both
/// hold with: SW of wide shapes > NW > every NE > SE > SW of tall shapes >
/// every other position.
pub fn worst_case_ids(n: u32) -> Vec<u64> {
    if n < 4 {
        return (1..=n as u64).collect(); // no mesh
    }
    let shapes: Vec<(u32, u32)> = (2..=n / 2).filter(|c| n.is_multiple_of(*c)).map(|c| (n / c, c)).collect();
    let mut order: Vec<u32> = shapes.iter().filter(|(r, c)| r <= c).map(|(_, c)| n - c).collect();
    order.push(0);
    order.extend(shapes.iter().map(|(_, c)| c - 1));
    order.push(n - 1);
    order.extend(shapes.iter().filter(|(r, c)| r > c).map(|(_, c)| n - c));
    let mut ids = vec![0u64; n as usize];
    for (rank, &p) in order.iter().enumerate() {
        ids[p as usize] = (n as usize - rank) as u64;
    }
    let mut next = (n as usize - order.len()) as u64;
    for id in ids.iter_mut().filter(|id| **id == 0) {
        *id = next;
        next -= 1;
    }
    ids
}

/// Ids 1..=n (max rule) costing the fewest border election messages on
/// every mesh of n positions, 3·L + 4·S: the worst case reversed (each
/// shape's corner ids increase clockwise towards a corner starting a long
/// side).
pub fn best_case_ids(n: u32) -> Vec<u64> {
    worst_case_ids(n).into_iter().map(|v| n as u64 + 1 - v).collect()
}

#[cfg(test)]
mod tests {
    /// The longest side is recovered from n and the link count for every shape up to 12 × 12.
    #[test]
    fn longest_side_from_links() {
        for rows in 2..=12u64 {
            for cols in 2..=12u64 {
                let (n, m) = (rows * cols, rows * (cols - 1) + cols * (rows - 1));
                assert_eq!(super::longest_side_of(n, m), rows.max(cols), "{rows} x {cols}");
            }
        }
    }

    use super::*;
    use crate::algo::harness::Feed;
    use crate::algo::{Algorithm, Effect};
    use crate::topology::Topology;
    use Compass::{East, North, South, West};

    /// Port infos with these compass labels (neighbour ids 100, 101, ...).
    fn labels(l: &[Compass]) -> Vec<PortInfo> {
        l.iter().enumerate().map(|(p, &label)| PortInfo { neighbour: 100 + p as u64, label }).collect()
    }

    /// The one way tests build a node: id, rule and its ports' compass labels.
    fn node(id: u64, rule: Rule, info: &[PortInfo]) -> MeshCorners {
        MeshCorners::new(&NodeContext {
            id,
            rule,
            n: 12,
            coin: 0,
            ports: info.len() as u32,
            port_info: info,
            options: Default::default(),
        })
    }

    fn election(id: u64) -> Msg {
        Msg::Election { id, stage: 0, hops: 0 }
    }

    /// On every shape from 2 × 2 to 9 × 9 (2 × k and k × 2 included), the clockwise ports chain the border nodes
    /// (degree < 4) into one ring of 2(rows + cols) − 4 that never uses a chord, passing the corners in the order
    /// and at the distances `corners` gives; each clockwise message arrives on the receiver's counter-clockwise
    /// port, and interior nodes have neither.
    #[test]
    fn compass_rules_orient_the_border_ring() {
        for rows in 2..10 {
            for cols in 2..10 {
                let t = Topology::mesh(rows, cols).unwrap();
                let n = rows * cols;
                let info: Vec<Vec<PortInfo>> = (0..n)
                    .map(|v| t.ports(v).iter().map(|l| PortInfo { neighbour: l.peer as u64, label: l.label }).collect())
                    .collect();
                let border: Vec<u32> = (0..n).filter(|&v| t.ports(v).len() < 4).collect();
                assert_eq!(border.len() as u32, 2 * (rows + cols) - 4, "{rows} x {cols}");
                for v in 0..n {
                    let (cw, ccw) = border_ports(&info[v as usize]);
                    assert_eq!((cw.is_some(), ccw.is_some()), (border.contains(&v), border.contains(&v)));
                    if let (Some(cw), Some(ccw)) = (cw, ccw) {
                        let next = t.link(v, cw).unwrap().peer;
                        let prev = t.link(v, ccw).unwrap().peer;
                        assert_eq!(border_ports(&info[next as usize]).1, Some(t.link(v, cw).unwrap().remote_port));
                        assert!(border.contains(&next) && border.contains(&prev), "{rows} x {cols}: {v}");
                    }
                }
                // Walk clockwise from the north-west corner: one cycle through every border node.
                let (mut v, mut seen) = (0u32, Vec::new());
                loop {
                    seen.push(v);
                    v = t.link(v, border_ports(&info[v as usize]).0.unwrap()).unwrap().peer;
                    if v == 0 {
                        break;
                    }
                    assert!(seen.len() <= border.len(), "{rows} x {cols}: not a cycle");
                }
                // The corners come clockwise as `corners` lists them, each side as long as it says.
                let at: Vec<usize> =
                    corners(rows, cols).map(|(c, _)| seen.iter().position(|&v| v == c).unwrap()).to_vec();
                let sides: Vec<u64> =
                    (0..4).map(|i| ((at[(i + 1) % 4] + seen.len() - at[i]) % seen.len()) as u64).collect();
                assert_eq!(sides, corners(rows, cols).map(|(_, s)| s).to_vec(), "{rows} x {cols}");
                assert!(at.windows(2).all(|w| w[0] < w[1]), "{rows} x {cols}: clockwise order");
                seen.sort_unstable();
                assert_eq!(seen, border, "{rows} x {cols}");
            }
        }
    }

    /// A 2 × k middle node (E, S, W) sends clockwise East, takes border messages from the West, and refuses
    /// them on its chord to the other row.
    #[test]
    fn chord_of_a_two_row_mesh_is_not_on_the_border() {
        let info = labels(&[East, South, West]);
        assert_eq!(border_ports(&info), (Some(0), Some(2)));
        let mut a = node(5, Rule::Max, &info);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        out.clear();
        assert!(matches!(a.on_message(1, election(9), &mut out), Err(AlgoError::Invalid(_))));
        a.on_message(2, election(9), &mut out).unwrap();
        assert_eq!(out.effects(), &[Effect::Send { port: 0, msg: election(9) }]);
        // The bottom row's middle node (N, E, W) runs the other way: West, from the East.
        assert_eq!(border_ports(&labels(&[North, East, West])), (Some(2), Some(1)));
    }

    /// An initiating corner wakes both neighbours, then enters its id clockwise (the north-west corner: East).
    #[test]
    fn corner_wakes_neighbours_then_sends_its_id_clockwise() {
        let mut a = node(7, Rule::Max, &labels(&[East, South]));
        let mut out = Outbox::default();
        a.on_start(&mut out);
        assert_eq!(
            out.effects(),
            &[
                Effect::Send { port: 0, msg: Msg::Wakeup },
                Effect::Send { port: 1, msg: Msg::Wakeup },
                Effect::Send { port: 0, msg: election(7) },
            ]
        );
        out.clear();
        a.on_start(&mut out);
        a.on_message(1, Msg::Wakeup, &mut out).unwrap();
        assert!(out.effects().is_empty(), "wakes once");
    }

    /// A node woken by a wake-up forwards it to all its other neighbours only; an interior node sends nothing else.
    #[test]
    fn woken_node_forwards_the_wakeup_to_its_other_neighbours() {
        let mut a = node(3, Rule::Max, &labels(&[North, East, South, West]));
        let mut out = Outbox::default();
        a.on_message(2, Msg::Wakeup, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[0, 1, 3].map(|port| Effect::Send { port, msg: Msg::Wakeup }),
            "north, east, west; not back south"
        );
        assert_eq!(a.state(), "awake");
    }

    /// A corner forwards a better id, swallows a worse one, and leads when its own id comes back, notifying both
    /// neighbours; under the min rule the comparisons turn round.
    #[test]
    fn corner_runs_as_far_on_the_border() {
        // South-east corner (N, W): clockwise is West, clockwise messages arrive from the North.
        let info = labels(&[North, West]);
        for (rule, better, worse) in [(Rule::Max, 9, 2), (Rule::Min, 2, 9)] {
            let mut a = node(5, rule, &info);
            let mut out = Outbox::default();
            a.on_start(&mut out);
            out.clear();
            a.on_message(0, election(worse), &mut out).unwrap();
            assert!(out.effects().is_empty(), "{rule:?}: a worse id is swallowed");
            a.on_message(0, election(better), &mut out).unwrap();
            assert_eq!(out.effects(), &[Effect::Send { port: 1, msg: election(better) }], "{rule:?}");
            out.clear();
            a.on_message(0, election(5), &mut out).unwrap();
            assert_eq!(
                out.effects(),
                &[
                    Effect::Decide(Decision { role: Role::Leader, leader: 5 }),
                    Effect::Send { port: 0, msg: Msg::Notify { leader: 5 } },
                    Effect::Send { port: 1, msg: Msg::Notify { leader: 5 } },
                ]
            );
            assert_eq!(a.state(), "leader");
            out.clear();
            a.on_message(1, Msg::Notify { leader: 5 }, &mut out).unwrap();
            assert!(out.effects().is_empty(), "its own notification coming back is dropped");
            assert!(a.on_message(0, election(5), &mut out).is_err(), "own id twice");
        }
    }

    /// A border node that never woke and gets a border message first (links need not be FIFO) wakes its other
    /// neighbours, then relays; a notification does the same, decides, and is forwarded to all other ports once.
    #[test]
    fn any_first_message_wakes_a_node() {
        // North-side node (E, S, W).
        let info = labels(&[East, South, West]);
        let mut a = node(4, Rule::Max, &info);
        let mut out = Outbox::default();
        a.on_message(2, election(8), &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[
                Effect::Send { port: 0, msg: Msg::Wakeup },
                Effect::Send { port: 1, msg: Msg::Wakeup },
                Effect::Send { port: 0, msg: election(8) },
            ]
        );
        let mut b = node(4, Rule::Max, &info);
        out.clear();
        b.on_message(1, Msg::Notify { leader: 8 }, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[
                Effect::Send { port: 0, msg: Msg::Wakeup },
                Effect::Send { port: 2, msg: Msg::Wakeup },
                Effect::Decide(Decision { role: Role::Follower, leader: 8 }),
                Effect::Send { port: 0, msg: Msg::Notify { leader: 8 } },
                Effect::Send { port: 2, msg: Msg::Notify { leader: 8 } },
            ]
        );
        out.clear();
        b.on_message(0, Msg::Notify { leader: 8 }, &mut out).unwrap();
        b.on_message(2, election(3), &mut out).unwrap();
        assert_eq!(out.effects(), &[Effect::Send { port: 0, msg: election(3) }], "decided nodes still relay");
    }

    /// Messages that cannot happen are errors, never panics: bad ports, foreign kinds, border messages inside the
    /// mesh or against the clockwise direction, conflicting notifications, and a notification naming this node.
    #[test]
    fn impossible_messages_are_errors() {
        let mut inner = node(1, Rule::Max, &labels(&[North, East, South, West]));
        let mut out = Outbox::default();
        assert_eq!(inner.on_message(4, Msg::Wakeup, &mut out), Err(AlgoError::BadPort { port: 4 }));
        assert!(matches!(inner.on_message(0, election(3), &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(
            inner.on_message(0, Msg::Saturate { id: 3 }, &mut out),
            Err(AlgoError::UnexpectedKind { .. })
        ));
        assert!(matches!(inner.on_message(0, Msg::Notify { leader: 1 }, &mut out), Err(AlgoError::Invalid(_))));
        inner.on_message(0, Msg::Notify { leader: 9 }, &mut out).unwrap();
        assert!(matches!(inner.on_message(1, Msg::Notify { leader: 8 }, &mut out), Err(AlgoError::Invalid(_))));
        let mut corner = node(2, Rule::Max, &labels(&[East, South]));
        assert!(matches!(corner.on_message(0, election(3), &mut out), Err(AlgoError::Invalid(_))), "wrong way");
        // A hand-built context without compass labels leaves the node off the border: it refuses border messages.
        let mut blind = MeshCorners::new(&NodeContext { id: 1, ports: 2, ..Default::default() });
        assert!(blind.on_message(0, election(3), &mut out).is_err());
    }

    /// The count formulas: a 3 × 4 mesh has B = 10; the worst-case ids cost 6L + 4S = 26 on the border, the best
    /// 3L + 4S = 17, on both of its orientations and on 2 × 6 and 6 × 2; the longest side is n / smallest prime.
    #[test]
    fn count_formulas() {
        let worst = worst_case_ids(12);
        let best = best_case_ids(12);
        for (rows, cols) in [(3u32, 4u32), (4, 3), (2, 6), (6, 2)] {
            let (l, s) = (rows.max(cols) as u64 - 1, rows.min(cols) as u64 - 1);
            assert_eq!(border_election_messages(rows, cols, &worst, Rule::Max), 6 * l + 4 * s, "{rows} x {cols}");
            assert_eq!(border_election_messages(rows, cols, &best, Rule::Max), 3 * l + 4 * s, "{rows} x {cols}");
        }
        let mut sorted = worst.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=12).collect::<Vec<_>>());
        // 3 × 4: m = 17; all initiating: 34 wake-ups, 23 notifications.
        assert_eq!(message_count(3, 4, &worst, 12, Rule::Max), 34 + 26 + 23);
        assert_eq!([4, 6, 9, 12, 13, 25, 49, 4096].map(longest_side), [2, 3, 3, 6, 1, 5, 7, 2048]);
    }
}
