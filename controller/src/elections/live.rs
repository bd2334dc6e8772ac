//! LIVE elections: position `i` runs on cluster node `i`. Every position is
//! prepared before any initiator starts; the decisions are collected from
//! the nodes' events (with a `Status` poll as a safety net); the controller
//! waits until the election is quiet, sums the nodes' counters, checks the
//! invariants and aborts the election on the nodes to free their memory.

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
use super::run::{Context, Outcome, Plan, stopped};
use crate::cluster::{Cluster, Node, Subscription, all_ok};
use crate::record::{LeaderInfo, MAX_PARTICIPANTS, Metrics};

/// Run `plan` on the cluster's nodes: place -> prepare -> start -> collect
/// the decisions (or follow a kept leadership) -> wait until quiet -> judge.
pub(super) async fn run(ctx: &Context<'_>, entry: &Entry, plan: &Plan, traceparent: String) -> Outcome {
    let election_id = entry.inspect(|r| r.id.clone());
    let nodes = match place(ctx.cluster, plan.n() as usize) {
        Ok(nodes) => nodes,
        Err(e) => return Outcome::failed(e),
    };
    let rpc_timeout = ctx.config.rpc_timeout();
    // Subscribed before any Start, so no decision is missed.
    let mut events = ctx.cluster.subscribe(&election_id);

    // Configure every position before starting anyone, so no message finds an unprepared node.
    let addresses: Vec<&str> = nodes.iter().map(|n| n.address()).collect();
    let requests = prepare_requests(plan, &election_id, &addresses, &traceparent);
    // A kept leadership prepares a node again if its process restarts.
    let again = if plan.keep_leader { requests.clone() } else { Vec::new() };
    if let Err(e) = prepare(&nodes, requests, rpc_timeout).await {
        return halt(ctx, &nodes, &election_id, Halt::Failed(e)).await;
    }
    entry.set_running();

    let started = Instant::now();
    if let Err(e) = start(&nodes, &plan.initiators, &election_id, rpc_timeout).await {
        return halt(ctx, &nodes, &election_id, Halt::Failed(e)).await;
    }
    if plan.keep_leader {
        return kept::follow(ctx, entry, plan, &nodes, &election_id, events, started, again).await;
    }
    let mut stop = entry.stop_requested();
    let collected = match collect(ctx, entry, &nodes, &election_id, &mut events, &mut stop, started).await {
        Ok(c) => c,
        Err(h) => return halt(ctx, &nodes, &election_id, h).await,
    };
    let (statuses, not_quiet) = match wait_quiet(ctx, &nodes, &election_id, &stop, collected.timed_out).await {
        Ok(q) => q,
        Err(h) => return halt(ctx, &nodes, &election_id, h).await,
    };
    let diagram = match plan.diagram {
        Some(drawing) => Some(diagram::read(plan, drawing, &nodes, &election_id, rpc_timeout).await),
        None => None,
    };
    agent::abort(&nodes, &election_id, rpc_timeout).await;
    judge(plan, |i| nodes[i].name(), collected, &statuses, not_quiet, diagram, ctx.config.decision_timeout_ms)
}

/// Why a phase ended the election before its verdict.
#[derive(Debug)]
enum Halt {
    /// A call to the nodes failed, as described.
    Failed(String),
    /// `StopElection` or the shutdown, with what the election was doing then.
    Stopped(String),
}

/// Abort the election on the nodes, then say why it ended. The stop's
/// reason is read only after the abort, as the shutdown may begin meanwhile.
async fn halt(ctx: &Context<'_>, nodes: &[Arc<Node>], election_id: &str, halt: Halt) -> Outcome {
    agent::abort(nodes, election_id, ctx.config.rpc_timeout()).await;
    match halt {
        Halt::Failed(e) => Outcome::failed(e),
        Halt::Stopped(doing) => Outcome::failed(format!("{} ({doing})", ctx.stopped_text())),
    }
}

/// The nodes of positions `0..n`: the first `n` of the cluster.
fn place(cluster: &Cluster, n: usize) -> Result<Vec<Arc<Node>>, String> {
    cluster
        .nodes()
        .get(..n)
        .map(|s| s.to_vec())
        .ok_or_else(|| format!("the cluster has {} nodes; {n} are needed", cluster.len()))
}

/// What each position's node is told before anyone starts: its id, whether
/// it initiates, its coin, and where each port leads (`addresses[i]` is the
/// node of position `i`; a port that only receives has no address).
fn prepare_requests(plan: &Plan, election_id: &str, addresses: &[&str], traceparent: &str) -> Vec<pb::PrepareRequest> {
    let n = plan.n() as usize;
    let mut is_initiator = vec![false; n];
    for &p in &plan.initiators {
        is_initiator[p as usize] = true;
    }
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
                coin: ringleader_core::algo::coin(plan.seed, i as u32),
                keep_leader: plan.keep_leader,
                detector: plan.keep_leader.then_some(pb::FailureDetector {
                    period_ms: plan.detector.period_ms,
                    timeout_ms: plan.detector.timeout_ms,
                }),
                traceparent: traceparent.to_string(),
                log_messages: plan.diagram.is_some(),
            }
        })
        .collect()
}

/// Send every position its `Prepare` (`requests[i]` to `nodes[i]`).
async fn prepare(nodes: &[Arc<Node>], requests: Vec<pb::PrepareRequest>, timeout: Duration) -> Result<(), String> {
    let calls = nodes.iter().zip(requests).map(|(node, req)| {
        let mut client = node.client();
        (node.clone(), async move { client.prepare(req).await.map(|_| ()) })
    });
    all_ok(calls, timeout, "Prepare").await
}

/// Wake the initiators.
async fn start(nodes: &[Arc<Node>], initiators: &[u32], election_id: &str, timeout: Duration) -> Result<(), String> {
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
}

/// Wait for every position's decision: events as they come, a `Status` poll
/// of the undecided now and then in case an event stream was not open, each
/// decision told to the record's watchers; until the decision timeout.
async fn collect(
    ctx: &Context<'_>,
    entry: &Entry,
    nodes: &[Arc<Node>],
    election_id: &str,
    events: &mut Subscription,
    stop: &mut watch::Receiver<bool>,
    started: Instant,
) -> Result<Collected, Halt> {
    let n = nodes.len();
    let rpc_timeout = ctx.config.rpc_timeout();
    let mut decisions: Vec<Option<Decision>> = vec![None; n];
    let mut undecided = n;
    let mut last_decision = started;
    let deadline = tokio::time::Instant::now() + ctx.config.decision_timeout();
    let mut poll =
        tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_millis(500), Duration::from_millis(500));
    let mut timed_out = false;
    let mut events_open = true;
    while undecided > 0 {
        let found: Vec<(usize, Decision)> = tokio::select! {
            event = events.recv(), if events_open => match event {
                Some((node, ev)) if node < n && ev.position as usize == node => {
                    agent::decision_of(ev.role, ev.leader_id).map(|d| vec![(node, d)]).unwrap_or_default()
                }
                Some((node, ev)) => {
                    warn!(election = %election_id, node, position = ev.position, "event from an unexpected position");
                    Vec::new()
                }
                None => {
                    events_open = false;
                    Vec::new()
                }
            },
            _ = poll.tick() => {
                let pending: Vec<usize> = (0..n).filter(|&i| decisions[i].is_none()).collect();
                let statuses = agent::status_of(nodes, &pending, election_id, rpc_timeout).await;
                statuses
                    .into_iter()
                    .filter_map(|(i, s)| s.ok().and_then(|s| agent::decision_of(s.role, s.leader_id)).map(|d| (i, d)))
                    .collect()
            }
            _ = tokio::time::sleep_until(deadline) => {
                timed_out = true;
                break;
            }
            () = stopped(stop) => {
                return Err(Halt::Stopped(format!("{} of {n} positions had decided", n - undecided)));
            }
        };
        for (i, d) in found {
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
    }
    let duration_ms = last_decision.duration_since(started).as_millis() as u64;
    Ok(Collected { decisions, duration_ms, timed_out })
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

    /// Quiet: every message sent has arrived (received or rejected), and
    /// nothing changed since the `previous` poll.
    fn quiet(self, previous: Option<Traffic>) -> bool {
        self.sent == self.received + self.rejected && previous == Some(self)
    }
}

/// Poll every node's `Status` until the election is quiet (or the decisions
/// timed out: then at once), within the quiet timeout; the last statuses in
/// position order, and the violation if it never went quiet.
async fn wait_quiet(
    ctx: &Context<'_>,
    nodes: &[Arc<Node>],
    election_id: &str,
    stop: &watch::Receiver<bool>,
    timed_out: bool,
) -> Result<(Vec<pb::NodeElectionStatus>, Option<String>), Halt> {
    let n = nodes.len();
    let quiet_deadline = tokio::time::Instant::now() + ctx.config.quiet_timeout();
    let all: Vec<usize> = (0..n).collect();
    let mut previous: Option<Traffic> = None;
    loop {
        let polled = agent::status_of(nodes, &all, election_id, ctx.config.rpc_timeout()).await;
        let mut statuses = Vec::with_capacity(n);
        let mut failure = None;
        for (i, s) in polled {
            match s {
                Ok(s) => statuses.push(s),
                Err(e) => failure = Some(format!("Status on {} ({}) failed: {e}", nodes[i].name(), nodes[i].address())),
            }
        }
        if failure.is_none() && statuses.len() != n {
            failure = Some(format!("Status answered for {} of {n} positions", statuses.len()));
        }
        if let Some(e) = failure {
            return Err(Halt::Failed(e));
        }
        let traffic = Traffic::of(&statuses);
        if timed_out || traffic.quiet(previous) {
            return Ok((statuses, None));
        }
        let stop_asked = *stop.borrow();
        if stop_asked {
            return Err(Halt::Stopped("waiting for its last messages".to_string()));
        }
        if tokio::time::Instant::now() >= quiet_deadline {
            let violation = format!(
                "did not go quiet within {} ms: {} messages sent, {} received, {} rejected",
                ctx.config.quiet_timeout_ms, traffic.sent, traffic.received, traffic.rejected
            );
            return Ok((statuses, Some(violation)));
        }
        previous = Some(traffic);
        tokio::time::sleep(Duration::from_millis(20)).await;
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
    let Collected { mut decisions, duration_ms, timed_out } = collected;
    for (i, s) in statuses.iter().enumerate() {
        if let Some(d) = agent::decision_of(s.role, s.leader_id) {
            decisions[i] = Some(d);
        }
    }
    let (counted, reported) = tally(statuses);
    let metrics = Metrics {
        duration_ms,
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
    let mut violations = verdict.violations;
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
        let requests = prepare_requests(&plan(false), "e1", &addresses, "tp");
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
        let kept = prepare_requests(&plan(true), "e1", &addresses, "");
        assert!(kept[0].keep_leader);
        assert_eq!(kept[0].detector, Some(pb::FailureDetector { period_ms: 50, timeout_ms: 200 }));
    }

    /// An election is quiet once every message sent has been received or rejected twice in a row
    /// with nothing new: not at the first balanced poll, not while messages are in flight, not
    /// when the counts moved since the last poll.
    #[test]
    fn quiet_takes_two_equal_balanced_polls() {
        let balanced = Traffic { sent: 10, received: 8, rejected: 2 };
        assert!(!balanced.quiet(None));
        assert!(balanced.quiet(Some(balanced)));
        let in_flight = Traffic { sent: 10, received: 8, rejected: 1 };
        assert!(!in_flight.quiet(Some(in_flight)));
        assert!(!balanced.quiet(Some(Traffic { sent: 9, received: 7, rejected: 2 })));
        let mut rejecting = status(pb::Role::Follower, 30, 4, 2);
        rejecting.rejected = 3;
        let statuses = [status(pb::Role::Leader, 30, 5, 1), rejecting];
        assert_eq!(Traffic::of(&statuses), Traffic { sent: 12, received: 12, rejected: 3 });
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
        let collected = Collected { decisions: vec![None, Some(follower), None], duration_ms: 12, timed_out: false };
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
        let leader = Some(Decision { role: Role::Leader, leader: 30 });
        assert_eq!(o.per_position, [(leader, 5), (Some(follower), 3), (Some(follower), 2)]);
        assert_eq!((o.error, o.diagram_svg), (None, None));

        let timed_out = Collected { decisions: vec![None; 3], duration_ms: 0, timed_out: true };
        let undecided = [pb::NodeElectionStatus::default(), pb::NodeElectionStatus::default(), statuses[2].clone()];
        let o = judge(&plan(false), |i| format!("node-{i}"), timed_out, &undecided, None, None, 500);
        assert_eq!(
            o.error.as_deref(),
            Some("timed out after 500 ms waiting for decisions: 2 of 3 positions undecided (positions [0, 1])")
        );
        assert_eq!(o.leader, None);
    }
}
