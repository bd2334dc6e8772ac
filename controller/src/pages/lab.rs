//! The lab's calls: the `POST /lab/…` requests its page at `/`
//! ([`super::lab_page`]) makes.
//!
//! Each call runs the gRPC method it stands for in process, so the
//! page meets exactly the API's refusals (the field named) and its
//! credentials: the page sends the controller's token, entered once and
//! kept in the tab, as `Authorization: Bearer`, and the method checks it as
//! it checks gRPC metadata.
//!
//! The calls change state, so they are guarded against other sites (see
//! [`guard`]): a cross-site page cannot send them (a custom header and a
//! JSON body need a CORS preflight, which the port never grants), a request
//! from another origin is refused, and without a token a request must
//! address the port by an IP address or `localhost`, so a name rebound to
//! 127.0.0.1 by an attacker's DNS does not reach the lab either.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_server::Controller as _;
use serde::Deserialize;

use crate::api::ControllerService;

/// The header every lab call carries: a cross-site page cannot add it
/// without a preflight the port never grants.
pub const LAB_HEADER: &str = "x-ringleader-lab";

/// The largest body a lab call may send.
pub(super) const MAX_BODY: usize = 16 * 1024;

/// What the lab's calls reach: the Controller service, and whether it asks for a token.
#[derive(Clone, Debug)]
pub struct Lab {
    /// The service the calls run.
    pub service: ControllerService,
    /// The controller requires a token (`auth.token`).
    pub token_required: bool,
}

/// A refused lab call (a JSON line): the HTTP status, the gRPC code's name, the field at
/// fault (empty if none) and the message.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Refusal {
    status: StatusCode,
    code: &'static str,
    field: String,
    message: String,
}

impl Refusal {
    pub(super) fn new(status: StatusCode, code: &'static str, field: &str, message: impl Into<String>) -> Self {
        Refusal { status, code, field: field.to_string(), message: message.into() }
    }

    /// The refusal a gRPC status makes, with the field it names
    /// ([`crate::error::field_of`]: a field name of lower-case words).
    pub(super) fn of_status(s: &tonic::Status) -> Self {
        use tonic::Code;
        let (status, code) = match s.code() {
            Code::InvalidArgument => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
            Code::FailedPrecondition => (StatusCode::PRECONDITION_FAILED, "FAILED_PRECONDITION"),
            Code::Unauthenticated => (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED"),
            Code::PermissionDenied => (StatusCode::FORBIDDEN, "PERMISSION_DENIED"),
            Code::NotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            Code::ResourceExhausted => (StatusCode::TOO_MANY_REQUESTS, "RESOURCE_EXHAUSTED"),
            Code::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
        };
        let field = match crate::error::field_of(s) {
            Some(f) if !f.is_empty() && f.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c == '.') => f,
            _ => "",
        };
        Refusal::new(status, code, field, s.message())
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "code": self.code, "field": self.field, "message": self.message });
        (self.status, [(header::CONTENT_TYPE, "application/json")], format!("{body}\n")).into_response()
    }
}

/// Refuse a lab call that could come from another site (see the module docs).
pub(super) fn guard(headers: &HeaderMap, token_required: bool) -> Result<(), Refusal> {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let forbidden = |why: &str| Refusal::new(StatusCode::FORBIDDEN, "PERMISSION_DENIED", "", why);
    if headers.get(LAB_HEADER).is_none() {
        return Err(forbidden("lab calls carry the x-ringleader-lab header (the lab page sends it)"));
    }
    if !text(header::CONTENT_TYPE).is_some_and(|c| c.starts_with("application/json")) {
        return Err(forbidden("lab calls send JSON (content-type: application/json)"));
    }
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && site != "same-origin"
        && site != "none"
    {
        return Err(forbidden("lab calls come from the lab page itself, not from another site"));
    }
    let host = text(header::HOST).unwrap_or("");
    if let Some(origin) = text(header::ORIGIN)
        && origin != format!("http://{host}")
        && origin != format!("https://{host}")
    {
        return Err(forbidden("lab calls come from the lab page itself, not from another origin"));
    }
    if !token_required && !local_host(host) {
        return Err(forbidden(
            "without a controller token the lab changes state only when addressed by an IP address or localhost \
             (a guard against DNS rebinding); set auth.token to use it by a name",
        ));
    }
    Ok(())
}

/// Whether `host` (a Host header: name or address, maybe a port) is an IP address or localhost.
fn local_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name == "localhost" || name.parse::<std::net::IpAddr>().is_ok()
}

/// Run a lab call: guarded, its JSON body read into `T`, the bearer token
/// passed on as gRPC metadata.
pub(super) fn request<T: for<'de> Deserialize<'de>>(
    lab: &Lab,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<tonic::Request<T>, Refusal> {
    guard(headers, lab.token_required)?;
    let value: T = serde_json::from_slice(body)
        .map_err(|e| Refusal::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "", format!("body: {e}")))?;
    let mut request = tonic::Request::new(value);
    if let Some(auth) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
        && let Ok(v) = auth.parse()
    {
        request.metadata_mut().insert("authorization", v);
    }
    Ok(request)
}

/// What the lab's form sends to start an election (every field optional but the algorithm).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LabStart {
    /// Catalogue name.
    pub algorithm: String,
    /// Positions (0: the API's default, or the number of ids typed).
    pub size: u32,
    /// Ids typed, e.g. `5 1 8 3` (empty: arranged by `arrangement`).
    pub ids: String,
    /// `random`, `ascending`, `descending`, `worst` or `best` (empty: the API's default).
    pub arrangement: String,
    /// The initiators' ids, e.g. `5 8` (empty: every node).
    pub initiators: String,
    /// SIMULATED instead of LIVE.
    pub simulated: bool,
    /// Unit delays (SIMULATED).
    pub unit_delay: bool,
    /// Seed (0: the API's default).
    pub seed: u64,
    /// Keep a leader until stopped.
    pub keep_leader: bool,
    /// Failure detector period, ms (0: the default).
    pub detector_period_ms: u64,
    /// Failure detector timeout, ms (0: the default).
    pub detector_timeout_ms: u64,
    /// A SIMULATED kept leadership: how long it runs, virtual ms (0: the default).
    pub horizon_ms: u64,
    /// A SIMULATED kept leadership's fault: empty (none), `crash_leader`, `crash` (the node
    /// `fault_id`) or `cut_off_leader`.
    pub fault: String,
    /// When the fault happens, virtual ms.
    pub fault_at_ms: u64,
    /// The id a `crash` crashes.
    pub fault_id: u64,
    /// When a `crash` recovers or a `cut_off_leader` heals, virtual ms (0: never).
    pub undo_at_ms: u64,
    /// The diagram's axis: empty or `compressed` (the default), `time` (to scale) or `causal`
    /// (Lamport's clock).
    pub axis: String,
    /// Label each arrow with what it carries.
    pub labels: bool,
    /// Draw a SIMULATED kept leadership's heartbeats too (left out by default).
    pub heartbeats: bool,
    /// The algorithm's options, `name=value` separated by spaces or commas, e.g.
    /// `pre_vote=true lease=true` (ListAlgorithms lists each algorithm's).
    pub options: String,
}

/// The options in `text`: `name=value` words separated by spaces (a per-node value is itself
/// comma-separated, so words split on spaces only); refused naming `options`.
fn options_in(text: &str) -> Result<std::collections::HashMap<String, String>, crate::error::RequestError> {
    text.split_whitespace()
        .map(|w| {
            w.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).ok_or_else(|| {
                crate::error::RequestError::invalid("options", format!("`{w}` is not name=value (e.g. pre_vote=true)"))
            })
        })
        .collect()
}

/// The ids in `text`, separated by spaces or commas; refused naming `field`.
fn ids_in(text: &str, field: &'static str) -> Result<Vec<u64>, crate::error::RequestError> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.parse::<u64>().map_err(|_| {
                crate::error::RequestError::invalid(field, format!("`{w}` is not an id (a whole number, e.g. 5 1 8 3)"))
            })
        })
        .collect()
}

impl LabStart {
    /// The StartElection request the form means (not waited for; drawn when it has at most
    /// [`MAX_DIAGRAM_NODES`](crate::elections::MAX_DIAGRAM_NODES) nodes).
    pub fn to_request(&self) -> Result<pb::StartElectionRequest, crate::error::RequestError> {
        let id_order = match self.arrangement.as_str() {
            "" => pb::IdOrder::Unspecified,
            "random" => pb::IdOrder::Random,
            "ascending" => pb::IdOrder::Ascending,
            "descending" => pb::IdOrder::Descending,
            "worst" => pb::IdOrder::WorstCase,
            "best" => pb::IdOrder::BestCase,
            other => {
                return Err(crate::error::RequestError::invalid(
                    "id_order",
                    format!("unknown arrangement `{other}`; random, ascending, descending, worst or best"),
                ));
            }
        };
        let faults = self.scheduled()?;
        let detector = (self.detector_period_ms > 0 || self.detector_timeout_ms > 0).then_some(pb::FailureDetector {
            period_ms: self.detector_period_ms,
            timeout_ms: self.detector_timeout_ms,
        });
        let axis = match self.axis.as_str() {
            "" | "compressed" => pb::DiagramAxis::Unspecified,
            "time" => pb::DiagramAxis::Time,
            "causal" => pb::DiagramAxis::Causal,
            other => {
                return Err(crate::error::RequestError::invalid(
                    "diagram_options.axis",
                    format!("unknown axis `{other}`; compressed, time or causal"),
                ));
            }
        };
        let ids = ids_in(&self.ids, "ids")?;
        // A diagram is drawn for at most MAX_DIAGRAM_NODES nodes: a larger election runs without one.
        let n = if ids.is_empty() { self.size } else { ids.len() as u32 };
        let drawn = n <= crate::elections::MAX_DIAGRAM_NODES;
        let chosen = self.labels || self.heartbeats || axis != pb::DiagramAxis::Unspecified;
        let options = (drawn && chosen).then_some(pb::DiagramOptions {
            axis: axis as i32,
            labels: self.labels,
            heartbeats: self.heartbeats,
        });
        Ok(pb::StartElectionRequest {
            algorithm: self.algorithm.clone(),
            size: self.size,
            id_order: id_order as i32,
            ids,
            seed: self.seed,
            initiator_ids: ids_in(&self.initiators, "initiator_ids")?,
            mode: if self.simulated { pb::Mode::Simulated } else { pb::Mode::Live } as i32,
            simulation: self.simulated.then_some(pb::SimulationOptions {
                unit_delay: self.unit_delay,
                horizon_ms: if self.keep_leader { self.horizon_ms } else { 0 },
                faults,
                ..Default::default()
            }),
            keep_leader: self.keep_leader,
            detector,
            diagram: drawn,
            diagram_options: options,
            options: options_in(&self.options)?,
            ..Default::default()
        })
    }
}

impl LabStart {
    /// The scheduled faults the form means: the fault and, for a crash by id or a cut-off
    /// leader, its undoing (a recovery, a heal).
    fn scheduled(&self) -> Result<Vec<pb::ScheduledFault>, crate::error::RequestError> {
        use pb::scheduled_fault::Fault as F;
        let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
        let (fault, undo) = match self.fault.as_str() {
            "" => return Ok(Vec::new()),
            "crash_leader" => (F::CrashLeader(true), None),
            "crash" => (F::CrashId(self.fault_id), Some(F::RecoverId(self.fault_id))),
            "cut_off_leader" | "slow_cut_off_leader" => (F::CutOffLeader(true), Some(F::Heal(true))),
            other => {
                return Err(crate::error::RequestError::invalid(
                    "simulation.faults",
                    format!("unknown fault `{other}`; crash_leader, crash, cut_off_leader or slow_cut_off_leader"),
                ));
            }
        };
        if !(self.simulated && self.keep_leader) {
            return Err(crate::error::RequestError::invalid(
                "simulation.faults",
                "a fault is scheduled for a SIMULATED kept leadership only; break a LIVE one from its page",
            ));
        }
        let mut faults = vec![at(self.fault_at_ms, fault)];
        if self.fault == "slow_cut_off_leader" {
            // The leader's clock at half speed first, so that its lease outlives its successor's wait.
            faults.insert(0, at(self.fault_at_ms, F::LeaderClock(0.5)));
        }
        match undo {
            Some(undo) if self.undo_at_ms > 0 => {
                if self.undo_at_ms <= self.fault_at_ms {
                    return Err(crate::error::RequestError::invalid(
                        "simulation.faults",
                        format!(
                            "the fault is undone at {} ms, not after it ({} ms)",
                            self.undo_at_ms, self.fault_at_ms
                        ),
                    ));
                }
                faults.push(at(self.undo_at_ms, undo));
            }
            None if self.undo_at_ms > 0 => {
                return Err(crate::error::RequestError::invalid(
                    "simulation.faults",
                    "the crashed leader is not known in advance: crash a node by id to recover it",
                ));
            }
            _ => {}
        }
        Ok(faults)
    }
}

/// `POST /lab/start`: start the election a [`LabStart`] describes; answers
/// `{"electionId": …}` or a [`Refusal`].
pub(super) async fn start(State(lab): State<Lab>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let request = match request::<LabStart>(&lab, &headers, &body) {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    let (metadata, extensions, form) = request.into_parts();
    let mut start = match form.to_request() {
        Ok(s) => s,
        Err(e) => return Refusal::of_status(&e.into()).into_response(),
    };
    // The form lists the installed programs with the algorithms; the API takes them as `program`.
    if lab.service.programs().find(&start.algorithm).is_some() {
        start.program = std::mem::take(&mut start.algorithm);
    }
    match lab.service.start_election(tonic::Request::from_parts(metadata, extensions, start)).await {
        Ok(answer) => {
            let id = answer.into_inner().election_id;
            let body = serde_json::json!({ "electionId": id });
            ([(header::CONTENT_TYPE, "application/json")], format!("{body}\n")).into_response()
        }
        Err(status) => Refusal::of_status(&status).into_response(),
    }
}

/// What a page asks of a running election: break it, heal it or stop it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LabAction {
    /// The election the page shows. Its faults are scoped to it
    /// (`InjectFaultRequest.election_id`): they touch that election alone,
    /// and end with it; empty: node-wide, as an operator's gRPC call. `stop`
    /// stops it; `clear` clears its faults.
    pub election_id: String,
    /// `crash`, `recover`, `partition` (the nodes from the rest), `drop` (the next message from the
    /// first node to the second), `clear` (the election's faults; with `fault_id`, that fault; with
    /// neither, every fault the lab set: those scoped to an election) or `stop`.
    pub action: String,
    /// The nodes it concerns, by name.
    pub nodes: Vec<String>,
    /// Every node of the election, by name (for `partition`: the rest are the other side).
    pub all: Vec<String>,
    /// For `drop`: the kind of message dropped (a `messages_by_kind` name; empty: any kind).
    pub kind: String,
    /// For `clear`: the one fault to clear (a fault id, as `GET /lab/cluster` lists them).
    pub fault_id: String,
}

/// `POST /lab/act`: crash or recover nodes, cut them off, drop the next
/// message of a kind on a link (each a fault scoped to the election shown),
/// clear faults, or stop the election, each through its gRPC method; answers
/// `{"done": …}` (what was done) or a [`Refusal`].
pub(super) async fn act(State(lab): State<Lab>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let request = match request::<LabAction>(&lab, &headers, &body) {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    let (metadata, extensions, action) = request.into_parts();
    let with = |m: &tonic::metadata::MetadataMap| tonic::Request::from_parts(m.clone(), extensions.clone(), ());
    let call = |kind: pb::inject_fault_request::Kind| {
        let fault =
            pb::InjectFaultRequest { kind: Some(kind), election_id: action.election_id.clone(), ..Default::default() };
        with(&metadata).map(|()| fault)
    };
    let nodes_needed = || {
        (action.nodes.is_empty()).then(|| {
            Refusal::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "nodes", "nodes: select at least one node")
        })
    };
    use pb::inject_fault_request::Kind;
    let result: Result<String, tonic::Status> = match action.action.as_str() {
        "crash" | "recover" => {
            if let Some(r) = nodes_needed() {
                return r.into_response();
            }
            let mut done = Vec::new();
            for node in &action.nodes {
                let kind = if action.action == "crash" {
                    Kind::Crash(pb::CrashFault { node: node.clone(), ..Default::default() })
                } else {
                    Kind::Recover(pb::RecoverFault { node: node.clone() })
                };
                match lab.service.inject_fault(call(kind)).await {
                    Ok(f) => done.push(f.into_inner().description),
                    Err(status) => return Refusal::of_status(&status).into_response(),
                }
            }
            Ok(done.join("; "))
        }
        "partition" => {
            if let Some(r) = nodes_needed() {
                return r.into_response();
            }
            let rest: Vec<String> = action.all.iter().filter(|n| !action.nodes.contains(n)).cloned().collect();
            let groups = vec![pb::NodeGroup { nodes: action.nodes.clone() }, pb::NodeGroup { nodes: rest }];
            lab.service
                .inject_fault(call(Kind::Partition(pb::PartitionFault { groups })))
                .await
                .map(|f| f.into_inner().description)
        }
        "drop" => {
            // The next message of `kind` from the first node to the second is lost.
            let [from, to] = action.nodes.as_slice() else {
                return Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "INVALID_ARGUMENT",
                    "nodes",
                    "nodes: select two nodes, the sender first, then the receiver",
                )
                .into_response();
            };
            let link = pb::LinkFaultSpec {
                from: from.clone(),
                to: to.clone(),
                drop: 1.0,
                kind: action.kind.trim().to_string(),
                nth: 1,
                ..Default::default()
            };
            lab.service.inject_fault(call(Kind::Link(link))).await.map(|f| f.into_inner().description)
        }
        "clear" => clear(&lab, &metadata, &action).await,
        "stop" => {
            let stop = pb::StopElectionRequest { election_id: action.election_id.clone() };
            lab.service
                .stop_election(with(&metadata).map(|()| stop))
                .await
                .map(|_| format!("stopped {}", action.election_id))
        }
        other => {
            return Refusal::new(
                StatusCode::BAD_REQUEST,
                "INVALID_ARGUMENT",
                "action",
                format!("action: unknown `{other}`; crash, recover, partition, drop, clear or stop"),
            )
            .into_response();
        }
    };
    match result {
        Ok(done) => {
            let body = serde_json::json!({ "done": done });
            ([(header::CONTENT_TYPE, "application/json")], format!("{body}\n")).into_response()
        }
        Err(status) => Refusal::of_status(&status).into_response(),
    }
}

/// The lab's `clear`: one fault (`fault_id`), the faults of the election
/// shown (`election_id`), or (neither) every fault the lab set: those
/// scoped to an election. Node-wide faults (an operator's) stay unless
/// named by id.
async fn clear(
    lab: &Lab,
    metadata: &tonic::metadata::MetadataMap,
    action: &LabAction,
) -> Result<String, tonic::Status> {
    let ask = |fault_id: String, election_id: String| {
        let mut r = tonic::Request::new(pb::ClearFaultsRequest { fault_id, election_id });
        *r.metadata_mut() = metadata.clone();
        r
    };
    let elections: Vec<String> = if !action.fault_id.is_empty() || !action.election_id.is_empty() {
        vec![action.election_id.clone()]
    } else {
        let mut list = tonic::Request::new(pb::ListFaultsRequest {});
        *list.metadata_mut() = metadata.clone();
        let faults = lab.service.list_faults(list).await?.into_inner().faults;
        let mut scopes: Vec<String> = faults.into_iter().map(|f| f.election_id).filter(|e| !e.is_empty()).collect();
        scopes.sort();
        scopes.dedup();
        scopes
    };
    if !action.fault_id.is_empty() {
        lab.service.clear_faults(ask(action.fault_id.clone(), String::new())).await?;
        return Ok(format!("cleared {}", action.fault_id));
    }
    let mut cleared = 0;
    for election in elections {
        cleared += lab.service.clear_faults(ask(String::new(), election)).await?.into_inner().cleared;
    }
    Ok(format!("cleared {cleared} fault(s)"))
}

/// `GET /lab/cluster`: the cluster as the lab's front page draws it (JSON):
/// each node (`name`, `address`, `reachable`: it answers the controller,
/// `crashed`: a node-wide crash fault holds it, `elections` it holds,
/// `error` when it does not answer), and every fault held (`id`,
/// `description`, `state`: ACTIVE, SCHEDULED or WAITING, `electionId`: the
/// election it is scoped to, empty when node-wide). A read: it asks what
/// the pages' reads ask (`auth.protect_reads`), and runs GetCluster and
/// ListFaults with the caller's token.
pub(super) async fn cluster(State(lab): State<Lab>, headers: HeaderMap) -> Response {
    let ask = || {
        let mut r = tonic::Request::new(());
        if let Some(auth) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
            && let Ok(v) = auth.parse()
        {
            r.metadata_mut().insert("authorization", v);
        }
        r
    };
    let nodes = match lab.service.get_cluster(ask().map(|()| pb::GetClusterRequest {})).await {
        Ok(c) => c.into_inner().nodes,
        Err(status) => return Refusal::of_status(&status).into_response(),
    };
    let faults = match lab.service.list_faults(ask().map(|()| pb::ListFaultsRequest {})).await {
        Ok(f) => f.into_inner().faults,
        Err(status) => return Refusal::of_status(&status).into_response(),
    };
    let active = |f: &pb::FaultInfo| f.state == pb::FaultState::Active as i32;
    let crashed = |name: &str| {
        faults.iter().filter(|f| active(f) && f.election_id.is_empty()).any(|f| {
            matches!(f.fault.as_ref().and_then(|r| r.kind.as_ref()),
                Some(pb::inject_fault_request::Kind::Crash(c)) if c.node == name)
        })
    };
    let nodes: Vec<serde_json::Value> = nodes
        .iter()
        .map(|n| {
            serde_json::json!({
                "name": n.name, "address": n.address, "reachable": n.reachable, "crashed": crashed(&n.name),
                "elections": n.elections, "error": n.error,
            })
        })
        .collect();
    let faults: Vec<serde_json::Value> = faults
        .iter()
        .map(|f| {
            let state = pb::FaultState::try_from(f.state).map_or("UNSPECIFIED", |s| s.as_str_name());
            serde_json::json!({
                "id": f.fault_id, "description": f.description, "state": state, "electionId": f.election_id,
            })
        })
        .collect();
    let body = serde_json::json!({ "nodes": nodes, "faults": faults });
    ([(header::CONTENT_TYPE, "application/json")], format!("{body}\n")).into_response()
}

/// What the lab's check form sends: a small election to check on every schedule.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LabCheck {
    /// Catalogue name.
    pub algorithm: String,
    /// Nodes (0: the checker's default).
    pub n: u32,
    /// The ids in ring order (empty: 1..=n); the same id on every node is an anonymous ring.
    pub ids: Vec<u64>,
    /// Links may reorder messages; unticked, every link is FIFO.
    pub any_order: bool,
    /// Check the kept leadership (failure-tolerant algorithms).
    pub kept: bool,
    /// Crashes, losses and partitions the schedules may hold (kept only).
    pub crashes: u32,
    /// Messages lost.
    pub losses: u32,
    /// Partitions.
    pub partitions: u32,
    /// The state budget (0: the API's, [`crate::check::DEFAULT_MAX_STATES`]), which decides where
    /// "holds where explored" ends.
    pub max_states: u64,
    /// How long the check may run once it has its turn, seconds: a safety stop behind the state
    /// budget (0: 60 s; at most the API's 600).
    pub timeout_s: u32,
    /// Random walks instead of every schedule (`CheckRequest.simulate`).
    pub simulate: bool,
    /// With `simulate`: walks (0: the API's default).
    pub walks: u32,
    /// With `simulate`: the most moves a walk takes (0: the API's default).
    pub walk_depth: u32,
    /// With `simulate`: the first walk's seed, in decimal (empty: 0). A string, since a walk's
    /// seed takes 64 bits and a page's numbers hold 53.
    pub walk_seed: String,
}

/// How long a lab check may run when the form names no time: every check of the teaching sheets
/// finishes within its state budget well inside it.
const LAB_CHECK_SECONDS: u32 = 60;

/// `POST /lab/check`: CheckAlgorithm run to its verdict. A refused request
/// answers a [`Refusal`] alone; else the answer (`application/x-ndjson`) is a
/// JSON line per event as the check goes: `{"position": 3, "waiting": 5}`
/// while it waits in the queue (1: next; lines as it moves up) and
/// `{"position": 0, "waiting": …}` when it starts running;
/// `{"running": true, "states": …, "depth": …, "elapsed_s": …}` as it runs;
/// and last the verdict: `{"holds", "complete", "states", "summary",
/// "stopped_by", "cached", "shared", "counterexample", "walks"}` (`walks`: with `simulate`, the
/// walks' figures, their verdict in words and the violating walk's seed as a string), the shortest
/// counterexample if any (its property, its steps in words, its error, its
/// note (a liveness caveat, see `CheckCounterexample.note`), its rounds (the
/// symmetric execution, see `CheckCounterexample.rounds`) and its diagram), or a refusal line (`{"code", "field", "message"}`) if it
/// could not run.
pub(super) async fn check(State(lab): State<Lab>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    use pb::check_event::Kind;
    use tokio_stream::StreamExt as _;
    let request = match request::<LabCheck>(&lab, &headers, &body) {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    let (metadata, extensions, form) = request.into_parts();
    let walk_seed = match form.walk_seed.trim() {
        "" => 0,
        seed => match seed.parse::<u64>() {
            Ok(seed) => seed,
            Err(_) => {
                let why = format!("{seed:?} is not a whole number from 0 to {}", u64::MAX);
                return Refusal::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "walk_seed", why).into_response();
            }
        },
    };
    let ask = pb::CheckRequest {
        algorithm: form.algorithm,
        n: form.n,
        ids: form.ids,
        any_order: form.any_order,
        // The box unticked means what it says: links keep their order (as the runtime's one
        // stream per link does, and as the explorer explores), whatever the algorithm assumes.
        fifo: !form.any_order,
        kept: form.kept,
        crashes: form.crashes,
        losses: form.losses,
        partitions: form.partitions,
        max_states: form.max_states,
        timeout_s: if form.timeout_s == 0 { LAB_CHECK_SECONDS } else { form.timeout_s },
        simulate: form.simulate,
        walks: form.walks,
        walk_depth: form.walk_depth,
        walk_seed,
        ..Default::default()
    };
    let events = match lab.service.check_algorithm(tonic::Request::from_parts(metadata, extensions, ask)).await {
        Ok(stream) => stream.into_inner(),
        Err(status) => return Refusal::of_status(&status).into_response(),
    };
    let line = |event: Result<pb::CheckEvent, tonic::Status>| -> Option<String> {
        let json = match event {
            Ok(pb::CheckEvent { kind: Some(Kind::Queued(q)) }) => {
                serde_json::json!({ "position": q.position, "waiting": q.waiting })
            }
            Ok(pb::CheckEvent { kind: Some(Kind::Progress(p)) }) => {
                serde_json::json!({ "running": true, "states": p.states, "depth": p.depth, "elapsed_s": p.elapsed_s })
            }
            Ok(pb::CheckEvent { kind: Some(Kind::Verdict(v)) }) => {
                let counterexample = v.counterexamples.first().map(
                    |c| serde_json::json!({ "property": c.property, "steps": c.steps, "error": c.error, "svg": c.svg, "note": c.note, "rounds": c.rounds }),
                );
                serde_json::json!({
                    "holds": v.holds,
                    "complete": v.complete,
                    "states": v.states,
                    "summary": v.summary,
                    "stopped_by": v.stopped_by,
                    "cached": v.cached,
                    "shared": v.shared,
                    "counterexample": counterexample,
                    "walks": v.walks.map(|w| serde_json::json!({
                        "walks": w.walks,
                        "depth": w.depth,
                        "states": w.states,
                        "deepest": w.deepest,
                        "verdict": w.verdict,
                        "violated": w.violated,
                        "violation_walk": w.violation_walk,
                        "violation_seed": w.violation_seed.to_string(),
                    })),
                })
            }
            Ok(pb::CheckEvent { kind: None }) => return None,
            Err(status) => {
                let r = Refusal::of_status(&status);
                serde_json::json!({ "code": r.code, "field": r.field, "message": r.message })
            }
        };
        Some(format!("{json}\n"))
    };
    let lines = events.filter_map(line).map(Ok::<_, std::convert::Infallible>);
    ([(header::CONTENT_TYPE, "application/x-ndjson")], axum::body::Body::from_stream(lines)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    const LAB_CALL: [(&str, &str); 3] =
        [("x-ringleader-lab", "1"), ("content-type", "application/json"), ("host", "127.0.0.1:9464")];

    /// A call from the lab page passes; one without the lab header or JSON (what a cross-site form
    /// can send), from another site or origin, or without a token by a DNS name, is refused.
    #[test]
    fn only_the_lab_page_itself_may_change_state() {
        assert_eq!(guard(&headers(&LAB_CALL), false), Ok(()));
        let with = |extra: (&'static str, &str)| {
            let mut h = headers(&LAB_CALL);
            h.insert(extra.0, HeaderValue::from_str(extra.1).unwrap());
            h
        };
        assert_eq!(guard(&with(("origin", "http://127.0.0.1:9464")), false), Ok(()));
        assert_eq!(guard(&with(("sec-fetch-site", "same-origin")), false), Ok(()));
        assert_eq!(guard(&with(("host", "[::1]:9464")), false), Ok(()));
        assert_eq!(guard(&with(("host", "localhost:9464")), false), Ok(()));
        let refused = |h: HeaderMap, token: bool| guard(&h, token).map_err(|r| r.status);
        assert_eq!(refused(headers(&LAB_CALL[1..]), false), Err(StatusCode::FORBIDDEN));
        assert_eq!(refused(with(("content-type", "text/plain")), false), Err(StatusCode::FORBIDDEN));
        assert_eq!(refused(with(("sec-fetch-site", "cross-site")), false), Err(StatusCode::FORBIDDEN));
        assert_eq!(refused(with(("origin", "http://evil.example")), false), Err(StatusCode::FORBIDDEN));
        assert_eq!(refused(with(("host", "rebound.example:9464")), false), Err(StatusCode::FORBIDDEN));
        assert_eq!(guard(&with(("host", "ringleader.lab:9464")), true), Ok(()), "a name, with a token");
    }

    /// The form becomes the StartElection request it means, and typed ids that are not numbers are
    /// refused naming the field (`ids`, `initiator_ids`), as is an unknown arrangement (`id_order`)
    /// or axis (`diagram_options.axis`); the axis, labels and heartbeats chosen become the diagram's options;
    /// an election of more than 256 nodes asks for no diagram (the API would refuse it).
    #[test]
    fn the_form_is_a_start_request() {
        let form = LabStart {
            algorithm: "as-far".into(),
            ids: "5 1, 8 3".into(),
            initiators: "8".into(),
            simulated: true,
            unit_delay: true,
            keep_leader: false,
            detector_timeout_ms: 300,
            ..LabStart::default()
        };
        let r = form.to_request().unwrap();
        assert_eq!((r.ids, r.initiator_ids), (vec![5, 1, 8, 3], vec![8]));
        assert_eq!(r.mode, pb::Mode::Simulated as i32);
        assert!(r.simulation.unwrap().unit_delay && r.diagram && !r.wait);
        assert_eq!(r.detector.map(|d| (d.period_ms, d.timeout_ms)), Some((0, 300)));
        let field = |f: LabStart| f.to_request().unwrap_err().field;
        assert_eq!(field(LabStart { ids: "5 x".into(), ..LabStart::default() }), "ids");
        assert_eq!(field(LabStart { initiators: "-1".into(), ..LabStart::default() }), "initiator_ids");
        assert_eq!(field(LabStart { arrangement: "zigzag".into(), ..LabStart::default() }), "id_order");
        let causal = LabStart { axis: "causal".into(), labels: true, ..form.clone() }.to_request().unwrap();
        assert_eq!(
            causal.diagram_options,
            Some(pb::DiagramOptions { axis: pb::DiagramAxis::Causal as i32, labels: true, heartbeats: false })
        );
        assert_eq!(form.to_request().unwrap().diagram_options, None, "the default axis, no labels: plain diagram");
        let beats = LabStart { heartbeats: true, ..form.clone() }.to_request().unwrap().diagram_options;
        assert_eq!(beats.map(|o| (o.heartbeats, o.labels)), Some((true, false)), "heartbeats asked for from the form");
        assert_eq!(field(LabStart { axis: "spiral".into(), ..LabStart::default() }), "diagram_options.axis");
        let big = LabStart { algorithm: "as-far".into(), size: 4_096, simulated: true, ..LabStart::default() };
        assert!(!big.to_request().unwrap().diagram, "over 256 nodes, no diagram (else the API refuses it)");
        assert!(LabStart { size: 256, ..big }.to_request().unwrap().diagram);
    }

    /// The form's options become the request's (`name=value` words, a per-node list kept whole),
    /// and a word without `=` is refused naming `options`; "the leader cut off, its clock at half
    /// speed" schedules the leader's clock at 0.5, then the cut, then the heal.
    #[test]
    fn options_and_the_slow_leader_reach_the_request() {
        use pb::scheduled_fault::Fault as F;
        let form = LabStart {
            algorithm: "raft".into(),
            options: " pre_vote=true  log=1:5,2:7,2:7 ".into(),
            simulated: true,
            keep_leader: true,
            fault: "slow_cut_off_leader".into(),
            fault_at_ms: 500,
            undo_at_ms: 2_000,
            ..LabStart::default()
        };
        let r = form.to_request().unwrap();
        let mut options: Vec<(String, String)> = r.options.into_iter().collect();
        options.sort();
        assert_eq!(options, [("log".into(), "1:5,2:7,2:7".into()), ("pre_vote".into(), "true".into())]);
        let faults: Vec<(u64, Option<F>)> =
            r.simulation.unwrap().faults.into_iter().map(|f| (f.at_ms, f.fault)).collect();
        assert_eq!(
            faults,
            [(500, Some(F::LeaderClock(0.5))), (500, Some(F::CutOffLeader(true))), (2_000, Some(F::Heal(true)))]
        );
        let bad = LabStart { options: "pre_vote".into(), ..form };
        assert_eq!(bad.to_request().unwrap_err().field, "options");
    }

    /// A SIMULATED kept leadership's fault on the form becomes its scheduled faults: a crash by id
    /// and its recovery, the leader cut off and healed, the leader crashed; a fault on a LIVE or
    /// one-shot election, an unknown one, an undoing before the fault and the recovery of a crashed
    /// leader (unknown in advance) are refused naming `simulation.faults`.
    #[test]
    fn the_forms_fault_is_scheduled() {
        use pb::scheduled_fault::Fault as F;
        let kept = LabStart {
            algorithm: "bully".into(),
            simulated: true,
            keep_leader: true,
            horizon_ms: 2_000,
            fault: "crash".into(),
            fault_id: 8,
            fault_at_ms: 500,
            undo_at_ms: 900,
            ..LabStart::default()
        };
        let sim = kept.to_request().unwrap().simulation.unwrap();
        let planned: Vec<(u64, Option<F>)> = sim.faults.iter().map(|f| (f.at_ms, f.fault.clone())).collect();
        assert_eq!(sim.horizon_ms, 2_000);
        assert_eq!(planned, [(500, Some(F::CrashId(8))), (900, Some(F::RecoverId(8)))]);
        let cut = LabStart { fault: "cut_off_leader".into(), ..kept.clone() }.to_request().unwrap();
        assert_eq!(cut.simulation.unwrap().faults[1].fault, Some(F::Heal(true)));
        let crash = LabStart { fault: "crash_leader".into(), undo_at_ms: 0, ..kept.clone() }.to_request().unwrap();
        assert_eq!(crash.simulation.unwrap().faults.len(), 1);
        let refused = |f: LabStart| {
            let e = f.to_request().unwrap_err();
            assert_eq!(e.field, "simulation.faults", "{e}");
            e.reason
        };
        assert!(refused(LabStart { simulated: false, ..kept.clone() }).contains("SIMULATED kept leadership only"));
        assert!(refused(LabStart { keep_leader: false, ..kept.clone() }).contains("SIMULATED kept leadership only"));
        assert!(refused(LabStart { fault: "flood".into(), ..kept.clone() }).contains("unknown fault `flood`"));
        assert!(refused(LabStart { undo_at_ms: 400, ..kept.clone() }).contains("not after it"));
        assert!(refused(LabStart { fault: "crash_leader".into(), ..kept }).contains("not known in advance"));
    }

    /// A gRPC refusal keeps its code and names its field for the form, the field a `RequestError`
    /// carries (not words read from the message); a status without one names none, whatever its text.
    #[test]
    fn refusals_name_their_field() {
        use crate::error::RequestError;
        let r = Refusal::of_status(&RequestError::invalid("size", "at least 2").into());
        assert_eq!((r.status, r.code, r.field.as_str()), (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "size"));
        assert_eq!(r.message, "size: at least 2");
        let r = Refusal::of_status(&RequestError::precondition("detector.timeout_ms", "too short").into());
        assert_eq!(r.field, "detector.timeout_ms");
        let r = Refusal::of_status(&tonic::Status::unauthenticated("StartElection needs a token: here"));
        assert_eq!((r.status, r.field.as_str()), (StatusCode::UNAUTHORIZED, ""));
        let r = Refusal::of_status(&tonic::Status::invalid_argument("size: looks like a field, is only text"));
        assert_eq!(r.field, "", "the text is not read for a field");
    }
}
