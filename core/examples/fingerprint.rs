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
    for spec in CATALOGUE {
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
            text(&r).hash(&mut h);
            runs += 1;
            faults.push(Scheduled::new(300, seed + 2, Fault::Crash { node: 1 }));
            faults.push(Scheduled::new(2_000, seed + 3, Fault::Recover { node: 1 }));
            let kept = SimConfig { seed, faults: FaultPlan { faults }, horizon: Some(8_000), ..SimConfig::default() };
            if let Some(r) = sim::run_kept(spec, &topo, &ids, &initiators, spec.rule, &kept) {
                text(&r).hash(&mut h);
                runs += 1;
            }
        }
        let f = h.finish();
        println!("{:<20} {f:016x}", spec.name);
        f.hash(&mut all);
    }
    println!("{runs} runs, fingerprint {:016x}", all.finish());
}

/// The report's `{:?}`, its violations written as their texts, without its (empty) states,
/// pauses and leader faults, and without the per-kind counts of program messages (the last two
/// kinds, always 0 here: no program runs), as before those kinds were added.
fn text(r: &SimReport) -> String {
    assert!(r.states.is_empty(), "states are logged only with the arrows");
    assert!(r.pauses.is_empty() && r.leader_faults.is_empty(), "no pause and no leader fault is planned");
    let programs = [MsgKind::Program, MsgKind::ProgramNotice];
    assert_eq!(programs.map(|k| k as usize), [MsgKind::COUNT - 2, MsgKind::COUNT - 1], "program kinds are last");
    assert!(programs.iter().all(|&k| r.counters.by_kind[k as usize] == 0), "no program runs here");
    let typed = format!("violations: {:?}", r.verdict.violations);
    let texts: Vec<String> = r.verdict.violations.iter().map(ToString::to_string).collect();
    let text = format!("{r:?}").replacen(&typed, &format!("violations: {texts:?}"), 1);
    text.replacen("states: [], ", "", 1)
        .replacen("pauses: [], leader_faults: [], ", "", 1)
        .replace(", 0, 0], bytes: ", "], bytes: ")
}
