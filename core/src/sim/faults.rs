//! The fault engine: what the plan's faults did so far ([`FaultState`]), and
//! the driver's fault steps: faults due, pauses that end, crashes,
//! recoveries, and faults aimed at whoever leads.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::leader::{leader_fault_name, on_leader};
use super::{Driver, Ev};
use crate::faults::{self, Fault, LinkRule, Outage};
use crate::protocol::{Algorithm, Leadership, NodeContext, Options, Role, StoreReply, TimerId};
use crate::report::LeaderFault;

/// "1 message was" / "3 messages were".
pub(super) fn messages(n: u64) -> String {
    if n == 1 { "1 message was".into() } else { format!("{n} messages were") }
}

/// The faults of a run and what they did; consulted only when the plan is
/// not empty.
#[derive(Default)]
pub(super) struct FaultState {
    /// The plan, in time order (stable: plan order within one time); a
    /// triggered fault joins it when its event comes.
    pub(super) plan: Vec<crate::faults::Scheduled>,
    pub(super) next: usize,
    /// Faults waiting for their [`Trigger`], in plan order.
    pub(super) waiting: Vec<crate::faults::Scheduled>,
    pub(super) down: Vec<bool>,
    pub(super) outages: Vec<Outage>,
    /// Group of each position under the current partition; empty = none.
    pub(super) group_of: Vec<u32>,
    /// Every partition that took effect, the last one open while in force.
    pub(super) splits: Vec<crate::faults::Split>,
    /// Link faults in force, oldest first (the last match wins).
    pub(super) links: Vec<LinkRule<u32>>,
    /// Each position's clock rate ([`Fault::Clock`]); empty = every clock at 1.
    pub(super) clock: Vec<f64>,
    /// Each position's pause ([`Fault::Pause`]): when it ends (0: not
    /// paused); empty = nobody was paused.
    pub(super) paused: Vec<u64>,
    /// Per position, while paused: the timers that came due (deadline,
    /// order set, timer, generation) ...
    pub(super) due: Vec<Vec<(u64, u64, TimerId, u64)>>,
    /// ... and the input that reached it, in arrival order.
    pub(super) held: Vec<Vec<Held>>,
    pub(super) dropped_paused: u64,
    /// Every pause that took effect: (position, from, until), for the
    /// fencing model's writes.
    pub(super) pauses: Vec<(u32, u64, u64)>,
    /// Every fault aimed at whoever leads, with the leader it found.
    pub(super) leader_faults: Vec<LeaderFault>,
    /// Every end of a pause: (position, time, belief once its due timers fired).
    pub(super) resumes: Vec<(u32, u64, Leadership)>,
    /// Every [`Fault::Store`] that took effect: (time, position or every
    /// one, cut off, extra delay); writes to the fencing resource meet them too.
    pub(super) store_log: Vec<(u64, Option<u32>, bool, u64)>,
    /// Deliveries too far ahead for the calendar window, by time.
    pub(super) far: BTreeMap<u64, Vec<Ev>>,
    pub(super) dropped_crashed: u64,
    pub(super) dropped_partition: u64,
    pub(super) dropped_link: u64,
    pub(super) duplicated: u64,
    pub(super) delayed: u64,
    pub(super) reordered: u64,
    pub(super) log: Vec<String>,
}

/// Input a paused node holds.
#[derive(Clone, Copy, Debug)]
pub(super) enum Held {
    Ev(Ev),
    Store { inc: u32, reply: StoreReply },
}

impl FaultState {
    pub(super) fn dropped(&self) -> u64 {
        self.dropped_crashed + self.dropped_partition + self.dropped_link + self.dropped_paused
    }

    /// Is position `p` paused at `now`?
    #[inline]
    pub(super) fn is_paused(&self, p: u32, now: u64) -> bool {
        self.paused.get(p as usize).is_some_and(|&until| until > now)
    }

    /// Hold `input` for paused position `p` (or drop it beyond the bound).
    pub(super) fn hold(&mut self, p: u32, input: Held) {
        let held = &mut self.held[p as usize];
        if held.len() < faults::MAX_HELD {
            held.push(input);
        } else {
            self.dropped_paused += 1;
        }
    }

    /// The time of the next fault, pause end or far delivery.
    pub(super) fn next_time(&self) -> Option<u64> {
        let resume = self.paused.iter().copied().filter(|&t| t > 0).min();
        let fault = self.plan.get(self.next).map(|s| s.at);
        let fault = match (fault, resume) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let far = self.far.keys().next().copied();
        match (fault, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Why an election may have failed: the faults the algorithm cannot be
    /// asked to survive (see the module docs).
    pub(super) fn reasons(&self, assumes_fifo: bool, uses_timers: bool, name: &str) -> Vec<String> {
        let mut r = Vec::new();
        let dropped = self.dropped();
        if dropped > 0 {
            let parts: Vec<String> = [
                (self.dropped_crashed, "to crashed nodes"),
                (self.dropped_partition, "across the partition"),
                (self.dropped_link, "by lossy links"),
                (self.dropped_paused, "to paused nodes holding all they may"),
            ]
            .iter()
            .filter(|(c, _)| *c > 0)
            .map(|(c, why)| format!("{c} {why}"))
            .collect();
            r.push(format!("{} dropped by faults ({})", messages(dropped), parts.join(", ")));
        }
        for o in &self.outages {
            r.push(match o.recovered {
                Some(t) => format!("position {} crashed at {} and recovered at {t}", o.position, o.crashed),
                None => format!("position {} crashed at {}", o.position, o.crashed),
            });
        }
        if self.duplicated > 0 {
            r.push(format!("{} duplicated by faults", messages(self.duplicated)));
        }
        if self.reordered > 0 && assumes_fifo {
            r.push(format!("{} let out of FIFO order, which {name} assumes", messages(self.reordered)));
        }
        if self.delayed > 0 && uses_timers {
            r.push(format!("{} delayed by faults and {name} relies on timers", messages(self.delayed)));
        }
        r
    }
}

impl<'a, A: Algorithm> Driver<'a, A> {
    /// Apply the faults due at `now` and bring far deliveries into the window.
    pub(super) fn fault_step(&mut self, now: u64, make: &impl Fn(&NodeContext) -> A, end_time: &mut u64) {
        loop {
            let f = &mut self.net().faults;
            let Some(s) = f.plan.get(f.next).filter(|s| s.at <= now).cloned() else { break };
            f.next += 1;
            self.apply_fault(now, s, make, end_time);
        }
        let f = &self.net().faults;
        let ended: Vec<u32> =
            (0..f.paused.len() as u32).filter(|&p| f.paused[p as usize] > 0 && f.paused[p as usize] <= now).collect();
        for p in ended {
            self.resume(now, p);
            *end_time = now;
        }
        self.net().bring_near(now);
    }

    /// Position `p`'s pause ends at `now`: the timers that came due fire, in
    /// deadline order, then the held input is handed over in arrival order.
    pub(super) fn resume(&mut self, now: u64, p: u32) {
        let i = p as usize;
        let f = &mut self.net().faults;
        f.paused[i] = 0;
        let mut due = std::mem::take(&mut f.due[i]);
        let held = std::mem::take(&mut f.held[i]);
        due.sort_unstable_by_key(|&(t, seq, ..)| (t, seq));
        f.log.push(format!("{now}: position {p} resumes: {} timer(s) due, {} input(s) held", due.len(), held.len()));
        for (_, _, timer, generation) in due {
            if self.shells[i].timer_due(timer, generation) {
                self.net().at(p, now);
                self.shells[i].timer(&mut self.algos[i], timer, generation, &mut self.io);
                self.note_state(i, now);
            }
        }
        if let Some(belief) = self.shells[i].leadership().filter(|_| !self.net().faults.down[i]) {
            self.net().faults.resumes.push((p, now, belief));
        }
        for h in held {
            match h {
                Held::Ev(ev) => self.handle::<true>(ev, now),
                Held::Store { inc, reply } => {
                    let net = self.net();
                    if net.faults.down[i] || net.store.incarnation[i] != inc || net.store.cut[i] {
                        net.store.lost += 1;
                        continue;
                    }
                    net.at(p, now);
                    self.shells[i].store_reply(&mut self.algos[i], reply, &mut self.io);
                    self.note_state(i, now);
                }
            }
        }
    }

    pub(super) fn apply_fault(
        &mut self,
        now: u64,
        s: crate::faults::Scheduled,
        make: &impl Fn(&NodeContext) -> A,
        end_time: &mut u64,
    ) {
        let net = self.io.sink_mut();
        match s.fault {
            Fault::Crash { node } => self.crash(now, node, "crash"),
            Fault::CrashLeader
            | Fault::LeaveLeader
            | Fault::CutOffLeader
            | Fault::LeaderClock { .. }
            | Fault::PauseLeader { .. } => self.leader_fault(now, s, make, end_time),
            Fault::Recover { node } => {
                if !net.faults.down[node as usize] {
                    net.faults.log.push(format!("{now}: recover: position {node} is up; nothing to do"));
                    return;
                }
                net.faults.down[node as usize] = false;
                if let Some(o) = net.faults.outages.iter_mut().rev().find(|o| o.position == node) {
                    o.recovered = Some(now);
                }
                let mut info = Vec::new();
                let options = net.options.get(node as usize).cloned().unwrap_or_default();
                let ctx = NodeContext::at(net.topo, net.ids, node, net.rule, net.seed, &mut info)
                    .with_options(Options(&options));
                net.faults.log.push(format!("{now}: position {node} recovered as a new incarnation"));
                net.at(node, now);
                let p = node as usize;
                self.shells[p].restart(&mut self.algos[p], make(&ctx), &mut self.io);
                *end_time = now;
            }
            Fault::Link { from, to, fault } => {
                let new = LinkRule::new(from, to, fault, s.seed);
                // Faults the new one shadows everywhere can go.
                net.faults.links.retain(|l| !new.covers(l));
                if fault.has_effect() || !net.faults.links.is_empty() {
                    net.faults.links.push(new);
                }
            }
            Fault::Clock { node, rate } => {
                let n = net.topo.len() as usize;
                let f = &mut net.faults;
                if f.clock.is_empty() {
                    f.clock = vec![1.0; n];
                }
                let before = std::mem::replace(&mut f.clock[node as usize], rate);
                f.log.push(format!("{now}: clock: position {node}'s timers run at {rate} times real time"));
                // Its pending timers have the rest of their time to run by the new clock.
                let timers = std::mem::take(&mut net.timers).into_vec();
                net.timers = timers
                    .into_iter()
                    .map(|Reverse((t, seq, p, timer, generation))| {
                        let t = if p == node && t > now {
                            now + (((t - now) as f64 * before / rate).round() as u64).max(1)
                        } else {
                            t
                        };
                        Reverse((t, seq, p, timer, generation))
                    })
                    .collect();
            }
            Fault::Pause { node, ms } => {
                let n = net.topo.len() as usize;
                let f = &mut net.faults;
                if f.paused.is_empty() {
                    (f.paused, f.due, f.held) = (vec![0; n], vec![Vec::new(); n], vec![Vec::new(); n]);
                }
                let until = &mut f.paused[node as usize];
                *until = (*until).max(now + ms);
                f.pauses.push((node, now, *until));
                f.log.push(format!("{now}: pause: position {node} takes no step until {until}"));
            }
            Fault::Forge { node, port, msg } => {
                if net.faults.down[node as usize] {
                    net.faults.log.push(format!("{now}: forge: position {node} is down; nothing delivered"));
                } else if net.topo.link(node, port).is_none() {
                    net.faults.log.push(format!("{now}: forge: position {node} has no port {port}"));
                } else {
                    net.at(node, now);
                    let p = node as usize;
                    if let Err(e) = self.shells[p].message(&mut self.algos[p], port, msg, &mut self.io) {
                        self.net().error(format!("position {node}: forged {msg:?}: {e}"));
                    }
                    *end_time = now;
                }
            }
            Fault::Store { node, cut, delay_ms } => {
                net.faults.store_log.push((now, node, cut, delay_ms));
                let st = &mut net.store;
                let all = 0..st.cut.len() as u32;
                for p in all.filter(|&p| node.is_none_or(|q| q == p)) {
                    st.cut[p as usize] = cut;
                    st.extra[p as usize] = delay_ms;
                }
                let who = node.map_or("every node".to_string(), |p| format!("position {p}"));
                net.faults.log.push(format!("{now}: store: {who} cut off: {cut}, extra delay {delay_ms}"));
            }
            Fault::Partition { groups } => {
                let n = net.topo.len() as usize;
                let f = &mut net.faults;
                f.group_of.clear();
                if let Some(open) = f.splits.last_mut().filter(|s| s.until.is_none()) {
                    open.until = Some(now);
                }
                if !(groups.len() == 1 && groups[0].len() == n) {
                    f.splits.push(crate::faults::Split { from: now, until: None, groups: groups.clone() });
                    // A node in no group is alone: give it a group number of its own.
                    f.group_of.extend((0..n as u32).map(|p| groups.len() as u32 + p));
                    for (g, members) in groups.iter().enumerate() {
                        for &p in members {
                            f.group_of[p as usize] = g as u32;
                        }
                    }
                }
            }
        }
    }

    /// A fault aimed at whoever leads now ([`Driver::current_leader`]), resolved and applied to it;
    /// the leader it found (or none) is kept for the report.
    pub(super) fn leader_fault(
        &mut self,
        now: u64,
        s: crate::faults::Scheduled,
        make: &impl Fn(&NodeContext) -> A,
        end_time: &mut u64,
    ) {
        let leader = self.current_leader();
        let what = leader_fault_name(&s.fault);
        let net = self.net();
        net.faults.leader_faults.push(LeaderFault { at: now, fault: s.fault.clone(), leader });
        let Some(p) = leader else {
            let nothing = match s.fault {
                Fault::CrashLeader => "nothing crashed",
                Fault::LeaveLeader => "nobody left",
                _ => "nothing done",
            };
            net.faults.log.push(format!("{now}: {what} found no leader; {nothing}"));
            return;
        };
        match s.fault {
            Fault::CrashLeader => self.crash(now, p, what),
            Fault::LeaveLeader => {
                net.faults.log.push(format!("{now}: position {p} leaves (hands its leadership over)"));
                net.at(p, now);
                let p = p as usize;
                self.shells[p].leave(&mut self.algos[p], &mut self.io);
                *end_time = now;
            }
            _ => {
                net.faults.log.push(format!("{now}: {what}: position {p} leads"));
                let fault = on_leader(&s.fault, p, net.topo.len());
                self.apply_fault(now, crate::faults::Scheduled { fault, ..s }, make, end_time);
            }
        }
    }

    /// The live node that leads now: the highest term of a kept leadership
    /// naming its holder, else a one-shot leader.
    pub(super) fn current_leader(&self) -> Option<u32> {
        let net = self.io.sink();
        let mut latest: Vec<Option<Leadership>> = vec![None; self.shells.len()];
        for e in &net.leaderships {
            latest[e.position as usize] = Some(e.leadership);
        }
        let live = |p: usize| !net.faults.down[p];
        let kept = latest
            .iter()
            .enumerate()
            .filter(|&(p, l)| live(p) && matches!(l, Some(l) if l.leader == Some(net.ids[p])))
            .max_by_key(|(_, l)| l.map(|l| l.term))
            .map(|(p, _)| p as u32);
        kept.or_else(|| {
            self.shells
                .iter()
                .enumerate()
                .find(|&(p, s)| live(p) && matches!(s.decision(), Some(d) if d.role == Role::Leader))
                .map(|(p, _)| p as u32)
        })
    }

    pub(super) fn crash(&mut self, now: u64, p: u32, what: &str) {
        if self.net().crash(now, p, what) {
            self.shells[p as usize].crash();
        }
    }
}
