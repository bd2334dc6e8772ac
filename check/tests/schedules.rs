//! The checker on the catalogue (every schedule of every small election) and
//! on broken variants it must catch, with their shortest counterexamples.

use ringleader_check::{
    Election, ElectionModel, Faults, KeptCheck, Limits, Observation, Step, check, diagram, sweep, sweep_kept,
};
use ringleader_core::algo::bully::{self, Bully, BullyConfig};
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::algo::detector::{Detected, DetectorConfig};
use ringleader_core::algo::oneshot::{Ending, OneShotNode, Wake};
use ringleader_core::algo::{
    AlgoError, Algorithm, Decision, Effect, Input, Msg, NodeContext, Outbox, Port, RIGHT, Role, Rule, TimerId, other,
};
use ringleader_core::machine;
use ringleader_core::schedule::replay;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::spec::{Assumptions, Candidates, Extras, Machine, Provision, RINGS};
use ringleader_core::topology::{Topology, TopologyKind};

/// Every algorithm of the catalogue, in its one-shot mode, on 3 nodes (one election of a 2 × 2 mesh, every
/// election of 4 on a hypercube):
/// on every id arrangement × initiator set and every delivery and wake-up order its links allow, no
/// node errs, at most one leads, decided nodes agree, the leader is the expected winner, the count
/// stays within the bound, and every final state is a finished election. The one-shot modes that set
/// timers (bully, chubby, sync-hs) are checked too, in the model's ticks.
#[test]
fn every_schedule_of_every_small_election_holds() {
    for spec in CATALOGUE.iter() {
        let limits = Limits { fifo: spec.assumptions.fifo, ..Limits::default() };
        if spec.default_topology() == TopologyKind::Mesh {
            // The smallest mesh has 4 nodes, whose sweep takes a minute: one election here, every
            // arrangement in docs/checking.md.
            let topology = Topology::build(TopologyKind::Mesh, 4, 7).unwrap();
            let e = Election::new(spec, topology, vec![4, 3, 2, 1], vec![0, 1, 2, 3], spec.rule);
            let r = check(e, limits);
            assert!(r.holds() && r.states > 1000, "{}: {:?}", spec.name, r.counterexamples.first());
            continue;
        }
        if spec.default_topology() == TopologyKind::Torus {
            // The smallest torus has 9 nodes, past what the checker takes (2 to 6): its elections are
            // tried on random schedules in core/tests/torus_election.rs instead.
            continue;
        }
        // A hypercube has no 3 nodes: its smallest sweep with more than one duel is on 4.
        let n = if Topology::build(spec.default_topology(), 3, 7).is_ok() { 3 } else { 4 };
        let s = sweep(spec, n, 7, spec.rule, limits, |_, _, _| {}).unwrap();
        assert!(s.holds(), "{}: {:?}", spec.name, s.broken.first());
        assert!(s.elections >= 7 && s.states > s.elections, "{}: {s:?}", spec.name);
        assert!(s.most_messages <= s.bound, "{}", spec.name);
    }
}

/// AsFar's worst case is attained on some schedule: with ids decreasing in the sending direction and
/// every node initiating, the most messages over all schedules of 4 nodes is the bound n(n+1)/2 + n.
#[test]
fn as_far_attains_its_bound_on_some_schedule() {
    let spec = ringleader_core::algo::catalogue::find("as-far").unwrap();
    let topology = Topology::ring(TopologyKind::RingUni, 4, 0).unwrap();
    let e = Election::new(spec, topology, vec![4, 3, 2, 1], vec![0, 1, 2, 3], Rule::Max);
    let r = check(e, Limits { fifo: false, ..Limits::default() });
    assert!(r.holds(), "{:?}", r.counterexamples);
    assert_eq!((r.most_messages, r.bound), (14, 14));
}

/// Depth-first exploration visits exactly the states breadth-first does, and reaches the same
/// verdicts and worst case (Controlled Distance on every election of 3 nodes, and a broken variant).
#[test]
fn depth_first_explores_the_same_states() {
    let spec = ringleader_core::algo::catalogue::find("controlled-distance").unwrap();
    let bfs = sweep(spec, 3, 7, Rule::Max, Limits { fifo: false, ..Limits::default() }, |_, _, _| {}).unwrap();
    let dfs_limits = Limits { fifo: false, depth_first: true, ..Limits::default() };
    let dfs = sweep(spec, 3, 7, Rule::Max, dfs_limits, |_, _, _| {}).unwrap();
    assert!(bfs.holds() && dfs.holds());
    assert_eq!((dfs.states, dfs.most_messages, dfs.elections), (bfs.states, bfs.most_messages, bfs.elections));
    let broken = check(ring_of_3(&CHATTY, vec![0, 1, 2]), dfs_limits);
    assert!(broken.counterexamples.iter().any(|c| c.property == "within the bound"));
}

/// AsFar broken one of two ways. Unless `CHATTY`, the winner decides but never sends the
/// notification round, so the others never decide. If `CHATTY`, every id is forwarded, better or
/// not (the owner still swallows its own and notifies), so each goes all the way round.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Broken<const CHATTY: bool> {
    id: u64,
    best: u64,
    awake: bool,
    end: Ending,
}

impl<const CHATTY: bool> Broken<CHATTY> {
    fn new(c: &NodeContext) -> Self {
        Broken { id: c.id, best: c.id, awake: false, end: Ending::default() }
    }
}

impl<const CHATTY: bool> OneShotNode for Broken<CHATTY> {
    const NAME: &'static str = if CHATTY { "chatty" } else { "silent-winner" };
    const WAKE: Wake = Wake::OnElection;

    fn status(&self) -> &'static str {
        if self.awake { "awake" } else { "asleep" }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.awake = true;
        out.send(RIGHT, Msg::Election { id: self.id, stage: 0, hops: 0 });
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, .. } if id == self.id && CHATTY => self.end.elect(id, out),
            Msg::Election { id, .. } if id == self.id => self.end.decide_for(self.id, id, out),
            Msg::Election { id, .. } if CHATTY || id > self.best => {
                self.best = self.best.max(id);
                out.send(other(port), msg);
            }
            Msg::Election { .. } => {}
            Msg::Notify { leader } if CHATTY => self.end.notified(port, leader, out),
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

/// A test entry for `machine`: a ring algorithm held to AsFar's bound and winner.
const fn broken(name: &'static str, machine: Machine) -> AlgorithmSpec {
    AlgorithmSpec {
        name,
        title: name,
        source: "a broken variant, in the checker's tests",
        description: "broken on purpose",
        topologies: RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
        rule: Rule::Max,
        candidates: Candidates::All,
        bound_formula: "n(n+1)/2 + n",
        bound: &|n, _| n * (n + 1) / 2 + n,
        timer_events: |_| 0,
        // Unmeasured: only the checker runs it.
        heap_bytes_per_position: 0,
        kept: None,
        live_provision: Provision::Nodes,
        machine,
        extras: Extras::NONE,
    }
}

static SILENT: AlgorithmSpec = broken("silent-winner", machine!(Broken::<false>::new));
static CHATTY: AlgorithmSpec = broken("chatty", machine!(Broken::<true>::new));

fn ring_of_3(spec: &'static AlgorithmSpec, initiators: Vec<u32>) -> Election {
    let topology = Topology::ring(TopologyKind::RingUni, 3, 0).unwrap();
    Election::new(spec, topology, vec![1, 2, 3], initiators, Rule::Max)
}

/// A winner that never notifies leaves the others undecided at a final state: the checker reports
/// it with a shortest such schedule. With the single initiator 3 (at position 2) every schedule is
/// six steps: 3 starts and sends its id; each node it wakes sends its own id too (1 and 2, each
/// swallowed by the next node, which has seen a better one), and 3 comes back to its owner, the
/// only node that decides.
#[test]
fn a_missing_notification_is_caught_with_the_shortest_schedule() {
    let r = check(ring_of_3(&SILENT, vec![2]), Limits::default());
    let c = r.counterexamples.iter().find(|c| c.property == "every final state is a finished election").unwrap();
    assert_eq!(c.steps.first(), Some(&Step::Start(2)));
    assert_eq!(c.steps.len(), 6, "{:?}", c.steps);
    let last = Step::Deliver { from: 1, port: RIGHT, msg: Msg::Election { id: 3, stage: 0, hops: 0 } };
    assert_eq!(c.steps.last(), Some(&last), "3 back at its owner ends it");
    assert_eq!(c.decisions.iter().flatten().count(), 1, "only the winner decided");
    assert!(r.complete && r.states > 6);
    let e = ring_of_3(&SILENT, vec![2]);
    let replayed = replay(e.spec, &e.topology, &e.ids, e.rule, None, true, &c.steps).unwrap();
    assert_eq!((replayed.decisions, replayed.in_flight), (c.decisions.clone(), 0), "the simulator ends there too");
}

/// Forwarding every id lets every id come back to its owner, so the first to come back leads
/// whether or not it is the maximum, and costs more than AsFar's n(n+1)/2 + n = 9 messages on 3
/// nodes: the checker reports both, each with a shortest schedule. The bound breaks at the 10th
/// message: 3 starts and 7 deliveries that each send one.
#[test]
fn exceeding_the_bound_is_caught() {
    let r = check(ring_of_3(&CHATTY, vec![0, 1, 2]), Limits::default());
    let property = |name| r.counterexamples.iter().find(|c| c.property == name).unwrap();
    assert_eq!(property("within the bound").steps.len(), 10, "{:?}", r.counterexamples);
    let wrong = property("the leader is the expected winner");
    assert!(wrong.decisions.iter().flatten().any(|d| d.leader != 3), "{wrong:?}");
    assert!(wrong.steps.len() <= 10, "id 1 can come back before the 10th message");
    let e = ring_of_3(&CHATTY, vec![0, 1, 2]);
    let over = replay(e.spec, &e.topology, &e.ids, e.rule, None, true, &property("within the bound").steps).unwrap();
    assert_eq!(over.sent, 10, "the simulator counts 10 messages too");
    let again = replay(e.spec, &e.topology, &e.ids, e.rule, None, true, &wrong.steps).unwrap();
    assert_eq!(again.decisions, wrong.decisions);
}

/// Bully keeping a leader on 3 nodes behind the loopback detector, messages taking up to one
/// heartbeat period: with no fault or one crash for good, on every schedule no node errs, no term
/// ever has two leaders, the nodes of a term agree, and from the documented convergence bound after
/// the last fault on, one live leader is agreed at every state.
#[test]
fn kept_bully_holds_without_faults_and_with_one_crash() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    for faults in [Faults::NONE, Faults { crashes: 1, ..Faults::NONE }] {
        let how = KeptCheck { faults, ..KeptCheck::default() };
        let s = sweep_kept(spec, 3, how, Limits { fifo: false, ..Limits::default() }, None, |_| {}).unwrap();
        assert!(s.holds(), "{faults:?}: {:?}", s.broken.first());
        assert!(s.states > 10_000 && s.depth > 30, "{faults:?}: {} states, depth {}", s.states, s.depth);
    }
}

/// Kept Chubby-style on 3 nodes with messages of at most 10 ms, without faults, with one crash for
/// good and with one lost message: on every schedule no node errs, no term has two leaders, the
/// nodes of a term agree, no two leases overlap, and one live leader is agreed from the convergence
/// bound after the last fault on. (Its leader counted renewal rounds for ever before, and no check of
/// it ended.)
#[test]
fn kept_chubby_holds_with_fast_messages() {
    let spec = ringleader_core::algo::catalogue::find("chubby").unwrap();
    for faults in [Faults::NONE, Faults { crashes: 1, ..Faults::NONE }, Faults { losses: 1, ..Faults::NONE }] {
        let how = KeptCheck { faults, delay_ms: 10, ..KeptCheck::default() };
        let s = sweep_kept(spec, 3, how, Limits { fifo: false, ..Limits::default() }, None, |_| {}).unwrap();
        assert!(s.holds(), "{faults:?}: {:?}", s.broken.first());
        assert!(s.states > 1_000 && s.depth > 50, "{faults:?}: {} states, depth {}", s.states, s.depth);
    }
}

/// Everything `model` reaches, explored without merging states that differ only in their clock:
/// every state (with its clock), every observation (what the properties read: decisions, beliefs,
/// who led which term, crashes, errors; the clock left out) with the
/// latest clock it comes with, and how many distinct states there are once clocks are left out.
struct Reached {
    states: std::collections::HashSet<u64>,
    observed: std::collections::HashMap<Observation, u32>,
    clockless: usize,
}

fn reach(model: &ElectionModel) -> Reached {
    use std::hash::BuildHasher;
    let hash = foldhash::quality::FixedState::with_seed(3);
    let mut states = std::collections::HashSet::new();
    let mut clockless = std::collections::HashSet::new();
    let mut observed = std::collections::HashMap::new();
    let mut stack = vec![model.initial()];
    let mut next = Vec::new();
    states.insert(hash.hash_one((&stack[0], stack[0].timing())));
    while let Some(s) = stack.pop() {
        clockless.insert(hash.hash_one(&s));
        let latest = observed.entry(Observation { since_fault: None, ..s.observation() }).or_insert(0);
        *latest = s.clock().max(*latest);
        model.successors(&s, &mut next);
        for (_, t) in next.drain(..) {
            if states.insert(hash.hash_one((&t, t.timing()))) {
                stack.push(t);
            }
        }
    }
    Reached { states, observed, clockless: clockless.len() }
}

/// What a reduced model (`reduced`) reached against its full model (`full`): no state the full
/// model lacks, and every observation of the full model with a clock at least as late.
fn reduces_exactly(full: &Reached, reduced: &Reached, case: &str) {
    assert!(reduced.states.is_subset(&full.states), "{case}: a reduced state the full model lacks");
    assert_eq!(full.observed.len(), reduced.observed.len(), "{case}");
    for (o, &clock) in &full.observed {
        let r = reduced.observed.get(o).copied();
        assert!(r.is_some_and(|r| r >= clock), "{case}: {o:?} at clock {clock}, reduced {r:?}");
    }
}

/// The reductions of kept checks lose nothing and invent nothing: kept bully on 3 nodes, with no
/// fault, one lost message (which may be a heartbeat) and one crash, the repaired ring on 3
/// (whose followers stop ignoring their leader's heartbeats: a step can end a heartbeat's
/// quietness) with 10 ms messages, and bully and Chubby-style on 3 with a partition healing within
/// 60 ms (bully with a crash too), 10 ms messages. Every state the reduced model reaches (quiet heartbeats only just before
/// the step that reads them or ends their quietness, a loss only as its message is sent, a crash
/// only just after a step of its node, a partition only just before a step that sends across it or
/// a tick, a heal only just after a step whose send it cut off) is a state of the full model; and
/// every observation of the full model is reached by the reduced one too, with a clock at least as
/// late (a fault moved earlier starts the convergence bound earlier: it asks no less; a partition
/// moved later leaves the clock running where it stood at 0, which the properties read alike).
#[test]
fn the_reductions_see_everything_the_full_model_sees() {
    let d = DetectorConfig::LOOPBACK;
    let loss = Faults { losses: 1, ..Faults::NONE };
    let crash = Faults { crashes: 1, ..Faults::NONE };
    let partition = Faults { partitions: 1, ..Faults::NONE };
    for (name, d, delay_ms, faults) in [
        ("bully", d, d.period_ms, Faults::NONE),
        ("bully", d, d.period_ms, loss),
        ("bully", d, d.period_ms, crash),
        ("repaired-ring", d, 10, Faults::NONE),
        ("bully", d, 10, partition),
        ("chubby", d, 10, partition),
        ("bully", d, 10, Faults { crashes: 1, ..partition }),
    ] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let partition_ms = (faults.partitions > 0).then_some(60);
        let e = Election { delay_ms, partition_ms, ..Election::kept(spec, topology, vec![1, 2, 3], d, faults) };
        let full = reach(&ElectionModel::new(e.clone(), false).with_reduction(false));
        let reduced = reach(&ElectionModel::new(e, false));
        assert!(full.observed.len() > 10, "{name} {faults:?}: {} observations", full.observed.len());
        reduces_exactly(&full, &reduced, &format!("{name} {faults:?}"));
        let (f, r) = (full.states.len(), reduced.states.len());
        assert!(r < f, "{name} {faults:?}: {r} states against {f}");
    }
}

/// On FIFO links (`Limits::fifo`, `--fifo`: the runtime's one stream per directed link) the
/// reductions lose nothing and invent nothing either: a quiet heartbeat at the head of its link
/// still waits for the step that reads it, but arrives before the message behind it. Kept bully
/// on 3 nodes with no fault, a lost message and a crash, the repaired ring and ZooKeeper-style
/// without faults, and Chubby-style and bully with a partition healing within 60 ms (10 ms
/// messages; punctual timers for ZooKeeper-style and one of bully's): every state of
/// the reduced FIFO model is one of the full FIFO model's, every observation of the full FIFO model
/// is reached with a clock at least as late, and every observation on FIFO links is one of the
/// model's with links in any order (FIFO assumes more).
#[test]
fn on_fifo_links_the_reductions_see_everything_the_full_model_sees() {
    let d = DetectorConfig::LOOPBACK;
    let loss = Faults { losses: 1, ..Faults::NONE };
    let crash = Faults { crashes: 1, ..Faults::NONE };
    let partition = Faults { partitions: 1, ..Faults::NONE };
    for (name, delay_ms, faults, punctual_timers) in [
        ("bully", 10, Faults::NONE, false),
        ("bully", 10, loss, false),
        ("bully", 10, crash, false),
        ("repaired-ring", 10, Faults::NONE, false),
        ("zookeeper", 10, Faults::NONE, true),
        ("chubby", 10, partition, false),
        ("bully", 10, partition, true),
    ] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let partition_ms = (faults.partitions > 0).then_some(60);
        let e = Election {
            delay_ms,
            partition_ms,
            punctual_timers,
            ..Election::kept(spec, topology, vec![1, 2, 3], d, faults)
        };
        let any_order = reach(&ElectionModel::new(e.clone(), false));
        let full = reach(&ElectionModel::new(e.clone(), true).with_reduction(false));
        let reduced = reach(&ElectionModel::new(e, true));
        let case = format!("{name} {faults:?} punctual {punctual_timers}");
        assert!(full.observed.len() > 10, "{case}: {} observations", full.observed.len());
        assert!(full.observed.keys().all(|o| any_order.observed.contains_key(o)), "{case}: FIFO saw more");
        reduces_exactly(&full, &reduced, &case);
        let (f, r) = (full.states.len(), reduced.states.len());
        assert!(r < f, "{case}: {r} states against {f}");
    }
}

/// One split at a time covers every split: for kept bully and Chubby-style on 3 nodes with a
/// partition healing within 500 ms (10 ms messages, punctual timers), the states reached by the
/// checks of each split alone (`Election::partition_side`, either side naming the split) are
/// together exactly the states of the check of every split, each split's check reaches states
/// the others do not, and the verdicts agree: the properties bully's split breaks are those the
/// splits' checks find broken, and Chubby-style holds on every split.
#[test]
fn one_split_at_a_time_covers_every_split() {
    let d = DetectorConfig::LOOPBACK;
    let partition = Faults { partitions: 1, ..Faults::NONE };
    for name in ["bully", "chubby"] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let all = Election {
            delay_ms: 10,
            partition_ms: Some(500),
            punctual_timers: true,
            ..Election::kept(spec, topology, vec![1, 2, 3], d, partition)
        };
        let every = reach(&ElectionModel::new(all.clone(), false));
        let mut union = std::collections::HashSet::new();
        let mut sides = Vec::new();
        // Each split named by the side without position 0, and by the side with it.
        for side in [0b010, 0b100, 0b110] {
            let one = Election { partition_side: Some(side), ..all.clone() };
            let other = Election { partition_side: Some(!side & 0b111), ..all.clone() };
            let reached = reach(&ElectionModel::new(one.clone(), false));
            assert_eq!(reached.states, reach(&ElectionModel::new(other, false)).states, "{name} {side:b}");
            union.extend(reached.states.iter().copied());
            sides.push((one, reached.states));
        }
        assert_eq!(union, every.states, "{name}: the splits' states together");
        for (i, (_, states)) in sides.iter().enumerate() {
            let others: std::collections::HashSet<u64> =
                sides.iter().enumerate().filter(|&(j, _)| j != i).flat_map(|(_, (_, s))| s.iter().copied()).collect();
            assert!(!states.is_subset(&others), "{name}: split {i} adds nothing");
        }
        let limits = Limits::default();
        let whole = check(all, limits);
        let parts: Vec<_> = sides.into_iter().map(|(e, _)| check(e, limits)).collect();
        assert_eq!(whole.holds(), parts.iter().all(|r| r.holds()), "{name}");
        let broken = |r: &ringleader_check::Report| {
            r.counterexamples.iter().map(|c| c.property).collect::<std::collections::BTreeSet<_>>()
        };
        let parts_broken = parts.iter().flat_map(broken).collect();
        assert_eq!(broken(&whole), parts_broken, "{name}: the properties broken");
        assert_eq!(name == "bully", !whole.holds(), "{name}: bully splits, Chubby-style holds");
    }
}

/// Punctual timers assume more than the default model, and their reduction loses nothing: on 3
/// nodes with 10 ms messages (the repaired ring with a crash, ZooKeeper-style without faults, bully
/// with a crash and a lost message, Chubby-style and bully with a partition healing within 200 ms)
/// every observation of the punctual model is one of the default
/// model's, the reduced punctual search (the due node of least id moves alone) reaches every
/// observation of the full punctual model with a clock at least as late and invents no state; and
/// the default model reaches observations the punctual one cannot (the repaired ring's third term
/// after a crash needs a late timer).
#[test]
fn punctual_timers_assume_more_and_reduce_exactly() {
    let d = DetectorConfig::LOOPBACK;
    let partition = Faults { partitions: 1, ..Faults::NONE };
    for (name, faults) in [
        ("repaired-ring", Faults { crashes: 1, ..Faults::NONE }),
        ("zookeeper", Faults::NONE),
        ("bully", Faults { crashes: 1, losses: 1, ..Faults::NONE }),
        ("chubby", partition),
        ("bully", partition),
    ] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let partition_ms = (faults.partitions > 0).then_some(200);
        let late = Election { delay_ms: 10, partition_ms, ..Election::kept(spec, topology, vec![1, 2, 3], d, faults) };
        let punctual = Election { punctual_timers: true, ..late.clone() };
        let default = reach(&ElectionModel::new(late, false));
        let full = reach(&ElectionModel::new(punctual.clone(), false).with_reduction(false));
        let reduced = reach(&ElectionModel::new(punctual, false));
        assert!(full.observed.keys().all(|o| default.observed.contains_key(o)), "{name}: punctual saw more");
        reduces_exactly(&full, &reduced, name);
        // Chubby-style's renewal timers are not in step: punctuality saves it little.
        let factor = if name == "chubby" { 1 } else { 3 };
        let (r, all) = (reduced.states.len(), default.states.len());
        assert!(r * factor < all, "{name} {faults:?}: {r} states against {all}");
        if name == "repaired-ring" {
            let terms = |r: &Reached| r.observed.keys().flat_map(|o| o.beliefs.iter().flatten().map(|b| b.term)).max();
            assert_eq!((terms(&default), terms(&full)), (Some(3), Some(2)), "a late timer makes a third term");
        }
    }
}

/// With punctual timers, the timers due at a tick fire at its instant, and no partition strikes or
/// heals in the middle of them: at a state with a timer due, the model (without its reductions)
/// offers neither, though partitions are in force at such states (bully and Chubby-style, 3 nodes,
/// a partition healing within 200 ms). Whether a heartbeat crosses a partition depends on whether
/// it fires before the heal or after it, so a heal between two of a tick's timers does not commute
/// with them, which the punctual reduction (the due node of least id alone) needs.
#[test]
fn punctual_timers_fire_before_a_partition_or_after_it() {
    let d = DetectorConfig::LOOPBACK;
    for name in ["bully", "chubby"] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let faults = Faults { partitions: 1, ..Faults::NONE };
        let e = Election {
            delay_ms: 10,
            partition_ms: Some(200),
            punctual_timers: true,
            ..Election::kept(spec, topology, vec![1, 2, 3], d, faults)
        };
        let model = ElectionModel::new(e, false).with_reduction(false);
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![model.initial()];
        let (mut due_in_partition, mut steps) = (0, Vec::new());
        while let Some(s) = stack.pop() {
            steps.clear();
            model.actions(&s, &mut steps);
            if s.timer_due() {
                let split = steps.iter().find(|st| matches!(st, Step::Partition(_) | Step::Heal));
                assert!(split.is_none(), "{name}: {split:?} at the instant of a tick");
                due_in_partition += usize::from(s.partitioned());
            }
            for &step in &steps {
                let t = model.next_state(&s, step).unwrap();
                if seen.insert(hash_state(&t)) {
                    stack.push(t);
                }
            }
        }
        assert!(due_in_partition > 20, "{name}: {due_in_partition} states with a timer due in a partition");
    }
}

fn hash_state(s: &ringleader_check::System) -> u64 {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(3).hash_one((s, s.timing()))
}

/// Telling a kept leadership's states apart without their clock, and exploring one again only when
/// it comes back with a later clock, gives the same verdicts as the exact search, stores each
/// clockless state once and explores no more than it: kept bully with a crash and a loss (broken, the same shortest split), the
/// repaired ring with a crash and ZooKeeper-style without faults (hold), with 10 ms messages; and
/// likewise for a partitioned state told apart without the ticks it has left to heal (bully and
/// Chubby-style with a partition healing within 300 ms, both hold: every state but fewer than 1%,
/// reached only where the partition must heal sooner than in a state alike already explored).
#[test]
fn subsumption_keeps_the_verdicts_and_visits_every_clockless_state() {
    let d = DetectorConfig::LOOPBACK;
    let partition = Faults { partitions: 1, ..Faults::NONE };
    for (name, faults) in [
        ("bully", Faults { crashes: 1, losses: 1, ..Faults::NONE }),
        ("repaired-ring", Faults { crashes: 1, ..Faults::NONE }),
        ("zookeeper", Faults::NONE),
        ("bully", partition),
        ("chubby", partition),
    ] {
        let spec = ringleader_core::algo::catalogue::find(name).unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let partition_ms = (faults.partitions > 0).then_some(300);
        let e = Election { delay_ms: 10, partition_ms, ..Election::kept(spec, topology, vec![1, 2, 3], d, faults) };
        let limits = Limits { fifo: false, ..Limits::default() };
        let fast = check(e.clone(), limits);
        let exact = check(e.clone(), Limits { subsume: false, ..limits });
        assert!(fast.complete && exact.complete, "{name}");
        let broken = |r: &ringleader_check::Report| r.counterexamples.iter().map(|c| c.property).collect::<Vec<_>>();
        assert_eq!(broken(&fast), broken(&exact), "{name}");
        let steps =
            |r: &ringleader_check::Report| r.counterexamples.iter().map(|c| c.steps.clone()).collect::<Vec<_>>();
        assert_eq!(steps(&fast), steps(&exact), "{name}: the same shortest schedules");
        if fast.counterexamples.is_empty() {
            let all = reach(&ElectionModel::new(e, false));
            if faults.partitions == 0 {
                assert_eq!(fast.states, all.clockless, "{name}: every clockless state once");
            } else {
                // A state reached only from one with fewer ticks left to heal than a state alike
                // already explored (whose schedules include its own, healing no later) is never
                // visited: a few, such as the end of a tick cut short by the bound.
                let missed = all.clockless - fast.states;
                assert!(missed * 100 < all.clockless, "{name}: {missed} of {} unvisited", all.clockless);
            }
            // Without a fault each state comes back with later clocks in the order the search meets
            // them, and is explored each time: never more often than the exact search does.
            assert!(fast.states < exact.states && fast.explored <= exact.states, "{name}: {fast:?} against {exact:?}");
        }
    }
}

/// Bully that ignores a `Coordinator` of a higher term than its own once it knows a leader, and the
/// newer term a heartbeat carries (the stale leader that is never told: the shipped bully learns a
/// newer term from either). Everything else is the shipped kept bully, detector included.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Deaf {
    inner: Detected<Bully>,
    term: u64,
}

impl Deaf {
    fn new(c: &NodeContext, d: DetectorConfig) -> Self {
        Deaf { inner: bully::kept(c, BullyConfig::for_detector(d), d), term: 0 }
    }

    /// Note the term of the last belief the node announced.
    fn track(&mut self, out: &Outbox) {
        for e in out.effects() {
            if let Effect::Lead(l) = e {
                self.term = l.term;
            }
        }
    }
}

impl Algorithm for Deaf {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        let input = match input {
            Input::Message { port, msg } => Input::Message {
                port,
                msg: match msg {
                    Msg::Coordinator { term, .. } if self.term > 0 && term > self.term => return Ok(()),
                    Msg::Heartbeat { term, leading, watching } if self.term > 0 && term > self.term => {
                        Msg::Heartbeat { term: self.term, leading, watching }
                    }
                    _ => msg,
                },
            },
            _ => input,
        };
        let r = self.inner.step(input, out);
        self.track(out);
        r
    }
    fn state(&self) -> &'static str {
        self.inner.state()
    }
    fn watched(&self, _port: Port) -> bool {
        true
    }
    /// Not the inner detector's suspicions: a schedule of the deaf node tells none.
    fn suspects(&self, _port: Port) -> bool {
        false
    }
    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        self.inner.timer_name(timer)
    }
    fn held(&self) -> usize {
        self.inner.held()
    }
    /// Every message counts: the deaf node rewrites heartbeats before its
    /// detector sees them, so the inner answer is not the node's.
    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

/// The deaf bully's entry: the shipped bully's, kept mode replaced.
static DEAF: AlgorithmSpec = AlgorithmSpec {
    kept: Some(ringleader_core::spec::KeptSpec { build: |c, d| Box::new(Deaf::new(c, d)), ..BULLY_KEPT }),
    ..ringleader_core::algo::bully::SPEC
};

/// The shipped bully's kept facts.
const BULLY_KEPT: ringleader_core::spec::KeptSpec = match ringleader_core::algo::bully::SPEC.kept {
    Some(k) => k,
    None => panic!("bully keeps a leader"),
};

/// A bully node deaf to newer terms is caught on 3 nodes with one crash: the leader 3 crashes, 2
/// leads term 2, and 1, deaf to it, stays in term 1 for good; the checker reports the shortest such
/// schedule once the convergence bound has passed without one agreed term, ending with 1 and 2 in
/// different terms, where the simulator's replay ends too.
#[test]
fn a_bully_deaf_to_newer_terms_is_caught() {
    let how = KeptCheck { faults: Faults { crashes: 1, ..Faults::NONE }, ..KeptCheck::default() };
    let s = sweep_kept(&DEAF, 3, how, Limits { fifo: false, ..Limits::default() }, None, |_| {}).unwrap();
    let (_, _, c) = s.broken.first().expect("caught");
    assert_eq!(c.property, "one agreed leader from the convergence bound after the last fault on");
    assert!(c.steps.contains(&Step::Crash(2)), "{c:?}");
    let terms: Vec<u64> = c.beliefs.iter().flatten().map(|b| b.term).collect();
    assert!(terms.len() == 2 && terms[0] != terms[1], "{:?}", c.beliefs);
    let topology = Topology::build(TopologyKind::Complete, 3, 7).unwrap();
    let replayed = replay(&DEAF, &topology, &[1, 2, 3], Rule::Max, Some(how.detector), false, &c.steps).unwrap();
    assert_eq!(replayed.beliefs, c.beliefs, "the replay ends in the same two terms");
}

/// Outside bully's model (a lost message is a delay beyond the answer timeout, which bully assumes
/// away), the checker finds two leaders of one term on 3 nodes with one crash and one lost message:
/// the leader 3 crashes, 1's election to 2 is lost, and 1 and 2 each time out and lead term 2. The
/// simulator's replay of that schedule reports the same two leaders, and so does the diagram.
#[test]
fn bully_with_a_crash_and_a_loss_splits_and_the_replay_agrees() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    let how = KeptCheck { faults: Faults { crashes: 1, losses: 1, ..Faults::NONE }, ..KeptCheck::default() };
    let s = sweep_kept(spec, 3, how, Limits { fifo: false, ..Limits::default() }, None, |_| {}).unwrap();
    let (ids, _, c) = s.broken.iter().find(|(_, _, c)| c.property == "at most one leader per term").unwrap();
    assert!(c.steps.contains(&Step::Crash(2)) && c.steps.iter().any(|s| matches!(s, Step::Lose { .. })));
    let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
    let d = Some(how.detector);
    let replayed = replay(spec, &topology, ids, spec.rule, d, false, &c.steps).unwrap();
    assert!(replayed.violations.iter().any(|v| v.contains("two leaders in one term")), "{replayed:?}");
    assert_eq!(replayed.beliefs, c.beliefs, "the simulator ends where the checker did");
    let e = Election::kept(spec, topology, ids.clone(), how.detector, how.faults);
    let svg = diagram(&e, false, c);
    assert_eq!(svg.matches("leads term 2</text>").count(), 2, "both leaders are labelled");
    assert!(svg.contains("crash") && svg.contains("loses one"), "the faults are marked");
}

/// Depth-first, a counterexample is rebuilt from the path of moves being explored (no log of
/// every queued state): bully's split on 3 nodes with a crash and a loss, found depth-first, is a
/// schedule the simulator replays to the same two leaders of one term, and the checker ends where
/// the simulator does.
#[test]
fn a_depth_first_counterexample_replays_in_the_simulator() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    let how = KeptCheck { faults: Faults { crashes: 1, losses: 1, ..Faults::NONE }, ..KeptCheck::default() };
    let limits = Limits { fifo: false, depth_first: true, ..Limits::default() };
    let s = sweep_kept(spec, 3, how, limits, None, |_| {}).unwrap();
    let (ids, _, c) = s.broken.iter().find(|(_, _, c)| c.property == "at most one leader per term").unwrap();
    let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
    let replayed = replay(spec, &topology, ids, spec.rule, Some(how.detector), false, &c.steps).unwrap();
    assert!(replayed.violations.iter().any(|v| v.contains("two leaders in one term")), "{replayed:?}");
    assert_eq!(replayed.beliefs, c.beliefs, "the simulator ends where the checker did");
}

/// The symmetry `sweep_kept` relies on: on a complete network an arrangement of the ids is the same
/// system with its positions renamed, so kept bully with the ids rotated has the same number of states
/// and the same verdict (one-shot modes: `on_a_complete_network_every_arrangement_is_a_renaming`).
#[test]
fn kept_arrangements_of_a_complete_network_are_renamings() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
    let limits = Limits { fifo: false, ..Limits::default() };
    let kept = |ids: Vec<u64>| {
        let how = KeptCheck { faults: Faults::NONE, ..KeptCheck::default() };
        let e = Election::kept(spec, topology.clone(), ids, how.detector, how.faults);
        let r = check(e, limits);
        assert!(r.holds());
        r.states
    };
    assert_eq!(kept(vec![2, 3, 1]), kept(vec![1, 2, 3]));
}

/// What `Limits::symmetric` relies on, measured: on a complete network every arrangement of the ids
/// is the same election with the positions renamed. For every algorithm of the catalogue on a
/// complete network (today bully, Chubby-style, ZooKeeper-style, Raft, the repaired ring,
/// Villadangos et al. and the lease), on 3 nodes, and on 4 for the four whose 4-node sweeps take seconds: every arrangement, with
/// every set of initiating ids, has the same number of states, the same verdict and the same most
/// messages as the ids in position order; an entry whose port order matters
/// (`Extras::port_order_matters`) holds on every arrangement and is not a renaming on some.
#[test]
fn on_a_complete_network_every_arrangement_is_a_renaming() {
    let limits = Limits { fifo: false, ..Limits::default() };
    let complete = CATALOGUE.iter().filter(|s| s.default_topology() == TopologyKind::Complete);
    let names: Vec<&str> = complete.clone().map(|s| s.name).collect();
    // Every complete-network entry of the catalogue, however many: none is listed here by hand.
    assert!(names.len() >= 2, "the catalogue's complete-network algorithms: {names:?}");
    for spec in complete {
        let sizes: &[u32] =
            if ["bully", "chubby"].contains(&spec.name) || spec.extras.port_order_matters { &[3] } else { &[3, 4] };
        let mut renamings = true;
        for &n in sizes {
            let topology = Topology::build(TopologyKind::Complete, n, 7).unwrap();
            let run = |ids: &[u64], initiating: u64| {
                let initiators = (0..n).filter(|&p| initiating >> (ids[p as usize] - 1) & 1 == 1).collect();
                let r = check(Election::new(spec, topology.clone(), ids.to_vec(), initiators, spec.rule), limits);
                (r.states, r.holds(), r.most_messages)
            };
            let in_order: Vec<u64> = (1..=u64::from(n)).collect();
            for initiating in 1..1u64 << n {
                let first = run(&in_order, initiating);
                assert!(first.1, "{} holds", spec.name);
                for ids in ringleader_core::spec::permutations(&in_order) {
                    let this = run(&ids, initiating);
                    assert!(this.1, "{} {ids:?}, initiating {initiating:b} holds", spec.name);
                    if spec.extras.port_order_matters {
                        renamings &= this == first;
                    } else {
                        assert_eq!(this, first, "{} {ids:?}, initiating {initiating:b}", spec.name);
                    }
                }
            }
        }
        // An entry that says its port order matters is not a renaming (else the fact is stale).
        assert!(!spec.extras.port_order_matters || !renamings, "{}: every arrangement a renaming", spec.name);
    }
}

/// With `Limits::symmetric`, a sweep on a complete network checks one arrangement per set of
/// initiators (7 elections on 3 nodes, not 42) and finds the same verdict and worst case.
#[test]
fn a_symmetric_sweep_checks_one_arrangement() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    let limits = Limits { fifo: false, ..Limits::default() };
    let all = sweep(spec, 3, 7, spec.rule, limits, |_, _, _| {}).unwrap();
    let one = sweep(spec, 3, 7, spec.rule, Limits { symmetric: true, ..limits }, |_, _, _| {}).unwrap();
    assert_eq!((all.elections, one.elections), (42, 7));
    assert!(all.holds() && one.holds());
    assert_eq!((one.most_messages, one.all_initiators), (all.most_messages, all.all_initiators));
    assert_eq!(one.states * 6, all.states, "every arrangement had as many states");
}

/// Villadangos et al. exactly as the blog summary's Ruby sketch writes it: statuses passive, candidate, dummy,
/// waiting, leader; `message1` from the virtual-ring predecessor, `message2` and `message3` between
/// candidates, each handled only in the statuses the sketch's `case` names (anything else is dropped).
/// The leader tells the others with `Notify` so that they decide. (The shipped algorithm corrects the
/// sketch: a candidate that already knows its successor passes `message1` on whatever the ids.)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Seed000 {
    id: u64,
    peers: Vec<u64>,
    neighbour: u64,
    status: &'static str,
    predecessor: Option<u64>,
    successor: Option<u64>,
    decided: bool,
}

impl Seed000 {
    fn new(c: &NodeContext) -> Self {
        let peers: Vec<u64> = c.port_info.iter().map(|p| p.neighbour).collect();
        let neighbour = ringleader_core::algo::villadangos::virtual_ring_neighbour(c.id, c.rule, &peers).unwrap();
        Seed000 { id: c.id, peers, neighbour, status: "passive", predecessor: None, successor: None, decided: false }
    }

    fn send(&self, to: u64, msg: Msg, out: &mut Outbox) {
        out.send(self.peers.iter().position(|&p| p == to).unwrap() as Port, msg);
    }

    fn lead(&mut self, out: &mut Outbox) {
        self.status = "leader";
        self.decided = true;
        out.push(Effect::Decide(Decision { role: Role::Leader, leader: self.id }));
        for port in 0..self.peers.len() as Port {
            out.send(port, Msg::Notify { leader: self.id });
        }
    }

    fn message1(&mut self, p: u64, out: &mut Outbox) {
        match self.status {
            "passive" => {
                self.status = "dummy";
                self.send(self.neighbour, Msg::Message1 { id: p }, out);
            }
            "candidate" => {
                self.predecessor = Some(p);
                if self.id == p {
                    self.lead(out);
                } else if self.id > p {
                    if let Some(s) = self.successor {
                        self.status = "dummy";
                        self.send(s, Msg::Message3 { id: p }, out);
                    } else {
                        self.status = "waiting";
                        self.send(p, Msg::Message2 { id: self.id }, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn message2(&mut self, s: u64, out: &mut Outbox) {
        match self.status {
            "candidate" => match self.predecessor {
                Some(p) => {
                    self.send(s, Msg::Message3 { id: p }, out);
                    self.status = "dummy";
                }
                None => self.successor = Some(s),
            },
            "waiting" => self.successor = Some(s),
            _ => {}
        }
    }

    fn message3(&mut self, p: u64, out: &mut Outbox) {
        if self.status != "waiting" {
            return;
        }
        self.predecessor = Some(p);
        if self.id == p {
            self.lead(out);
        } else if let Some(s) = self.successor {
            self.status = "dummy";
            self.send(s, Msg::Message3 { id: p }, out);
        } else if self.id > p {
            self.send(p, Msg::Message2 { id: self.id }, out);
        }
    }
}

impl Algorithm for Seed000 {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                self.status = "candidate";
                self.predecessor = None;
                self.successor = None;
                self.send(self.neighbour, Msg::Message1 { id: self.id }, out);
            }
            Input::Message { msg, .. } => match msg {
                Msg::Message1 { id } => self.message1(id, out),
                Msg::Message2 { id } => self.message2(id, out),
                Msg::Message3 { id } => self.message3(id, out),
                Msg::Notify { leader } if !self.decided => {
                    self.decided = true;
                    out.push(Effect::Decide(Decision { role: Role::Follower, leader }));
                }
                _ => {}
            },
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }
    fn state(&self) -> &'static str {
        self.status
    }
    fn watched(&self, _port: Port) -> bool {
        true
    }
    fn suspects(&self, _port: Port) -> bool {
        false
    }
    fn timer_name(&self, _timer: TimerId) -> Option<&'static str> {
        None
    }
    fn held(&self) -> usize {
        0
    }
    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

static SEED_000: AlgorithmSpec = AlgorithmSpec {
    name: "seed-000-villadangos",
    machine: Machine { build: &|c| Box::new(Seed000::new(c)), ..ringleader_core::algo::villadangos::SPEC.machine },
    ..ringleader_core::algo::villadangos::SPEC
};

/// That Ruby sketch deadlocks, and the checker finds it from scratch with a shortest schedule of 6
/// steps: on 3 nodes with ids 1 and 3 initiating, 1's `message1(1)` reaches 3 (1's virtual-ring
/// neighbour), which waits and answers `message2(3)`; 1 records 3 as its successor; 3's `message1(3)`
/// goes through 2 (a dummy now) and reaches 1 last, and the sketch has no branch for `message1` at a
/// candidate whose id is lower: 1 only records it, 3 waits for a `message3` that never comes, nobody
/// leads. Nothing is in flight and every node is undecided, in the simulator's replay too. The
/// shipped algorithm (its correction 1) holds on the same election; so too on 5 nodes with ids 1, 4
/// and 5 initiating, where the sketch deadlocks after 9 steps.
#[test]
fn seed_000_as_written_deadlocks_and_the_shipped_one_does_not() {
    let topology = Topology::build(TopologyKind::Complete, 3, 7).unwrap();
    let e = Election::new(&SEED_000, topology.clone(), vec![1, 2, 3], vec![0, 2], Rule::Max);
    let r = check(e, Limits { fifo: false, ..Limits::default() });
    let c = r.counterexamples.iter().find(|c| c.property == "every final state is a finished election").unwrap();
    assert!(c.decisions.iter().all(Option::is_none), "{c:?}");
    assert_eq!(c.steps.len(), 6, "{:?}", c.steps);
    assert_eq!(c.steps[5], Step::Deliver { from: 1, port: 0, msg: Msg::Message1 { id: 3 } });
    let replayed = replay(&SEED_000, &topology, &[1, 2, 3], Rule::Max, None, false, &c.steps).unwrap();
    assert_eq!((replayed.in_flight, replayed.decisions), (0, c.decisions.clone()), "stuck in the replay too");
    let shipped = ringleader_core::algo::catalogue::find("complete-villadangos").unwrap();
    let e = Election::new(shipped, topology, vec![1, 2, 3], vec![0, 2], Rule::Max);
    assert!(check(e, Limits { fifo: false, ..Limits::default() }).holds());
    // The case the issue names: 5 nodes, ids 1, 4 and 5 initiating. The sketch deadlocks (a shortest
    // schedule of 9 steps); the shipped algorithm holds.
    let five = Topology::build(TopologyKind::Complete, 5, 7).unwrap();
    let on_five = |spec| {
        let e = Election::new(spec, five.clone(), vec![1, 2, 3, 4, 5], vec![0, 3, 4], Rule::Max);
        check(e, Limits { fifo: false, ..Limits::default() })
    };
    let r = on_five(&SEED_000);
    let c = r.counterexamples.iter().find(|c| c.property == "every final state is a finished election").unwrap();
    assert_eq!(c.steps.len(), 9, "{:?}", c.steps);
    assert!(on_five(shipped).holds());
}

/// A step naming a position or port the election lacks, or a message not in flight, is no step:
/// `next_state` says so (`None`) instead of panicking, whoever built the schedule.
#[test]
fn steps_that_name_nothing_are_refused() {
    let e = ring_of_3(&SILENT, vec![0]);
    let model = ElectionModel::new(e, true);
    let s = model.initial();
    let msg = Msg::Election { id: 1, stage: 0, hops: 0 };
    for step in [
        Step::Start(3),
        Step::Crash(7),
        Step::Fire { node: 9, timer: 0 },
        Step::Deliver { from: 0, port: 5, msg },
        Step::Deliver { from: 4, port: 0, msg },
        Step::Deliver { from: 0, port: RIGHT, msg },
        Step::Lose { from: 0, port: RIGHT, msg },
    ] {
        assert!(model.next_state(&s, step).is_none(), "{step:?}");
    }
    assert!(model.next_state(&s, Step::Start(0)).is_some(), "a real step is taken");
}
