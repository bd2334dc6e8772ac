//! Property tests of what arrives over the network: arbitrary bytes as
//! envelopes, and every algorithm of the catalogue (one-shot and kept) fed
//! arbitrary message sequences on its real ports. Nothing may panic, and each
//! step's output stays bounded. (The fuzz targets explore the same ground for
//! longer; these run in the normal test suite in seconds.)

use proptest::prelude::*;
use prost::Message;
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::algo::harness::{self, Feeder};
use ringleader_core::algo::{AlgoError, Algorithm, MAX_HELD, MAX_TERM, Msg, Rule};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::Topology;
use ringleader_proto::v1 as pb;

/// Values at the edges of the integer ranges, where arithmetic overflows or wraps.
const EXTREMES: [u64; 11] = [
    0,
    1,
    2,
    u32::MAX as u64 - 1,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    MAX_TERM - 1,
    MAX_TERM,
    MAX_TERM + 1,
    u64::MAX - 1,
    u64::MAX,
];

/// Any message, with ids and terms mostly small (where the algorithms' comparisons are), and
/// now and then at the edges of their ranges.
fn msg() -> impl Strategy<Value = Msg> {
    let small = prop_oneof![4 => 0u64..12, 1 => any::<u64>(), 1 => prop::sample::select(&EXTREMES[..])];
    let stage = prop_oneof![4 => 0u32..6, 1 => prop::sample::select(&[u32::MAX - 1, u32::MAX][..])];
    (0usize..23, small.clone(), small, stage, any::<u32>(), any::<bool>()).prop_map(
        |(kind, a, b, s, c, f)| match kind {
            0 => Msg::Election { id: a, stage: s, hops: c % 64 },
            1 => Msg::Probe { id: a, stage: s, limit: c % 64 },
            2 => Msg::Reply { id: a, stage: s },
            3 => Msg::Notify { leader: a },
            4 => Msg::Feedback { id: a, stage: s },
            5 => Msg::Wakeup,
            6 => Msg::Saturate { id: a },
            7 => Msg::Message1 { id: a },
            8 => Msg::Message2 { id: a },
            9 => Msg::Message3 { id: a },
            10 => Msg::Echo { id: a },
            11 => Msg::Heartbeat { term: a, leading: f, watching: !f },
            12 => Msg::BullyElection { term: a },
            13 => Msg::Answer { term: a },
            14 => Msg::Coordinator { leader: a, term: b },
            15 => Msg::RingCollect { term: a, initiator: b, best: a ^ b, count: c % 64 },
            16 => Msg::NewLeader { term: a, leader: b },
            17 => Msg::Ack { term: a, leader: b, ok: f },
            18 => Msg::Commit { term: a, leader: b },
            19 => Msg::VoteRequest { term: a, candidate: b },
            20 => Msg::Vote { term: a, candidate: b, granted: f },
            21 => Msg::LeaseRenew { term: a, leader: b },
            _ => Msg::LeaseAck { term: a, granted: f },
        },
    )
}

/// One input of a node: a message on a port (taken modulo the node's ports), or one of its set timers.
#[derive(Clone, Debug)]
enum Input {
    Message(usize, Msg),
    Timer(usize),
}

fn inputs() -> impl Strategy<Value = Vec<Input>> {
    prop::collection::vec(
        prop_oneof![4 => (any::<usize>(), msg()).prop_map(|(p, m)| Input::Message(p, m)), 1 => any::<usize>().prop_map(Input::Timer)],
        0..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes decode to an envelope or fail cleanly, and a decoded body converts to a message or
    /// fails cleanly: nothing that arrives on a link can panic the decoder.
    #[test]
    fn envelope_decoding_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(env) = pb::Envelope::decode(bytes.as_slice())
            && let Some(body) = env.body.as_ref()
        {
            let _ = Msg::try_from(body);
        }
        if let Ok(body) = pb::Body::decode(bytes.as_slice()) {
            let _ = Msg::try_from(&body);
        }
    }

    /// Every algorithm in the catalogue, one-shot and kept, started or not, on 2 to 9 nodes, takes any
    /// sequence of messages on its ports and of its own timers without panicking, with bounded output.
    #[test]
    fn algorithms_survive_arbitrary_messages(n in 2u32..10, start in any::<bool>(), inputs in inputs()) {
        for spec in CATALOGUE {
            for kept in [false, true] {
                if let Some((algo, ports)) = harness::node(spec, n, kept) {
                    let mut feeder = Feeder::new(algo, ports);
                    if start {
                        feeder.start();
                    }
                    for input in &inputs {
                        match input {
                            Input::Message(port, m) => {
                                let _ = feeder.message(*port, *m);
                            }
                            Input::Timer(i) => feeder.timer(*i),
                        }
                    }
                }
            }
        }
    }
}

/// Re-encoding a decoded message gives back the same message (what the fuzzer relies on to reach deep states).
#[test]
fn messages_round_trip_through_the_wire() {
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&msg(), |m| {
            let body: pb::Body = m.into();
            prop_assert_eq!(Msg::try_from(&body).ok(), Some(m));
            Ok(())
        })
        .unwrap();
}

/// A peer that floods a node with messages of a far later stage, on every port, meets a bound: every
/// algorithm that holds such messages for later (Stages, Stages buffered, Stages with Feedback,
/// Alternate, BiMinMax, synchronous Hirschberg-Sinclair) holds at most MAX_HELD and refuses the rest,
/// and no algorithm holds anything it was not built to hold.
#[test]
fn a_flood_of_later_stage_messages_is_held_only_up_to_the_cap() {
    let holders = ["stages", "stages-buffered", "stages-feedback", "alternate", "bi-min-max", "sync-hs"];
    for spec in CATALOGUE {
        let Some((algo, ports)) = harness::node(spec, 8, false) else { continue };
        let mut feeder = Feeder::new(algo, ports);
        feeder.start();
        if spec.name == "stages" {
            // A current-stage message first: Stages then closes that port and holds whatever comes on it.
            feeder.message(0, Msg::Election { id: 0, stage: 1, hops: 1 }).unwrap();
        }
        let (mut refused, mut capped) = (0, 0);
        for i in 0..4 * MAX_HELD {
            // A larger id than any of the ring's, far ahead: a candidate cannot use it yet (the
            // synchronous algorithm takes probes, held until the next round).
            let (id, stage) = (1_000 + i as u64, 1_000);
            let msg = if spec.name == "sync-hs" {
                Msg::Probe { id, stage, limit: 1 << 20 }
            } else {
                Msg::Election { id, stage, hops: 1 }
            };
            match feeder.message(i % 2, msg) {
                Ok(()) => {}
                Err(AlgoError::TooManyHeld { held }) => {
                    assert_eq!(held, MAX_HELD, "{}", spec.name);
                    refused += 1;
                    capped += 1;
                }
                Err(_) => refused += 1,
            }
        }
        if holders.contains(&spec.name) {
            assert_eq!(feeder.held(), MAX_HELD, "{} holds up to the cap", spec.name);
            assert!(refused >= 2 * MAX_HELD, "{} refuses beyond the cap ({refused} refused)", spec.name);
            assert!(capped > 0, "{} refuses for being full once it is", spec.name);
        } else {
            assert_eq!(feeder.held(), 0, "{} holds nothing", spec.name);
        }
    }
}

/// Every message kind with `x` in every integer field (terms, ids, stages, hops, limits, counts),
/// `leading`/`ok`/`granted` both ways.
fn with_value(x: u64) -> Vec<Msg> {
    let s = x.min(u64::from(u32::MAX)) as u32;
    let mut all = vec![
        Msg::Election { id: x, stage: s, hops: s },
        Msg::Probe { id: x, stage: s, limit: s },
        Msg::Reply { id: x, stage: s },
        Msg::Notify { leader: x },
        Msg::Feedback { id: x, stage: s },
        Msg::Saturate { id: x },
        Msg::Message1 { id: x },
        Msg::Message2 { id: x },
        Msg::Message3 { id: x },
        Msg::Echo { id: x },
        Msg::Capture { stage: s, id: x },
        Msg::Warning { stage: s, id: x },
        Msg::WarningReply { yes: x.is_multiple_of(2) },
        Msg::CaptureAccept,
        Msg::CaptureReject,
        Msg::Wakeup,
        Msg::Program { kind: s, a: x, b: x, c: x, d: x },
        Msg::ProgramNotice { kind: s, a: x, b: x, c: x, d: x },
        Msg::HyperMatch { id: x, stage: s, path: s, route: s },
        Msg::ChordCapture { id: x, span: s },
        Msg::RandomId { id: x, round: s, hops: s, unique: x.is_multiple_of(2) },
        Msg::YoDown { id: x },
        Msg::GhsConnect { level: s },
        Msg::GhsInitiate { level: s, core_lo: x, core_hi: x, find: x.is_multiple_of(2) },
        Msg::GhsTest { level: s, core_lo: x, core_hi: x },
        Msg::GhsAccept,
        Msg::GhsReject,
        Msg::GhsReport { best_lo: x, best_hi: x, top: x },
        Msg::GhsChangeRoot,
    ];
    let i = x.min(i32::MAX as u64) as i32;
    for f in [false, true] {
        all.push(Msg::ChordAnswer { span: s, accepted: f });
        all.push(Msg::YoUp { yes: f, prune: !f, leaf: f });
        all.push(Msg::TorusMark { id: x, stage: s, step: s, kills: s, purged: f, beyond: !f });
        all.push(Msg::TorusVerdict { killer: x, stage: s, beaten: f, east: i, north: -i });
    }
    for (e, n) in [(0, 0), (i, 0), (-i, 0), (0, i), (0, -i), (i32::MIN, i32::MIN)] {
        all.push(Msg::TorusKill { killer: x, victim: x, stage: s, east: e, north: n, back_east: n, back_north: e });
    }
    all.push(Msg::TorusNotify { leader: x, east: s, north: s });
    all.extend(harness::kept_messages(x, x, x, s));
    all
}

/// The forged messages cover every message kind (a kind added later must be added to them).
#[test]
fn forged_messages_cover_every_kind() {
    let mut kinds: Vec<_> = with_value(7).iter().map(Msg::kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), ringleader_core::algo::MsgKind::COUNT, "{kinds:?}");
}

/// Position 0 of `spec` on the smallest of 3, 4 or 9 nodes its default topology has (a hypercube has
/// no 3, a torus neither 3 nor 4), one-shot or kept, under `rule`.
fn small_node(spec: &AlgorithmSpec, kept: bool, rule: Rule) -> Option<(Box<dyn Algorithm>, u32)> {
    let n = [3, 4, 9].into_iter().find(|&n| Topology::build(spec.default_topology(), n, 7).is_ok())?;
    harness::node_under(spec, n, kept, rule)
}

/// Forged messages: every algorithm, one-shot and kept, under both rules (so position 0 holds
/// the worst and the best id), takes every message kind with every field at the edges of its
/// range (0, 1, u32::MAX and u64::MAX and their neighbours, MAX_TERM and its neighbours) on every
/// port, then fires its timers for a while, without a panic (overflow checks are on in tests: a
/// wrapping `term + 1` panics here). The kept-leadership algorithms refuse any term above
/// MAX_TERM as implausible, on arrival, whatever the kind.
/// Fails on the code before the fix (bully's `self.term += 1` overflowed on a forged term).
#[test]
fn extreme_field_values_never_panic_and_implausible_terms_are_refused() {
    for spec in CATALOGUE {
        for kept in [false, true] {
            for rule in [Rule::Max, Rule::Min] {
                for x in EXTREMES {
                    for msg in with_value(x) {
                        let Some((algo, ports)) = small_node(spec, kept, rule) else { continue };
                        let mut feeder = Feeder::new(algo, ports);
                        feeder.start();
                        for port in 0..ports as usize {
                            let result = feeder.message(port, msg);
                            if spec.kept.is_some() && msg.term().is_some_and(|t| t > MAX_TERM) {
                                assert!(
                                    matches!(result, Err(AlgoError::Implausible { field: "term", .. })),
                                    "{} (kept {kept}): {msg:?} gave {result:?}",
                                    spec.name
                                );
                            }
                        }
                        for i in 0..64 {
                            feeder.timer(i);
                        }
                    }
                }
            }
        }
    }
}
