//! Seeded chaos for the kept Chubby-style election: random
//! crashes of the leader and of followers, recoveries, lossy and slow links
//! and partitions. Chubby's safety does not depend on timing, so it is
//! asserted on every run: never two leaders of one term, and never two nodes
//! believing they lead at the same instant. Plans live in `common`.

mod common;

use common::{FULL, Mix, chaos_run, final_agreement, leader_intervals, no_overlap, report};
use ringleader_core::sim::SimReport;

/// Does any live position believe it leads at the end of the run?
fn someone_leads_at_end(r: &SimReport, ids: &[u64]) -> bool {
    leader_intervals(r, ids).iter().any(|&(p, _, e)| e >= r.end_time && !r.crashed.contains(&p))
}

/// 10,000 seeded kept-Chubby runs (n = 3..7) with everything the issue lists: crashes of the leader
/// and of followers, recoveries (with the stable record restored), lossy links (drop <= 0.3),
/// delays <= 100 ms and partitions, all healed by 6 s, horizon 5 s after the last fault. In
/// every run: no errors, the horizon is reached, never two leaders of one term, never two
/// self-believed leaders at one instant (any terms), and at the horizon, if a majority of the
/// nodes is up, every live node follows one live leader, and has done so since at most Chubby's
/// convergence bound after the last fault; if not, nobody leads.
#[test]
fn chubby_kept_is_safe_under_full_chaos() {
    let runs = 10_000;
    let mut fo = Vec::new();
    let (mut majority_end, mut minority_end, mut gaps, mut converged) = (0, 0, Vec::new(), Vec::new());
    for seed in 0..runs as u64 {
        let run = chaos_run("chubby", seed, FULL);
        run.assert_ran();
        run.assert_holds(run.safety());
        gaps.extend(run.assert_holds(no_overlap(&run.r, &run.ids)));
        let (r, ctx) = (&run.r, &run.ctx);
        if run.agreed_if_majority(&mut converged) {
            majority_end += 1;
        } else {
            minority_end += 1;
            assert!(final_agreement(r, &run.ids).is_none(), "{ctx}: a leader without a majority");
            assert!(!someone_leads_at_end(r, &run.ids), "{ctx}: a leader without a majority\n{:?}", r.leaderships);
        }
        fo.extend(run.failovers());
    }
    eprintln!("chubby kept, full chaos: overall shortest gap between two leaderships: {:?} ms", gaps.iter().min());
    eprintln!(
        "chubby kept, full chaos: {runs} runs, {majority_end} ending with a live majority (all agreed), \
         {minority_end} without (nobody led); {}",
        common::stats("shortest gap between two leaderships of a run, ms", gaps.iter().copied())
    );
    eprintln!(
        "chubby kept, full chaos: {}",
        common::stats("agreement after the last fault, ms", converged.into_iter())
    );
    report("chubby kept, full chaos", &fo, runs);
}

/// 300 runs of the full mix with link delays up to 1,500 ms, beyond the 1 s lease: liveness is
/// lost at times, safety never (one leader per term and no overlap are still asserted).
#[test]
fn chubby_kept_is_safe_with_delays_above_the_lease() {
    let runs = 300;
    let mix = Mix { max_delay: 1_500, ..FULL };
    let mut unagreed = 0;
    for seed in 0..runs as u64 {
        let run = chaos_run("chubby", 1_000_000 + seed, mix);
        assert!(run.r.errors.is_empty(), "{}: {:?}", run.ctx, run.r.errors);
        run.assert_holds(run.safety());
        run.assert_holds(no_overlap(&run.r, &run.ids));
        unagreed += usize::from(!run.agreed());
    }
    eprintln!("chubby kept, delays up to 1500 ms: {runs} runs safe, {unagreed} without agreement at the horizon");
}
