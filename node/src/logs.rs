//! Rate-limited warnings, for what a remote caller can make happen at will
//! (a refused call, a rejected envelope, a failed link): the first is
//! logged, then at most one per [`WARN_INTERVAL`], saying how many were
//! left out since the last one logged. The metrics still count each.
//!
//! ```
//! use ringleader_node::logs::Throttle;
//! use ringleader_node::warn_throttled;
//!
//! static REFUSED: Throttle = Throttle::new(ringleader_node::logs::WARN_INTERVAL);
//! for _ in 0..1_000 {
//!     // Logged once; the next one logged after the interval says `suppressed = 999`.
//!     warn_throttled!(REFUSED, code = "unauthenticated", "refused a call");
//! }
//! ```

use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// At most one warning of a kind per this long.
pub const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// One kind of warning's rate limit: a `static` per call site.
#[derive(Debug)]
pub struct Throttle {
    interval_ms: u64,
    /// When the last one was logged (ms on [`Throttle::now_ms`]'s clock), and how many were left out since.
    state: Mutex<Option<(u64, u64)>>,
}

impl Throttle {
    /// A limit of one warning per `interval`.
    pub const fn new(interval: Duration) -> Throttle {
        Throttle { interval_ms: interval.as_millis() as u64, state: Mutex::new(None) }
    }

    /// Log this one now? `Some(n)`: yes, `n` having been left out since the last one logged.
    pub fn allow(&self) -> Option<u64> {
        self.allow_at(Self::now_ms())
    }

    /// [`Throttle::allow`] at `now_ms` (milliseconds on any clock that does not go back).
    pub fn allow_at(&self, now_ms: u64) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match *state {
            Some((last, ref mut left_out)) if now_ms.saturating_sub(last) < self.interval_ms => {
                *left_out += 1;
                None
            }
            Some((_, left_out)) => {
                *state = Some((now_ms, 0));
                Some(left_out)
            }
            None => {
                *state = Some((now_ms, 0));
                Some(0)
            }
        }
    }

    /// Milliseconds since the first call, on the monotonic clock.
    fn now_ms() -> u64 {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
    }
}

/// `tracing::warn!` through a [`Throttle`]: logged when the throttle allows,
/// with a `suppressed` field counting those left out since the last one.
#[macro_export]
macro_rules! warn_throttled {
    ($throttle:expr, $($rest:tt)+) => {
        if let Some(suppressed) = $throttle.allow() {
            ::tracing::warn!(suppressed, $($rest)+);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first warning is logged; others within the interval are not but counted; the first
    /// after the interval is logged with that count, which starts again from zero.
    #[test]
    fn the_first_then_one_per_interval_with_the_count_left_out() {
        let t = Throttle::new(Duration::from_secs(10));
        assert_eq!(t.allow_at(1_000), Some(0));
        assert_eq!((0..4_999).filter_map(|i| t.allow_at(1_000 + i)).count(), 0);
        assert_eq!(t.allow_at(10_999), None, "still within the interval");
        assert_eq!(t.allow_at(11_000), Some(5_000));
        assert_eq!(t.allow_at(11_001), None);
        assert_eq!(t.allow_at(30_000), Some(1));
        assert_eq!(t.allow_at(50_000), Some(0));
    }
}
