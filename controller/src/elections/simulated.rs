//! SIMULATED elections: the core crate's deterministic simulator runs the
//! plan on a blocking thread, and its report becomes the outcome.

use std::time::Instant;

use ringleader_core::sim::{self, SimConfig, SimReport};

mod kept;

use super::entry::Entry;
use super::run::{Context, Outcome, Plan, stopped};
use crate::record::{LeaderInfo, MAX_PARTICIPANTS, Metrics};

/// Run `plan` in the simulator on a blocking thread, one simulation per core
/// at a time; a stop cancels it within milliseconds.
pub(super) async fn run(ctx: &Context<'_>, entry: &Entry, plan: Plan) -> Outcome {
    let mut stop = entry.stop_requested();
    // One simulation per core at a time; the others wait their turn (or are stopped waiting).
    let _permit = tokio::select! {
        permit = ctx.simulations.acquire() => match permit {
            Ok(p) => p,
            Err(_) => return Outcome::failed("the simulator is shutting down".into()),
        },
        () = stopped(&mut stop) => return Outcome::failed(ctx.stopped_text().into()),
    };
    entry.set_running();
    // The simulator's own cap (a generous multiple of the bound) or the configured budget, whichever is lower.
    let bound = plan.spec.bound_for(&plan.topology, plan.k() as u64);
    let own_cap = bound.saturating_mul(4).saturating_add(1_000);
    let budget = ctx.config.max_simulated_messages;
    // A kept leadership runs to its horizon, heartbeats and all: only the budget bounds it.
    let cap = if plan.keep_leader { budget } else { own_cap.min(budget) };
    let cfg = SimConfig {
        fifo: !plan.sim.non_fifo,
        unit_delay: plan.sim.unit_delay,
        log_arrows: plan.diagram.is_some(),
        log_message_times: plan.keep_leader,
        seed: plan.seed,
        max_deliveries: cap,
        horizon: plan.keep_leader.then_some(plan.sim.horizon_ms),
        detector: plan.detector,
        cancel: sim::Cancel::new(),
        options: plan.options.clone(),
        ..SimConfig::default()
    };
    let cancel = cfg.cancel.clone();
    let started = Instant::now();
    let job = tokio::task::spawn_blocking(move || {
        let report = if plan.keep_leader {
            kept::run(&plan, cfg)
        } else {
            sim::run(plan.spec, &plan.topology, &plan.ids, &plan.initiators, plan.rule, &cfg)
        };
        (plan, report)
    });
    tokio::pin!(job);
    let joined = tokio::select! {
        joined = &mut job => joined,
        () = stopped(&mut stop) => {
            // The simulator looks at the flag every few thousand events: it ends within milliseconds.
            cancel.cancel();
            job.await
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let (plan, report) = match joined {
        Ok(r) => r,
        Err(e) => return Outcome::failed(format!("the simulator crashed: {e}")),
    };
    if plan.keep_leader {
        return kept::outcome(ctx, entry, &plan, &report, duration_ms);
    }
    let error = if report.cancelled {
        Some(format!("{} ({} simulated deliveries done)", ctx.stopped_text(), report.deliveries))
    } else if let Some(failed) = program_failure(&plan, &report) {
        Some(failed)
    } else if !report.terminated && budget < own_cap {
        Some(format!(
            "stopped after {} messages, the simulator's budget per election (max_simulated_messages)",
            report.deliveries
        ))
    } else {
        None
    };
    let metrics = metrics(&report, duration_ms, report.bound, plan.spec.bound_formula);
    let leader =
        report.verdict.leader.map(|p| LeaderInfo { node: format!("sim-{p}"), id: plan.ids[p as usize], position: p });
    let diagram_svg = plan.diagram.map(|drawing| {
        let title = format!(
            "{}, n = {}, k = {}, seed {}: {} messages",
            plan.spec.name,
            plan.n(),
            plan.k(),
            plan.seed,
            report.counters.messages
        );
        let nodes = plan.ids.iter().enumerate().map(|(p, id)| format!("sim-{p} (id {id})")).collect();
        let d = ringleader_core::diagram::Diagram {
            title,
            nodes,
            ids: &plan.ids,
            arrows: &report.arrows,
            states: &report.states,
            initiators: &plan.initiators,
            leader: report.verdict.leader,
            time_unit: "virtual time",
            ring: plan.topology.kind().is_ring(),
            labels: drawing.labels,
            axis: drawing.axis,
            ..Default::default()
        };
        ringleader_core::diagram::svg(&d)
    });
    let per_position = if plan.n() <= MAX_PARTICIPANTS {
        report.decisions.iter().copied().zip(report.sent_per_node.iter().copied()).collect()
    } else {
        Vec::new()
    };
    Outcome {
        error,
        agreed: report.verdict.agreed,
        violations: report.verdict.violations.iter().map(ToString::to_string).collect(),
        metrics: Some(metrics),
        leader,
        per_position,
        diagram_svg,
    }
}

/// The error of a program's election whose program failed (or misbehaved
/// otherwise): the simulator's first error, which names the position, the
/// step and the field; `None` for a built-in, or a program that did not fail.
fn program_failure(plan: &Plan, report: &SimReport) -> Option<String> {
    if !crate::programs::is_program(plan.spec) {
        return None;
    }
    let first = report.errors.first()?;
    // "position 3 program x, ...": as a LIVE election says it, "position 3 failed: program x, ...".
    let first = match first.strip_prefix("position ").and_then(|rest| rest.split_once(' ')) {
        Some((position, what)) => format!("position {position} failed: {what}"),
        None => first.clone(),
    };
    Some(match report.errors.len() - 1 {
        0 => first,
        more => format!("{first} (and {more} more error(s))"),
    })
}

/// The metrics of a simulated run that took `duration_ms`, against `bound` (`formula`).
fn metrics(report: &SimReport, duration_ms: u64, bound: u64, bound_formula: &'static str) -> Metrics {
    let counters = &report.counters;
    Metrics {
        messages: counters.messages,
        election_messages: counters.election_messages,
        notification_messages: counters.notification_messages,
        by_kind: counters.named().map(|(k, c)| (k.to_string(), c)).collect(),
        bytes: counters.bytes,
        ideal_time: report.ideal_time,
        duration_ms,
        node_duration_us: None,
        node_duration_error_us: 0,
        bound,
        bound_formula,
    }
}
