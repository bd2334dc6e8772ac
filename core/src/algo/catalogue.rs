//! What Ringleader can run: for each algorithm its name, source, the
//! topologies it accepts, its assumptions, who wins, and its message bound as
//! a function of n (positions) and k (initiators).

use super::{
    Algorithm, NodeContext, Rule, all_the_way, alternate, as_far, bi_min_max, bully, chubby, controlled_distance,
    echo_extinction, elect_root, mesh_corners, min_max, min_max_plus, participant_ring, prob_as_far, repaired_ring,
    stages, stages_buffered, stages_feedback, sync_hs, tree_saturation, uni_alternate, uni_stages, villadangos,
    zookeeper,
};
use crate::sim::{self, SimConfig, SimReport};
use crate::topology::{Topology, TopologyKind};

use super::detector::DetectorConfig;

/// Creates one node's state machine.
pub type Build = fn(&NodeContext) -> Box<dyn Algorithm>;

/// Creates one node's state machine in "keep a leader" mode, with the failure
/// detector's settings; the algorithm derives its own timeouts from them.
pub type BuildKept = fn(&NodeContext, DetectorConfig) -> Box<dyn Algorithm>;

/// Runs the simulator with an algorithm's concrete state machine
/// (see [`sim::run_with`]); arguments as [`sim::run`].
pub type Simulate = fn(&AlgorithmSpec, &Topology, &[u64], &[u32], Rule, &SimConfig) -> SimReport;

/// Network assumptions of an algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assumptions {
    /// Needs links both ways.
    pub bidirectional: bool,
    /// Needs a common sense of direction.
    pub oriented: bool,
    /// Needs FIFO links.
    pub fifo: bool,
}

/// One catalogue entry.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmSpec {
    /// Catalogue name, e.g. `as-far`.
    pub name: &'static str,
    /// Human title.
    pub title: &'static str,
    /// Paper or seed followed.
    pub source: &'static str,
    /// One-paragraph description.
    pub description: &'static str,
    /// Topologies it runs on; the first is the default.
    pub topologies: &'static [TopologyKind],
    /// Network assumptions.
    pub assumptions: Assumptions,
    /// Its own winner rule (a request may mirror it).
    pub rule: Rule,
    /// The bound on all messages (election + notification), as text.
    pub bound_formula: &'static str,
    /// The bound on all messages for n positions and k initiators, valid on
    /// every overlay the algorithm accepts.
    pub bound: fn(n: u64, k: u64) -> u64,
    /// A sharper bound for one overlay, where the count depends on its shape:
    /// called with n, the overlay's number of edges m, and k. Drivers use
    /// [`AlgorithmSpec::bound_for`], which prefers it. `None`: `bound` alone.
    pub bound_on: Option<fn(n: u64, m: u64, k: u64) -> u64>,
    /// The exact message count, where it is the same on every schedule in
    /// which initiators wake before any message reaches them (on FIFO links
    /// where the algorithm assumes FIFO).
    pub exact: Option<fn(n: u64, k: u64) -> u64>,
    /// On an oriented ring with FIFO links, for given ids and initiators, the
    /// message count is the same on every schedule in which initiators wake
    /// before any message reaches them. LIVE and SIMULATED counts must then match.
    pub schedule_independent: bool,
    /// Creates one node's state machine.
    pub build: fn(&NodeContext) -> Box<dyn Algorithm>,
    /// Creates one node's state machine in "keep a leader" mode (with its
    /// failure detector), for failure-tolerant algorithms; `None`: one-shot only.
    pub build_kept: Option<BuildKept>,
    /// Simulates an election with the concrete state machine (no boxing).
    pub simulate: Simulate,
    /// The arrangement of ids 1..=n (in ring order) that costs the most
    /// messages under a rule, and how it is built; `None` where the
    /// literature gives none (or the count does not depend on the ids).
    pub worst_case: Option<Arrangement>,
    /// The arrangement that costs the fewest messages.
    pub best_case: Option<Arrangement>,
    /// Whose ids can win.
    pub candidates: Candidates,
}

/// Whose ids an algorithm elects from: the winner is the extremum of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidates {
    /// Every position (non-initiators are woken and compete).
    All,
    /// Only the initiators (a node that has not woken by itself stays passive).
    Initiators,
    /// Only the corners of a mesh (positions with two ports).
    MeshCorners,
    /// Whichever node the run makes the root of its spanning tree (which
    /// depends on the schedule): no id is expected to win.
    Root,
}

impl Candidates {
    /// Human description, as `ListAlgorithms` reports it.
    pub fn describe(self) -> &'static str {
        match self {
            Candidates::All => "every node",
            Candidates::Initiators => "the initiators",
            Candidates::MeshCorners => "the mesh corners",
            Candidates::Root => "the root the run builds (the better of the two saturated nodes)",
        }
    }
}

/// A named id arrangement of 1..=n for a rule.
#[derive(Clone, Copy, Debug)]
pub struct Arrangement {
    /// How it is built, for `ListAlgorithms` and the docs.
    pub description: &'static str,
    /// Ids of positions 0..n.
    pub ids: fn(n: u32, rule: Rule) -> Vec<u64>,
}

/// 1, 2, ..., n.
pub fn ascending(n: u32) -> Vec<u64> {
    (1..=n as u64).collect()
}

/// n, n-1, ..., 1.
pub fn descending(n: u32) -> Vec<u64> {
    (1..=n as u64).rev().collect()
}

/// Mirror an arrangement built for the max rule so it serves the min rule:
/// id v becomes n + 1 - v (the order of every comparison is reversed).
pub fn mirror(ids: Vec<u64>, n: u32, rule: Rule) -> Vec<u64> {
    match rule {
        Rule::Max => ids,
        Rule::Min => ids.into_iter().map(|v| n as u64 + 1 - v).collect(),
    }
}

/// Position i holds 1 + its rank when positions are sorted by the bit
/// reversal of i (over ⌈log2 n⌉ bits): for n = 2^p, the ids of every
/// stage's candidates alternate high and low, so exactly half survive.
pub fn bit_reversal(n: u32) -> Vec<u64> {
    let bits = ceil_log2(n as u64) as u32;
    let key = |i: u32| if bits == 0 { 0 } else { i.reverse_bits() >> (32 - bits) };
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_by_key(|&i| key(i));
    let mut ids = vec![0u64; n as usize];
    for (rank, &pos) in order.iter().enumerate() {
        ids[pos as usize] = rank as u64 + 1;
    }
    ids
}

/// The arrangement read the other way round (ring order reversed).
pub fn reversed(mut ids: Vec<u64>) -> Vec<u64> {
    ids.reverse();
    ids
}

/// An arrangement of 1..=n (ring order, max rule) on which Stages with
/// Feedback sends [`feedback_worst_case_cost`] messages, the most found: it
/// equals the exhaustive maximum for every n ≤ 8 and no random or
/// hill-climbing search has beaten it (see `docs/algorithms.md`).
///
/// A stage with c ≥ 3 candidates costs 2n ids plus one feedback per segment
/// between neighbouring candidates, except one segment per local maximum;
/// a stage with two candidates costs 3n (the loser feeds back both ways);
/// the last candidate's ids and the notification 3n. So the construction
/// keeps as many stages as possible, ends them with two candidates, and
/// makes the survivors the only local maxima, with their missing feedback on
/// the shortest segments. With k = max{k : 2·3^(k−1) ≤ n}: U_1 = [2, 1];
/// U_(j+1) puts after each id of U_j (raised above all new ids) a run of two
/// new smaller ids, so stage 1 keeps exactly U_j and every gap triples. The
/// n − 2·3^(k−1) remaining ids, smallest and decreasing, lengthen the run
/// right after the maximum: its segments always carry feedback.
pub fn feedback_worst_case(n: u32) -> Vec<u64> {
    let n = n as usize;
    if n <= 1 {
        return vec![1; n];
    }
    let mut u: Vec<u64> = vec![2, 1];
    while 3 * u.len() <= n {
        let s = u.len() as u64;
        let mut next = Vec::with_capacity(3 * u.len());
        let mut small = 2 * s;
        for &v in &u {
            next.extend([v + 2 * s, small, small - 1]);
            small -= 2;
        }
        u = next;
    }
    let extra = (n - u.len()) as u64;
    // The maximum stays first; its run is the one or two ids after it.
    let run_end = u.len().min(3);
    let mut ids: Vec<u64> = u.iter().map(|&v| v + extra).collect();
    ids.splice(run_end..run_end, (1..=extra).rev());
    ids
}

/// 1, 2, ..., n with the disjoint pairs of positions (n−3, n−2), (n−5, n−4),
/// ... down to position 1 swapped: every swapped pair's first id is a local
/// maximum and so is n, ⌊n/2⌋ local maxima in all, and only n is larger than
/// the two nearest ids on each side. Stages with Feedback's best
/// case: a stage of n candidates costs 2n ids plus a feedback from every
/// candidate that is not a local maximum, at least ⌈n/2⌉, then the last
/// candidate's ids and the notification cost 3n; this arrangement needs no
/// more (5n + ⌈n/2⌉ for n ≥ 3).
pub fn zigzag(n: u32) -> Vec<u64> {
    let mut ids = ascending(n);
    let mut j = n as i64 - 3;
    while j >= 1 {
        ids.swap(j as usize, j as usize + 1);
        j -= 2;
    }
    ids
}

/// What [`feedback_worst_case`] costs Stages with Feedback (all messages):
/// 12 for n = 2 and 6n − 1 for n = 3..5 (one stage); otherwise, with k as
/// there, k − 1 stages of 3n less the 2·3^(k−2) links of the segments
/// without feedback, a stage of two candidates (3n), and 3n for the last
/// candidate and the notification: 3n(k + 1) − 2(k − 1)·3^(k−2).
pub fn feedback_worst_case_cost(n: u64) -> u64 {
    let mut k = 1u32;
    while 2 * 3u64.pow(k) <= n {
        k += 1;
    }
    match (k, n) {
        (_, 0 | 1) => 0,
        (1, 2) => 12,
        (1, _) => 6 * n - 1,
        _ => 3 * n * (k as u64 + 1) - 2 * (k as u64 - 1) * 3u64.pow(k - 2),
    }
}

impl AlgorithmSpec {
    /// The default topology.
    pub fn default_topology(&self) -> TopologyKind {
        self.topologies[0]
    }

    /// Can it run on `t`?
    pub fn supports(&self, t: TopologyKind) -> bool {
        self.topologies.contains(&t)
    }

    /// The bound on `topo` with `k` initiators: [`Self::bound_on`] with the
    /// overlay's edge count where the entry has one, else [`Self::bound`].
    pub fn bound_for(&self, topo: &Topology, k: u64) -> u64 {
        let n = topo.len() as u64;
        match self.bound_on {
            Some(f) => f(n, topo.edge_count() as u64, k),
            None => (self.bound)(n, k),
        }
    }

    /// The id that must win on `topo` with these ids and initiators under `rule`.
    pub fn expected_winner(&self, topo: &Topology, ids: &[u64], initiators: &[u32], rule: Rule) -> Option<u64> {
        match self.candidates {
            Candidates::All => rule.winner(ids.iter().copied()),
            Candidates::Initiators => rule.winner(initiators.iter().filter_map(|&p| ids.get(p as usize).copied())),
            Candidates::MeshCorners => rule.winner(
                (0..topo.len()).filter(|&p| topo.ports(p).len() == 2).filter_map(|p| ids.get(p as usize).copied()),
            ),
            Candidates::Root => None,
        }
    }
}

/// ⌈log2 n⌉ (0 for n ≤ 1).
pub fn ceil_log2(n: u64) -> u64 {
    if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() as u64 }
}

/// ⌊log3 n⌋ (0 for n ≤ 2).
pub fn floor_log3(mut n: u64) -> u64 {
    let mut k = 0;
    while n >= 3 {
        n /= 3;
        k += 1;
    }
    k
}

/// ⌊log2 n⌋ (0 for n ≤ 1).
pub fn floor_log2(n: u64) -> u64 {
    if n <= 1 { 0 } else { 63 - n.leading_zeros() as u64 }
}

const RINGS: &[TopologyKind] = &[TopologyKind::RingUni, TopologyKind::RingBi, TopologyKind::RingBiUnoriented];
/// Rings where every node's right is the same way round (the seed's unidirectional algorithms).
const ORIENTED_RINGS: &[TopologyKind] = &[TopologyKind::RingUni, TopologyKind::RingBi];
const BI_RINGS: &[TopologyKind] = &[TopologyKind::RingBi, TopologyKind::RingBiUnoriented];
const TREES: &[TopologyKind] = &[TopologyKind::Tree];

/// Every algorithm, in the order `ListAlgorithms` shows them.
pub static CATALOGUE: &[AlgorithmSpec] = &[
    AlgorithmSpec {
        name: "all-the-way",
        title: "All the Way (Le Lann)",
        source: "G. Le Lann 1977; N. Santoro, Design and Analysis of Distributed Algorithms, ch. 3 (seed 003)",
        description: "Every id travels the whole ring; each node sees every id, learns n from the hop \
                      counter of its own returning id, and decides once it has seen n ids. No \
                      notification round is needed.",
        topologies: RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
        rule: Rule::Min,
        bound_formula: "n^2",
        bound: |n, _| n * n,
        bound_on: None,
        exact: Some(|n, _| n * n),
        schedule_independent: true,
        build: |c| Box::new(all_the_way::AllTheWay::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, all_the_way::AllTheWay::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "as-far",
        title: "AsFar (Chang-Roberts)",
        source: "E. Chang, R. Roberts 1979; Santoro ch. 3 (seed 003)",
        description: "Each id travels right until it meets a better id; the id that returns to its \
                      owner wins, and the winner's notification goes round once.",
        topologies: RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "n(n+1)/2 + n",
        bound: |n, _| n * (n + 1) / 2 + n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(as_far::AsFar::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, as_far::AsFar::new),
        worst_case: Some(Arrangement {
            description: "ids decreasing in the sending direction (DESCENDING for max): id of rank r crosses n - r + 1 links",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids increasing in the sending direction (ASCENDING for max): every id but the winner stops after one link",
            ids: |n, r| mirror(ascending(n), n, r),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "controlled-distance",
        title: "Controlled Distance (Hirschberg-Sinclair)",
        source: "D. Hirschberg, J. Sinclair 1980 (seed 001); Santoro ch. 3 (seed 003)",
        description: "Candidates probe both ways to distance 2^(stage-1) and survive when both probes \
                      come back; a probe that travels all the way round elects its owner.",
        topologies: BI_RINGS,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "8n(1+ceil(log2 n)) + n",
        bound: |n, _| 8 * n * (1 + ceil_log2(n)) + n,
        bound_on: None,
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(controlled_distance::ControlledDistance::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, controlled_distance::ControlledDistance::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "stages",
        title: "Stages (Franklin)",
        source: "W. R. Franklin 1982; Santoro ch. 3 (seed 003)",
        description: "Candidates send their id both ways to the nearest candidates; a candidate that \
                      beats both neighbours' ids survives to the next stage, so at most half survive.",
        topologies: BI_RINGS,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
        rule: Rule::Max,
        bound_formula: "2n*floor(log2 n) + 3n",
        bound: |n, _| 2 * n * floor_log2(n) + 3 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(stages::Stages::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, stages::Stages::new),
        worst_case: Some(Arrangement {
            description: "bit-reversal order: for n = 2^p exactly half the candidates survive each stage (2n log n + 3n messages)",
            ids: |n, r| mirror(bit_reversal(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ASCENDING: only the extremum survives the first stage (5n messages)",
            ids: |n, _| ascending(n),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "stages-buffered",
        title: "Stages without message ordering",
        source: "W. R. Franklin 1982; Santoro ch. 3 (seed 003), Removing Message Ordering",
        description: "Stages on links that may reorder: every id carries its stage, and a candidate \
                      stores ids of later stages until it reaches them (relaying them if defeated).",
        topologies: BI_RINGS,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "2n*floor(log2 n) + 3n",
        bound: |n, _| 2 * n * floor_log2(n) + 3 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(stages_buffered::StagesBuffered::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, stages_buffered::StagesBuffered::new),
        worst_case: Some(Arrangement {
            description: "bit-reversal order, as Stages: for n = 2^p exactly half the candidates survive each stage (2n log n + 3n messages)",
            ids: |n, r| mirror(bit_reversal(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ASCENDING: only the extremum survives the first stage (5n messages)",
            ids: |n, _| ascending(n),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "prob-as-far",
        title: "ProbAsFar (randomized AsFar)",
        source: "Santoro ch. 3 (seed 003), bidirectional election table",
        description: "AsFar where each node sends its id in a direction chosen by its random bit; \
                      ids go as far as they can in their own direction, the one that returns wins, \
                      and the winner's notification goes round once.",
        topologies: BI_RINGS,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "n(n+1)/2 + n",
        bound: |n, _| n * (n + 1) / 2 + n,
        bound_on: None,
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(prob_as_far::ProbAsFar::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, prob_as_far::ProbAsFar::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "participant-ring",
        title: "Ring with participant flags (seed 002)",
        source: "seed 002 (Ring-Based Algorithm) and seed 004 (Ring Election, multiple initiators); Chang-Roberts 1979",
        description: "Initiators send their id right; a better id is forwarded, a worse one replaced by \
                      the node's own if it is not yet a participant and swallowed if it is; the id \
                      that comes back elects its owner, whose `elected` message goes round once.",
        topologies: ORIENTED_RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: true, fifo: false },
        rule: Rule::Max,
        bound_formula: "3n-1 if k = 1, else n(n+1)/2 + n",
        bound: |n, k| if k == 1 { 3 * n - 1 } else { n * (n + 1) / 2 + n },
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(participant_ring::ParticipantRing::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, participant_ring::ParticipantRing::new),
        worst_case: Some(Arrangement {
            description: "ids decreasing in the sending direction, all initiating: id of rank r crosses n - r + 1 links (n(n+1)/2 + n)",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids increasing in the sending direction: every id but the winner stops after one link (3n - 1 with all initiating)",
            ids: |n, r| mirror(ascending(n), n, r),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "stages-feedback",
        title: "Stages with Feedback",
        source: "Santoro ch. 3 (seed 003), Stages with Feedback",
        description: "Stages where a candidate sends a positive feedback to the neighbouring candidate \
                      whose id beats its own and the other neighbour's; only candidates with feedback \
                      from both sides survive, so at most a third do.",
        topologies: BI_RINGS,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
        rule: Rule::Max,
        bound_formula: "3n*floor(log3 n) + 6n",
        bound: |n, _| 3 * n * floor_log3(n) + 6 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(stages_feedback::StagesFeedback::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, stages_feedback::StagesFeedback::new),
        worst_case: Some(Arrangement {
            description: "ternary construction (`feedback_worst_case`): the most stages, the last with two candidates, survivors the only local maxima, missing feedback on the shortest segments: 12 messages at n = 2, 6n - 1 at n = 3..5 (17, 23 and 29: one stage), otherwise 3n(k+1) - 2(k-1)3^(k-2), k = max{k : 2*3^(k-1) <= n}; the exhaustive maximum for n <= 8, not beaten by random or hill-climbing search (no published worst case)",
            ids: |n, r| mirror(feedback_worst_case(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "zigzag (`zigzag`: ascending with the pairs before the maximum swapped): floor(n/2) local maxima, so only ceil(n/2) feedbacks, and only the extremum survives stage 1: 5n + ceil(n/2) messages for n >= 3, the least possible",
            ids: |n, r| mirror(zigzag(n), n, r),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "alternate",
        title: "Alternate (Alternating Steps)",
        source: "Santoro ch. 3 (seed 003), Alternating Steps; Peterson 1982, Dolev-Klawe-Rodeh 1982",
        description: "Candidates send their id right at odd steps and left at even steps, and survive \
                      a step if their id beats the one they receive; the candidates of three \
                      consecutive steps follow Fibonacci, so about 1.44 log n steps of n messages.",
        topologies: &[TopologyKind::RingBi],
        assumptions: Assumptions { bidirectional: true, oriented: true, fifo: true },
        rule: Rule::Max,
        bound_formula: "n*T(n) + n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
        bound: |n, _| n * alternate::max_steps(n) + n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(alternate::Alternate::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, alternate::Alternate::new),
        worst_case: Some(Arrangement {
            description: "Fibonacci construction: each step keeps exactly G_(k-1) of G_k candidates (A_(k+1) = A_k reversed plus a smallest id after each descent), so T(n) steps: n*T(n) + n, the bound, for every n",
            ids: |n, r| mirror(alternate::worst_case_ids(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids decreasing in the step-1 direction (DESCENDING for max): only the extremum survives step 1, 3n messages, the least possible",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "uni-stages",
        title: "UniStages (Dolev-Klawe-Rodeh / Peterson)",
        source: "D. Dolev, M. Klawe, M. Rodeh 1982; G. L. Peterson 1982; Santoro ch. 3 (seed 003), unidirectional version",
        description: "Stages simulated on a unidirectional ring: each active node sends its value and \
                      forwards its predecessor's, and keeps the predecessor's value if it is a local \
                      extremum; the last holder announces the winning value and its owner leads.",
        topologies: ORIENTED_RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
        rule: Rule::Max,
        bound_formula: "2n*floor(log2 n) + 2n",
        bound: |n, _| 2 * n * floor_log2(n) + 2 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(uni_stages::UniStages::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, uni_stages::UniStages::new),
        worst_case: Some(Arrangement {
            description: "bit-reversal order: for n = 2^p exactly half the active nodes stay active each phase (2n log n + 2n messages)",
            ids: |n, r| mirror(bit_reversal(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids increasing in the sending direction: one node stays active after the first phase (4n messages, the least possible)",
            ids: |n, r| mirror(ascending(n), n, r),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "min-max",
        title: "MinMax (unidirectional)",
        source: "Santoro ch. 3 (seed 003), unidirectional table; L. Higham, T. Przytycka 1996 (basic algorithm)",
        description: "Envelopes travel right; meeting the last envelope a node sent in the same round, \
                      the larger is dropped in odd rounds and the smaller in even rounds, the other \
                      promoted; the envelope that returns ends the election, and a collecting round \
                      finds the extremum, whose owner leads.",
        topologies: ORIENTED_RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
        rule: Rule::Max,
        bound_formula: "n*T(n) + 2n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
        bound: |n, _| n * alternate::max_steps(n) + 2 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(min_max::MinMax::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, min_max::MinMax::new),
        worst_case: Some(Arrangement {
            description: "Fibonacci construction, BiMinMax's read backwards (MinMax compares each envelope with its successor, BiMinMax each candidate with its predecessor): T(n) rounds, n*T(n) + 2n, the bound, for every n; the same for both rules (the rounds' rules do not depend on it)",
            ids: |n, _| reversed(bi_min_max::worst_case_ids(n)),
        }),
        best_case: Some(Arrangement {
            description: "DESCENDING (either rule): only envelope 1 survives round 1 and goes round in round 2: 4n messages, the least possible",
            ids: |n, _| descending(n),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "uni-alternate",
        title: "UniAlternate",
        source: "Santoro ch. 3 (seed 003), unidirectional version and table",
        description: "Alternate simulated on a unidirectional ring: at odd steps a node keeps its value \
                      if it beats its predecessor's, at even steps it takes over its predecessor's value \
                      if that beats its own; the last holder announces the value and its owner leads.",
        topologies: ORIENTED_RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
        rule: Rule::Max,
        bound_formula: "n*T(n) + n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
        bound: |n, _| n * alternate::max_steps(n) + n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(uni_alternate::UniAlternate::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, uni_alternate::UniAlternate::new),
        worst_case: Some(Arrangement {
            description: "Fibonacci construction: each step keeps exactly G_(k-1) of G_k candidates (A_(k+1) = A_k reversed plus a smallest id after each descent), so T(n) steps: n*T(n) + n, the bound, for every n",
            ids: |n, r| mirror(alternate::worst_case_ids(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids decreasing in the step-1 direction (DESCENDING for max): only the extremum survives step 1, 3n messages, the least possible",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "tree-saturation",
        title: "Tree election by saturation (Elect_min)",
        source: "N. Santoro, Design and Analysis of Distributed Algorithms, ch. 2-3 (seed 003)",
        description: "Wake-up flood, then saturation: each node reports its subtree's best id to its last \
                      neighbour; the two saturated nodes know the winner and notify the tree.",
        topologies: TREES,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
        rule: Rule::Min,
        bound_formula: "3n + k - 4",
        bound: |n, k| 3 * n + k - 4,
        bound_on: None,
        exact: Some(|n, k| 3 * n + k - 4),
        schedule_independent: true,
        build: |c| Box::new(tree_saturation::TreeSaturation::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, tree_saturation::TreeSaturation::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "elect-root",
        title: "Tree election by saturation, electing the root (Elect_root)",
        source: "N. Santoro, Design and Analysis of Distributed Algorithms, ch. 2-3 (seed 003)",
        description: "Wake-up flood, then saturation without ids; only the two saturated nodes exchange ids, \
                      the better of the two leads and terminates the tree (followers learn only that they \
                      follow): 2 messages carry an id.",
        topologies: TREES,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
        rule: Rule::Min,
        bound_formula: "3n + k - 2",
        bound: |n, k| if n < 2 { 0 } else { 3 * n + k - 2 },
        bound_on: None,
        exact: Some(|n, k| if n < 2 { 0 } else { 3 * n + k - 2 }),
        schedule_independent: true,
        build: |c| Box::new(elect_root::ElectRoot::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, elect_root::ElectRoot::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::Root,
    },
    AlgorithmSpec {
        name: "echo-extinction",
        title: "Echo with extinction (Chang 1982)",
        source: "E. J. H. Chang, Echo algorithms: depth parallel operations on general graphs, IEEE TSE 1982; \
                 G. Tel, Introduction to Distributed Algorithms, 7.3.1 Extinction",
        description: "Each initiator starts an echo wave tagged with its id; a node joins the best wave it \
                      has seen (worse waves die), forwards it to its other neighbours and echoes to its \
                      parent once every neighbour answered; only the best initiator's wave completes, and \
                      its initiator leads and notifies down the wave's spanning tree.",
        topologies: &[
            TopologyKind::Graph,
            TopologyKind::Tree,
            TopologyKind::Mesh,
            TopologyKind::Complete,
            TopologyKind::RingBi,
            TopologyKind::RingBiUnoriented,
        ],
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "2mk + n - 1 (m = links of the overlay)",
        bound: |n, k| 2 * k * n.max(n * n.saturating_sub(1) / 2) + n.saturating_sub(1),
        bound_on: Some(|n, m, k| 2 * m * k + n.saturating_sub(1)),
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(echo_extinction::EchoExtinction::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, echo_extinction::EchoExtinction::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::Initiators,
    },
    AlgorithmSpec {
        name: "complete-villadangos",
        title: "Complete network (Villadangos et al.)",
        source: "J. Villadangos, A. Cordoba, F. Farina, M. Prieto, Efficient Leader Election in Complete Networks, PDP 2005 (seed 000)",
        description: "Nodes form a virtual ring by next-lower id. Each candidate sends message1 along it, \
                      turning passive nodes into dummies, until it reaches the next candidate; the best \
                      candidate, reached across the wrap-around, absorbs the others one by one with \
                      message2 / message3, learns it leads when its own id comes back, and notifies \
                      every node directly.",
        topologies: &[TopologyKind::Complete],
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "2n + 2k - 3",
        bound: |n, k| if k == 0 { 0 } else { 2 * n + 2 * k - 3 },
        bound_on: None,
        exact: Some(|n, k| if k == 0 { 0 } else { 2 * n + 2 * k - 3 }),
        schedule_independent: true,
        build: |c| Box::new(villadangos::Villadangos::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, villadangos::Villadangos::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::Initiators,
    },
    AlgorithmSpec {
        name: "mesh-corners",
        title: "Mesh: corner election",
        source: "N. Santoro, Design and Analysis of Distributed Algorithms, ch. 3, Election in Mesh Networks (seed 003)",
        description: "Wake-up flood, then AsFar among the four corners on the border ring, oriented clockwise \
                      by the compass labels (border nodes relay, a corner forwards only ids that beat its own); \
                      the corner whose id comes back leads and floods the notification.",
        topologies: &[TopologyKind::Mesh],
        assumptions: Assumptions { bidirectional: true, oriented: true, fifo: false },
        rule: Rule::Max,
        bound_formula: "6n + k + 2max(rows, cols) - 9",
        bound: |n, k| (6 * n + k + 2 * mesh_corners::longest_side(n)).saturating_sub(9),
        bound_on: Some(|n, m, k| (6 * n + k + 2 * mesh_corners::longest_side_of(n, m)).saturating_sub(9)),
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(mesh_corners::MeshCorners::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, mesh_corners::MeshCorners::new),
        worst_case: Some(Arrangement {
            description: "on every rows x cols shape, corner ids decreasing clockwise from a corner that starts a short side: \
                          6(max(rows,cols)-1) + 4(min(rows,cols)-1) border messages (6n + k + 2 max(rows,cols) - 9 in all)",
            ids: |n, r| mirror(mesh_corners::worst_case_ids(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "on every rows x cols shape, corner ids increasing clockwise towards a corner that starts a long side: \
                          3(max(rows,cols)-1) + 4(min(rows,cols)-1) border messages",
            ids: |n, r| mirror(mesh_corners::best_case_ids(n), n, r),
        }),
        candidates: Candidates::MeshCorners,
    },
    AlgorithmSpec {
        name: "sync-hs",
        title: "Hirschberg-Sinclair, synchronous (seed 001)",
        source: "D. Hirschberg, J. Sinclair 1980 (seed 001); N. Lynch, Distributed Algorithms, 3.4",
        description: "HS in lock-step rounds: nodes act only at the ticks of a round clock (a timer), one \
                      hop per round, so phase i (probes to distance 2^i and back) of every candidate \
                      takes exactly 2^(i+1) rounds; a probe that goes round the ring elects its owner. \
                      Unlike controlled-distance (asynchronous), relaying a better probe does not \
                      defeat a candidate and every node joins, so the count depends on the ids only.",
        topologies: BI_RINGS,
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "8n(1+ceil(log2 n)) + n",
        bound: |n, _| 8 * n * (1 + ceil_log2(n)) + n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(sync_hs::SyncHs::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, sync_hs::SyncHs::new),
        worst_case: None,
        best_case: Some(Arrangement {
            description: "ASCENDING (one local extremum): 3n in phase 0, then only the extremum probes: 6n + 2^(p+2) - 8 messages, p = ceil(log2 n), the least possible",
            ids: |n, _| ascending(n),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "bi-min-max",
        title: "BiMinMax (MinMax with candidates in place)",
        source: "Santoro ch. 3 (seed 003), bidirectional table (BiMinMax, no pseudo-code); Ringleader's reading",
        description: "Each stage every candidate sends its id right and compares it with the id of the nearest \
                      candidate on its left: at odd stages it survives if its id is smaller, at even stages if \
                      larger; ids carry their stage, so links need not be FIFO. The candidate whose id comes \
                      back sends a collecting round and the notification, and the extremum's owner leads.",
        topologies: &[TopologyKind::RingBi, TopologyKind::RingUni],
        assumptions: Assumptions { bidirectional: false, oriented: true, fifo: false },
        rule: Rule::Max,
        bound_formula: "n*T(n) + 2n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
        bound: |n, _| n * alternate::max_steps(n) + 2 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(bi_min_max::BiMinMax::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, bi_min_max::BiMinMax::new),
        worst_case: Some(Arrangement {
            description: "Fibonacci construction (`bi_min_max::worst_case_ids`): B_(k+1) = B_k mirrored plus a new largest id after each ascent, so exactly G_(k-1) of G_k candidates fall at stage 1 and the rest face the next rule as B_k faced the first; T(n) stages: n*T(n) + 2n, the bound, for every n and either rule",
            ids: |n, _| bi_min_max::worst_case_ids(n),
        }),
        best_case: Some(Arrangement {
            description: "ASCENDING (either rule): only id 1 survives stage 1: 4n messages, the least possible",
            ids: |n, _| ascending(n),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "min-max-plus",
        title: "MinMax+ (Higham-Przytycka)",
        source: "L. Higham, T. Przytycka 1996 (algorithm ELECT); Santoro ch. 3 (seed 003), unidirectional table",
        description: "MinMax with early promotions: an envelope of an even round is promoted at the first node \
                      whose last envelope, of the round before, is smaller (witness), and one of an odd round \
                      after F_(r+2) links (distance); then a collecting round and the notification.",
        topologies: ORIENTED_RINGS,
        assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
        rule: Rule::Max,
        bound_formula: "E(n) + 2n, E(n) = n + sum over even i in 2..=m+1 of (2n - ceil(n F_i / F_(i+3))), m = max{odd r : 2 F_r <= n} (1.271 n log n + O(n))",
        bound: |n, _| min_max_plus::election_bound(n) + 2 * n,
        bound_on: None,
        exact: None,
        schedule_independent: true,
        build: |c| Box::new(min_max_plus::MinMaxPlus::new(c)),
        build_kept: None,
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, min_max_plus::MinMaxPlus::new),
        worst_case: None,
        best_case: Some(Arrangement {
            description: "DESCENDING (either rule): only envelope 1 survives round 1 and goes round in round 2: 4n messages, the least possible",
            ids: |n, _| descending(n),
        }),
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "bully",
        title: "Bully (Garcia-Molina)",
        source: "H. Garcia-Molina, Elections in a Distributed Computing System, IEEE Trans. Computers 1982 (seed 004)",
        description: "A node that knows no live leader sends ELECTION to every higher id; a higher node answers \
                      OK and takes the election over; a node that hears no answer within a timeout leads the \
                      next term and sends COORDINATOR to all. One-shot here (no failure detector); the kept \
                      mode adds heartbeats and re-elects with a higher term when the leader is suspected. \
                      Needs delays below the answer timeout (10 s one-shot).",
        topologies: &[TopologyKind::Complete],
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "n^2 - 1 (one election after a leader crash: n(n-1))",
        bound: |n, _| (n * n).saturating_sub(1),
        bound_on: None,
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(bully::Bully::new(c)),
        build_kept: Some(|c, d| Box::new(bully::kept(c, bully::BullyConfig::for_detector(d), d))),
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, bully::Bully::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "repaired-ring",
        title: "Ring with repair (seed 002, failure-tolerant)",
        source: "seed 002 (the modified ring: broken links repaired, forwarders collected, coordinator round); seed 004 (several initiators)",
        description: "The complete network used as a logical ring in id order; a node's successor is the next id \
                      it does not suspect. An election carries its term, its initiator and the best id of the \
                      nodes that forwarded it (the seed's list, reduced to its maximum and length); a node \
                      forwards only elections better than the one it joined. Back at its initiator, it sends \
                      COORDINATOR round the ring; if the coordinator is suspected when that returns, a new \
                      election with a higher term. One-shot here; the kept mode adds heartbeats.",
        topologies: &[TopologyKind::Complete],
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "n(n+3)/2 (elections n(n+1)/2 as Chang-Roberts, one coordinator round n)",
        bound: |n, _| n * (n + 3) / 2,
        bound_on: None,
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(repaired_ring::RepairedRing::new(c)),
        build_kept: Some(|c, d| Box::new(repaired_ring::kept(c, repaired_ring::RingConfig::for_detector(d), d))),
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, repaired_ring::RepairedRing::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "zookeeper",
        title: "ZooKeeper-style election (NEW_LEADER / ACK / COMMIT)",
        source: "seed 004 (Apache ZooKeeper: sequence numbers, each node watches the next-better one, NEW_LEADER / ACK / COMMIT with a quorum)",
        description: "The best node proposes itself with NEW_LEADER and a term above every term it has heard of; \
                      each node acks at most one proposal per term (persisted, so also across a crash); a proposer \
                      acked by a quorum (a majority of all nodes) leads and broadcasts COMMIT, on which the others \
                      follow it. A non-best initiator wakes the best node with one WAKEUP. One-shot here (no \
                      failure detector, no timer); the kept mode adds heartbeats: a node proposes once every \
                      better node is suspected and it sees a quorum, a leader that no longer sees a quorum steps \
                      down, and a live leader with a quorum is never preempted.",
        topologies: &[TopologyKind::Complete],
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "3(n-1) + 2 min(k, n-1) (NEW_LEADER, ACK, COMMIT from the best node; a WAKEUP from each other initiator and at most one COMMIT answering it; exactly 3(n-1) when the best node alone initiates)",
        bound: |n, k| 3 * n.saturating_sub(1) + 2 * k.min(n.saturating_sub(1)),
        bound_on: None,
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(zookeeper::ZooKeeper::new(c)),
        build_kept: Some(|c, d| Box::new(zookeeper::kept(c, zookeeper::ZkConfig::for_detector(d), d))),
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, zookeeper::ZooKeeper::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
    AlgorithmSpec {
        name: "chubby",
        title: "Chubby-style election (majority votes, leases)",
        source: "seed 004 (Google Chubby: votes, quorum, master lease renewed by asking for a majority); \
                 M. Burrows, The Chubby lock service, OSDI 2006",
        description: "A node that knows no leader backs off by rank (the best id first) and asks every node \
                      for its vote in term = highest seen + 1; a node votes at most once per term (kept on \
                      disk) and, in the kept mode, a vote or a lease acknowledgement is a promise to grant \
                      nobody else for the lease; a quorum elects. The kept leader renews its lease every \
                      300 ms and steps down when its lease (1 s minus a drift margin, counted from sending \
                      the request a quorum granted) runs out, before any promise it relies on: never two \
                      leaders at once, and without a majority nobody leads. One-shot here: no lease, the \
                      leader announces itself with one renewal round.",
        topologies: &[TopologyKind::Complete],
        assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
        rule: Rule::Max,
        bound_formula: "6(n-1) (4(n-1) when the best id initiates)",
        bound: |n, _| 6 * n.saturating_sub(1),
        bound_on: None,
        exact: None,
        schedule_independent: false,
        build: |c| Box::new(chubby::Chubby::new(c)),
        build_kept: Some(|c, d| Box::new(chubby::Chubby::with_config(c, chubby::ChubbyConfig::for_detector(d)))),
        simulate: |s, t, i, k, r, c| sim::run_with(s, t, i, k, r, c, chubby::Chubby::new),
        worst_case: None,
        best_case: None,
        candidates: Candidates::All,
    },
];

/// The entry named `name`.
pub fn find(name: &str) -> Option<&'static AlgorithmSpec> {
    CATALOGUE.iter().find(|a| a.name == name)
}

/// Most timer events a failure-free one-shot run of `spec` on `n` nodes
/// fires: a round clock ticks every node every round (`sync-hs`); 0 for
/// algorithms whose timers are few. The simulator's timer budget and the
/// controller's size check follow it.
pub fn timer_event_bound(spec: &AlgorithmSpec, n: u64) -> u64 {
    match spec.name {
        "sync-hs" => sync_hs::max_timer_events(n),
        _ => 0,
    }
}

/// Heartbeats a settled kept leadership of `name` sends per detector period
/// on `topo` at most (each algorithm's `watched` says whom it watches, and
/// the detector answers whoever watches it): bully's and ZooKeeper-style's
/// leader and followers watch only each other (2(n − 1)); the repaired
/// ring's followers also watch their ring successor, which answers (at most
/// 4(n − 1)); Chubby-style sends none (its lease is its detector); an
/// algorithm that watches every neighbour, one per directed link. While a
/// node looks for a leader it watches everyone: elections cost more, for as
/// long as they last.
pub fn heartbeats_per_period(name: &str, topo: &Topology) -> u64 {
    let others = u64::from(topo.len().saturating_sub(1));
    match name {
        "bully" | "zookeeper" => 2 * others,
        "repaired-ring" => 4 * others,
        "chubby" => 0,
        _ => topo.link_count() as u64,
    }
}

/// Messages a second a kept leadership of `name` on `topo` sends while every
/// node elects at once (its start, or a partition healing), by the model of
/// what each algorithm must get through in time: bully's n² election and
/// answer messages within its answer timeout (n² · 1000 / A); ZooKeeper-style
/// looking nodes and the repaired ring's electing ones watch everyone, one
/// heartbeat per directed link every period (links · 1000 / P); Chubby-style
/// candidates run one at a time (rank back-off), so only its steady renewals
/// (2(n − 1) every renew period). `None` for algorithms without a kept mode.
pub fn election_load_per_second(name: &str, topo: &Topology, d: DetectorConfig) -> Option<u64> {
    let n = u64::from(topo.len());
    let per_second = |messages: u64, ms: u64| messages.saturating_mul(1_000) / ms.max(1);
    match name {
        "bully" => Some(per_second(n.saturating_mul(n), bully::BullyConfig::for_detector(d).answer_timeout_ms)),
        "zookeeper" | "repaired-ring" => Some(per_second(topo.link_count() as u64, d.period_ms)),
        "chubby" => Some(per_second(2 * n.saturating_sub(1), chubby::ChubbyConfig::for_detector(d).renew_ms)),
        _ => None,
    }
}

/// How long after the last fault heals a kept leadership of `name` on `n`
/// nodes, with detector `d` and messages delayed by at most `delay_ms`,
/// agrees on one live leader at most (a live majority assumed where the
/// algorithm needs one); `None` for algorithms without a kept mode. Each
/// algorithm's `convergence_bound_ms` gives the formula and its argument.
pub fn convergence_bound_ms(name: &str, d: DetectorConfig, n: u32, delay_ms: u64) -> Option<u64> {
    match name {
        "bully" => Some(bully::convergence_bound_ms(d, delay_ms)),
        "repaired-ring" => Some(repaired_ring::convergence_bound_ms(d, n, delay_ms)),
        "zookeeper" => Some(zookeeper::convergence_bound_ms(d, delay_ms)),
        "chubby" => Some(chubby::convergence_bound_ms(d, n, delay_ms)),
        _ => None,
    }
}

/// Every catalogue name, comma-separated (for error messages).
pub fn names() -> String {
    CATALOGUE.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Log helpers match their definitions on small and power-of-two values.
    #[test]
    fn logs() {
        assert_eq!((ceil_log2(1), ceil_log2(2), ceil_log2(5), ceil_log2(8)), (0, 1, 3, 3));
        assert_eq!((floor_log2(1), floor_log2(2), floor_log2(5), floor_log2(8)), (0, 1, 2, 3));
        assert_eq!((floor_log3(2), floor_log3(3), floor_log3(8), floor_log3(9), floor_log3(27)), (0, 1, 1, 2, 3));
    }

    /// Names are unique and every entry has a default topology.
    #[test]
    fn catalogue_is_well_formed() {
        let mut names: Vec<_> = CATALOGUE.iter().map(|a| a.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len());
        assert!(CATALOGUE.iter().all(|a| !a.topologies.is_empty()));
        assert!(find("as-far").is_some() && find("nope").is_none());
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
    use crate::algo::harness::ring_arrangements as permutations;

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
                let worst = cost(spec, &(spec.worst_case.unwrap().ids)(n, rule), rule);
                assert_eq!(worst, (spec.bound)(n as u64, n as u64), "n = {n}, {rule:?}");
                let best = cost(spec, &(spec.best_case.unwrap().ids)(n, rule), rule);
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
        let text = spec.worst_case.unwrap().description;
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
        let (worst, best) = (spec.worst_case.unwrap(), spec.best_case.unwrap());
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
