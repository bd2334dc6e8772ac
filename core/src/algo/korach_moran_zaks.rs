//! # Complete-network election by capture (Korach-Moran-Zaks; Santoro's CompleteElect)
//!
//! * Source: E. Korach, S. Moran, S. Zaks, "Tight lower and upper bounds for
//!   some distributed algorithms for a complete network of processors",
//!   PODC 1984 (candidates grow by capturing nodes, the bigger (stage, id)
//!   surviving; they prove 5n log n + O(n) messages for theirs), in the
//!   one-node-at-a-time form N. Santoro teaches as *CompleteElect*
//!   ("survival by capture", Design and Analysis of Distributed Algorithms,
//!   Wiley 2007, ch. 3, election in complete networks): messages `Capture`,
//!   `Accept`, `Reject`, and a captured node's `Warning` to its owner.
//! * Network: complete graph, bidirectional links, no FIFO, no sense of
//!   direction; a node needs neither n nor the ids behind its ports (it
//!   tries its ports in their order).
//! * Candidates: the initiators. A node captured before it wakes never
//!   competes.
//! * Winner: whichever candidate captures every other node. It depends on the
//!   schedule (a smaller id that captured more nodes beats a larger one), so
//!   the entry names no expected winner ([`Candidates::Captor`]); the checks
//!   hold it to exactly one leader that everybody follows.
//!
//! ## The algorithm
//!
//! A candidate's *stage* is the number of nodes it has captured; its
//! strength is the pair (stage, id), compared stage first, then id by the
//! rule. A candidate sends `Capture(stage, id)` on its ports one at a time,
//! the next only after the answer to the last:
//!
//! * a node that owns itself (asleep, or a candidate, alive or beaten)
//!   compares the attacker with its own strength. If the attacker is
//!   stronger, the node is captured (a live candidate is beaten) and answers
//!   `Accept`; otherwise it answers `Reject`.
//! * a captured node compares the attacker with the strength its owner had
//!   when it captured the node. If the attacker is not stronger it answers
//!   `Reject` at once; otherwise it sends `Warning(stage, id)` to its owner
//!   and waits. A capture that comes meanwhile waits only if it is stronger
//!   than every other one there: the node ends up held at least as strongly
//!   as by the strongest of them whatever the owner answers, so the weaker
//!   are refused at once and at most one capture waits (with every node
//!   initiating, all n − 1 others attack port 0's node first). The owner answers `yes` if the
//!   attacker is stronger than its *current* strength (a live owner is then
//!   beaten; a beaten one keeps the stage it stopped at), `no` otherwise.
//!   On `yes` the node changes owner and answers `Accept`, on `no` `Reject`.
//! * `Accept` raises a live candidate's stage by one; `Reject` beats it.
//!   A candidate that has captured all n − 1 others leads and sends `Notify`
//!   to each.
//!
//! ## Correctness
//!
//! A candidate is beaten only by a strictly stronger strength (an attacker's,
//! or an owner's in a `Reject`). Follow who beat whom back: strengths rise
//! along the chain and nobody is beaten twice, so the chain ends at a live
//! candidate: some candidate is always alive. Every `Capture` and `Warning`
//! is answered without waiting on anything but a `Warning`'s answer, which
//! is never held, so a live candidate always hears back: it captures, or is
//! beaten. A node's owner changes only to a candidate stronger than the old
//! owner's current strength, so once the eventual winner holds a node it
//! keeps it; the candidate that captures all n − 1 others has beaten every
//! other candidate (each was captured, directly or after a `yes`), so there
//! is exactly one leader.
//!
//! ## Messages
//!
//! **Lemma.** At most ⌊n/(s+1)⌋ candidates reach stage s.
//! For a candidate c that reaches stage s let W(c) be c itself and the s
//! nodes it captured at stages 0 … s − 1. These sets are disjoint, s + 1
//! nodes each. Say node x is in W(c) and was earlier in W(c′), captured by
//! c′ at stage b < s. Each change of x's owner goes to a strength above the
//! old owner's current one, and a candidate never grows after losing a node,
//! so c′'s final strength, at least (s, c′), is below the strength (a, c)
//! with which c took x: a ≥ s, a contradiction. For x = c itself, whoever
//! first takes the node c beats c then, at or above c's final stage s.
//!
//! Each candidate makes at most one capture attempt at each stage (an
//! `Accept` moves it on, a `Reject` ends it), and an attempt costs at most 4
//! messages (`Capture`, `Warning`, its answer, `Accept` or `Reject`). With k
//! initiators, no more than min(k, ⌊n/(s+1)⌋) attempts are made at stage s,
//! for s = 0 … n − 2, and the winner notifies n − 1 nodes:
//!
//! **M ≤ 4 Σ_(i=1)^(n−1) min(k, ⌊n/i⌋) + n − 1 ≤ 4n·H(n−1) + n − 1**, about
//! 4n ln n ≈ 2.77 n log₂ n: within the 5n log n + O(n) Korach, Moran and Zaks
//! published. The count depends on the schedule (who captures whom first).
//! Ideal time is O(n) per candidate's n − 1 attempts, plus waits behind other
//! attackers at a captured node; no time bound is claimed.
//!
//! [`Candidates::Captor`]: crate::spec::Candidates::Captor

use super::oneshot::Ending;
use super::{AlgoError, Algorithm, Input, Msg, NodeContext, Outbox, Port, Role, Rule, TimerId};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision};
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "korach-moran-zaks",
    title: "Complete network by capture (Korach-Moran-Zaks; Santoro's CompleteElect)",
    source: "E. Korach, S. Moran, S. Zaks, Tight lower and upper bounds for some distributed algorithms \
             for a complete network of processors, PODC 1984; N. Santoro, Design and Analysis of \
             Distributed Algorithms, Wiley 2007, ch. 3 (CompleteElect)",
    description: "Each candidate captures the other nodes one at a time, its stage being how many it \
                  holds. A node that owns itself yields to a stronger (stage, id); a captured node \
                  warns its owner, who lets it go only to a candidate stronger than itself and is \
                  then beaten. A rejected candidate drops out; the one that captures all n - 1 \
                  others leads and notifies them.",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::Captor,
    bound_formula: "4·Σ_(i=1..n−1) min(k, ⌊n/i⌋) + n − 1 (≈ 2.77 n log n)",
    bound: &capture_bound,
    timer_events: |_| 0,
    heap_bytes_per_position: 16_833,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(CaptureNode::korach_moran_zaks),
    extras: Extras { port_order_matters: true, ..Extras::NONE },
};

/// The bound of both capture elections (this one and Afek-Gafni's): at
/// most min(k, ⌊n/(s+1)⌋) attempts at stage s, 4 messages each, and n − 1
/// notifications (see the module's derivation).
pub fn capture_bound(n: u64, k: u64) -> u64 {
    if k == 0 || n == 0 {
        return 0;
    }
    4 * (1..n).map(|i| k.min(n / i)).sum::<u64>() + n - 1
}

/// How a capture election treats a refused capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// Korach-Moran-Zaks / CompleteElect: a refused capture is answered
    /// with `Reject`, and the candidate drops out.
    Reject,
    /// Afek-Gafni: a refused capture is not answered; the candidate waits
    /// until a stronger one captures it. A captured node remembers the
    /// strongest attacker it warned its owner about and refuses weaker ones
    /// at once.
    Silent,
}

/// A strength: (stage, id), stage first.
type Strength = (u32, u64);

/// What the node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Status {
    /// Not woken, not captured.
    Asleep,
    /// Competing.
    Candidate,
    /// A candidate that was beaten (it keeps the stage it stopped at).
    Beaten,
    /// Captured before it woke: never a candidate.
    Captured,
    /// Captured everybody.
    Leader,
    /// Heard the leader's notification.
    Follower,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Asleep => "asleep",
            Status::Candidate => "candidate",
            Status::Beaten => "beaten",
            Status::Captured => "captured",
            Status::Leader => "leader",
            Status::Follower => "follower",
        }
    }
}

/// One node of a capture election (Korach-Moran-Zaks or Afek-Gafni).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CaptureNode {
    id: u64,
    rule: Rule,
    flavour: Flavour,
    name: &'static str,
    ports: u32,
    status: Status,
    /// Whether it ever was a candidate (only candidates own nodes and answer warnings).
    competed: bool,
    /// Nodes captured (a beaten candidate keeps the stage it stopped at).
    stage: u32,
    /// The port of the capture attempt awaiting its answer.
    attempt: Option<Port>,
    /// The port to its owner, with the strength the node was captured with
    /// (Afek-Gafni: or the strongest attacker warned about since); `None`
    /// while it owns itself.
    owner: Option<(Port, Strength)>,
    /// The capture it warned its owner about: the attacker's port and strength.
    warned: Option<(Port, Strength)>,
    /// The strongest capture that arrived while a warning was out (the
    /// weaker ones are refused at once: see [`CaptureNode::receive`]).
    waiting: Option<(Port, Strength)>,
    end: Ending,
}

impl CaptureNode {
    /// A node of the Korach-Moran-Zaks election (refused captures rejected).
    pub fn korach_moran_zaks(c: &NodeContext) -> Self {
        Self::new(c, Flavour::Reject, "korach-moran-zaks")
    }

    /// A node of the Afek-Gafni election (refused captures left unanswered).
    pub fn afek_gafni(c: &NodeContext) -> Self {
        Self::new(c, Flavour::Silent, "afek-gafni")
    }

    fn new(c: &NodeContext, flavour: Flavour, name: &'static str) -> Self {
        CaptureNode {
            id: c.id,
            rule: c.rule,
            flavour,
            name,
            ports: c.ports,
            status: Status::Asleep,
            competed: false,
            stage: 0,
            attempt: None,
            owner: None,
            warned: None,
            waiting: None,
            end: Ending::default(),
        }
    }

    /// Is `a` stronger than `b`: a higher stage, or the same stage and an id the rule prefers?
    fn stronger(&self, a: Strength, b: Strength) -> bool {
        a.0 > b.0 || (a.0 == b.0 && self.rule.beats(a.1, b.1))
    }

    fn own(&self) -> Strength {
        (self.stage, self.id)
    }

    fn unexpected(&self, msg: Msg) -> AlgoError {
        AlgoError::Invalid(format!(
            "{}: {msg:?} cannot reach a {} node (id {})",
            self.name,
            self.status.name(),
            self.id
        ))
    }

    /// Try the next port, or lead when every other node is captured.
    fn next_attempt(&mut self, out: &mut Outbox) {
        if self.stage >= self.ports {
            self.status = Status::Leader;
            self.end.decide(Role::Leader, self.id, out);
            for port in 0..self.ports {
                out.send(port, Msg::Notify { leader: self.id });
            }
            return;
        }
        let port = self.stage;
        self.attempt = Some(port);
        out.send(port, Msg::Capture { stage: self.stage, id: self.id });
    }

    fn start(&mut self, out: &mut Outbox) {
        // A node captured before it woke never competes.
        if self.status != Status::Asleep {
            return;
        }
        self.status = Status::Candidate;
        self.competed = true;
        self.next_attempt(out);
    }

    /// Refuse the capture from `port`: `Reject` (Korach-Moran-Zaks) or silence (Afek-Gafni).
    fn refuse(&self, port: Port, out: &mut Outbox) {
        if self.flavour == Flavour::Reject {
            out.send(port, Msg::CaptureReject);
        }
    }

    /// Give in to the candidate behind `port` of strength `s`.
    fn yield_to(&mut self, port: Port, s: Strength, out: &mut Outbox) {
        self.owner = Some((port, s));
        if matches!(self.status, Status::Asleep | Status::Candidate) {
            self.status = if self.competed { Status::Beaten } else { Status::Captured };
        }
        out.send(port, Msg::CaptureAccept);
    }

    /// A capture of strength `s` from `port`, when no warning is out.
    fn capture(&mut self, port: Port, s: Strength, out: &mut Outbox) {
        match self.owner {
            None => {
                if !self.competed || self.stronger(s, self.own()) {
                    self.yield_to(port, s, out);
                } else {
                    self.refuse(port, out);
                }
            }
            Some((owner, held)) => {
                if !self.stronger(s, held) {
                    self.refuse(port, out);
                } else {
                    if self.flavour == Flavour::Silent {
                        self.owner = Some((owner, s));
                    }
                    self.warned = Some((port, s));
                    out.send(owner, Msg::Warning { stage: s.0, id: s.1 });
                }
            }
        }
    }

    /// The owner's answer to the warning that is out.
    fn warning_reply(&mut self, port: Port, yes: bool, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let (Some((owner, _)), Some((attacker, s))) = (self.owner, self.warned) else {
            return Err(self.unexpected(msg));
        };
        if port != owner {
            return Err(self.unexpected(msg));
        }
        self.warned = None;
        if yes {
            self.yield_to(attacker, s, out);
        } else {
            self.refuse(attacker, out);
        }
        if let Some((p, s)) = self.waiting.take() {
            self.capture(p, s, out);
        }
        Ok(())
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        if port >= self.ports {
            return Err(AlgoError::BadPort { port });
        }
        match msg {
            Msg::Capture { stage, id } => {
                if self.owner.is_some_and(|(o, _)| o == port) {
                    // Its owner tries each port once: it never attacks a node it holds.
                    return Err(self.unexpected(msg));
                }
                let s = (stage, id);
                match self.warned {
                    None => self.capture(port, s, out),
                    Some((_, a)) => {
                        // Whatever the owner answers, the node ends up held at
                        // least as strongly as by the attacker it warned about
                        // (the owner's yes gives it to that attacker; its no
                        // means the owner is stronger still), and a waiting
                        // capture that a stronger one overtakes would meet that
                        // one: a capture no stronger than all of them is refused
                        // now, and at most one waits.
                        let held = self.owner.map_or(a, |(_, h)| h);
                        let mut best = if self.stronger(a, held) { a } else { held };
                        if let Some((_, w)) = self.waiting
                            && self.stronger(w, best)
                        {
                            best = w;
                        }
                        if !self.stronger(s, best) {
                            self.refuse(port, out);
                        } else {
                            if let Some((w, _)) = self.waiting.take() {
                                self.refuse(w, out);
                            }
                            self.waiting = Some((port, s));
                        }
                    }
                }
            }
            Msg::Warning { stage, id } => {
                if !self.competed {
                    return Err(self.unexpected(msg));
                }
                let yes = self.stronger((stage, id), self.own());
                if yes && self.status == Status::Candidate {
                    self.status = Status::Beaten;
                }
                out.send(port, Msg::WarningReply { yes });
            }
            Msg::WarningReply { yes } => return self.warning_reply(port, yes, msg, out),
            Msg::CaptureAccept | Msg::CaptureReject => {
                if self.attempt != Some(port) {
                    return Err(self.unexpected(msg));
                }
                self.attempt = None;
                if self.status == Status::Candidate {
                    if msg == Msg::CaptureAccept {
                        self.stage += 1;
                        self.next_attempt(out);
                    } else if self.flavour == Flavour::Reject {
                        self.status = Status::Beaten;
                    } else {
                        return Err(self.unexpected(msg));
                    }
                }
            }
            Msg::Notify { leader } => {
                if self.end.decision().is_some() || self.status == Status::Asleep {
                    return Err(self.unexpected(msg));
                }
                self.status = Status::Follower;
                self.end.decide(Role::Follower, leader, out);
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: self.name, kind: msg.kind().name() }),
        }
        Ok(())
    }
}

impl Algorithm for CaptureNode {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }

    fn state(&self) -> &'static str {
        self.status.name()
    }

    fn watched(&self, _port: Port) -> bool {
        true
    }

    fn suspects(&self, _port: Port) -> bool {
        false
    }

    fn timer_name(&self, _timer: TimerId) -> Option<&'static str> {
        None
    }

    fn held(&self) -> usize {
        usize::from(self.waiting.is_some())
    }

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::algo::catalogue;
    use crate::algo::harness::sweeps::complete_cases;
    use crate::algo::harness::{Feed, send};
    use crate::algo::{Decision, Effect, MsgKind};
    use crate::sim::{self, SimConfig};
    use crate::topology::Topology;

    /// A node of `flavour` with `id` and `ports` ports.
    fn node(id: u64, ports: u32, flavour: Flavour) -> CaptureNode {
        let c = NodeContext { id, rule: Rule::Max, n: ports + 1, ports, ..Default::default() };
        match flavour {
            Flavour::Reject => CaptureNode::korach_moran_zaks(&c),
            Flavour::Silent => CaptureNode::afek_gafni(&c),
        }
    }

    /// Every arrangement of ids 1..=n for n ≤ `max_n`, every non-empty
    /// initiator set, both rules, and three schedules (FIFO random delays,
    /// unit delays, non-FIFO wide delays): one leader everybody follows, an
    /// initiator, and the count within `capture_bound(n, k)`, n − 1 of it
    /// notifications. Returns the largest count seen per n, and the number of runs.
    pub(crate) fn every_arrangement(name: &str, max_n: u32) -> (Vec<u64>, u32) {
        let spec = catalogue::find(name).unwrap();
        let mut runs = 0;
        let mut most = vec![0; max_n as usize + 1];
        complete_cases(max_n, |topo, ids, init, rule, cfg| {
            let r = sim::run(spec, topo, ids, init, rule, cfg);
            let ctx = format!("{name} ids={ids:?} init={init:?} {rule:?} {cfg:?}");
            assert!(r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
            let leader = r.verdict.leader.expect("a leader");
            assert!(init.contains(&leader), "{ctx}: leader at {leader}, not an initiator");
            let (n, k) = (u64::from(topo.len()), init.len() as u64);
            assert!(r.counters.messages <= capture_bound(n, k), "{ctx}: {}", r.counters.messages);
            assert_eq!(r.counters.notification_messages, n - 1, "{ctx}");
            most[n as usize] = most[n as usize].max(r.counters.messages);
            runs += 1;
        });
        (most, runs)
    }

    /// The bound at small n: k = 1 costs 4(n − 1) + n − 1 at most; with
    /// every node initiating at n = 4, 4·(3 + 2 + 1) + 3 = 27; and it grows
    /// as about 4n ln n (under 3n log₂ n at n = 1024).
    #[test]
    fn bound_values() {
        assert_eq!(capture_bound(1, 1), 0);
        assert_eq!(capture_bound(5, 1), 4 * 4 + 4);
        assert_eq!(capture_bound(4, 4), 4 * (4 + 2 + 1) + 3);
        assert_eq!(capture_bound(4, 0), 0);
        let n = 1024u64;
        assert!(capture_bound(n, n) < 3 * n * 10, "{}", capture_bound(n, n));
        assert!(capture_bound(n, n) > 4 * n * 6, "{}", capture_bound(n, n));
    }

    /// An initiator sends Capture(0, id) on port 0 only, and a second start does nothing.
    #[test]
    fn start_captures_port_0() {
        let mut a = node(5, 3, Flavour::Reject);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        assert_eq!(out.effects(), &[send(0, Msg::Capture { stage: 0, id: 5 })]);
        assert_eq!(a.state(), "candidate");
        out.clear();
        a.on_start(&mut out);
        assert!(out.effects().is_empty());
    }

    /// Accept moves the candidate to the next port at the next stage; the
    /// last Accept makes it leader, and it notifies every port.
    #[test]
    fn accepts_advance_then_lead() {
        let mut a = node(5, 2, Flavour::Reject);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        out.clear();
        a.on_message(0, Msg::CaptureAccept, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(1, Msg::Capture { stage: 1, id: 5 })]);
        out.clear();
        a.on_message(1, Msg::CaptureAccept, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[
                Effect::Decide(Decision { role: Role::Leader, leader: 5 }),
                send(0, Msg::Notify { leader: 5 }),
                send(1, Msg::Notify { leader: 5 })
            ]
        );
        assert_eq!(a.state(), "leader");
    }

    /// A candidate yields to a stronger capture (higher stage, even with a
    /// smaller id) and refuses a weaker one with Reject (Korach-Moran-Zaks)
    /// or silence (Afek-Gafni).
    #[test]
    fn a_candidate_yields_only_to_a_stronger_one() {
        for flavour in [Flavour::Reject, Flavour::Silent] {
            let mut a = node(5, 3, flavour);
            let mut out = Outbox::default();
            a.on_start(&mut out);
            out.clear();
            a.on_message(1, Msg::Capture { stage: 0, id: 3 }, &mut out).unwrap();
            let refusal: &[Effect] = if flavour == Flavour::Reject { &[send(1, Msg::CaptureReject)] } else { &[] };
            assert_eq!(out.effects(), refusal, "{flavour:?}: (0, 3) is weaker than (0, 5)");
            out.clear();
            a.on_message(2, Msg::Capture { stage: 1, id: 2 }, &mut out).unwrap();
            assert_eq!(out.effects(), &[send(2, Msg::CaptureAccept)], "{flavour:?}: stage 1 beats stage 0");
            assert_eq!(a.state(), "beaten");
            // Its own capture's Accept comes after: a beaten candidate stays at its stage.
            out.clear();
            a.on_message(0, Msg::CaptureAccept, &mut out).unwrap();
            assert!(out.effects().is_empty());
        }
    }

    /// A captured node refuses an attacker weaker than its owner's capture
    /// at once, warns its owner about a stronger one and holds captures that
    /// come meanwhile; the owner's yes hands the node over, and the held
    /// capture is then taken up against the new owner's strength.
    #[test]
    fn a_captured_node_warns_its_owner() {
        let mut x = node(1, 3, Flavour::Reject);
        let mut out = Outbox::default();
        x.on_message(0, Msg::Capture { stage: 2, id: 9 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::CaptureAccept)], "asleep: captured at once");
        assert_eq!(x.state(), "captured");
        out.clear();
        x.on_message(1, Msg::Capture { stage: 1, id: 7 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(1, Msg::CaptureReject)], "(1, 7) is weaker than (2, 9)");
        out.clear();
        x.on_message(1, Msg::Capture { stage: 3, id: 7 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::Warning { stage: 3, id: 7 })]);
        out.clear();
        x.on_message(2, Msg::Capture { stage: 3, id: 8 }, &mut out).unwrap();
        assert!(out.effects().is_empty(), "held while the warning is out");
        assert_eq!(x.held(), 1);
        x.on_message(0, Msg::WarningReply { yes: true }, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[send(1, Msg::CaptureAccept), send(1, Msg::Warning { stage: 3, id: 8 })],
            "7 owns it now, and is warned about (3, 8)"
        );
        assert_eq!(x.held(), 0);
        // Starting after being captured does not make it a candidate.
        out.clear();
        x.on_start(&mut out);
        assert!(out.effects().is_empty());
        assert_eq!(x.state(), "captured");
    }

    /// An owner answers a warning by its current strength: yes to a stronger
    /// attacker (and a live owner is beaten), no to a weaker one; a beaten
    /// candidate keeps the stage it stopped at.
    #[test]
    fn an_owner_answers_warnings_by_its_current_strength() {
        let mut o = node(4, 3, Flavour::Reject);
        let mut out = Outbox::default();
        o.on_start(&mut out);
        o.on_message(0, Msg::CaptureAccept, &mut out).unwrap();
        out.clear();
        o.on_message(0, Msg::Warning { stage: 1, id: 3 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::WarningReply { yes: false })], "(1, 3) < (1, 4)");
        assert_eq!(o.state(), "candidate");
        out.clear();
        o.on_message(0, Msg::Warning { stage: 1, id: 6 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::WarningReply { yes: true })]);
        assert_eq!(o.state(), "beaten");
        out.clear();
        o.on_message(0, Msg::Warning { stage: 1, id: 5 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::WarningReply { yes: true })], "beaten at stage 1: (1, 5) wins");
        out.clear();
        o.on_message(1, Msg::CaptureAccept, &mut out).unwrap();
        assert!(out.effects().is_empty(), "beaten: the stage stays");
        out.clear();
        o.on_message(0, Msg::Warning { stage: 1, id: 3 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::WarningReply { yes: false })]);
    }

    /// A Reject beats a Korach-Moran-Zaks candidate; it sends nothing more.
    #[test]
    fn reject_beats_the_candidate() {
        let mut a = node(5, 3, Flavour::Reject);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        out.clear();
        a.on_message(0, Msg::CaptureReject, &mut out).unwrap();
        assert!(out.effects().is_empty());
        assert_eq!(a.state(), "beaten");
    }

    /// Messages no run sends to a node in that state are errors, not dropped.
    #[test]
    fn impossible_messages_are_errors() {
        let mut out = Outbox::default();
        let mut a = node(5, 3, Flavour::Reject);
        assert!(matches!(a.on_message(0, Msg::CaptureAccept, &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(a.on_message(0, Msg::Warning { stage: 0, id: 1 }, &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(a.on_message(0, Msg::WarningReply { yes: true }, &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(a.on_message(0, Msg::Notify { leader: 9 }, &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(a.on_message(3, Msg::CaptureAccept, &mut out), Err(AlgoError::BadPort { port: 3 })));
        assert!(matches!(a.on_message(0, Msg::Wakeup, &mut out), Err(AlgoError::UnexpectedKind { .. })));
        let mut s = node(5, 3, Flavour::Silent);
        s.on_start(&mut out);
        assert!(matches!(s.on_message(0, Msg::CaptureReject, &mut out), Err(AlgoError::Invalid(_))));
        let mut c = node(5, 3, Flavour::Reject);
        c.on_message(0, Msg::Capture { stage: 0, id: 9 }, &mut out).unwrap();
        assert!(
            matches!(c.on_message(0, Msg::Capture { stage: 1, id: 9 }, &mut out), Err(AlgoError::Invalid(_))),
            "its owner never attacks it again"
        );
    }

    /// 300 nodes, all initiating (every candidate attacks the node behind its
    /// port 0 first, so that node meets about 300 captures at once), and 300
    /// with one initiator, both flavours: one leader, at most one capture
    /// held at a time (the simulator refuses a node holding 256), the count
    /// within the bound.
    #[test]
    fn many_attackers_at_once() {
        for name in ["korach-moran-zaks", "afek-gafni"] {
            let spec = catalogue::find(name).unwrap();
            let topo = Topology::complete(300).unwrap();
            let ids: Vec<u64> = (1..=300).rev().collect();
            for init in [(0..300).collect::<Vec<u32>>(), vec![7]] {
                let r = sim::run(spec, &topo, &ids, &init, Rule::Max, &SimConfig::default());
                assert!(r.verdict.violations.is_empty(), "{name}: {:?}", r.verdict.violations);
                assert!(r.counters.messages <= capture_bound(300, init.len() as u64), "{name}");
            }
        }
    }

    /// Four nodes, all initiating, unit delays: every run ends with one
    /// leader and per-kind counts that add up: one Capture per Accept or
    /// Reject, one Warning per reply.
    #[test]
    fn counts_by_kind_add_up() {
        let spec = catalogue::find("korach-moran-zaks").unwrap();
        let topo = Topology::complete(4).unwrap();
        let cfg = SimConfig { unit_delay: true, ..SimConfig::default() };
        let r = sim::run(spec, &topo, &[3, 1, 4, 2], &[0, 1, 2, 3], Rule::Max, &cfg);
        assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
        let by = |k: MsgKind| r.counters.by_kind[k as usize];
        assert_eq!(by(MsgKind::Capture), by(MsgKind::CaptureAccept) + by(MsgKind::CaptureReject));
        assert_eq!(by(MsgKind::Warning), by(MsgKind::WarningReply));
        assert_eq!(by(MsgKind::Notify), 3);
        assert!(by(MsgKind::CaptureAccept) >= 3, "the leader captured the three others");
    }

    /// Exhaustively for n ≤ 6 (every id arrangement, initiator set, both
    /// rules, three kinds of schedule): one leader, an initiator, everybody
    /// following it, and at most 4·Σ min(k, ⌊n/i⌋) + n − 1 messages.
    #[test]
    fn within_the_bound_on_every_arrangement() {
        let (most, runs) = every_arrangement("korach-moran-zaks", 6);
        assert!(runs > 10_000, "{runs}");
        assert!(most[5] > capture_bound(5, 1), "several candidates cost more than one: {most:?}");
    }
}
