//! Checking a `StartElection` request and resolving it into a [`Plan`]: one
//! phase per concern (algorithm, kept leadership, detector, simulator
//! options, overlay, size, ids, initiators, budgets, diagram), each refusing
//! with the field at fault; and the admission of kept leaderships to the
//! embedded cluster's one process.

use std::collections::HashMap;

use ringleader_core::algo::catalogue::{self};

use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::{self, IdError, IdOrder, Topology, TopologyError, TopologyKind};
use tonic::Status;

use crate::config::ControllerConfig;
use crate::convert::{ElectionRequest, SimFault};
use crate::elections::{Drawing, MAX_DIAGRAM_NODES, Plan, PlannedFault};
use crate::error::RequestError;
use crate::record::{Mode, SimOptions};

/// How long a SIMULATED kept leadership runs when the request does not say, in virtual ms.
pub(crate) const DEFAULT_HORIZON_MS: u64 = 3_000;
/// The longest run of a SIMULATED kept leadership, in virtual ms.
pub(crate) const MAX_HORIZON_MS: u64 = 600_000;
/// The most faults a SIMULATED kept leadership schedules.
pub(crate) const MAX_SCHEDULED_FAULTS: usize = 64;

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

/// What [`check`] resolved of a request before anything that grows with its
/// size is built: enough to estimate its memory and to refuse it.
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    /// The algorithm.
    pub spec: &'static AlgorithmSpec,
    /// LIVE or SIMULATED.
    pub mode: Mode,
    /// The failure detector of a kept leadership.
    pub detector: DetectorConfig,
    /// Simulator options.
    pub sim: SimOptions,
    /// The overlay's kind.
    pub kind: TopologyKind,
    /// Positions.
    pub n: u32,
    /// Initiators.
    pub k: u32,
}

/// Check `req` against the catalogue and a cluster of `cluster_nodes` nodes,
/// and resolve every default: the election to run. The checks run in this
/// order, so a request wrong in several ways is refused for the first.
/// [`check`], then [`build`].
pub fn plan(req: &ElectionRequest, cluster_nodes: usize, config: &ControllerConfig) -> Result<Plan, RequestError> {
    let mut plan = build(req, check(req, cluster_nodes, config)?)?;
    plan.etcd_endpoint = etcd_endpoint(&plan, config);
    Ok(plan)
}

/// The etcd endpoint a plan's nodes are given: the controller's, for a LIVE
/// election of an algorithm that keeps its record in a store (`lease`);
/// empty otherwise. [`check`] has refused such an election without one.
pub fn etcd_endpoint(plan: &Plan, config: &ControllerConfig) -> String {
    if plan.spec.live_provision == ringleader_core::spec::Provision::Store && plan.mode == Mode::Live {
        config.etcd_endpoint.clone()
    } else {
        String::new()
    }
}

/// Every check [`plan`] makes, in its order, without building the ids, the
/// initiators or the overlay (which grow with the size: 38 MB for a ring of
/// 10^6 positions): a request `check` accepts, `build` builds. A sweep checks
/// every point with it up front and builds one plan at a time.
pub fn check(req: &ElectionRequest, cluster_nodes: usize, config: &ControllerConfig) -> Result<Checked, RequestError> {
    let spec = algorithm(req, config)?;
    check_keep_leader(req, spec)?;
    let detector = detector(req, config)?;
    let sim = simulation(req, spec)?;
    scheduled(req, sim)?;
    let kind = topology_kind(req, spec)?;
    let n = size_fits(req, spec, kind, size(req, kind, cluster_nodes)?, cluster_nodes, config)?;
    let k = if req.ids.is_empty() && req.initiator_ids.is_empty() && spec.extras.live_wait_ms.is_none() {
        // Nothing the request gave to check against: the ids are placed by an order.
        arrangement(req, spec)?;
        initiator_count(req, n)?
    } else {
        // Given ids or initiators, and an algorithm whose wait follows its ids and initiators,
        // are checked by building them (as large as the request).
        let ids = ids(req, spec, n)?;
        let initiators = initiators(req, &ids, n)?;
        live_wait(req, spec, &ids, &initiators, config)?;
        initiators.len() as u32
    };
    within_message_budget(req, spec, n, k as usize, config)?;
    check_topology(req, kind, n)?;
    ringleader_core::spec::check_options(spec, &req.options, n, req.keep_leader)
        .map_err(|(field, why)| RequestError::invalid(field, why))?;
    diagram(req, sim, n)?;
    store(req, spec, config)?;
    Ok(Checked { spec, mode: req.mode, detector, sim, kind, n, k })
}

/// Build the plan of a request [`check`] accepted.
pub fn build(req: &ElectionRequest, c: Checked) -> Result<Plan, RequestError> {
    let ids = ids(req, c.spec, c.n)?;
    let initiators = initiators(req, &ids, c.n)?;
    let topology = build_topology(req, c.kind, c.n)?;
    let diagram = diagram(req, c.sim, c.n)?;
    let faults = planned_faults(req, &ids)?;
    Ok(Plan {
        spec: c.spec,
        mode: req.mode,
        topology,
        rule: req.winner.unwrap_or(c.spec.rule),
        ids,
        initiators,
        seed: req.seed,
        sim: c.sim,
        diagram,
        keep_leader: req.keep_leader,
        detector: c.detector,
        // Placed on the cluster by the caller, who knows which nodes are up.
        placement: Vec::new(),
        faults,
        options: req.options.clone(),
        // The controller's, set by the caller (`etcd_endpoint`), which holds the configuration.
        etcd_endpoint: String::new(),
    })
}

/// The etcd endpoint a LIVE election of an algorithm that keeps its record
/// in a store (`lease`) sends its nodes: the controller's; without one,
/// such an election runs SIMULATED only (FAILED_PRECONDITION).
fn store(req: &ElectionRequest, spec: &AlgorithmSpec, config: &ControllerConfig) -> Result<(), RequestError> {
    if spec.live_provision != ringleader_core::spec::Provision::Store || req.mode != Mode::Live {
        return Ok(());
    }
    if config.etcd_endpoint.is_empty() {
        return Err(RequestError::precondition(
            "algorithm",
            format!(
                "{} needs an etcd endpoint: start the controller with [controller] etcd_endpoint \
                 (RINGLEADER__CONTROLLER__ETCD_ENDPOINT), or run it SIMULATED",
                spec.name
            ),
        ));
    }
    Ok(())
}

/// Longest name a refusal repeats back.
const MAX_ECHOED_NAME: usize = 64;

/// The entry the request names: a built-in algorithm (`algorithm`), or a
/// program this controller installed (`program`), never both. Only the
/// controller's own programs: not a path, not another's.
fn algorithm(req: &ElectionRequest, config: &ControllerConfig) -> Result<&'static AlgorithmSpec, RequestError> {
    let echoed = |name: &str| name.chars().take(MAX_ECHOED_NAME).collect::<String>();
    if !req.program.is_empty() {
        if !req.algorithm.is_empty() {
            return Err(RequestError::invalid(
                "program",
                format!(
                    "give either `algorithm` (a built-in) or `program` (an installed program), not both (algorithm \
                     `{}`)",
                    echoed(&req.algorithm)
                ),
            ));
        }
        return config.programs.find(&req.program).ok_or_else(|| {
            RequestError::precondition(
                "program",
                format!(
                    "no installed program is named `{}`; installed programs: {}",
                    echoed(&req.program),
                    config.programs.names()
                ),
            )
        });
    }
    if req.algorithm.is_empty() {
        return Err(RequestError::invalid("algorithm", format!("required; one of: {}", catalogue::names())));
    }
    if let Some(spec) = catalogue::CATALOGUE.iter().find(|s| s.name == req.algorithm) {
        return Ok(spec);
    }
    if config.programs.find(&req.algorithm).is_some() {
        return Err(RequestError::invalid(
            "algorithm",
            format!("`{}` is an installed program: name it in `program`", req.algorithm),
        ));
    }
    Err(RequestError::invalid(
        "algorithm",
        format!("unknown algorithm `{}`; known algorithms: {}", echoed(&req.algorithm), catalogue::names()),
    ))
}

/// A kept leadership needs an algorithm that keeps one; a LIVE one is not
/// waited for (it runs until stopped), a SIMULATED one runs to its horizon.
fn check_keep_leader(req: &ElectionRequest, spec: &AlgorithmSpec) -> Result<(), RequestError> {
    if !req.keep_leader {
        return Ok(());
    }
    if spec.kept.is_none() {
        let kept: Vec<&str> = catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some()).map(|s| s.name).collect();
        return Err(RequestError::invalid(
            "keep_leader",
            format!(
                "{} is a one-shot election; algorithms that keep a leader: {}",
                spec.name,
                if kept.is_empty() { "none yet".to_string() } else { kept.join(", ") }
            ),
        ));
    }
    if req.wait && req.mode == Mode::Live {
        return Err(RequestError::invalid(
            "wait",
            "a kept leadership runs until StopElection; start it without wait and follow it with GetLeader",
        ));
    }
    Ok(())
}

/// The failure detector: the request's (kept leaderships only), else the controller's.
fn detector(req: &ElectionRequest, config: &ControllerConfig) -> Result<DetectorConfig, RequestError> {
    let detector = req.detector.unwrap_or_else(|| config.detector());
    if req.detector.is_some() && !req.keep_leader {
        return Err(RequestError::invalid(
            "detector",
            "failure-detector settings apply to kept leaderships (keep_leader) only",
        ));
    }
    detector.validate().map_err(|e| RequestError::invalid("detector", e.to_string()))?;
    Ok(detector)
}

/// The simulator options: SIMULATED only, and no non-FIFO links for an algorithm that assumes FIFO.
/// A SIMULATED kept leadership's horizon is resolved ([`DEFAULT_HORIZON_MS`] if not given).
fn simulation(req: &ElectionRequest, spec: &AlgorithmSpec) -> Result<SimOptions, RequestError> {
    let mut sim = req.simulation.unwrap_or_default();
    if req.mode == Mode::Live && (sim != SimOptions::default() || !req.faults.is_empty()) {
        return Err(RequestError::invalid("simulation", "simulation options apply to mode SIMULATED only"));
    }
    if req.mode == Mode::Simulated && sim.non_fifo && spec.assumptions.fifo {
        return Err(RequestError::precondition(
            "simulation.non_fifo",
            format!("{} assumes FIFO links, so it cannot run on non-FIFO links", spec.name),
        ));
    }
    if req.mode == Mode::Simulated && req.keep_leader && sim.horizon_ms == 0 {
        sim.horizon_ms = DEFAULT_HORIZON_MS;
    }
    Ok(sim)
}

/// A SIMULATED kept leadership's horizon and faults: only for one, at most
/// [`MAX_HORIZON_MS`] and [`MAX_SCHEDULED_FAULTS`], each fault named and
/// within the horizon.
fn scheduled(req: &ElectionRequest, sim: SimOptions) -> Result<(), RequestError> {
    let kept_simulated = req.mode == Mode::Simulated && req.keep_leader;
    if !kept_simulated && req.simulation.is_some_and(|s| s.horizon_ms != 0) {
        return Err(RequestError::invalid(
            "simulation.horizon_ms",
            "a horizon applies to SIMULATED kept leaderships (keep_leader) only",
        ));
    }
    if !kept_simulated && !req.faults.is_empty() {
        return Err(RequestError::invalid(
            "simulation.faults",
            "scheduled faults apply to SIMULATED kept leaderships (keep_leader) only; inject faults into a LIVE \
             one with InjectFault",
        ));
    }
    if sim.horizon_ms > MAX_HORIZON_MS {
        return Err(RequestError::invalid(
            "simulation.horizon_ms",
            format!("at most {MAX_HORIZON_MS} virtual ms, got {}", sim.horizon_ms),
        ));
    }
    if req.faults.len() > MAX_SCHEDULED_FAULTS {
        return Err(RequestError::invalid(
            "simulation.faults",
            format!("at most {MAX_SCHEDULED_FAULTS} faults, got {}", req.faults.len()),
        ));
    }
    for (i, f) in req.faults.iter().enumerate() {
        if f.fault.is_none() {
            return Err(RequestError::invalid(
                "simulation.faults",
                format!(
                    "faults[{i}] names no fault: set one of crash_leader, crash_id, recover_id, cut_off, \
                     cut_off_leader, heal"
                ),
            ));
        }
        if f.at_ms > sim.horizon_ms {
            return Err(RequestError::invalid(
                "simulation.faults",
                format!("faults[{i}] at {} ms is after the horizon ({} ms)", f.at_ms, sim.horizon_ms),
            ));
        }
    }
    Ok(())
}

/// The scheduled faults by position, in time order; an id no node has is refused.
fn planned_faults(req: &ElectionRequest, ids: &[u64]) -> Result<Vec<PlannedFault>, RequestError> {
    use ringleader_core::faults::Fault;
    let position = |i: usize, id: u64| -> Result<u32, RequestError> {
        if ids.iter().filter(|&&x| x == id).count() > 1 {
            return Err(RequestError::invalid(
                "simulation.faults",
                format!("faults[{i}] names id {id}, which more than one node has"),
            ));
        }
        ids.iter().position(|&x| x == id).map(|p| p as u32).ok_or_else(|| {
            RequestError::invalid("simulation.faults", format!("faults[{i}] names id {id}, which no node has"))
        })
    };
    let mut planned = Vec::with_capacity(req.faults.len());
    for (i, f) in req.faults.iter().enumerate() {
        let fault = match &f.fault {
            None => continue,
            Some(SimFault::CrashLeader) => Fault::CrashLeader,
            Some(SimFault::Crash(id)) => Fault::Crash { node: position(i, *id)? },
            Some(SimFault::Recover(id)) => Fault::Recover { node: position(i, *id)? },
            Some(SimFault::CutOff(cut)) => {
                // An id named twice is one node (the simulator refuses a node in two places).
                let mut group: Vec<u32> = cut.iter().map(|&id| position(i, id)).collect::<Result<_, _>>()?;
                group.sort_unstable();
                group.dedup();
                if group.is_empty() || group.len() >= ids.len() {
                    return Err(RequestError::invalid(
                        "simulation.faults",
                        format!(
                            "faults[{i}] cuts off {} of {} nodes: name at least one, not all",
                            group.len(),
                            ids.len()
                        ),
                    ));
                }
                let rest = (0..ids.len() as u32).filter(|p| !group.contains(p)).collect();
                Fault::Partition { groups: vec![group, rest] }
            }
            Some(SimFault::CutOffLeader) => Fault::CutOffLeader,
            Some(SimFault::Clock(id, rate)) => {
                let rate_ok = ringleader_core::faults::clock_rate("clock.rate", *rate);
                rate_ok.map_err(|e| RequestError::invalid("simulation.faults", format!("faults[{i}]: {e}")))?;
                Fault::Clock { node: position(i, *id)?, rate: *rate }
            }
            Some(SimFault::LeaderClock(rate)) => {
                let rate_ok = ringleader_core::faults::clock_rate("leader_clock", *rate);
                rate_ok.map_err(|e| RequestError::invalid("simulation.faults", format!("faults[{i}]: {e}")))?;
                Fault::LeaderClock { rate: *rate }
            }
            Some(SimFault::Pause(id, ms)) => {
                let ms_ok = ringleader_core::faults::pause_ms("pause.ms", *ms);
                ms_ok.map_err(|e| RequestError::invalid("simulation.faults", format!("faults[{i}]: {e}")))?;
                Fault::Pause { node: position(i, *id)?, ms: *ms }
            }
            Some(SimFault::PauseLeader(ms)) => {
                let ms_ok = ringleader_core::faults::pause_ms("pause_leader", *ms);
                ms_ok.map_err(|e| RequestError::invalid("simulation.faults", format!("faults[{i}]: {e}")))?;
                Fault::PauseLeader { ms: *ms }
            }
            Some(SimFault::Heal) => Fault::Partition { groups: vec![(0..ids.len() as u32).collect()] },
        };
        planned.push(PlannedFault { at_ms: f.at_ms, fault });
    }
    planned.sort_by_key(|f| f.at_ms);
    Ok(planned)
}

/// The overlay's kind (the algorithm's default if none is asked for), which
/// the algorithm must run on and whose shape parameters alone may be given.
fn topology_kind(req: &ElectionRequest, spec: &AlgorithmSpec) -> Result<TopologyKind, RequestError> {
    let kind = req.topology.unwrap_or_else(|| spec.default_topology());
    if !spec.supports(kind) {
        return Err(RequestError::invalid(
            "topology",
            format!("{} cannot run on {}; it runs on {}", spec.name, kind.name(), topology_names(spec)),
        ));
    }
    if !is_grid(kind) && (req.rows != 0 || req.cols != 0) {
        return Err(RequestError::invalid(
            if req.rows != 0 { "topology.rows" } else { "topology.cols" },
            format!("rows and cols are only given for MESH and TORUS, not {}", kind.name()),
        ));
    }
    if !matches!(kind, TopologyKind::Tree | TopologyKind::Graph) && !req.edges.is_empty() {
        return Err(RequestError::invalid(
            "topology.edges",
            format!("edges are only given for TREE and GRAPH, not {}", kind.name()),
        ));
    }
    Ok(kind)
}

/// The number of positions asked for: named nodes fix it, then explicit ids, then a mesh's
/// rows x cols; otherwise `size`, 0 meaning the whole cluster (LIVE) or
/// [`DEFAULT_SIMULATED_SIZE`] (SIMULATED; the next size the topology takes, 9
/// for a torus). Not checked against any limit yet.
fn size(req: &ElectionRequest, kind: TopologyKind, cluster_nodes: usize) -> Result<u64, RequestError> {
    let mesh_size = (is_grid(kind) && req.rows != 0 && req.cols != 0).then(|| req.rows as u64 * req.cols as u64);
    let grid = grid_word(kind);
    if !req.nodes.is_empty() {
        let named = req.nodes.len();
        let other = if req.mode != Mode::Live {
            Some("names nodes for a LIVE election; a SIMULATED one runs in the simulator".to_string())
        } else if req.size != 0 && req.size as usize != named {
            Some(format!("{named} nodes named for size {}; name one node per position (or size 0)", req.size))
        } else if !req.ids.is_empty() && req.ids.len() != named {
            Some(format!("{named} nodes named for {} ids; name one node per id", req.ids.len()))
        } else {
            mesh_size
                .filter(|&m| m != named as u64)
                .map(|m| format!("{named} nodes named for a {} x {} {grid} of {m} positions", req.rows, req.cols))
        };
        if let Some(why) = other {
            return Err(RequestError::invalid("nodes", why));
        }
        return Ok(named as u64);
    }
    if !req.ids.is_empty() {
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
                format!("{} ids given for a {} x {} {grid} of {m} positions", req.ids.len(), req.rows, req.cols),
            ));
        }
        Ok(req.ids.len() as u64)
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
        Ok(m)
    } else if req.size == 0 {
        Ok(match req.mode {
            Mode::Live => cluster_nodes as u64,
            // The first size from the default that the topology takes (a torus has no 8: 9).
            Mode::Simulated => (DEFAULT_SIMULATED_SIZE..DEFAULT_SIMULATED_SIZE + 64)
                .find(|&n| ringleader_core::topology::Topology::build(kind, n, 7).is_ok())
                .unwrap_or(DEFAULT_SIMULATED_SIZE) as u64,
        })
    } else {
        Ok(req.size as u64)
    }
}

/// Refuse `n` positions that cannot run here: fewer than 2, a COMPLETE
/// network too large, a LIVE election larger than the cluster, a SIMULATED
/// one beyond the simulator's size or round-clock budget.
fn size_fits(
    req: &ElectionRequest,
    spec: &AlgorithmSpec,
    kind: TopologyKind,
    n: u64,
    cluster_nodes: usize,
    config: &ControllerConfig,
) -> Result<u32, RequestError> {
    let explicit = !req.ids.is_empty();
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
    if matches!(kind, TopologyKind::Complete | TopologyKind::CompleteChordal) && n > MAX_COMPLETE_SIZE as u64 {
        return Err(RequestError::invalid(
            "size",
            format!(
                "a {} network of {n} positions has too many links; at most {MAX_COMPLETE_SIZE} positions",
                kind.name()
            ),
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
    Ok(n as u32)
}

/// A LIVE run of an algorithm that waits by design (its catalogue entry's
/// `live_wait_ms`) must be able to decide within the decision timeout: the
/// wait grows with the best initiator's id (TimeSlice's smallest initiating
/// id times n rounds), so the refusal names `ids`, or `initiators` when the
/// ids were placed by an order (one initiator of 1..=n may still hold a
/// large id).
fn live_wait(
    req: &ElectionRequest,
    spec: &AlgorithmSpec,
    ids: &[u64],
    initiators: &[u32],
    config: &ControllerConfig,
) -> Result<(), RequestError> {
    let Some(wait) = spec.extras.live_wait_ms else { return Ok(()) };
    let ms = wait(ids, initiators, req.winner.unwrap_or(spec.rule));
    if req.mode == Mode::Live && ms > config.decision_timeout_ms {
        let field = if req.ids.is_empty() { "initiators" } else { "ids" };
        return Err(RequestError::precondition(
            field,
            format!(
                "{} with these ids and initiators stays silent for {ms} ms before it can decide, more than the \
                 decision timeout of {} ms (decision_timeout_ms); use smaller ids, more initiators, or mode \
                 SIMULATED, which skips the silent rounds",
                spec.name, config.decision_timeout_ms
            ),
        ));
    }
    Ok(())
}

/// The ids in ring order: the explicit ones, or placed by `id_order` (the
/// worst and best cases only where the catalogue knows them).
fn ids(req: &ElectionRequest, spec: &AlgorithmSpec, n: u32) -> Result<Vec<u64>, RequestError> {
    if !req.ids.is_empty() {
        if req.ids.contains(&0) {
            return Err(RequestError::invalid("ids", "ids must be positive; 0 is not an id"));
        }
        IdOrder::Explicit(req.ids.clone()).arrange(n)
    } else {
        match req.id_order {
            IdOrder::WorstCase | IdOrder::BestCase => match arrangement(req, spec)? {
                Some(a) => Ok((a.ids)(n, req.winner.unwrap_or(spec.rule))),
                None => req.id_order.arrange(n),
            },
            ref other => other.arrange(n),
        }
    }
    .and_then(|ids| {
        // A kept leadership's beliefs name their leader by id: with a repeated id, "I lead" and "I follow
        // the other node with my id" would read the same. A one-shot election tells nodes by position.
        if req.keep_leader {
            topology::check_distinct(&ids)?;
        }
        Ok(ids)
    })
    .map_err(|e| match e {
        IdError::Duplicate(id) => RequestError::invalid(
            "ids",
            format!(
                "id {id} appears more than once: a kept leadership names its leader by id, so its ids must be distinct"
            ),
        ),
        e @ IdError::WrongLength { .. } => RequestError::invalid("ids", e.to_string()),
        e @ IdError::NeedsAlgorithm => RequestError::invalid("id_order", e.to_string()),
    })
}

/// The catalogue's arrangement that a WORST_CASE or BEST_CASE `id_order`
/// asks for (`None` for the other orders), refused naming `id_order` where the
/// algorithm has none.
fn arrangement(
    req: &ElectionRequest,
    spec: &AlgorithmSpec,
) -> Result<Option<ringleader_core::spec::Arrangement>, RequestError> {
    let (arrangement, which) = match req.id_order {
        IdOrder::WorstCase => (spec.extras.worst_case, "worst"),
        IdOrder::BestCase => (spec.extras.best_case, "best"),
        _ => return Ok(None),
    };
    arrangement.map(Some).ok_or_else(|| {
        RequestError::invalid(
            "id_order",
            format!("{} has no known {which}-case arrangement; use ASCENDING, DESCENDING or RANDOM", spec.name),
        )
    })
}

/// How many initiators `initiators` asks for (0: all), checked against `n`.
fn initiator_count(req: &ElectionRequest, n: u32) -> Result<u32, RequestError> {
    if req.initiators > n {
        return Err(RequestError::invalid(
            "initiators",
            format!("{} initiators requested for {n} positions", req.initiators),
        ));
    }
    Ok(if req.initiators == 0 { n } else { req.initiators })
}

/// The initiator positions, sorted: the positions of `initiator_ids`, else
/// `initiators` of them (0: all) drawn from the seed.
fn initiators(req: &ElectionRequest, ids: &[u64], n: u32) -> Result<Vec<u32>, RequestError> {
    if !req.initiator_ids.is_empty() {
        if let Err(IdError::Duplicate(id)) = topology::check_distinct(ids) {
            return Err(RequestError::invalid(
                "initiator_ids",
                format!(
                    "id {id} is on more than one node, so initiators cannot be named by id; give `initiators` (a count)"
                ),
            ));
        }
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
        return Ok(chosen);
    }
    Ok(topology::pick_initiators(n, initiator_count(req, n)?, req.seed))
}

/// A SIMULATED election whose exact message count is known must fit the
/// simulator's budget per election.
fn within_message_budget(
    req: &ElectionRequest,
    spec: &AlgorithmSpec,
    n: u32,
    k: usize,
    config: &ControllerConfig,
) -> Result<(), RequestError> {
    if req.mode == Mode::Simulated
        && let Some(exact) = spec.extras.exact
    {
        let messages = exact(n as u64, k as u64);
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
    Ok(())
}

/// The overlay: from explicit edges, a mesh's shape (derived from the size
/// when rows or cols are missing), or drawn from the seed.
fn build_topology(req: &ElectionRequest, kind: TopologyKind, n: u32) -> Result<Topology, RequestError> {
    match kind {
        TopologyKind::Tree if !req.edges.is_empty() => {
            Topology::tree(n, &req.edges).map_err(|e| RequestError::invalid("topology.edges", e.to_string()))
        }
        TopologyKind::Graph if !req.edges.is_empty() => {
            Topology::graph(n, &req.edges).map_err(|e| RequestError::invalid("topology.edges", e.to_string()))
        }
        TopologyKind::Mesh => {
            let (rows, cols) = mesh_dims(req, kind, n)?;
            Topology::mesh(rows, cols).map_err(|e| RequestError::invalid(mesh_field(req), e.to_string()))
        }
        TopologyKind::Torus => {
            let (rows, cols) = mesh_dims(req, kind, n)?;
            Topology::torus(rows, cols).map_err(|e| RequestError::invalid(mesh_field(req), e.to_string()))
        }
        _ => Topology::build(kind, n, req.seed).map_err(|e| RequestError::invalid("size", e.to_string())),
    }
}

/// What [`build_topology`] would refuse, without building the overlay
/// (given edges excepted: they are checked by building from them).
fn check_topology(req: &ElectionRequest, kind: TopologyKind, n: u32) -> Result<(), RequestError> {
    match kind {
        TopologyKind::Tree | TopologyKind::Graph if !req.edges.is_empty() => build_topology(req, kind, n).map(drop),
        TopologyKind::Mesh => {
            let (rows, cols) = mesh_dims(req, kind, n)?;
            topology::mesh_size(rows, cols).map(drop).map_err(|e| RequestError::invalid(mesh_field(req), e.to_string()))
        }
        TopologyKind::Torus => {
            let (rows, cols) = mesh_dims(req, kind, n)?;
            topology::torus_size(rows, cols)
                .map(drop)
                .map_err(|e| RequestError::invalid(mesh_field(req), e.to_string()))
        }
        TopologyKind::Hypercube if !n.is_power_of_two() => {
            Err(RequestError::invalid("size", TopologyError::NotAHypercube(n).to_string()))
        }
        // Rings, complete networks, hypercubes and drawn trees and graphs build on every size that fits.
        _ => Ok(()),
    }
}

/// Is `kind` a grid shaped by rows and cols (a mesh or a torus)?
fn is_grid(kind: TopologyKind) -> bool {
    matches!(kind, TopologyKind::Mesh | TopologyKind::Torus)
}

/// What a grid of `kind` is called in errors.
fn grid_word(kind: TopologyKind) -> &'static str {
    if kind == TopologyKind::Torus { "torus" } else { "mesh" }
}

/// A mesh's or torus's rows and columns: as given, the missing one derived from the size, or the most
/// square grid.
fn mesh_dims(req: &ElectionRequest, kind: TopologyKind, n: u32) -> Result<(u32, u32), RequestError> {
    let shape = if kind == TopologyKind::Torus { topology::torus_shape } else { topology::mesh_shape };
    Ok(match (req.rows, req.cols) {
        (0, 0) => shape(n).map_err(|e| RequestError::invalid("size", e.to_string()))?,
        (0, c) if !n.is_multiple_of(c) => {
            return Err(RequestError::invalid("topology.cols", format!("{c} columns do not divide size {n}")));
        }
        (r, 0) if !n.is_multiple_of(r) => {
            return Err(RequestError::invalid("topology.rows", format!("{r} rows do not divide size {n}")));
        }
        (0, c) => (n / c, c),
        (r, 0) => (r, n / r),
        (r, c) => (r, c),
    })
}

fn mesh_field(req: &ElectionRequest) -> &'static str {
    if req.rows != 0 || req.cols != 0 { "topology.rows" } else { "size" }
}

/// Whether and how to draw the space-time diagram (asked for by `diagram`,
/// `simulation.diagram` or `diagram_options`), for at most
/// [`MAX_DIAGRAM_NODES`] nodes.
fn diagram(req: &ElectionRequest, sim: SimOptions, n: u32) -> Result<Option<Drawing>, RequestError> {
    let asked = req.diagram || sim.diagram || req.drawing.is_some();
    if asked && n > MAX_DIAGRAM_NODES {
        let field = match (req.diagram, sim.diagram) {
            (true, _) => "diagram",
            (false, true) => "simulation.diagram",
            (false, false) => "diagram_options",
        };
        return Err(RequestError::invalid(
            field,
            format!("a diagram is drawn for at most {MAX_DIAGRAM_NODES} nodes, not {n}"),
        ));
    }
    Ok(asked.then(|| req.drawing.unwrap_or_default()))
}

/// Heartbeats per second the embedded cluster's process takes for one kept
/// leadership ([`KeptSpec::heartbeats_per_period`](ringleader_core::spec::KeptSpec::heartbeats_per_period)), all in this process.
/// Measured with `benches/keep` when ZooKeeper-style watched every
/// neighbour: 64 nodes at 50 ms (80,640/s) agreed and kept their leader;
/// 256 at 50 ms (1.3 M/s) never agreed.
pub const MAX_LOCAL_HEARTBEATS_PER_SECOND: u64 = 200_000;

/// Refuse up front, RESOURCE_EXHAUSTED saying why, a kept leadership the
/// embedded cluster's one process cannot carry (instead of a leaderless run
/// that starves every other election of the process): its settled
/// heartbeats, and the burst of an election in which every node takes part.
pub(super) fn fits_the_process(plan: &Plan) -> Result<(), Status> {
    if !plan.keep_leader || plan.mode == Mode::Simulated {
        return Ok(());
    }
    let name = plan.spec.name;
    let Some(kept) = plan.spec.kept else { return Ok(()) };
    let max = kept.max_local_nodes;
    let n = plan.n();
    if n > max {
        return Err(too_much(
            "size",
            format!(
                "a kept {name} leadership of {n} nodes does not fit the embedded cluster's one process: the \
                 largest that agreed there was {max} nodes (docs/performance.md); use at most {max} nodes, or run \
                 the nodes as separate processes (ringleader-node, k8s/)"
            ),
        ));
    }
    // At that size and the loopback detector, an election's burst was carried; a faster detector
    // asks more of the process than was measured.
    let max_topology = Topology::complete(max).ok();
    let carried = max_topology.map(|t| (kept.election_load_per_second)(&t, DetectorConfig::LOOPBACK));
    let load = (kept.election_load_per_second)(&plan.topology, plan.detector);
    if let Some(carried) = carried
        && load > carried
    {
        // Every load model is inversely proportional to the detector's timing.
        let factor = load.div_ceil(carried);
        return Err(too_much(
            "detector",
            format!(
                "a kept {name} leadership of {n} nodes with this detector asks the embedded cluster's one process \
                 for an election burst of {load} messages a second ({name}'s model), more than the {carried}/s \
                 measured to work; use a detector about {factor} times slower (period_ms {} and timeout_ms {}) or \
                 fewer nodes",
                plan.detector.period_ms.saturating_mul(factor),
                plan.detector.timeout_ms.saturating_mul(factor),
            ),
        ));
    }
    let links = (kept.heartbeats_per_period)(&plan.topology);
    let period = plan.detector.period_ms.max(1);
    let per_second = links.saturating_mul(1_000) / period;
    if per_second <= MAX_LOCAL_HEARTBEATS_PER_SECOND {
        return Ok(());
    }
    let needed = links.saturating_mul(1_000).div_ceil(MAX_LOCAL_HEARTBEATS_PER_SECOND);
    Err(too_much(
        "size",
        format!(
            "a kept {} leadership of {} nodes on the embedded cluster sends {per_second} heartbeats a second \
             ({links} every {period} ms), more than one process carries ({MAX_LOCAL_HEARTBEATS_PER_SECOND}/s); \
             use detector.period_ms of at least {needed} or fewer nodes",
            plan.spec.name,
            plan.n()
        ),
    ))
}

/// A refusal of more than the embedded cluster carries (RESOURCE_EXHAUSTED), naming `field`.
fn too_much(field: &'static str, reason: String) -> Status {
    RequestError { code: tonic::Code::ResourceExhausted, field: field.into(), reason }.into()
}

#[cfg(test)]
mod tests {
    use ringleader_core::diagram::Axis;
    use ringleader_proto::v1 as pb;
    use tonic::Code;

    use super::*;

    fn req(algorithm: &str) -> ElectionRequest {
        ElectionRequest::try_from(pb::StartElectionRequest { algorithm: algorithm.into(), ..Default::default() })
            .unwrap()
    }

    fn refused(r: &ElectionRequest, nodes: usize) -> (Code, &'static str) {
        match plan(r, nodes, &ControllerConfig::default()) {
            Ok(p) => panic!("accepted: {} on {} positions", p.spec.name, p.n()),
            Err(e) => (e.code, e.field.into_owned().leak()),
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

    /// A LIVE TimeSlice with one drawn initiator (ids placed in order) waits for that initiator's
    /// slice: a request whose drawn initiator waits past the decision timeout is refused naming
    /// `initiators`, one whose initiator waits less is accepted (both happen over 32 seeds); the
    /// same request SIMULATED is accepted, since the simulator skips the silent rounds.
    #[test]
    fn a_live_wait_follows_the_drawn_initiator() {
        let config = ControllerConfig::default();
        let (mut refused_some, mut accepted_some) = (false, false);
        for seed in 0..32 {
            let live = ElectionRequest { mode: Mode::Live, initiators: 1, seed, ..req("time-slice") };
            let ids = ids(&live, live_spec("time-slice"), 64).unwrap();
            let drawn = topology::pick_initiators(64, 1, seed)[0];
            let wait = (ids[drawn as usize] - 1) * 64 * ringleader_core::algo::time_slice::ROUND_MS;
            match plan(&live, 64, &config) {
                Err(e) => {
                    assert!(wait > config.decision_timeout_ms, "seed {seed}: refused a wait of {wait} ms");
                    assert_eq!((e.code, e.field.as_ref()), (Code::FailedPrecondition, "initiators"), "seed {seed}");
                    refused_some = true;
                }
                Ok(_) => {
                    assert!(wait <= config.decision_timeout_ms, "seed {seed}: accepted a wait of {wait} ms");
                    accepted_some = true;
                }
            }
            let simulated = ElectionRequest { mode: Mode::Simulated, ..live };
            assert!(plan(&simulated, 64, &config).is_ok(), "seed {seed}: SIMULATED");
        }
        assert!(refused_some && accepted_some);
    }

    fn live_spec(name: &str) -> &'static AlgorithmSpec {
        catalogue::find(name).unwrap()
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
        let torus = ElectionRequest { algorithm: "torus-elect".into(), ..sim.clone() };
        assert_eq!(plan(&torus, 0, &ControllerConfig::default()).unwrap().n(), 9, "a torus has no 8 positions: 9");
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
            assert_eq!((e.code, &*e.field), (Code::InvalidArgument, "topology"));
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
        r.ids = vec![1, 0, 2];
        assert_eq!(refused(&r, 8), (Ia, "ids"));
        let kept = ElectionRequest { ids: vec![1, 2, 2], keep_leader: true, ..req("bully") };
        assert_eq!(refused(&kept, 8), (Ia, "ids"));
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

    /// The code and field of a phase's refusal.
    fn field<T: std::fmt::Debug>(r: Result<T, RequestError>) -> (Code, &'static str) {
        let e = r.unwrap_err();
        (e.code, e.field.into_owned().leak())
    }

    /// An algorithm's options reach the plan when its entry takes them, and are refused naming
    /// `options.<name>` otherwise: an unknown name, an algorithm that takes none, a kept-only one
    /// in a one-shot election, a per-node list of the wrong length. The plan's lease follows the
    /// `lease` option.
    #[test]
    fn options_are_checked_against_the_entry() {
        let config = ControllerConfig::default();
        let opts = |o: &[(&str, &str)]| o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let raft = |o: &[(&str, &str)]| ElectionRequest {
            keep_leader: true,
            mode: Mode::Simulated,
            size: 3,
            options: opts(o),
            ..req("raft")
        };
        let p = plan(&raft(&[("lease", "true"), ("log", "1:1,2:2,2:2")]), 0, &config).unwrap();
        assert_eq!(p.options, opts(&[("lease", "true"), ("log", "1:1,2:2,2:2")]));
        assert_eq!(p.lease().map(|l| l.lost), Some("lease ended"));
        assert!(plan(&raft(&[("lease", "false")]), 0, &config).unwrap().lease().is_none());
        let refused = |r: ElectionRequest| {
            let e = plan(&r, 0, &config).unwrap_err();
            (e.code, e.field.into_owned(), e.reason)
        };
        let (code, field, why) = refused(raft(&[("pre_votes", "true")]));
        assert_eq!((code, field.as_str()), (Code::InvalidArgument, "options.pre_votes"));
        assert!(why.contains("known: pre_vote"), "{why}");
        let (_, field, why) = refused(raft(&[("log", "1:1,2:2")]));
        assert_eq!(field, "options.log");
        assert!(why.contains("or 3"), "{why}");
        let one_shot = ElectionRequest { keep_leader: false, ..raft(&[("check_quorum", "true")]) };
        assert_eq!(refused(one_shot).1, "options.check_quorum");
        let as_far = ElectionRequest { options: opts(&[("x", "1")]), mode: Mode::Simulated, ..req("as-far") };
        let (_, field, why) = refused(as_far);
        assert_eq!((field.as_str(), why.as_str()), ("options.x", "as-far has no option `x`; it takes none"));
    }

    /// A kept leadership is refused naming keep_leader for a one-shot algorithm, and naming wait
    /// when a LIVE one is waited for; bully kept LIVE without wait passes, SIMULATED with or
    /// without wait too (it runs to its horizon), and a one-shot request is not looked at.
    #[test]
    fn kept_leaderships_need_a_keeping_algorithm_and_live_no_wait() {
        let bully = catalogue::find("bully").unwrap();
        let kept = ElectionRequest { keep_leader: true, ..req("bully") };
        assert!(check_keep_leader(&kept, bully).is_ok());
        let e = check_keep_leader(&kept, catalogue::find("as-far").unwrap()).unwrap_err();
        assert_eq!((e.code, &*e.field), (Code::InvalidArgument, "keep_leader"));
        assert!(e.reason.starts_with("as-far is a one-shot election; algorithms that keep a leader: bully"), "{e}");
        let simulated = ElectionRequest { mode: Mode::Simulated, ..kept.clone() };
        assert!(check_keep_leader(&simulated, bully).is_ok());
        assert!(check_keep_leader(&ElectionRequest { wait: true, ..simulated }, bully).is_ok());
        let waited = ElectionRequest { wait: true, ..kept };
        assert_eq!(field(check_keep_leader(&waited, bully)), (Code::InvalidArgument, "wait"));
        let one_shot = ElectionRequest { wait: true, mode: Mode::Simulated, ..req("bully") };
        assert!(check_keep_leader(&one_shot, bully).is_ok());
    }

    /// `lease` LIVE needs the controller's etcd endpoint (FAILED_PRECONDITION naming the
    /// algorithm, and saying so, without one) and hands it to the plan; SIMULATED it needs none.
    #[test]
    fn lease_live_needs_an_etcd_endpoint() {
        let kept = ElectionRequest { keep_leader: true, size: 3, ..req("lease") };
        let e = plan(&kept, 3, &ControllerConfig::default()).unwrap_err();
        assert_eq!((e.code, &*e.field), (Code::FailedPrecondition, "algorithm"));
        assert!(e.reason.starts_with("lease needs an etcd endpoint"), "{e}");
        let config = ControllerConfig { etcd_endpoint: "http://127.0.0.1:2379".into(), ..ControllerConfig::default() };
        assert_eq!(plan(&kept, 3, &config).unwrap().etcd_endpoint, "http://127.0.0.1:2379");
        let simulated = ElectionRequest { mode: Mode::Simulated, ..kept };
        assert_eq!(plan(&simulated, 0, &ControllerConfig::default()).unwrap().etcd_endpoint, "");
    }

    /// A SIMULATED kept leadership's horizon defaults to 3,000 virtual ms and its faults are planned
    /// by position in time order (an id cut off twice is one node); a horizon or faults anywhere else, a horizon over the maximum,
    /// a fault after the horizon or naming nothing, an unknown id and a cut-off of nobody or of
    /// everybody are refused, each naming its field.
    #[test]
    fn scheduled_faults_are_planned_by_position_or_refused_by_field() {
        use crate::convert::{ScheduledFault, SimFault};
        use ringleader_core::faults::Fault;
        let config = ControllerConfig::default();
        let at = |at_ms, fault| ScheduledFault { at_ms, fault: Some(fault) };
        let kept = ElectionRequest {
            keep_leader: true,
            mode: Mode::Simulated,
            ids: vec![5, 1, 8, 3],
            faults: vec![at(900, SimFault::Recover(8)), at(500, SimFault::Crash(8)), at(700, SimFault::CutOffLeader)],
            ..req("bully")
        };
        let p = plan(&kept, 0, &config).unwrap();
        assert_eq!(p.sim.horizon_ms, DEFAULT_HORIZON_MS);
        let planned: Vec<(u64, Fault)> = p.faults.iter().map(|f| (f.at_ms, f.fault.clone())).collect();
        assert_eq!(
            planned,
            [(500, Fault::Crash { node: 2 }), (700, Fault::CutOffLeader), (900, Fault::Recover { node: 2 })]
        );
        let cut = ElectionRequest { faults: vec![at(10, SimFault::CutOff(vec![3, 5, 3]))], ..kept.clone() };
        let groups = vec![vec![0, 3], vec![1, 2]];
        assert_eq!(plan(&cut, 0, &config).unwrap().faults[0].fault, Fault::Partition { groups });
        let refused = |r: ElectionRequest| {
            let e = plan(&r, 0, &config).unwrap_err();
            (e.field.into_owned().leak() as &str, e.reason)
        };
        let sim = |horizon_ms| Some(SimOptions { horizon_ms, ..SimOptions::default() });
        let one_shot = ElectionRequest { keep_leader: false, faults: Vec::new(), simulation: sim(100), ..kept.clone() };
        assert_eq!(refused(one_shot).0, "simulation.horizon_ms");
        let faulted = ElectionRequest { keep_leader: false, ..kept.clone() };
        assert_eq!(refused(faulted).0, "simulation.faults");
        let live = ElectionRequest { mode: Mode::Live, ..kept.clone() };
        assert_eq!(refused(live).0, "simulation");
        let long = ElectionRequest { simulation: sim(MAX_HORIZON_MS + 1), ..kept.clone() };
        assert_eq!(refused(long).0, "simulation.horizon_ms");
        let late = ElectionRequest { faults: vec![at(3_001, SimFault::Heal)], ..kept.clone() };
        assert!(refused(late).1.contains("faults[0] at 3001 ms is after the horizon (3000 ms)"));
        let empty = ElectionRequest { faults: vec![ScheduledFault { at_ms: 1, fault: None }], ..kept.clone() };
        assert!(refused(empty).1.contains("faults[0] names no fault"));
        let unknown =
            ElectionRequest { faults: vec![at(1, SimFault::Heal), at(2, SimFault::Crash(9))], ..kept.clone() };
        assert_eq!(refused(unknown), ("simulation.faults", "faults[1] names id 9, which no node has".to_string()));
        for ids in [vec![], vec![5, 1, 8, 3]] {
            let all = ElectionRequest { faults: vec![at(1, SimFault::CutOff(ids))], ..kept.clone() };
            assert!(refused(all).1.contains("name at least one, not all"));
        }
    }

    /// The size comes from explicit ids, else a mesh's rows x cols, else `size`, else the whole
    /// cluster (LIVE) or 8 (SIMULATED); ids or a size that disagree with the rest are refused.
    #[test]
    fn size_resolves_from_ids_mesh_or_defaults() {
        let ring = TopologyKind::RingBi;
        let mut r = req("as-far");
        assert_eq!(size(&r, ring, 5), Ok(5));
        r.mode = Mode::Simulated;
        assert_eq!(size(&r, ring, 5), Ok(8));
        r.size = 12;
        assert_eq!(size(&r, ring, 5), Ok(12));
        r.ids = vec![5, 6, 7];
        assert_eq!(field(size(&r, ring, 5)), (Code::InvalidArgument, "ids"));
        r.size = 0;
        assert_eq!(size(&r, ring, 5), Ok(3));
        let mut m = req("mesh-corners");
        (m.rows, m.cols) = (2, 3);
        assert_eq!(size(&m, TopologyKind::Mesh, 0), Ok(6));
        m.size = 5;
        assert_eq!(field(size(&m, TopologyKind::Mesh, 0)), (Code::InvalidArgument, "size"));
        m.size = 0;
        m.ids = vec![1, 2, 3, 4, 5];
        assert_eq!(field(size(&m, TopologyKind::Mesh, 0)), (Code::InvalidArgument, "ids"));
        m.cols = 0;
        assert_eq!(size(&m, TopologyKind::Mesh, 0), Ok(5), "rows alone do not fix a mesh's size");
    }

    /// Fewer than 2 positions are refused naming ids (explicit), size as a precondition (an empty
    /// cluster) or size; so are a COMPLETE network above 2,048 positions, a LIVE election larger
    /// than the cluster and a SIMULATED one above the simulator's limit.
    #[test]
    fn size_fits_the_cluster_and_the_simulator() {
        let spec = catalogue::find("as-far").unwrap();
        let config = ControllerConfig::default();
        let fits = |r: &ElectionRequest, kind, n, nodes| size_fits(r, spec, kind, n, nodes, &config);
        let ring = TopologyKind::RingBi;
        let live = req("as-far");
        assert_eq!(fits(&live, ring, 4, 4), Ok(4));
        assert_eq!(field(fits(&live, ring, 1, 1)), (Code::FailedPrecondition, "size"));
        assert_eq!(
            field(fits(&ElectionRequest { size: 1, ..live.clone() }, ring, 1, 8)),
            (Code::InvalidArgument, "size")
        );
        let one_id = ElectionRequest { ids: vec![7], ..live.clone() };
        assert_eq!(field(fits(&one_id, ring, 1, 8)), (Code::InvalidArgument, "ids"));
        let e = fits(&ElectionRequest { ids: vec![1, 2, 3], ..live.clone() }, ring, 3, 2).unwrap_err();
        assert_eq!((e.code, &*e.field), (Code::FailedPrecondition, "size"));
        assert!(e.reason.starts_with("3 positions (one per id) but the cluster has 2 nodes"), "{e}");
        assert_eq!(fits(&live, TopologyKind::Complete, 2048, 5000), Ok(2048));
        assert_eq!(field(fits(&live, TopologyKind::Complete, 2049, 5000)), (Code::InvalidArgument, "size"));
        let simulated = ElectionRequest { mode: Mode::Simulated, ..live };
        let limit = config.max_simulated_size as u64;
        assert_eq!(fits(&simulated, ring, limit, 0), Ok(limit as u32));
        assert_eq!(field(fits(&simulated, ring, limit + 1, 0)), (Code::InvalidArgument, "size"));
    }

    /// Explicit ids are kept in ring order and must be positive; they may repeat in a one-shot
    /// election (an anonymous ring) but not in a kept leadership, nor name initiators or faults
    /// when they repeat; ASCENDING places
    /// 1..=n; a worst case comes from the catalogue, and is refused naming id_order where unknown.
    #[test]
    fn ids_are_explicit_or_placed() {
        let as_far = catalogue::find("as-far").unwrap();
        let mut r = req("as-far");
        r.ids = vec![30, 10, 20];
        assert_eq!(ids(&r, as_far, 3), Ok(vec![30, 10, 20]));
        r.ids = vec![0, 1];
        assert_eq!(field(ids(&r, as_far, 2)), (Code::InvalidArgument, "ids"));
        r.ids = vec![4, 4];
        assert_eq!(ids(&r, as_far, 2), Ok(vec![4, 4]), "a one-shot election on an anonymous ring");
        r.initiator_ids = vec![4];
        assert_eq!(field(initiators(&r, &[4, 4], 2)), (Code::InvalidArgument, "initiator_ids"));
        let bully = catalogue::find("bully").unwrap();
        let kept = ElectionRequest { keep_leader: true, ..r.clone() };
        let e = ids(&kept, bully, 2).unwrap_err();
        assert!(e.reason.starts_with("id 4 appears more than once: a kept leadership"), "{e}");
        let mut r = req("as-far");
        r.id_order = IdOrder::Ascending;
        assert_eq!(ids(&r, as_far, 4), Ok(vec![1, 2, 3, 4]));
        r.id_order = IdOrder::WorstCase;
        let mut worst = ids(&r, as_far, 5).unwrap();
        worst.sort();
        assert_eq!(worst, [1, 2, 3, 4, 5]);
        let e = ids(&r, catalogue::find("all-the-way").unwrap(), 5).unwrap_err();
        assert_eq!((e.code, &*e.field), (Code::InvalidArgument, "id_order"));
        assert!(e.reason.starts_with("all-the-way has no known worst-case arrangement"), "{e}");
    }

    /// Initiators given by id become sorted positions; an id not in the election or listed twice is
    /// refused; otherwise `initiators` positions (0: all) are drawn from the seed, never more than n.
    #[test]
    fn initiators_by_id_or_drawn() {
        let ids = [30, 10, 20];
        let mut r = req("as-far");
        r.initiator_ids = vec![20, 30];
        assert_eq!(initiators(&r, &ids, 3), Ok(vec![0, 2]));
        r.initiator_ids = vec![10, 10];
        assert_eq!(initiators(&r, &ids, 3).unwrap_err().reason, "id 10 is listed more than once");
        r.initiator_ids = vec![99];
        assert_eq!(field(initiators(&r, &ids, 3)), (Code::InvalidArgument, "initiator_ids"));
        let mut r = req("as-far");
        r.seed = 11;
        assert_eq!(initiators(&r, &ids, 3), Ok(vec![0, 1, 2]));
        r.initiators = 2;
        assert_eq!(initiators(&r, &ids, 3), Ok(topology::pick_initiators(3, 2, 11)));
        assert_eq!(initiators(&r, &ids, 3).unwrap().len(), 2);
        r.initiators = 4;
        assert_eq!(field(initiators(&r, &ids, 3)), (Code::InvalidArgument, "initiators"));
    }

    /// A SIMULATED election whose exact count (all-the-way: n²) exceeds the simulator's budget is
    /// refused naming size; LIVE ones and algorithms without an exact count are not looked at.
    #[test]
    fn exact_counts_fit_the_message_budget() {
        let all_the_way = catalogue::find("all-the-way").unwrap();
        let config = ControllerConfig { max_simulated_messages: 100, ..ControllerConfig::default() };
        let simulated = ElectionRequest { mode: Mode::Simulated, ..req("all-the-way") };
        assert!(within_message_budget(&simulated, all_the_way, 10, 10, &config).is_ok());
        let e = within_message_budget(&simulated, all_the_way, 11, 11, &config).unwrap_err();
        assert_eq!((e.code, &*e.field), (Code::InvalidArgument, "size"));
        assert!(e.reason.starts_with("all-the-way sends 121 messages on 11 positions"), "{e}");
        assert!(within_message_budget(&req("all-the-way"), all_the_way, 11, 11, &config).is_ok());
        let as_far = catalogue::find("as-far").unwrap();
        assert!(within_message_budget(&simulated, as_far, 1000, 1000, &config).is_ok());
    }

    /// A mesh takes rows and cols as given, derives the missing one from the size (refused naming
    /// it when it does not divide) or takes the most square grid (refused naming size for a prime);
    /// explicit tree edges must form a tree.
    #[test]
    fn topology_is_built_from_shape_or_edges() {
        let mesh = TopologyKind::Mesh;
        let mut r = req("mesh-corners");
        r.cols = 3;
        let t = build_topology(&r, mesh, 6).unwrap();
        assert_eq!((t.kind(), t.len()), (mesh, 6));
        assert_eq!(t.ports(1).len(), 3, "2 x 3: position 1 has west, east and south neighbours");
        r.cols = 4;
        assert_eq!(field(build_topology(&r, mesh, 6)), (Code::InvalidArgument, "topology.cols"));
        (r.rows, r.cols) = (4, 0);
        assert_eq!(field(build_topology(&r, mesh, 6)), (Code::InvalidArgument, "topology.rows"));
        r.rows = 0;
        assert_eq!(build_topology(&r, mesh, 9).unwrap().ports(4).len(), 4, "3 x 3: the centre has 4");
        assert_eq!(field(build_topology(&r, mesh, 7)), (Code::InvalidArgument, "size"));
        let mut tree = req("tree-saturation");
        tree.edges = vec![(0, 1), (1, 2)];
        assert_eq!(build_topology(&tree, TopologyKind::Tree, 3).unwrap().ports(1).len(), 2);
        tree.edges = vec![(0, 1), (0, 1)];
        assert_eq!(field(build_topology(&tree, TopologyKind::Tree, 3)), (Code::InvalidArgument, "topology.edges"));
    }

    /// `check`, which builds nothing that grows with the size, accepts exactly the requests `plan`
    /// accepts and refuses the others for the same field: over every algorithm, id order, a range
    /// of sizes and initiator counts, both modes, and the hand-made refusals of the other tests
    /// (meshes, given ids and edges, diagrams, budgets).
    #[test]
    fn check_refuses_what_plan_refuses() {
        let config = ControllerConfig { max_simulated_messages: 5_000, ..ControllerConfig::default() };
        let mut requests = Vec::new();
        for spec in catalogue::CATALOGUE {
            for order in [IdOrder::Ascending, IdOrder::Random(3), IdOrder::WorstCase, IdOrder::BestCase] {
                for (size, initiators) in [(0, 0), (1, 0), (2, 0), (7, 3), (9, 0), (12, 20), (64, 1), (300, 0)] {
                    for mode in [Mode::Live, Mode::Simulated] {
                        requests.push(ElectionRequest {
                            size,
                            initiators,
                            mode,
                            id_order: order.clone(),
                            diagram: size == 300,
                            ..req(spec.name)
                        });
                    }
                }
            }
        }
        let mut mesh = req("mesh-corners");
        for (rows, cols, size) in [(0, 3, 12), (0, 5, 12), (4, 0, 10), (1, 6, 0), (3, 3, 10), (0, 0, 13)] {
            (mesh.rows, mesh.cols, mesh.size) = (rows, cols, size);
            requests.push(mesh.clone());
        }
        let mut given = req("as-far");
        for (ids, initiator_ids) in [(vec![3, 1, 2], vec![1]), (vec![3, 0, 2], vec![]), (vec![1, 2], vec![7])] {
            (given.ids, given.initiator_ids) = (ids, initiator_ids);
            requests.push(given.clone());
        }
        let mut tree = req("tree-saturation");
        for edges in [vec![(0, 1), (1, 2)], vec![(0, 1), (0, 1)]] {
            (tree.edges, tree.size) = (edges, 3);
            requests.push(tree.clone());
        }
        let mut accepted = 0;
        for r in &requests {
            let (checked, planned) = (check(r, 16, &config), plan(r, 16, &config));
            let field = |e: &RequestError| (e.code, e.field.clone());
            match (&checked, &planned) {
                (Ok(c), Ok(p)) => {
                    assert_eq!((c.n, c.k, c.kind), (p.n(), p.k(), p.topology.kind()), "{r:?}");
                    accepted += 1;
                }
                (Err(c), Err(p)) => assert_eq!(field(c), field(p), "{r:?}"),
                _ => panic!("check {:?} but plan {:?} for {r:?}", checked.map(|c| c.n), planned.map(|p| p.n())),
            }
        }
        assert!(accepted > requests.len() / 4 && accepted < requests.len(), "{accepted} of {}", requests.len());
    }

    /// A diagram asked for on more than 256 nodes is refused naming the field that asked for it.
    #[test]
    fn diagrams_are_drawn_for_at_most_256_nodes() {
        let (big, small) = (MAX_DIAGRAM_NODES + 1, MAX_DIAGRAM_NODES);
        let asked = ElectionRequest { diagram: true, ..req("as-far") };
        assert_eq!(diagram(&asked, SimOptions::default(), small), Ok(Some(Drawing::default())));
        assert_eq!(field(diagram(&asked, SimOptions::default(), big)), (Code::InvalidArgument, "diagram"));
        let by_sim = SimOptions { diagram: true, ..SimOptions::default() };
        assert_eq!(field(diagram(&req("as-far"), by_sim, big)), (Code::InvalidArgument, "simulation.diagram"));
        assert_eq!(diagram(&req("as-far"), SimOptions::default(), big), Ok(None));
        let styled = ElectionRequest {
            drawing: Some(Drawing { axis: Axis::Causal, labels: true, heartbeats: false }),
            ..req("as-far")
        };
        assert_eq!(field(diagram(&styled, SimOptions::default(), big)), (Code::InvalidArgument, "diagram_options"));
        assert_eq!(
            diagram(&styled, SimOptions::default(), small),
            Ok(Some(Drawing { axis: Axis::Causal, labels: true, heartbeats: false })),
            "options alone ask for the diagram"
        );
    }
}
