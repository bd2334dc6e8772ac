//! Seeded chaos for kept bully (issue 4, item 5): random crashes of the
//! leader and of followers, recoveries, lossy and slow links and partitions,
//! all healed before the horizon; safety (one leader per term) and agreement
//! after healing. Plans and checks live in `common`.

mod common;

use common::{FULL, Mix, chaos_run, report};

/// 2,000 seeded kept-bully runs (n = 3..7) inside bully's model: crashes of the leader and of
/// followers (no recovery, unless every node crashed: then the first leader comes back) and
/// slow links, delays at most 100 ms, a fifth of the 500 ms answer
/// timeout. Never two leaders of one term, and once every fault is over the live nodes agree on
/// one live leader before the horizon.
#[test]
fn bully_kept_is_safe_under_crashes_and_delays() {
    let mix = Mix { recoveries: false, drops: false, partitions: false, ..FULL };
    let runs = 2_000;
    let mut fo = Vec::new();
    for seed in 0..runs as u64 {
        let run = chaos_run("bully", seed, mix);
        let (r, ctx) = (&run.r, &run.ctx);
        assert!(r.horizon_reached, "{ctx}: stopped before the horizon: {:?}", r.fault_log);
        assert!(r.errors.is_empty(), "{ctx}: {:?}", r.errors);
        if let Err(e) = run.safety() {
            panic!("{ctx}: {e}\n{:?}\n{:?}", r.fault_log, r.leaderships);
        }
        assert!(run.agreed(), "{ctx}: no agreement at the horizon\n{:?}\n{:?}", r.fault_log, r.leaderships);
        fo.extend(run.failovers());
    }
    report("bully kept, crashes and delays <= 100 ms", &fo, runs);
}

/// 2,000 seeded kept-bully runs with everything the issue lists: crashes, recoveries, lossy
/// links (drop <= 0.3), delays <= 100 ms and healing partitions. Bully has no quorum and keeps
/// no term across a crash, so it is not safe here: the test counts the runs with two leaders
/// of one term or without agreement at the horizon, prints them, and asserts that every such
/// run drew a fault outside the model (a recovery, a lossy link or a partition).
#[test]
fn bully_kept_full_chaos_is_measured() {
    let runs = 2_000;
    let mut fo = Vec::new();
    let (mut unsafe_by, mut unagreed_by) = ([0usize; 8], [0usize; 8]);
    let mut drawn_by = [0usize; 8];
    for seed in 0..runs as u64 {
        let run = chaos_run("bully", seed, FULL);
        let (r, ctx) = (&run.r, &run.ctx);
        assert!(r.horizon_reached, "{ctx}: stopped before the horizon: {:?}", r.fault_log);
        assert!(r.errors.is_empty(), "{ctx}: {:?}", r.errors);
        let d = run.drawn;
        let class = usize::from(d.recovery) | usize::from(d.drop) << 1 | usize::from(d.partition) << 2;
        drawn_by[class] += 1;
        let safe = run.safety().is_ok();
        let agreed = run.agreed();
        unsafe_by[class] += usize::from(!safe);
        unagreed_by[class] += usize::from(!agreed);
        assert!(class != 0 || (safe && agreed), "{ctx}: failed within the model");
        if safe {
            fo.extend(run.failovers());
        }
    }
    eprintln!(
        "bully kept, full chaos: {runs} runs; by faults drawn (recovery, drop, partition): runs / two leaders of one term / no agreement at the horizon"
    );
    for class in 0..8 {
        eprintln!(
            "  recovery {:5} drop {:5} partition {:5}: {:4} / {:3} / {:3}",
            class & 1 != 0,
            class & 2 != 0,
            class & 4 != 0,
            drawn_by[class],
            unsafe_by[class],
            unagreed_by[class]
        );
    }
    report("bully kept, full chaos (safe runs only)", &fo, runs);
}

/// 300 runs of the full mix with delays up to 1,500 ms, three times bully's answer timeout:
/// the algorithm's timing assumption is broken, so safety is reported, not asserted.
#[test]
fn bully_kept_with_delays_above_the_timeout() {
    let runs = 300;
    let (mut unsafe_runs, mut unagreed) = (0, 0);
    let mut fo = Vec::new();
    let mix = Mix { max_delay: 1_500, recoveries: false, drops: false, partitions: false };
    for seed in 0..runs as u64 {
        let run = chaos_run("bully", 1_000_000 + seed, mix);
        unsafe_runs += usize::from(run.safety().is_err());
        unagreed += usize::from(!run.agreed());
        fo.extend(run.failovers());
    }
    eprintln!(
        "bully kept, crashes and delays up to 1500 ms: {unsafe_runs} of {runs} runs had two leaders of one term, {unagreed} had no agreement at the horizon"
    );
    report("bully kept, crashes and delays up to 1500 ms", &fo, runs);
}
