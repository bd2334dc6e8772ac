//! Every election algorithm, each a sans-IO state machine in its own file
//! with its catalogue entry (`SPEC`) and its proof; the building blocks they
//! share ([`oneshot`], [`kept`], the heartbeat failure [`detector`]); the
//! [`catalogue`] that lists them; and a test `harness` (feature `harness`). What a state
//! machine is (the [`Algorithm`] trait, messages, effects) is
//! [`crate::protocol`]'s, re-exported here, and what a catalogue entry says
//! is [`crate::spec`]'s.
//!
//! ```
//! use ringleader_core::algo::{catalogue, Algorithm, Effect, Input, Msg, NodeContext, Outbox, Rule, RIGHT};
//! let spec = catalogue::find("as-far").unwrap();
//! let mut node = (spec.machine.build)(&NodeContext { id: 7, rule: Rule::Max, n: 3, coin: 0, ports: 2, ..Default::default() });
//! let mut out = Outbox::default();
//! node.step(Input::Start, &mut out).unwrap();
//! assert_eq!(out.effects(), &[Effect::Send { port: RIGHT, msg: Msg::Election { id: 7, stage: 0, hops: 0 } }]);
//! ```

pub use crate::protocol::*;

pub mod catalogue;
pub mod detector;
/// Test drivers, built for the crate's own tests and with the `harness` feature
/// (core's integration tests, the fuzz targets).
#[cfg(any(test, feature = "harness"))]
pub mod harness;
pub mod kept;
pub mod oneshot;

/// Declares every algorithm's module and lists its catalogue entry, in the
/// order given (the order `ListAlgorithms` shows them): adding an algorithm
/// is its file and one line here.
macro_rules! algorithms {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*
        /// Every algorithm's entry, in order ([`catalogue::CATALOGUE`]).
        const ENTRIES: &[crate::spec::AlgorithmSpec] = &[$($name::SPEC),*];
    };
}

algorithms! {
    all_the_way,
    as_far,
    controlled_distance,
    stages,
    stages_buffered,
    prob_as_far,
    participant_ring,
    stages_feedback,
    alternate,
    uni_stages,
    min_max,
    uni_alternate,
    tree_saturation,
    elect_root,
    echo_extinction,
    villadangos,
    mesh_corners,
    sync_hs,
    bi_min_max,
    min_max_plus,
    bully,
    repaired_ring,
    zookeeper,
    chubby,
    raft,
    lease,
    time_slice,
    variable_speeds,
    yo_yo,
    hyper_elect,
    chordal_capture,
    korach_moran_zaks,
    afek_gafni,
    itai_rodeh,
    ghs,
    flood_max,
    torus_elect,
}
