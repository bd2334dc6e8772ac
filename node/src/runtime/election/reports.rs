//! Reporting: the election's report to the controller, its decision and
//! leadership events, its message log and its figures.

use std::sync::{Arc, MutexGuard};

use ringleader_proto::v1 as pb;

use super::{Election, State};
use crate::runtime::reports::Reported;
#[cfg(doc)]
use crate::runtime::reports::Reporter;
use ringleader_core::algo::{Decision, Leadership, Role, TimerId};
use ringleader_core::protocol::TIMER_SLOTS;

impl Reported for Election {
    /// This node's figures now, as a report event; the election may be
    /// queued for a report again from here on.
    fn take_report(&self) -> pb::NodeEvent {
        self.report_queued.store(false, std::sync::atomic::Ordering::Release);
        let status = self.status();
        pb::NodeEvent {
            election_id: status.election_id.clone(),
            position: status.position,
            role: status.role,
            leader_id: status.leader_id,
            status: Some(status),
            ..Default::default()
        }
    }
}

impl Election {
    /// Queue this election's report (one-shot elections; see [`Reporter`]),
    /// once this node has decided: only then can it tell the controller
    /// anything it waits for (its decision, and the figures that show the
    /// election over, which need every node decided), so a node sends a
    /// report or two per election instead of one per step; or once its
    /// state machine failed (`failed`: the controller ends the election).
    pub(super) fn queue_report(self: &Arc<Self>, st: MutexGuard<'_, State>) {
        let due = st.shell.decision().is_some() || st.broken;
        drop(st);
        if due && let Some(r) = &self.reporter {
            r.queue(self, &self.report_queued);
        }
    }

    /// The kept-leadership event that reports belief `l`, held since `at_us`.
    pub(super) fn lead_event(&self, l: Leadership, at_us: u64) -> pb::NodeEvent {
        let role = match l.leader {
            Some(id) if id == self.setup.id => pb::Role::Leader,
            Some(_) => pb::Role::Follower,
            None => pb::Role::Undecided,
        };
        pb::NodeEvent {
            election_id: self.setup.election_id.clone(),
            position: self.setup.position,
            role: role as i32,
            leader_id: l.leader.unwrap_or(0),
            kept: true,
            term: l.term,
            at_us,
            ..Default::default()
        }
    }

    /// The current kept-leadership belief as an event, for a subscriber that
    /// (re)connects after it was announced; `None` for one-shot elections.
    pub(crate) fn current_belief(&self) -> Option<pb::NodeEvent> {
        let st = self.lock();
        if st.closed {
            return None;
        }
        st.shell.leadership().map(|l| self.lead_event(l, st.belief_since_us))
    }

    /// This node's message log (`disabled` when the election keeps none).
    pub(crate) fn messages(&self) -> pb::MessageLog {
        match &self.lock().log {
            Some(log) => (**log).clone(),
            None => pb::MessageLog { disabled: true, ..Default::default() },
        }
    }

    /// This node's figures in the election.
    pub(crate) fn status(&self) -> pb::NodeElectionStatus {
        let st = self.lock();
        let mut errors = st.errors.clone();
        if st.errors_dropped > 0 {
            errors.push(format!("... and {} more error(s)", st.errors_dropped));
        }
        pb::NodeElectionStatus {
            election_id: self.setup.election_id.clone(),
            position: self.setup.position,
            role: role_of(st.shell.decision()) as i32,
            leader_id: st.shell.decision().map_or(0, |d| d.leader),
            sent_by_kind: st.out.counters().named().map(|(k, v)| (k.to_string(), v)).collect(),
            election_messages: st.out.counters().election_messages,
            notification_messages: st.out.counters().notification_messages,
            bytes: st.out.counters().bytes,
            received: st.received,
            max_causal_time: st.max_causal,
            rejected: st.rejected,
            errors,
            sent_by_port: st.sent_by_port.clone(),
            arrived_by_port: st.arrived_by_port.clone(),
            timers_pending: (0..TIMER_SLOTS)
                .filter(|&t| st.armed[t].is_some_and(|g| st.shell.timer_due(t as TimerId, g)))
                .count() as u32,
            started: st.shell.started(),
            steps: st.steps,
            first_send_us: st.first_send_us,
            decided_us: st.decided_us,
            failed: st.broken,
        }
    }
}

pub(super) fn role_of(d: Option<Decision>) -> pb::Role {
    match d.map(|d| d.role) {
        None => pb::Role::Undecided,
        Some(Role::Leader) => pb::Role::Leader,
        Some(Role::Follower) => pb::Role::Follower,
    }
}
