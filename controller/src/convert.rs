//! Protobuf <-> domain conversions of the Controller API, in one place.
//!
//! Incoming messages become domain values through `TryFrom`, which reports a
//! bad field (e.g. an enum number the API does not define) as a
//! [`ConvertError`] naming it; nothing here unwraps. Checks that need the
//! catalogue or the cluster are [`crate::api`]'s.

use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{Decision, Role, Rule};
use ringleader_core::diagram::Axis;
use ringleader_core::spec::{AlgorithmSpec, UNBOUNDED};
use ringleader_core::topology::{IdOrder, TopologyKind};
use ringleader_proto::v1 as pb;

pub use crate::error::ConvertError;
use crate::record::{
    ElectionRecord, FailoverRecord, LeaderInfo, LeadershipChange, Metrics, Mode, Participant, SimOptions, State,
};

/// A decoded `StartElection` request, not yet checked against the catalogue or the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct ElectionRequest {
    /// Catalogue name.
    pub algorithm: String,
    /// An installed program's name, instead of `algorithm` (empty: none).
    pub program: String,
    /// Positions (0 = default).
    pub size: u32,
    /// How ids are placed when `ids` is empty (RANDOM uses `seed`).
    pub id_order: IdOrder,
    /// Explicit ids in ring order.
    pub ids: Vec<u64>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Number of initiators (0 = all).
    pub initiators: u32,
    /// Explicit initiators, by id.
    pub initiator_ids: Vec<u64>,
    /// LIVE or SIMULATED.
    pub mode: Mode,
    /// Answer only when finished.
    pub wait: bool,
    /// Keep a leader until stopped.
    pub keep_leader: bool,
    /// Failure-detector settings of a kept leadership (`None` = the controller's).
    pub detector: Option<DetectorConfig>,
    /// Requested overlay (`None` = the algorithm's default).
    pub topology: Option<TopologyKind>,
    /// Explicit tree or graph edges (`topology.edges`); empty = drawn from the seed.
    pub edges: Vec<(u32, u32)>,
    /// Mesh rows (`topology.rows`); 0 = derived.
    pub rows: u32,
    /// Mesh columns (`topology.cols`); 0 = derived.
    pub cols: u32,
    /// Requested winner rule (`None` = the algorithm's own).
    pub winner: Option<Rule>,
    /// Draw the space-time diagram (LIVE or SIMULATED).
    pub diagram: bool,
    /// How to draw it (`Some`: asked for, and the diagram with it).
    pub drawing: Option<crate::elections::Drawing>,
    /// Simulator options, if any were given.
    pub simulation: Option<SimOptions>,
    /// LIVE: the nodes to run on, by name (position `i` on `nodes[i]`);
    /// empty = the first nodes that are up.
    pub nodes: Vec<String>,
    /// A SIMULATED kept leadership's faults (`simulation.faults`).
    pub faults: Vec<ScheduledFault>,
    /// The algorithm's options, sorted by name (checked in planning).
    pub options: Vec<(String, String)>,
}

/// A fault at a virtual time of a SIMULATED kept leadership, nodes by id.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledFault {
    /// Virtual milliseconds from the start.
    pub at_ms: u64,
    /// The fault (`None`: the request named none).
    pub fault: Option<SimFault>,
}

/// What a [`ScheduledFault`] does.
#[derive(Clone, Debug, PartialEq)]
pub enum SimFault {
    /// Whoever leads crashes.
    CrashLeader,
    /// The node with this id crashes.
    Crash(u64),
    /// The node with this id comes back.
    Recover(u64),
    /// The nodes with these ids are cut off from the others.
    CutOff(Vec<u64>),
    /// Whoever leads is cut off from the others.
    CutOffLeader,
    /// Every partition heals.
    Heal,
    /// The node with this id: its clock runs at this rate.
    Clock(u64, f64),
    /// Whoever leads: its clock runs at this rate.
    LeaderClock(f64),
    /// The node with this id pauses for this many ms.
    Pause(u64, u64),
    /// Whoever leads pauses for this many ms.
    PauseLeader(u64),
}

impl From<pb::ScheduledFault> for ScheduledFault {
    fn from(f: pb::ScheduledFault) -> Self {
        use pb::scheduled_fault::Fault as F;
        // A flag set to false names no fault.
        let fault = f.fault.and_then(|x| match x {
            F::CrashLeader(on) => on.then_some(SimFault::CrashLeader),
            F::CrashId(id) => Some(SimFault::Crash(id)),
            F::RecoverId(id) => Some(SimFault::Recover(id)),
            F::CutOff(set) => Some(SimFault::CutOff(set.ids)),
            F::CutOffLeader(on) => on.then_some(SimFault::CutOffLeader),
            F::Heal(on) => on.then_some(SimFault::Heal),
            F::Clock(c) => Some(SimFault::Clock(c.id, c.rate)),
            F::LeaderClock(rate) => Some(SimFault::LeaderClock(rate)),
            F::Pause(p) => Some(SimFault::Pause(p.id, p.ms)),
            F::PauseLeader(ms) => Some(SimFault::PauseLeader(ms)),
        });
        ScheduledFault { at_ms: f.at_ms, fault }
    }
}

fn enum_field<E: TryFrom<i32>>(field: &'static str, value: i32) -> Result<E, ConvertError> {
    E::try_from(value).map_err(|_| ConvertError::UnknownEnum { field, value })
}

impl TryFrom<pb::StartElectionRequest> for ElectionRequest {
    type Error = ConvertError;

    fn try_from(r: pb::StartElectionRequest) -> Result<Self, ConvertError> {
        let id_order = match enum_field::<pb::IdOrder>("id_order", r.id_order)? {
            pb::IdOrder::Ascending => IdOrder::Ascending,
            pb::IdOrder::Descending => IdOrder::Descending,
            pb::IdOrder::Random | pb::IdOrder::Unspecified => IdOrder::Random(r.seed),
            pb::IdOrder::WorstCase => IdOrder::WorstCase,
            pb::IdOrder::BestCase => IdOrder::BestCase,
        };
        let mode = match enum_field::<pb::Mode>("mode", r.mode)? {
            pb::Mode::Live => Mode::Live,
            pb::Mode::Simulated => Mode::Simulated,
        };
        let (topology, edges, rows, cols) = match r.topology {
            None => (None, Vec::new(), 0, 0),
            Some(t) => (
                topology_from_pb(enum_field("topology.kind", t.kind)?),
                t.edges.iter().map(|e| (e.a, e.b)).collect(),
                t.rows,
                t.cols,
            ),
        };
        let winner = match enum_field::<pb::Winner>("winner", r.winner)? {
            pb::Winner::Default => None,
            pb::Winner::Min => Some(Rule::Min),
            pb::Winner::Max => Some(Rule::Max),
        };
        let drawing = match r.diagram_options {
            None => None,
            Some(o) => Some(crate::elections::Drawing {
                axis: match enum_field::<pb::DiagramAxis>("diagram_options.axis", o.axis)? {
                    pb::DiagramAxis::Unspecified | pb::DiagramAxis::Compressed => Axis::Compressed,
                    pb::DiagramAxis::Time => Axis::Time,
                    pb::DiagramAxis::Causal => Axis::Causal,
                },
                labels: o.labels,
                heartbeats: o.heartbeats,
            }),
        };
        Ok(ElectionRequest {
            algorithm: r.algorithm,
            program: r.program,
            size: r.size,
            id_order,
            ids: r.ids,
            seed: r.seed,
            initiators: r.initiators,
            initiator_ids: r.initiator_ids,
            mode,
            wait: r.wait,
            keep_leader: r.keep_leader,
            detector: r.detector.map(|d| DetectorConfig { period_ms: d.period_ms, timeout_ms: d.timeout_ms }),
            topology,
            edges,
            rows,
            cols,
            winner,
            diagram: r.diagram,
            drawing,
            faults: r.simulation.as_ref().map_or_else(Vec::new, |s| s.faults.iter().cloned().map(Into::into).collect()),
            simulation: r.simulation.map(|s| SimOptions {
                non_fifo: s.non_fifo,
                unit_delay: s.unit_delay,
                diagram: s.diagram,
                horizon_ms: s.horizon_ms,
            }),
            nodes: r.nodes,
            options: {
                let mut o: Vec<(String, String)> = r.options.into_iter().collect();
                o.sort();
                o
            },
        })
    }
}

/// The domain overlay of a protobuf one (`None` for TOPOLOGY_UNSPECIFIED).
pub fn topology_from_pb(t: pb::TopologyKind) -> Option<TopologyKind> {
    match t {
        pb::TopologyKind::TopologyUnspecified => None,
        pb::TopologyKind::RingUnidirectional => Some(TopologyKind::RingUni),
        pb::TopologyKind::RingBidirectional => Some(TopologyKind::RingBi),
        pb::TopologyKind::RingBidirectionalUnoriented => Some(TopologyKind::RingBiUnoriented),
        pb::TopologyKind::Tree => Some(TopologyKind::Tree),
        pb::TopologyKind::Mesh => Some(TopologyKind::Mesh),
        pb::TopologyKind::Complete => Some(TopologyKind::Complete),
        pb::TopologyKind::Graph => Some(TopologyKind::Graph),
        pb::TopologyKind::Torus => Some(TopologyKind::Torus),
        pb::TopologyKind::Hypercube => Some(TopologyKind::Hypercube),
        pb::TopologyKind::CompleteChordal => Some(TopologyKind::CompleteChordal),
    }
}

/// The protobuf overlay of a domain one.
pub fn topology_to_pb(t: TopologyKind) -> pb::TopologyKind {
    match t {
        TopologyKind::RingUni => pb::TopologyKind::RingUnidirectional,
        TopologyKind::RingBi => pb::TopologyKind::RingBidirectional,
        TopologyKind::RingBiUnoriented => pb::TopologyKind::RingBidirectionalUnoriented,
        TopologyKind::Tree => pb::TopologyKind::Tree,
        TopologyKind::Mesh => pb::TopologyKind::Mesh,
        TopologyKind::Complete => pb::TopologyKind::Complete,
        TopologyKind::Graph => pb::TopologyKind::Graph,
        TopologyKind::Torus => pb::TopologyKind::Torus,
        TopologyKind::Hypercube => pb::TopologyKind::Hypercube,
        TopologyKind::CompleteChordal => pb::TopologyKind::CompleteChordal,
    }
}

/// The protobuf winner of a rule.
pub fn winner_to_pb(r: Rule) -> pb::Winner {
    match r {
        Rule::Min => pb::Winner::Min,
        Rule::Max => pb::Winner::Max,
    }
}

impl From<Mode> for pb::Mode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Live => pb::Mode::Live,
            Mode::Simulated => pb::Mode::Simulated,
        }
    }
}

impl From<State> for pb::ElectionState {
    fn from(s: State) -> Self {
        match s {
            State::Pending => pb::ElectionState::Pending,
            State::Running => pb::ElectionState::Running,
            State::Finished => pb::ElectionState::Finished,
            State::Failed => pb::ElectionState::Failed,
        }
    }
}

impl From<&LeaderInfo> for pb::LeaderRef {
    fn from(l: &LeaderInfo) -> Self {
        pb::LeaderRef { node: l.node.clone(), id: l.id, position: l.position }
    }
}

impl From<&LeadershipChange> for pb::LeadershipChange {
    fn from(c: &LeadershipChange) -> Self {
        pb::LeadershipChange {
            position: c.position,
            node: c.node.clone(),
            term: c.term,
            leader_id: c.leader_id.unwrap_or(0),
            at_ms: c.at_ms,
            node_us: c.node_us,
        }
    }
}

impl From<&FailoverRecord> for pb::Failover {
    fn from(f: &FailoverRecord) -> Self {
        pb::Failover {
            leader: Some((&f.leader).into()),
            term: f.term,
            cause: f.cause.to_string(),
            lost_at_ms: f.lost_at_ms,
            detection_ms: f.detection_ms,
            agreement_ms: f.agreement_ms,
            new_leader: f.new_leader.as_ref().map(|(l, _)| l.into()),
            new_term: f.new_leader.as_ref().map_or(0, |(_, t)| *t),
            messages: f.messages,
        }
    }
}

impl From<&Metrics> for pb::Metrics {
    fn from(m: &Metrics) -> Self {
        pb::Metrics {
            messages: m.messages,
            election_messages: m.election_messages,
            notification_messages: m.notification_messages,
            messages_by_kind: m.by_kind.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            bytes: m.bytes,
            ideal_time: m.ideal_time,
            duration_ms: m.duration_ms,
            node_duration_us: m.node_duration_us.unwrap_or(0),
            node_duration_error_us: m.node_duration_error_us,
            bound: m.finite_bound().unwrap_or(0),
            bound_formula: m.bound_formula.to_string(),
            bound_ratio: m.bound_ratio(),
            unbounded: m.bound == UNBOUNDED,
        }
    }
}

/// `"leader"`, `"follower"` or `"undecided"`.
pub fn role_name(d: Option<Decision>) -> &'static str {
    match d.map(|d| d.role) {
        Some(Role::Leader) => "leader",
        Some(Role::Follower) => "follower",
        None => "undecided",
    }
}

impl From<&Participant> for pb::Participant {
    fn from(p: &Participant) -> Self {
        pb::Participant {
            position: p.position,
            node: p.node.clone(),
            id: p.id,
            initiator: p.initiator,
            role: role_name(p.decision).to_string(),
            leader_id: p.decision.map(|d| d.leader).unwrap_or(0),
            messages_sent: p.messages_sent,
        }
    }
}

impl From<&ElectionRecord> for pb::Election {
    fn from(r: &ElectionRecord) -> Self {
        election(r, true)
    }
}

/// The record as the API shows it; `whole`: with its participants, timeline and diagram.
fn election(r: &ElectionRecord, whole: bool) -> pb::Election {
    {
        pb::Election {
            election_id: r.id.clone(),
            algorithm: r.algorithm.to_string(),
            mode: pb::Mode::from(r.mode) as i32,
            state: pb::ElectionState::from(r.state) as i32,
            topology: topology_to_pb(r.topology) as i32,
            winner: winner_to_pb(r.rule) as i32,
            n: r.n,
            k: r.k,
            seed: r.seed,
            leader: r.leader.as_ref().map(Into::into),
            agreed: r.agreed,
            violations: r.violations.clone(),
            metrics: r.metrics.as_ref().map(Into::into),
            participants: if whole { r.participants.iter().map(Into::into).collect() } else { Vec::new() },
            error: r.error.clone().unwrap_or_default(),
            started_at_ms: r.started_at_ms,
            keep_leader: r.keep_leader,
            term: r.term,
            timeline: if whole { r.timeline.iter().map(Into::into).collect() } else { Vec::new() },
            overlaps: r.overlaps.clone(),
            failovers: r.failovers.iter().map(Into::into).collect(),
            diagram_svg: if whole { r.diagram_svg.as_deref().unwrap_or_default().to_string() } else { String::new() },
            notes: r.notes.clone(),
            options: r.options.iter().cloned().collect(),
            fencing: r.fencing.map(|f| pb::Fencing {
                writes: f.writes,
                stale_writes: f.stale,
                stale_accepted: f.stale_accepted,
                stale_accepted_unfenced: f.stale_accepted_unfenced,
                truncated: f.truncated,
            }),
        }
    }
}

/// Unix milliseconds as RFC 3339 in UTC, e.g. `2026-11-22T03:04:05.678Z`.
pub fn rfc3339(unix_ms: u64) -> String {
    let (secs, ms) = (unix_ms / 1000, unix_ms % 1000);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The election without its participants, timeline and diagram (for lists
/// and watchers: GetElection has them), none of which is copied.
pub fn election_summary(r: &ElectionRecord) -> pb::Election {
    election(r, false)
}

/// The catalogue entry as `ListAlgorithms` shows it.
pub fn algorithm_info(s: &AlgorithmSpec) -> pb::AlgorithmInfo {
    {
        pb::AlgorithmInfo {
            program: crate::programs::is_program(s),
            name: s.name.to_string(),
            title: s.title.to_string(),
            source: s.source.to_string(),
            topologies: s.topologies.iter().map(|t| topology_to_pb(*t) as i32).collect(),
            default_topology: topology_to_pb(s.default_topology()) as i32,
            assumptions: Some(pb::Assumptions {
                bidirectional: s.assumptions.bidirectional,
                oriented: s.assumptions.oriented,
                fifo: s.assumptions.fifo,
            }),
            winner: winner_to_pb(s.rule) as i32,
            bound_formula: s.bound_formula.to_string(),
            description: s.description.to_string(),
            worst_case: s.extras.worst_case.map(|a| a.description.to_string()).unwrap_or_default(),
            best_case: s.extras.best_case.map(|a| a.description.to_string()).unwrap_or_default(),
            candidates: s.candidates.describe().to_string(),
            options: s
                .extras
                .options
                .iter()
                .map(|o| pb::AlgorithmOption {
                    name: o.name.to_string(),
                    help: o.help.to_string(),
                    per_node: o.per_node,
                    kept_only: o.kept_only,
                })
                .collect(),
            anonymous: s.extras.anonymous,
            unbounded: s.unbounded(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Itai-Rodeh has no finite message bound: ListAlgorithms flags it `unbounded` (and no other
    /// built-in), and its elections' metrics give bound 0 and ratio 0 with the flag, never the
    /// sentinel figure or a ratio against it; a finite bound passes through with its ratio.
    #[test]
    fn an_unbounded_bound_is_flagged_not_shown() {
        let flagged: Vec<_> = ringleader_core::algo::catalogue::CATALOGUE
            .iter()
            .filter(|s| algorithm_info(s).unbounded)
            .map(|s| s.name)
            .collect();
        assert_eq!(flagged, ["itai-rodeh"]);
        let unbounded = Metrics {
            messages: 26,
            bound: ringleader_core::spec::UNBOUNDED,
            bound_formula: "unbounded",
            ..Metrics::default()
        };
        let m = pb::Metrics::from(&unbounded);
        assert_eq!((m.bound, m.bound_ratio, m.unbounded), (0, 0.0, true));
        let m = pb::Metrics::from(&Metrics { messages: 6, bound: 12, bound_formula: "n", ..Metrics::default() });
        assert_eq!((m.bound, m.bound_ratio, m.unbounded), (12, 0.5, false));
    }

    /// RFC 3339 formatting of Unix milliseconds matches known dates (epoch, a leap day, this session).
    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_795_316_645_000), "2026-11-22T03:04:05.000Z");
    }

    /// Defaults decode to RANDOM ids from the seed, LIVE, the algorithm's own topology and rule.
    #[test]
    fn defaults() {
        let r = ElectionRequest::try_from(pb::StartElectionRequest {
            algorithm: "as-far".into(),
            seed: 5,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.id_order, IdOrder::Random(5));
        assert_eq!((r.mode, r.topology, r.winner, r.simulation), (Mode::Live, None, None, None));
    }

    /// Enum numbers the API does not define are errors naming the field.
    #[test]
    fn unknown_enums_name_the_field() {
        let bad = |r: pb::StartElectionRequest| ElectionRequest::try_from(r).unwrap_err().field();
        assert_eq!(bad(pb::StartElectionRequest { id_order: 9, ..Default::default() }), "id_order");
        assert_eq!(bad(pb::StartElectionRequest { mode: 9, ..Default::default() }), "mode");
        assert_eq!(bad(pb::StartElectionRequest { winner: 9, ..Default::default() }), "winner");
        let topology = Some(pb::Topology { kind: 99, edges: vec![], ..Default::default() });
        assert_eq!(bad(pb::StartElectionRequest { topology, ..Default::default() }), "topology.kind");
    }

    /// Overlay kinds survive a round trip.
    #[test]
    fn topology_round_trip() {
        for t in [TopologyKind::RingUni, TopologyKind::RingBi, TopologyKind::RingBiUnoriented] {
            assert_eq!(topology_from_pb(topology_to_pb(t)), Some(t));
        }
    }
}
