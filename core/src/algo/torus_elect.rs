//! # Torus election: marking territory on an oriented torus
//!
//! * Source: the idea is G. L. Peterson's, "Efficient algorithms for
//!   elections in meshes and complete networks", TR 140, University of
//!   Rochester, 1985, as N. Santoro, *Design and Analysis of Distributed
//!   Algorithms*, Wiley 2007, ch. 3 ("Election in Tori") teaches it: in
//!   stage i every candidate marks the border of a square of side d_i
//!   (growing geometrically); it survives if it closes the border, and
//!   candidates that survive a stage own disjoint squares, so few are left
//!   to pay for the next, larger one: Θ(n) messages in all. Marking alone
//!   does not give disjoint squares when the schedule is adversarial (a
//!   weaker candidate may close its border before a stronger one crosses
//!   it), so this file adds kills and verdicts that settle every crossing;
//!   the protocol and its count below are Ringleader's own, derived here.
//! * Network: an r × c torus (r, c ≥ 3) with its compass sense of direction
//!   (the [`TopologyKind::Torus`] overlay: ports labelled north, east,
//!   south, west, the same at every node). Bidirectional links, no FIFO
//!   needed. A node knows neither r, c nor n: the walks find them.
//! * Winner: the candidate that outlasts every stage; every node takes part
//!   (a sleeping node joins when a walk reaches it). Strength is (stage,
//!   id): a later stage beats an earlier one, the rule breaks ties. Which
//!   candidate outlasts the others depends on the schedule (a weaker id
//!   that got a stage further wins), so no id is expected to win.
//! * Messages: at most [`worst_count`] on every schedule, a sum over the
//!   stages derived below, Θ(n) on tori whose sides are within a constant
//!   factor of each other (174n at 4 × 4, tending to about 620n on square
//!   tori; what runs send is far
//!   less: see docs/algorithms.md). The notification is exactly n − 1.
//!
//! **Walks.** In stage i (from 0) a candidate's square has side d = 2^(i+1)
//! and L = d − 1 links a side. Its token (`TorusMark`) walks the border:
//! east L links, north L, west L, south L, home again after 4L links. The
//! step number says where the token is relative to its owner's corner, so
//! every node on the way learns the owner's displacement (x, y) and on
//! which sides of the square it lies: bottom (steps 0 to L), top (2L to
//! 3L), left (3L to 4L, and step 0).
//!
//! **Marks.** A node keeps the marks of the highest stage that passed it:
//! (stage, owner, sides, displacement). A token reaching a node where some
//! mark is stronger than its owner is *purged*: it walks the rest of its
//! border without looking, and its owner is beaten. Otherwise it drops the
//! marks of earlier stages, adds its own, and *kills* every weaker mark of
//! its stage whose sides cross its own: one on the left side and the other
//! on the bottom or top. A kill travels to the mark's owner by the
//! displacement (east, then north) and carries the way back.
//!
//! **Verdicts.** The owner of a killed mark answers with a `TorusVerdict`:
//! once its own stage is settled (its token home and every verdict in),
//! *beaten* if it went past the stage or was stopped by a later stage (the
//! killer gives up too), not beaten otherwise (the victim gives up).
//! A candidate whose token comes home unpurged, with no beaten verdict and
//! no kill received, survives: it starts the next stage, or, if its walk
//! passed its own corner both on the bottom and on the left side (L ≥ c and
//! L ≥ r: its square covers the torus), leads. From those passes it knows c
//! and r, and it notifies along its row and up every column: n − 1
//! `TorusNotify`. A notified candidate starts no further stage.
//!
//! **Why one leader, and disjoint squares.** Two squares of one size that
//! overlap have borders that cross where one's left side meets the other's
//! bottom or top (put A's corner at the origin and B's at (a, b) with
//! |a|, |b| ≤ L; for a ≥ 0 the point (a, L) or (a, 0) is on A's top or
//! bottom and B's left; for a < 0 swap them), and both tokens pass that
//! node. Whichever comes second is purged (the first is stronger) or kills
//! the first. The killed candidate either has not settled the stage, and
//! then gives up, or has gone past it, and then its verdict (passed on by
//! every candidate it beat that way) beats the killer. So of two survivors
//! of a stage the squares are disjoint, and a square that covers the torus
//! overlaps every other: at most one leader.
//!
//! **Why someone leads.** Every loss is caused by a candidate strictly
//! stronger at that moment (a stronger mark, a stronger killer, or one that
//! went past the stage), and strengths only grow. So the candidate whose
//! final strength is the greatest never loses; verdicts are only awaited
//! from weaker candidates of the same stage, so no wait is circular, and
//! every token comes home. It climbs until its square covers the torus.
//!
//! **The count, derived.** With N_i candidates in stage i and V_i the
//! victims one token can meet, a stage-i token costs 4L links and each of
//! its kills at most 2L links there and 2L back (displacements are at most
//! L a side). Survivors of stage i own disjoint squares of
//! min(d, c) · min(d, r) nodes, so N_(i+1) ≤ n / (min(d, c) · min(d, r)).
//! A victim's square (of the previous stage, side e = d_(i−1), 1 at stage
//! 0) has its corner within L of the killer's both ways, so the victims'
//! disjoint squares fit in a block of side 2L + e: V_i ≤ min(2L + e, c) ·
//! min(2L + e, r) / (min(e, c) · min(e, r)) − 1, and V_i ≤ N_i − 1. One
//! token kills one victim at most once per step it passes on the left side
//! where the victim's bottom or top passed, and once per step on its bottom
//! or top where the victim's left passed: at most 2(⌊L/r⌋ + 1) + 2(⌊L/c⌋ +
//! 1) kills per victim (4 when the square does not wrap). So
//!
//! M ≤ Σ_i N_i · 4L_i · (1 + V_i · (2(⌊L_i/r⌋ + 1) + 2(⌊L_i/c⌋ + 1))) + n − 1,
//!
//! over the stages up to the first with L ≥ max(r, c). On a square torus
//! N_i ≈ n/4^i, L_i ≈ 2^(i+1) and V_i ≤ 23, so the terms fall geometrically
//! and the sum is linear in n; [`worst_count`] computes it for r × c and
//! [`bound`] takes the largest over the shapes of n. A test runs random
//! arrangements and schedules on several shapes against it.

use super::oneshot::{Ending, OneShotNode, Wake};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, Role, Rule};
use crate::machine;
use crate::protocol::Compass;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, TORI};
#[cfg(doc)]
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "torus-elect",
    title: "Torus election by marking territory",
    source: "G. L. Peterson, Efficient algorithms for elections in meshes and complete networks, TR 140, \
             U. Rochester, 1985; N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 \
             (Election in Tori); kills and verdicts for asynchrony: Ringleader's own",
    description: "Each candidate walks the border of a square of side 2^(stage+1) with the compass labels, marking \
                  it; a stronger mark stops a walk, a walk that crosses a weaker same-stage border kills its owner \
                  unless that one already went further. Survivors own disjoint squares, so few pay for the next, \
                  larger one: O(n) messages on a square torus. The square that covers the torus leads and \
                  notifies along its row and up every column.",
    topologies: TORI,
    assumptions: Assumptions { bidirectional: true, oriented: true, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::Survivor,
    bound_formula: "sum_i N_i·4L_i·(1 + V_i·(2(⌊L_i/r⌋ + 1) + 2(⌊L_i/c⌋ + 1))) + n - 1 (N_i candidates and V_i victims in stage i, L_i = 2^(i+1) - 1; the largest over the shapes of n, linear on square tori)",
    bound: &|n, _| bound(n),
    timer_events: |_| 0,
    heap_bytes_per_position: 547,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(TorusElect::new),
    extras: Extras::NONE,
};

/// The highest stage a walk may have: its square's side 2^(stage + 1) must
/// keep 4L within a `u32` step (a torus side up to 2^29 − 1 is reached
/// before).
pub const MAX_STAGE: u32 = 28;

/// L, the links along one side of a stage's square: 2^(stage + 1) − 1.
pub fn side(stage: u32) -> u32 {
    (2u32 << stage) - 1
}

/// The most messages any run sends on an r × c torus (the sum derived in
/// the module's header).
pub fn worst_count(rows: u64, cols: u64) -> u64 {
    let n = rows * cols;
    let mut total = n.saturating_sub(1);
    let mut in_stage = n;
    let mut prev = 1u64; // e: the side of the victims' previous squares
    for stage in 0..=MAX_STAGE {
        let l = u64::from(side(stage));
        let d = l + 1;
        let block = (2 * l + prev).min(cols) * (2 * l + prev).min(rows);
        let territory = prev.min(cols) * prev.min(rows);
        let victims = (block / territory).saturating_sub(1).min(in_stage.saturating_sub(1));
        let per_victim = 2 * (l / rows + 1) + 2 * (l / cols + 1);
        total = total.saturating_add(in_stage * 4 * l * (1 + victims * per_victim));
        if l >= rows.max(cols) {
            break;
        }
        in_stage = in_stage.min(n / (d.min(cols) * d.min(rows)));
        prev = d;
    }
    total
}

/// The bound for n positions: the largest [`worst_count`] over the tori of
/// n positions (rows and columns at least 3); 0 when n makes no torus.
pub fn bound(n: u64) -> u64 {
    (3..=n)
        .take_while(|r| r * r <= n)
        .filter(|r| n.is_multiple_of(*r) && n / r >= 3)
        .map(|r| worst_count(r, n / r).max(worst_count(n / r, r)))
        .max()
        .unwrap_or(0)
}

/// Side bits: where on its square a step lies.
const BOTTOM: u8 = 1;
const TOP: u8 = 2;
const LEFT: u8 = 4;

/// Where step `s` of a walk with sides of `l` links lies, from the corner.
fn at(l: u32, s: u32) -> (i32, i32) {
    let (l, s) = (l as i64, s as i64);
    let (x, y) = match s {
        s if s <= l => (s, 0),
        s if s <= 2 * l => (l, s - l),
        s if s <= 3 * l => (l - (s - 2 * l), l),
        s => (0, l - (s - 3 * l)),
    };
    // l < 2^29, so both fit.
    (x as i32, y as i32)
}

/// The sides step `s` lies on.
fn sides(l: u32, s: u32) -> u8 {
    let mut b = 0;
    if s <= l {
        b |= BOTTOM;
    }
    if (2 * l..=3 * l).contains(&s) {
        b |= TOP;
    }
    if s >= 3 * l || s == 0 {
        b |= LEFT;
    }
    b
}

/// Do two passes cross as the proof needs: one on a left side, the other on a bottom or top?
fn crossing(a: u8, b: u8) -> bool {
    (a & LEFT != 0 && b & (BOTTOM | TOP) != 0) || (b & LEFT != 0 && a & (BOTTOM | TOP) != 0)
}

/// The compass direction the walk leaves step `s` by.
fn heading(l: u32, s: u32) -> Compass {
    match s {
        s if s < l => Compass::East,
        s if s < 2 * l => Compass::North,
        s if s < 3 * l => Compass::West,
        _ => Compass::South,
    }
}

/// A mark a walk left here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Mark {
    stage: u32,
    owner: u64,
    /// Sides of the owner's square this node lies on (every pass so far).
    sides: u8,
    /// The owner's displacement to here, east and north, at its first pass.
    x: i32,
    y: i32,
}

/// A kill held until this candidate's stage is settled: the way back to the killer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Held {
    killer: u64,
    east: i32,
    north: i32,
}

/// A stage under way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Stage {
    stage: u32,
    /// The token came home.
    home: bool,
    purged: bool,
    beyond: bool,
    /// Kills the token sent (known once home) and verdicts received.
    kills: u32,
    verdicts: u32,
    /// A verdict said beaten.
    beaten: bool,
    /// Kills received, answered once the stage is settled.
    held: Vec<Held>,
    /// c and r, learnt when the walk passes the corner on the bottom / left side.
    cols: Option<u32>,
    rows: Option<u32>,
}

/// What a node is in the election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Part {
    Asleep,
    /// Walking `Stage` (or waiting for its verdicts).
    Running(Stage),
    /// Lost stage `stage`; `beyond`: because of a later stage (its verdicts say beaten).
    Beaten { stage: u32, beyond: bool },
    /// Won the last stage.
    Leading,
}

/// One node of the torus election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TorusElect {
    id: u64,
    rule: Rule,
    /// Ports towards north, east, south and west.
    compass: [Port; 4],
    /// The marks of the highest stage that passed here.
    marks: Vec<Mark>,
    part: Part,
    end: Ending,
}

fn index(c: Compass) -> usize {
    match c {
        Compass::North => 0,
        Compass::East => 1,
        Compass::South => 2,
        _ => 3,
    }
}

impl TorusElect {
    /// A sleeping node; its ports found by their compass labels (north,
    /// east, south, west in that order when the context gives no labels).
    pub fn new(c: &NodeContext) -> Self {
        let mut compass = [0, 1, 2, 3];
        for (p, info) in c.port_info.iter().enumerate() {
            if info.label != Compass::None {
                compass[index(info.label)] = p as Port;
            }
        }
        TorusElect { id: c.id, rule: c.rule, compass, marks: Vec::new(), part: Part::Asleep, end: Ending::default() }
    }

    fn port(&self, c: Compass) -> Port {
        self.compass[index(c)]
    }

    /// Is (stage a, owner a) stronger than (stage b, owner b)?
    fn stronger(&self, a: (u32, u64), b: (u32, u64)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 != b.1 && self.rule.beats(a.1, b.1))
    }

    /// Send a kill or verdict one link towards (east, north): the port and
    /// the rest of the way after it.
    fn toward(&self, east: i32, north: i32) -> (Port, i32, i32) {
        if east > 0 {
            (self.port(Compass::East), east - 1, north)
        } else if east < 0 {
            (self.port(Compass::West), east + 1, north)
        } else if north > 0 {
            (self.port(Compass::North), 0, north - 1)
        } else {
            (self.port(Compass::South), 0, north + 1)
        }
    }

    /// A token of (`owner`, `stage`) passes this node at `step` of its walk:
    /// purged by a stronger mark, or marking here and killing the weaker
    /// marks of its stage that it crosses (a kill for this node's own
    /// candidate is taken at once).
    fn visit(&mut self, owner: u64, stage: u32, step: u32, out: &mut Outbox) -> Result<Pass, AlgoError> {
        let l = side(stage);
        let mut stopped = None;
        for m in &self.marks {
            if self.stronger((m.stage, m.owner), (stage, owner)) {
                stopped = Some(stopped.unwrap_or(false) || m.stage > stage);
            }
        }
        if let Some(beyond) = stopped {
            return Ok(Pass::Purged { beyond });
        }
        if self.marks.first().is_some_and(|m| m.stage < stage) {
            self.marks.clear();
        }
        let (x, y) = at(l, step);
        let here = sides(l, step);
        let victims: Vec<Mark> =
            self.marks.iter().filter(|m| m.owner != owner && crossing(here, m.sides)).copied().collect();
        for v in &victims {
            let (back_east, back_north) = (v.x - x, v.y - y);
            if (v.x, v.y) == (0, 0) {
                self.take_kill(owner, v.owner, stage, back_east, back_north, out)?;
            } else {
                let (port, east, north) = self.toward(-v.x, -v.y);
                out.send(port, Msg::TorusKill { killer: owner, victim: v.owner, stage, east, north, back_east, back_north });
            }
        }
        match self.marks.iter_mut().find(|m| m.owner == owner) {
            Some(m) => m.sides |= here,
            None => self.marks.push(Mark { stage, owner, sides: here, x, y }),
        }
        Ok(Pass::Marked { kills: victims.len() as u32 })
    }

    /// Start stage `stage`: pass step 0 here, then send the token east.
    fn begin(&mut self, stage: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        if stage > MAX_STAGE {
            return Err(AlgoError::Invalid(format!("stage {stage} is past the last ({MAX_STAGE})")));
        }
        self.part = Part::Running(Stage {
            stage,
            home: false,
            purged: false,
            beyond: false,
            kills: 0,
            verdicts: 0,
            beaten: false,
            held: Vec::new(),
            cols: None,
            rows: None,
        });
        match self.visit(self.id, stage, 0, out)? {
            Pass::Purged { beyond } => {
                // Stopped at its own corner: nothing to walk.
                self.home(stage, 0, true, beyond, out)
            }
            Pass::Marked { kills } => {
                let east = self.port(Compass::East);
                out.send(east, Msg::TorusMark { id: self.id, stage, step: 1, kills, purged: false, beyond: false });
                Ok(())
            }
        }
    }

    /// The token of `stage` is home.
    fn home(&mut self, stage: u32, kills: u32, purged: bool, beyond: bool, out: &mut Outbox) -> Result<(), AlgoError> {
        match &mut self.part {
            Part::Running(st) if st.stage == stage && !st.home => {
                if st.verdicts > kills {
                    return Err(AlgoError::Invalid(format!("{} verdicts for {kills} kills", st.verdicts)));
                }
                st.home = true;
                st.kills = kills;
                st.purged = purged;
                st.beyond = beyond;
                self.settle(out)
            }
            _ => Err(AlgoError::Invalid(format!("a stage-{stage} token came home to {:?}", self.part))),
        }
    }

    /// Settle the stage once the token is home and every verdict in: lead,
    /// go on to the next stage, or lose and answer the kills held.
    fn settle(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        let Part::Running(st) = &self.part else { return Ok(()) };
        if !st.home || st.verdicts < st.kills {
            return Ok(());
        }
        let notified = self.end.decision().is_some();
        if !st.purged && !st.beaten && st.held.is_empty() && !notified {
            if let (Some(cols), Some(rows)) = (st.cols, st.rows) {
                self.part = Part::Leading;
                self.end.decide(Role::Leader, self.id, out);
                let leader = self.id;
                out.send(self.port(Compass::East), Msg::TorusNotify { leader, east: cols.saturating_sub(2), north: rows - 1 });
                out.send(self.port(Compass::North), Msg::TorusNotify { leader, east: 0, north: rows.saturating_sub(2) });
                return Ok(());
            }
            let next = st.stage + 1;
            return self.begin(next, out);
        }
        // Beaten by a later stage (or a leader already known): the killers give up too.
        let beyond = (st.purged && st.beyond) || st.beaten || notified;
        let (stage, held) = (st.stage, st.held.clone());
        for h in held {
            self.verdict(h, stage, beyond, out)?;
        }
        self.part = Part::Beaten { stage, beyond };
        Ok(())
    }

    /// Answer a kill of `stage` from `h.killer`.
    fn verdict(&self, h: Held, stage: u32, beaten: bool, out: &mut Outbox) -> Result<(), AlgoError> {
        if (h.east, h.north) == (0, 0) {
            return Err(AlgoError::Invalid(format!("a kill from {} with no way back", h.killer)));
        }
        let (port, east, north) = self.toward(h.east, h.north);
        out.send(port, Msg::TorusVerdict { killer: h.killer, stage, beaten, east, north });
        Ok(())
    }

    /// A kill of `stage` from `killer` reached its victim, this node.
    fn take_kill(
        &mut self,
        killer: u64,
        victim: u64,
        stage: u32,
        east: i32,
        north: i32,
        out: &mut Outbox,
    ) -> Result<(), AlgoError> {
        if victim != self.id || killer == self.id {
            return Err(AlgoError::Invalid(format!("a kill of {victim} by {killer} reached {}", self.id)));
        }
        let h = Held { killer, east, north };
        let beaten = match &mut self.part {
            Part::Running(st) if st.stage == stage => {
                st.held.push(h);
                return Ok(());
            }
            Part::Running(st) if st.stage > stage => true,
            Part::Beaten { stage: s, .. } if *s > stage => true,
            Part::Beaten { stage: s, beyond } if *s == stage => *beyond,
            Part::Leading => true,
            _ => return Err(AlgoError::Invalid(format!("a stage-{stage} kill reached {:?}", self.part))),
        };
        self.verdict(h, stage, beaten, out)
    }

    /// A verdict on one of this node's kills of `stage`.
    fn take_verdict(&mut self, stage: u32, beaten: bool, out: &mut Outbox) -> Result<(), AlgoError> {
        match &mut self.part {
            Part::Running(st) if st.stage == stage && (!st.home || st.verdicts < st.kills) => {
                st.verdicts = st.verdicts.saturating_add(1);
                st.beaten |= beaten;
                self.settle(out)
            }
            _ => Err(AlgoError::Invalid(format!("a stage-{stage} verdict reached {:?}", self.part))),
        }
    }

    fn on_mark(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::TorusMark { id, stage, step, mut kills, mut purged, mut beyond } = msg else {
            return Err(Self::unexpected(msg));
        };
        if stage > MAX_STAGE || step == 0 || step > 4 * side(stage) {
            return Err(AlgoError::Invalid(format!("{msg:?} is no step of a walk")));
        }
        let l = side(stage);
        let from = match heading(l, step - 1) {
            Compass::East => Compass::West,
            Compass::North => Compass::South,
            Compass::West => Compass::East,
            _ => Compass::North,
        };
        if port != self.port(from) {
            return Err(AlgoError::Invalid(format!("{msg:?} arrived from the wrong side")));
        }
        if step == 4 * l {
            if id != self.id {
                return Err(AlgoError::Invalid(format!("{id}'s walk ended at {}", self.id)));
            }
            return self.home(stage, kills, purged, beyond, out);
        }
        if id == self.id {
            // The walk passes its own corner: the square wraps round the torus.
            let Part::Running(st) = &mut self.part else {
                return Err(AlgoError::Invalid(format!("my walk of stage {stage} passed me in {:?}", self.part)));
            };
            if st.stage != stage || st.home {
                return Err(AlgoError::Invalid(format!("my walk of stage {stage} passed me in stage {}", st.stage)));
            }
            let (x, y) = at(l, step);
            if y == 0 && x > 0 {
                st.cols = Some(st.cols.map_or(x as u32, |c| c.min(x as u32)));
            }
            if x == 0 && y > 0 {
                st.rows = Some(st.rows.map_or(y as u32, |r| r.min(y as u32)));
            }
        }
        if !purged {
            match self.visit(id, stage, step, out)? {
                Pass::Purged { beyond: b } => {
                    purged = true;
                    beyond = b;
                }
                Pass::Marked { kills: k } => kills = kills.saturating_add(k),
            }
        }
        let next = self.port(heading(l, step));
        out.send(next, Msg::TorusMark { id, stage, step: step + 1, kills, purged, beyond });
        Ok(())
    }

    fn on_notify(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::TorusNotify { leader, east, north } = msg else { return Err(Self::unexpected(msg)) };
        let along_row = port == self.port(Compass::West);
        if self.end.decision().is_some() || leader == self.id || !(along_row || (port == self.port(Compass::South) && east == 0)) {
            return Err(AlgoError::Invalid(format!("{msg:?} on port {port} in {:?}", self.part)));
        }
        self.end.decide(Role::Follower, leader, out);
        if self.part == Part::Asleep {
            // Never woken: it never competes.
            self.part = Part::Beaten { stage: 0, beyond: true };
        }
        if east > 0 {
            out.send(self.port(Compass::East), Msg::TorusNotify { leader, east: east - 1, north });
        }
        if north > 0 {
            out.send(self.port(Compass::North), Msg::TorusNotify { leader, east: 0, north: north - 1 });
        }
        self.settle(out)
    }
}

/// What a token's pass at a node did.
enum Pass {
    Purged { beyond: bool },
    Marked { kills: u32 },
}

impl OneShotNode for TorusElect {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::InStep;

    fn ports(&self) -> u32 {
        4
    }

    fn status(&self) -> &'static str {
        match (&self.part, self.end.decision()) {
            (_, Some(d)) if d.role == Role::Leader => "leader",
            (_, Some(_)) => "follower",
            (Part::Asleep, None) => "asleep",
            (Part::Running(_), None) => "candidate",
            (_, None) => "defeated",
        }
    }

    fn held(&self) -> usize {
        match &self.part {
            Part::Running(st) => st.held.len(),
            _ => 0,
        }
    }

    /// Stage 0: walk the border of the 2 × 2 square.
    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        if self.part == Part::Asleep {
            // Stage 0 is below the last, and a fresh node's walk kills no one at its own corner.
            let _ = self.begin(0, out);
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        if self.part == Part::Asleep && !matches!(msg, Msg::TorusNotify { .. }) {
            self.begin(0, out)?;
        }
        match msg {
            Msg::TorusMark { .. } => self.on_mark(port, msg, out),
            Msg::TorusKill { killer, victim, stage, east, north, back_east, back_north } => {
                if (east, north) != (0, 0) {
                    let (p, e, n) = self.toward(east, north);
                    out.send(p, Msg::TorusKill { killer, victim, stage, east: e, north: n, back_east, back_north });
                    return Ok(());
                }
                self.take_kill(killer, victim, stage, back_east, back_north, out)
            }
            Msg::TorusVerdict { killer, stage, beaten, east, north } => {
                if (east, north) != (0, 0) {
                    let (p, e, n) = self.toward(east, north);
                    out.send(p, Msg::TorusVerdict { killer, stage, beaten, east: e, north: n });
                    return Ok(());
                }
                if killer != self.id {
                    return Err(AlgoError::Invalid(format!("{killer}'s verdict reached {}", self.id)));
                }
                self.take_verdict(stage, beaten, out)
            }
            Msg::TorusNotify { .. } => self.on_notify(port, msg, out),
            _ => Err(Self::unexpected(msg)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, send};

    /// Ports when the context gives no labels: north, east, south, west.
    const N: Port = 0;
    const E: Port = 1;
    const S: Port = 2;
    const W: Port = 3;

    fn node(id: u64) -> TorusElect {
        TorusElect::new(&NodeContext { id, rule: Rule::Max, n: 9, ports: 4, ..Default::default() })
    }

    fn mark(id: u64, stage: u32, step: u32, kills: u32) -> Msg {
        Msg::TorusMark { id, stage, step, kills, purged: false, beyond: false }
    }

    /// The walk's geometry: steps go east, north, west, south round a square of side L, and the sides a step
    /// lies on are the ones the crossing rule needs (the corner is on the bottom and the left).
    #[test]
    fn the_walk_goes_round_the_square() {
        let l = side(1);
        assert_eq!(l, 3);
        let path: Vec<(i32, i32)> = (0..=12).map(|s| at(l, s)).collect();
        assert_eq!(path[..5], [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1)]);
        assert_eq!(path[6..], [(3, 3), (2, 3), (1, 3), (0, 3), (0, 2), (0, 1), (0, 0)]);
        assert_eq!((sides(l, 0), sides(l, 3), sides(l, 7), sides(l, 10)), (BOTTOM | LEFT, BOTTOM, TOP, LEFT));
        assert_eq!([0, 2, 3, 5, 6, 8, 9, 11].map(|s| heading(l, s)), [
            Compass::East,
            Compass::East,
            Compass::North,
            Compass::North,
            Compass::West,
            Compass::West,
            Compass::South,
            Compass::South
        ]);
        assert!(crossing(LEFT, TOP) && crossing(BOTTOM, LEFT) && !crossing(BOTTOM, TOP) && !crossing(LEFT, LEFT));
    }

    /// A sleeping node reached by a stronger walk wakes, starts its own walk east, and the stronger walk,
    /// crossing its corner (bottom against left), kills it on the spot and goes on north; when the weaker
    /// walk comes home, the node is beaten and answers the kill: not beaten, the killer goes on.
    #[test]
    fn a_stronger_walk_kills_a_weaker_corner() {
        Probe::new(node(5))
            .on(W, mark(9, 0, 1, 0), &[send(E, mark(5, 0, 1, 0)), send(N, mark(9, 0, 2, 1))])
            .in_state("candidate")
            .on(N, mark(5, 0, 4, 0), &[send(W, Msg::TorusVerdict { killer: 9, stage: 0, beaten: false, east: 0, north: 0 })])
            .in_state("defeated");
    }

    /// A weaker walk reaching a stronger mark is purged: it walks on, marking nothing, and tells its owner.
    #[test]
    fn a_weaker_walk_is_purged() {
        let purged = Msg::TorusMark { id: 5, stage: 0, step: 2, kills: 0, purged: true, beyond: false };
        Probe::new(node(9)).on(W, mark(5, 0, 1, 0), &[send(E, mark(9, 0, 1, 0)), send(N, purged)]);
    }

    /// A candidate whose walk comes home clean goes on to the next stage (a square of side 4); a kill of the
    /// stage it has left gets a beaten verdict, sent back east.
    #[test]
    fn a_survivor_grows_and_beats_late_kills() {
        Probe::new(node(5))
            .start(&[send(E, mark(5, 0, 1, 0))])
            .on(N, mark(5, 0, 4, 0), &[send(E, mark(5, 1, 1, 0))])
            .on(
                S,
                Msg::TorusKill { killer: 9, victim: 5, stage: 0, east: 0, north: 0, back_east: 2, back_north: 0 },
                &[send(E, Msg::TorusVerdict { killer: 9, stage: 0, beaten: true, east: 1, north: 0 })],
            );
    }

    /// Kills and verdicts are relayed by their displacement, east or west first, then north or south.
    #[test]
    fn kills_and_verdicts_are_routed() {
        let kill = |east, north| Msg::TorusKill { killer: 9, victim: 7, stage: 1, east, north, back_east: 1, back_north: 1 };
        Probe::new(node(5))
            .start(&[send(E, mark(5, 0, 1, 0))])
            .on(E, kill(-2, 3), &[send(W, kill(-1, 3))])
            .on(E, kill(0, -2), &[send(S, kill(0, -1))]);
    }

    /// The notification follows the leader's row east and every column north: a node on the row passes it
    /// both ways, one on a column only north, the last one nowhere.
    #[test]
    fn notification_covers_the_torus_once() {
        let note = |east, north| Msg::TorusNotify { leader: 9, east, north };
        Probe::new(node(5)).on(W, note(2, 3), &[decide(Role::Follower, 9), send(E, note(1, 3)), send(N, note(0, 2))]).in_state("follower");
        Probe::new(node(5)).on(S, note(0, 1), &[decide(Role::Follower, 9), send(N, note(0, 0))]);
        Probe::new(node(5)).on(S, note(0, 0), &[decide(Role::Follower, 9)]);
    }

    /// Messages that cannot happen are refused: a walk arriving from the wrong side, a step 0 or past the
    /// walk's end, a stage past the last, another's walk ending here, a kill or verdict for someone else, a
    /// kill of a stage not reached, a notification from the north or a second one.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = Probe::new(node(5)).start(&[send(E, mark(5, 0, 1, 0))]);
        a.refuses(N, mark(9, 0, 1, 0));
        a.refuses(W, mark(9, 0, 0, 0));
        a.refuses(N, mark(9, 0, 5, 0));
        a.refuses(W, mark(9, MAX_STAGE + 1, 1, 0));
        a.refuses(N, mark(9, 0, 4, 0));
        a.refuses(W, Msg::TorusKill { killer: 9, victim: 6, stage: 0, east: 0, north: 0, back_east: 1, back_north: 0 });
        a.refuses(W, Msg::TorusKill { killer: 9, victim: 5, stage: 3, east: 0, north: 0, back_east: 1, back_north: 0 });
        a.refuses(W, Msg::TorusVerdict { killer: 6, stage: 0, beaten: true, east: 0, north: 0 });
        a.refuses(W, Msg::TorusVerdict { killer: 5, stage: 2, beaten: true, east: 0, north: 0 });
        a.refuses(N, Msg::TorusNotify { leader: 9, east: 0, north: 0 });
        a.refuses(S, Msg::TorusNotify { leader: 9, east: 1, north: 0 });
        a.refuses(W, Msg::Notify { leader: 9 });
        let mut b = Probe::new(node(5)).on(W, Msg::TorusNotify { leader: 9, east: 0, north: 0 }, &[decide(Role::Follower, 9)]);
        b.refuses(W, Msg::TorusNotify { leader: 9, east: 0, north: 0 });
    }
}
