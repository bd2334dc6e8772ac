//! The `ringleader.v1.Controller` gRPC service: who may call what, the
//! calls themselves, and every mapping of an error to a `tonic::Status`.
//! Requests are checked and resolved into plans by `planning`.
//!
//! Bad requests are refused before anything runs, with `INVALID_ARGUMENT`
//! (the request itself is wrong) or `FAILED_PRECONDITION` (the request is
//! fine but cannot run here, e.g. a LIVE election larger than the cluster);
//! the message starts with the field at fault, e.g. `size: ...`.

mod planning;

use ringleader_node::auth::{Access, Auth};
use std::sync::Arc;

use ringleader_core::algo::catalogue;
use ringleader_proto::v1::{self as pb, controller_server::Controller};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::convert::{self, ElectionRequest};
use crate::elections::{Elections, Entry, WatchEvent};
pub use crate::error::RequestError;
use crate::faults::Faults;
use crate::record::{ElectionRecord, Mode, State};
use crate::{check, compare};
use planning::fits_the_process;
pub use planning::{
    Checked, DEFAULT_SIMULATED_SIZE, MAX_COMPLETE_SIZE, MAX_LOCAL_HEARTBEATS_PER_SECOND, TIMER_EVENTS_PER_MESSAGE,
    build, check, etcd_endpoint, plan,
};

/// The Controller service.
#[derive(Clone, Debug)]
pub struct ControllerService {
    elections: Arc<Elections>,
    faults: Arc<Faults>,
    auth: Auth,
    /// The checks: the queue, the runs under way, the cache of verdicts.
    checks: check::Checks,
    /// The places of the lab's explores replaying at once (`max_concurrent_explores`).
    explores: check::Slots,
    /// GetCluster's last answer from the nodes, shared by the calls waiting for it.
    cluster_view: Arc<ClusterView>,
}

/// GetCluster asks every node; calls that arrive while it asks share that
/// asking instead of each fanning out again (10,000 unread GetCluster calls
/// were 50,000 node calls in flight). A call takes an answer whose asking
/// began after the call arrived (as fresh as its own would be), else asks.
#[derive(Debug, Default)]
struct ClusterView(tokio::sync::Mutex<Option<(std::time::Instant, Vec<pb::ClusterNode>)>>);

impl ControllerService {
    /// A service running its elections through `elections`, open to every caller.
    pub fn new(elections: Arc<Elections>) -> Self {
        Self::with_auth(elections, Auth::default())
    }

    /// The programs this controller installed (`controller.programs_dir`).
    pub fn programs(&self) -> crate::programs::Installed {
        self.elections.config().programs.clone()
    }

    /// A service that asks callers for the tokens of `auth` (see [`ringleader_node::auth`]).
    pub fn with_auth(elections: Arc<Elections>, auth: Auth) -> Self {
        let faults =
            Faults::new(elections.cluster().clone(), elections.config().rpc_timeout(), elections.config().max_faults);
        let registry = Arc::downgrade(&faults);
        elections.set_fault_note(crate::elections::FaultNote(Box::new(move |election: &str| {
            fault_note(registry.upgrade()?.list(), election)
        })));
        let registry = Arc::downgrade(&faults);
        crate::telemetry::register_gauges(
            &elections,
            Arc::new(move || registry.upgrade().map(|f| f.active_kinds()).unwrap_or_default()),
        );
        elections.set_fault_probe(Box::new(crate::faults::Probe(Arc::downgrade(&faults))));
        let checks = check::Checks::new(elections.budget().clone(), elections.config());
        let explores = check::Slots::new(elections.config().max_concurrent_explores);
        ControllerService { elections, faults, auth, checks, explores, cluster_view: Arc::default() }
    }

    /// Refuse the call unless its credentials allow `access` (counted and logged, never the secret).
    /// The lab's own calls that run no gRPC method (the explorer) ask it too.
    pub(crate) fn authorize<T>(
        &self,
        request: &Request<T>,
        method: &'static str,
        access: Access,
    ) -> Result<(), Status> {
        self.auth.check_controller(request.metadata(), method, access).inspect_err(|status| {
            ringleader_node::auth::refused("controller", method, request.remote_addr(), status);
        })
    }

    /// A place among the lab's explores replaying at once ([`check::admit_explore`]).
    pub(crate) async fn admit_explore(&self) -> Result<tokio::sync::OwnedSemaphorePermit, Status> {
        check::admit_explore(&self.explores).await
    }

    fn entry(&self, election_id: &str) -> Result<Arc<Entry>, Status> {
        if election_id.is_empty() {
            return Err(RequestError::invalid("election_id", "required").into());
        }
        self.elections.get(election_id).ok_or_else(|| {
            RequestError {
                code: tonic::Code::NotFound,
                field: "election_id".into(),
                reason: format!(
                    "no election `{election_id}` (the controller keeps the last {} elections)",
                    self.elections.config().max_elections
                ),
            }
            .into()
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
                ..Default::default()
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
            ..Default::default()
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

impl ControllerService {
    /// Every node's answer to Info, in node order (GetCluster's fan-out).
    async fn ask_nodes(&self) -> Result<Vec<pb::ClusterNode>, Status> {
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
                            // Learned here too, not only by the node's event stream: an election
                            // that fails on it soon after names it.
                            node.set_name(&info.name);
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
        Ok(nodes.into_iter().map(|(_, n)| n).collect())
    }
}

#[tonic::async_trait]
impl Controller for ControllerService {
    async fn list_algorithms(
        &self,
        request: Request<pb::ListAlgorithmsRequest>,
    ) -> Result<Response<pb::ListAlgorithmsResponse>, Status> {
        self.authorize(&request, "ListAlgorithms", Access::Read)?;
        // The built-ins, then the programs this controller installed (`program: true`).
        let programs = self.elections.config().programs.all().iter().copied();
        let algorithms = catalogue::CATALOGUE.iter().chain(programs).map(convert::algorithm_info).collect();
        Ok(Response::new(pb::ListAlgorithmsResponse { algorithms }))
    }

    async fn get_cluster(&self, request: Request<pb::GetClusterRequest>) -> Result<Response<pb::Cluster>, Status> {
        self.authorize(&request, "GetCluster", Access::Read)?;
        let arrived = std::time::Instant::now();
        let mut view = self.cluster_view.0.lock().await;
        let mut nodes = match &*view {
            Some((asked, nodes)) if *asked >= arrived => nodes.clone(),
            _ => {
                let asked = std::time::Instant::now();
                let nodes = self.ask_nodes().await?;
                *view = Some((asked, nodes.clone()));
                nodes
            }
        };
        drop(view);
        for (i, node) in nodes.iter_mut().enumerate() {
            node.faults = self.faults.on_node(i);
        }
        Ok(Response::new(pb::Cluster { nodes }))
    }

    async fn start_election(
        &self,
        request: Request<pb::StartElectionRequest>,
    ) -> Result<Response<pb::Election>, Status> {
        self.authorize(&request, "StartElection", Access::Write)?;
        let request = ElectionRequest::try_from(request.into_inner()).map_err(RequestError::from)?;
        let checked = check(&request, self.elections.cluster().len(), self.elections.config())?;
        let placement = self.place(&request, &checked).await?;
        // Admitted before its plan is built, so the plan's memory is inside its reservation.
        let admission = self.elections.admit(self.estimate(&checked), || describe_checked(&checked))?;
        let mut plan = build_plan(request.clone(), checked).await?;
        plan.placement = placement;
        plan.etcd_endpoint = etcd_endpoint(&plan, self.elections.config());
        if self.elections.cluster().is_local() {
            fits_the_process(&plan)?;
        }
        let entry = self.elections.launch_admitted(plan, admission);
        if request.wait && (!request.keep_leader || request.mode == crate::record::Mode::Simulated) {
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
        // One a previous controller stopped in the middle may still run on the nodes.
        self.elections.forget_if_interrupted(&entry);
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
        // Summaries only (no participants, timeline or diagram; GetElection has them), read in place.
        let elections = self
            .elections
            .list()
            .iter()
            .filter_map(|e| {
                e.inspect(|r| (algorithm.is_empty() || r.algorithm == algorithm).then(|| convert::election_summary(r)))
            })
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
            // Watchers get summaries: a diagram (megabytes) goes once per GetElection, not per event.
            let summary = convert::election_summary;
            if !send(Kind::Snapshot(summary(&snapshot))).await {
                return;
            }
            if snapshot.state.is_terminal() {
                send(Kind::Finished(summary(&snapshot))).await;
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
                    Ok(WatchEvent::State(r)) => Kind::Snapshot(summary(&r)),
                    Ok(WatchEvent::Leadership(c)) => Kind::Leadership(pb::LeadershipChange::from(&c)),
                    Ok(WatchEvent::Failover(f)) => Kind::Failover(pb::Failover::from(&*f)),
                    Ok(WatchEvent::Finished(r)) => {
                        send(Kind::Finished(summary(&r))).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => {
                        // Too slow to follow every event: resume from the current state.
                        let (r, terminal) = entry.inspect(|r| (summary(r), r.state.is_terminal()));
                        if terminal {
                            send(Kind::Finished(r)).await;
                            return;
                        }
                        Kind::Snapshot(r)
                    }
                };
                if !send(kind).await {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    type CheckAlgorithmStream = ReceiverStream<Result<pb::CheckEvent, Status>>;

    async fn check_algorithm(
        &self,
        request: Request<pb::CheckRequest>,
    ) -> Result<Response<Self::CheckAlgorithmStream>, Status> {
        self.authorize(&request, "CheckAlgorithm", Access::Write)?;
        let plan = check::plan(request.get_ref())?;
        // Answered from the cache, by a run under way, or by a run of its own once its turn comes.
        let events = self.checks.ask(plan)?;
        Ok(Response::new(ReceiverStream::new(events)))
    }

    type CompareAlgorithmsStream = ReceiverStream<Result<pb::CompareEvent, Status>>;

    async fn compare_algorithms(
        &self,
        request: Request<pb::CompareRequest>,
    ) -> Result<Response<Self::CompareAlgorithmsStream>, Status> {
        self.authorize(&request, "CompareAlgorithms", Access::Write)?;
        let req = request.into_inner();
        let config = self.elections.config();
        let compare::Sweep { points, notes } =
            compare::points(&req, self.elections.cluster().len(), config.max_simulated_size)?;
        let mode = pb::Mode::try_from(req.mode).unwrap_or(pb::Mode::Live);
        // Check every point before running any, so a bad point refuses the whole sweep; build
        // nothing yet: each plan is built when its turn comes, inside its point's reservation.
        let mut checked = Vec::with_capacity(points.len());
        for p in &points {
            let election = ElectionRequest::try_from(p.request(mode, req.initiators)).map_err(RequestError::from)?;
            let c = check(&election, self.elections.cluster().len(), config)
                .map_err(|e| Status::new(e.code, format!("{} (at {}): {}", e.field, p.describe(), e.reason)))?;
            // A point that could never fit would wait for room for ever.
            self.elections
                .fits_the_budget(self.estimate(&c), || describe_checked(&c))
                .map_err(|e| Status::resource_exhausted(format!("{e} (at {})", p.describe())))?;
            checked.push((election, c));
        }
        let (tx, rx) = mpsc::channel(64);
        let this = self.clone();
        tokio::spawn(async move { this.sweep(points, notes, checked, tx).await });
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
        let req = request.get_ref();
        let cleared = self.faults.clear(&req.fault_id, &req.election_id).await?;
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
                .ok_or_else(|| none_finished(&self.elections.list()))?
                .snapshot()
        } else {
            self.entry(id)?.snapshot()
        };
        let mut leader = leader_of(&record)?;
        if record.mode == Mode::Live
            && let Some(l) = &leader.leader
            && let Some(i) = self.elections.cluster().nodes().iter().position(|n| n.name() == l.node)
            && let Some(why) = self.elections.node_down(i)
        {
            leader.leader_down = true;
            leader.leader_down_reason = format!("{} is {why}", l.node);
        }
        Ok(Response::new(leader))
    }
}

/// GetLeader without an id when no election has finished: NOT_FOUND, naming
/// the latest of `records` (most recent first) and why it has no leader.
fn none_finished(records: &[Arc<Entry>]) -> Status {
    let Some(latest) = records.first() else {
        return Status::not_found("no election has finished yet; start one with StartElection");
    };
    let what = latest.inspect(|r| {
        let state = match r.state {
            State::Pending => "PENDING",
            State::Running => "RUNNING",
            State::Finished => "FINISHED",
            State::Failed => "FAILED",
        };
        let error = r.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        let mode = match r.mode {
            Mode::Live => "LIVE",
            Mode::Simulated => "SIMULATED",
        };
        format!("{} ({mode} {}), {state}{error}", r.id, r.algorithm)
    });
    let n = records.len();
    let plural = if n == 1 { "" } else { "s" };
    Status::not_found(format!(
        "{n} election{plural} recorded, none finished with a leader; the latest: {what}. Start one with StartElection"
    ))
}

impl ControllerService {
    /// Where a LIVE election's positions run (see [`Elections::place`]);
    /// nothing for a SIMULATED one.
    /// A node whose event stream is (re)opening, as just after the
    /// controller started, gets [`PLACE_WAIT`] to open it.
    async fn place(&self, request: &ElectionRequest, c: &Checked) -> Result<Vec<usize>, RequestError> {
        if c.mode == Mode::Simulated {
            return Ok(Vec::new());
        }
        let opening = || self.elections.cluster().nodes().iter().any(|n| !n.events_connected());
        place_waiting(opening, || self.elections.place(&request.nodes, c.n), PLACE_WAIT).await
    }

    /// The memory estimate of a checked request (its plan not built yet).
    fn estimate(&self, c: &Checked) -> u64 {
        self.elections.estimate(c.spec, c.mode, c.kind, c.n)
    }

    /// Run a sweep's points one after another, each admitted (waiting for
    /// room rather than failing when the controller is busy), then planned
    /// off the runtime's workers, then run, streaming progress and rows to
    /// `tx`; the table and plot last, with `notes`. Ends when the caller goes away.
    async fn sweep(
        &self,
        points: Vec<compare::Point>,
        notes: Vec<String>,
        checked: Vec<(ElectionRequest, Checked)>,
        tx: mpsc::Sender<Result<pb::CompareEvent, Status>>,
    ) {
        let total = points.len() as u32;
        let mut rows = Vec::with_capacity(points.len());
        for (i, (p, (election, c))) in points.iter().zip(checked).enumerate() {
            let progress = pb::CompareProgress { done: i as u32, total, current: p.describe() };
            if tx.send(Ok(compare_event(pb::compare_event::Kind::Progress(progress)))).await.is_err() {
                return; // The caller went away: stop the sweep.
            }
            let bytes = self.estimate(&c);
            let admission = loop {
                match self.elections.admit(bytes, || describe_checked(&c)) {
                    Ok(a) => break a,
                    Err(_) if tx.is_closed() => return,
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                }
            };
            let placement = match self.place(&election, &c).await {
                Ok(placement) => placement,
                Err(e) => {
                    let _ = tx.send(Err(Status::new(e.code, format!("at {}: {e}", p.describe())))).await;
                    return;
                }
            };
            let mut plan = match build_plan(election, c).await {
                Ok(plan) => plan,
                Err(e) => {
                    let _ = tx.send(Err(Status::internal(format!("at {}: {e}", p.describe())))).await;
                    return;
                }
            };
            plan.placement = placement;
            plan.etcd_endpoint = etcd_endpoint(&plan, self.elections.config());
            let entry = self.elections.launch_admitted(plan, admission);
            entry.wait_done().await;
            let row = compare::row(p, &pb::Election::from(&entry.snapshot()));
            rows.push(row.clone());
            if tx.send(Ok(compare_event(pb::compare_event::Kind::Row(row)))).await.is_err() {
                return;
            }
        }
        let done = pb::CompareProgress { done: total, total, current: String::new() };
        let _ = tx.send(Ok(compare_event(pb::compare_event::Kind::Progress(done)))).await;
        let result = pb::CompareResult { csv: compare::csv(&rows), svg: compare::svg(&rows, &notes), rows, notes };
        let _ = tx.send(Ok(compare_event(pb::compare_event::Kind::Result(result)))).await;
    }
}

/// Place with `place` until it succeeds, or fails otherwise than for nodes
/// down, or `wait` is over, or no stream was opening before the attempt
/// (`opening`, read before each attempt: a stream that opens between the
/// attempt and the look is still waited for).
async fn place_waiting(
    opening: impl Fn() -> bool,
    mut place: impl FnMut() -> Result<Vec<usize>, RequestError>,
    wait: std::time::Duration,
) -> Result<Vec<usize>, RequestError> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let was_opening = opening();
        match place() {
            Err(e)
                if e.code == tonic::Code::FailedPrecondition
                    && was_opening
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            placed => return placed,
        }
    }
}

/// How long a LIVE election waits for too few nodes up to become enough
/// (event streams opening after the controller or a node started) before
/// it is refused.
const PLACE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Plans of at least this many positions are built off the runtime's
/// workers (a ring of 10^6 positions takes 38 MB and tens of milliseconds).
const BUILD_OFF_WORKERS_FROM: u32 = 4_096;

/// Build the plan of a checked request; a large one on a blocking thread.
async fn build_plan(request: ElectionRequest, checked: Checked) -> Result<crate::elections::Plan, Status> {
    if checked.n < BUILD_OFF_WORKERS_FROM {
        return Ok(build(&request, checked)?);
    }
    tokio::task::spawn_blocking(move || build(&request, checked))
        .await
        .map_err(|e| Status::internal(format!("planning the election failed: {e}")))?
        .map_err(Status::from)
}

/// A checked request in words, for a refusal.
fn describe_checked(c: &Checked) -> String {
    crate::elections::describe(c.mode, c.spec.name, c.n)
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

    fn messages(&self, id: &str) -> Option<u64> {
        self.0.get(id)?.inspect(|r| r.metrics.as_ref().map(|m| m.messages))
    }

    fn election(&self, id: &str) -> Option<crate::faults::ElectionView> {
        self.0.get(id)?.inspect(|r| {
            Some(crate::faults::ElectionView {
                live: r.mode == Mode::Live,
                ended: r.state.is_terminal(),
                nodes: r.participants.iter().map(|p| p.node.clone()).collect(),
                leader: r.leader.as_ref().map(|l| l.node.clone()),
            })
        })
    }
}

fn compare_event(kind: pb::compare_event::Kind) -> pb::CompareEvent {
    pb::CompareEvent { kind: Some(kind) }
}

/// The faults of `list` active now that could have stood in the way of
/// `election`: the node-wide ones and its own, not other elections' scoped
/// ones; `None` when there are none.
fn fault_note(list: Vec<pb::FaultInfo>, election: &str) -> Option<String> {
    let active: Vec<String> = list
        .into_iter()
        .filter(|f| f.state == pb::FaultState::Active as i32)
        .filter(|f| f.election_id.is_empty() || f.election_id == election)
        .map(|f| format!("{} ({})", f.fault_id, f.description))
        .collect();
    (!active.is_empty()).then(|| active.join(", "))
}

#[cfg(test)]
mod tests {
    /// A failed LIVE election's note names the node-wide faults and its own scoped ones, never
    /// another election's scoped fault (before, every active fault was listed), nor a waiting one.
    #[test]
    fn a_fault_note_names_what_could_stand_in_an_elections_way() {
        let fault = |id: &str, election: &str, state: pb::FaultState| pb::FaultInfo {
            fault_id: id.into(),
            election_id: election.into(),
            state: state as i32,
            description: format!("crash {id}"),
            ..Default::default()
        };
        let list = vec![
            fault("f1", "", pb::FaultState::Active),
            fault("f2", "e1", pb::FaultState::Active),
            fault("f3", "e2", pb::FaultState::Active),
            fault("f4", "", pb::FaultState::Waiting),
        ];
        assert_eq!(fault_note(list.clone(), "e1").as_deref(), Some("f1 (crash f1), f2 (crash f2)"));
        assert_eq!(fault_note(list[2..].to_vec(), "e1"), None);
    }

    use super::*;
    use std::cell::Cell;

    /// A stream that opens between a refused placement and the look at the streams is still waited
    /// for: the next attempt places (the look came after the attempt, and a just-started
    /// controller refused its first election now and then, naming a node "event stream closed").
    #[tokio::test]
    async fn a_stream_opening_during_the_attempt_is_waited_for() {
        let connected = Cell::new(false);
        let attempts = Cell::new(0);
        let place = || {
            attempts.set(attempts.get() + 1);
            if connected.replace(true) { Ok(vec![0]) } else { Err(RequestError::precondition("size", "down")) }
        };
        let placed = place_waiting(|| !connected.get(), place, std::time::Duration::from_secs(2)).await;
        assert_eq!(placed.map_err(|e| e.reason), Ok(vec![0]));
        assert_eq!(attempts.get(), 2);
    }

    /// With every stream open, a refusal (a node crashed by a fault) is answered at once, not waited on.
    #[tokio::test]
    async fn a_refusal_with_every_stream_open_is_not_waited_on() {
        let attempts = Cell::new(0);
        let place = || {
            attempts.set(attempts.get() + 1);
            Err(RequestError::precondition("size", "crashed"))
        };
        let placed = place_waiting(|| false, place, std::time::Duration::from_secs(2)).await;
        assert_eq!(placed.map_err(|e| e.reason), Err("crashed".to_string()));
        assert_eq!(attempts.get(), 1);
    }
}
