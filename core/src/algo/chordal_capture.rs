//! # Chordal capture: election on a complete network with chordal labels
//!
//! * Source: N. Santoro, *Design and Analysis of Distributed Algorithms*,
//!   Wiley 2007, ch. 3, "Election in Complete Networks", complete networks
//!   with chordal sense of direction (O(n) messages); the capture of
//!   territories by jumping over them along chords is the idea of M. C.
//!   Loui, T. A. Matsushita, D. B. West, "Election in a complete network with
//!   a sense of direction", Inf. Process. Lett. 22(4), 1986. This file is
//!   Ringleader's own protocol on that idea, with its count derived below.
//! * Network: the complete network with chordal labels (the
//!   [`TopologyKind::CompleteChordal`] overlay): port p of every position
//!   leads p + 1 positions further round the same Hamiltonian cycle, so a
//!   node reaches the position d further on in one message, on port d − 1.
//!   Bidirectional links, no FIFO needed; a node knows n (its ports + 1),
//!   not the ids.
//! * Winner: the best initiator's id under the rule (max by default);
//!   nodes that do not initiate never compete.
//! * Messages: 3(n − 1) + 2R, R ≤ k − 1 the refused captures: at most
//!   3n + 2k − 5, exactly 3n − 3 with one initiator. Ideal time O(n): no
//!   causal chain is longer than the message count.
//!
//! **Territories.** The positions round the cycle of chords of length 1
//! are cut into consecutive *territories*, each headed by its first
//! position: at the start every position heads its own. A candidate heading
//! `span` positions sends `ChordCapture(id, span)` on chord `span`: one
//! message straight to the head of the next territory, jumping over its
//! own. That head answers with one `ChordAnswer`:
//! * a node that does not compete (a non-initiator, or a candidate beaten
//!   earlier) hands its territory over: `accepted` with its span, and is
//!   captured;
//! * a candidate whose id beats the capturer's refuses: the capturer is
//!   beaten and keeps heading its territory, waiting to be captured;
//! * a candidate whose id is beaten holds the capture until its own capture
//!   is answered, then hands its territory, grown or not, over. (Answering
//!   at once would hand over a territory still growing; holding cannot
//!   deadlock, since a candidate only holds for a better id, and a cycle of
//!   ever better ids is impossible.)
//!
//! A candidate whose capture is accepted adds the span it got and captures
//! on, by the chord of its new span; the candidate heading all n positions
//! leads and sends `Notify` on all its n − 1 chords. The best initiator is
//! never refused and every head it reaches hands over (perhaps after its
//! own answer comes), so it ends up with everything; no other candidate can,
//! since its territory would have to contain the best one.
//!
//! **The count, derived.** Every capture gets exactly one answer. An
//! accepted one joins two territories into one: from n territories to one
//! takes exactly n − 1 acceptances. A refused one beats its candidate, who
//! never captures again; the winner is never refused, so R ≤ k − 1. With the
//! n − 1 notifications: 2(n − 1 + R) + n − 1 = 3(n − 1) + 2R ≤ 3n + 2k − 5.
//! With one initiator R = 0: exactly 3n − 3, whatever the ids and schedule.
//! The bound is reached when each candidate's next head beats it and is
//! still a candidate when the capture arrives: ids increasing along chord
//! 1, all initiating, unit delays (every capture arrives before any answer):
//! n − 1 refusals, 5n − 5. With random delays a head refused first hands
//! its territory over instead, and the count is lower.

use super::oneshot::{Ending, OneShotNode, Wake};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, Role, Rule};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, CHORDAL_COMPLETE, Candidates, Extras, Provision};
#[cfg(doc)]
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "chordal-capture",
    title: "Chordal capture: election on a complete network with chordal labels",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 (complete networks \
             with chordal sense of direction); Loui, Matsushita, West, Inf. Process. Lett. 22(4), 1986",
    description: "Each initiator captures the territory ahead of it by one message on the chord that jumps its \
                  own; a head that does not compete hands its territory over, a better candidate refuses, a \
                  worse one hands over once its own capture is answered. The candidate heading all n \
                  positions leads and notifies on every chord.",
    topologies: CHORDAL_COMPLETE,
    assumptions: Assumptions { bidirectional: true, oriented: true, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::Initiators,
    bound_formula: "3n + 2k - 5",
    bound: &|n, k| (3 * n + 2 * k).saturating_sub(5),
    timer_events: |_| 0,
    heap_bytes_per_position: 16_717,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(ChordalCapture::new),
    extras: Extras::NONE,
};

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Part {
    /// Not started: heads its own territory and does not compete.
    Asleep,
    /// Heads `span` positions and waits for the answer to its capture.
    Candidate { span: u32 },
    /// Refused: heads `span` positions until captured.
    Beaten { span: u32 },
    /// In another head's territory.
    Captured,
    /// Heads all n positions.
    Leader,
}

/// One node of the chordal capture.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChordalCapture {
    id: u64,
    rule: Rule,
    /// n − 1: one port per chord length 1..n − 1.
    ports: u32,
    part: Part,
    /// A better candidate's capture, held until this candidate's own is answered: its port.
    held: Option<Port>,
    end: Ending,
}

impl ChordalCapture {
    /// A sleeping node with one port per chord.
    pub fn new(c: &NodeContext) -> Self {
        ChordalCapture { id: c.id, rule: c.rule, ports: c.ports, part: Part::Asleep, held: None, end: Ending::default() }
    }

    /// n: the node itself and one position per chord.
    fn n(&self) -> u32 {
        self.ports + 1
    }

    /// Capture the territory after `span` positions, or lead if they are all.
    fn capture(&mut self, span: u32, out: &mut Outbox) {
        if span >= self.n() {
            self.part = Part::Leader;
            self.end.decide(Role::Leader, self.id, out);
            for p in 0..self.ports {
                out.send(p, Msg::Notify { leader: self.id });
            }
        } else {
            self.part = Part::Candidate { span };
            out.send(span - 1, Msg::ChordCapture { id: self.id, span });
        }
    }

    /// Hand this node's `span` positions over to the capturer behind `port`.
    fn hand_over(&mut self, port: Port, span: u32, out: &mut Outbox) {
        self.part = Part::Captured;
        out.send(port, Msg::ChordAnswer { span, accepted: true });
    }

    fn on_capture(&mut self, port: Port, id: u64, span: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        // A capture over chord `span` arrives on the chord n − span back.
        if span == 0 || span >= self.n() || port != self.n() - 1 - span {
            return Err(AlgoError::Invalid(format!("a capture of span {span} on port {port} of {}", self.ports)));
        }
        if id == self.id {
            return Err(AlgoError::Invalid(format!("a capture by my own id {id}")));
        }
        match self.part {
            Part::Asleep => self.hand_over(port, 1, out),
            Part::Beaten { span: mine } => self.hand_over(port, mine, out),
            Part::Candidate { .. } if self.held.is_some() => {
                return Err(AlgoError::Invalid("a second capture while one is held".into()));
            }
            Part::Candidate { .. } if self.rule.beats(id, self.id) => self.held = Some(port),
            Part::Candidate { .. } => out.send(port, Msg::ChordAnswer { span: 0, accepted: false }),
            Part::Captured | Part::Leader => {
                return Err(AlgoError::Invalid(format!("a capture by {id} reached a node that is no head")));
            }
        }
        Ok(())
    }

    fn on_answer(&mut self, port: Port, got: u32, accepted: bool, out: &mut Outbox) -> Result<(), AlgoError> {
        let Part::Candidate { span } = self.part else {
            return Err(AlgoError::Invalid(format!("an answer on port {port} in {:?}", self.part)));
        };
        if port + 1 != span || (accepted && (got == 0 || span.checked_add(got).is_none_or(|t| t > self.n()))) {
            return Err(AlgoError::Invalid(format!("an answer of span {got} on port {port} to a capture of span {span}")));
        }
        let span = if accepted { span + got } else { span };
        match (self.held.take(), accepted) {
            (Some(held), _) => self.hand_over(held, span, out),
            (None, true) => self.capture(span, out),
            (None, false) => self.part = Part::Beaten { span },
        }
        Ok(())
    }

    fn on_notify(&mut self, port: Port, leader: u64) -> Result<(), AlgoError> {
        if self.part != Part::Captured || self.end.decision().is_some() || leader == self.id {
            return Err(AlgoError::Invalid(format!("notified of {leader} on port {port} in {:?}", self.part)));
        }
        Ok(())
    }
}

impl OneShotNode for ChordalCapture {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::InStep;

    fn ports(&self) -> u32 {
        self.ports
    }

    fn status(&self) -> &'static str {
        match (self.part, self.end.decision()) {
            (Part::Asleep, _) => "asleep",
            (Part::Candidate { .. }, _) => "candidate",
            (Part::Beaten { .. }, _) => "defeated",
            (Part::Captured, None) => "captured",
            (Part::Captured, Some(_)) => "follower",
            (Part::Leader, _) => "leader",
        }
    }

    fn held(&self) -> usize {
        usize::from(self.held.is_some())
    }

    /// An initiator heads itself and captures the next position (alone, it leads).
    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.capture(1, out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::ChordCapture { id, span } => self.on_capture(port, id, span, out),
            Msg::ChordAnswer { span, accepted } => self.on_answer(port, span, accepted, out),
            Msg::Notify { leader } => {
                self.on_notify(port, leader)?;
                self.end.decide(Role::Follower, leader, out);
                Ok(())
            }
            _ => Err(Self::unexpected(msg)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, send};

    fn node(id: u64, n: u32) -> ChordalCapture {
        ChordalCapture::new(&NodeContext { id, rule: Rule::Max, n, coin: 0, ports: n - 1, ..Default::default() })
    }

    fn capture(id: u64, span: u32) -> Msg {
        Msg::ChordCapture { id, span }
    }

    fn accept(span: u32) -> Msg {
        Msg::ChordAnswer { span, accepted: true }
    }

    const REFUSE: Msg = Msg::ChordAnswer { span: 0, accepted: false };

    /// An initiator captures on chord 1, then jumps by the chord of its grown territory, and leads once it
    /// heads all n positions, notifying on every chord.
    #[test]
    fn a_candidate_jumps_over_its_territory_and_leads() {
        let notify = Msg::Notify { leader: 9 };
        Probe::new(node(9, 5))
            .start(&[send(0, capture(9, 1))])
            .on(0, accept(1), &[send(1, capture(9, 2))])
            .on(1, accept(2), &[send(3, capture(9, 4))])
            .on(3, accept(1), &[decide(Role::Leader, 9), send(0, notify), send(1, notify), send(2, notify), send(3, notify)])
            .in_state("leader");
    }

    /// A node that does not compete hands over its one position; a beaten one hands over its territory; a
    /// capture over chord s arrives on the chord n - s back.
    #[test]
    fn heads_that_do_not_compete_hand_over() {
        Probe::new(node(2, 5)).on(3, capture(7, 1), &[send(3, accept(1))]).in_state("captured");
        Probe::new(node(2, 5))
            .start(&[send(0, capture(2, 1))])
            .on(0, REFUSE, &[])
            .in_state("defeated")
            .on(2, capture(7, 2), &[send(2, accept(1))]);
    }

    /// A candidate refuses a worse capturer at once, and holds a better one's capture until its own answer
    /// comes, then hands over its territory with what that answer added.
    #[test]
    fn candidates_refuse_worse_and_hold_better() {
        Probe::new(node(6, 4)).start(&[send(0, capture(6, 1))]).on(2, capture(3, 1), &[send(2, REFUSE)]);
        Probe::new(node(6, 4))
            .start(&[send(0, capture(6, 1))])
            .on(2, capture(8, 1), &[])
            .on(0, accept(2), &[send(2, accept(3))])
            .in_state("captured");
        Probe::new(node(6, 4)).start(&[send(0, capture(6, 1))]).on(2, capture(8, 1), &[]).on(0, REFUSE, &[send(2, accept(1))]);
    }

    /// A captured node follows the leader the notification names.
    #[test]
    fn captured_nodes_follow_the_notification() {
        Probe::new(node(2, 3))
            .on(1, capture(7, 1), &[send(1, accept(1))])
            .on(0, Msg::Notify { leader: 7 }, &[decide(Role::Follower, 7)])
            .in_state("follower");
    }

    /// Messages that cannot happen are refused: captures on the wrong chord, answers to no capture, a second
    /// held capture, notifications to heads.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = Probe::new(node(1, 4));
        a.refuses(0, capture(5, 1));
        a.refuses(0, capture(5, 0));
        a.refuses(0, capture(5, 9));
        a.refuses(0, accept(1));
        a.refuses(0, Msg::Notify { leader: 5 });
        a.refuses(0, Msg::Wakeup);
        let mut b = Probe::new(node(1, 4)).start(&[send(0, capture(1, 1))]).on(2, capture(5, 1), &[]);
        b.refuses(2, capture(6, 1));
        b.refuses(1, accept(1));
        b.refuses(0, accept(4));
    }
}
