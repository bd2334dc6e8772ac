//! What a step does ([`ElectionModel::next_state`]): a start, a delivery, a
//! timer's firing, an operation reaching the store or its answer the node, a
//! tick, a crash or recovery, a lost or duplicated message (or store
//! operation or answer), a partition or its heal; what a node's step puts
//! out (sends, timers, store operations, leaderships); and where the
//! messages in flight lie on their links.

use ringleader_core::algo::{Msg, Port};
use ringleader_core::schedule::{Step, StoreItem};
use ringleader_core::shell::{Misstep, Output, Outputs};

use super::ElectionModel;
use super::state::{Flight, Pending, Sent, StoreFlight, System};

impl ElectionModel {
    /// The positions with a timer due (a bit each).
    pub(super) fn due(s: &System) -> u32 {
        s.timers.iter().filter(|t| t.left == 0).fold(0, |due, t| due | 1 << t.node)
    }

    /// Punctual timers, and a timer is due: the instant of a tick, at which
    /// no partition strikes or heals.
    pub(super) fn instant(&self, s: &System) -> bool {
        self.election.punctual_timers && Self::due(s) != 0
    }

    /// Is the link from `from` to `to` cut by the partition in force?
    pub(super) fn cut(s: &System, from: u32, to: u32) -> bool {
        s.cut != 0 && (s.cut >> from & 1) != (s.cut >> to & 1)
    }

    /// Carry out what position `p`'s step put in `out`: sends go on their
    /// links (or are lost, to a crashed node or across the partition),
    /// timers are scheduled; a misstep is the state's error.
    fn absorb(&self, s: &mut System, p: u32, out: &mut Outputs, log: &mut Option<&mut Vec<Sent>>) {
        let delay = self.election.delay_ms.max(1);
        for o in out.drain() {
            match o {
                Output::Send { port, msg } => {
                    if !self.is_kept() {
                        s.sent += 1;
                    }
                    let to = self.election.topology.ports(p)[port as usize].peer;
                    let across = Self::cut(s, p, to);
                    s.cut_sends |= across;
                    let lost = s.is_down(to) || across;
                    if let Some(log) = log {
                        log.push(Sent { from: p, port, msg, lost });
                    }
                    if lost {
                        continue;
                    }
                    self.push(s, Flight { link: self.link_base[p as usize] as u32 + port, msg, old: false });
                }
                Output::SetTimer { timer, after_ms, generation } => {
                    let after_ms = match self.election.clock {
                        Some(c) if c.position == p => ringleader_core::faults::at_rate(after_ms, c.rate),
                        _ => after_ms,
                    };
                    let left = after_ms.div_ceil(delay).min(u64::from(u32::MAX)) as u32;
                    s.timers.retain(|t| (t.node, t.timer) != (p, timer));
                    s.timers.push(Pending { node: p, timer, left, generation });
                    s.timers.sort_unstable();
                }
                Output::Lead(l) => {
                    let id = self.election.ids[p as usize];
                    if l.leader == Some(id)
                        && let Err(at) = s.led.binary_search(&(l.term, id))
                    {
                        s.led.insert(at, (l.term, id));
                    }
                }
                Output::Decided(_) | Output::BeliefEnded(_) => {}
                // A program's failure names its program, node and step already.
                Output::Misstep(Misstep::Failed { why }) => {
                    s.error.get_or_insert_with(|| why.to_string());
                }
                Output::Misstep(m) => {
                    s.error.get_or_insert_with(|| format!("position {p}: {m:?}"));
                }
                // On its way to the store, which lies beyond partitions (as the simulator's).
                Output::Store(op) => {
                    let f = StoreFlight { node: p, item: StoreItem::Op(op), old: false, answered: true };
                    Self::push_store(s, f);
                }
            }
        }
    }

    /// Does `step` name positions and ports this election has (a schedule
    /// from elsewhere may not)?
    fn names_what_exists(&self, step: Step) -> bool {
        let t = &self.election.topology;
        let link = |from: u32, port: Port| from < t.len() && (port as usize) < t.ports(from).len();
        match step {
            Step::Start(p)
            | Step::Crash(p)
            | Step::Recover(p)
            | Step::Fire { node: p, .. }
            | Step::Store { node: p, .. }
            | Step::StoreLost { node: p, .. } => p < t.len(),
            Step::Deliver { from, port, .. } | Step::Lose { from, port, .. } | Step::Duplicate { from, port, .. } => {
                link(from, port)
            }
            Step::Partition(side) => side >> t.len() == 0,
            Step::Tick(_) | Step::Heal => true,
        }
    }

    /// Take the message `msg` off the link of `from`'s port `port` (the copy
    /// sent before the last tick, if there is one: the other may wait).
    fn take(&self, s: &mut System, from: u32, port: Port, msg: Msg) -> Option<Flight> {
        let range = Self::link_range(s, self.link_base[from as usize] + port as usize);
        let start = range.start;
        let link = &s.links[range];
        let at = if self.fifo {
            (link.first()?.msg == msg).then_some(0)?
        } else {
            link.iter().position(|f| f.msg == msg && f.old).or_else(|| link.iter().position(|f| f.msg == msg))?
        };
        Some(s.links.remove(start + at))
    }

    /// Take `item` of `node` off its way to or from the store (the copy put
    /// on its way before the last tick, if there is one).
    fn take_store(s: &mut System, node: u32, item: StoreItem) -> Option<StoreFlight> {
        let mine = |f: &StoreFlight| (f.node, f.item) == (node, item);
        let at =
            s.store_flights.iter().position(|f| mine(f) && f.old).or_else(|| s.store_flights.iter().position(mine))?;
        Some(s.store_flights.remove(at))
    }

    /// Put `f` on its way to or from the store, in order.
    fn push_store(s: &mut System, f: StoreFlight) {
        let at = s.store_flights.partition_point(|g| *g < f);
        s.store_flights.insert(at, f);
    }

    /// Where the messages on link `l` are in [`System::links`].
    fn link_range(s: &System, l: usize) -> std::ops::Range<usize> {
        let l = l as u32;
        let start = s.links.partition_point(|f| f.link < l);
        start..start + s.links[start..].partition_point(|f| f.link == l)
    }

    /// The messages in flight on link `l`.
    pub(super) fn on_link(s: &System, l: usize) -> &[Flight] {
        &s.links[Self::link_range(s, l)]
    }

    /// Put `f` on its link: last on a FIFO link, in order otherwise.
    fn push(&self, s: &mut System, f: Flight) {
        let at =
            if self.fifo { s.links.partition_point(|g| g.link <= f.link) } else { s.links.partition_point(|g| *g < f) };
        s.links.insert(at, f);
    }

    /// The sending position of link `l`.
    pub(super) fn sender(&self, l: u32) -> u32 {
        (self.link_base.partition_point(|&b| b <= l as usize) - 1) as u32
    }

    /// The receiving position of link `l`.
    fn receiver(&self, l: u32) -> u32 {
        let from = self.sender(l);
        self.election.topology.ports(from)[l as usize - self.link_base[from as usize]].peer
    }

    /// The state `step` leads to from `last` (`None`: the step is not possible).
    pub fn next_state(&self, last: &System, step: Step) -> Option<System> {
        self.next_state_logged(last, step, None)
    }

    /// [`ElectionModel::next_state`], telling `log` every message sent.
    pub fn next_state_logged(&self, last: &System, step: Step, log: Option<&mut Vec<Sent>>) -> Option<System> {
        let mut s = last.clone();
        self.apply(&mut s, step, log)?;
        Some(s)
    }

    /// Take `step` in `s` (`None`: it is not possible; `s` is then spoilt).
    pub(super) fn apply(&self, s: &mut System, step: Step, mut log: Option<&mut Vec<Sent>>) -> Option<()> {
        if !self.names_what_exists(step) {
            return None;
        }
        let mut out = Outputs::default();
        let mut touched = None;
        let t = &self.election.topology;
        match step {
            Step::Start(p) => {
                s.unstarted.retain(|&q| q != p);
                s.nodes[p as usize].edit().start(&mut out);
                touched = Some(p);
                self.absorb(s, p, &mut out, &mut log);
            }
            Step::Deliver { from, port, msg } => {
                self.take(s, from, port, msg)?;
                let to = t.ports(from)[port as usize];
                touched = Some(to.peer);
                if let Err(e) = s.nodes[to.peer as usize].edit().message(to.remote_port, msg, &mut out) {
                    let ids = &self.election.ids;
                    s.error.get_or_insert_with(|| {
                        let (by, sender) = (ids[to.peer as usize], ids[from as usize]);
                        format!("id {by} refused {} from id {sender}: {e}", msg.in_words())
                    });
                }
                self.absorb(s, to.peer, &mut out, &mut log);
            }
            Step::Fire { node, timer } => {
                let at = s.timers.iter().position(|t| (t.node, t.timer) == (node, timer) && t.left == 0)?;
                let pending = s.timers.remove(at);
                s.nodes[node as usize].edit().timer(timer, pending.generation, &mut out);
                touched = Some(node);
                self.absorb(s, node, &mut out, &mut log);
            }
            Step::Tick(ticks) => {
                for f in &mut s.links {
                    f.old = true;
                }
                for f in &mut s.store_flights {
                    f.old = true;
                }
                s.store_flights.sort_unstable();
                for t in &mut s.timers {
                    t.left = t.left.saturating_sub(ticks);
                }
                if s.cut != 0 && s.heal_left != u32::MAX {
                    s.heal_left = s.heal_left.saturating_sub(ticks);
                }
                let bound = self.converge_ticks;
                s.since_fault = s.since_fault.and_then(|u| Some(u.saturating_add(ticks)).filter(|&u| u <= bound));
            }
            Step::Crash(p) => {
                s.used.crashes += 1;
                s.down |= 1 << p;
                let node = &mut s.nodes[p as usize];
                node.edit().forget(self.fresh[p as usize].clone());
                node.rehash();
                s.links.retain(|f| self.receiver(f.link) != p);
                // Its operations still reach the store; their answers, and
                // those on their way, reach no incarnation of it.
                s.store_flights.retain(|f| f.node != p || matches!(f.item, StoreItem::Op(_)));
                s.store_flights.iter_mut().filter(|f| f.node == p).for_each(|f| f.answered = false);
                s.store_flights.sort_unstable();
            }
            Step::Recover(p) => {
                s.down &= !(1 << p);
                s.nodes[p as usize].edit().restart(self.fresh[p as usize].clone(), &mut out);
                touched = Some(p);
                self.absorb(s, p, &mut out, &mut log);
            }
            Step::Lose { from, port, msg } => {
                s.used.losses += 1;
                if self.fifo {
                    // The last copy: the one just sent, where a loss strikes
                    // at its earliest (see "Faults at their earliest").
                    let range = Self::link_range(s, self.link_base[from as usize] + port as usize);
                    let at = s.links[range.clone()].iter().rposition(|f| f.msg == msg)?;
                    s.links.remove(range.start + at);
                } else {
                    self.take(s, from, port, msg)?;
                }
            }
            Step::Duplicate { from, port, msg } => {
                s.used.duplications += 1;
                self.push(s, Flight { link: self.link_base[from as usize] as u32 + port, msg, old: false });
            }
            Step::Partition(side) => {
                s.used.partitions += 1;
                s.cut = side;
                s.heal_left = self.heal_within.unwrap_or(u32::MAX);
                let cut = |f: &Flight| Self::cut(s, self.sender(f.link), self.receiver(f.link));
                let kept: Vec<Flight> = s.links.iter().filter(|f| !cut(f)).copied().collect();
                s.links = kept;
            }
            Step::Heal => (s.cut, s.heal_left) = (0, 0),
            Step::Store { node, item: StoreItem::Op(op) } => {
                let f = Self::take_store(s, node, StoreItem::Op(op))?;
                // Applied at once, as it arrives; the writer's clock stamps
                // nothing an algorithm reads (see [`System::store`]).
                let reply = s.apply_store(op);
                if f.answered {
                    let back = StoreFlight { node, item: StoreItem::Answer(reply), old: false, answered: true };
                    Self::push_store(s, back);
                }
            }
            Step::Store { node, item: item @ StoreItem::Answer(reply) } => {
                Self::take_store(s, node, item)?;
                s.nodes[node as usize].edit().store_reply(reply, &mut out);
                touched = Some(node);
                self.absorb(s, node, &mut out, &mut log);
            }
            Step::StoreLost { node, item } => {
                s.used.losses += 1;
                Self::take_store(s, node, item)?;
            }
        }
        // A timer a later set, a cancel or a crash made stale never fires:
        // forget it, then renumber the stamps (they only grow: two states
        // alike but for them are one).
        let nodes = &s.nodes;
        let down = s.down;
        s.timers.retain(|t| down >> t.node & 1 == 0 && nodes[t.node as usize].timer_due(t.timer, t.generation));
        s.timers.iter_mut().for_each(|t| t.generation = 0);
        // Only within a punctual instant (timers still due once the stale
        // ones are gone) is a cut-off send remembered.
        s.cut_sends &= s.cut != 0 && self.instant(s);
        // Only the node that stepped can have stamps above 0 (a crash forgets them).
        if let Some(p) = touched {
            let node = &mut s.nodes[p as usize];
            node.edit().restamp_timers();
            node.rehash();
        }
        if self.is_kept() && (step.is_fault() || s.cut != 0) {
            s.since_fault = Some(0);
        }
        Some(())
    }
}
