//! What an algorithm that keeps its state in an external store (a lease
//! record in etcd, as Kubernetes' client-go `leaderelection` does) asks of
//! it, and what it gets back. The algorithm stays pure: it pushes
//! [`Effect::Store`](super::Effect::Store) with a [`StoreOp`], and its driver
//! carries it to the store (a real etcd live, a linearizable process in the
//! simulator) and hands the answer back through
//! [`Input::StoreReply`](super::Input::StoreReply).
//!
//! A driver keeps one record per election (the key is the driver's: live,
//! `/ringleader/lease/<election id>`). Its *revision* changes with every
//! write (etcd's `mod_revision`); 0 means there is no record yet. Every
//! operation is tagged with the algorithm's `seq`, so a late answer to an
//! operation the algorithm gave up on is told apart; a driver answers each
//! operation at most once, and may not answer at all (the store is cut off):
//! an algorithm keeps a timer of its own for that.

/// The lease record as an algorithm writes it: who holds it, for how long a
/// holder's renewal keeps it, and how many times it changed hands (client-go's
/// `LeaderElectionRecord`). The duration is the holder's promise: a node
/// that reads the record judges its expiry by it, not by its own setting
/// (client-go's `observedTime + LeaseDurationSeconds`). The acquire and
/// renew times are stamped by the driver from its node's clock when it
/// writes (an algorithm has no clock); nothing in the algorithm reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LeaseRecord {
    /// The holder's id; 0 (no id) when released.
    pub holder: u64,
    /// The holder's lease duration, in ms: how long another node must see
    /// the record unchanged, by its own clock, before it may take it.
    pub duration_ms: u64,
    /// How many times the record changed hands (client-go's `leaderTransitions`).
    pub transitions: u64,
}

/// An operation on the election's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreOp {
    /// Read the record and its revision.
    Get {
        /// The algorithm's tag, returned with the answer.
        seq: u32,
    },
    /// Write `record` if the record's revision is still `expect` (0: only
    /// if there is no record): a compare-and-swap. The answer says whether
    /// it was written and, if not, what the record is now.
    Put {
        /// The algorithm's tag, returned with the answer.
        seq: u32,
        /// The revision the write is conditional on.
        expect: u64,
        /// The record to write.
        record: LeaseRecord,
        /// A new holder takes it (the driver stamps the acquire time too);
        /// otherwise a renewal or a release (only the renew time).
        acquire: bool,
    },
}

impl StoreOp {
    /// The operation's tag.
    pub fn seq(&self) -> u32 {
        match *self {
            StoreOp::Get { seq } | StoreOp::Put { seq, .. } => seq,
        }
    }
}

/// The store's answer to a [`StoreOp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreReply {
    /// The operation took place: `written` says whether a `Put` wrote
    /// (always `false` for a `Get`), and `revision` and `record` are the
    /// record as of the answer (after the write, or as it was when a
    /// compare-and-swap lost; revision 0 and no record: none exists).
    Done {
        /// The operation's tag.
        seq: u32,
        /// A `Put` wrote its record.
        written: bool,
        /// The record's revision.
        revision: u64,
        /// The record, if there is one.
        record: Option<LeaseRecord>,
    },
    /// The store could not be reached or gave an error (live: a timeout, a
    /// refused connection): a `Put` may or may not have been applied.
    Failed {
        /// The operation's tag.
        seq: u32,
    },
}

impl StoreReply {
    /// The tag of the operation answered.
    pub fn seq(&self) -> u32 {
        match *self {
            StoreReply::Done { seq, .. } | StoreReply::Failed { seq } => seq,
        }
    }
}

/// The record a store keeps, with the times its writers stamped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StoredLease {
    /// What the algorithm wrote.
    pub record: LeaseRecord,
    /// When the current holder acquired it (the writer's clock, ms).
    pub acquire_ms: u64,
    /// When it was last renewed (the writer's clock, ms).
    pub renew_ms: u64,
}

/// A linearizable store of one lease record, as the simulator and the model
/// checker keep it: each operation takes effect atomically when it arrives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemStore {
    /// Revision of the record; 0: none written yet.
    pub revision: u64,
    /// The record, if any.
    pub stored: Option<StoredLease>,
}

impl MemStore {
    /// Apply `op` at time `now` (the writer's clock) and answer it.
    pub fn apply(&mut self, op: StoreOp, now: u64) -> StoreReply {
        match op {
            StoreOp::Get { seq } => {
                StoreReply::Done { seq, written: false, revision: self.revision, record: self.stored.map(|s| s.record) }
            }
            StoreOp::Put { seq, expect, record, acquire } => {
                let written = expect == self.revision;
                if written {
                    let acquire_ms = match self.stored {
                        Some(s) if !acquire => s.acquire_ms,
                        _ => now,
                    };
                    self.revision += 1;
                    self.stored = Some(StoredLease { record, acquire_ms, renew_ms: now });
                }
                StoreReply::Done { seq, written, revision: self.revision, record: self.stored.map(|s| s.record) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compare-and-swap writes only on the revision it names, and a lost
    /// one answers with the record that won.
    #[test]
    fn compare_and_swap_on_the_revision() {
        let mut s = MemStore::default();
        let a = LeaseRecord { holder: 1, duration_ms: 15, transitions: 0 };
        let b = LeaseRecord { holder: 2, ..a };
        let put = |seq, expect, record| StoreOp::Put { seq, expect, record, acquire: true };
        assert_eq!(s.apply(put(1, 0, a), 10), StoreReply::Done { seq: 1, written: true, revision: 1, record: Some(a) });
        assert_eq!(
            s.apply(put(2, 0, b), 11),
            StoreReply::Done { seq: 2, written: false, revision: 1, record: Some(a) }
        );
        let renew = StoreOp::Put { seq: 3, expect: 1, record: a, acquire: false };
        assert_eq!(s.apply(renew, 20), StoreReply::Done { seq: 3, written: true, revision: 2, record: Some(a) });
        assert_eq!(s.stored.map(|l| (l.acquire_ms, l.renew_ms)), Some((10, 20)));
        assert_eq!(s.apply(StoreOp::Get { seq: 4 }, 30).seq(), 4);
    }
}
