//! # Bully algorithm (Garcia-Molina 1982), keeping a leader with terms
//!
//! * Source: H. Garcia-Molina, "Elections in a Distributed Computing System",
//!   IEEE Trans. Computers C-31(1), 1982, in its usual textbook form (ELECTION
//!   to every higher-ranked process, OK, COORDINATOR; timeouts), with terms.
//! * Network: complete graph, bidirectional links, no FIFO. A node knows the
//!   ids behind its ports ([`NodeContext::port_info`]), so it knows which
//!   neighbours outrank it. Correctness needs timing: a live node must answer
//!   within `answer_timeout` (the algorithm assumes a known bound on delays; in
//!   an asynchronous system delays are unbounded, so a timeout may always
//!   expire).
//! * Candidates: every node. Winner: the best live id (the maximum; the
//!   minimum when mirrored). "Higher" below means better under the rule.
//! * Messages: at most **n² − 1** for a failure-free election with any set of
//!   initiators (the catalogue's bound); **n(n − 1)** for the classic worst
//!   case of one election after the leader crashed. Proofs below.
//!
//! ## The algorithm
//!
//! A node is *asleep*, *electing* (waiting for an `Answer`), *waiting* (for a
//! `Coordinator`, after an `Answer`), a *follower* of a leader, or the
//! *leader*. It keeps `term`, the highest term it has seen.
//!
//! * **Election.** A node starts one when it wakes (its start, or the first
//!   `BullyElection` reaching it), when its failure detector suspects its
//!   leader ([`Input::Suspect`]), when it waited in vain for a
//!   `Coordinator`, or when a lower node claims the lead (it bullies). It
//!   sends `BullyElection { term }` to every higher node and sets
//!   `answer_timeout`. With no higher node it leads at once.
//! * **Answer.** A node receiving `BullyElection` from a lower node answers
//!   `Answer { term }` and, unless it is already electing, starts its own
//!   election (classic bully) — except in two cases: a leader replies with
//!   its `Coordinator { leader, term }` instead (the election was about it,
//!   and it is alive), and a follower that knows a later term than the
//!   election's only answers (the sender is behind, not a witness of a
//!   failure; the leader, also higher than the sender, replies to it).
//! * **Timeouts.** No `Answer` within `answer_timeout`: the node leads,
//!   with `term = highest term seen + 1`, and sends `Coordinator` to every
//!   node. An `Answer`: it waits `coordinator_timeout` for a `Coordinator`,
//!   then elects again.
//! * **Coordinator.** A `Coordinator` of a term below this node's is stale
//!   (a leader replies with its own, so the stale one learns). Otherwise,
//!   from a lower node the node bullies (starts an election, which it wins at
//!   once if it is the best live node, with a still higher term); from a
//!   higher node it follows, unless it already follows a higher leader of
//!   that same term. A leader also re-announces itself to a neighbour its
//!   detector hears from again, so a node cut off while others elected learns
//!   the new term (and, if it is the better id, bullies back).
//! * **Terms.** Any higher term seen (in any message) makes a leader's
//!   leadership outdated (it elects again) and a follower's belief stale (it
//!   waits for the new term's `Coordinator`, which goes to every node).
//!
//! Every change of belief is announced with
//! [`Effect::Lead`]: `(term, leader)`, `leader: None`
//! while electing or waiting. The first leader learned is also announced once
//! with [`Effect::Decide`], for the one-shot verdicts.
//!
//! ## Modes
//!
//! The catalogue entry `bully` ([`Bully::new`]) is **one-shot**: no failure
//! detector, so once the coordinator's messages are delivered nothing is
//! pending (every timer is cancelled) and a simulation goes quiet.
//! **Keep a leader** with [`kept`]: a [`Detected`]`<Bully>` whose heartbeats
//! run until the driver stops the election, and which re-elects (with a higher
//! term) whenever the leader is suspected.
//!
//! ## Bound (failure-free, any initiators: n² − 1)
//!
//! Assume no failure and delays below half of `answer_timeout` and of
//! `coordinator_timeout`. Let M be the best id. (1) Only M ever leads: a node
//! other than M that starts an election sends one to M, which replies within
//! two delays (it leads as soon as it is awake, and a leader answers every
//! election with its `Coordinator`), so no answer timeout expires; and M,
//! having no higher node, leads as soon as it wakes, once, with term 1.
//! (2) Every node elects at most once: it elects on waking (once), and
//! otherwise only on a suspicion (none), a coordinator timeout (none, by the
//! timing), a lower coordinator (none, by 1), an outdated leadership (only M
//! leads, and no term above 1 exists), or an election of a term not below its
//! own while it follows. The last cannot happen: elections carry term 0 (a
//! node learns term 1 only from M's `Coordinator`, which makes it a follower
//! that never elects again, or from an `Answer` after sending its elections),
//! and followers hold term 1. (3) So the node of rank r (1 the lowest) sends
//! at most n − r elections: E ≤ n(n − 1)/2 in all. Each election gets at most
//! one reply (an `Answer`, or M's direct `Coordinator`; the election that
//! wakes M gets none, M's broadcast answers it), and M broadcasts n − 1
//! `Coordinator`s once. Total ≤ 2E + n − 1 ≤ n(n − 1) + n − 1 = n² − 1,
//! reached when every node starts before hearing anything (M's broadcast
//! then arrives after every other node has sent its elections).
//!
//! ## One election after a crash (the classic worst case: n(n − 1))
//!
//! n nodes following leader M at term t; M crashes; only the lowest node
//! notices and no other node fails. Node 1 sends n − 1 elections. Every live
//! node r = 2..n−1 receives one of term t (its own term), answers, and elects
//! once: n − r elections, the one to M unanswered. Elections: Σ (n − r) for r
//! = 1..n−1 = n(n − 1)/2; answers: one per election to a live node,
//! Σ (n − 1 − r) = (n − 1)(n − 2)/2; node n − 1's answer timeout expires and
//! it sends n − 1 `Coordinator`s (term t + 1, M included: it cannot know M
//! is dead). In all n(n − 1)/2 + (n − 1)(n − 2)/2 + (n − 1) = n(n − 1).
//! Failover time: detection (between the detector's `timeout` and
//! `timeout + period`), then `answer_timeout` (node n − 1 waiting for M),
//! plus two delays.

use super::detector::{Behind, Detected, DetectorConfig};
use super::kept::{OneTimer, Peers};
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, KeptSpec, Provision, per_second};
use super::{
    AlgoError, Algorithm, Effect, Input, Leadership, Msg, NodeContext, Outbox, Port, Reports, Role, Rule, TimerId,
};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bully",
    title: "Bully (Garcia-Molina)",
    source: "H. Garcia-Molina, Elections in a distributed computing system, IEEE Trans. Computers C-31(1), 1982",
    description: "A node that knows no live leader sends ELECTION to every higher id; a higher node answers \
                  OK and takes the election over; a node that hears no answer within a timeout leads the \
                  next term and sends COORDINATOR to all. One-shot here (no failure detector); the kept \
                  mode adds heartbeats and re-elects with a higher term when the leader is suspected. \
                  Needs delays below the answer timeout (10 s one-shot).",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n^2 - 1 (one election after a leader crash: n(n-1))",
    bound: &|n, _| (n * n).saturating_sub(1),
    timer_events: |_| 0,
    heap_bytes_per_position: 145_569,
    kept: Some(KeptSpec {
        build: |c, d| Box::new(kept(c, BullyConfig::for_detector(d), d)),
        // The leader and its followers watch only each other.
        heartbeats_per_period: |topo| 2 * u64::from(topo.len().saturating_sub(1)),
        // Every node's election and answer messages (n²) within the answer timeout.
        election_load_per_second: |topo, d| {
            let n = u64::from(topo.len());
            per_second(n.saturating_mul(n), BullyConfig::for_detector(d).answer_timeout_ms)
        },
        convergence_bound_ms: |d, _, delay_ms| convergence_bound_ms(d, delay_ms),
        max_local_nodes: 128,
        lease: None,
        liveness_needs: None,
    }),
    live_provision: Provision::Nodes,
    machine: machine!(Bully::new),
    extras: Extras::NONE,
};

const NAME: &str = "bully";

crate::timers! {
    /// Timer: waiting for an `Answer` to this node's elections.
    ANSWER_TIMER = 0 => "answer";
    /// Timer: waiting for a `Coordinator` after an `Answer`.
    COORDINATOR_TIMER = 1 => "coordinator";
}

/// Bully's timeouts, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BullyConfig {
    /// How long an electing node waits for an `Answer` before it leads. Must
    /// exceed a round trip: a late answer lets a lower node lead a term.
    pub answer_timeout_ms: u64,
    /// How long a node waits for a `Coordinator` after an `Answer` before it
    /// elects again. Must exceed `answer_timeout_ms` plus a round trip (the
    /// answering node may itself wait for a dead node's answer).
    pub coordinator_timeout_ms: u64,
}

impl BullyConfig {
    /// The catalogue's one-shot election ([`Bully::new`]): no failure is
    /// expected, so a timeout only guards against a slow answer electing a
    /// lower node, and in a failure-free run every timer is cancelled before
    /// it fires. Generous: live, 64 nodes of a debug build on a loaded 2-core
    /// host needed 2.6 s until the last decision (opening ~2,000 links of the
    /// complete graph dominates), and with 500 ms seven nodes led.
    pub const ONE_SHOT: BullyConfig = BullyConfig { answer_timeout_ms: 10_000, coordinator_timeout_ms: 30_000 };
    /// Kept leadership on loopback: round trips are far below 500 ms, and the
    /// answer timeout is part of every failover (the next-highest node waits
    /// that long for the dead leader).
    pub const LOOPBACK: BullyConfig = BullyConfig { answer_timeout_ms: 500, coordinator_timeout_ms: 1_500 };
    /// A Kubernetes cluster, next to [`DetectorConfig::KUBERNETES`].
    pub const KUBERNETES: BullyConfig = BullyConfig { answer_timeout_ms: 2_000, coordinator_timeout_ms: 6_000 };
}

impl BullyConfig {
    /// Timeouts that scale with the failure detector's: an answer must come
    /// within 2.5 detector timeouts (500 ms for [`DetectorConfig::LOOPBACK`],
    /// so the preset is unchanged), a coordinator within three answer
    /// timeouts. A detector tuned for slow networks thus gets a bully that
    /// waits as long for its answers.
    pub fn for_detector(d: DetectorConfig) -> BullyConfig {
        let answer_timeout_ms = d.timeout_ms.saturating_mul(5) / 2;
        BullyConfig { answer_timeout_ms, coordinator_timeout_ms: answer_timeout_ms.saturating_mul(3) }
    }
}

impl Default for BullyConfig {
    /// [`BullyConfig::LOOPBACK`].
    fn default() -> Self {
        BullyConfig::LOOPBACK
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Asleep,
    /// Elections sent; `answered` once some higher node answered (then waiting
    /// for its `Coordinator`).
    Electing {
        answered: bool,
    },
    Following(u64),
    Leading,
}

/// One node of the bully algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bully {
    id: u64,
    rule: Rule,
    peers: Peers,
    /// Ports leading to better-ranked nodes.
    higher: Box<[Port]>,
    cfg: BullyConfig,
    phase: Phase,
    /// Highest term seen.
    term: u64,
    /// The one bully timer pending, if any.
    timer: OneTimer,
    /// While leading: neighbours whose heartbeats show an older term.
    behind: Behind,
    reports: Reports,
    /// This node is about to stop ([`Input::Leave`]): it never
    /// elects, leads again or bullies; it follows the next claim it hears.
    leaving: bool,
    /// Ports of better nodes that said they leave ([`Msg::Handover`]): an
    /// election does not wait for them, until they claim the lead again.
    gone: Vec<Port>,
    /// The port of the leader whose handover started this node's election.
    handed_by: Option<Port>,
}

/// How long after the last fault heals every live node follows one live
/// leader at most, with the timeouts [`BullyConfig::for_detector`] derives
/// from `d` and messages delayed by at most `delay_ms`: **C + 2A + T + 2P +
/// 4δ** (56 periods + 4δ for the default T = 4P). Argument: within P + δ of
/// the heal every node hears every live node's heartbeat, with its term and
/// its claim to lead. The best live node M may still be waiting for a dead
/// node's `Coordinator` (at most C), then waits A for the dead nodes'
/// answers and leads; a higher term it hears only then (T + P: a node's
/// heartbeat may follow a suspicion) makes it elect once more (A). Every
/// claim and term reaches every node within a heartbeat, and nobody outranks
/// M, so after its last `Coordinator` (δ) nothing changes. Argued, not
/// proved; `core/tests/chaos.rs` asserts it on 2,000 seeded runs of the full
/// fault mix.
pub fn convergence_bound_ms(d: DetectorConfig, delay_ms: u64) -> u64 {
    let b = BullyConfig::for_detector(d);
    b.coordinator_timeout_ms + 2 * b.answer_timeout_ms + d.timeout_ms + 2 * d.period_ms + 4 * delay_ms
}

/// A kept-leadership bully node: [`Bully`] behind a heartbeat failure detector.
pub fn kept(c: &NodeContext, bully: BullyConfig, detector: DetectorConfig) -> Detected<Bully> {
    Detected::new(Bully::with_config(c, bully), c.id, c.ports, detector)
}

impl Bully {
    /// An asleep node with the one-shot timeouts ([`BullyConfig::ONE_SHOT`]): the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        Bully::with_config(c, BullyConfig::ONE_SHOT)
    }

    /// An asleep node with the given timeouts.
    pub fn with_config(c: &NodeContext, cfg: BullyConfig) -> Self {
        let peers = Peers::new(c);
        let higher = peers.better(c.rule, c.id);
        Bully {
            id: c.id,
            rule: c.rule,
            peers,
            higher,
            cfg,
            phase: Phase::Asleep,
            term: 0,
            timer: OneTimer::default(),
            behind: Behind::new(c.port_info.len()),
            reports: Reports::default(),
            leaving: false,
            gone: Vec::new(),
            handed_by: None,
        }
    }

    /// The highest term this node has seen.
    pub fn term(&self) -> u64 {
        self.term
    }

    /// What this node believes now: its term and leader (`None` while electing).
    pub fn leadership(&self) -> Leadership {
        let leader = match self.phase {
            Phase::Following(l) => Some(l),
            Phase::Leading => Some(self.id),
            Phase::Asleep | Phase::Electing { .. } => None,
        };
        Leadership { term: self.term, leader }
    }

    fn announce(&mut self, out: &mut Outbox) {
        let l = self.leadership();
        self.reports.announce(l, out);
    }

    /// Send `BullyElection` to every higher node that has not left, or lead
    /// if there is none. A leaving node does neither.
    fn elect(&mut self, out: &mut Outbox) {
        if self.leaving {
            return;
        }
        if self.higher.iter().all(|p| self.gone.contains(p)) {
            self.lead(out);
            return;
        }
        self.phase = Phase::Electing { answered: false };
        self.announce(out);
        for &port in self.higher.iter().filter(|p| !self.gone.contains(p)) {
            out.send(port, Msg::BullyElection { term: self.term });
        }
        self.timer.replace(ANSWER_TIMER, self.cfg.answer_timeout_ms, out);
    }

    /// Lead a new term and tell every node (not once the term space is used
    /// up: [`super::next_term`]).
    fn lead(&mut self, out: &mut Outbox) {
        if self.leaving {
            return;
        }
        let Some(term) = super::next_term(self.term) else { return };
        self.timer.stop(out);
        self.handed_by = None;
        self.term = term;
        self.phase = Phase::Leading;
        self.behind.told_all();
        self.announce(out);
        self.reports.decide_once(Role::Leader, self.id, out);
        self.peers.broadcast(Msg::Coordinator { leader: self.id, term: self.term }, out);
    }

    fn follow(&mut self, leader: u64, term: u64, out: &mut Outbox) {
        self.timer.stop(out);
        self.handed_by = None;
        self.term = term;
        self.phase = Phase::Following(leader);
        self.announce(out);
        self.reports.decide_once(Role::Follower, leader, out);
    }

    /// Wait for the `Coordinator` of a term this node has heard of.
    fn await_coordinator(&mut self, out: &mut Outbox) {
        self.phase = Phase::Electing { answered: true };
        self.announce(out);
        self.timer.replace(COORDINATOR_TIMER, self.cfg.coordinator_timeout_ms, out);
    }

    /// A message showed a later term than this node's.
    fn newer_term(&mut self, term: u64, out: &mut Outbox) {
        if self.leaving && self.phase == Phase::Leading {
            // It leads its term until its successor's claim reaches it.
            return;
        }
        self.term = term;
        match self.phase {
            Phase::Leading => self.elect(out),
            Phase::Following(_) => self.await_coordinator(out),
            Phase::Electing { .. } => self.announce(out),
            Phase::Asleep => {}
        }
    }

    fn on_election(&mut self, port: Port, term: u64, out: &mut Outbox) {
        if self.leaving {
            // Do not wait for me: it confirms that it leaves.
            if let Some(&from) = self.peers.get(port as usize) {
                out.send(port, Msg::Handover { term: self.term, successor: from });
            }
            return;
        }
        let stale = term < self.term;
        let current_leader = self.phase == Phase::Leading && term <= self.term;
        self.term = self.term.max(term);
        if current_leader {
            out.send(port, Msg::Coordinator { leader: self.id, term: self.term });
            return;
        }
        match self.phase {
            // Woken, or leading a term someone has moved past: elect.
            Phase::Asleep | Phase::Leading => self.elect(out),
            // As up to date as this node and no leader in sight: join in.
            Phase::Following(_) if !stale => self.elect(out),
            Phase::Following(_) => {}
            Phase::Electing { .. } => self.announce(out),
        }
        // The broadcast of a node that just led answers the sender too.
        if self.phase != Phase::Leading {
            out.send(port, Msg::Answer { term: self.term });
        }
    }

    fn on_answer(&mut self, term: u64, out: &mut Outbox) {
        let electing = self.phase == (Phase::Electing { answered: false });
        if term > self.term {
            self.newer_term(term, out);
        }
        if electing {
            self.phase = Phase::Electing { answered: true };
            self.timer.replace(COORDINATOR_TIMER, self.cfg.coordinator_timeout_ms, out);
        }
        // Otherwise a late answer: already waiting, or the coordinator came first.
    }

    fn on_coordinator(&mut self, port: Port, leader: u64, term: u64, out: &mut Outbox) {
        self.gone.retain(|&p| p != port);
        if self.leaving {
            // Follow the next claim, bully nobody (the successor's, normally).
            if term > self.term || (term == self.term && self.phase != Phase::Leading) {
                self.follow(leader, term, out);
            }
            return;
        }
        if term < self.term {
            if self.phase == Phase::Leading {
                out.send(port, Msg::Coordinator { leader: self.id, term: self.term });
            }
            return;
        }
        if self.rule.beats(self.id, leader) {
            // A lower node claims the lead while this one is alive: bully it.
            self.term = term;
            self.elect(out);
            return;
        }
        if let Phase::Following(current) = self.phase
            && term == self.term
            && self.rule.beats(current, leader)
        {
            return; // two leaders of one term (timing went wrong): keep the better
        }
        self.follow(leader, term, out);
    }
}

impl Bully {
    /// A `Handover` of this node's term naming it as the successor. From
    /// the leader it follows: elect now (not after a suspicion), asking the
    /// leaver too. From that leader again while the election waits for
    /// answers: the leaver's reply (it leaves, do not wait for it), so lead
    /// at once unless a better node is still there (then that one answers).
    /// Nothing else is heeded: the others keep following the leaver until
    /// the successor's `Coordinator`. A handover alone makes one node
    /// elect; only the leaver's reply to that election lets it lead
    /// without the answer timeout, and a leaver never leads again, so no
    /// two nodes lead one term. (A member that forges both the handover
    /// and the reply of a leader that is not leaving could make its
    /// successor lead the leader's next term beside it, as it could forge
    /// other claims; the peer token keeps outsiders from sending any.)
    fn on_handover(&mut self, port: Port, term: u64, successor: u64, out: &mut Outbox) {
        let Some(&from) = self.peers.get(port as usize) else { return };
        if self.leaving || successor != self.id || term != self.term {
            return;
        }
        if self.phase == Phase::Following(from) {
            // Its leader hands over to it: elect now, asking the leaver too.
            self.handed_by = Some(port);
            self.elect(out);
        } else if self.phase == (Phase::Electing { answered: false }) && self.handed_by == Some(port) {
            // The leaver answers the election it started: it is gone.
            self.gone = vec![port];
            if self.higher.iter().all(|p| self.gone.contains(p)) {
                self.lead(out);
            }
        }
    }
}

impl Bully {
    fn start(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Asleep {
            self.elect(out);
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = self.peers.sender(port)?;
        super::check_term(NAME, &msg)?;
        if !matches!(msg, Msg::Handover { .. }) {
            // It speaks up: it has not left (or came back).
            self.gone.retain(|&p| p != port);
        }
        match msg {
            Msg::Handover { term, successor } => self.on_handover(port, term, successor, out),
            Msg::BullyElection { term } if self.rule.beats(self.id, from) => self.on_election(port, term, out),
            Msg::Answer { term } if self.rule.beats(from, self.id) => self.on_answer(term, out),
            Msg::Coordinator { leader, term } if leader == from => self.on_coordinator(port, leader, term, out),
            // No correct node sends these: an election to a worse node, an
            // answer to a better one, a coordinator naming somebody else.
            Msg::BullyElection { .. } | Msg::Answer { .. } | Msg::Coordinator { .. } => {
                return Err(super::kept::invalid(NAME, msg, from, self.id, self.state()));
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: NAME, kind: msg.kind().name() }),
        }
        Ok(())
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        if !self.timer.fired(timer) || self.leaving {
            return; // replaced or cancelled after the driver queued it, or leaving
        }
        match (timer, self.phase) {
            (ANSWER_TIMER, Phase::Electing { answered: false }) => self.lead(out),
            (COORDINATOR_TIMER, Phase::Electing { answered: true }) => self.elect(out),
            _ => {}
        }
    }

    fn suspect(&mut self, port: Port, suspected: bool, out: &mut Outbox) {
        let Some(&peer) = self.peers.get(port as usize) else { return };
        if self.leaving {
            return;
        }
        match (suspected, self.phase) {
            (true, Phase::Following(leader)) if leader == peer => self.elect(out),
            // Heard again from a node it had given up on: tell it who leads
            // (it may have missed the Coordinator, or be the better id).
            (false, Phase::Leading) => out.send(port, Msg::Coordinator { leader: self.id, term: self.term }),
            _ => {}
        }
    }

    /// A neighbour's heartbeat shows its term and whether it leads it. A
    /// heartbeat of a leader is its claim, taken as its `Coordinator` would be
    /// (follow it, bully it if this node is the better id, or tell it of a
    /// later term if this node leads one). Otherwise, a later term than this
    /// node's means it missed that term's `Coordinator` (lost, or sent while
    /// it was cut off): it treats the term as news (a leader elects; a
    /// follower waits for the `Coordinator`, then elects); an earlier one
    /// seen by the leader means the neighbour missed this leader's
    /// `Coordinator`: the leader sends it again, once per heartbeat period
    /// until the neighbour catches up. So once faults heal every node learns
    /// the latest term and its leader within a heartbeat period or two, even
    /// if every election message to it was lost.
    fn heartbeat(&mut self, port: Port, term: u64, leading: bool, out: &mut Outbox) {
        let Some(&peer) = self.peers.get(port as usize) else { return };
        if self.leaving {
            if leading {
                self.on_coordinator(port, peer, term, out);
            }
            return;
        }
        if self.phase == Phase::Following(peer) && !leading && term >= self.term {
            // The leader this node follows says it leads nothing (it stepped
            // down, or the belief came from a forged coordinator): elect.
            self.elect(out);
            return;
        }
        if self.phase == Phase::Asleep || (self.phase == Phase::Following(peer) && term == self.term) {
            return;
        }
        if leading && matches!(self.phase, Phase::Electing { .. }) && self.rule.beats(self.id, peer) {
            // Already electing to bully it: a claim heard every period must not restart the election.
            if term > self.term {
                self.newer_term(term, out);
            }
        } else if leading {
            self.on_coordinator(port, peer, term, out);
        } else if term > self.term {
            self.newer_term(term, out);
        } else if term < self.term && self.phase == Phase::Leading && self.behind.heard(port) {
            out.send(port, Msg::Coordinator { leader: self.id, term: self.term });
        }
    }

    /// A leader hands over to the best node its detector does not suspect:
    /// it tells every node (`Handover`), leads its term until the
    /// successor's `Coordinator` (a higher term) reaches it, then follows.
    /// The successor elects at once and the leaver answers its election
    /// with a `Handover` (do not wait for me), so it leads three delays
    /// after the handover and everyone follows it one delay later. The
    /// followers keep following the leaver until then, so none is ever
    /// without a leader. A node that does not lead hands nothing over;
    /// leaving, none elects or bullies again, and each answers elections
    /// with a `Handover`.
    fn leave(&mut self, suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) {
            return false;
        }
        self.timer.stop(out);
        let live = |p: Port| !suspected.get(p as usize).copied().unwrap_or(false) && !self.gone.contains(&p);
        let best = self.peers.best_where(self.rule, live);
        if self.phase == Phase::Leading
            && let Some(successor) = best
        {
            self.peers.broadcast(Msg::Handover { term: self.term, successor }, out);
            return true;
        }
        false
    }
}

impl Algorithm for Bully {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { port, suspected } => self.suspect(port, suspected, out),
            Input::Heartbeat { port, term, leading } => self.heartbeat(port, term, leading, out),
            Input::Leave { suspected } => {
                if self.leave(suspected, out) {
                    out.push(Effect::HandingOver);
                }
            }
            Input::StoreReply(_) | Input::Restore(_) => {}
        }
        Ok(())
    }


    /// The leader watches every node (its heartbeats carry its claim to all,
    /// theirs their terms to it); a follower watches its leader only; a node
    /// electing relies on its timeouts. So a settled cluster sends 2(n − 1)
    /// heartbeats a period.
    fn watched(&self, port: Port) -> bool {
        match self.phase {
            Phase::Leading => true,
            Phase::Following(leader) => self.peers.get(port as usize) == Some(&leader),
            Phase::Asleep | Phase::Electing { .. } => false,
        }
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
    }

    fn state(&self) -> &'static str {
        match self.phase {
            Phase::Asleep => "asleep",
            Phase::Electing { answered: false } => "electing",
            Phase::Electing { answered: true } => "waiting",
            Phase::Following(_) => "follower",
            Phase::Leading => "leader",
        }
    }

    fn suspects(&self, _port: Port) -> bool {
        false
    }

    fn held(&self) -> usize {
        0
    }

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::{BTreeMap, BinaryHeap};

    use super::*;
    use crate::algo::harness::Feed;
    use crate::algo::Decision;

    /// Timeouts derived from the loopback detector are the loopback preset, and they grow with the detector's.
    #[test]
    fn timeouts_follow_the_detector() {
        assert_eq!(BullyConfig::for_detector(DetectorConfig::LOOPBACK), BullyConfig::LOOPBACK);
        let slow = BullyConfig::for_detector(DetectorConfig::KUBERNETES);
        assert_eq!((slow.answer_timeout_ms, slow.coordinator_timeout_ms), (5_000, 15_000));
    }
    use crate::algo::kept::testing::{self, PEERS_OF_3, decide, lead, send, started};
    use crate::algo::{Effect, MsgKind, PortInfo, catalogue};
    use crate::counters::Counters;
    use crate::shell::{Output, Outputs, Shell};
    use crate::sim::{self, SimConfig};
    use crate::topology::Topology;

    /// Node `id` whose ports lead to `peers`, in port order.
    fn node(id: u64, peers: &[u64]) -> Bully {
        testing::node(id, peers, |c| Bully::with_config(c, BullyConfig::LOOPBACK))
    }

    /// Node 3's elections of `term` (to 5 and 4, on ports 0 and 2) and its answer timer.
    fn elections_of_3(term: u64) -> [Effect; 3] {
        [
            send(0, Msg::BullyElection { term }),
            send(2, Msg::BullyElection { term }),
            Effect::SetTimer { timer: ANSWER_TIMER, after_ms: 500 },
        ]
    }

    /// A woken node announces it knows no leader, sends ELECTION to the higher
    /// ids only (5 and 4, on ports 0 and 2) and waits for an answer.
    #[test]
    fn election_goes_to_higher_ids_only() {
        let (a, out) = started(node(3, &PEERS_OF_3));
        assert_eq!(out.effects(), [&[lead(0, None)][..], &elections_of_3(0)].concat());
        assert_eq!(a.state(), "electing");
        assert!(started(a).1.effects().is_empty(), "a second start is ignored");
    }

    /// The highest id has nobody to ask: it leads term 1 at once and sends
    /// COORDINATOR to every other node.
    #[test]
    fn highest_id_leads_at_once() {
        let (a, out) = started(node(5, &[1, 4, 2, 3]));
        let mut expected = vec![lead(1, Some(5)), decide(Role::Leader, 5)];
        expected.extend((0..4).map(|p| send(p, Msg::Coordinator { leader: 5, term: 1 })));
        assert_eq!(out.effects(), &expected[..]);
        assert_eq!((a.state(), a.leadership()), ("leader", Leadership { term: 1, leader: Some(5) }));
    }

    /// An asleep node reached by ELECTION from a lower id wakes, starts its own
    /// election (to 5) and answers the sender; a second ELECTION is only answered.
    #[test]
    fn higher_node_answers_and_takes_over() {
        let mut a = node(4, &[1, 5, 2, 3]);
        let mut out = Outbox::default();
        a.on_message(0, Msg::BullyElection { term: 0 }, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[
                lead(0, None),
                send(1, Msg::BullyElection { term: 0 }),
                Effect::SetTimer { timer: ANSWER_TIMER, after_ms: 500 },
                send(0, Msg::Answer { term: 0 }),
            ]
        );
        out.clear();
        a.on_message(3, Msg::BullyElection { term: 0 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(3, Msg::Answer { term: 0 })]);
    }

    /// An answer makes the node wait for a coordinator (answer timer swapped
    /// for the coordinator timer); the coordinator makes it a follower of term
    /// 1, decided once; a late answer changes nothing.
    #[test]
    fn answer_then_coordinator() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        out.clear();
        a.on_message(2, Msg::Answer { term: 0 }, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[
                Effect::CancelTimer { timer: ANSWER_TIMER },
                Effect::SetTimer { timer: COORDINATOR_TIMER, after_ms: 1_500 },
            ]
        );
        assert_eq!(a.state(), "waiting");
        out.clear();
        a.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            &[Effect::CancelTimer { timer: COORDINATOR_TIMER }, lead(1, Some(5)), decide(Role::Follower, 5)]
        );
        out.clear();
        a.on_message(2, Msg::Answer { term: 1 }, &mut out).unwrap();
        assert!(out.effects().is_empty());
        assert_eq!(a.reports.decision(), Some(Decision { role: Role::Follower, leader: 5 }));
    }

    /// No answer within the timeout: the node leads the next term and tells
    /// everybody; no coordinator after an answer: it elects again.
    #[test]
    fn timeouts_lead_or_retry() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        out.clear();
        a.on_timer(COORDINATOR_TIMER, &mut out);
        assert!(out.effects().is_empty(), "a timer that is not pending is ignored");
        a.on_timer(ANSWER_TIMER, &mut out);
        let mut expected = vec![lead(1, Some(3)), decide(Role::Leader, 3)];
        expected.extend((0..4).map(|p| send(p, Msg::Coordinator { leader: 3, term: 1 })));
        assert_eq!(out.effects(), &expected[..]);

        let mut b = node(3, &PEERS_OF_3);
        b.on_start(&mut out);
        b.on_message(0, Msg::Answer { term: 0 }, &mut out).unwrap();
        out.clear();
        b.on_timer(COORDINATOR_TIMER, &mut out);
        assert_eq!(out.effects(), elections_of_3(0), "already announced `no leader`: only the elections and the timer");
    }

    /// The leader answers an election with its coordinator (it is alive); a
    /// follower answers a stale election (older term) without electing, and
    /// joins one of its own term (the sender found no leader).
    #[test]
    fn leader_and_followers_answer_elections() {
        let (mut m, mut out) = started(node(5, &[1, 4, 2, 3]));
        out.clear();
        m.on_message(0, Msg::BullyElection { term: 0 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::Coordinator { leader: 5, term: 1 })]);

        let mut f = node(3, &PEERS_OF_3);
        f.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        out.clear();
        f.on_message(1, Msg::BullyElection { term: 0 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(1, Msg::Answer { term: 1 })]);
        assert_eq!(f.state(), "follower");
        out.clear();
        f.on_message(3, Msg::BullyElection { term: 1 }, &mut out).unwrap();
        assert_eq!(
            out.effects(),
            [&[lead(1, None)][..], &elections_of_3(1), &[send(3, Msg::Answer { term: 1 })]].concat()
        );
    }

    /// Suspecting the leader starts an election of the current term;
    /// suspecting anybody else does nothing; a leader hearing again from a
    /// node it suspected re-announces itself to that node.
    #[test]
    fn suspicion_of_the_leader_starts_an_election() {
        let mut f = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        f.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        out.clear();
        f.on_suspect(2, true, &mut out);
        assert!(out.effects().is_empty(), "4 is not the leader");
        f.on_suspect(0, true, &mut out);
        assert_eq!(out.effects()[..2], [lead(1, None), send(0, Msg::BullyElection { term: 1 })]);

        let mut m = node(5, &[1, 4, 2, 3]);
        m.on_start(&mut out);
        out.clear();
        m.on_suspect(1, true, &mut out);
        m.on_suspect(1, false, &mut out);
        assert_eq!(out.effects(), &[send(1, Msg::Coordinator { leader: 5, term: 1 })]);
    }

    /// Terms: a lower node's coordinator is bullied (4 elects with the new
    /// term); a stale coordinator is answered by the leader with its own; a
    /// leader that sees a later term leads again above it; of two leaders of
    /// one term a follower keeps the higher.
    #[test]
    fn terms_and_bullying() {
        let mut out = Outbox::default();
        let mut b = node(4, &[1, 5, 2, 3]);
        b.on_message(1, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        out.clear();
        b.on_message(3, Msg::Coordinator { leader: 3, term: 2 }, &mut out).unwrap();
        assert_eq!(out.effects()[..2], [lead(2, None), send(1, Msg::BullyElection { term: 2 })]);

        let mut m = node(5, &[1, 4, 2, 3]);
        m.on_start(&mut out);
        out.clear();
        m.on_message(0, Msg::Coordinator { leader: 1, term: 0 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::Coordinator { leader: 5, term: 1 })], "stale: told who leads");
        out.clear();
        m.on_message(1, Msg::BullyElection { term: 3 }, &mut out).unwrap();
        assert_eq!(out.effects()[0], lead(4, Some(5)), "term 3 exists: 5 leads term 4");
        assert_eq!(out.effects().len(), 5, "the broadcast answers the election too");

        let mut f = node(2, &[1, 4, 5, 3]);
        f.on_message(2, Msg::Coordinator { leader: 5, term: 2 }, &mut out).unwrap();
        out.clear();
        f.on_message(1, Msg::Coordinator { leader: 4, term: 2 }, &mut out).unwrap();
        assert!(out.effects().is_empty(), "5 and 4 both claim term 2: keep 5");
        f.on_message(1, Msg::Coordinator { leader: 4, term: 3 }, &mut out).unwrap();
        assert_eq!(f.leadership(), Leadership { term: 3, leader: Some(4) });
    }

    /// Messages that cannot happen are errors: an election from a higher id,
    /// an answer from a lower one, a coordinator for somebody else, a foreign
    /// kind, a missing port.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        assert!(matches!(a.on_message(0, Msg::BullyElection { term: 0 }, &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(a.on_message(1, Msg::Answer { term: 0 }, &mut out), Err(AlgoError::Invalid(_))));
        let wrong = Msg::Coordinator { leader: 4, term: 1 };
        assert!(matches!(a.on_message(0, wrong, &mut out), Err(AlgoError::Invalid(_))));
        assert!(matches!(a.on_message(0, Msg::Wakeup, &mut out), Err(AlgoError::UnexpectedKind { .. })));
        assert!(matches!(a.on_message(9, Msg::Answer { term: 0 }, &mut out), Err(AlgoError::BadPort { port: 9 })));
    }

    /// In the simulator, every node initiating at time 0 with unit delays
    /// attains the bound n² − 1 exactly (n(n−1)/2 elections, as many replies,
    /// n − 1 broadcast coordinators); one initiator costs less; the maximum
    /// leads term 1 and every node agrees, under both rules.
    #[test]
    fn simulated_counts_attain_the_bound() {
        let spec = catalogue::find(NAME).unwrap();
        for n in [2u32, 3, 8, 20] {
            let (topo, ids, all) = testing::complete(n);
            for rule in [Rule::Max, Rule::Min] {
                let cfg = SimConfig { unit_delay: true, ..SimConfig::default() };
                let r = sim::run(spec, &topo, &ids, &all, rule, &cfg);
                assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
                let n = n as u64;
                assert_eq!(r.counters.messages, n * n - 1, "n = {n}");
                let by = |k: MsgKind| r.counters.by_kind[k as usize];
                assert_eq!(
                    (by(MsgKind::BullyElection), by(MsgKind::Answer), by(MsgKind::Coordinator)),
                    (n * (n - 1) / 2, n * (n - 1) / 2 - (n - 1), 2 * (n - 1))
                );
                let best = rule.winner(ids.iter().copied());
                assert!(r.leaderships.iter().any(|e| e.leadership == Leadership { term: 1, leader: best }));
                assert!(r.leaderships.iter().all(|e| e.leadership.term <= 1));
                let one = sim::run(spec, &topo, &ids, &[0], rule, &SimConfig::default());
                assert!(one.verdict.violations.is_empty(), "{:?}", one.verdict.violations);
                assert!(one.counters.messages < n * n - 1);
            }
        }
    }

    // ---- A hand-driven network with virtual time, crashes and cuts ----

    #[derive(Clone, Copy, Debug)]
    enum Ev {
        Deliver { from: u32, to: u32, port: Port, msg: Msg },
        Timer { pos: u32, timer: TimerId, generation: u64 },
    }

    /// Complete network of `A`s, each in the node shell every driver uses:
    /// random delays 1..=5 ms (a fixed LCG). A crashed node takes no
    /// input and its timers stop; a cut node keeps running but nothing it
    /// sends or is sent arrives. After every effect, it checks that no two
    /// nodes believe they lead the same term.
    struct Net<A> {
        topo: Topology,
        ids: Vec<u64>,
        nodes: Vec<Shell<A>>,
        now: u64,
        queue: BinaryHeap<Reverse<(u64, u64)>>,
        events: BTreeMap<u64, Ev>,
        seq: u64,
        crashed: Vec<bool>,
        cut: Vec<bool>,
        /// (time, position, belief) of every change of belief.
        timeline: Vec<(u64, u32, Leadership)>,
        /// Everything sent.
        tally: Counters,
        rng: u64,
    }

    impl<A: Algorithm> Net<A> {
        fn new(ids: &[u64], make: impl Fn(&NodeContext) -> A) -> Net<A> {
            let n = ids.len() as u32;
            let topo = Topology::complete(n).unwrap();
            let nodes = (0..n)
                .map(|v| {
                    let info: Vec<PortInfo> = topo
                        .ports(v)
                        .iter()
                        .map(|l| PortInfo { neighbour: ids[l.peer as usize], ..Default::default() })
                        .collect();
                    Shell::new(make(&NodeContext {
                        id: ids[v as usize],
                        rule: Rule::Max,
                        n,
                        ports: n - 1,
                        port_info: &info,
                        ..Default::default()
                    }))
                })
                .collect();
            Net {
                topo,
                ids: ids.to_vec(),
                nodes,
                now: 0,
                queue: BinaryHeap::new(),
                events: BTreeMap::new(),
                seq: 0,
                crashed: vec![false; n as usize],
                cut: vec![false; n as usize],
                timeline: Vec::new(),
                tally: Counters::default(),
                rng: 0x2545_f491_4f6c_dd1d,
            }
        }

        fn pos(&self, id: u64) -> u32 {
            self.ids.iter().position(|&x| x == id).unwrap() as u32
        }

        fn port_to(&self, from: u64, to: u64) -> Port {
            let (v, w) = (self.pos(from), self.pos(to));
            self.topo.ports(v).iter().position(|l| l.peer == w).unwrap() as Port
        }

        fn schedule(&mut self, at: u64, ev: Ev) {
            self.seq += 1;
            self.queue.push(Reverse((at, self.seq)));
            self.events.insert(self.seq, ev);
        }

        fn delay(&mut self) -> u64 {
            self.rng = self.rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            1 + (self.rng >> 33) % 5
        }

        fn apply(&mut self, pos: u32, out: &mut Outputs) {
            // Each step has a fresh buffer: its tally is that step's sends.
            self.tally.add(out.counters());
            for o in out.drain() {
                match o {
                    Output::Send { port, msg } => {
                        let l = *self.topo.link(pos, port).unwrap();
                        let at = self.now + self.delay();
                        self.schedule(at, Ev::Deliver { from: pos, to: l.peer, port: l.remote_port, msg });
                    }
                    Output::Lead(l) => {
                        self.timeline.push((self.now, pos, l));
                        self.check_one_leader_per_term();
                    }
                    Output::SetTimer { timer, after_ms, generation } => {
                        self.schedule(self.now + after_ms, Ev::Timer { pos, timer, generation })
                    }
                    Output::Misstep(m) => panic!("position {pos} {m}"),
                    Output::Store(op) => panic!("position {pos}: bully uses no store ({op:?})"),
                    Output::Decided(_) | Output::BeliefEnded(_) => {}
                }
            }
        }

        /// What each node believes now.
        fn beliefs(&self) -> Vec<Option<Leadership>> {
            self.nodes.iter().map(|s| s.leadership()).collect()
        }

        /// Everything sent so far.
        fn counters(&self) -> Counters {
            self.tally
        }

        fn check_one_leader_per_term(&self) {
            let mut leaders: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
            for (p, b) in self.beliefs().into_iter().enumerate() {
                if let Some(Leadership { term, leader: Some(l) }) = b
                    && l == self.ids[p]
                {
                    leaders.entry(term).or_default().push(l);
                }
            }
            for (term, ls) in leaders {
                assert!(ls.len() <= 1, "at {} ms two nodes lead term {term}: {ls:?}", self.now);
            }
        }

        fn start_all(&mut self) {
            for v in 0..self.nodes.len() as u32 {
                let mut out = Outputs::default();
                self.nodes[v as usize].start(&mut out);
                self.apply(v, &mut out);
            }
        }

        /// The node `id` is about to stop on purpose (SIGTERM).
        fn leave(&mut self, id: u64) {
            let v = self.pos(id);
            let mut out = Outputs::default();
            self.nodes[v as usize].leave(&mut out);
            self.apply(v, &mut out);
        }

        fn suspect(&mut self, at: u64, about: u64) {
            let (v, port) = (self.pos(at), self.port_to(at, about));
            let mut out = Outputs::default();
            self.nodes[v as usize].suspect(port, true, &mut out);
            self.apply(v, &mut out);
        }

        /// Handle every event up to `until` (or until none is left).
        fn run_until(&mut self, until: u64) {
            while let Some(&Reverse((at, seq))) = self.queue.peek() {
                if at > until {
                    break;
                }
                self.queue.pop();
                self.now = at;
                let ev = self.events.remove(&seq).unwrap();
                let mut out = Outputs::default();
                let pos = match ev {
                    Ev::Deliver { from, to, port, msg } => {
                        let lost = [from, to].iter().any(|&v| self.cut[v as usize] || self.crashed[v as usize]);
                        if lost {
                            continue;
                        }
                        self.nodes[to as usize].message(port, msg, &mut out).unwrap();
                        to
                    }
                    Ev::Timer { pos, timer, generation } => {
                        if self.crashed[pos as usize] || !self.nodes[pos as usize].timer(timer, generation, &mut out) {
                            continue;
                        }
                        pos
                    }
                };
                self.apply(pos, &mut out);
            }
            if until != u64::MAX {
                self.now = self.now.max(until);
            }
        }

        /// Every live node believes `belief`.
        fn all_live_believe(&self, belief: Leadership) -> bool {
            let beliefs = self.beliefs();
            (0..self.nodes.len()).filter(|&p| !self.crashed[p]).all(|p| beliefs[p] == Some(belief))
        }

        /// When every live node last changed its belief.
        fn settled_at(&self) -> u64 {
            self.timeline.iter().filter(|(_, p, _)| !self.crashed[*p as usize]).map(|&(t, ..)| t).max().unwrap()
        }
    }

    const IDS: [u64; 6] = [3, 7, 1, 5, 4, 2];

    fn kept_net() -> Net<Detected<Bully>> {
        Net::new(&IDS, |c| kept(c, BullyConfig::LOOPBACK, DetectorConfig::LOOPBACK))
    }

    /// Keep-a-leader with the detector, leader crashed, under both presets:
    /// six nodes elect 7 for term 1; 7 crashes (the test stops delivering its
    /// messages and firing its timers); the others' detectors suspect it after
    /// `timeout`..`timeout + period` of silence, 5 waits its answer timeout
    /// for 7 and leads term 2, and every live node follows 5 in term 2 within
    /// detection + answer timeout + a few delays, and stays so, with at most
    /// one leader per term at every instant (checked after every effect).
    #[test]
    fn leader_crash_elects_the_next_highest_with_a_higher_term() {
        for (name, b, d) in [
            ("loopback", BullyConfig::LOOPBACK, DetectorConfig::LOOPBACK),
            ("kubernetes", BullyConfig::KUBERNETES, DetectorConfig::KUBERNETES),
        ] {
            let mut net = Net::new(&IDS, |c| kept(c, b, d));
            net.start_all();
            let crash = 10 * d.timeout_ms;
            net.run_until(crash);
            assert!(net.all_live_believe(Leadership { term: 1, leader: Some(7) }), "{name}: {:?}", net.beliefs());
            let before = net.counters();
            let bound = (catalogue::find(NAME).unwrap().bound)(6, 6);
            assert!(before.heartbeat_messages > 0 && before.messages <= bound, "{name}: {before:?}");
            let seven = net.pos(7) as usize;
            net.crashed[seven] = true;
            net.run_until(crash + 2 * (d.timeout_ms + b.answer_timeout_ms));
            assert!(net.all_live_believe(Leadership { term: 2, leader: Some(5) }), "{name}: {:?}", net.beliefs());
            let first_doubt = net.timeline.iter().find(|(t, _, l)| *t > crash && l.leader.is_none()).unwrap().0;
            let (detection, failover) = (first_doubt - crash, net.settled_at() - crash);
            eprintln!(
                "{name}: crash of 7: first suspicion after {detection} ms, all follow 5 (term 2) after {failover} ms, \
                 {} election messages",
                net.counters().messages - before.messages
            );
            assert!((d.timeout_ms..=d.timeout_ms + d.period_ms + 10).contains(&detection), "{name}: {detection} ms");
            assert!(failover <= d.timeout_ms + d.period_ms + b.answer_timeout_ms + 20, "{name}: {failover} ms");
            assert_eq!(net.nodes[net.pos(5) as usize].algorithm().state(), "leader");
            net.run_until(crash + 50 * d.timeout_ms);
            assert!(
                net.all_live_believe(Leadership { term: 2, leader: Some(5) }),
                "{name} stable: {:?}",
                net.beliefs()
            );
        }
    }

    /// False suspicion: 7 is cut off (alive, its messages lost) from 2 s to
    /// 3.5 s. The others elect 5 for term 2 while 7 still believes it leads
    /// term 1 (two leaders, of different terms); when the cut heals, 5 tells 7
    /// of term 2, 7 (the higher id) bullies back with term 3 and everybody
    /// follows it. Never two leaders of one term.
    #[test]
    fn falsely_suspected_leader_steps_down_then_bullies_back() {
        let mut net = kept_net();
        net.start_all();
        net.run_until(2_000);
        let seven = net.pos(7) as usize;
        net.cut[seven] = true;
        net.run_until(3_500);
        let others: Vec<usize> = (0..6).filter(|&p| p != seven).collect();
        assert!(others.iter().all(|&p| net.beliefs()[p] == Some(Leadership { term: 2, leader: Some(5) })));
        assert_eq!(net.beliefs()[seven], Some(Leadership { term: 1, leader: Some(7) }), "7 cannot know");
        net.cut[seven] = false;
        net.run_until(5_000);
        assert!(net.all_live_believe(Leadership { term: 3, leader: Some(7) }), "{:?}", net.beliefs());
        eprintln!("after the cut healed at 3500 ms, all follow 7 (term 3) at {} ms", net.settled_at());
        assert!(net.settled_at() < 3_500 + 300);
    }

    /// A planned stop of the leader (SIGTERM) hands its leadership over
    /// without a leaderless moment: 7 leaves at 2 s; 5, the best node left,
    /// elects, 7 answers that it leaves, and 5 leads term 2 three delays
    /// after the handover; every other node goes from following 7 straight
    /// to following 5 (no belief without a leader in between) within four
    /// delays, and 5 names no leader only while it elects (a round trip); n − 1 handovers and the reply, one election, n − 1
    /// coordinators. After 7 stops for good nothing changes, and no node
    /// ever waited for a failure detector or a timeout.
    #[test]
    fn a_leaving_leader_hands_over_with_no_leaderless_moment() {
        let mut net = kept_net();
        net.start_all();
        net.run_until(2_000);
        assert!(net.all_live_believe(Leadership { term: 1, leader: Some(7) }));
        let (before, from) = (net.counters(), net.timeline.len());
        net.leave(7);
        net.run_until(2_000 + 20);
        assert!(net.all_live_believe(Leadership { term: 2, leader: Some(5) }), "{:?}", net.beliefs());
        let changes = &net.timeline[from..];
        let five = net.pos(5);
        let others = changes.iter().filter(|(_, p, _)| *p != five);
        assert!(others.clone().all(|(_, _, l)| l.leader.is_some()), "a node was without a leader: {changes:?}");
        // 5 itself, electing, names no leader for one round trip (its election to 7 and the reply).
        let mine: Vec<_> = changes.iter().filter(|(_, p, _)| *p == five).collect();
        assert_eq!(
            mine.iter().map(|(_, _, l)| *l).collect::<Vec<_>>(),
            [Leadership { term: 1, leader: None }, Leadership { term: 2, leader: Some(5) }]
        );
        assert!(mine[1].0 - mine[0].0 <= 10, "5 without a leader for {} ms", mine[1].0 - mine[0].0);
        let led = mine[1].0;
        assert!(led - 2_000 <= 15, "5 leads {} ms after the handover", led - 2_000);
        assert!(net.settled_at() - 2_000 <= 20, "{} ms", net.settled_at() - 2_000);
        let by = |net: &Net<_>, k: MsgKind| net.counters().by_kind[k as usize] - before.by_kind[k as usize];
        let kinds = [MsgKind::Handover, MsgKind::Coordinator, MsgKind::BullyElection];
        assert_eq!(kinds.map(|k| by(&net, k)), [6, 5, 1]);
        let seven = net.pos(7) as usize;
        net.crashed[seven] = true;
        net.run_until(20_000);
        assert!(net.all_live_believe(Leadership { term: 2, leader: Some(5) }), "{:?}", net.beliefs());
        assert_eq!(by(&net, MsgKind::BullyElection), 1, "nobody elected after 7 stopped");
    }

    /// A leaving node never leads or elects again: it answers elections
    /// with a `Handover` (do not wait for me), ignores timers and
    /// suspicions, and follows a lower node's claim instead of bullying it.
    /// A handover is heeded only from the leader of the node's own term
    /// and naming it: it elects, and leads once the leaver answers that
    /// election with another handover; a handover from anyone else, of
    /// another term or naming another node, changes nothing.
    #[test]
    fn a_leaving_node_stands_aside() {
        // Node 3 of {1..5} following 5 leaves (it led nothing: it sends nothing).
        let (mut three, _) = started(node(3, &PEERS_OF_3));
        let mut out = Outbox::default();
        three.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        let mut out = Outbox::default();
        three.on_leave(&[], &mut out);
        assert!(out.effects().iter().all(|e| !matches!(e, Effect::Send { .. })), "{:?}", out.effects());
        let mut out = Outbox::default();
        three.on_message(1, Msg::BullyElection { term: 1 }, &mut out).unwrap();
        assert_eq!(out.effects(), [send(1, Msg::Handover { term: 1, successor: 1 })]);
        let mut out = Outbox::default();
        three.on_suspect(0, true, &mut out);
        three.on_message(3, Msg::Coordinator { leader: 2, term: 2 }, &mut out).unwrap();
        assert_eq!(three.leadership(), Leadership { term: 2, leader: Some(2) }, "follows, does not bully");
        assert!(!out.effects().iter().any(|e| matches!(e, Effect::Send { .. })), "{:?}", out.effects());
        // Node 4 of {1..5} (better node 5 on port 0) follows 5 in term 1.
        let peers = [5, 1, 3, 2];
        let (mut four, _) = started(node(4, &peers));
        let mut out = Outbox::default();
        four.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        let following = four.leadership();
        for (port, msg) in [
            (0, Msg::Handover { term: 1, successor: 3 }), // names another node
            (0, Msg::Handover { term: 0, successor: 4 }), // another term
            (2, Msg::Handover { term: 1, successor: 4 }), // not from its leader
        ] {
            four.on_message(port, msg, &mut out).unwrap();
            assert_eq!(four.leadership(), following, "{msg:?} on port {port}");
        }
        let mut out = Outbox::default();
        four.on_message(0, Msg::Handover { term: 1, successor: 4 }, &mut out).unwrap();
        assert_eq!(four.leadership(), Leadership { term: 1, leader: None }, "it elects");
        assert!(out.effects().contains(&send(0, Msg::BullyElection { term: 1 })), "{:?}", out.effects());
        four.on_message(0, Msg::Handover { term: 1, successor: 4 }, &mut out).unwrap();
        assert_eq!(four.leadership(), Leadership { term: 2, leader: Some(4) }, "the leaver's reply");
    }

    /// The classic worst case, without detectors: six nodes follow 6; 6
    /// crashes and only the lowest node suspects it. Every live node joins
    /// the election, 5 times out waiting for 6 and leads term 2: exactly
    /// n(n − 1) = 30 messages (15 elections, 10 answers, 5 coordinators).
    #[test]
    fn one_election_after_a_crash_costs_n_times_n_minus_1() {
        let ids = [2, 6, 4, 1, 5, 3];
        let mut net = Net::new(&ids, Bully::new);
        net.start_all();
        net.run_until(u64::MAX);
        assert!(net.all_live_believe(Leadership { term: 1, leader: Some(6) }));
        assert!(net.queue.is_empty(), "one-shot: nothing pending once the leader is known");
        let before = net.counters();
        let six = net.pos(6) as usize;
        net.crashed[six] = true;
        net.suspect(1, 6);
        net.run_until(u64::MAX);
        assert!(net.all_live_believe(Leadership { term: 2, leader: Some(5) }), "{:?}", net.beliefs());
        let by = |k: MsgKind| net.counters().by_kind[k as usize] - before.by_kind[k as usize];
        assert_eq!((by(MsgKind::BullyElection), by(MsgKind::Answer), by(MsgKind::Coordinator)), (15, 10, 5));
        assert_eq!(net.counters().messages - before.messages, 6 * 5);
        assert_eq!(net.counters().heartbeat_messages, 0);
    }
}
