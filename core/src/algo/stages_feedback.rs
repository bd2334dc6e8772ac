//! # Stages with Feedback
//!
//! * Source: Santoro ch. 3 slides, "Stages with Feedback"; N. Santoro,
//!   Design and Analysis of Distributed Algorithms (Wiley 2007), §3.8.
//! * Network: bidirectional ring, no orientation, **FIFO links** (a missing
//!   feedback is detected by the next stage's id overtaking it, see below).
//! * Winner: the maximum (as Franklin's Stages), or the minimum when mirrored
//!   (Santoro elects the minimum).
//! * Messages: at most 3n⌊log₃ n⌋ + 5n election and feedback + n
//!   notification. While c ≥ 2 candidates are left, a stage costs 2n ids (each
//!   id travels to the nearest candidate) and at most n feedbacks (at most one
//!   per segment between neighbouring candidates: both ends cannot beat each
//!   other). A survivor s beats its neighbouring candidates r(s), l(s) and
//!   their other neighbours r²(s), l²(s); neither r(s) nor r²(s) can survive
//!   (r²(s) would have to beat s, which beats it), so survivors come with two
//!   distinct non-survivors each: c' ≤ c/3 for c ≥ 3, and 2 candidates leave 1.
//!   From n candidates at most ⌊log₃(n/2)⌋ + 1 ≤ ⌊log₃ n⌋ + 1 stages have two
//!   or more candidates; the last one's ids go round (2n). Santoro's figure is
//!   1.89 n log n + O(n) (3 log₃ 2 = 1.893).
//!
//! Each stage, candidates send their id both ways (defeated nodes relay). A
//! candidate x with ids y and z from its two sides sends a positive feedback
//! back to y if y beats x and z, and to z if z beats x and y; it survives the
//! stage only if it gets a feedback from both sides. A candidate beaten by a
//! neighbour is defeated at once. One that beats both waits: either both
//! feedbacks come (next stage) or an id of a later stage arrives on a side
//! that sent no feedback (on FIFO links the feedback would have come first),
//! which defeats it (Santoro: "it works like a negative feedback"). Ids of a
//! later stage that arrive before the node is done with its stage are held.
//! The candidate whose own id comes back from both sides leads and sends a
//! notification round.
//!
//! Corrections to Santoro's pseudo-code: the slide's condition for the feedback
//! to z reads `id(z) < MIN(id(x), id(z))`, which is never true: no candidate
//! would ever get feedback from its left and nobody would survive stage 1 (no
//! leader on any ring of 3 or more). It must be `id(z) < MIN(id(x), id(y))`
//! (regression test `feedback_goes_to_the_side_that_beats_both`). With two
//! candidates left, y = z and neither condition holds, so the winner would
//! starve: the loser sends its feedback on both sides (test
//! `two_candidates_left`). Ids of the next stage can reach a candidate still
//! collecting its own stage's ids (a survivor two candidates away is already
//! one stage ahead): they are held, not relayed, since that candidate still
//! owes feedback.

use super::oneshot::{self, Ending, OneShotNode};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, BI_RINGS, Candidates, Extras, Provision, feedback_worst_case, floor_log3,
    mirror, zigzag,
};
use super::{AlgoError, Hold, LEFT, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "stages-feedback",
    title: "Stages with Feedback",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 (Stages with Feedback)",
    description: "Stages where a candidate sends a positive feedback to the neighbouring candidate \
                  whose id beats its own and the other neighbour's; only candidates with feedback \
                  from both sides survive, so at most a third do.",
    topologies: BI_RINGS,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "3n*floor(log3 n) + 6n",
    bound: &|n, _| 3 * n * floor_log3(n) + 6 * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 383,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(StagesFeedback::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "ternary construction (`feedback_worst_case`): the most stages, the last with two candidates, survivors the only local maxima, missing feedback on the shortest segments: 12 messages at n = 2, 6n - 1 at n = 3..5 (17, 23 and 29: one stage), otherwise 3n(k+1) - 2(k-1)3^(k-2), k = max{k : 2*3^(k-1) <= n}; the exhaustive maximum for n <= 8, not beaten by random or hill-climbing search (no published worst case)",
            ids: |n, r| mirror(feedback_worst_case(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "zigzag (`zigzag`: ascending with the pairs before the maximum swapped): floor(n/2) local maxima, so only ceil(n/2) feedbacks, and only the extremum survives stage 1: 5n + ceil(n/2) messages for n >= 3, the least possible",
            ids: |n, r| mirror(zigzag(n), n, r),
        }),
        ..Extras::NONE
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Asleep,
    /// Collecting the stage's ids.
    Candidate,
    /// Beat both neighbours; waiting for their feedback.
    Waiting,
    Defeated,
    Leader,
    Follower,
}

/// One node of Stages with Feedback.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StagesFeedback {
    id: u64,
    rule: Rule,
    state: State,
    stage: u32,
    got: [Option<u64>; 2],
    feedback: [bool; 2],
    held: Vec<(Port, Msg)>,
    end: Ending,
}

impl StagesFeedback {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        StagesFeedback {
            id: c.id,
            rule: c.rule,
            state: State::Asleep,
            stage: 0,
            got: [None, None],
            feedback: [false, false],
            held: Vec::new(),
            end: Ending::default(),
        }
    }

    fn next_stage(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        self.stage = self.stage.saturating_add(1);
        self.state = State::Candidate;
        self.got = [None, None];
        self.feedback = [false, false];
        oneshot::send_both(Msg::Election { id: self.id, stage: self.stage, hops: 0 }, out);
        self.replay(out)
    }

    /// Handle the held messages again in the current state, in arrival order.
    fn replay(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        for (port, msg) in std::mem::take(&mut self.held) {
            self.receive(port, msg, out)?;
        }
        Ok(())
    }

    fn defeat(&mut self, out: &mut Outbox) {
        self.state = State::Defeated;
        oneshot::relay_held(&mut self.held, out);
    }

    /// Does the id `a` from one side earn this node's feedback, `b` being the other side's?
    fn earns_feedback(&self, a: u64, b: u64) -> bool {
        self.rule.beats(a, self.id) && (a == b || self.rule.beats(a, b))
    }

    fn collected(&mut self, a: [u64; 2], out: &mut Outbox) -> Result<(), AlgoError> {
        if a == [self.id, self.id] {
            self.state = State::Leader;
            self.end.elect(self.id, out);
            return Ok(());
        }
        for p in [LEFT, RIGHT] {
            if self.earns_feedback(a[p as usize], a[other(p) as usize]) {
                out.send(p, Msg::Feedback { id: a[p as usize], stage: self.stage });
            }
        }
        if self.rule.beats(self.id, a[0]) && self.rule.beats(self.id, a[1]) {
            self.state = State::Waiting;
            if self.feedback == [true, true] {
                return self.next_stage(out);
            }
            self.replay(out)
        } else {
            self.defeat(out);
            Ok(())
        }
    }
}

impl OneShotNode for StagesFeedback {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::Candidate => "candidate",
            State::Waiting => "waiting",
            State::Defeated => "defeated",
            State::Leader => "leader",
            State::Follower => "follower",
        }
    }

    fn held(&self) -> usize {
        self.held.len()
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        // Nothing is held yet, so starting the first stage cannot fail.
        let _ = self.next_stage(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let invalid = |what: String| Err(AlgoError::Invalid(what));
        match (msg, self.state) {
            (Msg::Election { stage, .. }, State::Candidate | State::Waiting) if stage > self.stage => {
                self.held.hold((port, msg))?;
                if self.state == State::Waiting && !self.feedback[port as usize] {
                    // FIFO: the neighbour's feedback would have come before this.
                    self.defeat(out);
                }
                Ok(())
            }
            (Msg::Election { id, stage, .. }, State::Candidate) if stage == self.stage => {
                if self.got[port as usize].is_some() {
                    return invalid(format!("two stage-{stage} ids on port {port} at {}", self.id));
                }
                self.got[port as usize] = Some(id);
                match self.got {
                    [Some(l), Some(r)] => self.collected([l, r], out),
                    _ => Ok(()),
                }
            }
            (Msg::Feedback { id, stage }, State::Candidate | State::Waiting)
                if id == self.id && stage == self.stage =>
            {
                self.feedback[port as usize] = true;
                if self.state == State::Waiting && self.feedback == [true, true] {
                    self.next_stage(out)?;
                }
                Ok(())
            }
            (Msg::Feedback { id, .. }, State::Defeated) if id == self.id => Ok(()),
            (Msg::Election { .. } | Msg::Feedback { .. }, State::Defeated) => {
                out.send(other(port), msg);
                Ok(())
            }
            (Msg::Notify { leader }, State::Defeated) => {
                self.state = State::Follower;
                self.end.follow(port, leader, out);
                Ok(())
            }
            (Msg::Notify { .. }, State::Leader) => Ok(()),
            (Msg::Probe { .. } | Msg::Reply { .. }, _) => Err(Self::unexpected(msg)),
            (msg, state) => invalid(format!("{msg:?} reached {} in state {state:?}, stage {}", self.id, self.stage)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, election as el, ring_context, send};

    fn node(id: u64, rule: Rule) -> StagesFeedback {
        StagesFeedback::new(&ring_context(id, rule))
    }

    fn feedback(id: u64) -> Msg {
        Msg::Feedback { id, stage: 1 }
    }

    /// Regression for the slide's typo `id(z) < MIN(id(x), id(z))`: a candidate
    /// (min rule, as Santoro) sends its feedback to the side whose id beats
    /// both its own and the other side's, whichever side that is.
    #[test]
    fn feedback_goes_to_the_side_that_beats_both() {
        for (left, right, port) in [(3, 7, LEFT), (7, 3, RIGHT)] {
            Probe::started(node(5, Rule::Min))
                .on(LEFT, el(left, 1), &[])
                .on(RIGHT, el(right, 1), &[send(port, feedback(3))])
                .in_state("defeated");
        }
    }

    /// No feedback to a side that does not beat the other side too.
    #[test]
    fn no_feedback_to_a_side_beaten_by_the_other() {
        Probe::started(node(5, Rule::Min)).on(LEFT, el(3, 1), &[]).on(RIGHT, el(2, 1), &[send(RIGHT, feedback(2))]);
    }

    /// With two candidates left (same id on both sides) the loser sends its
    /// feedback both ways, and the winner moves on after both feedbacks.
    #[test]
    fn two_candidates_left() {
        Probe::started(node(4, Rule::Max)).on(LEFT, el(9, 1), &[]).on(
            RIGHT,
            el(9, 1),
            &[send(LEFT, feedback(9)), send(RIGHT, feedback(9))],
        );
        Probe::started(node(9, Rule::Max))
            .on(LEFT, el(4, 1), &[])
            .on(RIGHT, el(4, 1), &[])
            .in_state("waiting")
            .on(LEFT, feedback(9), &[])
            .on(RIGHT, feedback(9), &[send(RIGHT, el(9, 2)), send(LEFT, el(9, 2))]);
    }

    /// A waiting candidate defeated by a later-stage id on a side that sent
    /// no feedback relays it; one from a side that did is held for its next stage.
    #[test]
    fn later_stage_id_acts_as_negative_feedback() {
        Probe::started(node(9, Rule::Max))
            .on(LEFT, el(4, 1), &[])
            .on(RIGHT, el(5, 1), &[])
            .on(LEFT, feedback(9), &[])
            .on(LEFT, el(12, 2), &[]) // held: the left side sent its feedback
            .on(RIGHT, el(11, 2), &[send(RIGHT, el(12, 2)), send(LEFT, el(11, 2))])
            .in_state("defeated");
    }
}
