//! The nodes' steps: a delivery or a start handed to a node's shell, and
//! the states logged for the diagram.

use super::faults::Held;
use super::net::Net;
use super::{Driver, Ev};
use crate::protocol::Algorithm;

impl<'a, A: Algorithm> Driver<'a, A> {
    /// The net, apart from the nodes.
    #[inline]
    pub(super) fn net(&mut self) -> &mut Net<'a> {
        self.io.sink_mut()
    }

    /// Ask the memory for what a delivery to `to` will read (its state
    /// machine and its links), while earlier deliveries run: in a large
    /// simulation with random delays each delivery lands on a node far from
    /// the last, and waiting for its cache lines one at a time is most of
    /// the cost.
    #[inline]
    pub(super) fn prefetch(&self, to: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY: a prefetch reads nothing and cannot fault, whatever the
            // address; `unsafe` is only for its target feature, SSE, which
            // every x86_64 has.
            let at = |p: *const u8| unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
            if let Some(algo) = self.algos.get(to as usize) {
                at((algo as *const A).cast());
            }
            if let Some(link) = self.io.sink().topo.ports(to).first() {
                at((link as *const crate::topology::PortLink).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = to;
    }

    /// With arrows logged, note position `p`'s state at `now` (if it changed).
    #[inline]
    pub(super) fn note_state(&mut self, p: usize, now: u64) {
        if let Some(log) = &mut self.io.sink_mut().states {
            log.note(p, now, self.algos[p].state());
        }
    }

    /// [`Driver::note_state`] for every position.
    pub(super) fn note_states(&mut self, now: u64) {
        for p in 0..self.algos.len() {
            self.note_state(p, now);
        }
    }

    /// Take `ev` at `now`: the node's outputs are carried out as it steps.
    #[inline]
    pub(super) fn handle<const STATES: bool>(&mut self, ev: Ev, now: u64) {
        let net = self.io.sink_mut();
        if net.faulty {
            let (Ev::Start { to } | Ev::Deliver { to, .. }) = ev;
            if net.faults.is_paused(to, now) {
                net.faults.hold(to, Held::Ev(ev));
                return;
            }
        }
        match ev {
            Ev::Start { to } => {
                let net = self.io.sink_mut();
                // An initiator woken by a message before its own start is, in
                // the asynchronous model, no initiator at all.
                if net.depth[to as usize] == 0 {
                    net.spontaneous.push(to);
                }
                net.at(to, now);
                self.shells[to as usize].start(&mut self.algos[to as usize], &mut self.io);
                if STATES {
                    self.note_state(to as usize, now);
                }
            }
            Ev::Deliver { to, port, depth, msg } => {
                let net = self.io.sink_mut();
                let d = &mut net.depth[to as usize];
                *d = (*d).max(depth);
                net.at(to, now);
                let p = to as usize;
                if let Err(e) = self.shells[p].message(&mut self.algos[p], port, msg, &mut self.io) {
                    self.net().error(format!("position {to}: {e}"));
                }
                if STATES {
                    self.note_state(p, now);
                }
            }
        }
    }
}
