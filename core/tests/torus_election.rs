//! The torus election (marking territory on an oriented torus) in the
//! simulator: many random arrangements, initiator sets and schedules on
//! square and thin tori, against the worst count derived in its file, with
//! exactly one leader whom every node follows and n − 1 notifications.

use rand::{Rng, SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;
use ringleader_core::algo::torus_elect::{bound, worst_count};
use ringleader_core::algo::{Role, Rule, catalogue};
use ringleader_core::protocol::MsgKind;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::Topology;

/// Run one election; check one leader, every node following it, no error, and return (messages, notifications).
fn run(topo: &Topology, ids: &[u64], init: &[u32], rule: Rule, cfg: &SimConfig) -> (u64, u64) {
    let spec = catalogue::find("torus-elect").unwrap();
    let r = sim::run(spec, topo, ids, init, rule, cfg);
    let ctx = || format!("ids={ids:?} init={init:?} rule={rule:?} cfg={cfg:?}");
    assert!(r.verdict.violations.is_empty(), "{}: {:?}", ctx(), r.verdict.violations);
    assert!(r.errors.is_empty(), "{}: {:?}", ctx(), r.errors);
    let leaders: Vec<u64> = r.decisions.iter().flatten().filter(|d| d.role == Role::Leader).map(|d| d.leader).collect();
    assert_eq!(leaders.len(), 1, "{}: leaders {leaders:?}", ctx());
    assert!(r.decisions.iter().all(|d| d.is_some_and(|d| d.leader == leaders[0])), "{}: {:?}", ctx(), r.decisions);
    (r.counters.messages, r.counters.by_kind[MsgKind::TorusNotify as usize])
}

/// On 3 x 3 up to 16 x 16 and thin 3 x 12 and 4 x 10 tori, 60 random arrangements each with every node, one
/// node or a random third initiating, under random, unit and non-FIFO delays: one leader followed by all, n - 1
/// notifications, and never more messages than the worst count derived for that shape (nor than the bound for n).
#[test]
fn one_leader_within_the_derived_count_on_every_schedule_tried() {
    for (rows, cols) in [(3u32, 3u32), (3, 4), (4, 4), (5, 5), (3, 12), (4, 10), (6, 6), (8, 8), (16, 16)] {
        let topo = Topology::torus(rows, cols).unwrap();
        let n = rows * cols;
        let worst = worst_count(rows.into(), cols.into());
        assert!(worst <= bound(n.into()), "{rows}x{cols}");
        let (mut lo, mut hi) = (u64::MAX, 0);
        let runs = if n > 100 { 12 } else { 60 };
        for s in 0..runs {
            let mut rng = Pcg64Mcg::seed_from_u64(s);
            let mut ids: Vec<u64> = (1..=u64::from(n)).collect();
            ids.shuffle(&mut rng);
            let init: Vec<u32> = match s % 3 {
                0 => (0..n).collect(),
                1 => vec![rng.random_range(0..n)],
                _ => (0..n).filter(|_| rng.random_bool(0.33)).chain([0]).collect(),
            };
            let rule = if s % 2 == 0 { Rule::Max } else { Rule::Min };
            for cfg in [
                SimConfig { seed: s, ..SimConfig::default() },
                SimConfig { seed: s, unit_delay: true, ..SimConfig::default() },
                SimConfig { seed: s, fifo: false, max_delay: 64, ..SimConfig::default() },
            ] {
                let (m, notes) = run(&topo, &ids, &init, rule, &cfg);
                assert_eq!(notes, u64::from(n) - 1, "{rows}x{cols} ids={ids:?}");
                assert!(m <= worst, "{rows}x{cols} ids={ids:?} init={init:?}: {m} > {worst}");
                lo = lo.min(m);
                hi = hi.max(m);
            }
        }
        eprintln!(
            "torus-elect {rows}x{cols}: {lo}..={hi} messages ({:.1}n..{:.1}n), worst count {worst} ({:.0}n)",
            lo as f64 / f64::from(n),
            hi as f64 / f64::from(n),
            worst as f64 / f64::from(n)
        );
    }
}

/// The derived count grows linearly on square tori: worst_count(k x k) / k^2 stays below a constant (and the
/// bound for n is the largest over the shapes of n, at least the square one's).
#[test]
fn the_worst_count_is_linear_on_square_tori() {
    let ratios: Vec<f64> = [4u64, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]
        .iter()
        .map(|&k| worst_count(k, k) as f64 / (k * k) as f64)
        .collect();
    assert!(ratios.iter().all(|&r| r < 650.0), "{ratios:?}");
    assert!(ratios.windows(3).all(|w| w[2] - w[1] < w[1] - w[0]), "the growth slows: {ratios:?}");
    assert!(bound(64 * 64) >= worst_count(64, 64));
    eprintln!("worst_count(k x k)/n: {ratios:?}");
}
