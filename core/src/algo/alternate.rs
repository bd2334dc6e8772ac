//! # Alternate (Alternating Steps)
//!
//! * Source: Santoro ch. 3, "Alternating Steps" (after G. L. Peterson 1982 and
//!   D. Dolev, M. Klawe, M. Rodeh 1982).
//! * Network: bidirectional **oriented** ring (every node's `RIGHT` is the
//!   same way round), **FIFO links**.
//! * Winner: the maximum, or the minimum when mirrored (Santoro elects the
//!   minimum).
//! * Messages: n per step, at most n·T(n) election + n notification, where
//!   T(n) = max{k : G_k ≤ n} with G_1 = 1, G_2 = 2, G_k = G_(k−1) + G_(k−2)
//!   (1, 2, 3, 5, 8, ...): about 1.44 n log n.
//!
//! Every node is a candidate of step 1 (a sleeping node wakes on the first
//! id, which is a step-1 id on FIFO links). At odd steps candidates send their
//! id right, at even steps left; defeated nodes relay. A candidate compares
//! the id it receives at its step with its own: if its own beats it, it goes
//! on to the next step, otherwise it is defeated. Ids of later steps that
//! arrive first (a survivor on the other side may already be a step ahead)
//! are held until the node reaches their step, or relayed if it is defeated.
//! The candidate whose own id comes back is the last: it leads and sends one
//! notification round.
//!
//! Why T(n): let c_s be the number of candidates at step s and T the step
//! whose single candidate sees its own id come back. c_T = 1, c_(T−1) ≥ 2, and
//! c_s ≥ c_(s+1) + c_(s+2): map each x still a candidate at step s + 2 to the
//! step-s candidate u just before x's neighbour v at step s + 1 (before in
//! step s's sending direction). x beat v at step s + 1 and v beat u at step s,
//! so u ≠ x, u lies between x and v, and u was defeated at step s: distinct
//! x give distinct defeated u. Hence c_(T−j+1) ≥ G_j and n = c_1 ≥ G_T.
//! Each step's ids cross every link once (each travels to the next candidate
//! in the step's direction), so a step costs n.
//!
//! Corrections to Santoro's pseudo-code: the leader's `send(Notify) to N(x)`
//! goes both ways (n + 1 messages, two waves crossing); it is sent one way here
//! (n). The slide's close-port/open-port pair is realised by holding ids of
//! later steps; a node defeated while holding ids must relay them (the slide's
//! `open(other)` does, implicitly). The slide leaves the worst case at "steps =
//! index of the lowest Fibonacci number ≥ n"; the argument above gives the
//! largest G_k ≤ n, one step fewer when n is not a G_k, and the conformance
//! suite checks that bound is attained for n = 2, 3, 5, 8.

use super::oneshot::{self, CandidateStatus, Ending, OneShotNode};
use crate::spec::{AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, Provision, descending, mirror};
use super::{AlgoError, Hold, LEFT, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "alternate",
    title: "Alternate (Alternating Steps)",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 (Alternating Steps), \
             after G. L. Peterson, An O(n log n) unidirectional algorithm for the circular extrema problem, \
             ACM TOPLAS 4(4), 1982 and D. Dolev, M. Klawe, M. Rodeh, An O(n log n) unidirectional distributed \
             algorithm for extrema finding in a circle, J. Algorithms 3(3), 1982",
    description: "Candidates send their id right at odd steps and left at even steps, and survive \
                  a step if their id beats the one they receive; the candidates of three \
                  consecutive steps follow Fibonacci, so about 1.44 log n steps of n messages.",
    topologies: &[TopologyKind::RingBi],
    assumptions: Assumptions { bidirectional: true, oriented: true, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n*T(n) + n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
    bound: &|n, _| n * max_steps(n) + n,
    timer_events: |_| 0,
    heap_bytes_per_position: 276,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(Alternate::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "Fibonacci construction: each step keeps exactly G_(k-1) of G_k candidates (A_(k+1) = A_k reversed plus a smallest id after each descent), so T(n) steps: n*T(n) + n, the bound, for every n",
            ids: |n, r| mirror(worst_case_ids(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids decreasing in the step-1 direction (DESCENDING for max): only the extremum survives step 1, 3n messages, the least possible",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        ..Extras::NONE
    },
};

/// The largest k with G_k ≤ n, where G = 1, 2, 3, 5, 8, ... (0 for n = 0):
/// the most steps Alternate can take on n nodes.
pub fn max_steps(n: u64) -> u64 {
    let (mut a, mut b, mut k) = (1u64, 2u64, 0u64);
    while a <= n {
        (a, b) = (b, a + b);
        k += 1;
    }
    k
}

/// An arrangement of 1..=n (ring order, max rule) on which Alternate takes
/// T(n) steps, the most possible, so it sends exactly n·T(n) + n messages.
///
/// Built from A_2 = [1, 2] upwards. Given A_k (G_k ids, G_(k−1) of which
/// survive step 1, those beating their left neighbour), A_(k+1) is A_k
/// reversed with a new smallest id inserted after each of its G_(k−1)
/// descents: the inserted ids lose step 1 to their left neighbours, every
/// other node beats its left neighbour and survives, and the survivors,
/// read in the ring order reversed, are A_k, which step 2 (going left) then
/// runs from its own step 1. So A_(k+1) has G_k survivors and one step more.
/// For G_k < n < G_(k+1), n − G_k further smallest ids go, in decreasing
/// order, between two nodes of A_k where the right one beats the left one
/// (that node survives step 1 either way): still T(n) = k steps.
pub fn worst_case_ids(n: u32) -> Vec<u64> {
    let n = n as usize;
    if n <= 1 {
        return vec![1; n];
    }
    let mut a: Vec<u64> = vec![1, 2];
    loop {
        let m = a.len();
        let r: Vec<u64> = a.iter().rev().copied().collect();
        let descents = (0..m).filter(|&i| r[i] > r[(i + 1) % m]).count();
        if m + descents > n {
            break;
        }
        let mut next = Vec::with_capacity(m + descents);
        let mut loser = 0u64;
        for i in 0..m {
            next.push(r[i] + descents as u64);
            if r[i] > r[(i + 1) % m] {
                loser += 1;
                next.push(loser);
            }
        }
        a = next;
    }
    let extra = n - a.len();
    let m = a.len();
    let at = (0..m).find(|&i| a[i] < a[(i + 1) % m]).expect("two or more distinct ids have an ascent");
    let mut out: Vec<u64> = a.iter().map(|&v| v + extra as u64).collect();
    out.splice(at + 1..at + 1, (1..=extra as u64).rev());
    out
}

/// One node of Alternate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alternate {
    id: u64,
    rule: Rule,
    state: CandidateStatus,
    step: u32,
    held: Vec<(Port, Msg)>,
    end: Ending,
}

/// The port a step's ids go out on: odd steps right, even steps left.
fn out_port(step: u32) -> Port {
    if step % 2 == 1 { RIGHT } else { LEFT }
}

impl Alternate {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        Alternate {
            id: c.id,
            rule: c.rule,
            state: CandidateStatus::Asleep,
            step: 0,
            held: Vec::new(),
            end: Ending::default(),
        }
    }

    fn next_step(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        self.step = self.step.saturating_add(1);
        self.state = CandidateStatus::Candidate;
        out.send(out_port(self.step), Msg::Election { id: self.id, stage: self.step, hops: 0 });
        for (port, msg) in std::mem::take(&mut self.held) {
            self.receive(port, msg, out)?;
        }
        Ok(())
    }
}

impl OneShotNode for Alternate {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        self.state.name(&self.end)
    }

    fn held(&self) -> usize {
        self.held.len()
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        // Nothing is held yet, so starting the first step cannot fail.
        let _ = self.next_step(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, stage, .. } => match self.state {
                CandidateStatus::Candidate if stage > self.step => self.held.hold((port, msg))?,
                CandidateStatus::Candidate if stage < self.step || port != other(out_port(self.step)) => {
                    return Err(AlgoError::Invalid(format!(
                        "id {id} of step {stage} on port {port} reached a candidate at step {} (links not FIFO?)",
                        self.step
                    )));
                }
                CandidateStatus::Candidate if id == self.id => {
                    self.state = CandidateStatus::Done;
                    self.held.clear();
                    self.end.elect(id, out);
                }
                CandidateStatus::Candidate if self.rule.beats(self.id, id) => self.next_step(out)?,
                CandidateStatus::Candidate => {
                    self.state = CandidateStatus::Defeated;
                    oneshot::relay_held(&mut self.held, out);
                }
                CandidateStatus::Defeated => out.send(other(port), msg),
                CandidateStatus::Done => return Err(oneshot::after_the_end(id)),
                // Woken by the OneShotNode before it is handed an election message.
                CandidateStatus::Asleep => return Err(oneshot::misplaced(self.id, msg, self.state)),
            },
            Msg::Notify { leader } => self.state.notified(&mut self.end, self.id, port, leader, out)?,
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, election as el, ring, send};

    /// Step 1 goes right; a survivor of step 1 sends its id left at step 2.
    #[test]
    fn steps_alternate_directions() {
        Probe::new(ring(Alternate::new, 5, Rule::Max)).start(&[send(RIGHT, el(5, 1))]).on(
            LEFT,
            el(3, 1),
            &[send(LEFT, el(5, 2))],
        );
    }

    /// The node beaten by the arriving id is defeated, and relays the ids it held.
    #[test]
    fn beaten_node_is_defeated_and_relays_held_ids() {
        Probe::started(ring(Alternate::new, 5, Rule::Max))
            .on(RIGHT, el(8, 2), &[]) // a step-2 id waits for step 1
            .on(LEFT, el(7, 1), &[send(LEFT, el(8, 2))])
            .in_state("defeated");
    }

    /// A held id of the next step is used as soon as the node gets there.
    #[test]
    fn held_id_is_used_at_its_step() {
        Probe::started(ring(Alternate::new, 5, Rule::Max)).on(RIGHT, el(2, 2), &[]).on(
            LEFT,
            el(3, 1),
            &[send(LEFT, el(5, 2)), send(RIGHT, el(5, 3))],
        );
    }

    /// The worst-case construction: A_3 = [3, 1, 2], A_5 reverses it and adds
    /// a loser after each descent; padding goes after an ascent.
    #[test]
    fn worst_case_construction() {
        assert_eq!(worst_case_ids(2), vec![1, 2]);
        assert_eq!(worst_case_ids(3), vec![3, 1, 2]);
        assert_eq!(worst_case_ids(4), vec![4, 2, 1, 3]);
        assert_eq!(worst_case_ids(5), vec![4, 1, 3, 5, 2]);
    }

    /// T(n) is the index of the largest of 1, 2, 3, 5, 8, ... not above n.
    #[test]
    fn max_steps_follows_fibonacci() {
        let t: Vec<u64> = [1, 2, 3, 4, 5, 7, 8, 12, 13, 21].iter().map(|&n| max_steps(n)).collect();
        assert_eq!(t, vec![1, 2, 3, 3, 4, 4, 5, 5, 6, 7]);
    }
}
