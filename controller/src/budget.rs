//! Memory admission: the controller admits each election
//! against `controller.memory_budget_mib`, reserving an estimate of the
//! memory it will take at its peak (from its size and algorithm) until it
//! ends, and refuses one whose estimate does not fit beside the running ones
//! with RESOURCE_EXHAUSTED naming the budget. A pod whose budget sits below
//! its memory limit (k8s/: 320 MiB of 512Mi) is then never OOM-killed by the
//! work it accepted.
//!
//! **The estimates** come from measurement: `cargo run --release -p
//! ringleader-core --example memory` reports each algorithm's peak heap per
//! position of a SIMULATED election (docs/containers.md), copied into its
//! catalogue entry (`AlgorithmSpec::heap_bytes_per_position`). On a complete network an algorithm's memory grows
//! with its n² links, so its figure (measured at 2,048 positions) scales
//! with n. The resident memory a process pays for a heap is larger than the
//! heap (allocator pages, fragmentation): [`RSS_FACTOR_PERCENT`] covers it
//! (measured: controlled-distance on 10^6 positions, 336 B of heap and 429 B
//! of RSS per position, 1.28; 1.4 with a margin). A LIVE election costs the controller its record and its
//! bookkeeping ([`LIVE_BYTES`] plus [`LIVE_BYTES_PER_NODE`]); in the embedded
//! cluster its nodes run in the same process and take their share
//! ([`LOCAL_BYTES_PER_LINK`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ringleader_core::spec::{AlgorithmSpec, HEAP_MEASURED_AT};
use ringleader_core::topology::TopologyKind;

use crate::record::Mode;

/// Resident memory per byte of heap (allocator overhead), with a margin.
pub const RSS_FACTOR_PERCENT: u64 = 140;
/// Least heap per position a complete network's estimate takes: the largest of the sparse algorithms'.
const SPARSE_BYTES: u64 = 720;
/// Every election's fixed cost in the controller: its record, plan and task.
pub const LIVE_BYTES: u64 = 256 * 1024;
/// A LIVE election's bookkeeping per node (participants, beliefs, counters).
pub const LIVE_BYTES_PER_NODE: u64 = 4 * 1024;
/// In the embedded cluster a LIVE election's nodes run in the controller's
/// process: per directed link (a port's state, its queue, its counters).
pub const LOCAL_BYTES_PER_LINK: u64 = 2 * 1024;

/// What an election of `spec`'s algorithm on `n` positions of a `kind` overlay, run
/// in `mode`, is estimated to take at its peak, in bytes; `local`: its nodes
/// run in this process (the embedded cluster). Known before its plan is
/// built, so that building the plan is inside its reservation.
pub fn estimate_of(spec: &AlgorithmSpec, mode: Mode, kind: TopologyKind, n: u32, local: bool) -> u64 {
    let n = u64::from(n);
    let complete = matches!(kind, TopologyKind::Complete | TopologyKind::CompleteChordal);
    let links = match kind {
        _ if complete => n * n.saturating_sub(1),
        TopologyKind::Torus => 4 * n,
        TopologyKind::Hypercube => n * u64::from(n.max(2).ilog2()),
        _ => 2 * n,
    };
    let bytes = match mode {
        Mode::Simulated => {
            let per = spec.heap_bytes_per_position;
            // A complete network's figure was measured at HEAP_MEASURED_AT positions and grows with n.
            let per = if complete { (per * n).div_ceil(HEAP_MEASURED_AT).max(SPARSE_BYTES) } else { per };
            LIVE_BYTES + n.saturating_mul(per).saturating_mul(RSS_FACTOR_PERCENT) / 100
        }
        Mode::Live => {
            let nodes = if local { links.saturating_mul(LOCAL_BYTES_PER_LINK) } else { 0 };
            LIVE_BYTES + n * LIVE_BYTES_PER_NODE + nodes
        }
    };
    bytes.max(LIVE_BYTES)
}

/// The memory the running elections have reserved, against a budget.
#[derive(Debug)]
pub struct Budget {
    /// Bytes (0: no budget).
    limit: u64,
    reserved: AtomicU64,
}

/// A reservation, released when dropped (when its election ends).
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<Budget>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.reserved.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

/// An election that does not fit the budget beside the running ones (or at all).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct OverBudget {
    /// What was asked for, in words.
    pub what: String,
    /// Its estimate, bytes.
    pub needed: u64,
    /// Reserved by running elections, bytes.
    pub reserved: u64,
    /// The budget, bytes.
    pub limit: u64,
}

/// The setting an [`OverBudget`] names (its text starts with it).
pub(crate) const OVER_BUDGET_FIELD: &str = "memory_budget_mib";

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1024 * 1024)
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, needed, limit) = (&self.what, mib(self.needed), mib(self.limit));
        if self.needed > self.limit {
            write!(
                f,
                "memory_budget_mib: {what} is estimated to take {needed} MiB at its peak, more than the controller's \
                 whole budget of {limit} MiB (controller.memory_budget_mib); ask for a smaller one (fewer positions, or max_states for a check)"
            )
        } else {
            write!(
                f,
                "memory_budget_mib: {what} is estimated to take {needed} MiB at its peak, and the running elections \
                 and checks have reserved {} MiB of the controller's budget of {limit} MiB (controller.memory_budget_mib); try \
                 again when some have finished, or ask for a smaller one",
                mib(self.reserved)
            )
        }
    }
}

impl Budget {
    /// A budget of `mib` MiB (0: none, everything fits).
    pub fn new(mib: u64) -> Arc<Budget> {
        Arc::new(Budget { limit: mib.saturating_mul(1024 * 1024), reserved: AtomicU64::new(0) })
    }

    /// Bytes reserved now.
    pub fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::SeqCst)
    }

    /// Could `bytes` ever fit (with nothing else reserved)?
    pub fn fits_alone(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), OverBudget> {
        if self.limit == 0 || bytes <= self.limit {
            return Ok(());
        }
        Err(OverBudget { what: what(), needed: bytes, reserved: 0, limit: self.limit })
    }

    /// Reserve `bytes` for `what`, if they fit beside what is reserved.
    pub fn reserve(self: &Arc<Self>, bytes: u64, what: impl FnOnce() -> String) -> Result<Reservation, OverBudget> {
        if self.limit == 0 {
            return Ok(Reservation { budget: self.clone(), bytes: 0 });
        }
        let mut now = self.reserved.load(Ordering::SeqCst);
        loop {
            if now.saturating_add(bytes) > self.limit {
                return Err(OverBudget { what: what(), needed: bytes, reserved: now, limit: self.limit });
            }
            match self.reserved.compare_exchange(now, now + bytes, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Ok(Reservation { budget: self.clone(), bytes }),
                Err(actual) => now = actual,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reservations add up to the budget and no further; dropping one frees its share; a budget
    /// of 0 admits everything; the refusal names the field, the estimate and what is reserved.
    #[test]
    fn reservations_fit_the_budget() {
        let b = Budget::new(10);
        let mib = 1024 * 1024;
        let first = b.reserve(6 * mib, || "first".into()).unwrap();
        let e = b.reserve(5 * mib, || "a SIMULATED as-far of 9 positions".into()).unwrap_err();
        assert_eq!((e.needed, e.reserved, e.limit), (5 * mib, 6 * mib, 10 * mib));
        let text = e.to_string();
        assert!(text.starts_with("memory_budget_mib: a SIMULATED as-far of 9 positions is estimated to take 5 MiB"));
        assert!(text.contains("reserved 6 MiB of the controller's budget of 10 MiB"), "{text}");
        let second = b.reserve(4 * mib, || "second".into()).unwrap();
        assert_eq!(b.reserved(), 10 * mib);
        drop(first);
        assert_eq!(b.reserved(), 4 * mib);
        drop(second);
        assert_eq!(b.reserved(), 0);
        let e = b.fits_alone(11 * mib, || "a SIMULATED bully election of 2048 positions".into()).unwrap_err();
        assert!(e.to_string().contains("11 MiB at its peak, more than the controller's whole budget of 10 MiB"), "{e}");
        assert!(b.fits_alone(10 * mib, || unreachable!()).is_ok());
        let none = Budget::new(0);
        let _all = none.reserve(u64::MAX, || unreachable!()).unwrap();
        assert!(none.reserve(u64::MAX, || unreachable!()).is_ok());
    }
}
