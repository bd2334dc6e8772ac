//! A check asked for, validated once for every caller: the `ringleader-check` command line and the
//! controller's `CheckAlgorithm` build a [`CheckAsk`] from their flags or fields and get back the
//! [`Election`] to check, or a [`Refusal`] naming the field at fault, with the same limits and the same
//! words. (How long a check may run and how many states it may visit are each caller's own: a shared
//! server bounds them, a local run need not.)

use ringleader_core::algo::catalogue::{self};

use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::Topology;

use crate::{Election, Faults};

/// The most nodes a check may have: the state space grows factorially.
pub const MAX_N: u32 = 6;
/// The most nodes random walks may have (one-shot, `walk`): a walk keeps one
/// state at a time, so only its length grows with n.
pub const MAX_WALK_N: u32 = 64;
/// Faults of one kind a check may contain: each multiplies the states.
pub const MAX_FAULTS: u32 = 2;
/// The longest message delay a kept check takes, in ms.
pub const MAX_DELAY_MS: u64 = 10_000;
/// The longest a partition may be bounded to, in ms.
pub const MAX_PARTITION_MS: u64 = 600_000;

/// A check of one algorithm at one size, as asked. Empty lists and zero counts take their defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckAsk {
    /// The algorithm's catalogue name.
    pub algorithm: String,
    /// Nodes (0: as many as `ids`, or 3).
    pub n: u32,
    /// The ids in position order (empty: 1..=n). They may repeat in a
    /// one-shot check (an anonymous ring), not in a kept one.
    pub ids: Vec<u64>,
    /// An anonymous ring: every node gets id 1 (not with `ids`, nor `kept`).
    pub anonymous: bool,
    /// The initiators' positions, one-shot only (empty: every node).
    pub initiators: Vec<u32>,
    /// Check the kept leadership behind the heartbeat detector, with faults, instead of the one-shot election.
    pub kept: bool,
    /// Crashes a schedule may contain.
    pub crashes: u32,
    /// A crashed node may recover.
    pub recover: bool,
    /// Lost messages a schedule may contain.
    pub losses: u32,
    /// Duplicated messages a schedule may contain.
    pub duplications: u32,
    /// Partitions a schedule may contain.
    pub partitions: u32,
    /// The longest a message takes, in ms (`None`: the detector's period).
    pub delay_ms: Option<u64>,
    /// Timers fire on time.
    pub punctual_timers: bool,
    /// A partition heals within this many ms (`None`: at any point, or never).
    pub partition_ms: Option<u64>,
    /// The ids on one side of the one split a partition makes (empty: any split).
    pub partition_side: Vec<u64>,
    /// Deliver in sending order on every link.
    pub fifo: bool,
    /// Deliver in any order, even where the algorithm assumes FIFO links.
    pub any_order: bool,
    /// The detector's settings (kept checks).
    pub detector: DetectorConfig,
    /// Random walks rather than every schedule: a one-shot election may
    /// then have up to `MAX_WALK_N` (64) nodes (a torus has at least 9).
    pub walk: bool,
}

/// Why a check was refused: the field at fault and why, and whether the request is well-formed but cannot
/// be checked as it stands (`precondition`: gRPC FAILED_PRECONDITION rather than INVALID_ARGUMENT).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct Refusal {
    /// The request's field, as the API names it (`delay_ms`); the command line's flag is
    /// [`Refusal::flag`].
    pub field: &'static str,
    /// Why, in words.
    pub why: String,
    /// Well-formed, but not checkable as it stands.
    pub precondition: bool,
}

impl Refusal {
    fn invalid(field: &'static str, why: impl Into<String>) -> Refusal {
        Refusal { field, why: why.into(), precondition: false }
    }

    fn precondition(field: &'static str, why: impl Into<String>) -> Refusal {
        Refusal { field, why: why.into(), precondition: true }
    }

    /// The field as the command line's flag: `--delay-ms`.
    pub fn flag(&self) -> String {
        format!("--{}", self.field.replace('_', "-"))
    }
}

/// A validated check: the election, and whether its links are FIFO.
#[derive(Clone, Debug)]
pub struct Checked {
    /// What to check.
    pub election: Election,
    /// Links deliver in sending order (the algorithm assumes it, or `fifo` asked for it, and not `any_order`).
    pub fifo: bool,
}

impl CheckAsk {
    /// The algorithm's entry, or a refusal naming `algorithm`.
    pub fn spec(&self) -> Result<&'static AlgorithmSpec, Refusal> {
        let spec = catalogue::find(&self.algorithm).ok_or_else(|| {
            // The built-ins, then the programs installed in this process.
            let mut known = catalogue::names();
            for program in catalogue::installed() {
                known.push_str(", ");
                known.push_str(program.name);
            }
            Refusal::invalid("algorithm", format!("unknown {:?}; known: {known}", self.algorithm))
        })?;
        if self.kept && spec.kept.is_none() {
            return Err(Refusal::precondition(
                "kept",
                format!("{} has no kept mode ({} do)", spec.name, catalogue::kept_names()),
            ));
        }
        Ok(spec)
    }

    /// Validate the whole request, naming the first field at fault.
    pub fn check(&self) -> Result<Checked, Refusal> {
        let spec = self.spec()?;
        // The size, and the field that gave it: a refused size names the one the caller set.
        let (n, sized_by) = match (self.n, self.ids.len()) {
            (0, 0) => (3, "n"),
            (0, given) => (u32::try_from(given).unwrap_or(u32::MAX), "ids"),
            (n, _) => (n, "n"),
        };
        if self.walk && !self.kept {
            if !(2..=MAX_WALK_N).contains(&n) {
                return Err(Refusal::invalid(sized_by, format!("{n} nodes: random walks take 2 to {MAX_WALK_N}")));
            }
        } else if !(2..=MAX_N).contains(&n) {
            return Err(Refusal::invalid(
                sized_by,
                format!("{n} nodes: from 2 to {MAX_N} (the state space grows factorially)"),
            ));
        }
        let topology =
            Topology::build(spec.default_topology(), n, 7).map_err(|e| Refusal::invalid(sized_by, e.to_string()))?;
        let ids = self.ids(n)?;
        if self.fifo && self.any_order {
            return Err(Refusal::invalid("fifo", "FIFO links and any_order: one or the other"));
        }
        let fifo = (spec.assumptions.fifo || self.fifo) && !self.any_order;
        let election =
            if self.kept { self.kept_election(spec, topology, ids)? } else { self.one_shot(spec, topology, ids, n)? };
        Ok(Checked { election, fifo })
    }

    /// The ids: given, every node's the same (`anonymous`), or 1..=n. A kept
    /// leadership's must be distinct: its beliefs name the leader by id.
    fn ids(&self, n: u32) -> Result<Vec<u64>, Refusal> {
        if self.anonymous && !self.ids.is_empty() {
            return Err(Refusal::invalid("anonymous", "anonymous gives every node id 1: not with ids"));
        }
        if self.anonymous && self.kept {
            return Err(Refusal::precondition("anonymous", "a kept leadership names its leader by id: not anonymous"));
        }
        let ids: Vec<u64> = match (self.anonymous, self.ids.is_empty()) {
            (true, _) => vec![1; n as usize],
            (false, true) => (1..=u64::from(n)).collect(),
            (false, false) => self.ids.clone(),
        };
        if ids.len() != n as usize {
            return Err(Refusal::invalid("ids", format!("{} ids for {n} nodes", ids.len())));
        }
        if ids.contains(&0) {
            return Err(Refusal::invalid("ids", "must be positive"));
        }
        if self.kept && ringleader_core::topology::check_distinct(&ids).is_err() {
            return Err(Refusal::invalid("ids", "must be distinct in a kept check: its beliefs name the leader by id"));
        }
        Ok(ids)
    }

    fn faults(&self) -> Result<Faults, Refusal> {
        let bounded = |field: &'static str, count: u32| {
            if count > MAX_FAULTS {
                return Err(Refusal::invalid(
                    field,
                    format!("{count} is above {MAX_FAULTS} (each fault multiplies the states)"),
                ));
            }
            Ok(count as u8)
        };
        Ok(Faults {
            crashes: bounded("crashes", self.crashes)?,
            recover: self.recover,
            losses: bounded("losses", self.losses)?,
            duplications: bounded("duplications", self.duplications)?,
            partitions: bounded("partitions", self.partitions)?,
        })
    }

    fn kept_election(
        &self,
        spec: &'static AlgorithmSpec,
        topology: Topology,
        ids: Vec<u64>,
    ) -> Result<Election, Refusal> {
        let faults = self.faults()?;
        self.detector.validate().map_err(|e| Refusal::invalid("detector", e.to_string()))?;
        let delay_ms = match self.delay_ms {
            None => self.detector.period_ms,
            Some(0) => return Err(Refusal::invalid("delay_ms", "must be positive")),
            Some(ms) if ms > MAX_DELAY_MS => {
                return Err(Refusal::invalid("delay_ms", format!("{ms} ms is above {MAX_DELAY_MS} ms")));
            }
            Some(ms) => ms,
        };
        let partition_ms = match self.partition_ms {
            Some(0) => return Err(Refusal::invalid("partition_ms", "must be positive")),
            Some(ms) if ms > MAX_PARTITION_MS => {
                return Err(Refusal::invalid("partition_ms", format!("{ms} ms is above {MAX_PARTITION_MS} ms")));
            }
            other => other,
        };
        let partition_side = match self.partition_side.as_slice() {
            [] => None,
            _ if faults.partitions == 0 => {
                return Err(Refusal::precondition("partition_side", "a split needs partitions of 1 or more"));
            }
            side => Some(side_of(side, &ids)?),
        };
        Ok(Election {
            delay_ms,
            punctual_timers: self.punctual_timers,
            partition_ms,
            partition_side,
            ..Election::kept(spec, topology, ids, self.detector, faults)
        })
    }

    fn one_shot(
        &self,
        spec: &'static AlgorithmSpec,
        topology: Topology,
        ids: Vec<u64>,
        n: u32,
    ) -> Result<Election, Refusal> {
        let named = [
            ("delay_ms", self.delay_ms.is_some()),
            ("punctual_timers", self.punctual_timers),
            ("partition_ms", self.partition_ms.is_some()),
            ("partition_side", !self.partition_side.is_empty()),
            ("crashes", self.crashes > 0),
            ("recover", self.recover),
            ("losses", self.losses > 0),
            ("duplications", self.duplications > 0),
            ("partitions", self.partitions > 0),
        ];
        if let Some(&(field, _)) = named.iter().find(|(_, set)| *set) {
            return Err(Refusal::precondition(field, "faults, delays and timers are checked with kept only"));
        }
        let initiators = if self.initiators.is_empty() { (0..n).collect() } else { self.initiators.clone() };
        if let Some(&p) = initiators.iter().find(|&&p| p >= n) {
            return Err(Refusal::invalid("initiators", format!("position {p} of {n} nodes")));
        }
        Ok(Election::new(spec, topology, ids, initiators, spec.rule))
    }
}

/// The positions on one side of a split, from the ids on that side.
fn side_of(side: &[u64], ids: &[u64]) -> Result<u32, Refusal> {
    let mut mask = 0u32;
    for id in side {
        let p = ids
            .iter()
            .position(|i| i == id)
            .ok_or_else(|| Refusal::invalid("partition_side", format!("id {id} is not one of the ids {ids:?}")))?;
        if mask >> p & 1 == 1 {
            return Err(Refusal::invalid("partition_side", format!("id {id} twice")));
        }
        mask |= 1 << p;
    }
    if mask.count_ones() as usize == ids.len() {
        return Err(Refusal::invalid("partition_side", "every node: a split needs a node on each side"));
    }
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(algorithm: &str) -> CheckAsk {
        CheckAsk { algorithm: algorithm.into(), ..CheckAsk::default() }
    }

    /// A size that came from `ids` (no `n` given) and is refused, out of range or not one the
    /// algorithm's topology takes (a hypercube of 3), names `ids`, the field the caller gave; with `n`
    /// given, `n`.
    #[test]
    fn a_size_given_by_ids_is_refused_naming_ids() {
        let refused = |a: CheckAsk| a.check().unwrap_err();
        let seven: Vec<u64> = (1..=7).collect();
        let e = refused(CheckAsk { ids: seven.clone(), ..ask("as-far") });
        assert_eq!((e.field, e.flag()), ("ids", "--ids".to_string()), "{e}");
        assert!(e.why.contains("7 nodes: from 2 to 6"), "{e}");
        assert_eq!(refused(CheckAsk { ids: vec![5], ..ask("as-far") }).field, "ids");
        assert_eq!(refused(CheckAsk { ids: vec![1, 2, 3], ..ask("hyper-elect") }).field, "ids");
        assert_eq!(refused(CheckAsk { n: 3, ..ask("hyper-elect") }).field, "n");
        assert_eq!(refused(CheckAsk { n: 7, ids: seven, ..ask("as-far") }).field, "n");
    }

    /// Random walks take one-shot elections of up to MAX_WALK_N nodes, so a torus (9 nodes at least) can be
    /// sampled; every schedule of one still stops at MAX_N, and a kept check keeps MAX_N even as walks.
    #[test]
    fn walks_take_larger_elections() {
        let nine: Vec<u64> = (1..=9).collect();
        let walk = CheckAsk { ids: nine.clone(), walk: true, ..ask("torus-elect") }.check().unwrap();
        assert_eq!(walk.election.ids.len(), 9);
        let e = CheckAsk { ids: nine, ..ask("torus-elect") }.check().unwrap_err();
        assert!(e.why.contains("9 nodes: from 2 to 6"), "{e}");
        let e = CheckAsk { n: MAX_WALK_N + 1, walk: true, ..ask("as-far") }.check().unwrap_err();
        assert_eq!(e.to_string(), "n: 65 nodes: random walks take 2 to 64");
        let e = CheckAsk { n: 7, walk: true, kept: true, ..ask("bully") }.check().unwrap_err();
        assert!(e.why.contains("7 nodes: from 2 to 6"), "{e}");
    }

    /// Each bad field is refused by name, with the limits both callers share; a good request gives its election.
    #[test]
    fn bad_fields_are_refused_by_name() {
        let refused = |a: CheckAsk| a.check().unwrap_err();
        assert_eq!(refused(ask("paxos")).field, "algorithm");
        let e = refused(CheckAsk { n: MAX_N + 1, ..ask("as-far") });
        assert_eq!(e.to_string(), "n: 7 nodes: from 2 to 6 (the state space grows factorially)");
        assert_eq!((e.flag(), e.precondition), ("--n".to_string(), false));
        assert_eq!(refused(CheckAsk { ids: vec![1, 0, 2], ..ask("as-far") }).field, "ids");
        let anonymous = CheckAsk { ids: vec![4, 4, 4], ..ask("as-far") }.check().unwrap();
        assert_eq!(anonymous.election.ids, [4, 4, 4], "a one-shot check takes repeated ids");
        assert_eq!(CheckAsk { anonymous: true, ..ask("as-far") }.check().unwrap().election.ids, [1, 1, 1]);
        assert_eq!(refused(CheckAsk { anonymous: true, ids: vec![1, 1, 1], ..ask("as-far") }).field, "anonymous");
        assert_eq!(refused(CheckAsk { ids: vec![2, 2, 3], kept: true, ..ask("bully") }).field, "ids");
        assert_eq!(refused(CheckAsk { initiators: vec![3], ..ask("as-far") }).field, "initiators");
        assert_eq!(refused(CheckAsk { fifo: true, any_order: true, ..ask("as-far") }).field, "fifo");
        let one_shot_fault = refused(CheckAsk { losses: 1, ..ask("as-far") });
        assert_eq!((one_shot_fault.field, one_shot_fault.precondition), ("losses", true));
        let no_kept = refused(CheckAsk { kept: true, ..ask("as-far") });
        assert_eq!((no_kept.field, no_kept.precondition), ("kept", true));
        assert!(no_kept.why.contains("bully, repaired-ring, zookeeper, chubby, raft and lease do"), "{}", no_kept.why);
        let kept = || CheckAsk { kept: true, ..ask("bully") };
        assert_eq!(refused(CheckAsk { crashes: 3, ..kept() }).flag(), "--crashes");
        assert_eq!(refused(CheckAsk { delay_ms: Some(0), ..kept() }).field, "delay_ms");
        assert_eq!(refused(CheckAsk { partition_ms: Some(MAX_PARTITION_MS + 1), ..kept() }).field, "partition_ms");
        let side = refused(CheckAsk { partition_side: vec![1], ..kept() });
        assert_eq!((side.field, side.precondition), ("partition_side", true));
        let every = refused(CheckAsk { partitions: 1, partition_side: vec![1, 2, 3], ..kept() });
        assert_eq!(every.to_string(), "partition_side: every node: a split needs a node on each side");
        let bad_detector = CheckAsk { detector: DetectorConfig { period_ms: 100, timeout_ms: 50 }, ..kept() };
        assert_eq!(refused(bad_detector).field, "detector");
        let good = CheckAsk { partitions: 1, partition_side: vec![2], ..kept() }.check().unwrap();
        assert_eq!((good.election.partition_side, good.fifo), (Some(0b010), false));
        assert!(ask("stages").check().unwrap().fifo, "stages assumes FIFO links");
    }
}
