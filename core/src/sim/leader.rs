//! Faults aimed at whoever leads (`CrashLeader`, `LeaveLeader`,
//! `CutOffLeader`, `LeaderClock`, `PauseLeader`): the simulator resolves each
//! at its time to the live node that leads then (see
//! [`LeaderFault`](crate::report::LeaderFault)) and applies to it the fault
//! these name.

use crate::faults::Fault;

/// A fault aimed at whoever leads, as its log names it.
pub(super) fn leader_fault_name(fault: &Fault) -> &'static str {
    match fault {
        Fault::CutOffLeader => "cut-off-leader",
        Fault::LeaderClock { .. } => "leader-clock",
        Fault::PauseLeader { .. } => "pause-leader",
        Fault::LeaveLeader => "leave-leader",
        _ => "crash-leader",
    }
}

/// What `fault`, aimed at whoever leads, does to position `p`, the leader, of `n`: a partition of
/// it alone and the rest, its clock, or its pause.
pub(super) fn on_leader(fault: &Fault, p: u32, n: u32) -> Fault {
    match *fault {
        Fault::LeaderClock { rate } => Fault::Clock { node: p, rate },
        Fault::PauseLeader { ms } => Fault::Pause { node: p, ms },
        // A single node is cut off from nobody: one group of every node, which splits nothing.
        _ if n <= 1 => Fault::Partition { groups: vec![vec![p]] },
        _ => Fault::Partition { groups: vec![vec![p], (0..n).filter(|&q| q != p).collect()] },
    }
}

#[cfg(test)]
mod tests {
    use crate::algo::catalogue::find;
    use crate::faults::{Fault, FaultPlan, Scheduled, Split};
    use crate::report::{LeaderFault, SimConfig, SimReport};
    use crate::sim::run_kept;
    use crate::topology::Topology;

    const IDS: [u64; 5] = [1, 2, 3, 4, 5];

    /// `algorithm` kept on five nodes (ids 1..5, seed 1) until 3,000 with `faults` at their times.
    fn kept(algorithm: &str, faults: Vec<(u64, Fault)>) -> SimReport {
        let spec = find(algorithm).unwrap();
        let topo = Topology::build(spec.default_topology(), 5, 1).unwrap();
        let faults = faults.into_iter().enumerate().map(|(i, (at, f))| Scheduled::new(at, i as u64, f)).collect();
        let cfg = SimConfig { seed: 1, horizon: Some(3_000), faults: FaultPlan { faults }, ..SimConfig::default() };
        run_kept(spec, &topo, &IDS, &[0, 1, 2, 3, 4], spec.rule, &cfg).unwrap()
    }

    /// Who leads just before `t` by the timeline: the node whose latest belief names itself, the
    /// highest term first.
    fn leader_before(r: &SimReport, t: u64) -> Option<u32> {
        let mut latest = [None; 5];
        for e in r.leaderships.iter().filter(|e| e.time < t) {
            latest[e.position as usize] = Some(e.leadership);
        }
        (0..5u32)
            .filter_map(|p| latest[p as usize].filter(|l| l.leader == Some(IDS[p as usize])).map(|l| (l.term, p)))
            .max()
            .map(|(_, p)| p)
    }

    /// Chubby's leader cut off at 500: the simulator finds the node that leads then (by its
    /// timeline), partitions it from the other four, and the run is the run that names that node
    /// in the partition.
    #[test]
    fn a_cut_off_leader_is_found_at_its_time() {
        let r = kept("chubby", vec![(500, Fault::CutOffLeader)]);
        let p = leader_before(&r, 500).expect("a leader by 500");
        assert_eq!(r.leader_faults, [LeaderFault { at: 500, fault: Fault::CutOffLeader, leader: Some(p) }]);
        let groups = vec![vec![p], (0..5).filter(|&q| q != p).collect()];
        assert_eq!(r.splits, [Split { from: 500, until: None, groups: groups.clone() }]);
        let named = kept("chubby", vec![(500, Fault::Partition { groups })]);
        assert_eq!((r.leaderships, r.outages), (named.leaderships, named.outages));
    }

    /// A leader clock fault at 500 slows the clock of the node that leads then, and a pause of
    /// the leader pauses it: each run is the run that names that node.
    #[test]
    fn a_leader_clock_or_pause_strikes_the_leader() {
        let r = kept("chubby", vec![(500, Fault::LeaderClock { rate: 0.5 })]);
        let p = leader_before(&r, 500).expect("a leader by 500");
        assert_eq!(r.leader_faults[0].leader, Some(p));
        let named = kept("chubby", vec![(500, Fault::Clock { node: p, rate: 0.5 })]);
        assert_eq!(r.leaderships, named.leaderships);
        let r = kept("raft", vec![(1_000, Fault::PauseLeader { ms: 600 })]);
        let p = leader_before(&r, 1_000).expect("a leader by 1,000");
        assert_eq!((r.leader_faults[0].leader, r.pauses.as_slice()), (Some(p), &[(p, 1_000, 1_600)][..]));
        assert_eq!(r.leaderships, kept("raft", vec![(1_000, Fault::Pause { node: p, ms: 600 })]).leaderships);
    }

    /// A leader fault that strikes before anyone leads (at 0, before the first election) does
    /// nothing, and the report and the log say so.
    #[test]
    fn a_leader_fault_with_no_leader_does_nothing() {
        let r = kept("chubby", vec![(0, Fault::CutOffLeader), (0, Fault::LeaderClock { rate: 2.0 })]);
        assert!(r.leader_faults.iter().all(|f| f.leader.is_none()) && r.leader_faults.len() == 2);
        assert!(r.splits.is_empty());
        assert!(
            r.fault_log.iter().any(|l| l == "0: cut-off-leader found no leader; nothing done"),
            "{:?}",
            r.fault_log
        );
    }
}
