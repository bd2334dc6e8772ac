//! The lease (client-go's leader election on a store) under the checker, which models the
//! election's store: one linearizable record, operations applied as the schedule delivers them,
//! answers back to the incarnation that asked (docs/checking.md, "The store").
//!
//! Every check here: 2 nodes (ids 1, 2), the loopback timing (RetryPeriod 50 ms, RenewDeadline
//! 250 ms, LeaseDuration 375 ms), store operations and answers within 10 ms each way (one tick:
//! an operation is answered well within RetryPeriod, as the lease's liveness assumes), timers
//! that may fire anywhere in their tick. A lease's record revision grows with every renewal, so
//! its states never end: each check explores every schedule up to a depth.

use ringleader_check::{
    CheckAsk, Clock, Election, ElectionModel, Faults, KeptCheck, Limits, Report, Step, check, path_of_words, sweep_kept,
};
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{Leadership, catalogue};
use ringleader_core::protocol::store::{StoreOp, StoreReply};
use ringleader_core::schedule::{Cannot, StoreItem, replay};
use ringleader_core::topology::{Topology, TopologyKind};

/// The ids, in position order.
const IDS: [u64; 2] = [1, 2];
/// Store operations and answers take at most this long each way: one tick of the model's clock.
const DELAY_MS: u64 = 10;
/// Links in any order (the lease sends no messages between nodes: only the store matters).
const ANY_ORDER: Limits = Limits { fifo: false, ..Limits::DEFAULT };
/// The property a leased leadership adds: never two leaders at once, of any term.
const OVERLAP: &str = "no two leases overlap";
/// Every term (the record's transitions + 1, one per change of holder) has one leader: so no two
/// nodes hold the lease under one record revision either.
const ONE_PER_TERM: &str = "at most one leader per term";

fn lease() -> &'static ringleader_core::spec::AlgorithmSpec {
    catalogue::find("lease").unwrap()
}

fn complete() -> Topology {
    Topology::build(TopologyKind::Complete, 2, 7).unwrap()
}

/// Kept lease on 2 nodes with `faults`, id 1's clock at `rate` times real time if given.
fn election(faults: Faults, rate: Option<f64>) -> Election {
    let e = Election::kept(lease(), complete(), IDS.to_vec(), DetectorConfig::LOOPBACK, faults);
    Election { delay_ms: DELAY_MS, clock: rate.map(|rate| Clock { position: 0, rate }), ..e }
}

/// Every schedule up to `depth` steps.
fn to_depth(e: Election, depth: usize) -> Report {
    check(e, Limits { max_depth: depth, ..ANY_ORDER })
}

fn broken(r: &Report, property: &str) -> bool {
    r.counterexamples.iter().any(|c| c.property == property)
}

/// Kept lease on 2 nodes with one crash and one lost store operation or answer, every schedule of
/// up to 60 steps (long enough for a node to take the record over from a crashed holder: the
/// slow-clock overlap below takes 30): no node errs, no term has two leaders (so no record
/// revision has two holders), the nodes of a term agree on its holder, no two leases overlap, and
/// one agreed leader from the convergence bound on; the check stops at the depth.
#[test]
fn one_holder_per_revision_on_every_schedule_to_a_depth() {
    let r = to_depth(election(Faults { crashes: 1, losses: 1, ..Faults::NONE }, None), 60);
    assert!(r.counterexamples.is_empty(), "{:?}", r.counterexamples);
    assert_eq!((r.limit, r.depth), (Some("depth"), 60));
    assert_eq!(r.states, 212_508, "the lease's states to depth 60 (docs/checking.md)");
}

/// A holder whose clock runs at a tenth of real time (the "slow clock" client-go does not
/// tolerate: it renews every 500 ms of real time, above the 375 ms LeaseDuration the other node
/// waits): the checker finds the overlap, a schedule of store steps (reads and writes reaching the
/// store, answers reaching their nodes) in which id 2 sees the record unchanged for a
/// LeaseDuration, takes it, and leads term 2 while id 1 still leads term 1; the simulator's
/// driver (`schedule::replay`) takes the same steps to the same two leaders, and the lab's
/// explorer follows its words (those before the clock matters). With every clock
/// keeping real time (to within the model's tick) no schedule as long has an overlap.
#[test]
fn a_slow_holder_clock_overlaps_its_successor() {
    let r = to_depth(election(Faults::NONE, Some(0.1)), 30);
    let c = r.counterexamples.iter().find(|c| c.property == OVERLAP).expect("an overlap");
    assert_eq!(c.steps.len(), 30, "the shortest overlap");
    let applied = c.steps.iter().filter(|s| matches!(s, Step::Store { item: StoreItem::Op(_), .. })).count();
    let answered = c.steps.iter().filter(|s| matches!(s, Step::Store { item: StoreItem::Answer(_), .. })).count();
    assert!(applied >= 4 && answered >= 4, "store steps: {applied} applied, {answered} answered");
    let leads = |term| Some(Leadership { term, leader: Some(IDS[term as usize - 1]) });
    assert_eq!(c.beliefs, vec![leads(1), leads(2)]);
    let e = election(Faults::NONE, Some(0.1));
    let words = ElectionModel::new(e, false).words(&c.steps);
    let taken = words.iter().find(|w| w.starts_with("id 2's take-over")).expect("id 2 takes the lease");
    assert!(taken.ends_with("reaches the store: it now holds id 2, revision 3"), "{taken}");

    let replayed =
        replay(lease(), &complete(), &IDS, lease().rule, Some(DetectorConfig::LOOPBACK), false, &c.steps).unwrap();
    assert_eq!(replayed.beliefs, c.beliefs);
    assert_eq!(replayed.violations, vec!["2 leaders, at positions [0, 1]".to_string()]);

    // The lab's explorer follows such words: the first ten steps, before the slow clock matters,
    // from the request the lab sends for the lease.
    let ask = CheckAsk { algorithm: "lease".into(), n: 2, kept: true, delay_ms: Some(DELAY_MS), ..CheckAsk::default() };
    assert_eq!(path_of_words(&ask, &words[..10]).map(|p| p.len()), Ok(10));

    let exact = to_depth(election(Faults::NONE, None), 30);
    assert!(!broken(&exact, OVERLAP) && !broken(&exact, ONE_PER_TERM), "{:?}", exact.counterexamples);
}

/// A node that crashes with an operation on its way: the operation still reaches the store and
/// takes effect (the record is written), but its answer reaches no incarnation of it, in the
/// checker and in the replay alike; and a step naming an answer not on its way cannot be taken.
#[test]
fn an_answer_to_a_crashed_node_is_lost() {
    let e = election(Faults { crashes: 1, recover: true, ..Faults::NONE }, None);
    let model = ElectionModel::new(e, false);
    let get = StoreItem::Op(StoreOp::Get { seq: 1 });
    let steps = [Step::Start(0), Step::Start(1), Step::Crash(0), Step::Store { node: 0, item: get }];
    let mut s = model.initial();
    for &step in &steps {
        s = model.next_state(&s, step).unwrap_or_else(|| panic!("{step:?}"));
    }
    let mut next = Vec::new();
    model.actions(&s, &mut next);
    assert!(!next.iter().any(|st| matches!(st, Step::Store { node: 0, .. })), "{next:?}");
    assert!(next.iter().any(|st| matches!(st, Step::Store { node: 1, item: StoreItem::Op(_) })), "{next:?}");

    let run =
        |steps: &[Step]| replay(lease(), &complete(), &IDS, lease().rule, Some(DetectorConfig::LOOPBACK), false, steps);
    assert!(run(&steps).is_ok());
    let answer = StoreReply::Done { seq: 1, written: false, revision: 0, record: None };
    let mut more = steps.to_vec();
    more.push(Step::Store { node: 0, item: StoreItem::Answer(answer) });
    assert_eq!(run(&more).unwrap_err().why, Cannot::NotInFlight);
}

/// The lease is checked from the command line's and the API's request alike: CheckAlgorithm's
/// validation accepts it kept on 3 nodes, and a kept sweep of it runs (to a depth).
#[test]
fn the_lease_is_accepted_and_swept() {
    let ask = CheckAsk { algorithm: "lease".into(), n: 3, kept: true, ..CheckAsk::default() };
    assert!(ask.check().is_ok(), "{:?}", ask.check().err());
    let how = KeptCheck { faults: Faults::NONE, ..KeptCheck::default() };
    let s = sweep_kept(lease(), 3, how, Limits { max_depth: 12, ..ANY_ORDER }, None, |_| {}).unwrap();
    assert!(s.broken.is_empty() && s.states > 1_000, "{s:?}");
}
