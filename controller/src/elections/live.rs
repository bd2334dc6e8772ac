//! LIVE elections: position `i` runs on cluster node `i`. A one-shot
//! election takes one `Prepare` per node, which starts the initiators at
//! once (a message that outruns another node's `Prepare` waits there for
//! it). The nodes report their figures on their event streams as they
//! change; the election is over when every position has decided and the
//! reports show every link's sends arrived, no timer pending and every
//! initiator started (see `quiet`), with a `Status` poll only as a safety
//! net when the reports stop coming. The controller then sums the nodes'
//! counters, checks the invariants and has the nodes forget the election
//! (`Node::forget`, batched with the other elections that ended meanwhile).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ringleader_core::algo::Decision;
use ringleader_core::invariants;
use ringleader_proto::v1 as pb;
use tokio::sync::watch;
use tracing::warn;

use super::agent;
use super::diagram::{self, LiveDiagram};
use super::entry::{Entry, WatchEvent};
use super::kept;
use super::run::{Context, OnNodes, Outcome, Plan, stopped};
use crate::calls::{Failures, NodeFailure};
use crate::cluster::{ClockOffset, Cluster, Node, Subscription, all_ok};
use crate::record::{LeaderInfo, MAX_PARTICIPANTS, Metrics};

/// Run `plan` on the cluster's nodes: place -> prepare -> start -> collect
/// the decisions (or follow a kept leadership) -> wait until quiet -> judge.
pub(super) async fn run(ctx: &Context<'_>, entry: &Entry, plan: &Plan, traceparent: String) -> Outcome {
    let election_id = entry.inspect(|r| r.id.clone());
    let nodes = match place(ctx.cluster, plan) {
        Ok(nodes) => nodes,
        Err(e) => return Outcome::failed(e.to_string()),
    };
    let rpc_timeout = ctx.config.rpc_timeout();
    // Subscribed before any Start, so no decision is missed.
    let mut events = ctx.cluster.subscribe(&election_id).placed_on(&nodes);

    let addresses: Vec<&str> = nodes.iter().map(|n| n.address()).collect();
    let requests = prepare_requests(plan, &election_id, &addresses, &traceparent, ctx.cluster.incarnation());
    if plan.keep_leader {
        // Configure every position before starting anyone; a kept leadership prepares a node
        // again if its process restarts.
        let again = requests.clone();
        if let Err(e) = prepare(&nodes, requests, rpc_timeout).await {
            return halt(ctx, &nodes, &election_id, Halt::Failed(e)).await;
        }
        ctx.prepared(&election_id, &indices(&nodes));
        entry.set_running();
        let started = Instant::now();
        if let Err(e) = start(&nodes, &plan.initiators, &election_id, rpc_timeout).await {
            return halt(ctx, &nodes, &election_id, Halt::Failed(e)).await;
        }
        let on = OnNodes { ctx, entry, plan, nodes: &nodes, election_id: &election_id, started };
        return kept::follow(&on, events, again).await;
    }
    // One call per node: the initiators start as soon as they are prepared.
    entry.set_running();
    let started = Instant::now();
    if let Err(e) = prepare(&nodes, requests, rpc_timeout).await {
        return halt(ctx, &nodes, &election_id, Halt::Failed(e)).await;
    }
    ctx.prepared(&election_id, &indices(&nodes));
    let mut stop = entry.stop_requested();
    let on = OnNodes { ctx, entry, plan, nodes: &nodes, election_id: &election_id, started };
    let gathered = match gather(&on, &mut events, &mut stop).await {
        Ok(g) => g,
        Err(h) => return halt(ctx, &nodes, &election_id, h).await,
    };
    let diagram = match plan.diagram {
        Some(drawing) => Some(diagram::read(plan, drawing, &nodes, &election_id, rpc_timeout).await),
        None => None,
    };
    forget(&nodes, &election_id, rpc_timeout);
    let Gathered { collected, statuses, not_quiet } = gathered;
    judge(plan, |i| nodes[i].name(), collected, &statuses, not_quiet, diagram, ctx.config.decision_timeout_ms)
}

/// Have every node forget the election, batched with the others that ended
/// meanwhile (best effort: failures are logged).
fn forget(nodes: &[Arc<Node>], election_id: &str, timeout: Duration) {
    for node in nodes {
        node.forget(election_id, timeout);
    }
}

/// Why a phase ended the election before its verdict.
#[derive(Debug)]
enum Halt {
    /// Calls to the nodes failed.
    Failed(Failures),
    /// `StopElection` or the shutdown, with what the election was doing then.
    Stopped(String),
    /// A node's state machine failed (an installed program broke): the
    /// election cannot finish; its error, naming the position and the step.
    Broken(String),
}

/// Abort the election on the nodes, then say why it ended. The stop's
/// reason is read only after the abort, as the shutdown may begin meanwhile.
async fn halt(ctx: &Context<'_>, nodes: &[Arc<Node>], election_id: &str, halt: Halt) -> Outcome {
    forget(nodes, election_id, ctx.config.rpc_timeout());
    match halt {
        Halt::Failed(e) => Outcome::failed(e.to_string()),
        Halt::Stopped(doing) => Outcome::failed(format!("{} ({doing})", ctx.stopped_text())),
        Halt::Broken(why) => Outcome::failed(why),
    }
}

/// The cluster indices of `nodes`.
fn indices(nodes: &[Arc<Node>]) -> Vec<usize> {
    nodes.iter().map(|n| n.index()).collect()
}

/// Why an election's positions have no nodes (the cluster changed since it was planned).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum PlaceError {
    /// Fewer nodes than positions.
    #[error("the cluster has {has} nodes; {needed} are needed")]
    TooFew { has: usize, needed: usize },
    /// The placement names a node the cluster does not have.
    #[error("the cluster has no node {0}")]
    NoNode(usize),
}

/// The nodes of positions `0..n`: the plan's placement, or else the first
/// `n` of the cluster.
fn place(cluster: &Cluster, plan: &Plan) -> Result<Vec<Arc<Node>>, PlaceError> {
    let n = plan.n() as usize;
    if plan.placement.is_empty() {
        return cluster
            .nodes()
            .get(..n)
            .map(|s| s.to_vec())
            .ok_or(PlaceError::TooFew { has: cluster.len(), needed: n });
    }
    plan.placement.iter().map(|&i| cluster.nodes().get(i).cloned().ok_or(PlaceError::NoNode(i))).collect()
}

/// The seed of the nodes' coins: the plan's, or a random one for a kept
/// leadership without a seed (see [`prepare_requests`]).
fn coin_seed(plan: &Plan) -> u64 {
    if plan.seed != 0 || !plan.keep_leader {
        return plan.seed;
    }
    // No entropy (never seen): the nodes still draw apart from one another, only alike across runs.
    getrandom::u64().unwrap_or(0)
}

/// What each position's node is told before anyone starts: its id, whether
/// it initiates, its coin, and where each port leads (`addresses[i]` is the
/// node of position `i`; a port that only receives has no address).
///
/// The coins are the simulator's for the plan's seed, except for a kept
/// leadership with no seed (0): its coins (Raft's election timeouts, say)
/// come from a random seed of this run, so two runs do not draw the same
/// timeouts; give a seed to draw the same ones again.
fn prepare_requests(
    plan: &Plan,
    election_id: &str,
    addresses: &[&str],
    traceparent: &str,
    incarnation: u64,
) -> Vec<pb::PrepareRequest> {
    let n = plan.n() as usize;
    let mut is_initiator = vec![false; n];
    for &p in &plan.initiators {
        is_initiator[p as usize] = true;
    }
    let coins = coin_seed(plan);
    (0..n)
        .map(|i| {
            let ports = plan
                .topology
                .ports(i as u32)
                .iter()
                .map(|link| pb::PortPeer {
                    position: link.peer,
                    address: if link.outgoing { addresses[link.peer as usize].to_string() } else { String::new() },
                    remote_port: link.remote_port,
                    id: plan.ids[link.peer as usize],
                    label: pb::Compass::from(link.label).into(),
                })
                .collect();
            pb::PrepareRequest {
                election_id: election_id.to_string(),
                algorithm: plan.spec.name.to_string(),
                rule: pb::Rule::from(plan.rule) as i32,
                position: i as u32,
                size: n as u32,
                id: plan.ids[i],
                ports,
                initiator: is_initiator[i],
                // The same bits the simulator gives this position for this seed.
                coin: ringleader_core::algo::coin(coins, i as u32),
                keep_leader: plan.keep_leader,
                detector: plan.keep_leader.then_some(pb::FailureDetector {
                    period_ms: plan.detector.period_ms,
                    timeout_ms: plan.detector.timeout_ms,
                }),
                traceparent: traceparent.to_string(),
                log_messages: plan.diagram.is_some(),
                // A kept leadership starts its initiators with `Start`, once every node is prepared.
                start: is_initiator[i] && !plan.keep_leader,
                options: ringleader_core::spec::node_options(plan.spec, &plan.options, i as u32).into_iter().collect(),
                etcd_endpoint: plan.etcd_endpoint.clone(),
                controller_incarnation: incarnation,
            }
        })
        .collect()
}

/// Send every position its `Prepare` (`requests[i]` to `nodes[i]`).
async fn prepare(nodes: &[Arc<Node>], requests: Vec<pb::PrepareRequest>, timeout: Duration) -> Result<(), Failures> {
    let calls = nodes.iter().zip(requests).map(|(node, req)| {
        let mut client = node.client();
        (node.clone(), async move { client.prepare(req).await.map(|_| ()) })
    });
    all_ok(calls, timeout, "Prepare").await
}

/// Wake the initiators.
async fn start(nodes: &[Arc<Node>], initiators: &[u32], election_id: &str, timeout: Duration) -> Result<(), Failures> {
    let calls = initiators.iter().map(|&p| {
        let node = nodes[p as usize].clone();
        let mut client = node.client();
        let req = pb::StartRequest { election_id: election_id.to_string() };
        (node, async move { client.start(req).await.map(|_| ()) })
    });
    all_ok(calls, timeout, "Start").await
}

/// The decisions as collected, before the nodes' final word.
#[derive(Debug)]
struct Collected {
    /// Per position.
    decisions: Vec<Option<Decision>>,
    /// From the first Start to the last decision.
    duration_ms: u64,
    /// The decision timeout passed with positions still undecided.
    timed_out: bool,
    /// From the first send to the last decision on the nodes' clocks, and
    /// how far it may be off ([`node_duration`]), once the election is over.
    node_duration: Option<(u64, u64)>,
}

/// What [`gather`] learned: the decisions, the nodes' last figures (in
/// position order; a node that never reported has the default, all zero)
/// and, if the election never went quiet, why not.
#[derive(Debug)]
struct Gathered {
    collected: Collected,
    statuses: Vec<pb::NodeElectionStatus>,
    not_quiet: Option<String>,
}

/// How long the reports may stop coming before the controller asks every
/// node's `Status` instead (a safety net: an event stream that was not
/// open, or a subscriber that fell behind and skipped reports).
const SILENCE: Duration = Duration::from_millis(500);

/// Follow the nodes' reports and decisions until every position has decided
/// and the election is quiet ([`quiet`]), each decision told to the record's
/// watchers; until the decision timeout for the decisions, then the quiet
/// timeout for the rest.
async fn gather(
    on: &OnNodes<'_>,
    events: &mut Subscription,
    stop: &mut watch::Receiver<bool>,
) -> Result<Gathered, Halt> {
    let OnNodes { ctx, entry, plan, nodes, election_id, started } = *on;
    let n = nodes.len();
    let rpc_timeout = ctx.config.rpc_timeout();
    let mut decisions: Vec<Option<Decision>> = vec![None; n];
    let mut statuses: Vec<Option<pb::NodeElectionStatus>> = vec![None; n];
    let mut undecided = n;
    let mut last_decision = started;
    let decision_deadline = tokio::time::Instant::now() + ctx.config.decision_timeout();
    let mut quiet_deadline = None;
    let mut heard = tokio::time::Instant::now();
    let mut events_open = true;
    loop {
        if undecided == 0 && quiet(plan, &statuses) {
            break;
        }
        let deadline = quiet_deadline.unwrap_or(decision_deadline);
        let mut found: Vec<(usize, pb::NodeElectionStatus)> = Vec::new();
        let mut decided: Vec<(usize, Decision)> = Vec::new();
        tokio::select! {
            event = events.recv(), if events_open => match event {
                Some((node, ev)) if node < n && ev.position as usize == node => {
                    heard = tokio::time::Instant::now();
                    match ev.status {
                        Some(status) => found.push((node, status)),
                        None => decided.extend(agent::decision_of(ev.role, ev.leader_id).map(|d| (node, d))),
                    }
                }
                Some((node, ev)) => {
                    warn!(election = %election_id, node, position = ev.position, "event from an unexpected position");
                }
                None => events_open = false,
            },
            _ = tokio::time::sleep_until(heard + SILENCE) => {
                heard = tokio::time::Instant::now();
                let all: Vec<usize> = (0..n).collect();
                found.extend(agent::status_of(nodes, &all, election_id, rpc_timeout).await.into_iter().filter_map(|(i, s)| Some((i, s.ok()?))));
            }
            _ = tokio::time::sleep_until(deadline) => {
                if quiet_deadline.is_some() {
                    break;
                }
                // The decisions timed out: the nodes' last word, and the verdict now.
                let all: Vec<usize> = (0..n).collect();
                let polled = agent::status_of(nodes, &all, election_id, rpc_timeout).await;
                let mut last = Vec::with_capacity(n);
                for (i, s) in polled {
                    match s {
                        Ok(s) => last.push(s),
                        Err(error) => {
                            let (node, address) = (nodes[i].name(), nodes[i].address().to_string());
                            let failed = NodeFailure::Call { what: "Status", node, address, error };
                            return Err(Halt::Failed(Failures { first: vec![failed], more: 0 }));
                        }
                    }
                }
                let duration_ms = last_decision.duration_since(started).as_millis() as u64;
                let collected = Collected { decisions, duration_ms, timed_out: true, node_duration: None };
                return Ok(Gathered { collected, statuses: last, not_quiet: None });
            }
            () = stopped(stop) => {
                let doing = if undecided > 0 {
                    format!("{} of {n} positions had decided", n - undecided)
                } else {
                    "waiting for its last messages".to_string()
                };
                return Err(Halt::Stopped(doing));
            }
        }
        if let Some(why) = found.iter().find_map(|(i, s)| broken(*i, nodes[*i].name(), s)) {
            return Err(Halt::Broken(why));
        }
        for (i, status) in found {
            decided.extend(agent::decision_of(status.role, status.leader_id).map(|d| (i, d)));
            if statuses[i].as_ref().is_none_or(|s| s.steps <= status.steps) {
                statuses[i] = Some(status);
            }
        }
        for (i, d) in decided {
            if decisions[i].is_none() {
                decisions[i] = Some(d);
                undecided -= 1;
                last_decision = Instant::now();
                let node = nodes[i].name();
                entry.update(|r| {
                    if let Some(p) = r.participants.get_mut(i) {
                        p.decision = Some(d);
                    }
                    Some(WatchEvent::Decided { position: i as u32, node, decision: d })
                });
            }
        }
        if undecided == 0 && quiet_deadline.is_none() {
            quiet_deadline = Some(tokio::time::Instant::now() + ctx.config.quiet_timeout());
        }
    }
    let statuses: Vec<pb::NodeElectionStatus> = statuses.into_iter().map(Option::unwrap_or_default).collect();
    let not_quiet = (!quiet_all(plan, &statuses)).then(|| {
        let traffic = Traffic::of(&statuses);
        format!(
            "did not go quiet within {} ms: {} messages sent, {} received, {} rejected",
            ctx.config.quiet_timeout_ms, traffic.sent, traffic.received, traffic.rejected
        )
    });
    let duration_ms = last_decision.duration_since(started).as_millis() as u64;
    // One clock for every node of the embedded cluster; otherwise each node's, as measured.
    let clocks: Vec<Option<ClockOffset>> = if ctx.cluster.is_local() {
        vec![Some(ClockOffset { offset_us: 0, error_us: 0 }); n]
    } else {
        nodes.iter().map(|node| node.clock()).collect()
    };
    let node_duration = node_duration(&statuses, &clocks);
    let collected = Collected { decisions, duration_ms, timed_out: false, node_duration };
    Ok(Gathered { collected, statuses, not_quiet })
}

/// The error of an election whose node at `position` (named `node`) reports
/// its state machine failed (an installed program broke, or the algorithm
/// panicked): it takes no more input, so the election cannot finish. Its
/// first error names the step and the field. `None` while it has not failed.
fn broken(position: usize, node: String, status: &pb::NodeElectionStatus) -> Option<String> {
    if !status.failed {
        return None;
    }
    let why = status.errors.first().map_or("its state machine failed", String::as_str);
    Some(format!("position {position} (node {node}) failed: {why}"))
}

/// Is the election over, by the nodes' latest reports (a node that never
/// reported counts as having done nothing)? Every message sent on a link
/// has arrived at its other end (the sender's count for the link equals the
/// receiver's), no timer is pending, and every initiator has started.
///
/// Reports of different nodes are taken at different times, yet this never
/// says "over" too early: a message still in flight on a link whose counts
/// agree was sent after its sender's report, by a step after that report,
/// which a message the sender took after its report caused (a timer cannot:
/// the report showed none pending, and a later one was set by a later step),
/// and that message's own link must then show the same, back along a causal
/// chain that can only begin at an initiator's start, which every report of
/// an initiator counted here includes (Mattern's vector counters, in the
/// terms of docs/architecture.md).
fn quiet(plan: &Plan, statuses: &[Option<pb::NodeElectionStatus>]) -> bool {
    let none = pb::NodeElectionStatus::default();
    let all: Vec<&pb::NodeElectionStatus> = statuses.iter().map(|s| s.as_ref().unwrap_or(&none)).collect();
    quiet_of(plan, &all)
}

/// [`quiet`] of statuses that are all there.
fn quiet_all(plan: &Plan, statuses: &[pb::NodeElectionStatus]) -> bool {
    quiet_of(plan, &statuses.iter().collect::<Vec<_>>())
}

fn quiet_of(plan: &Plan, statuses: &[&pb::NodeElectionStatus]) -> bool {
    if plan.initiators.iter().any(|&p| !statuses.get(p as usize).is_some_and(|s| s.started)) {
        return false;
    }
    statuses.iter().enumerate().all(|(i, s)| {
        s.timers_pending == 0
            && plan.topology.ports(i as u32).iter().enumerate().filter(|(_, link)| link.outgoing).all(|(p, link)| {
                let sent = s.sent_by_port.get(p).copied().unwrap_or(0);
                let arrived = statuses
                    .get(link.peer as usize)
                    .and_then(|t| t.arrived_by_port.get(link.remote_port as usize))
                    .copied()
                    .unwrap_or(0);
                sent == arrived
            })
    })
}

/// The election's time on the nodes' clocks: from the first send to the
/// last decision, in microseconds, and how far that may be off: each node's
/// readings are taken to the controller's clock by its offset (`clocks[i]`),
/// so the error is that of the two offsets involved. `None` when no node sent
/// or decided, or a clock involved was never measured.
fn node_duration(statuses: &[pb::NodeElectionStatus], clocks: &[Option<ClockOffset>]) -> Option<(u64, u64)> {
    let on_controller = |at: u64, i: usize| -> Option<(i64, u64)> {
        let c = clocks.get(i).copied().flatten()?;
        Some(((at as i64).saturating_sub(c.offset_us), c.error_us))
    };
    let mut first: Option<(i64, u64)> = None;
    let mut last: Option<(i64, u64)> = None;
    for (i, s) in statuses.iter().enumerate() {
        if s.first_send_us > 0 {
            let t = on_controller(s.first_send_us, i)?;
            first = Some(first.map_or(t, |f| if t.0 < f.0 { t } else { f }));
        }
        if s.decided_us > 0 {
            let t = on_controller(s.decided_us, i)?;
            last = Some(last.map_or(t, |l| if t.0 > l.0 { t } else { l }));
        }
    }
    let ((first, e1), (last, e2)) = (first?, last?);
    Some((last.saturating_sub(first).max(0) as u64, e1 + e2))
}

/// Messages sent, received and rejected, summed over the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Traffic {
    sent: u64,
    received: u64,
    rejected: u64,
}

impl Traffic {
    /// The sums of the nodes' counters.
    fn of(statuses: &[pb::NodeElectionStatus]) -> Traffic {
        statuses.iter().fold(Traffic { sent: 0, received: 0, rejected: 0 }, |t, st| Traffic {
            sent: t.sent + st.election_messages + st.notification_messages,
            received: t.received + st.received,
            rejected: t.rejected + st.rejected,
        })
    }
}

/// The costs the nodes' counters add up to (duration and bound are the
/// caller's), and what they report wrong: algorithm errors by position, then
/// rejected messages.
fn tally(statuses: &[pb::NodeElectionStatus]) -> (Metrics, Vec<String>) {
    let mut metrics = Metrics::default();
    let mut violations = Vec::new();
    let mut rejected = 0;
    for (i, s) in statuses.iter().enumerate() {
        metrics.election_messages += s.election_messages;
        metrics.notification_messages += s.notification_messages;
        for (kind, c) in &s.sent_by_kind {
            *metrics.by_kind.entry(kind.clone()).or_default() += c;
        }
        metrics.bytes += s.bytes;
        metrics.ideal_time = metrics.ideal_time.max(s.max_causal_time);
        rejected += s.rejected;
        violations.extend(s.errors.iter().map(|e| format!("position {i}: {e}")));
    }
    metrics.by_kind.retain(|_, c| *c > 0);
    metrics.messages = metrics.election_messages + metrics.notification_messages;
    if rejected > 0 {
        violations.push(format!("{rejected} messages were rejected by the nodes"));
    }
    (metrics, violations)
}

/// The error of an election whose decisions timed out, naming the first undecided positions.
fn undecided_error(decisions: &[Option<Decision>], decision_timeout_ms: u64) -> String {
    let n = decisions.len();
    let missing: Vec<usize> = (0..n).filter(|&i| decisions[i].is_none()).collect();
    format!(
        "timed out after {decision_timeout_ms} ms waiting for decisions: {} of {n} positions undecided (positions {:?})",
        missing.len(),
        &missing[..missing.len().min(16)]
    )
}

/// The outcome of an election that ran its course: the nodes' final word on
/// decisions wins over the events; the invariants' verdict comes first among
/// the violations, then `not_quiet`, then what the counters report.
fn judge(
    plan: &Plan,
    name: impl Fn(usize) -> String,
    collected: Collected,
    statuses: &[pb::NodeElectionStatus],
    not_quiet: Option<String>,
    diagram: Option<LiveDiagram>,
    decision_timeout_ms: u64,
) -> Outcome {
    let Collected { mut decisions, duration_ms, timed_out, node_duration } = collected;
    for (i, s) in statuses.iter().enumerate() {
        if let Some(d) = agent::decision_of(s.role, s.leader_id) {
            decisions[i] = Some(d);
        }
    }
    let (counted, reported) = tally(statuses);
    let metrics = Metrics {
        duration_ms,
        node_duration_us: node_duration.map(|(us, _)| us),
        node_duration_error_us: node_duration.map_or(0, |(_, e)| e),
        bound: plan.spec.bound_for(&plan.topology, plan.k() as u64),
        bound_formula: plan.spec.bound_formula,
        ..counted
    };
    let verdict = invariants::verdict(
        plan.spec.expected_winner(&plan.topology, &plan.ids, &plan.initiators, plan.rule),
        plan.rule,
        &plan.ids,
        &decisions,
        metrics.messages,
        metrics.bound,
        plan.spec.bound_formula,
    );
    // The record keeps each violation's text (what the API and the page show).
    let mut violations: Vec<String> = verdict.violations.iter().map(ToString::to_string).collect();
    violations.extend(not_quiet);
    violations.extend(reported);
    let leader = verdict.leader.map(|p| LeaderInfo { node: name(p as usize), id: plan.ids[p as usize], position: p });
    let diagram_svg = diagram.map(|d| d.svg(verdict.leader, metrics.messages));
    let per_position = if plan.n() <= MAX_PARTICIPANTS {
        decisions.iter().zip(statuses).map(|(d, s)| (*d, s.election_messages + s.notification_messages)).collect()
    } else {
        Vec::new()
    };
    let error = timed_out.then(|| undecided_error(&decisions, decision_timeout_ms));
    Outcome { error, agreed: verdict.agreed, violations, metrics: Some(metrics), leader, per_position, diagram_svg }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::elections::Drawing;
    use ringleader_core::algo::catalogue;
    use ringleader_core::algo::detector::DetectorConfig;
    use ringleader_core::algo::{Role, Rule};
    use ringleader_core::topology::{Topology, TopologyKind};

    use super::*;
    use crate::record::{Mode, SimOptions};

    /// as-far on a unidirectional ring of 3, ids 30, 10, 20, positions 0 and 2 initiating.
    fn plan(keep_leader: bool) -> Plan {
        Plan {
            spec: catalogue::find("as-far").unwrap(),
            mode: Mode::Live,
            topology: Topology::build(TopologyKind::RingUni, 3, 0).unwrap(),
            rule: Rule::Max,
            ids: vec![30, 10, 20],
            initiators: vec![0, 2],
            seed: 7,
            sim: SimOptions::default(),
            diagram: Some(Drawing::default()),
            keep_leader,
            detector: DetectorConfig { period_ms: 50, timeout_ms: 200 },
            placement: Vec::new(),
            faults: Vec::new(),
            options: Vec::new(),
            etcd_endpoint: String::new(),
        }
    }

    fn status(role: pb::Role, leader_id: u64, election: u64, notify: u64) -> pb::NodeElectionStatus {
        pb::NodeElectionStatus {
            role: role as i32,
            leader_id,
            election_messages: election,
            notification_messages: notify,
            sent_by_kind: HashMap::from([("election".into(), election), ("notify".into(), notify)]),
            received: election + notify,
            ..Default::default()
        }
    }

    /// Each position is told its id, whether it initiates, the simulator's coin for it and where its
    /// ports lead: on a unidirectional ring only the port to the right has an address (the next
    /// node's); a detector is sent with a kept leadership only.
    #[test]
    fn prepare_requests_describe_each_position() {
        let addresses = ["a:1", "b:2", "c:3"];
        let requests = prepare_requests(&plan(false), "e1", &addresses, "tp", 7);
        assert_eq!(requests.len(), 3);
        let initiators: Vec<bool> = requests.iter().map(|r| r.initiator).collect();
        assert_eq!(initiators, [true, false, true]);
        let ids: Vec<u64> = requests.iter().map(|r| r.id).collect();
        assert_eq!(ids, [30, 10, 20]);
        let r = &requests[2];
        assert_eq!((r.election_id.as_str(), r.algorithm.as_str(), r.position, r.size), ("e1", "as-far", 2, 3));
        assert_eq!((r.coin, r.traceparent.as_str(), r.log_messages), (ringleader_core::algo::coin(7, 2), "tp", true));
        assert_eq!(r.rule, pb::Rule::from(Rule::Max) as i32);
        let ports: Vec<(u32, &str, u64)> = r.ports.iter().map(|p| (p.position, p.address.as_str(), p.id)).collect();
        assert_eq!(ports, [(1, "", 10), (0, "a:1", 30)], "left receives only; right leads to position 0");
        assert_eq!((r.keep_leader, r.detector), (false, None));
        let kept = prepare_requests(&plan(true), "e1", &addresses, "", 7);
        assert!(kept[0].keep_leader);
        assert_eq!(kept[0].detector, Some(pb::FailureDetector { period_ms: 50, timeout_ms: 200 }));
    }

    /// A kept leadership with no seed draws its coins from a random seed per run (two runs, two
    /// draws; before, every run drew Raft's timeouts alike), while a seed gives the simulator's
    /// coins, and a one-shot election keeps seed 0's.
    #[test]
    fn an_unseeded_kept_leadership_draws_new_coins_each_run() {
        let addresses = ["a:1", "b:2", "c:3"];
        let coins = |plan: &Plan| prepare_requests(plan, "e1", &addresses, "", 7)[1].coin;
        let unseeded = Plan { seed: 0, ..plan(true) };
        assert_ne!(coins(&unseeded), coins(&unseeded), "two runs, two draws");
        assert_eq!(coins(&plan(true)), ringleader_core::algo::coin(7, 1));
        let one_shot = Plan { seed: 0, ..plan(false) };
        assert_eq!(coins(&one_shot), ringleader_core::algo::coin(0, 1));
    }

    /// The election on the ring of `plan` (0 -> 1 -> 2 -> 0 on port 1; port 0 receives) is over only when
    /// every link's sends have arrived at the other end, no timer is pending and every initiator (0 and 2) has
    /// started; a node that never reported counts as having done nothing.
    #[test]
    fn quiet_needs_every_link_balanced_no_timer_and_the_initiators_started() {
        let p = plan(false);
        let report = |sent: u64, arrived: u64| {
            Some(pb::NodeElectionStatus {
                sent_by_port: vec![0, sent],
                arrived_by_port: vec![arrived, 0],
                started: true,
                ..Default::default()
            })
        };
        // 0 sent 2 to 1, 1 sent 1 to 2, 2 sent 1 to 0.
        let done = vec![report(2, 1), report(1, 2), report(1, 1)];
        assert!(quiet(&p, &done));
        let mut in_flight = done.clone();
        in_flight[1] = report(1, 1);
        assert!(!quiet(&p, &in_flight), "one of 0's two messages has not reached 1");
        let mut timer = done.clone();
        timer[2].as_mut().unwrap().timers_pending = 1;
        assert!(!quiet(&p, &timer), "a pending timer may still send");
        let mut asleep = done.clone();
        asleep[2].as_mut().unwrap().started = false;
        assert!(!quiet(&p, &asleep), "initiator 2 has not started");
        let silent = vec![report(0, 0), None, report(0, 0)];
        assert!(quiet(&p, &silent), "a non-initiator that never reported did nothing");
        let unreported_initiator = vec![None, None, report(0, 0)];
        assert!(!quiet(&p, &unreported_initiator), "initiator 0 has not reported its start");
    }

    /// The nodes' time runs from the first send anywhere to the last decision; none without both. On one clock it
    /// is exact; across clocks each reading is moved by its node's offset, and the error is the sum of the two
    /// offsets' errors; a clock never measured leaves it unknown.
    #[test]
    fn node_duration_runs_from_the_first_send_to_the_last_decision() {
        let at = |first_send_us: u64, decided_us: u64| pb::NodeElectionStatus {
            first_send_us,
            decided_us,
            ..Default::default()
        };
        let one = vec![Some(ClockOffset { offset_us: 0, error_us: 0 }); 3];
        assert_eq!(node_duration(&[at(100, 900), at(0, 1_500), at(50, 700)], &one), Some((1_450, 0)));
        assert_eq!(node_duration(&[at(0, 0), at(0, 0)], &one), None);
        // Node 1's clock runs 1,000 µs ahead of the controller's (measured within 20 µs), node 0's 100 behind.
        let clocks =
            [Some(ClockOffset { offset_us: -100, error_us: 5 }), Some(ClockOffset { offset_us: 1_000, error_us: 20 })];
        // Sent at 200 on node 0 (300 on the controller), decided at 2,000 on node 1 (1,000): 700 µs, within 25.
        assert_eq!(node_duration(&[at(200, 0), at(0, 2_000)], &clocks), Some((700, 25)));
        assert_eq!(node_duration(&[at(200, 0), at(0, 2_000)], &[clocks[0], None]), None);
        assert_eq!(
            ClockOffset::measured(5_000, 100, 140),
            ClockOffset { offset_us: 4_880, error_us: 20 },
            "read halfway through a 40 µs call"
        );
    }

    /// The counters add up over the nodes (the longest causal chain is the largest), kinds never
    /// sent are dropped, and the nodes' algorithm errors come before the count of rejected messages.
    #[test]
    fn tally_sums_the_nodes_counters() {
        let mut a = status(pb::Role::Leader, 30, 3, 1);
        a.sent_by_kind.insert("probe".into(), 0);
        (a.bytes, a.max_causal_time) = (40, 6);
        let mut b = status(pb::Role::Follower, 30, 2, 1);
        (b.bytes, b.max_causal_time, b.rejected) = (25, 4, 2);
        b.errors = vec!["unexpected reply".into()];
        let (metrics, violations) = tally(&[a, b]);
        assert_eq!((metrics.messages, metrics.election_messages, metrics.notification_messages), (7, 5, 2));
        assert_eq!((metrics.bytes, metrics.ideal_time), (65, 6));
        assert_eq!(metrics.by_kind, [("election".to_string(), 5), ("notify".to_string(), 2)].into());
        assert_eq!(violations, ["position 1: unexpected reply", "2 messages were rejected by the nodes"]);
        let (_, clean) = tally(&[status(pb::Role::Leader, 30, 1, 1)]);
        assert!(clean.is_empty());
    }

    /// A decision timeout names how many positions are undecided and the first 16 of them.
    #[test]
    fn undecided_error_names_the_first_positions() {
        let leader = Some(Decision { role: Role::Leader, leader: 9 });
        let mut decisions = vec![None; 20];
        decisions[0] = leader;
        assert_eq!(
            undecided_error(&decisions, 30_000),
            "timed out after 30000 ms waiting for decisions: 19 of 20 positions undecided \
             (positions [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])"
        );
    }

    /// The verdict takes the nodes' final decisions over the collected ones, names the leader's
    /// node, lists the invariants' violations first, then not going quiet, then the counters'
    /// findings, and fills the bound in; a run whose decisions timed out fails naming the positions
    /// still undecided after the nodes' final word.
    #[test]
    fn judge_orders_the_verdict_and_takes_the_nodes_word() {
        let follower = Decision { role: Role::Follower, leader: 30 };
        let collected = Collected {
            decisions: vec![None, Some(follower), None],
            duration_ms: 12,
            timed_out: false,
            node_duration: Some((9_000, 0)),
        };
        let mut rejecting = status(pb::Role::Follower, 30, 2, 1);
        rejecting.rejected = 1;
        let statuses = [status(pb::Role::Leader, 30, 4, 1), rejecting, status(pb::Role::Follower, 30, 1, 1)];
        let not_quiet = Some("did not go quiet".to_string());
        let o = judge(&plan(false), |i| format!("node-{i}"), collected, &statuses, not_quiet, None, 30_000);
        assert_eq!(o.leader, Some(LeaderInfo { node: "node-0".into(), id: 30, position: 0 }));
        assert!(o.agreed);
        assert_eq!(
            o.violations,
            [
                "10 messages exceed the bound n(n+1)/2 + n = 9",
                "did not go quiet",
                "1 messages were rejected by the nodes"
            ]
        );
        let m = o.metrics.unwrap();
        assert_eq!((m.messages, m.duration_ms, m.bound, m.bound_formula), (10, 12, 9, "n(n+1)/2 + n"));
        assert_eq!(m.node_duration_us, Some(9_000));
        let leader = Some(Decision { role: Role::Leader, leader: 30 });
        assert_eq!(o.per_position, [(leader, 5), (Some(follower), 3), (Some(follower), 2)]);
        assert_eq!((o.error, o.diagram_svg), (None, None));

        let timed_out = Collected { decisions: vec![None; 3], duration_ms: 0, timed_out: true, node_duration: None };
        let undecided = [pb::NodeElectionStatus::default(), pb::NodeElectionStatus::default(), statuses[2].clone()];
        let o = judge(&plan(false), |i| format!("node-{i}"), timed_out, &undecided, None, None, 500);
        assert_eq!(
            o.error.as_deref(),
            Some("timed out after 500 ms waiting for decisions: 2 of 3 positions undecided (positions [0, 1])")
        );
        assert_eq!(o.leader, None);
    }
}
