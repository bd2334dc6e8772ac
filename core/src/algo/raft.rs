//! # Raft leader election: terms, randomised timeouts, majority votes
//!
//! * Source: D. Ongaro, J. Ousterhout, "In search of an understandable
//!   consensus algorithm", USENIX ATC 2014 (the "Raft paper"): §5.1 terms,
//!   §5.2 leader election (follower / candidate / leader, `RequestVote`,
//!   empty `AppendEntries` as heartbeats, randomised election timeouts), §5.4.1
//!   the election restriction (a vote only for a candidate whose log is at
//!   least as up-to-date). D. Ongaro, "Consensus: bridging theory and
//!   practice", PhD thesis, Stanford 2014 (the "thesis"): §3.10 leadership
//!   transfer (`TimeoutNow`), §4.2.3 disruptive servers (a vote refused within
//!   the minimum election timeout of hearing from a leader), §6.2 a leader
//!   steps down without a majority's contact for an election timeout
//!   (CheckQuorum, as etcd names it), §6.4.1 a leader lease bounded by the
//!   election timeout and clock drift, §9.6 PreVote.
//! * Network: complete graph, bidirectional links, no FIFO. A node knows the
//!   ids behind its ports ([`NodeContext::port_info`]) and the membership size
//!   n; a quorum is ⌊n/2⌋ + 1 of the whole membership. Safety (one leader per
//!   term) holds under any delay, loss, reordering, crash and recovery;
//!   liveness needs a live connected majority, delays well below the
//!   election timeout, and (randomised timeouts) holds with probability 1,
//!   not in every schedule. With the lease: also no two leaders *at once*,
//!   given timer rates within the drift margin and no duplicated messages.
//! * Candidates: every node. Winner: in the kept mode whoever times out first
//!   among the nodes whose log is at least as up-to-date as a majority's
//!   (with equal logs, the default: any node); in the one-shot mode the best
//!   initiator (timeouts by rank, below).
//! * Messages: one-shot, failure-free: exactly **4(n − 1)** (a request, a
//!   vote, an `AppendEntries` and its answer per other node); kept,
//!   failure-free: 2(n − 1) to elect, then 2(n − 1) per heartbeat period.
//!
//! ## The algorithm (kept mode)
//!
//! A node is asleep, a *follower* (of a known leader or of none), a
//! *pre-candidate* (PreVote only), a *candidate* or the *leader*. Its stable
//! record ([`Stable`], written with [`Effect::Persist`] before the message it
//! justifies) is Raft's `currentTerm` and `votedFor`. Its log is given: the
//! term and index of its last entry ([`LogPos`], equal by default); this
//! election moves no entries, so the log does not change.
//!
//! * **Terms** (§5.1). A node that sees a higher term in any message adopts
//!   it (persisted, no vote yet) and becomes a follower of no leader; a
//!   message of a lower term is answered with the node's term (and
//!   otherwise ignored), which makes a stale leader or candidate step down.
//! * **Election timeout** (§5.2). A follower or candidate that hears no
//!   leader for a timeout drawn uniformly from `[election_min, election_max)`
//!   runs: term + 1, a vote for itself (persisted), `RequestVote` to every
//!   node. The randomness comes from the driver ([`NodeContext::coin`]): the
//!   i-th timeout of a node is drawn from [`super::coin`]`(coin, i mod 8)`,
//!   so the simulator and the live runtime draw alike, and a node's state
//!   stays finite for the checker.
//! * **Votes** (§5.2, §5.4.1). A node grants `RequestVote { term, candidate,
//!   last_log_term, last_log_index }` iff `term` is its term (after adopting
//!   a higher one), it has voted for nobody else in it, and the candidate's
//!   log is at least as up-to-date as its own: a later last term, or the same
//!   last term and an index at least as large. A grant restarts its election
//!   timer. A candidate with a majority's grants (its own included) leads.
//! * **Heartbeats.** The leader sends `AppendEntries { term, leader }`, with
//!   no entries, at once and every `heartbeat_ms`; a node of a term not above
//!   follows the sender, restarts its election timer and answers
//!   `AppendAck { term, success: true }`; a node of a higher term answers
//!   `success: false` with its term, and the old leader steps down.
//! * **PreVote** (thesis §9.6, option `pre_vote`). Before running, a node asks
//!   `RequestVote { pre_vote: true }` for term + 1 without changing its term
//!   or vote; a node grants a pre-vote iff it would grant the vote and has not
//!   heard from a leader within `election_min`. Only a majority of pre-votes
//!   makes it a candidate. A node cut off alone therefore never raises its
//!   term, and does not depose a working leader when it comes back.
//! * **CheckQuorum** (thesis §6.2, option `check_quorum`). Every
//!   `election_min`, the leader counts the nodes it heard from since the
//!   last count; without a majority (itself included) it steps down.
//! * **Leases** (thesis §6.4.1, option `lease`). The leader's round r of
//!   heartbeats, sent at s_r, is credited by a node's j-th acknowledgement of
//!   the term with j ≤ r (as Chubby's here: j acknowledgements answer some
//!   round ≥ j, so the credit is never later than the truth, with no
//!   duplicates); once a majority credits round K, the leader believes it
//!   leads until s_K + D, D = `election_min` − `margin`, setting a timer for
//!   D − (r − K + 1)·`heartbeat_ms` from now (s_K is at most that long ago).
//!   It announces itself as leader only while that lease runs.
//! * **Disruptive servers** (thesis §4.2.3). With CheckQuorum or the lease, a
//!   node that heard from a leader within `election_min` (or leads) refuses
//!   a vote without adopting the request's term, unless the request comes
//!   from a leadership transfer (`transfer`). With the lease, a recovered
//!   incarnation treats its restart as such a contact.
//! * **Leadership transfer** (thesis §3.10): a leader about to stop
//!   ([`Algorithm::on_leave`]) stops believing it leads, and sends
//!   `TimeoutNow { term }` to the best node it heard from in the current
//!   heartbeat window; that node runs at once, with `transfer` set, and
//!   without PreVote.
//!
//! Every change of belief is announced with [`Effect::Lead`] (the term, and
//! the leader known in it); the first leader learned also with
//! [`Effect::Decide`].
//!
//! ## Safety: one leader per term
//!
//! A leader of term t got grants of t from a majority (§5.2). A node grants
//! at most one candidate per term: its vote and term are on disk before the
//! grant leaves, and a recovered node gets them back ([`Algorithm::restore`]),
//! so it never votes twice in one term even across a crash. Two majorities
//! of the same n nodes intersect, so two candidates of one term cannot both
//! have a majority. Pre-votes change no term and no vote, so PreVote cannot
//! break this; CheckQuorum and the lease only make a leader stop believing
//! it leads. The up-to-date check (§5.4.1) restricts whom a node grants, so
//! it only removes grants. Hence no two nodes lead one term, whatever the
//! options.
//!
//! *With the lease, no two leaders at once.* Say y believes it leads term
//! t_y on the lease of its round K, sent at s_K, so until s_K + D. Every node
//! x of a majority Q accepted round K (or a later round of t_y) at some
//! τ_x ≥ s_K, so its term was at most t_y then, and until τ_x +
//! `election_min` > s_K + D it grants no vote that is not a transfer and
//! does not run. (1) No leader of a later term t_z > t_y can begin before
//! s_K + D: its majority meets Q in some x, whose vote in t_z came after τ_x
//! (terms only grow at x), so not before τ_x + `election_min`. (2)
//! Symmetrically, y itself won t_y only after the lease of any earlier
//! leader z ended: y's majority meets z's crediting majority in a node that
//! voted for y after answering z, so after its guard for z ran out, past
//! z's lease. A transfer skips the guard, but only a leader that stopped
//! believing it leads sends `TimeoutNow`. So two beliefs never overlap in
//! real time, provided D on the leader's timer ends before `election_min` on
//! the voters': with timer rates within (1 ± ρ) of real time, D(1 + ρ) <
//! `election_min`(1 − ρ), i.e. `margin` > 2ρ·`election_min`, plus timer
//! latency; the presets keep 10%.
//!
//! ## Convergence
//!
//! With a live majority connected by links of delay at most δ, all awake and
//! no fault left: a node runs within `election_max` of the last leader
//! contact it had; its candidacy wins unless another node's timeout falls
//! within about 2δ of its own (a split vote) or its log is behind a
//! majority's; a split vote restarts every candidate's random timeout. So
//! the time to agree is a sum of rounds of at most `election_max` + 2δ; a
//! round splits only if another timeout falls within 2δ of the first, with
//! probability at most (n − 1)·2δ / (`election_max` − `election_min`) by a
//! union bound (0.32 at n = 3, δ = 16 ms, the loopback spread of 200 ms; a
//! crude bound: the chaos runs agreed within 589 ms at most). The bound [`convergence_bound_ms`] allows four such
//! rounds, with PreVote twice as many messages per round but the same
//! time, plus a heartbeat period for followers to learn the leader: it is a
//! high-probability bound, not a worst case (an adversary choosing the
//! timeouts can split the votes for ever), as for Raft itself (§5.2, §9.3 of
//! the thesis measure it).
//!
//! ## One-shot mode (the catalogue's `build`): exactly 4(n − 1)
//!
//! No heartbeats after the first round, no CheckQuorum, no lease. Raft's
//! random timeouts are replaced by a deterministic spread so that a
//! failure-free run is one candidacy: an initiator times out after
//! `rank × rank_ms` (rank 0 is the best id) and a node woken by a message
//! sets no timer, so only initiators run. With every initiator awake at 0
//! and delays below `rank_ms` / 2, the best initiator runs first, alone; its
//! `RequestVote` (term 1) reaches every node before any other timer fires,
//! every node grants it (term 1 is new to all, logs are equal), and it leads
//! after a round trip: (n − 1) requests and (n − 1) votes. Its one round of
//! `AppendEntries` makes every node a follower (cancelling its timer), and
//! their `AppendAck`s end the run: **4(n − 1)**, whatever k ≥ 1.

use super::detector::DetectorConfig;
use super::kept::{OneTimer, Peers};
use super::spec::{AlgoOption, AlgorithmSpec, Assumptions, Candidates, KeptSpec, Lease, flag, per_second};
use super::{
    AlgoError, Algorithm, Effect, Leadership, Msg, NodeContext, Options, Outbox, Port, Reports, Role, Rule, Stable,
    TimerId,
};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "raft",
    title: "Raft leader election (terms, randomised timeouts, majority votes)",
    source: "D. Ongaro, J. Ousterhout, In search of an understandable consensus algorithm, USENIX ATC 2014 \
             (§5.2 election, §5.4.1 up-to-date votes); D. Ongaro, Consensus: bridging theory and practice, \
             Stanford PhD thesis 2014 (§3.10 TimeoutNow, §4.2.3, §6.2 CheckQuorum, §6.4.1 leases, §9.6 PreVote)",
    description: "A follower that hears no leader for a random election timeout runs for term + 1: it \
                  votes for itself (kept on disk) and asks every node; a node votes once per term, only \
                  for a candidate whose log is at least as up-to-date as its own; a majority elects. \
                  The leader sends empty AppendEntries as heartbeats; a higher term makes anybody a \
                  follower. Options, off by default: PreVote, CheckQuorum, a leader lease. One-shot \
                  here: timeouts by rank among the initiators, so the best initiator runs alone.",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    bound_formula: "4(n-1)",
    bound: |n, _| 4 * n.saturating_sub(1),
    exact: Some(|n, _| 4 * n.saturating_sub(1)),
    candidates: Candidates::Initiators,
    kept: Some(KeptSpec {
        build: |c, d| {
            Box::new(Raft::with_config(c, RaftConfig::for_detector(d).with_chosen(c.options)).with_chosen_log(c))
        },
        // No failure detector: AppendEntries is the heartbeat.
        heartbeats_per_period: |_| 0,
        election_load_per_second: |topo, d| {
            let n = u64::from(topo.len());
            per_second(2 * n.saturating_sub(1), RaftConfig::for_detector(d).heartbeat_ms)
        },
        convergence_bound_ms: |d, _, delay_ms| convergence_bound_ms(RaftConfig::for_detector(d), delay_ms),
        max_local_nodes: 128,
        lease: None,
    }),
    heap_bytes_per_position: 70_658,
    options: &[
        AlgoOption {
            name: "pre_vote",
            help: "true: PreVote (thesis §9.6), a node runs only after a majority would vote for it; \
                   default false",
            per_node: false,
            kept_only: true,
            check: flag,
            lease: None,
        },
        AlgoOption {
            name: "check_quorum",
            help: "true: CheckQuorum (thesis §6.2), a leader without a majority's contact for an \
                   election timeout steps down; default false",
            per_node: false,
            kept_only: true,
            check: flag,
            lease: None,
        },
        AlgoOption {
            name: "lease",
            help: "true: a leader lease (thesis §6.4.1), the leader believes it leads only until its \
                   lease ends, so no two leaders at once; default false",
            per_node: false,
            kept_only: true,
            check: flag,
            lease: Some(Lease { lost: "lease ended" }),
        },
        AlgoOption {
            name: "log",
            help: "where each node's log ends, TERM:INDEX, one for all or one per position separated by \
                   commas (e.g. 1:5,2:3,2:3): a node votes only for a candidate whose log is at least \
                   as up-to-date (§5.4.1); TERM at most 2^53 - 2; default 0:0 for every node",
            per_node: true,
            kept_only: true,
            check: |v| parse_log(v).map(|_| ()),
            lease: None,
        },
    ],
    ..machine!(Raft::new)
};

/// A log end written `TERM:INDEX` (the `log` option).
pub fn parse_log(value: &str) -> Result<LogPos, String> {
    let bad = || format!("`{value}` is not TERM:INDEX (two whole numbers, e.g. 2:7)");
    let (term, index) = value.split_once(':').ok_or_else(bad)?;
    let log = LogPos { term: term.trim().parse().map_err(|_| bad())?, index: index.trim().parse().map_err(|_| bad())? };
    // A node starts in its log's term and runs for the next: a term without one would never elect.
    if super::next_term(log.term).is_none() {
        return Err(format!(
            "term {} leaves no term to run for: a log's term is at most {} (MAX_TERM - 1, MAX_TERM = 2^53 - 1)",
            log.term,
            super::MAX_TERM - 1
        ));
    }
    Ok(log)
}

const NAME: &str = "raft";

/// Timer: the election timeout (a follower's or a candidate's).
pub const ELECTION_TIMER: TimerId = 0;
/// Timer: the leader's next heartbeat round.
pub const HEARTBEAT_TIMER: TimerId = 1;
/// Timer: the leader's CheckQuorum count.
pub const QUORUM_TIMER: TimerId = 2;
/// Timer: `election_min` after the last contact with a leader (the
/// disruptive-server guard and PreVote read it).
pub const FRESH_TIMER: TimerId = 3;
/// Timer: the leader's lease ends.
pub const LEASE_TIMER: TimerId = 4;
/// Random draws cycle through this many values per node.
const DRAWS: u8 = 8;

/// Where a node's log ends: the term and index of its last entry (§5.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogPos {
    /// Term of the last entry (0: an empty log).
    pub term: u64,
    /// Index of the last entry (0: an empty log).
    pub index: u64,
}

/// Raft's timing and options, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RaftConfig {
    /// Keep a leader (heartbeats for ever); `false`: the one-shot mode.
    pub keep: bool,
    /// Shortest election timeout.
    pub election_min_ms: u64,
    /// Election timeouts are drawn from `[election_min_ms, election_max_ms)`.
    pub election_max_ms: u64,
    /// The leader's heartbeat period.
    pub heartbeat_ms: u64,
    /// One-shot: an initiator's timeout per rank (the best id runs at once).
    pub rank_ms: u64,
    /// PreVote (thesis §9.6).
    pub pre_vote: bool,
    /// CheckQuorum (thesis §6.2): the leader steps down without a majority's contact.
    pub check_quorum: bool,
    /// A leader lease (thesis §6.4.1): the leader believes it leads only while it runs.
    pub lease: bool,
    /// How much shorter than `election_min_ms` the lease is (clock drift, timer latency).
    pub margin_ms: u64,
}

/// A [`RaftConfig`] that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("raft config: {0}")]
pub struct ConfigError(pub String);

/// How long after the last fault heals a live connected majority follows one
/// live leader, with high probability (see "Convergence" above): four
/// election rounds of `election_max + 2δ`, a heartbeat period and a delay
/// for the followers to hear the winner, and one more `election_min` for the
/// guard of a node that heard a deposed leader just before.
pub fn convergence_bound_ms(c: RaftConfig, delay_ms: u64) -> u64 {
    4 * (c.election_max_ms + 2 * delay_ms) + c.heartbeat_ms + c.election_min_ms + delay_ms
}

impl RaftConfig {
    /// The catalogue's one-shot election: no heartbeats after the first round,
    /// an initiator runs after `rank × 10 s`.
    pub const ONE_SHOT: RaftConfig = RaftConfig {
        keep: false,
        election_min_ms: 0,
        election_max_ms: 0,
        heartbeat_ms: 0,
        rank_ms: 10_000,
        pre_vote: false,
        check_quorum: false,
        lease: false,
        margin_ms: 0,
    };
    /// Kept leadership on loopback: heartbeats every 50 ms, election timeouts
    /// in [200, 400) ms (the Raft paper's 150–300 ms, §9.3, a little wider),
    /// a 10% lease margin; no option.
    pub const LOOPBACK: RaftConfig = RaftConfig {
        keep: true,
        election_min_ms: 200,
        election_max_ms: 400,
        heartbeat_ms: 50,
        rank_ms: 10_000,
        pre_vote: false,
        check_quorum: false,
        lease: false,
        margin_ms: 20,
    };
    /// etcd's production defaults: heartbeats every 100 ms, an election
    /// timeout of 1,000 ms (randomised in [1,000, 2,000) ms, as etcd does).
    pub const ETCD: RaftConfig = RaftConfig {
        election_min_ms: 1_000,
        election_max_ms: 2_000,
        heartbeat_ms: 100,
        margin_ms: 100,
        ..RaftConfig::LOOPBACK
    };

    /// Kept timing scaled to a detector's period p and suspicion timeout t
    /// (Raft needs no detector: its heartbeats are `AppendEntries`):
    /// heartbeats every p, election timeouts in [t, 2t), margin t/10
    /// ([`RaftConfig::LOOPBACK`] for [`DetectorConfig::LOOPBACK`]).
    pub fn for_detector(d: DetectorConfig) -> RaftConfig {
        let t = d.timeout_ms.max(4);
        RaftConfig {
            election_min_ms: t,
            election_max_ms: t.saturating_mul(2),
            heartbeat_ms: d.period_ms.clamp(1, t / 2),
            margin_ms: (t / 10).max(1),
            ..RaftConfig::LOOPBACK
        }
    }

    /// The same timing with PreVote, CheckQuorum and the lease as an
    /// election's options choose them (`pre_vote`, `check_quorum`, `lease`).
    pub fn with_chosen(self, o: Options) -> RaftConfig {
        self.with_options(o.flag("pre_vote"), o.flag("check_quorum"), o.flag("lease"))
    }

    /// The same timing with PreVote, CheckQuorum and the lease as given.
    pub fn with_options(self, pre_vote: bool, check_quorum: bool, lease: bool) -> RaftConfig {
        RaftConfig { pre_vote, check_quorum, lease, ..self }
    }

    /// D: the leader's lease from sending a round that a majority credits.
    pub fn lease_ms(&self) -> u64 {
        self.election_min_ms.saturating_sub(self.margin_ms)
    }

    /// Check that the timing can keep a leader.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: &str| Err(ConfigError(s.into()));
        if !self.keep {
            return if self.rank_ms == 0 { bad("rank_ms must be positive") } else { Ok(()) };
        }
        if self.heartbeat_ms == 0 || self.election_min_ms == 0 {
            return bad("heartbeat_ms and election_min_ms must be positive");
        }
        if self.election_max_ms <= self.election_min_ms {
            return bad("election_max_ms must be above election_min_ms (the timeouts must differ)");
        }
        if 2 * self.heartbeat_ms > self.election_min_ms {
            return bad("heartbeat_ms must fit twice in election_min_ms (one lost heartbeat must not end a term)");
        }
        if self.lease && (self.margin_ms * 20 < self.election_min_ms || self.lease_ms() <= 2 * self.heartbeat_ms) {
            return bad("the lease needs margin_ms of at least 5% and election_min_ms - margin_ms above 2 heartbeats");
        }
        Ok(())
    }
}

impl Default for RaftConfig {
    /// [`RaftConfig::LOOPBACK`].
    fn default() -> Self {
        RaftConfig::LOOPBACK
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Asleep,
    /// Follows the leader of its term, if it knows one.
    Follower(Option<u64>),
    /// Asks for pre-votes (PreVote).
    PreCandidate,
    Candidate,
    Leader,
}

/// One node of Raft's leader election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Raft {
    id: u64,
    rule: Rule,
    peers: Peers,
    /// How many nodes are better-ranked (one-shot timeouts).
    rank: u64,
    quorum: usize,
    coin: u64,
    cfg: RaftConfig,
    log: LogPos,
    phase: Phase,
    /// On disk: `currentTerm` and `votedFor`.
    stable: Stable,
    /// The index of the next random draw (mod [`DRAWS`]).
    draws: u8,
    /// The election timer, when pending.
    election: OneTimer,
    /// (Pre-)candidate: grants per port.
    granted: Vec<bool>,
    /// Leader: heard from, per port, since the last CheckQuorum count.
    heard: Vec<bool>,
    /// Heard from a leader within `election_min` (the guard; PreVote).
    fresh: bool,
    /// Leader, lease: per port, how many rounds before the newest the round
    /// its acknowledgements are credited to is (`None`: no usable credit).
    lag: Vec<Option<u64>>,
    /// Leader: heartbeat rounds sent in this term, up to [`Self::forget`] + 1.
    rounds: u64,
    /// Leader, lease: how many rounds before the newest the latest round a
    /// majority credited is (`None`: none yet).
    credited: Option<u64>,
    /// Leader, lease: the lease runs.
    leased: bool,
    restored: bool,
    /// Initiator (one-shot: only initiators run).
    initiator: bool,
    reports: Reports,
    leaving: bool,
}

impl Raft {
    /// An asleep one-shot node ([`RaftConfig::ONE_SHOT`]): the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        Raft::with_config(c, RaftConfig::ONE_SHOT)
    }

    /// The same node with its log where the election's `log` option puts
    /// this node's (empty without one).
    pub fn with_chosen_log(self, c: &NodeContext) -> Self {
        match c.options.get("log").map(parse_log) {
            Some(Ok(log)) => self.with_log(log),
            _ => self,
        }
    }

    /// An asleep node with the given timing and options, its log empty.
    pub fn with_config(c: &NodeContext, cfg: RaftConfig) -> Self {
        let peers = Peers::new(c);
        let rank = peers.iter().filter(|&&p| c.rule.beats(p, c.id)).count() as u64;
        let ports = peers.len();
        let quorum = peers.majority(c.n);
        Raft {
            id: c.id,
            rule: c.rule,
            peers,
            rank,
            quorum,
            coin: c.coin,
            cfg,
            log: LogPos::default(),
            phase: Phase::Asleep,
            stable: Stable::default(),
            draws: 0,
            election: OneTimer::default(),
            granted: vec![false; ports],
            heard: vec![false; ports],
            fresh: false,
            lag: vec![None; ports],
            rounds: 0,
            credited: None,
            leased: false,
            restored: false,
            initiator: false,
            reports: Reports::default(),
            leaving: false,
        }
    }

    /// The same node with its log ending at `log` (its term is at least the
    /// last entry's).
    pub fn with_log(mut self, log: LogPos) -> Self {
        self.log = log;
        self.stable.term = self.stable.term.max(log.term);
        self
    }

    /// What this node believes now: its term and the leader it knows in it.
    pub fn leadership(&self) -> Leadership {
        let leader = match self.phase {
            Phase::Follower(l) => l,
            Phase::Leader if !self.cfg.lease || self.leased => Some(self.id),
            _ => None,
        };
        Leadership { term: self.stable.term, leader }
    }

    /// What this node keeps on disk.
    pub fn stable(&self) -> Stable {
        self.stable
    }

    /// Rounds a credit is kept for: beyond, it could not give a lease.
    fn forget(&self) -> u64 {
        self.cfg.lease_ms() / self.cfg.heartbeat_ms.max(1) + 1
    }

    fn announce(&mut self, out: &mut Outbox) {
        let l = self.leadership();
        self.reports.announce(l, out);
        match l.leader {
            Some(leader) if leader == self.id => self.reports.decide_once(Role::Leader, leader, out),
            Some(leader) => self.reports.decide_once(Role::Follower, leader, out),
            None => {}
        }
    }

    /// The next election timeout: random in the kept mode, by rank one-shot.
    fn timeout(&mut self, retry: bool) -> u64 {
        if !self.cfg.keep {
            return (self.rank + u64::from(retry)) * self.cfg.rank_ms;
        }
        let spread = self.cfg.election_max_ms - self.cfg.election_min_ms;
        let draw = super::coin(self.coin, u32::from(self.draws));
        self.draws = (self.draws + 1) % DRAWS;
        self.cfg.election_min_ms + draw % spread.max(1)
    }

    /// (Re)start the election timer; a one-shot node woken by a message has none.
    fn arm(&mut self, retry: bool, out: &mut Outbox) {
        if self.leaving || (!self.cfg.keep && !self.initiator) {
            return;
        }
        match self.timeout(retry) {
            0 => self.time_out(out),
            after => self.election.set(ELECTION_TIMER, after, out),
        }
    }

    fn wake(&mut self, out: &mut Outbox) {
        if self.phase != Phase::Asleep {
            return;
        }
        self.phase = Phase::Follower(None);
        self.announce(out);
        if self.restored && self.cfg.lease {
            self.touch(out); // it may have heard a leader just before the crash
        }
        self.arm(false, out);
    }

    /// A contact with a leader: the guard holds for `election_min`.
    fn touch(&mut self, out: &mut Outbox) {
        if self.cfg.keep && (self.cfg.pre_vote || self.cfg.check_quorum || self.cfg.lease) {
            self.fresh = true;
            out.push(Effect::SetTimer { timer: FRESH_TIMER, after_ms: self.cfg.election_min_ms });
        }
    }

    fn time_out(&mut self, out: &mut Outbox) {
        if self.leaving {
            return;
        }
        if self.cfg.pre_vote && self.cfg.keep {
            self.pre_campaign(out);
        } else {
            self.campaign(false, out);
        }
    }

    fn request(&self, term: u64, pre_vote: bool, transfer: bool) -> Msg {
        Msg::RaftVoteRequest {
            term,
            candidate: self.id,
            last_log_term: self.log.term,
            last_log_index: self.log.index,
            pre_vote,
            transfer,
        }
    }

    /// PreVote: ask whether a candidacy for term + 1 could win.
    fn pre_campaign(&mut self, out: &mut Outbox) {
        let Some(term) = super::next_term(self.stable.term) else { return };
        self.phase = Phase::PreCandidate;
        self.granted.iter_mut().for_each(|g| *g = false);
        self.announce(out);
        self.arm(true, out);
        self.peers.broadcast(self.request(term, true, false), out);
        self.check_granted(out);
    }

    /// Run for term + 1 (`transfer`: asked to by the leader, TimeoutNow).
    fn campaign(&mut self, transfer: bool, out: &mut Outbox) {
        // At MAX_TERM the term space is used up: the node runs no more.
        let Some(term) = super::next_term(self.stable.term) else { return };
        self.stable = Stable { term, vote: Some(self.id) };
        out.push(Effect::Persist(self.stable));
        self.phase = Phase::Candidate;
        self.granted.iter_mut().for_each(|g| *g = false);
        self.announce(out);
        self.arm(true, out);
        self.peers.broadcast(self.request(term, false, transfer), out);
        self.check_granted(out);
    }

    fn check_granted(&mut self, out: &mut Outbox) {
        if 1 + self.granted.iter().filter(|&&g| g).count() < self.quorum {
            return;
        }
        match self.phase {
            Phase::PreCandidate => self.campaign(false, out),
            Phase::Candidate => self.lead(out),
            _ => {}
        }
    }

    fn lead(&mut self, out: &mut Outbox) {
        self.election.stop(out);
        self.phase = Phase::Leader;
        self.heard.iter_mut().for_each(|h| *h = false);
        self.lag.iter_mut().for_each(|l| *l = None);
        (self.rounds, self.credited, self.leased) = (0, None, false);
        self.announce(out);
        if self.cfg.keep && self.cfg.check_quorum {
            out.push(Effect::SetTimer { timer: QUORUM_TIMER, after_ms: self.cfg.election_min_ms });
        }
        self.heartbeat(out);
    }

    /// Send a round of empty `AppendEntries` (one-shot: only the first).
    fn heartbeat(&mut self, out: &mut Outbox) {
        if self.phase != Phase::Leader {
            return;
        }
        let term = self.stable.term;
        self.peers.broadcast(Msg::AppendEntries { term, leader: self.id }, out);
        if !self.cfg.keep {
            return;
        }
        out.push(Effect::SetTimer { timer: HEARTBEAT_TIMER, after_ms: self.cfg.heartbeat_ms });
        let forget = self.forget();
        self.rounds = (self.rounds + 1).min(forget + 1);
        for lag in &mut self.lag {
            *lag = lag.map(|l| l + 1).filter(|&l| l < forget);
        }
        self.credited = self.credited.map(|c| c + 1).filter(|&c| c < forget);
    }

    /// Become a follower of `leader` (or of none) in term `term`, adopting
    /// it (persisted) when it is new; a leader's timers stop.
    fn follow(&mut self, term: u64, leader: Option<u64>, out: &mut Outbox) {
        if term > self.stable.term {
            self.stable = Stable { term, vote: None };
            out.push(Effect::Persist(self.stable));
        }
        let was = self.phase;
        if was == Phase::Leader {
            out.push(Effect::CancelTimer { timer: HEARTBEAT_TIMER });
            if self.cfg.check_quorum {
                out.push(Effect::CancelTimer { timer: QUORUM_TIMER });
            }
            if self.leased {
                out.push(Effect::CancelTimer { timer: LEASE_TIMER });
            }
        }
        self.phase = Phase::Follower(leader);
        self.announce(out);
        if leader.is_some() && !self.cfg.keep {
            self.election.stop(out); // one-shot: done
        } else if leader.is_some() || was != Phase::Follower(None) || !self.election_pending() {
            self.election.stop(out);
            self.arm(false, out);
        }
    }

    fn election_pending(&self) -> bool {
        self.election != OneTimer::default()
    }

    fn up_to_date(&self, term: u64, index: u64) -> bool {
        LogPos { term, index } >= self.log
    }

    /// The guard of thesis §4.2.3: a leader was heard (or is this node) within `election_min`.
    fn guarded(&self) -> bool {
        (self.cfg.check_quorum || self.cfg.lease) && (self.fresh || self.phase == Phase::Leader)
    }

    fn on_request(&mut self, port: Port, req: Request, out: &mut Outbox) {
        self.wake(out);
        let Request { term, candidate, log, pre_vote, transfer } = req;
        if pre_vote {
            let granted = term > self.stable.term
                && self.up_to_date(log.term, log.index)
                && !self.fresh
                && self.phase != Phase::Leader;
            let term = if granted { term } else { self.stable.term };
            out.send(port, Msg::RaftVote { term, granted, pre_vote: true });
            return;
        }
        if self.guarded() && !transfer {
            out.send(port, Msg::RaftVote { term: self.stable.term, granted: false, pre_vote: false });
            return;
        }
        if term > self.stable.term {
            self.follow(term, None, out);
        }
        let granted = term == self.stable.term
            && self.stable.vote.is_none_or(|v| v == candidate)
            && self.up_to_date(log.term, log.index);
        if granted {
            if self.stable.vote.is_none() {
                self.stable.vote = Some(candidate);
                out.push(Effect::Persist(self.stable));
            }
            if self.cfg.keep && !self.leaving {
                self.election.stop(out);
                self.arm(false, out);
            }
        }
        out.send(port, Msg::RaftVote { term: if granted { term } else { self.stable.term }, granted, pre_vote: false });
    }

    fn on_vote(&mut self, port: Port, term: u64, granted: bool, pre_vote: bool, out: &mut Outbox) {
        if term > self.stable.term && !granted {
            self.follow(term, None, out);
            return;
        }
        let asked = match self.phase {
            Phase::PreCandidate => pre_vote && super::next_term(self.stable.term) == Some(term),
            Phase::Candidate => !pre_vote && term == self.stable.term,
            _ => false,
        };
        if granted && asked {
            self.granted[port as usize] = true;
            self.check_granted(out);
        }
    }

    fn on_append(&mut self, port: Port, term: u64, leader: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        self.wake(out);
        if term < self.stable.term {
            out.send(port, Msg::AppendAck { term: self.stable.term, success: false });
            return Ok(());
        }
        if term == self.stable.term && self.phase == Phase::Leader {
            let msg = Msg::AppendEntries { term, leader };
            return Err(super::kept::invalid(NAME, msg, leader, self.id, self.state()));
        }
        self.touch(out);
        self.follow(term, Some(leader), out);
        out.send(port, Msg::AppendAck { term, success: true });
        Ok(())
    }

    fn on_ack(&mut self, port: Port, term: u64, success: bool, out: &mut Outbox) {
        if term > self.stable.term {
            self.follow(term, None, out);
            return;
        }
        if self.phase != Phase::Leader || term != self.stable.term || !success {
            return;
        }
        let p = port as usize;
        self.heard[p] = true;
        if !(self.cfg.lease && self.cfg.keep) {
            return;
        }
        // One more acknowledgement: credited one round later (a node's first, to round 1).
        let forget = self.forget();
        self.lag[p] = match self.lag[p] {
            Some(l) => Some(l.saturating_sub(1)),
            None => Some(self.rounds.saturating_sub(1)).filter(|&l| l < forget),
        };
        let mut lags: Vec<u64> = self.lag.iter().flatten().copied().collect();
        lags.push(0);
        lags.sort_unstable();
        let Some(&k) = lags.get(self.quorum - 1) else { return };
        if self.credited.is_some_and(|c| c <= k) {
            return;
        }
        self.credited = Some(k);
        // Round K was sent at most (k + 1) heartbeat periods ago.
        let Some(after) = self.cfg.lease_ms().checked_sub((k + 1) * self.cfg.heartbeat_ms).filter(|&a| a > 0) else {
            return;
        };
        out.push(Effect::SetTimer { timer: LEASE_TIMER, after_ms: after });
        self.leased = true;
        self.announce(out);
    }

    fn on_timeout_now(&mut self, port: Port, term: u64, out: &mut Outbox) {
        let Some(&from) = self.peers.get(port as usize) else { return };
        if self.phase == Phase::Follower(Some(from)) && term == self.stable.term && !self.leaving {
            self.election.stop(out);
            self.campaign(true, out);
        }
    }
}

/// A vote request's fields.
struct Request {
    term: u64,
    candidate: u64,
    log: LogPos,
    pre_vote: bool,
    transfer: bool,
}

impl Raft {
    /// Forget what no step reads again before writing it: a candidacy's
    /// grants once it is over, a leader's contacts and credits once it no
    /// longer leads (docs/checking.md, "Dead values").
    fn forget_dead_values(&mut self) {
        if !matches!(self.phase, Phase::PreCandidate | Phase::Candidate) {
            self.granted.iter_mut().for_each(|g| *g = false);
        }
        if self.phase != Phase::Leader {
            self.heard.iter_mut().for_each(|h| *h = false);
            self.lag.iter_mut().for_each(|l| *l = None);
            (self.rounds, self.credited, self.leased) = (0, None, false);
        }
    }

    fn handle_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = self.peers.sender(port)?;
        super::check_term(NAME, &msg)?;
        if self.phase == Phase::Leader {
            self.heard[port as usize] = true;
        }
        match msg {
            // A log's term is a term: above MAX_TERM it is forged or corrupt.
            Msg::RaftVoteRequest { last_log_term, .. } if last_log_term > super::MAX_TERM => {
                return Err(AlgoError::Implausible {
                    algorithm: NAME,
                    field: "last_log_term",
                    value: last_log_term,
                    max: super::MAX_TERM,
                });
            }
            Msg::RaftVoteRequest { term, candidate, last_log_term, last_log_index, pre_vote, transfer }
                if candidate == from =>
            {
                let log = LogPos { term: last_log_term, index: last_log_index };
                self.on_request(port, Request { term, candidate, log, pre_vote, transfer }, out);
            }
            Msg::RaftVote { term, granted, pre_vote } => self.on_vote(port, term, granted, pre_vote, out),
            Msg::AppendEntries { term, leader } if leader == from => self.on_append(port, term, leader, out)?,
            Msg::AppendAck { term, success } => self.on_ack(port, term, success, out),
            Msg::TimeoutNow { term } => self.on_timeout_now(port, term, out),
            // No correct node sends these: a request or heartbeat naming somebody else than its sender.
            Msg::RaftVoteRequest { .. } | Msg::AppendEntries { .. } => {
                return Err(super::kept::invalid(NAME, msg, from, self.id, self.state()));
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: NAME, kind: msg.kind().name() }),
        }
        Ok(())
    }

    fn handle_timer(&mut self, timer: TimerId, out: &mut Outbox) {
        match timer {
            ELECTION_TIMER if self.election.fired(ELECTION_TIMER) => match self.phase {
                Phase::Follower(_) | Phase::PreCandidate | Phase::Candidate => self.time_out(out),
                Phase::Asleep | Phase::Leader => {}
            },
            HEARTBEAT_TIMER => self.heartbeat(out),
            QUORUM_TIMER if self.phase == Phase::Leader => {
                let heard = 1 + self.heard.iter().filter(|&&h| h).count();
                self.heard.iter_mut().for_each(|h| *h = false);
                if heard >= self.quorum {
                    out.push(Effect::SetTimer { timer: QUORUM_TIMER, after_ms: self.cfg.election_min_ms });
                } else {
                    self.follow(self.stable.term, None, out);
                }
            }
            FRESH_TIMER => self.fresh = false,
            LEASE_TIMER if self.phase == Phase::Leader && self.leased => {
                self.leased = false;
                self.credited = None;
                self.announce(out);
            }
            _ => {}
        }
    }
}

impl Algorithm for Raft {
    fn on_start(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Asleep {
            self.initiator = true;
        }
        self.wake(out);
        self.forget_dead_values();
    }

    fn on_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let handled = self.handle_message(port, msg, out);
        self.forget_dead_values();
        handled
    }

    fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
        self.handle_timer(timer, out);
        self.forget_dead_values();
    }

    /// Leadership transfer (thesis §3.10): the leader stops believing it
    /// leads (its lease, if any, ends now) and sends `TimeoutNow` to the best
    /// node it heard from since its last CheckQuorum count or heartbeat
    /// round (any node if it heard none); that node runs at once. The leaver
    /// never runs again, but still votes; its belief names the successor once
    /// the successor's first `AppendEntries` reaches it.
    fn on_leave(&mut self, suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) {
            return false;
        }
        self.election.stop(out);
        if self.phase != Phase::Leader {
            return false;
        }
        let term = self.stable.term;
        let alive = |p: Port| !suspected.get(p as usize).copied().unwrap_or(false);
        let best = self
            .peers
            .best_where(self.rule, |p| alive(p) && self.heard[p as usize])
            .or_else(|| self.peers.best_where(self.rule, alive));
        self.follow(term, None, out);
        self.forget_dead_values();
        let Some(successor) = best else { return false };
        let port = self.peers.iter().position(|&p| p == successor).unwrap_or_default() as Port;
        out.send(port, Msg::TimeoutNow { term });
        true
    }

    fn restore(&mut self, stable: Stable) {
        self.stable = stable;
        self.restored = true;
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        match timer {
            ELECTION_TIMER => Some("election"),
            HEARTBEAT_TIMER => Some("heartbeat round"),
            QUORUM_TIMER => Some("quorum check"),
            FRESH_TIMER => Some("leader contact"),
            LEASE_TIMER => Some("lease"),
            _ => None,
        }
    }

    fn state(&self) -> &'static str {
        match self.phase {
            Phase::Asleep => "asleep",
            Phase::Follower(Some(_)) => "follower",
            Phase::Follower(None) => "no-leader",
            Phase::PreCandidate => "pre-candidate",
            Phase::Candidate => "candidate",
            Phase::Leader if self.leadership().leader.is_some() => "leader",
            Phase::Leader => "leader-unleased",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::kept::testing::{self, PEERS_OF_3, lead, send, started};
    use crate::algo::{MAX_TERM, MsgKind, catalogue};
    use crate::faults::{Fault, FaultPlan, Scheduled};
    use crate::invariants;
    use crate::sim::{self, SimConfig, SimReport};
    use crate::topology::Topology;

    const IDS: [u64; 5] = [3, 7, 1, 8, 2];

    /// Node `id` whose ports lead to `peers`, in port order.
    fn node(id: u64, peers: &[u64], cfg: RaftConfig) -> Raft {
        testing::node(id, peers, |c| Raft::with_config(c, cfg))
    }

    fn request(term: u64, candidate: u64, log: (u64, u64)) -> Msg {
        Msg::RaftVoteRequest {
            term,
            candidate,
            last_log_term: log.0,
            last_log_index: log.1,
            pre_vote: false,
            transfer: false,
        }
    }

    /// Did `a` grant what it was asked on `port` (`None`: no answer)?
    fn granted(a: &mut Raft, port: Port, msg: Msg) -> Option<bool> {
        let mut out = Outbox::default();
        a.on_message(port, msg, &mut out).unwrap();
        out.effects().iter().find_map(|e| match e {
            Effect::Send { msg: Msg::RaftVote { granted, .. }, .. } => Some(*granted),
            _ => None,
        })
    }

    /// A kept run of `ids` (max rule) with `cfg`, each node's log from `log`.
    fn kept(cfg: RaftConfig, seed: u64, log: fn(u64) -> LogPos, faults: Vec<(u64, Fault)>, horizon: u64) -> SimReport {
        let n = IDS.len() as u32;
        let faults = faults.into_iter().map(|(at, fault)| Scheduled::new(at, at, fault)).collect();
        let sim_cfg = SimConfig {
            seed,
            max_delay: 16,
            faults: FaultPlan { faults },
            horizon: Some(horizon),
            ..SimConfig::default()
        };
        let all: Vec<u32> = (0..n).collect();
        let spec = catalogue::find(NAME).unwrap();
        let topo = Topology::complete(n).unwrap();
        let r = sim::run_with(spec, &topo, &IDS, &all, Rule::Max, &sim_cfg, |c| {
            Raft::with_config(c, cfg).with_log(log(c.id))
        });
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let timeline: Vec<_> = r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
        invariants::one_leader_per_term(&IDS, &timeline).unwrap();
        r
    }

    fn equal(_: u64) -> LogPos {
        LogPos::default()
    }

    /// The belief of position `p` at time `t` (its latest `Lead` at or before `t`).
    fn belief(r: &SimReport, p: u32, t: u64) -> Option<Leadership> {
        r.leaderships.iter().rev().find(|e| e.position == p && e.time <= t).map(|e| e.leadership)
    }

    /// The positions that believe they lead at `t`.
    fn leaders_at(r: &SimReport, t: u64) -> Vec<u32> {
        (0..IDS.len() as u32).filter(|&p| belief(r, p, t).is_some_and(|l| l.leader == Some(IDS[p as usize]))).collect()
    }

    /// The one leader every position believes in at `t`, if they agree on one.
    fn agreed(r: &SimReport, t: u64, except: Option<u32>) -> Option<Leadership> {
        let beliefs: Vec<_> = (0..IDS.len() as u32).filter(|&p| Some(p) != except).map(|p| belief(r, p, t)).collect();
        let first = beliefs[0]?;
        (first.leader.is_some() && beliefs.iter().all(|&b| b == Some(first))).then_some(first)
    }

    fn position(id: u64) -> u32 {
        IDS.iter().position(|&i| i == id).unwrap() as u32
    }

    /// The timing derived from the loopback detector is the loopback preset; the presets, every
    /// option combination and every derived timing validate; timeouts that cannot differ, a
    /// heartbeat that does not fit twice in the election timeout and a lease without margin are refused.
    #[test]
    fn timing_follows_the_detector_and_validates() {
        assert_eq!(RaftConfig::for_detector(DetectorConfig::LOOPBACK), RaftConfig::LOOPBACK);
        for timeout_ms in [1, 2, 7, 80, 200, 1_000, crate::algo::detector::MAX_TIMEOUT_MS] {
            for period_ms in [1, 50, timeout_ms] {
                let c = RaftConfig::for_detector(DetectorConfig { period_ms, timeout_ms });
                assert_eq!(c.validate(), Ok(()), "timeout {timeout_ms} period {period_ms}");
            }
        }
        for base in [RaftConfig::LOOPBACK, RaftConfig::ETCD] {
            for bits in 0..8 {
                let c = base.with_options(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
                assert_eq!(c.validate(), Ok(()), "{c:?}");
            }
        }
        assert_eq!(RaftConfig::ONE_SHOT.validate(), Ok(()));
        let l = RaftConfig::LOOPBACK;
        for bad in [
            RaftConfig { election_max_ms: 200, ..l },
            RaftConfig { heartbeat_ms: 101, ..l },
            RaftConfig { margin_ms: 5, lease: true, ..l },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    /// A kept node starts as a follower of nobody with a random election timeout in
    /// [200, 400) ms drawn from its coin; when it fires it persists its vote for itself in
    /// term 1 before asking every node, with its log's end; a majority's grants (3 of 5) make it
    /// lead: it sends a round of empty AppendEntries at once and sets its heartbeat timer.
    #[test]
    fn a_timeout_runs_and_a_majority_elects() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3, RaftConfig::LOOPBACK));
        let after = match out.effects() {
            [first, Effect::SetTimer { timer: ELECTION_TIMER, after_ms }] if *first == lead(0, None) => *after_ms,
            other => panic!("{other:?}"),
        };
        assert!((200..400).contains(&after), "{after}");
        out.clear();
        a.on_timer(ELECTION_TIMER, &mut out);
        let e = out.effects();
        assert_eq!(e[0], Effect::Persist(Stable { term: 1, vote: Some(3) }));
        assert_eq!(e[1], lead(1, None));
        assert!(matches!(e[2], Effect::SetTimer { timer: ELECTION_TIMER, .. }));
        assert_eq!(e[3..], (0..4).map(|p| send(p, request(1, 3, (0, 0)))).collect::<Vec<_>>()[..]);
        out.clear();
        a.on_message(1, Msg::RaftVote { term: 1, granted: true, pre_vote: false }, &mut out).unwrap();
        assert!(out.effects().is_empty(), "2 of 5");
        a.on_message(3, Msg::RaftVote { term: 1, granted: true, pre_vote: false }, &mut out).unwrap();
        let mut expected = vec![Effect::CancelTimer { timer: ELECTION_TIMER }, lead(1, Some(3))];
        expected.push(Effect::Decide(crate::algo::Decision { role: Role::Leader, leader: 3 }));
        expected.extend((0..4).map(|p| send(p, Msg::AppendEntries { term: 1, leader: 3 })));
        expected.push(Effect::SetTimer { timer: HEARTBEAT_TIMER, after_ms: 50 });
        assert_eq!(out.effects(), &expected[..]);
    }

    /// The election restriction (§5.4.1): a node whose log ends at (term 2, index 5) refuses a
    /// candidate whose last entry has an older term (whatever its index) or the same term and a
    /// smaller index, and grants one with the same end or a later one; one vote per term, also
    /// across a crash (the record is persisted before the grant leaves and restored).
    #[test]
    fn votes_go_only_to_up_to_date_logs_once_per_term() {
        let mut a = node(3, &PEERS_OF_3, RaftConfig::LOOPBACK).with_log(LogPos { term: 2, index: 5 });
        assert_eq!(granted(&mut a, 0, request(3, 5, (1, 9))), Some(false), "older last term");
        assert_eq!(granted(&mut a, 1, request(3, 1, (2, 4))), Some(false), "same term, shorter");
        let mut out = Outbox::default();
        a.on_message(2, request(3, 4, (2, 5)), &mut out).unwrap();
        let persist = out.effects().iter().position(|e| *e == Effect::Persist(Stable { term: 3, vote: Some(4) }));
        let vote =
            out.effects().iter().position(|e| *e == send(2, Msg::RaftVote { term: 3, granted: true, pre_vote: false }));
        assert!(persist.unwrap() < vote.unwrap(), "{:?}", out.effects());
        assert_eq!(granted(&mut a, 0, request(3, 5, (3, 1))), Some(false), "voted for 4 in term 3");
        let mut b = node(3, &PEERS_OF_3, RaftConfig::LOOPBACK).with_log(LogPos { term: 2, index: 5 });
        b.restore(a.stable());
        assert_eq!(granted(&mut b, 0, request(3, 5, (3, 1))), Some(false), "the restored record: voted for 4");
        assert_eq!(granted(&mut b, 0, request(4, 5, (3, 1))), Some(true), "a later term, a later log");
    }

    /// One-shot, in the simulator: exactly 4(n − 1) messages (a request, a vote, an AppendEntries
    /// and an AppendAck per other node) with every node initiating and with a lone initiator; the
    /// best initiator leads term 1, everyone agrees, the run goes quiet, under both rules.
    #[test]
    fn one_shot_costs_exactly_4_n_minus_1() {
        let spec = catalogue::find(NAME).unwrap();
        for n in [2u32, 3, 8, 20] {
            let (topo, ids, all) = testing::complete(n);
            let m = u64::from(n) - 1;
            for rule in [Rule::Max, Rule::Min] {
                for initiators in [all.clone(), vec![n / 2]] {
                    let r = sim::run(spec, &topo, &ids, &initiators, rule, &SimConfig::default());
                    assert!(r.verdict.violations.is_empty() && r.terminated, "{:?}", r.verdict.violations);
                    assert_eq!(r.counters.messages, 4 * m, "n = {n}");
                    for k in [MsgKind::RaftVoteRequest, MsgKind::RaftVote, MsgKind::AppendEntries, MsgKind::AppendAck] {
                        assert_eq!(r.counters.by_kind[k as usize], m, "n = {n} {k:?}");
                    }
                }
            }
        }
    }

    /// Logs differ: 7, 1 and 2 end at (term 2, index 5), 3 and 8 at (term 1, index 9), older
    /// though longer. Over 30 seeds (so 30 draws of the random timeouts), the leader is always
    /// one of the three up-to-date nodes, a majority, never the best id 8 (with equal logs,
    /// 8 or 3 lead some of the same seeds).
    #[test]
    fn the_most_up_to_date_log_wins() {
        fn differ(id: u64) -> LogPos {
            if id == 3 || id == 8 { LogPos { term: 1, index: 9 } } else { LogPos { term: 2, index: 5 } }
        }
        let mut stale_led_when_equal = 0;
        for seed in 0..30 {
            let r = kept(RaftConfig::LOOPBACK, seed, differ, vec![], 2_000);
            let l = agreed(&r, 2_000, None).unwrap_or_else(|| panic!("seed {seed}: {:?}", r.leaderships));
            assert!([7, 1, 2].contains(&l.leader.unwrap()), "seed {seed}: {l:?}");
            let eq = kept(RaftConfig::LOOPBACK, seed, equal, vec![], 2_000);
            stale_led_when_equal +=
                usize::from(agreed(&eq, 2_000, None).is_some_and(|l| [3, 8].contains(&l.leader.unwrap())));
        }
        eprintln!("equal logs: 3 or 8 led {stale_led_when_equal} of 30 seeds; differing logs: none");
        assert!(stale_led_when_equal > 0, "equal logs: 3 or 8 lead some seeds");
    }

    /// The election's options reach the catalogue's kept build: with `log` putting 7, 1 and 2
    /// at (2, 5) and 3 and 8 at (1, 9), as a request would give them, the leader is always one
    /// of the up-to-date three; `lease` makes the leader's belief end with its lease (a crashed
    /// leader's successor is not believed while the old lease could run).
    #[test]
    fn options_reach_the_kept_build() {
        let spec = catalogue::find(NAME).unwrap();
        let topo = Topology::complete(IDS.len() as u32).unwrap();
        let all: Vec<u32> = (0..IDS.len() as u32).collect();
        let log = "1:9, 2:5, 2:5, 1:9, 2:5".to_string();
        for seed in 0..10 {
            let cfg = SimConfig {
                seed,
                horizon: Some(2_000),
                options: vec![("log".into(), log.clone()), ("pre_vote".into(), "true".into())],
                ..SimConfig::default()
            };
            crate::spec::check_options(spec, &cfg.options, 5, true).unwrap();
            let r = sim::run_kept(spec, &topo, &IDS, &all, Rule::Max, &cfg).unwrap();
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            let l = agreed(&r, 2_000, None).unwrap_or_else(|| panic!("seed {seed}: {:?}", r.leaderships));
            assert!([7, 1, 2].contains(&l.leader.unwrap()), "seed {seed}: {l:?}");
            // PreVote costs a round of pre-votes before the first term.
            assert!(r.counters.by_kind[MsgKind::RaftVoteRequest as usize] >= 8, "seed {seed}: pre-votes and votes");
        }
    }

    /// A bad option is refused naming its field: an unknown name, a kept-only option in a
    /// one-shot election, a log that is not TERM:INDEX, and a per-node list of the wrong length.
    #[test]
    fn bad_options_are_refused_naming_the_field() {
        let spec = catalogue::find(NAME).unwrap();
        let check = |k: &str, v: &str, kept| crate::spec::check_options(spec, &[(k.into(), v.into())], 5, kept);
        assert_eq!(check("prevote", "true", true).unwrap_err().0, "options.prevote");
        assert!(check("prevote", "true", true).unwrap_err().1.contains("known: pre_vote, check_quorum, lease, log"));
        assert!(check("pre_vote", "true", false).unwrap_err().1.contains("keep_leader"));
        assert!(check("pre_vote", "yes", true).unwrap_err().1.contains("true or false"));
        assert!(check("log", "2-5", true).unwrap_err().1.contains("TERM:INDEX"));
        assert!(check("log", "1:1,2:2", true).unwrap_err().1.contains("not 2"));
        assert!(check("log", "1:1,2:2,1:1,1:x,1:1", true).unwrap_err().1.starts_with("position 3:"));
        assert!(check("log", "2:5", true).is_ok() && check("lease", "false", true).is_ok());
        let cut = crate::spec::node_options(spec, &[("log".into(), "1:9, 2:5".into())], 1);
        assert_eq!(cut, [("log".to_string(), "2:5".to_string())]);
    }

    /// A log's term is a term: one that leaves no term to run for (MAX_TERM = 2^53 − 1, 2^53,
    /// u64::MAX) is refused naming `options.log` and the position, where before the nodes took it
    /// and never elected anybody; the term below it is taken, and elects a leader in MAX_TERM. A
    /// forged vote request whose log term is above MAX_TERM is refused as implausible.
    #[test]
    fn log_terms_are_bounded() {
        let spec = catalogue::find(NAME).unwrap();
        let check = |v: &str| crate::spec::check_options(spec, &[("log".into(), v.into())], 3, true);
        for term in [MAX_TERM, MAX_TERM + 1, u64::MAX] {
            let (field, why) = check(&format!("{term}:0")).unwrap_err();
            assert_eq!(field, "options.log");
            assert!(why.contains(&term.to_string()) && why.contains("at most 9007199254740990"), "{why}");
            let (_, why) = check(&format!("1:1,{term}:4,0:0")).unwrap_err();
            assert!(why.starts_with("position 1:"), "{why}");
        }
        let top = format!("{}:7", MAX_TERM - 1);
        check(&top).unwrap();
        let cfg = SimConfig { horizon: Some(2_000), options: vec![("log".into(), top)], ..SimConfig::default() };
        let r = sim::run_kept(spec, &Topology::complete(3).unwrap(), &[1, 2, 3], &[0, 1, 2], Rule::Max, &cfg).unwrap();
        let led = r.leaderships.iter().find(|e| e.leadership.leader.is_some()).map(|e| e.leadership);
        assert_eq!(led.map(|l| l.term), Some(MAX_TERM), "{:?}", r.leaderships);

        let mut a = node(3, &PEERS_OF_3, RaftConfig::LOOPBACK);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        let forged = Msg::RaftVoteRequest {
            term: 1,
            candidate: 1,
            last_log_term: MAX_TERM + 1,
            last_log_index: 0,
            pre_vote: false,
            transfer: false,
        };
        let refused = a.on_message(0, forged, &mut out);
        assert!(matches!(refused, Err(AlgoError::Implausible { field: "last_log_term", .. })), "{refused:?}");
    }

    /// The leader crashes at 2 s: a live node leads a higher term within the convergence bound,
    /// every live node follows it; recovered at 4 s, the old leader follows it too.
    #[test]
    fn a_crashed_leader_is_replaced_in_a_higher_term() {
        let before = kept(RaftConfig::LOOPBACK, 1, equal, vec![], 2_000);
        let old = agreed(&before, 2_000, None).unwrap();
        let p = position(old.leader.unwrap());
        let r = kept(
            RaftConfig::LOOPBACK,
            1,
            equal,
            vec![(2_000, Fault::Crash { node: p }), (4_000, Fault::Recover { node: p })],
            6_000,
        );
        let new = r
            .leaderships
            .iter()
            .find(|e| e.time > 2_000 && e.leadership.leader.is_some_and(|l| l != old.leader.unwrap()))
            .unwrap();
        eprintln!("crash of {old:?} at 2000 ms: {:?} from {} ms", new.leadership, new.time);
        assert!(new.leadership.term > old.term);
        assert!(new.time <= 2_000 + convergence_bound_ms(RaftConfig::LOOPBACK, 16), "{}", new.time);
        assert_eq!(agreed(&r, 3_900, Some(p)), Some(new.leadership));
        assert!(agreed(&r, 6_000, None).is_some_and(|l| l.term >= new.leadership.term), "{:?}", r.leaderships);
    }

    /// A follower cut off alone from 2 s to 5 s: without PreVote its candidacies raise its term,
    /// and when the partition heals the leader steps down for a higher term; with PreVote
    /// (thesis §9.6) its pre-votes fail, its term stays, and the leader keeps its term throughout.
    #[test]
    fn pre_vote_keeps_a_healed_node_from_raising_the_term() {
        let before = kept(RaftConfig::LOOPBACK, 2, equal, vec![], 2_000);
        let old = agreed(&before, 2_000, None).unwrap();
        let lone = (position(old.leader.unwrap()) + 1) % 5;
        let others: Vec<u32> = (0..5).filter(|&p| p != lone).collect();
        let faults = vec![
            (2_000, Fault::Partition { groups: vec![vec![lone], others] }),
            (5_000, Fault::Partition { groups: vec![(0..5).collect()] }),
        ];
        let plain = kept(RaftConfig::LOOPBACK, 2, equal, faults.clone(), 7_000);
        let last = agreed(&plain, 7_000, None).unwrap();
        assert!(last.term > old.term + 2, "without PreVote the term rose: {old:?} -> {last:?}");
        let pv = kept(RaftConfig::LOOPBACK.with_options(true, false, false), 2, equal, faults, 7_000);
        let old_pv = agreed(&pv, 1_999, None).unwrap();
        for t in (2_000..=7_000).step_by(100) {
            assert_eq!(agreed(&pv, t, Some(lone)), Some(old_pv), "at {t}");
        }
        assert_eq!(agreed(&pv, 7_000, None), Some(old_pv), "the healed node follows the same leader and term");
        eprintln!("lone node healed: without PreVote {old:?} -> {last:?}; with PreVote {old_pv:?} kept");
    }

    /// The leader cut off alone at 2 s: with CheckQuorum (thesis §6.2) it steps down (announces no
    /// leader) within two election_min counts, while the majority elects a new leader of a higher
    /// term; without it, the old leader still believes it leads at 4.9 s.
    #[test]
    fn check_quorum_makes_a_cut_off_leader_step_down() {
        for check in [false, true] {
            let cfg = RaftConfig::LOOPBACK.with_options(false, check, false);
            let before = kept(cfg, 3, equal, vec![], 2_000);
            let old = agreed(&before, 2_000, None).unwrap();
            let p = position(old.leader.unwrap());
            let rest: Vec<u32> = (0..5).filter(|&q| q != p).collect();
            let r = kept(cfg, 3, equal, vec![(2_000, Fault::Partition { groups: vec![vec![p], rest] })], 5_000);
            let new = agreed(&r, 4_900, Some(p)).unwrap();
            assert!(new.term > old.term && new.leader != old.leader);
            let old_belief = belief(&r, p, 4_900).unwrap();
            if check {
                assert_eq!(old_belief.leader, None, "alone, it runs in vain");
                let down = r.leaderships.iter().find(|e| e.position == p && e.time >= 2_000).unwrap();
                assert_eq!(down.leadership, Leadership { term: old.term, leader: None });
                let down = down.time;
                assert!(down <= 2_000 + 2 * cfg.election_min_ms, "stepped down at {down}");
                eprintln!("CheckQuorum: the cut-off leader stepped down at {down} ms");
            } else {
                assert_eq!(old_belief, old, "without CheckQuorum it still believes it leads");
            }
        }
    }

    /// With the lease (thesis §6.4.1), a leader believes it leads only while its lease runs: a
    /// leader credited by nobody stops believing when the lease timer fires (its state says so)
    /// and believes again when a majority acknowledges a round (the lease counted from the
    /// latest round a majority credited, at most (lag + 1) heartbeat periods ago). In the simulator, with the
    /// leader cut off alone at 2 s, it stops believing before the majority's new leader starts:
    /// never two nodes believe they lead at one instant.
    #[test]
    fn with_the_lease_a_leader_believes_it_leads_only_until_the_lease_ends() {
        let cfg = RaftConfig::LOOPBACK.with_options(false, false, true);
        let mut a = node(3, &PEERS_OF_3, cfg);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        a.on_timer(ELECTION_TIMER, &mut out);
        for port in [1, 3] {
            a.on_message(port, Msg::RaftVote { term: 1, granted: true, pre_vote: false }, &mut out).unwrap();
        }
        assert_eq!((a.state(), a.leadership().leader), ("leader-unleased", None), "no round acknowledged yet");
        out.clear();
        a.on_message(1, Msg::AppendAck { term: 1, success: true }, &mut out).unwrap();
        a.on_message(3, Msg::AppendAck { term: 1, success: true }, &mut out).unwrap();
        let decide = Effect::Decide(crate::algo::Decision { role: Role::Leader, leader: 3 });
        assert_eq!(out.effects(), &[Effect::SetTimer { timer: LEASE_TIMER, after_ms: 130 }, lead(1, Some(3)), decide]);
        out.clear();
        a.on_timer(LEASE_TIMER, &mut out);
        assert_eq!(out.effects(), &[lead(1, None)]);
        a.on_timer(HEARTBEAT_TIMER, &mut out);
        out.clear();
        a.on_message(1, Msg::AppendAck { term: 1, success: true }, &mut out).unwrap();
        a.on_message(3, Msg::AppendAck { term: 1, success: true }, &mut out).unwrap();
        // 1's second acknowledgement and 3's first credit round 1 (sent at most two periods
        // ago: 180 - 100 ms), 3's second one round 2 (180 - 50 ms).
        let again = [Effect::SetTimer { timer: LEASE_TIMER, after_ms: 80 }, lead(1, Some(3))];
        assert_eq!(out.effects()[..2], again);
        assert_eq!(out.effects()[2..], [Effect::SetTimer { timer: LEASE_TIMER, after_ms: 130 }]);

        let before = kept(cfg, 4, equal, vec![], 2_000);
        let old = agreed(&before, 2_000, None).unwrap();
        let p = position(old.leader.unwrap());
        let rest: Vec<u32> = (0..5).filter(|&q| q != p).collect();
        let r = kept(cfg, 4, equal, vec![(2_000, Fault::Partition { groups: vec![vec![p], rest] })], 5_000);
        let down = r.leaderships.iter().find(|e| e.position == p && e.time >= 2_000).unwrap().time;
        let up = r
            .leaderships
            .iter()
            .find(|e| {
                e.time >= 2_000
                    && e.leadership.leader.is_some_and(|l| l != old.leader.unwrap() && l == IDS[e.position as usize])
            })
            .unwrap()
            .time;
        eprintln!("lease: the cut-off leader stopped believing at {down} ms, the next leader began at {up} ms");
        assert!(down <= 2_000 + cfg.lease_ms() && down < up, "{down} {up}");
        for t in 0..5_000 {
            assert!(leaders_at(&r, t).len() <= 1, "two leaders at {t}");
        }
    }

    /// Leadership transfer (thesis §3.10): a leaving leader stops believing it leads and sends
    /// TimeoutNow to the best node it heard from; that node runs at once with `transfer` set
    /// (even with PreVote), and a node that heard the leader lately grants it (the guard of
    /// §4.2.3 lets a transfer through), while it refuses an ordinary candidate.
    #[test]
    fn a_leaving_leader_hands_over_with_timeout_now() {
        let cfg = RaftConfig::LOOPBACK.with_options(true, true, false);
        let mut a = node(3, &PEERS_OF_3, cfg);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        a.on_timer(ELECTION_TIMER, &mut out);
        for port in [1, 3] {
            a.on_message(port, Msg::RaftVote { term: 1, granted: true, pre_vote: true }, &mut out).unwrap();
        }
        for port in [1, 3] {
            a.on_message(port, Msg::RaftVote { term: 1, granted: true, pre_vote: false }, &mut out).unwrap();
        }
        assert_eq!(a.state(), "leader");
        a.on_message(3, Msg::AppendAck { term: 1, success: true }, &mut out).unwrap();
        a.on_message(1, Msg::AppendAck { term: 1, success: true }, &mut out).unwrap();
        out.clear();
        assert!(a.on_leave(&[], &mut out));
        assert!(out.effects().contains(&lead(1, None)));
        assert_eq!(out.effects().last(), Some(&send(3, Msg::TimeoutNow { term: 1 })), "2 is the best it heard");

        let mut b = node(2, &[3, 1, 4, 5], cfg);
        b.on_start(&mut out);
        b.on_message(0, Msg::AppendEntries { term: 1, leader: 3 }, &mut out).unwrap();
        out.clear();
        b.on_message(0, Msg::TimeoutNow { term: 1 }, &mut out).unwrap();
        let transfer = Msg::RaftVoteRequest {
            term: 2,
            candidate: 2,
            last_log_term: 0,
            last_log_index: 0,
            pre_vote: false,
            transfer: true,
        };
        assert!(out.effects().contains(&send(1, transfer)), "{:?}", out.effects());
        let mut c = node(4, &[3, 1, 2, 5], cfg);
        c.on_start(&mut out);
        c.on_message(0, Msg::AppendEntries { term: 1, leader: 3 }, &mut out).unwrap();
        assert_eq!(granted(&mut c, 2, request(2, 2, (0, 0))), Some(false), "heard the leader lately");
        assert_eq!(granted(&mut c, 2, transfer), Some(true), "a transfer goes through");
    }

    /// Messages that cannot happen are errors: a request or heartbeat naming somebody else than
    /// its sender, a heartbeat of the term this node leads, a foreign kind, a missing port; a term
    /// above MAX_TERM is refused as implausible.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = node(3, &PEERS_OF_3, RaftConfig::LOOPBACK);
        let mut out = Outbox::default();
        for msg in [request(1, 4, (0, 0)), Msg::AppendEntries { term: 1, leader: 4 }] {
            assert!(matches!(a.on_message(0, msg, &mut out), Err(AlgoError::Invalid(_))), "{msg:?}");
        }
        assert!(matches!(a.on_message(0, Msg::Wakeup, &mut out), Err(AlgoError::UnexpectedKind { .. })));
        let refused = a.on_message(0, Msg::AppendAck { term: MAX_TERM + 1, success: true }, &mut out);
        assert!(matches!(refused, Err(AlgoError::Implausible { field: "term", .. })), "{refused:?}");
        assert!(matches!(a.on_message(9, Msg::TimeoutNow { term: 0 }, &mut out), Err(AlgoError::BadPort { port: 9 })));
    }
}
