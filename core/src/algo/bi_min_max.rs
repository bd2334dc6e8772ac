//! # BiMinMax (MinMax with candidates that keep their ids)
//!
//! * Source: Santoro ch. 3, bidirectional table: BiMinMax,
//!   1.44 n log n + O(n). Santoro names it without pseudo-code; this is
//!   Ringleader's reading (see below and `docs/algorithms.md`).
//! * Network: ring sending right (the oriented bidirectional ring, and the
//!   unidirectional one), **no FIFO needed**: ids carry their stage and a
//!   candidate holds ids of later stages until it gets there.
//! * Winner: the maximum, or the minimum when mirrored. The last candidate is
//!   in general neither, so it sends one collecting round, then the
//!   notification, whose extremum owner declares itself leader.
//! * Messages: exactly n per stage, at most n·T(n) + n election (the
//!   stages, then the collecting round) and n notification, with
//!   T(n) = max{k : G_k ≤ n}, G = 1, 2, 3, 5, 8, ... (≈ 1.44 n log n).
//!
//! Every node is a candidate of stage 1 (a sleeping node wakes on the first
//! id). At each stage a candidate sends its own id right and receives the id
//! of the nearest candidate on its left, v (defeated nodes relay). At odd
//! stages it stays a candidate if its id is smaller than v, at even stages if
//! it is larger. The candidate whose own id comes back is the last.
//!
//! Why T(n) stages: let S_s be the candidates of stage s and x one of S_(s+2)
//! with p its left neighbour in S_(s+1) and q its left neighbour in S_s.
//! x survived stage s against q and stage s + 1 against p, under opposite
//! rules, so q and p lie on opposite sides of x (q > x > p at odd s): q ≠ p,
//! and q, the left neighbour of x in S_s, is not in S_(s+1) (else it would be
//! p). Distinct x give distinct q, so |S_s| ≥ |S_(s+1)| + |S_(s+2)|; the last
//! stage has one candidate and the one before at least two, hence n ≥ G_T.
//! Each stage's ids travel disjoint stretches covering the ring: n messages.
//!
//! Reading of Santoro's table, and why this one. MinMax (Higham-Przytycka's
//! envelopes, `min_max.rs`) keeps, in odd rounds, the ids smaller than their
//! successor's and carries each survivor to its successor's node. Comparing
//! each candidate with its *predecessor* instead keeps the same ids as
//! MinMax on the mirrored ring, but a survivor is decided at its own node,
//! so no id moves, and stage numbers make FIFO unnecessary. The tempting
//! bidirectional reading, odd stages min-wins to the right and even stages
//! max-wins to the left (Alternate's directions with MinMax's rules), is not
//! an O(n log n) algorithm: the survivors of a stage are then compared with
//! the neighbour on the other side, and descending ids lose one candidate
//! per stage (n stages, n² + 2n messages; unit test
//! `alternating_directions_and_rules_is_quadratic`). The comparison must stay
//! on one side, so this algorithm needs links one way only and runs on the
//! unidirectional ring too. The collecting round (an `Election` with stage 0
//! carrying the best id seen) and the notification are Ringleader's
//! additions so that the extremum leads.

use super::alternate;
use super::oneshot::{self, COLLECT, Ending, OneShotNode};
use crate::spec::{AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, Provision, ascending};
use super::{AlgoError, Hold, LEFT, Msg, NodeContext, Outbox, Port, RIGHT, Rule};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bi-min-max",
    title: "BiMinMax (MinMax with candidates in place)",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3, table of bidirectional \
             election algorithms (BiMinMax, named without pseudo-code); Ringleader's reading",
    description: "Each stage every candidate sends its id right and compares it with the id of the nearest \
                  candidate on its left: at odd stages it survives if its id is smaller, at even stages if \
                  larger; ids carry their stage, so links need not be FIFO. The candidate whose id comes \
                  back sends a collecting round and the notification, and the extremum's owner leads.",
    topologies: &[TopologyKind::RingBi, TopologyKind::RingUni],
    assumptions: Assumptions { bidirectional: false, oriented: true, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n*T(n) + 2n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
    bound: &|n, _| n * alternate::max_steps(n) + 2 * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 270,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(BiMinMax::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "Fibonacci construction (`bi_min_max::worst_case_ids`): B_(k+1) = B_k mirrored plus a new largest id after each ascent, so exactly G_(k-1) of G_k candidates fall at stage 1 and the rest face the next rule as B_k faced the first; T(n) stages: n*T(n) + 2n, the bound, for every n and either rule",
            ids: |n, _| worst_case_ids(n),
        }),
        best_case: Some(Arrangement {
            description: "ASCENDING (either rule): only id 1 survives stage 1: 4n messages, the least possible",
            ids: |n, _| ascending(n),
        }),
        ..Extras::NONE
    },
};

/// An arrangement of 1..=n (ring order) on which BiMinMax takes T(n)
/// stages, the most possible, so it sends exactly n·T(n) + 2n messages
/// (whatever the rule: the stages' rules do not depend on it).
///
/// Built from B_2 = [1, 2] (stage 1 keeps 1; stage 2 is the last). B_k has
/// G_k ids and keeps exactly G_(k−1) of them at stage 1: those smaller than
/// their left neighbour, one per descent. B_(k+1) is B_k mirrored
/// (v → G_k + 1 − v, so that the survivors of an odd stage face the even
/// rule as B_k faces the odd one) with a new id, larger than all of B_k,
/// after each ascent of the mirror. An inserted id is larger than its left
/// neighbour and is dropped at stage 1; every other id now has a larger
/// left neighbour (an inserted id or, at a descent of the mirror, the old
/// one) and survives. The mirror has as many ascents as B_k has descents,
/// G_(k−1), so B_(k+1) has G_(k+1) ids, its survivors are the mirror of
/// B_k, and it takes one stage more. For G_k < n < G_(k+1),
/// the n − G_k further ids, larger than all and increasing, go after a
/// descent c > d of B_k: each is larger than its left neighbour (dropped at
/// stage 1) and d still survives, so still T(n) stages.
pub fn worst_case_ids(n: u32) -> Vec<u64> {
    let n = n as usize;
    if n <= 1 {
        return vec![1; n];
    }
    let mut b: Vec<u64> = vec![1, 2];
    loop {
        let m = b.len();
        let mirror: Vec<u64> = b.iter().map(|&v| m as u64 + 1 - v).collect();
        let ascents = (0..m).filter(|&i| mirror[i] < mirror[(i + 1) % m]).count();
        if m + ascents > n {
            break;
        }
        let mut next = Vec::with_capacity(m + ascents);
        let mut big = m as u64;
        for i in 0..m {
            next.push(mirror[i]);
            if mirror[i] < mirror[(i + 1) % m] {
                big += 1;
                next.push(big);
            }
        }
        b = next;
    }
    let m = b.len();
    let at = (0..m).find(|&i| b[i] > b[(i + 1) % m]).expect("two or more distinct ids have a descent");
    b.splice(at + 1..at + 1, m as u64 + 1..=n as u64);
    b
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Asleep,
    Candidate,
    Defeated,
    /// The last candidate; the collecting round is out.
    Collecting,
    /// Sent the notification; waiting for it to come back.
    Announcing,
    Done,
}

/// One node of BiMinMax.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BiMinMax {
    id: u64,
    rule: Rule,
    state: State,
    stage: u32,
    /// Ids of later stages that came early.
    held: Vec<Msg>,
    end: Ending,
}

impl BiMinMax {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        BiMinMax { id: c.id, rule: c.rule, state: State::Asleep, stage: 0, held: Vec::new(), end: Ending::default() }
    }

    fn next_stage(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        self.stage = self.stage.saturating_add(1);
        self.state = State::Candidate;
        out.send(RIGHT, Msg::Election { id: self.id, stage: self.stage, hops: 0 });
        for msg in std::mem::take(&mut self.held) {
            self.receive(LEFT, msg, out)?;
        }
        Ok(())
    }
}

impl OneShotNode for BiMinMax {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::Candidate => "candidate",
            State::Defeated => "defeated",
            State::Collecting => "collecting",
            State::Announcing => "announcing",
            State::Done => self.end.role_name(),
        }
    }

    fn held(&self) -> usize {
        self.held.len()
    }

    /// Messages come in on `LEFT` only: BiMinMax sends right.
    fn check_port(&self, port: Port, msg: Msg) -> Result<(), AlgoError> {
        match port {
            LEFT => Ok(()),
            RIGHT => Err(AlgoError::Invalid(format!(
                "{msg:?} reached {} from the right; BiMinMax sends right only",
                self.id
            ))),
            _ => Err(AlgoError::BadPort { port }),
        }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        // Nothing is held yet, so starting the first stage cannot fail.
        let _ = self.next_stage(out);
    }

    /// A message that came in on `LEFT`.
    fn receive(&mut self, _port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match (msg, self.state) {
            (Msg::Election { id, stage: COLLECT, .. }, State::Defeated) => {
                oneshot::collect_on(self.rule, self.id, id, RIGHT, out);
            }
            (Msg::Election { id, stage: COLLECT, .. }, State::Collecting) => {
                self.state = State::Announcing;
                self.end.announce(self.id, id, RIGHT, out);
            }
            (Msg::Election { .. }, State::Defeated) => out.send(RIGHT, msg),
            (Msg::Election { stage, .. }, State::Candidate) if stage > self.stage => self.held.hold(msg)?,
            (Msg::Election { id, stage, .. }, State::Candidate) if stage == self.stage => {
                let survives = if stage % 2 == 1 { self.id < id } else { self.id > id };
                if id == self.id {
                    self.state = State::Collecting;
                    oneshot::collect(self.id, out);
                } else if survives {
                    self.next_stage(out)?;
                } else {
                    self.state = State::Defeated;
                    for held in std::mem::take(&mut self.held) {
                        out.send(RIGHT, held);
                    }
                }
            }
            (Msg::Notify { .. }, State::Announcing) => self.state = State::Done,
            (Msg::Notify { leader }, State::Defeated) => {
                self.state = State::Done;
                self.end.announce(self.id, leader, RIGHT, out);
            }
            (Msg::Election { .. } | Msg::Notify { .. }, state) => {
                return Err(AlgoError::Invalid(format!(
                    "{msg:?} reached {} in state {state:?} at stage {}",
                    self.id, self.stage
                )));
            }
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, election as el, ring_context, send};
    use crate::spec::ring_arrangements;
    use crate::algo::{Role, alternate, catalogue};
    use crate::sim::{self, SimConfig, SimReport};
    use crate::topology::{IdOrder, Topology, TopologyKind};

    /// A candidate started: its id goes right at stage 1.
    fn started(id: u64) -> Probe<BiMinMax> {
        Probe::new(BiMinMax::new(&ring_context(id, Rule::Max))).start(&[send(RIGHT, el(id, 1))])
    }

    fn run(kind: TopologyKind, ids: &[u64], rule: Rule, cfg: &SimConfig) -> SimReport {
        let spec = catalogue::find("bi-min-max").unwrap();
        let ring = Topology::ring(kind, ids.len() as u32, cfg.seed).unwrap();
        let all: Vec<u32> = (0..ids.len() as u32).collect();
        let r = sim::run(spec, &ring, ids, &all, rule, cfg);
        assert!(r.verdict.violations.is_empty(), "{ids:?}: {:?}", r.verdict.violations);
        r
    }

    /// Odd stages keep a candidate whose id is smaller than its left
    /// neighbour's, even stages one whose id is larger, whatever the rule.
    #[test]
    fn odd_stages_keep_the_smaller_even_stages_the_larger() {
        started(5)
            .on(LEFT, el(7, 1), &[send(RIGHT, el(5, 2))]) // 5 < 7 survives stage 1
            .on(LEFT, el(3, 2), &[send(RIGHT, el(5, 3))]) // 5 > 3 survives stage 2
            .on(LEFT, el(2, 3), &[]) // 5 > 2 loses stage 3
            .in_state("defeated")
            .on(LEFT, el(9, 4), &[send(RIGHT, el(9, 4))]); // a defeated node relays
        // The min rule does not change the stages' rules.
        Probe::started(BiMinMax::new(&ring_context(5, Rule::Min))).on(LEFT, el(4, 1), &[]).in_state("defeated");
    }

    /// On links that reorder, an id of a later stage is held until the
    /// candidate gets there, or relayed if it is defeated first.
    #[test]
    fn later_stage_ids_are_held() {
        started(5)
            .on(LEFT, el(8, 2), &[]) // held
            .on(LEFT, el(6, 1), &[send(RIGHT, el(5, 2))])
            .in_state("defeated"); // 5 < 8 loses stage 2
        // Defeated at stage 1: relays what it held.
        started(5).on(LEFT, el(8, 2), &[]).on(LEFT, el(4, 1), &[send(RIGHT, el(8, 2))]);
    }

    /// The candidate whose id comes back starts the collecting round; it
    /// ends with the notification naming the best id seen, and ids arriving
    /// from the right are refused.
    #[test]
    fn last_candidate_collects_then_notifies() {
        let notify = send(RIGHT, Msg::Notify { leader: 9 });
        started(5)
            .on(LEFT, el(5, 1), &[send(RIGHT, el(5, COLLECT))])
            .on(LEFT, el(9, COLLECT), &[decide(Role::Follower, 9), notify])
            .refuses(RIGHT, el(3, 1));
    }

    /// On ids 1, 3, 2 stage 1 keeps 1 and 2 and stage 2 keeps 2, neither
    /// extremum; the collecting round makes the extremum lead under each rule,
    /// and the count is n per stage plus 2n: 3·3 + 6 = 15.
    #[test]
    fn extremum_leads_though_the_last_candidate_is_neither() {
        for rule in [Rule::Max, Rule::Min] {
            let r = run(TopologyKind::RingBi, &[1, 3, 2], rule, &SimConfig::default());
            assert_eq!(r.verdict.leader, Some(if rule == Rule::Max { 1 } else { 0 }), "positions of 3 and 1");
            assert_eq!((r.counters.election_messages, r.counters.notification_messages), (12, 3));
        }
    }

    /// BiMinMax keeps the ids MinMax keeps on the ring read backwards, and
    /// both cost n per stage plus 2n: on every arrangement of up to 7 ids,
    /// BiMinMax's count equals MinMax's on the reversed arrangement.
    #[test]
    fn counts_equal_min_max_on_the_reversed_ring() {
        let mm = catalogue::find("min-max").unwrap();
        for n in 2..=7u32 {
            let ring = Topology::ring(TopologyKind::RingUni, n, 0).unwrap();
            let all: Vec<u32> = (0..n).collect();
            for ids in ring_arrangements(n) {
                let b = run(TopologyKind::RingUni, &ids, Rule::Max, &SimConfig::default());
                let back: Vec<u64> = ids.iter().rev().copied().collect();
                let m = sim::run(mm, &ring, &back, &all, Rule::Max, &SimConfig::default());
                assert_eq!(b.counters.messages, m.counters.messages, "{ids:?}");
            }
        }
    }

    /// The worst-case construction takes T(n) stages for every n, so it costs
    /// exactly the bound n·T(n) + 2n, on both topologies and both rules, with
    /// FIFO and reordering links; ascending ids cost 4n, the least possible.
    #[test]
    fn worst_case_attains_the_bound_for_every_n() {
        for n in (2..=150u32).chain([233, 377, 1000, 4096]) {
            let worst = worst_case_ids(n);
            let mut sorted = worst.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (1..=n as u64).collect::<Vec<_>>());
            let bound = n as u64 * alternate::max_steps(n as u64) + 2 * n as u64;
            for kind in [TopologyKind::RingBi, TopologyKind::RingUni] {
                for rule in [Rule::Max, Rule::Min] {
                    let cfg = SimConfig { fifo: n % 2 == 0, seed: n as u64, ..SimConfig::default() };
                    let w = run(kind, &worst, rule, &cfg);
                    assert_eq!((w.counters.messages, w.bound), (bound, bound), "n = {n}, {kind:?}, {rule:?}");
                    let b = run(kind, &IdOrder::Ascending.arrange(n).unwrap(), rule, &cfg);
                    assert_eq!(b.counters.messages, 4 * n as u64, "n = {n}");
                }
            }
        }
    }

    /// Exhaustively for n ≤ 8 (all initiating): no arrangement costs more
    /// than the worst-case construction, so it is the exact worst case there,
    /// and none costs less than ascending ids.
    #[test]
    fn worst_and_best_cases_are_exact_for_small_n() {
        for n in 2..=8u32 {
            let costs: Vec<u64> = ring_arrangements(n)
                .iter()
                .map(|ids| run(TopologyKind::RingBi, ids, Rule::Max, &SimConfig::default()).counters.messages)
                .collect();
            let worst = run(TopologyKind::RingBi, &worst_case_ids(n), Rule::Max, &SimConfig::default());
            assert_eq!(*costs.iter().max().unwrap(), worst.counters.messages, "n = {n}");
            assert_eq!(*costs.iter().min().unwrap(), 4 * n as u64, "n = {n}");
        }
    }

    /// The tempting bidirectional reading (odd stages min-wins to the right,
    /// even stages max-wins to the left) is quadratic: on descending ids it
    /// loses one candidate per stage, n stages, while BiMinMax's rule (always
    /// the left neighbour) takes three. Stage counts from a model of both
    /// rules; BiMinMax's is checked against the simulator (3n + 2n).
    #[test]
    fn alternating_directions_and_rules_is_quadratic() {
        // Survivors of each stage: `from_left` compares with the left
        // neighbour at every stage, otherwise with the right one at even stages.
        fn stages(ids: &[u64], from_left: bool) -> u64 {
            let mut cands: Vec<u64> = ids.to_vec();
            let mut s = 1u64;
            while cands.len() > 1 {
                let c = cands.len();
                let keep: Vec<u64> = (0..c)
                    .filter(|&i| {
                        let other = if s % 2 == 1 || from_left { cands[(i + c - 1) % c] } else { cands[(i + 1) % c] };
                        if s % 2 == 1 { cands[i] < other } else { cands[i] > other }
                    })
                    .map(|i| cands[i])
                    .collect();
                cands = keep;
                s += 1;
            }
            s
        }
        for n in [8u32, 50, 200] {
            let ids = IdOrder::Descending.arrange(n).unwrap();
            assert_eq!(stages(&ids, false), n as u64, "n = {n}");
            assert_eq!(stages(&ids, true), 3);
            let r = run(TopologyKind::RingBi, &ids, Rule::Max, &SimConfig::default());
            assert_eq!(r.counters.messages, 3 * n as u64 + 2 * n as u64);
        }
    }
}
