//! Kept leaderships: a failure-tolerant election followed until it is
//! stopped, every change of belief recorded, safety checked as it goes, and
//! each loss of the agreed leader timed by the failover tracker.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use super::agent;
use super::diagram;
use super::entry::WatchEvent;
use super::overlap;
use super::run::{OnNodes, Outcome, now_ms, now_us};
use crate::cluster::Subscription;
use crate::failover::{self, Mark, Tracker};
use crate::record::{ElectionRecord, FailoverRecord, LeaderInfo, LeadershipChange, Metrics};
use crate::telemetry;
use ringleader_proto::v1 as pb;
use tracing::{info, warn};

/// Fault changes (cluster indices) by the positions of nodes `placement`.
fn faults_by_position(
    changes: Vec<(u64, super::run::ActiveFaults)>,
    placement: &[usize],
) -> Vec<(u64, super::run::ActiveFaults)> {
    changes.into_iter().map(|(at, f)| (at, f.by_position(placement))).collect()
}

/// The counted nodes' beliefs kept to replay into a failover learnt late.
const RECENT_BELIEFS: usize = 1_024;

/// Most leadership changes a kept election records.
pub const MAX_TIMELINE: usize = 10_000;

/// Follow a kept leadership until `StopElection`: record every change of
/// belief, keep the current leader and term, and check safety as it goes
/// (never two leaders of one term; overlaps of two self-believed leaders
/// are reported with their duration). A node whose process restarted (its
/// event stream came back, and it no longer knows the election: a pod
/// rescheduled) is prepared again with `requests[i]` and started, a new
/// incarnation that rejoins the leadership.
pub(super) async fn follow(on: &OnNodes<'_>, mut events: Subscription, requests: Vec<pb::PrepareRequest>) -> Outcome {
    let OnNodes { ctx, entry, plan, nodes, election_id, started } = *on;
    let n = nodes.len();
    // The cluster index of each position's node: the injected faults name nodes.
    let placement: Vec<usize> = nodes.iter().map(|node| node.index()).collect();
    let mut stop = entry.stop_requested();
    let mut belief: Vec<Option<(u64, Option<u64>)>> = vec![None; n];
    let mut claims: BTreeMap<u64, usize> = BTreeMap::new();
    let mut violations = Capped::default();
    let mut overlaps = Capped::default();
    // Each node's leadership intervals on its own clock: overlaps (see `overlap`).
    let mut leaderships = overlap::Leaderships::new(n);
    let mut events_open = true;
    // Each node's event stream as last seen: one that comes back may be a restarted process.
    let mut connected: Vec<bool> = nodes.iter().map(|n| n.events_connected()).collect();
    // When each node's stream last broke (controller clock, unix µs), and while it rejoins the
    // leadership intervals it reports, held until we know whether its process restarted.
    let mut lost_at_us: Vec<u64> = vec![0; n];
    // When each node's stream came back (controller clock, unix µs): what it reports of the time
    // before is not judged (it was not heard then).
    let mut back_at_us: Vec<u64> = vec![0; n];
    // When each position's current belief arrived (ms since the start): a failover's agreement
    // began when the last of the counted nodes took the belief they agree on.
    let mut belief_at_ms: Vec<u64> = vec![0; n];
    // The counted nodes' recent beliefs (ms since the start, position, term, leader): a loss
    // learnt late (a node that stopped answering) is dated when it was last heard, and the
    // beliefs since then replayed into its failover.
    let mut recent: std::collections::VecDeque<(u64, usize, u64, Option<u64>)> = Default::default();
    // (the term it leads, if it does; since when, on its clock)
    type Interval = (Option<u64>, u64);
    let mut held: Vec<Option<Vec<Interval>>> = vec![None; n];
    let mut was_crashed: Vec<bool> = vec![false; n];
    let mut rejoins: tokio::task::JoinSet<(usize, Result<bool, String>)> = tokio::task::JoinSet::new();
    // Every change of belief to microseconds, for the diagram (only when one is drawn).
    let mut beliefs: Vec<diagram::Belief> = Vec::new();
    let leads =
        |belief: &[Option<(u64, Option<u64>)>], i: usize| matches!(belief[i], Some((_, Some(l))) if l == plan.ids[i]);
    let describe = |o: &overlap::Overlap| {
        let who: BTreeMap<usize, BTreeSet<u64>> = o.who.iter().map(|&(i, t)| (i, BTreeSet::from([t]))).collect();
        overlap_text(&who, |i| nodes[i].name(), o.us / 1_000)
    };
    let info = |i: usize| LeaderInfo { node: nodes[i].name(), id: plan.ids[i], position: i as u32 };
    // Failover figures: a tick notices lost leaders without waiting for an event, and message
    // counts are read from the nodes off the loop (a snapshot at the loss, one at agreement), from
    // every node: one cut off or crashed at the loss may send its share before agreement.
    let mut tracker = Tracker::new();
    let mut shown: Option<usize> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut snapshots: HashMap<usize, tokio::task::JoinHandle<HashMap<usize, u64>>> = HashMap::new();
    let (measured_tx, mut measured) = tokio::sync::mpsc::unbounded_channel::<(usize, u64)>();
    let rpc_timeout = ctx.config.rpc_timeout();
    let snapshot = || {
        let nodes = nodes.to_vec();
        let id = election_id.to_string();
        tokio::spawn(async move {
            agent::status_of(&nodes, &(0..nodes.len()).collect::<Vec<_>>(), &id, rpc_timeout)
                .await
                .into_iter()
                .filter_map(|(i, s)| s.ok().map(|s| (i, s.election_messages + s.notification_messages)))
                .collect::<HashMap<usize, u64>>()
        })
    };
    loop {
        let event = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            _ = tick.tick() => None,
            Some((i, m)) = measured.recv() => {
                tracker.set_messages(i, m);
                entry.update(|r| failover_events(r, tracker.records()));
                continue;
            }
            ev = events.recv(), if events_open => match ev {
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
        for (i, was) in connected.iter_mut().enumerate() {
            let now = nodes[i].events_connected();
            if *was && !now {
                // When it was last heard: a node that stopped answering broke its stream later.
                let lost = nodes[i].lost_at_us();
                lost_at_us[i] = if lost == 0 { now_us() } else { lost.min(now_us()) };
            }
            if now && !*was {
                back_at_us[i] = now_us();
            }
            if now
                && !*was
                && let Some(request) = requests.get(i).cloned()
            {
                belief[i] = None;
                held[i].get_or_insert_with(Vec::new);
                let node = nodes[i].clone();
                let timeout = ctx.config.rpc_timeout();
                rejoins.spawn(async move { (i, agent::rejoin(&node, request, timeout).await) });
            }
            *was = now;
        }
        while let Some(done) = rejoins.try_join_next() {
            let Ok((i, result)) = done else { continue };
            match &result {
                Ok(true) => {
                    info!(election = %election_id, node = %nodes[i].name(), "a restarted node rejoined the kept leadership as a new incarnation");
                }
                Ok(false) => {}
                Err(e) => {
                    warn!(election = %election_id, node = %nodes[i].name(), error = %e, "a restarted node could not rejoin the kept leadership")
                }
            }
            // The old incarnation was gone when its stream broke, and a process that was paused
            // or cut off was last known to believe anything when it was last heard: its
            // leadership ends there for the judgement, and what it reports of the time it was
            // not heard is left unjudged (a frozen belief is no overlap).
            leaderships.ended(i, lost_at_us[i]).iter().for_each(|o| overlaps.push(describe(o)));
            for (leads, at) in held[i].take().unwrap_or_default() {
                let at = at.max(back_at_us[i]);
                leaderships.belief(i, leads, at).iter().for_each(|o| overlaps.push(describe(o)));
            }
        }
        // A crashed node's last belief is frozen, and so is that of a node whose events no
        // longer reach the controller: judge leaders and agreement among live nodes.
        let faults = ctx.faults().by_position(&placement);
        let crashed = &faults.crashed;
        let live = |i: &usize| !crashed.contains(i) && nodes[*i].events_connected();
        // A node a partition cuts off from every majority takes no part in the failover
        // figures (its leadership is lost to the majority; agreement is the majority's).
        let counted = |i: &usize| live(i) && !faults.cut_off.contains(i);
        // Why the agreed leader at `p` is lost, if it is: crashed or unreachable, cut off by a
        // partition, or stepped down (it names no leader: a Chubby-style lease not renewed).
        let loss = |p: usize, belief: &[Option<(u64, Option<u64>)>]| {
            if faults.leaving.contains(&p) {
                Some(failover::HANDOVER)
            } else if !live(&p) {
                Some(if crashed.contains(&p) { failover::CRASH_FAULT } else { failover::UNREACHABLE })
            } else if faults.cut_off.contains(&p) {
                Some(failover::PARTITION)
            } else if matches!(belief[p], Some((_, None))) {
                Some(plan.spec.kept.and_then(|k| k.lease).map_or(failover::STEPPED_DOWN, |l| l.lost))
            } else {
                None
            }
        };
        // A crashed node's belief dies with it: the node comes back as a new incarnation that
        // reports afresh, and its old belief must not count (nor overlap) in between.
        for &i in crashed.iter().filter(|&&i| i < n) {
            belief[i] = None;
        }
        for (i, was) in was_crashed.iter_mut().enumerate() {
            let now = crashed.contains(&i);
            if now && !*was {
                leaderships.ended(i, now_us()).iter().for_each(|o| overlaps.push(describe(o)));
            }
            *was = now;
        }
        let at_ms = started.elapsed().as_millis() as u64;
        if let Some((node, ev)) = &event {
            let (node, leader) = (*node, (ev.leader_id != 0).then_some(ev.leader_id));
            belief[node] = Some((ev.term, leader));
            belief_at_ms[node] = at_ms;
            if plan.diagram.is_some() && beliefs.len() < MAX_TIMELINE {
                let at_us = started.elapsed().as_micros() as u64;
                beliefs.push(diagram::Belief { at_us, position: node as u32, term: ev.term, leader });
            }
            // Its leadership interval, on its own clock (held while it rejoins).
            let leading = leads(&belief, node).then_some(ev.term);
            let at = if ev.at_us > 0 { ev.at_us } else { now_us() };
            match held[node].as_mut() {
                Some(h) => h.push((leading, at)),
                None => leaderships.belief(node, leading, at).iter().for_each(|o| overlaps.push(describe(o))),
            }
            if leads(&belief, node) {
                match claims.get(&ev.term) {
                    Some(&other) if other != node => violations.push(format!(
                        "two leaders of term {}: {} and {}",
                        ev.term,
                        nodes[other].name(),
                        nodes[node].name()
                    )),
                    _ => {
                        claims.insert(ev.term, node);
                    }
                }
            }
            if counted(&node) {
                tracker.belief(at_ms, ev.term, leader);
                if recent.len() == RECENT_BELIEFS {
                    recent.pop_front();
                }
                recent.push_back((at_ms, node, ev.term, leader));
            }
        }
        if let Some(p) = tracker.held_position().map(|p| p as usize)
            && let Some(cause) = loss(p, &belief)
        {
            // A node whose stream broke was lost when it was last heard, maybe a while ago.
            let lost_ms = if cause == failover::UNREACHABLE {
                at_ms.saturating_sub(now_us().saturating_sub(lost_at_us[p]) / 1_000)
            } else {
                at_ms
            };
            if let Mark::Opened(i) = tracker.leader_lost(lost_ms, cause) {
                for &(at, node, term, leader) in recent.iter().filter(|r| r.0 >= lost_ms && r.1 != p) {
                    if counted(&node) {
                        tracker.belief(at, term, leader);
                    }
                }
                // A handover is over in about a millisecond, before a snapshot could be read: its
                // messages stay unmeasured (absent) rather than undercounted.
                if cause != failover::HANDOVER {
                    snapshots.insert(i, snapshot());
                }
            }
        }
        let leaders: Vec<usize> = (0..n).filter(|&i| leads(&belief, i)).filter(live).collect();
        // The leader now: the self-believed leader of the highest term.
        let top = leaders.iter().copied().max_by_key(|&i| belief[i].map_or(0, |b| b.0));
        let names = |i: usize, t: usize| matches!(belief[i], Some((_, Some(l))) if l == plan.ids[t]);
        let agreed = top.is_some_and(|t| (0..n).filter(live).all(|i| names(i, t)));
        // The failover figures count the nodes that are not cut off: the majority's agreement.
        let majority_top = leaders.iter().copied().filter(counted).max_by_key(|&i| belief[i].map_or(0, |b| b.0));
        let settled = majority_top.is_some_and(|t| (0..n).filter(counted).all(|i| names(i, t)));
        // They agree since the last of them took the belief they agree on.
        let settled_at_ms = (0..n).filter(counted).map(|i| belief_at_ms[i]).max().unwrap_or(at_ms).min(at_ms);
        if let Some(t) = majority_top.filter(|_| settled)
            && let Mark::Closed(i) = tracker.agreed(settled_at_ms, info(t), belief[t].map_or(0, |b| b.0))
        {
            if let Some(ms) = tracker.records().get(i).and_then(|r| r.agreement_ms) {
                telemetry::metrics().failover(plan.spec.name, ms);
            }
            if let Some(before) = snapshots.remove(&i) {
                let after = snapshot();
                let tx = measured_tx.clone();
                tokio::spawn(async move {
                    if let (Ok(before), Ok(after)) = (before.await, after.await)
                        && let Some(spent) = spent(&before, &after)
                    {
                        let _ = tx.send((i, spent));
                    }
                });
            }
        }
        if event.is_none() && top == shown {
            // A tick that changed nothing visible: keep the record as it is.
            entry.update(|r| {
                r.agreed = agreed;
                failover_events(r, tracker.records())
            });
            continue;
        }
        shown = top;
        entry.update(|r| {
            let mut told = Vec::new();
            if let Some((node, ev)) = &event {
                let change = LeadershipChange {
                    position: *node as u32,
                    node: nodes[*node].name(),
                    term: ev.term,
                    leader_id: (ev.leader_id != 0).then_some(ev.leader_id),
                    at_ms,
                    node_us: ev.at_us,
                };
                if r.timeline.len() < MAX_TIMELINE {
                    r.timeline.push(change.clone());
                }
                told.push(WatchEvent::Leadership(change));
            }
            match top {
                Some(t) => {
                    let term = belief[t].map_or(0, |b| b.0);
                    if r.leader.as_ref().map(|l| l.position) != Some(t as u32) || r.term != term {
                        r.leader_since_ms = now_ms();
                    }
                    r.term = r.term.max(term);
                    r.leader = Some(info(t));
                }
                None => r.leader = None,
            }
            r.agreed = agreed;
            r.violations = violations.to_vec();
            r.overlaps = overlaps.to_vec();
            told.extend(failover_events(r, tracker.records()));
            told
        });
    }
    // A failover agreed just before the stop may still be being measured: its count belongs in
    // the record (the measurements end within two node calls).
    drop(measured_tx);
    let deadline = tokio::time::Instant::now() + 2 * rpc_timeout;
    while let Ok(Some((i, m))) = tokio::time::timeout_at(deadline, measured.recv()).await {
        tracker.set_messages(i, m);
    }
    entry.update(|r| failover_events(r, tracker.records()));
    // Stopped: the leaderships of the nodes heard now end here; one not heard is left unjudged.
    // A stream that came back since the loop last looked is not heard yet: what the node
    // believed meanwhile is unknown until it rejoins.
    let heard = |i: usize| connected[i] && nodes[i].events_connected() && held[i].is_none() && !was_crashed[i];
    leaderships.finish(now_us(), heard).iter().for_each(|o| overlaps.push(describe(o)));
    let statuses = agent::status_of(nodes, &(0..n).collect::<Vec<_>>(), election_id, ctx.config.rpc_timeout()).await;
    let diagram = match plan.diagram {
        Some(drawing) => {
            let d = diagram::read(plan, drawing, nodes, election_id, ctx.config.rpc_timeout()).await;
            // The unix time of `started`, to place the timeline and the faults on the diagram.
            let started_us = now_us().saturating_sub(started.elapsed().as_micros() as u64);
            Some(d.with_history(
                started_us,
                &beliefs,
                &plan.ids,
                &faults_by_position(ctx.fault_changes(started_us), &placement),
            ))
        }
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
        .filter(|(_, s)| s.as_ref().is_err_and(|e| e.contains("NotFound")))
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
        r.overlaps = overlaps.to_vec();
        r.notes = notes;
        None
    });
    let diagram_svg = diagram.map(|d| d.svg(record.leader.as_ref().map(|l| l.position), metrics.messages));
    Outcome {
        error: None,
        agreed: record.agreed,
        violations: violations.to_vec(),
        metrics: Some(metrics),
        leader: record.leader,
        per_position: Vec::new(),
        diagram_svg,
    }
}

/// The text of an overlap: every node that believed it led while it lasted,
/// with each term it led meanwhile, e.g. `node-0 (term 2) and node-4 (terms
/// 1 and 3) believed they led at once for 120 ms`.
fn overlap_text(who: &BTreeMap<usize, BTreeSet<u64>>, name: impl Fn(usize) -> String, ms: u64) -> String {
    let names: Vec<String> = who
        .iter()
        .map(|(&i, terms)| {
            let terms: Vec<String> = terms.iter().map(u64::to_string).collect();
            match terms.as_slice() {
                [one] => format!("{} (term {one})", name(i)),
                [init @ .., last] => format!("{} (terms {} and {last})", name(i), init.join(", ")),
                [] => name(i),
            }
        })
        .collect();
    format!("{} believed they led at once for {ms} ms", names.join(" and "))
}

/// Most violations (or overlaps) a kept leadership records word for word;
/// beyond, they are only counted. A cluster that cannot agree (e.g. with
/// delays above bully's timeouts) can otherwise add thousands a second, each
/// copied into every snapshot of the record.
pub const MAX_RECORDED_VIOLATIONS: usize = 100;

/// A list of findings kept to [`MAX_RECORDED_VIOLATIONS`], the rest counted.
#[derive(Clone, Debug, Default)]
struct Capped {
    list: Vec<String>,
    more: u64,
}

impl Capped {
    fn push(&mut self, finding: String) {
        if self.list.len() < MAX_RECORDED_VIOLATIONS {
            self.list.push(finding);
        } else {
            self.more += 1;
        }
    }

    /// The findings kept, and a last line counting the others if any.
    fn to_vec(&self) -> Vec<String> {
        let mut v = self.list.clone();
        if self.more > 0 {
            v.push(format!("... and {} more of the same kind, not recorded", self.more));
        }
        v
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

/// Put the tracker's failovers into the record `r`, and return an event for
/// each that is new or changed since (what `WatchElection` streams).
fn failover_events(r: &mut ElectionRecord, records: &[FailoverRecord]) -> Vec<WatchEvent> {
    let told = records
        .iter()
        .enumerate()
        .filter(|&(i, f)| r.failovers.get(i) != Some(f))
        .map(|(_, f)| WatchEvent::Failover(Box::new(f.clone())))
        .collect();
    r.failovers = records.to_vec();
    told
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept leadership that cannot agree records at most 100 violations word for word and counts
    /// the rest (a 256-node kept bully on one process recorded thousands, each copied into every
    /// snapshot: GetElection answered 900 KB and the process grew to 2.9 GB).
    #[test]
    fn violations_beyond_the_cap_are_counted_not_kept() {
        let mut c = Capped::default();
        for i in 0..10_000 {
            c.push(format!("two leaders of term {i}"));
        }
        let v = c.to_vec();
        assert_eq!(v.len(), MAX_RECORDED_VIOLATIONS + 1);
        assert_eq!(v[99], "two leaders of term 99");
        assert_eq!(v[100], "... and 9900 more of the same kind, not recorded");
        let mut few = Capped::default();
        few.push("one".into());
        assert_eq!(few.to_vec(), ["one"]);
    }

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

    /// An overlap names every term each node led while it lasted, not only the terms when it began
    /// (it named node-4 "term 1" while node-4 led term 3).
    #[test]
    fn overlap_text_names_every_term_led() {
        let who = BTreeMap::from([(0, BTreeSet::from([2])), (4, BTreeSet::from([1, 3]))]);
        assert_eq!(
            overlap_text(&who, |i| format!("node-{i}"), 120),
            "node-0 (term 2) and node-4 (terms 1 and 3) believed they led at once for 120 ms"
        );
    }
}
