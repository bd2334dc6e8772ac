//! The `Agent` service: the controller installs, starts, inspects and
//! forgets this node's share of elections. Requests are validated here and
//! every failure is an [`AgentError`], mapped to a `tonic::Status` in one place.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ringleader_proto::v1::{self as pb, agent_server::Agent};
use tokio::sync::broadcast;
use tokio_stream::Stream;
use tonic::{Code, Request, Response, Status};
use tracing::{debug, info, warn};

use super::election::{Election, ElectionSetup, PortLink, Rebuild};
use super::faults::{FaultTable, FaultsError, PauseChange, Resume};
use super::links;
use super::node::{ElectionTable, Node, Prepared, StreamEnd};
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{NodeContext, Options, PortInfo, Rule, catalogue};
use ringleader_core::spec::check_options;

/// Most elections one node holds at once (prepared and not aborted).
pub const MAX_ELECTIONS: usize = 4_096;

/// Why an agent request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum AgentError {
    /// A request field is missing or has a bad value.
    #[error("invalid `{field}`: {reason}")]
    InvalidField { field: String, reason: String },
    /// No election with this id on this node.
    #[error("election `{0}` does not exist on this node")]
    UnknownElection(String),
    /// The id is taken on this node.
    #[error("election `{0}` is already prepared on this node")]
    Duplicate(String),
    /// The node is stopping.
    #[error("node is shutting down")]
    ShuttingDown,
    /// The node holds as many elections as it may.
    #[error("this node already holds {0} elections (the most it takes); abort finished ones first")]
    Full(usize),
    /// The state machine failed or the election is closed.
    #[error("{message}")]
    Election { code: Code, message: String },
    /// A fault request refused, naming its field.
    #[error(transparent)]
    Faults(#[from] FaultsError),
}

impl AgentError {
    fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        AgentError::InvalidField { field: field.into(), reason: reason.into() }
    }
}

impl From<AgentError> for Status {
    fn from(e: AgentError) -> Status {
        let code = match &e {
            AgentError::InvalidField { .. } | AgentError::Faults(_) => Code::InvalidArgument,
            AgentError::UnknownElection(_) => Code::NotFound,
            AgentError::Duplicate(_) => Code::AlreadyExists,
            AgentError::ShuttingDown => Code::Unavailable,
            AgentError::Full(_) => Code::ResourceExhausted,
            AgentError::Election { code, .. } => *code,
        };
        Status::new(code, e.to_string())
    }
}

/// `ringleader.v1.Agent` over a node.
#[derive(Debug, Clone)]
pub(crate) struct AgentService(pub(crate) Arc<Node>);

impl AgentService {
    fn election(&self, election_id: &str) -> Result<Arc<Election>, AgentError> {
        if election_id.is_empty() {
            return Err(AgentError::field("election_id", "must not be empty"));
        }
        self.0.table.get(election_id).ok_or_else(|| AgentError::UnknownElection(election_id.to_string()))
    }

    fn prepare(&self, req: pb::PrepareRequest) -> Result<(), AgentError> {
        let node = &self.0;
        if node.is_stopping() {
            return Err(AgentError::ShuttingDown);
        }
        if req.election_id.is_empty() {
            return Err(AgentError::field("election_id", "must not be empty"));
        }
        let spec = catalogue::find(&req.algorithm).ok_or_else(|| {
            AgentError::field(
                "algorithm",
                format!(
                    "unknown algorithm `{}`; known: {}; programs installed on this node (node.programs_dir): {}",
                    req.algorithm.chars().take(64).collect::<String>(),
                    catalogue::names(),
                    crate::programs::installed_names()
                ),
            )
        })?;
        let kept = if req.keep_leader {
            let build = spec
                .kept
                .map(|k| k.build)
                .ok_or_else(|| AgentError::field("keep_leader", format!("{} has no keep-a-leader mode", spec.name)))?;
            let detector = req.detector.map_or(DetectorConfig::LOOPBACK, |d| DetectorConfig {
                period_ms: d.period_ms,
                timeout_ms: d.timeout_ms,
            });
            detector.validate().map_err(|e| AgentError::field("detector", e.to_string()))?;
            Some((build, detector))
        } else if req.detector.is_some() {
            return Err(AgentError::field("detector", "applies to kept leaderships (keep_leader) only"));
        } else {
            None
        };
        let rule = match pb::Rule::try_from(req.rule) {
            Ok(pb::Rule::Min) => Rule::Min,
            Ok(pb::Rule::Max) => Rule::Max,
            Ok(pb::Rule::Unspecified) => return Err(AgentError::field("rule", "must be RULE_MIN or RULE_MAX")),
            Err(_) => return Err(AgentError::field("rule", format!("unknown value {}", req.rule))),
        };
        if req.size == 0 {
            return Err(AgentError::field("size", "must be at least 1"));
        }
        if req.position >= req.size {
            return Err(AgentError::field("position", format!("{} is not below size {}", req.position, req.size)));
        }
        let mut endpoints = Vec::with_capacity(req.ports.len());
        for (i, p) in req.ports.iter().enumerate() {
            if p.position >= req.size {
                return Err(AgentError::field(
                    format!("ports[{i}].position"),
                    format!("{} is not below size {}", p.position, req.size),
                ));
            }
            endpoints.push(if p.address.is_empty() {
                None
            } else {
                Some(
                    links::endpoint(&p.address, node.cfg.tls.as_ref())
                        .map_err(|e| AgentError::field(format!("ports[{i}].address"), e.to_string()))?,
                )
            });
        }
        let trace = crate::observe::parse_traceparent(&req.traceparent)
            .map_err(|e| AgentError::field("traceparent", e.to_string()))?;
        let store = Self::store(node, spec, &req)?;
        if node.table.len() >= MAX_ELECTIONS {
            return Err(AgentError::Full(MAX_ELECTIONS));
        }
        if node.table.get(&req.election_id).is_some() {
            return Err(AgentError::Duplicate(req.election_id));
        }
        let ports = req
            .ports
            .iter()
            .zip(endpoints)
            .map(|(p, ep)| PortLink {
                peer: p.position,
                remote_port: p.remote_port,
                link: ep.map(|ep| node.links.get(&p.address, ep)),
            })
            .collect();
        let port_info: Vec<PortInfo> =
            req.ports.iter().map(|p| PortInfo { neighbour: p.id, label: p.label().into() }).collect();
        let one_shot = kept.is_none();
        let mut options: Vec<(String, String)> = req.options.into_iter().collect();
        options.sort();
        check_options(spec, &options, req.size, !one_shot).map_err(|(field, why)| AgentError::field(field, why))?;
        let write_ms = kept.as_ref().map_or(0, |(_, d)| d.period_ms);
        // An installed program's node asks its process for its first state (`init`): off the workers.
        let program = crate::programs::is_program(spec);
        let (algo, rebuild) = match kept {
            Some((build, detector)) => {
                let (id, size, coin) = (req.id, req.size, req.coin);
                let rebuild = Rebuild(Box::new(move || {
                    let ctx = NodeContext::new(id, rule, size, coin, &port_info).with_options(Options(&options));
                    build(&ctx, detector)
                }));
                ((rebuild.0)(), Some(rebuild))
            }
            None => {
                let ctx =
                    NodeContext::new(req.id, rule, req.size, req.coin, &port_info).with_options(Options(&options));
                (super::election::stepping(program, || (spec.machine.build)(&ctx)), None)
            }
        };
        let setup = ElectionSetup {
            faults: Arc::new(super::faults::FaultTable::scoped(node.faults.clone())),
            election_id: req.election_id,
            algorithm: spec.name,
            position: req.position,
            id: req.id,
            initiator: req.initiator,
            ports,
            rebuild,
            node: crate::observe::kv("node", node.cfg.name.clone()),
            trace,
            log_messages: req.log_messages,
            store,
            program,
        };
        debug!(
            election = %setup.election_id, algorithm = setup.algorithm, position = setup.position,
            id = setup.id, n = req.size, initiator = setup.initiator, "prepared"
        );
        let reporter = one_shot.then(|| node.reporter.clone());
        let election = Election::new(setup, algo, node.events.clone(), reporter);
        election.set_write_ms(write_ms);
        let incarnation = req.controller_incarnation;
        if node.reporter.note_incarnation(incarnation) {
            // A controller this node has not seen: its predecessors' elections may be orphans now.
            super::orphans::supersede(node, incarnation);
        }
        match node.prepared(&election, req.start, incarnation) {
            Ok(()) => Ok(()),
            Err(Prepared::Taken) => Err(AgentError::Duplicate(election.id().to_string())),
            Err(Prepared::StartFailed(r)) => Err(AgentError::Election { code: r.code, message: r.message }),
        }
    }

    /// The store of an algorithm that keeps its state in one (`lease`): at
    /// the node's own etcd endpoint, else at the request's. A bad endpoint
    /// in the request is `INVALID_ARGUMENT` naming the field; none at all,
    /// `FAILED_PRECONDITION`.
    fn store(
        node: &Node,
        spec: &ringleader_core::spec::AlgorithmSpec,
        req: &pb::PrepareRequest,
    ) -> Result<Option<Arc<super::store::EtcdStore>>, AgentError> {
        if spec.live_provision != ringleader_core::spec::Provision::Store {
            return Ok(None);
        }
        let endpoint = match &node.cfg.etcd_endpoint {
            Some(own) => super::store::check_endpoint(own).map_err(|e| AgentError::Election {
                code: Code::FailedPrecondition,
                message: format!("this node's etcd_endpoint is bad: {e}"),
            })?,
            None if req.etcd_endpoint.is_empty() => {
                return Err(AgentError::Election {
                    code: Code::FailedPrecondition,
                    message: format!(
                        "{} needs an etcd endpoint: set etcd_endpoint in the request or the node's configuration",
                        spec.name
                    ),
                });
            }
            None => super::store::check_endpoint(&req.etcd_endpoint)
                .map_err(|e| AgentError::field("etcd_endpoint", e.to_string()))?,
        };
        Ok(Some(Arc::new(super::store::EtcdStore::new(endpoint, &req.election_id))))
    }

    /// Wake `election`'s node as an initiator.
    fn start(election: &Arc<Election>) -> Result<(), AgentError> {
        if election.is_program() {
            election.start_in_background();
            return Ok(());
        }
        let started = election.start().map_err(|r| AgentError::Election { code: r.code, message: r.message })?;
        debug!(election = election.id(), released = started.released, "started");
        Ok(())
    }
}

/// The longest a `Leave` call may wait for its handovers.
const MAX_LEAVE_WAIT_MS: u64 = 60_000;

/// Apply `change` to a fault table, the node's (`scope` `None`: every
/// election meets it) or election `scope`'s own, and carry out what it did
/// beyond the table: an election it crashed drops what it held (paused
/// input), one it recovered goes on with a new incarnation of its state
/// machine (a kept leadership); a pause ends now (they resume) or at its end
/// (a task waits for it; a later request may replace or end it first).
fn apply_faults(
    node: &Arc<Node>,
    scope: Option<&Arc<Election>>,
    change: impl FnOnce(&FaultTable) -> Result<PauseChange, FaultsError>,
) -> Result<(), FaultsError> {
    let (table, elections) = match scope {
        None => (node.faults.clone(), node.table.all()),
        Some(e) => (e.faults().clone(), vec![e.clone()]),
    };
    let was: Vec<bool> = elections.iter().map(|e| e.faults().crashed()).collect();
    let pause = change(&table)?;
    let mut restarted = 0;
    for (e, was) in elections.iter().zip(was) {
        match (was, e.faults().crashed()) {
            (false, true) => e.drop_held(),
            (true, false) => restarted += usize::from(e.restart()),
            _ => {}
        }
    }
    if restarted > 0 {
        let election = scope.map(|e| e.id().to_string());
        info!(name = %node.cfg.name, ?election, restarted, "recovered from a crash fault");
    }
    let whom = match scope {
        None => Whom::All(Arc::downgrade(&node.table)),
        Some(e) => Whom::One(Arc::downgrade(e)),
    };
    match pause {
        PauseChange::Unchanged => {}
        PauseChange::Resume(r) => whom.resume(r),
        PauseChange::Until { number, until } => {
            let table = Arc::downgrade(&table);
            tokio::spawn(async move {
                tokio::time::sleep_until(until).await;
                let Some(table) = table.upgrade() else { return };
                if let Some(r) = table.expire(number) {
                    whom.resume(r);
                }
            });
        }
    }
    Ok(())
}

/// The elections a pause held: every election of the node, or one.
enum Whom {
    All(std::sync::Weak<ElectionTable>),
    One(std::sync::Weak<Election>),
}

impl Whom {
    /// They resume after pause `r` (those still paused by another table stay so).
    fn resume(&self, r: Resume) {
        let elections = match self {
            Whom::All(table) => table.upgrade().map(|t| t.all()).unwrap_or_default(),
            Whom::One(e) => e.upgrade().into_iter().collect(),
        };
        info!(elections = elections.len(), paused_ms = (r.until_us - r.from_us) / 1_000, "resumed after a pause");
        for e in elections {
            e.resume(r);
        }
    }
}

/// The counts a faults request answers with: the node's.
fn counts(node: &Node) -> pb::SetFaultsResponse {
    pb::SetFaultsResponse {
        dropped: node.faults.dropped.load(std::sync::atomic::Ordering::Relaxed),
        duplicated: node.faults.duplicated.load(std::sync::atomic::Ordering::Relaxed),
    }
}

#[tonic::async_trait]
impl Agent for AgentService {
    async fn prepare(&self, request: Request<pb::PrepareRequest>) -> Result<Response<pb::PrepareResponse>, Status> {
        AgentService::prepare(self, request.into_inner())?;
        Ok(Response::new(pb::PrepareResponse {}))
    }

    async fn start(&self, request: Request<pb::StartRequest>) -> Result<Response<pb::StartResponse>, Status> {
        Self::start(&self.election(&request.get_ref().election_id)?)?;
        Ok(Response::new(pb::StartResponse {}))
    }

    async fn abort(&self, request: Request<pb::AbortRequest>) -> Result<Response<pb::AbortResponse>, Status> {
        let pb::AbortRequest { election_id, election_ids } = request.into_inner();
        if election_ids.is_empty() || !election_id.is_empty() {
            self.election(&election_id)?;
        }
        for id in std::iter::once(&election_id).chain(&election_ids) {
            if self.0.abort(id) {
                debug!(election = %id, "aborted");
            }
        }
        Ok(Response::new(pb::AbortResponse {}))
    }

    async fn status(&self, request: Request<pb::StatusRequest>) -> Result<Response<pb::NodeElectionStatus>, Status> {
        Ok(Response::new(self.election(&request.get_ref().election_id)?.status()))
    }

    async fn set_faults(
        &self,
        request: Request<pb::SetFaultsRequest>,
    ) -> Result<Response<pb::SetFaultsResponse>, Status> {
        let node = &self.0;
        let mut req = request.into_inner();
        // Every part is checked before any is applied.
        let mut scoped = std::collections::HashMap::with_capacity(req.elections.len());
        for (i, e) in std::mem::take(&mut req.elections).into_iter().enumerate() {
            let faults = e.faults.unwrap_or_default();
            FaultTable::new().set(&faults).map_err(|why| AgentError::from(why.within(&format!("elections[{i}]"))))?;
            scoped.insert(e.election_id, faults);
        }
        apply_faults(node, None, |t| t.set(&req)).map_err(AgentError::from)?;
        // Each election's own faults: as listed, or none.
        let none = pb::SetFaultsRequest::default();
        for e in node.table.all() {
            let own = scoped.get(e.id()).unwrap_or(&none);
            apply_faults(node, Some(&e), |t| t.set(own)).map_err(AgentError::from)?;
        }
        info!(
            name = %node.cfg.name, crashed = req.crashed, links = req.links.len(), partitioned = req.partitioned,
            pause_ms = req.pause_ms, elections = scoped.len(), "faults set"
        );
        Ok(Response::new(counts(node)))
    }

    async fn change_faults(
        &self,
        request: Request<pb::ChangeFaultsRequest>,
    ) -> Result<Response<pb::SetFaultsResponse>, Status> {
        let node = &self.0;
        let req = request.into_inner();
        let scope = match req.election_id.as_str() {
            "" => None,
            id => match node.table.get(id) {
                Some(e) => Some(e),
                None => {
                    // Ended here (aborted) or never prepared: its faults went, or have nothing to touch.
                    debug!(election = %id, "faults changed for an election this node does not hold");
                    return Ok(Response::new(counts(node)));
                }
            },
        };
        apply_faults(node, scope.as_ref(), |t| t.change(&req)).map_err(AgentError::from)?;
        info!(
            name = %node.cfg.name, election = %req.election_id, crashed = ?req.crashed, added = req.add.len(),
            removed = req.remove.len(), partitioned = ?req.partitioned, pause_ms = ?req.pause_ms, "faults changed"
        );
        Ok(Response::new(counts(node)))
    }

    async fn info(&self, _request: Request<pb::InfoRequest>) -> Result<Response<pb::NodeInfo>, Status> {
        let node = &self.0;
        Ok(Response::new(pb::NodeInfo {
            name: node.cfg.name.clone(),
            address: node.cfg.advertise.clone(),
            elections: node.table.len() as u64,
            version: env!("CARGO_PKG_VERSION").to_string(),
            clock_us: super::reports::monotonic_us(),
        }))
    }

    async fn messages(&self, request: Request<pb::MessagesRequest>) -> Result<Response<pb::MessageLog>, Status> {
        let election = self.election(&request.get_ref().election_id)?;
        Ok(Response::new(election.messages()))
    }

    async fn leave(&self, request: Request<pb::LeaveRequest>) -> Result<Response<pb::LeaveResponse>, Status> {
        let wait_ms = request.get_ref().wait_ms;
        if wait_ms > MAX_LEAVE_WAIT_MS {
            return Err(AgentError::field("wait_ms", format!("at most {MAX_LEAVE_WAIT_MS} ms, got {wait_ms}")).into());
        }
        let wait = if wait_ms == 0 { super::HANDOVER_WAIT } else { std::time::Duration::from_millis(wait_ms) };
        Ok(Response::new(self.0.leave_all(wait).await))
    }

    type EventsStream = EventStream;

    async fn events(&self, request: Request<pb::EventsRequest>) -> Result<Response<EventStream>, Status> {
        let node = &self.0;
        if node.is_stopping() {
            return Err(AgentError::ShuttingDown.into());
        }
        // Subscribe first, then read the current beliefs: a change in between arrives twice rather than
        // not at all. A controller that reconnects (or connects late) learns who believes what now.
        let rx = node.events.subscribe();
        let backlog = node.table.all().iter().filter_map(|e| e.current_belief()).collect();
        let mut stream = EventStream::new(rx, node.stream_end()).with_backlog(backlog);
        let request = request.into_inner();
        if request.reports {
            let (listening, new) = node.reporter.listen(request.controller_incarnation);
            stream = stream.with_reports(listening);
            if new {
                // A controller this node has not seen listens: what its predecessors left is orphaned.
                super::orphans::supersede(node, request.controller_incarnation);
            }
        }
        Ok(Response::new(stream))
    }
}

type NextEvent = (Result<Arc<pb::NodeEvent>, broadcast::error::RecvError>, broadcast::Receiver<Arc<pb::NodeEvent>>);

async fn next_event(mut rx: broadcast::Receiver<Arc<pb::NodeEvent>>) -> NextEvent {
    let r = rx.recv().await;
    (r, rx)
}

/// The response stream of `Events`: reads the node's broadcast channel
/// directly (no task in between). A subscriber that falls behind skips the
/// events it missed, with a warning; it never slows the node down.
pub(crate) struct EventStream {
    /// Sent before anything from the channel: the kept beliefs current when the stream opened.
    backlog: std::collections::VecDeque<pb::NodeEvent>,
    next: Pin<Box<dyn Future<Output = NextEvent> + Send>>,
    end: StreamEnd,
    /// Pass one-shot elections' reports on (else they are skipped), keeping
    /// the node making them while the stream lives.
    reports: Option<super::reports::Listening>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").field("end", &self.end).finish_non_exhaustive()
    }
}

impl EventStream {
    pub(crate) fn new(rx: broadcast::Receiver<Arc<pb::NodeEvent>>, end: StreamEnd) -> Self {
        EventStream { backlog: Default::default(), next: Box::pin(next_event(rx)), end, reports: None }
    }

    /// Pass reports on too ([`pb::EventsRequest::reports`]), as long as `listening` lives.
    pub(crate) fn with_reports(mut self, listening: super::reports::Listening) -> Self {
        self.reports = Some(listening);
        self
    }

    /// Send `events` first.
    pub(crate) fn with_backlog(mut self, events: Vec<pb::NodeEvent>) -> Self {
        self.backlog = events.into();
        self
    }
}

impl Stream for EventStream {
    type Item = Result<pb::NodeEvent, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.end.ended(cx) {
            return Poll::Ready(None);
        }
        if let Some(ev) = this.backlog.pop_front() {
            return Poll::Ready(Some(Ok(ev)));
        }
        loop {
            let Poll::Ready((r, rx)) = this.next.as_mut().poll(cx) else { return Poll::Pending };
            this.next = Box::pin(next_event(rx));
            match r {
                Ok(ev) if ev.status.is_some() && this.reports.is_none() => {}
                Ok(ev) => return Poll::Ready(Some(Ok(Arc::unwrap_or_clone(ev)))),
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    warn!(skipped, "an events subscriber fell behind; events skipped");
                }
                Err(broadcast::error::RecvError::Closed) => {
                    this.end.finish();
                    return Poll::Ready(None);
                }
            }
        }
    }
}
