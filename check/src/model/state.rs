//! A state of the explored system ([`System`]): every node's shell (shared
//! between states until a step changes it, and hashed once), the messages in
//! flight, the timers pending, the election's store and what is on its way
//! to and from it, the partition in force, the faults so far;
//! what a step sent ([`Sent`]); and what the properties read of a state
//! ([`Observation`]).

use std::sync::Arc;

use ringleader_core::algo::{Algorithm, Decision, Leadership, Msg, Port, TimerId};
use ringleader_core::protocol::store::{LeaseRecord, MemStore, StoreOp, StoreReply};
use ringleader_core::schedule::StoreItem;
use ringleader_core::shell::Shell;

#[cfg(doc)]
use super::ElectionModel;
use super::Faults;

/// A message a step sent: on the sender's port, and whether it was lost at
/// once (to a crashed node, or across the partition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// Sending position.
    pub from: u32,
    /// The sender's port.
    pub port: Port,
    /// The message.
    pub msg: Msg,
    /// Lost when sent.
    pub lost: bool,
}

/// A message on a link (its index: the sender's first link,
/// `link_base[from]`, plus the port), and whether it was sent before the last
/// tick (it must then arrive before the next one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Flight {
    pub(super) link: u32,
    pub(super) msg: Msg,
    pub(super) old: bool,
}

/// An operation on its way from a node to the store, or the store's answer
/// on its way back to it; whether it was put on its way before the last
/// tick (it must then arrive before the next one, as a message must); and,
/// for an operation, whether its answer still has somewhere to go (not once
/// its node crashed: the answer would reach another incarnation, which
/// drops it, as the simulator's store does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct StoreFlight {
    pub(super) node: u32,
    pub(super) item: StoreItem,
    pub(super) old: bool,
    pub(super) answered: bool,
}

impl StoreFlight {
    /// A total order on the fields (the store's types have none), so that
    /// what is on its way is one sorted multiset.
    fn key(&self) -> (u32, [u64; 7], bool, bool) {
        let rec = |r: Option<LeaseRecord>| r.map_or([0; 3], |r| [r.holder + 1, r.duration_ms, r.transitions]);
        let words = match self.item {
            StoreItem::Op(StoreOp::Get { seq }) => [0, u64::from(seq), 0, 0, 0, 0, 0],
            StoreItem::Op(StoreOp::Put { seq, expect, record, acquire }) => {
                let [h, d, t] = rec(Some(record));
                [1, u64::from(seq), expect, u64::from(acquire), h, d, t]
            }
            StoreItem::Answer(StoreReply::Done { seq, written, revision, record }) => {
                let [h, d, t] = rec(record);
                [2, u64::from(seq), revision, u64::from(written), h, d, t]
            }
            StoreItem::Answer(StoreReply::Failed { seq }) => [3, u64::from(seq), 0, 0, 0, 0, 0],
        };
        (self.node, words, self.old, self.answered)
    }
}

impl PartialOrd for StoreFlight {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for StoreFlight {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// A timer a node set that has not fired, with the ticks left until it is
/// due, and its stamp: 0 between steps (every state renumbers the shells'
/// timer stamps, [`ShellState::restamp_timers`], once the stale timers are
/// forgotten).
///
/// [`ShellState::restamp_timers`]: ringleader_core::shell::ShellState::restamp_timers
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Pending {
    pub(super) node: u32,
    pub(super) timer: TimerId,
    pub(super) left: u32,
    pub(super) generation: u64,
}

/// One node of a [`System`]: its shell, shared between states until a step
/// changes it (copy on write: a step touches one node, so a new state copies
/// one node, not all), and the shell's hash, kept beside it so that a
/// state's fingerprint hashes a number per node instead of every node's
/// whole state.
#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) hash: u64,
    shell: Arc<Shell<Box<dyn Algorithm>>>,
}

impl Node {
    pub(super) fn new(shell: Shell<Box<dyn Algorithm>>) -> Self {
        let mut node = Node { hash: 0, shell: Arc::new(shell) };
        node.rehash();
        node
    }

    /// The shell, to change (copied first if another state shares it); call
    /// [`Node::rehash`] when done.
    pub(super) fn edit(&mut self) -> &mut Shell<Box<dyn Algorithm>> {
        Arc::make_mut(&mut self.shell)
    }

    pub(super) fn rehash(&mut self) {
        use std::hash::BuildHasher;
        self.hash = foldhash::quality::FixedState::with_seed(0x0de5).hash_one(&*self.shell);
    }
}

impl std::ops::Deref for Node {
    type Target = Shell<Box<dyn Algorithm>>;
    fn deref(&self) -> &Self::Target {
        &self.shell
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.shell == other.shell
    }
}

impl Eq for Node {}

impl std::hash::Hash for Node {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The whole system at one point of a schedule. (Its [`Hash`] leaves out
/// its timing, [`System::timing`]: the ticks since the last fault and those
/// its partition has left to heal; a check hashes them apart where it needs
/// them.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct System {
    /// Every node.
    pub(super) nodes: Vec<Node>,
    /// Messages in flight, by link (one vector for all links: one
    /// allocation per state), in sending order on each FIFO link, sorted (a
    /// multiset) otherwise.
    pub(super) links: Vec<Flight>,
    /// Timers pending, sorted.
    pub(super) timers: Vec<Pending>,
    /// The election's store (for an algorithm that keeps a record in one),
    /// as the simulator keeps it; `None` while it is empty, so that the
    /// states of an election without one stay as small, and as cheap to
    /// copy, as they were. Its writers' time stamps are left at 0: no
    /// algorithm reads them, and a clock in the state would make every
    /// state new.
    pub(super) store: Option<Box<MemStore>>,
    /// Operations on their way to the store and answers on their way back,
    /// sorted (a multiset).
    pub(super) store_flights: Vec<StoreFlight>,
    /// Initiators that have not woken yet, in position order.
    pub(super) unstarted: Vec<u32>,
    /// Crashed nodes (a bit per position).
    pub(super) down: u32,
    /// Every (term, leader id) a node announced it leads, sorted.
    pub(super) led: Vec<(u64, u64)>,
    /// The side of the partition in force (a bit per position; 0: none).
    pub(super) cut: u32,
    /// Ticks within which the partition in force must heal (`u32::MAX`
    /// when it need not; 0 without one). Not hashed: the explorer ranks a
    /// partitioned state by it ([`ElectionModel::rank`]).
    pub(super) heal_left: u32,
    /// Punctual timers: a send across the partition in force was cut off
    /// since the last state without a timer due (where a heal may come; see
    /// "Heals at their earliest").
    pub(super) cut_sends: bool,
    /// Faults used so far.
    pub(super) used: Faults,
    /// Kept leaderships: ticks since the last fault (the start counts as
    /// one), `None` once more than the convergence bound ago.
    pub(super) since_fault: Option<u32>,
    /// Messages sent so far (one-shot elections only: a kept leadership's
    /// heartbeats never end).
    pub(super) sent: u64,
    /// The first thing that went wrong, if anything did.
    pub(super) error: Option<String>,
}

impl std::hash::Hash for System {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let System {
            nodes,
            links,
            timers,
            store,
            store_flights,
            unstarted,
            down,
            led,
            cut,
            heal_left: _,
            cut_sends,
            used,
            since_fault: _,
            sent,
            error,
        } = self;
        (nodes, links, timers, unstarted, down, led, cut, cut_sends, used, sent, error).hash(state);
        // Only an algorithm with a store has one in use: the others' hashes stay as they were.
        if !store_flights.is_empty() || store.is_some() {
            (self.store(), store_flights).hash(state);
        }
    }
}

impl System {
    /// The election's store as it is (empty when nothing was written).
    pub fn store(&self) -> MemStore {
        self.store.as_deref().copied().unwrap_or_default()
    }

    /// Apply `op` to the store and answer it; the store stays `None` while
    /// it is empty (one form per content, for equal states).
    pub(super) fn apply_store(&mut self, op: StoreOp) -> StoreReply {
        let mut store = self.store();
        let reply = store.apply(op, 0);
        self.store = (store != MemStore::default()).then(|| Box::new(store));
        reply
    }
    /// Each position's decision.
    pub fn decisions(&self) -> Vec<Option<Decision>> {
        self.nodes.iter().map(|n| n.decision()).collect()
    }

    /// Each position's kept-leadership belief (`None` for a crashed node).
    pub fn beliefs(&self) -> Vec<Option<Leadership>> {
        self.nodes.iter().enumerate().map(|(p, n)| if self.is_down(p as u32) { None } else { n.leadership() }).collect()
    }

    /// The ticks since the last fault as a rank: the more, the later
    /// (`u32::MAX`: past the convergence bound). Kept leaderships only.
    pub fn clock(&self) -> u32 {
        self.since_fault.unwrap_or(u32::MAX)
    }

    /// What this state's hash leaves out: its clock ([`System::clock`]) and
    /// the ticks within which its partition must heal. With the hash, the
    /// whole state.
    pub fn timing(&self) -> (u32, u32) {
        (self.clock(), self.heal_left)
    }

    /// Messages sent so far (one-shot elections).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Nothing in flight, no timer pending and every initiator started: no
    /// schedule goes on (but faults).
    pub fn is_final(&self) -> bool {
        self.unstarted.is_empty() && self.timers.is_empty() && self.links.is_empty() && self.store_flights.is_empty()
    }

    /// Is a timer due (the model's clock waits for it to fire)?
    pub fn timer_due(&self) -> bool {
        self.timers.iter().any(|t| t.left == 0)
    }

    /// Is a partition in force?
    pub fn partitioned(&self) -> bool {
        self.cut != 0
    }

    /// Has the node at `p` crashed (and not recovered)?
    pub fn is_down(&self, p: u32) -> bool {
        self.down >> p & 1 == 1
    }

    /// The first thing that went wrong, if anything did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Everything of `self` the properties read: what the nodes decided and
    /// believe, who led which term, the crashed nodes, the ticks since the
    /// last fault, the messages sent and the error. (Not the detectors'
    /// counts, the messages in flight, the timers, the partition in force or
    /// the faults used so far: the properties see a partition only through
    /// the clock, which stands at 0 while it lasts.)
    pub fn observation(&self) -> Observation {
        Observation {
            decisions: self.decisions(),
            beliefs: self.beliefs(),
            led: self.led.clone(),
            down: self.down,
            since_fault: self.since_fault,
            sent: self.sent,
            error: self.error.clone(),
        }
    }
}

/// What the properties read of a [`System`] ([`System::observation`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Observation {
    /// Each position's decision.
    pub decisions: Vec<Option<Decision>>,
    /// Each position's belief (`None` for a crashed node).
    pub beliefs: Vec<Option<Leadership>>,
    /// Every (term, leader id) a node announced it leads, sorted.
    pub led: Vec<(u64, u64)>,
    /// Crashed nodes, a bit per position.
    pub down: u32,
    /// Ticks since the last fault, while within the convergence bound.
    pub since_fault: Option<u32>,
    /// Messages sent so far (one-shot).
    pub sent: u64,
    /// The first thing that went wrong.
    pub error: Option<String>,
}
