//! # Controlled Distance (Hirschberg-Sinclair 1980)
//!
//! * Source: D. S. Hirschberg, J. B. Sinclair, "Decentralized extrema-finding
//!   in circular configurations of processors", CACM 23(11), 1980 (HS);
//!   Santoro ch. 3, "Controlled distance".
//! * Network: bidirectional ring, no orientation, no FIFO.
//! * Winner: the maximum (HS), or the minimum when mirrored.
//! * Messages: at most 8n(1 + ⌈log n⌉) election messages (Lynch's analysis)
//!   + n notification. Ideal time O(n).
//!
//! A candidate in stage s sends a probe both ways that may cross 2^(s-1)
//! links. Every node on the way compares (as in HS): a probe whose id does
//! not beat the node's own id is swallowed; otherwise the node (now defeated
//! if it was a candidate or asleep) relays it, or sends a reply back when the
//! probe has no distance left. A candidate whose two probes both come back
//! starts the next stage; a candidate that receives its own probe has sent it
//! all the way round and is the leader; it sends a notification round.
//!
//! Corrections to the pseudo-code of Santoro's slides:
//! * `CHECK` advances the stage when `count = 1`, i.e. after the first reply;
//!   a candidate must wait for the replies from *both* sides, else it
//!   survives on one side's evidence (a better id on the other side is never
//!   heard of, and two leaders can result).
//! * A `DEFEATED` node forwards "everything to the other side"; probes must
//!   still have their distance counted down and be bounced back at the limit
//!   by relays, or they travel past their stage's distance.
//! * Stray messages: a reply that reaches its originator after the
//!   originator was defeated, and probes or replies that reach a node after
//!   the election ended, are swallowed.

use super::oneshot::{self, CandidateStatus, Ending, OneShotNode, Wake};
use crate::spec::{AlgorithmSpec, Assumptions, BI_RINGS, Candidates, Extras, Provision, ceil_log2};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "controlled-distance",
    title: "Controlled Distance (Hirschberg-Sinclair)",
    source: "D. S. Hirschberg, J. B. Sinclair, Decentralized extrema-finding in circular configurations of \
             processors, CACM 23(11), 1980; N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, \
             ch. 3 (Controlled Distance)",
    description: "Candidates probe both ways to distance 2^(stage-1) and survive when both probes \
                  come back; a probe that travels all the way round elects its owner.",
    topologies: BI_RINGS,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "8n(1+ceil(log2 n)) + n",
    bound: &|n, _| 8 * n * (1 + ceil_log2(n)) + n,
    timer_events: |_| 0,
    heap_bytes_per_position: 336,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(ControlledDistance::new),
    extras: Extras::NONE,
};

/// One node of Controlled Distance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ControlledDistance {
    id: u64,
    rule: Rule,
    state: CandidateStatus,
    stage: u32,
    replies: u8,
    end: Ending,
}

/// Distance of stage `s` (1-based): 2^(s-1), saturating.
fn distance(stage: u32) -> u32 {
    1u32.checked_shl(stage.saturating_sub(1)).unwrap_or(u32::MAX)
}

impl ControlledDistance {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        ControlledDistance {
            id: c.id,
            rule: c.rule,
            state: CandidateStatus::Asleep,
            stage: 0,
            replies: 0,
            end: Ending::default(),
        }
    }

    fn probe_both(&mut self, out: &mut Outbox) {
        self.stage = self.stage.saturating_add(1);
        self.replies = 0;
        oneshot::send_both(Msg::Probe { id: self.id, stage: self.stage, limit: distance(self.stage) }, out);
    }

    /// Relay a probe that beats this node: onwards, or back at the limit.
    fn relay_probe(port: Port, id: u64, stage: u32, limit: u32, out: &mut Outbox) {
        let left = limit.saturating_sub(1);
        if left == 0 {
            out.send(port, Msg::Reply { id, stage });
        } else {
            out.send(other(port), Msg::Probe { id, stage, limit: left });
        }
    }

    fn probe(&mut self, port: Port, id: u64, stage: u32, limit: u32, out: &mut Outbox) {
        match self.state {
            CandidateStatus::Done => {}
            CandidateStatus::Candidate if id == self.id => {
                self.state = CandidateStatus::Done;
                self.end.elect(id, out);
            }
            // Own probe back after defeat cannot happen with distinct ids
            // (the best node swallows it); swallow it anyway.
            CandidateStatus::Defeated if id == self.id => {}
            _ if self.rule.beats(id, self.id) => {
                self.state = CandidateStatus::Defeated;
                Self::relay_probe(port, id, stage, limit, out);
            }
            CandidateStatus::Asleep => {
                self.state = CandidateStatus::Candidate;
                self.probe_both(out);
            }
            // Worse probes are swallowed by candidates and relays alike.
            CandidateStatus::Candidate | CandidateStatus::Defeated => {}
        }
    }
}

impl OneShotNode for ControlledDistance {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::InStep;

    fn status(&self) -> &'static str {
        self.state.name(&self.end)
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.state = CandidateStatus::Candidate;
        self.probe_both(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Probe { id, stage, limit } => self.probe(port, id, stage, limit, out),
            Msg::Reply { id, stage } => match self.state {
                CandidateStatus::Done => {}
                CandidateStatus::Defeated if id != self.id => out.send(other(port), msg),
                CandidateStatus::Defeated => {}
                CandidateStatus::Candidate if id == self.id => {
                    if stage != self.stage {
                        return Err(AlgoError::Invalid(format!(
                            "reply of stage {stage} reached its candidate in stage {}",
                            self.stage
                        )));
                    }
                    self.replies += 1;
                    if self.replies == 2 {
                        self.probe_both(out);
                    }
                }
                CandidateStatus::Candidate | CandidateStatus::Asleep => {
                    return Err(AlgoError::Invalid(format!(
                        "reply for {id} reached a node ({}) that never relayed its probe",
                        self.status()
                    )));
                }
            },
            Msg::Notify { leader } => {
                self.state = CandidateStatus::Done;
                self.end.notified(port, leader, out);
            }
            _ => {
                return Err(Self::unexpected(msg));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, ring, send};
    use crate::algo::{LEFT, RIGHT, Role};

    fn probe(id: u64, stage: u32, limit: u32) -> Msg {
        Msg::Probe { id, stage, limit }
    }

    /// Stage s probes both ways with distance 2^(s-1), and only after both replies.
    #[test]
    fn stages_wait_for_both_replies() {
        let (p1, p2) = (probe(5, 1, 1), probe(5, 2, 2));
        Probe::new(ring(ControlledDistance::new, 5, Rule::Max))
            .start(&[send(RIGHT, p1), send(LEFT, p1)])
            .on(LEFT, Msg::Reply { id: 5, stage: 1 }, &[])
            .on(RIGHT, Msg::Reply { id: 5, stage: 1 }, &[send(RIGHT, p2), send(LEFT, p2)]);
    }

    /// A relay counts the distance down and bounces the probe at the limit.
    #[test]
    fn relays_count_down_and_bounce() {
        Probe::new(ring(ControlledDistance::new, 1, Rule::Max))
            .on(LEFT, probe(5, 2, 2), &[send(RIGHT, probe(5, 2, 1))])
            .in_state("defeated")
            .on(RIGHT, probe(7, 1, 1), &[send(RIGHT, Msg::Reply { id: 7, stage: 1 })]);
    }

    /// A sleeping node woken by a worse probe swallows it and becomes a candidate.
    #[test]
    fn worse_probe_wakes_a_candidate() {
        let own = probe(9, 1, 1);
        Probe::new(ring(ControlledDistance::new, 9, Rule::Max))
            .on(LEFT, probe(5, 1, 1), &[send(RIGHT, own), send(LEFT, own)])
            .in_state("candidate");
    }

    /// Its own probe arriving makes a candidate leader and starts the notification.
    #[test]
    fn own_probe_elects() {
        let notify = send(RIGHT, Msg::Notify { leader: 9 });
        Probe::started(ring(ControlledDistance::new, 9, Rule::Max)).on(
            LEFT,
            probe(9, 1, 1),
            &[decide(Role::Leader, 9), notify],
        );
    }
}
