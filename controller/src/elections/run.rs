//! What every run of an election shares: the [`Plan`] it is given, the
//! [`Context`] it borrows from the store, and the [`Outcome`] it returns for
//! the store to record.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{Decision, Rule};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::Topology;
use tokio::sync::{Semaphore, watch};

use super::entry::Entry;
use crate::cluster::{Cluster, Node};
use crate::config::ControllerConfig;
use crate::record::{LeaderInfo, Metrics, Mode, SimOptions};

/// The most nodes a space-time diagram is drawn for.
pub const MAX_DIAGRAM_NODES: u32 = 256;

/// How to draw an election's space-time diagram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drawing {
    /// What the horizontal axis measures.
    pub axis: ringleader_core::diagram::Axis,
    /// Label each arrow with what its message carries.
    pub labels: bool,
    /// Draw a SIMULATED kept leadership's upkeep messages (heartbeats, lease renewals) too.
    pub heartbeats: bool,
}

/// A fully resolved, checked election.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The algorithm.
    pub spec: &'static AlgorithmSpec,
    /// LIVE or SIMULATED.
    pub mode: Mode,
    /// The overlay.
    pub topology: Topology,
    /// Who wins.
    pub rule: Rule,
    /// Ids in ring order (position `i` has `ids[i]`).
    pub ids: Vec<u64>,
    /// Initiator positions, sorted.
    pub initiators: Vec<u32>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Simulator options (SIMULATED only).
    pub sim: SimOptions,
    /// Draw the space-time diagram, so (LIVE: from the nodes' message logs).
    pub diagram: Option<Drawing>,
    /// Keep a leader until stopped (failure-tolerant algorithms, LIVE).
    pub keep_leader: bool,
    /// The failure detector of a kept leadership.
    pub detector: DetectorConfig,
    /// LIVE: the cluster index of the node that runs each position
    /// (`placement[i]` runs position `i`); empty: position `i` on node `i`.
    pub placement: Vec<usize>,
    /// A SIMULATED kept leadership's faults, in time order.
    pub faults: Vec<PlannedFault>,
    /// The algorithm's options, sorted by name, checked against its entry.
    pub options: Vec<(String, String)>,
    /// LIVE, an algorithm that keeps its record in a store (`lease`): the
    /// etcd endpoint its nodes are given; empty otherwise.
    pub etcd_endpoint: String,
}

/// A fault at a virtual time of a SIMULATED kept leadership, nodes by position.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedFault {
    /// Virtual milliseconds from the start.
    pub at_ms: u64,
    /// What happens (a fault aimed at whoever leads is resolved by the simulator at its time).
    pub fault: ringleader_core::faults::Fault,
}

impl Plan {
    /// Number of positions.
    pub fn n(&self) -> u32 {
        self.ids.len() as u32
    }

    /// Number of initiators.
    pub fn k(&self) -> u32 {
        self.initiators.len() as u32
    }

    /// The lease its leader holds, if any: the algorithm's own, or one its options give.
    pub fn lease(&self) -> Option<ringleader_core::spec::Lease> {
        self.spec.kept.and_then(|k| k.lease).or_else(|| ringleader_core::spec::option_lease(self.spec, &self.options))
    }
}

/// The error of an election ended by `StopElection` before it finished.
pub const STOPPED: &str = "stopped by StopElection before it finished";
/// The error of an election ended by the controller's shutdown before it finished.
pub const SHUT_DOWN: &str = "stopped by the controller's shutdown before it finished";

/// What the injected faults do to the nodes now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActiveFaults {
    /// Node indices an injected fault keeps crashed.
    pub crashed: Vec<usize>,
    /// Node indices an injected partition cuts off from every majority of
    /// the cluster (in a group of at most half of it).
    pub cut_off: Vec<usize>,
    /// Node indices handing their leaderships over before a planned stop.
    pub leaving: Vec<usize>,
    /// The groups of node indices of the partition in force (empty: none); a
    /// node in no group is alone.
    pub groups: Vec<Vec<usize>>,
    /// Node indices an injected pause holds, each with when the controller
    /// paused it (unix µs).
    pub paused: Vec<(usize, u64)>,
}

impl ActiveFaults {
    /// The same faults by position of an election whose position `i` runs
    /// on the node of cluster index `nodes[i]` (nodes it does not run on
    /// are left out). Under a partition, `cut_off` is judged against the
    /// election's own positions: those in a group holding at most half of
    /// them (a partition of the cluster may leave a majority of a smaller
    /// election on its smaller side).
    pub fn by_position(&self, nodes: &[usize]) -> ActiveFaults {
        let at = |list: &[usize]| -> Vec<usize> {
            let mut out: Vec<usize> =
                nodes.iter().enumerate().filter(|(_, n)| list.contains(n)).map(|(p, _)| p).collect();
            out.sort_unstable();
            out
        };
        let cut_off = if self.groups.is_empty() {
            at(&self.cut_off)
        } else {
            // Each position's side: its node's group, or its node alone.
            let side = |node: usize| self.groups.iter().position(|g| g.contains(&node)).ok_or(node);
            let size = |p: usize| nodes.iter().filter(|&&m| side(m) == side(nodes[p])).count();
            (0..nodes.len()).filter(|&p| 2 * size(p) <= nodes.len()).collect()
        };
        ActiveFaults {
            crashed: at(&self.crashed),
            cut_off,
            leaving: at(&self.leaving),
            groups: self.groups.iter().map(|g| at(g)).filter(|g| !g.is_empty()).collect(),
            paused: nodes
                .iter()
                .enumerate()
                .filter_map(|(p, n)| self.paused.iter().find(|(m, _)| m == n).map(|&(_, since)| (p, since)))
                .collect(),
        }
    }
}

/// Tells what the injected faults do to the nodes, now and since a time:
/// the node-wide faults (`election` `None`), or what one election meets
/// (the node-wide faults and those scoped to it).
pub trait FaultProbe: Send + Sync {
    /// The faults in force now.
    fn active(&self, election: Option<&str>) -> ActiveFaults;
    /// What was in force at unix time `since_us` (microseconds) and every
    /// change after, each with its unix time (as far back as remembered).
    fn changes_since(&self, since_us: u64, election: Option<&str>) -> Vec<(u64, ActiveFaults)>;
    /// Election `election` ended (its record is final): the faults scoped
    /// to it end with it.
    fn ended(&self, election: &str);
    /// Election `election` was prepared on the nodes at `positions` of the
    /// cluster (at its start, or again on a restarted node): the faults
    /// scoped to it are sent to them again, since a node skips those of an
    /// election it does not hold yet.
    fn prepared(&self, election: &str, positions: &[usize]);
}

impl std::fmt::Debug for dyn FaultProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultProbe")
    }
}

/// An election started on its nodes: what following it needs (its one-shot decisions, or its kept
/// leadership until it is stopped).
#[derive(Clone, Copy)]
pub(super) struct OnNodes<'a> {
    /// The controller's side: configuration, cluster, faults.
    pub(super) ctx: &'a Context<'a>,
    /// Its record.
    pub(super) entry: &'a Entry,
    /// Its plan.
    pub(super) plan: &'a Plan,
    /// The node of each position.
    pub(super) nodes: &'a [Arc<Node>],
    /// Its id.
    pub(super) election_id: &'a str,
    /// When it started.
    pub(super) started: Instant,
}

/// What a run borrows from the store: the settings, the cluster, and the
/// store's state a run must read while it goes (never the registry).
pub(super) struct Context<'a> {
    pub(super) config: &'a ControllerConfig,
    pub(super) cluster: &'a Cluster,
    /// One simulation per core at a time.
    pub(super) simulations: &'a Semaphore,
    /// What the injected faults do to the nodes now (set by the API).
    pub(super) faults: &'a OnceLock<Box<dyn FaultProbe>>,
    /// The controller is shutting down.
    pub(super) shutting_down: &'a AtomicBool,
}

impl Context<'_> {
    /// Why a stopped election stopped: a user's StopElection, or the shutdown.
    pub(super) fn stopped_text(&self) -> &'static str {
        if self.shutting_down.load(Ordering::SeqCst) { SHUT_DOWN } else { STOPPED }
    }

    /// Whether the controller is shutting down.
    pub(super) fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// What the injected faults do now to the nodes of election `election`:
    /// the node-wide ones and those scoped to it (nothing before the API set
    /// the probe).
    pub(super) fn faults(&self, election: &str) -> ActiveFaults {
        self.faults.get().map(|p| p.active(Some(election))).unwrap_or_default()
    }

    /// Election `election` was prepared on the cluster's nodes `positions` ([`FaultProbe::prepared`]).
    pub(super) fn prepared(&self, election: &str, positions: &[usize]) {
        if let Some(p) = self.faults.get() {
            p.prepared(election, positions);
        }
    }

    /// The faults election `election` met at unix time `since_us` and every change after.
    pub(super) fn fault_changes(&self, since_us: u64, election: &str) -> Vec<(u64, ActiveFaults)> {
        self.faults.get().map(|p| p.changes_since(since_us, Some(election))).unwrap_or_default()
    }
}

/// Unix time in milliseconds.
pub(super) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Unix time in microseconds.
pub(super) fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// The result of running an election, applied to its record by `finish`.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    pub(super) error: Option<String>,
    pub(super) agreed: bool,
    pub(super) violations: Vec<String>,
    pub(super) metrics: Option<Metrics>,
    pub(super) leader: Option<LeaderInfo>,
    pub(super) per_position: Vec<(Option<Decision>, u64)>,
    pub(super) diagram_svg: Option<String>,
}

impl Outcome {
    /// An election that could not complete, for `error`.
    pub(super) fn failed(error: String) -> Outcome {
        Outcome { error: Some(error), ..Outcome::default() }
    }
}

/// Resolves once `StopElection` asked the election to end (holds no borrow of the flag).
pub(super) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A partition of an 8-node cluster into nodes 0-2 and 3-7 cuts off, of a 5-position election
    /// on nodes 0-4, positions 3 and 4 (2 of its 5), not 0-2 (3 of 5, its majority, though 3 of
    /// the cluster's 8): the cut-off side is judged against the election, not the cluster. Without a
    /// partition's groups the cluster's judgement is kept.
    #[test]
    fn a_partition_is_judged_against_the_election_s_positions() {
        let cluster = ActiveFaults {
            cut_off: vec![0, 1, 2],
            groups: vec![vec![0, 1, 2], vec![3, 4, 5, 6, 7]],
            ..ActiveFaults::default()
        };
        let election = cluster.by_position(&[0, 1, 2, 3, 4]);
        assert_eq!(election.cut_off, [3, 4]);
        assert_eq!(election.groups, [vec![0, 1, 2], vec![3, 4]]);
        // A node in no group is alone: positions on nodes 5 and 6 are each cut off.
        let alone = ActiveFaults { groups: vec![vec![0, 1, 2]], ..ActiveFaults::default() };
        assert_eq!(alone.by_position(&[0, 1, 2, 5, 6]).cut_off, [3, 4]);
        let plain = ActiveFaults { cut_off: vec![4], ..ActiveFaults::default() };
        assert_eq!(plain.by_position(&[4, 5]).cut_off, [0]);
    }
}
