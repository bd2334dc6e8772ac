//! LIVE elections: position `i` runs on cluster node `i`. Every position is
//! prepared before any initiator starts; the decisions are collected from
//! the nodes' events (with a `Status` poll as a safety net); the controller
//! waits until the election is quiet, sums the nodes' counters, checks the
//! invariants and aborts the election on the nodes to free their memory.

use std::time::{Duration, Instant};

use ringleader_core::algo::Decision;
use ringleader_core::invariants;
use ringleader_proto::v1 as pb;
use tracing::warn;

use super::diagram;
use super::entry::{Entry, WatchEvent};
use super::kept;
use super::nodes;
use super::run::{Context, Outcome, Plan, stopped};
use crate::record::{LeaderInfo, MAX_PARTICIPANTS, Metrics};

/// Run `plan` on the cluster's nodes, position `i` on node `i`.
pub(super) async fn run(ctx: &Context<'_>, entry: &Entry, plan: &Plan, traceparent: String) -> Outcome {
    let election_id = entry.inspect(|r| r.id.clone());
    let n = plan.n() as usize;
    let Some(nodes) = ctx.cluster.nodes().get(..n).map(|s| s.to_vec()) else {
        return Outcome::failed(format!("the cluster has {} nodes; {n} are needed", ctx.cluster.len()));
    };
    let rpc_timeout = ctx.config.rpc_timeout();
    let mut events = ctx.cluster.subscribe(&election_id);

    // Configure every position before starting anyone, so no message finds an unprepared node.
    let mut is_initiator = vec![false; n];
    for &p in &plan.initiators {
        is_initiator[p as usize] = true;
    }
    let prepares = (0..n).map(|i| {
        let ports = plan
            .topology
            .ports(i as u32)
            .iter()
            .map(|link| pb::PortPeer {
                position: link.peer,
                address: if link.outgoing { nodes[link.peer as usize].address().to_string() } else { String::new() },
                remote_port: link.remote_port,
                id: plan.ids[link.peer as usize],
                label: pb::Compass::from(link.label).into(),
            })
            .collect();
        pb::PrepareRequest {
            election_id: election_id.clone(),
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
            traceparent: traceparent.clone(),
            log_messages: plan.diagram,
        }
    });
    let calls = nodes.iter().zip(prepares).map(|(node, req)| {
        let mut client = node.client();
        (node.clone(), async move { client.prepare(req).await.map(|_| ()) })
    });
    if let Err(e) = nodes::all_ok(calls, rpc_timeout, "Prepare").await {
        nodes::abort(&nodes, &election_id, rpc_timeout).await;
        return Outcome::failed(e);
    }
    entry.set_running();

    let started = Instant::now();
    let calls = plan.initiators.iter().map(|&p| {
        let node = nodes[p as usize].clone();
        let mut client = node.client();
        let req = pb::StartRequest { election_id: election_id.clone() };
        (node, async move { client.start(req).await.map(|_| ()) })
    });
    if let Err(e) = nodes::all_ok(calls, rpc_timeout, "Start").await {
        nodes::abort(&nodes, &election_id, rpc_timeout).await;
        return Outcome::failed(e);
    }
    if plan.keep_leader {
        return kept::follow(ctx, entry, plan, &nodes, &election_id, events, started).await;
    }
    let mut stop = entry.stop_requested();

    // Collect decisions: events as they come, a Status poll of the
    // undecided now and then in case an event stream was not open.
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
                    nodes::decision_of(ev.role, ev.leader_id).map(|d| vec![(node, d)]).unwrap_or_default()
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
                let statuses = nodes::status_of(&nodes, &pending, &election_id, rpc_timeout).await;
                statuses
                    .into_iter()
                    .filter_map(|(i, s)| s.ok().and_then(|s| nodes::decision_of(s.role, s.leader_id)).map(|d| (i, d)))
                    .collect()
            }
            _ = tokio::time::sleep_until(deadline) => {
                timed_out = true;
                break;
            }
            () = stopped(&mut stop) => {
                nodes::abort(&nodes, &election_id, rpc_timeout).await;
                return Outcome::failed(format!(
                    "{} ({} of {n} positions had decided)",
                    ctx.stopped_text(),
                    n - undecided
                ));
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

    // Wait until every message sent has arrived (received or rejected), twice in a row.
    let quiet_deadline = tokio::time::Instant::now() + ctx.config.quiet_timeout();
    let all: Vec<usize> = (0..n).collect();
    let mut previous: Option<(u64, u64, u64)> = None;
    let mut violations = Vec::new();
    let statuses = loop {
        let polled = nodes::status_of(&nodes, &all, &election_id, rpc_timeout).await;
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
            nodes::abort(&nodes, &election_id, rpc_timeout).await;
            return Outcome::failed(e);
        }
        let totals = statuses.iter().fold((0, 0, 0), |(s, r, j), st| {
            (s + st.election_messages + st.notification_messages, r + st.received, j + st.rejected)
        });
        if timed_out || (totals.0 == totals.1 + totals.2 && previous == Some(totals)) {
            break statuses;
        }
        let stop_asked = *stop.borrow();
        if stop_asked {
            nodes::abort(&nodes, &election_id, rpc_timeout).await;
            return Outcome::failed(format!("{} (waiting for its last messages)", ctx.stopped_text()));
        }
        if tokio::time::Instant::now() >= quiet_deadline {
            violations.push(format!(
                "did not go quiet within {} ms: {} messages sent, {} received, {} rejected",
                ctx.config.quiet_timeout_ms, totals.0, totals.1, totals.2
            ));
            break statuses;
        }
        previous = Some(totals);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let diagram = match plan.diagram {
        true => Some(diagram::read(plan, &nodes, &election_id, rpc_timeout).await),
        false => None,
    };
    nodes::abort(&nodes, &election_id, rpc_timeout).await;

    // The nodes' final word on decisions wins over the events.
    for (i, s) in statuses.iter().enumerate() {
        if let Some(d) = nodes::decision_of(s.role, s.leader_id) {
            decisions[i] = Some(d);
        }
    }
    let mut metrics = Metrics {
        duration_ms,
        bound: plan.spec.bound_for(&plan.topology, plan.k() as u64),
        bound_formula: plan.spec.bound_formula,
        ..Metrics::default()
    };
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
    let verdict = invariants::verdict(
        plan.spec.expected_winner(&plan.topology, &plan.ids, &plan.initiators, plan.rule),
        plan.rule,
        &plan.ids,
        &decisions,
        metrics.messages,
        metrics.bound,
        plan.spec.bound_formula,
    );
    let mut all_violations = verdict.violations;
    all_violations.extend(violations);
    let leader =
        verdict.leader.map(|p| LeaderInfo { node: nodes[p as usize].name(), id: plan.ids[p as usize], position: p });
    let diagram_svg = diagram.map(|d| d.svg(verdict.leader, metrics.messages));
    let per_position = if plan.n() <= MAX_PARTICIPANTS {
        decisions.iter().zip(&statuses).map(|(d, s)| (*d, s.election_messages + s.notification_messages)).collect()
    } else {
        Vec::new()
    };
    let error = timed_out.then(|| {
        let missing: Vec<usize> = (0..n).filter(|&i| decisions[i].is_none()).collect();
        format!(
            "timed out after {} ms waiting for decisions: {} of {n} positions undecided (positions {:?})",
            ctx.config.decision_timeout_ms,
            missing.len(),
            &missing[..missing.len().min(16)]
        )
    });
    Outcome {
        error,
        agreed: verdict.agreed,
        violations: all_violations,
        metrics: Some(metrics),
        leader,
        per_position,
        diagram_svg,
    }
}
