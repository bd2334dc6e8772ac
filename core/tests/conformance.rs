//! Conformance of every algorithm in the catalogue, in the simulator:
//! exhaustive over id arrangements and initiator sets for small n, on every
//! topology the algorithm accepts, with FIFO, non-FIFO (where allowed),
//! unit-delay and staggered schedules; random large n against the bounds.

use ringleader_core::algo::catalogue::CATALOGUE;

use ringleader_core::algo::{Role, Rule};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::{IdOrder, Topology, TopologyKind};

/// All permutations of `1..=n` with id 1 at position 0 (rotations of a ring
/// arrangement are equivalent once initiator sets range over all subsets).
fn arrangements(n: u64) -> Vec<Vec<u64>> {
    ringleader_core::spec::ring_arrangements(n as u32)
}

/// Every non-empty subset of positions, as sorted position lists.
fn subsets(n: u32) -> Vec<Vec<u32>> {
    (1u32..(1 << n)).map(|mask| (0..n).filter(|p| mask & (1 << p) != 0).collect()).collect()
}

/// Can an overlay of `kind` have `n` positions? (A mesh needs n = rows × cols
/// with both at least 2, so prime sizes are skipped for meshes.)
fn buildable(kind: TopologyKind, n: u32) -> bool {
    Topology::build(kind, n, 0).is_ok()
}

fn configs(spec: &AlgorithmSpec, seed: u64) -> Vec<(&'static str, SimConfig)> {
    let mut v = vec![
        ("fifo", SimConfig { seed, ..SimConfig::default() }),
        ("unit", SimConfig { seed, unit_delay: true, ..SimConfig::default() }),
        ("stagger", SimConfig { seed, stagger: true, ..SimConfig::default() }),
    ];
    if !spec.assumptions.fifo {
        v.push(("non-fifo", SimConfig { seed, fifo: false, max_delay: 64, ..SimConfig::default() }));
        v.push(("non-fifo-stagger", SimConfig { seed, fifo: false, stagger: true, ..SimConfig::default() }));
    }
    v
}

fn check(
    spec: &AlgorithmSpec,
    kind: TopologyKind,
    ids: &[u64],
    init: &[u32],
    rule: Rule,
    cfg: &SimConfig,
) -> SimReport {
    // Rings: the seed draws an unoriented ring's labels; trees: the tree's shape.
    let topo = Topology::build(kind, ids.len() as u32, cfg.seed).unwrap();
    let r = sim::run(spec, &topo, ids, init, rule, cfg);
    let ctx = || format!("{} on {} ids={ids:?} initiators={init:?} rule={rule:?} cfg={cfg:?}", spec.name, kind.name());
    assert!(r.verdict.violations.is_empty(), "{}: {:?}", ctx(), r.verdict.violations);
    // Exact counts hold when initiators wake before any message reaches them (not under `stagger`).
    if let Some(exact) = spec.extras.exact
        && !cfg.stagger
    {
        assert_eq!(r.counters.messages, exact(r.n as u64, r.k as u64), "{}", ctx());
    }
    assert_eq!(r.counters.messages, r.counters.election_messages + r.counters.notification_messages);
    assert_eq!(r.sent_per_node.iter().sum::<u64>(), r.counters.messages, "{}", ctx());
    r
}

fn exhaustive(spec: &AlgorithmSpec, n: u64, all_subsets: bool) -> usize {
    let mut runs = 0;
    let inits: Vec<Vec<u32>> = if all_subsets {
        subsets(n as u32)
    } else {
        let mut v: Vec<Vec<u32>> = (0..n as u32).map(|p| vec![p]).collect();
        v.push((0..n as u32).collect());
        v
    };
    for (a, ids) in arrangements(n).iter().enumerate() {
        for (i, init) in inits.iter().enumerate() {
            for &kind in spec.topologies.iter().filter(|&&k| buildable(k, n as u32)) {
                // The rules mirror each other; both are run exhaustively for n ≤ 5.
                let rules: &[Rule] = if n <= 5 { &[Rule::Max, Rule::Min] } else { &[spec.rule] };
                for &rule in rules {
                    let seed = (a * 7919 + i * 31) as u64 + n;
                    let mut counts = Vec::new();
                    for (name, cfg) in configs(spec, seed) {
                        let r = check(spec, kind, ids, init, rule, &cfg);
                        if name == "fifo" || name == "unit" {
                            counts.push(r.counters.messages);
                        }
                        runs += 1;
                    }
                    if spec.extras.schedule_independent && (kind.oriented() || !kind.is_ring()) {
                        assert_eq!(
                            counts[0],
                            counts[1],
                            "{} on {} ids={ids:?} initiators={init:?}: count depends on the schedule",
                            spec.name,
                            kind.name()
                        );
                    }
                }
            }
        }
    }
    runs
}

/// For every algorithm and n ≤ 6: every arrangement × every initiator set ×
/// every topology × both rules × every schedule elects the extremum, all agree,
/// and counts stay within the bound (exact where the catalogue says so, and
/// schedule-independent where it says so).
#[test]
fn exhaustive_small_rings() {
    for spec in CATALOGUE {
        let mut runs = 0;
        for n in 2..=6 {
            runs += exhaustive(spec, n, true);
        }
        eprintln!("{}: {runs} runs", spec.name);
        // A hypercube has only 2 and 4 positions below 7 (a torus none): fewer runs, all of them made.
        let sizes = (2..=6).filter(|&n| spec.topologies.iter().any(|&k| buildable(k, n))).count();
        assert!(runs > 10_000 || sizes < 3, "{}: {runs} runs", spec.name);
    }
}

/// For n = 7 and 8: every arrangement, with each single initiator and with all initiating.
#[test]
fn exhaustive_rings_of_7_and_8() {
    for spec in CATALOGUE {
        let runs = exhaustive(spec, 7, false) + exhaustive(spec, 8, false);
        eprintln!("{}: {runs} runs", spec.name);
    }
}

/// Random rings up to n = 4096, random initiators and seeds, stay within the bounds.
#[test]
fn random_large_rings_within_bounds() {
    for spec in CATALOGUE {
        for (n, seeds) in [(64u32, 12u64), (257, 6), (1000, 3), (4096, 2)] {
            for seed in 0..seeds {
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                let k = [1, n / 3, n][seed as usize % 3].max(1);
                let init = ringleader_core::topology::pick_initiators(n, k, seed);
                // The largest rings run on the default topology and schedule only
                // (All the Way alone sends n² = 16.7 million messages at n = 4096).
                let kinds = if n > 1000 { &spec.topologies[..1] } else { spec.topologies };
                for &kind in kinds.iter().filter(|&&k| buildable(k, n)) {
                    for (_, cfg) in configs(spec, seed).into_iter().take(if n > 1000 { 1 } else { 5 }) {
                        let r = check(spec, kind, &ids, &init, spec.rule, &cfg);
                        assert!(r.counters.messages <= r.bound);
                    }
                }
            }
        }
    }
}

/// AsFar's published extremes are attained exactly: descending ids (max rule,
/// sending right) cost n(n+1)/2 election messages, ascending 2n-1, plus n notifications.
#[test]
fn as_far_worst_and_best_case_are_exact() {
    let spec = ringleader_core::algo::catalogue::find("as-far").unwrap();
    for n in [2u32, 3, 8, 33, 100] {
        let ring = Topology::ring(TopologyKind::RingUni, n, 0).unwrap();
        let all: Vec<u32> = (0..n).collect();
        let n64 = n as u64;
        let worst =
            sim::run(spec, &ring, &IdOrder::Descending.arrange(n).unwrap(), &all, Rule::Max, &SimConfig::default());
        assert_eq!(worst.counters.election_messages, n64 * (n64 + 1) / 2);
        assert_eq!(worst.counters.notification_messages, n64);
        assert_eq!(worst.counters.messages, worst.bound, "the bound is attained");
        let best =
            sim::run(spec, &ring, &IdOrder::Ascending.arrange(n).unwrap(), &all, Rule::Max, &SimConfig::default());
        assert_eq!(best.counters.election_messages, 2 * n64 - 1);
    }
}

/// All the Way needs no notification round: n² election messages, 0 notifications, every node decided.
#[test]
fn all_the_way_has_no_notification() {
    let spec = ringleader_core::algo::catalogue::find("all-the-way").unwrap();
    let ring = Topology::ring(TopologyKind::RingUni, 10, 0).unwrap();
    let r = sim::run(spec, &ring, &IdOrder::Random(3).arrange(10).unwrap(), &[4], Rule::Min, &SimConfig::default());
    assert_eq!((r.counters.election_messages, r.counters.notification_messages), (100, 0));
    assert!(r.decisions.iter().all(|d| d.is_some()));
}

/// Franklin's worst case: the catalogue's worst-case arrangement (bit-reversal
/// order) makes exactly half the candidates survive each stage, so Stages
/// costs 2n per stage for log n + 1 stages plus n notifications: exactly
/// 2n log n + 3n, the bound, for n = 2^p and both rules.
#[test]
fn stages_worst_case_attains_the_bound() {
    let spec = ringleader_core::algo::catalogue::find("stages").unwrap();
    let worst = spec.extras.worst_case.unwrap();
    for p in 1..=10u32 {
        let n = 1u32 << p;
        for rule in [Rule::Max, Rule::Min] {
            let ids = (worst.ids)(n, rule);
            let ring = Topology::ring(TopologyKind::RingBi, n, 0).unwrap();
            let all: Vec<u32> = (0..n).collect();
            let r = sim::run(spec, &ring, &ids, &all, rule, &SimConfig::default());
            assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
            assert_eq!(r.counters.messages, r.bound, "n = {n}, {rule:?}");
        }
    }
}

/// Every worst/best-case arrangement in the catalogue is a permutation of
/// 1..=n, and on the default topology with every node initiating it costs at
/// least (worst) or at most (best) as much as each of 30 random arrangements.
#[test]
fn worst_and_best_cases_bracket_random_arrangements() {
    for spec in CATALOGUE {
        for n in [2u32, 3, 5, 8, 13, 16, 31, 64] {
            if !buildable(spec.default_topology(), n) {
                continue;
            }
            for rule in [Rule::Max, Rule::Min] {
                let ring = Topology::build(spec.default_topology(), n, 0).unwrap();
                let all: Vec<u32> = (0..n).collect();
                let cost = |ids: &[u64]| {
                    let r = sim::run(spec, &ring, ids, &all, rule, &SimConfig::default());
                    assert!(r.verdict.violations.is_empty(), "{} {ids:?}: {:?}", spec.name, r.verdict.violations);
                    r.counters.messages
                };
                let randoms: Vec<u64> = (0..30).map(|s| cost(&IdOrder::Random(s).arrange(n).unwrap())).collect();
                for (arr, worst) in [(spec.extras.worst_case, true), (spec.extras.best_case, false)] {
                    let Some(arr) = arr else { continue };
                    let ids = (arr.ids)(n, rule);
                    let mut sorted = ids.clone();
                    sorted.sort_unstable();
                    assert_eq!(sorted, (1..=n as u64).collect::<Vec<_>>(), "{} n={n}", spec.name);
                    let c = cost(&ids);
                    if worst {
                        assert!(
                            randoms.iter().all(|&r| c >= r),
                            "{} worst n={n} {rule:?}: {c} < {randoms:?}",
                            spec.name
                        );
                    } else {
                        assert!(
                            randoms.iter().all(|&r| c <= r),
                            "{} best n={n} {rule:?}: {c} > {randoms:?}",
                            spec.name
                        );
                    }
                }
            }
        }
    }
}

/// The simulator scales: AsFar on a random ring of 100,000 nodes terminates
/// correctly within its bound (speed is measured in the benchmark, not here).
#[test]
fn as_far_on_100k_nodes() {
    let spec = ringleader_core::algo::catalogue::find("as-far").unwrap();
    let n = 100_000;
    let ring = Topology::ring(TopologyKind::RingUni, n, 1).unwrap();
    let ids = IdOrder::Random(1).arrange(n).unwrap();
    let all: Vec<u32> = (0..n).collect();
    let r = sim::run(spec, &ring, &ids, &all, Rule::Max, &SimConfig { seed: 1, ..SimConfig::default() });
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    let leader = r.verdict.leader.unwrap();
    assert_eq!(ids[leader as usize], n as u64);
    assert_eq!(r.decisions.iter().filter(|d| d.map(|d| d.role) == Some(Role::Follower)).count(), n as usize - 1);
    // n·H_n ≈ 1.2 million for n = 10^5: far from the n²/2 worst case.
    assert!(r.counters.election_messages < 3_000_000, "{}", r.counters.election_messages);
}

/// The Fibonacci round bound of Alternate, UniAlternate and MinMax is tight: for n = 2,
/// 3, 5, 8 (the G_k), some arrangement (found exhaustively, all initiating)
/// costs exactly the catalogue bound; and Alternate refuses unoriented rings.
#[test]
fn fibonacci_bounds_are_attained() {
    for (name, kind) in [
        ("alternate", TopologyKind::RingBi),
        ("uni-alternate", TopologyKind::RingUni),
        ("min-max", TopologyKind::RingUni),
    ] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        assert!(!spec.supports(TopologyKind::RingBiUnoriented));
        for n in [2u64, 3, 5, 8] {
            let ring = Topology::ring(kind, n as u32, 0).unwrap();
            let all: Vec<u32> = (0..n as u32).collect();
            let worst = arrangements(n)
                .iter()
                .map(|ids| sim::run(spec, &ring, ids, &all, Rule::Max, &SimConfig::default()).counters.messages)
                .max()
                .unwrap();
            assert_eq!(worst, (spec.bound)(n, n), "{name}, n = {n}");
        }
    }
    assert!(!ringleader_core::algo::catalogue::find("alternate").unwrap().supports(TopologyKind::RingUni));
}

/// UniStages' worst case: the bit-reversal arrangement halves the active
/// nodes every phase, so for n = 2^p it costs exactly 2n log n + 2n (the
/// bound), and the best case costs exactly 4n (one phase, the round that
/// detects the end, the notification), for both rules.
#[test]
fn uni_stages_worst_case_attains_the_bound() {
    for p in 1..=10u32 {
        worst_attains_bound_best_costs("uni-stages", TopologyKind::RingUni, 1 << p, 4);
    }
}

/// Alternate's and UniAlternate's worst-case construction takes T(n) steps
/// for every n, so it costs exactly the bound n·T(n) + n; the best case
/// (only the extremum survives step 1) costs exactly 3n; both rules.
#[test]
fn alternate_worst_case_attains_the_bound_for_every_n() {
    for (name, kind) in [("alternate", TopologyKind::RingBi), ("uni-alternate", TopologyKind::RingUni)] {
        for n in (2..=150u32).chain([233, 377, 1000, 4096]) {
            worst_attains_bound_best_costs(name, kind, n, 3);
        }
    }
}

/// On `n` nodes of a `kind` ring, under both rules, `name`'s worst-case
/// arrangement costs exactly its bound and its best case exactly
/// `best_per_node` · n messages, with no violation.
fn worst_attains_bound_best_costs(name: &str, kind: TopologyKind, n: u32, best_per_node: u64) {
    let spec = ringleader_core::algo::catalogue::find(name).unwrap();
    let ring = Topology::ring(kind, n, 0).unwrap();
    let all: Vec<u32> = (0..n).collect();
    for rule in [Rule::Max, Rule::Min] {
        let run = |ids: &[u64]| {
            let r = sim::run(spec, &ring, ids, &all, rule, &SimConfig::default());
            assert!(r.verdict.violations.is_empty(), "{name} {ids:?}: {:?}", r.verdict.violations);
            r
        };
        let worst = run(&(spec.extras.worst_case.unwrap().ids)(n, rule));
        assert_eq!(worst.counters.messages, worst.bound, "{name}, n = {n}, {rule:?}");
        let best = run(&(spec.extras.best_case.unwrap().ids)(n, rule));
        assert_eq!(best.counters.messages, best_per_node * u64::from(n), "{name}, n = {n}, {rule:?}");
    }
}

/// Echo with extinction on explicit small graphs (a triangle with a tail, a 4-cycle with a chord, K5, a
/// star, a 3×3 mesh): under both rules and on FIFO, unit-delay, non-FIFO and staggered schedules, every
/// arrangement of ids and every initiator set elects the best initiator, with exactly n − 1
/// notifications, at least 2m + n − 1 messages (the winning wave crosses every edge twice), exactly that
/// with one initiator, and at most 2·m·k + n − 1 for the graph's actual edge count m. On the 9-node
/// mesh, where 9! × 511 runs are too many, only the order of the initiators' ids matters (other ids are
/// never sent or compared): every order is run for up to 4 initiators, six orders for more.
#[test]
fn echo_extinction_on_small_graphs_within_2mk_plus_n_minus_1() {
    use ringleader_core::spec::permutations;
    let spec = ringleader_core::algo::catalogue::find("echo-extinction").unwrap();
    let star: Vec<(u32, u32)> = (1..6).map(|v| (0, v)).collect();
    let graphs = [
        ("triangle with a tail", Topology::graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)]).unwrap()),
        ("4-cycle with a chord", Topology::graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]).unwrap()),
        ("K5", Topology::complete(5).unwrap()),
        ("star", Topology::tree(6, &star).unwrap()),
        ("3x3 mesh", Topology::mesh(3, 3).unwrap()),
    ];
    for (name, topo) in &graphs {
        let (n, m) = (topo.len(), topo.edges().len() as u64);
        let n64 = n as u64;
        let mut runs = 0;
        for init in subsets(n) {
            let k = init.len() as u64;
            // Id arrangements: all of them up to n = 6; on the mesh, orders of the initiators' ids.
            let arrangements: Vec<Vec<u64>> = if n <= 6 {
                permutations(&(1..=n64).collect::<Vec<_>>())
            } else {
                let own: Vec<u64> = (1..=k).collect();
                let orders = if k <= 4 {
                    permutations(&own)
                } else {
                    let mut v = vec![own.clone(), own.iter().rev().copied().collect()];
                    v.extend((0..4).map(|s| IdOrder::Random(s).arrange(k as u32).unwrap()));
                    v
                };
                orders
                    .into_iter()
                    .map(|order| {
                        let mut ids = vec![0; n as usize];
                        let mut rest = k + 1..;
                        for p in 0..n {
                            ids[p as usize] = match init.iter().position(|&q| q == p) {
                                Some(i) => order[i],
                                None => rest.next().unwrap(),
                            };
                        }
                        ids
                    })
                    .collect()
            };
            for (a, ids) in arrangements.iter().enumerate() {
                for rule in [Rule::Max, Rule::Min] {
                    let best = rule.winner(init.iter().map(|&p| ids[p as usize])).unwrap();
                    let seed = a as u64 * 131 + k;
                    for cfg in [
                        SimConfig { seed, ..SimConfig::default() },
                        SimConfig { seed, unit_delay: true, ..SimConfig::default() },
                        SimConfig { seed, fifo: false, max_delay: 64, ..SimConfig::default() },
                        SimConfig { seed, stagger: true, ..SimConfig::default() },
                        SimConfig { seed, fifo: false, stagger: true, ..SimConfig::default() },
                    ] {
                        let r = sim::run(spec, topo, ids, &init, rule, &cfg);
                        let ctx = || format!("{name} ids={ids:?} initiators={init:?} {rule:?} {cfg:?}");
                        assert!(r.verdict.violations.is_empty(), "{}: {:?}", ctx(), r.verdict.violations);
                        // Under stagger a designated initiator reached first is no initiator; the
                        // verdict then checks the best of those that woke by themselves.
                        if !cfg.stagger {
                            assert_eq!(r.verdict.leader.map(|p| ids[p as usize]), Some(best), "{}", ctx());
                        }
                        assert_eq!(r.counters.notification_messages, n64 - 1, "{}", ctx());
                        let (msgs, one_wave, k_waves) = (r.counters.messages, 2 * m + n64 - 1, 2 * m * k + n64 - 1);
                        assert!(msgs <= k_waves, "{}: {msgs} > 2mk + n - 1", ctx());
                        assert!(msgs >= one_wave, "{}: {msgs} < 2m + n - 1", ctx());
                        if k == 1 {
                            assert_eq!(msgs, one_wave, "{}", ctx());
                        }
                        assert!(msgs <= r.bound, "{}", ctx());
                        runs += 1;
                    }
                }
            }
        }
        eprintln!("echo-extinction on {name} (n = {n}, m = {m}): {runs} runs");
    }
}

/// Mesh corner election on every shape from 2 × 2 to 5 × 5 and on 2 × 7, 7 × 2 and 3 × 8: random ids (and the
/// catalogue's worst and best cases), each of a few single initiators and all initiating, both rules, every
/// schedule config: the best corner leads, every node decides for it, the count is within the catalogue bound,
/// and without stagger it is exactly `mesh_corners::message_count` (so it does not depend on the schedule). The
/// worst case with all initiating costs 6n + n + 2·max(rows, cols) − 9, the bound itself on the longest shape.
#[test]
fn mesh_corners_on_every_shape() {
    use ringleader_core::algo::mesh_corners;
    let spec = ringleader_core::algo::catalogue::find("mesh-corners").unwrap();
    let shapes = (2..=5u32).flat_map(|r| (2..=5u32).map(move |c| (r, c))).chain([(2, 7), (7, 2), (3, 8)]);
    let mut runs = 0;
    for (rows, cols) in shapes {
        let topo = Topology::mesh(rows, cols).unwrap();
        let n = rows * cols;
        let corners = mesh_corners::corners(rows, cols).map(|(p, _)| p);
        for rule in [Rule::Max, Rule::Min] {
            let mut arrangements: Vec<(String, Vec<u64>)> =
                (0..6).map(|s| (format!("random {s}"), IdOrder::Random(s).arrange(n).unwrap())).collect();
            arrangements.push(("worst".into(), (spec.extras.worst_case.unwrap().ids)(n, rule)));
            arrangements.push(("best".into(), (spec.extras.best_case.unwrap().ids)(n, rule)));
            for (a, (name, ids)) in arrangements.iter().enumerate() {
                let best = rule.winner(corners.map(|p| ids[p as usize])).unwrap();
                let mut inits: Vec<Vec<u32>> = vec![(0..n).collect(), vec![0], vec![n / 2], vec![n - 1]];
                inits.push(ringleader_core::topology::pick_initiators(n, 1, a as u64));
                for init in &inits {
                    for (cfg_name, cfg) in configs(spec, (a as u64) * 31 + n as u64) {
                        let r = sim::run(spec, &topo, ids, init, rule, &cfg);
                        let ctx = format!("{rows} x {cols} {name} ids={ids:?} init={init:?} {rule:?} {cfg_name}");
                        assert!(r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
                        let leader = r.verdict.leader.unwrap_or_else(|| panic!("{ctx}: no single leader"));
                        assert_eq!(ids[leader as usize], best, "{ctx}: the best corner leads");
                        assert!(r.decisions.iter().all(|d| d.map(|d| d.leader) == Some(best)), "{ctx}: agreement");
                        assert!(r.counters.messages <= r.bound, "{ctx}");
                        let exact = mesh_corners::message_count(rows, cols, ids, init.len() as u64, rule);
                        if cfg.stagger {
                            assert!(r.counters.messages <= exact, "{ctx}: fewer spontaneous wake-ups");
                        } else {
                            assert_eq!(r.counters.messages, exact, "{ctx}");
                        }
                        runs += 1;
                    }
                }
                if name == "worst" {
                    let all: Vec<u32> = (0..n).collect();
                    let r = sim::run(spec, &topo, ids, &all, rule, &SimConfig::default());
                    let (n, side) = (n as u64, rows.max(cols) as u64);
                    assert_eq!(r.counters.messages, 7 * n + 2 * side - 9, "{rows} x {cols} {rule:?}");
                    if side == mesh_corners::longest_side(n) {
                        assert_eq!(r.counters.messages, r.bound, "{rows} x {cols}: the bound is attained");
                    }
                }
            }
        }
    }
    eprintln!("mesh-corners: {runs} runs");
}

/// Elect_root on paths, stars, caterpillars and random trees of 2 to 40 nodes, with one, two and all nodes
/// initiating, both rules, FIFO, unit-delay and staggered schedules: exactly one node leads, it is one of
/// two neighbouring saturated nodes (the better of the two), the count is exactly 3n + k* − 2 (k* the nodes
/// that woke by themselves, also under stagger) and exactly 2 messages carry an id (the two `Election`s).
#[test]
fn elect_root_costs_3n_plus_k_minus_2_with_two_ids() {
    use ringleader_core::algo::{MsgKind, UNKNOWN_LEADER};
    let spec = ringleader_core::algo::catalogue::find("elect-root").unwrap();
    let mut runs = 0;
    for n in 2..=40u32 {
        let path: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        let star: Vec<(u32, u32)> = (1..n).map(|v| (0, v)).collect();
        let caterpillar: Vec<(u32, u32)> =
            (1..n).map(|v| if v % 2 == 1 { (v.saturating_sub(2), v) } else { (v - 1, v) }).collect();
        let mut trees = vec![Topology::tree(n, &path).unwrap(), Topology::tree(n, &star).unwrap()];
        trees.push(Topology::tree(n, &caterpillar).unwrap());
        trees.extend((0..3).map(|s| Topology::random_tree(n, s).unwrap()));
        for (t, topo) in trees.iter().enumerate() {
            let ids = IdOrder::Random(u64::from(n) * 10 + t as u64).arrange(n).unwrap();
            for init in [vec![0], vec![0, n - 1], (0..n).collect()] {
                for rule in [Rule::Min, Rule::Max] {
                    for cfg in [
                        SimConfig { seed: runs, ..SimConfig::default() },
                        SimConfig { seed: runs, unit_delay: true, ..SimConfig::default() },
                        SimConfig { seed: runs, stagger: true, ..SimConfig::default() },
                    ] {
                        let r = sim::run(spec, topo, &ids, &init, rule, &cfg);
                        let ctx = || format!("n={n} tree {t} ids={ids:?} initiators={init:?} {rule:?} {cfg:?}");
                        assert!(r.verdict.violations.is_empty(), "{}: {:?}", ctx(), r.verdict.violations);
                        let leader = r.verdict.leader.expect("a leader") as usize;
                        let leaders = r.decisions.iter().filter(|d| d.is_some_and(|d| d.role == Role::Leader));
                        assert_eq!(leaders.count(), 1, "{}", ctx());
                        // The loser of the exchange knows the leader; every other follower knows only that it follows.
                        let knowing: Vec<usize> = (0..n as usize)
                            .filter(|&p| {
                                r.decisions[p].is_some_and(|d| d.role == Role::Follower && d.leader != UNKNOWN_LEADER)
                            })
                            .collect();
                        assert_eq!(knowing.len(), 1, "{}", ctx());
                        let partner = knowing[0];
                        assert_eq!(r.decisions[partner].unwrap().leader, ids[leader], "{}", ctx());
                        assert!(
                            topo.ports(leader as u32).iter().any(|l| l.peer as usize == partner),
                            "{}: not neighbours",
                            ctx()
                        );
                        assert!(rule.beats(ids[leader], ids[partner]), "{}: the worse of the pair leads", ctx());
                        assert_eq!(r.counters.by_kind[MsgKind::Election as usize], 2, "{}", ctx());
                        let k = r.counters.by_kind[MsgKind::Wakeup as usize] + 2 - u64::from(n);
                        if !cfg.stagger {
                            assert_eq!(k, init.len() as u64, "{}: wake-ups", ctx());
                        }
                        assert_eq!(r.counters.messages, 3 * u64::from(n) + k - 2, "{}", ctx());
                        runs += 1;
                    }
                }
            }
        }
    }
    eprintln!("elect-root: {runs} runs");
}

/// On large random trees Elect_root sends two more messages than Elect_min (tree saturation) but far fewer
/// bytes, since only 2 of its messages carry an id against Elect_min's 2n − 2 (wake-ups, the same in both,
/// carry none): under 60% at n = 10,000.
#[test]
fn elect_root_bytes_are_well_below_tree_saturation() {
    let root = ringleader_core::algo::catalogue::find("elect-root").unwrap();
    let min = ringleader_core::algo::catalogue::find("tree-saturation").unwrap();
    for n in [100u32, 1_000, 10_000] {
        let topo = Topology::random_tree(n, 1).unwrap();
        let ids = IdOrder::Random(1).arrange(n).unwrap();
        let init: Vec<u32> = (0..n).step_by(10).collect();
        let cfg = SimConfig { seed: 1, ..SimConfig::default() };
        let a = sim::run(root, &topo, &ids, &init, Rule::Min, &cfg);
        let b = sim::run(min, &topo, &ids, &init, Rule::Min, &cfg);
        assert!(a.verdict.violations.is_empty() && b.verdict.violations.is_empty());
        assert_eq!(a.counters.messages, b.counters.messages + 2, "n = {n}");
        eprintln!(
            "n = {n}: elect-root {} messages, {} bytes; tree-saturation {} messages, {} bytes ({:.2}x)",
            a.counters.messages,
            a.counters.bytes,
            b.counters.messages,
            b.counters.bytes,
            a.counters.bytes as f64 / b.counters.bytes as f64
        );
        if n == 10_000 {
            assert!(5 * a.counters.bytes < 3 * b.counters.bytes, "{} vs {} bytes", a.counters.bytes, b.counters.bytes);
        }
    }
}
