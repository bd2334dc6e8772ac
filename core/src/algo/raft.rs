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
//!   given timer rates within the drift margin (duplicated, lost, late and
//!   reordered messages and paused nodes included).
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
//!   node. As etcd's `randomizedElectionTimeout`, the timeout is drawn when
//!   the node's term or role changes (a new term, a candidacy, a new leader
//!   followed) and kept while heartbeats restart it. The randomness comes
//!   from the driver ([`NodeContext::coin`], one per node and election): the
//!   i-th draw of a node is [`super::coin`]`(coin, i mod 64)`, so the
//!   simulator and the live runtime draw alike for the same seed, and a
//!   node's state stays finite for the model checker (keying the draw by
//!   the term instead made PreVote's check 75 times larger).
//! * **Votes** (§5.2, §5.4.1). A node grants `RequestVote { term, candidate,
//!   last_log_term, last_log_index }` iff `term` is its term (after adopting
//!   a higher one), it has voted for nobody else in it, and the candidate's
//!   log is at least as up-to-date as its own: a later last term, or the same
//!   last term and an index at least as large. A grant restarts its election
//!   timer. A candidate with a majority's grants (its own included) leads.
//! * **Heartbeats.** The leader sends `AppendEntries { term, leader, round
//!   }`, with no entries, at once and every `heartbeat_ms`, numbering its
//!   rounds 1, 2, ... in each term; a node of a term not above follows the
//!   sender, restarts its election timer and answers `AppendAck { term,
//!   success: true, round }` with where its log ends; a node of a higher
//!   term answers `success: false` with its term, and the old leader steps
//!   down.
//! * **PreVote** (thesis §9.6, option `pre_vote`). Before running, a node asks
//!   `RequestVote { pre_vote: true }` for term + 1 without changing its term
//!   or vote; a node grants a pre-vote iff it would grant the vote and has not
//!   heard from a leader within `election_min`. Only a majority of pre-votes
//!   makes it a candidate. A node cut off alone therefore never raises its
//!   term, and does not depose a working leader when it comes back.
//! * **CheckQuorum** (thesis §6.2, option `check_quorum`). Every
//!   `election_min`, the leader counts the nodes that answered its
//!   `AppendEntries` since the last count (as etcd counts `MsgAppResp` and
//!   `MsgHeartbeatResp`, not any message); without a majority (itself
//!   included) it steps down.
//! * **Leases** (thesis §6.4.1, option `lease`). As the leader sends round
//!   r (at s_r), it starts a timer of D = `election_min` − `margin` for the
//!   round, before the round leaves. Once a majority (itself included) has
//!   acknowledged round r by name, the leader believes it leads until that
//!   timer fires, s_r + D by its clock; a later round a majority
//!   acknowledges takes over (the older rounds' timers stop). It announces
//!   itself as leader only while such a lease runs. An acknowledgement
//!   counts once per node and round (a duplicate adds nothing) and only
//!   while the round's timer runs: a round whose D has passed, or one
//!   forgotten, credits nothing, and a lost round is simply never credited,
//!   so the next round a majority acknowledges renews the lease. The leader
//!   tracks [`LEASE_SLOTS`] rounds at once (one timer each): the one the
//!   lease rests on and the newest others, forgetting the oldest for a new
//!   round.
//! * **Disruptive servers** (thesis §4.2.3). With CheckQuorum or the lease, a
//!   node that heard from a leader within `election_min` (or leads) refuses
//!   a vote without adopting the request's term, unless the request comes
//!   from a leadership transfer (`transfer`). With the lease, a recovered
//!   incarnation treats its restart as such a contact.
//! * **Leadership transfer** (thesis §3.10): a leader about to stop
//!   ([`Input::Leave`]) stops believing it leads, and sends
//!   `TimeoutNow { term }` to the best node that answered its
//!   `AppendEntries` in this term with a log at least as up-to-date as its
//!   own; that node runs at once, with `transfer` set, and without PreVote,
//!   and wins: the leader's log is at least as up-to-date as a majority's.
//!   With no such node it hands nothing over and says so (etcd aborts a
//!   transfer to a target it cannot catch up after an election timeout;
//!   this election moves no log entries, so none catches up).
//!
//! Every change of belief is announced with [`Effect::Lead`] (the term, and
//! the leader known in it); the first leader learned also with
//! [`Effect::Decide`].
//!
//! ## Safety: one leader per term
//!
//! A leader of term t got grants of t from a majority (§5.2). A node grants
//! at most one candidate per term: its vote and term are on disk before the
//! grant leaves, and a recovered node gets them back ([`Input::Restore`]),
//! so it never votes twice in one term even across a crash. Two majorities
//! of the same n nodes intersect, so two candidates of one term cannot both
//! have a majority. Pre-votes change no term and no vote, so PreVote cannot
//! break this; CheckQuorum and the lease only make a leader stop believing
//! it leads. The up-to-date check (§5.4.1) restricts whom a node grants, so
//! it only removes grants. Hence no two nodes lead one term, whatever the
//! options.
//!
//! *With the lease, no two leaders at once.* Say y believes it leads term
//! t_y on the lease of its round K, sent at s_K, so until s_K + D (its
//! round's timer, started before the round left; a pause of y only makes
//! it fire later in real time, and a driver runs the timers that came due
//! during a pause before any input that waited, so y stops believing before
//! it takes a late acknowledgement). Every node x of a majority Q
//! acknowledged round K by name, so it accepted round K at some τ_x ≥ s_K
//! (a duplicate or late copy of the acknowledgement changes nothing: K's
//! credit is per node), its term was at most t_y then, and until τ_x +
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
//! `election_min`(1 − ρ), i.e. ρ < `margin` / (2·`election_min` − `margin`),
//! less timer latency. The presets' margin of 10% of `election_min`
//! therefore tolerates clock rates within ±5.2% of real time, and the least
//! margin [`RaftConfig::validate`] accepts, 5%, ±2.5%. That is the
//! guarantee; the measured tolerance is wider because a successor also
//! waits for a follower's election timeout and a round of votes: with the
//! cut-off leader's clock slow, the first overlap in 20 seeds comes at 29%
//! slow at loopback timing and at 16% at etcd's (core/tests/raft_lease.rs).
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
use crate::spec::{
    AlgoOption, AlgorithmSpec, Assumptions, Candidates, Extras, KeptSpec, Lease, OptionError, Provision, flag,
    per_second,
};
use super::{
    AlgoError, Algorithm, Effect, Input, Leadership, Msg, NodeContext, Options, Outbox, Port, Reports, Role, Rule,
    Stable, TimerId,
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
    candidates: Candidates::Initiators,
    bound_formula: "4(n-1)",
    bound: &|n, _| 4 * n.saturating_sub(1),
    timer_events: |_| 0,
    heap_bytes_per_position: 70_658,
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
        liveness_needs: Some(
            "split votes can repeat for ever when election timers fire together; Raft relies on \
             randomised timeouts to end them (thesis §3.4), and the checker tries every order of the timers",
        ),
    }),
    live_provision: Provision::Nodes,
    machine: machine!(Raft::new),
    extras: Extras {
        exact: Some(|n, _| 4 * n.saturating_sub(1)),
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
        ..Extras::NONE
    },
};

/// A log end written `TERM:INDEX` (the `log` option).
pub fn parse_log(value: &str) -> Result<LogPos, OptionError> {
    let bad = || OptionError::form(value, "TERM:INDEX (two whole numbers, e.g. 2:7)");
    let (term, index) = value.split_once(':').ok_or_else(bad)?;
    let log = LogPos { term: term.trim().parse().map_err(|_| bad())?, index: index.trim().parse().map_err(|_| bad())? };
    // A node starts in its log's term and runs for the next: a term without one would never elect.
    if super::next_term(log.term).is_none() {
        return Err(OptionError::TooLarge {
            what: "term",
            value: log.term,
            why: "leaves no term to run for",
            limit: "a log's term",
            max: super::MAX_TERM - 1,
            max_is: "MAX_TERM - 1, MAX_TERM = 2^53 - 1",
        });
    }
    Ok(log)
}

const NAME: &str = "raft";

crate::timers! {
    // Raft runs without the failure detector (`AppendEntries` is its
    // heartbeat), so all of a node's slots are its own.
    without detector;
    /// Timer: the election timeout (a follower's or a candidate's).
    ELECTION_TIMER = 0 => "election";
    /// Timer: the leader's next heartbeat round.
    HEARTBEAT_TIMER = 1 => "heartbeat round";
    /// Timer: the leader's CheckQuorum count.
    QUORUM_TIMER = 2 => "quorum check";
    /// Timer: `election_min` after the last contact with a leader (the
    /// disruptive-server guard and PreVote read it).
    FRESH_TIMER = 3 => "leader contact";
    /// Timers: the lease of a tracked heartbeat round runs out (D after it was
    /// sent); one per slot, [`LEASE_SLOTS`] of them from this one.
    LEASE_TIMER = 4, LEASE_SLOTS => "lease round";
}
/// Heartbeat rounds a leader tracks for its lease at once: the round the
/// lease rests on and the newest others (their acknowledgements may arrive
/// up to this many heartbeat periods late and still count).
pub const LEASE_SLOTS: usize = 4;
/// Each node draws its election timeouts from a cycle of this many values.
const DRAWS: u8 = 64;

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
    /// Lease rounds are numbered 1, 2, ... for ever (0), or 1..=`round_tags`
    /// and round again: for a model checker whose delays are bounded, where
    /// it is the same run with the rounds renamed and keeps the states
    /// finite (see [`RaftConfig::with_round_tags_for_delay`]).
    pub round_tags: u64,
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
        round_tags: 0,
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
        round_tags: 0,
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

    /// The same with lease rounds numbered modulo enough tags that, when
    /// every message takes at most `max_delay_ms`, no acknowledgement can
    /// meet a newer round of its number: a round is tracked for less than D
    /// after it is sent and its acknowledgements come back within two
    /// delays, so one tag more than the rounds sent in D + 2 delays suffices.
    pub fn with_round_tags_for_delay(self, max_delay_ms: u64) -> RaftConfig {
        let hb = self.heartbeat_ms.max(1);
        let window = (self.lease_ms() + 2 * max_delay_ms) / hb + 1;
        RaftConfig { round_tags: window + 1, ..self }
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
    /// The current election timeout, drawn when the node's term or role
    /// changes (etcd's `randomizedElectionTimeout`), kept across heartbeats.
    timeout_ms: u64,
    /// The index of the next draw (mod [`DRAWS`]).
    draws: u8,
    /// The election timer, when pending.
    election: OneTimer,
    /// (Pre-)candidate: grants per port.
    granted: Vec<bool>,
    /// Leader: acknowledged a heartbeat, per port, since the last CheckQuorum count.
    heard: Vec<bool>,
    /// Leader: where each port's node said its log ends (its latest acknowledgement).
    logs: Vec<Option<LogPos>>,
    /// Heard from a leader within `election_min` (the guard; PreVote).
    fresh: bool,
    /// Leader: the latest heartbeat round sent in this term (1, 2, ...).
    round: u64,
    /// Leader, lease: the rounds tracked, per slot, while their lease timer
    /// runs (sent less than D ago).
    slots: [Option<u64>; LEASE_SLOTS],
    /// Leader, lease: per port, a bit per slot: that node acknowledged the slot's round.
    acks: Vec<u8>,
    /// Leader, lease: the slot of the newest round a majority acknowledged,
    /// while its timer runs: the lease.
    leased: Option<usize>,
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
            timeout_ms: 0,
            draws: 0,
            election: OneTimer::default(),
            granted: vec![false; ports],
            heard: vec![false; ports],
            logs: vec![None; ports],
            fresh: false,
            round: 0,
            slots: [None; LEASE_SLOTS],
            acks: vec![0; ports],
            leased: None,
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
            Phase::Leader if !self.cfg.lease || self.leased.is_some() => Some(self.id),
            _ => None,
        };
        Leadership { term: self.stable.term, leader }
    }

    /// What this node keeps on disk.
    pub fn stable(&self) -> Stable {
        self.stable
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

    /// The election timeout: the one drawn for the node's term and role in
    /// the kept mode, by rank one-shot.
    fn timeout(&self, retry: bool) -> u64 {
        if !self.cfg.keep {
            return (self.rank + u64::from(retry)) * self.cfg.rank_ms;
        }
        self.timeout_ms
    }

    /// Draw a fresh election timeout, uniform in `[election_min,
    /// election_max)`, the node's next from its coin: a new term, a
    /// candidacy or a new leader followed gets a new draw; heartbeats keep it.
    fn redraw(&mut self) {
        let spread = self.cfg.election_max_ms.saturating_sub(self.cfg.election_min_ms).max(1);
        let draw = super::coin(self.coin, u32::from(self.draws));
        self.draws = (self.draws + 1) % DRAWS;
        self.timeout_ms = self.cfg.election_min_ms + draw % spread;
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
        self.redraw();
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
        self.redraw();
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
        self.forget_leading();
        self.announce(out);
        if self.cfg.keep && self.cfg.check_quorum {
            out.push(Effect::SetTimer { timer: QUORUM_TIMER, after_ms: self.cfg.election_min_ms });
        }
        self.heartbeat(out);
    }

    /// Send a round of empty `AppendEntries` (one-shot: only the first).
    /// With the lease, the round is tracked: its slot's timer starts now,
    /// before the round leaves, and runs D, so that a lease resting on the
    /// round ends no later than D after it was sent, whatever happens to the
    /// node meanwhile (a pause makes the timer late, never early).
    fn heartbeat(&mut self, out: &mut Outbox) {
        if self.phase != Phase::Leader {
            return;
        }
        let term = self.stable.term;
        if self.cfg.keep && self.cfg.lease {
            self.round = match self.cfg.round_tags {
                0 => self.round.saturating_add(1),
                tags => self.round % tags + 1,
            };
            self.track(self.round, out);
        }
        self.peers.broadcast(Msg::AppendEntries { term, leader: self.id, round: self.round }, out);
        if self.cfg.keep {
            out.push(Effect::SetTimer { timer: HEARTBEAT_TIMER, after_ms: self.cfg.heartbeat_ms });
        }
    }

    /// Track `round` in a slot: a free one, else the one of the oldest round
    /// the lease does not rest on (forgotten: its acknowledgements credit
    /// nothing any more).
    fn track(&mut self, round: u64, out: &mut Outbox) {
        let free = self.slots.iter().position(Option::is_none);
        let oldest =
            || (0..LEASE_SLOTS).filter(|&i| Some(i) != self.leased).max_by_key(|&i| self.slots[i].map(|r| self.age(r)));
        let Some(slot) = free.or_else(oldest) else { return };
        self.slots[slot] = Some(round);
        let bit = 1u8 << slot;
        self.acks.iter_mut().for_each(|a| *a &= !bit);
        out.push(Effect::SetTimer { timer: LEASE_TIMER + slot as TimerId, after_ms: self.cfg.lease_ms() });
    }

    /// How many rounds before the newest round `round` was sent.
    fn age(&self, round: u64) -> u64 {
        match self.cfg.round_tags {
            0 => self.round - round.min(self.round),
            tags => (self.round + tags - round % tags) % tags,
        }
    }

    /// Forget the tracked round in `slot` (its timer stops).
    fn untrack(&mut self, slot: usize, out: &mut Outbox) {
        if self.slots[slot].take().is_some() {
            out.push(Effect::CancelTimer { timer: LEASE_TIMER + slot as TimerId });
        }
        let bit = 1u8 << slot;
        self.acks.iter_mut().for_each(|a| *a &= !bit);
    }

    /// Forget what a leader keeps of its term: rounds, acknowledgements,
    /// the lease, the logs and contacts heard.
    fn forget_leading(&mut self) {
        self.heard.iter_mut().for_each(|h| *h = false);
        self.logs.iter_mut().for_each(|l| *l = None);
        self.acks.iter_mut().for_each(|a| *a = 0);
        (self.round, self.slots, self.leased) = (0, [None; LEASE_SLOTS], None);
    }

    /// Become a follower of `leader` (or of none) in term `term`, adopting
    /// it (persisted) when it is new; a leader's timers stop.
    fn follow(&mut self, term: u64, leader: Option<u64>, out: &mut Outbox) {
        let new_term = term > self.stable.term;
        if new_term {
            self.stable = Stable { term, vote: None };
            out.push(Effect::Persist(self.stable));
        }
        let was = self.phase;
        if was == Phase::Leader {
            out.push(Effect::CancelTimer { timer: HEARTBEAT_TIMER });
            if self.cfg.check_quorum {
                out.push(Effect::CancelTimer { timer: QUORUM_TIMER });
            }
            for slot in 0..LEASE_SLOTS {
                self.untrack(slot, out);
            }
            self.leased = None;
        }
        let changed = was != Phase::Follower(leader) || new_term;
        self.phase = Phase::Follower(leader);
        if changed {
            self.redraw();
        }
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

    fn on_append(&mut self, port: Port, term: u64, leader: u64, round: u64, out: &mut Outbox) -> Result<(), AlgoError> {
        self.wake(out);
        let log = self.log;
        let ack = move |term, success| Msg::AppendAck {
            term,
            success,
            round,
            last_log_term: log.term,
            last_log_index: log.index,
        };
        if term < self.stable.term {
            out.send(port, ack(self.stable.term, false));
            return Ok(());
        }
        if term == self.stable.term && self.phase == Phase::Leader {
            let msg = Msg::AppendEntries { term, leader, round };
            return Err(super::kept::invalid(NAME, msg, leader, self.id, self.state()));
        }
        self.touch(out);
        self.follow(term, Some(leader), out);
        out.send(port, ack(term, true));
        Ok(())
    }

    fn on_ack(&mut self, port: Port, ack: Ack, out: &mut Outbox) {
        let Ack { term, success, round, log } = ack;
        if term > self.stable.term {
            self.follow(term, None, out);
            return;
        }
        if self.phase != Phase::Leader || term != self.stable.term || !success {
            return;
        }
        // CheckQuorum counts what etcd counts: answers to the leader's AppendEntries.
        let p = port as usize;
        self.heard[p] = true;
        self.logs[p] = Some(log);
        if !(self.cfg.lease && self.cfg.keep) {
            return;
        }
        // The round's own slot, while its D runs; a round forgotten or run out credits nothing.
        let Some(slot) = self.slots.iter().position(|&r| r == Some(round)) else { return };
        let bit = 1u8 << slot;
        self.acks[p] |= bit; // a duplicate sets it again: no more credit
        let acked = 1 + self.acks.iter().filter(|&&a| a & bit != 0).count();
        let newer = self.leased.is_none_or(|l| self.slots[l].is_none_or(|r| self.age(r) > self.age(round)));
        if acked < self.quorum || !newer {
            return;
        }
        // The lease rests on this round now, until its timer ends it: older rounds give no more.
        let was = self.leased.replace(slot);
        for older in 0..LEASE_SLOTS {
            if self.slots[older].is_some_and(|r| self.age(r) > self.age(round)) {
                self.untrack(older, out);
            }
        }
        if was.is_none() {
            self.announce(out);
        }
    }

    fn on_timeout_now(&mut self, port: Port, term: u64, out: &mut Outbox) {
        let Some(&from) = self.peers.get(port as usize) else { return };
        if self.phase == Phase::Follower(Some(from)) && term == self.stable.term && !self.leaving {
            self.election.stop(out);
            self.campaign(true, out);
        }
    }
}

/// An `AppendAck`'s fields.
struct Ack {
    term: u64,
    success: bool,
    round: u64,
    log: LogPos,
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
            self.forget_leading();
        }
    }

    fn handle_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = self.peers.sender(port)?;
        super::check_term(NAME, &msg)?;
        match msg {
            // A log's term is a term: above MAX_TERM it is forged or corrupt.
            Msg::RaftVoteRequest { last_log_term, .. } | Msg::AppendAck { last_log_term, .. }
                if last_log_term > super::MAX_TERM =>
            {
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
            Msg::AppendEntries { term, leader, round } if leader == from => {
                self.on_append(port, term, leader, round, out)?
            }
            Msg::AppendAck { term, success, round, last_log_term, last_log_index } => {
                let log = LogPos { term: last_log_term, index: last_log_index };
                self.on_ack(port, Ack { term, success, round, log }, out)
            }
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
            t if (LEASE_TIMER..LEASE_TIMER + LEASE_SLOTS as TimerId).contains(&t) => {
                // D has passed since the slot's round was sent: it gives no lease any more.
                let slot = (t - LEASE_TIMER) as usize;
                self.slots[slot] = None;
                let bit = 1u8 << slot;
                self.acks.iter_mut().for_each(|a| *a &= !bit);
                if self.leased == Some(slot) {
                    self.leased = None;
                    self.announce(out);
                }
            }
            _ => {}
        }
    }
}

impl Raft {
    fn start(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Asleep {
            self.initiator = true;
        }
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

    /// Leadership transfer (thesis §3.10): the leader stops believing it
    /// leads (its lease, if any, ends now) and sends `TimeoutNow` to the best
    /// node, among those not suspected that answered its `AppendEntries`
    /// in this term, whose log is at least as up-to-date as its own: every node whose log
    /// the leader's is at least as up-to-date as (a majority, or it would not
    /// lead) grants such a node its vote. No such node: it hands nothing
    /// over (`false`), the others' election timeouts take over, as etcd's
    /// transfer aborts after an election timeout when the target is not
    /// caught up (this election moves no entries, so none catches up). The
    /// leaver never runs again, but still votes; its belief names the
    /// successor once the successor's first `AppendEntries` reaches it.
    fn leave(&mut self, suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) {
            return false;
        }
        self.election.stop(out);
        if self.phase != Phase::Leader {
            return false;
        }
        let term = self.stable.term;
        let alive = |p: Port| !suspected.get(p as usize).copied().unwrap_or(false);
        let up_to_date = |p: Port| self.logs.get(p as usize).copied().flatten().is_some_and(|l| l >= self.log);
        let best = self.peers.best_where(self.rule, |p| alive(p) && up_to_date(p));
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
}

impl Algorithm for Raft {
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
            Phase::Follower(Some(_)) => "follower",
            Phase::Follower(None) => "no-leader",
            Phase::PreCandidate => "pre-candidate",
            Phase::Candidate => "candidate",
            Phase::Leader if self.leadership().leader.is_some() => "leader",
            Phase::Leader => "leader-unleased",
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

    /// A successful `AppendAck` of `round` in `term` from a node with an empty log.
    fn ack(term: u64, round: u64) -> Msg {
        Msg::AppendAck { term, success: true, round, last_log_term: 0, last_log_index: 0 }
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
        expected.extend((0..4).map(|p| send(p, Msg::AppendEntries { term: 1, leader: 3, round: 0 })));
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
        b.on_restore(a.stable());
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

    /// With the lease (thesis §6.4.1), a leader believes it leads only while its lease runs, and
    /// the lease rests on a heartbeat round: the round's timer of D starts as it is sent, a
    /// majority's acknowledgements naming the round make the leader believe (no timer set then),
    /// and the round's timer ends the belief. An acknowledgement of a round whose D has run out
    /// credits nothing (what a paused leader gets on resuming), a duplicate credits once, and a
    /// later round's majority takes over the lease. In the simulator, with the leader cut off
    /// alone at 2 s, it stops believing before the majority's new leader starts: never two
    /// nodes believe they lead at one instant.
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
        assert!(out.effects().contains(&Effect::SetTimer { timer: LEASE_TIMER, after_ms: 180 }), "round 1's D");
        out.clear();
        a.on_message(1, ack(1, 1), &mut out).unwrap();
        a.on_message(1, ack(1, 1), &mut out).unwrap();
        assert!(out.effects().is_empty(), "a duplicate is one acknowledgement: 2 of 5");
        a.on_message(3, ack(1, 1), &mut out).unwrap();
        let decide = Effect::Decide(crate::algo::Decision { role: Role::Leader, leader: 3 });
        assert_eq!(out.effects(), &[lead(1, Some(3)), decide]);
        out.clear();
        a.on_timer(LEASE_TIMER, &mut out);
        assert_eq!(out.effects(), &[lead(1, None)], "round 1's D ran out");
        out.clear();
        a.on_message(1, ack(1, 1), &mut out).unwrap();
        a.on_message(3, ack(1, 1), &mut out).unwrap();
        a.on_message(0, ack(1, 1), &mut out).unwrap();
        assert!(out.effects().is_empty(), "stale acknowledgements credit nothing: {:?}", out.effects());
        // Rounds 2..=6 without acknowledgements: four slots, the oldest forgotten first.
        for _ in 2..=6 {
            a.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        out.clear();
        a.on_message(1, ack(1, 2), &mut out).unwrap();
        a.on_message(3, ack(1, 2), &mut out).unwrap();
        assert!(out.effects().is_empty(), "round 2 was forgotten for round 6");
        a.on_message(1, ack(1, 4), &mut out).unwrap();
        a.on_message(3, ack(1, 4), &mut out).unwrap();
        let round3 = Effect::CancelTimer { timer: LEASE_TIMER + 1 };
        assert_eq!(out.effects(), &[round3, lead(1, Some(3))], "round 4 is tracked, older round 3 forgotten");
        out.clear();
        // Round 5's majority takes over: round 4's timer stops, the lease stays.
        a.on_message(0, ack(1, 5), &mut out).unwrap();
        a.on_message(2, ack(1, 5), &mut out).unwrap();
        let slot4 = LEASE_TIMER + 2; // rounds 2, 3, 4, 5 took slots 0, 1, 2, 3; round 6 took round 2's
        assert_eq!(out.effects(), &[Effect::CancelTimer { timer: slot4 }], "{:?}", a.slots);
        assert_eq!(a.leadership().leader, Some(3));
        // Rounds keep going with the lease's slot kept: it is never forgotten for a new round.
        for _ in 7..=12 {
            a.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        assert!(a.slots.contains(&Some(5)), "{:?}", a.slots);
        out.clear();
        a.on_timer(LEASE_TIMER + 3, &mut out);
        assert_eq!(out.effects(), &[lead(1, None)], "round 5's D ran out: {:?}", a.slots);

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
        a.on_message(3, ack(1, 1), &mut out).unwrap();
        a.on_message(1, ack(1, 1), &mut out).unwrap();
        out.clear();
        assert!(a.on_leave(&[], &mut out));
        assert!(out.effects().contains(&lead(1, None)));
        assert!(
            out.effects().ends_with(&[send(3, Msg::TimeoutNow { term: 1 }), Effect::HandingOver]),
            "2 is the best it heard: {:?}",
            out.effects()
        );

        let mut b = node(2, &[3, 1, 4, 5], cfg);
        b.on_start(&mut out);
        b.on_message(0, Msg::AppendEntries { term: 1, leader: 3, round: 1 }, &mut out).unwrap();
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
        c.on_message(0, Msg::AppendEntries { term: 1, leader: 3, round: 1 }, &mut out).unwrap();
        assert_eq!(granted(&mut c, 2, request(2, 2, (0, 0))), Some(false), "heard the leader lately");
        assert_eq!(granted(&mut c, 2, transfer), Some(true), "a transfer goes through");
    }

    /// Node 3 leading term 1 of 5 (ports to 7, 1, 8, 2), with `cfg`, its log at `log`.
    fn leader_of_term_1(cfg: RaftConfig, log: LogPos) -> Raft {
        let mut a = node(3, &PEERS_OF_3, cfg).with_log(log);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        a.on_timer(ELECTION_TIMER, &mut out);
        let term = a.stable().term;
        for port in [1, 3] {
            a.on_message(port, Msg::RaftVote { term, granted: true, pre_vote: false }, &mut out).unwrap();
        }
        assert_eq!(a.phase, Phase::Leader);
        a
    }

    /// A planned handover goes only to a node whose log is at least as up-to-date as the
    /// leader's (as answered in its AppendAck): with 8 (the best id) behind, 7 gets TimeoutNow;
    /// with every follower behind, the leader hands nothing over and says so (`false`), where
    /// before it sent TimeoutNow to 8, whose candidacy the others refused.
    #[test]
    fn a_handover_goes_to_an_up_to_date_node_or_to_none() {
        let log = LogPos { term: 2, index: 5 };
        let answer = |a: &mut Raft, port: Port, l: (u64, u64)| {
            let term = a.stable().term;
            let msg = Msg::AppendAck { term, success: true, round: 1, last_log_term: l.0, last_log_index: l.1 };
            a.on_message(port, msg, &mut Outbox::default()).unwrap();
        };
        let mut a = leader_of_term_1(RaftConfig::LOOPBACK, log);
        answer(&mut a, 2, (1, 9)); // 8: an older last term
        answer(&mut a, 0, (2, 5)); // 7: as up-to-date
        answer(&mut a, 1, (2, 6)); // 1: more
        let mut out = Outbox::default();
        assert!(a.on_leave(&[], &mut out));
        let term = a.stable().term;
        assert!(
            out.effects().ends_with(&[send(0, Msg::TimeoutNow { term }), Effect::HandingOver]),
            "7, not 8: {:?}",
            out.effects()
        );

        let mut b = leader_of_term_1(RaftConfig::LOOPBACK, log);
        answer(&mut b, 2, (1, 9));
        answer(&mut b, 0, (2, 4));
        let mut out = Outbox::default();
        assert!(!b.on_leave(&[], &mut out), "nobody up-to-date: no handover");
        assert!(!out.effects().iter().any(|e| matches!(e, Effect::Send { msg: Msg::TimeoutNow { .. }, .. })));
        assert_eq!(b.leadership().leader, None, "it stopped leading all the same");
    }

    /// CheckQuorum counts what etcd counts: a leader whose followers send it only vote
    /// requests and refusals (no AppendAck) steps down at its count; answers to its
    /// AppendEntries from a majority keep it.
    #[test]
    fn check_quorum_counts_only_answers_to_append_entries() {
        let cfg = RaftConfig::LOOPBACK.with_options(false, true, false);
        let mut a = leader_of_term_1(cfg, LogPos::default());
        let mut out = Outbox::default();
        a.on_message(1, ack(1, 1), &mut out).unwrap();
        a.on_message(3, ack(1, 1), &mut out).unwrap();
        a.on_timer(QUORUM_TIMER, &mut out);
        assert_eq!(a.leadership().leader, Some(3), "the first count: two answers and itself");
        for port in 0..4 {
            a.on_message(port, Msg::RaftVote { term: 1, granted: false, pre_vote: false }, &mut out).unwrap();
            a.on_message(
                port,
                Msg::RaftVoteRequest {
                    term: 1,
                    candidate: PEERS_OF_3[port as usize],
                    last_log_term: 0,
                    last_log_index: 0,
                    pre_vote: true,
                    transfer: false,
                },
                &mut out,
            )
            .unwrap();
        }
        out.clear();
        a.on_timer(QUORUM_TIMER, &mut out);
        assert_eq!(a.leadership().leader, None, "votes are no contact: {:?}", out.effects());

        let mut b = leader_of_term_1(cfg, LogPos::default());
        b.on_message(0, ack(1, 1), &mut out).unwrap();
        b.on_message(2, ack(1, 1), &mut out).unwrap();
        b.on_timer(QUORUM_TIMER, &mut out);
        b.on_message(1, ack(1, 1), &mut out).unwrap();
        b.on_message(3, ack(1, 1), &mut out).unwrap();
        b.on_timer(QUORUM_TIMER, &mut out);
        assert_eq!(b.leadership().leader, Some(3), "two answers and itself: 3 of 5");
    }

    /// The election timeout is drawn when the term or role changes and kept across heartbeats
    /// (etcd's randomizedElectionTimeout): a follower re-arms with the same value at every
    /// AppendEntries of its leader; a new term draws anew; nodes of one election draw apart.
    #[test]
    fn timeouts_are_drawn_per_term_and_kept_across_heartbeats() {
        let armed = |out: &Outbox| {
            out.effects().iter().rev().find_map(|e| match e {
                Effect::SetTimer { timer: ELECTION_TIMER, after_ms } => Some(*after_ms),
                _ => None,
            })
        };
        let mut b = node(2, &[3, 1, 4, 5], RaftConfig::LOOPBACK);
        let mut out = Outbox::default();
        b.on_start(&mut out);
        let mut seen = Vec::new();
        for term in 1..=40u64 {
            let mut first = None;
            for round in 1..=3 {
                out.clear();
                b.on_message(0, Msg::AppendEntries { term, leader: 3, round }, &mut out).unwrap();
                let t = armed(&out).unwrap();
                assert!((200..400).contains(&t), "{t}");
                assert_eq!(*first.get_or_insert(t), t, "term {term} round {round}: kept across heartbeats");
            }
            seen.push(first.unwrap());
        }
        seen.sort_unstable();
        seen.dedup();
        assert!(seen.len() > 20, "40 terms drew only {} values: {seen:?}", seen.len());
    }

    /// Messages that cannot happen are errors: a request or heartbeat naming somebody else than
    /// its sender, a heartbeat of the term this node leads, a foreign kind, a missing port; a term
    /// above MAX_TERM is refused as implausible.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = node(3, &PEERS_OF_3, RaftConfig::LOOPBACK);
        let mut out = Outbox::default();
        for msg in [request(1, 4, (0, 0)), Msg::AppendEntries { term: 1, leader: 4, round: 1 }] {
            assert!(matches!(a.on_message(0, msg, &mut out), Err(AlgoError::Invalid(_))), "{msg:?}");
        }
        assert!(matches!(a.on_message(0, Msg::Wakeup, &mut out), Err(AlgoError::UnexpectedKind { .. })));
        let refused = a.on_message(0, ack(MAX_TERM + 1, 1), &mut out);
        assert!(matches!(refused, Err(AlgoError::Implausible { field: "term", .. })), "{refused:?}");
        assert!(matches!(a.on_message(9, Msg::TimeoutNow { term: 0 }, &mut out), Err(AlgoError::BadPort { port: 9 })));
    }
}
