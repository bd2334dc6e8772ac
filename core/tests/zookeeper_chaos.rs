//! Seeded chaos for the kept ZooKeeper-style election:
//! random crashes of the leader and of followers, recoveries, lossy and slow
//! links and partitions, all healed before the horizon. Quorums and a
//! persisted promise make it safe under all of them, so safety is asserted on
//! every run, not only on the runs inside a timing model. Plans and checks
//! live in `common`.

mod common;

use common::{FULL, Run, chaos_run, final_beliefs, report};
use ringleader_core::algo::Leadership;

/// The latest belief of every node live at the end (a recovered node that
/// announced nothing since its recovery believes nothing).
fn live_beliefs(run: &Run) -> Vec<Option<Leadership>> {
    let latest = final_beliefs(&run.r, run.ids.len());
    (0..run.ids.len()).filter(|p| !run.r.crashed.contains(&(*p as u32))).map(|p| latest[p]).collect()
}

/// 2,000 seeded kept runs (n = 3..7) of the full mix: crashes of the leader and of followers,
/// recoveries, lossy links (drop <= 0.3), delays <= 100 ms and healing partitions. Never two
/// leaders of one term, no algorithm error, the horizon is reached, and at the horizon: when a
/// majority of the nodes is live, the live nodes agree on one live leader from some time after
/// the last fault to the end, from at most ZooKeeper-style's convergence bound after the last
/// fault on; when crashes without recovery left no majority, no live node believes anybody leads.
#[test]
fn zookeeper_kept_is_safe_under_full_chaos() {
    let runs = 2_000;
    let mut fo = Vec::new();
    let (mut majority_runs, mut minority_runs, mut converged) = (0, 0, Vec::new());
    let (mut partitions, mut recoveries, mut drops) = (0, 0, 0);
    for seed in 0..runs as u64 {
        let run = chaos_run("zookeeper", seed, FULL);
        run.assert_ran();
        run.assert_holds(run.safety());
        if run.agreed_if_majority(&mut converged) {
            majority_runs += 1;
        } else {
            minority_runs += 1;
            let beliefs = live_beliefs(&run);
            assert!(
                beliefs.iter().all(|b| b.is_none_or(|l| l.leader.is_none())),
                "{}: a minority believes in a leader at the horizon: {beliefs:?}\n{:?}\n{:?}",
                run.ctx,
                run.r.fault_log,
                run.r.leaderships
            );
        }
        partitions += usize::from(run.drawn.partition);
        recoveries += usize::from(run.drawn.recovery);
        drops += usize::from(run.drawn.drop);
        fo.extend(run.failovers());
    }
    eprintln!(
        "zookeeper kept, full chaos: {runs} runs ({partitions} with a partition, {recoveries} with a recovery, \
         {drops} with lossy links), 0 with two leaders of one term; {majority_runs} ended with a live majority \
         (all agreed), {minority_runs} without one (nobody led)"
    );
    eprintln!(
        "zookeeper kept, full chaos: {}",
        common::stats("agreement after the last fault, ms", converged.into_iter())
    );
    report("zookeeper kept, full chaos", &fo, runs);
}
