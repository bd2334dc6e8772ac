//! Unit tests of the election driver with test-only state machines (timers,
//! algorithm errors and panics, sends on receive-only ports). The gRPC side
//! is tested end to end in `node/tests/runtime/`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use tokio::sync::{broadcast, oneshot};
use tokio_stream::StreamExt;
use tonic::Code;

use super::agent::EventStream;
use super::election::{Arrival, Election, ElectionSetup, PortLink, Rebuild};
use super::node::StreamEnd;
use super::reports::Reporter;
use ringleader_core::algo::{
    AlgoError, Algorithm, Effect, Input, LEFT, Leadership, Msg, Outbox, Port, RIGHT, Role, Stable, TimerId,
};

/// A log a test's state machine writes to and the test reads: as part of the
/// machine's value, it is which log (the same one or not), not what it holds.
#[derive(Debug, Default)]
struct Shared<T>(Arc<Mutex<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Eq for Shared<T> {}

impl<T> std::hash::Hash for Shared<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.0).hash(state);
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = Mutex<T>;
    fn deref(&self) -> &Mutex<T> {
        &self.0
    }
}

/// A state machine scripted by the test: its start emits `start`, every
/// timer firing is recorded, and messages trigger errors or panics by kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Scripted {
    start: Vec<Effect>,
    fired: Shared<Vec<(TimerId, Instant)>>,
    /// A `Wakeup` message's step waits for this lock (a test holds it to keep the step waiting).
    gate: Shared<()>,
}

impl Scripted {
    fn start(&mut self, out: &mut Outbox) {
        for e in self.start.drain(..) {
            out.push(e);
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Probe { .. } => panic!("scripted panic"),
            Msg::Reply { .. } => Err(AlgoError::Invalid("scripted refusal".into())),
            Msg::Wakeup => {
                drop(self.gate.lock().unwrap());
                Ok(())
            }
            // Echo back where it came from, and also on the other port.
            m => {
                out.send(port, m);
                out.send(1 - port, m);
                Ok(())
            }
        }
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        self.fired.lock().unwrap().push((timer, Instant::now()));
        if timer == 1 {
            out.decide(Role::Leader, 7);
        }
    }
}

impl Algorithm for Scripted {
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
        "scripted"
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

struct Fixture {
    election: Arc<Election>,
    fired: Shared<Vec<(TimerId, Instant)>>,
    events: broadcast::Receiver<Arc<pb::NodeEvent>>,
    gate: Shared<()>,
}

/// A non-initiator at position 0 of a 2-ring whose ports both lead to position 1 and are receive-only.
fn fixture(start: Vec<Effect>) -> Fixture {
    fixture_as(start, false)
}

/// [`fixture`], as an initiator (which holds messages until `Start`).
fn fixture_initiator(start: Vec<Effect>) -> Fixture {
    fixture_as(start, true)
}

fn fixture_as(start: Vec<Effect>, initiator: bool) -> Fixture {
    fixture_reporting(start, initiator, None)
}

/// [`fixture_as`], its reports (if any) queued with `reporter`.
fn fixture_reporting(start: Vec<Effect>, initiator: bool, reporter: Option<Arc<Reporter>>) -> Fixture {
    fixture_with(start, initiator, reporter, false)
}

/// [`fixture_reporting`], run as an installed program's election when `program`.
fn fixture_with(start: Vec<Effect>, initiator: bool, reporter: Option<Arc<Reporter>>, program: bool) -> Fixture {
    let fired = Shared::default();
    let gate = Shared::default();
    let (tx, events) = broadcast::channel(16);
    let setup = ElectionSetup {
        election_id: "e".into(),
        algorithm: "scripted",
        position: 0,
        id: 7,
        initiator,
        ports: vec![
            PortLink { peer: 1, remote_port: RIGHT, link: None },
            PortLink { peer: 1, remote_port: LEFT, link: None },
        ],
        faults: Arc::new(super::faults::FaultTable::new()),
        rebuild: None,
        node: crate::observe::kv("node", "test"),
        trace: None,
        log_messages: false,
        store: None,
        program,
    };
    let machine = Scripted { start, fired: fired.clone(), gate: gate.clone() };
    let election = Election::new(setup, Box::new(machine), tx, reporter);
    Fixture { election, fired, events, gate }
}

fn body(m: Msg) -> pb::Body {
    m.into()
}

/// Timers fire after their delay; a cancelled timer never fires and a replaced one fires once, at its new time.
#[tokio::test]
async fn timers_fire_unless_cancelled_or_replaced() {
    let mut f = fixture(vec![
        Effect::SetTimer { timer: 1, after_ms: 30 },
        Effect::SetTimer { timer: 2, after_ms: 20 },
        Effect::CancelTimer { timer: 2 },
        Effect::SetTimer { timer: 3, after_ms: 10 },
        Effect::SetTimer { timer: 3, after_ms: 80 },
    ]);
    let t0 = Instant::now();
    f.election.start().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fired = f.fired.lock().unwrap().clone();
    let names: Vec<TimerId> = fired.iter().map(|(t, _)| *t).collect();
    assert_eq!(names, vec![1, 3], "timer 2 was cancelled, timer 3 replaced");
    assert!(fired[0].1 - t0 >= Duration::from_millis(30));
    assert!(fired[1].1 - t0 >= Duration::from_millis(80), "the replaced timer fired at its old time");
    // The decision taken at a timer is recorded and broadcast.
    let st = f.election.status();
    assert_eq!((st.role, st.leader_id), (pb::Role::Leader as i32, 7));
    let ev = f.events.try_recv().unwrap();
    assert_eq!((ev.election_id.as_str(), ev.role, ev.leader_id), ("e", pb::Role::Leader as i32, 7));
}

/// A one-shot election reports its figures on the event stream once it has decided, and not before (until then the
/// controller waits for nothing it could tell): the report after the timer that decides shows both steps, no timer
/// pending (the cancelled one never was, the fired one is no more), the node started, and the decision's time on the
/// node's monotonic clock. With no event stream asking for reports, a decided node makes none.
#[tokio::test]
async fn reports_come_once_decided() {
    let reporter = Arc::new(Reporter::default());
    let (tx, mut reports) = broadcast::channel(16);
    tokio::spawn(reporter.clone().run(tx));
    let (listening, _) = reporter.listen(0);
    let effects = vec![
        Effect::SetTimer { timer: 1, after_ms: 40 },
        Effect::SetTimer { timer: 2, after_ms: 20 },
        Effect::CancelTimer { timer: 2 },
    ];
    let f = fixture_reporting(effects, false, Some(reporter.clone()));
    f.election.start().unwrap();
    assert_eq!(f.election.status().timers_pending, 1, "timer 1 pending; timer 2 cancelled");
    let report = tokio::time::timeout(Duration::from_secs(5), reports.recv()).await.unwrap().unwrap();
    let st = report.status.clone().expect("a report carries the figures");
    assert_eq!((st.started, st.steps, st.timers_pending), (true, 2, 0), "{st:#?}");
    assert_eq!((report.role, report.leader_id), (pb::Role::Leader as i32, 7));
    assert!(st.decided_us > 0, "decided at a timer");
    // With no stream asking for reports, none is made.
    drop(listening);
    let quiet = fixture_reporting(
        vec![Effect::Decide(ringleader_core::algo::Decision { role: Role::Leader, leader: 7 })],
        false,
        Some(reporter.clone()),
    );
    quiet.election.start().unwrap();
    let none = tokio::time::timeout(Duration::from_millis(200), reports.recv()).await;
    assert!(none.is_err(), "no report without a listener: {none:?}");
    reporter.stop();
}

/// A step that fails (a program's `Effect::Fail`) breaks the election there: the rest of the step is not
/// carried out (no timer pending), the node reports at once though undecided, with `failed` and the failure as
/// its error (the controller ends the election with it), and it refuses every later envelope.
#[tokio::test]
async fn a_failed_step_breaks_the_election_and_is_reported_at_once() {
    let reporter = Arc::new(Reporter::default());
    let (tx, mut reports) = broadcast::channel(16);
    tokio::spawn(reporter.clone().run(tx));
    let (_listening, _) = reporter.listen(0);
    let why = "program p, id 7, step 1 (start): the program said: no";
    let effects = vec![Effect::Fail { why }, Effect::SetTimer { timer: 1, after_ms: 10 }];
    let f = fixture_reporting(effects, false, Some(reporter.clone()));
    f.election.start().unwrap();
    let report = tokio::time::timeout(Duration::from_secs(5), reports.recv()).await.unwrap().unwrap();
    let st = report.status.clone().expect("a report carries the figures");
    assert!(st.failed, "{st:#?}");
    assert_eq!(st.errors, vec![why.to_string()]);
    assert_eq!((st.timers_pending, report.role), (0, pb::Role::Undecided as i32));
    let election = body(Msg::Election { id: 9, stage: 0, hops: 0 });
    let refused = f.election.receive(Arrival::new(1, LEFT, Some(&election), 1), &mut None).unwrap_err();
    assert_eq!(refused.code, Code::FailedPrecondition, "{refused:?}");
    reporter.stop();
}

/// A program's election takes its envelopes off the caller's task (a link's, which carries other elections
/// too): while its step waits (here on a lock the test holds, as a program's on its process), `receive` still
/// returns at once for every envelope; once the step may go on, the queued envelopes are all taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_programs_envelopes_wait_in_its_queue_not_on_the_link() {
    let f = fixture_with(Vec::new(), false, None, true);
    f.election.start().unwrap();
    let wakeup = body(Msg::Wakeup);
    let held = f.gate.lock().unwrap();
    for _ in 0..3 {
        // Inline, the first would wait on the held lock and the test would never get past it.
        f.election.receive(Arrival::new(1, LEFT, Some(&wakeup), 1), &mut None).unwrap();
    }
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(10);
    while f.election.status().received < 3 {
        assert!(Instant::now() < deadline, "the queue was not taken: {:#?}", f.election.status());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(f.election.status().rejected, 0);
}

/// Closing an election (abort, shutdown) silences its pending timers.
#[tokio::test]
async fn closed_election_timers_do_not_fire() {
    let f = fixture(vec![Effect::SetTimer { timer: 1, after_ms: 10 }]);
    f.election.start().unwrap();
    f.election.close();
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert!(f.fired.lock().unwrap().is_empty());
    assert_eq!(f.election.status().role, pb::Role::Undecided as i32);
}

/// Algorithm refusals, panics and sends on receive-only ports become rejections and recorded errors, never panics.
#[tokio::test]
async fn algorithm_failures_are_recorded() {
    let f = fixture(vec![]);
    let e = &f.election;

    // A send on a receive-only port is an algorithm error; nothing is counted as sent.
    e.receive(Arrival::new(1, LEFT, Some(&body(Msg::Notify { leader: 1 })), 3), &mut None).unwrap();
    let st = e.status();
    assert_eq!((st.received, st.max_causal_time, st.election_messages + st.notification_messages), (1, 3, 0));
    assert_eq!(st.errors.len(), 2, "{:?}", st.errors);
    assert!(st.errors[0].contains("no outgoing link"), "{:?}", st.errors);

    let r = e.receive(Arrival::new(1, LEFT, Some(&body(Msg::Reply { id: 1, stage: 0 })), 1), &mut None).unwrap_err();
    assert_eq!(r.code, Code::InvalidArgument);
    assert_eq!(r.message, "scripted refusal");

    // A panic is caught; the election stops taking input.
    let r = e
        .receive(Arrival::new(1, LEFT, Some(&body(Msg::Probe { id: 1, stage: 0, limit: 1 })), 1), &mut None)
        .unwrap_err();
    assert_eq!(r.code, Code::Internal);
    assert!(r.message.contains("scripted panic"), "{}", r.message);
    let r = e.receive(Arrival::new(1, LEFT, Some(&body(Msg::Notify { leader: 1 })), 1), &mut None).unwrap_err();
    assert_eq!(r.code, Code::FailedPrecondition);

    let st = e.status();
    assert_eq!(st.rejected, 3);
    assert!(st.errors.iter().any(|x| x.contains("scripted refusal")));
    assert!(st.errors.iter().any(|x| x.contains("panicked")));
}

/// Envelopes naming a port the sender is not on, or without a usable body, are refused before the algorithm sees them.
#[tokio::test]
async fn bad_ports_and_bodies_are_refused() {
    let f = fixture(vec![]);
    let e = &f.election;
    let ok = body(Msg::Notify { leader: 1 });
    for (sender, port, b) in [(1, 2, Some(&ok)), (0, LEFT, Some(&ok)), (9, RIGHT, Some(&ok))] {
        let r = e.receive(Arrival::new(sender, port, b, 1), &mut None).unwrap_err();
        assert_eq!(r.code, Code::InvalidArgument);
        assert!(r.message.starts_with("bad port"), "{}", r.message);
    }
    let r = e.receive(Arrival::new(1, LEFT, None, 1), &mut None).unwrap_err();
    assert!(r.message.contains("`body`"), "{}", r.message);
    let r = e.receive(Arrival::new(1, LEFT, Some(&pb::Body { kind: None }), 1), &mut None).unwrap_err();
    assert!(r.message.contains("body.kind"), "{}", r.message);
    let st = e.status();
    assert_eq!((st.rejected, st.received), (5, 0));
}

/// An Events subscriber that falls behind skips what it missed and goes on; the sender never blocks; the stream
/// ends at shutdown.
#[tokio::test]
async fn lagging_event_subscriber_skips_and_continues() {
    let (tx, rx) = broadcast::channel(2);
    let (stop_tx, stop_rx) = oneshot::channel();
    let mut events = EventStream::new(rx, StreamEnd::new(stop_rx));
    let ev = |i: u64| pb::NodeEvent {
        election_id: format!("e{i}"),
        position: 0,
        role: 2,
        leader_id: i,
        ..Default::default()
    };
    for i in 0..5 {
        tx.send(Arc::new(ev(i))).unwrap();
    }
    // Events 0..3 were overwritten; the subscriber resumes at the oldest one kept.
    assert_eq!(events.next().await.unwrap().unwrap().leader_id, 3);
    assert_eq!(events.next().await.unwrap().unwrap().leader_id, 4);
    tx.send(Arc::new(ev(5))).unwrap();
    assert_eq!(events.next().await.unwrap().unwrap().leader_id, 5);
    stop_tx.send(()).unwrap();
    assert!(events.next().await.is_none());
}

/// A kept node: each incarnation leads the term after the one it was restored with, persists it, and
/// logs what `restore` handed it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Incarnation {
    term: u64,
    restored: Shared<Vec<Stable>>,
}

impl Incarnation {
    fn start(&mut self, out: &mut Outbox) {
        self.term += 1;
        out.push(Effect::Persist(Stable { term: self.term, vote: Some(7) }));
        out.push(Effect::Lead(Leadership { term: self.term, leader: Some(7) }));
    }

    fn receive(&mut self, _: Port, _: Msg, _: &mut Outbox) -> Result<(), AlgoError> {
        Ok(())
    }

    fn restore(&mut self, stable: Stable) {
        self.term = stable.term;
        self.restored.lock().unwrap().push(stable);
    }
}

impl Algorithm for Incarnation {
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
        "incarnation"
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

/// A portless initiator at position 0 (id 7) of election `k`, running [`Incarnation`].
fn kept_setup(faults: Arc<super::faults::FaultTable>, rebuild: Option<Rebuild>) -> ElectionSetup {
    ElectionSetup {
        election_id: "k".into(),
        algorithm: "incarnation",
        position: 0,
        id: 7,
        initiator: true,
        ports: vec![],
        faults,
        rebuild,
        node: crate::observe::kv("node", "test"),
        trace: None,
        log_messages: false,
        store: None,
        program: false,
    }
}

/// Recovering from a crash fault restarts a kept election's node as a new incarnation: it gets the last
/// persisted record back, its old belief is reported ended, and it starts afresh; no restart while crashed.
#[tokio::test]
async fn recovery_restarts_a_kept_node_with_its_persisted_record() {
    let restored = Shared::default();
    let log = restored.clone();
    let (tx, mut events) = broadcast::channel(16);
    let faults = Arc::new(super::faults::FaultTable::new());
    let rebuild = Rebuild(Box::new(move || Box::new(Incarnation { term: 0, restored: log.clone() })));
    let setup = kept_setup(faults.clone(), Some(rebuild));
    let election = Election::new(setup, Box::new(Incarnation { term: 0, restored: restored.clone() }), tx, None);
    assert!(!election.restart(), "a node that never started has nothing to restart");
    election.start().unwrap();
    faults.set(&pb::SetFaultsRequest { crashed: true, ..Default::default() }).unwrap();
    assert!(!election.restart(), "no restart while crashed");
    faults.set(&pb::SetFaultsRequest::default()).unwrap();
    assert!(election.restart());
    assert_eq!(*restored.lock().unwrap(), vec![Stable { term: 1, vote: Some(7) }]);
    let seen: Vec<(u64, u64)> = std::iter::from_fn(|| events.try_recv().ok()).map(|e| (e.term, e.leader_id)).collect();
    assert_eq!(seen, vec![(1, 7), (1, 0), (2, 7)], "lead term 1, that belief ended, then term 2 after the restart");
}

/// A new `Events` subscriber first gets the kept beliefs current when it subscribed, then live events:
/// a controller that (re)connects late still learns who leads.
#[tokio::test]
async fn a_late_subscriber_gets_the_current_beliefs_first() {
    let (tx, _keep) = broadcast::channel(16);
    let setup = kept_setup(Arc::new(super::faults::FaultTable::new()), None);
    let restored = Shared::default();
    let election = Election::new(setup, Box::new(Incarnation { term: 0, restored }), tx.clone(), None);
    assert_eq!(election.current_belief(), None, "nothing believed before the start");
    election.start().unwrap();
    let belief = election.current_belief().expect("a belief after the start");
    assert_eq!((belief.term, belief.leader_id, belief.kept), (1, 7, true));
    let (_stop_tx, stop) = oneshot::channel();
    let mut stream = EventStream::new(tx.subscribe(), StreamEnd::new(stop)).with_backlog(vec![belief.clone()]);
    let later = pb::NodeEvent { term: 2, ..belief.clone() };
    tx.send(Arc::new(later.clone())).unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap(), belief);
    assert_eq!(stream.next().await.unwrap().unwrap(), later);
}

/// An initiator that has not started holds what reaches it, but only up to
/// the cap every node keeps ([`ringleader_core::algo::MAX_HELD`]): beyond it a
/// flooding peer's envelopes are refused with RESOURCE_EXHAUSTED, so its
/// memory stays bounded; what was held is all handed over at `Start`.
#[tokio::test]
async fn an_unstarted_initiator_holds_a_bounded_number_of_messages() {
    let f = fixture_initiator(vec![]);
    let wake = body(Msg::Wakeup);
    let cap = ringleader_core::algo::MAX_HELD;
    for i in 0..cap {
        f.election.receive(Arrival::new(1, (i % 2) as Port, Some(&wake), 1), &mut None).unwrap();
    }
    let refused = f.election.receive(Arrival::new(1, 0, Some(&wake), 1), &mut None).unwrap_err();
    assert_eq!(refused.code, Code::ResourceExhausted, "{}", refused.message);
    assert_eq!(f.election.status().rejected, 1);
    assert_eq!(f.election.start().unwrap().released, cap);
}

/// The orphan grace counts from the later of the last controller stream's close and the election's
/// Prepare: an election prepared while nobody listens is kept for the grace from its Prepare; while
/// a stream that asks for reports is open nothing goes however old; after that stream closes, the
/// grace counts from the close.
#[tokio::test]
async fn the_orphan_grace_counts_from_the_later_of_close_and_prepare() {
    use super::orphans::abort_orphans;
    let grace = Duration::from_secs(60);
    let node = super::node::Node::new(super::NodeConfig { orphan_grace: Duration::ZERO, ..Default::default() });
    let f = fixture(Vec::new());
    let prepared = f.election.prepared_at();
    node.prepared(&f.election, false, 0).unwrap();
    assert!(abort_orphans(&node, grace, prepared + grace / 2).is_empty(), "nobody ever listened: from Prepare");

    let (listening, _) = node.reporter.listen(0);
    assert!(abort_orphans(&node, grace, prepared + grace * 10).is_empty(), "a controller listens");
    drop(listening);
    let closed = Instant::now();
    assert!(abort_orphans(&node, grace, closed + grace / 2).is_empty(), "within the grace of the close");
    assert_eq!(abort_orphans(&node, grace, closed + grace), vec!["e".to_string()]);
    assert!(node.table.get("e").is_none(), "aborted");
}

/// An election is kept while a stream of the controller incarnation that prepared it is open, even
/// when another controller comes meanwhile; once that stream closes, a controller that was already
/// there does not end it (a blip of the first controller's stream), but a new incarnation does, at
/// once, long before the grace: the controller restarted after kill -9.
#[tokio::test]
async fn a_new_controller_incarnation_ends_what_a_closed_one_prepared() {
    use super::orphans::{abort_orphans, supersede};
    let grace = Duration::from_secs(60);
    let node = super::node::Node::new(super::NodeConfig { orphan_grace: Duration::ZERO, ..Default::default() });
    let f = fixture(Vec::new());
    let (first, new) = node.reporter.listen(7);
    assert!(new, "incarnation 7 is new here");
    node.prepared(&f.election, false, 7).unwrap();
    let (other, new) = node.reporter.listen(9);
    assert!(new);
    supersede(&node, 9);
    assert!(node.table.get("e").is_some(), "its controller still listens");

    drop(first);
    assert!(abort_orphans(&node, grace, Instant::now()).is_empty(), "9 came before 7 went: the grace applies");
    assert!(node.table.get("e").is_some());

    let (again, new) = node.reporter.listen(9);
    assert!(!new, "9 is known");
    supersede(&node, 9);
    assert!(node.table.get("e").is_some());

    let (_restarted, new) = node.reporter.listen(11);
    assert!(new);
    supersede(&node, 11);
    assert!(node.table.get("e").is_none(), "a controller that came after 7 went ends 7's elections at once");
    drop((other, again));
}

/// Forwards every message to port 0 unchanged: the runtime's work with the algorithm's left out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Relay;

impl Relay {
    fn start(&mut self, _: &mut Outbox) {}

    fn receive(&mut self, _: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        out.send(LEFT, msg);
        Ok(())
    }

    fn fire(&mut self, _: TimerId, _: &mut Outbox) {}
}

impl Algorithm for Relay {
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
        "relay"
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

/// The node's per-message path (an envelope taken from the network, decoded, stepped through the node shell and
/// the algorithm, and the algorithm's send queued on the outgoing link) forwards each message once, in order, with
/// its causal time one more and a new message number. It runs `RINGLEADER_PER_MESSAGE` messages (1,000 unless
/// set), so that callgrind can count a long run's instructions per message (docs/performance.md).
#[tokio::test]
async fn the_per_message_path_forwards_each_message_once() {
    let count: u64 = std::env::var("RINGLEADER_PER_MESSAGE").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000);
    let faults = Arc::new(super::faults::FaultTable::new());
    let (tx, mut peer) = tokio::sync::mpsc::unbounded_channel();
    let link = super::links::Links::to_channel("127.0.0.1:9", tx);
    let (events, _keep) = broadcast::channel(16);
    let setup = ElectionSetup {
        election_id: "e".into(),
        algorithm: "relay",
        position: 0,
        id: 7,
        initiator: false,
        ports: vec![
            PortLink { peer: 1, remote_port: RIGHT, link: Some(link) },
            PortLink { peer: 2, remote_port: LEFT, link: None },
        ],
        faults,
        rebuild: None,
        node: crate::observe::kv("node", "test"),
        trace: None,
        log_messages: false,
        store: None,
        program: false,
    };
    let election = Election::new(setup, Box::new(Relay), events, None);
    let mut forwarded = 0u64;
    for i in 0..count {
        let msg = body(Msg::Election { id: i, stage: 0, hops: 1 });
        let arrival = Arrival { message_seq: i + 1, ..Arrival::new(2, RIGHT, Some(&msg), i) };
        election.receive(arrival, &mut Some("e".into())).unwrap();
        while let Ok(env) = peer.try_recv() {
            forwarded += 1;
            assert_eq!((env.election_id.as_str(), env.sender, env.port), ("e", 0, RIGHT));
            assert_eq!((env.causal_time, env.message_seq), (forwarded, forwarded), "in order, one later");
            assert_eq!(
                Msg::try_from(env.body.as_ref().unwrap()).unwrap(),
                Msg::Election { id: forwarded - 1, stage: 0, hops: 1 }
            );
        }
    }
    assert_eq!(forwarded, count, "every message forwarded once");
    assert_eq!(election.status().rejected, 0);
}

/// Logs each step it takes: `timer N`, or `msg K` for a `Notify { leader: K }`; its start sets
/// timer 1 for 40 ms and timer 2 for 20 ms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Steps {
    log: Shared<Vec<String>>,
}

impl Steps {
    fn start(&mut self, out: &mut Outbox) {
        out.push(Effect::SetTimer { timer: 1, after_ms: 40 });
        out.push(Effect::SetTimer { timer: 2, after_ms: 20 });
    }

    fn receive(&mut self, _: Port, msg: Msg, _: &mut Outbox) -> Result<(), AlgoError> {
        if let Msg::Notify { leader } = msg {
            self.log.lock().unwrap().push(format!("msg {leader}"));
        }
        Ok(())
    }

    fn fire(&mut self, timer: TimerId, _: &mut Outbox) {
        self.log.lock().unwrap().push(format!("timer {timer}"));
    }
}

impl Algorithm for Steps {
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
        "steps"
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

/// A started [`Steps`] node at position 0 of a 2-ring (receive-only ports), under `faults`.
fn steps(faults: Arc<super::faults::FaultTable>) -> (Arc<Election>, Shared<Vec<String>>) {
    let log = Shared::default();
    let (tx, _) = broadcast::channel(16);
    let setup = ElectionSetup { election_id: "p".into(), initiator: false, ..kept_setup(faults, None) };
    let setup = ElectionSetup {
        ports: vec![
            PortLink { peer: 1, remote_port: RIGHT, link: None },
            PortLink { peer: 1, remote_port: LEFT, link: None },
        ],
        ..setup
    };
    let election = Election::new(setup, Box::new(Steps { log: log.clone() }), tx, None);
    election.start().unwrap();
    (election, log)
}

fn notify(k: u64) -> pb::Body {
    body(Msg::Notify { leader: k })
}

/// A paused node takes no step: the envelopes that reach it are held and its timers that come due
/// are deferred; on resume the timers fire first, in deadline order (timer 2 at 20 ms before timer 1
/// at 40 ms), then the held envelopes in arrival order; `Start` is refused meanwhile.
#[tokio::test]
async fn a_paused_node_fires_its_due_timers_then_hands_over_what_it_held() {
    use super::faults::PauseChange;
    let faults = Arc::new(super::faults::FaultTable::new());
    let (election, log) = steps(faults.clone());
    let paused = faults.set(&pb::SetFaultsRequest { pause_ms: 60_000, ..Default::default() }).unwrap();
    assert!(matches!(paused, PauseChange::Until { number: 1, .. }), "{paused:?}");
    for k in [3, 4] {
        election.receive(Arrival::new(1, (k % 2) as Port, Some(&notify(k)), 1), &mut None).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(log.lock().unwrap().is_empty(), "no step while paused: {:?}", log.lock().unwrap());
    assert_eq!(election.held(), (4, 0), "two timers deferred, two envelopes held");
    assert_eq!(election.start().unwrap_err().code, Code::Unavailable);
    let resumed = faults.change(&pb::ChangeFaultsRequest { pause_ms: Some(0), ..Default::default() }).unwrap();
    let PauseChange::Resume(r) = resumed else { panic!("{resumed:?}") };
    assert!(r.from_us < r.until_us);
    election.resume(r);
    assert_eq!(*log.lock().unwrap(), ["timer 2", "timer 1", "msg 3", "msg 4"]);
    assert_eq!(election.held(), (0, 0));
    election.receive(Arrival::new(1, 0, Some(&notify(5)), 1), &mut None).unwrap();
    assert_eq!(log.lock().unwrap().last().map(String::as_str), Some("msg 5"), "resumed: taken at once");
}

/// A crash during a pause drops what was held (counted as lost), deferred timers included; a paused
/// election holds at most MAX_HELD envelopes and drops and counts the rest.
#[tokio::test]
async fn a_crash_drops_what_a_pause_held_and_the_hold_is_bounded() {
    let faults = Arc::new(super::faults::FaultTable::new());
    let (election, log) = steps(faults.clone());
    faults.set(&pb::SetFaultsRequest { pause_ms: 60_000, ..Default::default() }).unwrap();
    let cap = super::faults::MAX_HELD;
    for k in 0..cap as u64 + 2 {
        election.receive(Arrival::new(1, 0, Some(&notify(k)), 1), &mut None).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(election.held(), (cap + 2, 2), "cap envelopes and two due timers held, two envelopes dropped");
    faults.set(&pb::SetFaultsRequest { pause_ms: 60_000, crashed: true, ..Default::default() }).unwrap();
    election.drop_held();
    assert_eq!(election.held(), (0, 2));
    assert_eq!(faults.dropped.load(std::sync::atomic::Ordering::Relaxed), cap as u64 + 2);
    let super::faults::PauseChange::Resume(r) = faults.set(&pb::SetFaultsRequest::default()).unwrap() else {
        panic!("the pause ends")
    };
    election.resume(r);
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert!(log.lock().unwrap().is_empty(), "nothing held survived the crash: {:?}", log.lock().unwrap());
}

/// Two elections on one node: a crash scoped to one (its own fault table) stops it (what reaches it is
/// lost, Start is refused, no restart) while the other takes its messages; clearing it restarts nothing
/// that was not crashed; a node-wide crash stops both.
#[tokio::test]
async fn a_crash_scoped_to_one_election_leaves_the_other_running() {
    let node = Arc::new(super::faults::FaultTable::new());
    let scoped = || Arc::new(super::faults::FaultTable::scoped(node.clone()));
    let (crashed, crashed_log) = steps(scoped());
    let (other, other_log) = steps(scoped());
    crashed.faults().set(&pb::SetFaultsRequest { crashed: true, ..Default::default() }).unwrap();
    for e in [&crashed, &other] {
        e.receive(Arrival::new(1, 0, Some(&notify(3)), 1), &mut None).unwrap();
    }
    assert!(!crashed_log.lock().unwrap().iter().any(|m| m == "msg 3"), "{:?}", crashed_log.lock().unwrap());
    assert!(other_log.lock().unwrap().iter().any(|m| m == "msg 3"), "{:?}", other_log.lock().unwrap());
    assert_eq!(node.dropped.load(std::sync::atomic::Ordering::Relaxed), 1, "lost, counted on the node");
    assert_eq!(crashed.start().unwrap_err().code, Code::Unavailable);
    assert!(!node.crashed());
    node.set(&pb::SetFaultsRequest { crashed: true, ..Default::default() }).unwrap();
    other.receive(Arrival::new(1, 0, Some(&notify(4)), 1), &mut None).unwrap();
    assert!(!other_log.lock().unwrap().iter().any(|m| m == "msg 4"), "a node-wide crash stops it too");
}
