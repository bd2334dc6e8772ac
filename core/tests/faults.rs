//! Faults in the simulator's transport: crashes, recoveries, lossy, slow,
//! duplicating and reordering links, partitions, and the verdicts they lead
//! to. The seed of every random run is in its assertion messages.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ringleader_core::algo::catalogue::{self};
use ringleader_core::algo::{Decision, MsgKind, Role};
use ringleader_core::faults::{Fault, FaultPlan, LinkFault, Scheduled, Trigger};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::{IdOrder, Topology};

fn spec(name: &str) -> &'static AlgorithmSpec {
    catalogue::find(name).unwrap()
}

fn at(at: u64, fault: Fault) -> Scheduled {
    Scheduled::new(at, at ^ 0x5eed, fault)
}

fn every_link(fault: LinkFault) -> Fault {
    Fault::Link { from: None, to: None, fault }
}

fn plan(faults: Vec<Scheduled>) -> FaultPlan {
    FaultPlan { faults }
}

/// Runs `name` on its default overlay of `n` positions with `ids`, every
/// position initiating.
fn run_ids(name: &str, ids: &[u64], cfg: &SimConfig) -> SimReport {
    let spec = spec(name);
    let n = ids.len() as u32;
    let topo = Topology::build(spec.default_topology(), n, cfg.seed).unwrap();
    let all: Vec<u32> = (0..n).collect();
    sim::run(spec, &topo, ids, &all, spec.rule, cfg)
}

fn run_n(name: &str, n: u32, cfg: &SimConfig) -> SimReport {
    run_ids(name, &IdOrder::Random(cfg.seed).arrange(n).unwrap(), cfg)
}

/// Sent messages are delivered, dropped, or (copies) added: the books balance.
fn assert_books_balance(r: &SimReport, ctx: &str) {
    assert!(r.terminated, "{ctx}: did not go quiet");
    assert_eq!(r.deliveries + r.dropped, r.counters.messages + r.duplicated, "{ctx}: message books do not balance");
}

/// Fingerprints (messages, bytes, end time, ideal time, deliveries, Σ (position + 1) × sent) of
/// runs recorded before the simulator had faults: with the default (empty) plan, every run is
/// still the same run, message for message, on every kind of schedule.
#[test]
fn no_faults_reproduces_the_runs_from_before_faults() {
    #[rustfmt::skip]
    let recorded: &[(&str, usize, [u64; 6])] = &[
        ("as-far", 0, [79, 316, 517, 51, 79, 970]),
        ("as-far", 1, [79, 316, 51, 51, 79, 970]),
        ("as-far", 2, [79, 316, 535, 51, 79, 970]),
        ("as-far", 3, [79, 316, 1979, 51, 79, 970]),
        ("as-far", 4, [79, 316, 51, 51, 79, 970]),
        ("stages-buffered", 0, [216, 1248, 642, 72, 216, 2700]),
        ("stages-buffered", 1, [216, 1248, 69, 69, 216, 2700]),
        ("stages-buffered", 2, [216, 1248, 667, 72, 216, 2700]),
        ("stages-buffered", 3, [216, 1248, 2463, 69, 216, 2700]),
        ("stages-buffered", 4, [216, 1248, 69, 69, 216, 2700]),
        ("controlled-distance", 0, [339, 2378, 1061, 120, 339, 4471]),
        ("controlled-distance", 1, [339, 2378, 114, 114, 339, 4471]),
        ("controlled-distance", 2, [338, 2370, 1084, 122, 338, 4459]),
        ("controlled-distance", 3, [339, 2378, 4001, 119, 339, 4471]),
        ("controlled-distance", 4, [339, 2378, 114, 114, 339, 4471]),
        ("sync-hs", 0, [385, 2580, 2308, 113, 385, 4835]),
        ("sync-hs", 1, [385, 2580, 2242, 112, 385, 4835]),
        ("sync-hs", 2, [385, 2580, 2225, 116, 385, 4835]),
        ("sync-hs", 3, [385, 2580, 5270, 115, 385, 4835]),
        ("sync-hs", 4, [385, 2580, 2242, 112, 385, 4835]),
        ("complete-villadangos", 0, [53, 212, 205, 19, 53, 544]),
        ("complete-villadangos", 1, [53, 212, 19, 19, 53, 544]),
        ("complete-villadangos", 2, [53, 212, 204, 19, 53, 544]),
        ("complete-villadangos", 3, [53, 212, 807, 19, 53, 544]),
        ("complete-villadangos", 4, [53, 212, 19, 19, 53, 544]),
        ("echo-extinction", 0, [135, 540, 106, 15, 135, 1710]),
        ("echo-extinction", 1, [143, 572, 12, 12, 143, 1774]),
        ("echo-extinction", 2, [110, 440, 128, 12, 110, 1369]),
        ("echo-extinction", 3, [121, 484, 409, 12, 121, 1534]),
        ("echo-extinction", 4, [139, 556, 12, 12, 139, 1734]),
        ("prob-as-far", 0, [97, 388, 672, 70, 97, 1280]),
        ("prob-as-far", 1, [95, 380, 69, 69, 95, 1237]),
        ("prob-as-far", 2, [89, 356, 677, 69, 89, 1180]),
        ("prob-as-far", 3, [97, 388, 2613, 72, 97, 1280]),
        ("prob-as-far", 4, [90, 360, 69, 69, 90, 1203]),
    ];
    let cfgs = [
        SimConfig { seed: 5, ..SimConfig::default() },
        SimConfig { seed: 5, unit_delay: true, ..SimConfig::default() },
        SimConfig { seed: 5, stagger: true, ..SimConfig::default() },
        SimConfig { seed: 5, fifo: false, max_delay: 64, ..SimConfig::default() },
        SimConfig { seed: 5, fifo: false, unit_delay: true, ..SimConfig::default() },
    ];
    for &(name, c, want) in recorded {
        let spec = spec(name);
        let topo = Topology::build(spec.default_topology(), 24, 5).unwrap();
        let ids = IdOrder::Random(5).arrange(24).unwrap();
        let r = sim::run(spec, &topo, &ids, &[1, 7, 12, 20], spec.rule, &cfgs[c]);
        let weighted: u64 = r.sent_per_node.iter().enumerate().map(|(i, s)| (i as u64 + 1) * s).sum();
        let got = [r.counters.messages, r.counters.bytes, r.end_time, r.ideal_time, r.deliveries, weighted];
        assert_eq!(got, want, "{name} with config {c}");
        assert!(r.verdict.violations.is_empty() && r.verdict.failed_reason.is_none(), "{name} {c}: {:?}", r.verdict);
        assert_eq!((r.dropped, r.duplicated, r.delayed, r.reordered), (0, 0, 0, 0));
        assert!(r.crashed.is_empty() && r.fault_log.is_empty());
    }
}

/// A plan whose faults change nothing (a default link fault everywhere, a fault on a link the
/// ring does not have, one partition group of every node, a recovery of a live node, a
/// crash-leader before anyone leads) goes through the fault path of every send and still gives
/// the full report of the run without faults, for several algorithms and schedules: the faults
/// never draw from the scheduler's generator.
#[test]
fn faults_that_change_nothing_change_nothing() {
    let n = 9;
    for name in ["as-far", "stages-buffered", "controlled-distance", "sync-hs", "echo-extinction"] {
        for base in [
            SimConfig { seed: 3, ..SimConfig::default() },
            SimConfig { seed: 4, unit_delay: true, ..SimConfig::default() },
            SimConfig { seed: 5, fifo: false, stagger: true, ..SimConfig::default() },
            SimConfig { seed: 6, fifo: false, unit_delay: true, ..SimConfig::default() },
        ] {
            // A position that is not a neighbour of position 0 on this overlay.
            let topo = Topology::build(spec(name).default_topology(), n, base.seed).unwrap();
            let far = (1..n).find(|&q| topo.ports(0).iter().all(|l| l.peer != q)).unwrap();
            let nothing = plan(vec![
                at(0, every_link(LinkFault::default())),
                at(
                    0,
                    Fault::Link {
                        from: Some(0),
                        to: Some(far),
                        fault: LinkFault { drop: 1.0, ..LinkFault::default() },
                    },
                ),
                at(0, Fault::Partition { groups: vec![(0..n).collect()] }),
                at(0, Fault::Recover { node: 3 }),
                at(0, Fault::CrashLeader),
            ]);
            let plain = run_n(name, n, &base);
            let mut faulted = run_n(name, n, &SimConfig { faults: nothing.clone(), ..base.clone() });
            assert_eq!(faulted.fault_log.len(), 2, "{name}: {:?}", faulted.fault_log);
            assert!(faulted.leader_faults.iter().all(|f| f.leader.is_none()), "{name}: {:?}", faulted.leader_faults);
            faulted.fault_log.clear();
            faulted.leader_faults.clear();
            assert_eq!(plain, faulted, "{name} {base:?}");
        }
    }
}

/// Every message lost from time 0: AsFar goes quiet with no leader, and the verdict blames the
/// dropped messages, not the algorithm.
#[test]
fn total_loss_ends_quiet_with_no_leader() {
    let cfg = SimConfig {
        faults: plan(vec![at(0, every_link(LinkFault { drop: 1.0, ..LinkFault::default() }))]),
        ..SimConfig::default()
    };
    let r = run_n("as-far", 8, &cfg);
    assert_books_balance(&r, "as-far");
    assert_eq!((r.deliveries, r.dropped, r.counters.messages), (0, 8, 8), "each initiator's first message is lost");
    assert!(r.decisions.iter().all(Option::is_none));
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    let why = r.verdict.failed_reason.unwrap();
    assert!(why.starts_with("no leader: 8 messages were dropped by faults (8 by lossy links)"), "{why}");
}

/// A follower crashing in the middle of AsFar breaks the ring: the run still ends, without a
/// leader, and the verdict names the crash and the messages lost to it; the crashed position is
/// reported. The same crash after the election leaves a finished election.
#[test]
fn a_follower_crashing_during_as_far_ends_with_a_clear_verdict() {
    let ids = [3, 8, 1, 6, 2, 7, 5, 4]; // the maximum, 8, at position 1; position 4 follows
    let cfg =
        |t| SimConfig { unit_delay: true, faults: plan(vec![at(t, Fault::Crash { node: 4 })]), ..SimConfig::default() };
    let r = run_ids("as-far", &ids, &cfg(3));
    assert_books_balance(&r, "crash at 3");
    assert_eq!(r.crashed, vec![4]);
    assert_eq!(r.fault_log, vec!["3: crash: position 4 crashed".to_string()]);
    assert!(r.dropped > 0);
    assert!(r.decisions.iter().all(|d| d.is_none_or(|d| d.role == Role::Follower)), "{:?}", r.decisions);
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    let why = r.verdict.failed_reason.unwrap();
    assert!(why.starts_with("no leader: ") && why.contains("position 4 crashed at 3"), "{why}");
    assert!(why.contains("to crashed nodes"), "{why}");

    let late = run_ids("as-far", &ids, &cfg(1_000));
    assert_eq!(late.crashed, vec![4]);
    assert_eq!(late.verdict.leader, Some(1));
    assert!(late.verdict.agreed && late.verdict.violations.is_empty() && late.verdict.failed_reason.is_none());
}

/// A fixed delay on every link stretches a unit-delay run by exactly that factor (delays beyond
/// the calendar window included), changes no count, and is no excuse for an asynchronous
/// algorithm; jitter stretches it further.
#[test]
fn delay_shifts_end_time() {
    let base = SimConfig { unit_delay: true, seed: 2, ..SimConfig::default() };
    let plain = run_n("as-far", 12, &base);
    for delay in [4, 100] {
        let fault = LinkFault { delay_ms: delay, ..LinkFault::default() };
        let r = run_n("as-far", 12, &SimConfig { faults: plan(vec![at(0, every_link(fault))]), ..base.clone() });
        assert_eq!(r.end_time, plain.end_time * (1 + delay), "delay {delay}");
        assert_eq!((r.counters, r.deliveries, r.delayed), (plain.counters, plain.deliveries, plain.counters.messages));
        assert!(r.verdict.violations.is_empty() && r.verdict.failed_reason.is_none(), "{:?}", r.verdict);
        let jittery = LinkFault { delay_ms: delay, jitter_ms: 30, ..LinkFault::default() };
        let j = run_n("as-far", 12, &SimConfig { faults: plan(vec![at(0, every_link(jittery))]), ..base.clone() });
        assert!(j.end_time > r.end_time, "jitter {} vs {}", j.end_time, r.end_time);
        assert!(j.verdict.violations.is_empty() && j.verdict.failed_reason.is_none(), "{:?}", j.verdict);
    }
}

/// Duplicates are delivered and counted but not sent: with every message doubled, AsFar (which
/// ignores a repeated id) still elects with its usual count, and deliveries are twice the
/// messages. Reordering is counted, and Stages, which assumes FIFO links, gets the blame for its
/// failures put on the reordering.
#[test]
fn duplicates_and_reorders_are_counted() {
    let base = SimConfig { seed: 4, ..SimConfig::default() };
    let plain = run_n("as-far", 10, &base);
    let dup = LinkFault { duplicate: 1.0, ..LinkFault::default() };
    let r = run_n("as-far", 10, &SimConfig { faults: plan(vec![at(0, every_link(dup))]), ..base.clone() });
    assert_books_balance(&r, "duplicates");
    assert_eq!(r.counters, plain.counters);
    assert_eq!((r.duplicated, r.deliveries), (plain.counters.messages, 2 * plain.counters.messages));
    assert!(r.verdict.violations.is_empty() && r.verdict.failed_reason.is_none(), "{:?}", r.verdict);

    let shuffle = LinkFault { reorder: 1.0, jitter_ms: 40, ..LinkFault::default() };
    let mut reordered_runs = 0;
    let mut blamed = 0;
    for seed in 0..20 {
        let cfg = SimConfig { seed, faults: plan(vec![at(0, every_link(shuffle))]), ..SimConfig::default() };
        let r = run_n("stages", 16, &cfg);
        assert_books_balance(&r, &format!("seed {seed}"));
        assert_eq!(r.reordered, r.counters.messages, "seed {seed}: every message is exempt from FIFO");
        reordered_runs += 1;
        if let Some(why) = &r.verdict.failed_reason {
            assert!(why.contains("let out of FIFO order, which stages assumes"), "seed {seed}: {why}");
            blamed += 1;
        }
        assert!(r.verdict.violations.iter().all(|v| !v.is_safety()), "seed {seed}: {:?}", r.verdict);
    }
    assert_eq!(reordered_runs, 20);
    eprintln!("stages under full reordering failed in {blamed} of 20 runs, each blamed on the reordering");
}

/// A partition loses exactly the messages that cross it (AsFar on a ring of 6 split in two: no
/// leader, and the verdict says why); a node named in no group is cut off alone; a later
/// partition of one group heals, so a partition healed at once changes nothing.
#[test]
fn partitions_drop_cross_group_messages() {
    let base = SimConfig { unit_delay: true, ..SimConfig::default() };
    let ids = [1, 2, 3, 4, 5, 6];
    let halves = Fault::Partition { groups: vec![vec![0, 1, 2], vec![3, 4, 5]] };
    let r = run_ids("as-far", &ids, &SimConfig { faults: plan(vec![at(0, halves.clone())]), ..base.clone() });
    assert_books_balance(&r, "halves");
    // Ids 3 (at 2 -> 3) and 6 (at 5 -> 0) reach the cut; the others are swallowed first.
    assert_eq!(r.dropped, 2);
    assert!(r.decisions.iter().all(Option::is_none));
    let why = r.verdict.failed_reason.unwrap();
    assert!(why.contains("2 messages were dropped by faults (2 across the partition)"), "{why}");

    let lonely = Fault::Partition { groups: vec![vec![0, 1, 2, 3, 4]] };
    let r = run_ids("as-far", &ids, &SimConfig { faults: plan(vec![at(0, lonely)]), ..base.clone() });
    assert!(r.dropped > 0 && r.decisions[5].is_none(), "{r:?}");

    let healed = plan(vec![at(0, halves.clone()), at(0, Fault::Partition { groups: vec![(0..6).collect()] })]);
    let mut r = run_ids("as-far", &ids, &SimConfig { faults: healed, ..base.clone() });
    // The report keeps the partition's span, for diagrams; nothing else differs.
    let Fault::Partition { groups } = halves else { unreachable!() };
    assert_eq!(r.splits, [ringleader_core::faults::Split { from: 0, until: Some(0), groups }]);
    r.splits.clear();
    assert_eq!(r, run_ids("as-far", &ids, &base));
}

/// A link fault applies to the links it selects only, and a later one on the same links replaces
/// it: loss on 0 -> 1 cuts AsFar's ring there, and a default link fault on 0 -> 1 at time 0
/// restores it; a later fault on every link wins over an earlier one on one link.
#[test]
fn later_link_faults_win() {
    let base = SimConfig { unit_delay: true, ..SimConfig::default() };
    let ids = [1, 2, 3, 4, 5, 6];
    let lossy = LinkFault { drop: 1.0, ..LinkFault::default() };
    let cut = at(0, Fault::Link { from: Some(0), to: Some(1), fault: lossy });
    let r = run_ids("as-far", &ids, &SimConfig { faults: plan(vec![cut.clone()]), ..base.clone() });
    assert!(r.dropped > 0 && r.verdict.failed_reason.is_some(), "{:?}", r.verdict);

    let cleared = at(0, Fault::Link { from: Some(0), to: Some(1), fault: LinkFault::default() });
    let r = run_ids("as-far", &ids, &SimConfig { faults: plan(vec![cut.clone(), cleared]), ..base.clone() });
    assert_eq!(r, run_ids("as-far", &ids, &base));

    let slow = at(0, every_link(LinkFault { delay_ms: 1, ..LinkFault::default() }));
    let r = run_ids("as-far", &ids, &SimConfig { faults: plan(vec![cut, slow]), ..base.clone() });
    assert_eq!(r.dropped, 0, "the later fault on every link replaced the loss on 0 -> 1");
    assert_eq!(r.verdict.leader, Some(5));
}

/// A crashed node that recovers is a new incarnation woken by `on_start`: when it holds the
/// largest id, AsFar's election (stalled by the crash) completes with it as the leader; when it
/// had already led, its new incarnation has forgotten that (no decision) and the verdict names
/// the crash and the recovery.
#[test]
fn recover_rebuilds_state() {
    let ids = [3, 8, 1, 6, 2, 7, 5, 4];
    let base = SimConfig { unit_delay: true, ..SimConfig::default() };
    let faults = plan(vec![at(0, Fault::Crash { node: 1 }), at(50, Fault::Recover { node: 1 })]);
    let r = run_ids("as-far", &ids, &SimConfig { faults, ..base.clone() });
    assert_books_balance(&r, "recovery");
    assert!(r.crashed.is_empty());
    assert_eq!(r.fault_log, vec!["0: crash: position 1 crashed", "50: position 1 recovered as a new incarnation"]);
    assert_eq!(r.verdict.leader, Some(1));
    assert!(
        r.verdict.agreed && r.verdict.violations.is_empty() && r.verdict.failed_reason.is_none(),
        "{:?}",
        r.verdict
    );
    assert!(r.end_time >= 50 + 16, "the new incarnation's id went round the ring and then its notification");

    let faults = plan(vec![at(100, Fault::CrashLeader), at(200, Fault::Recover { node: 1 })]);
    let r = run_ids("as-far", &ids, &SimConfig { faults, ..base });
    assert_eq!(r.fault_log[0], "100: crash-leader: position 1 crashed");
    assert_eq!(r.decisions[1], None, "the new incarnation forgot it led");
    assert_eq!(r.decisions[0], Some(Decision { role: Role::Follower, leader: 8 }));
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    let why = r.verdict.failed_reason.unwrap();
    assert!(why.contains("position 1 crashed at 100 and recovered at 200"), "{why}");
}

/// A synchronous algorithm whose round clocks wait for a crashed neighbour ends anyway: once
/// nothing is in flight and the clocks have done nothing for `IDLE_TIME`, the run counts as
/// quiet, says so in the fault log, and the verdict blames the crash.
#[test]
fn idle_clocks_after_a_crash_end_the_run() {
    let cfg = SimConfig { seed: 1, faults: plan(vec![at(5, Fault::Crash { node: 3 })]), ..SimConfig::default() };
    let r = run_n("sync-hs", 10, &cfg);
    assert_books_balance(&r, "sync-hs");
    assert!(r.end_time > sim::IDLE_TIME && r.end_time < 2 * sim::IDLE_TIME, "{}", r.end_time);
    assert!(r.fault_log.last().unwrap().contains("stopped: nothing in flight"), "{:?}", r.fault_log);
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    assert!(r.verdict.failed_reason.unwrap().contains("position 3 crashed at 5"));
}

/// A crash-leader with nobody leading does nothing and says so.
#[test]
fn crash_leader_without_a_leader_is_logged() {
    let r = run_n("as-far", 5, &SimConfig { faults: plan(vec![at(0, Fault::CrashLeader)]), ..SimConfig::default() });
    assert_eq!(r.fault_log, vec!["0: crash-leader found no leader; nothing crashed".to_string()]);
    assert!(r.crashed.is_empty() && r.verdict.violations.is_empty() && r.verdict.failed_reason.is_none());
}

/// The same plan and seeds give the same report; another fault seed gives other losses; and a
/// fault's random choices come from its own seed, so adding a fault that touches no message
/// changes nothing.
#[test]
fn faults_are_deterministic_per_seed() {
    let lossy =
        |seed| Scheduled::new(0, seed, every_link(LinkFault { drop: 0.3, jitter_ms: 9, ..LinkFault::default() }));
    let cfg = |faults| SimConfig { seed: 11, faults: plan(faults), ..SimConfig::default() };
    let a = run_n("stages-buffered", 16, &cfg(vec![lossy(1)]));
    let b = run_n("stages-buffered", 16, &cfg(vec![lossy(1)]));
    assert_eq!(a, b);
    assert!(a.dropped > 0);
    let others: Vec<SimReport> = (2..6).map(|s| run_n("stages-buffered", 16, &cfg(vec![lossy(s)]))).collect();
    assert!(
        others.iter().any(|o| (o.dropped, o.counters) != (a.dropped, a.counters)),
        "other fault seeds, other drops"
    );
    let idle = Scheduled::new(
        0,
        99,
        Fault::Link { from: Some(0), to: Some(8), fault: LinkFault { drop: 0.5, ..LinkFault::default() } },
    );
    assert_eq!(run_n("stages-buffered", 16, &cfg(vec![lossy(1), idle])), a);
}

/// A plan naming a position the overlay lacks (or a bad probability) is refused by
/// `run_checked` with the field at fault; a good plan runs.
#[test]
fn plans_are_validated() {
    let spec = spec("as-far");
    let ring = Topology::build(spec.default_topology(), 4, 0).unwrap();
    let ids = [1, 2, 3, 4];
    let checked = |fault| {
        let cfg = SimConfig { faults: plan(vec![at(0, fault)]), ..SimConfig::default() };
        sim::run_checked(spec, &ring, &ids, &[0], spec.rule, &cfg)
    };
    assert_eq!(checked(Fault::Crash { node: 4 }).unwrap_err().field, "crash.node");
    let bad = LinkFault { drop: 1.5, ..LinkFault::default() };
    assert_eq!(checked(every_link(bad)).unwrap_err().field, "link.drop");
    assert_eq!(checked(Fault::Partition { groups: vec![vec![0, 1], vec![1]] }).unwrap_err().field, "partition.groups");
    assert!(checked(Fault::Crash { node: 3 }).is_ok());
}

/// `sim::run` refuses to guess what a bad plan means.
#[test]
#[should_panic(expected = "invalid fault plan: recover.node")]
fn run_panics_on_an_invalid_plan() {
    run_n("as-far", 4, &SimConfig { faults: plan(vec![at(0, Fault::Recover { node: 7 })]), ..SimConfig::default() });
}

/// A random link fault (selector, loss ≤ 0.2, duplicates ≤ 0.2, delay, jitter, reordering) at a
/// random time, now and then a crash.
fn chaos_plan(rng: &mut Pcg64Mcg, n: u32) -> FaultPlan {
    let mut faults = Vec::new();
    for _ in 0..rng.random_range(1..=3) {
        let pick = |rng: &mut Pcg64Mcg| rng.random_bool(0.5).then(|| rng.random_range(0..n));
        let (from, to) = (pick(rng), pick(rng));
        let to = if from.is_some() && from == to { None } else { to };
        let fault = LinkFault {
            drop: rng.random_range(0.0..=0.2),
            delay_ms: rng.random_range(0..=20),
            jitter_ms: rng.random_range(0..=30),
            duplicate: rng.random_range(0.0..=0.2),
            reorder: rng.random_range(0.0..=0.5),
            ..LinkFault::default()
        };
        faults.push(Scheduled::new(rng.random_range(0..30), rng.random(), Fault::Link { from, to, fault }));
    }
    if rng.random_bool(0.2) {
        faults.push(Scheduled::new(rng.random_range(0..60), 0, Fault::Crash { node: rng.random_range(0..n) }));
    }
    FaultPlan { faults }
}

/// 500 seeded runs each of AsFar and Stages-buffered under random link faults: none panics,
/// every run goes quiet, none ever has two leaders (one-shot decisions are term 0), nothing is
/// blamed on the algorithm, and every run that did not elect says why.
#[test]
fn chaos_never_two_leaders() {
    for name in ["as-far", "stages-buffered"] {
        let (mut elected, mut failed) = (0, 0);
        for seed in 0..500u64 {
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            let n = rng.random_range(3..=16);
            let cfg = SimConfig {
                seed,
                fifo: rng.random_bool(0.5),
                unit_delay: rng.random_bool(0.3),
                faults: chaos_plan(&mut rng, n),
                ..SimConfig::default()
            };
            let r = run_n(name, n, &cfg);
            let ctx = format!("{name} seed {seed} n {n} {cfg:?}");
            assert_books_balance(&r, &ctx);
            let leaders = r.decisions.iter().flatten().filter(|d| d.role == Role::Leader).count();
            assert!(leaders <= 1, "{ctx}: {leaders} leaders");
            assert!(r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
            match &r.verdict.failed_reason {
                None => {
                    assert!(r.verdict.agreed && r.verdict.leader.is_some(), "{ctx}: {:?}", r.verdict);
                    elected += 1;
                }
                Some(_) => failed += 1,
            }
        }
        eprintln!("{name}: {elected} of 500 elected a leader, {failed} failed with a reason");
    }
}

fn select(kind: Option<MsgKind>, nth: u64, fault: LinkFault) -> Fault {
    every_link(LinkFault { kind, nth, ..fault })
}

const DROP: LinkFault =
    LinkFault { drop: 1.0, delay_ms: 0, jitter_ms: 0, duplicate: 0.0, reorder: 0.0, kind: None, nth: 0 };

/// Dropping only `notify` messages lets as-far find its leader (every election message arrives) but lose every
/// announcement: the run ends without agreement, the verdict blames the lossy links, and exactly the notification
/// messages were lost.
#[test]
fn dropping_one_kind_loses_only_that_kind() {
    let cfg = SimConfig {
        seed: 3,
        faults: plan(vec![at(0, select(Some(MsgKind::Notify), 0, DROP))]),
        ..SimConfig::default()
    };
    let r = run_n("as-far", 8, &cfg);
    assert_books_balance(&r, "notify dropped");
    assert!(r.counters.notification_messages > 0);
    assert_eq!(r.dropped, r.counters.notification_messages, "every announcement and nothing else was lost");
    assert!(!r.verdict.agreed);
    let why = r.verdict.failed_reason.as_deref().unwrap_or_default();
    assert!(why.contains("dropped by faults") && why.contains("by lossy links"), "{why}");
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    assert_eq!(r.decisions.iter().filter(|d| d.is_some()).count(), 1, "only the winner knows");

    let coordinator = SimConfig { faults: plan(vec![at(0, select(Some(MsgKind::Coordinator), 0, DROP))]), ..cfg };
    let r = run_n("as-far", 8, &coordinator);
    assert_eq!(r.dropped, 0, "as-far sends no coordinator messages");
    assert!(r.verdict.agreed);
}

/// Precedence with kinds: a later kind-less fault shadows an earlier kind-specific one (here it clears it), while a
/// later kind-specific fault leaves the earlier kind-less one in force for the other kinds.
#[test]
fn kind_precedence() {
    let run = |faults| run_n("as-far", 8, &SimConfig { seed: 5, faults: plan(faults), ..SimConfig::default() });
    let r = run(vec![at(0, select(Some(MsgKind::Notify), 0, DROP)), at(1, every_link(LinkFault::default()))]);
    assert_eq!(r.dropped, 0, "the later clear shadowed the notify drop");
    assert!(r.verdict.agreed);
    let slow = LinkFault { delay_ms: 7, ..LinkFault::default() };
    let r = run(vec![at(0, every_link(slow)), at(0, select(Some(MsgKind::Notify), 0, DROP))]);
    assert_eq!(r.dropped, r.counters.notification_messages);
    assert_eq!(r.delayed, r.counters.election_messages, "election messages still meet the earlier delay");
}

/// The nth selector hits exactly one message per link: dropping the 1st message on every link of an 8-ring where
/// everyone initiates loses exactly 8 messages (one per link); the 3rd election message per link loses at most one
/// per link; and an nth fault does not clear the earlier fault for the other messages.
#[test]
fn nth_hits_one_message_per_link() {
    for seed in 0..10 {
        let cfg = SimConfig { seed, faults: plan(vec![at(0, select(None, 1, DROP))]), ..SimConfig::default() };
        let r = run_n("as-far", 8, &cfg);
        assert_books_balance(&r, &format!("seed {seed}"));
        assert_eq!(r.dropped, 8, "seed {seed}: the first message of each of the 8 links");
        let third = SimConfig { faults: plan(vec![at(0, select(Some(MsgKind::Election), 3, DROP))]), ..cfg.clone() };
        let r = run_n("as-far", 8, &third);
        let links_with_three = r.dropped;
        assert!(links_with_three <= 8, "seed {seed}: {links_with_three}");
    }
    let slow = LinkFault { delay_ms: 7, ..LinkFault::default() };
    let nth = LinkFault { duplicate: 1.0, ..LinkFault::default() };
    let cfg = SimConfig {
        seed: 1,
        faults: plan(vec![at(0, every_link(slow)), at(0, select(None, 2, nth))]),
        ..SimConfig::default()
    };
    let r = run_n("as-far", 8, &cfg);
    assert_eq!(r.duplicated, 8, "the 2nd message of each link, once");
    assert_eq!(r.delayed, r.counters.messages - 8, "the other messages meet the earlier delay");
}

/// Kept bully on 5 nodes: "crash the leader once a leader is elected" fires at the first leadership (the fault log
/// says when), the crashed node is that leader, and a leader of a higher term follows; the same plan replays to
/// the same report. A term trigger waits for that term; a message-count trigger for that many messages; a trigger
/// that never comes leaves the fault unapplied and says so.
#[test]
fn triggered_faults_fire_after_their_event() {
    let spec = spec("bully");
    let topo = Topology::complete(5).unwrap();
    let ids = IdOrder::Ascending.arrange(5).unwrap();
    let run = |s: Vec<Scheduled>| {
        let cfg = SimConfig {
            seed: 2,
            horizon: Some(20_000),
            faults: plan(s),
            log_message_times: true,
            ..SimConfig::default()
        };
        sim::run_kept(spec, &topo, &ids, &[0, 1, 2, 3, 4], spec.rule, &cfg).unwrap()
    };
    let crash_leader = Scheduled::new(50, 1, Fault::CrashLeader).after(Trigger::LeaderElected);
    let r = run(vec![crash_leader.clone()]);
    let first = r.leaderships.iter().find(|e| e.leadership.leader == Some(ids[e.position as usize])).unwrap();
    assert_eq!(r.outages.len(), 1, "{:?}", r.fault_log);
    assert_eq!(r.outages[0].position, first.position);
    assert_eq!(r.outages[0].crashed, first.time + 50, "{:?}", r.fault_log);
    assert!(r.fault_log[0].starts_with(&format!("{}: a leader is elected", first.time)), "{:?}", r.fault_log);
    let last = r.leaderships.last().unwrap().leadership;
    assert!(last.term > first.leadership.term && last.leader.is_some(), "{last:?}");
    assert_eq!(run(vec![crash_leader.clone()]), r, "the plan replays");

    // Crash the first leader as before, and the leader of the next term as soon as it claims it.
    let term = run(vec![crash_leader, Scheduled::new(0, 1, Fault::CrashLeader).after(Trigger::Term(last.term))]);
    let claim = term
        .leaderships
        .iter()
        .find(|e| e.leadership.term >= last.term && e.leadership.leader == Some(ids[e.position as usize]))
        .unwrap();
    assert_eq!(term.outages.len(), 2, "{:?}", term.fault_log);
    assert_eq!(term.outages[1].position, claim.position);
    assert_eq!(term.outages[1].crashed, claim.time + 1, "at 0 after the event is the next instant");

    let count = run(vec![Scheduled::new(0, 1, Fault::Crash { node: 0 }).after(Trigger::Messages(3))]);
    assert_eq!(count.outages.len(), 1);
    assert_eq!(count.outages[0].crashed, count.message_times[2] + 1, "the instant after the 3rd message");
    let never = run(vec![Scheduled::new(0, 1, Fault::Crash { node: 0 }).after(Trigger::Term(1_000))]);
    assert!(never.outages.is_empty());
    assert!(never.fault_log.iter().any(|l| l.contains("never took effect")), "{:?}", never.fault_log);
}

/// Heartbeats are a kind: dropping only the leader's heartbeats for a while makes the followers of a kept bully
/// leadership suspect a leader that never crashed (they drop their belief and elect, and the leader, alive,
/// answers with its coordinator), while election and coordinator messages still flow; nothing crashed, the same
/// leader keeps leading, and safety holds.
#[test]
fn dropping_heartbeats_causes_false_suspicion() {
    let spec = spec("bully");
    let topo = Topology::complete(5).unwrap();
    let ids = IdOrder::Ascending.arrange(5).unwrap();
    let mute = LinkFault { kind: Some(MsgKind::Heartbeat), ..DROP };
    let run = |faults| {
        let cfg = SimConfig { seed: 4, horizon: Some(12_000), faults: plan(faults), ..SimConfig::default() };
        sim::run_kept(spec, &topo, &ids, &[0, 1, 2, 3, 4], spec.rule, &cfg).unwrap()
    };
    let suspicions =
        |r: &SimReport| r.leaderships.iter().filter(|e| e.time > 2_000 && e.leadership.leader.is_none()).count();
    let quiet = run(vec![at(12_000, every_link(LinkFault::default()))]);
    assert_eq!(suspicions(&quiet), 0, "no fault, no suspicion");
    let r = run(vec![
        at(2_000, Fault::Link { from: Some(4), to: None, fault: mute }),
        at(6_000, every_link(LinkFault::default())),
    ]);
    assert!(r.outages.is_empty());
    assert!(r.dropped > 0 && r.dropped <= r.counters.heartbeat_messages, "only heartbeats were lost");
    assert!(suspicions(&r) > 0, "{:?}", r.leaderships);
    assert_eq!(r.leaderships.last().unwrap().leadership.leader, Some(5));
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
}
