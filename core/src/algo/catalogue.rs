//! What Ringleader can run: every algorithm's entry ([`AlgorithmSpec`]),
//! each declared beside its code (`<module>::SPEC`) and listed once, by its
//! module, in `core/src/algo/mod.rs`; and what is looked up by name across
//! them. Nothing outside this module compares an algorithm's name: what
//! differs between algorithms is a fact in their entries.

pub use crate::spec::*;

/// Every algorithm, in the order `ListAlgorithms` shows them: the list in
/// `core/src/algo/mod.rs` that declares their modules.
pub static CATALOGUE: &[AlgorithmSpec] = super::ENTRIES;

/// The entry named `name`: a built-in one, or an installed program's.
pub fn find(name: &str) -> Option<&'static AlgorithmSpec> {
    CATALOGUE.iter().find(|a| a.name == name).or_else(|| installed().into_iter().find(|a| a.name == name))
}

fn programs() -> &'static std::sync::RwLock<Vec<&'static AlgorithmSpec>> {
    static INSTALLED: std::sync::OnceLock<std::sync::RwLock<Vec<&'static AlgorithmSpec>>> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(Default::default)
}

/// An entry's name is taken: by a built-in algorithm, or by another program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the name `{0}` is taken by {1}")]
pub struct NameTaken(pub String, pub &'static str);

/// Make an entry made at run time (a program's, see the
/// `ringleader-program` crate) findable by [`find`] in this process. A name
/// a built-in algorithm has is refused; a program installed again under
/// its name replaces the entry (its old entry stays valid for runs that
/// hold it).
pub fn install(spec: &'static AlgorithmSpec) -> Result<(), NameTaken> {
    if CATALOGUE.iter().any(|a| a.name == spec.name) {
        return Err(NameTaken(spec.name.to_string(), "a built-in algorithm"));
    }
    let mut list = programs().write().unwrap_or_else(|e| e.into_inner());
    list.retain(|a| a.name != spec.name);
    list.push(spec);
    Ok(())
}

/// The entries installed at run time ([`install`]), in the order installed.
pub fn installed() -> Vec<&'static AlgorithmSpec> {
    programs().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Most timer events a failure-free one-shot run of `spec` on `n` nodes
/// fires ([`AlgorithmSpec::timer_event_bound`]).
pub fn timer_event_bound(spec: &AlgorithmSpec, n: u64) -> u64 {
    spec.timer_event_bound(n)
}

/// The names of the algorithms with a kept mode, e.g. "bully, repaired-ring, zookeeper and chubby" (for
/// error messages).
pub fn kept_names() -> String {
    let names: Vec<&str> = CATALOGUE.iter().filter(|s| s.kept.is_some()).map(|s| s.name).collect();
    match names.split_last() {
        None => "none".into(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Every catalogue name, comma-separated (for error messages).
pub fn names() -> String {
    CATALOGUE.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::Rule;
    use crate::algo::detector::DetectorConfig;
    use crate::sim::{self, SimConfig};
    use crate::topology::Topology;

    /// Every algorithm's node, one-shot and kept, is a value ([`NodeValue`](crate::algo::NodeValue)):
    /// a copy equals it and hashes alike, a start changes it (and not its copy), and nodes of two
    /// different algorithms are never equal.
    #[test]
    fn every_node_is_a_value() {
        use std::hash::{BuildHasher, RandomState};
        let hasher = RandomState::new();
        let mut nodes = Vec::new();
        for spec in CATALOGUE {
            for kept in [false, true] {
                let Some((node, _)) = crate::algo::harness::node(spec, 4, kept) else { continue };
                let copy = node.clone();
                assert!(node.eq(&copy), "{} (kept: {kept})", spec.name);
                assert_eq!(hasher.hash_one(&node), hasher.hash_one(&copy), "{}", spec.name);
                let mut started = node.clone();
                started.step(crate::algo::Input::Start, &mut crate::algo::Outbox::default()).unwrap();
                assert!(!started.eq(&node) && copy.eq(&node), "{} (kept: {kept}): a start changes the node", spec.name);
                nodes.push((spec.name, kept, node));
            }
        }
        assert!(nodes.len() > CATALOGUE.len(), "one-shot and kept nodes");
        for (i, (a, ka, x)) in nodes.iter().enumerate() {
            for (b, kb, y) in &nodes[i + 1..] {
                assert!(!x.eq(y), "{a} (kept: {ka}) equals {b} (kept: {kb})");
            }
        }
    }

    /// Every entry's facts hold values a driver can use: no empty text, a
    /// topology, a bound above 0 on 16 nodes, a measured heap, a kept mode's
    /// facts above 0 (that each fact is stated at all, the compiler sees to:
    /// [`AlgorithmSpec`] and [`KeptSpec`] have no defaults); no two entries
    /// share a name.
    #[test]
    fn every_entry_states_usable_facts() {
        let mut names: Vec<&str> = CATALOGUE.iter().map(|s| s.name).collect();
        for s in CATALOGUE {
            for (field, text) in
                [("name", s.name), ("title", s.title), ("source", s.source), ("description", s.description)]
            {
                assert!(!text.trim().is_empty(), "{}: empty {field}", s.name);
            }
            assert!(!s.bound_formula.is_empty() && !s.topologies.is_empty(), "{}", s.name);
            assert!((s.bound)(16, 16) > 0, "{}: a bound of 0 on 16 nodes", s.name);
            assert!(s.heap_bytes_per_position > 0, "{}: heap_bytes_per_position unmeasured (examples/memory)", s.name);
            if let Some(k) = s.kept {
                let d = DetectorConfig::LOOPBACK;
                let t = Topology::build(s.default_topology(), 8, 0).unwrap();
                assert!((k.convergence_bound_ms)(d, 8, 50) > 0, "{}: a convergence bound of 0", s.name);
                assert!((k.election_load_per_second)(&t, d) > 0, "{}: an election load of 0", s.name);
                assert!(k.max_local_nodes >= 2, "{}: max_local_nodes below 2", s.name);
                assert!(k.lease.is_none_or(|l| !l.lost.is_empty()), "{}: a lease lost without words", s.name);
            }
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len());
    }

    /// Log helpers match their definitions on small and power-of-two values.
    #[test]
    fn logs() {
        assert_eq!((ceil_log2(1), ceil_log2(2), ceil_log2(5), ceil_log2(8)), (0, 1, 3, 3));
        assert_eq!((floor_log2(1), floor_log2(2), floor_log2(5), floor_log2(8)), (0, 1, 2, 3));
        assert_eq!((floor_log3(2), floor_log3(3), floor_log3(8), floor_log3(9), floor_log3(27)), (0, 1, 1, 2, 3));
    }

    /// `find` looks an entry up by its name, and finds nothing by another.
    #[test]
    fn find_looks_up_by_name() {
        assert_eq!(find("as-far").map(|s| s.name), Some("as-far"));
        assert!(find("nope").is_none());
    }

    fn cost(spec: &AlgorithmSpec, ids: &[u64], rule: Rule) -> u64 {
        let n = ids.len() as u32;
        let ring = Topology::build(spec.default_topology(), n, 0).unwrap();
        let all: Vec<u32> = (0..n).collect();
        let r = sim::run(spec, &ring, ids, &all, rule, &SimConfig::default());
        assert!(r.verdict.violations.is_empty(), "{} {ids:?}: {:?}", spec.name, r.verdict.violations);
        r.counters.messages
    }

    /// All permutations of 1..=n with id 1 first (rotations cost the same).
    use crate::spec::ring_arrangements as permutations;

    /// A random arrangement of 1..=n (Fisher-Yates on a SplitMix stream).
    fn shuffled(n: u32, seed: u64) -> Vec<u64> {
        let mut ids = ascending(n);
        for i in (1..ids.len()).rev() {
            let j = (super::super::coin(seed, i as u32) % (i as u64 + 1)) as usize;
            ids.swap(i, j);
        }
        ids
    }

    /// MinMax's worst-case construction takes T(n) rounds for every n, so it
    /// costs exactly its bound n·T(n) + 2n, under both rules; descending
    /// ids cost 4n, the least possible.
    #[test]
    fn min_max_worst_case_attains_the_bound_for_every_n() {
        let spec = find("min-max").unwrap();
        for n in (2..=150u32).chain([233, 377, 1000, 4096]) {
            for rule in [Rule::Max, Rule::Min] {
                let worst = cost(spec, &(spec.extras.worst_case.unwrap().ids)(n, rule), rule);
                assert_eq!(worst, (spec.bound)(n as u64, n as u64), "n = {n}, {rule:?}");
                let best = cost(spec, &(spec.extras.best_case.unwrap().ids)(n, rule), rule);
                assert_eq!(best, 4 * n as u64, "n = {n}, {rule:?}");
            }
        }
    }

    /// The worst-case text of Stages with Feedback states the exhaustive maxima at the sizes where
    /// its general formula does not apply (it gave 18, 24 and 30 at n = 3, 4, 5; the maxima are
    /// 17, 23 and 29).
    #[test]
    fn stages_feedback_worst_case_text_states_the_small_maxima() {
        let spec = find("stages-feedback").unwrap();
        let text = spec.extras.worst_case.unwrap().description;
        let max = |n: u32| permutations(n).iter().map(|ids| cost(spec, ids, Rule::Max)).max().unwrap();
        assert!(text.contains(&format!("{} messages at n = 2", max(2))), "{text}");
        assert!(text.contains(&format!("({}, {} and {}: one stage)", max(3), max(4), max(5))), "{text}");
    }

    /// Stages with Feedback has no published worst case, so this checks the
    /// construction against search: it costs exactly `feedback_worst_case_cost`
    /// (n = 2..=200 and larger n, both rules); exhaustively for n ≤ 8 no
    /// arrangement costs more (it is the exact worst case there) and none
    /// costs less than the zigzag best case, which costs exactly 5n + ⌈n/2⌉;
    /// for 9 ≤ n ≤ 80, none of 300 random arrangements, nor the best of 200
    /// swaps hill-climbed from each of 3 of them, costs more. The bound
    /// 3n⌊log₃ n⌋ + 6n is not attained (it counts a full n of feedback per
    /// stage, which survivors make impossible).
    #[test]
    fn stages_feedback_worst_case_beats_every_search() {
        let spec = find("stages-feedback").unwrap();
        let (worst, best) = (spec.extras.worst_case.unwrap(), spec.extras.best_case.unwrap());
        for n in (2..=200u32).chain([243, 486, 1000, 1458, 4096]) {
            for rule in [Rule::Max, Rule::Min] {
                assert_eq!(cost(spec, &(worst.ids)(n, rule), rule), feedback_worst_case_cost(n as u64), "n = {n}");
                if n >= 3 {
                    assert_eq!(cost(spec, &(best.ids)(n, rule), rule), 5 * n as u64 + (n as u64).div_ceil(2));
                }
            }
        }
        for n in 2..=8u32 {
            let costs: Vec<u64> = permutations(n).iter().map(|ids| cost(spec, ids, Rule::Max)).collect();
            assert_eq!(*costs.iter().max().unwrap(), feedback_worst_case_cost(n as u64), "n = {n}");
            assert_eq!(*costs.iter().min().unwrap(), cost(spec, &(best.ids)(n, Rule::Max), Rule::Max), "n = {n}");
        }
        for n in 9..=80u32 {
            let constructed = feedback_worst_case_cost(n as u64);
            for seed in 0..300 {
                let ids = shuffled(n, seed);
                assert!(cost(spec, &ids, Rule::Max) <= constructed, "n = {n}: {ids:?}");
            }
            for seed in 0..3 {
                let mut ids = shuffled(n, 1000 + seed);
                let mut c = cost(spec, &ids, Rule::Max);
                for step in 0..200u32 {
                    let r = super::super::coin(seed, step);
                    let (i, j) = ((r % n as u64) as usize, ((r >> 32) % n as u64) as usize);
                    ids.swap(i, j);
                    let c2 = cost(spec, &ids, Rule::Max);
                    if c2 >= c { c = c2 } else { ids.swap(i, j) }
                }
                assert!(c <= constructed, "n = {n}: hill-climbing found {c} > {constructed}: {ids:?}");
            }
        }
    }
}
