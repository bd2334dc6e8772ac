//! The network: everything of a simulation but its nodes ([`Net`]): the
//! calendar queue and the timers, links and the faults they meet, the logs,
//! and the [`Sink`] the nodes' outputs go to.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::faults::{FaultState, Held};
use super::store::{StoreEv, StoreSim};
use super::{Ev, TimerEv};
use crate::faults::{self, LinkFate, Outage, Trigger};
use crate::protocol::{Msg, Port, Role, Rule};
use crate::report::LeadershipEvent;
use crate::shell::{Misstep, Output, Sink};
use crate::topology::Topology;

pub(super) const MAX_ERRORS: usize = 16;

/// Everything of a simulation but its nodes: the network and its clock,
/// the fault engine and the logs. It is the nodes' [`Sink`]: each output of
/// a shell is carried out as the shell produces it, in the step of the node
/// at `pos` at time `now`.
pub(super) struct Net<'a> {
    pub(super) topo: &'a Topology,
    pub(super) ids: &'a [u64],
    pub(super) rule: Rule,
    pub(super) seed: u64,
    /// Each position's algorithm options (none: empty).
    pub(super) options: Vec<Vec<(String, String)>>,
    /// The position whose step is under way ...
    pub(super) pos: u32,
    /// ... and the time of that step.
    pub(super) now: u64,
    pub(super) depth: Vec<u64>,
    /// Initiators whose start came before any message reached them.
    pub(super) spontaneous: Vec<u32>,
    /// Election and notification messages sent so far (for [`Trigger::Messages`]) ...
    pub(super) messages: u64,
    /// ... and by each position, across its incarnations.
    pub(super) sent: Vec<u64>,
    pub(super) link_last: Vec<u64>,
    pub(super) ideal_time: u64,
    pub(super) errors: Vec<String>,
    pub(super) leaderships: Vec<LeadershipEvent>,
    /// `Some` when message times are logged.
    pub(super) message_times: Option<Vec<u64>>,
    /// `Some` when arrows are logged.
    pub(super) arrows: Option<Vec<crate::diagram::Arrow>>,
    /// `Some` when arrows are logged: the nodes' states.
    pub(super) states: Option<crate::report::StateLog>,
    pub(super) rng: Pcg64Mcg,
    pub(super) fifo: bool,
    pub(super) unit_delay: bool,
    pub(super) max_delay: u64,
    /// Calendar queue: bucket `t % width` holds the events of time `t`.
    pub(super) buckets: Vec<Vec<Ev>>,
    pub(super) width: u64,
    pub(super) pending: u64,
    pub(super) timers: BinaryHeap<TimerEv>,
    pub(super) seq: u64,
    /// Some algorithm set a timer (delays may then explain a failure).
    pub(super) uses_timers: bool,
    /// Time of the last send, delivery, decision or leadership (faulty runs).
    pub(super) last_activity: u64,
    /// The plan is not empty: sends go through [`Driver::send_faulty`].
    pub(super) faulty: bool,
    pub(super) faults: FaultState,
    pub(super) store: StoreSim,
}

/// Remove the events for position `p` from `evs`; returns the deliveries removed.
pub(super) fn sweep(evs: &mut Vec<Ev>, p: u32) -> u64 {
    let mut lost = 0;
    evs.retain(|ev| match *ev {
        Ev::Deliver { to, .. } if to == p => {
            lost += 1;
            false
        }
        Ev::Start { to } => to != p,
        Ev::Deliver { .. } => true,
    });
    lost
}

impl Net<'_> {
    /// The step of position `pos` at time `now` begins.
    #[inline]
    pub(super) fn at(&mut self, pos: u32, now: u64) {
        (self.pos, self.now) = (pos, now);
    }

    /// Bring far deliveries that now fit into the calendar window.
    pub(super) fn bring_near(&mut self, now: u64) {
        while let Some(entry) = self.faults.far.first_entry() {
            if entry.key().saturating_sub(now) >= self.width {
                break;
            }
            let (time, evs) = entry.remove_entry();
            for ev in evs {
                self.schedule(time, ev);
            }
        }
    }

    /// Position `p` crashes at `now` (unless it is down already: then
    /// `false`): what travels to it is lost with it, and a start not yet
    /// taken.
    pub(super) fn crash(&mut self, now: u64, p: u32, what: &str) -> bool {
        if self.faults.down[p as usize] {
            self.faults.log.push(format!("{now}: {what}: position {p} is already down"));
            return false;
        }
        self.faults.down[p as usize] = true;
        self.store.incarnation[p as usize] += 1;
        self.faults.outages.push(Outage { position: p, crashed: now, recovered: None });
        self.faults.log.push(format!("{now}: {what}: position {p} crashed"));
        for b in &mut self.buckets {
            let before = b.len();
            self.faults.dropped_crashed += sweep(b, p);
            self.pending -= (before - b.len()) as u64;
        }
        for evs in self.faults.far.values_mut() {
            self.faults.dropped_crashed += sweep(evs, p);
        }
        self.faults.far.retain(|_, evs| !evs.is_empty());
        // A paused node's held input is lost with it.
        if let Some(held) = self.faults.held.get_mut(p as usize) {
            self.faults.dropped_crashed +=
                held.iter().filter(|h| matches!(h, Held::Ev(Ev::Deliver { .. }))).count() as u64;
            held.clear();
            self.faults.due[p as usize].clear();
        }
        true
    }

    pub(super) fn error(&mut self, e: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e);
        }
    }

    #[inline]
    pub(super) fn schedule(&mut self, time: u64, ev: Ev) {
        debug_assert!(self.width > 0);
        self.buckets[(time % self.width) as usize].push(ev);
        self.pending += 1;
    }

    /// Move the waiting faults whose trigger `fired` says has come into the
    /// plan, `at` after `now` and at the earliest at the next instant (this
    /// one is under way).
    pub(super) fn trigger(&mut self, now: u64, fired: impl Fn(Trigger) -> bool) {
        let f = &mut self.faults;
        let mut i = 0;
        while i < f.waiting.len() {
            let Some(t) = f.waiting[i].after.filter(|&t| fired(t)) else {
                i += 1;
                continue;
            };
            let mut s = f.waiting.remove(i);
            s.at = now.saturating_add(s.at.max(1));
            s.after = None;
            f.log.push(format!("{now}: {t}: a fault takes effect at {}", s.at));
            let at = s.at;
            let pos = f.next + f.plan[f.next..].partition_point(|p| p.at <= at);
            f.plan.insert(pos, s);
        }
    }

    /// Schedule `ev` at `time`, beyond the calendar window if need be.
    pub(super) fn schedule_from(&mut self, now: u64, time: u64, ev: Ev) {
        if time - now >= self.width {
            self.faults.far.entry(time).or_default().push(ev);
        } else {
            self.schedule(time, ev);
        }
    }

    /// Send `ev` from `from` (on `port`) to `to` through the faults in force;
    /// `time` is the scheduler's delivery time.
    pub(super) fn send_faulty(&mut self, from: u32, port: Port, to: u32, now: u64, mut time: u64, ev: Ev) {
        self.last_activity = now;
        let f = &mut self.faults;
        let Ev::Deliver { msg, .. } = ev else { return };
        let kind = msg.kind();
        // Every message sent counts towards nth selectors, whatever becomes of it.
        faults::count_all(&mut f.links, &from, &to, kind);
        if f.down[to as usize] {
            f.dropped_crashed += 1;
            self.arrow(from, to, msg, now, None, false);
            return;
        }
        if !f.group_of.is_empty() && f.group_of[from as usize] != f.group_of[to as usize] {
            f.dropped_partition += 1;
            self.arrow(from, to, msg, now, None, false);
            return;
        }
        let (mut duplicate, mut exempt, mut slow) = (false, false, false);
        match faults::decide(&mut f.links, &from, &to, kind) {
            None => {}
            Some(LinkFate::Drop) => {
                f.dropped_link += 1;
                self.arrow(from, to, msg, now, None, false);
                return;
            }
            Some(LinkFate::Send { extra_delay_ms, duplicate: twice, reorder }) => {
                if extra_delay_ms > 0 {
                    time = time.saturating_add(extra_delay_ms);
                    f.delayed += 1;
                    slow = true;
                }
                duplicate = twice;
                exempt = reorder && self.fifo;
            }
        }
        // Delays differ per message now, so FIFO needs the clamp even with unit delays.
        if exempt {
            f.reordered += 1;
        } else if self.fifo
            && let Some(i) = self.topo.link_index(from, port)
        {
            let slot = &mut self.link_last[i];
            time = time.max(*slot);
            *slot = time;
        }
        self.arrow(from, to, msg, now, Some(time), slow);
        self.schedule_from(now, time, ev);
        if duplicate {
            self.faults.duplicated += 1;
            self.arrow(from, to, msg, now, Some(time), slow);
            self.schedule_from(now, time, ev);
        }
    }

    /// Log a message for the diagram (heartbeats are left out); `slow`: a
    /// fault delayed it.
    #[inline]
    pub(super) fn arrow(&mut self, from: u32, to: u32, msg: Msg, sent: u64, received: Option<u64>, slow: bool) {
        if let Some(log) = &mut self.arrows
            && !msg.kind().is_heartbeat()
        {
            log.push(crate::diagram::Arrow {
                from,
                to,
                kind: msg.kind(),
                sent,
                received,
                msg: Some(msg),
                slow,
                in_flight: false,
            });
        }
    }
}

impl Net<'_> {
    /// A delay to or from the store: as a message's.
    pub(super) fn store_delay(&mut self) -> u64 {
        if self.unit_delay { 1 } else { self.rng.random_range(1..=self.max_delay) }
    }
}

impl Sink for Net<'_> {
    const CHECKS_LINKS: bool = true;

    /// Carry out an output of the step of `self.pos` at `self.now`.
    #[inline]
    fn output(&mut self, output: Output) {
        let (pos, now) = (self.pos, self.now);
        match output {
            Output::Send { port, msg } => {
                if !self.send(port, msg) {
                    self.error(format!("position {pos} {}", Misstep::NoLink { port, msg }));
                }
            }
            Output::Decided(d) => {
                self.last_activity = now;
                if d.role == Role::Leader && !self.faults.waiting.is_empty() {
                    self.trigger(now, |t| t == Trigger::LeaderElected);
                }
            }
            Output::Misstep(m) => {
                self.last_activity = now;
                self.error(format!("position {pos} {m}"));
            }
            Output::Lead(l) => {
                self.last_activity = now;
                self.leaderships.push(LeadershipEvent { time: now, position: pos, leadership: l });
                if l.leader == Some(self.ids[pos as usize]) && !self.faults.waiting.is_empty() {
                    self.trigger(now, |t| match t {
                        Trigger::LeaderElected => true,
                        Trigger::Term(term) => l.term >= term,
                        Trigger::Messages(_) => false,
                    });
                }
            }
            // The timeline holds what algorithms announce; a recovery is in the outages.
            Output::BeliefEnded(_) => {}
            Output::SetTimer { timer, after_ms, generation } => {
                self.uses_timers = true;
                self.seq += 1;
                let after_ms = match self.faults.clock.get(pos as usize) {
                    Some(&rate) => faults::at_rate(after_ms, rate),
                    None => after_ms,
                };
                self.timers.push(Reverse((now + after_ms.max(1), self.seq, pos, timer, generation)));
            }
            Output::Store(op) => {
                self.uses_timers = true;
                self.store.ops += 1;
                let delay = self.store_delay();
                let inc = self.store.incarnation[pos as usize];
                self.store.travel(pos, now, delay, StoreEv::Apply { from: pos, inc, op });
            }
        }
    }

    /// Send `msg` from the step's node on its `port`.
    #[inline]
    fn send(&mut self, port: Port, msg: Msg) -> bool {
        let (pos, now) = (self.pos, self.now);
        let Some(link) = self.topo.link(pos, port).copied().filter(|l| l.outgoing) else {
            return false;
        };
        if !msg.kind().is_heartbeat() {
            self.messages += 1;
            self.sent[pos as usize] += 1;
            if let Some(log) = &mut self.message_times {
                log.push(now);
            }
            if !self.faults.waiting.is_empty() {
                let sent = self.messages;
                self.trigger(now, |t| matches!(t, Trigger::Messages(k) if sent >= k));
            }
        }
        let depth = self.depth[pos as usize] + 1;
        self.ideal_time = self.ideal_time.max(depth);
        let mut time = if self.unit_delay { now + 1 } else { now + self.rng.random_range(1..=self.max_delay) };
        let ev = Ev::Deliver { to: link.peer, port: link.remote_port, depth, msg };
        if self.faulty {
            self.send_faulty(pos, port, link.peer, now, time, ev);
            return true;
        }
        if self.fifo && !self.unit_delay {
            let Some(i) = self.topo.link_index(pos, port) else { return true };
            let slot = &mut self.link_last[i];
            time = time.max(*slot);
            *slot = time;
        }
        self.arrow(pos, link.peer, msg, now, Some(time), false);
        self.schedule(time, ev);
        true
    }
}
