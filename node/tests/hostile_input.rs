//! Property tests of what arrives over the network: arbitrary bytes as
//! envelopes, and every algorithm of the catalogue (one-shot and kept) fed
//! arbitrary message sequences on its real ports. Nothing may panic, and each
//! step's output stays bounded. (The fuzz targets explore the same ground for
//! longer; these run in the normal test suite in seconds.)

use proptest::prelude::*;
use prost::Message;
use ringleader_node::algo::catalogue::CATALOGUE;
use ringleader_node::algo::harness::{self, Feeder};
use ringleader_node::algo::{AlgoError, MAX_HELD, Msg};
use ringleader_proto::v1 as pb;

/// Any message, with ids and terms mostly small (where the algorithms' comparisons are).
fn msg() -> impl Strategy<Value = Msg> {
    let small = prop_oneof![4 => 0u64..12, 1 => any::<u64>()];
    (0usize..23, small.clone(), small, 0u32..6, any::<u32>(), any::<bool>()).prop_map(
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
            11 => Msg::Heartbeat { term: a },
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
