//! The report of a run: counts, the faults' log, the verdict of the
//! invariants, and the fencing model's judgement of the leaders' writes.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::net::Net;
use super::{Driver, Ending, Run};
use crate::fencing::{self, Fencing};
use crate::invariants;
use crate::protocol::{Algorithm, Decision, Leadership};
use crate::report::{SimConfig, SimReport};
use crate::shell::ShellState;

/// The report of a run that ended so: its counts, its faults' log, and the verdict of the invariants.
pub(super) fn report<A: Algorithm>(run: &Run<'_>, d: Driver<'_, A>, e: Ending, bound: u64) -> SimReport {
    let Run { spec, topo, ids, initiators, rule, cfg, rules } = *run;
    let n = topo.len();
    // Candidates are the initiators that really woke by themselves (under
    // `stagger` a message may wake a designated initiator first).
    let Driver { shells, io, .. } = d;
    let counters = *io.counters();
    let mut net = io.into_sink();
    net.spontaneous.sort_unstable();
    let expected = spec.expected_winner(topo, ids, &net.spontaneous, rule);
    let mut failures = Vec::new();
    if e.cancelled {
        failures.push(format!("cancelled after {} deliveries and {} timer events", e.deliveries, e.timer_events));
    } else if !e.terminated {
        failures.push(if e.timer_events > e.caps.timer_events {
            format!("did not go quiet within {} timer events", e.caps.timer_events)
        } else {
            format!("did not go quiet within {} deliveries", e.caps.deliveries)
        });
    }
    failures.extend(net.errors.iter().cloned());
    for s in &net.faults.waiting {
        if let Some(t) = s.after {
            net.faults.log.push(format!("{}: never took effect, waiting until {t}: {:?}", e.end_time, s.fault));
        }
    }
    let crashed: Vec<u32> = (0..n).filter(|&p| net.faults.down.get(p as usize) == Some(&true)).collect();
    let fifo_assumed = spec.assumptions.fifo && cfg.fifo;
    let reasons = net.faults.reasons(fifo_assumed, net.uses_timers, spec.name);
    let decisions: Vec<Option<Decision>> = shells.iter().map(ShellState::decision).collect();
    let timeline: Vec<(u32, Leadership)> = net.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
    let beliefs: Vec<Option<Leadership>> = shells.iter().map(ShellState::leadership).collect();
    let fencing = fence(cfg, ids, &net, e.end_time);
    let verdict = invariants::Outcome {
        rules,
        expected,
        rule,
        ids,
        decisions: &decisions,
        messages: counters.messages,
        bound,
        formula: spec.bound_formula,
        timeline: &timeline,
        beliefs: &beliefs,
        failures,
        crashed: &crashed,
        fault_reasons: &reasons,
    }
    .verdict();
    SimReport {
        n,
        k: initiators.len() as u32,
        sent_per_node: net.sent,
        decisions,
        counters,
        ideal_time: net.ideal_time,
        end_time: e.end_time,
        deliveries: e.deliveries,
        dropped: net.faults.dropped(),
        duplicated: net.faults.duplicated,
        delayed: net.faults.delayed,
        reordered: net.faults.reordered,
        crashed,
        outages: net.faults.outages,
        splits: net.faults.splits,
        fault_log: net.faults.log,
        pauses: net.faults.pauses,
        leader_faults: net.faults.leader_faults,
        errors: net.errors,
        leaderships: net.leaderships,
        terminated: e.terminated,
        horizon_reached: e.horizon_reached,
        cancelled: e.cancelled,
        message_times: net.message_times.unwrap_or_default(),
        arrows: net.arrows.unwrap_or_default(),
        states: net.states.map(crate::report::StateLog::into_changes).unwrap_or_default(),
        bound,
        fencing,
        verdict,
    }
}

/// The writes of a kept run's leaders at the modelled resource (see
/// [`crate::fencing`]): one every detector period, each taking a link delay
/// drawn from its own generator (the scheduler's draws are untouched) plus a
/// [`Fault::Store`]'s extra delay, lost while its sender is cut off from the
/// store. The resource sits beyond partitions, as the store does.
pub(super) fn fence(cfg: &SimConfig, ids: &[u64], net: &Net<'_>, end_time: u64) -> Fencing {
    if net.leaderships.is_empty() {
        return Fencing::default();
    }
    let timeline: Vec<fencing::Belief> = net.leaderships.iter().map(|e| (e.time, e.position, e.leadership)).collect();
    let schedule = fencing::Schedule {
        ids,
        timeline: &timeline,
        outages: &net.faults.outages,
        pauses: &net.faults.pauses,
        resumes: &net.faults.resumes,
        end_time,
        write_ms: cfg.detector.period_ms,
    };
    let (writes, truncated) = schedule.writes();
    let announced = fencing::Announcements::new(ids, &timeline);
    let mut rng = Pcg64Mcg::seed_from_u64(cfg.seed ^ 0x6665_6e63_696e_6721);
    let store = &net.faults.store_log;
    let arrival = |w: &fencing::Write| {
        let delay = if cfg.unit_delay { 1 } else { rng.random_range(1..=cfg.max_delay.max(1)) };
        let fault = store.iter().rev().find(|&&(t, node, ..)| t <= w.sent && node.is_none_or(|q| q == w.position));
        match fault {
            Some(&(_, _, true, _)) => None,
            Some(&(.., extra)) => Some(w.sent + delay + extra),
            None => Some(w.sent + delay),
        }
    };
    Fencing { truncated, ..fencing::judge(&writes, &announced, arrival) }
}
