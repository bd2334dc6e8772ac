//! Overlaps of self-believed leaders, judged on the nodes' own clocks: the
//! controller's judge of a LIVE kept leadership, and the SIMULATED verdict's
//! ([`super::KeptVerdict`], on the simulator's one virtual clock).
//!
//! Each node reports when each kept belief took effect (`NodeEvent.at_us`,
//! its clock). A node's leadership is an interval of its clock, from the
//! belief that it leads a term to the next belief; two intervals of two
//! nodes that intersect are an overlap (two nodes believed they led at once),
//! reported with the intersection's length. A pair is judged as soon as it
//! intersects: a running (open) interval up to the latest time the
//! controller has heard from its node ([`Leaderships::running`]: now, for a
//! node whose stream is connected and that is not paused; for a paused one
//! the pause's start), and again when it closes, each pair of intervals
//! being one finding whose length is updated, never counted twice. Only
//! what the controller heard is judged: a node
//! whose event stream broke (its process exited, was paused, or its host was
//! cut off from the controller; an external node that leaves the controller's
//! pulse unanswered for the detector timeout breaks it) has its interval
//! closed when it was last heard, and what it reports of the time it was not
//! heard is left unjudged: a paused leader's frozen belief is no overlap,
//! and an overlap by a node the controller could not hear is not seen.
//!
//! A paused node (an injected pause: its process answers the controller,
//! its elections take no step) acts on nothing, so the time it was paused is
//! no part of its leadership: each node reports its pause's start and end
//! on its own clock (`NodeEvent.paused_from_us`, `paused_until_us`) and the
//! paused stretches of either node are taken out of an intersection. A
//! pause of 0.35 s and one of 3 s are judged alike: whatever its length, the
//! paused leader overlaps only for what it did after it resumed.
//!
//! The clocks of different hosts differ by their offset; on one host (the
//! embedded cluster, containers) they are one clock.

use std::collections::{HashMap, VecDeque};

/// Closed intervals kept to compare later ones with (a kept leadership that
/// runs for days keeps the most recent).
pub const KEPT_INTERVALS: usize = 1_000;

/// Two nodes that believed they led at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    /// The two nodes (positions) and the term each led.
    pub who: [(usize, u64); 2],
    /// How long, in microseconds (0: a finding withdrawn, a pause report
    /// having shown the nodes did not both act).
    pub us: u64,
    /// When each of the two intervals began (with `who`, the finding's key:
    /// a later judgement of the same pair updates it).
    pub since: [u64; 2],
}

/// A pair of intervals: (node, term, from) each, the lower node first.
type Pair = [(usize, u64, u64); 2];

/// Every node's leadership intervals (see the module docs).
#[derive(Debug, Default)]
pub struct Leaderships {
    /// Per node: the term it leads and since when (its clock), if it leads.
    open: Vec<Option<(u64, u64)>>,
    /// (node, term, from, to), oldest first.
    closed: VecDeque<(usize, u64, u64, u64)>,
    /// Per node: the stretches it was paused (its clock), oldest first.
    pauses: Vec<VecDeque<(u64, u64)>>,
    /// What each pair of intervals was last judged to overlap by (µs).
    judged: HashMap<Pair, u64>,
    /// Per node: the end its last interval was given by [`Leaderships::ended`]
    /// (a crash or a broken stream seen by the controller), until the node
    /// reports again: an upper bound its own late report may lower.
    ended_at: Vec<Option<u64>>,
}

impl Leaderships {
    /// For `n` nodes, none leading.
    pub fn new(n: usize) -> Self {
        Leaderships {
            open: vec![None; n],
            closed: VecDeque::new(),
            pauses: vec![VecDeque::new(); n],
            judged: HashMap::new(),
            ended_at: vec![None; n],
        }
    }

    /// Judge every open interval up to what is heard of its node: `heard(i)`
    /// is the latest time (µs) the controller heard node `i` (`None`: not
    /// heard now, left unjudged). The findings new or changed since.
    pub fn running(&mut self, heard: impl Fn(usize) -> Option<u64>) -> Vec<Overlap> {
        let mut found = Vec::new();
        for i in 0..self.open.len() {
            let (Some((term, from)), Some(to_i)) = (self.open[i], heard(i)) else { continue };
            for j in (i + 1)..self.open.len() {
                let (Some((term_j, from_j)), Some(to_j)) = (self.open[j], heard(j)) else { continue };
                found.extend(self.judge((i, term, from, to_i), (j, term_j, from_j, to_j)));
            }
            let closed: Vec<_> = self.closed.iter().copied().filter(|&(j, ..)| j != i).collect();
            for c in closed {
                found.extend(self.judge((i, term, from, to_i), c));
            }
        }
        found
    }

    /// Judge intervals `a` and `b` ((node, term, from, to)): the finding, if
    /// its length is new.
    fn judge(&mut self, a: (usize, u64, u64, u64), b: (usize, u64, u64, u64)) -> Option<Overlap> {
        let (a, b) = if a.0 < b.0 { (a, b) } else { (b, a) };
        let us = self.acting(a.0, b.0, a.2.max(b.2), a.3.min(b.3));
        let pair = [(a.0, a.1, a.2), (b.0, b.1, b.2)];
        let before = self.judged.get(&pair).copied().unwrap_or(0);
        if us == before {
            return None;
        }
        self.judged.insert(pair, us);
        Some(Overlap { who: [(a.0, a.1), (b.0, b.1)], us, since: [a.2, b.2] })
    }

    /// Node `i` was paused from `from_us` to `until_us` (its clock): no
    /// part of its leadership. Reported as it resumes, before the beliefs
    /// its resumed steps take, so it comes before the interval it cuts
    /// closes.
    pub fn paused(&mut self, i: usize, from_us: u64, until_us: u64) {
        let Some(p) = self.pauses.get_mut(i) else { return };
        p.push_back((from_us, until_us.max(from_us)));
        if p.len() > KEPT_INTERVALS {
            p.pop_front();
        }
    }

    /// How long nodes `i` and `j` both acted within `lo..hi`: the span less
    /// the stretches either was paused.
    fn acting(&self, i: usize, j: usize, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return 0;
        }
        let mut cuts: Vec<(u64, u64)> = self.pauses[i]
            .iter()
            .chain(&self.pauses[j])
            .map(|&(a, b)| (a.max(lo), b.min(hi)))
            .filter(|(a, b)| a < b)
            .collect();
        cuts.sort_unstable();
        let (mut paused, mut reach) = (0, lo);
        for (a, b) in cuts {
            let a = a.max(reach);
            if b > a {
                paused += b - a;
                reach = b;
            }
        }
        (hi - lo) - paused
    }

    /// Node `i` holds a new belief since `at_us`: it leads term `leads`
    /// (`None`: it does not lead). The overlaps the interval it closes makes.
    ///
    /// A report that comes after [`Leaderships::ended`] closed the node's
    /// interval, stamped before that end (the node stepped down, then was
    /// stopped, and its report was still on the way when the stop was
    /// seen), moves the end back to the report: the node's own clock says
    /// when its belief ended; the stop only bounds it.
    pub fn belief(&mut self, i: usize, leads: Option<u64>, at_us: u64) -> Vec<Overlap> {
        let Some(slot) = self.open.get(i).copied() else { return Vec::new() };
        match self.ended_at[i].take() {
            Some(end) if slot.is_none() && at_us < end => {
                let mut found = self.shorten(i, at_us);
                // A late report that it led: an interval, but one that ended by `end` too.
                if let Some(term) = leads {
                    self.open[i] = Some((term, at_us));
                    found.extend(self.close(i, end));
                }
                self.ended_at[i] = Some(end);
                found
            }
            _ => self.believe(i, slot, leads, at_us),
        }
    }

    fn believe(&mut self, i: usize, slot: Option<(u64, u64)>, leads: Option<u64>, at_us: u64) -> Vec<Overlap> {
        match (slot, leads) {
            (Some((term, _)), Some(t)) if term == t => Vec::new(),
            (Some(_), _) => {
                let found = self.close(i, at_us);
                self.open[i] = leads.map(|t| (t, at_us));
                found
            }
            (None, _) => {
                self.open[i] = leads.map(|t| (t, at_us));
                Vec::new()
            }
        }
    }

    /// Node `i`'s process (or incarnation) ended by `at_us`: its leadership, if any, ended too.
    pub fn ended(&mut self, i: usize, at_us: u64) -> Vec<Overlap> {
        if !self.open.get(i).is_some_and(Option::is_some) {
            return Vec::new();
        }
        let found = self.close(i, at_us);
        self.ended_at[i] = self.closed.back().map(|&(.., to)| to);
        found
    }

    /// Node `i`'s last interval, if it closed after `at_us`, ended by the
    /// node's own report at `at_us` instead: judged again with the earlier
    /// end (a finding that no longer holds comes back with 0 µs).
    fn shorten(&mut self, i: usize, at_us: u64) -> Vec<Overlap> {
        let Some(k) = self.closed.iter().rposition(|&(j, ..)| j == i) else { return Vec::new() };
        let (_, term, from, end) = self.closed[k];
        let to = at_us.max(from);
        if to >= end {
            return Vec::new();
        }
        self.closed[k].3 = to;
        let others: Vec<_> = self.closed.iter().copied().filter(|&(j, ..)| j != i).collect();
        let open: Vec<_> = (0..self.open.len())
            .filter(|&j| j != i)
            .filter_map(|j| self.open[j].map(|(t, f)| (j, t, f, to.max(f))))
            .collect();
        let interval = (i, term, from, to);
        others.into_iter().chain(open).filter_map(|c| self.judge(interval, c)).collect()
    }

    /// Close every open interval of the nodes `heard` says are heard now,
    /// at `now_us` (the leadership is stopped); the others are left unjudged.
    pub fn finish(&mut self, now_us: u64, heard: impl Fn(usize) -> bool) -> Vec<Overlap> {
        let mut found = Vec::new();
        for i in 0..self.open.len() {
            if heard(i) {
                found.extend(self.ended(i, now_us));
            }
        }
        found
    }

    fn close(&mut self, i: usize, to: u64) -> Vec<Overlap> {
        let Some((term, from)) = self.open[i].take() else { return Vec::new() };
        let to = to.max(from);
        let others: Vec<_> = self.closed.iter().copied().filter(|&(j, ..)| j != i).collect();
        let found = others.into_iter().filter_map(|c| self.judge((i, term, from, to), c)).collect();
        self.closed.push_back((i, term, from, to));
        if self.closed.len() > KEPT_INTERVALS
            && let Some((j, term_j, from_j, _)) = self.closed.pop_front()
        {
            self.judged.retain(|pair, _| !pair.contains(&(j, term_j, from_j)));
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leader cut off from the controller that stepped down before another node led (what its
    /// backlog says when heard again) overlaps nobody, however late it is heard; one that stepped
    /// down after the other began overlaps it by exactly the difference.
    #[test]
    fn overlaps_are_judged_on_the_nodes_clocks() {
        let mut l = Leaderships::new(3);
        assert!(l.belief(2, Some(1), 100).is_empty());
        // node 1 leads term 2 from 5_000, and steps down at 9_000, while node 2 is not heard.
        assert!(l.belief(1, Some(2), 5_000).is_empty());
        assert!(l.belief(1, None, 9_000).is_empty(), "node 2's interval is still open: unjudged");
        // Heard again: node 2 had stepped down at 4_000.
        assert_eq!(l.belief(2, None, 4_000), []);

        let mut l = Leaderships::new(3);
        l.belief(2, Some(1), 100);
        l.belief(1, Some(2), 5_000);
        assert_eq!(l.belief(2, None, 5_600), []);
        assert_eq!(l.belief(1, None, 8_000), [Overlap { who: [(1, 2), (2, 1)], us: 600, since: [5_000, 100] }]);
    }

    /// A new term of the same node closes the old interval and opens another; the same term again
    /// changes nothing; a process that ended closes its interval then; `finish` judges only the
    /// nodes heard now.
    #[test]
    fn terms_restarts_and_the_end() {
        let mut l = Leaderships::new(2);
        l.belief(0, Some(1), 10);
        assert!(l.belief(0, Some(1), 20).is_empty());
        l.belief(0, Some(3), 30);
        l.belief(1, Some(2), 25);
        // Node 0 restarted: its term 3 ended when its stream broke, at 40.
        assert!(l.ended(0, 40).is_empty(), "node 1's interval is open");
        assert_eq!(
            l.finish(100, |i| i == 1),
            [
                Overlap { who: [(0, 1), (1, 2)], us: 5, since: [10, 25] },
                Overlap { who: [(0, 3), (1, 2)], us: 10, since: [30, 25] }
            ]
        );
        assert!(l.ended(1, 200).is_empty(), "closed once");
    }

    /// A leader that stepped down (handing over) and was then stopped, its report of stepping
    /// down still on the way when the stop was seen: the stop closes its interval at the stop, a
    /// finding against the successor, and the late report moves the end back to the node's own
    /// time, withdrawing the finding (0 µs). A report later than the stop changes nothing; a late
    /// report that it led again ends by the stop too. Failed before: the stop's end stood, and CI
    /// saw "believed they led at once for 0 ms" after a planned stop.
    #[test]
    fn a_late_report_moves_a_stopped_nodes_end_back() {
        let mut l = Leaderships::new(2);
        l.belief(0, Some(2), 0);
        l.belief(1, Some(3), 1_500);
        assert!(l.ended(0, 1_800).is_empty(), "node 1's interval is open: judged while running");
        let heard = |i: usize| (i == 1).then_some(2_000);
        assert_eq!(l.running(heard), [Overlap { who: [(0, 2), (1, 3)], us: 300, since: [0, 1_500] }]);
        assert_eq!(l.belief(0, None, 1_000), [Overlap { who: [(0, 2), (1, 3)], us: 0, since: [0, 1_500] }]);
        assert!(l.running(heard).is_empty(), "withdrawn for good");
        assert!(l.belief(0, None, 1_200).is_empty(), "reported again: nothing to move");

        let mut l = Leaderships::new(2);
        l.belief(0, Some(2), 0);
        l.belief(1, Some(3), 1_500);
        l.ended(0, 1_800);
        assert!(l.belief(0, None, 1_900).is_empty(), "a report after the stop: the stop's end stands");
        assert_eq!(l.finish(2_000, |_| true), [Overlap { who: [(0, 2), (1, 3)], us: 300, since: [0, 1_500] }]);

        let mut l = Leaderships::new(2);
        l.belief(1, Some(3), 1_500);
        l.belief(0, Some(2), 0);
        l.ended(0, 1_000);
        l.belief(0, None, 900);
        assert_eq!(l.belief(0, Some(4), 950), [], "led term 4 from 950 to the stop at 1,000: before node 1 began");
        assert_eq!(l.finish(2_000, |_| true), []);
    }

    /// The judge of a paused leader: node 0 leads term 1, pauses at 1 s, node 1 leads term 2 from
    /// 1.2 s, and node 0 resumes and steps down 5 ms after its pause ends. A pause of 0.35 s and one
    /// of 3 s give the same verdict, an overlap of the 5 ms node 0 acted after it resumed (the old
    /// judge counted the paused time too: 155 ms and 1,805 ms). Without its pause report the whole
    /// stretch counts.
    #[test]
    fn a_pause_is_no_part_of_a_leadership_whatever_its_length() {
        let judge = |pause_us: u64, reported: bool| {
            let mut l = Leaderships::new(2);
            l.belief(0, Some(1), 0);
            l.belief(1, Some(2), 1_200_000);
            if reported {
                l.paused(0, 1_000_000, 1_000_000 + pause_us);
            }
            let mut found = l.belief(0, None, 1_000_000 + pause_us + 5_000);
            found.extend(l.finish(5_000_000, |_| true));
            found
        };
        let five_ms = [Overlap { who: [(0, 1), (1, 2)], us: 5_000, since: [0, 1_200_000] }];
        assert_eq!(judge(350_000, true), five_ms);
        assert_eq!(judge(3_000_000, true), five_ms);
        assert_eq!(judge(350_000, false), [Overlap { who: [(0, 1), (1, 2)], us: 155_000, since: [0, 1_200_000] }]);
    }

    /// Running leaderships are judged up to what is heard of both nodes, so an overlap shows as soon
    /// as it happened: node 0 leads term 1 from 0 and node 1 term 2 from 100, both heard up to 150:
    /// an overlap of 50 at once, not again while nothing new is heard; heard up to 180, the same
    /// finding grows to 80; node 0 stops at 200 and node 1 is heard to 300: 100; node 1 stopping then
    /// adds no second finding. Node 2, not heard, is not judged. Failed before: nothing was found
    /// until both intervals closed.
    #[test]
    fn running_leaderships_are_judged_up_to_what_is_heard() {
        let mut l = Leaderships::new(3);
        l.belief(0, Some(1), 0);
        l.belief(1, Some(2), 100);
        l.belief(2, Some(3), 120);
        let heard = |to: u64| move |i: usize| (i < 2).then_some(to);
        let found = |us| [Overlap { who: [(0, 1), (1, 2)], us, since: [0, 100] }];
        assert_eq!(l.running(heard(150)), found(50));
        assert!(l.running(heard(150)).is_empty(), "judged once");
        assert_eq!(l.running(heard(180)), found(80), "the same finding, grown");
        assert!(l.belief(0, None, 200).is_empty());
        assert_eq!(l.running(heard(300)), found(100));
        assert!(l.belief(1, None, 300).is_empty(), "no double count at the close");
    }
}
