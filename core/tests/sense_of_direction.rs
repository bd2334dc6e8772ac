//! The elections that use a sense of direction (HyperElect on the oriented
//! hypercube, chordal capture on the chordally labelled complete network),
//! in the simulator: every arrangement of small n, random ones of larger n,
//! against their bounds, exact counts and lower bounds.

use rand::{SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;
use ringleader_core::algo::catalogue;
use ringleader_core::algo::{Role, Rule};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::spec::{AlgorithmSpec, permutations};
use ringleader_core::topology::Topology;

/// Run `spec` on `topo` with `ids` and initiators `init`, and check one leader, the best id of the
/// candidates, every node agreeing, no error.
fn run(spec: &AlgorithmSpec, topo: &Topology, ids: &[u64], init: &[u32], rule: Rule, cfg: &SimConfig) -> SimReport {
    let r = sim::run(spec, topo, ids, init, rule, cfg);
    let ctx = || format!("{} ids={ids:?} init={init:?} rule={rule:?} cfg={cfg:?}", spec.name);
    assert!(r.verdict.violations.is_empty(), "{}: {:?}", ctx(), r.verdict.violations);
    assert!(r.errors.is_empty(), "{}: {:?}", ctx(), r.errors);
    let want = spec.expected_winner(topo, ids, init, rule).unwrap();
    let leaders: Vec<u64> = r.decisions.iter().flatten().filter(|d| d.role == Role::Leader).map(|d| d.leader).collect();
    assert_eq!(leaders, vec![want], "{}", ctx());
    assert!(r.decisions.iter().all(|d| d.is_some_and(|d| d.leader == want)), "{}", ctx());
    r
}

fn schedules(seed: u64) -> [SimConfig; 3] {
    [
        SimConfig { seed, ..SimConfig::default() },
        SimConfig { seed, unit_delay: true, ..SimConfig::default() },
        SimConfig { seed, fifo: false, max_delay: 64, ..SimConfig::default() },
    ]
}

/// HyperElect on every arrangement of 4 and 8 nodes and on random ones of 16 and 32, all initiating or one,
/// FIFO, unit-delay and non-FIFO: one leader, the best id, and between 3N - 3 and Santoro's
/// 7N - (log N)^2 - 3 log N - 7 messages, both reached exactly by some arrangement of N <= 8; the same count for one
/// arrangement whatever the schedule and the initiators.
#[test]
fn hyper_elect_within_santoros_bound() {
    use ringleader_core::algo::hyper_elect::{best_count, bound};
    let spec = catalogue::find("hyper-elect").unwrap();
    for n in [2u32, 4, 8, 16, 32] {
        let topo = Topology::hypercube(n).unwrap();
        let all: Vec<u64> = (1..=u64::from(n)).collect();
        let arrangements = if n <= 8 {
            permutations(&all)
        } else {
            (0..300)
                .map(|s| {
                    let mut ids = all.clone();
                    ids.shuffle(&mut Pcg64Mcg::seed_from_u64(s));
                    ids
                })
                .collect()
        };
        let (mut lo, mut hi) = (u64::MAX, 0);
        for (a, ids) in arrangements.iter().enumerate() {
            let inits: [Vec<u32>; 2] = [(0..n).collect(), vec![a as u32 % n]];
            let rule = if a % 2 == 0 { Rule::Max } else { Rule::Min };
            let mut counts = Vec::new();
            for init in &inits {
                for cfg in schedules(a as u64) {
                    let m = run(spec, &topo, ids, init, rule, &cfg).counters.messages;
                    counts.push(m);
                    let n = u64::from(n);
                    assert!((best_count(n)..=bound(n)).contains(&m), "n={n} ids={ids:?} {m} messages");
                    lo = lo.min(m);
                    hi = hi.max(m);
                }
            }
            assert!(
                counts.iter().all(|&c| c == counts[0]),
                "n={n} ids={ids:?}: the ids alone fix the count, {counts:?}"
            );
        }
        eprintln!("hyper-elect N={n}: {lo}..={hi} messages, bound {}, best {}", bound(n.into()), best_count(n.into()));
        if n <= 8 {
            assert_eq!(lo, best_count(n.into()), "N={n}: some arrangement routes no match");
            assert_eq!(hi, bound(n.into()), "N={n}: some arrangement reaches Santoro's bound");
        }
        if n >= 4 {
            assert!(hi > best_count(n.into()), "N={n}: some arrangement routes a match");
        }
    }
}

/// All non-empty subsets of `0..n`.
fn subsets(n: u32) -> impl Iterator<Item = Vec<u32>> {
    (1u32..(1 << n)).map(move |mask| (0..n).filter(|p| mask & (1 << p) != 0).collect())
}

/// Chordal capture on every arrangement and every initiator set of n = 2..6, and every arrangement of n = 7
/// with one and with all initiating, FIFO, unit-delay and non-FIFO: one leader, the best initiator; every
/// capture answered once; 3(n - 1) + 2R messages with R <= k - 1 refused captures, so within 3n + 2k - 5,
/// exactly 3n - 3 with one initiator; ids increasing along chord 1, all initiating, unit delays reach 5n - 5.
#[test]
fn chordal_capture_within_its_bound() {
    use ringleader_core::protocol::MsgKind;
    let spec = catalogue::find("chordal-capture").unwrap();
    let mut runs = 0;
    for n in 2u32..=7 {
        let topo = Topology::complete_chordal(n).unwrap();
        let all: Vec<u64> = (1..=u64::from(n)).collect();
        for (a, ids) in permutations(&all).iter().enumerate() {
            let inits: Vec<Vec<u32>> =
                if n <= 6 { subsets(n).collect() } else { vec![vec![a as u32 % n], (0..n).collect()] };
            for init in &inits {
                let rule = if a % 2 == 0 { Rule::Max } else { Rule::Min };
                for cfg in schedules(a as u64 + init.len() as u64) {
                    let r = run(spec, &topo, ids, init, rule, &cfg);
                    let (n, k) = (u64::from(n), init.len() as u64);
                    let kind = |m: MsgKind| r.counters.by_kind[m as usize];
                    let captures = kind(MsgKind::ChordCapture);
                    let ctx = format!("n={n} ids={ids:?} init={init:?} {cfg:?}");
                    assert_eq!(kind(MsgKind::ChordAnswer), captures, "{ctx}");
                    assert_eq!(kind(MsgKind::Notify), n - 1, "{ctx}");
                    let refused = captures - (n - 1);
                    assert!(refused < k, "{ctx}: {refused} refused");
                    assert_eq!(r.counters.messages, 3 * (n - 1) + 2 * refused, "{ctx}");
                    assert!(r.counters.messages <= (spec.bound)(n, k), "{ctx}");
                    if k == 1 {
                        assert_eq!(r.counters.messages, 3 * n - 3, "{ctx}");
                    }
                    runs += 1;
                }
            }
        }
        let ascending = Topology::complete_chordal(n).unwrap();
        let unit = SimConfig { unit_delay: true, ..SimConfig::default() };
        let r = run(spec, &ascending, &all, &(0..n).collect::<Vec<_>>(), Rule::Max, &unit);
        assert_eq!(r.counters.messages, 5 * u64::from(n) - 5, "n={n}: ascending ids reach the bound");
    }
    eprintln!("chordal-capture: {runs} runs");
}
