//! A node of any catalogue algorithm fed whatever arrives: the first bytes
//! pick the algorithm, the size, kept or not, started or not and the rule
//! (so position 0 holds the worst or the best id); the rest is
//! a sequence of records `[port][len][len bytes of a protobuf Body]`, or
//! `[0xFF][i]` to fire the node's i-th set timer. No panic, bounded output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use ringleader_core::algo::{Msg, Rule};
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::algo::harness::{self, Feeder};
use ringleader_proto::v1 as pb;

fuzz_target!(|data: &[u8]| {
    let [pick, size, flags, rest @ ..] = data else { return };
    let spec = &CATALOGUE[*pick as usize % CATALOGUE.len()];
    let n = 2 + u32::from(*size % 8);
    let rule = if flags & 4 == 4 { Rule::Min } else { Rule::Max };
    let Some((algo, ports)) = harness::node_under(spec, n, flags & 1 == 1, rule) else { return };
    let mut feeder = Feeder::new(algo, ports);
    if flags & 2 == 2 {
        feeder.start();
    }
    let mut rest = rest;
    while let [op, arg, tail @ ..] = rest {
        if *op == 0xFF {
            feeder.timer(*arg as usize);
            rest = tail;
            continue;
        }
        let len = (*arg as usize).min(tail.len());
        let (bytes, tail) = tail.split_at(len);
        if let Ok(body) = pb::Body::decode(bytes)
            && let Ok(msg) = Msg::try_from(&body)
        {
            let _ = feeder.message(*op as usize, msg);
        }
        rest = tail;
    }
});
