//! Every observation (clock aside) reachable in a kept check, with the latest clock it is seen at.
use ringleader_check::*;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::topology::Topology;
use std::hash::BuildHasher;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let spec = ringleader_core::algo::catalogue::find(&a[1]).unwrap();
    let n: u32 = a[2].parse().unwrap();
    let delay: u64 = a[3].parse().unwrap();
    let crashes: u8 = a[4].parse().unwrap();
    let losses: u8 = a[5].parse().unwrap();
    let full = a.get(6).is_some_and(|x| x == "full");
    let topology = Topology::build(spec.default_topology(), n, 7).unwrap();
    let faults = Faults { crashes, losses, ..Faults::NONE };
    let ids = (1..=u64::from(n)).collect();
    let e = Election { delay_ms: delay, ..Election::kept(spec, topology, ids, DetectorConfig::LOOPBACK, faults) };
    let m = ElectionModel::new(e, false).with_reduction(!full);
    let hash = foldhash::quality::FixedState::with_seed(3);
    let mut seen = std::collections::HashSet::new();
    let mut observed = std::collections::HashMap::new();
    let mut stack = vec![m.initial()];
    let mut next = Vec::new();
    while let Some(s) = stack.pop() {
        let o = Observation { since_fault: None, ..s.observation() };
        let latest = observed.entry(format!("{o:?}")).or_insert(0u32);
        *latest = s.clock().max(*latest);
        m.successors(&s, &mut next);
        for (_, x) in next.drain(..) {
            if seen.insert(hash.hash_one((&x, x.clock()))) {
                stack.push(x);
            }
        }
    }
    let mut v: Vec<_> = observed.into_iter().collect();
    v.sort();
    for (o, c) in &v {
        println!("{c} {o}");
    }
    eprintln!("{} states, {} observations", seen.len(), v.len());
}
