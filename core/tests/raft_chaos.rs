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

/// Every combination of PreVote, CheckQuorum and the lease, 150 seeded runs each of the full mix
/// plus a window in which every link duplicates up to half its messages and a pause of 50 to
/// 1,000 ms of a random node: never two leaders of one term, with the lease never two nodes
/// believing they lead at one instant (a crashed node's belief ends at its crash, a paused node's
/// time paused is no part of its leadership), and whenever a majority is live at the horizon,
/// agreement within Raft's convergence bound of the last fault.
#[test]
fn raft_kept_with_every_option_is_safe_under_chaos_and_duplicates() {
    use common::{FAULTS_END, chaos_run_with, no_overlap_outside_pauses};
    use rand::Rng;
    use ringleader_core::faults::{Fault, LinkFault, Scheduled};
    let duplicates_and_a_pause = |rng: &mut rand_pcg::Pcg64Mcg, n: u32, _last: u64| {
        let t = rng.random_range(1_000..FAULTS_END - 1_500);
        let until = t + rng.random_range(100..1_500);
        let fault = LinkFault { duplicate: rng.random_range(0.05..=0.5), ..LinkFault::default() };
        let seed = rng.random();
        let paused_at = rng.random_range(1_000..FAULTS_END - 1_500);
        let pause = Fault::Pause { node: rng.random_range(0..n), ms: rng.random_range(50..=1_000) };
        vec![
            Scheduled::new(t, seed, Fault::Link { from: None, to: None, fault }),
            Scheduled::new(until, seed, Fault::Link { from: None, to: None, fault: LinkFault::default() }),
            Scheduled::new(paused_at, seed, pause),
        ]
    };
    for bits in 0..8u8 {
        let options: Vec<(String, String)> = ["pre_vote", "check_quorum", "lease"]
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), (bits >> i & 1 == 1).to_string()))
            .collect();
        let lease = bits & 4 != 0;
        let (mut converged, mut majority_runs) = (Vec::new(), 0);
        for seed in 0..150 {
            let run = chaos_run_with("raft", seed, FULL, &options, duplicates_and_a_pause);
            run.assert_ran();
            run.assert_holds(run.safety());
            if lease {
                run.assert_holds(no_overlap_outside_pauses(&run.r, &run.ids, &run.pauses));
            }
            majority_runs += usize::from(run.agreed_if_majority(&mut converged));
        }
        eprintln!(
            "raft {options:?}, chaos, duplicates and a pause: 150 runs, 0 with two leaders of one term{}; {majority_runs} \
             with a live majority, all agreed; {}",
            if lease { ", 0 with two at once" } else { "" },
            common::stats("agreement after the last fault, ms", converged.into_iter())
        );
    }
}
