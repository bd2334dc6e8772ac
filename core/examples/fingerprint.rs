//! Prints one fingerprint of the simulator: every catalogue algorithm (one-shot,
//! and kept where it has a kept mode) on its default topology, over seeded
//! random delays and a plan of link faults (drops, delays with jitter,
//! duplicates, reorders, an nth-selected drop, a crash and a recovery), each
//! report hashed whole (`{:?}`: counters, verdict, fault log, leaderships;
//! the verdict's violations by the text users read, so that their type may
//! change while what they say may not; the states, logged only with the
//! arrows and so empty here, are left out, as they were before they were
//! logged; so are the pauses and leader faults, none here, listed apart from
//! the fault log since; so are the per-kind counts of program messages,
//! kinds added after the rest and always 0 here).
//! The hash is std's `DefaultHasher`, stable within one toolchain (compare
//! builds made with the same rustc). A refactor of the core must leave it
//! unchanged:
//! `cargo run --release -p ringleader-core --example fingerprint`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use ringleader_core::algo::MsgKind;
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::faults::{Fault, FaultPlan, LinkFault, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

fn main() {
    let n = 6;
    let mut all = DefaultHasher::new();
    let mut runs = 0;
    let mut total = 0;
    for spec in CATALOGUE {
        let fingerprinted = FINGERPRINTED.contains(&spec.name);
        let mut h = DefaultHasher::new();
        let Ok(topo) = Topology::build(spec.default_topology(), n, 1) else { continue };
        let n = topo.len();
        let initiators: Vec<u32> = (0..n).collect();
        for seed in 0..40u64 {
            let ids = IdOrder::Random(seed).arrange(n).expect("ids");
            let lossy = LinkFault {
                drop: 0.1,
                delay_ms: 2,
                jitter_ms: 9,
                duplicate: 0.2,
                reorder: 0.3,
                ..LinkFault::default()
            };
            let nth = LinkFault { drop: 1.0, kind: Some(MsgKind::Notify), nth: 2, ..LinkFault::default() };
            let mut faults = vec![
                Scheduled::new(0, seed, Fault::Link { from: None, to: None, fault: lossy }),
                Scheduled::new(1, seed + 1, Fault::Link { from: Some(0), to: None, fault: nth }),
            ];
            let one_shot = SimConfig { seed, faults: FaultPlan { faults: faults.clone() }, ..SimConfig::default() };
            let r = sim::run(spec, &topo, &ids, &initiators, spec.rule, &one_shot);
            text(&r, fingerprinted).hash(&mut h);
            runs += 1;
            faults.push(Scheduled::new(300, seed + 2, Fault::Crash { node: 1 }));
            faults.push(Scheduled::new(2_000, seed + 3, Fault::Recover { node: 1 }));
            let kept = SimConfig { seed, faults: FaultPlan { faults }, horizon: Some(8_000), ..SimConfig::default() };
            if let Some(r) = sim::run_kept(spec, &topo, &ids, &initiators, spec.rule, &kept) {
                text(&r, fingerprinted).hash(&mut h);
                runs += 1;
            }
        }
        let f = h.finish();
        println!("{:<20} {f:016x}", spec.name);
        if fingerprinted {
            f.hash(&mut all);
            total += 1;
        }
    }
    assert_eq!(total, FINGERPRINTED.len(), "every fingerprinted algorithm is in the catalogue");
    println!("{runs} runs, fingerprint {:016x} (over the {total} algorithms first fingerprinted)", all.finish());
}

/// The algorithms this fingerprint was first taken over, in catalogue order: the total is over
/// them alone, so that an algorithm added later prints its own line without changing the total.
const FINGERPRINTED: &[&str] = &[
    "all-the-way",
    "as-far",
    "controlled-distance",
    "stages",
    "stages-buffered",
    "prob-as-far",
    "participant-ring",
    "stages-feedback",
    "alternate",
    "uni-stages",
    "min-max",
    "uni-alternate",
    "tree-saturation",
    "elect-root",
    "echo-extinction",
    "complete-villadangos",
    "mesh-corners",
    "sync-hs",
    "bi-min-max",
    "min-max-plus",
    "bully",
    "repaired-ring",
    "zookeeper",
    "chubby",
    "raft",
    "lease",
];

/// How many message kinds there were when the fingerprint was first taken (every kind before
/// [`MsgKind::Program`]); the per-kind counts of later kinds, always 0 for the algorithms
/// fingerprinted, are left out of their reports.
const FIRST_KINDS: usize = MsgKind::Program as usize;

/// The report's `{:?}`, its violations written as their texts, without its (empty) states,
/// pauses and leader faults, and, for a fingerprinted algorithm, without the per-kind counts of
/// the kinds added since (always 0 for it), as before those kinds were added.
fn text(r: &SimReport, fingerprinted: bool) -> String {
    assert!(r.states.is_empty(), "states are logged only with the arrows");
    assert!(r.pauses.is_empty() && r.leader_faults.is_empty(), "no pause and no leader fault is planned");
    let typed = format!("violations: {:?}", r.verdict.violations);
    let texts: Vec<String> = r.verdict.violations.iter().map(ToString::to_string).collect();
    let text = format!("{r:?}").replacen(&typed, &format!("violations: {texts:?}"), 1);
    let mut text = text.replacen("states: [], ", "", 1).replacen("pauses: [], leader_faults: [], ", "", 1);
    if fingerprinted {
        assert!(r.counters.by_kind[FIRST_KINDS..].iter().all(|&c| c == 0), "a later kind sent");
        let whole = format!("by_kind: {:?}", r.counters.by_kind);
        text = text.replacen(&whole, &format!("by_kind: {:?}", &r.counters.by_kind[..FIRST_KINDS]), 1);
    }
    text
}
