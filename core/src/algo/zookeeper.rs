//! # ZooKeeper-style election (NEW_LEADER / ACK / COMMIT with a quorum)
//!
//! * Source: ZooKeeper's leader election as usually taught, after P. Hunt,
//!   M. Konar, F. P. Junqueira, B. Reed, "ZooKeeper: wait-free coordination for
//!   Internet-scale systems", USENIX ATC 2010, and the `NEW_LEADER` / `ACK` /
//!   `COMMIT` exchange of Zab (F. P. Junqueira, B. C. Reed, M. Serafini, "Zab:
//!   high-performance broadcast for primary-backup systems", DSN 2011): every
//!   server has a sequence number and the best one becomes leader; a potential
//!   leader broadcasts `NEW_LEADER`; each process acks at most one
//!   `NEW_LEADER`; a leader that receives a quorum of acks broadcasts `COMMIT`;
//!   on `COMMIT` processes update their leader pointer ("potentially no leader
//!   gets a quorum"). Failure detection: each process monitors the next-better
//!   one; when it fails, if it was the leader you become the proposed leader,
//!   else you re-check the next one. Here the sequence number is the node's id,
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
//!   recovered incarnation gets it back through [`Input::Restore`].
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
//!   detector ([`Input::Suspect`]). It proposes itself when it is
//!   looking, every better node is suspected (the chain "watch the
//!   next-better one; when it fails re-check the next one", with every link
//!   of the chain watched at once), and it sees a quorum (itself plus the
//!   peers it does not suspect). With no suspicions, that is the best node
//!   only. A proposal is `NEW_LEADER { term, leader }` to every peer with
//!   `term = max(seen, promised, epoch) + 1`, persisted as the node's own
//!   vote first.
//! * **ACK.** A node acks `NEW_LEADER { t, L }` (`ACK { t, L, ok: true }`,
//!   persisting `(t, L)` first) when `t > promised` and it is asleep,
//!   looking, proposing itself while `L` beats it, or following `L`
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
//!   a quorum, or heard no `COMMIT` from its leader for `lease_ms`, looks
//!   again (announcing `leader: None`) and proposes if it is now eligible. A
//!   leader that no longer sees a quorum steps down (announces
//!   `Leadership { term, leader: None }`) and sends `Wakeup` to the peers it
//!   still sees: a follower that gets a `Wakeup` from its own leader stops
//!   following it. A looking node that hears again from a peer it suspected
//!   sends it a `Wakeup` too (a leader answers with its `COMMIT`). A leader that learns
//!   of a committed epoch above its own (a refusal carrying a higher term)
//!   proposes itself again with a higher term; its followers ack it. Every
//!   `recommit_ms` the leader sends its `COMMIT` again to every peer (the
//!   role of ZooKeeper's leader pings): this is how nodes that missed the
//!   `COMMIT` (dropped, partitioned, recovered) learn the leader, and how two
//!   leaders of different terms left by a healed partition meet.
//! * **Wake-up.** A node woken spontaneously that is not eligible sends one
//!   `Wakeup` to the best node (so an asleep best node starts the election);
//!   a leader answers a `Wakeup` with its `COMMIT`. A node woken by a
//!   message sends none. A recovered incarnation (one that got a record
//!   back through `restore`) sends `Wakeup` to every peer instead: if it
//!   led before a crash too short for the detectors, its followers learn
//!   that it leads no more.
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
use super::kept::{OneTimer, Peers};
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, KeptSpec, Provision, per_second};
use super::{
    AlgoError, Algorithm, Effect, Input, Leadership, Msg, NodeContext, Outbox, Port, Reports, Role, Rule, Stable,
    TimerId,
};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "zookeeper",
    title: "ZooKeeper-style election (NEW_LEADER / ACK / COMMIT)",
    source: "P. Hunt, M. Konar, F. P. Junqueira, B. Reed, ZooKeeper: wait-free coordination for Internet-scale \
             systems, USENIX ATC 2010 (sequence numbers, each node watches the next-better one); F. P. Junqueira, \
             B. C. Reed, M. Serafini, Zab: high-performance broadcast for primary-backup systems, DSN 2011 \
             (NEW_LEADER / ACK / COMMIT with a quorum)",
    description: "The best node proposes itself with NEW_LEADER and a term above every term it has heard of; \
                  each node acks at most one proposal per term (persisted, so also across a crash); a proposer \
                  acked by a quorum (a majority of all nodes) leads and broadcasts COMMIT, on which the others \
                  follow it. A non-best initiator wakes the best node with one WAKEUP. One-shot here (no \
                  failure detector, no timer); the kept mode adds heartbeats: a node proposes once every \
                  better node is suspected and it sees a quorum, a leader that no longer sees a quorum steps \
                  down, and a live leader with a quorum is never preempted.",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "3(n-1) + 2 min(k, n-1) (NEW_LEADER, ACK, COMMIT from the best node; a WAKEUP from each other initiator and at most one COMMIT answering it; exactly 3(n-1) when the best node alone initiates)",
    bound: &|n, k| 3 * n.saturating_sub(1) + 2 * k.min(n.saturating_sub(1)),
    timer_events: |_| 0,
    heap_bytes_per_position: 43_949,
    kept: Some(KeptSpec {
        build: |c, d| Box::new(kept(c, ZkConfig::for_detector(d), d)),
        // The leader and its followers watch only each other.
        heartbeats_per_period: |topo| 2 * u64::from(topo.len().saturating_sub(1)),
        // Looking nodes watch everyone: a heartbeat per directed link every period.
        election_load_per_second: |topo, d| per_second(topo.link_count() as u64, d.period_ms),
        convergence_bound_ms: |d, _, delay_ms| convergence_bound_ms(d, delay_ms),
        max_local_nodes: 128,
        lease: None,
        liveness_needs: None,
    }),
    live_provision: Provision::Nodes,
    machine: machine!(ZooKeeper::new),
    extras: Extras::NONE,
};

const NAME: &str = "zookeeper";

crate::timers! {
    /// Timer: a proposal that has not reached a quorum is retried.
    PROPOSAL_TIMER = 0 => "proposal";
    /// Timer: the leader sends its `COMMIT` again.
    RECOMMIT_TIMER = 1 => "recommit";
    /// Timer: a follower that heard no `COMMIT` from its leader for a lease looks again.
    LEASE_TIMER = 2 => "lease";
}

/// Timeouts of the kept mode, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

    /// Timeouts scaled to a detector's suspicion timeout `t`: proposals retried
    /// after 2t, COMMIT re-sent every 5t, followers looking again after 12.5t
    /// ([`ZkConfig::LOOPBACK`] for [`DetectorConfig::LOOPBACK`]).
    pub fn for_detector(d: DetectorConfig) -> ZkConfig {
        let t = d.timeout_ms.max(1);
        ZkConfig {
            proposal_timeout_ms: t.saturating_mul(2),
            recommit_ms: t.saturating_mul(5),
            lease_ms: t.saturating_mul(25) / 2,
        }
    }
}

impl Default for ZkConfig {
    /// [`ZkConfig::LOOPBACK`].
    fn default() -> Self {
        ZkConfig::LOOPBACK
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Asleep,
    Looking,
    /// Proposing itself for the term in `ZooKeeper::proposal`.
    Proposing,
    Following(u64),
    Leading,
}

/// One node of the ZooKeeper-style election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZooKeeper {
    id: u64,
    rule: Rule,
    peers: Peers,
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
    timer: OneTimer,
    reports: Reports,
    /// About to stop ([`Input::Leave`]): it never proposes again,
    /// and acks any proposal (a leader that leaves is preempted willingly).
    leaving: bool,
    /// Its leader, leaving, named this successor: it may ack the
    /// successor's proposal while it still follows the leaver.
    released: Option<u64>,
}

/// How long after the last fault heals the live nodes of a live majority
/// follow one live leader at most, with the timeouts [`ZkConfig::for_detector`]
/// derives from `d` and messages delayed by at most `delay_ms`: **F + 2R +
/// T + 2P + 4δ**, F the follower lease, R the proposal timeout (72 periods +
/// 4δ for the default T = 4P). Argument: a follower of a leader that no
/// longer commits to it drops it when its lease F runs out; a proposal that
/// fails (split acks) is retried after R; a suspicion left over from the
/// faults clears within T; commits and heartbeats reach everyone within P +
/// 2δ. Argued, not proved; `core/tests/zookeeper_chaos.rs` asserts it on
/// 2,000 seeded runs of the full fault mix.
pub fn convergence_bound_ms(d: DetectorConfig, delay_ms: u64) -> u64 {
    let z = ZkConfig::for_detector(d);
    z.lease_ms + 2 * z.proposal_timeout_ms + d.timeout_ms + 2 * d.period_ms + 4 * delay_ms
}

/// A kept-leadership node: [`ZooKeeper`] behind a heartbeat failure detector.
pub fn kept(c: &NodeContext, zk: ZkConfig, detector: DetectorConfig) -> Detected<ZooKeeper> {
    Detected::new(ZooKeeper::with_config(c, Some(zk)), c.id, c.ports, detector)
}

impl ZooKeeper {
    /// An asleep one-shot node (no timers): the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        ZooKeeper::with_config(c, None)
    }

    /// An asleep node; `cfg` gives the kept mode's timeouts (`None`: one-shot).
    pub fn with_config(c: &NodeContext, cfg: Option<ZkConfig>) -> Self {
        let peers = Peers::new(c);
        let better = peers.better(c.rule, c.id);
        let best = better
            .iter()
            .copied()
            .reduce(|a, b| if c.rule.beats(peers[b as usize], peers[a as usize]) { b } else { a });
        ZooKeeper {
            id: c.id,
            rule: c.rule,
            quorum: peers.majority(c.n),
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
            timer: OneTimer::default(),
            reports: Reports::default(),
            leaving: false,
            released: None,
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
        self.reports.announce(l, out);
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

    /// Wake up; `spontaneous` when by its start. A node that cannot
    /// propose then wakes the best node, or, recovered, tells every peer it
    /// restarted (its followers, if it led, stop following it; a leader
    /// answers with its `COMMIT`).
    fn wake(&mut self, spontaneous: bool, out: &mut Outbox) {
        self.phase = Phase::Looking;
        self.announce(out);
        if self.eligible() {
            self.propose(out);
        } else if spontaneous && self.restored {
            self.peers.broadcast(Msg::Wakeup, out);
        } else if spontaneous && let Some(best) = self.best {
            out.send(best, Msg::Wakeup);
        }
    }

    /// Look for a leader again (announcing `leader: None`), and propose if eligible.
    fn look(&mut self, out: &mut Outbox) {
        self.timer.stop(out);
        self.phase = Phase::Looking;
        self.announce(out);
        if self.eligible() {
            self.propose(out);
        } else {
            self.ack_refused(out);
        }
    }

    /// Propose itself for a term above every term it has heard of (none once
    /// the term space is used up: [`super::next_term`]).
    fn propose(&mut self, out: &mut Outbox) {
        if self.leaving {
            return;
        }
        let Some(term) = super::next_term(self.seen.max(self.promised).max(self.epoch)) else { return };
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
        self.peers.broadcast(Msg::NewLeader { term, leader: self.id }, out);
        if let Some(cfg) = self.cfg {
            self.timer.replace(PROPOSAL_TIMER, cfg.proposal_timeout_ms, out);
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
        self.timer.stop(out);
        self.epoch = self.proposal;
        self.phase = Phase::Leading;
        self.announce(out);
        self.reports.decide_once(Role::Leader, self.id, out);
        self.peers.broadcast(Msg::Commit { term: self.epoch, leader: self.id }, out);
        if let Some(cfg) = self.cfg {
            self.timer.replace(RECOMMIT_TIMER, cfg.recommit_ms, out);
        }
    }

    fn follow(&mut self, leader: u64, term: u64, out: &mut Outbox) {
        self.timer.stop(out);
        self.epoch = term;
        self.refused = None;
        self.released = None;
        self.phase = Phase::Following(leader);
        self.announce(out);
        self.reports.decide_once(Role::Follower, leader, out);
        if let Some(cfg) = self.cfg {
            self.timer.replace(LEASE_TIMER, cfg.lease_ms, out);
        }
    }

    /// May this node ack `NEW_LEADER { term, leader }` now?
    fn may_ack(&self, term: u64, leader: u64) -> bool {
        term > self.promised
            && match self.phase {
                Phase::Asleep | Phase::Looking => true,
                Phase::Proposing => self.rule.beats(leader, self.id),
                Phase::Following(l) => l == leader || self.released == Some(leader),
                Phase::Leading => self.leaving,
            }
    }

    fn ack(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) {
        if self.phase == Phase::Proposing {
            // Backing a better proposer of a later term: give up its own.
            self.timer.stop(out);
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

    fn on_new_leader(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) {
        self.seen = self.seen.max(term);
        if self.phase == Phase::Asleep {
            self.wake(false, out);
        }
        if self.phase == Phase::Leading && !self.leaving {
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
                self.timer.stop(out);
                self.phase = Phase::Looking;
                self.propose(out);
            }
            _ => {} // late, or about an abandoned proposal
        }
    }

    /// The leader this node follows (behind `port`) leaves its epoch
    /// `term` and names `successor`: this node may ack the successor's
    /// proposal while it still follows the leaver (it follows the successor
    /// on its `COMMIT`, with no moment without a leader); the successor
    /// proposes at once. Safety still rests on the quorum of acks per term:
    /// a handover only lets a follower ack one more proposer.
    fn on_handover(&mut self, port: Port, term: u64, successor: u64, out: &mut Outbox) {
        let Some(&from) = self.peers.get(port as usize) else { return };
        if self.leaving || self.phase != Phase::Following(from) || term != self.epoch {
            return;
        }
        self.released = Some(successor);
        if successor == self.id {
            self.propose(out);
        } else if self.refused.is_some_and(|(_, p)| self.peers.get(p as usize) == Some(&successor)) {
            // Its proposal came first and was refused: ack it now.
            self.ack_refused(out);
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

impl ZooKeeper {
    /// Forget what no step reads again before writing it: the acks and the
    /// term of a proposal once it is over (the next proposal starts them
    /// afresh), who answered it once the node neither proposes nor leads on
    /// it, and the successor a leaving leader named once the node no longer
    /// follows that leader. Two nodes that differ only there behave alike;
    /// forgetting makes them one state, for the checker (docs/checking.md,
    /// "Dead values"), and changes nothing a run does.
    fn forget_dead_values(&mut self) {
        if self.phase != Phase::Proposing {
            self.proposal = 0;
            self.acks.iter_mut().for_each(|a| *a = false);
            if self.phase != Phase::Leading {
                self.answered.iter_mut().for_each(|a| *a = false);
            }
        }
        if !matches!(self.phase, Phase::Following(_)) {
            self.released = None;
        }
    }

    fn handle_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = self.peers.sender(port)?;
        super::check_term(NAME, &msg)?;
        match msg {
            Msg::NewLeader { term, leader } if leader == from && term != 0 => {
                self.on_new_leader(port, term, leader, out)
            }
            Msg::Ack { term, leader, ok } if leader == self.id => self.on_ack(port, term, ok, out),
            Msg::Commit { term, leader } if leader == from && term != 0 => self.on_commit(port, term, leader, out)?,
            // No correct node sends these: a proposal or commit naming
            // somebody else than its sender, or of term 0; an ack for
            // another proposer.
            Msg::NewLeader { .. } | Msg::Ack { .. } | Msg::Commit { .. } => {
                return Err(super::kept::invalid(NAME, msg, from, self.id, self.state()));
            }
            Msg::Handover { term, successor } => self.on_handover(port, term, successor, out),
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

    fn handle_timer(&mut self, timer: TimerId, out: &mut Outbox) {
        if !self.timer.fired(timer) {
            return; // replaced or cancelled after the driver queued it
        }
        match (timer, self.phase) {
            (PROPOSAL_TIMER, Phase::Proposing) | (LEASE_TIMER, Phase::Following(_)) => self.look(out),
            (RECOMMIT_TIMER, Phase::Leading) => {
                self.peers.broadcast(Msg::Commit { term: self.epoch, leader: self.id }, out);
                if let Some(cfg) = self.cfg {
                    self.timer.replace(RECOMMIT_TIMER, cfg.recommit_ms, out);
                }
            }
            _ => {}
        }
    }

    fn handle_suspect(&mut self, port: Port, suspected: bool, out: &mut Outbox) {
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
}

impl ZooKeeper {
    fn start(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Asleep {
            self.wake(true, out);
        }
        self.forget_dead_values();
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let handled = self.handle_message(port, msg, out);
        self.forget_dead_values();
        handled
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        self.handle_timer(timer, out);
        self.forget_dead_values();
    }

    fn suspect(&mut self, port: Port, suspected: bool, out: &mut Outbox) {
        self.handle_suspect(port, suspected, out);
        self.forget_dead_values();
    }

    /// A leader hands over to the best peer it does not suspect: it stops
    /// recommitting, tells every node (`Handover`), acks the successor's
    /// proposal (or any) instead of answering it with its `COMMIT`, and
    /// leads its epoch until the successor's `COMMIT` reaches it; then it
    /// follows. Its followers may ack the successor while they follow it,
    /// and follow the successor on its `COMMIT`: only the successor, while
    /// it proposes (a round trip), names no leader. Leaving, a node never
    /// proposes again.
    fn leave(&mut self, _suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) || self.phase != Phase::Leading {
            return false;
        }
        self.timer.stop(out);
        let Some(successor) = self.peers.best_where(self.rule, |p| !self.suspected[p as usize]) else { return false };
        self.peers.broadcast(Msg::Handover { term: self.epoch, successor }, out);
        self.forget_dead_values();
        true
    }

    fn restore(&mut self, stable: Stable) {
        self.promised = stable.term;
        self.vote = stable.vote;
        self.seen = self.seen.max(stable.term);
        self.restored = true;
    }
}

impl Algorithm for ZooKeeper {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { port, suspected } => self.suspect(port, suspected, out),
            Input::Leave { suspected } => {
                if self.leave(suspected, out) {
                    out.push(Effect::HandingOver);
                }
            }
            Input::Restore(stable) => self.restore(stable),
            Input::Heartbeat { .. } | Input::StoreReply(_) => {}
        }
        Ok(())
    }


    /// The leader watches every node (it steps down when it no longer sees
    /// a quorum); a follower watches its leader only; a node looking for a
    /// leader, or proposing, watches everyone (it needs to know who is in
    /// sight: eligibility and quorum). So a settled cluster sends 2(n − 1)
    /// heartbeats a period. A suspicion made while looking stands while
    /// following until that node is heard again; it can only make a
    /// follower think it sees fewer nodes, and it clears within a period
    /// once the node looks again (the detector's reciprocity makes every
    /// live node answer).
    fn watched(&self, port: Port) -> bool {
        match self.phase {
            Phase::Following(leader) => self.peers.get(port as usize) == Some(&leader),
            Phase::Leading | Phase::Asleep | Phase::Looking | Phase::Proposing => true,
        }
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
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
    use super::*;
    use crate::algo::harness::Feed;

    /// The timeouts derived from the loopback detector are the loopback preset, and they scale with the timeout.
    #[test]
    fn timeouts_follow_the_detector() {
        assert_eq!(ZkConfig::for_detector(DetectorConfig::LOOPBACK), ZkConfig::LOOPBACK);
        let k = ZkConfig::for_detector(DetectorConfig::KUBERNETES);
        assert_eq!((k.proposal_timeout_ms, k.recommit_ms, k.lease_ms), (4_000, 10_000, 25_000));
    }
    use crate::algo::kept::testing::{self, PEERS_OF_3, decide, lead, send, started};
    use crate::algo::{MsgKind, catalogue};
    use crate::faults::{Fault, FaultPlan, Scheduled};
    use crate::invariants;
    use crate::sim::{self, SimConfig, SimReport};
    use crate::topology::Topology;

    /// One-shot node `id` of `peers.len() + 1` nodes whose ports lead to `peers`, in port order.
    fn node(id: u64, peers: &[u64]) -> ZooKeeper {
        testing::node(id, peers, ZooKeeper::new)
    }

    fn persist(term: u64, vote: u64) -> Effect {
        Effect::Persist(Stable { term, vote: Some(vote) })
    }

    fn ack(term: u64, leader: u64, ok: bool) -> Msg {
        Msg::Ack { term, leader, ok }
    }

    const PEERS_OF_5: [u64; 4] = [1, 4, 2, 3];

    /// The best node proposes term 1 at once (its own vote persisted before
    /// the NEW_LEADERs leave); two acks make a quorum of 3 out of 5 with its
    /// own: it leads term 1, decides, and commits to every peer; a late ack
    /// changes nothing.
    #[test]
    fn best_node_proposes_and_commits_on_a_quorum() {
        let (mut m, mut out) = started(node(5, &PEERS_OF_5));
        let mut expected = vec![lead(0, None), persist(1, 5)];
        expected.extend((0..4).map(|p| send(p, Msg::NewLeader { term: 1, leader: 5 })));
        assert_eq!(out.effects(), &expected[..]);
        assert_eq!((m.state(), m.quorum()), ("proposing", 3));
        out.clear();
        m.on_message(2, ack(1, 5, true), &mut out).unwrap();
        assert!(out.effects().is_empty(), "2 of 5 is no quorum");
        m.on_message(1, ack(1, 5, true), &mut out).unwrap();
        let mut expected = vec![lead(1, Some(5)), decide(Role::Leader, 5)];
        expected.extend((0..4).map(|p| send(p, Msg::Commit { term: 1, leader: 5 })));
        assert_eq!(out.effects(), &expected[..]);
        out.clear();
        m.on_message(0, ack(1, 5, true), &mut out).unwrap();
        assert!(out.effects().is_empty());
        assert_eq!(m.leadership(), Leadership { term: 1, leader: Some(5) });
    }

    /// A non-best initiator wakes the best node with one WAKEUP, acks its
    /// NEW_LEADER (persisting the vote first), refuses a second proposal of
    /// the same term, and follows on COMMIT, deciding once.
    #[test]
    fn follower_wakes_the_best_acks_once_and_follows() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        assert_eq!(out.effects(), &[lead(0, None), send(0, Msg::Wakeup)]);
        out.clear();
        a.on_message(0, Msg::NewLeader { term: 1, leader: 5 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[persist(1, 5), send(0, ack(1, 5, true))]);
        out.clear();
        a.on_message(2, Msg::NewLeader { term: 1, leader: 4 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(2, ack(1, 4, false))], "one ack per term");
        out.clear();
        a.on_message(0, Msg::Commit { term: 1, leader: 5 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[lead(1, Some(5)), decide(Role::Follower, 5)]);
        assert_eq!(a.state(), "follower");
    }

    /// Stable storage: a node that acked (1, 5) and crashed comes back with
    /// its record through `restore`, so it refuses 4's proposal of term 1
    /// (a fresh node without the record would ack it: two acks in one term)
    /// and acks term 2. Restored, it tells every peer it restarted.
    #[test]
    fn recovered_node_does_not_ack_twice_in_a_term() {
        let mut a = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        a.on_message(0, Msg::NewLeader { term: 1, leader: 5 }, &mut out).unwrap();
        let disk = a.stable();
        assert_eq!(disk, Stable { term: 1, vote: Some(5) });

        let mut amnesiac = node(3, &PEERS_OF_3);
        out.clear();
        amnesiac.on_message(2, Msg::NewLeader { term: 1, leader: 4 }, &mut out).unwrap();
        assert!(out.effects().contains(&send(2, ack(1, 4, true))), "without its disk it would ack twice");

        let mut b = node(3, &PEERS_OF_3);
        b.on_restore(disk);
        out.clear();
        b.on_start(&mut out);
        let mut expected = vec![lead(0, None)];
        expected.extend((0..4).map(|p| send(p, Msg::Wakeup)));
        assert_eq!(out.effects(), &expected[..], "a new incarnation says it restarted");
        out.clear();
        b.on_message(2, Msg::NewLeader { term: 1, leader: 4 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(2, ack(1, 4, false))]);
        out.clear();
        b.on_message(2, Msg::NewLeader { term: 2, leader: 4 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[persist(2, 4), send(2, ack(2, 4, true))]);
    }

    /// No preemption: a leader answers a NEW_LEADER with its own COMMIT; a
    /// follower of a live leader refuses it (with the highest term it has
    /// seen), remembers it, and acks it once it suspects its leader. A
    /// follower that receives a WAKEUP from its leader (restarted) looks again.
    #[test]
    fn a_live_leader_is_not_preempted() {
        let (mut m, mut out) = started(node(5, &PEERS_OF_5));
        m.on_message(0, ack(1, 5, true), &mut out).unwrap();
        m.on_message(1, ack(1, 5, true), &mut out).unwrap();
        out.clear();
        m.on_message(1, Msg::NewLeader { term: 7, leader: 4 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(1, Msg::Commit { term: 1, leader: 5 })]);
        assert_eq!(m.state(), "leader");

        let mut f = node(3, &PEERS_OF_3);
        f.on_message(0, Msg::Commit { term: 1, leader: 5 }, &mut out).unwrap();
        out.clear();
        f.on_message(2, Msg::NewLeader { term: 2, leader: 4 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(2, ack(2, 4, false))]);
        out.clear();
        f.on_suspect(3, true, &mut out);
        assert!(out.effects().is_empty(), "2 is not the leader, and 3 + 1 nodes are still a quorum");
        f.on_suspect(0, true, &mut out);
        assert_eq!(out.effects(), &[lead(1, None), persist(2, 4), send(2, ack(2, 4, true))]);
        assert_eq!(f.state(), "looking");

        let mut g = node(3, &PEERS_OF_3);
        g.on_message(0, Msg::Commit { term: 1, leader: 5 }, &mut out).unwrap();
        out.clear();
        g.on_message(2, Msg::Wakeup, &mut out).unwrap();
        assert!(out.effects().is_empty(), "a WAKEUP from another node changes nothing");
        g.on_message(0, Msg::Wakeup, &mut out).unwrap();
        assert_eq!(out.effects(), &[lead(1, None)]);
    }

    /// Epochs and promises: a node whose failed proposals raised its promise
    /// to 9 still follows a COMMIT of epoch 2 (only committed terms are
    /// epochs); a COMMIT below a node's epoch is stale: a follower answers it
    /// with a refusal carrying its epoch, and a leader that gets such an
    /// answer (after the answer to its proposal) proposes itself above it.
    #[test]
    fn epochs_are_not_promises() {
        let mut a = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        a.on_restore(Stable { term: 9, vote: Some(3) });
        a.on_message(2, Msg::Commit { term: 2, leader: 4 }, &mut out).unwrap();
        assert_eq!((a.leadership(), a.stable().term), (Leadership { term: 2, leader: Some(4) }, 9));
        out.clear();
        a.on_message(0, Msg::Commit { term: 1, leader: 5 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, ack(2, 5, false))], "stale: told that epoch 2 exists");

        let mut m = testing::node(5, &PEERS_OF_5, |c| ZooKeeper::with_config(c, Some(ZkConfig::LOOPBACK)));
        m.on_start(&mut out);
        m.on_message(0, ack(1, 5, true), &mut out).unwrap();
        m.on_message(1, ack(1, 5, true), &mut out).unwrap();
        m.on_message(3, ack(4, 5, false), &mut out).unwrap();
        assert_eq!(m.state(), "leader", "the first answer since the proposal refuses it: ignored");
        out.clear();
        m.on_message(3, ack(2, 5, false), &mut out).unwrap();
        assert_eq!(m.state(), "proposing", "a later epoch exists: propose above it");
        assert!(out.effects().contains(&send(0, Msg::NewLeader { term: 5, leader: 5 })), "{:?}", out.effects());
    }

    /// A proposal that is over leaves nothing behind: node 3 (kept), with the better 5 and 4
    /// suspected, proposes term 1; one node acks it and, once 4 is heard again, 3 backs 4's
    /// proposal of term 2 instead. It is then the very node it would be had nobody acked its own
    /// (no acks, no answers, no proposal term: values no step reads before the next proposal
    /// writes them), so the checker counts one state where it counted two.
    #[test]
    fn an_abandoned_proposal_leaves_nothing_behind() {
        let run = |acked: bool| {
            let mut m = testing::node(3, &PEERS_OF_3, |c| ZooKeeper::with_config(c, Some(ZkConfig::LOOPBACK)));
            let mut out = Outbox::default();
            m.on_start(&mut out);
            m.on_suspect(0, true, &mut out);
            m.on_suspect(2, true, &mut out);
            assert_eq!(m.state(), "proposing");
            if acked {
                m.on_message(1, ack(1, 3, true), &mut out).unwrap();
            }
            m.on_suspect(2, false, &mut out);
            out.clear();
            m.on_message(2, Msg::NewLeader { term: 2, leader: 4 }, &mut out).unwrap();
            let cancel = Effect::CancelTimer { timer: PROPOSAL_TIMER };
            assert_eq!(out.effects(), &[cancel, persist(2, 4), send(2, ack(2, 4, true))]);
            m
        };
        let (acked, alone) = (run(true), run(false));
        assert_eq!(acked.state(), "looking");
        assert_eq!((acked.proposal, acked.acks.contains(&true), acked.answered.contains(&true)), (0, false, false));
        assert!(acked == alone, "{acked:?}\n{alone:?}");
    }

    /// Quorum loss: a follower that no longer sees a quorum stops following
    /// (even with its leader in sight), a node that does not see a quorum
    /// does not follow a COMMIT, and a leader that no longer sees a quorum
    /// steps down, telling the peers still in sight.
    #[test]
    fn a_minority_never_has_a_leader() {
        let mut f = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        f.on_message(0, Msg::Commit { term: 1, leader: 5 }, &mut out).unwrap();
        f.on_suspect(1, true, &mut out);
        f.on_suspect(2, true, &mut out);
        assert_eq!(f.state(), "follower", "3, 5 and 2 are 3 of 5");
        out.clear();
        f.on_suspect(3, true, &mut out);
        assert_eq!(out.effects(), &[lead(1, None)], "3 and 5 alone are 2 of 5");
        out.clear();
        f.on_message(0, Msg::Commit { term: 1, leader: 5 }, &mut out).unwrap();
        assert!(out.effects().is_empty() && f.state() == "looking");

        let mut m = node(5, &PEERS_OF_5);
        m.on_start(&mut out);
        m.on_message(0, ack(1, 5, true), &mut out).unwrap();
        m.on_message(1, ack(1, 5, true), &mut out).unwrap();
        m.on_suspect(0, true, &mut out);
        out.clear();
        m.on_suspect(1, true, &mut out);
        assert!(out.effects().is_empty(), "5, 2 and 3 are a quorum");
        m.on_suspect(2, true, &mut out);
        assert_eq!(out.effects(), &[send(3, Msg::Wakeup), lead(1, None)]);
        assert_eq!(m.state(), "looking");
    }

    /// Messages that cannot happen are errors: a NEW_LEADER or COMMIT for
    /// somebody else than its sender, an ACK for another proposer, term 0, a
    /// foreign kind, a missing port.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        let invalid = [
            Msg::NewLeader { term: 1, leader: 4 },
            Msg::NewLeader { term: 0, leader: 5 },
            Msg::Commit { term: 1, leader: 4 },
            ack(1, 5, true),
        ];
        for msg in invalid {
            assert!(matches!(a.on_message(0, msg, &mut out), Err(AlgoError::Invalid(_))), "{msg:?}");
        }
        assert!(matches!(
            a.on_message(0, Msg::Heartbeat { term: 1, leading: false, watching: true }, &mut out),
            Err(AlgoError::UnexpectedKind { .. })
        ));
        assert!(matches!(a.on_message(9, Msg::Wakeup, &mut out), Err(AlgoError::BadPort { port: 9 })));
    }

    /// In the simulator (one-shot, random delays, FIFO and not): every n from 2 to 9 and both rules,
    /// the best id leads term 1 and everybody follows it; with every node initiating the count
    /// stays within 3(n − 1) + 2·min(k, n − 1), and with the best node the only initiator it is
    /// exactly 3(n − 1): n − 1 NEW_LEADERs, ACKs and COMMITs.
    #[test]
    fn simulated_counts_within_the_bound() {
        let spec = catalogue::find(NAME).unwrap();
        for n in 2..=9u32 {
            let (topo, ids, all) = testing::complete(n);
            for rule in [Rule::Max, Rule::Min] {
                let best = rule.winner(ids.iter().copied()).unwrap();
                let best_pos = ids.iter().position(|&i| i == best).unwrap() as u32;
                for fifo in [true, false] {
                    let cfg = SimConfig { fifo, seed: n as u64, ..SimConfig::default() };
                    let r = sim::run(spec, &topo, &ids, &all, rule, &cfg);
                    assert!(r.verdict.violations.is_empty(), "n {n}: {:?}", r.verdict.violations);
                    assert!(r.counters.messages <= (spec.bound)(n as u64, n as u64), "n {n}");
                    assert!(r.decisions.iter().all(|d| d.map(|d| d.leader) == Some(best)));
                    let one = sim::run(spec, &topo, &ids, &[best_pos], rule, &cfg);
                    assert!(one.verdict.violations.is_empty(), "n {n}: {:?}", one.verdict.violations);
                    let m = (n - 1) as u64;
                    assert_eq!(one.counters.messages, 3 * m, "n {n}");
                    let by = |k: MsgKind| one.counters.by_kind[k as usize];
                    assert_eq!((by(MsgKind::NewLeader), by(MsgKind::Ack), by(MsgKind::Commit)), (m, m, m));
                    assert!(one.leaderships.iter().all(|e| e.leadership.term <= 1));
                }
            }
        }
    }

    // ---- Kept mode in the simulator, with scheduled faults ----

    const IDS: [u64; 5] = [3, 5, 1, 4, 2];

    fn kept_run(faults: Vec<(u64, Fault)>, horizon: u64) -> SimReport {
        let spec = catalogue::find(NAME).unwrap();
        let topo = Topology::complete(IDS.len() as u32).unwrap();
        let all: Vec<u32> = (0..IDS.len() as u32).collect();
        let faults =
            FaultPlan { faults: faults.into_iter().map(|(at, fault)| Scheduled::new(at, at, fault)).collect() };
        let cfg = SimConfig { seed: 7, fifo: false, faults, horizon: Some(horizon), ..SimConfig::default() };
        let r = sim::run_kept(spec, &topo, &IDS, &all, Rule::Max, &cfg).unwrap();
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let timeline: Vec<_> = r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
        invariants::one_leader_per_term(&IDS, &timeline).unwrap();
        r
    }

    /// Each position's latest belief at time `t`.
    fn beliefs_at(r: &SimReport, t: u64) -> Vec<Option<Leadership>> {
        let mut latest = vec![None; IDS.len()];
        for e in r.leaderships.iter().filter(|e| e.time <= t) {
            latest[e.position as usize] = Some(e.leadership);
        }
        latest
    }

    fn partition(groups: &[&[u32]]) -> Fault {
        Fault::Partition { groups: groups.iter().map(|g| g.to_vec()).collect() }
    }

    /// Leader crash, kept mode: 5 leads term 1; it crashes at 2,000; after detection (the
    /// detector's 200..250 ms) the others elect 4, the best live node, for term 2, and stay so.
    #[test]
    fn leader_crash_elects_the_best_live_node_with_a_higher_term() {
        let r = kept_run(vec![(2_000, Fault::Crash { node: 1 })], 6_000);
        let five = Some(Leadership { term: 1, leader: Some(5) });
        assert!(beliefs_at(&r, 1_999).iter().all(|b| *b == five));
        let four = Some(Leadership { term: 2, leader: Some(4) });
        let settled = r.leaderships.iter().filter(|e| e.time > 2_000).map(|e| e.time).max().unwrap();
        eprintln!("crash of 5 at 2000: all live nodes follow 4 (term 2) at {settled}");
        assert!(settled <= 2_000 + 250 + 100, "{settled}");
        let end = beliefs_at(&r, 6_000);
        assert!([0, 2, 3, 4].iter().all(|&p| end[p] == four), "{end:?}");
    }

    /// A partition that leaves no majority ([3, 5], [1, 4], [2] by id): within detection time
    /// every node announces that it knows no leader (the leader steps down, its followers stop
    /// following), no term above 1 is ever committed (a node that suspected the leader before
    /// the rest may propose in vain), and the cluster stays so while it lasts.
    #[test]
    fn partition_without_majority_leaves_no_leader() {
        let r = kept_run(vec![(2_000, partition(&[&[0, 1], &[2, 3], &[4]]))], 6_000);
        let none = beliefs_at(&r, 2_000 + 300);
        assert!(none.iter().all(|b| b.is_some_and(|l| l.leader.is_none())), "{none:?}");
        assert!(r.leaderships.iter().filter(|e| e.time > 2_300).all(|e| e.leadership.leader.is_none()));
        assert!(r.leaderships.iter().all(|e| e.leadership.term <= 1), "no term was committed");
        let proposals = r.counters.by_kind[MsgKind::NewLeader as usize] / 4 - 1;
        eprintln!("no majority from 2000 to 6000: nobody leads from {}; {proposals} proposals in vain", {
            r.leaderships.iter().map(|e| e.time).max().unwrap()
        });
    }

    /// Majority side: cutting the leader 5 off with 3 ([3, 5] | [1, 4, 2]) makes the majority
    /// elect 4 for term 2 while the minority has no leader; when the partition heals at 4,000
    /// the minority learns 4's leadership and follows it: 5, the better id, does not preempt a
    /// live leader with a quorum. One leader everywhere, term 2, to the end.
    #[test]
    fn majority_elects_and_healing_converges_without_preemption() {
        let faults = vec![(2_000, partition(&[&[0, 1], &[2, 3, 4]])), (4_000, partition(&[&[0, 1, 2, 3, 4]]))];
        let r = kept_run(faults, 8_000);
        let mid = beliefs_at(&r, 3_999);
        let four = Some(Leadership { term: 2, leader: Some(4) });
        assert_eq!(&mid[2..], &[four; 3], "{mid:?}");
        assert!(mid[..2].iter().all(|b| b.is_some_and(|l| l.leader.is_none())), "{mid:?}");
        let end = beliefs_at(&r, 8_000);
        assert!(end.iter().all(|b| *b == four), "{end:?}");
        let healed = r.leaderships.iter().filter(|e| e.time >= 4_000).map(|e| e.time).max().unwrap();
        eprintln!("partition healed at 4000: every node follows 4 (term 2) at {healed}");
        assert!(
            r.leaderships.iter().all(|e| e.position != 1 || e.leadership.leader != Some(5) || e.leadership.term == 1)
        );
    }

    /// False suspicion: every message from leader 5 to 4 (the next best) is 400 ms late from
    /// 2,000 to 3,000 ms, so 4 suspects 5 and, eligible, proposes itself; the other followers
    /// still hear 5 and refuse, 5 answers with its COMMIT, and 4 follows 5 again: no term above
    /// 1 is ever committed, nobody but 5 ever leads, and everybody follows 5 in term 1 at the end.
    #[test]
    fn false_suspicion_of_a_live_leader_changes_nothing() {
        use crate::faults::LinkFault;
        let slow = LinkFault { delay_ms: 400, ..LinkFault::default() };
        let faults = vec![
            (2_000, Fault::Link { from: Some(1), to: Some(3), fault: slow }),
            (3_000, Fault::Link { from: None, to: None, fault: LinkFault::default() }),
        ];
        let r = kept_run(faults, 6_000);
        let doubts = r.leaderships.iter().filter(|e| e.time > 2_000 && e.leadership.leader.is_none()).count();
        assert!(doubts > 0 && r.counters.by_kind[MsgKind::NewLeader as usize] > 4, "4 suspected 5 and proposed");
        assert!(r.leaderships.iter().all(|e| e.leadership.term <= 1), "no term above 1 committed");
        assert!(r.leaderships.iter().all(|e| e.leadership.leader.is_none_or(|l| l == 5)));
        let five = Some(Leadership { term: 1, leader: Some(5) });
        assert!(beliefs_at(&r, 6_000).iter().all(|b| *b == five));
    }
}
