//! # Stages (Franklin 1982)
//!
//! * Source: W. R. Franklin, "On an improved algorithm for decentralized
//!   extrema finding in circular configurations of processors" (1982);
//!   Santoro ch. 3, "Stages" / "Electoral stages".
//! * Network: bidirectional ring, no orientation, **FIFO links** (the
//!   close-port technique below relies on it; the stage-buffering variant
//!   that does not is a separate algorithm).
//! * Winner: the maximum (Franklin), or the minimum when mirrored.
//! * Messages: at most 2n⌊log n⌋ + 2n election + n notification
//!   (each stage costs 2n and at most half the candidates survive one).
//!
//! In each stage every candidate sends its id both ways; defeated nodes
//! relay, so each id reaches the nearest candidate on each side. After the
//! first id a candidate closes that port (holding what arrives there), and
//! after the second it survives to the next stage if its own id beats both,
//! otherwise it is defeated; then it reopens the port and handles what it
//! held. A candidate that receives its own id is the only one left; once its
//! id is back from both sides (so no election message is in flight) it leads
//! and sends a notification round the ring.
//!
//! Corrections to Santoro's pseudo-code: the winner waits for its id from
//! both sides before notifying (the slide notifies on the first, and the
//! notification then races the second id, which a node that already became
//! follower swallows: the count then depends on the schedule); `min` must be reset to the own id
//! at every stage (the slide keeps the minimum across stages, which is only
//! harmless because survivors are their own minimum); the notification is
//! sent one way only (the slide sends it on both ports, costing n + 1 and
//! letting the two waves cross); messages held on the closed port must be
//! handled after the state change, including by a node that was just
//! defeated (it relays them).

use std::collections::VecDeque;

use super::oneshot::{self, Ending, OneShotNode};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, BI_RINGS, Candidates, Extras, Provision, ascending, bit_reversal,
    floor_log2, mirror,
};
use super::{AlgoError, Hold, Msg, NodeContext, Outbox, Port, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "stages",
    title: "Stages (Franklin)",
    source: "W. R. Franklin, On an improved algorithm for decentralized extrema finding in circular configurations \
             of processors, CACM 25(5), 1982; N. Santoro, Design and Analysis of Distributed Algorithms, \
             Wiley 2007, ch. 3 (Stages)",
    description: "Candidates send their id both ways to the nearest candidates; a candidate that \
                  beats both neighbours' ids survives to the next stage, so at most half survive.",
    topologies: BI_RINGS,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "2n*floor(log2 n) + 3n",
    bound: &|n, _| 2 * n * floor_log2(n) + 3 * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 388,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(Stages::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "bit-reversal order: for n = 2^p exactly half the candidates survive each stage (2n log n + 3n messages)",
            ids: |n, r| mirror(bit_reversal(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ASCENDING: only the extremum survives the first stage (5n messages)",
            ids: |n, _| ascending(n),
        }),
        ..Extras::NONE
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Asleep,
    Candidate,
    /// Got the first id of the stage on `closed`; waiting for the other side.
    Waiting {
        closed: Port,
    },
    Defeated,
    /// Its own id came back from one side; waiting for it from the other.
    Winning,
    /// Decided (what, `end` says); nothing can still be in flight but the
    /// notification.
    Done,
}

/// One node of Stages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stages {
    id: u64,
    rule: Rule,
    state: State,
    stage: u32,
    best: u64,
    held: VecDeque<(Port, Msg)>,
    end: Ending,
}

impl Stages {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        Stages {
            id: c.id,
            rule: c.rule,
            state: State::Asleep,
            stage: 0,
            best: c.id,
            held: VecDeque::new(),
            end: Ending::default(),
        }
    }

    fn next_stage(&mut self, out: &mut Outbox) {
        self.stage = self.stage.saturating_add(1);
        self.best = self.id;
        self.state = State::Candidate;
        oneshot::send_both(Msg::Election { id: self.id, stage: self.stage, hops: 0 }, out);
    }

    /// With FIFO links a candidate only ever hears ids of its own stage.
    fn check_stage(&self, id: u64, stage: u32) -> Result<(), AlgoError> {
        if stage != self.stage {
            return Err(AlgoError::Invalid(format!(
                "id {id} of stage {stage} reached a candidate in stage {} (links not FIFO?)",
                self.stage
            )));
        }
        Ok(())
    }
}

impl OneShotNode for Stages {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::Candidate => "candidate",
            State::Waiting { .. } => "waiting",
            State::Defeated => "defeated",
            State::Winning => "winning",
            State::Done => self.end.role_name(),
        }
    }

    fn held(&self) -> usize {
        self.held.len()
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.next_stage(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, stage, .. } => match self.state {
                State::Candidate if id == self.id => self.state = State::Winning,
                State::Winning if id == self.id => {
                    self.state = State::Done;
                    self.end.elect(id, out);
                }
                State::Winning => {
                    return Err(AlgoError::Invalid(format!("id {id} reached the last candidate {}", self.id)));
                }
                State::Candidate => {
                    self.check_stage(id, stage)?;
                    self.best = self.rule.best(self.best, id);
                    self.state = State::Waiting { closed: port };
                }
                State::Waiting { closed } if closed == port => self.held.hold((port, msg))?,
                State::Waiting { .. } => {
                    self.check_stage(id, stage)?;
                    self.best = self.rule.best(self.best, id);
                    if self.best == self.id {
                        self.next_stage(out);
                    } else {
                        self.state = State::Defeated;
                    }
                    // Reopen the closed port: handle what it held, in order.
                    while let Some((p, m)) = self.held.pop_front() {
                        self.receive(p, m, out)?;
                    }
                }
                State::Defeated => out.send(other(port), msg),
                // Nothing is in flight once the leader has both its ids back.
                State::Done => return Err(oneshot::after_the_end(id)),
                // Woken by the OneShotNode before it is handed an election message.
                State::Asleep => return Err(oneshot::misplaced(self.id, msg, self.state)),
            },
            Msg::Notify { leader } => match self.state {
                State::Done | State::Winning => {}
                State::Waiting { closed } if closed == port => self.held.hold((port, msg))?,
                _ => {
                    self.state = State::Done;
                    self.held.clear();
                    self.end.follow(port, leader, out);
                }
            },
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, election as el, ring, send};
    use crate::algo::{LEFT, RIGHT};

    /// A candidate beating both neighbours' ids starts the next stage.
    #[test]
    fn survivor_moves_to_next_stage() {
        Probe::started(ring(Stages::new, 5, Rule::Max)).on(LEFT, el(3, 1), &[]).on(
            RIGHT,
            el(4, 1),
            &[send(RIGHT, el(5, 2)), send(LEFT, el(5, 2))],
        );
    }

    /// What arrives on the closed port waits, and is relayed once the node is defeated.
    #[test]
    fn held_messages_are_relayed_after_defeat() {
        Probe::started(ring(Stages::new, 2, Rule::Max))
            .on(LEFT, el(3, 1), &[])
            .on(LEFT, el(3, 2), &[]) // stage-2 id held on the closed port
            .on(RIGHT, el(1, 1), &[send(RIGHT, el(3, 2))])
            .in_state("defeated");
    }

    /// An id of the wrong stage at a candidate is reported, not silently used.
    #[test]
    fn stage_mismatch_is_an_error() {
        Probe::started(ring(Stages::new, 2, Rule::Max)).refuses(LEFT, el(3, 4));
    }
}
