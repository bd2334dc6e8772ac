//! Seeded chaos for the kept Chubby-style election: random
//! crashes of the leader and of followers, recoveries, lossy and slow links
//! and partitions. Chubby's safety does not depend on timing, so it is
//! asserted on every run: never two leaders of one term, and never two nodes
//! believing they lead at the same instant. Plans live in `common`.

mod common;

use common::{FULL, Mix, chaos_run, final_agreement, report};
use ringleader_core::sim::SimReport;

/// The intervals in which each position believed it led: from its `Lead`
/// naming itself to its next `Lead` or its crash (the end of the run if neither).
fn leader_intervals(r: &SimReport, ids: &[u64]) -> Vec<(u32, u64, u64)> {
    let mut open: Vec<Option<u64>> = vec![None; ids.len()];
    let mut out = Vec::new();
    let mut crashes: Vec<(u64, u32)> = r.outages.iter().map(|o| (o.crashed, o.position)).collect();
    crashes.sort_unstable();
    let mut c = 0;
    for e in &r.leaderships {
        // A crash takes effect before the events of its instant.
        while c < crashes.len() && crashes[c].0 <= e.time {
            let (t, p) = crashes[c];
            if let Some(s) = open[p as usize].take() {
                out.push((p, s, t));
            }
            c += 1;
        }
        let p = e.position as usize;
        if let Some(s) = open[p].take() {
            out.push((e.position, s, e.time));
        }
        if e.leadership.leader == Some(ids[p]) {
            open[p] = Some(e.time);
        }
    }
    for &(t, p) in &crashes[c..] {
        if let Some(s) = open[p as usize].take() {
            out.push((p, s, t));
        }
    }
    out.extend(open.iter().enumerate().filter_map(|(p, s)| s.map(|s| (p as u32, s, r.end_time.max(s)))));
    out
}

/// No two positions believe they lead at one instant; returns the shortest
/// gap between one leadership's end and the next one's start, if any.
fn no_overlap(r: &SimReport, ids: &[u64]) -> Result<Option<u64>, String> {
    let mut iv = leader_intervals(r, ids);
    iv.sort_by_key(|&(_, s, e)| (s, e));
    let mut gap: Option<u64> = None;
    for (i, &(p, s, e)) in iv.iter().enumerate() {
        for &(q, s2, e2) in &iv[i + 1..] {
            if q != p && s2 < e && s < e2 {
                return Err(format!("positions {p} [{s}, {e}) and {q} [{s2}, {e2}) lead at once"));
            }
        }
        if let Some(&(_, s2, _)) = iv[i + 1..].iter().find(|&&(q, ..)| q != p) {
            gap = Some(gap.map_or(s2 - e.min(s2), |g| g.min(s2 - e.min(s2))));
        }
    }
    Ok(gap)
}

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
