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
//! A controller that restarts within the grace finds the elections still
//! there and aborts the ones its history says were interrupted; after the
//! grace the node has already dropped them.
//!
//! [`MAX_ELECTIONS`]: super::MAX_ELECTIONS
//! [`NodeConfig::orphan_grace`]: super::NodeConfig::orphan_grace

use std::sync::Weak;
use std::time::{Duration, Instant};

use tracing::warn;

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

/// Abort, at `now`, every election of `node` that nobody has listened to
/// for `grace`; returns their ids.
pub(crate) fn abort_orphans(node: &Node, grace: Duration, now: Instant) -> Vec<String> {
    let unheard_since = match node.reporter.listened() {
        Listened::Now => return Vec::new(),
        Listened::Until(at) => Some(at),
        Listened::Never => None,
    };
    let mut aborted = Vec::new();
    for e in node.table.all() {
        let since = unheard_since.map_or(e.prepared_at(), |at| at.max(e.prepared_at()));
        let unheard = now.saturating_duration_since(since);
        if unheard >= grace && node.abort(e.id()) {
            warn!(
                name = %node.cfg.name, election = %e.id(), kept = e.is_kept(), unheard_ms = unheard.as_millis() as u64,
                grace_ms = grace.as_millis() as u64,
                "aborted election {}: no controller has listened to this node for longer than its orphan grace \
                 (node.orphan_grace_ms); its controller is gone",
                e.id()
            );
            aborted.push(e.id().to_string());
        }
    }
    aborted
}
