//! Kept leaderships: a failure-tolerant election followed until it is
//! stopped, every change of belief recorded, safety checked as it goes, and
//! each loss of the agreed leader timed by the failover tracker.

mod follower;
pub(super) use follower::overlap_text;
mod sketch;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use super::agent;
use super::diagram;
use super::run::{ActiveFaults, Drawing, OnNodes, Outcome, now_ms, now_us};
use crate::cluster::{Node, Subscription};
use crate::record::{LeadershipChange, Metrics};
use crate::telemetry;
use follower::{Follower, Now, Report};
pub use follower::{MAX_RECORDED_VIOLATIONS, MAX_TIMELINE};
use ringleader_proto::v1 as pb;
use tracing::{info, warn};

/// Fault changes (cluster indices) by the positions of nodes `placement`.
fn faults_by_position(
    changes: Vec<(u64, super::run::ActiveFaults)>,
    placement: &[usize],
) -> Vec<(u64, super::run::ActiveFaults)> {
    changes.into_iter().map(|(at, f)| (at, f.by_position(placement))).collect()
}

/// Follow a kept leadership until `StopElection`: record every change of
/// belief, keep the current leader and term, and check safety as it goes
/// (never two leaders of one term; overlaps of two self-believed leaders
/// are reported with their duration). A node whose process restarted (its
/// event stream came back, and it no longer knows the election: a pod
/// rescheduled) is prepared again with `requests[i]` and started, a new
/// incarnation that rejoins the leadership.
///
/// What is known is kept by a [`Follower`]; this loop does the IO: it waits
/// for events, reads the faults, the streams and the clock, rejoins
/// restarted nodes and reads the message counts a failover took.
pub(super) async fn follow(on: &OnNodes<'_>, mut events: Subscription, requests: Vec<pb::PrepareRequest>) -> Outcome {
    let OnNodes { ctx, entry, plan, nodes, election_id, started } = *on;
    let n = nodes.len();
    // The cluster index of each position's node: the injected faults name nodes.
    let placement: Vec<usize> = nodes.iter().map(|node| node.index()).collect();
    let streams = || nodes.iter().map(|node| node.events_connected()).collect::<Vec<bool>>();
    let mut stop = entry.stop_requested();
    let mut follower = Follower::new(
        nodes.iter().map(|node| node.name()).collect(),
        plan.ids.clone(),
        streams(),
        ringleader_core::failover::Cause::stepped_down(plan.lease()),
        plan.diagram.is_some(),
    );
    let mut events_open = true;
    let mut rejoins: tokio::task::JoinSet<(usize, Result<bool, crate::calls::NodeFailure>)> =
        tokio::task::JoinSet::new();
    // A tick notices lost leaders without waiting for an event.
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut measuring = Measuring::new(nodes, election_id, ctx.config.rpc_timeout());
    // A diagram asked for is redrawn while the leadership runs, off the loop's turns.
    let mut sketch = sketch::Sketch::default();
    let mut drawing: Option<Pin<Box<dyn Future<Output = String> + Send + '_>>> = None;
    let mut faults_drawn = ActiveFaults::default();
    let now = || Now {
        ms: started.elapsed().as_millis() as u64,
        since_start_us: started.elapsed().as_micros() as u64,
        unix_us: now_us(),
    };
    loop {
        let event = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            _ = tick.tick() => None,
            svg = async { drawing.as_mut().expect("guarded").await }, if drawing.is_some() => {
                drawing = None;
                so_far(on, svg);
                continue;
            }
            Some((i, m)) = measuring.measured.recv() => {
                follower.measured(i, m);
                entry.update(|r| follower.failovers(r));
                continue;
            }
            ev = events.recv(), if events_open => match ev {
                Some((node, ev)) if node < n && ev.kept && ev.position as usize == node && ev.write_at_us > 0 => {
                    follower.write(node, ev.write_token, ev.write_at_us);
                    let fencing = follower.fencing().into();
                    entry.update(|r| {
                        r.fencing = Some(fencing);
                        None
                    });
                    continue;
                }
                Some((node, ev)) if node < n && ev.kept && ev.position as usize == node && ev.paused_until_us > 0 => {
                    follower.paused(node, ev.paused_from_us, ev.paused_until_us);
                    continue;
                }
                Some((node, ev)) if node < n && ev.kept && ev.position as usize == node => Some((node, ev)),
                Some(_) => continue,
                None => {
                    events_open = false;
                    continue;
                }
            },
        };
        // A node whose event stream came back may be a new process: its old belief is void, and
        // if it no longer knows the election it is prepared and started again.
        for i in follower.streams(&streams(), |i| nodes[i].lost_at_us(), now_us()) {
            if let Some(request) = requests.get(i).cloned() {
                follower.rejoining(i);
                let node = nodes[i].clone();
                let timeout = ctx.config.rpc_timeout();
                rejoins.spawn(async move { (i, agent::rejoin(&node, request, timeout).await) });
            }
        }
        while let Some(done) = rejoins.try_join_next() {
            let Ok((i, result)) = done else { continue };
            match &result {
                Ok(true) => {
                    info!(election = %election_id, node = %nodes[i].name(), "a restarted node rejoined the kept leadership as a new incarnation");
                    ctx.prepared(election_id, &[nodes[i].index()]);
                }
                Ok(false) => {}
                Err(e) => {
                    warn!(election = %election_id, node = %nodes[i].name(), error = %e, "a restarted node could not rejoin the kept leadership")
                }
            }
            follower.rejoined(i);
        }
        let faults = ctx.faults(election_id).by_position(&placement);
        if faults != faults_drawn {
            sketch.changed(std::time::Instant::now());
            faults_drawn = faults.clone();
        }
        follower.faults(faults, now_us());
        follower.judge_running(now_us());
        let at = now();
        let change = event.map(|(node, ev)| {
            let leader = (ev.leader_id != 0).then_some(ev.leader_id);
            follower.belief(Report { position: node, term: ev.term, leader, node_us: ev.at_us }, at);
            LeadershipChange {
                position: node as u32,
                node: nodes[node].name(),
                term: ev.term,
                leader_id: leader,
                at_ms: at.ms,
                node_us: ev.at_us,
            }
        });
        if let Some(i) = follower.leader_lost(at) {
            measuring.at_loss(i);
        }
        if let Some(i) = follower.agreement(at.ms) {
            if let Some(ms) = follower.records().get(i).and_then(|r| r.agreement_ms) {
                telemetry::metrics().failover(plan.spec.name, ms);
            }
            measuring.at_agreement(i);
        }
        if change.is_some() {
            sketch.changed(std::time::Instant::now());
        }
        entry.update(|r| follower.show(r, change, now_ms()));
        if let Some(d) = plan.diagram
            && drawing.is_none()
            && sketch.due(std::time::Instant::now())
        {
            let beliefs = follower.drawn_beliefs().to_vec();
            let leader = entry.inspect(|r| r.leader.as_ref().map(|l| l.position));
            let placement = &placement;
            drawing = Some(Box::pin(async move { drawn(on, d, placement, beliefs).await.svg_so_far(leader) }));
        }
    }
    drop(drawing);
    // A failover agreed just before the stop may still be being measured: its count belongs in
    // the record (the measurements end within two node calls).
    measuring.finish(|i, m| follower.measured(i, m)).await;
    entry.update(|r| follower.failovers(r));
    follower.stop(&streams(), now_us());
    finish(on, &placement, &follower).await
}

/// The message counts of each failover, read from every node off the loop:
/// a reading at the loss, one at agreement, from every node (one cut off or
/// crashed at the loss may send its share before agreement).
struct Measuring<'a> {
    nodes: &'a [Arc<Node>],
    election_id: &'a str,
    rpc_timeout: Duration,
    /// The reading at each open failover's loss.
    at_loss: HashMap<usize, tokio::task::JoinHandle<HashMap<usize, u64>>>,
    sender: tokio::sync::mpsc::UnboundedSender<(usize, u64)>,
    /// Each failover measured, with its messages.
    measured: tokio::sync::mpsc::UnboundedReceiver<(usize, u64)>,
}

impl<'a> Measuring<'a> {
    fn new(nodes: &'a [Arc<Node>], election_id: &'a str, rpc_timeout: Duration) -> Self {
        let (sender, measured) = tokio::sync::mpsc::unbounded_channel();
        Measuring { nodes, election_id, rpc_timeout, at_loss: HashMap::new(), sender, measured }
    }

    /// Every node's election and notification messages so far, read off the loop.
    fn read(&self) -> tokio::task::JoinHandle<HashMap<usize, u64>> {
        let nodes = self.nodes.to_vec();
        let id = self.election_id.to_string();
        let rpc_timeout = self.rpc_timeout;
        tokio::spawn(async move {
            agent::status_of(&nodes, &(0..nodes.len()).collect::<Vec<_>>(), &id, rpc_timeout)
                .await
                .into_iter()
                .filter_map(|(i, s)| s.ok().map(|s| (i, s.election_messages + s.notification_messages)))
                .collect::<HashMap<usize, u64>>()
        })
    }

    /// Failover `i` opened: read the counts now.
    fn at_loss(&mut self, i: usize) {
        let reading = self.read();
        self.at_loss.insert(i, reading);
    }

    /// Failover `i` closed: read the counts again, and send what was spent between.
    fn at_agreement(&mut self, i: usize) {
        let Some(before) = self.at_loss.remove(&i) else { return };
        let after = self.read();
        let tx = self.sender.clone();
        tokio::spawn(async move {
            if let (Ok(before), Ok(after)) = (before.await, after.await)
                && let Some(spent) = spent(&before, &after)
            {
                let _ = tx.send((i, spent));
            }
        });
    }

    /// Hand every measurement still under way to `done`, waiting at most two node calls.
    async fn finish(mut self, mut done: impl FnMut(usize, u64)) {
        drop(self.sender);
        let deadline = tokio::time::Instant::now() + 2 * self.rpc_timeout;
        while let Ok(Some((i, m))) = tokio::time::timeout_at(deadline, self.measured.recv()).await {
            done(i, m);
        }
    }
}

/// The diagram of a kept leadership as it stands: its nodes' message logs, the changes of belief
/// `beliefs` and the faults injected since it started.
async fn drawn(
    on: &OnNodes<'_>,
    drawing: Drawing,
    placement: &[usize],
    beliefs: Vec<diagram::Belief>,
) -> diagram::LiveDiagram {
    let OnNodes { ctx, plan, nodes, election_id, started, .. } = *on;
    let d = diagram::read(plan, drawing, nodes, election_id, ctx.config.rpc_timeout()).await;
    // The unix time of `started`, to place the timeline and the faults on the diagram.
    let started_us = now_us().saturating_sub(started.elapsed().as_micros() as u64);
    d.with_history(
        started_us,
        &beliefs,
        &plan.ids,
        &faults_by_position(ctx.fault_changes(started_us, election_id), placement),
    )
}

/// Keep `svg`, the diagram of a running kept leadership so far, in its record (pages and
/// `GetElection` show it); one over `max_diagram_kib` is not kept, the last one kept stays.
fn so_far(on: &OnNodes<'_>, svg: String) {
    if svg.len() as u64 > on.ctx.config.max_diagram_kib << 10 {
        return;
    }
    on.entry.update(|r| {
        r.diagram_svg = Some(svg.into());
        r.diagram_drawn += 1;
        None
    });
}

/// The end of a stopped kept leadership: its diagram, its nodes' counts,
/// notes on nodes that no longer ran it, and the outcome.
async fn finish(on: &OnNodes<'_>, placement: &[usize], follower: &Follower) -> Outcome {
    let OnNodes { ctx, entry, plan, nodes, election_id, started } = *on;
    let n = nodes.len();
    let statuses = agent::status_of(nodes, &(0..n).collect::<Vec<_>>(), election_id, ctx.config.rpc_timeout()).await;
    let diagram = match plan.diagram {
        Some(drawing) => Some(drawn(on, drawing, placement, follower.drawn_beliefs().to_vec()).await),
        None => None,
    };
    agent::abort(nodes, election_id, ctx.config.rpc_timeout()).await;
    let mut metrics = Metrics {
        duration_ms: started.elapsed().as_millis() as u64,
        bound: 0,
        bound_formula: "none: a kept leadership elects again after every failure",
        ..Metrics::default()
    };
    // A node that no longer knows the election dropped it outside the controller: an Abort
    // from elsewhere, or a restarted process. Say so, instead of reporting silence.
    let mut notes: Vec<String> = statuses
        .iter()
        .filter(|(_, s)| s.as_ref().is_err_and(agent::CallError::not_found))
        .map(|(i, _)| {
            format!(
                "{} no longer ran the election when it was stopped (aborted outside the controller, or its \
                 process restarted); its counts are missing from the metrics",
                nodes[*i].name()
            )
        })
        .collect();
    if ctx.shutting_down() {
        notes.push("ended by the controller's shutdown".to_string());
    }
    for s in statuses.into_iter().filter_map(|(_, s)| s.ok()) {
        metrics.election_messages += s.election_messages;
        metrics.notification_messages += s.notification_messages;
        for (kind, c) in &s.sent_by_kind {
            *metrics.by_kind.entry(kind.clone()).or_default() += c;
        }
        metrics.bytes += s.bytes;
        metrics.ideal_time = metrics.ideal_time.max(s.max_causal_time);
    }
    metrics.messages = metrics.election_messages + metrics.notification_messages;
    let record = entry.snapshot();
    entry.update(|r| {
        r.overlaps = follower.overlaps();
        r.notes = notes;
        r.fencing = Some(follower.fencing().into());
        None
    });
    let diagram_svg = diagram.map(|d| d.svg(record.leader.as_ref().map(|l| l.position), metrics.messages));
    Outcome {
        error: None,
        agreed: record.agreed,
        violations: follower.violations(),
        metrics: Some(metrics),
        leader: record.leader,
        per_position: Vec::new(),
        diagram_svg,
    }
}

/// The election and notification messages the nodes sent between two
/// readings of their counts, by position (`before` at a loss, `after` at
/// agreement): each node's growth, or its whole count after if it fell (a
/// restarted process counts from zero again, all of it since the loss).
/// `None` when no node answered both readings: unmeasured, not zero.
fn spent(before: &HashMap<usize, u64>, after: &HashMap<usize, u64>) -> Option<u64> {
    let grown = |(p, &a): (&usize, &u64)| before.get(p).map(|&b| if a >= b { a - b } else { a });
    let each: Vec<u64> = after.iter().filter_map(grown).collect();
    (!each.is_empty()).then(|| each.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failover's messages are every node's growth between the readings, a restarted node's
    /// (its count fell) all it sent since; a node read only once adds nothing; no node read twice
    /// is no figure at all, not zero.
    #[test]
    fn a_failover_counts_what_every_node_sent_between_the_readings() {
        let before = HashMap::from([(0, 10), (1, 20), (2, 30), (3, 5)]);
        let after = HashMap::from([(0, 14), (1, 20), (2, 3), (4, 100)]);
        assert_eq!(spent(&before, &after), Some(4 + 3));
        assert_eq!(spent(&before, &HashMap::from([(0, 10)])), Some(0), "read twice, nothing sent");
        assert_eq!(spent(&HashMap::new(), &after), None);
        assert_eq!(spent(&before, &HashMap::new()), None);
    }
}
