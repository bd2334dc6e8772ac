//! Seeded chaos for kept Raft: random crashes of the best id (often the
//! leader) and of followers, recoveries, lossy and slow links and
//! partitions, all healed before the horizon. Majority votes and a persisted
//! term and vote make it safe under all of them, so safety is asserted on
//! every run. Plans and checks live in `common`.

mod common;

use common::{FULL, chaos_run, report};

/// 2,000 seeded kept runs (n = 3..7) of the full mix: crashes, recoveries, lossy links (drop <=
/// 0.3), delays <= 100 ms and healing partitions. Never two leaders of one term, no algorithm
/// error, the horizon is reached, and whenever a majority of the nodes is live at the horizon,
/// the live nodes agree on one live leader from at most Raft's convergence bound after the last
/// fault on. (Without CheckQuorum a leader left without a majority keeps believing it leads, as
/// in Raft: those runs are only counted.)
#[test]
fn raft_kept_is_safe_under_full_chaos() {
    let runs = 2_000;
    let mut fo = Vec::new();
    let (mut majority_runs, mut minority_runs, mut converged) = (0, 0, Vec::new());
    let (mut partitions, mut recoveries, mut drops) = (0, 0, 0);
    for seed in 0..runs as u64 {
        let run = chaos_run("raft", seed, FULL);
        run.assert_ran();
        run.assert_holds(run.safety());
        if run.agreed_if_majority(&mut converged) {
            majority_runs += 1;
        } else {
            minority_runs += 1;
        }
        partitions += usize::from(run.drawn.partition);
        recoveries += usize::from(run.drawn.recovery);
        drops += usize::from(run.drawn.drop);
        fo.extend(run.failovers());
    }
    eprintln!(
        "raft kept, full chaos: {runs} runs ({partitions} with a partition, {recoveries} with a recovery, \
         {drops} with lossy links), 0 with two leaders of one term; {majority_runs} ended with a live majority \
         (all agreed), {minority_runs} without one"
    );
    eprintln!("raft kept, full chaos: {}", common::stats("agreement after the last fault, ms", converged.into_iter()));
    report("raft kept, full chaos", &fo, runs);
}
