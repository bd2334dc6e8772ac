//! The simulator's own tests: timers, link order, faults, pauses, logs.

use super::*;
use crate::algo::catalogue::find;
use crate::algo::{AlgoError, Effect, Input, LEFT, Outbox, RIGHT, Role, Stable};
use crate::faults::{Fault, FaultPlan, LinkFault};
use crate::protocol::{Decision, Leadership};
use crate::topology::{IdOrder, TopologyKind};

/// Test machine: the node with id 1 sends 20 numbered messages right and
/// sets two timers, cancelling one; the receiver refuses a message that
/// arrives out of order and decides after the last one; the sender decides
/// when its timer fires.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Sequencer {
    id: u64,
    next: u32,
}

const COUNT: u32 = 20;

impl Sequencer {
    fn start(&mut self, out: &mut Outbox) {
        if self.id == 1 {
            for i in 0..COUNT {
                out.send(RIGHT, Msg::Election { id: 1, stage: i, hops: 0 });
            }
            out.push(Effect::SetTimer { timer: 1, after_ms: 1_000 });
            out.push(Effect::SetTimer { timer: 2, after_ms: 5 });
            out.push(Effect::CancelTimer { timer: 2 });
        }
    }
    fn receive(&mut self, _port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::Election { stage, .. } = msg else { return Err(AlgoError::Invalid("kind".into())) };
        let expected = self.next;
        self.next += 1;
        if self.next == COUNT {
            out.push(Effect::Decide(Decision { role: Role::Follower, leader: 1 }));
        }
        if stage != expected {
            return Err(AlgoError::Invalid(format!("message {stage} arrived when {expected} was due")));
        }
        Ok(())
    }
    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        if timer == 1 {
            out.push(Effect::Decide(Decision { role: Role::Leader, leader: 1 }));
        } else {
            out.push(Effect::Decide(Decision { role: Role::Follower, leader: 99 }));
        }
    }
}

impl Algorithm for Sequencer {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }
    fn state(&self) -> &'static str {
        "test"
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

fn sequencer_run(fifo: bool, seed: u64) -> SimReport {
    let spec = find("as-far").unwrap(); // only its bound is used
    let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
    let cfg = SimConfig { fifo, seed, max_delay: 50, ..SimConfig::default() };
    run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Sequencer { id: c.id, next: 0 })
}

/// Timers fire at their virtual time and cancelled ones never do; FIFO
/// links keep sending order under random delays, non-FIFO links do not.
#[test]
fn timers_and_link_order() {
    for seed in 0..20 {
        let r = sequencer_run(true, seed);
        assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
        assert_eq!(r.decisions[0], Some(Decision { role: Role::Leader, leader: 1 }), "seed {seed}");
        assert!(r.end_time >= 1_000, "the sender decided on its 1000 ms timer");
        assert!(r.terminated);
    }
    let reordered = (0..20).filter(|&seed| !sequencer_run(false, seed).errors.is_empty()).count();
    assert!(reordered > 0, "non-FIFO links never reordered 20 messages in 20 runs");
}

/// FIFO links stay FIFO under fault jitter (also with unit delays, which otherwise need no
/// ordering), and a reorder probability of 1 lets messages overtake each other.
#[test]
fn fault_jitter_keeps_fifo_unless_reordered() {
    let spec = find("as-far").unwrap();
    let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
    let run_fault = |seed, fault| {
        let faults = FaultPlan {
            faults: vec![crate::faults::Scheduled::new(0, seed, Fault::Link { from: None, to: None, fault })],
        };
        let cfg = SimConfig { seed, unit_delay: true, faults, ..SimConfig::default() };
        run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Sequencer { id: c.id, next: 0 })
    };
    let jitter = LinkFault { jitter_ms: 30, ..LinkFault::default() };
    let shuffle = LinkFault { reorder: 1.0, ..jitter };
    let mut overtaken = 0;
    for seed in 0..10 {
        let r = run_fault(seed, jitter);
        assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
        assert!(r.delayed > 0 && r.reordered == 0, "seed {seed}: {} delayed, {} reordered", r.delayed, r.reordered);
        let r = run_fault(seed, shuffle);
        assert_eq!(r.reordered, COUNT as u64);
        overtaken += usize::from(!r.errors.is_empty());
    }
    assert!(overtaken > 5, "reordering overtook in only {overtaken} of 10 runs");
}

/// Test machine for timers across a crash: position 0 wakes position 1 with a message; a
/// start arms timer 1, a message arms timer 2; each timer decides a different (follower)
/// decision.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Clock {
    id: u64,
}

impl Clock {
    fn start(&mut self, out: &mut Outbox) {
        if self.id == 1 {
            out.send(RIGHT, Msg::Wakeup);
        }
        out.push(Effect::SetTimer { timer: 1, after_ms: 100 });
    }
    fn receive(&mut self, _port: Port, _msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        out.push(Effect::SetTimer { timer: 2, after_ms: 100 });
        Ok(())
    }
    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        out.decide(Role::Follower, if timer == 1 { 7 } else { 99 });
    }
}

impl Algorithm for Clock {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }
    fn state(&self) -> &'static str {
        "clock"
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

/// Sends on every port: a receive-only left port, the right one, and one the node lacks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Everywhere;

impl Everywhere {
    fn start(&mut self, out: &mut Outbox) {
        for port in [LEFT, RIGHT, 2] {
            out.send(port, Msg::Notify { leader: 1 });
        }
    }
    fn receive(&mut self, _port: Port, _msg: Msg, _out: &mut Outbox) -> Result<(), AlgoError> {
        Ok(())
    }
}

impl Algorithm for Everywhere {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
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
        "everywhere"
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

/// The simulator refuses, as the shell does for every driver, a send on a port with no
/// outgoing link (receive-only or missing): reported, never delivered, never counted.
#[test]
fn sends_without_an_outgoing_link_are_refused_and_uncounted() {
    let spec = find("as-far").unwrap();
    let topo = Topology::ring(TopologyKind::RingUni, 3, 0).unwrap();
    let cfg = SimConfig { unit_delay: true, ..SimConfig::default() };
    let r = run_with(spec, &topo, &[1, 2, 3], &[0], Rule::Max, &cfg, |_| Everywhere);
    assert_eq!((r.counters.messages, r.deliveries, r.sent_per_node.clone()), (1, 1, vec![1, 0, 0]));
    assert_eq!(
        r.errors,
        [
            "position 0 sent Notify { leader: 1 } on port 0, which has no outgoing link",
            "position 0 sent Notify { leader: 1 } on port 2, which has no outgoing link",
        ]
    );
}

/// A crash voids the node's pending timers, and a recovered node is a new incarnation whose
/// old timers never fire: only the timer its new start arms does.
#[test]
fn crash_voids_timers_and_recovery_starts_afresh() {
    let spec = find("as-far").unwrap();
    let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
    let run_plan = |faults: Vec<Fault>, times: &[u64]| {
        let faults = FaultPlan {
            faults: faults
                .into_iter()
                .zip(times)
                .map(|(fault, &at)| crate::faults::Scheduled::new(at, 0, fault))
                .collect(),
        };
        let cfg = SimConfig { unit_delay: true, faults, ..SimConfig::default() };
        run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Clock { id: c.id })
    };
    let plain = run_plan(vec![], &[]);
    assert_eq!(plain.decisions[1], Some(Decision { role: Role::Follower, leader: 99 }), "woken at 1, timer 2 at 101");
    assert_eq!(plain.end_time, 101);

    let crashed = run_plan(vec![Fault::Crash { node: 1 }], &[50]);
    assert_eq!(crashed.decisions[1], None);
    assert_eq!((crashed.end_time, crashed.crashed.clone()), (100, vec![1]));

    let back = run_plan(vec![Fault::Crash { node: 1 }, Fault::Recover { node: 1 }], &[50, 60]);
    assert!(back.errors.is_empty(), "{:?}", back.errors);
    assert_eq!(back.decisions[1], Some(Decision { role: Role::Follower, leader: 7 }), "only the new start's timer");
    assert_eq!(back.end_time, 160);
    assert!(back.crashed.is_empty());
}

/// Test machine for stable storage: every start persists one more term, and a restored
/// record is reported as the follower decision's leader when the node starts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Disk {
    term: u64,
    restored: Option<u64>,
}

impl Disk {
    fn start(&mut self, out: &mut Outbox) {
        self.term += 1;
        out.push(Effect::Persist(Stable { term: self.term, vote: Some(42) }));
        if let Some(t) = self.restored {
            out.decide(Role::Follower, t);
        }
    }
    fn receive(&mut self, _port: Port, _msg: Msg, _out: &mut Outbox) -> Result<(), AlgoError> {
        Ok(())
    }
    fn restore(&mut self, stable: Stable) {
        assert_eq!(stable.vote, Some(42));
        self.term = stable.term;
        self.restored = Some(stable.term);
    }
}

impl Algorithm for Disk {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Restore(stable) => self.restore(stable),
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_) => {}
        }
        Ok(())
    }
    fn state(&self) -> &'static str {
        "disk"
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

/// A recovered incarnation gets its predecessor's last persisted record back before it starts,
/// so a term (or a vote) written before a crash survives it, twice over.
#[test]
fn recovery_restores_the_persisted_record() {
    let spec = find("as-far").unwrap();
    let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
    let plan = [(10, Fault::Crash { node: 0 }), (20, Fault::Recover { node: 0 })];
    let plan = plan.iter().chain(&[(30, Fault::Crash { node: 0 }), (40, Fault::Recover { node: 0 })]);
    let faults = FaultPlan { faults: plan.map(|(at, f)| crate::faults::Scheduled::new(*at, 0, f.clone())).collect() };
    let cfg = SimConfig { unit_delay: true, faults, ..SimConfig::default() };
    let r = run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |_| Disk { term: 0, restored: None });
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.decisions[0], Some(Decision { role: Role::Follower, leader: 2 }), "term 1, then 2 restored");
}

/// The same configuration gives the same election, message for message.
#[test]
fn runs_are_deterministic() {
    let spec = find("controlled-distance").unwrap();
    let topo = Topology::ring(TopologyKind::RingBiUnoriented, 50, 9).unwrap();
    let ids = IdOrder::Random(9).arrange(50).unwrap();
    let cfg = SimConfig { seed: 9, fifo: false, stagger: true, ..SimConfig::default() };
    let a = run(spec, &topo, &ids, &[3, 7, 20], Rule::Max, &cfg);
    let b = run(spec, &topo, &ids, &[3, 7, 20], Rule::Max, &cfg);
    assert_eq!(
        (a.counters, a.end_time, a.ideal_time, &a.sent_per_node),
        (b.counters, b.end_time, b.ideal_time, &b.sent_per_node)
    );
    let c = run(spec, &topo, &ids, &[3, 7, 20], Rule::Max, &SimConfig { seed: 10, ..cfg });
    assert_ne!((a.end_time, a.counters), (c.end_time, c.counters), "another seed gives another schedule");
}

/// With `log_arrows`, the run logs each position's state at time 0 and every change after, in
/// time order: Franklin's (Stages) nodes start asleep, become candidates, all but the best id
/// are defeated and end as followers, the best ends as leader; and the diagram draws one band
/// per change, coloured by the state's role, each state in the legend. Without it nothing is logged.
#[test]
fn states_are_logged_with_the_arrows_and_drawn() {
    let spec = find("stages").unwrap();
    let topo = Topology::build(TopologyKind::RingBi, 5, 0).unwrap();
    let ids = [3, 5, 1, 4, 2];
    let cfg = SimConfig { log_arrows: true, unit_delay: true, ..SimConfig::default() };
    let r = run(spec, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &cfg);
    assert!(r.states.windows(2).all(|w| w[0].time <= w[1].time), "in time order");
    let at_0: Vec<&str> = r.states.iter().take(5).map(|c| c.state).collect();
    assert_eq!(at_0, ["asleep"; 5]);
    for p in 0..5u32 {
        let path: Vec<&str> = r.states.iter().filter(|c| c.position == p).map(|c| c.state).collect();
        let best = ids[p as usize] == 5;
        assert_eq!(path.first(), Some(&"asleep"), "position {p}: {path:?}");
        assert_eq!(path.last(), Some(if best { &"leader" } else { &"follower" }), "position {p}: {path:?}");
        assert!(path.contains(&"candidate"), "position {p}: {path:?}");
        assert_eq!(path.contains(&"defeated"), !best, "position {p}: {path:?}");
        assert!(path.windows(2).all(|w| w[0] != w[1]), "changes only: {path:?}");
    }
    let d = crate::diagram::Diagram {
        nodes: ids.iter().map(|id| format!("id {id}")).collect(),
        arrows: &r.arrows,
        states: &r.states,
        ..crate::diagram::Diagram::default()
    };
    let svg = crate::diagram::svg(&d);
    assert_eq!(svg.matches(r#"<rect class="state""#).count(), r.states.len());
    assert!(svg.contains(r##"data-position="1" data-state="leader" data-colour="#D55E00""##), "{svg}");
    for state in ["asleep", "candidate", "defeated", "follower", "leader"] {
        assert!(svg.contains(&format!(">state: {state}</text>")), "{state} in the legend");
    }
    let plain =
        run(spec, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &SimConfig { unit_delay: true, ..SimConfig::default() });
    assert!(plain.states.is_empty() && plain.arrows.is_empty());
    assert_eq!(plain.counters, r.counters, "logging changes nothing of the run");
}

/// With `log_arrows`, a fault-free run logs one arrow per election or notification message, each
/// arriving after it left; a kept run leaves the heartbeats out; and the 8-node diagram renders
/// one arrow per message.
#[test]
fn arrows_log_every_message_for_the_diagram() {
    let spec = find("as-far").unwrap();
    let topo = Topology::build(TopologyKind::RingUni, 8, 0).unwrap();
    let ids = IdOrder::Random(3).arrange(8).unwrap();
    let cfg = SimConfig { log_arrows: true, ..SimConfig::default() };
    let r = run(spec, &topo, &ids, &[0, 1, 2, 3, 4, 5, 6, 7], Rule::Max, &cfg);
    assert_eq!(r.arrows.len() as u64, r.counters.messages);
    assert!(r.arrows.iter().all(|a| a.received.is_some_and(|t| t > a.sent) && a.to == (a.from + 1) % 8));
    let nodes = ids.iter().map(|id| format!("id {id}")).collect();
    let leader = ids.iter().position(|&i| i == 8).map(|p| p as u32);
    let d = crate::diagram::Diagram {
        title: "as-far".into(),
        nodes,
        arrows: &r.arrows,
        leader,
        time_unit: "t",
        ring: true,
        ..crate::diagram::Diagram::default()
    };
    let svg = crate::diagram::svg(&d);
    let wraps = r.arrows.iter().filter(|a| (a.from, a.to) == (7, 0)).count();
    assert!(wraps > 0, "AsFar's messages go round the ring");
    assert_eq!(svg.matches(r#"class="msg wrap""#).count(), wraps, "each 7 -> 0 drawn round the edges");
    assert_eq!(svg.matches(r#"class="msg""#).count() + wraps, r.arrows.len());

    let kept = SimConfig { horizon: Some(2_000), log_arrows: true, ..SimConfig::default() };
    let topo = Topology::complete(4).unwrap();
    let ids = IdOrder::Ascending.arrange(4).unwrap();
    let r = run_kept(find("bully").unwrap(), &topo, &ids, &[0, 1, 2, 3], Rule::Max, &kept).unwrap();
    assert!(r.counters.heartbeat_messages > 0);
    assert_eq!(r.arrows.len() as u64, r.counters.messages, "heartbeats are not drawn");
}

/// A kept bully leadership heartbeats forever: a horizon stops the run there without a
/// violation, and the per-position counts leave the heartbeats out, as `messages` does.
#[test]
fn horizon_stops_a_kept_leadership() {
    let spec = find("bully").unwrap();
    let topo = Topology::complete(5).unwrap();
    let ids = IdOrder::Ascending.arrange(5).unwrap();
    let cfg = SimConfig { horizon: Some(5_000), log_message_times: true, ..SimConfig::default() };
    let r = run_kept(spec, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &cfg).unwrap();
    assert!(r.horizon_reached && r.terminated);
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    assert!(r.end_time <= 5_000 && r.end_time > 4_900, "{}", r.end_time);
    assert!(r.counters.heartbeat_messages > 0);
    assert_eq!(r.sent_per_node.iter().sum::<u64>(), r.counters.messages);
    assert_eq!(r.message_times.len() as u64, r.counters.messages);
    assert!(r.message_times.is_sorted());
    let leader = r.leaderships.last().unwrap().leadership.leader;
    assert_eq!(leader, Some(5));
    assert!(run_kept(find("as-far").unwrap(), &topo, &ids, &[0], Rule::Max, &cfg).is_none());
}

/// Every kept algorithm, run with no fault on its default overlay of 3, 5 and 8 nodes over
/// seeded ids and delays, reaches its horizon with no violation: a kept leadership is judged by
/// the kept rules (one leader per term), not the one-shot ones (Raft's and the lease's first
/// candidate wins, whatever its id; heartbeats and acknowledgements exceed the one-shot bound).
#[test]
fn kept_runs_without_faults_have_no_violation() {
    let kept: Vec<&AlgorithmSpec> = crate::algo::catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some()).collect();
    assert!(kept.len() >= 6, "bully, repaired ring, zookeeper, chubby, raft, lease: {}", kept.len());
    for spec in kept {
        for n in [3u32, 5, 8] {
            let topo = Topology::build(spec.default_topology(), n, 1).unwrap();
            let all: Vec<u32> = (0..n).collect();
            for seed in 0..4u64 {
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                let cfg = SimConfig { seed, horizon: Some(3_000), log_message_times: true, ..SimConfig::default() };
                let r = run_kept(spec, &topo, &ids, &all, spec.rule, &cfg).unwrap();
                let ctx = format!("{} n {n} seed {seed} ids {ids:?}", spec.name);
                assert!(r.horizon_reached && r.errors.is_empty(), "{ctx}: {:?}", r.errors);
                assert!(r.leaderships.iter().any(|e| e.leadership.leader.is_some()), "{ctx}: never a leader");
                assert!(r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
                assert_eq!(r.verdict.failed_reason, None, "{ctx}");
            }
        }
    }
}

/// A run that never goes quiet is cut at the delivery cap and reported.
#[test]
fn non_termination_is_reported() {
    let spec = find("all-the-way").unwrap();
    let topo = Topology::ring(TopologyKind::RingUni, 8, 0).unwrap();
    let cfg = SimConfig { max_deliveries: 10, ..SimConfig::default() };
    let r = run(spec, &topo, &IdOrder::Ascending.arrange(8).unwrap(), &[0], Rule::Min, &cfg);
    assert!(!r.terminated);
    assert!(
        r.verdict.violations.iter().any(|v| v.to_string().contains("did not go quiet")),
        "{:?}",
        r.verdict.violations
    );
}

/// Test machine for pauses: position 0 (id 1) sends `Notify { leader: 11 }` at once, then 12 at
/// 20 ms and 13 at 30 ms (timers 5 and 6); position 1 (id 2) sets timer 1 for 40 ms and timer 2
/// for 30 ms. Every step of position 1 announces a new term whose "leader" names what the step
/// took: 1000 + timer, or the message's number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Journal {
    id: u64,
    steps: u64,
}

impl Journal {
    fn note(&mut self, what: u64, out: &mut Outbox) {
        if self.id == 2 {
            self.steps += 1;
            out.push(Effect::Lead(Leadership { term: self.steps, leader: Some(what) }));
        }
    }
}

impl Journal {
    fn start(&mut self, out: &mut Outbox) {
        if self.id == 1 {
            out.send(RIGHT, Msg::Notify { leader: 11 });
            out.push(Effect::SetTimer { timer: 5, after_ms: 20 });
        } else {
            out.push(Effect::SetTimer { timer: 1, after_ms: 40 });
            out.push(Effect::SetTimer { timer: 2, after_ms: 30 });
        }
    }
    fn receive(&mut self, _port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        if let Msg::Notify { leader } = msg {
            self.note(leader, out);
        }
        Ok(())
    }
    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        match (self.id, timer) {
            (1, 5) => {
                out.send(RIGHT, Msg::Notify { leader: 12 });
                out.push(Effect::SetTimer { timer: 6, after_ms: 10 });
            }
            (1, _) => out.send(RIGHT, Msg::Notify { leader: 13 }),
            _ => self.note(1_000 + u64::from(timer), out),
        }
    }
}

impl Algorithm for Journal {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }
    fn state(&self) -> &'static str {
        "journal"
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

/// Position 1's steps as (time, what it took), under `plan`.
fn journal(plan: Vec<(u64, Fault)>) -> (Vec<(u64, u64)>, SimReport) {
    let spec = find("as-far").unwrap();
    let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
    let faults =
        FaultPlan { faults: plan.into_iter().map(|(at, f)| crate::faults::Scheduled::new(at, 0, f)).collect() };
    let cfg = SimConfig { unit_delay: true, fifo: true, faults, ..SimConfig::default() };
    let r = run_with(spec, &topo, &[1, 2], &[0, 1], Rule::Max, &cfg, |c| Journal { id: c.id, steps: 0 });
    let steps =
        r.leaderships.iter().filter(|e| e.position == 1).map(|e| (e.time, e.leadership.leader.unwrap())).collect();
    (steps, r)
}

/// A node paused from 10 to 110 takes no step meanwhile; at 110 its timers that came due fire
/// first, in deadline order (timer 2 at 30 before timer 1 at 40), then the messages that reached
/// it (12 at 21, 13 at 31) in arrival order. Unpaused, each step comes at its own time. A second
/// pause extends the first to the later end; a crash drops what was held.
#[test]
fn a_pause_defers_timers_then_hands_over_held_messages() {
    let (steps, _) = journal(Vec::new());
    assert_eq!(steps, [(1, 11), (21, 12), (30, 1_002), (31, 13), (40, 1_001)]);
    let (steps, r) = journal(vec![(10, Fault::Pause { node: 1, ms: 100 })]);
    assert_eq!(steps, [(1, 11), (110, 1_002), (110, 1_001), (110, 12), (110, 13)], "{:?}", r.fault_log);
    assert!(r.fault_log.iter().any(|l| l == "110: position 1 resumes: 2 timer(s) due, 2 input(s) held"));
    let (steps, _) = journal(vec![(10, Fault::Pause { node: 1, ms: 100 }), (50, Fault::Pause { node: 1, ms: 100 })]);
    assert_eq!(steps.last(), Some(&(150, 13)), "the second pause ends later: it extends the first");
    let (steps, r) = journal(vec![(10, Fault::Pause { node: 1, ms: 100 }), (35, Fault::Crash { node: 1 })]);
    assert_eq!(steps, [(1, 11)], "a crash drops what was held");
    assert_eq!(r.dropped, 2, "the two held messages are lost with the crash");
}
