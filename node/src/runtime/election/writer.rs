//! Fencing writes: a kept leadership's leader writes to the controller's
//! modelled resource (`Election.fencing`), reported as a `NodeEvent` with
//! its token (the term it leads) and its sending time. It writes when it
//! comes to lead, then every detector period while it still leads and is
//! neither paused nor crashed, and once on resuming from a pause if it still
//! leads after its deferred timers (before it reads what it held), as the
//! simulator's model does (`ringleader_core::fencing`).

use std::sync::Arc;

use ringleader_core::algo::Leadership;
use ringleader_proto::v1 as pb;

use super::{Election, State};

/// What a kept leadership's node keeps for its writes.
#[derive(Debug, Default)]
pub(super) struct Writer {
    /// The detector period, ms: the time between writes (0: no writes, a one-shot election).
    pub(super) period_ms: u64,
    /// The term this node leads and writes for, if it leads.
    pub(super) leading: Option<u64>,
    /// Bumped at each new leadership: an older ticker stops.
    pub(super) generation: u64,
}

impl Election {
    /// Writes every `period_ms` while this node leads (kept leaderships).
    pub(crate) fn set_write_ms(&self, period_ms: u64) {
        self.lock().writer.period_ms = period_ms;
    }

    /// The node's belief is now `belief`: if it came to lead, write at once
    /// and start the ticker; if it stopped, the ticker stops at its next tick.
    pub(super) fn belief_writes(self: &Arc<Self>, st: &mut State, belief: Option<Leadership>) {
        let leads = belief.filter(|l| l.leader == Some(self.setup.id)).map(|l| l.term);
        if st.writer.period_ms == 0 || leads == st.writer.leading {
            return;
        }
        st.writer.leading = leads;
        st.writer.generation += 1;
        let Some(term) = leads else { return };
        self.write(term);
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let (weak, generation, period) = (Arc::downgrade(self), st.writer.generation, st.writer.period_ms);
        let clock = self.setup.faults.clock();
        rt.spawn(async move {
            loop {
                crate::runtime::faults::sleep_by_clock(period, clock.clone()).await;
                let Some(election) = weak.upgrade() else { return };
                let st = election.lock();
                if st.closed || st.writer.generation != generation || st.writer.leading != Some(term) {
                    return;
                }
                drop(st);
                // A paused or crashed node takes no step, so it writes nothing.
                if !election.setup.faults.paused() && !election.setup.faults.crashed() {
                    election.write(term);
                }
            }
        });
    }

    /// The node resumes from a pause, its deferred timers fired: if it still
    /// leads, it writes before it reads the input it held.
    pub(super) fn resume_write(&self, st: &State) {
        if let Some(term) = st.writer.leading.filter(|_| st.writer.period_ms > 0 && !st.closed) {
            self.write(term);
        }
    }

    /// Report a write with `token`, sent now.
    fn write(&self, token: u64) {
        let _ = self.events.send(Arc::new(pb::NodeEvent {
            election_id: self.setup.election_id.clone(),
            position: self.setup.position,
            kept: true,
            write_token: token,
            write_at_us: crate::runtime::faults::unix_us().max(1),
            ..Default::default()
        }));
    }
}
