//! The case sweeps several algorithms' tests share, so that each test keeps
//! only its own assertions: every case of a complete network up to a size
//! ([`complete_cases`]: the capture elections and Villadangos), and the small
//! and random graphs the graph elections are checked on
//! ([`small_graph_arrangements`], [`random_graphs`]), each run with every node
//! initiating and then one ([`all_then_one`]: Yo-Yo and GHS), and the
//! synchronous rings of TimeSlice and VariableSpeeds ([`synchronous_rings`]).

use crate::algo::Rule;
use crate::report::SimReport;
use crate::sim::{self, SimConfig};
use crate::spec::{AlgorithmSpec, permutations};
use crate::topology::{IdOrder, Topology, TopologyKind, random_graph_edges};

/// Every arrangement of ids 1..=n on a complete network for 2 ≤ n ≤
/// `max_n`, every non-empty initiator set, both rules, and three schedules
/// (FIFO random delays, unit delays without FIFO, non-FIFO wide delays; each
/// seeded by the initiator set and the first id): `case` gets the network,
/// the ids, the initiators' positions, the rule and the schedule of each.
pub(crate) fn complete_cases(max_n: u32, mut case: impl FnMut(&Topology, &[u64], &[u32], Rule, &SimConfig)) {
    for n in 2..=max_n {
        let topo = Topology::complete(n).unwrap();
        for ids in permutations(&(1..=n as u64).collect::<Vec<_>>()) {
            for mask in 1u32..(1 << n) {
                let init: Vec<u32> = (0..n).filter(|p| mask & (1 << p) != 0).collect();
                for rule in [Rule::Max, Rule::Min] {
                    let seed = (mask as u64) << 8 | ids[0];
                    for cfg in [
                        SimConfig { seed, ..SimConfig::default() },
                        SimConfig { seed, unit_delay: true, fifo: false, ..SimConfig::default() },
                        SimConfig { seed, fifo: false, max_delay: 64, ..SimConfig::default() },
                    ] {
                        case(&topo, &ids, &init, rule, &cfg);
                    }
                }
            }
        }
    }
}

/// Small connected graphs (n, edges): a triangle with a tail, a 4-cycle with
/// a chord, a 5-cycle, two triangles joined by two links, and K4.
pub(crate) const SMALL_GRAPHS: [(u32, &[(u32, u32)]); 5] = [
    (4, &[(0, 1), (1, 2), (2, 0), (2, 3)]),
    (4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]),
    (5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]),
    (6, &[(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (0, 3), (2, 5)]),
    (4, &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]),
];

/// Every arrangement of ids 1..=n on each of [`SMALL_GRAPHS`]: `case` gets
/// the graph and the ids.
pub(crate) fn small_graph_arrangements(mut case: impl FnMut(&Topology, &[u64])) {
    for (n, edges) in SMALL_GRAPHS {
        let topo = Topology::graph(n, edges).unwrap();
        for ids in permutations(&(1..=n as u64).collect::<Vec<_>>()) {
            case(&topo, &ids);
        }
    }
}

/// Twelve random connected graphs, seed s giving n = 5 + 3s (5 to 38)
/// nodes, each with ids in the random order of the same seed.
pub(crate) fn random_graphs() -> impl Iterator<Item = (Topology, Vec<u64>)> {
    (0..12u64).map(|seed| {
        let n = 5 + (seed as u32 * 3);
        let topo = Topology::graph(n, &random_graph_edges(n, seed)).unwrap();
        (topo, IdOrder::Random(seed).arrange(n).unwrap())
    })
}

/// Run `spec` on `topo` with `ids` under `rule` on each schedule of `cfgs`,
/// with every node initiating, then with position 0 alone: each run ends
/// without an error or a violation, the best id leads, and the count is
/// within the run's bound. `check` gets each report for the algorithm's own
/// assertions.
pub(crate) fn all_then_one(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    rule: Rule,
    cfgs: &[SimConfig],
    mut check: impl FnMut(&SimReport),
) {
    let all: Vec<u32> = (0..topo.len()).collect();
    for cfg in cfgs {
        for init in [&all[..], &all[..1]] {
            let r = sim::run(spec, topo, ids, init, rule, cfg);
            assert!(r.errors.is_empty(), "{} {ids:?} {:?}", spec.name, r.errors);
            assert!(r.verdict.violations.is_empty(), "{} {ids:?} {:?}", spec.name, r.verdict.violations);
            let leader = r.verdict.leader.expect("a leader");
            assert_eq!(Some(ids[leader as usize]), rule.winner(ids.iter().copied()), "{} {ids:?}", spec.name);
            assert!(r.counters.messages <= r.bound, "{}: {} > {} on {ids:?}", spec.name, r.counters.messages, r.bound);
            check(&r);
        }
    }
}

/// Every arrangement of ids 1..=n up to rotation (2 ≤ n ≤ 7) on every ring
/// kind `spec` runs on, every node starting at once under the minimum rule,
/// on the default schedule (seeded by n) and with unit delays: each run ends
/// without a violation, and `check` gets its ids, ring kind, schedule and
/// report.
pub(crate) fn synchronous_rings(
    spec: &AlgorithmSpec,
    mut check: impl FnMut(&[u64], TopologyKind, &SimConfig, &SimReport),
) {
    for n in 2..=7u32 {
        let all: Vec<u32> = (0..n).collect();
        for ids in crate::spec::ring_arrangements(n) {
            for &kind in spec.topologies {
                for cfg in [
                    SimConfig { seed: n as u64, ..SimConfig::default() },
                    SimConfig { unit_delay: true, ..SimConfig::default() },
                ] {
                    let topo = Topology::build(kind, n, cfg.seed).unwrap();
                    let r = sim::run(spec, &topo, &ids, &all, Rule::Min, &cfg);
                    let name = spec.name;
                    assert!(r.verdict.violations.is_empty(), "{name} {ids:?} {kind:?}: {:?}", r.verdict.violations);
                    check(&ids, kind, &cfg, &r);
                }
            }
        }
    }
}
