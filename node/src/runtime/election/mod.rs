//! One node's share of one election: the state machine in the core's node
//! [`Shell`] (which keeps its decision, belief, persisted record, timer
//! generations, counters and the messages an initiator holds before
//! `Start`), its ports, and what only a live node has: links, tokio timer
//! tasks, spans, metrics and the message log.
//!
//! Everything mutable sits behind one `std::sync::Mutex`, held only for one
//! algorithm step plus the non-blocking enqueueing of its effects.
//!
//! The driver is split by concern: this module holds the types and their
//! construction, [`input`] takes the node's input and hands it to the state
//! machine, [`outputs`] carries out what a step emitted, [`trace`] names its
//! spans and metric labels, [`reports`] tells the controller and its
//! subscribers what the node knows, and [`pause`] holds the input of a
//! paused node until it resumes.

mod inbox;
mod input;
mod outputs;
mod pause;
mod reports;
mod trace;
mod writer;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanContext;
use ringleader_proto::v1 as pb;
use tokio::sync::broadcast;
use tonic::Code;

use super::links::Link;
use super::reports::Reporter;
#[cfg(doc)]
use super::reports::monotonic_us;
use ringleader_core::algo::{Algorithm, Msg, Port, TimerId};
use ringleader_core::protocol::TIMER_SLOTS;
use ringleader_core::shell::{Outputs, Shell};

/// Entries of each half (sends, receipts) of a node's message log of one election.
pub(crate) const MAX_LOGGED: usize = 8_192;

/// Log `state` in `log` if it is not the state logged last (bounded by [`MAX_LOGGED`]).
pub(crate) fn note_state(log: &mut pb::MessageLog, state: &'static str) {
    if log.states.last().is_some_and(|s| s.state == state) {
        return;
    }
    if log.states.len() < MAX_LOGGED {
        log.states.push(pb::LoggedState { state: state.to_string(), at_us: unix_micros() });
    } else {
        log.truncated += 1;
    }
}

/// Errors kept per election; later ones are counted, not stored, so a
/// misbehaving peer cannot grow a node's memory without bound.
const MAX_ERRORS: usize = 64;

/// Why an envelope was refused; becomes a `Reject` on the link's reply stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub(crate) code: Code,
    pub(crate) message: String,
}

impl Rejection {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        Rejection { code, message: message.into() }
    }
}

/// Where one port of this node leads.
#[derive(Debug)]
pub(crate) struct PortLink {
    /// The neighbour's overlay position (the only sender accepted on this port).
    pub(crate) peer: u32,
    /// The neighbour's port our messages arrive on.
    pub(crate) remote_port: Port,
    /// The outgoing link, `None` for a receive-only port.
    pub(crate) link: Option<Arc<Link>>,
}

/// How an election's share was configured.
#[derive(Debug)]
pub(crate) struct ElectionSetup {
    pub(crate) election_id: String,
    pub(crate) algorithm: &'static str,
    pub(crate) position: u32,
    pub(crate) id: u64,
    pub(crate) initiator: bool,
    pub(crate) ports: Vec<PortLink>,
    /// The election's injected faults, its own over its node's
    /// ([`super::faults::FaultTable::scoped`]): while either crashes it, the
    /// election takes no input.
    pub(crate) faults: Arc<super::faults::FaultTable>,
    /// Kept elections: a new incarnation for a node that recovers from a crash.
    pub(crate) rebuild: Option<Rebuild>,
    /// This node's name: the `node` label of its metrics and spans.
    pub(crate) node: KeyValue,
    /// The controller's root span of the election; `None`: the election is not traced.
    pub(crate) trace: Option<SpanContext>,
    /// Keep a message log for the space-time diagram.
    pub(crate) log_messages: bool,
    /// Where the algorithm's store operations go (`lease`); `None`: it uses none.
    pub(crate) store: Option<Arc<super::store::EtcdStore>>,
    /// The algorithm is an installed program: each step may wait on its
    /// process (up to the program's step limit), so steps run off the async
    /// workers ([`stepping`]).
    pub(crate) program: bool,
}

/// Run one step of an election's state machine: a program's
/// (`program`) with [`tokio::task::block_in_place`] on a multi-threaded
/// runtime, so that while it waits on its process (up to its step limit)
/// the worker's other tasks (other elections' links, timers, the agent)
/// move to another thread; a built-in's inline, as it never waits.
pub(crate) fn stepping<R>(program: bool, step: impl FnOnce() -> R) -> R {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if program && multi { tokio::task::block_in_place(step) } else { step() }
}

/// An envelope as it arrives, minus the election id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival<'a> {
    pub(crate) sender: u32,
    pub(crate) port: Port,
    pub(crate) body: Option<&'a pb::Body>,
    pub(crate) causal_time: u64,
    pub(crate) traceparent: &'a str,
    pub(crate) message_seq: u64,
}

impl<'a> Arrival<'a> {
    /// An untraced, unnumbered arrival.
    #[cfg(test)]
    pub(crate) fn new(sender: u32, port: Port, body: Option<&'a pb::Body>, causal_time: u64) -> Self {
        Arrival { sender, port, body, causal_time, traceparent: "", message_seq: 0 }
    }
}

/// Builds a fresh state machine for a kept election's node: what a crashed
/// and restarted process would run.
pub(crate) struct Rebuild(pub(crate) Box<dyn Fn() -> Box<dyn Algorithm> + Send + Sync>);

impl std::fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rebuild(..)")
    }
}

/// What the runtime keeps with a message an initiator holds before `Start`.
#[derive(Clone, Debug)]
struct Pending {
    causal_time: u64,
    /// The span that sent it.
    parent: Option<SpanContext>,
}

/// What an algorithm step was handed, for its span.
#[derive(Clone, Copy, Debug)]
enum Input {
    Start,
    Restart,
    Leave,
    Message { port: Port, msg: Msg, causal_time: u64 },
    Timer(TimerId),
    Store,
}

#[derive(Debug)]
struct State {
    /// The state machine and what every driver keeps around it. Its
    /// persisted record is kept in memory: a crash fault loses the state
    /// machine but not the record (see `restart`); a killed process loses
    /// both and does not rejoin elections in flight.
    shell: Shell<Box<dyn Algorithm>, Pending>,
    out: Outputs,
    /// Causal depth: the largest causal time received.
    depth: u64,
    /// Largest causal time sent or received.
    max_causal: u64,
    received: u64,
    rejected: u64,
    errors: Vec<String>,
    errors_dropped: u64,
    /// The span that set each timer (the parent of the step it fires).
    timer_parents: [Option<SpanContext>; TIMER_SLOTS],
    /// Aborted or the node is shutting down: take no more input.
    closed: bool,
    /// The state machine panicked; its state is unknown, so it takes no more input.
    broken: bool,
    /// Messages sent so far (the last `message_seq`).
    sent_seq: u64,
    /// Unix microseconds when the current kept belief took effect.
    belief_since_us: u64,
    /// The message log, when the election keeps one.
    log: Option<Box<pb::MessageLog>>,
    /// Per port: messages sent on it, and envelopes that arrived on it
    /// (taken, held or refused), for the controller's count of what is
    /// still in flight.
    sent_by_port: Vec<u64>,
    arrived_by_port: Vec<u64>,
    /// Per timer slot: the stamp of the timer set there and not yet fired
    /// (it is pending while the shell still expects that stamp).
    armed: [Option<u64>; TIMER_SLOTS],
    /// Steps taken (start, messages, timers): orders this node's reports.
    steps: u64,
    /// [`monotonic_us`] of the first send and of the decision (0: none yet).
    first_send_us: u64,
    decided_us: u64,
    /// Crash-fault restarts so far: a store answer to an older incarnation is dropped.
    incarnation: u64,
    /// What it holds while its node is paused.
    hold: pause::Hold,
    /// Its fencing writes while it leads (kept leaderships).
    writer: writer::Writer,
}

impl State {
    fn record_error(&mut self, e: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e);
        } else {
            self.errors_dropped += 1;
        }
    }
}

/// One node's share of one election.
#[derive(Debug)]
pub(crate) struct Election {
    setup: ElectionSetup,
    events: broadcast::Sender<Arc<pb::NodeEvent>>,
    state: Mutex<State>,
    /// One-shot elections: where a step queues the election's report
    /// (`None`: kept leaderships, whose heartbeats never end, report beliefs only).
    reporter: Option<Arc<Reporter>>,
    /// Queued for a report that has not been taken yet.
    report_queued: AtomicBool,
    /// Handing over what a pause held (changed only under `state`'s lock).
    draining: AtomicBool,
    /// When it was prepared here.
    prepared: Instant,
    /// A program's envelopes not taken yet ([`inbox`]).
    inbox: Mutex<inbox::Inbox>,
}

/// What `Start` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Started {
    /// Messages that had waited for `Start` and were then handed to the algorithm.
    pub(crate) released: usize,
}

impl Election {
    pub(crate) fn new(
        setup: ElectionSetup,
        algo: Box<dyn Algorithm>,
        events: broadcast::Sender<Arc<pb::NodeEvent>>,
        reporter: Option<Arc<Reporter>>,
    ) -> Arc<Self> {
        let receive_only = (0..setup.ports.len() as Port).filter(|&p| setup.ports[p as usize].link.is_none());
        let state = State {
            shell: Shell::new(algo).with_links(setup.ports.len() as Port, receive_only),
            out: Outputs::default(),
            depth: 0,
            max_causal: 0,
            received: 0,
            rejected: 0,
            errors: Vec::new(),
            errors_dropped: 0,
            timer_parents: Default::default(),
            closed: false,
            broken: false,
            sent_seq: 0,
            belief_since_us: 0,
            log: None,
            sent_by_port: vec![0; setup.ports.len()],
            arrived_by_port: vec![0; setup.ports.len()],
            armed: [None; TIMER_SLOTS],
            steps: 0,
            first_send_us: 0,
            decided_us: 0,
            incarnation: 0,
            hold: pause::Hold::default(),
            writer: writer::Writer::default(),
        };
        let mut state = state;
        if setup.log_messages {
            let mut log = Box::<pb::MessageLog>::default();
            note_state(&mut log, state.shell.algorithm().state());
            state.log = Some(log);
        }
        let report_queued = AtomicBool::new(false);
        Arc::new(Election {
            setup,
            events,
            state: Mutex::new(state),
            reporter,
            report_queued,
            draining: AtomicBool::new(false),
            prepared: Instant::now(),
            inbox: Mutex::default(),
        })
    }

    /// The election id.
    pub(crate) fn id(&self) -> &str {
        &self.setup.election_id
    }

    /// The election's faults (its own table, over its node's).
    pub(crate) fn faults(&self) -> &Arc<super::faults::FaultTable> {
        &self.setup.faults
    }

    /// When it was prepared on this node.
    pub(crate) fn prepared_at(&self) -> Instant {
        self.prepared
    }

    /// Does an installed program run it (whose steps wait on its process)?
    pub(crate) fn is_program(&self) -> bool {
        self.setup.program
    }

    /// Is it a kept leadership (rather than a one-shot election)?
    pub(crate) fn is_kept(&self) -> bool {
        self.setup.rebuild.is_some()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside the algorithm is caught before it can poison the lock;
        // anything else that poisons it must not take the node down with it.
        match self.state.try_lock() {
            Ok(st) => st,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            // Held by a step, which a program's may make wait up to its step limit: off the workers.
            Err(std::sync::TryLockError::WouldBlock) => {
                stepping(self.setup.program, || self.state.lock().unwrap_or_else(|e| e.into_inner()))
            }
        }
    }

    /// This node's id in the election.
    pub(crate) fn node_id(&self) -> u64 {
        self.setup.id
    }
}

/// Unix time in microseconds (0 before 1970).
fn unix_micros() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
