//! The election's store in the simulator (for algorithms that keep a record
//! in one): operations and answers on their way, and the store's step.

use std::collections::BTreeMap;

use super::Driver;
use super::faults::Held;
use crate::protocol::{Algorithm, MemStore, StoreOp, StoreReply};

/// An operation on its way to the store, or an answer on its way back,
/// for the incarnation `inc` of a position.
#[derive(Clone, Copy, Debug)]
pub(super) enum StoreEv {
    Apply { from: u32, inc: u32, op: StoreOp },
    Reply { to: u32, inc: u32, reply: StoreReply },
}

/// The election's store (for algorithms that keep a record in one, see
/// [`crate::protocol::store`]): one linearizable process. An operation
/// takes a link delay to get there, is applied atomically on arrival, and
/// its answer takes another delay back; a cut-off node's operations and
/// answers are lost, a slow one's take [`Fault::Store`]'s extra delay.
#[derive(Default)]
pub(super) struct StoreSim {
    pub(super) mem: MemStore,
    /// Events by (time, order of scheduling).
    pub(super) queue: BTreeMap<(u64, u64), StoreEv>,
    pub(super) seq: u64,
    /// Per position: cut off from the store, and extra delay each way.
    pub(super) cut: Vec<bool>,
    pub(super) extra: Vec<u64>,
    /// Per position: its incarnation (answers to an older one are lost).
    pub(super) incarnation: Vec<u32>,
    /// Operations sent, and operations or answers lost to faults.
    pub(super) ops: u64,
    pub(super) lost: u64,
}

impl StoreSim {
    pub(super) fn new(n: usize) -> StoreSim {
        StoreSim { cut: vec![false; n], extra: vec![0; n], incarnation: vec![0; n], ..StoreSim::default() }
    }

    pub(super) fn next_time(&self) -> Option<u64> {
        self.queue.first_key_value().map(|(&(t, _), _)| t)
    }

    /// Send `ev` between position `p` and the store at `now`, `delay` on its
    /// way before faults; lost when `p` is cut off.
    pub(super) fn travel(&mut self, p: u32, now: u64, delay: u64, ev: StoreEv) {
        if self.cut[p as usize] {
            self.lost += 1;
            return;
        }
        self.seq += 1;
        let at = now.saturating_add(delay).saturating_add(self.extra[p as usize]);
        self.queue.insert((at, self.seq), ev);
    }
}

impl<'a, A: Algorithm> Driver<'a, A> {
    /// The store's events due at `now`: operations applied in arrival order,
    /// answers handed to the live incarnation that asked.
    pub(super) fn store_step<const STATES: bool>(&mut self, now: u64) {
        loop {
            let net = self.io.sink_mut();
            let Some(entry) = net.store.queue.first_entry().filter(|e| e.key().0 <= now) else { break };
            match entry.remove() {
                StoreEv::Apply { from, inc, op } => {
                    let reply = net.store.mem.apply(op, now);
                    let delay = net.store_delay();
                    net.store.travel(from, now, delay, StoreEv::Reply { to: from, inc, reply });
                }
                StoreEv::Reply { to, inc, reply } if net.faulty && net.faults.is_paused(to, now) => {
                    net.faults.hold(to, Held::Store { inc, reply });
                }
                StoreEv::Reply { to, inc, reply } => {
                    let p = to as usize;
                    let down = net.faulty && net.faults.down[p];
                    if down || net.store.incarnation[p] != inc || net.store.cut[p] {
                        net.store.lost += 1;
                        continue;
                    }
                    net.at(to, now);
                    self.shells[p].store_reply(&mut self.algos[p], reply, &mut self.io);
                    if STATES {
                        self.note_state(p, now);
                    }
                }
            }
        }
    }
}
