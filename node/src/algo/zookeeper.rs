//! # ZooKeeper-style election (NEW_LEADER / ACK / COMMIT with a quorum)
//!
//! * Source: seed 004, section "Apache Zookeeper": every server has a
//!   sequence number and the best one becomes leader; a potential leader
//!   broadcasts `NEW_LEADER`; each process acks at most one `NEW_LEADER`; a
//!   leader that receives a quorum of acks broadcasts `COMMIT`; on `COMMIT`
//!   processes update their leader pointer ("potentially no leader gets a
//!   quorum"). Failure detection: each process monitors the next-better one;
//!   when it fails, if it was the leader you become the proposed leader, else
//!   you re-check the next one. Here the sequence number is the node's id,
//!   ordered by the election rule ("better" = wins under the rule).
//! * Network: COMPLETE graph, bidirectional links, no FIFO. A node knows the
//!   ids behind its ports ([`NodeContext::port_info`]) and the size of the
//!   whole membership, n = [`NodeContext::n`]; the quorum is ⌊n/2⌋ + 1 **of
//!   the whole membership**, never of the nodes a node happens to see.
//! * Candidates: every node. Winner of a failure-free election: the best id.
//!   In the kept mode a live leader that still sees a quorum is never
//!   preempted, so after failures the leader is the best node that was live
//!   and connected to a quorum when the last election ran, not necessarily
//!   the best id.
//! * Messages (one-shot, failure-free, k initiators): at most
//!   **3(n − 1) + 2·min(k, n − 1)**; exactly **3(n − 1)** when the best node
//!   is the only initiator. Proof below.
//! * Stable storage: `(promised term, vote)` is written with
//!   [`Effect::Persist`] before every `ACK` and every proposal, and a
//!   recovered incarnation gets it back through [`Algorithm::restore`].
//!
//! ## The algorithm
//!
//! A node is *asleep*, *looking* (no leader), *proposing* itself, a
//! *follower*, or the *leader*. It keeps three numbers:
//!
//! * `epoch`, its **accepted epoch**: the term of the last leadership it
//!   learned from a `COMMIT` (or won). It is the term it announces with
//!   [`Effect::Lead`], and it only grows within an incarnation.
//! * `promised` and `vote`: the highest term it proposed or acked, and whom
//!   it acked in it (ZooKeeper's *acceptedEpoch*). This is what it persists.
//! * `seen`: the highest term it has heard of in any message.
//!
//! Failed proposals raise `promised` and `seen` but never `epoch`: only a
//! term that a quorum acked and its leader committed becomes an epoch.
//!
//! * **Who proposes.** A node watches the better nodes through its failure
//!   detector ([`Algorithm::on_suspect`]). It proposes itself when it is
//!   looking, every better node is suspected (the seed's chain "watch the
//!   next-better one; when it fails re-check the next one", with every link
//!   of the chain watched at once), and it sees a quorum (itself plus the
//!   peers it does not suspect). With no suspicions, that is the best node
//!   only. A proposal is `NEW_LEADER { term, leader }` to every peer with
//!   `term = max(seen, promised, epoch) + 1`, persisted as the node's own
//!   vote first.
//! * **ACK.** A node acks `NEW_LEADER { t, L }` (`ACK { t, L, ok: true }`,
//!   persisting `(t, L)` first) when `t > promised` and it is asleep,
//!   looking, proposing a term for a node that `L` beats, or following `L`
//!   itself (a leader moving its followers to a new epoch). Otherwise it
//!   refuses (`ok: false`, with the highest term it has seen), except that
//!   a leader answers with its own `COMMIT { epoch, self }`: a live leader
//!   with a quorum is not preempted, and the proposer learns who leads.
//!   A follower that refused while its leader looked alive remembers the
//!   best refused proposal and acks it as soon as it suspects its leader, if
//!   it still may.
//! * **COMMIT.** A proposer with a quorum of acks (its own included) leads:
//!   `epoch = term`, and it sends `COMMIT { term, self }` to every peer. A
//!   node that sees a quorum follows `COMMIT { e, L }` when `e ≥ epoch`
//!   (a node that does not see a quorum keeps looking: a minority never has
//!   a leader). A `COMMIT` below the node's epoch is stale: a leader answers
//!   it with its own `COMMIT`, any other node with `ACK { epoch, L, ok:
//!   false }`, telling the stale leader that a later epoch was committed.
//! * **Keeping it.** A follower that suspects its leader, or no longer sees
//!   a quorum, looks again (announcing `leader: None`) and proposes if it is
//!   now eligible. A leader that no longer sees a quorum steps down
//!   (announces `Leadership { term, leader: None }`). A leader that learns
//!   of a committed epoch above its own (a refusal carrying a higher term)
//!   proposes itself again with a higher term; its followers ack it. Every
//!   `recommit_ms` the leader sends its `COMMIT` again to every peer (the
//!   role of ZooKeeper's leader pings): this is how nodes that missed the
//!   `COMMIT` (dropped, partitioned, recovered) learn the leader, and how two
//!   leaders of different terms left by a healed partition meet.
//! * **Wake-up.** A node woken spontaneously that is not eligible sends one
//!   `Wakeup` to the best node (so an asleep best node starts the election);
//!   a leader answers a `Wakeup` with its `COMMIT`. A node woken by a
//!   message sends none.
//!
//! Every change of belief is announced with [`Effect::Lead`] (`leader: None`
//! while looking or proposing); the first leader learned also with
//! [`Effect::Decide`], for the one-shot verdicts.
//!
//! ## Safety: never two leaders of one term
//!
//! A node leads term `t` only after a quorum Q of nodes acked `(t, itself)`
//! (its own vote included). A node acks only terms strictly above its
//! `promised`, and raises `promised` to the acked term, persisted before the
//! `ACK` leaves; a recovered incarnation restores it. So every node acks at
//! most one proposal per term, even across crashes. Two leaders of term `t`
//! would need two quorums of acks for `t`; any two quorums of the same
//! membership intersect (⌊n/2⌋ + 1 twice exceeds n), and the node in both
//! would have acked two proposals of `t`. A node proposes a term above its
//! own `promised` (persisted as its own vote), so it never proposes one term
//! twice either. Followers only ever name the sender of a `COMMIT`, which
//! led that term. No timing assumption is needed: delays, drops,
//! duplicates, partitions, crashes and recoveries can only stop a quorum
//! from forming.
//!
//! ## Liveness
//!
//! A leader is elected once, for long enough, a quorum of nodes is live and
//! connected, messages arrive within `proposal_timeout_ms`, and the failure
//! detectors are accurate (no live node suspected, crashed nodes suspected).
//! Then the best live node M sees a quorum and suspects every better node,
//! so it is eligible, and no other node is. If some node still leads a live
//! quorum, M learns it within one `recommit_ms` and follows it. Otherwise M
//! proposes; every looking node acks a term above its promise; a node still
//! following a live leader L refuses, but L steps down or, holding an older
//! epoch than someone, re-proposes; a refusal teaches M the highest term
//! seen, and its retry after `proposal_timeout_ms` uses a higher one. The
//! quorum acks, M commits, and every live node follows it (the periodic
//! `COMMIT` reaches any node that missed it). Two leaders of different terms
//! left by a healed partition meet through their periodic `COMMIT`s: the
//! one of the lower term follows the other.
//!
//! ## Bound (one-shot, failure-free, k initiators: 3(n − 1) + 2·min(k, n − 1))
//!
//! Without faults nothing is ever suspected, so the best node B is the only
//! node that is ever eligible; it proposes exactly once (on waking), with
//! term 1: n − 1 `NEW_LEADER`s. Each other node receives exactly one
//! `NEW_LEADER` and answers it with exactly one `ACK` (acked, or refused if
//! B's `COMMIT` overtook it on a non-FIFO link: then it follows B and acks
//! its own leader's proposal anyway): n − 1 `ACK`s. B commits once, on the
//! quorum: n − 1 `COMMIT`s. No refusal carries a term above 1, so B never
//! proposes again, and nobody sends a stale-commit refusal. The only other
//! messages: every initiator other than B that wakes spontaneously sends
//! one `Wakeup` (at most min(k, n − 1) of them), and B answers each at most
//! once with a `COMMIT` (if it already leads when it arrives). Total
//! ≤ 3(n − 1) + 2·min(k, n − 1); with B the only initiator, no `Wakeup` is
//! sent and the count is exactly 3(n − 1). The one-shot mode sets no timer,
//! so once these messages are delivered the run is quiet.
//!
//! ## Partitions
//!
//! A side without a quorum never commits (quorum intersection again: it
//! cannot collect ⌊n/2⌋ + 1 acks). Its leader, if it had one, steps down as
//! soon as its detector suspects enough peers that it no longer sees a
//! quorum, and its followers stop following likewise; nodes there do not
//! even propose (they do not see a quorum), so with no majority anywhere
//! the whole cluster is without a leader, and says so with `leader: None`.
//! A majority side elects its best node with a term above every epoch its
//! quorum accepted. When the partition heals, the minority's nodes learn the
//! majority's leader from its periodic `COMMIT` (or the one it sends when
//! its detector hears from them again) and follow it, since its epoch is at
//! least theirs. Their failed proposals raised only `promised`, never
//! `epoch`, so they cannot unseat the leader: a `NEW_LEADER` from them is
//! refused by the followers and answered by the leader with its `COMMIT`.
//! A recovered node does the same: it restores its promise, looks, and
//! follows the first `COMMIT` it gets (the best node, recovering, proposes
//! once, but the followers of a live leader refuse it and the leader tells it
//! who leads).
//!
//! ## Modes
//!
//! The catalogue entry `zookeeper` ([`ZooKeeper::new`]) is **one-shot**: no
//! failure detector and no timer. **Keep a leader** with [`kept`]: a
//! [`Detected`]`<ZooKeeper>` with proposal retries and periodic commits.

use super::detector::{Detected, DetectorConfig};
use super::{
    AlgoError, Algorithm, Decision, Effect, Leadership, Msg, NodeContext, Outbox, Port, Role, Rule, Stable, TimerId,
};

const NAME: &str = "zookeeper";

/// Timer: a proposal that has not reached a quorum is retried.
pub const PROPOSAL_TIMER: TimerId = 0;
/// Timer: the leader sends its `COMMIT` again.
pub const RECOMMIT_TIMER: TimerId = 1;
/// Timer: a follower that heard no `COMMIT` from its leader for a lease looks again.
pub const LEASE_TIMER: TimerId = 2;

/// Timeouts of the kept mode, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZkConfig {
    /// A proposal without a quorum of acks after this long is retried (with
    /// a higher term) if the node is still eligible. Must exceed a round trip.
    pub proposal_timeout_ms: u64,
    /// The leader re-sends its `COMMIT` to every peer this often.
    pub recommit_ms: u64,
    /// A follower that heard no `COMMIT` from its leader for this long
    /// looks again (its leader may have stepped down without it hearing).
    /// A few recommit periods, so that a dropped `COMMIT` costs nothing.
    pub lease_ms: u64,
}

impl ZkConfig {
    /// Loopback: round trips far below 400 ms.
    pub const LOOPBACK: ZkConfig = ZkConfig { proposal_timeout_ms: 400, recommit_ms: 1_000, lease_ms: 2_500 };
    /// A Kubernetes cluster, next to [`DetectorConfig::KUBERNETES`].
    pub const KUBERNETES: ZkConfig = ZkConfig { proposal_timeout_ms: 2_000, recommit_ms: 5_000, lease_ms: 12_500 };
}

impl Default for ZkConfig {
    /// [`ZkConfig::LOOPBACK`].
    fn default() -> Self {
        ZkConfig::LOOPBACK
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Asleep,
    Looking,
    /// Proposing itself for the term in `ZooKeeper::proposal`.
    Proposing,
    Following(u64),
    Leading,
}

/// One node of the ZooKeeper-style election.
#[derive(Debug)]
pub struct ZooKeeper {
    id: u64,
    rule: Rule,
    /// The id behind each port.
    peers: Box<[u64]>,
    /// Ports leading to better nodes.
    better: Box<[Port]>,
    /// The port of the best peer, if it beats this node.
    best: Option<Port>,
    quorum: usize,
    /// Timers and retries (kept mode); `None`: one-shot.
    cfg: Option<ZkConfig>,
    phase: Phase,
    /// Accepted epoch: the term of the last committed leadership learned.
    epoch: u64,
    /// Highest term proposed or acked (persisted).
    promised: u64,
    /// Whom this node acked (or proposed) in `promised` (persisted).
    vote: Option<u64>,
    /// Highest term heard of.
    seen: u64,
    /// The term of this node's current proposal.
    proposal: u64,
    /// Per port: acked the current proposal.
    acks: Vec<bool>,
    /// Per port: answered the current proposal (its first `ACK` since).
    answered: Vec<bool>,
    /// Per port: suspected by the failure detector.
    suspected: Vec<bool>,
    /// The best proposal refused while following a live leader: (term, port).
    refused: Option<(u64, Port)>,
    /// A recovered incarnation (it got its stable record back).
    restored: bool,
    /// The one timer pending, if any.
    timer: Option<TimerId>,
    announced: Option<Leadership>,
    decided: Option<Decision>,
}

/// A kept-leadership node: [`ZooKeeper`] behind a heartbeat failure detector.
pub fn kept(c: &NodeContext, zk: ZkConfig, detector: DetectorConfig) -> Detected<ZooKeeper> {
    Detected::new(ZooKeeper::with_config(c, Some(zk)), c.ports, detector)
}

impl ZooKeeper {
    /// An asleep one-shot node (no timers): the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        ZooKeeper::with_config(c, None)
    }

    /// An asleep node; `cfg` gives the kept mode's timeouts (`None`: one-shot).
    pub fn with_config(c: &NodeContext, cfg: Option<ZkConfig>) -> Self {
        let peers: Box<[u64]> = c.port_info.iter().map(|p| p.neighbour).collect();
        let better: Box<[Port]> = (0..peers.len() as Port).filter(|&p| c.rule.beats(peers[p as usize], c.id)).collect();
        let best = better
            .iter()
            .copied()
            .reduce(|a, b| if c.rule.beats(peers[b as usize], peers[a as usize]) { b } else { a });
        let n = (c.n as usize).max(peers.len() + 1);
        ZooKeeper {
            id: c.id,
            rule: c.rule,
            quorum: n / 2 + 1,
            acks: vec![false; peers.len()],
            answered: vec![false; peers.len()],
            suspected: vec![false; peers.len()],
            peers,
            better,
            best,
            cfg,
            phase: Phase::Asleep,
            epoch: 0,
            promised: 0,
            vote: None,
            seen: 0,
            proposal: 0,
            refused: None,
            restored: false,
            timer: None,
            announced: None,
            decided: None,
        }
    }

    /// The accepted epoch (the term this node announces).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// What this node keeps on stable storage: its promised term and vote.
    pub fn stable(&self) -> Stable {
        Stable { term: self.promised, vote: self.vote }
    }

    /// The quorum: ⌊n/2⌋ + 1 of the whole membership.
    pub fn quorum(&self) -> usize {
        self.quorum
    }

    /// What this node believes now: its epoch and leader (`None` unless following or leading).
    pub fn leadership(&self) -> Leadership {
        let leader = match self.phase {
            Phase::Following(l) => Some(l),
            Phase::Leading => Some(self.id),
            Phase::Asleep | Phase::Looking | Phase::Proposing => None,
        };
        Leadership { term: self.epoch, leader }
    }

    fn announce(&mut self, out: &mut Outbox) {
        let l = self.leadership();
        if self.announced != Some(l) {
            self.announced = Some(l);
            out.push(Effect::Lead(l));
        }
    }

    fn decide_once(&mut self, role: Role, leader: u64, out: &mut Outbox) {
        if self.decided.is_none() {
            let d = Decision { role, leader };
            self.decided = Some(d);
            out.push(Effect::Decide(d));
        }
    }

    fn set_timer(&mut self, timer: TimerId, after_ms: u64, out: &mut Outbox) {
        self.stop_timer(out);
        self.timer = Some(timer);
        out.push(Effect::SetTimer { timer, after_ms });
    }

    fn stop_timer(&mut self, out: &mut Outbox) {
        if let Some(timer) = self.timer.take() {
            out.push(Effect::CancelTimer { timer });
        }
    }

    /// Itself plus the peers it does not suspect.
    fn visible(&self) -> usize {
        1 + self.suspected.iter().filter(|&&s| !s).count()
    }

    fn sees_quorum(&self) -> bool {
        self.visible() >= self.quorum
    }

    /// Looking, every better node suspected, and a quorum in sight.
    fn eligible(&self) -> bool {
        self.phase == Phase::Looking && self.better.iter().all(|&p| self.suspected[p as usize]) && self.sees_quorum()
    }

    fn persist(&self, out: &mut Outbox) {
        out.push(Effect::Persist(self.stable()));
    }

    fn broadcast(&self, msg: Msg, out: &mut Outbox) {
        for port in 0..self.peers.len() as Port {
            out.send(port, msg);
        }
    }

    /// Wake up; `spontaneous` when by `on_start`. A node that cannot
    /// propose then wakes the best node, or, recovered, tells every peer it
    /// restarted (its followers, if it led, stop following it; a leader
    /// answers with its `COMMIT`).
    fn wake(&mut self, spontaneous: bool, out: &mut Outbox) {
        self.phase = Phase::Looking;
        self.announce(out);
        if self.eligible() {
            self.propose(out);
        } else if spontaneous && self.restored {
            self.broadcast(Msg::Wakeup, out);
        } else if spontaneous && let Some(best) = self.best {
            out.send(best, Msg::Wakeup);
        }
    }

    /// Look for a leader again (announcing `leader: None`), and propose if eligible.
    fn look(&mut self, out: &mut Outbox) {
        self.stop_timer(out);
        self.phase = Phase::Looking;
        self.announce(out);
        self.ack_refused(out);
        if self.eligible() {
            self.propose(out);
        }
    }

    /// Propose itself for a term above every term it has heard of.
    fn propose(&mut self, out: &mut Outbox) {
        let term = self.seen.max(self.promised).max(self.epoch) + 1;
        self.seen = term;
        self.promised = term;
        self.vote = Some(self.id);
        self.proposal = term;
        self.acks.iter_mut().for_each(|a| *a = false);
        self.answered.iter_mut().for_each(|a| *a = false);
        self.refused = None;
        self.phase = Phase::Proposing;
        self.announce(out);
        self.persist(out);
        self.broadcast(Msg::NewLeader { term, leader: self.id }, out);
        if let Some(cfg) = self.cfg {
            self.set_timer(PROPOSAL_TIMER, cfg.proposal_timeout_ms, out);
        }
        self.check_quorum(out);
    }

    fn check_quorum(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Proposing && 1 + self.acks.iter().filter(|&&a| a).count() >= self.quorum {
            self.lead(out);
        }
    }

    /// A quorum acked: lead the proposal's term and commit it to every peer.
    fn lead(&mut self, out: &mut Outbox) {
        self.stop_timer(out);
        self.epoch = self.proposal;
        self.phase = Phase::Leading;
        self.announce(out);
        self.decide_once(Role::Leader, self.id, out);
        self.broadcast(Msg::Commit { term: self.epoch, leader: self.id }, out);
        if let Some(cfg) = self.cfg {
            self.set_timer(RECOMMIT_TIMER, cfg.recommit_ms, out);
        }
    }

    fn follow(&mut self, leader: u64, term: u64, out: &mut Outbox) {
        self.stop_timer(out);
        self.epoch = term;
        self.refused = None;
        self.phase = Phase::Following(leader);
        self.announce(out);
        self.decide_once(Role::Follower, leader, out);
        if let Some(cfg) = self.cfg {
            self.set_timer(LEASE_TIMER, cfg.lease_ms, out);
        }
    }

    /// May this node ack `NEW_LEADER { term, leader }` now?
    fn may_ack(&self, term: u64, leader: u64) -> bool {
        term > self.promised
            && match self.phase {
                Phase::Asleep | Phase::Looking => true,
                Phase::Proposing => self.rule.beats(leader, self.id),
                Phase::Following(l) => l == leader,
                Phase::Leading => false,
            }
    }

    fn ack(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) {
        if self.phase == Phase::Proposing {
            // Backing a better proposer of a later term: give up its own.
            self.stop_timer(out);
            self.phase = Phase::Looking;
            self.announce(out);
        }
        self.promised = term;
        self.vote = Some(leader);
        self.refused = None;
        self.persist(out);
        out.send(port, Msg::Ack { term, leader, ok: true });
    }

    /// Ack the proposal refused while following, if it may be acked now.
    fn ack_refused(&mut self, out: &mut Outbox) {
        if let Some((term, port)) = self.refused.take() {
            let leader = self.peers[port as usize];
            if !self.suspected[port as usize] && self.may_ack(term, leader) {
                self.ack(port, term, leader, out);
            }
        }
    }

    fn sender(&self, port: Port) -> Result<u64, AlgoError> {
        self.peers.get(port as usize).copied().ok_or(AlgoError::BadPort { port })
    }

    fn invalid(&self, msg: Msg, from: u64) -> AlgoError {
        AlgoError::Invalid(format!("{NAME}: {msg:?} from {from} cannot reach node {} ({})", self.id, self.state()))
    }

    fn on_new_leader(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) {
        self.seen = self.seen.max(term);
        if self.phase == Phase::Asleep {
            self.wake(false, out);
        }
        if self.phase == Phase::Leading {
            // Not preempted: tell the proposer who leads.
            out.send(port, Msg::Commit { term: self.epoch, leader: self.id });
            return;
        }
        if self.may_ack(term, leader) {
            self.ack(port, term, leader, out);
            return;
        }
        if matches!(self.phase, Phase::Following(_)) && term > self.promised && self.refused.is_none_or(|r| r.0 < term)
        {
            self.refused = Some((term, port));
        }
        out.send(port, Msg::Ack { term: self.seen, leader, ok: false });
    }

    fn on_ack(&mut self, port: Port, term: u64, ok: bool, out: &mut Outbox) {
        self.seen = self.seen.max(term);
        let first = !std::mem::replace(&mut self.answered[port as usize], true);
        match self.phase {
            Phase::Proposing if ok && term == self.proposal => {
                self.acks[port as usize] = true;
                self.check_quorum(out);
            }
            // A peer's first `ACK` since the proposal answers it (a late
            // refusal carries the peer's highest promise, which a minority
            // may have bumped: ignored). A later refusal answers a `COMMIT`
            // as stale: that peer accepted a later epoch, so the leader
            // moves its followers to a new term above it (kept mode only;
            // the one-shot election never meets one).
            Phase::Leading if !ok && !first && term > self.epoch && self.cfg.is_some() => {
                self.stop_timer(out);
                self.phase = Phase::Looking;
                self.propose(out);
            }
            _ => {} // late, or about an abandoned proposal
        }
    }

    fn on_commit(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        self.seen = self.seen.max(term);
        if self.phase == Phase::Asleep {
            self.wake(false, out);
        }
        if term < self.epoch {
            // Stale: tell its sender a later epoch was committed.
            let reply = if self.phase == Phase::Leading {
                Msg::Commit { term: self.epoch, leader: self.id }
            } else {
                Msg::Ack { term: self.epoch, leader, ok: false }
            };
            out.send(port, reply);
            return Ok(());
        }
        match self.phase {
            Phase::Leading if term == self.epoch => {
                return Err(AlgoError::Invalid(format!(
                    "{NAME}: node {} leads term {term} and {leader} claims it too",
                    self.id
                )));
            }
            Phase::Following(l) if term == self.epoch && l != leader => {
                return Err(AlgoError::Invalid(format!(
                    "{NAME}: node {} follows {l} in term {term} and {leader} claims it too",
                    self.id
                )));
            }
            _ => {}
        }
        if self.sees_quorum() {
            self.follow(leader, term, out);
        }
        Ok(())
    }
}

impl Algorithm for ZooKeeper {
    fn on_start(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Asleep {
            self.wake(true, out);
        }
    }

    fn on_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = self.sender(port)?;
        match msg {
            Msg::NewLeader { term, leader } => {
                if leader != from || term == 0 {
                    return Err(self.invalid(msg, from));
                }
                self.on_new_leader(port, term, leader, out);
            }
            Msg::Ack { term, leader, ok } => {
                if leader != self.id {
                    return Err(self.invalid(msg, from));
                }
                self.on_ack(port, term, ok, out);
            }
            Msg::Commit { term, leader } => {
                if leader != from || term == 0 {
                    return Err(self.invalid(msg, from));
                }
                self.on_commit(port, term, leader, out)?;
            }
            Msg::Wakeup => match self.phase {
                Phase::Asleep => self.wake(false, out),
                Phase::Leading => out.send(port, Msg::Commit { term: self.epoch, leader: self.id }),
                // The leader restarted (a new incarnation, too quick for the
                // detector): it leads no more.
                Phase::Following(l) if l == from => self.look(out),
                _ => {}
            },
            _ => return Err(AlgoError::UnexpectedKind { algorithm: NAME, kind: msg.kind().name() }),
        }
        Ok(())
    }

    fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
        if self.timer != Some(timer) {
            return; // replaced or cancelled after the driver queued it
        }
        self.timer = None;
        match (timer, self.phase) {
            (PROPOSAL_TIMER, Phase::Proposing) | (LEASE_TIMER, Phase::Following(_)) => self.look(out),
            (RECOMMIT_TIMER, Phase::Leading) => {
                self.broadcast(Msg::Commit { term: self.epoch, leader: self.id }, out);
                if let Some(cfg) = self.cfg {
                    self.set_timer(RECOMMIT_TIMER, cfg.recommit_ms, out);
                }
            }
            _ => {}
        }
    }

    fn on_suspect(&mut self, port: Port, suspected: bool, out: &mut Outbox) {
        let Some(&peer) = self.peers.get(port as usize) else { return };
        self.suspected[port as usize] = suspected;
        match (suspected, self.phase) {
            (_, Phase::Asleep) => {}
            (true, Phase::Following(leader)) if leader == peer || !self.sees_quorum() => self.look(out),
            (true, Phase::Leading) if !self.sees_quorum() => {
                // Step down, and tell the peers still in sight: its followers stop following.
                for p in 0..self.peers.len() as Port {
                    if !self.suspected[p as usize] {
                        out.send(p, Msg::Wakeup);
                    }
                }
                self.look(out);
            }
            (true, Phase::Looking) => self.look(out),
            // Heard again from a node it had given up on: tell it who leads.
            (false, Phase::Leading) => out.send(port, Msg::Commit { term: self.epoch, leader: self.id }),
            (false, Phase::Looking) if self.eligible() => self.propose(out),
            // Looking, and heard again from a node: a leader answers with its
            // `COMMIT`, a node that still follows this one stops.
            (false, Phase::Looking) => out.send(port, Msg::Wakeup),
            _ => {}
        }
    }

    fn restore(&mut self, stable: Stable) {
        self.promised = stable.term;
        self.vote = stable.vote;
        self.seen = self.seen.max(stable.term);
        self.restored = true;
    }

    fn decision(&self) -> Option<Decision> {
        self.decided
    }

    fn state(&self) -> &'static str {
        match self.phase {
            Phase::Asleep => "asleep",
            Phase::Looking => "looking",
            Phase::Proposing => "proposing",
            Phase::Following(_) => "follower",
            Phase::Leading => "leader",
        }
    }
}
