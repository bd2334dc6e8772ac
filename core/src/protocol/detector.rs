//! The heartbeat failure detector's settings, which the kept algorithms
//! derive their timeouts from and every driver passes on; the detector itself
//! is [`crate::algo::detector`].

/// Longest suspicion timeout accepted: a day (timers of a day or more are
/// a mistake, and would overflow clock arithmetic far beyond).
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// Why [`DetectorConfig::validate`] refused settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DetectorError {
    /// A period of 0.
    #[error("detector period must be positive")]
    NoPeriod,
    /// A timeout above [`MAX_TIMEOUT_MS`].
    #[error("detector timeout ({timeout_ms} ms) must be at most a day ({MAX_TIMEOUT_MS} ms)")]
    TimeoutOverADay {
        /// The timeout refused.
        timeout_ms: u64,
    },
    /// A timeout shorter than the period.
    #[error("detector timeout ({timeout_ms} ms) must be at least its period ({period_ms} ms)")]
    TimeoutUnderPeriod {
        /// The timeout refused.
        timeout_ms: u64,
        /// The period.
        period_ms: u64,
    },
}

/// Heartbeat period and suspicion timeout, in milliseconds (virtual ones in
/// the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DetectorConfig {
    /// A heartbeat goes to every neighbour this often.
    pub period_ms: u64,
    /// A neighbour silent this long is suspected (at most one period later).
    pub timeout_ms: u64,
}

impl DetectorConfig {
    /// Loopback and a single host: delays well under a millisecond, so four
    /// missed heartbeats mean trouble.
    pub const LOOPBACK: DetectorConfig = DetectorConfig { period_ms: 50, timeout_ms: 200 };
    /// A Kubernetes cluster: pod-to-pod round trips of a few ms, but CPU
    /// throttling and stop-the-world pauses of hundreds of ms happen; ten
    /// times the loopback settings.
    pub const KUBERNETES: DetectorConfig = DetectorConfig { period_ms: 500, timeout_ms: 2_000 };

    /// A positive period and a timeout of at least one period, at most a day.
    pub fn validate(&self) -> Result<(), DetectorError> {
        let DetectorConfig { period_ms, timeout_ms } = *self;
        if period_ms == 0 {
            return Err(DetectorError::NoPeriod);
        }
        if timeout_ms > MAX_TIMEOUT_MS {
            return Err(DetectorError::TimeoutOverADay { timeout_ms });
        }
        if timeout_ms < period_ms {
            return Err(DetectorError::TimeoutUnderPeriod { timeout_ms, period_ms });
        }
        Ok(())
    }

    /// Ticks of silence after which a neighbour is suspected: ⌈timeout/period⌉ + 1.
    pub(crate) fn suspect_after(&self) -> u32 {
        (self.timeout_ms.div_ceil(self.period_ms.max(1)) + 1).min(u32::MAX as u64) as u32
    }
}

impl Default for DetectorConfig {
    /// [`DetectorConfig::LOOPBACK`].
    fn default() -> Self {
        DetectorConfig::LOOPBACK
    }
}
