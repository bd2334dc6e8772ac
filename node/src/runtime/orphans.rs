//! Elections nobody drives any more. A controller follows each node through
//! an `Events` stream that asks for reports; when it crashes (kill -9, a lost
//! host) nobody is left to `Abort` what it prepared, and a kept leadership
//! would heartbeat on for good, holding its place toward [`MAX_ELECTIONS`].
//! So a node with [`NodeConfig::orphan_grace`] aborts every election it holds
//! once no such stream has been open for the grace, counted from when the
//! last one closed, or from the election's `Prepare` if that came later (a
//! controller may prepare before its stream reconnects). One-shot elections
//! go the same way: their figures are read by the controller that is gone,
//! and they too hold their place in the table.
//!
//! A controller says which process it is (its incarnation, a random number
//! drawn at its start) in each `Prepare` and `Events` request. An election
//! is kept while a stream of the incarnation that prepared it is open; once
//! none is, and a new incarnation comes (a controller restarted after
//! kill -9, with or without a history), the node aborts it at once, with a
//! WARN naming the count: the new controller cannot drive it. Without a new
//! incarnation, the grace applies (zero: never). Two controllers that share
//! nodes keep each other's elections: a new incarnation supersedes only those
//! whose streams had closed before it came.
//!
//! A controller that restarts also aborts the elections its history says
//! were interrupted (the node may have dropped them already).
//!
//! [`MAX_ELECTIONS`]: super::MAX_ELECTIONS
//! [`NodeConfig::orphan_grace`]: super::NodeConfig::orphan_grace

use std::sync::Weak;
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::election::Election;
use super::node::Node;
use super::reports::Listened;

/// How often a node with `grace` looks for orphans: a quarter of the grace,
/// so an election goes at most a quarter late, between 10 ms and 5 s.
fn period(grace: Duration) -> Duration {
    (grace / 4).clamp(Duration::from_millis(10), Duration::from_secs(5))
}

/// Abort the orphans of `node` every [`period`] until it stops or is gone.
pub(crate) async fn watch(node: Weak<Node>, grace: Duration) {
    let mut tick = tokio::time::interval(period(grace));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(node) = node.upgrade() else { return };
        if node.is_stopping() {
            return;
        }
        abort_orphans(&node, grace, Instant::now());
    }
}

/// A controller `incarnation` this node had not seen came (a stream or a
/// `Prepare`): end at once what the incarnations before it left behind.
pub(crate) fn supersede(node: &Node, incarnation: u64) {
    let aborted = abort_orphans(node, node.cfg.orphan_grace, Instant::now());
    if !aborted.is_empty() {
        debug!(name = %node.cfg.name, incarnation, aborted = aborted.len(), "a new controller came");
    }
}

/// Why an election is an orphan.
enum Orphaned {
    /// Its controller's streams closed, and another controller came since.
    Superseded { by: u64 },
    /// Nobody has listened for the grace, this long.
    Unheard(Duration),
}

/// Is `e` an orphan at `now`: the controller incarnation that prepared it
/// has no stream open, and either a newer one came since it went, or none
/// came and the grace (zero: never) is over? An election whose controller did
/// not say its incarnation (0) is kept while any controller listens.
fn orphaned(node: &Node, e: &Election, grace: Duration, now: Instant) -> Option<Orphaned> {
    let incarnation = node.table.owner(e.id());
    let since = match node.reporter.listened_by(incarnation) {
        Listened::Now => return None,
        Listened::Until(at) => at.max(e.prepared_at()),
        Listened::Never => e.prepared_at(),
    };
    if incarnation != 0
        && let Some(by) = node.reporter.newer(incarnation, since)
    {
        return Some(Orphaned::Superseded { by });
    }
    let unheard = now.saturating_duration_since(since);
    (!grace.is_zero() && unheard >= grace).then_some(Orphaned::Unheard(unheard))
}

/// Most election ids one WARN names.
const NAMED: usize = 16;

/// Abort, at `now`, every election of `node` that is an orphan
/// ([`orphaned`]); returns their ids.
pub(crate) fn abort_orphans(node: &Node, grace: Duration, now: Instant) -> Vec<String> {
    let mut aborted = Vec::new();
    let mut superseded: Vec<(String, u64)> = Vec::new();
    let mut newest = 0;
    for e in node.table.all() {
        let Some(why) = orphaned(node, &e, grace, now) else { continue };
        let owner = node.table.owner(e.id());
        if !node.abort(e.id()) {
            continue;
        }
        match why {
            Orphaned::Superseded { by } => {
                newest = by;
                superseded.push((e.id().to_string(), owner));
            }
            Orphaned::Unheard(unheard) => warn!(
                name = %node.cfg.name, election = %e.id(), kept = e.is_kept(), unheard_ms = unheard.as_millis() as u64,
                grace_ms = grace.as_millis() as u64,
                "aborted election {}: no controller has listened to this node for longer than its orphan grace \
                 (node.orphan_grace_ms); its controller is gone",
                e.id()
            ),
        }
        aborted.push(e.id().to_string());
    }
    if !superseded.is_empty() {
        let count = superseded.len();
        // In hex, as the controller logs its own.
        let mut old: Vec<String> = superseded.iter().map(|(_, i)| format!("{i:016x}")).collect();
        old.sort_unstable();
        old.dedup();
        let named: Vec<&str> = superseded.iter().take(NAMED).map(|(id, _)| id.as_str()).collect();
        let more = if count > NAMED { format!(" and {} more", count - NAMED) } else { String::new() };
        warn!(
            name = %node.cfg.name, count, old_incarnations = ?old,
            new_incarnation = format!("{newest:016x}"),
            "aborted the {count} election(s) a controller that is gone left here (its event streams closed, and \
             a new controller process came since, which cannot drive them): {}{more}",
            named.join(", ")
        );
    }
    aborted
}
