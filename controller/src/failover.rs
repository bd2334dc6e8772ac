//! Failover figures of a kept leadership, as the controller sees them live:
//! for each loss of the agreed leader, how long until a
//! live node noticed (detection), how long until every live node agreed on a
//! new leader (agreement), and how many election messages that took.
//!
//! [`Tracker`] is pure: the keep loop of [`crate::elections`] feeds it, in
//! arrival order and with the controller's clock, the beliefs nodes report,
//! whether the agreed leader is still live, and each new agreement. It knows
//! nothing of gRPC; the message counts are read from every node by the loop
//! (at the loss and at agreement, whatever the faults: a node cut off at the
//! loss still sends), which fills [`FailoverRecord::messages`] in afterwards.
//!
//! **What "lost" means.** The controller cannot see a crash happen. It
//! counts the leader lost at the first moment it *knows*: an injected
//! `crash` fault applied to the leader's node, or the node's event stream
//! breaking (its process died or its host became unreachable: SIGKILL, a
//! pod deleted, a cut link to the controller; a process that stops answering
//! the controller's pulse for the detector timeout, paused or overloaded,
//! breaks it too), dated when the node was last heard (or, if that was
//! earlier, when its leadership was agreed), an injected partition that
//! leaves the leader in a group of at most half the cluster (then the nodes
//! so cut off take no part in the figures: agreement is the majority's), or
//! the leader itself announcing that it names no leader (it stepped down: a
//! Chubby-style lease it could not renew). A leader cut off from its peers
//! by a partition the controller did not inject is not lost to the
//! controller; then the figures count from the first change of belief.
//!
//! **Detection** is the first change of belief of a live node after the
//! loss: its failure detector fired, or it heard of an election. **Agreement**
//! is the first moment every live node names one live leader other than the
//! lost one (or the same node with a higher term, after it recovered).
//!
//! **A leader back in its own term.** A lost leader that every live node
//! names again in the term it led (its node was taken as down a moment, a
//! pulse left unanswered by an overloaded host, and is heard again) is no new
//! leadership: its failover stays open and the leader is followed again, so
//! that its next loss (a real pause or crash) dates the failover afresh, with
//! its own detection, rather than going unseen.
//!
//! Each loss has its [`Cause`], in the words records and pages show.

pub use crate::record::FailoverRecord;
use crate::record::LeaderInfo;
use ringleader_core::failover::Cause;

/// What the tracker tells the loop to do after an observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Nothing.
    None,
    /// A failover opened: snapshot the message counters now (record index).
    Opened(usize),
    /// A failover closed: snapshot the counters again (record index).
    Closed(usize),
}

/// Follows the agreed leader and records every loss of it.
#[derive(Debug, Default)]
pub struct Tracker {
    /// The agreed leader and term.
    held: Option<(LeaderInfo, u64)>,
    /// Since when it is held (agreed, or back in its own term).
    held_since_ms: u64,
    /// Index of the failover still waiting for agreement.
    open: Option<usize>,
    records: Vec<FailoverRecord>,
}

impl Tracker {
    /// A tracker with no leader yet.
    pub fn new() -> Self {
        Tracker::default()
    }

    /// Every failover so far (the last may still be open).
    pub fn records(&self) -> &[FailoverRecord] {
        &self.records
    }

    /// Fill in the messages of record `i` (measured by the caller).
    pub fn set_messages(&mut self, i: usize, messages: u64) {
        if let Some(r) = self.records.get_mut(i) {
            r.messages = Some(messages);
        }
    }

    /// The agreed leader is gone (not live) at `now_ms`, for `cause`. Opens
    /// a failover unless no leader was agreed, or one is open and its leader
    /// did not come back. A failover whose leader came back in its own term
    /// (see [`Tracker::agreed`]) is opened again by this later loss: it is
    /// dated here and detected afresh, as if the earlier loss had not been.
    pub fn leader_lost(&mut self, now_ms: u64, cause: Cause) -> Mark {
        let Some((leader, term)) = self.held.take() else { return Mark::None };
        if let Some(i) = self.open {
            let r = &mut self.records[i];
            (r.lost_at_ms, r.cause, r.detection_ms) = (now_ms, cause, None);
            return Mark::Opened(i);
        }
        self.records.push(FailoverRecord {
            leader,
            term,
            cause,
            lost_at_ms: now_ms,
            detection_ms: None,
            agreement_ms: None,
            new_leader: None,
            messages: None,
        });
        self.open = Some(self.records.len() - 1);
        Mark::Opened(self.records.len() - 1)
    }

    /// The agreed leader, if any, at position `position`.
    pub fn held_position(&self) -> Option<u32> {
        self.held.as_ref().map(|(l, _)| l.position)
    }

    /// Since when the agreed leadership is held, if one is: a loss learnt
    /// late is dated no earlier (what came before is the election that
    /// agreed it, no reaction to the loss).
    pub fn held_since(&self) -> Option<u64> {
        self.held.as_ref().map(|_| self.held_since_ms)
    }

    /// The term of the agreed leadership, if any.
    pub fn held_term(&self) -> Option<u64> {
        self.held.as_ref().map(|&(_, t)| t)
    }

    /// A live node announced a belief at `now_ms`: the first one after a
    /// loss that no longer names the lost leader in its term is the detection.
    pub fn belief(&mut self, now_ms: u64, term: u64, leader_id: Option<u64>) {
        let Some(i) = self.open else { return };
        let r = &mut self.records[i];
        if r.detection_ms.is_none() && (term, leader_id) != (r.term, Some(r.leader.id)) {
            r.detection_ms = Some(now_ms.saturating_sub(r.lost_at_ms));
        }
    }

    /// Every live node agrees on `leader` in `term` at `now_ms`. Closes the
    /// open failover if this is a new leadership.
    pub fn agreed(&mut self, now_ms: u64, leader: LeaderInfo, term: u64) -> Mark {
        if self.held.as_ref().is_some_and(|(l, t)| l.position == leader.position && *t == term) {
            return Mark::None;
        }
        let mark = match self.open.take() {
            Some(i) => {
                let r = &mut self.records[i];
                if (leader.position, term) == (r.leader.position, r.term) {
                    // The lost leader is back in its own term (its node came back): not a new
                    // leadership. The failover stays open, and the leader is held again, so that
                    // its next loss is seen (and dates the failover) rather than lost in this one.
                    self.open = Some(i);
                    (self.held, self.held_since_ms) = (Some((leader, term)), now_ms);
                    return Mark::None;
                }
                let since = now_ms.saturating_sub(r.lost_at_ms);
                r.agreement_ms = Some(since);
                r.detection_ms.get_or_insert(since);
                r.new_leader = Some((leader.clone(), term));
                Mark::Closed(i)
            }
            None => Mark::None,
        };
        (self.held, self.held_since_ms) = (Some((leader, term)), now_ms);
        mark
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(position: u32) -> LeaderInfo {
        LeaderInfo { node: format!("node-{}", position + 1), id: position as u64 + 1, position }
    }

    /// A loss of the agreed leader opens a failover; the first live belief that no longer names it is
    /// the detection, the next agreement on another node closes it with both durations and the new leader.
    #[test]
    fn a_crash_is_detected_then_agreed() {
        let mut t = Tracker::new();
        assert_eq!(t.agreed(100, node(4), 1), Mark::None, "the first leader is no failover");
        assert_eq!(t.held_position(), Some(4));
        assert_eq!(t.leader_lost(1_000, Cause::CrashFault), Mark::Opened(0));
        assert_eq!(t.leader_lost(1_010, Cause::CrashFault), Mark::None, "one failover at a time");
        t.belief(1_050, 1, Some(5));
        assert_eq!(t.records()[0].detection_ms, None, "still names the lost leader");
        t.belief(1_250, 1, None);
        t.belief(1_300, 2, Some(4));
        assert_eq!(t.agreed(1_400, node(3), 2), Mark::Closed(0));
        let r = &t.records()[0];
        assert_eq!((r.detection_ms, r.agreement_ms), (Some(250), Some(400)));
        assert_eq!(r.new_leader, Some((node(3), 2)));
        assert_eq!((r.term, r.cause, r.leader.position), (1, Cause::CrashFault, 4));
        t.set_messages(0, 12);
        assert_eq!(t.records()[0].messages, Some(12));
    }

    /// Without an agreed leader nothing opens; a change of leader without a loss (a better node took over)
    /// records no failover; the lost leader agreeing again in its own term keeps the failover open.
    #[test]
    fn only_losses_of_an_agreed_leader_count() {
        let mut t = Tracker::new();
        assert_eq!(t.leader_lost(10, Cause::Unreachable), Mark::None);
        t.agreed(20, node(1), 1);
        assert_eq!(t.agreed(30, node(2), 2), Mark::None);
        assert!(t.records().is_empty());
        assert_eq!(t.leader_lost(40, Cause::Unreachable), Mark::Opened(0));
        assert_eq!(t.agreed(50, node(2), 2), Mark::None, "its own term again");
        assert_eq!(t.records()[0].agreement_ms, None);
        assert_eq!(t.agreed(90, node(2), 3), Mark::Closed(0), "the same node, re-elected in a higher term");
        assert_eq!(t.records()[0].agreement_ms, Some(50));
        assert_eq!(t.records()[0].detection_ms, Some(50), "agreement implies detection");
    }

    /// A leader lost (its node taken as down a moment) and agreed again in its own term is held
    /// again: its next loss dates the open failover afresh, detection included, and the next
    /// agreement closes it with that loss's figures. Before, the tracker held no leader after the
    /// return: the next loss opened nothing, and the failover kept the first loss's date and
    /// detection (a paused leader's failover read "lost at 5 ms, detection 0").
    #[test]
    fn a_leader_back_in_its_own_term_is_lost_again_at_its_next_loss() {
        let mut t = Tracker::new();
        t.agreed(10, node(1), 1);
        assert_eq!(t.leader_lost(5, Cause::Unreachable), Mark::Opened(0));
        t.belief(5, 0, None);
        assert_eq!(t.records()[0].detection_ms, Some(0), "an early belief detected the first loss");
        assert_eq!(t.agreed(1_500, node(1), 1), Mark::None, "back in its own term: no new leadership");
        assert_eq!(t.held_position(), Some(1), "held again");
        assert_eq!(t.agreed(1_600, node(1), 1), Mark::None);
        assert_eq!(t.leader_lost(3_000, Cause::Unreachable), Mark::Opened(0), "the failover opens again");
        let r = &t.records()[0];
        assert_eq!((r.lost_at_ms, r.detection_ms, r.cause), (3_000, None, Cause::Unreachable));
        t.belief(3_900, 1, None);
        assert_eq!(t.agreed(4_000, node(2), 2), Mark::Closed(0));
        assert_eq!(t.records().len(), 1);
        let r = &t.records()[0];
        assert_eq!((r.detection_ms, r.agreement_ms), (Some(900), Some(1_000)));
        assert_eq!(r.new_leader, Some((node(2), 2)));
    }
}
