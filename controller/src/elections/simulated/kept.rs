//! SIMULATED kept leaderships: the simulator keeps a leader behind its
//! failure detector for the plan's horizon, with the plan's faults at their
//! virtual times; the run's changes of belief become the record's timeline,
//! each crash of a leader and each leader cut off from every majority a
//! failover, and its terms, faults and suspicions the diagram's.

use ringleader_core::diagram::{self, Term};
use ringleader_core::failover;
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};

use super::super::MAX_TIMELINE;
use super::super::entry::Entry;
use super::super::kept::{MAX_RECORDED_VIOLATIONS as MAX_RECORDED_OVERLAPS, overlap_text};
use super::super::overlap;
use super::super::run::{Context, Outcome, Plan, PlannedKind};
use crate::record::{FailoverRecord, LeaderInfo, LeadershipChange};

/// Run `plan` (a kept leadership) with `cfg`, its faults scheduled: a cut-off-leader fault cuts
/// off whoever leads at its time, found by running the plan up to then (nothing happens when
/// nobody does).
pub(super) fn run(plan: &Plan, cfg: SimConfig) -> SimReport {
    let kept = |cfg: &SimConfig| {
        sim::run_kept(plan.spec, &plan.topology, &plan.ids, &plan.initiators, plan.rule, cfg)
            .expect("planning accepts kept leaderships of algorithms that keep one only")
    };
    let mut faults: Vec<Scheduled> = Vec::new();
    for (i, f) in plan.faults.iter().enumerate() {
        let seed = plan.seed ^ (i as u64 + 1);
        let fault = match &f.fault {
            PlannedKind::Core(fault) => fault.clone(),
            PlannedKind::CutOffLeader | PlannedKind::LeaderClock(_) | PlannedKind::PauseLeader(_) => {
                let before = kept(&SimConfig {
                    horizon: Some(f.at_ms),
                    faults: FaultPlan { faults: faults.clone() },
                    log_arrows: false,
                    ..cfg.clone()
                });
                let down = |p: u32| before.crashed.contains(&p);
                let terms = Term::from_leaderships(&before.leaderships, &plan.ids);
                let Some(leader) = terms.iter().rev().map(|t| t.leader).find(|&p| !down(p)) else { continue };
                match f.fault {
                    PlannedKind::LeaderClock(rate) => Fault::Clock { node: leader, rate },
                    PlannedKind::PauseLeader(ms) => Fault::Pause { node: leader, ms },
                    _ => Fault::Partition {
                        groups: vec![vec![leader], (0..plan.n()).filter(|&p| p != leader).collect()],
                    },
                }
            }
        };
        faults.push(Scheduled::new(f.at_ms, seed, fault));
    }
    kept(&SimConfig { faults: FaultPlan { faults }, ..cfg })
}

/// Every time two nodes believed they led at once in the run (in virtual, that is real, time),
/// as the LIVE records word them.
fn overlaps(plan: &Plan, report: &SimReport) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut leaderships = overlap::Leaderships::new(plan.ids.len());
    // A paused node acts on nothing: its pauses are no part of its leadership, as LIVE.
    for (p, from, until) in report.fault_log.iter().filter_map(|l| pause_of(l)) {
        leaderships.paused(p, from * 1_000, until * 1_000);
    }
    let mut found = Vec::new();
    let mut crashes = report.outages.iter().map(|o| (o.crashed, o.position)).collect::<Vec<_>>();
    crashes.sort_unstable();
    let mut crashes = crashes.into_iter().peekable();
    for e in &report.leaderships {
        while let Some((at, p)) = crashes.next_if(|&(at, _)| at <= e.time) {
            found.extend(leaderships.ended(p as usize, at * 1_000));
        }
        let p = e.position as usize;
        let leads = (e.leadership.leader == Some(plan.ids[p])).then_some(e.leadership.term);
        found.extend(leaderships.belief(p, leads, e.time * 1_000));
    }
    for (at, p) in crashes {
        found.extend(leaderships.ended(p as usize, at * 1_000));
    }
    found.extend(leaderships.finish(report.end_time * 1_000, |_| true));
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

/// A pause the simulator's fault log records ("{at}: pause: position {p} takes no step until
/// {until}"): (position, from, until), in virtual ms.
fn pause_of(line: &str) -> Option<(usize, u64, u64)> {
    let (at, rest) = line.split_once(": pause: position ")?;
    let (p, until) = rest.split_once(" takes no step until ")?;
    Some((p.parse().ok()?, at.parse().ok()?, until.parse().ok()?))
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
    let crashes = failover::failovers(&plan.ids, events, &report.outages, &report.message_times)
        .into_iter()
        .map(|f| (f, crate::failover::CRASH_FAULT));
    // An algorithm whose nodes meet only in a store is not cut off by a partition between them
    // (the store stays reachable): a leadership it loses then is judged by its beliefs.
    let splits = if plan.spec.uses_store { &[][..] } else { &report.splits[..] };
    let cut_off = failover::cut_off_failovers(&plan.ids, events, &report.outages, splits, &report.message_times)
        .into_iter()
        .map(|f| (f, crate::failover::PARTITION));
    // Leaderships that ended with no crash or cut-off of their leader, worded as LIVE words them.
    let pauses: Vec<(u32, u64, u64)> =
        report.fault_log.iter().filter_map(|l| pause_of(l)).map(|(p, from, until)| (p as u32, from, until)).collect();
    let stepped_down = plan.lease().map_or(crate::failover::STEPPED_DOWN, |l| l.lost);
    let ended = failover::belief_failovers(&plan.ids, events, &report.outages, splits, &pauses, &report.message_times)
        .into_iter()
        .map(|(f, why)| {
            let cause = match why {
                failover::Ended::Deposed => crate::failover::DEPOSED,
                failover::Ended::SteppedDown => stepped_down,
                failover::Ended::Paused => crate::failover::PAUSED,
            };
            (f, cause)
        });
    let mut lost: Vec<_> = crashes.chain(cut_off).chain(ended).collect();
    lost.sort_by_key(|(f, _)| f.crashed);
    let failovers: Vec<FailoverRecord> = lost
        .into_iter()
        .map(|(f, cause)| FailoverRecord {
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
    // At the horizon, the kept rules' verdict: agreed when every live node believes in one live
    // leader; else the leader shown is the latest term's, if it is up.
    let agreed = report.verdict.agreed;
    let terms = Term::from_leaderships(events, &plan.ids);
    let leader =
        report.verdict.leader.or_else(|| terms.iter().rev().map(|t| t.leader).find(|&p| !report.crashed.contains(&p)));
    let term = terms.last().map_or(0, |t| t.term);
    let overlaps = overlaps(plan, report);
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

    /// The simulator's pause lines give (position, from, until); other lines give nothing.
    #[test]
    fn pauses_are_read_from_the_fault_log() {
        assert_eq!(pause_of("3000: pause: position 4 takes no step until 3800"), Some((4, 3_000, 3_800)));
        assert_eq!(pause_of("3800: position 4 resumes: 1 timer(s) due, 3 input(s) held"), None);
        assert_eq!(pause_of("500: crash-leader: position 2 crashed"), None);
    }
}
