//! What the Raft checker tests share: the shipped Raft's entry with chosen options.

use ringleader_core::algo::raft;
use ringleader_core::spec::KeptSpec;

/// The shipped Raft's kept facts.
pub const RAFT_KEPT: KeptSpec = match raft::SPEC.kept {
    Some(k) => k,
    None => panic!("raft keeps a leader"),
};

/// Raft's entry with the options given (PreVote, CheckQuorum, lease); with the lease the checker
/// also checks that no two nodes believe they lead at one instant.
#[macro_export]
macro_rules! raft_with {
    ($pre_vote:literal, $check_quorum:literal, $lease:literal) => {
        ringleader_core::spec::AlgorithmSpec {
            kept: Some(ringleader_core::spec::KeptSpec {
                build: |c, d| {
                    // Rounds numbered modulo enough tags for the checker's delays (at most a
                    // detector period): the same runs renamed, and finitely many states.
                    let cfg = ringleader_core::algo::raft::RaftConfig::for_detector(d)
                        .with_options($pre_vote, $check_quorum, $lease)
                        .with_round_tags_for_delay(d.period_ms);
                    Box::new(ringleader_core::algo::raft::Raft::with_config(c, cfg))
                },
                lease: if $lease { Some(ringleader_core::spec::Lease { lost: "lease ended" }) } else { None },
                liveness_needs: None,
                ..common::RAFT_KEPT
            }),
            ..ringleader_core::algo::raft::SPEC
        }
    };
}
