//! Kept Raft with each combination of its options (PreVote, CheckQuorum, the
//! leader lease) on every schedule of 3 nodes: the catalogue's entry checks
//! the defaults (all off); these entries switch the options on.

mod common;

use ringleader_check::{Faults, KeptCheck, Limits, sweep_kept};
use ringleader_core::spec::AlgorithmSpec;

/// Every combination of the three options, in the order (PreVote, CheckQuorum, lease).
static COMBINATIONS: [(&str, AlgorithmSpec); 8] = [
    ("none", raft_with!(false, false, false)),
    ("PreVote", raft_with!(true, false, false)),
    ("CheckQuorum", raft_with!(false, true, false)),
    ("PreVote, CheckQuorum", raft_with!(true, true, false)),
    ("lease", raft_with!(false, false, true)),
    ("PreVote, lease", raft_with!(true, false, true)),
    ("CheckQuorum, lease", raft_with!(false, true, true)),
    ("PreVote, CheckQuorum, lease", raft_with!(true, true, true)),
];

/// Kept Raft on 3 nodes, messages of at most 10 ms, each combination of PreVote, CheckQuorum and
/// the lease, without faults, with one crash for good, with one and with two lost messages and with
/// one duplicated message (before, the lease never renewed after a lost round): on every schedule
/// (timers may fire anywhere in their tick) no node errs, no term has two leaders, the nodes of a
/// term agree, with the lease no two nodes believe they lead at one instant, and one live leader
/// is agreed from the convergence bound after the last fault on.
#[test]
fn kept_raft_holds_with_every_option_combination() {
    for (options, spec) in &COMBINATIONS {
        for faults in [
            Faults::NONE,
            Faults { crashes: 1, ..Faults::NONE },
            Faults { losses: 1, ..Faults::NONE },
            Faults { losses: 2, ..Faults::NONE },
            Faults { duplications: 1, ..Faults::NONE },
        ] {
            let how = KeptCheck { faults, delay_ms: 10, ..KeptCheck::default() };
            let s = sweep_kept(spec, 3, how, Limits { fifo: false, ..Limits::default() }, None, |_| {}).unwrap();
            eprintln!("raft ({options}) {faults:?}: {} states, depth {}", s.states, s.depth);
            assert!(s.holds(), "{options} {faults:?}: {:?}", s.broken.first());
            assert!(s.states > 100 && s.depth > 20, "{options} {faults:?}: {} states, depth {}", s.states, s.depth);
        }
    }
}
