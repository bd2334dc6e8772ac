//! Fencing: would a deposed leader's writes have been accepted?
//!
//! Two nodes may both believe they lead for a while (a paused or cut-off
//! leader has not heard of its successor yet). What that costs depends on
//! the resource the leader writes to: one that *fences* (accepts a write
//! only with a token at least the newest it has seen, as Chubby's sequencers
//! and ZooKeeper's zxids are used) refuses the old leader once its
//! successor's first write has reached it. This module measures both sides:
//! how many writes were stale, how many a fencing resource accepted, and how
//! many a resource without fencing would have accepted.
//!
//! # Tokens
//!
//! Every kept leadership hands its leader a token: the term of its
//! [`Leadership`] belief. Terms only grow at a node and
//! [`invariants::one_leader_per_term`](crate::invariants::one_leader_per_term)
//! (checked on every run) makes a term unique to one leader, so a newer
//! leader's token is larger. Per kept algorithm:
//!
//! | algorithm | token |
//! |---|---|
//! | `bully` | the term of the winner's `Coordinator`: one above the highest term it has seen |
//! | `repaired-ring` | the election's term: its initiator starts one above every term it has seen, one coordinator per term |
//! | `zookeeper` | the epoch the leader established with a quorum |
//! | `chubby` | the term the master won its votes in (what Chubby's sequencer carries) |
//! | `raft` | the leader's current term |
//! | `lease` (client-go) | the lease record's `transitions + 1` (each change of holder counts one; the record's revision would do too) |
//!
//! # Writes
//!
//! A node that believes it leads writes to the resource when it comes to
//! believe so, then every `write_ms` (the failure detector's period) while it
//! still believes, and once on resuming from a pause if it still believes
//! (a paused node writes nothing). A write carries its token and travels to
//! the resource like a message. It is **stale** if, when it was sent (by the
//! sender's clock), some node had already announced leading a higher term.
//! The resource judges writes in arrival order ([`Resource`]).
//!
//! ```
//! use ringleader_core::fencing::Resource;
//! let mut r = Resource::default();
//! assert!(r.write(1, false)); // the first leader
//! assert!(r.write(2, false)); // its successor
//! assert!(!r.write(1, true)); // the deposed leader, refused
//! let f = r.fencing();
//! assert_eq!((f.writes, f.stale, f.stale_accepted, f.stale_accepted_unfenced), (3, 1, 0, 1));
//! ```

use crate::faults::Outage;
use crate::protocol::Leadership;

/// The writes one modelled run may hold; beyond, the model stops and says so
/// ([`Fencing::truncated`]). A kept run fires at least one heartbeat timer per
/// node and period, so this bounds only runs far longer than any lab's.
pub const MAX_WRITES: usize = 1 << 20;

/// What fencing did in one election.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fencing {
    /// Writes sent by nodes that believed they led.
    pub writes: u64,
    /// Writes that were stale when sent: a higher term's leader had already
    /// announced itself.
    pub stale: u64,
    /// Stale writes a fencing resource accepted: they arrived before any
    /// newer token had.
    pub stale_accepted: u64,
    /// Stale writes that reached the resource: a resource without fencing
    /// would have accepted every one.
    pub stale_accepted_unfenced: u64,
    /// The run had more than [`MAX_WRITES`] writes; the later ones were not
    /// modelled.
    pub truncated: bool,
}

/// The modelled resource: it accepts a write only with a token at least the
/// newest it has seen (fencing on), and counts what it would have accepted
/// without fencing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    newest: Option<u64>,
    fencing: Fencing,
}

impl Resource {
    /// A write was sent (`stale`: see the module docs), whether or not it arrives.
    pub fn sent(&mut self, stale: bool) {
        self.fencing.writes += 1;
        self.fencing.stale += u64::from(stale);
    }

    /// A write with `token` arrives: accepted (`true`) iff its token is at
    /// least the newest seen. Counts only the arrival; see [`Resource::sent`].
    pub fn arrive(&mut self, token: u64, stale: bool) -> bool {
        let accepted = self.newest.is_none_or(|n| token >= n);
        if accepted {
            self.newest = Some(token);
        }
        if stale {
            self.fencing.stale_accepted += u64::from(accepted);
            self.fencing.stale_accepted_unfenced += 1;
        }
        accepted
    }

    /// A write sent and arrived at once ([`Resource::sent`] then [`Resource::arrive`]).
    pub fn write(&mut self, token: u64, stale: bool) -> bool {
        self.sent(stale);
        self.arrive(token, stale)
    }

    /// The newest token seen.
    pub fn newest(&self) -> Option<u64> {
        self.newest
    }

    /// The counts so far.
    pub fn fencing(&self) -> Fencing {
        self.fencing
    }
}

/// A belief and when it came: (time, position, leadership), as in the
/// simulator's leadership timeline.
pub type Belief = (u64, u32, Leadership);

/// The resource as a LIVE driver hosts it (the controller, one per kept
/// leadership): writes and announcements of leading arrive over each node's
/// own stream, so in any order between nodes. Writes are judged by the
/// fencing rule as they arrive; a write is stale by every announcement made
/// (by the nodes' clocks) at or before its sending, including one that
/// arrives after the write: the latest [`RECENT_WRITES`] writes are judged
/// again when an announcement comes late.
#[derive(Clone, Debug, Default)]
pub struct LiveResource {
    resource: Resource,
    /// Announcements of leading: (node clock, term), at most [`MAX_ANNOUNCED`], the oldest forgotten.
    announced: std::collections::VecDeque<(u64, u64)>,
    /// The latest writes: (sent, token, accepted, stale).
    recent: std::collections::VecDeque<(u64, u64, bool, bool)>,
}

/// Writes a [`LiveResource`] may judge again when an announcement arrives after them.
pub const RECENT_WRITES: usize = 256;
/// Announcements a [`LiveResource`] keeps.
pub const MAX_ANNOUNCED: usize = 4096;

impl LiveResource {
    /// A node announced at `at` (its clock) that it leads `term`; writes
    /// already judged that were sent at or after `at` with a lower token
    /// become stale.
    pub fn announce(&mut self, at: u64, term: u64) {
        if self.announced.len() == MAX_ANNOUNCED {
            self.announced.pop_front();
        }
        self.announced.push_back((at, term));
        let f = &mut self.resource.fencing;
        for w in self.recent.iter_mut().filter(|w| !w.3 && w.0 >= at && w.1 < term) {
            w.3 = true;
            f.stale += 1;
            f.stale_accepted_unfenced += 1;
            f.stale_accepted += u64::from(w.2);
        }
    }

    /// A write with `token`, sent at `sent` (the sender's clock), arrives:
    /// accepted iff its token is at least the newest seen.
    pub fn write(&mut self, sent: u64, token: u64) -> bool {
        let stale = self.announced.iter().any(|&(at, term)| at <= sent && term > token);
        let accepted = self.resource.write(token, stale);
        if self.recent.len() == RECENT_WRITES {
            self.recent.pop_front();
        }
        self.recent.push_back((sent, token, accepted, stale));
        accepted
    }

    /// The counts so far.
    pub fn fencing(&self) -> Fencing {
        self.resource.fencing
    }
}

/// One write a node sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    /// When it was sent.
    pub sent: u64,
    /// The sending position.
    pub position: u32,
    /// Its token: the term the sender believed it led.
    pub token: u64,
}

/// When a node announced leading which term: tells whether a write was
/// stale. Built from a kept leadership timeline.
#[derive(Clone, Debug, Default)]
pub struct Announcements {
    /// (time, highest term any node announced leading up to then), times increasing.
    highest: Vec<(u64, u64)>,
}

impl Announcements {
    /// The announcements in `timeline` (time order) of a node leading itself.
    pub fn new(ids: &[u64], timeline: &[Belief]) -> Announcements {
        let mut highest: Vec<(u64, u64)> = Vec::new();
        for &(time, _, l) in timeline.iter().filter(|&&(_, p, l)| l.leader == ids.get(p as usize).copied()) {
            let top = highest.last().map_or(0, |&(_, t)| t).max(l.term);
            match highest.last_mut() {
                Some(last) if last.0 == time => last.1 = top,
                _ => highest.push((time, top)),
            }
        }
        Announcements { highest }
    }

    /// Was a write with `token` sent at `sent` stale: had a node announced
    /// leading a higher term at or before `sent`?
    pub fn stale(&self, sent: u64, token: u64) -> bool {
        let i = self.highest.partition_point(|&(t, _)| t <= sent);
        i > 0 && self.highest[i - 1].1 > token
    }
}

/// What decides when nodes write in a simulated kept run.
#[derive(Clone, Copy, Debug)]
pub struct Schedule<'a> {
    /// Each position's id.
    pub ids: &'a [u64],
    /// Every belief, in time order.
    pub timeline: &'a [Belief],
    /// Crashes (a crash ends a belief; a new incarnation announces its own).
    pub outages: &'a [Outage],
    /// Pauses: (position, from, until), a paused node writing nothing in `from..until`.
    pub pauses: &'a [(u32, u64, u64)],
    /// Ends of pauses: (position, time, its belief once the timers that came
    /// due while it slept have fired, before it reads the input it held). A
    /// node that still leads then writes at once, as a process resuming from
    /// a stop-the-world pause finishes what it was doing before it hears news.
    pub resumes: &'a [(u32, u64, Leadership)],
    /// The run's last instant: no write after it.
    pub end_time: u64,
    /// The period of writes while a node believes it leads.
    pub write_ms: u64,
}

impl Schedule<'_> {
    /// Every write, in order of sending (ties by position), at most
    /// [`MAX_WRITES`] (`true`: more were cut off).
    pub fn writes(&self) -> (Vec<Write>, bool) {
        let mut writes = Vec::new();
        let n = self.ids.len() as u32;
        for p in 0..n {
            let pauses: Vec<(u64, u64)> =
                self.pauses.iter().filter(|&&(q, ..)| q == p).map(|&(_, from, until)| (from, until)).collect();
            for (start, end, token) in self.leading(p) {
                self.segment_writes(p, start, end, token, &pauses, &mut writes);
                if writes.len() > MAX_WRITES {
                    break;
                }
            }
        }
        for &(p, at, belief) in self.resumes {
            let down = self.outages.iter().any(|o| o.position == p && o.covers(at));
            if belief.leader == self.ids.get(p as usize).copied() && at <= self.end_time && !down {
                writes.push(Write { sent: at, position: p, token: belief.term });
            }
        }
        writes.sort_by_key(|w| (w.sent, w.position));
        writes.dedup_by_key(|w| (w.sent, w.position));
        let truncated = writes.len() > MAX_WRITES;
        writes.truncate(MAX_WRITES);
        (writes, truncated)
    }

    /// Position `p`'s spans of leading: (from, until exclusive, term).
    fn leading(&self, p: u32) -> Vec<(u64, u64, u64)> {
        let me = self.ids.get(p as usize).copied();
        let leads = |l: Leadership| (l.leader == me).then_some(l.term);
        // Changes of belief, a crash before the beliefs of its instant.
        let mut changes: Vec<(u64, u8, Option<u64>)> = self
            .timeline
            .iter()
            .filter(|&&(_, q, _)| q == p)
            .map(|&(t, _, l)| (t, 1, leads(l)))
            .chain(self.outages.iter().filter(|o| o.position == p).map(|o| (o.crashed, 0, None)))
            .collect();
        changes.sort_by_key(|&(t, order, _)| (t, order));
        let mut spans = Vec::new();
        let mut i = 0;
        while i < changes.len() {
            let t = changes[i].0;
            // The belief after every change of this instant.
            while i + 1 < changes.len() && changes[i + 1].0 == t {
                i += 1;
            }
            if let Some(term) = changes[i].2 {
                let until = changes.get(i + 1).map_or(u64::MAX, |c| c.0);
                spans.push((t, until, term));
            }
            i += 1;
        }
        spans
    }

    /// The writes of one span of leading: at its start and every `write_ms`
    /// after, unless paused (a pause's end writes by [`Schedule::resumes`]).
    fn segment_writes(&self, p: u32, start: u64, end: u64, token: u64, pauses: &[(u64, u64)], out: &mut Vec<Write>) {
        let end = end.min(self.end_time.saturating_add(1));
        let paused = |t: u64| pauses.iter().any(|&(from, until)| from <= t && t < until);
        let step = self.write_ms.max(1);
        let mut t = start;
        while t < end && out.len() <= MAX_WRITES {
            if !paused(t) {
                out.push(Write { sent: t, position: p, token });
            }
            t = t.saturating_add(step);
        }
    }
}

/// Judge `writes` (in order of sending) at a fencing resource: `arrival`
/// gives each write's arrival time, `None` when it is lost on the way.
/// Arrivals are judged in time order, ties in order of sending.
pub fn judge(writes: &[Write], announced: &Announcements, mut arrival: impl FnMut(&Write) -> Option<u64>) -> Fencing {
    let mut resource = Resource::default();
    let mut arriving: Vec<(u64, usize, bool)> = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        let stale = announced.stale(w.sent, w.token);
        resource.sent(stale);
        if let Some(at) = arrival(w) {
            arriving.push((at, i, stale));
        }
    }
    arriving.sort_unstable_by_key(|&(at, i, _)| (at, i));
    for (_, i, stale) in arriving {
        resource.arrive(writes[i].token, stale);
    }
    resource.fencing()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lead(time: u64, position: u32, term: u64, leader: Option<u64>) -> Belief {
        (time, position, Leadership { term, leader })
    }

    /// Fencing accepts tokens at least the newest seen, the same token again
    /// included, and refuses older ones; without fencing every stale arrival
    /// counts as accepted.
    #[test]
    fn resource_accepts_only_tokens_at_least_the_newest() {
        let mut r = Resource::default();
        assert!(r.write(3, false));
        assert!(r.write(3, false), "the same leader writes again");
        assert!(r.write(5, false));
        assert!(!r.write(4, true));
        assert!(!r.write(3, true));
        assert!(r.write(5, false));
        assert_eq!(r.newest(), Some(5));
        let f = r.fencing();
        assert_eq!((f.writes, f.stale, f.stale_accepted, f.stale_accepted_unfenced), (6, 2, 0, 2));
    }

    /// A stale write that arrives before any newer token is accepted even
    /// with fencing; a lost one counts as tried, not as accepted either way.
    #[test]
    fn stale_writes_before_the_newer_token_get_through() {
        let mut r = Resource::default();
        assert!(r.write(1, false));
        assert!(r.write(1, true), "the successor's first write has not arrived yet");
        r.sent(true); // lost on the way
        assert!(r.write(2, false));
        assert!(!r.write(1, true));
        let f = r.fencing();
        assert_eq!((f.writes, f.stale, f.stale_accepted, f.stale_accepted_unfenced), (5, 3, 1, 2));
    }

    /// A write is stale only if a higher term's leader announced itself at or
    /// before its sending; followers' beliefs announce nothing.
    #[test]
    fn staleness_follows_announcements_of_leading() {
        let ids = [1, 2, 3];
        let timeline = [lead(10, 0, 1, Some(1)), lead(20, 1, 2, Some(1)), lead(30, 2, 2, Some(3))];
        let a = Announcements::new(&ids, &timeline);
        assert!(!a.stale(29, 1), "position 1 only believed, in term 2, that 1 leads");
        assert!(a.stale(30, 1));
        assert!(!a.stale(30, 2));
        assert!(!a.stale(5, 0));
    }

    /// A leader writes at its first belief, every period, not while paused,
    /// once on resuming if it still leads then, and not after it stops
    /// believing or crashes.
    #[test]
    fn writes_follow_the_belief_pauses_and_crashes() {
        let ids = [1, 2];
        let timeline = [lead(0, 0, 1, Some(1)), lead(100, 0, 1, None), lead(200, 1, 2, Some(2))];
        let outages = [Outage { position: 1, crashed: 260, recovered: None }];
        let pauses = [(0, 25, 62), (1, 230, 250)];
        let resumes =
            [(0, 62, Leadership { term: 1, leader: Some(1) }), (1, 250, Leadership { term: 2, leader: None })];
        let s = Schedule {
            ids: &ids,
            timeline: &timeline,
            outages: &outages,
            pauses: &pauses,
            resumes: &resumes,
            end_time: 1_000,
            write_ms: 20,
        };
        let (writes, truncated) = s.writes();
        let sent: Vec<(u64, u32, u64)> = writes.iter().map(|w| (w.sent, w.position, w.token)).collect();
        assert!(!truncated);
        assert_eq!(sent, vec![(0, 0, 1), (20, 0, 1), (62, 0, 1), (80, 0, 1), (200, 1, 2), (220, 1, 2)]);
    }

    /// LIVE, an announcement that arrives after a write it makes stale still
    /// counts it: accepted (no newer token had arrived) and stale.
    #[test]
    fn live_resource_judges_late_announcements() {
        let mut r = LiveResource::default();
        r.announce(0, 1);
        assert!(r.write(10, 1));
        assert!(r.write(120, 1), "sent after term 2 was announced, which has not arrived yet");
        r.announce(100, 2);
        assert!(r.write(101, 2));
        assert!(!r.write(130, 1), "stale and known to be");
        let f = r.fencing();
        assert_eq!((f.writes, f.stale, f.stale_accepted, f.stale_accepted_unfenced), (4, 2, 1, 2));
    }

    /// The resource judges in arrival order: the old leader's stale write that
    /// overtakes the new leader's first write is accepted, the later ones not.
    #[test]
    fn judging_goes_by_arrival() {
        let ids = [1, 2];
        let timeline = [lead(0, 0, 1, Some(1)), lead(10, 1, 2, Some(2))];
        let a = Announcements::new(&ids, &timeline);
        let writes = [
            Write { sent: 0, position: 0, token: 1 },
            Write { sent: 10, position: 1, token: 2 },
            Write { sent: 11, position: 0, token: 1 },
            Write { sent: 20, position: 0, token: 1 },
        ];
        let delay = |w: &Write| Some(w.sent + if w.position == 1 { 5 } else { 1 });
        let f = judge(&writes, &a, delay);
        assert_eq!((f.writes, f.stale, f.stale_accepted, f.stale_accepted_unfenced), (4, 2, 1, 2));
    }
}
