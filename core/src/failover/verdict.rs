//! The verdict of a simulated kept leadership ([`KeptVerdict`]): its
//! failovers with their causes, its overlaps, its agreement and leader at the
//! end, and the leader each fault aimed at whoever leads found, all read from
//! the run's [`SimReport`].

use super::overlap::{Leaderships, Overlap};
use super::{Cause, Ended, Failover, belief_failovers, cut_off_failovers, failovers};
use crate::report::{LeaderFault, SimReport};
use crate::spec::Lease;

/// What a simulated kept leadership came to.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptVerdict {
    /// Every loss of a leadership, in time order, with its cause: the crash
    /// of a leader ([`Cause::CrashFault`]), a leader cut off from every
    /// majority ([`Cause::Partition`]), and a leadership that ended otherwise
    /// ([`Cause::Deposed`], [`Cause::Paused`], or its leader stepping down:
    /// [`Cause::stepped_down`]).
    pub failovers: Vec<(Failover, Cause)>,
    /// Every time two nodes believed they led at once, in the order found,
    /// judged as LIVE judges them ([`Leaderships`]: a paused node's pause is
    /// no part of its leadership); lengths in µs (virtual ms × 1,000).
    pub overlaps: Vec<Overlap>,
    /// At the end, every live node believes in one live leader.
    pub agreed: bool,
    /// The leader at the end: the agreed one, else the latest term's leader
    /// if it is up.
    pub leader: Option<u32>,
    /// The latest term a leader announced (0: none).
    pub term: u64,
    /// Each fault aimed at whoever leads, with the leader it found at its time.
    pub leader_faults: Vec<LeaderFault>,
}

impl KeptVerdict {
    /// The verdict of `report`, a kept run over `ids` (by position) whose
    /// leader holds `lease`, if any (the words of a lease lost).
    ///
    /// A partition cuts a leader off only if the nodes message each other:
    /// nodes that meet only in a store (which sits beyond partitions) and
    /// send nothing are not cut off by one, and a leadership they lose then
    /// is judged by their beliefs.
    pub fn of(report: &SimReport, ids: &[u64], lease: Option<Lease>) -> KeptVerdict {
        let events = &report.leaderships;
        let talk = report.counters.messages + report.counters.heartbeat_messages > 0;
        let splits = if talk { &report.splits[..] } else { &[][..] };
        let times = &report.message_times;
        let crashes = failovers(ids, events, &report.outages, times).into_iter().map(|f| (f, Cause::CrashFault));
        let cut_off =
            cut_off_failovers(ids, events, &report.outages, splits, times).into_iter().map(|f| (f, Cause::Partition));
        let ended = belief_failovers(ids, events, &report.outages, splits, &report.pauses, times).into_iter().map(
            |(f, why)| {
                let cause = match why {
                    Ended::Deposed => Cause::Deposed,
                    Ended::SteppedDown => Cause::stepped_down(lease),
                    Ended::Paused => Cause::Paused,
                };
                (f, cause)
            },
        );
        let mut lost: Vec<(Failover, Cause)> = crashes.chain(cut_off).chain(ended).collect();
        lost.sort_by_key(|(f, _)| f.crashed);
        let terms = terms(report, ids);
        let up = |p: &u32| !report.crashed.contains(p);
        let leader = report.verdict.leader.or_else(|| terms.iter().rev().map(|&(_, p)| p).find(up));
        KeptVerdict {
            failovers: lost,
            overlaps: overlaps(report, ids),
            agreed: report.verdict.agreed,
            leader,
            term: terms.last().map_or(0, |&(t, _)| t),
            leader_faults: report.leader_faults.clone(),
        }
    }
}

/// The terms of the run's timeline, each from the first node that announced it led it, in time
/// order; a term no higher than one already seen is left out: (term, leader position).
fn terms(report: &SimReport, ids: &[u64]) -> Vec<(u64, u32)> {
    let mut terms: Vec<(u64, u32)> = Vec::new();
    for e in &report.leaderships {
        let leads = e.leadership.leader.is_some() && ids.get(e.position as usize) == e.leadership.leader.as_ref();
        if leads && terms.last().is_none_or(|&(t, _)| e.leadership.term > t) {
            terms.push((e.leadership.term, e.position));
        }
    }
    terms
}

/// Every time two nodes (`ids` by position) believed they led at once in the run (in virtual,
/// that is real, time): each node's beliefs, its crashes ending its leadership, its pauses taken
/// out.
fn overlaps(report: &SimReport, ids: &[u64]) -> Vec<Overlap> {
    let mut leaderships = Leaderships::new(ids.len());
    for &(p, from, until) in &report.pauses {
        leaderships.paused(p as usize, from * 1_000, until * 1_000);
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
        let leads = (e.leadership.leader == Some(ids[p])).then_some(e.leadership.term);
        found.extend(leaderships.belief(p, leads, e.time * 1_000));
    }
    for (at, p) in crashes {
        found.extend(leaderships.ended(p as usize, at * 1_000));
    }
    found.extend(leaderships.finish(report.end_time * 1_000, |_| true));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::catalogue::find;
    use crate::faults::{Fault, FaultPlan, Scheduled};
    use crate::report::SimConfig;
    use crate::sim::run_kept;
    use crate::topology::Topology;

    const IDS: [u64; 5] = [1, 2, 3, 4, 5];

    /// `algorithm` kept on five nodes (ids 1..5, seed 1) until `horizon` with `faults`, and its
    /// verdict.
    fn verdict(algorithm: &str, faults: Vec<(u64, Fault)>, horizon: u64) -> (SimReport, KeptVerdict) {
        let spec = find(algorithm).unwrap();
        let topo = Topology::build(spec.default_topology(), 5, 1).unwrap();
        let faults = faults.into_iter().enumerate().map(|(i, (at, f))| Scheduled::new(at, i as u64 + 1, f)).collect();
        let cfg = SimConfig {
            seed: 1,
            horizon: Some(horizon),
            log_message_times: true,
            faults: FaultPlan { faults },
            ..SimConfig::default()
        };
        let r = run_kept(spec, &topo, &IDS, &[0, 1, 2, 3, 4], spec.rule, &cfg).unwrap();
        let v = KeptVerdict::of(&r, &IDS, spec.kept.and_then(|k| k.lease));
        (r, v)
    }

    /// Chubby's leader cut off at 500 with its clock at half speed keeps believing in its lease
    /// while the majority elects another: one failover, a partition of the leader the fault found,
    /// agreed on another node in a higher term, and one overlap of the two leaders; the latest
    /// term's leader is the new one. At 3% slow (the lease allows 10%) the same failover, and no
    /// overlap.
    #[test]
    fn a_slow_cut_off_leader_overlaps_and_fails_over_by_partition() {
        let faults = |rate| vec![(500, Fault::LeaderClock { rate }), (500, Fault::CutOffLeader)];
        let (r, v) = verdict("chubby", faults(0.5), 3_000);
        let p = r.leader_faults[1].leader.expect("a leader at 500");
        assert_eq!(v.leader_faults, r.leader_faults);
        let causes: Vec<(u32, u64, Cause)> = v.failovers.iter().map(|(f, c)| (f.position, f.crashed, *c)).collect();
        assert_eq!(causes, [(p, 500, Cause::Partition)]);
        let f = v.failovers[0].0;
        assert!(f.agreement.is_some() && f.new_leader.is_some_and(|(id, term)| id != IDS[p as usize] && term > f.term));
        assert_eq!(v.overlaps.len(), 1, "{:?}", v.overlaps);
        let o = &v.overlaps[0];
        assert!(o.who.iter().any(|&(q, term)| q == p as usize && term == f.term) && o.us > 0, "{o:?}");
        // The partition never heals: the old leader never hears of the new one, and nothing agrees.
        assert!(!v.agreed && v.leader.is_some_and(|l| l != p) && v.term > f.term, "{v:?}");
        let (_, within) = verdict("chubby", faults(0.97), 3_000);
        assert!(within.overlaps.is_empty(), "{:?}", within.overlaps);
        assert_eq!(within.failovers.iter().map(|(_, c)| *c).collect::<Vec<_>>(), [Cause::Partition]);
    }

    /// Bully's leader crashed at 500 is a crash-fault failover, dated then; the lease's holder,
    /// whose nodes meet only in the store, cut off from its peers loses nothing, and paused for
    /// 600 ms loses its lease: a failover caused by the pause, dated at its start.
    #[test]
    fn each_loss_has_its_cause() {
        let (r, v) = verdict("bully", vec![(500, Fault::CrashLeader)], 2_000);
        let crashed = r.outages[0].position;
        let causes: Vec<(u32, u64, Cause)> = v.failovers.iter().map(|(f, c)| (f.position, f.crashed, *c)).collect();
        assert_eq!(causes, [(crashed, 500, Cause::CrashFault)]);
        let (r, v) = verdict("lease", vec![(3_000, Fault::CutOffLeader)], 10_000);
        assert!(r.leader_faults[0].leader.is_some() && !r.splits.is_empty());
        assert!(v.failovers.is_empty() && v.overlaps.is_empty(), "{v:?}");
        let (r, v) = verdict("lease", vec![(3_000, Fault::PauseLeader { ms: 600 })], 10_000);
        let p = r.leader_faults[0].leader.expect("a holder at 3,000");
        let causes: Vec<(u32, u64, Cause)> = v.failovers.iter().map(|(f, c)| (f.position, f.crashed, *c)).collect();
        assert_eq!(causes, [(p, 3_000, Cause::Paused)]);
    }
}
