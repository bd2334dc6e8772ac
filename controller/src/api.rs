//! The `ringleader.v1.Controller` gRPC service: request checks, planning and
//! every mapping of an error to a `tonic::Status`.
//!
//! Bad requests are refused before anything runs, with `INVALID_ARGUMENT`
//! (the request itself is wrong) or `FAILED_PRECONDITION` (the request is
//! fine but cannot run here, e.g. a LIVE election larger than the cluster);
//! the message starts with the field at fault, e.g. `size: ...`.

use ringleader_node::auth::{Access, Auth};
use std::collections::HashMap;
use std::sync::Arc;

use ringleader_core::algo::catalogue::{self, AlgorithmSpec};
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::topology::{self, IdError, IdOrder, Topology, TopologyKind};
use ringleader_proto::v1::{self as pb, controller_server::Controller};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::compare;
use crate::config::ControllerConfig;
use crate::convert::{self, ElectionRequest};
use crate::elections::{Elections, Entry, MAX_DIAGRAM_NODES, Plan, WatchEvent};
pub use crate::error::RequestError;
use crate::faults::Faults;
use crate::record::{ElectionRecord, Mode, SimOptions, State};

/// Size of a SIMULATED election that does not give one.
pub const DEFAULT_SIMULATED_SIZE: u32 = 8;

/// Largest COMPLETE network (n(n-1) directed links).
pub const MAX_COMPLETE_SIZE: u32 = 2048;

/// Round-clock events a SIMULATED election may fire per message of
/// `max_simulated_messages`: with the default 200 M, `sync-hs` runs up to
/// about 10,000 positions (7.6 × 10^8 events, 46 s of one core in a test
/// build here); beyond, the request is refused up front, naming `size`,
/// instead of running for minutes and failing.
pub const TIMER_EVENTS_PER_MESSAGE: u64 = 4;

fn topology_names(spec: &AlgorithmSpec) -> String {
    spec.topologies.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

/// Check `req` against the catalogue and a cluster of `cluster_nodes` nodes,
/// and resolve every default: the election to run.
pub fn plan(req: &ElectionRequest, cluster_nodes: usize, config: &ControllerConfig) -> Result<Plan, RequestError> {
    if req.algorithm.is_empty() {
        return Err(RequestError::invalid("algorithm", format!("required; one of: {}", catalogue::names())));
    }
    let spec = catalogue::find(&req.algorithm).ok_or_else(|| {
        RequestError::invalid(
            "algorithm",
            format!("unknown algorithm `{}`; known algorithms: {}", req.algorithm, catalogue::names()),
        )
    })?;

    if req.keep_leader {
        if spec.build_kept.is_none() {
            let kept: Vec<&str> =
                catalogue::CATALOGUE.iter().filter(|s| s.build_kept.is_some()).map(|s| s.name).collect();
            return Err(RequestError::invalid(
                "keep_leader",
                format!(
                    "{} is a one-shot election; algorithms that keep a leader: {}",
                    spec.name,
                    if kept.is_empty() { "none yet".to_string() } else { kept.join(", ") }
                ),
            ));
        }
        if req.mode == Mode::Simulated {
            return Err(RequestError::invalid("keep_leader", "kept leaderships run LIVE only"));
        }
        if req.wait {
            return Err(RequestError::invalid(
                "wait",
                "a kept leadership runs until StopElection; start it without wait and follow it with GetLeader",
            ));
        }
    }
    let detector = req.detector.unwrap_or_else(|| config.detector());
    if req.detector.is_some() && !req.keep_leader {
        return Err(RequestError::invalid(
            "detector",
            "failure-detector settings apply to kept leaderships (keep_leader) only",
        ));
    }
    detector.validate().map_err(|e| RequestError::invalid("detector", e))?;
    let sim = req.simulation.unwrap_or_default();
    if req.mode == Mode::Live && sim != SimOptions::default() {
        return Err(RequestError::invalid("simulation", "simulation options apply to mode SIMULATED only"));
    }
    if req.mode == Mode::Simulated && sim.non_fifo && spec.assumptions.fifo {
        return Err(RequestError::precondition(
            "simulation.non_fifo",
            format!("{} assumes FIFO links, so it cannot run on non-FIFO links", spec.name),
        ));
    }

    let kind = req.topology.unwrap_or_else(|| spec.default_topology());
    if !spec.supports(kind) {
        return Err(RequestError::invalid(
            "topology",
            format!("{} cannot run on {}; it runs on {}", spec.name, kind.name(), topology_names(spec)),
        ));
    }

    // Shape parameters belong to their topology.
    if kind != TopologyKind::Mesh && (req.rows != 0 || req.cols != 0) {
        return Err(RequestError::invalid(
            if req.rows != 0 { "topology.rows" } else { "topology.cols" },
            format!("rows and cols are only given for MESH, not {}", kind.name()),
        ));
    }
    if !matches!(kind, TopologyKind::Tree | TopologyKind::Graph) && !req.edges.is_empty() {
        return Err(RequestError::invalid(
            "topology.edges",
            format!("edges are only given for TREE and GRAPH, not {}", kind.name()),
        ));
    }
    let mesh_size =
        (kind == TopologyKind::Mesh && req.rows != 0 && req.cols != 0).then(|| req.rows as u64 * req.cols as u64);

    // Size: explicit ids fix it, then a mesh's rows x cols; otherwise `size`,
    // 0 meaning the whole cluster (LIVE) or 8 (SIMULATED).
    let explicit = !req.ids.is_empty();
    let n: u64 = if explicit {
        if req.size != 0 && req.size as usize != req.ids.len() {
            return Err(RequestError::invalid(
                "ids",
                format!("{} ids given for size {}; give one id per position (or size 0)", req.ids.len(), req.size),
            ));
        }
        if let Some(m) = mesh_size
            && m != req.ids.len() as u64
        {
            return Err(RequestError::invalid(
                "ids",
                format!("{} ids given for a {} x {} mesh of {m} positions", req.ids.len(), req.rows, req.cols),
            ));
        }
        req.ids.len() as u64
    } else if let Some(m) = mesh_size {
        if req.size != 0 && req.size as u64 != m {
            return Err(RequestError::invalid(
                "size",
                format!(
                    "size {} differs from rows x cols = {} x {} = {m} (give one, or both alike)",
                    req.size, req.rows, req.cols
                ),
            ));
        }
        m
    } else if req.size == 0 {
        match req.mode {
            Mode::Live => cluster_nodes as u64,
            Mode::Simulated => DEFAULT_SIMULATED_SIZE as u64,
        }
    } else {
        req.size as u64
    };
    if n < 2 {
        return Err(if explicit {
            RequestError::invalid("ids", format!("an election needs at least 2 positions; {n} id given"))
        } else if req.mode == Mode::Live && req.size == 0 {
            RequestError::precondition(
                "size",
                format!(
                    "the cluster has {cluster_nodes} nodes and an election needs at least 2; start the controller \
                     with --local-nodes N or --nodes, or use mode SIMULATED"
                ),
            )
        } else {
            RequestError::invalid("size", format!("an election needs at least 2 positions, got {n}"))
        });
    }
    if kind == TopologyKind::Complete && n > MAX_COMPLETE_SIZE as u64 {
        return Err(RequestError::invalid(
            "size",
            format!("a COMPLETE network of {n} positions has too many links; at most {MAX_COMPLETE_SIZE} positions"),
        ));
    }
    match req.mode {
        Mode::Live if n > cluster_nodes as u64 => {
            return Err(RequestError::precondition(
                "size",
                format!(
                    "{n} positions{} but the cluster has {cluster_nodes} nodes (LIVE runs one position per node; \
                     use mode SIMULATED for larger rings)",
                    if explicit { " (one per id)" } else { "" }
                ),
            ));
        }
        Mode::Simulated if n > config.max_simulated_size as u64 => {
            return Err(RequestError::invalid(
                "size",
                format!("{n} positions is more than the simulator's limit of {}", config.max_simulated_size),
            ));
        }
        Mode::Simulated
            if catalogue::timer_event_bound(spec, n)
                > config.max_simulated_messages.saturating_mul(TIMER_EVENTS_PER_MESSAGE) =>
        {
            return Err(RequestError::invalid(
                "size",
                format!(
                    "{} on {n} positions fires up to {} round-clock events, more than the simulator's budget of \
                     {} ({TIMER_EVENTS_PER_MESSAGE} per message of max_simulated_messages); use a smaller size",
                    spec.name,
                    catalogue::timer_event_bound(spec, n),
                    config.max_simulated_messages.saturating_mul(TIMER_EVENTS_PER_MESSAGE)
                ),
            ));
        }
        _ => {}
    }
    let n = n as u32;

    let ids = if explicit {
        if req.ids.contains(&0) {
            return Err(RequestError::invalid("ids", "ids must be positive; 0 is not an id"));
        }
        IdOrder::Explicit(req.ids.clone()).arrange(n)
    } else {
        match req.id_order {
            IdOrder::WorstCase | IdOrder::BestCase => {
                let (arrangement, which) = if req.id_order == IdOrder::WorstCase {
                    (spec.worst_case, "worst")
                } else {
                    (spec.best_case, "best")
                };
                let a = arrangement.ok_or_else(|| {
                    RequestError::invalid(
                        "id_order",
                        format!(
                            "{} has no known {which}-case arrangement; use ASCENDING, DESCENDING or RANDOM",
                            spec.name
                        ),
                    )
                })?;
                Ok((a.ids)(n, req.winner.unwrap_or(spec.rule)))
            }
            ref other => other.arrange(n),
        }
    }
    .map_err(|e| match e {
        IdError::Duplicate(id) => RequestError::invalid("ids", format!("id {id} appears more than once")),
        e @ IdError::WrongLength { .. } => RequestError::invalid("ids", e.to_string()),
        e @ IdError::NeedsAlgorithm => RequestError::invalid("id_order", e.to_string()),
    })?;

    let initiators = if !req.initiator_ids.is_empty() {
        let position: HashMap<u64, u32> = ids.iter().enumerate().map(|(i, &id)| (id, i as u32)).collect();
        let mut chosen = Vec::with_capacity(req.initiator_ids.len());
        for id in &req.initiator_ids {
            let p = *position.get(id).ok_or_else(|| {
                RequestError::invalid("initiator_ids", format!("id {id} is not one of the election's ids"))
            })?;
            chosen.push(p);
        }
        chosen.sort_unstable();
        if let Some(w) = chosen.windows(2).find(|w| w[0] == w[1]) {
            let id = ids[w[0] as usize];
            return Err(RequestError::invalid("initiator_ids", format!("id {id} is listed more than once")));
        }
        chosen
    } else {
        if req.initiators > n {
            return Err(RequestError::invalid(
                "initiators",
                format!("{} initiators requested for {n} positions", req.initiators),
            ));
        }
        let k = if req.initiators == 0 { n } else { req.initiators };
        topology::pick_initiators(n, k, req.seed)
    };

    if req.mode == Mode::Simulated
        && let Some(exact) = spec.exact
    {
        let messages = exact(n as u64, initiators.len() as u64);
        if messages > config.max_simulated_messages {
            return Err(RequestError::invalid(
                "size",
                format!(
                    "{} sends {messages} messages on {n} positions, more than the simulator's budget of {} per \
                     election (max_simulated_messages)",
                    spec.name, config.max_simulated_messages
                ),
            ));
        }
    }

    let topology = match kind {
        TopologyKind::Tree if !req.edges.is_empty() => {
            Topology::tree(n, &req.edges).map_err(|e| RequestError::invalid("topology.edges", e.to_string()))?
        }
        TopologyKind::Graph if !req.edges.is_empty() => {
            Topology::graph(n, &req.edges).map_err(|e| RequestError::invalid("topology.edges", e.to_string()))?
        }
        TopologyKind::Mesh => {
            let (rows, cols) = match (req.rows, req.cols) {
                (0, 0) => topology::mesh_shape(n).map_err(|e| RequestError::invalid("size", e.to_string()))?,
                (0, c) if !n.is_multiple_of(c) => {
                    return Err(RequestError::invalid("topology.cols", format!("{c} columns do not divide size {n}")));
                }
                (r, 0) if !n.is_multiple_of(r) => {
                    return Err(RequestError::invalid("topology.rows", format!("{r} rows do not divide size {n}")));
                }
                (0, c) => (n / c, c),
                (r, 0) => (r, n / r),
                (r, c) => (r, c),
            };
            let field = if req.rows != 0 || req.cols != 0 { "topology.rows" } else { "size" };
            Topology::mesh(rows, cols).map_err(|e| RequestError::invalid(field, e.to_string()))?
        }
        _ => Topology::build(kind, n, req.seed).map_err(|e| RequestError::invalid("size", e.to_string()))?,
    };
    let diagram = req.diagram || sim.diagram;
    if diagram && topology.len() > MAX_DIAGRAM_NODES {
        return Err(RequestError::invalid(
            if req.diagram { "diagram" } else { "simulation.diagram" },
            format!("a diagram is drawn for at most {MAX_DIAGRAM_NODES} nodes, not {}", topology.len()),
        ));
    }
    Ok(Plan {
        spec,
        mode: req.mode,
        topology,
        rule: req.winner.unwrap_or(spec.rule),
        ids,
        initiators,
        seed: req.seed,
        sim,
        diagram,
        keep_leader: req.keep_leader,
        detector,
    })
}

/// Heartbeats per second the embedded cluster's process takes for one kept
/// leadership ([`catalogue::heartbeats_per_period`]), all in this process.
/// Measured with `benches/keep` when ZooKeeper-style watched every
/// neighbour: 64 nodes at 50 ms (80,640/s) agreed and kept their leader;
/// 256 at 50 ms (1.3 M/s) never agreed.
pub const MAX_LOCAL_HEARTBEATS_PER_SECOND: u64 = 200_000;

/// The largest kept leadership of each algorithm that `benches/keep` saw
/// agree on the embedded cluster (release build, 2 cores, loopback detector:
/// 50 ms period, 200 ms timeout). The next size up never agreed within 120 s:
/// an election's burst (bully's n² election and answer messages, the n(n − 1)
/// heartbeats a period of nodes that all look for a leader) and opening a
/// stream per pair of nodes took longer than the timeouts, and each timeout
/// started another election. A slower detector did not rescue it (a 256-node
/// ZooKeeper-style run at 250 / 1,000 ms had no leader after 40 s; bully at
/// 200 / 800 ms agreed after 51 violations), so the limit is on nodes.
///
/// | algorithm | agreed | did not agree |
/// | --- | --- | --- |
/// | bully | 128 nodes, 3.8 s | 256 |
/// | zookeeper | 128 nodes, 2.9 s | 256 |
/// | repaired-ring | 64 nodes, 0.2 s | 128 |
/// | chubby | 256 nodes, 0.5 s (the largest tried) | |
pub fn max_local_kept_nodes(algorithm: &str) -> Option<u32> {
    match algorithm {
        "bully" | "zookeeper" => Some(128),
        "repaired-ring" => Some(64),
        "chubby" => Some(256),
        _ => None,
    }
}

/// Refuse up front, RESOURCE_EXHAUSTED saying why, a kept leadership the
/// embedded cluster's one process cannot carry (instead of a leaderless run
/// that starves every other election of the process): its settled
/// heartbeats, and the burst of an election in which every node takes part.
fn fits_the_process(plan: &Plan) -> Result<(), Status> {
    if !plan.keep_leader {
        return Ok(());
    }
    let name = plan.spec.name;
    if let Some(max) = max_local_kept_nodes(name) {
        let n = plan.n();
        if n > max {
            return Err(Status::resource_exhausted(format!(
                "size: a kept {name} leadership of {n} nodes does not fit the embedded cluster's one process: the \
                 largest that agreed there was {max} nodes (docs/performance.md); use at most {max} nodes, or run \
                 the nodes as separate processes (ringleader-node, k8s/)"
            )));
        }
        // At that size and the loopback detector, an election's burst was carried; a faster detector
        // asks more of the process than was measured.
        let max_topology = Topology::complete(max).ok();
        let carried =
            max_topology.and_then(|t| catalogue::election_load_per_second(name, &t, DetectorConfig::LOOPBACK));
        let load = catalogue::election_load_per_second(name, &plan.topology, plan.detector);
        if let (Some(load), Some(carried)) = (load, carried)
            && load > carried
        {
            // Every load model is inversely proportional to the detector's timing.
            let factor = load.div_ceil(carried);
            return Err(Status::resource_exhausted(format!(
                "detector: a kept {name} leadership of {n} nodes with this detector asks the embedded cluster's one \
                 process for an election burst of {load} messages a second ({name}'s model), more than the {carried}/s \
                 measured to work; use a detector about {factor} times slower (period_ms {} and timeout_ms {}) or \
                 fewer nodes",
                plan.detector.period_ms.saturating_mul(factor),
                plan.detector.timeout_ms.saturating_mul(factor),
            )));
        }
    }
    let links = catalogue::heartbeats_per_period(plan.spec.name, &plan.topology);
    let period = plan.detector.period_ms.max(1);
    let per_second = links.saturating_mul(1_000) / period;
    if per_second <= MAX_LOCAL_HEARTBEATS_PER_SECOND {
        return Ok(());
    }
    let needed = links.saturating_mul(1_000).div_ceil(MAX_LOCAL_HEARTBEATS_PER_SECOND);
    Err(Status::resource_exhausted(format!(
        "size: a kept {} leadership of {} nodes on the embedded cluster sends {per_second} heartbeats a second \
         ({links} every {period} ms), more than one process carries ({MAX_LOCAL_HEARTBEATS_PER_SECOND}/s); \
         use detector.period_ms of at least {needed} or fewer nodes",
        plan.spec.name,
        plan.n()
    )))
}

/// The Controller service.
#[derive(Clone, Debug)]
pub struct ControllerService {
    elections: Arc<Elections>,
    faults: Arc<Faults>,
    auth: Auth,
}

impl ControllerService {
    /// A service running its elections through `elections`, open to every caller.
    pub fn new(elections: Arc<Elections>) -> Self {
        Self::with_auth(elections, Auth::default())
    }

    /// A service that asks callers for the tokens of `auth` (see [`ringleader_node::auth`]).
    pub fn with_auth(elections: Arc<Elections>, auth: Auth) -> Self {
        let faults = Faults::new(elections.cluster().clone(), elections.config().rpc_timeout());
        let registry = Arc::downgrade(&faults);
        elections.set_fault_note(crate::elections::FaultNote(Box::new(move || {
            let list = registry.upgrade()?.list();
            let active: Vec<String> = list
                .into_iter()
                .filter(|f| f.state == pb::FaultState::Active as i32)
                .map(|f| format!("{} ({})", f.fault_id, f.description))
                .collect();
            (!active.is_empty()).then(|| active.join(", "))
        })));
        let registry = Arc::downgrade(&faults);
        crate::telemetry::register_gauges(
            &elections,
            Arc::new(move || registry.upgrade().map(|f| f.active_kinds()).unwrap_or_default()),
        );
        let registry = Arc::downgrade(&faults);
        elections.set_crash_probe(crate::elections::CrashProbe(Box::new(move || {
            registry.upgrade().map(|f| f.crashed_nodes()).unwrap_or_default()
        })));
        ControllerService { elections, faults, auth }
    }

    /// Refuse the call unless its credentials allow `access` (counted and logged, never the secret).
    fn authorize<T>(&self, request: &Request<T>, method: &'static str, access: Access) -> Result<(), Status> {
        self.auth.check_controller(request.metadata(), method, access).inspect_err(|status| {
            ringleader_node::auth::refused("controller", method, request.remote_addr(), status);
        })
    }

    fn entry(&self, election_id: &str) -> Result<Arc<Entry>, Status> {
        if election_id.is_empty() {
            return Err(RequestError::invalid("election_id", "required").into());
        }
        self.elections.get(election_id).ok_or_else(|| {
            Status::not_found(format!(
                "election_id: no election `{election_id}` (the controller keeps the last {} elections)",
                self.elections.config().max_elections
            ))
        })
    }
}

fn leader_of(r: &ElectionRecord) -> Result<pb::Leader, Status> {
    match r.state {
        State::Running if r.keep_leader => match &r.leader {
            Some(l) => Ok(pb::Leader {
                election_id: r.id.clone(),
                algorithm: r.algorithm.to_string(),
                leader: Some(l.into()),
                agreed: r.agreed,
                term: r.term,
                since: convert::rfc3339(r.leader_since_ms),
                last_failover: r.failovers.last().map(Into::into),
            }),
            None => Err(Status::failed_precondition(format!(
                "election {} has no leader now (term {}): an election is under way or no majority is reachable",
                r.id, r.term
            ))),
        },
        State::Finished => Ok(pb::Leader {
            election_id: r.id.clone(),
            algorithm: r.algorithm.to_string(),
            leader: r.leader.as_ref().map(Into::into),
            agreed: r.agreed,
            term: r.term,
            since: convert::rfc3339(if r.leader_since_ms > 0 {
                r.leader_since_ms
            } else {
                r.started_at_ms + r.metrics.as_ref().map_or(0, |m| m.duration_ms)
            }),
            last_failover: r.failovers.last().map(Into::into),
        }),
        State::Failed => Err(Status::failed_precondition(format!(
            "election {} failed: {}",
            r.id,
            r.error.as_deref().unwrap_or("unknown error")
        ))),
        State::Pending | State::Running => {
            Err(Status::failed_precondition(format!("election {} has not finished yet", r.id)))
        }
    }
}

fn event(id: &str, kind: pb::election_event::Kind) -> pb::ElectionEvent {
    pb::ElectionEvent { election_id: id.to_string(), kind: Some(kind) }
}

#[tonic::async_trait]
impl Controller for ControllerService {
    async fn list_algorithms(
        &self,
        request: Request<pb::ListAlgorithmsRequest>,
    ) -> Result<Response<pb::ListAlgorithmsResponse>, Status> {
        self.authorize(&request, "ListAlgorithms", Access::Read)?;
        let algorithms = catalogue::CATALOGUE.iter().map(convert::algorithm_info).collect();
        Ok(Response::new(pb::ListAlgorithmsResponse { algorithms }))
    }

    async fn get_cluster(&self, request: Request<pb::GetClusterRequest>) -> Result<Response<pb::Cluster>, Status> {
        self.authorize(&request, "GetCluster", Access::Read)?;
        let timeout = self.elections.config().rpc_timeout();
        let mut set = tokio::task::JoinSet::new();
        for node in self.elections.cluster().nodes() {
            let node = node.clone();
            set.spawn(async move {
                let mut client = node.client();
                let answer = tokio::time::timeout(timeout, client.info(pb::InfoRequest {})).await;
                let mut out =
                    pb::ClusterNode { name: node.name(), address: node.address().to_string(), ..Default::default() };
                match answer {
                    Ok(Ok(info)) => {
                        let info = info.into_inner();
                        out.reachable = true;
                        out.elections = info.elections;
                        if !info.name.is_empty() {
                            out.name = info.name;
                        }
                    }
                    Ok(Err(status)) => out.error = format!("{:?}: {}", status.code(), status.message()),
                    Err(_) => out.error = format!("no answer within {} ms", timeout.as_millis()),
                }
                (node.index(), out)
            });
        }
        let mut nodes = Vec::new();
        while let Some(joined) = set.join_next().await {
            let (i, node) = joined.map_err(|e| Status::internal(format!("GetCluster task failed: {e}")))?;
            nodes.push((i, node));
        }
        nodes.sort_by_key(|(i, _)| *i);
        Ok(Response::new(pb::Cluster { nodes: nodes.into_iter().map(|(_, n)| n).collect() }))
    }

    async fn start_election(
        &self,
        request: Request<pb::StartElectionRequest>,
    ) -> Result<Response<pb::Election>, Status> {
        self.authorize(&request, "StartElection", Access::Write)?;
        let request = ElectionRequest::try_from(request.into_inner()).map_err(RequestError::from)?;
        let plan = plan(&request, self.elections.cluster().len(), self.elections.config())?;
        if self.elections.cluster().is_local() {
            fits_the_process(&plan)?;
        }
        let entry = self.elections.launch(plan)?;
        if request.wait && !request.keep_leader {
            entry.wait_done().await;
        }
        Ok(Response::new(pb::Election::from(&entry.snapshot())))
    }

    async fn stop_election(&self, request: Request<pb::StopElectionRequest>) -> Result<Response<pb::Election>, Status> {
        self.authorize(&request, "StopElection", Access::Write)?;
        let entry = self.entry(&request.get_ref().election_id)?;
        // A kept leadership ends FINISHED; a one-shot election still running (LIVE or SIMULATED)
        // is cancelled and ends FAILED, saying so; a finished one is returned as it is.
        entry.stop();
        entry.wait_done().await;
        Ok(Response::new(pb::Election::from(&entry.snapshot())))
    }

    async fn get_election(&self, request: Request<pb::GetElectionRequest>) -> Result<Response<pb::Election>, Status> {
        self.authorize(&request, "GetElection", Access::Read)?;
        let entry = self.entry(&request.get_ref().election_id)?;
        Ok(Response::new(pb::Election::from(&entry.snapshot())))
    }

    async fn list_elections(
        &self,
        request: Request<pb::ListElectionsRequest>,
    ) -> Result<Response<pb::ListElectionsResponse>, Status> {
        self.authorize(&request, "ListElections", Access::Read)?;
        let algorithm = &request.get_ref().algorithm;
        if !algorithm.is_empty() && catalogue::find(algorithm).is_none() {
            return Err(RequestError::invalid(
                "algorithm",
                format!("unknown algorithm `{algorithm}`; known algorithms: {}", catalogue::names()),
            )
            .into());
        }
        let elections = self
            .elections
            .list()
            .iter()
            .map(|e| e.snapshot())
            .filter(|r| algorithm.is_empty() || r.algorithm == algorithm)
            .map(|r| convert::election_summary(&r))
            .collect();
        Ok(Response::new(pb::ListElectionsResponse { elections }))
    }

    type WatchElectionStream = ReceiverStream<Result<pb::ElectionEvent, Status>>;

    async fn watch_election(
        &self,
        request: Request<pb::WatchElectionRequest>,
    ) -> Result<Response<Self::WatchElectionStream>, Status> {
        self.authorize(&request, "WatchElection", Access::Read)?;
        use pb::election_event::Kind;
        let entry = self.entry(&request.get_ref().election_id)?;
        let (snapshot, mut events) = entry.watch();
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let id = snapshot.id.clone();
            let send = |kind| {
                let tx = tx.clone();
                let ev = event(&id, kind);
                async move { tx.send(Ok(ev)).await.is_ok() }
            };
            if !send(Kind::Snapshot(pb::Election::from(&snapshot))).await {
                return;
            }
            if snapshot.state.is_terminal() {
                send(Kind::Finished(pb::Election::from(&snapshot))).await;
                return;
            }
            loop {
                let kind = match events.recv().await {
                    Ok(WatchEvent::Decided { position, node, decision }) => Kind::Decided(pb::NodeDecided {
                        position,
                        node,
                        role: convert::role_name(Some(decision)).to_string(),
                        leader_id: decision.leader,
                    }),
                    Ok(WatchEvent::State(r)) => Kind::Snapshot(pb::Election::from(&*r)),
                    Ok(WatchEvent::Finished(r)) => {
                        send(Kind::Finished(pb::Election::from(&*r))).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => {
                        // Too slow to follow every event: resume from the current state.
                        let r = entry.snapshot();
                        if r.state.is_terminal() {
                            send(Kind::Finished(pb::Election::from(&r))).await;
                            return;
                        }
                        Kind::Snapshot(pb::Election::from(&r))
                    }
                };
                if !send(kind).await {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    type CompareAlgorithmsStream = ReceiverStream<Result<pb::CompareEvent, Status>>;

    async fn compare_algorithms(
        &self,
        request: Request<pb::CompareRequest>,
    ) -> Result<Response<Self::CompareAlgorithmsStream>, Status> {
        self.authorize(&request, "CompareAlgorithms", Access::Write)?;
        let req = request.into_inner();
        let config = self.elections.config();
        let points = compare::points(&req, self.elections.cluster().len(), config.max_simulated_size)?;
        let mode = pb::Mode::try_from(req.mode).unwrap_or(pb::Mode::Live);
        // Plan every election before running any, so a bad point refuses the whole sweep.
        let mut plans = Vec::with_capacity(points.len());
        for p in &points {
            let election = ElectionRequest::try_from(p.request(mode, req.initiators)).map_err(RequestError::from)?;
            let plan = plan(&election, self.elections.cluster().len(), config)
                .map_err(|e| Status::new(e.code, format!("{} (at {}): {}", e.field, p.describe(), e.reason)))?;
            plans.push(plan);
        }
        let (tx, rx) = mpsc::channel(64);
        let elections = self.elections.clone();
        tokio::spawn(async move {
            let total = points.len() as u32;
            let mut rows = Vec::with_capacity(points.len());
            for (i, (p, plan)) in points.iter().zip(plans).enumerate() {
                let progress = pb::CompareProgress { done: i as u32, total, current: p.describe() };
                if tx.send(Ok(compare_event(pb::compare_event::Kind::Progress(progress)))).await.is_err() {
                    return; // The caller went away: stop the sweep.
                }
                // A sweep waits for room rather than failing when the controller is busy.
                let entry = loop {
                    match elections.launch(plan.clone()) {
                        Ok(entry) => break entry,
                        Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                    }
                };
                entry.wait_done().await;
                let row = compare::row(p, &pb::Election::from(&entry.snapshot()));
                rows.push(row.clone());
                if tx.send(Ok(compare_event(pb::compare_event::Kind::Row(row)))).await.is_err() {
                    return;
                }
            }
            let done = pb::CompareProgress { done: total, total, current: String::new() };
            let _ = tx.send(Ok(compare_event(pb::compare_event::Kind::Progress(done)))).await;
            let result = pb::CompareResult { csv: compare::csv(&rows), svg: compare::svg(&rows), rows };
            let _ = tx.send(Ok(compare_event(pb::compare_event::Kind::Result(result)))).await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn inject_fault(&self, request: Request<pb::InjectFaultRequest>) -> Result<Response<pb::FaultInfo>, Status> {
        self.authorize(&request, "InjectFault", Access::Write)?;
        let watch = Arc::new(ElectionWatch(self.elections.clone()));
        Ok(Response::new(self.faults.inject(request.into_inner(), watch).await?))
    }

    async fn list_faults(
        &self,
        request: Request<pb::ListFaultsRequest>,
    ) -> Result<Response<pb::ListFaultsResponse>, Status> {
        self.authorize(&request, "ListFaults", Access::Read)?;
        Ok(Response::new(pb::ListFaultsResponse { faults: self.faults.list() }))
    }

    async fn clear_faults(
        &self,
        request: Request<pb::ClearFaultsRequest>,
    ) -> Result<Response<pb::ClearFaultsResponse>, Status> {
        self.authorize(&request, "ClearFaults", Access::Write)?;
        let cleared = self.faults.clear(&request.get_ref().fault_id).await?;
        Ok(Response::new(pb::ClearFaultsResponse { cleared }))
    }

    async fn get_leader(&self, request: Request<pb::GetLeaderRequest>) -> Result<Response<pb::Leader>, Status> {
        self.authorize(&request, "GetLeader", Access::Read)?;
        let id = &request.get_ref().election_id;
        // "Who leads now": a running kept leadership first, else the latest finished election.
        let kept = || {
            self.elections.list().into_iter().find(|e| {
                let r = e.snapshot();
                r.keep_leader && r.state == State::Running
            })
        };
        let record = if id.is_empty() {
            kept()
                .or_else(|| self.elections.last_finished())
                .ok_or_else(|| Status::not_found("no election has finished yet; start one with StartElection"))?
                .snapshot()
        } else {
            self.entry(id)?.snapshot()
        };
        leader_of(&record).map(Response::new)
    }
}

/// The election registry as faults that wait for an event see it.
struct ElectionWatch(Arc<Elections>);

impl ElectionWatch {
    fn kept(&self) -> Option<ElectionRecord> {
        self.0
            .list()
            .into_iter()
            .map(|e| e.snapshot())
            .find(|r| r.keep_leader && r.state == State::Running && r.mode == Mode::Live)
    }
}

impl crate::faults::Watch for ElectionWatch {
    /// "The leader": of the running kept leadership, else of the latest finished election.
    fn leader(&self) -> Option<String> {
        let record = match self.kept() {
            Some(r) => r,
            None => self.0.last_finished()?.snapshot(),
        };
        leader_of(&record).ok()?.leader.map(|l| l.node)
    }

    fn running_kept(&self) -> Option<String> {
        self.kept().map(|r| r.id)
    }

    fn live_elections(&self) -> Vec<String> {
        self.0.list().into_iter().map(|e| e.snapshot()).filter(|r| r.mode == Mode::Live).map(|r| r.id).collect()
    }

    fn progress(&self, id: &str) -> Option<(bool, u64)> {
        let r = self.0.get(id)?.snapshot();
        Some((r.leader.is_some(), r.term))
    }
}

fn compare_event(kind: pb::compare_event::Kind) -> pb::CompareEvent {
    pb::CompareEvent { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringleader_core::algo::detector::DetectorConfig;
    use ringleader_core::topology::TopologyKind;
    use tonic::Code;

    fn req(algorithm: &str) -> ElectionRequest {
        ElectionRequest::try_from(pb::StartElectionRequest { algorithm: algorithm.into(), ..Default::default() })
            .unwrap()
    }

    fn refused(r: &ElectionRequest, nodes: usize) -> (Code, &'static str) {
        match plan(r, nodes, &ControllerConfig::default()) {
            Ok(p) => panic!("accepted: {} on {} positions", p.spec.name, p.n()),
            Err(e) => (e.code, e.field),
        }
    }

    /// On the embedded cluster, a kept leadership is admitted at the loopback detector up to the largest
    /// size the keep benchmark saw agree (bully and ZooKeeper-style 128 nodes, repaired ring 64,
    /// Chubby-style 256) and refused one node beyond, whatever the detector, naming `size`; at that
    /// size a detector five times faster than loopback is refused naming `detector`, with a
    /// suggested detector that is admitted.
    #[test]
    fn kept_leaderships_fit_the_embedded_process_as_measured() {
        let check = |algorithm: &str, n: usize, detector: DetectorConfig| {
            let kept = ElectionRequest { keep_leader: true, detector: Some(detector), ..req(algorithm) };
            fits_the_process(&plan(&kept, n, &ControllerConfig::default()).unwrap())
        };
        let loopback = DetectorConfig::LOOPBACK;
        let slow = DetectorConfig { period_ms: 5_000, timeout_ms: 20_000 };
        let fast = DetectorConfig { period_ms: 10, timeout_ms: 40 };
        for (algorithm, agreed) in [("bully", 128), ("zookeeper", 128), ("repaired-ring", 64), ("chubby", 256)] {
            assert!(check(algorithm, agreed, loopback).is_ok(), "{algorithm} {agreed}");
            let e = check(algorithm, agreed + 1, slow).unwrap_err();
            assert_eq!(e.code(), Code::ResourceExhausted, "{algorithm} {}", agreed + 1);
            assert!(e.message().starts_with("size: "), "{}", e.message());
            let e = check(algorithm, agreed, fast).unwrap_err();
            assert!(e.message().starts_with("detector: "), "{algorithm}: {}", e.message());
            let suggested = e.message().split("(period_ms ").nth(1).unwrap();
            let (period, timeout) = suggested.split_once(" and timeout_ms ").unwrap();
            let timeout = timeout.split(')').next().unwrap();
            let d = DetectorConfig { period_ms: period.parse().unwrap(), timeout_ms: timeout.parse().unwrap() };
            assert!(check(algorithm, agreed, d).is_ok(), "{algorithm} {agreed} with the suggested {d:?}");
        }
    }

    /// A kept leadership takes the controller's detector unless the request gives one; detector settings
    /// without keep_leader, a zero period, a timeout below the period or above a day are refused naming `detector`.
    #[test]
    fn detector_settings_are_checked() {
        let kept = ElectionRequest { keep_leader: true, ..req("bully") };
        let cfg = ControllerConfig { detector_period_ms: 100, detector_timeout_ms: 900, ..ControllerConfig::default() };
        assert_eq!(plan(&kept, 5, &cfg).unwrap().detector, DetectorConfig { period_ms: 100, timeout_ms: 900 });
        let own = DetectorConfig { period_ms: 20, timeout_ms: 60 };
        let asked = ElectionRequest { detector: Some(own), ..kept.clone() };
        assert_eq!(plan(&asked, 5, &cfg).unwrap().detector, own);
        for bad in [(0, 10), (50, 40), (50, 86_400_001)] {
            let d = DetectorConfig { period_ms: bad.0, timeout_ms: bad.1 };
            let r = ElectionRequest { detector: Some(d), ..kept.clone() };
            assert_eq!(refused(&r, 5), (Code::InvalidArgument, "detector"), "{d:?}");
        }
        let one_shot = ElectionRequest { detector: Some(own), ..req("bully") };
        assert_eq!(refused(&one_shot, 5), (Code::InvalidArgument, "detector"));
    }

    /// Defaults: LIVE over the whole cluster, every node an initiator, the
    /// algorithm's own topology and rule, ids a permutation of 1..=n.
    #[test]
    fn defaults_resolve() {
        let p = plan(&req("stages"), 8, &ControllerConfig::default()).unwrap();
        assert_eq!((p.n(), p.k(), p.mode), (8, 8, Mode::Live));
        assert_eq!(p.topology.kind(), TopologyKind::RingBi);
        assert_eq!(p.rule, p.spec.rule);
        let mut ids = p.ids.clone();
        ids.sort();
        assert_eq!(ids, (1..=8).collect::<Vec<_>>());
        let mut sim = req("as-far");
        sim.mode = Mode::Simulated;
        assert_eq!(plan(&sim, 0, &ControllerConfig::default()).unwrap().n(), DEFAULT_SIMULATED_SIZE);
    }

    /// Shape parameters belong to their topology: rows/cols only for MESH, edges only for TREE and GRAPH,
    /// and an algorithm refuses a topology it does not list (a ring algorithm on a mesh or complete network).
    #[test]
    fn shape_parameters_belong_to_their_topology() {
        let mut r = req("as-far");
        r.rows = 2;
        assert_eq!(refused(&r, 8), (Code::InvalidArgument, "topology.rows"));
        r.rows = 0;
        r.cols = 4;
        assert_eq!(refused(&r, 8), (Code::InvalidArgument, "topology.cols"));
        r.cols = 0;
        r.edges = vec![(0, 1)];
        assert_eq!(refused(&r, 8), (Code::InvalidArgument, "topology.edges"));
        for kind in [TopologyKind::Mesh, TopologyKind::Complete, TopologyKind::Graph] {
            let mut r = req("as-far");
            r.topology = Some(kind);
            let e = plan(&r, 8, &ControllerConfig::default()).unwrap_err();
            assert_eq!((e.code, e.field), (Code::InvalidArgument, "topology"));
            assert!(e.reason.contains(kind.name()), "{}", e.reason);
        }
    }

    /// Explicit initiators are given by id and become sorted positions.
    #[test]
    fn initiators_by_id() {
        let mut r = req("as-far");
        r.ids = vec![30, 10, 20];
        r.initiator_ids = vec![20, 30];
        let p = plan(&r, 3, &ControllerConfig::default()).unwrap();
        assert_eq!((p.ids.clone(), p.initiators.clone()), (vec![30, 10, 20], vec![0, 2]));
    }

    /// Every refusal carries the code and the field the API documents.
    #[test]
    fn refusals_name_the_field() {
        use Code::{FailedPrecondition as Fp, InvalidArgument as Ia};
        assert_eq!(refused(&req("nope"), 8), (Ia, "algorithm"));
        assert_eq!(refused(&req(""), 8), (Ia, "algorithm"));
        let mut r = req("stages");
        r.topology = Some(TopologyKind::RingUni);
        assert_eq!(refused(&r, 8), (Ia, "topology"));
        let mut r = req("as-far");
        r.ids = vec![1, 2, 2];
        assert_eq!(refused(&r, 8), (Ia, "ids"));
        r.ids = vec![1, 2, 3];
        r.size = 4;
        assert_eq!(refused(&r, 8), (Ia, "ids"));
        r.size = 0;
        r.initiator_ids = vec![4];
        assert_eq!(refused(&r, 8), (Ia, "initiator_ids"));
        let mut r = req("as-far");
        r.size = 4;
        r.initiators = 5;
        assert_eq!(refused(&r, 8), (Ia, "initiators"));
        r.initiators = 0;
        r.size = 9;
        assert_eq!(refused(&r, 8), (Fp, "size"));
        r.size = 1;
        assert_eq!(refused(&r, 8), (Ia, "size"));
        assert_eq!(refused(&req("as-far"), 0), (Fp, "size"));
        let mut r = req("stages");
        r.mode = Mode::Simulated;
        r.simulation = Some(SimOptions { non_fifo: true, ..SimOptions::default() });
        assert_eq!(refused(&r, 8), (Fp, "simulation.non_fifo"));
        r.mode = Mode::Live;
        assert_eq!(refused(&r, 8), (Ia, "simulation"));
        let mut r = req("as-far");
        r.mode = Mode::Simulated;
        r.size = 1_000_001;
        assert_eq!(refused(&r, 8), (Ia, "size"));
        let mut r = req("all-the-way");
        r.mode = Mode::Simulated;
        r.size = 100_000;
        assert_eq!(refused(&r, 8), (Ia, "size"));
    }
}
