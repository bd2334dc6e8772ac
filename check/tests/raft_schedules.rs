//! What Raft's options are for, as schedules the checker finds and the
//! simulator's driver replays (docs/checking.md, "What Raft's options are
//! for"): without PreVote a node cut off alone and healed deposes a stable
//! leader, with it never; without CheckQuorum a leader cut off from the
//! majority believes it leads beside its successor until the partition heals,
//! with it for at most an election timeout, and with the lease not at all;
//! and a Raft that forgets its vote in a crash elects two leaders of one term.
//!
//! Every check here: 3 nodes (ids 1, 2, 3), the loopback timing (heartbeats
//! every 50 ms, election timeouts in [200, 400) ms), messages within 10 ms
//! (one tick), links in any order, timers that may fire anywhere in their
//! tick.

mod common;

use ringleader_check::{
    Counterexample, Election, ElectionModel, Faults, KeptCheck, Limits, Step, System, Verdict, Watched, sweep_kept,
    watch,
};
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::raft::{self, Raft, RaftConfig};
use ringleader_core::algo::{AlgoError, Algorithm, Input, Leadership, Msg, NodeContext, Outbox, Port, TimerId};
use ringleader_core::schedule::{Replayed, replay};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::spec::KeptSpec;
use ringleader_core::topology::{Topology, TopologyKind};

static PLAIN: AlgorithmSpec = raft_with!(false, false, false);
static PRE_VOTE: AlgorithmSpec = raft_with!(true, false, false);
static CHECK_QUORUM: AlgorithmSpec = raft_with!(false, true, false);
static LEASE: AlgorithmSpec = raft_with!(false, false, true);
static CHECK_QUORUM_LEASE: AlgorithmSpec = raft_with!(false, true, true);

/// Messages take at most this long: one tick of the model's clock.
const DELAY_MS: u64 = 10;
/// The ids, in position order.
const IDS: [u64; 3] = [1, 2, 3];
/// Links in any order, as Raft assumes.
const ANY_ORDER: Limits = Limits { fifo: false, ..Limits::DEFAULT };
/// The property of part (a), as the watch reports it.
const DEPOSED: &str = "a leader every node follows keeps leading when a follower is cut off alone and healed";
/// The property of part (b).
const OVERLAP: &str = "a leader cut off alone and another never believe they lead at one instant";
/// With CheckQuorum a leader cut off alone and its successor believe they lead together for at
/// most this many ticks of 10 ms: election_min (200 ms).
const CHECK_QUORUM_OVERLAP_TICKS: u32 = 20;

fn complete() -> Topology {
    Topology::build(TopologyKind::Complete, 3, 7).unwrap()
}

/// Kept Raft (`spec`) on 3 nodes with `faults`, 10 ms messages.
fn election(spec: &'static AlgorithmSpec, faults: Faults) -> Election {
    let e = Election::kept(spec, complete(), IDS.to_vec(), DetectorConfig::LOOPBACK, faults);
    Election { delay_ms: DELAY_MS, ..e }
}

/// Kept Raft (`spec`) on 3 nodes with one partition, healing within `partition_ms`.
fn partitioned(spec: &'static AlgorithmSpec, partition_ms: u64) -> Election {
    Election { partition_ms: Some(partition_ms), ..election(spec, Faults { partitions: 1, ..Faults::NONE }) }
}

/// Replay `steps` on `spec` in the simulator's driver (`ringleader_core::schedule::replay`).
fn replayed(spec: &AlgorithmSpec, steps: &[Step]) -> Replayed {
    replay(spec, &complete(), &IDS, spec.rule, Some(DetectorConfig::LOOPBACK), false, steps).unwrap()
}

/// Print a schedule found, step by step in words (with `--nocapture`).
fn show(e: &Election, w: &Watched) {
    eprintln!("{} states, {} moves, {:?}", w.states, w.moves, w.elapsed);
    if let Some(c) = &w.counterexample {
        for (i, s) in ElectionModel::new(e.clone(), false).words(&c.steps).iter().enumerate() {
            eprintln!("  {:3}. {s}", i + 1);
        }
        eprintln!("  ends: {:?}", c.beliefs);
    }
}

/// Every node believes in the same leader of the same term (so the leader believes it leads).
fn settled(s: &System) -> Option<Leadership> {
    let beliefs = s.beliefs();
    let first = beliefs[0]?;
    (first.leader.is_some() && beliefs.iter().all(|b| *b == Some(first))).then_some(first)
}

/// The position of the node with id `id`.
fn position(id: u64) -> usize {
    IDS.iter().position(|&i| i == id).unwrap()
}

/// The node a partition of 3 nodes cuts off alone.
fn alone(side: u32) -> usize {
    let side = if side.count_ones() == 1 { side } else { !side & 0b111 };
    side.trailing_zeros() as usize
}

/// How many nodes of `s` believe they lead.
fn leading(s: &System) -> usize {
    s.beliefs().iter().zip(IDS).filter(|(b, id)| b.is_some_and(|b| b.leader == Some(*id))).count()
}

/// The first point of a replay's timeline at which two nodes believe they lead: their
/// (position, term), in position order.
fn first_overlap(timeline: &[(u32, Leadership)]) -> Option<Vec<(usize, u64)>> {
    let mut now: [Option<Leadership>; 3] = [None; 3];
    for &(p, l) in timeline {
        now[p as usize] = Some(l);
        let leaders: Vec<(usize, u64)> =
            (0..3).filter_map(|q| now[q].filter(|b| b.leader == Some(IDS[q])).map(|b| (q, b.term))).collect();
        if leaders.len() > 1 {
            return Some(leaders);
        }
    }
    None
}

/// Where a schedule is, for a watch of one partition that strikes while every node follows one
/// leader.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// No partition yet; the leader every node follows now, if any.
    Before(Option<Leadership>),
    /// The partition cut off one node alone while every node followed this leader.
    Cut(Leadership),
    /// That partition healed.
    Healed(Leadership),
}

impl Phase {
    /// The phase after `steps`: `None` if a partition struck where the watch does not look (no
    /// leader followed by every node, or it cut off the leader when `cut_leader` is false, a
    /// follower when it is true).
    fn after(&self, steps: &[Step], cut_leader: bool) -> Option<Phase> {
        let mut phase = self.clone();
        for step in steps {
            phase = match (step, phase) {
                (Step::Partition(side), Phase::Before(Some(l))) => {
                    if (alone(*side) == position(l.leader?)) != cut_leader {
                        return None;
                    }
                    Phase::Cut(l)
                }
                (Step::Partition(_), _) => return None,
                (Step::Heal, Phase::Cut(l)) => Phase::Healed(l),
                (_, p) => p,
            };
        }
        Some(phase)
    }

    /// The leader every node followed when the partition struck.
    fn cut_off_from(&self) -> Option<Leadership> {
        match *self {
            Phase::Cut(l) | Phase::Healed(l) => Some(l),
            Phase::Before(_) => None,
        }
    }
}

/// [`DEPOSED`] as a watch: broken once the leader every node followed when a follower was cut off
/// alone no longer believes it leads; cleared once, healed, every node follows it again.
fn deposed_after_a_heal(phase: &Phase, steps: &[Step], s: &System) -> Verdict<Phase> {
    let Some(phase) = phase.after(steps, false) else { return Verdict::Clear };
    let Some(l) = phase.cut_off_from() else { return Verdict::Go(Phase::Before(settled(s))) };
    if s.beliefs()[position(l.leader.unwrap())] != Some(l) {
        Verdict::Broken
    } else if matches!(phase, Phase::Healed(_)) && settled(s) == Some(l) {
        Verdict::Clear
    } else {
        Verdict::Go(phase)
    }
}

/// A watch of the leader cut off alone: the phase, whether two nodes believe they lead now, and
/// for how many ticks they have.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Overlap {
    phase: Phase,
    now: bool,
    ticks: u32,
}

impl Overlap {
    const START: Overlap = Overlap { phase: Phase::Before(None), now: false, ticks: 0 };
}

/// [`OVERLAP`] as a watch, once the leader every node follows is cut off alone: broken when it
/// and another believe they lead for more than `allowed` ticks together (`None`: at one instant);
/// cleared once the cut-off leader no longer believes it leads, or (`while_cut`) at the heal.
fn overlap_beyond(allowed: Option<u32>, while_cut: bool) -> impl Fn(&Overlap, &[Step], &System) -> Verdict<Overlap> {
    move |o, steps, s| {
        let Some(phase) = o.phase.after(steps, true) else { return Verdict::Clear };
        let Some(l) = phase.cut_off_from() else {
            return Verdict::Go(Overlap { phase: Phase::Before(settled(s)), ..Overlap::START });
        };
        if s.beliefs()[position(l.leader.unwrap())] != Some(l) || while_cut && matches!(phase, Phase::Healed(_)) {
            return Verdict::Clear;
        }
        let passed: u32 = steps.iter().map(|s| if let Step::Tick(k) = s { *k } else { 0 }).sum();
        let (now, ticks) = (leading(s) > 1, if o.now { o.ticks + passed } else { 0 });
        match allowed {
            None if now => Verdict::Broken,
            Some(k) if ticks > k => Verdict::Broken,
            _ => Verdict::Go(Overlap { phase, now, ticks: if now { ticks } else { 0 } }),
        }
    }
}

/// The partition of part (b): it heals within 600 ms, past CheckQuorum's step-down (at most two
/// election_min, 400 ms, after the cut).
const OVERLAP_PARTITION_MS: u64 = 600;

/// Without PreVote, found by the checker: 2 leads term 1 with every node following; 1 is cut off
/// alone, its election timer fires and it runs for term 2 (its requests cut off); the partition
/// heals, 2's next heartbeat reaches 1, and 1's answer carries term 2, so 2 steps down: the
/// shortest such schedule is 27 moves (29 steps), none of 26 does it, and the simulator's driver
/// replays it to the same end (2 leads term 1 just before the heal, and believes no leader of term
/// 2 at the end).
#[test]
fn without_pre_vote_a_healed_node_deposes_a_stable_leader() {
    let e = partitioned(&PLAIN, 1_000);
    let w = watch(e.clone(), ANY_ORDER, DEPOSED, Phase::Before(None), deposed_after_a_heal);
    show(&e, &w);
    let c = w.counterexample.as_ref().expect("deposed");
    assert_eq!((w.moves, c.steps.len()), (27, 29));
    let shorter =
        watch(e, Limits { max_depth: w.moves - 1, ..ANY_ORDER }, DEPOSED, Phase::Before(None), deposed_after_a_heal);
    assert!(shorter.counterexample.is_none() && shorter.limit == Some("depth"), "{shorter:?}");

    let cut = c.steps.iter().find_map(|s| if let Step::Partition(side) = s { Some(alone(*side)) } else { None });
    let heal = c.steps.iter().position(|s| *s == Step::Heal).expect("healed");
    let before = replayed(&PLAIN, &c.steps[..heal]);
    let leader = before.beliefs.iter().zip(IDS).position(|(b, id)| b.is_some_and(|b| b.leader == Some(id))).unwrap();
    let lone = cut.unwrap();
    assert_ne!(lone, leader, "a follower was cut off");
    assert_eq!(before.beliefs[leader], Some(Leadership { term: 1, leader: Some(IDS[leader]) }));
    assert!(before.beliefs[lone].is_some_and(|b| b.term == 2), "the cut-off node ran: {:?}", before.beliefs);
    let after = replayed(&PLAIN, &c.steps);
    assert_eq!(after.beliefs, c.beliefs, "the replay ends where the checker did");
    assert_eq!(after.beliefs[leader], Some(Leadership { term: 2, leader: None }), "deposed by term 2");
    assert!(after.violations.is_empty(), "{:?}", after.violations);
}

/// With PreVote (thesis §9.6), the same exploration (a follower cut off alone from a leader every
/// node follows, healing within 1 s) holds on every schedule: the cut-off node's pre-votes fail, its
/// term stays, and once healed it follows the same leader of the same term again.
#[test]
fn with_pre_vote_a_healed_node_never_deposes_the_leader() {
    let w = watch(partitioned(&PRE_VOTE, 1_000), ANY_ORDER, DEPOSED, Phase::Before(None), deposed_after_a_heal);
    eprintln!("PreVote: {} states, depth {}, {:?}", w.states, w.depth, w.elapsed);
    assert!(w.holds(), "{:?}", w.counterexample);
    assert!(w.states > 50_000 && w.depth > 100, "{} states, depth {}", w.states, w.depth);
}

/// Without CheckQuorum, found by the checker: 2 leads term 1; 2 is cut off alone; 1's election
/// timer fires, 3 votes for it, and 1 leads term 2 while 2 still believes it leads term 1: two
/// nodes believe they lead at one instant, of different terms (not two leaders of one term). The
/// shortest such schedule within the partition is 19 moves (20 steps), and the simulator's
/// driver replays it to the same overlap. The overlap lasts: one of more than
/// [`CHECK_QUORUM_OVERLAP_TICKS`] (200 ms) is found as well, since the cut-off leader believes it
/// leads until the partition heals.
#[test]
fn without_check_quorum_a_cut_off_leader_overlaps_its_successor() {
    let e = partitioned(&PLAIN, OVERLAP_PARTITION_MS);
    let w = watch(e.clone(), ANY_ORDER, OVERLAP, Overlap::START, overlap_beyond(None, true));
    show(&e, &w);
    let c = w.counterexample.as_ref().expect("an overlap");
    assert_eq!((w.moves, c.steps.len()), (19, 20));
    assert!(!c.steps.contains(&Step::Heal), "during the partition");
    overlap_replays(&PLAIN, c);
    let long =
        watch(e.clone(), ANY_ORDER, OVERLAP, Overlap::START, overlap_beyond(Some(CHECK_QUORUM_OVERLAP_TICKS), false));
    show(&e, &long);
    let c = long.counterexample.as_ref().expect("a long overlap");
    assert!(c.steps.contains(&Step::Heal), "it outlasts the partition");
    overlap_replays(&PLAIN, c);
}

/// The simulator's driver replays the schedule `c` of `spec` to where the checker ended it: two
/// nodes believe they lead, of different terms, and no term has two leaders.
fn overlap_replays(spec: &AlgorithmSpec, c: &Counterexample) {
    let r = replayed(spec, &c.steps);
    assert_eq!(r.beliefs, c.beliefs, "the replay ends where the checker did");
    let leaders: Vec<u64> =
        r.beliefs.iter().zip(IDS).filter_map(|(b, id)| b.filter(|b| b.leader == Some(id)).map(|b| b.term)).collect();
    assert!(leaders.len() == 2 && leaders[0] != leaders[1], "{:?}", r.beliefs);
    let overlap = first_overlap(&r.timeline).expect("the replay overlaps");
    assert!(overlap.len() == 2 && overlap[0].1 != overlap[1].1, "{overlap:?}");
    assert!(r.violations.is_empty(), "{:?}", r.violations);
}

/// With CheckQuorum (thesis §6.2) the overlap still happens (the same story, 3 granting once its
/// guard of §4.2.3 has run out: the shortest is 20 moves, 21 steps, replayed to the same end), but
/// it is bounded: on every schedule of the leader cut off alone (healing within 600 ms) the two
/// believe they lead together for at most [`CHECK_QUORUM_OVERLAP_TICKS`] ticks (200 ms,
/// election_min; the cut-off leader counts its contacts every election_min and steps down at the
/// second count after the cut at the latest), and for more than 19 ticks on some.
#[test]
fn check_quorum_bounds_the_overlap_to_an_election_timeout() {
    let e = partitioned(&CHECK_QUORUM, OVERLAP_PARTITION_MS);
    let w = watch(e.clone(), ANY_ORDER, OVERLAP, Overlap::START, overlap_beyond(None, true));
    show(&e, &w);
    let c = w.counterexample.as_ref().expect("an overlap");
    assert_eq!((w.moves, c.steps.len()), (20, 21));
    overlap_replays(&CHECK_QUORUM, c);
    let bounded =
        watch(e.clone(), ANY_ORDER, OVERLAP, Overlap::START, overlap_beyond(Some(CHECK_QUORUM_OVERLAP_TICKS), false));
    eprintln!("CheckQuorum, overlaps of more than 20 ticks: {} states, {:?}", bounded.states, bounded.elapsed);
    assert!(bounded.holds(), "{:?}", bounded.counterexample);
    let tight =
        watch(e, ANY_ORDER, OVERLAP, Overlap::START, overlap_beyond(Some(CHECK_QUORUM_OVERLAP_TICKS - 1), false));
    overlap_replays(&CHECK_QUORUM, tight.counterexample.as_ref().expect("the bound is reached"));
}

/// With the lease (thesis §6.4.1), alone or with CheckQuorum, the same exploration holds on every
/// schedule: the cut-off leader stops believing it leads when its lease ends, before any other node
/// can be elected, so no two nodes believe they lead at one instant, during the partition or after
/// it.
#[test]
fn only_the_lease_removes_the_overlap() {
    for (options, spec) in [("lease", &LEASE), ("CheckQuorum, lease", &CHECK_QUORUM_LEASE)] {
        let w = watch(
            partitioned(spec, OVERLAP_PARTITION_MS),
            ANY_ORDER,
            OVERLAP,
            Overlap::START,
            overlap_beyond(None, false),
        );
        eprintln!("{options}: {} states, depth {}, {:?}", w.states, w.depth, w.elapsed);
        assert!(w.holds(), "{options}: {:?}", w.counterexample);
        assert!(w.states > 50_000 && w.depth > 50, "{options}: {} states, depth {}", w.states, w.depth);
    }
}

/// Raft whose recovered incarnation gets nothing back: its term and vote are forgotten in a
/// crash (the shell keeps the record, its [`Input::Restore`] is dropped).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Amnesiac(Raft);

impl Algorithm for Amnesiac {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Restore(_forgotten) => Ok(()),
            _ => self.0.step(input, out),
        }
    }
    fn state(&self) -> &'static str {
        self.0.state()
    }
    fn watched(&self, port: Port) -> bool {
        self.0.watched(port)
    }
    fn suspects(&self, port: Port) -> bool {
        self.0.suspects(port)
    }
    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        self.0.timer_name(timer)
    }
    fn held(&self) -> usize {
        self.0.held()
    }
    fn only_refreshes(&self, port: Port, msg: &Msg) -> bool {
        self.0.only_refreshes(port, msg)
    }
}

/// The amnesiac Raft's entry: the shipped Raft's, kept mode replaced.
static AMNESIAC: AlgorithmSpec = AlgorithmSpec {
    kept: Some(KeptSpec {
        build: |c: &NodeContext, d| Box::new(Amnesiac(Raft::with_config(c, RaftConfig::for_detector(d)))),
        ..common::RAFT_KEPT
    }),
    ..raft::SPEC
};

/// A Raft that forgets its vote in a crash is caught by the checker's "at most one leader per
/// term", with one crash (recovering) and one lost message: 2 runs for term 1 and its request to 1
/// is lost; 3 votes for 2 and crashes; 3 comes back with no record; 1 runs for term 1 and 3 votes
/// again: 1 and 2 both lead term 1. The shortest schedule is 14 moves (16 steps): none of 13 moves
/// breaks it; the simulator's driver replays it to the same two leaders of term 1. The shipped
/// Raft, explored to the same depth, breaks nothing.
#[test]
fn a_raft_that_forgets_its_vote_elects_two_leaders_of_a_term() {
    let faults = Faults { crashes: 1, recover: true, losses: 1, ..Faults::NONE };
    let how = KeptCheck { faults, delay_ms: DELAY_MS, ..KeptCheck::default() };
    let to = |depth| Limits { max_depth: depth, ..ANY_ORDER };
    let s = sweep_kept(&AMNESIAC, 3, how, to(14), None, |_| {}).unwrap();
    let (_, _, c) = s.broken.iter().find(|(_, _, c)| c.property == "at most one leader per term").expect("caught");
    for (i, w) in ElectionModel::new(election(&AMNESIAC, faults), false).words(&c.steps).iter().enumerate() {
        eprintln!("  {:3}. {w}", i + 1);
    }
    assert_eq!(c.steps.len(), 16);
    assert!(c.steps.contains(&Step::Recover(2)) && c.steps.iter().any(|s| matches!(s, Step::Lose { .. })));
    let lead_1 = |id| Some(Leadership { term: 1, leader: Some(id) });
    assert_eq!(c.beliefs[..2], [lead_1(1), lead_1(2)], "{:?}", c.beliefs);
    let r = replayed(&AMNESIAC, &c.steps);
    assert_eq!(r.beliefs, c.beliefs, "the replay ends where the checker did");
    assert!(r.violations.iter().any(|v| v.contains("two leaders in one term: term 1")), "{:?}", r.violations);
    let shorter = sweep_kept(&AMNESIAC, 3, how, to(13), None, |_| {}).unwrap();
    assert!(shorter.broken.is_empty(), "{:?}", shorter.broken.first());
    let shipped = sweep_kept(&PLAIN, 3, how, to(14), None, |_| {}).unwrap();
    assert!(shipped.broken.is_empty(), "{:?}", shipped.broken.first());
    eprintln!("amnesiac: {} states to depth 14, {:?}; shipped {} states", s.states, s.elapsed, shipped.states);
}
