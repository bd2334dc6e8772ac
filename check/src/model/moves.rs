//! The moves of the explored graph ([`Move`]): the steps that may follow a
//! state, folded into moves (quiet heartbeats first, faults at their
//! earliest, partitions at their latest, heals at their earliest), a move
//! spelt out as steps and run, and the successors of a state, which the
//! explorer takes (see [`ElectionModel`], "Quiet heartbeats" and the
//! sections after it).

use ringleader_core::algo::Port;
use ringleader_core::schedule::{Step, StoreItem};

use super::ElectionModel;
use super::reductions::Quiet;
use super::state::{Sent, System};

/// One step of the explored graph: a [`Step`], after the quiet heartbeats
/// its node takes in first (see [`ElectionModel`], "Quiet heartbeats"), and
/// perhaps followed by a fault the step makes possible at its earliest (see
/// "Faults at their earliest"). [`ElectionModel::expand`] spells it out as
/// steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The step.
    pub step: Step,
    /// How many copies of each quiet heartbeat in the step's scope arrive
    /// first, two bits each in scope order (a tick's prelude is fixed: every
    /// quiet heartbeat that crossed a tick already).
    absorb: u32,
    /// After the step, lose a message: 0 none, k the k-th of
    /// [`ElectionModel::aftermath`]'s candidates.
    lose: u32,
    /// After the step (and the loss), crash a node: 0 none, k the k-th of
    /// [`ElectionModel::aftermath`]'s candidates.
    crash: u32,
    /// Before everything else, split the nodes: the side of a partition that
    /// strikes just before this move's step sends across it (0: none; see
    /// "Partitions at their latest").
    cut: u32,
    /// The quiet heartbeats delivered just before that partition, as
    /// `absorb` is for the step.
    cut_absorb: u32,
    /// After everything else, heal the partition in force (see "Heals at
    /// their earliest").
    heal: bool,
}

impl Move {
    /// `step`, with no prelude and no fault after it.
    pub fn bare(step: Step) -> Self {
        Move { step, absorb: 0, lose: 0, crash: 0, cut: 0, cut_absorb: 0, heal: false }
    }

    /// The partition this move starts with, as a move of its own.
    fn partition(&self) -> Move {
        Move { absorb: self.cut_absorb, ..Move::bare(Step::Partition(self.cut)) }
    }

    /// This move without the partition it starts with.
    fn after_partition(&self) -> Move {
        Move { cut: 0, cut_absorb: 0, ..*self }
    }
}

impl ElectionModel {
    /// A tick of `ticks` (fewer if a partition must heal sooner; none if it
    /// must heal now).
    fn tick(&self, s: &System, ticks: u32) -> Option<Step> {
        let left = if s.cut != 0 { s.heal_left } else { ticks };
        (left > 0).then(|| Step::Tick(ticks.min(left)))
    }

    /// The steps that can follow `s`, in a fixed order.
    pub fn actions(&self, s: &System, actions: &mut Vec<Step>) {
        if s.error.is_some() {
            return;
        }
        actions.extend(s.unstarted.iter().map(|&p| Step::Start(p)));
        actions.extend(s.timers.iter().filter(|t| t.left == 0).map(|t| Step::Fire { node: t.node, timer: t.timer }));
        let t = &self.election.topology;
        let mut old = false;
        let due = Self::due(s);
        for from in 0..t.len() {
            let base = self.link_base[from as usize];
            for (port, to) in t.ports(from).iter().enumerate() {
                let link = Self::on_link(s, base + port);
                old |= link.iter().any(|f| f.old);
                let port = port as Port;
                if s.unstarted.binary_search(&to.peer).is_ok() {
                    // An initiator wakes before any message reaches it.
                    continue;
                }
                // Punctual timers: a node whose timer is due takes no message
                // sent since it fell due.
                let punctual = self.election.punctual_timers && due >> to.peer & 1 == 1;
                if self.fifo {
                    if let Some(f) = link.first().filter(|f| f.old || !punctual) {
                        actions.push(Step::Deliver { from, port, msg: f.msg });
                    }
                } else {
                    // A multiset: each distinct message once.
                    let mut last = None;
                    for f in link {
                        if last != Some(f.msg) && (f.old || !punctual) {
                            actions.push(Step::Deliver { from, port, msg: f.msg });
                            last = Some(f.msg);
                        }
                    }
                }
            }
        }
        // What is on its way to or from the store: each distinct item once.
        // The store lies beyond partitions; an answer is its node's step
        // (with punctual timers, a node whose timer is due takes only what
        // was on its way before the tick).
        let mut last = None;
        for f in &s.store_flights {
            old |= f.old;
            let punctual = self.election.punctual_timers && due >> f.node & 1 == 1;
            if last != Some((f.node, f.item)) && (f.old || !punctual || matches!(f.item, StoreItem::Op(_))) {
                actions.push(Step::Store { node: f.node, item: f.item });
                last = Some((f.node, f.item));
            }
        }
        if s.unstarted.is_empty() && !old && !s.timers.is_empty() && s.timers.iter().all(|t| t.left > 0) {
            let idle = s.links.is_empty() && s.store_flights.is_empty();
            let ticks = if idle { s.timers.iter().map(|t| t.left).min().unwrap_or(1) } else { 1 };
            actions.extend(self.tick(s, ticks));
        }
        if !s.unstarted.is_empty() || !self.election.faults.any() {
            return;
        }
        let (budget, used) = (self.election.faults, s.used);
        let n = t.len();
        for p in 0..n {
            if s.is_down(p) {
                if budget.recover {
                    actions.push(Step::Recover(p));
                }
            } else if used.crashes < budget.crashes && s.down == 0 {
                actions.push(Step::Crash(p));
            }
        }
        let losses = used.losses < budget.losses;
        let dups = used.duplications < budget.duplications;
        if losses || dups {
            for from in 0..n {
                let base = self.link_base[from as usize];
                for port in 0..t.ports(from).len() {
                    let mut last = None;
                    for f in Self::on_link(s, base + port) {
                        if last != Some(f.msg) {
                            let (port, msg) = (port as Port, f.msg);
                            if losses {
                                actions.push(Step::Lose { from, port, msg });
                            }
                            if dups {
                                actions.push(Step::Duplicate { from, port, msg });
                            }
                            last = Some(f.msg);
                        }
                    }
                }
            }
            // Store operations and answers are lost as messages are (the
            // simulator loses them only to a node cut off from the store:
            // here one at a time), at any point.
            if losses {
                let mut last = None;
                for f in &s.store_flights {
                    if last != Some((f.node, f.item)) {
                        actions.push(Step::StoreLost { node: f.node, item: f.item });
                        last = Some((f.node, f.item));
                    }
                }
            }
        }
        if self.instant(s) {
            // Punctual timers fire at the tick's instant: a partition strikes
            // or heals before it or after them.
        } else if s.cut != 0 {
            actions.push(Step::Heal);
        } else if used.partitions < budget.partitions {
            // One side of each partition: the sides without position 0 (or
            // the one split checked).
            match self.split {
                Some(0) => {} // no split of these nodes
                Some(side) => actions.push(Step::Partition(side)),
                None => actions.extend((1..1u32 << (n - 1)).map(|side| Step::Partition(side << 1))),
            }
        }
    }

    /// The moves that can follow `s`, in a fixed order: [`Self::actions`]'s
    /// steps, each quiet heartbeat's delivery folded into the steps its
    /// receiver takes next (see "Quiet heartbeats").
    pub fn moves(&self, s: &System, moves: &mut Vec<Move>) {
        let mut steps = Vec::new();
        self.actions(s, &mut steps);
        if self.reduce {
            // Crashes and losses come after the steps that allow them first, a
            // heal after a step whose sends it cut off (a partition comes
            // before a step that sends across it: [`Self::successors_of`]).
            let heal = self.reduce_partitions();
            steps.retain(|step| !(matches!(step, Step::Crash(_) | Step::Lose { .. }) || heal && *step == Step::Heal));
        }
        let quiet = self.quiet(s);
        if quiet.is_empty() {
            moves.extend(steps.into_iter().map(Move::bare));
            return;
        }
        if self.fifo {
            // A FIFO link whose head is quiet: the message behind those
            // copies, which they must precede (see "FIFO links").
            let due = if self.election.punctual_timers { Self::due(s) } else { 0 };
            for q in &quiet {
                let link = Self::on_link(s, self.link_base[q.from as usize] + q.port as usize);
                if let Some(f) = link.get(q.copies as usize).filter(|f| f.old || due >> q.to & 1 == 0) {
                    steps.push(Step::Deliver { from: q.from, port: q.port, msg: f.msg });
                }
            }
        }
        let is_quiet = |from, port, msg| quiet.iter().any(|q| (q.from, q.port, q.msg) == (from, port, msg));
        for step in steps {
            match step {
                // A quiet heartbeat is no step of its own; a tick comes below.
                Step::Deliver { from, port, msg } if is_quiet(from, port, msg) => continue,
                Step::Tick(_) => continue,
                _ => {}
            }
            let scope = self.choices(s, step, &quiet);
            // Every count of copies of each within its range, in mixed radix.
            let span = |&(least, most): &(u32, u32)| (most + 1).saturating_sub(least);
            let combos: u32 = scope.iter().map(span).product();
            for mut k in 0..combos {
                let mut absorb = 0;
                for (g, range) in scope.iter().enumerate() {
                    absorb |= (range.0 + k % span(range)) << (2 * g);
                    k /= span(range);
                }
                moves.push(Move { absorb, ..Move::bare(step) });
            }
        }
        // A tick, once what is due is done: every message that crossed a
        // tick already is a quiet heartbeat, which arrives first.
        let old_quiet: u32 = quiet.iter().map(|q| q.old).sum();
        let old = s.links.iter().filter(|f| f.old).count() as u32;
        let store_old = s.store_flights.iter().any(|f| f.old);
        let due = s.timers.iter().any(|t| t.left == 0);
        if s.unstarted.is_empty() && !s.timers.is_empty() && !due && old == old_quiet && !store_old {
            let idle = s.links.len() as u32 == old_quiet && s.store_flights.is_empty();
            let ticks = if idle { s.timers.iter().map(|t| t.left).min().unwrap_or(1) } else { 1 };
            moves.extend(self.tick(s, ticks).map(Move::bare));
        }
    }

    /// The steps `mv` takes from `s`: its prelude of quiet heartbeats, its
    /// step, then the fault it chose to follow the step, if any.
    pub fn expand(&self, s: &System, mv: Move) -> Vec<Step> {
        if mv.cut != 0 {
            let mut steps = self.prelude(s, mv.partition());
            if let Some(split) = self.run(s, mv.partition(), None) {
                steps.extend(self.expand(&split, mv.after_partition()));
            }
            return steps;
        }
        let mut steps = self.prelude(s, mv);
        if mv.lose != 0 || mv.crash != 0 {
            let mut sent = Vec::new();
            if let Some(after) = self.run(s, mv, Some(&mut sent)) {
                steps.extend(self.chosen_faults(s, mv, &after, &sent));
            }
        }
        if mv.heal {
            steps.push(Step::Heal);
        }
        steps
    }

    /// The steps of `mv` up to its step: its prelude of quiet heartbeats,
    /// then its step.
    fn prelude(&self, s: &System, mv: Move) -> Vec<Step> {
        let mut steps = Vec::new();
        let quiet = self.quiet(s);
        let deliver = |q: &Quiet| Step::Deliver { from: q.from, port: q.port, msg: q.msg };
        if let Step::Tick(_) = mv.step {
            for q in &quiet {
                steps.extend(std::iter::repeat_n(deliver(q), q.old as usize));
            }
        } else if mv.absorb != 0 {
            for (g, q) in quiet.iter().filter(|q| self.in_scope(mv.step, q)).enumerate() {
                steps.extend(std::iter::repeat_n(deliver(q), (mv.absorb >> (2 * g) & 3) as usize));
            }
        }
        steps.push(mv.step);
        steps
    }

    /// The state after `mv`'s prelude and step (not the fault after it),
    /// telling `log` what the step sent.
    fn run(&self, last: &System, mv: Move, log: Option<&mut Vec<Sent>>) -> Option<System> {
        let mut s = last.clone();
        if mv.absorb == 0 && !matches!(mv.step, Step::Tick(_)) || !self.reduce {
            self.apply(&mut s, mv.step, log)?;
        } else {
            let steps = self.prelude(last, mv);
            let (&step, prelude) = steps.split_last()?;
            for &quiet in prelude {
                self.apply(&mut s, quiet, None)?;
            }
            self.apply(&mut s, step, log)?;
        }
        Some(s)
    }

    /// The position at the other end of `from`'s `port`.
    fn peer(&self, from: u32, port: Port) -> u32 {
        self.election.topology.ports(from)[port as usize].peer
    }

    /// The position whose state `step` changes, if it is a step of one node.
    pub(super) fn stepper(&self, step: Step) -> Option<u32> {
        match step {
            Step::Start(p)
            | Step::Recover(p)
            | Step::Fire { node: p, .. }
            | Step::Store { node: p, item: StoreItem::Answer(_) } => Some(p),
            Step::Deliver { from, port, .. } => Some(self.election.topology.ports(from)[port as usize].peer),
            _ => None,
        }
    }

    /// The faults `mv` chose to follow its step with, as steps.
    fn chosen_faults(&self, before: &System, mv: Move, after: &System, sent: &[Sent]) -> Vec<Step> {
        let (lose, crash) = self.aftermath(before, mv.step, after, sent);
        let pick = |from: &[Step], k: u32| (k as usize).checked_sub(1).and_then(|i| from.get(i).copied());
        pick(&lose, mv.lose).into_iter().chain(pick(&crash, mv.crash)).collect()
    }

    /// The state `mv` leads to from `last` (`None`: not possible).
    pub fn next_move(&self, last: &System, mv: Move) -> Option<System> {
        if mv.cut != 0 {
            let split = self.run(last, mv.partition(), None)?;
            return self.next_move(&split, mv.after_partition());
        }
        let mut sent = Vec::new();
        let mut s = self.run(last, mv, Some(&mut sent))?;
        let faults = self.chosen_faults(last, mv, &s, &sent);
        if faults.len() != usize::from(mv.lose != 0) + usize::from(mv.crash != 0) {
            return None;
        }
        for step in faults {
            self.apply(&mut s, step, None)?;
        }
        if mv.heal {
            self.apply(&mut s, Step::Heal, None)?;
        }
        Some(s)
    }

    /// Every move that can follow `s` and the state it leads to, in a fixed
    /// order ([`Self::moves`], each followed by the faults it may choose at
    /// their earliest): what the explorer takes from a state, and a
    /// schedule's move is an index into it.
    pub fn successors(&self, s: &System, out: &mut Vec<(Move, System)>) {
        let mut moves = Vec::new();
        self.moves(s, &mut moves);
        let mut sent = Vec::new();
        if let Some(first) = self.punctual_first(s) {
            // Its moves alone, when none changes what the properties read
            // (see "Punctual timers").
            let (mine, rest): (Vec<Move>, Vec<Move>) =
                moves.into_iter().partition(|mv| self.stepper(mv.step) == Some(first));
            let seen = s.observation();
            let (start, mut invisible) = (out.len(), true);
            for mv in mine {
                if self.successors_of(s, mv, &mut sent, out).is_some() {
                    invisible &= out.last().is_some_and(|(_, after)| after.observation() == seen);
                }
            }
            if invisible && out.len() > start {
                return;
            }
            moves = rest;
        }
        for mv in moves {
            self.successors_of(s, mv, &mut sent, out);
        }
    }

    /// Push the states `mv` leads to from `s` onto `out`: each fault it may
    /// end in first, then the bare move's; and, when it cut off a send
    /// across the partition in force, each of those again with the partition
    /// healed just after (see "Heals at their earliest"). `Some(true)`: the
    /// step sent across the partition in force; `None`: `mv` is not possible.
    /// With the reduction on, a partition is a move only as the start of the
    /// moves that follow it and send across it (or of a tick, see
    /// [`Self::partitions`]), or, healed at once, when it cuts off a message
    /// in flight (see "Partitions at their latest").
    fn successors_of(&self, s: &System, mv: Move, sent: &mut Vec<Sent>, out: &mut Vec<(Move, System)>) -> Option<bool> {
        if let (true, Step::Partition(side)) = (self.reduce_partitions(), mv.step) {
            return self.partitions(s, Move { cut: side, cut_absorb: mv.absorb, ..mv }, sent, out);
        }
        sent.clear();
        let after = self.run(s, mv, Some(sent))?;
        let across = s.cut != 0 && sent.iter().any(|x| x.lost && Self::cut(s, x.from, self.peer(x.from, x.port)));
        let (lose, crash) = self.aftermath(s, mv.step, &after, sent);
        // A heal, at the first point it may strike after a send it cut off.
        let cut_off = across || s.cut_sends;
        for l in 0..=lose.len() {
            for c in 0..=crash.len() {
                let mut next = after.clone();
                let faults = l.checked_sub(1).map(|i| lose[i]).into_iter().chain(c.checked_sub(1).map(|i| crash[i]));
                if !faults.map(|f| self.apply(&mut next, f, None)).all(|r| r.is_some()) {
                    continue;
                }
                let mv = Move { lose: l as u32, crash: c as u32, ..mv };
                if self.reduce_partitions() && cut_off && next.cut != 0 && !self.instant(&next) {
                    let mut healed = next.clone();
                    if self.apply(&mut healed, Step::Heal, None).is_some() {
                        out.push((Move { heal: true, ..mv }, healed));
                    }
                }
                if l != 0 || c != 0 {
                    out.push((mv, next));
                }
            }
        }
        out.push((mv, after));
        Some(across)
    }

    /// The moves that start with the partition `mv.cut` (after its prelude):
    /// healed at once, if it cut off a message in flight; every move after it
    /// whose step sends across it; and a tick, if the partition cut off a
    /// message in flight (which may not outlive the next tick) or, with
    /// punctual timers, if the tick makes a timer due (no partition strikes
    /// at that instant).
    fn partitions(&self, s: &System, mv: Move, sent: &mut Vec<Sent>, out: &mut Vec<(Move, System)>) -> Option<bool> {
        let split = self.run(s, mv.partition(), None)?;
        let absorbed: u32 = (0..16).map(|g| mv.cut_absorb >> (2 * g) & 3).sum();
        let cut_off = split.links.len() + (absorbed as usize) < s.links.len();
        if cut_off {
            let mut healed = split.clone();
            self.apply(&mut healed, Step::Heal, None)?;
            out.push((Move { heal: true, absorb: mv.cut_absorb, ..Move::bare(mv.step) }, healed));
        }
        let mut next = Vec::new();
        self.moves(&split, &mut next);
        let mut after = Vec::new();
        for m in next {
            after.clear();
            // A tick may not pass a message in flight for good, and no
            // partition strikes at the instant of a punctual timer: one that
            // cut a message off, or before a tick that makes a timer due,
            // strikes before that tick at the latest.
            let tick = matches!(m.step, Step::Tick(_))
                && (cut_off
                    || self.election.punctual_timers && self.run(&split, m, None).is_some_and(|t| self.instant(&t)));
            if self.successors_of(&split, m, sent, &mut after).is_some_and(|across| across || tick) {
                out.extend(after.drain(..).map(|(m, t)| (Move { cut: mv.cut, cut_absorb: mv.cut_absorb, ..m }, t)));
            }
        }
        Some(false)
    }
}
