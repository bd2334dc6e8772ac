//! What the controller knows of one kept leadership, changed by one method
//! per event: a node's belief, a node's event stream lost or back, a
//! restarted node rejoined, the faults in force, the agreed leader lost or a
//! new one agreed, the stop. It does no IO and reads no clock: the loop in
//! [`super::follow`] reads the nodes, the faults and the time and hands them
//! in, and does what the methods return (read message counts, rejoin a node).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::super::diagram;
use super::super::entry::WatchEvent;
use super::super::run::ActiveFaults;
use crate::failover::{Mark, Tracker};
use crate::record::{ElectionRecord, FailoverRecord, LeaderInfo, LeadershipChange};
use ringleader_core::failover::Cause;
use ringleader_core::failover::overlap;

/// The counted nodes' beliefs kept to replay into a failover learnt late.
const RECENT_BELIEFS: usize = 1_024;

/// Most leadership changes a kept election records.
pub const MAX_TIMELINE: usize = 10_000;

/// Most violations (or overlaps) a kept leadership records word for word;
/// beyond, they are only counted. A cluster that cannot agree (e.g. with
/// delays above bully's timeouts) can otherwise add thousands a second, each
/// copied into every snapshot of the record.
pub const MAX_RECORDED_VIOLATIONS: usize = 100;

/// A node's belief: the term, and the leader it names (`None`: it elects).
type Belief = (u64, Option<u64>);

/// A leadership interval reported while its node rejoins: the term it
/// leads, if it does, and since when on its clock.
type Interval = (Option<u64>, u64);

/// A belief one node reported.
#[derive(Clone, Copy, Debug)]
pub(super) struct Report {
    /// Its position.
    pub(super) position: usize,
    /// The term.
    pub(super) term: u64,
    /// The leader it names, if any.
    pub(super) leader: Option<u64>,
    /// When it took effect on the node's clock (unix µs; 0: not said).
    pub(super) node_us: u64,
}

/// When something happened, on the three clocks the follower keeps.
#[derive(Clone, Copy, Debug)]
pub(super) struct Now {
    /// Milliseconds since the leadership started.
    pub(super) ms: u64,
    /// Microseconds since the leadership started.
    pub(super) since_start_us: u64,
    /// The controller's unix time in microseconds.
    pub(super) unix_us: u64,
}

/// One kept leadership as the controller follows it (see the module docs).
#[derive(Debug)]
pub(super) struct Follower {
    /// Each position's node name, for findings and the record.
    names: Vec<String>,
    /// Each position's id.
    ids: Vec<u64>,
    /// What a leader that names no leader any more has lost: its lease in
    /// its algorithm's words, or its leadership.
    stepped_down: Cause,
    /// Whether every change of belief is kept for a diagram.
    draw: bool,
    /// Each position's current belief (`None`: not heard, or void).
    belief: Vec<Option<Belief>>,
    /// When each position's current belief arrived (ms since the start): a
    /// failover's agreement began when the last of the counted nodes took
    /// the belief they agree on.
    belief_at_ms: Vec<u64>,
    /// The position that claimed to lead each term.
    claims: BTreeMap<u64, usize>,
    violations: Capped,
    overlaps: Capped,
    /// The key (who, since) of each overlap recorded word for word, in its
    /// order, and of every one found: a later judgement updates its line.
    overlap_keys: Vec<OverlapKey>,
    overlaps_seen: std::collections::HashSet<OverlapKey>,
    /// Per position: judged no further than this while it is paused (when
    /// the controller paused it), and the pause whose report came.
    frozen: Vec<Option<u64>>,
    pause_reported: Vec<Option<u64>>,
    /// Each node's leadership intervals on its own clock: overlaps.
    leaderships: overlap::Leaderships,
    /// Each node's event stream as last seen: one that comes back may be a
    /// restarted process.
    connected: Vec<bool>,
    /// When each node's stream last broke (controller clock, unix µs).
    lost_at_us: Vec<u64>,
    /// When each node's stream came back (unix µs): what it reports of the
    /// time before is not judged (it was not heard then).
    back_at_us: Vec<u64>,
    /// While a node rejoins, the leadership intervals it reports, held until
    /// we know whether its process restarted.
    held: Vec<Option<Vec<Interval>>>,
    /// Each position as the faults left it last: crashed or not.
    was_crashed: Vec<bool>,
    /// The faults in force, by position.
    faults: ActiveFaults,
    /// The counted nodes' recent beliefs (ms since the start, position,
    /// belief): a loss learnt late (a node that stopped answering) is dated
    /// when it was last heard, and the beliefs since then replayed into its
    /// failover.
    recent: VecDeque<(u64, usize, Belief)>,
    /// Every change of belief to microseconds, for the diagram.
    beliefs: Vec<diagram::Belief>,
    /// The failovers.
    tracker: Tracker,
    /// The leader the record shows.
    shown: Option<usize>,
    /// The modelled resource the leaders write to (fencing).
    fencing: ringleader_core::fencing::LiveResource,
}

impl Follower {
    /// A leadership of the nodes `names` with ids `ids`, whose streams are
    /// `connected` now. `stepped_down` names what a leader that names no
    /// leader lost; `draw` keeps every belief for a diagram.
    pub(super) fn new(
        names: Vec<String>,
        ids: Vec<u64>,
        connected: Vec<bool>,
        stepped_down: Cause,
        draw: bool,
    ) -> Self {
        let n = names.len();
        Follower {
            names,
            ids,
            stepped_down,
            draw,
            belief: vec![None; n],
            belief_at_ms: vec![0; n],
            claims: BTreeMap::new(),
            violations: Capped::default(),
            overlaps: Capped::default(),
            overlap_keys: Vec::new(),
            overlaps_seen: std::collections::HashSet::new(),
            frozen: vec![None; n],
            pause_reported: vec![None; n],
            leaderships: overlap::Leaderships::new(n),
            connected,
            lost_at_us: vec![0; n],
            back_at_us: vec![0; n],
            held: vec![None; n],
            was_crashed: vec![false; n],
            faults: ActiveFaults::default(),
            recent: VecDeque::new(),
            beliefs: Vec::new(),
            tracker: Tracker::new(),
            shown: None,
            fencing: Default::default(),
        }
    }

    /// The nodes' event streams are `now` as of `unix_us`; `last_heard(i)`
    /// is when node `i` was last heard (unix µs, 0 if unknown). Returns the
    /// positions whose stream came back: each may be a restarted process,
    /// to rejoin (see [`Follower::rejoining`]).
    pub(super) fn streams(&mut self, now: &[bool], last_heard: impl Fn(usize) -> u64, unix_us: u64) -> Vec<usize> {
        let mut back = Vec::new();
        for (i, (was, &now)) in self.connected.iter_mut().zip(now).enumerate() {
            if *was && !now {
                // When it was last heard: a node that stopped answering broke its stream later.
                let lost = last_heard(i);
                self.lost_at_us[i] = if lost == 0 { unix_us } else { lost.min(unix_us) };
            }
            if now && !*was {
                self.back_at_us[i] = unix_us;
                back.push(i);
            }
            *was = now;
        }
        back
    }

    /// Node `i`, whose stream came back, is being prepared again: its old
    /// belief is void, and the intervals it reports are held until it has
    /// rejoined.
    pub(super) fn rejoining(&mut self, i: usize) {
        self.belief[i] = None;
        self.held[i].get_or_insert_with(Vec::new);
    }

    /// Node `i` rejoined (as a new incarnation, or it still ran the
    /// election). The old incarnation was gone when its stream broke, and a
    /// process that was paused or cut off was last known to believe anything
    /// when it was last heard: its leadership ends there for the judgement,
    /// and what it reports of the time it was not heard is left unjudged (a
    /// frozen belief is no overlap).
    pub(super) fn rejoined(&mut self, i: usize) {
        let found = self.leaderships.ended(i, self.lost_at_us[i]);
        self.note_overlaps(&found);
        for (leads, at) in self.held[i].take().unwrap_or_default() {
            let found = self.leaderships.belief(i, leads, at.max(self.back_at_us[i]));
            self.note_overlaps(&found);
        }
    }

    /// The faults in force are `faults` (by position) as of `unix_us`. A
    /// crashed node's belief dies with it: the node comes back as a new
    /// incarnation that reports afresh, and its old belief must not count
    /// (nor overlap) in between.
    pub(super) fn faults(&mut self, faults: ActiveFaults, unix_us: u64) {
        let n = self.belief.len();
        for &i in faults.crashed.iter().filter(|&&i| i < n) {
            self.belief[i] = None;
        }
        for i in 0..self.was_crashed.len() {
            let now = faults.crashed.contains(&i);
            if now && !self.was_crashed[i] {
                let found = self.leaderships.ended(i, unix_us);
                self.note_overlaps(&found);
            }
            self.was_crashed[i] = now;
        }
        for i in 0..self.frozen.len() {
            let paused = faults.paused.iter().find(|&&(p, _)| p == i).map(|&(_, since)| since);
            match paused {
                Some(since) if self.pause_reported[i] != Some(since) => {
                    self.frozen[i].get_or_insert(since);
                }
                Some(_) => {}
                None => self.frozen[i] = None,
            }
        }
        self.faults = faults;
    }

    /// Node `i` reports it was paused from `from_us` to `until_us` (its
    /// clock): that time is no part of its leadership.
    pub(super) fn paused(&mut self, i: usize, from_us: u64, until_us: u64) {
        self.leaderships.paused(i, from_us, until_us);
        if let Some(f) = self.frozen.get_mut(i) {
            self.pause_reported[i] = f.take();
        }
    }

    /// Judge the running leaderships up to `unix_us` for the nodes heard
    /// now (stream connected, not rejoining, not crashed); a paused node up
    /// to when the controller paused it, until its pause report comes.
    pub(super) fn judge_running(&mut self, unix_us: u64) {
        let heard: Vec<Option<u64>> = (0..self.belief.len())
            .map(|i| {
                let live = self.connected[i] && self.held[i].is_none() && !self.was_crashed[i];
                live.then(|| self.frozen[i].unwrap_or(unix_us))
            })
            .collect();
        let found = self.leaderships.running(|i| heard.get(i).copied().flatten());
        self.note_overlaps(&found);
    }

    /// A node reported a belief at `at`: it is recorded, its leadership
    /// interval judged for overlaps, its claim for two leaders of one term,
    /// and, if the node is counted, fed to the failover figures.
    pub(super) fn belief(&mut self, report: Report, at: Now) {
        let Report { position: node, term, leader, node_us } = report;
        self.belief[node] = Some((term, leader));
        self.belief_at_ms[node] = at.ms;
        if self.draw && self.beliefs.len() < MAX_TIMELINE {
            self.beliefs.push(diagram::Belief { at_us: at.since_start_us, position: node as u32, term, leader });
        }
        // Its leadership interval, on its own clock (held while it rejoins).
        let leading = self.leads(node).then_some(term);
        let node_at = if node_us > 0 { node_us } else { at.unix_us };
        if leading.is_some() {
            self.fencing.announce(node_at, term);
        }
        match self.held[node].as_mut() {
            Some(h) => h.push((leading, node_at)),
            None => {
                let found = self.leaderships.belief(node, leading, node_at);
                self.note_overlaps(&found);
            }
        }
        if self.leads(node) {
            match self.claims.get(&term) {
                Some(&other) if other != node => self
                    .violations
                    .push(format!("two leaders of term {term}: {} and {}", self.names[other], self.names[node])),
                _ => {
                    self.claims.insert(term, node);
                }
            }
        }
        if self.counted(node) {
            self.tracker.belief(at.ms, term, leader);
            if self.recent.len() == RECENT_BELIEFS {
                self.recent.pop_front();
            }
            self.recent.push_back((at.ms, node, (term, leader)));
        }
    }

    /// Node `node`'s write with `token`, sent at `sent_us` on its clock,
    /// arrives at the modelled resource (see [`ringleader_core::fencing::LiveResource`]).
    pub(super) fn write(&mut self, node: usize, token: u64, sent_us: u64) {
        if node < self.names.len() {
            self.fencing.write(sent_us, token);
        }
    }

    /// The fencing counts so far.
    pub(super) fn fencing(&self) -> ringleader_core::fencing::Fencing {
        self.fencing.fencing()
    }

    /// Look whether the agreed leader is lost at `at`. Returns the failover
    /// opened, if one opened whose messages are to be measured (a handover is
    /// over in about a millisecond, before its counts could be read: its
    /// messages stay unmeasured rather than undercounted).
    pub(super) fn leader_lost(&mut self, at: Now) -> Option<usize> {
        let p = self.tracker.held_position()? as usize;
        let cause = self.loss(p)?;
        // A node whose stream broke was lost when it was last heard, maybe a while ago, though
        // never before its leadership was agreed: the beliefs before then are the election that
        // agreed it, and would pass for a detection.
        let lost_ms = if cause == Cause::Unreachable {
            let heard_ms = at.ms.saturating_sub(at.unix_us.saturating_sub(self.lost_at_us[p]) / 1_000);
            heard_ms.max(self.tracker.held_since().unwrap_or(0))
        } else {
            at.ms
        };
        let Mark::Opened(i) = self.tracker.leader_lost(lost_ms, cause) else { return None };
        for &(ms, node, (term, leader)) in self.recent.iter().filter(|r| r.0 >= lost_ms && r.1 != p) {
            if self.counted(node) {
                self.tracker.belief(ms, term, leader);
            }
        }
        (cause != Cause::Handover).then_some(i)
    }

    /// Look whether the counted nodes agree on a new leader at `at_ms`.
    /// Returns the failover that agreement closed, if any.
    pub(super) fn agreement(&mut self, at_ms: u64) -> Option<usize> {
        let n = self.belief.len();
        // The failover figures count the nodes that are not cut off: the majority's agreement.
        let t = self.top(|i| self.counted(i))?;
        if !(0..n).filter(|&i| self.counted(i)).all(|i| self.names_leader(i, t)) {
            return None;
        }
        // They agree since the last of them took the belief they agree on.
        let since = (0..n).filter(|&i| self.counted(i)).map(|i| self.belief_at_ms[i]).max().unwrap_or(at_ms);
        let term = self.belief[t].map_or(0, |b| b.0);
        match self.tracker.agreed(since.min(at_ms), self.info(t), term) {
            Mark::Closed(i) => Some(i),
            _ => None,
        }
    }

    /// Failover `i` took `messages` election and notification messages.
    pub(super) fn measured(&mut self, i: usize, messages: u64) {
        self.tracker.set_messages(i, messages);
    }

    /// Show the leadership in the record `r` at unix time `now_ms`, with the
    /// change `change` if a node reported one. Returns what watchers are told.
    pub(super) fn show(
        &mut self,
        r: &mut ElectionRecord,
        change: Option<LeadershipChange>,
        now_ms: u64,
    ) -> Vec<WatchEvent> {
        let n = self.belief.len();
        // The leader now: the self-believed leader of the highest term among the live nodes.
        let top = self.top(|i| self.live(i));
        let agreed = top.is_some_and(|t| (0..n).filter(|&i| self.live(i)).all(|i| self.names_leader(i, t)));
        r.agreed = agreed;
        r.down = (0..n).filter(|&i| !self.live(i)).map(|i| i as u32).collect();
        if change.is_none() && top == self.shown {
            // Nothing visible changed: only the failovers may have.
            return self.failovers(r);
        }
        self.shown = top;
        let mut told = Vec::new();
        if let Some(change) = change {
            if r.timeline.len() < MAX_TIMELINE {
                r.timeline.push(change.clone());
            }
            told.push(WatchEvent::Leadership(change));
        }
        match top {
            Some(t) => {
                let term = self.belief[t].map_or(0, |b| b.0);
                if r.leader.as_ref().map(|l| l.position) != Some(t as u32) || r.term != term {
                    r.leader_since_ms = now_ms;
                }
                r.term = r.term.max(term);
                r.leader = Some(self.info(t));
            }
            None => r.leader = None,
        }
        r.violations = self.violations.to_vec();
        r.overlaps = self.overlaps.to_vec();
        told.extend(self.failovers(r));
        told
    }

    /// Put the failovers into the record `r`, and return an event for each
    /// that is new or changed since (what `WatchElection` streams).
    pub(super) fn failovers(&self, r: &mut ElectionRecord) -> Vec<WatchEvent> {
        failover_events(r, self.tracker.records())
    }

    /// Every failover so far.
    pub(super) fn records(&self) -> &[FailoverRecord] {
        self.tracker.records()
    }

    /// The leadership stopped at `unix_us`, the streams being `now`: the
    /// leaderships of the nodes heard end here; one not heard is left
    /// unjudged. A stream that came back since it was last looked at is not
    /// heard yet: what the node believed meanwhile is unknown until it rejoins.
    pub(super) fn stop(&mut self, now: &[bool], unix_us: u64) {
        let heard = |i: usize| self.connected[i] && now[i] && self.held[i].is_none() && !self.was_crashed[i];
        let found = self.leaderships.finish(unix_us, heard);
        self.note_overlaps(&found);
    }

    /// The safety violations found, as the record shows them.
    pub(super) fn violations(&self) -> Vec<String> {
        self.violations.to_vec()
    }

    /// The overlaps found, as the record shows them.
    pub(super) fn overlaps(&self) -> Vec<String> {
        self.overlaps.to_vec()
    }

    /// Every change of belief kept for the diagram.
    pub(super) fn drawn_beliefs(&self) -> &[diagram::Belief] {
        &self.beliefs
    }

    /// Whether position `i` believes it leads.
    fn leads(&self, i: usize) -> bool {
        matches!(self.belief[i], Some((_, Some(l))) if l == self.ids[i])
    }

    /// Whether position `i` names position `t`'s node as its leader.
    fn names_leader(&self, i: usize, t: usize) -> bool {
        matches!(self.belief[i], Some((_, Some(l))) if l == self.ids[t])
    }

    /// A crashed node's last belief is frozen, and so is that of a node whose
    /// events no longer reach the controller: leaders and agreement are
    /// judged among live nodes.
    fn live(&self, i: usize) -> bool {
        !self.faults.crashed.contains(&i) && self.connected[i]
    }

    /// A node a partition cuts off from every majority takes no part in the
    /// failover figures (its leadership is lost to the majority; agreement
    /// is the majority's).
    fn counted(&self, i: usize) -> bool {
        self.live(i) && !self.faults.cut_off.contains(&i)
    }

    /// The self-believed leader of the highest term among the positions `among`.
    fn top(&self, among: impl Fn(usize) -> bool) -> Option<usize> {
        (0..self.belief.len()).filter(|&i| self.leads(i) && among(i)).max_by_key(|&i| self.belief[i].map_or(0, |b| b.0))
    }

    /// Why the agreed leader at `p` is lost, if it is: crashed or
    /// unreachable, cut off by a partition, deposed (it names another leader,
    /// or a term above the one it led), or stepped down (it names no leader
    /// in its term: a Chubby-style lease not renewed).
    fn loss(&self, p: usize) -> Option<Cause> {
        if self.faults.leaving.contains(&p) {
            Some(Cause::Handover)
        } else if !self.live(p) {
            Some(if self.faults.crashed.contains(&p) { Cause::CrashFault } else { Cause::Unreachable })
        } else if self.faults.cut_off.contains(&p) {
            Some(Cause::Partition)
        } else if let Some((term, leader)) = self.belief[p] {
            let led = self.tracker.held_term().unwrap_or(term);
            if term > led || leader.is_some_and(|l| l != self.ids[p]) {
                Some(Cause::Deposed)
            } else if leader.is_none() {
                Some(self.stepped_down)
            } else {
                None
            }
        } else {
            None
        }
    }

    fn info(&self, i: usize) -> LeaderInfo {
        LeaderInfo { node: self.names[i].clone(), id: self.ids[i], position: i as u32 }
    }

    /// Record the findings: a new one as a line, a changed one (a running
    /// overlap that grew, or was cut by a pause report) in place of its line.
    fn note_overlaps(&mut self, found: &[overlap::Overlap]) {
        for o in found {
            let key = (o.who, o.since);
            let who: BTreeMap<usize, BTreeSet<u64>> = o.who.iter().map(|&(i, t)| (i, BTreeSet::from([t]))).collect();
            let text = overlap_text(&who, |i| self.names[i].clone(), o.us / 1_000);
            match self.overlap_keys.iter().position(|k| *k == key) {
                Some(i) if o.us == 0 => {
                    self.overlap_keys.remove(i);
                    self.overlaps.list.remove(i);
                    self.overlaps_seen.remove(&key);
                }
                Some(i) => self.overlaps.list[i] = text,
                None if o.us == 0 || self.overlaps_seen.contains(&key) => {}
                None => {
                    self.overlaps_seen.insert(key);
                    if self.overlaps.list.len() < MAX_RECORDED_VIOLATIONS {
                        self.overlap_keys.push(key);
                    }
                    self.overlaps.push(text);
                }
            }
        }
    }
}

/// The text of an overlap: every node that believed it led while it lasted,
/// with each term it led meanwhile, e.g. `node-0 (term 2) and node-4 (terms
/// 1 and 3) believed they led at once for 120 ms`.
pub(in crate::elections) fn overlap_text(
    who: &BTreeMap<usize, BTreeSet<u64>>,
    name: impl Fn(usize) -> String,
    ms: u64,
) -> String {
    let names: Vec<String> = who
        .iter()
        .map(|(&i, terms)| {
            let terms: Vec<String> = terms.iter().map(u64::to_string).collect();
            match terms.as_slice() {
                [one] => format!("{} (term {one})", name(i)),
                [init @ .., last] => format!("{} (terms {} and {last})", name(i), init.join(", ")),
                [] => name(i),
            }
        })
        .collect();
    format!("{} believed they led at once for {ms} ms", names.join(" and "))
}

/// An overlap's key: the two nodes with their terms, and when each interval began.
type OverlapKey = ([(usize, u64); 2], [u64; 2]);

/// A list of findings kept to [`MAX_RECORDED_VIOLATIONS`], the rest counted.
#[derive(Clone, Debug, Default)]
struct Capped {
    list: Vec<String>,
    more: u64,
}

impl Capped {
    fn push(&mut self, finding: String) {
        if self.list.len() < MAX_RECORDED_VIOLATIONS {
            self.list.push(finding);
        } else {
            self.more += 1;
        }
    }

    /// The findings kept, and a last line counting the others if any.
    fn to_vec(&self) -> Vec<String> {
        let mut v = self.list.clone();
        if self.more > 0 {
            v.push(format!("... and {} more of the same kind, not recorded", self.more));
        }
        v
    }
}

/// Put the tracker's failovers into the record `r`, and return an event for
/// each that is new or changed since (what `WatchElection` streams).
fn failover_events(r: &mut ElectionRecord, records: &[FailoverRecord]) -> Vec<WatchEvent> {
    let told = records
        .iter()
        .enumerate()
        .filter(|&(i, f)| r.failovers.get(i) != Some(f))
        .map(|(_, f)| WatchEvent::Failover(Box::new(f.clone())))
        .collect();
    r.failovers = records.to_vec();
    told
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Mode;

    /// Three nodes node-0..2 with ids 30, 10, 20, all streams up; a lost lease is "lease lost".
    fn three() -> Follower {
        let names = (0..3).map(|i| format!("node-{i}")).collect();
        Follower::new(names, vec![30, 10, 20], vec![true; 3], Cause::LeaseLost("lease lost"), true)
    }

    /// `ms` after the start, the controller's unix clock starting at 1 s.
    fn at(ms: u64) -> Now {
        Now { ms, since_start_us: ms * 1_000, unix_us: 1_000_000 + ms * 1_000 }
    }

    /// Position `p` believes `leader` leads `term` since `node_us` on its clock.
    fn says(p: usize, term: u64, leader: Option<u64>, node_us: u64) -> Report {
        Report { position: p, term, leader, node_us }
    }

    /// All three agree that node-0 (id 30) leads term 1, at 10 ms.
    fn agreed_on_node_0(f: &mut Follower) {
        for p in 0..3 {
            f.belief(says(p, 1, Some(30), 1_010_000), at(10));
        }
        assert_eq!(f.agreement(10), None, "a first agreement closes no failover");
    }

    /// Two positions that each believe they lead the same term are a violation naming both, once
    /// per claim; the same node claiming its term again is none.
    #[test]
    fn two_leaders_of_one_term_are_a_violation() {
        let mut f = three();
        f.belief(says(0, 4, Some(30), 0), at(1));
        f.belief(says(0, 4, Some(30), 0), at(2));
        assert!(f.violations().is_empty());
        f.belief(says(1, 4, Some(10), 0), at(3));
        assert_eq!(f.violations(), ["two leaders of term 4: node-0 and node-1"]);
    }

    /// A crash fault on the agreed leader opens a failover dated at the loss; the first changed
    /// belief after it is the detection, and the counted nodes' agreement on another leader
    /// closes it, dated when the last of them took that belief.
    #[test]
    fn a_crashed_leader_is_a_failover_from_loss_to_agreement() {
        let mut f = three();
        agreed_on_node_0(&mut f);
        f.faults(ActiveFaults { crashed: vec![0], ..ActiveFaults::default() }, at(100).unix_us);
        assert_eq!(f.leader_lost(at(100)), Some(0), "the loss is measured");
        assert_eq!(f.leader_lost(at(110)), None, "one loss opens one failover");
        f.belief(says(1, 2, None, 0), at(130));
        f.belief(says(2, 2, Some(20), 0), at(150));
        assert_eq!(f.agreement(150), None, "node-1 names no leader yet");
        f.belief(says(1, 2, Some(20), 0), at(170));
        assert_eq!(f.agreement(180), Some(0));
        let r = &f.records()[0];
        assert_eq!(r.cause, Cause::CrashFault);
        assert_eq!((r.lost_at_ms, r.detection_ms, r.agreement_ms), (100, Some(30), Some(70)));
        assert_eq!(r.new_leader.as_ref().map(|(l, t)| (l.node.as_str(), *t)), Some(("node-2", 2)));
    }

    /// A leader whose event stream broke is lost when it was last heard, and the beliefs the others
    /// reported since then count in its failover: detection is measured from the last hearing.
    #[test]
    fn an_unreachable_leader_is_lost_when_last_heard() {
        let mut f = three();
        agreed_on_node_0(&mut f);
        assert!(f.streams(&[true; 3], |_| 0, at(50).unix_us).is_empty());
        // node-1 noticed at 60 ms; the controller learns of the broken stream at 200 ms, and node-0
        // was last heard at 40 ms.
        f.belief(says(1, 2, None, 0), at(60));
        assert_eq!(f.streams(&[false, true, true], |_| at(40).unix_us, at(200).unix_us), Vec::<usize>::new());
        f.faults(ActiveFaults::default(), at(200).unix_us);
        assert_eq!(f.leader_lost(at(200)), Some(0));
        let r = &f.records()[0];
        assert_eq!((r.cause, r.lost_at_ms, r.detection_ms), (Cause::Unreachable, 40, Some(20)));
    }

    /// A leader taken as down a moment (a pulse left unanswered at start on a loaded host) that
    /// comes back in its own term is followed again: its later loss (a pause) is the failover,
    /// dated when it was last heard before that loss, detected and agreed from there. Before, the
    /// later loss opened nothing and the failover kept the first loss's date (40 ms) and detection.
    #[test]
    fn a_leader_back_from_a_false_loss_fails_over_at_its_real_loss() {
        let mut f = three();
        agreed_on_node_0(&mut f);
        f.streams(&[false, true, true], |_| at(40).unix_us, at(1_100).unix_us);
        f.faults(ActiveFaults::default(), at(1_100).unix_us);
        assert_eq!(f.leader_lost(at(1_100)), Some(0));
        assert_eq!(f.records()[0].lost_at_ms, 40);
        assert_eq!(f.streams(&[true; 3], |_| 0, at(1_300).unix_us), [0]);
        f.rejoining(0);
        f.belief(says(0, 1, Some(30), 0), at(1_310));
        f.rejoined(0);
        assert_eq!(f.agreement(1_310), None, "back in its own term closes nothing");
        f.streams(&[false, true, true], |_| at(2_000).unix_us, at(3_100).unix_us);
        assert_eq!(f.leader_lost(at(3_100)), Some(0), "the pause is a loss");
        f.belief(says(1, 2, None, 0), at(2_950));
        f.belief(says(2, 2, Some(20), 0), at(3_000));
        f.belief(says(1, 2, Some(20), 0), at(3_050));
        assert_eq!(f.agreement(3_100), Some(0));
        let r = &f.records()[0];
        assert_eq!(f.records().len(), 1);
        assert_eq!((r.lost_at_ms, r.detection_ms, r.agreement_ms), (2_000, Some(950), Some(1_050)));
        assert_eq!(r.new_leader.as_ref().map(|(l, t)| (l.node.as_str(), *t)), Some(("node-2", 2)));
    }

    /// A leader last heard before its leadership was agreed (the pulse that would have heard it
    /// later had not come yet) and then lost is lost when it was agreed: the others' beliefs from
    /// before, the election that agreed it, are no detection. Before, the loss was dated when it was
    /// last heard and a follower's earlier "no leader yet" read as a detection within a millisecond.
    #[test]
    fn a_loss_learnt_late_is_dated_no_earlier_than_its_agreement() {
        let mut f = three();
        f.belief(says(0, 1, Some(30), 0), at(8));
        f.belief(says(1, 1, None, 0), at(12));
        f.belief(says(1, 1, Some(30), 0), at(20));
        f.belief(says(2, 1, Some(30), 0), at(20));
        assert_eq!(f.agreement(20), None, "a first agreement closes no failover");
        f.streams(&[false, true, true], |_| at(8).unix_us, at(1_100).unix_us);
        assert_eq!(f.leader_lost(at(1_100)), Some(0));
        let r = &f.records()[0];
        assert_eq!((r.lost_at_ms, r.detection_ms), (20, None));
        f.belief(says(1, 2, None, 0), at(1_200));
        assert_eq!(f.records()[0].detection_ms, Some(1_180));
    }

    /// A leader that names no leader any more lost its leadership in its algorithm's words; a
    /// planned handover opens a failover that is not measured (it is over before a reading).
    #[test]
    fn a_leader_stepping_down_or_handing_over_says_why() {
        let mut f = three();
        agreed_on_node_0(&mut f);
        f.belief(says(0, 1, None, 0), at(20));
        assert_eq!(f.leader_lost(at(20)), Some(0));
        assert_eq!(f.records()[0].cause, Cause::LeaseLost("lease lost"));
        let mut f = three();
        agreed_on_node_0(&mut f);
        f.faults(ActiveFaults { leaving: vec![0], ..ActiveFaults::default() }, at(20).unix_us);
        assert_eq!(f.leader_lost(at(20)), None, "a handover is not measured");
        assert_eq!(f.records()[0].cause, Cause::Handover);
    }

    /// A leader deposed by a higher term (a node that rejoined with one) is a failover of its own
    /// cause, whether it first names no leader in the higher term or at once the new leader (its
    /// reports may skip the leaderless moment): before, the second case recorded no failover and
    /// the first one blamed a lost lease.
    #[test]
    fn a_leader_deposed_by_a_higher_term_is_a_failover() {
        for deposed in [None, Some(10)] {
            let mut f = three();
            agreed_on_node_0(&mut f);
            f.belief(says(0, 5, deposed, 0), at(20));
            assert_eq!(f.leader_lost(at(20)), Some(0), "{deposed:?}");
            assert_eq!(f.records()[0].cause, Cause::Deposed);
            for p in 0..3 {
                f.belief(says(p, 5, Some(10), 0), at(30));
            }
            assert_eq!(f.agreement(30), Some(0), "{deposed:?}");
            assert_eq!(f.records()[0].new_leader.as_ref().map(|(l, t)| (l.id, *t)), Some((10, 5)));
        }
    }

    /// A node cut off by a partition takes no part in the failover figures: the majority agrees
    /// without it, though it still names the old leader.
    #[test]
    fn agreement_is_the_majority_s_under_a_partition() {
        let mut f = three();
        agreed_on_node_0(&mut f);
        f.faults(ActiveFaults { cut_off: vec![0], ..ActiveFaults::default() }, at(100).unix_us);
        assert_eq!(f.leader_lost(at(100)), Some(0));
        assert_eq!(f.records()[0].cause, Cause::Partition);
        f.belief(says(1, 2, Some(10), 0), at(120));
        f.belief(says(2, 2, Some(10), 0), at(130));
        assert_eq!(f.agreement(130), Some(0));
        let mut r = ElectionRecord::blank("e".into(), "bully", Mode::Live);
        f.show(&mut r, None, 5);
        assert!(!r.agreed, "node-0 still names itself: the live nodes do not all agree");
        assert_eq!(r.leader.map(|l| l.node), Some("node-1".into()), "the leader of the highest term");
    }

    /// A node that rejoins after its stream came back has its leadership ended when it was last
    /// heard, and what it reported meanwhile is judged only from when it was heard again: a frozen
    /// belief is no overlap, a leadership held on after the return is one.
    #[test]
    fn a_rejoining_node_is_judged_from_when_it_was_heard_again() {
        let mut f = three();
        f.belief(says(0, 1, Some(30), 1_000), at(1));
        f.streams(&[false, true, true], |_| 2_000, 2_500);
        f.belief(says(1, 2, Some(10), 3_000), at(3));
        assert_eq!(f.streams(&[true; 3], |_| 0, 10_000), [0]);
        f.rejoining(0);
        f.belief(says(0, 1, Some(30), 5_000), at(10));
        assert!(f.overlaps().is_empty(), "held while it rejoins");
        f.rejoined(0);
        assert!(f.overlaps().is_empty(), "node-0 led until 2 ms, node-1 from 3 ms");
        f.stop(&[true; 3], 20_000);
        assert_eq!(f.overlaps(), ["node-0 (term 1) and node-1 (term 2) believed they led at once for 10 ms"]);
    }

    /// At the stop, a node not heard (its stream down, or still rejoining) is left unjudged.
    #[test]
    fn the_stop_judges_only_the_nodes_heard() {
        let mut f = three();
        f.belief(says(0, 1, Some(30), 1_000), at(1));
        f.belief(says(1, 2, Some(10), 1_000), at(1));
        f.stop(&[false, true, true], 9_000);
        assert!(f.overlaps().is_empty());
        let mut f = three();
        f.belief(says(0, 1, Some(30), 1_000), at(1));
        f.belief(says(1, 2, Some(10), 1_000), at(1));
        f.stop(&[true; 3], 9_000);
        assert_eq!(f.overlaps().len(), 1);
    }

    /// A crash fault voids the node's belief and ends its leadership then (an overlap with a
    /// leader elected before the crash lasts until the crash, not the stop); its belief no longer
    /// makes it the leader the record shows, and the record lists it as down.
    #[test]
    fn a_crash_ends_the_belief_and_the_leadership() {
        let mut f = three();
        agreed_on_node_0(&mut f);
        f.faults(ActiveFaults { crashed: vec![0], ..ActiveFaults::default() }, 1_050_000);
        f.belief(says(1, 2, Some(10), 1_040_000), at(40));
        f.stop(&[true; 3], 1_100_000);
        assert_eq!(f.overlaps(), ["node-0 (term 1) and node-1 (term 2) believed they led at once for 10 ms"]);
        let mut r = ElectionRecord::blank("e".into(), "bully", Mode::Live);
        f.show(&mut r, None, 7);
        assert_eq!(r.leader.map(|l| l.node), Some("node-1".into()));
        assert_eq!(r.down, [0], "the record says which nodes are down");
    }

    /// The record shows each change as a timeline entry and watch event; a tick that changes
    /// nothing visible adds no event, and the record keeps its leader and its since-time.
    #[test]
    fn the_record_shows_changes_and_ticks_tell_nothing() {
        let mut f = three();
        let mut r = ElectionRecord::blank("e".into(), "bully", Mode::Live);
        let change =
            LeadershipChange { position: 0, node: "node-0".into(), term: 1, leader_id: Some(30), at_ms: 1, node_us: 0 };
        f.belief(says(0, 1, Some(30), 0), at(1));
        let told = f.show(&mut r, Some(change), 100);
        assert!(matches!(told.as_slice(), [WatchEvent::Leadership(c)] if c.term == 1));
        assert_eq!((r.timeline.len(), r.leader_since_ms, r.term, r.agreed), (1, 100, 1, false));
        assert!(f.show(&mut r, None, 200).is_empty());
        assert_eq!((r.timeline.len(), r.leader_since_ms), (1, 100));
        assert_eq!(f.drawn_beliefs().len(), 1);
    }

    /// A kept leadership that cannot agree records at most 100 violations word for word and counts
    /// the rest (a 256-node kept bully on one process recorded thousands, each copied into every
    /// snapshot: GetElection answered 900 KB and the process grew to 2.9 GB).
    #[test]
    fn violations_beyond_the_cap_are_counted_not_kept() {
        let mut c = Capped::default();
        for i in 0..10_000 {
            c.push(format!("two leaders of term {i}"));
        }
        let v = c.to_vec();
        assert_eq!(v.len(), MAX_RECORDED_VIOLATIONS + 1);
        assert_eq!(v[99], "two leaders of term 99");
        assert_eq!(v[100], "... and 9900 more of the same kind, not recorded");
        let mut few = Capped::default();
        few.push("one".into());
        assert_eq!(few.to_vec(), ["one"]);
    }

    /// An overlap names every term each node led while it lasted, not only the terms when it began
    /// (it named node-4 "term 1" while node-4 led term 3).
    #[test]
    fn overlap_text_names_every_term_led() {
        let who = BTreeMap::from([(0, BTreeSet::from([2])), (4, BTreeSet::from([1, 3]))]);
        assert_eq!(
            overlap_text(&who, |i| format!("node-{i}"), 120),
            "node-0 (term 2) and node-4 (terms 1 and 3) believed they led at once for 120 ms"
        );
    }
}
