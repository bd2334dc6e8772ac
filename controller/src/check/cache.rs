//! The verdicts already found, by [`CheckKey`]: a class asking the same
//! question is answered once. Bounded by [`CACHE_ENTRIES`] and
//! [`CACHE_BYTES`] (the least recently used go first), and each entry's bytes
//! are reserved in the controller's memory budget while it is kept (an entry
//! that does not fit there is not kept).

use std::collections::HashMap;
use std::sync::Arc;

use prost::Message;
use ringleader_proto::v1 as pb;

use super::CheckKey;
use crate::budget::{Budget, Reservation};

/// The most verdicts kept.
pub const CACHE_ENTRIES: usize = 256;
/// The most bytes of verdicts kept (counterexamples' diagrams are most of
/// them: 10 to 100 KiB each).
pub const CACHE_BYTES: u64 = 16 << 20;
/// An entry's own cost beside its verdict: the key, the map's slot, the counts.
const ENTRY_BYTES: u64 = 512;

#[derive(Debug)]
struct Entry {
    verdict: Arc<pb::CheckVerdict>,
    bytes: u64,
    used: u64,
    _memory: Reservation,
}

/// The cache of verdicts.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: HashMap<CheckKey, Entry>,
    bytes: u64,
    clock: u64,
}

impl Cache {
    /// The verdict of `key`, if kept.
    pub(crate) fn get(&mut self, key: &CheckKey) -> Option<Arc<pb::CheckVerdict>> {
        self.clock += 1;
        let entry = self.entries.get_mut(key)?;
        entry.used = self.clock;
        Some(entry.verdict.clone())
    }

    /// Bytes kept.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Verdicts kept.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Keep `verdict` as `key`'s, the least recently used going to make room;
    /// not kept if it is larger than a quarter of [`CACHE_BYTES`] or its
    /// bytes do not fit in `budget`.
    pub(crate) fn insert(&mut self, key: CheckKey, verdict: Arc<pb::CheckVerdict>, budget: &Arc<Budget>) {
        let bytes = verdict.encoded_len() as u64 + ENTRY_BYTES;
        if bytes > CACHE_BYTES / 4 {
            return;
        }
        if let Some(old) = self.entries.remove(&key) {
            self.bytes -= old.bytes;
        }
        while self.entries.len() >= CACHE_ENTRIES || self.bytes + bytes > CACHE_BYTES {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some(e) = self.entries.remove(&oldest) {
                self.bytes -= e.bytes;
            }
        }
        let Ok(memory) = budget.reserve(bytes, || "a cached check verdict".into()) else {
            return;
        };
        self.clock += 1;
        self.bytes += bytes;
        self.entries.insert(key, Entry { verdict, bytes, used: self.clock, _memory: memory });
    }
}
