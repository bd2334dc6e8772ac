//! The run loop: the network and the nodes set up ([`set_up`]), then time
//! advanced event by event until the run ends ([`drive`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;

use super::faults::FaultState;
use super::net::Net;
use super::store::StoreSim;
use super::{CANCEL_CHECK, Caps, Driver, Ending, Ev, IDLE_TIME, Run};
use crate::protocol::{Algorithm, NodeContext, Options, PortInfo};
use crate::report::SimConfig;
use crate::shell::{Outputs, ShellState};

/// How many deliveries ahead the simulator prefetches a node's memory.
pub(super) const PREFETCH_AHEAD: usize = 8;

/// The network and the nodes before the first event: every position's state machine built by `make`,
/// the fault plan in order, and the initiators' wake-ups scheduled.
pub(super) fn set_up<'a, A: Algorithm>(run: &Run<'a>, make: &impl Fn(&NodeContext) -> A) -> Driver<'a, A> {
    let Run { spec, topo, ids, initiators, rule, cfg, .. } = *run;
    let n = topo.len();
    let options: Vec<Vec<(String, String)>> = if cfg.options.is_empty() {
        Vec::new()
    } else {
        (0..n).map(|p| crate::spec::node_options(spec, &cfg.options, p)).collect()
    };
    let max_delay = cfg.max_delay.clamp(1, 4096);
    let width = max_delay + 1;
    let mut info: Vec<PortInfo> = Vec::new();
    let faulty = !cfg.faults.faults.is_empty();
    let mut faults = FaultState::default();
    if faulty {
        (faults.waiting, faults.plan) = cfg.faults.faults.iter().cloned().partition(|s| s.after.is_some());
        faults.plan.sort_by_key(|s| s.at);
        faults.down = vec![false; n as usize];
    }
    let net = Net {
        topo,
        ids,
        rule,
        seed: cfg.seed,
        options,
        depth: vec![0; n as usize],
        spontaneous: Vec::with_capacity(initiators.len()),
        messages: 0,
        sent: vec![0; n as usize],
        link_last: vec![0; topo.link_count()],
        ideal_time: 0,
        errors: Vec::new(),
        leaderships: Vec::new(),
        message_times: cfg.log_message_times.then(Vec::new),
        arrows: cfg.log_arrows.then(Vec::new),
        states: cfg.log_arrows.then(|| crate::report::StateLog::new(n as usize)),
        rng: Pcg64Mcg::seed_from_u64(cfg.seed ^ 0x7363_6865_6475_6c65),
        pos: 0,
        now: 0,
        fifo: cfg.fifo,
        unit_delay: cfg.unit_delay,
        max_delay,
        buckets: vec![Vec::new(); width as usize],
        width,
        pending: 0,
        timers: BinaryHeap::new(),
        seq: 0,
        uses_timers: false,
        last_activity: 0,
        faulty,
        faults,
        store: StoreSim::new(n as usize),
    };
    let algos = (0..ids.len())
        .map(|p| {
            let options = Options(net.options.get(p).map_or(&[], Vec::as_slice));
            make(&NodeContext::at(topo, ids, p as u32, rule, cfg.seed, &mut info).with_options(options))
        })
        .collect();
    let shells = (0..n).map(|_| ShellState::default()).collect();
    let mut d = Driver { algos, shells, io: Outputs::new(net) };
    d.note_states(0);
    for &p in initiators {
        let net = d.net();
        let time = if cfg.stagger { net.rng.random_range(0..max_delay) } else { 0 };
        net.schedule(time, Ev::Start { to: p });
    }
    d
}

/// The run loop: time advances bucket by bucket (or jumps to the next timer or fault when nothing is in
/// flight); at each time, the faults due strike, the timers due fire, and the bucket's events are
/// delivered, until nothing is left, a cap or the horizon is reached, or the run is cancelled.
/// The driver is taken and given back by value: behind a reference its fields would be read through it on
/// every event (measured: 0.5% more instructions).
pub(super) fn drive<'a, A: Algorithm, const STATES: bool>(
    mut d: Driver<'a, A>,
    cfg: &SimConfig,
    make: &impl Fn(&NodeContext) -> A,
    caps: Caps,
) -> (Driver<'a, A>, Ending) {
    let width = d.net().width;
    // Plain locals, not the `Ending` fields, so that they stay in registers in the hot loop.
    let (mut deliveries, mut timer_events, mut end_time) = (0u64, 0u64, 0u64);
    let (mut terminated, mut horizon_reached, mut cancelled) = (true, false, false);
    let (cap, timer_cap) = (caps.deliveries, caps.timer_events);
    let mut steps = 0u64;
    let mut now = 0u64;
    let mut bucket: Vec<Ev> = Vec::new();
    'run: loop {
        let net = d.net();
        if net.pending == 0 {
            // Nothing in the window: jump to the next timer (or fault, or
            // far delivery), or stop.
            let mut next = net.timers.peek().map(|Reverse((t, ..))| *t);
            if let Some(s) = net.store.next_time() {
                next = Some(next.map_or(s, |t| t.min(s)));
            }
            if net.faulty {
                match net.faults.next_time() {
                    Some(f) => next = Some(next.map_or(f, |t| t.min(f))),
                    // Only clocks left: stop once they have long done nothing.
                    None if next.is_some_and(|t| t.saturating_sub(net.last_activity) > IDLE_TIME) => {
                        net.faults.log.push(format!(
                            "{now}: stopped: nothing in flight, and nothing sent, decided or announced since {}",
                            net.last_activity
                        ));
                        break;
                    }
                    None => {}
                }
            }
            match next {
                Some(t) => now = now.max(t),
                None => break,
            }
        }
        steps += 1;
        if steps.is_multiple_of(CANCEL_CHECK) && cfg.cancel.is_cancelled() {
            (cancelled, terminated) = (true, false);
            break;
        }
        if cfg.horizon.is_some_and(|h| now > h) {
            horizon_reached = true;
            net.faults.log.push(format!("{now}: stopped at the horizon"));
            break;
        }
        if net.faulty {
            d.fault_step(now, make, &mut end_time);
            if STATES {
                d.note_states(now);
            }
        }
        while let Some(&Reverse((t, set, pos, timer, generation))) = d.net().timers.peek() {
            if t > now {
                break;
            }
            d.net().timers.pop();
            let net = d.net();
            if net.faulty && net.faults.is_paused(pos, now) {
                net.faults.due[pos as usize].push((t, set, timer, generation));
                continue;
            }
            if d.shells[pos as usize].timer_due(timer, generation) {
                timer_events += 1;
                if timer_events > timer_cap {
                    terminated = false;
                    break 'run;
                }
                if timer_events.is_multiple_of(CANCEL_CHECK) && cfg.cancel.is_cancelled() {
                    (cancelled, terminated) = (true, false);
                    break 'run;
                }
                d.net().at(pos, now);
                let p = pos as usize;
                d.shells[p].timer(&mut d.algos[p], timer, generation, &mut d.io);
                if STATES {
                    d.note_state(p, now);
                }
                end_time = now;
            }
        }
        if d.net().store.next_time().is_some_and(|t| t <= now) {
            d.store_step::<STATES>(now);
            end_time = now;
        }
        let net = d.net();
        std::mem::swap(&mut bucket, &mut net.buckets[(now % width) as usize]);
        if !bucket.is_empty() {
            if !cfg.fifo && cfg.unit_delay {
                // Unit delays put a link's messages in one step: reorder within it.
                bucket.shuffle(&mut net.rng);
            }
            end_time = now;
            net.last_activity = now;
        }
        for (i, &ev) in bucket.iter().enumerate() {
            if let Some(&Ev::Deliver { to, .. }) = bucket.get(i + PREFETCH_AHEAD) {
                d.prefetch(to);
            }
            d.net().pending -= 1;
            if let Ev::Deliver { .. } = ev {
                if deliveries >= cap {
                    terminated = false;
                    break 'run;
                }
                deliveries += 1;
                if deliveries.is_multiple_of(CANCEL_CHECK) && cfg.cancel.is_cancelled() {
                    (cancelled, terminated) = (true, false);
                    break 'run;
                }
            }
            d.handle::<STATES>(ev, now);
        }
        bucket.clear();
        now += 1;
    }
    (d, Ending { deliveries, timer_events, end_time, terminated, horizon_reached, cancelled, caps })
}
