//! Property tests of what arrives over the network: arbitrary bytes as
//! envelopes, and every algorithm of the catalogue (one-shot and kept) fed
//! arbitrary message sequences on its real ports. Nothing may panic, and each
//! step's output stays bounded. (The fuzz targets explore the same ground for
//! longer; these run in the normal test suite in seconds.)

use proptest::prelude::*;
use prost::Message;
use ringleader_node::algo::catalogue::{AlgorithmSpec, CATALOGUE};
use ringleader_node::algo::detector::DetectorConfig;
use ringleader_node::algo::{Algorithm, Effect, Msg, NodeContext, Outbox, PortInfo, Rule, TimerId};
use ringleader_node::topology::Topology;
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

/// Position 0 of `spec`'s default topology on `n` nodes, built as a driver builds it.
fn build(spec: &AlgorithmSpec, n: u32, kept: bool) -> Option<(Box<dyn Algorithm>, u32)> {
    let topology = Topology::build(spec.default_topology(), n, 7).ok()?;
    let ids: Vec<u64> = (1..=u64::from(n)).collect();
    let ports = topology.ports(0);
    let info: Vec<PortInfo> =
        ports.iter().map(|l| PortInfo { neighbour: ids[l.peer as usize], label: l.label }).collect();
    let ctx = NodeContext { id: ids[0], rule: Rule::Max, n, coin: 42, ports: info.len() as u32, port_info: &info };
    let algo = match (kept, spec.build_kept) {
        (false, _) => (spec.build)(&ctx),
        (true, Some(b)) => b(&ctx, DetectorConfig::LOOPBACK),
        (true, None) => return None,
    };
    Some((algo, info.len() as u32))
}

/// Feed `inputs` to `algo` as a driver would (timers only once set, never after being cancelled);
/// every step's effects stay within a bound of its ports.
fn run(mut algo: Box<dyn Algorithm>, ports: u32, start: bool, inputs: &[Input]) {
    let bound = 8 * ports as usize + 32;
    let mut out = Outbox::default();
    let mut timers: Vec<TimerId> = Vec::new();
    let step = |out: &mut Outbox, timers: &mut Vec<TimerId>| {
        assert!(out.effects().len() <= bound, "{} effects in one step: {:?}", out.effects().len(), out.effects());
        for e in out.drain() {
            match e {
                Effect::SetTimer { timer, .. } if !timers.contains(&timer) => timers.push(timer),
                Effect::CancelTimer { timer } => timers.retain(|t| *t != timer),
                _ => {}
            }
        }
    };
    if start {
        algo.on_start(&mut out);
        step(&mut out, &mut timers);
    }
    for input in inputs {
        match input {
            Input::Message(p, m) if ports > 0 => {
                // An algorithm may refuse a message (the node rejects the envelope); it may not panic.
                let _ = algo.on_message((*p % ports as usize) as u32, *m, &mut out);
            }
            Input::Message(..) => {}
            Input::Timer(i) if !timers.is_empty() => {
                let t = timers.remove(i % timers.len());
                algo.on_timer(t, &mut out);
            }
            Input::Timer(_) => {}
        }
        step(&mut out, &mut timers);
    }
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
                if let Some((algo, ports)) = build(spec, n, kept) {
                    run(algo, ports, start, &inputs);
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
