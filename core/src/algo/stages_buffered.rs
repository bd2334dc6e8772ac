//! # Stages without message ordering (Franklin, per-stage buffering)
//!
//! * Source: W. R. Franklin (1982); Santoro ch. 3, "Stages",
//!   section "Removing Message Ordering".
//! * Network: bidirectional ring, no orientation, **no FIFO**: every message
//!   carries its sender's stage, and a candidate stores the messages of later
//!   stages until it reaches them.
//! * Winner: the maximum (Franklin), or the minimum when mirrored.
//! * Messages: as Stages, at most 2n⌊log n⌋ + 2n election + n notification.
//!   The set of candidates of each stage depends only on the ids (every node
//!   is a stage-1 candidate, and stage i + 1's candidates are those of stage
//!   i that beat both nearest stage-i candidates), each stage costs exactly 2n
//!   while two or more candidates are left, and at most half survive one.
//!
//! A candidate of stage i waits for one stage-i id on each port (which ever
//! comes first); ids of later stages that arrive meanwhile are stored, not
//! relayed. With both in, it survives to stage i + 1 if its own id beats
//! both and then handles the stored ids of stage i + 1, or becomes defeated
//! and relays everything it stored. A candidate whose own id comes back (from
//! both sides) is the last one: it leads and sends a notification round.
//!
//! Corrections to Santoro's pseudo-code: the slide says a candidate "stores M
//! and processes it after all messages with stage i + 1, ..., j − 1 arrive"; a
//! candidate never receives messages of intermediate stages it skips (it is a
//! candidate of every stage up to its last), so the rule reduces to "handle
//! stage-j messages when reaching stage j, relay all stored ones when
//! defeated". A stored message must be relayed by a node that becomes defeated
//! (the slide is silent; dropping it loses the next stage's ids).

use super::oneshot::{self, CandidateStatus, Ending, OneShotNode};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, BI_RINGS, Candidates, Extras, Provision, ascending, bit_reversal,
    floor_log2, mirror,
};
use super::{AlgoError, Hold, Msg, NodeContext, Outbox, Port, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "stages-buffered",
    title: "Stages without message ordering",
    source: "W. R. Franklin, On an improved algorithm for decentralized extrema finding in circular configurations \
             of processors, CACM 25(5), 1982; N. Santoro, Design and Analysis of Distributed Algorithms, \
             Wiley 2007, ch. 3 (Stages, Removing Message Ordering)",
    description: "Stages on links that may reorder: every id carries its stage, and a candidate \
                  stores ids of later stages until it reaches them (relaying them if defeated).",
    topologies: BI_RINGS,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "2n*floor(log2 n) + 3n",
    bound: &|n, _| 2 * n * floor_log2(n) + 3 * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 386,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(StagesBuffered::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "bit-reversal order, as Stages: for n = 2^p exactly half the candidates survive each stage (2n log n + 3n messages)",
            ids: |n, r| mirror(bit_reversal(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ASCENDING: only the extremum survives the first stage (5n messages)",
            ids: |n, _| ascending(n),
        }),
        ..Extras::NONE
    },
};

/// One node of Stages with per-stage buffering.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StagesBuffered {
    id: u64,
    rule: Rule,
    state: CandidateStatus,
    stage: u32,
    /// The stage-`stage` id received on each port.
    got: [Option<u64>; 2],
    /// Messages of later stages, in arrival order.
    stored: Vec<(Port, Msg)>,
    end: Ending,
}

impl StagesBuffered {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        StagesBuffered {
            id: c.id,
            rule: c.rule,
            state: CandidateStatus::Asleep,
            stage: 0,
            got: [None, None],
            stored: Vec::new(),
            end: Ending::default(),
        }
    }

    fn next_stage(&mut self, out: &mut Outbox) -> Result<(), AlgoError> {
        self.stage = self.stage.saturating_add(1);
        self.state = CandidateStatus::Candidate;
        self.got = [None, None];
        oneshot::send_both(Msg::Election { id: self.id, stage: self.stage, hops: 0 }, out);
        // Handle what was stored, in arrival order: ids of the new stage
        // count now, later ones are stored again (a port carries one id per
        // stage, so none can belong to a stage this node has already left).
        for (port, msg) in std::mem::take(&mut self.stored) {
            self.receive(port, msg, out)?;
        }
        Ok(())
    }
}

impl OneShotNode for StagesBuffered {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        self.state.name(&self.end)
    }

    fn held(&self) -> usize {
        self.stored.len()
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        // Nothing is stored yet, so starting the first stage cannot fail.
        let _ = self.next_stage(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, stage, .. } => match self.state {
                CandidateStatus::Candidate if stage > self.stage => self.stored.hold((port, msg))?,
                CandidateStatus::Candidate if stage < self.stage => {
                    return Err(AlgoError::Invalid(format!(
                        "id {id} of stage {stage} reached a candidate in stage {}",
                        self.stage
                    )));
                }
                CandidateStatus::Candidate => {
                    if self.got[port as usize].is_some() {
                        return Err(AlgoError::Invalid(format!("two stage-{stage} ids on port {port}")));
                    }
                    self.got[port as usize] = Some(id);
                    if let [Some(a), Some(b)] = self.got {
                        if a == self.id && b == self.id {
                            self.state = CandidateStatus::Done;
                            self.stored.clear();
                            self.end.elect(self.id, out);
                        } else if self.rule.best(self.rule.best(a, b), self.id) == self.id {
                            self.next_stage(out)?;
                        } else {
                            self.state = CandidateStatus::Defeated;
                            oneshot::relay_held(&mut self.stored, out);
                        }
                    }
                }
                CandidateStatus::Defeated => out.send(other(port), msg),
                // The last candidate has both its ids back: nothing is in flight.
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
    use crate::algo::harness::{Probe, decide, election as el, ring, send};
    use crate::algo::{LEFT, RIGHT, Role};

    /// An id of a later stage that overtakes the current stage's id is stored,
    /// then used once the node reaches that stage.
    #[test]
    fn later_stage_id_is_stored_and_used_at_its_stage() {
        let p = Probe::started(ring(StagesBuffered::new, 5, Rule::Max))
            .on(LEFT, el(3, 2), &[])
            .on(LEFT, el(4, 1), &[])
            .on(RIGHT, el(2, 1), &[send(RIGHT, el(5, 2)), send(LEFT, el(5, 2))]);
        assert_eq!((p.node.stage, p.node.got), (2, [Some(3), None]), "the stored stage-2 id counts for stage 2");
    }

    /// A node defeated with stored ids relays them, each away from the port it came on.
    #[test]
    fn defeated_node_relays_stored_ids() {
        Probe::started(ring(StagesBuffered::new, 2, Rule::Max))
            .on(RIGHT, el(7, 2), &[])
            .on(LEFT, el(6, 1), &[])
            .on(RIGHT, el(1, 1), &[send(LEFT, el(7, 2))])
            .in_state("defeated");
    }

    /// The own id back from both sides makes the node leader and starts one notification.
    #[test]
    fn own_id_from_both_sides_elects() {
        let notify = send(RIGHT, Msg::Notify { leader: 9 });
        Probe::started(ring(StagesBuffered::new, 9, Rule::Max)).on(RIGHT, el(9, 1), &[]).on(
            LEFT,
            el(9, 1),
            &[decide(Role::Leader, 9), notify],
        );
    }

    /// Two ids of one stage on one port contradict the algorithm and are reported.
    #[test]
    fn duplicate_stage_id_is_an_error() {
        Probe::started(ring(StagesBuffered::new, 5, Rule::Max)).on(LEFT, el(3, 1), &[]).refuses(LEFT, el(4, 1));
    }
}
