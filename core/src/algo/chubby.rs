//! # Chubby-style election: majority votes and a lease the leader renews
//!
//! * Source: M. Burrows, "The Chubby lock service for loosely-coupled
//!   distributed systems", OSDI 2006: Chubby's master election as usually
//!   taught (a potential leader asks for votes; each server votes for at most
//!   one leader; a quorum elects, so two leaders are never elected; the master
//!   then holds a lease during which no other election runs, renews it by
//!   asking whether it still has a majority, and a new election is guaranteed
//!   at the end of a lease), and the paper's §2.2 (master leases, "the master
//!   lease is renewed periodically", replicas promise not to elect a different
//!   master for the lease interval).
//! * Network: complete graph, bidirectional links, no FIFO. A node knows the
//!   ids behind its ports ([`NodeContext::port_info`]) and the membership size
//!   n ([`NodeContext::n`]); a quorum is ⌊n/2⌋ + 1 of the **whole**
//!   membership, live or not. Safety (one leader per term, and no two leases
//!   overlapping in real time) holds under any message delay, loss or
//!   reordering, crashes and recoveries, as long as local timers run at rates
//!   that differ by less than the drift margin (below) and messages are not
//!   duplicated. Liveness needs a live, connected majority and delays well
//!   below the lease.
//! * Candidates: every node. Winner: the best id (the maximum; the minimum when
//!   mirrored) in the one-shot mode; in the kept mode usually the best live id
//!   of a connected majority (back-off by rank), always one of a majority.
//! * Messages: one-shot, failure-free, at most **6(n − 1)**, exactly 4(n − 1)
//!   when the best id initiates; kept, failure-free: 4(n − 1) to elect and
//!   announce, then 2(n − 1) per renewal period. Proofs below.
//!
//! ## The algorithm (kept mode)
//!
//! A node is *asleep*, *idle* (knows no leader), a *candidate*, a *follower*
//! or the *leader*. Its stable record ([`Stable`], written with
//! [`Effect::Persist`] before the message it justifies) holds the term of its
//! latest vote and whom it voted for.
//!
//! * **Promise.** Granting a vote to a candidate c, or acknowledging a lease
//!   renewal of a leader c, is a *promise*: for the lease L from the moment of
//!   the grant (the promise timer) the node grants nothing to anybody but c.
//! * **Votes.** `VoteRequest { term, candidate }` is granted iff the node does
//!   not lead, holds no promise to another node, the candidate is not worse
//!   than the node itself (it is alive and would run), and it has not voted in
//!   `term` for somebody else nor in a later term (one vote per term, kept on
//!   disk). The reply is `Vote { term, candidate, granted }`; a refusal
//!   carries the highest term the node has seen.
//! * **Candidacy.** An idle node with no promise runs after a back-off of
//!   `rank × backoff` (rank 0 is the best id, so the best node usually runs
//!   alone; after a failed candidacy half a `backoff` more): term = highest
//!   term seen + 1, it votes for itself (persisted) and sends `VoteRequest` to
//!   every node. It leads on a quorum of grants; it gives up when so many
//!   refused that no quorum is left, after `candidacy` ms, when it grants a
//!   better candidate, or when it acknowledges a leader; refused by a better
//!   node, it backs off a whole lease more, leaving that node the field.
//!   (Without these two preferences, candidates that each needed every live
//!   vote, e.g. 3 of 4 nodes up, bound each other's voters in a cycle and
//!   nobody was ever elected in the chaos runs.)
//! * **Lease.** The leader sends `LeaseRenew { term, leader }` to every node at
//!   once on winning and then every `renew` ms; a node acknowledges
//!   (`LeaseAck { term, granted: true }`) unless it leads or holds a promise to
//!   another node or the renewal's term is below the leader it last followed.
//!   Round r is sent at s_r (round 0 is the `VoteRequest`); its *deadline* is
//!   s_r + D with D = L − margin, measured by a timer set when it is sent. The
//!   lease rests on the latest round K for which a quorum (the leader
//!   included) has shown a grant; the leader steps down
//!   (`Lead { term, leader: None }`) at the deadline of round K.
//! * **Attributing acknowledgements.** `LeaseAck` carries no round number, so
//!   the leader counts, per node, the granted acknowledgements of its term:
//!   the j-th one is credited to round j, the earliest round it can answer
//!   (each answers a distinct renewal, rounds are numbered from 1, so j
//!   acknowledgements answer some round ≥ j). Losses and reordering only make
//!   the credit earlier, which is safe; a *duplicated* acknowledgement could
//!   make it later (never past the newest round sent), hence the assumption
//!   of no duplicates (gRPC streams never duplicate). The leader keeps each
//!   credit as a lag behind the newest round and forgets one that falls
//!   eight rounds behind (only the last three rounds' deadlines read
//!   credits, and forgetting only makes a credit older), so its state stays
//!   finite however long it leads.
//! * **Expiry.** A follower whose promise runs out without a renewal announces
//!   `Lead { term, leader: None }` and backs off to run.
//! * **Recovery.** A recovered incarnation gets its stable record back through
//!   [`Input::Restore`] (so it never votes twice in one term) and grants
//!   nothing for one full lease after restarting, since it may have promised
//!   something just before the crash and does not know to whom.
//! * **Terms.** A candidate runs for the highest term seen + 1. A leader that
//!   receives a renewal of a later term steps down and follows (a later leader
//!   means its lease is over; with working timers it already stepped down, a
//!   frozen process learns it this way). Otherwise, unlike Raft, a leader does
//!   *not* step down when it sees a higher term: the lease makes
//!   that unnecessary (no other node can be elected before it ends) and a node
//!   coming back from a partition with a high term cannot disrupt a healthy
//!   leader; its renewals are acknowledged whatever term a node voted in
//!   last. Announced terms are the terms of leaders (followed or led), so they
//!   only grow at a node.
//!
//! Every change of belief is announced with [`Effect::Lead`]; the first leader
//! learned also with [`Effect::Decide`].
//!
//! ## Safety: one leader per term, and no overlap of leases
//!
//! *One leader per term.* A leader of term t got grants of t from a quorum; a
//! node grants at most one candidate per term, and its record survives
//! crashes; two quorums intersect. So no two nodes lead one term.
//!
//! *No overlap.* Say y leads at time T on round K of its term: every x of a
//! quorum Q granted y at some τ_x with s_K ≤ τ_x ≤ T (the leader itself at s_K,
//! and it grants nobody while it leads), and T < s_K + D. x's promise to y
//! then runs until at least τ_x + L ≥ s_K + L > T (a later grant to y only
//! extends it; a crash of x is followed by a block of L from the recovery).
//! So at T every node of Q grants nothing to anybody but y. If z ≠ y also leads
//! at T, on a quorum Q', some x ∈ Q ∩ Q' granted both y and z at times whose
//! promises both cover T, so one of the grants was made while the promise to
//! the other one ran: impossible. Hence at any instant at most one node
//! believes it leads, of any term — provided the leader's D on its clock ends
//! before the promises' L on the voters' clocks: with timer rates within
//! (1 ± ρ) of real time, D(1 + ρ) < L(1 − ρ), i.e. margin > 2ρL roughly, plus
//! the leader's timer latency. The presets keep 10%.
//!
//! ## Liveness
//!
//! With a live majority connected by links whose round trip is well below
//! `backoff` and D − `renew`: the leader's renewals reach the quorum every
//! `renew` ms, so each round is credited before the previous deadline and the
//! lease never lapses; a follower's promise (L > D > `renew`) never runs out.
//! After the leader is lost, every promise to it has run out L after the last
//! grant; the best idle node then runs first (back-off by rank) and, with no
//! promise left to block the voters, wins. A partition leaving no group with
//! a majority leaves everybody idle: candidacies fail forever, nobody leads
//! (the safe answer). When a partition heals, a node that voted in higher
//! terms meanwhile acknowledges the current leader's renewals as soon as its
//! own promise (at most L) runs out.
//!
//! ## One-shot mode (the catalogue's `build`): at most 6(n − 1) messages
//!
//! No lease, no renewals and no promises (nothing fails); the leader announces
//! itself with one `LeaseRenew` round, so a simulation goes quiet. Every node
//! knows the best id M. M runs as soon as it is awake; another node waits
//! `rank × backoff` (10 s) and only then runs, to wake M. A node refuses any
//! candidate worse than itself, and a candidate gives up on a refusal from a
//! better node, so only M can lead. Assume delays and the spread of the
//! initiators' wake-ups below `backoff`/4. (1) If M initiates, it runs at its
//! wake-up, every node grants term 1 (nobody else ran: every other timer is
//! at least `backoff` after its wake-up) and M leads after two delays; its
//! `LeaseRenew` reaches every node, which follows, acknowledges and cancels
//! its timer, before any timer fires: (n − 1) requests, votes, renewals and
//! acknowledgements, **4(n − 1)**. (2) Otherwise nobody sends anything until
//! the best initiator's timer fires (ranks differ, so it fires alone); its
//! (n − 1) requests get (n − 1) answers and wake M, which refuses and runs for
//! term 2, which every node grants (no node voted above term 1); as in (1)
//! that costs 4(n − 1), **6(n − 1)** in all, the bound.
//!
//! ## Kept mode, failure-free: 4(n − 1), then 2(n − 1) per renewal
//!
//! Every node awake at 0, delays below `backoff`: M runs at once, the others'
//! back-offs are at least `backoff`, so they grant M's request (which cancels
//! their back-off) and M leads: 2(n − 1) messages; the first renewal round
//! goes out at once, and every `renew` ms after: 2(n − 1) each (a renewal and
//! its acknowledgement per follower).

use super::detector::DetectorConfig;
use super::kept::{OneTimer, Peers};
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, KeptSpec, Lease, Provision, per_second};
use super::{
    AlgoError, Algorithm, Effect, Input, Leadership, Msg, NodeContext, Outbox, Port, Reports, Role, Rule, Stable,
    TimerId,
};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "chubby",
    title: "Chubby-style election (majority votes, leases)",
    source: "M. Burrows, The Chubby lock service for loosely-coupled distributed systems, OSDI 2006 \
             (votes, a quorum, a master lease renewed by asking for a majority)",
    description: "A node that knows no leader backs off by rank (the best id first) and asks every node \
                  for its vote in term = highest seen + 1; a node votes at most once per term (kept on \
                  disk) and, in the kept mode, a vote or a lease acknowledgement is a promise to grant \
                  nobody else for the lease; a quorum elects. The kept leader renews its lease every \
                  300 ms and steps down when its lease (1 s minus a drift margin, counted from sending \
                  the request a quorum granted) runs out, before any promise it relies on: never two \
                  leaders at once, and without a majority nobody leads. One-shot here: no lease, the \
                  leader announces itself with one renewal round.",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "6(n-1) (4(n-1) when the best id initiates)",
    bound: &|n, _| 6 * n.saturating_sub(1),
    timer_events: |_| 0,
    heap_bytes_per_position: 72_585,
    kept: Some(KeptSpec {
        build: |c, d| Box::new(Chubby::with_config(c, ChubbyConfig::for_detector(d))),
        // No heartbeats: the lease is its detector.
        heartbeats_per_period: |_| 0,
        // Candidates run one at a time (rank back-off): its steady renewals,
        // 2(n − 1) every renew period.
        election_load_per_second: |topo, d| {
            let n = u64::from(topo.len());
            per_second(2 * n.saturating_sub(1), ChubbyConfig::for_detector(d).renew_ms)
        },
        convergence_bound_ms,
        max_local_nodes: 256,
        lease: Some(Lease { lost: "lease not renewed (the leader stepped down)" }),
        liveness_needs: None,
    }),
    live_provision: Provision::Nodes,
    machine: machine!(Chubby::new),
    extras: Extras::NONE,
};

const NAME: &str = "chubby";

crate::timers! {
    /// Timer: a promise (a vote or an acknowledged renewal) runs out; also the
    /// block of a recovered incarnation.
    PROMISE_TIMER = 0 => "promise";
    /// Timer: the back-off before running for election.
    ELECTION_TIMER = 1 => "election back-off";
    /// Timer: the leader's next renewal round.
    RENEW_TIMER = 2 => "renewal";
    /// Timers 3, 4 and 5: the deadlines of the last three rounds (round r uses
    /// `DEADLINE_TIMER + r % 3`).
    DEADLINE_TIMER = 3, SLOTS => "round deadline";
}
const SLOTS: usize = 3;
/// A node's credit that falls this many rounds behind the newest is
/// forgotten for the rest of the term. Only the last [`SLOTS`] rounds'
/// deadlines read credits, and to reach them again a node would need more
/// than `FORGET − SLOTS` acknowledgements beyond the renewals sent meanwhile,
/// a burst no network that delivers within a renewal period makes. Forgetting
/// can only make a credit older, which is safe (see "Attributing
/// acknowledgements"); it keeps the leader's state finite, so the checker
/// sees a steady lease as one cycle of states, not rounds counted forever.
const FORGET: u64 = 8;

/// Chubby's timing, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChubbyConfig {
    /// Keep a leader (leases, renewals, promises); `false`: the one-shot mode.
    pub keep: bool,
    /// L: how long a grant binds the granting node.
    pub lease_ms: u64,
    /// How often the leader renews.
    pub renew_ms: u64,
    /// How much earlier than L (counted from sending) the leader's lease
    /// ends: covers timer-rate drift and the latency of its timers.
    pub margin_ms: u64,
    /// The back-off per rank before running (the best id waits 0).
    pub backoff_ms: u64,
    /// How long a candidate waits for a quorum of votes before it gives up
    /// (at most the leader's lease: a later win would bring no lease).
    pub candidacy_ms: u64,
}

/// A [`ChubbyConfig`] that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("chubby config: {0}")]
pub struct ConfigError(pub String);

/// How long after the last fault heals the live nodes of a live majority of
/// `n` follow one live leader at most, with the settings
/// [`ChubbyConfig::for_detector`] derives from `d` and messages delayed by at
/// most `delay_ms`: **3L + V + (n − 1)B + W + T + 4δ**, L the lease, V the
/// candidacy, B the back-off per rank, W the renewal period (90 periods +
/// 4δ at n = 7 for the default T = 4P; Chubby sends no heartbeats, the
/// periods only measure it). Argument: a grant made just before the heal
/// binds its node for L, so the first candidacy after the heal may be
/// refused for want of a quorum; a candidacy takes V and starts after the
/// back-off of its rank; votes split between two candidates of one term
/// bind their voters for another L, and the leader's first lease may have to
/// wait out a third for the nodes that promised the loser; a follower learns
/// the leader at the next renewal (W). Argued loosely, not proved (the
/// chaos runs measured up to 3.4 L); `core/tests/chubby_chaos.rs` asserts it
/// on 10,000 seeded runs of the full fault mix.
pub fn convergence_bound_ms(d: DetectorConfig, n: u32, delay_ms: u64) -> u64 {
    let c = ChubbyConfig::for_detector(d);
    3 * c.lease_ms
        + c.candidacy_ms
        + u64::from(n.saturating_sub(1)) * c.backoff_ms
        + c.renew_ms
        + d.timeout_ms
        + 4 * delay_ms
}

impl ChubbyConfig {
    /// The catalogue's one-shot election: no lease; a node other than the best
    /// waits `rank × 10 s` before it runs (only to wake the best node).
    pub const ONE_SHOT: ChubbyConfig =
        ChubbyConfig { keep: false, lease_ms: 0, renew_ms: 0, margin_ms: 0, backoff_ms: 10_000, candidacy_ms: 0 };
    /// Kept leadership on loopback: a 1 s lease renewed every 300 ms (two
    /// renewals may be lost), 10% margin, 100 ms back-off per rank, 400 ms
    /// for the votes to come back.
    pub const LOOPBACK: ChubbyConfig =
        ChubbyConfig { keep: true, lease_ms: 1_000, renew_ms: 300, margin_ms: 100, backoff_ms: 100, candidacy_ms: 400 };
    /// A Kubernetes cluster: [`ChubbyConfig::LOOPBACK`] × 10.
    pub const KUBERNETES: ChubbyConfig = ChubbyConfig {
        keep: true,
        lease_ms: 10_000,
        renew_ms: 3_000,
        margin_ms: 1_000,
        backoff_ms: 1_000,
        candidacy_ms: 4_000,
    };

    /// Kept timing scaled to a detector's suspicion timeout `t` (Chubby needs
    /// no heartbeats: the lease is its failure detector): lease 5t renewed
    /// every 1.5t, margin t/2, back-off t/2 per rank, candidacy 2t
    /// ([`ChubbyConfig::LOOPBACK`] for [`DetectorConfig::LOOPBACK`]). Valid
    /// for every timeout of at least 2 ms.
    pub fn for_detector(d: DetectorConfig) -> ChubbyConfig {
        let t = d.timeout_ms.max(2);
        ChubbyConfig {
            keep: true,
            lease_ms: t.saturating_mul(5),
            renew_ms: t.saturating_mul(3) / 2,
            margin_ms: t / 2,
            backoff_ms: t / 2,
            candidacy_ms: t.saturating_mul(2),
        }
    }

    /// D: the leader's lease, from sending a round to its deadline.
    pub fn leader_lease_ms(&self) -> u64 {
        self.lease_ms.saturating_sub(self.margin_ms)
    }

    /// Check that the timing can keep a leader safely.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: &str| Err(ConfigError(s.into()));
        if self.backoff_ms == 0 {
            return bad("backoff_ms must be positive");
        }
        if !self.keep {
            return Ok(());
        }
        if self.lease_ms == 0 || self.renew_ms == 0 {
            return bad("lease_ms and renew_ms must be positive");
        }
        if self.margin_ms * 20 < self.lease_ms {
            return bad("margin_ms must be at least 5% of lease_ms (clock drift, timer latency)");
        }
        if self.margin_ms >= self.lease_ms {
            return bad("margin_ms must be below lease_ms");
        }
        if self.candidacy_ms == 0 || self.candidacy_ms > self.leader_lease_ms() {
            return bad("candidacy_ms must be positive and at most lease_ms - margin_ms");
        }
        if 2 * self.renew_ms > self.leader_lease_ms() {
            return bad("renew_ms must fit twice in lease_ms - margin_ms (one lost renewal must not end the lease)");
        }
        Ok(())
    }
}

impl Default for ChubbyConfig {
    /// [`ChubbyConfig::LOOPBACK`].
    fn default() -> Self {
        ChubbyConfig::LOOPBACK
    }
}

/// Whom a node's running promise binds it to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Promise {
    /// Granted (a vote or a renewal) to this node.
    To(u64),
    /// A recovered incarnation: it may have promised anything before the crash.
    Blocked,
}

/// Why a node backs off before running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Retry {
    /// It knows no leader (woken, a promise ran out).
    First,
    /// Its candidacy (or lease) failed.
    Failed,
    /// A better node refused it: let that one run first.
    Outranked,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Asleep,
    /// Knows no leader.
    Idle,
    Candidate {
        term: u64,
    },
    Following(u64),
    Leading {
        term: u64,
    },
}

/// One node of the Chubby-style election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chubby {
    id: u64,
    rule: Rule,
    peers: Peers,
    /// Per port: the peer is better-ranked than this node.
    better: Box<[bool]>,
    /// How many nodes are better-ranked (0: the best id).
    rank: u64,
    quorum: usize,
    cfg: ChubbyConfig,
    phase: Phase,
    /// On disk: the term of the latest vote and whom it went to.
    stable: Stable,
    /// Highest term seen anywhere.
    seen: u64,
    /// Term of the latest leader followed or led (the term announced).
    leader_term: u64,
    /// The running promise (the promise timer is pending).
    promise: Option<Promise>,
    /// The back-off (or candidacy) timer, [`ELECTION_TIMER`], when pending.
    election: OneTimer,
    /// Restored from stable storage (a recovered incarnation).
    restored: bool,
    /// Candidate: granted votes per port.
    voted: Vec<bool>,
    /// Candidate: refusals per port.
    refused: Vec<bool>,
    /// Leader: per port, how many rounds before the newest the round its
    /// node's grants are credited to is (`None`: none that can still count,
    /// [`FORGET`]). Counted from the newest round, so a steady lease is a
    /// finite state.
    lag: Vec<Option<u64>>,
    /// Rounds sent in this candidacy or term (round 0 is the vote request),
    /// counted up to `FORGET + 1`.
    rounds: u64,
    /// The slot of the newest round (round r uses slot r mod [`SLOTS`]).
    newest: usize,
    /// Leader: how many rounds before the newest the latest round a quorum
    /// credited is (at most [`FORGET`]).
    credited_lag: u64,
    /// Which slots' deadline timers run: slot i holds the round
    /// (newest − i) mod [`SLOTS`] rounds before the newest.
    slots: [bool; SLOTS],
    reports: Reports,
    /// About to stop ([`Input::Leave`]): it never runs again, and
    /// grants any candidate (it will not be alive to run itself).
    leaving: bool,
}

impl Chubby {
    /// An asleep one-shot node ([`ChubbyConfig::ONE_SHOT`]): the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        Chubby::with_config(c, ChubbyConfig::ONE_SHOT)
    }

    /// An asleep kept-leadership node with the given timing (see [`ChubbyConfig::validate`]).
    pub fn with_config(c: &NodeContext, cfg: ChubbyConfig) -> Self {
        let peers = Peers::new(c);
        let better: Box<[bool]> = peers.iter().map(|&p| c.rule.beats(p, c.id)).collect();
        let rank = better.iter().filter(|&&b| b).count() as u64;
        let ports = peers.len();
        let quorum = peers.majority(c.n);
        Chubby {
            id: c.id,
            rule: c.rule,
            peers,
            better,
            rank,
            quorum,
            cfg,
            phase: Phase::Asleep,
            stable: Stable::default(),
            seen: 0,
            leader_term: 0,
            promise: None,
            election: OneTimer::default(),
            restored: false,
            voted: vec![false; ports],
            refused: vec![false; ports],
            lag: vec![None; ports],
            rounds: 0,
            newest: 0,
            credited_lag: 0,
            slots: [false; SLOTS],
            reports: Reports::default(),
            leaving: false,
        }
    }

    /// What this node believes now: the latest leader's term and the leader (`None` when it knows none).
    pub fn leadership(&self) -> Leadership {
        let leader = match self.phase {
            Phase::Following(l) => Some(l),
            Phase::Leading { .. } => Some(self.id),
            _ => None,
        };
        Leadership { term: self.leader_term, leader }
    }

    /// What this node keeps on disk.
    pub fn stable(&self) -> Stable {
        self.stable
    }

    fn announce(&mut self, out: &mut Outbox) {
        let l = self.leadership();
        self.reports.announce(l, out);
    }

    fn wake(&mut self, out: &mut Outbox) {
        if self.phase != Phase::Asleep {
            return;
        }
        self.phase = Phase::Idle;
        self.announce(out);
        if self.restored && self.cfg.keep {
            self.promise = Some(Promise::Blocked);
            out.push(Effect::SetTimer { timer: PROMISE_TIMER, after_ms: self.cfg.lease_ms });
        }
        self.schedule_candidacy(Retry::First, out);
    }

    /// Back off before running; nothing while a promise binds this node (its
    /// expiry calls this again).
    fn schedule_candidacy(&mut self, retry: Retry, out: &mut Outbox) {
        if self.promise.is_some() || self.phase != Phase::Idle || self.leaving {
            return;
        }
        let extra = match retry {
            _ if !self.cfg.keep => 0,
            Retry::First => 0,
            Retry::Failed => self.cfg.backoff_ms / 2,
            Retry::Outranked => self.cfg.lease_ms,
        };
        let delay = self.rank * self.cfg.backoff_ms + extra;
        if delay == 0 {
            self.run(out);
        } else {
            self.election.set(ELECTION_TIMER, delay, out);
        }
    }

    fn clear_deadlines(&mut self, out: &mut Outbox) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if std::mem::take(slot) {
                out.push(Effect::CancelTimer { timer: DEADLINE_TIMER + i as TimerId });
            }
        }
    }

    /// Start the deadline of the newest round (sent now), first settling the
    /// round whose slot it takes, [`SLOTS`] rounds before it: its deadline is
    /// treated as passed (early, so safe).
    fn start_deadline(&mut self, out: &mut Outbox) {
        let slot = self.newest;
        if std::mem::take(&mut self.slots[slot]) {
            self.deadline_passed(SLOTS as u64, out);
            if !matches!(self.phase, Phase::Leading { .. }) {
                return; // that ended the lease: no round to time
            }
        }
        self.slots[slot] = true;
        out.push(Effect::SetTimer { timer: DEADLINE_TIMER + slot as TimerId, after_ms: self.cfg.leader_lease_ms() });
    }

    /// Run for the next term.
    fn run(&mut self, out: &mut Outbox) {
        if self.leaving {
            return;
        }
        // Terms above MAX_TERM are refused on arrival; at MAX_TERM itself the
        // term space is used up and the node runs no more.
        let Some(term) = super::next_term(self.seen.max(self.stable.term)) else { return };
        self.election.stop(out);
        self.seen = term;
        self.stable = Stable { term, vote: Some(self.id) };
        out.push(Effect::Persist(self.stable));
        self.phase = Phase::Candidate { term };
        self.voted.iter_mut().for_each(|v| *v = false);
        self.refused.iter_mut().for_each(|v| *v = false);
        (self.rounds, self.newest) = (0, 0);
        self.clear_deadlines(out);
        if self.cfg.keep {
            self.start_deadline(out);
            self.election.set(ELECTION_TIMER, self.cfg.candidacy_ms, out);
        }
        self.announce(out);
        self.peers.broadcast(Msg::VoteRequest { term, candidate: self.id }, out);
        self.check_won(out);
    }

    fn give_up(&mut self, retry: Retry, out: &mut Outbox) {
        self.phase = Phase::Idle;
        self.clear_deadlines(out);
        self.announce(out);
        self.schedule_candidacy(retry, out);
    }

    fn check_won(&mut self, out: &mut Outbox) {
        let Phase::Candidate { term } = self.phase else { return };
        let grants = 1 + self.voted.iter().filter(|&&v| v).count();
        // One-shot: a better node that is awake refuses, and it may not have answered yet.
        let better_answered = self.cfg.keep || self.better.iter().zip(&self.voted).all(|(&b, &v)| !b || v);
        if grants >= self.quorum && better_answered {
            self.lead(term, out);
        }
    }

    fn lead(&mut self, term: u64, out: &mut Outbox) {
        self.election.stop(out);
        self.phase = Phase::Leading { term };
        self.leader_term = term;
        // Round 0, the vote request, is the newest: a vote is credited to it.
        self.lag = self.voted.iter().map(|&v| v.then_some(0)).collect();
        self.credited_lag = 0;
        self.announce(out);
        self.reports.decide_once(Role::Leader, self.id, out);
        self.renew(out);
    }

    /// Send the next renewal round (the first one announces the leader).
    fn renew(&mut self, out: &mut Outbox) {
        let Phase::Leading { term } = self.phase else { return };
        if !self.cfg.keep {
            self.peers.broadcast(Msg::LeaseRenew { term, leader: self.id }, out);
            return;
        }
        self.rounds = (self.rounds + 1).min(FORGET + 1);
        self.newest = (self.newest + 1) % SLOTS;
        for lag in &mut self.lag {
            *lag = lag.map(|l| l + 1).filter(|&l| l < FORGET);
        }
        self.credited_lag = (self.credited_lag + 1).min(FORGET);
        self.start_deadline(out);
        if self.phase != (Phase::Leading { term }) {
            return; // the evicted deadline ended the lease
        }
        self.peers.broadcast(Msg::LeaseRenew { term, leader: self.id }, out);
        out.push(Effect::SetTimer { timer: RENEW_TIMER, after_ms: self.cfg.renew_ms });
        self.recredit();
    }

    /// The latest round a quorum has granted: the leader itself has every
    /// round it sent (lag 0); a node's j-th acknowledgement is credited to
    /// round j, its vote to round 0 (kept as lags behind the newest round).
    fn recredit(&mut self) {
        let mut lags: Vec<u64> = self.lag.iter().flatten().copied().collect();
        lags.push(0);
        lags.sort_unstable();
        if let Some(&k) = lags.get(self.quorum - 1) {
            self.credited_lag = self.credited_lag.min(k);
        }
    }

    /// The deadline of the round `behind` rounds before the newest passed.
    fn deadline_passed(&mut self, behind: u64, out: &mut Outbox) {
        match self.phase {
            // A candidate's only round is the vote request.
            Phase::Candidate { .. } if behind == self.rounds => self.give_up(Retry::Failed, out),
            Phase::Leading { .. } if self.credited_lag >= behind => self.step_down(out),
            _ => {}
        }
    }

    fn step_down(&mut self, out: &mut Outbox) {
        self.phase = Phase::Idle;
        out.push(Effect::CancelTimer { timer: RENEW_TIMER });
        self.clear_deadlines(out);
        self.announce(out);
        self.schedule_candidacy(Retry::Failed, out);
    }

    /// Bind this node to `to` for a lease from now.
    fn promise_to(&mut self, to: u64, out: &mut Outbox) {
        if self.cfg.keep {
            self.promise = Some(Promise::To(to));
            self.election.stop(out);
            out.push(Effect::SetTimer { timer: PROMISE_TIMER, after_ms: self.cfg.lease_ms });
        }
    }

    /// May this node grant anything to `to` now?
    fn free_for(&self, to: u64) -> bool {
        !matches!(self.phase, Phase::Leading { .. })
            && match self.promise {
                None => true,
                Some(Promise::To(p)) => p == to,
                Some(Promise::Blocked) => false,
            }
    }

    fn highest(&self) -> u64 {
        self.seen.max(self.stable.term).max(self.leader_term)
    }

    fn on_vote_request(&mut self, port: Port, term: u64, candidate: u64, out: &mut Outbox) {
        self.seen = self.seen.max(term);
        // Following a leader that handed over (it released this node's
        // promise): it keeps naming it until the successor's renewal.
        let released = self.promise.is_none() && matches!(self.phase, Phase::Following(_));
        self.wake(out);
        let once =
            term > self.stable.term || (term == self.stable.term && self.stable.vote.is_none_or(|v| v == candidate));
        // A node is alive to run itself: it never binds itself to a worse
        // candidate (unless it is leaving: it will not run).
        let worse = self.rule.beats(self.id, candidate) && !self.leaving;
        if !(once && !worse && self.free_for(candidate)) {
            out.send(port, Msg::Vote { term: self.highest(), candidate, granted: false });
            return;
        }
        self.stable = Stable { term, vote: Some(candidate) };
        out.push(Effect::Persist(self.stable));
        self.promise_to(candidate, out);
        match self.phase {
            Phase::Candidate { .. } => {
                self.clear_deadlines(out);
                self.phase = Phase::Idle;
                self.schedule_candidacy(Retry::Failed, out); // one-shot; kept: promised, nothing
            }
            Phase::Following(_) if !released => self.phase = Phase::Idle,
            _ => {}
        }
        self.announce(out);
        out.send(port, Msg::Vote { term, candidate, granted: true });
    }

    fn on_vote(&mut self, port: Port, term: u64, granted: bool, out: &mut Outbox) {
        self.seen = self.seen.max(term);
        let Phase::Candidate { term: running } = self.phase else { return };
        let p = port as usize;
        if granted && term == running {
            self.voted[p] = true;
            self.check_won(out);
        } else if !granted {
            self.refused[p] = true;
            let refusals = self.refused.iter().zip(&self.voted).filter(|&(&r, &v)| r && !v).count();
            let n = self.peers.len() + 1;
            if self.better[p] {
                self.give_up(Retry::Outranked, out);
            } else if refusals > n.saturating_sub(self.quorum) {
                self.give_up(Retry::Failed, out);
            }
        }
    }

    fn on_renew(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) {
        self.seen = self.seen.max(term);
        self.wake(out);
        // A later leader exists, so this node's lease is over: with working
        // timers it stepped down already; a process that was frozen (its
        // timers lost) learns it here.
        if let Phase::Leading { term: leading } = self.phase
            && term > leading
        {
            self.step_down(out);
        }
        if !(self.free_for(leader) && term >= self.leader_term) {
            out.send(port, Msg::LeaseAck { term: self.highest(), granted: false });
            return;
        }
        self.promise_to(leader, out);
        self.election.stop(out);
        if matches!(self.phase, Phase::Candidate { .. }) {
            self.clear_deadlines(out);
        }
        self.phase = Phase::Following(leader);
        self.leader_term = term;
        self.announce(out);
        self.reports.decide_once(Role::Follower, leader, out);
        out.send(port, Msg::LeaseAck { term, granted: true });
    }

    /// The leader this node is bound to (behind `port`) stepped down from
    /// `term` to stop, naming `successor`: the promise to it is void (it
    /// leads no more and never will), so this node may grant the successor
    /// at once instead of a lease later; the successor runs now. Heeded
    /// only from the leader of the term this node follows or is bound to.
    fn on_handover(&mut self, port: Port, term: u64, successor: u64, out: &mut Outbox) {
        let Some(&from) = self.peers.get(port as usize) else { return };
        if self.promise != Some(Promise::To(from)) || term != self.leader_term {
            return;
        }
        // Released; the promise timer still runs, so that a follower whose
        // successor never renews gives up on its leader as before.
        self.promise = None;
        if successor == self.id && !self.leaving {
            self.run(out);
        }
    }

    fn on_ack(&mut self, port: Port, term: u64, granted: bool) {
        self.seen = self.seen.max(term);
        if let Phase::Leading { term: leading } = self.phase
            && granted
            && term == leading
            && self.cfg.keep
        {
            // One more acknowledgement: credited one round later (the first
            // of a node that did not vote, to round 1).
            let lag = &mut self.lag[port as usize];
            *lag = match *lag {
                Some(l) => Some(l.saturating_sub(1)),
                None => Some(self.rounds.saturating_sub(1)).filter(|&l| l < FORGET),
            };
            self.recredit();
        }
    }
}

impl Chubby {
    /// Forget what no step reads again before writing it: a candidacy's
    /// votes and refusals once it is over, a leader's credits once it no
    /// longer leads, and the round count and newest slot outside a
    /// candidacy or term (a candidacy starts them afresh, and a deadline that
    /// fires outside one only clears its slot). Two nodes that differ only
    /// there behave alike; forgetting makes them one state for the checker
    /// (docs/checking.md, "Dead values") and changes nothing a run does.
    fn forget_dead_values(&mut self) {
        let (candidate, leading) =
            (matches!(self.phase, Phase::Candidate { .. }), matches!(self.phase, Phase::Leading { .. }));
        if !candidate {
            self.voted.iter_mut().for_each(|v| *v = false);
            self.refused.iter_mut().for_each(|v| *v = false);
        }
        if !leading {
            self.lag.iter_mut().for_each(|l| *l = None);
            self.credited_lag = 0;
            if !candidate {
                (self.rounds, self.newest) = (0, 0);
            }
        }
    }

    fn handle_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = self.peers.sender(port)?;
        super::check_term(NAME, &msg)?;
        match msg {
            Msg::VoteRequest { term, candidate } if candidate == from => {
                self.on_vote_request(port, term, candidate, out)
            }
            Msg::Vote { term, candidate, granted } if candidate == self.id => self.on_vote(port, term, granted, out),
            Msg::LeaseRenew { term, leader } if leader == from => self.on_renew(port, term, leader, out),
            // No correct node sends these: a request or renewal naming
            // somebody else than its sender, a vote for another candidate.
            Msg::VoteRequest { .. } | Msg::Vote { .. } | Msg::LeaseRenew { .. } => {
                return Err(super::kept::invalid(NAME, msg, from, self.id, self.state()));
            }
            Msg::LeaseAck { term, granted } => self.on_ack(port, term, granted),
            Msg::Handover { term, successor } => self.on_handover(port, term, successor, out),
            _ => return Err(AlgoError::UnexpectedKind { algorithm: NAME, kind: msg.kind().name() }),
        }
        Ok(())
    }

    fn handle_timer(&mut self, timer: TimerId, out: &mut Outbox) {
        match timer {
            PROMISE_TIMER => {
                let released = self.promise.is_none() && matches!(self.phase, Phase::Following(_));
                if self.promise.take().is_none() && !released {
                    return;
                }
                if matches!(self.phase, Phase::Following(_)) {
                    self.phase = Phase::Idle;
                    self.announce(out);
                }
                self.schedule_candidacy(Retry::First, out);
            }
            ELECTION_TIMER => {
                if !self.election.fired(ELECTION_TIMER) {
                    return;
                }
                match self.phase {
                    Phase::Idle if self.promise.is_none() => self.run(out),
                    Phase::Candidate { .. } => self.give_up(Retry::Failed, out),
                    _ => {}
                }
            }
            RENEW_TIMER => self.renew(out),
            t if (DEADLINE_TIMER..DEADLINE_TIMER + SLOTS as TimerId).contains(&t) => {
                let slot = (t - DEADLINE_TIMER) as usize;
                if std::mem::take(&mut self.slots[slot]) {
                    self.deadline_passed(((self.newest + SLOTS - slot) % SLOTS) as u64, out);
                }
            }
            _ => {}
        }
    }
}

impl Chubby {
    fn start(&mut self, out: &mut Outbox) {
        self.wake(out);
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

    /// A leader steps down at once (its lease ends now, so no promise to it
    /// can still cover a leadership), tells every node that it released
    /// them and which node should run (the best one that acknowledged it
    /// within the last rounds), and never runs again; it grants that
    /// node's vote request like any other. The voters' promises to it end,
    /// the successor runs at once and leads on a quorum: a round trip and a
    /// half after the handover instead of a lease and a back-off, and no
    /// two leases overlap (the old one ended before any was released). Its
    /// belief names the successor once its first renewal arrives.
    fn leave(&mut self, _suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) {
            return false;
        }
        self.election.stop(out);
        let Phase::Leading { term } = self.phase else { return false };
        let best = self.peers.best_where(self.rule, |p| self.lag.get(p as usize).is_some_and(|l| l.is_some()));
        self.step_down(out);
        self.forget_dead_values();
        let Some(successor) = best else { return false };
        self.peers.broadcast(Msg::Handover { term, successor }, out);
        true
    }

    fn restore(&mut self, stable: Stable) {
        self.stable = stable;
        self.seen = self.seen.max(stable.term);
        self.restored = true;
    }
}

impl Algorithm for Chubby {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Leave { suspected } => {
                if self.leave(suspected, out) {
                    out.push(Effect::HandingOver);
                }
            }
            Input::Restore(stable) => self.restore(stable),
            Input::Suspect { .. } | Input::Heartbeat { .. } | Input::StoreReply(_) => {}
        }
        Ok(())
    }


    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
    }

    fn state(&self) -> &'static str {
        match self.phase {
            Phase::Asleep => "asleep",
            Phase::Idle if self.promise.is_some() => "promised",
            Phase::Idle => "no-leader",
            Phase::Candidate { .. } => "candidate",
            Phase::Following(_) => "follower",
            Phase::Leading { .. } => "leader",
        }
    }

    fn watched(&self, _port: Port) -> bool {
        true
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

    /// The timing derived from the loopback detector is the loopback preset, and every derived timing validates.
    #[test]
    fn timing_follows_the_detector() {
        assert_eq!(ChubbyConfig::for_detector(DetectorConfig::LOOPBACK), ChubbyConfig::LOOPBACK);
        for timeout_ms in [1, 2, 3, 7, 80, 200, 1_000, 2_000, crate::algo::detector::MAX_TIMEOUT_MS] {
            let c = ChubbyConfig::for_detector(DetectorConfig { period_ms: 1, timeout_ms });
            assert_eq!(c.validate(), Ok(()), "timeout {timeout_ms}");
        }
    }
    use crate::algo::kept::testing::{self, PEERS_OF_3, decide, lead, send, started};
    use crate::algo::{MAX_TERM, MsgKind, catalogue};
    use crate::faults::{Fault, FaultPlan, Scheduled};
    use crate::invariants;
    use crate::sim::{self, SimConfig, SimReport};
    use crate::topology::Topology;

    /// Node `id` whose ports lead to `peers`, in port order.
    fn node(id: u64, peers: &[u64], cfg: ChubbyConfig) -> Chubby {
        testing::node(id, peers, |c| Chubby::with_config(c, cfg))
    }

    fn vote(term: u64, candidate: u64, granted: bool) -> Effect {
        send(0, Msg::Vote { term, candidate, granted })
    }

    /// Ask `a` on `port` for its vote for `candidate` in `term`: did it grant it (`None`: no answer)?
    fn asked(a: &mut Chubby, port: Port, term: u64, candidate: u64) -> Option<bool> {
        let mut out = Outbox::default();
        a.on_message(port, Msg::VoteRequest { term, candidate }, &mut out).unwrap();
        out.effects().iter().find_map(|e| match e {
            Effect::Send { msg: Msg::Vote { granted, .. }, .. } => Some(*granted),
            _ => None,
        })
    }

    /// Node 5 of {1..5} (loopback timing), started and elected for term 1 by
    /// the votes of 1 and 2; `out` is left empty.
    fn elected_5(out: &mut Outbox) -> Chubby {
        let mut a = node(5, &[1, 4, 2, 3], ChubbyConfig::LOOPBACK);
        a.on_start(out);
        a.on_message(1, Msg::Vote { term: 1, candidate: 5, granted: true }, out).unwrap();
        a.on_message(3, Msg::Vote { term: 1, candidate: 5, granted: true }, out).unwrap();
        assert_eq!(a.state(), "leader");
        out.clear();
        a
    }

    /// The presets validate; a margin under 5%, a renewal that does not fit twice in the
    /// leader's lease and a candidacy longer than it are refused.
    #[test]
    fn presets_validate_and_bad_timing_is_refused() {
        for cfg in [ChubbyConfig::ONE_SHOT, ChubbyConfig::LOOPBACK, ChubbyConfig::KUBERNETES] {
            assert_eq!(cfg.validate(), Ok(()), "{cfg:?}");
        }
        let l = ChubbyConfig::LOOPBACK;
        for bad in [
            ChubbyConfig { margin_ms: 10, ..l },
            ChubbyConfig { margin_ms: 1_000, ..l },
            ChubbyConfig { renew_ms: 500, ..l },
            ChubbyConfig { candidacy_ms: 950, ..l },
            ChubbyConfig { backoff_ms: 0, ..l },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    /// The best id runs at once on waking: it persists its own vote for term 1 before
    /// asking every node, starts its round-0 deadline (lease − margin) and its candidacy
    /// timeout; a quorum of grants (3 of 5 with its own) makes it lead and send the first
    /// renewal round at once; a late vote changes nothing.
    #[test]
    fn best_id_runs_at_once_and_leads_on_a_quorum() {
        let (mut a, mut out) = started(node(5, &[1, 4, 2, 3], ChubbyConfig::LOOPBACK));
        let mut expected = vec![
            lead(0, None),
            Effect::Persist(Stable { term: 1, vote: Some(5) }),
            Effect::SetTimer { timer: DEADLINE_TIMER, after_ms: 900 },
            Effect::SetTimer { timer: ELECTION_TIMER, after_ms: 400 },
        ];
        expected.extend((0..4).map(|port| send(port, Msg::VoteRequest { term: 1, candidate: 5 })));
        assert_eq!(out.effects(), &expected[..]);
        out.clear();
        a.on_message(1, Msg::Vote { term: 1, candidate: 5, granted: true }, &mut out).unwrap();
        assert!(out.effects().is_empty(), "2 of 5: no quorum yet");
        a.on_message(3, Msg::Vote { term: 1, candidate: 5, granted: true }, &mut out).unwrap();
        let mut expected = vec![
            Effect::CancelTimer { timer: ELECTION_TIMER },
            lead(1, Some(5)),
            decide(Role::Leader, 5),
            Effect::SetTimer { timer: DEADLINE_TIMER + 1, after_ms: 900 },
        ];
        expected.extend((0..4).map(|port| send(port, Msg::LeaseRenew { term: 1, leader: 5 })));
        expected.push(Effect::SetTimer { timer: RENEW_TIMER, after_ms: 300 });
        assert_eq!(out.effects(), &expected[..]);
        out.clear();
        a.on_message(0, Msg::Vote { term: 1, candidate: 5, granted: true }, &mut out).unwrap();
        assert!(out.effects().is_empty());
        assert_eq!(a.state(), "leader");
    }

    /// A candidacy or a term that is over leaves nothing behind: node 5 runs for term 1, is
    /// granted by node 1 and refused by node 2, and gives up when its candidacy times out; it is
    /// then the very node it would be had nobody answered (no votes, no refusals, no rounds:
    /// values no step reads before the next candidacy writes them). And a leader that steps down
    /// at its deadline forgets the credits of its term. So the checker counts one state where it
    /// counted several.
    #[test]
    fn a_finished_candidacy_or_term_leaves_nothing_behind() {
        let run = |answered: bool| {
            let (mut a, mut out) = started(node(5, &[1, 4, 2, 3], ChubbyConfig::LOOPBACK));
            if answered {
                a.on_message(0, Msg::Vote { term: 1, candidate: 5, granted: true }, &mut out).unwrap();
                a.on_message(2, Msg::Vote { term: 1, candidate: 5, granted: false }, &mut out).unwrap();
            }
            out.clear();
            a.on_timer(ELECTION_TIMER, &mut out);
            assert_eq!(a.state(), "no-leader");
            a
        };
        let (answered, silent) = (run(true), run(false));
        assert!(answered == silent, "{answered:?}\n{silent:?}");

        let mut out = Outbox::default();
        let mut leader = elected_5(&mut out);
        leader.on_timer(DEADLINE_TIMER + 1, &mut out);
        assert_eq!(leader.state(), "no-leader", "round 1 was never acknowledged");
        assert!(leader.lag.iter().all(Option::is_none) && (leader.rounds, leader.credited_lag) == (0, 0));
    }

    /// A voter never votes twice in one term, also across a crash: 3 grants 5 in term 2
    /// (persisted before the vote leaves), refuses 4 in term 2 while promised and after the
    /// promise ran out; a recovered incarnation restored from the record refuses everybody
    /// for one lease (it may have promised anything), then still refuses term 2 to 4 and
    /// grants term 3. Nobody grants a worse candidate.
    #[test]
    fn a_voter_never_votes_twice_per_term_even_across_a_crash() {
        let mut a = node(3, &PEERS_OF_3, ChubbyConfig::LOOPBACK);
        let mut out = Outbox::default();
        a.on_message(0, Msg::VoteRequest { term: 2, candidate: 5 }, &mut out).unwrap();
        let persist = out.effects().iter().position(|e| *e == Effect::Persist(Stable { term: 2, vote: Some(5) }));
        let sent = out.effects().iter().position(|e| *e == vote(2, 5, true));
        assert!(persist.unwrap() < sent.unwrap(), "{:?}", out.effects());
        assert!(out.effects().contains(&Effect::SetTimer { timer: PROMISE_TIMER, after_ms: 1_000 }));
        assert_eq!(asked(&mut a, 2, 2, 4), Some(false), "promised to 5, and voted in term 2");
        a.on_timer(PROMISE_TIMER, &mut out);
        assert_eq!(asked(&mut a, 2, 2, 4), Some(false), "free, but voted for 5 in term 2");
        assert_eq!(asked(&mut a, 1, 9, 1), Some(false), "1 is worse than 3");

        let mut b = node(3, &PEERS_OF_3, ChubbyConfig::LOOPBACK);
        b.on_restore(a.stable());
        out.clear();
        b.on_start(&mut out);
        assert_eq!(out.effects(), &[lead(0, None), Effect::SetTimer { timer: PROMISE_TIMER, after_ms: 1_000 }]);
        for (term, who) in [(2, 4), (3, 4), (3, 5)] {
            assert_eq!(
                asked(&mut b, if who == 5 { 0 } else { 2 }, term, who),
                Some(false),
                "blocked: term {term} for {who}"
            );
        }
        out.clear();
        b.on_message(0, Msg::LeaseRenew { term: 2, leader: 5 }, &mut out).unwrap();
        assert!(out.effects().contains(&send(0, Msg::LeaseAck { term: 3, granted: false })));
        b.on_timer(PROMISE_TIMER, &mut out);
        assert_eq!(asked(&mut b, 2, 2, 4), Some(false), "the restored record: voted for 5 in term 2");
        assert_eq!(asked(&mut b, 2, 3, 4), Some(true));
        assert_eq!(b.stable(), Stable { term: 3, vote: Some(4) });
    }

    /// The lease rests on the latest round a quorum credited: with acknowledgements from
    /// one node only (2 of 5) the deadline of round 0 ends the lease; the j-th
    /// acknowledgement of a node is credited to round j, so two nodes' first
    /// acknowledgements carry the lease past round 0 to round 1's deadline, not further.
    #[test]
    fn the_lease_ends_at_the_deadline_of_the_last_credited_round() {
        let mut out = Outbox::default();
        let mut a = elected_5(&mut out);
        a.on_message(0, Msg::LeaseAck { term: 1, granted: true }, &mut out).unwrap();
        a.on_timer(DEADLINE_TIMER, &mut out);
        assert_eq!(a.state(), "no-leader", "round 0 was the last credited");
        assert_eq!(out.effects()[..2], [Effect::CancelTimer { timer: RENEW_TIMER }, Effect::CancelTimer { timer: 4 }]);
        assert!(out.effects().contains(&lead(1, None)));

        let mut b = elected_5(&mut out);
        b.on_message(0, Msg::LeaseAck { term: 1, granted: true }, &mut out).unwrap();
        b.on_message(2, Msg::LeaseAck { term: 1, granted: true }, &mut out).unwrap();
        b.on_message(2, Msg::LeaseAck { term: 0, granted: true }, &mut out).unwrap();
        b.on_timer(RENEW_TIMER, &mut out);
        b.on_timer(DEADLINE_TIMER, &mut out);
        assert_eq!(b.state(), "leader", "round 1 is credited by 5, 1 and 2");
        b.on_timer(DEADLINE_TIMER + 1, &mut out);
        assert_eq!(b.state(), "no-leader", "round 2 is not");
    }

    /// A leader's state does not count its rounds without bound: renewing a steady lease (every
    /// node acknowledging every round) comes back to the same state every three rounds, so the
    /// checker sees a lease as a cycle (the leader counted rounds, and acknowledgements per node,
    /// for ever before).
    #[test]
    fn a_steady_lease_comes_back_to_the_same_state() {
        let mut out = Outbox::default();
        let mut a = elected_5(&mut out);
        let mut seen = Vec::new();
        for _ in 0..16 {
            for port in 0..4 {
                a.on_message(port, Msg::LeaseAck { term: 1, granted: true }, &mut out).unwrap();
            }
            seen.push(a.clone());
            a.on_timer(RENEW_TIMER, &mut out);
        }
        assert_eq!(a.state(), "leader");
        // (Rounds are counted up to FORGET + 1 = 9, for a node's first acknowledgement.)
        assert!(seen[9] != seen[10] && seen[9] == seen[12] && seen[12] == seen[15], "{:?}\n{:?}", seen[9], seen[12]);
    }

    /// A duplicated acknowledgement never credits a round not sent yet: 1 and 2 acknowledge
    /// round 1 three times each (twice duplicated), nobody acknowledges rounds 2 and 3, and the
    /// leader steps down at round 1's deadline (counting acknowledgements, it credited round 3
    /// before, and kept a lease no quorum had granted).
    #[test]
    fn a_duplicated_acknowledgement_credits_no_later_round() {
        let mut out = Outbox::default();
        let mut a = elected_5(&mut out);
        for port in [0, 2, 0, 2, 0, 2] {
            a.on_message(port, Msg::LeaseAck { term: 1, granted: true }, &mut out).unwrap();
        }
        a.on_timer(RENEW_TIMER, &mut out);
        a.on_timer(RENEW_TIMER, &mut out);
        assert_eq!(a.state(), "leader");
        a.on_timer(DEADLINE_TIMER + 1, &mut out);
        assert_eq!(a.state(), "no-leader", "round 1 was the last a quorum granted");
    }

    /// A leader that was frozen (its timers lost) and hears a renewal of a later term steps
    /// down and follows the later leader at once; a renewal of an older term is refused.
    #[test]
    fn a_leader_follows_a_renewal_of_a_later_term() {
        let mut out = Outbox::default();
        let mut a = elected_5(&mut out);
        a.on_message(1, Msg::LeaseRenew { term: 0, leader: 4 }, &mut out).unwrap();
        assert_eq!(out.effects(), &[send(1, Msg::LeaseAck { term: 1, granted: false })]);
        out.clear();
        a.on_message(1, Msg::LeaseRenew { term: 3, leader: 4 }, &mut out).unwrap();
        assert!(out.effects().contains(&lead(1, None)));
        assert!(out.effects().ends_with(&[lead(3, Some(4)), send(1, Msg::LeaseAck { term: 3, granted: true })]));
        assert_eq!(a.state(), "follower");
    }

    /// Messages that cannot happen are errors: a request or renewal naming somebody else
    /// than its sender, a vote for another candidate, a foreign kind, a missing port; a term above
    /// MAX_TERM is refused as implausible, and a node at MAX_TERM runs no more rather than wrap.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = node(3, &PEERS_OF_3, ChubbyConfig::LOOPBACK);
        let mut out = Outbox::default();
        let bad = [
            Msg::VoteRequest { term: 1, candidate: 4 },
            Msg::LeaseRenew { term: 1, leader: 4 },
            Msg::Vote { term: 1, candidate: 5, granted: true },
        ];
        for msg in bad {
            assert!(matches!(a.on_message(0, msg, &mut out), Err(AlgoError::Invalid(_))), "{msg:?}");
        }
        assert!(matches!(a.on_message(0, Msg::Wakeup, &mut out), Err(AlgoError::UnexpectedKind { .. })));
        for term in [MAX_TERM + 1, u64::MAX - 1, u64::MAX] {
            let refused = a.on_message(0, Msg::VoteRequest { term, candidate: 5 }, &mut out);
            assert!(matches!(refused, Err(AlgoError::Implausible { field: "term", .. })), "{term}: {refused:?}");
        }
        a.on_message(0, Msg::VoteRequest { term: MAX_TERM, candidate: 5 }, &mut out).unwrap();
        a.on_timer(PROMISE_TIMER, &mut out);
        a.on_timer(ELECTION_TIMER, &mut out);
        assert_ne!(a.state(), "candidate", "no term after MAX_TERM to run for");
        assert!(a.leadership().term <= MAX_TERM, "{:?}", a.leadership());
        assert!(matches!(
            a.on_message(9, Msg::LeaseAck { term: 0, granted: true }, &mut out),
            Err(AlgoError::BadPort { port: 9 })
        ));
    }

    /// One-shot, in the simulator: every node initiating costs exactly 4(n − 1) (a request,
    /// a vote, a renewal and an acknowledgement per other node); a lone initiator that is
    /// not the best id costs exactly the bound 6(n − 1) (its candidacy wakes the best one);
    /// the best id leads term 1 or 2, all agree and the run goes quiet, under both rules.
    #[test]
    fn one_shot_counts_attain_the_bound() {
        let spec = catalogue::find(NAME).unwrap();
        for n in [2u32, 3, 8, 20] {
            let (topo, ids, all) = testing::complete(n);
            let m = n as u64 - 1;
            for rule in [Rule::Max, Rule::Min] {
                let r = sim::run(spec, &topo, &ids, &all, rule, &SimConfig::default());
                assert!(r.verdict.violations.is_empty() && r.terminated, "{:?}", r.verdict.violations);
                assert_eq!(r.counters.messages, 4 * m, "n = {n}");
                for k in [MsgKind::VoteRequest, MsgKind::Vote, MsgKind::LeaseRenew, MsgKind::LeaseAck] {
                    assert_eq!(r.counters.by_kind[k as usize], m, "n = {n} {k:?}");
                }
                let worst = ids.iter().position(|&id| Some(id) != rule.winner(ids.iter().copied())).unwrap() as u32;
                let one = sim::run(spec, &topo, &ids, &[worst], rule, &SimConfig::default());
                assert!(one.verdict.violations.is_empty(), "{:?}", one.verdict.violations);
                assert_eq!(one.counters.messages, (spec.bound)(n as u64, 1), "n = {n}");
            }
        }
    }

    fn kept(ids: &[u64], faults: Vec<(u64, Fault)>, horizon: u64) -> SimReport {
        let n = ids.len() as u32;
        let faults = faults.into_iter().map(|(at, fault)| Scheduled::new(at, at, fault)).collect();
        let cfg = SimConfig {
            faults: FaultPlan { faults },
            horizon: Some(horizon),
            log_message_times: true,
            ..SimConfig::default()
        };
        let all: Vec<u32> = (0..n).collect();
        let spec = catalogue::find(NAME).unwrap();
        let r = sim::run_kept(spec, &Topology::complete(n).unwrap(), ids, &all, Rule::Max, &cfg).unwrap();
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let timeline: Vec<_> = r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
        invariants::one_leader_per_term(ids, &timeline).unwrap();
        r
    }

    /// The belief of position `p` at time `t` (its latest `Lead` at or before `t`).
    fn belief(r: &SimReport, p: u32, t: u64) -> Option<Leadership> {
        r.leaderships.iter().rev().find(|e| e.position == p && e.time <= t).map(|e| e.leadership)
    }

    /// The positions that believe they lead at `t`.
    fn leaders_at(r: &SimReport, ids: &[u64], t: u64) -> Vec<u32> {
        (0..ids.len() as u32).filter(|&p| belief(r, p, t).is_some_and(|l| l.leader == Some(ids[p as usize]))).collect()
    }

    const IDS: [u64; 5] = [3, 7, 1, 5, 4];

    /// Kept, failure-free, 5 nodes for 3 s: 7 leads term 1 throughout; the election costs
    /// exactly 2(n − 1) requests and votes, then every renewal round 2(n − 1) (a renewal and
    /// an acknowledgement per follower), one round at the win and one every 300 ms.
    #[test]
    fn kept_failure_free_count() {
        let r = kept(&IDS, vec![], 3_000);
        let by = |k: MsgKind| r.counters.by_kind[k as usize];
        assert_eq!((by(MsgKind::VoteRequest), by(MsgKind::Vote)), (4, 4));
        let rounds = by(MsgKind::LeaseRenew) / 4;
        assert_eq!((by(MsgKind::LeaseRenew), by(MsgKind::LeaseAck)), (4 * rounds, 4 * rounds));
        assert_eq!(rounds, 1 + (3_000 - 32) / 300, "one at the win (by 32 ms), then every 300 ms");
        assert!(r.leaderships.iter().all(|e| e.leadership.term <= 1));
        for p in 0..5 {
            assert_eq!(belief(&r, p, 3_000), Some(Leadership { term: 1, leader: Some(7) }));
        }
    }

    /// A partition that leaves no group a majority ({3,7} {1,5} {4}) at 2 s: 7 cannot renew,
    /// steps down when its lease runs out, nobody else can be elected; from 2 s + the lease
    /// on nobody leads, and so it stays until the horizon. Healed at 6 s, a leader of a
    /// higher term is agreed on within 2 s.
    #[test]
    fn a_partition_without_majority_leaves_no_leader_until_it_heals() {
        let groups = vec![vec![0, 1], vec![2, 3], vec![4]];
        let r = kept(&IDS, vec![(2_000, Fault::Partition { groups: groups.clone() })], 6_000);
        let stepped = r.leaderships.iter().find(|e| e.time >= 2_000 && e.position == 1).unwrap();
        assert_eq!(stepped.leadership, Leadership { term: 1, leader: None });
        assert!(stepped.time <= 2_000 + 1_000, "the lease ends within L: {}", stepped.time);
        for t in (3_000..=6_000).step_by(50) {
            assert!(leaders_at(&r, &IDS, t).is_empty(), "someone leads at {t}: {:?}", r.leaderships);
        }
        let healed =
            vec![(2_000, Fault::Partition { groups }), (6_000, Fault::Partition { groups: vec![(0..5).collect()] })];
        let r = kept(&IDS, healed, 8_000);
        let last: Vec<_> = (0..5).map(|p| belief(&r, p, 8_000).unwrap()).collect();
        assert!(last.iter().all(|&l| l == last[0] && l.leader.is_some() && l.term > 1), "{last:?}");
        let agreed = r.leaderships.iter().map(|e| e.time).max().unwrap();
        eprintln!("healed at 6000 ms: all follow {:?} at {agreed} ms", last[0]);
        assert!(agreed < 8_000);
    }

    /// 7 alone in a minority ({7} | {3,1,5,4}) at 2 s: the majority elects 5 with a higher
    /// term, but only after 7's lease ran out (7 steps down first, and never two nodes
    /// lead at one instant); when the partition heals at 5 s, 7 follows 5.
    #[test]
    fn the_majority_elects_only_after_the_old_lease_expired() {
        let part = Fault::Partition { groups: vec![vec![1], vec![0, 2, 3, 4]] };
        let r = kept(&IDS, vec![(2_000, part), (5_000, Fault::Partition { groups: vec![(0..5).collect()] })], 7_000);
        let down = r.leaderships.iter().find(|e| e.time >= 2_000 && e.position == 1).unwrap().time;
        let up = r.leaderships.iter().find(|e| e.time >= 2_000 && e.leadership.leader == Some(5)).unwrap();
        eprintln!(
            "partition at 2000 ms: 7 stepped down at {down} ms, 5 leads term {} from {} ms",
            up.leadership.term, up.time
        );
        assert!(up.leadership.term > 1 && up.position == 3);
        assert!(down < up.time, "the new leader must wait for the old lease");
        for t in 0..7_000 {
            assert!(leaders_at(&r, &IDS, t).len() <= 1, "two leaders at {t}");
        }
        for p in 0..5 {
            assert_eq!(belief(&r, p, 7_000), Some(up.leadership), "position {p}");
        }
    }

    /// The leader crashes at 2 s: the best live node (5) leads a higher term after every
    /// promise to 7 ran out (about one lease), the others follow; 7 recovers at 4 s, is
    /// blocked for a lease, then follows 5 (it does not take the lead back).
    #[test]
    fn a_crashed_leader_is_replaced_and_recovers_as_a_follower() {
        let r = kept(&IDS, vec![(2_000, Fault::Crash { node: 1 }), (4_000, Fault::Recover { node: 1 })], 7_000);
        let up = r.leaderships.iter().find(|e| e.time >= 2_000 && e.leadership.leader == Some(5)).unwrap();
        eprintln!("crash of 7 at 2000 ms: 5 leads term {} from {} ms", up.leadership.term, up.time);
        assert!(up.time > 2_000 + 700 && up.time < 2_000 + 1_500, "{}", up.time);
        for p in 0..5 {
            assert_eq!(belief(&r, p, 7_000), Some(up.leadership), "position {p}");
        }
    }
}
