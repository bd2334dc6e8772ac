//! The record of an election, as callers, watchers, the history and the
//! telemetry see it: plain data with no behaviour beyond a few derived
//! figures, so every module can read records without depending on how
//! elections run.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use ringleader_core::algo::{Decision, Rule};
use ringleader_core::spec::finite_bound;

/// Elections with at most this many positions list their participants.
pub const MAX_PARTICIPANTS: u32 = 1024;

/// Elections with at most this many positions list their overlay's links
/// (what the page draws the topology from: more nodes make no picture).
pub const MAX_LISTED_LINKS_N: u32 = 64;

/// Where an election runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    /// Over the nodes' gRPC links.
    Live,
    /// In the controller's deterministic simulator.
    Simulated,
}

/// Life cycle of an election.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum State {
    /// Recorded, nodes not configured yet.
    Pending,
    /// Nodes configured and started (or the simulator running).
    Running,
    /// Every position decided (see the violations for correctness).
    Finished,
    /// The election could not complete (see the error).
    Failed,
}

impl State {
    /// Finished or failed: nothing will change any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Finished | State::Failed)
    }
}

/// Options of a SIMULATED election.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimOptions {
    /// Links may reorder messages.
    pub non_fifo: bool,
    /// Every message takes one time unit.
    pub unit_delay: bool,
    /// Draw the space-time diagram ([`ElectionRecord::diagram_svg`]).
    pub diagram: bool,
    /// A kept leadership: how long it runs, in virtual milliseconds (0: the default).
    pub horizon_ms: u64,
}

/// The elected node.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeaderInfo {
    /// Node process name (LIVE) or `sim-<position>`.
    pub node: String,
    /// The leader's id.
    pub id: u64,
    /// The leader's position.
    pub position: u32,
}

/// What an election cost.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Metrics {
    /// Every message sent.
    pub messages: u64,
    /// Messages that find the winner.
    pub election_messages: u64,
    /// Messages that announce the winner.
    pub notification_messages: u64,
    /// Messages by kind name.
    pub by_kind: BTreeMap<String, u64>,
    /// Encoded protobuf sizes of the bodies sent.
    pub bytes: u64,
    /// Longest causal chain of messages.
    pub ideal_time: u64,
    /// Wall time: LIVE, from the controller's first call to the last decision it heard of;
    /// SIMULATED, the simulator's run.
    pub duration_ms: u64,
    /// LIVE one-shot: from the first send to the last decision on the nodes' monotonic
    /// clocks, in microseconds (exact on one clock, the embedded cluster; across processes
    /// within [`Metrics::node_duration_error_us`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_duration_us: Option<u64>,
    /// How far `node_duration_us` may be off (0 on one clock).
    #[serde(default)]
    pub node_duration_error_us: u64,
    /// The literature bound for (n, k).
    pub bound: u64,
    /// The bound as a formula.
    #[serde(deserialize_with = "static_str")]
    pub bound_formula: StaticStr,
}

impl Metrics {
    /// The bound, when there is a finite one: `None` for none (0, a kept
    /// leadership) or an algorithm without one
    /// ([`UNBOUNDED`](ringleader_core::spec::UNBOUNDED)).
    pub fn finite_bound(&self) -> Option<u64> {
        finite_bound(self.bound).filter(|&b| b > 0)
    }

    /// `messages / bound` (0 without a finite bound).
    pub fn bound_ratio(&self) -> f64 {
        self.finite_bound().map_or(0.0, |b| self.messages as f64 / b as f64)
    }
}

/// One position of an election.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Participant {
    /// Ring position.
    pub position: u32,
    /// Node process name (LIVE) or `sim-<position>`.
    pub node: String,
    /// Its id.
    pub id: u64,
    /// Was it started as an initiator?
    pub initiator: bool,
    /// Its decision, once made.
    pub decision: Option<Decision>,
    /// Messages it sent.
    pub messages_sent: u64,
}

/// Everything known about one election.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ElectionRecord {
    /// Election id.
    pub id: String,
    /// Catalogue name.
    #[serde(deserialize_with = "static_str")]
    pub algorithm: StaticStr,
    /// LIVE or SIMULATED.
    pub mode: Mode,
    /// Life-cycle state.
    pub state: State,
    /// The overlay's shape.
    pub topology: ringleader_core::topology::TopologyKind,
    /// Who wins.
    pub rule: Rule,
    /// Positions.
    pub n: u32,
    /// Initiators.
    pub k: u32,
    /// Seed.
    pub seed: u64,
    /// The single leader, once known.
    pub leader: Option<LeaderInfo>,
    /// Every position decided and named the same leader.
    pub agreed: bool,
    /// Invariants that failed.
    pub violations: Vec<String>,
    /// Costs, once finished.
    pub metrics: Option<Metrics>,
    /// Per position (elections of at most [`MAX_PARTICIPANTS`] positions).
    pub participants: Vec<Participant>,
    /// The overlay's links between positions, each once, smaller position
    /// first (elections of at most [`MAX_LISTED_LINKS_N`] positions).
    #[serde(default)]
    pub links: Vec<[u32; 2]>,
    /// Why it failed.
    pub error: Option<String>,
    /// Unix time in milliseconds.
    pub started_at_ms: u64,
    /// A kept leadership (runs until stopped).
    pub keep_leader: bool,
    /// The highest term any node claimed to lead.
    pub term: u64,
    /// Unix time in milliseconds at which the current leader claimed its term.
    pub leader_since_ms: u64,
    /// Every change of belief of a kept leadership, in arrival order.
    pub timeline: Vec<LeadershipChange>,
    /// Times two nodes both believed they led, with how long.
    pub overlaps: Vec<String>,
    /// Every loss of the agreed leader of a kept leadership.
    pub failovers: Vec<FailoverRecord>,
    /// The positions of a running kept leadership that are down now: crashed
    /// by a fault, or their event stream to the controller broken (their
    /// last belief is frozen, not current).
    #[serde(default)]
    pub down: Vec<u32>,
    /// A space-time diagram was asked for (it is drawn when the election
    /// ends: a kept leadership's when it is stopped).
    #[serde(default)]
    pub diagram_asked: bool,
    /// The space-time diagram as SVG, when asked for (`SimOptions::diagram`);
    /// shared, so that copies of the record do not copy it.
    pub diagram_svg: Option<Arc<str>>,
    /// How many times the diagram was drawn: a running kept leadership's is redrawn while it
    /// runs (after each change, at most every two seconds), and again when it stops.
    #[serde(default)]
    pub diagram_drawn: u32,
    /// A SIMULATED election whose every message took one time unit (else
    /// random delays), so that another run can repeat its conditions.
    #[serde(default)]
    pub unit_delay: bool,
    /// The algorithm's options the election ran with, sorted by name.
    #[serde(default)]
    pub options: Vec<(String, String)>,
    /// What happened that is neither a violation nor a failure (e.g. nodes
    /// that no longer ran a kept leadership when it was stopped).
    #[serde(default)]
    pub notes: Vec<String>,
    /// What a kept leadership's leaders' writes met at a modelled resource
    /// (SIMULATED only; see [`ringleader_core::fencing`]).
    #[serde(default)]
    pub fencing: Option<FencingRecord>,
}

/// Fencing counts of one election (see [`ringleader_core::fencing::Fencing`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FencingRecord {
    /// Writes sent.
    pub writes: u64,
    /// Stale writes sent.
    pub stale: u64,
    /// Stale writes the fencing resource accepted.
    pub stale_accepted: u64,
    /// Stale writes a resource without fencing would have accepted.
    pub stale_accepted_unfenced: u64,
    /// More writes than the model holds.
    pub truncated: bool,
}

impl From<ringleader_core::fencing::Fencing> for FencingRecord {
    fn from(f: ringleader_core::fencing::Fencing) -> Self {
        FencingRecord {
            writes: f.writes,
            stale: f.stale,
            stale_accepted: f.stale_accepted,
            stale_accepted_unfenced: f.stale_accepted_unfenced,
            truncated: f.truncated,
        }
    }
}

impl ElectionRecord {
    /// A pending election `id` of `algorithm` run in `mode` of which nothing
    /// else is known yet: no leader, metrics, participants, faults or notes,
    /// not a kept leadership; its shape and numbers are filled in with
    /// struct update syntax (`ElectionRecord { n, k, ..ElectionRecord::blank(..) }`).
    pub fn blank(id: String, algorithm: StaticStr, mode: Mode) -> Self {
        ElectionRecord {
            id,
            algorithm,
            mode,
            state: State::Pending,
            topology: ringleader_core::topology::TopologyKind::RingUni,
            rule: Rule::Max,
            n: 0,
            k: 0,
            seed: 0,
            leader: None,
            agreed: false,
            violations: Vec::new(),
            metrics: None,
            participants: Vec::new(),
            links: Vec::new(),
            error: None,
            started_at_ms: 0,
            keep_leader: false,
            term: 0,
            leader_since_ms: 0,
            timeline: Vec::new(),
            overlaps: Vec::new(),
            failovers: Vec::new(),
            down: Vec::new(),
            diagram_asked: false,
            diagram_svg: None,
            diagram_drawn: 0,
            unit_delay: false,
            options: Vec::new(),
            notes: Vec::new(),
            fencing: None,
        }
    }
}

impl ElectionRecord {
    /// About how many bytes the record holds (its diagram, participants,
    /// timeline, failovers and texts, and a fixed part): what a stored record
    /// counts against `controller.max_stored_mib`.
    pub fn weight(&self) -> u64 {
        let texts = |v: &[String]| v.iter().map(|s| s.len() as u64 + 24).sum::<u64>();
        let diagram = self.diagram_svg.as_ref().map_or(0, |d| d.len() as u64);
        let participants = self.participants.iter().map(|p| 64 + p.node.len() as u64).sum::<u64>();
        let timeline = self.timeline.iter().map(|c| 56 + c.node.len() as u64).sum::<u64>();
        let failovers = self.failovers.len() as u64 * 192;
        let kinds = self.metrics.as_ref().map_or(0, |m| m.by_kind.keys().map(|k| k.len() as u64 + 48).sum());
        RECORD_BYTES
            + self.id.len() as u64
            + self.error.as_ref().map_or(0, |e| e.len() as u64)
            + diagram
            + participants
            + timeline
            + failovers
            + kinds
            + texts(&self.violations)
            + texts(&self.overlaps)
            + texts(&self.notes)
            + self.options.iter().map(|(k, v)| (k.len() + v.len()) as u64 + 48).sum::<u64>()
    }
}

/// What every record holds beyond its variable parts, about (the struct, its
/// map entries and allocator overhead).
pub const RECORD_BYTES: u64 = 640;

/// A stored record as [`prune`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stored {
    /// Its [`ElectionRecord::weight`].
    pub weight: u64,
    /// Its weight without its diagram, with the note saying so (`None`: it has no diagram).
    pub without_diagram: Option<u64>,
}

impl Stored {
    /// `r` as it is, and as it would be without its diagram and with `note`.
    pub fn of(r: &ElectionRecord, note: &str) -> Stored {
        let weight = r.weight();
        let diagram = r.diagram_svg.as_ref().map_or(0, |d| d.len() as u64);
        Stored {
            weight,
            without_diagram: r.diagram_svg.is_some().then(|| weight - diagram + note.len() as u64 + NOTE_BYTES),
        }
    }
}

/// What a note adds to a record's weight beyond its text.
const NOTE_BYTES: u64 = 24;

/// What [`prune`] drops: indices into its input, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruning {
    /// Records that keep everything but their diagram.
    pub diagrams: Vec<usize>,
    /// Records forgotten.
    pub records: Vec<usize>,
}

impl Pruning {
    /// Nothing to drop.
    pub fn is_empty(&self) -> bool {
        self.diagrams.is_empty() && self.records.is_empty()
    }
}

/// The one rule that keeps stored records within `max_bytes` and `keep`,
/// applied alike to the records in memory, to the history file, and to what a
/// restart reads back, so that all three hold the same records: the oldest
/// diagrams go first, then the oldest whole records. `stored` is oldest first.
pub fn prune(stored: &[Stored], max_bytes: u64, keep: usize) -> Pruning {
    let mut total: u64 = stored.iter().map(|s| s.weight).sum();
    let mut pruning = Pruning::default();
    let mut after = Vec::with_capacity(stored.len());
    for (i, s) in stored.iter().enumerate() {
        match s.without_diagram {
            Some(w) if total > max_bytes && w < s.weight => {
                total -= s.weight - w;
                pruning.diagrams.push(i);
                after.push(w);
            }
            _ => after.push(s.weight),
        }
    }
    let mut count = stored.len();
    for (i, w) in after.into_iter().enumerate() {
        if total <= max_bytes && count <= keep {
            break;
        }
        total -= w;
        count -= 1;
        pruning.records.push(i);
    }
    // The forgotten are a prefix: a diagram dropped from one of them is not said twice.
    let gone = pruning.records.len();
    pruning.diagrams.retain(|&d| d >= gone);
    pruning
}

/// One node's new belief about a kept leadership.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeadershipChange {
    /// Its position.
    pub position: u32,
    /// Its node.
    pub node: String,
    /// The term of the belief.
    pub term: u64,
    /// The leader it believes in (`None`: none known).
    pub leader_id: Option<u64>,
    /// Milliseconds since the election started.
    pub at_ms: u64,
    /// When the belief took effect, in unix microseconds on the node's own
    /// clock (0: not reported).
    #[serde(default)]
    pub node_us: u64,
}

/// One loss of a kept leadership's agreed leader.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FailoverRecord {
    /// The lost leader.
    pub leader: LeaderInfo,
    /// Its term.
    pub term: u64,
    /// How the controller learned it was gone (stored as its words).
    pub cause: ringleader_core::failover::Cause,
    /// Milliseconds since the election started at which the controller learned it.
    pub lost_at_ms: u64,
    /// Milliseconds from the loss to the first change of belief of a live node.
    pub detection_ms: Option<u64>,
    /// Milliseconds from the loss to agreement on a new leader.
    pub agreement_ms: Option<u64>,
    /// The new agreed leader and its term.
    pub new_leader: Option<(LeaderInfo, u64)>,
    /// Election and notification messages sent by every node from the loss
    /// to agreement (heartbeats excluded; a node cut off or crashed at the
    /// loss counts too), once read from the nodes; absent when no node
    /// answered both readings.
    pub messages: Option<u64>,
}

/// A `&'static str` field of a stored record (an alias, so serde does not
/// try to borrow it from the input).
pub type StaticStr = &'static str;

/// Deserialize a `&'static str` field (algorithm names, bound formulas):
/// each distinct string is kept once for the process's life.
pub(crate) fn static_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    static INTERNED: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let s = <String as serde::Deserialize>::deserialize(d)?;
    let mut set = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = set.get(s.as_str()) {
        return Ok(known);
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    set.insert(leaked);
    Ok(leaked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_diagram(weight: u64) -> Stored {
        Stored { weight, without_diagram: Some(100) }
    }

    /// The pruning rule drops the oldest diagrams first, every one of them if need be, before any
    /// record; then the oldest records; and `keep` bounds the count whatever the bytes.
    #[test]
    fn prune_drops_oldest_diagrams_then_oldest_records() {
        let plain = Stored { weight: 100, without_diagram: None };
        let stored = [with_diagram(1_000), plain, with_diagram(1_000), with_diagram(1_000)];
        assert!(prune(&stored, 3_100, 10).is_empty(), "within the bounds");
        assert_eq!(prune(&stored, 3_000, 10), Pruning { diagrams: vec![0], records: vec![] });
        assert_eq!(prune(&stored, 1_300, 10), Pruning { diagrams: vec![0, 2], records: vec![] });
        assert_eq!(prune(&stored, 400, 10), Pruning { diagrams: vec![0, 2, 3], records: vec![] });
        assert_eq!(prune(&stored, 250, 10), Pruning { diagrams: vec![2, 3], records: vec![0, 1] });
        assert_eq!(prune(&stored, 3_100, 3), Pruning { diagrams: vec![], records: vec![0] });
    }
}
