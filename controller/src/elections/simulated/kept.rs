//! SIMULATED kept leaderships: the simulator keeps a leader behind its
//! failure detector for the plan's horizon, with the plan's faults at their
//! virtual times; the run's changes of belief become the record's timeline,
//! each crash of a leader and each leader cut off from every majority a
//! failover, and its terms, faults and suspicions the diagram's.

use ringleader_core::diagram::{self, Term};
use ringleader_core::failover::KeptVerdict;
use ringleader_core::faults::{FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};

use super::super::MAX_TIMELINE;
use super::super::entry::Entry;
use super::super::kept::{MAX_RECORDED_VIOLATIONS as MAX_RECORDED_OVERLAPS, overlap_text};
use super::super::run::{Context, Outcome, Plan};
use crate::record::{FailoverRecord, LeaderInfo, LeadershipChange};

/// Run `plan` (a kept leadership) with `cfg`, its faults scheduled; the simulator finds whoever
/// leads at a leader fault's time.
pub(super) fn run(plan: &Plan, cfg: SimConfig) -> SimReport {
    let faults = plan
        .faults
        .iter()
        .enumerate()
        .map(|(i, f)| Scheduled::new(f.at_ms, plan.seed ^ (i as u64 + 1), f.fault.clone()))
        .collect();
    sim::run_kept(
        plan.spec,
        &plan.topology,
        &plan.ids,
        &plan.initiators,
        plan.rule,
        &SimConfig { faults: FaultPlan { faults }, ..cfg },
    )
    .expect("planning accepts kept leaderships of algorithms that keep one only")
}

/// Every overlap of the verdict, as the LIVE records word them (the first
/// [`MAX_RECORDED_OVERLAPS`], and how many more).
fn overlaps(verdict: &KeptVerdict) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let found = &verdict.overlaps;
    let mut texts: Vec<String> = found
        .iter()
        .take(MAX_RECORDED_OVERLAPS)
        .map(|o| {
            let who: BTreeMap<usize, BTreeSet<u64>> = o.who.iter().map(|&(i, t)| (i, BTreeSet::from([t]))).collect();
            overlap_text(&who, |i| format!("sim-{i}"), o.us / 1_000)
        })
        .collect();
    if found.len() > MAX_RECORDED_OVERLAPS {
        texts.push(format!("... and {} more of the same kind, not recorded", found.len() - MAX_RECORDED_OVERLAPS));
    }
    texts
}

/// The outcome of a SIMULATED kept leadership, its timeline and failovers written into `entry`.
pub(super) fn outcome(ctx: &Context<'_>, entry: &Entry, plan: &Plan, report: &SimReport, duration_ms: u64) -> Outcome {
    let node = |p: u32| format!("sim-{p}");
    let info = |p: u32| LeaderInfo { node: node(p), id: plan.ids[p as usize], position: p };
    let events = &report.leaderships;
    let skip = events.len().saturating_sub(MAX_TIMELINE);
    let timeline: Vec<LeadershipChange> = events[skip..]
        .iter()
        .map(|e| LeadershipChange {
            position: e.position,
            node: node(e.position),
            term: e.leadership.term,
            leader_id: e.leadership.leader,
            at_ms: e.time,
            node_us: 0,
        })
        .collect();
    let verdict = KeptVerdict::of(report, &plan.ids, plan.lease());
    let failovers: Vec<FailoverRecord> = verdict
        .failovers
        .iter()
        .map(|&(f, cause)| FailoverRecord {
            leader: info(f.position),
            term: f.term,
            cause,
            lost_at_ms: f.crashed,
            detection_ms: f.detection,
            agreement_ms: f.agreement,
            new_leader: f
                .new_leader
                .and_then(|(id, term)| plan.ids.iter().position(|&x| x == id).map(|p| (info(p as u32), term))),
            messages: f.messages,
        })
        .collect();
    let (agreed, leader, term) = (verdict.agreed, verdict.leader, verdict.term);
    let overlaps = overlaps(&verdict);
    entry.update(|r| {
        r.timeline = timeline;
        r.failovers = failovers;
        r.overlaps = overlaps;
        r.term = term;
        r.down = report.crashed.clone();
        r.fencing = Some(report.fencing.into());
        None
    });
    let error = if report.cancelled {
        Some(format!("{} ({} simulated deliveries done)", ctx.stopped_text(), report.deliveries))
    } else if !report.horizon_reached && !report.terminated {
        Some(format!(
            "stopped after {} messages at {} virtual ms, before the horizon: the simulator's budget per election \
             (max_simulated_messages); shorten horizon_ms or use fewer nodes",
            report.deliveries, report.end_time
        ))
    } else {
        None
    };
    let counters = &report.counters;
    let metrics = super::metrics(report, duration_ms, 0, "none: a kept leadership elects again after every failure");
    let diagram_svg = plan.diagram.map(|drawing| {
        let title = format!(
            "{}, n = {}, kept for {} virtual ms, seed {}: {} messages",
            plan.spec.name,
            plan.n(),
            plan.sim.horizon_ms,
            plan.seed,
            counters.messages
        );
        let marks = diagram::belief_marks(events, &plan.ids);
        let terms = Term::from_leaderships(events, &plan.ids);
        let arrows = drawn_arrows(&report.arrows, drawing.heartbeats);
        let mut title = title;
        if arrows.len() < report.arrows.len() {
            title.push_str(&format!(" ({} upkeep messages not drawn)", report.arrows.len() - arrows.len()));
        }
        let d = diagram::Diagram {
            title,
            nodes: plan.ids.iter().enumerate().map(|(p, id)| format!("sim-{p} (id {id})")).collect(),
            ids: &plan.ids,
            arrows: &arrows,
            states: &report.states,
            initiators: &plan.initiators,
            leader,
            time_unit: "virtual ms",
            ring: plan.topology.kind().is_ring(),
            labels: drawing.labels,
            axis: drawing.axis,
            outages: &report.outages,
            splits: &report.splits,
            terms: &terms,
            marks: &marks,
        };
        diagram::svg(&d)
    });
    Outcome {
        error,
        agreed,
        violations: report.verdict.violations.iter().map(ToString::to_string).collect(),
        metrics: Some(metrics),
        leader: leader.map(info),
        per_position: Vec::new(),
        diagram_svg,
    }
}

/// The messages a kept leadership's diagram draws: as LIVE, its upkeep (heartbeats, lease
/// renewals, Raft's append_entries and their answers) left out unless `heartbeats`, so its
/// failovers' election messages have the room (a Raft leadership sends hundreds).
fn drawn_arrows(arrows: &[diagram::Arrow], heartbeats: bool) -> Vec<diagram::Arrow> {
    arrows.iter().filter(|a| heartbeats || !a.kind.is_upkeep()).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept leadership's diagram leaves upkeep (Raft's append_entries and acks, heartbeats, lease
    /// renewals) out unless asked for it, and keeps every election message either way.
    #[test]
    fn upkeep_is_drawn_only_when_asked() {
        use ringleader_core::protocol::MsgKind;
        let arrow = |kind| diagram::Arrow {
            from: 0,
            to: 1,
            kind,
            sent: 1,
            received: Some(2),
            msg: None,
            slow: false,
            in_flight: false,
        };
        let all: Vec<diagram::Arrow> = [
            MsgKind::RaftVoteRequest,
            MsgKind::AppendEntries,
            MsgKind::RaftVote,
            MsgKind::AppendAck,
            MsgKind::LeaseRenew,
        ]
        .map(arrow)
        .to_vec();
        let kinds = |a: Vec<diagram::Arrow>| a.iter().map(|a| a.kind).collect::<Vec<_>>();
        assert_eq!(kinds(drawn_arrows(&all, false)), [MsgKind::RaftVoteRequest, MsgKind::RaftVote]);
        assert_eq!(drawn_arrows(&all, true), all);
    }
}
