//! When a running kept leadership's diagram is redrawn: after something
//! changed (a belief, a fault), once the burst has settled, at most every
//! [`EVERY`], and once more [`EVERY`] after a redraw, for the messages a
//! failover sends after its last change of belief. Pure: the caller passes
//! the clock.

use std::time::{Duration, Instant};

/// How long after a change the picture waits for the burst to settle.
pub(super) const SETTLE: Duration = Duration::from_millis(300);
/// The least time between two redraws.
pub(super) const EVERY: Duration = Duration::from_secs(2);

/// The pacing of the redraws of one kept leadership's diagram.
#[derive(Debug, Default)]
pub(super) struct Sketch {
    /// Since when something changed that the picture does not show.
    dirty_since: Option<Instant>,
    /// When the last redraw started.
    last: Option<Instant>,
    /// The next redraw is the one after a redraw for a change.
    trailing: bool,
}

impl Sketch {
    /// Something changed at `now` (a belief, a fault).
    pub(super) fn changed(&mut self, now: Instant) {
        if self.dirty_since.is_none() || self.trailing {
            self.dirty_since = Some(now);
            self.trailing = false;
        }
    }

    /// Whether to redraw at `now`; when it says so, the redraw is taken as started.
    pub(super) fn due(&mut self, now: Instant) -> bool {
        let Some(since) = self.dirty_since else { return false };
        let settled = now.saturating_duration_since(since) >= SETTLE;
        let spaced = self.last.is_none_or(|l| now.saturating_duration_since(l) >= EVERY);
        if !(settled && spaced) {
            return false;
        }
        self.last = Some(now);
        if self.trailing {
            self.trailing = false;
            self.dirty_since = None;
        } else {
            self.trailing = true;
            self.dirty_since = Some(now);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing is drawn before a change; a change is drawn once it settled, redrawn once
    /// [`EVERY`] later for what came after it, and then not again until the next change.
    #[test]
    fn a_change_is_drawn_when_settled_and_once_more_after() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut s = Sketch::default();
        assert!(!s.due(at(0)), "nothing changed");
        s.changed(at(0));
        assert!(!s.due(at(100)), "not settled");
        assert!(s.due(at(300)));
        assert!(!s.due(at(400)) && !s.due(at(2_000)), "too soon after the last");
        assert!(s.due(at(2_300)), "the trailing redraw");
        assert!(!s.due(at(10_000)), "nothing changed since");
    }

    /// Changes closer than [`EVERY`] are drawn together: a stream of beliefs every 100 ms is
    /// redrawn every two seconds, not every 100 ms.
    #[test]
    fn a_stream_of_changes_is_drawn_every_two_seconds() {
        let t0 = Instant::now();
        let mut s = Sketch::default();
        let mut drawn = Vec::new();
        for ms in (0..6_000).step_by(50) {
            let now = t0 + Duration::from_millis(ms);
            if ms % 100 == 0 {
                s.changed(now);
            }
            if s.due(now) {
                drawn.push(ms);
            }
        }
        assert_eq!(drawn, [300, 2_300, 4_300]);
    }
}
