//! # Lease election in a store, as Kubernetes' client-go does it
//!
//! * Source: Kubernetes client-go, package `tools/leaderelection`
//!   (`LeaderElector`, `tryAcquireOrRenew`, `LeaderElectionRecord`,
//!   `ReleaseOnCancel`), with its defaults LeaseDuration 15 s, RenewDeadline
//!   10 s, RetryPeriod 2 s; the record a compare-and-swap on the revision
//!   keeps in etcd v3 (`Txn` comparing `mod_revision`), as a `Lease` object
//!   is kept by the API server.
//! * Network: no messages between nodes at all. Every node reaches one
//!   linearizable store (etcd live; a process the simulator models) that
//!   keeps one record per election ([`super::store`]). Safety holds under
//!   any loss of store operations and answers, crashes and recoveries, as
//!   long as clock *rates* are within the tolerance derived below (which
//!   slow answers eat into under client-go's rule, not under
//!   `renew_from = send`); clock *offsets* do not matter, no node reads
//!   another's clock. Liveness needs the store reachable with delays well
//!   below RetryPeriod.
//! * Candidates: every node. Winner: whoever's compare-and-swap reaches the
//!   store first once the record is free (no id is favoured in the kept
//!   mode); in the one-shot mode the best initiator (tries by rank).
//! * Messages: kept, none between nodes: store operations, failure-free, n
//!   reads and up to n compare-and-swaps to elect (and the winner's first
//!   renewal at once), then one renewal by the holder per RetryPeriod and one
//!   read by every other node per 1.6 RetryPeriods on average (RP + a jitter
//!   of up to 1.2·RP). One-shot, exactly **n − 1** (the holder tells every
//!   other node, so that nodes that did not initiate learn it too), and a
//!   read and at most one write per initiator.
//!
//! ## The algorithm (kept mode)
//!
//! A node that does not lead *tries* at once on start, then after every try
//! waits RetryPeriod plus a jitter in [0, 1.2·RetryPeriod) (client-go's
//! `acquire`: `JitterUntil` with JitterFactor 1.2, sliding, so the wait starts
//! when the try ends). A try reads the record (`Get`) and
//!
//! * if there is none, or it names no holder (released), or the node is its
//!   holder, or the record *expired*, it writes itself as holder with a
//!   compare-and-swap on the revision it read (`transitions + 1` when the
//!   holder changes, as client-go's `leaderTransitions`), its own
//!   LeaseDuration in the record;
//! * otherwise it follows the holder.
//!
//! The jitter comes from the driver: the i-th draw is `coin(node's coin, i
//! mod 8)` ([`NodeContext::coin`]), so the simulator and a live node draw
//! alike for one seed and the node's state stays finite. The holder renews
//! with a compare-and-swap on the revision of its own last write, without
//! reading first (client-go's fast path); a lost one reads.
//!
//! * **Observed time** (client-go's `observedTime`). A node keeps the last
//!   revision it saw; when a read shows another one, it restarts its
//!   *expiry* timer for the LeaseDuration *the record carries* (client-go's
//!   `observedTime + LeaseDurationSeconds`: the holder's promise, not the
//!   observer's setting; more than [`MAX_RECORD_DURATION_MS`] counts as
//!   that). The record has expired for the node when that timer fires before
//!   the revision changes again: measured on the node's own clock from when
//!   it *saw* the change, never from a time written in the record, so
//!   clock offsets do not matter.
//! * **Renew deadline, client-go's rule** ([`RenewFrom::Round`], the
//!   default; client-go's `renew`: `wait.Until` of a `PollImmediateUntil`
//!   every RetryPeriod under a RenewDeadline context). The holder renews in
//!   *rounds*: a round starts as the node acquires the record, and a
//!   RetryPeriod after each success; it tries at once and, after a failed
//!   try, every RetryPeriod; the first success ends the round. If no try of
//!   the round succeeds within RenewDeadline of its start (a timer in the
//!   first deadline slot), the node stops leading, and a try of that round
//!   that succeeds later makes it lead no more (client-go cancels it). So a
//!   holder leads up to **RP + RD after its last success** (the answer of its
//!   last successful write), by its clock.
//! * **Renew deadline, the stricter rule** ([`RenewFrom::Send`], option
//!   `renew_from = send`). Every write the node sends starts a deadline of
//!   RenewDeadline from its send (one of two slots, the one the current
//!   lease does not use); a written answer whose deadline has not passed
//!   makes the node lead until that deadline, and drops the older one. A
//!   holder leads at most **RD after sending its last successful write**:
//!   never later than under client-go's rule, whatever the delays. It is kept
//!   because it tolerates nearly twice the clock-rate error (20% against
//!   11.1% at the defaults) and none of its tolerance depends on how long
//!   the store's answers take.
//! * **Operations.** One at a time, each tagged; a node that gets no answer
//!   within RetryPeriod gives the operation up (a late answer is ignored):
//!   a holder tries again at once, any other node after its jittered wait. A
//!   failed operation is retried a RetryPeriod later by a holder, after the
//!   jittered wait by any other node.
//! * **ReleaseOnCancel.** A node about to stop ([`Input::Leave`])
//!   stops leading at once and writes the record with no holder (keeping
//!   `transitions`), so that the others take it on their next try instead
//!   of after LeaseDuration; it keeps reading, never writing, so it learns
//!   the successor.
//! * **Configuration** ([`LeaseConfig::validate`]): client-go's checks of
//!   `NewLeaderElector`, LeaseDuration > RenewDeadline > 1.2·RetryPeriod
//!   (JitterFactor) > 0.
//!
//! Every change of belief is announced with [`Effect::Lead`]: the term is
//! the record's `transitions` + 1, the leader its holder while the node
//! leads (for itself) or has not seen it expire (for another). The first
//! leader learned is also announced with [`Effect::Decide`]. A holder that
//! reads another holder stops leading at once (client-go keeps believing
//! until its round's deadline: stopping sooner is never less safe).
//!
//! ## Safety: no two leaders at once, within the clock-rate tolerance
//!
//! *One leader per term.* Terms are `transitions + 1`; every write that
//! changes the holder raises `transitions` by one, and writes are
//! compare-and-swaps on the revision, so the writes of the records form one
//! chain and every value of `transitions` has one holder.
//!
//! *No two leaders at once.* Say y leads at real time T on its write w,
//! sent at s_w, applied at a_w and answered (written) at r_w, s_w ≤ a_w ≤
//! r_w. Let H be how long y may lead on w by its clock, and t_w the moment H
//! runs from: under client-go's rule H = RP + RD from t_w = r_w (the next
//! round starts RP after the success and lasts RD; after an acquisition
//! only RD); under the stricter rule H = RD from t_w = s_w. Any z ≠ y that
//! leads at T took the record with a compare-and-swap applied after a_w
//! (the chain) on a revision it read at or after a_w; it wrote only because
//! that revision had expired, i.e. z saw it at some o ≥ a_w and the record's
//! LeaseDuration (y's, LD) passed on z's clock without a change. Unless a
//! record of y's with a later revision exists: then z read that one, and the
//! argument applies to it. A release by y is sent after y stopped leading.
//!
//! With every clock's rate within 1 ± ρ of real time, y stops by t_w +
//! H/(1 − ρ) and z writes after a_w + LD/(1 + ρ), so one leader at a time
//! needs (t_w − a_w) + H/(1 − ρ) < LD/(1 + ρ):
//!
//! * client-go's rule, answers arriving as the write is applied (t_w = a_w):
//!   (RP + RD)(1 + ρ) < LD(1 − ρ), i.e. **ρ < (LD − RP − RD) / (LD + RP +
//!   RD)**: 3/27 = **1/9 = 11.1%** at client-go's defaults (15/10/2 s), the
//!   same at the loopback 375/250/50 ms (same ratios) ([`clock_tolerance`]).
//!   An answer that takes α after the write was applied costs α of real
//!   time; this node gives an answer up after RP (its clock), so with any
//!   delays at all ρ < (LD − 2RP − RD) / (LD + 2RP + RD) = 1/29 = 3.4% at
//!   the defaults.
//! * the stricter rule (t_w = s_w ≤ a_w, whatever the delays): RD(1 + ρ) <
//!   LD(1 − ρ), i.e. **ρ < (LD − RD) / (LD + RD)**: 5/25 = **1/5 = 20%** at
//!   the defaults and at the loopback timing.
//!
//! Measured (`lease::tests`, client-go's defaults, the holder's clock slow
//! and every other clock fast by ρ, the holder cut off from the store, 50
//! seeds; the sweep in 1% steps: `cargo test -p ringleader-core --lib
//! lease::tests::clock_rate_sweep -- --ignored --nocapture`): client-go's
//! rule never gave two leaders at once up to ρ = 12%, first did at 13% (6
//! of 50 seeds), always from 25%; the stricter rule never up to 21%, first
//! at 22% (3 of 50), 49 of 50 at 31%. The bounds are worst cases: the taker
//! must also have seen the last write at once and try the moment it
//! expires.
//!
//! *A slow holder clock alone breaks it.* If y's clock runs at rate r < 1
//! and the others' are exact, H lasts H / r of real time; once H / r > LD
//! (r < (RP + RD)/LD = 0.8 under client-go's rule, r < RD/LD = 2/3 under the
//! stricter one, at the defaults), a holder cut off from the store still
//! believes it leads when another node has waited LeaseDuration and taken
//! the record: two leaders at once, for up to H / r − LD. client-go says as
//! much: it tolerates clock skew, not skew *rate*. Nothing written in the
//! record can prevent it; only fencing the holder's actions with the
//! record's revision would.
//!
//! ## Convergence
//!
//! After the last fault heals, with the store answering within δ (one
//! operation, there and back) and δ < RetryPeriod, and J = RP + 1.2·RP the
//! longest wait between two tries of a node that does not lead: a free
//! record (released, or never written) is taken at the next try of the
//! first node, within J + 2δ. A record whose holder crashed or was cut off
//! is seen unchanged by every live node from at most J + δ after its last
//! write on, expires LD after that, and is taken at the next try, J later:
//! LD + 2J + 2δ in all. Every live node follows the new holder by its next
//! read, J + δ later. So every live node follows one live leader within
//! [`convergence_bound_ms`] = LD + 3J + 4δ = LD + 6.6·RP + 4δ of the fault
//! healing: client-go's "about LeaseDuration + RetryPeriod" (with the
//! jitter), plus the time to learn of the change and the store's delays.
//!
//! ## One-shot mode (the catalogue's `build`)
//!
//! An initiator's first try comes after `rank × rank_ms` (rank 0: the best
//! id), so with store delays below `rank_ms` / 2 the best initiator writes
//! first and leads, and sends `Notify { leader }` to every other node (n − 1
//! messages): a node that did not initiate wakes on it and follows, an
//! initiator follows on it or on reading the record, whichever comes first,
//! and nobody tries again. Only one write succeeds (the first
//! compare-and-swap on the empty record; the record never expires in this
//! mode), so the count is exactly n − 1.

use super::detector::DetectorConfig;
use super::kept::Peers;
use crate::spec::{self, AlgoOption, AlgorithmSpec, Assumptions, Candidates, Extras, KeptSpec, Provision};
use super::store::{LeaseRecord, StoreOp, StoreReply};
use super::{
    AlgoError, Algorithm, Effect, Input, Leadership, Msg, NodeContext, Options, Outbox, Port, Reports, Role, TimerId,
};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "lease",
    title: "Lease election in a store (client-go leaderelection on etcd)",
    source: "Kubernetes client-go, tools/leaderelection (LeaderElector: tryAcquireOrRenew, observedTime, \
             ReleaseOnCancel; LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s), on an etcd v3 \
             compare-and-swap of the record's revision",
    description: "Every RetryPeriod plus a jitter of up to 1.2 RetryPeriods each node reads a lease record \
                  (holder, transitions, duration) from a store and writes itself as holder with a \
                  compare-and-swap on the revision when the record is free, its own, or unchanged for the \
                  record's LeaseDuration by the node's own clock; the holder renews in rounds, a \
                  RetryPeriod after each success, and stops leading when no try of a round succeeded \
                  within RenewDeadline of its start (option renew_from=send: of sending the write); a \
                  node stopping on purpose releases the record. No messages between nodes: LIVE, the \
                  store is etcd; SIMULATED, one linearizable process.",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::Initiators,
    bound_formula: "n-1 (one-shot: the holder's notifications; kept: none; store operations aside)",
    bound: &|n, _| n.saturating_sub(1),
    timer_events: |_| 0,
    // Not measured by examples/memory: a node is a few words and a peers list.
    heap_bytes_per_position: 512,
    kept: Some(KeptSpec {
        build: |c, d| Box::new(Lease::with_config(c, LeaseConfig::for_detector(d).with_chosen(c.options))),
        heartbeats_per_period: |_| 0,
        // Store operations, not messages: one per node and RetryPeriod.
        election_load_per_second: |topo, d| {
            spec::per_second(2 * u64::from(topo.len()), LeaseConfig::for_detector(d).retry_period_ms)
        },
        convergence_bound_ms: |d, _, delay_ms| convergence_bound_ms(LeaseConfig::for_detector(d), delay_ms),
        max_local_nodes: 128,
        lease: Some(spec::Lease { lost: "the holder did not renew the lease record within RenewDeadline" }),
        liveness_needs: Some(
            "store operations answered within RetryPeriod, there and back (client-go's assumption): with \
             the checker's delays above half of it, a holder's answers may all come after it gave them up",
        ),
    }),
    live_provision: Provision::Store,
    machine: machine!(Lease::new),
    extras: Extras {
        exact: Some(|n, _| n.saturating_sub(1)),
        options: &[AlgoOption {
            name: "renew_from",
            help: "where a holder measures RenewDeadline from: round (client-go's: from the start of each \
                   renewal round, a RetryPeriod after the last success) or send (stricter: from the send of \
                   each write, which tolerates twice the clock-rate error); default round",
            per_node: false,
            kept_only: true,
            check: |v| RenewFrom::parse(v).map(|_| ()),
            lease: None,
        }],
        ..Extras::NONE
    },
};

use super::Rule;

const NAME: &str = "lease";

crate::timers! {
    /// Timer: the next try (every RetryPeriod).
    RETRY_TIMER = 0 => "retry";
    /// Timer: the record observed last has not changed for LeaseDuration.
    EXPIRE_TIMER = 1 => "lease expiry";
    /// Timers: renew deadlines, the first of [`DEADLINE_TIMERS`].
    DEADLINE_TIMER = 2, DEADLINE_TIMERS.len() => "renew deadline";
    /// Timer: the operation in flight got no answer in time.
    OP_TIMER = 4 => "store answer";
}

/// Timers: renew deadlines. [`RenewFrom::Round`] uses the first, the
/// deadline of the renewal round running; [`RenewFrom::Send`] both, the
/// deadlines of two writes (the one led on, and the one in flight).
pub const DEADLINE_TIMERS: [TimerId; 2] = [DEADLINE_TIMER, DEADLINE_TIMER + 1];

/// client-go's `JitterFactor`, in tenths: a node that does not lead waits
/// RetryPeriod plus a draw in [0, 1.2·RetryPeriod) between tries.
pub const JITTER_FACTOR_TENTHS: u64 = 12;

/// How many different jitter draws a node cycles through (its state stays
/// finite for the model checker).
const DRAWS: u8 = 8;

/// The longest lease duration a record is believed to carry, in ms (a day):
/// a record from the store claiming more (corrupt or forged) is judged as if
/// it said a day, so that it cannot hold the election for ever.
pub const MAX_RECORD_DURATION_MS: u64 = 86_400_000;

/// Where a holder measures RenewDeadline from (the `renew_from` option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RenewFrom {
    /// client-go's: from the start of each renewal round, which begins a
    /// RetryPeriod after the last success; a holder leads up to RetryPeriod
    /// + RenewDeadline after its last success.
    #[default]
    Round,
    /// Stricter: from the send of each write; a holder leads at most
    /// RenewDeadline after sending its last successful write.
    Send,
}

impl RenewFrom {
    /// `round` or `send`.
    pub fn parse(value: &str) -> Result<RenewFrom, spec::OptionError> {
        match value {
            "round" => Ok(RenewFrom::Round),
            "send" => Ok(RenewFrom::Send),
            _ => Err(spec::OptionError::form(value, "where RenewDeadline runs from: round or send")),
        }
    }
}

/// client-go's timing, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseConfig {
    /// Keep a leader (renew for ever); `false`: the one-shot mode.
    pub keep: bool,
    /// How long a record must stay unchanged, by an observer's clock, before it may take it.
    pub lease_duration_ms: u64,
    /// How long a holder keeps trying to renew before it stops leading,
    /// measured as [`LeaseConfig::renew_from`] says.
    pub renew_deadline_ms: u64,
    /// How often a node tries to acquire or renew.
    pub retry_period_ms: u64,
    /// One-shot: an initiator's first try per rank (the best id tries at once).
    pub rank_ms: u64,
    /// Where RenewDeadline runs from.
    pub renew_from: RenewFrom,
}

/// A [`LeaseConfig`] that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("lease config: {0}")]
pub struct ConfigError(pub String);

/// How long after the last fault heals every live node follows one live
/// holder, store operations taking at most `delay_ms` there and back (see
/// "Convergence" above): LD + 3J + 4δ, J = 2.2·RP the longest wait between
/// a non-holder's tries.
pub fn convergence_bound_ms(c: LeaseConfig, delay_ms: u64) -> u64 {
    c.lease_duration_ms + 3 * longest_wait_ms(c.retry_period_ms) + 4 * delay_ms
}

/// The spread of the jitter a non-holder adds to RetryPeriod: 1.2·RP (at least 1 ms).
fn jitter_spread_ms(retry_period_ms: u64) -> u64 {
    (retry_period_ms.saturating_mul(JITTER_FACTOR_TENTHS) / 10).max(1)
}

/// The longest wait between two tries of a node that does not lead: RP + 1.2·RP.
pub fn longest_wait_ms(retry_period_ms: u64) -> u64 {
    retry_period_ms.saturating_add(jitter_spread_ms(retry_period_ms))
}

/// The clock-rate error ρ the timing tolerates (every node's clock within
/// 1 ± ρ of real time) with store answers arriving as the write is applied
/// (see "Safety" above): a holder leads up to H after its last success (H =
/// RP + RD under [`RenewFrom::Round`], RD after the write's send under
/// [`RenewFrom::Send`]), another node takes the record LD after it saw it,
/// so H(1 + ρ) < LD(1 − ρ): ρ < (LD − H) / (LD + H). 1/9 at client-go's
/// defaults, 1/5 with `renew_from = send`.
pub fn clock_tolerance(c: LeaseConfig) -> f64 {
    let held = match c.renew_from {
        RenewFrom::Round => c.retry_period_ms.saturating_add(c.renew_deadline_ms),
        RenewFrom::Send => c.renew_deadline_ms,
    };
    let (ld, h) = (c.lease_duration_ms as f64, held as f64);
    ((ld - h) / (ld + h)).max(0.0)
}

impl LeaseConfig {
    /// client-go's defaults: LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s.
    pub const PRODUCTION: LeaseConfig = LeaseConfig {
        keep: true,
        lease_duration_ms: 15_000,
        renew_deadline_ms: 10_000,
        retry_period_ms: 2_000,
        rank_ms: 10_000,
        renew_from: RenewFrom::Round,
    };
    /// The catalogue's one-shot election: an initiator tries after `rank × 10 s`.
    pub const ONE_SHOT: LeaseConfig = LeaseConfig { keep: false, ..LeaseConfig::PRODUCTION };
    /// Kept leadership on loopback: client-go's ratios with RetryPeriod the
    /// loopback detector's period (50 ms): 375 / 250 / 50 ms.
    pub const LOOPBACK: LeaseConfig = LeaseConfig {
        keep: true,
        lease_duration_ms: 375,
        renew_deadline_ms: 250,
        retry_period_ms: 50,
        rank_ms: 10_000,
        renew_from: RenewFrom::Round,
    };

    /// client-go's ratios (15 : 10 : 2) scaled so that RetryPeriod is the
    /// detector's period p: RetryPeriod p, RenewDeadline 5p, LeaseDuration
    /// 7.5p ([`LeaseConfig::LOOPBACK`] for [`DetectorConfig::LOOPBACK`]).
    pub fn for_detector(d: DetectorConfig) -> LeaseConfig {
        let p = d.period_ms.max(2);
        LeaseConfig {
            lease_duration_ms: p.saturating_mul(15) / 2,
            renew_deadline_ms: p.saturating_mul(5),
            retry_period_ms: p,
            ..LeaseConfig::LOOPBACK
        }
    }

    /// The same timing with RenewDeadline measured as an election's
    /// options choose (`renew_from`; client-go's round when not given).
    pub fn with_chosen(self, o: Options) -> LeaseConfig {
        let renew_from = o.get("renew_from").and_then(|v| RenewFrom::parse(v).ok()).unwrap_or_default();
        LeaseConfig { renew_from, ..self }
    }

    /// client-go's checks (`NewLeaderElector`): LeaseDuration >
    /// RenewDeadline > JitterFactor·RetryPeriod (1.2·RP), all positive. They
    /// do not by themselves keep one leader at a time: that takes clock
    /// rates within [`clock_tolerance`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: &str| Err(ConfigError(s.into()));
        if !self.keep {
            return if self.rank_ms == 0 { bad("rank_ms must be positive") } else { Ok(()) };
        }
        if self.retry_period_ms == 0 {
            return bad("retry_period_ms must be positive");
        }
        // RD > 1.2·RP, in whole numbers: 10·RD > 12·RP (u128: no overflow).
        if u128::from(self.renew_deadline_ms) * 10
            <= u128::from(self.retry_period_ms) * u128::from(JITTER_FACTOR_TENTHS)
        {
            return bad("renew_deadline_ms must be above 1.2 × retry_period_ms (client-go's JitterFactor: a holder \
                        must get to retry within a round)");
        }
        if self.lease_duration_ms <= self.renew_deadline_ms {
            return bad("lease_duration_ms must be above renew_deadline_ms (or two nodes may lead at once)");
        }
        Ok(())
    }
}

impl Default for LeaseConfig {
    /// [`LeaseConfig::LOOPBACK`].
    fn default() -> Self {
        LeaseConfig::LOOPBACK
    }
}

/// The operation in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum InFlight {
    Get,
    /// A write that makes the node lead only while the deadline in `slot`
    /// runs (its own under [`RenewFrom::Send`], its round's under
    /// [`RenewFrom::Round`]); `None`: an acquisition under
    /// [`RenewFrom::Round`], or a one-shot write, which has none.
    Put {
        slot: Option<u8>,
    },
    /// The release (no deadline: the node no longer leads).
    Release,
}

/// The record a node saw last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Observed {
    revision: u64,
    record: Option<LeaseRecord>,
}

/// One node of the lease election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    id: u64,
    cfg: LeaseConfig,
    /// One-shot: whom the holder notifies.
    peers: Peers,
    /// How many nodes are better-ranked (one-shot first tries).
    rank: u64,
    awake: bool,
    /// The tag of the latest operation.
    seq: u32,
    in_flight: Option<InFlight>,
    observed: Observed,
    /// The observed record has not changed for LeaseDuration.
    expired: bool,
    /// The deadline slot the node leads on (under [`RenewFrom::Round`], 0:
    /// it runs during a renewal round only).
    active: Option<u8>,
    /// Which deadline slots run.
    running: [bool; 2],
    /// One-shot: decided, nothing more to do.
    done: bool,
    leaving: bool,
    /// The node's random bits (from the driver) and its next jitter draw, below [`DRAWS`].
    coin: u64,
    draw: u8,
    reports: Reports,
}

impl Lease {
    /// An asleep one-shot node ([`LeaseConfig::ONE_SHOT`]): the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        Lease::with_config(c, LeaseConfig::ONE_SHOT)
    }

    /// An asleep node with the given timing.
    pub fn with_config(c: &NodeContext, cfg: LeaseConfig) -> Self {
        let peers = Peers::new(c);
        let rank = peers.iter().filter(|&&p| c.rule.beats(p, c.id)).count() as u64;
        Lease {
            id: c.id,
            cfg,
            peers,
            rank,
            awake: false,
            seq: 0,
            in_flight: None,
            observed: Observed { revision: 0, record: None },
            expired: false,
            active: None,
            running: [false; 2],
            done: false,
            leaving: false,
            coin: c.coin,
            draw: 0,
            reports: Reports::default(),
        }
    }

    /// Does the node lead now?
    pub fn leading(&self) -> bool {
        self.active.is_some()
    }

    /// What this node believes now.
    pub fn leadership(&self) -> Leadership {
        let record = self.observed.record;
        let term = record.map_or(0, |r| r.transitions.saturating_add(1));
        let leader = match record {
            Some(r) if r.holder == self.id => self.leading().then_some(self.id),
            Some(r) if r.holder != 0 && !self.expired => Some(r.holder),
            _ => None,
        };
        Leadership { term, leader }
    }

    fn announce(&mut self, out: &mut Outbox) {
        let l = self.leadership();
        self.reports.announce(l, out);
        match l.leader {
            Some(leader) if leader == self.id => self.reports.decide_once(Role::Leader, leader, out),
            Some(leader) => self.reports.decide_once(Role::Follower, leader, out),
            None => {}
        }
        if !self.cfg.keep && l.leader.is_some() && !self.done {
            self.done = true;
            if l.leader == Some(self.id) {
                self.peers.broadcast(Msg::Notify { leader: self.id }, out);
            }
        }
    }

    /// Send `op` with a fresh tag, and give it RetryPeriod to be answered.
    fn issue(&mut self, what: InFlight, op: impl FnOnce(u32) -> StoreOp, out: &mut Outbox) {
        self.seq = self.seq.wrapping_add(1);
        self.in_flight = Some(what);
        out.push(Effect::Store(op(self.seq)));
        out.push(Effect::SetTimer { timer: OP_TIMER, after_ms: self.cfg.retry_period_ms });
    }

    /// A renewal round starts (client-go's `renew`: each round has
    /// RenewDeadline): its deadline runs in slot 0, unless a round runs.
    fn start_round(&mut self, out: &mut Outbox) {
        let round = self.cfg.keep && self.cfg.renew_from == RenewFrom::Round;
        if round && self.leading() && !self.running[0] {
            self.running[0] = true;
            out.push(Effect::SetTimer { timer: DEADLINE_TIMERS[0], after_ms: self.cfg.renew_deadline_ms });
        }
    }

    /// One try: read, or (a holder that knows its revision) renew at once.
    fn try_now(&mut self, out: &mut Outbox) {
        if self.in_flight.is_some() || self.done {
            return;
        }
        let mine = self.observed.record.is_some_and(|r| r.holder == self.id);
        if mine && !self.leaving && self.cfg.keep {
            self.write(out);
        } else {
            self.issue(InFlight::Get, |seq| StoreOp::Get { seq }, out);
        }
    }

    /// Write this node as holder over the observed record, starting the
    /// write's renew deadline in the slot the current lease does not use.
    fn write(&mut self, out: &mut Outbox) {
        let old = self.observed.record;
        let acquire = old.is_none_or(|r| r.holder != self.id);
        let transitions = match old {
            Some(r) if acquire => r.transitions.saturating_add(1),
            Some(r) => r.transitions,
            None => 0,
        };
        let record = LeaseRecord { holder: self.id, duration_ms: self.cfg.lease_duration_ms, transitions };
        let slot = match self.cfg.renew_from {
            _ if !self.cfg.keep => None,
            RenewFrom::Round => self.active,
            RenewFrom::Send => {
                let slot = if self.active == Some(0) { 1 } else { 0 };
                self.running[slot as usize] = true;
                out.push(Effect::SetTimer {
                    timer: DEADLINE_TIMERS[slot as usize],
                    after_ms: self.cfg.renew_deadline_ms,
                });
                Some(slot)
            }
        };
        let expect = self.observed.revision;
        self.issue(InFlight::Put { slot }, |seq| StoreOp::Put { seq, expect, record, acquire }, out);
    }

    /// Stop the deadline in `slot`.
    fn stop_slot(&mut self, slot: u8, out: &mut Outbox) {
        if std::mem::take(&mut self.running[slot as usize]) {
            out.push(Effect::CancelTimer { timer: DEADLINE_TIMERS[slot as usize] });
        }
    }

    /// Stop leading (the lease's deadline stops with it).
    fn step_down(&mut self, out: &mut Outbox) {
        if let Some(slot) = self.active.take() {
            self.stop_slot(slot, out);
        }
    }

    /// Take in the record as of `revision`: a change restarts the expiry,
    /// for the lease duration the record carries (client-go's
    /// `observedTime + LeaseDurationSeconds`: the holder's promise).
    fn observe(&mut self, revision: u64, record: Option<LeaseRecord>, out: &mut Outbox) {
        if revision != self.observed.revision || record != self.observed.record {
            self.observed = Observed { revision, record };
            self.expired = false;
            if self.cfg.keep {
                let after_ms = record.map_or(self.cfg.lease_duration_ms, |r| r.duration_ms.min(MAX_RECORD_DURATION_MS));
                out.push(Effect::SetTimer { timer: EXPIRE_TIMER, after_ms });
            }
        }
        if record.is_none_or(|r| r.holder != self.id) {
            self.step_down(out);
        }
    }

    /// After a read (or a lost compare-and-swap): take the record if it is
    /// free, ours or expired, else wait for the next try.
    fn decide_after_read(&mut self, out: &mut Outbox) {
        let free = match self.observed.record {
            None => true,
            Some(r) => r.holder == 0 || r.holder == self.id || self.expired,
        };
        if free && !self.leaving && !self.done {
            self.write(out);
        } else {
            self.retry_later(out);
        }
    }

    /// The next try: a holder's a RetryPeriod later (client-go's renew
    /// loop), any other node's a RetryPeriod plus a jitter draw later
    /// (client-go's acquire loop, `JitterUntil` with JitterFactor 1.2).
    fn retry_later(&mut self, out: &mut Outbox) {
        if self.done {
            return;
        }
        let after_ms = if self.leading() { self.cfg.retry_period_ms } else { self.jittered_wait() };
        out.push(Effect::SetTimer { timer: RETRY_TIMER, after_ms });
    }

    /// RetryPeriod plus a draw in [0, 1.2·RetryPeriod): the i-th draw is
    /// `coin(node's coin, i mod 8)`, so the simulator and a live node draw
    /// alike for one seed and the state stays finite.
    fn jittered_wait(&mut self) -> u64 {
        let draw = super::coin(self.coin, u32::from(self.draw));
        self.draw = (self.draw + 1) % DRAWS;
        self.cfg.retry_period_ms.saturating_add(draw % jitter_spread_ms(self.cfg.retry_period_ms))
    }

    fn answered(&mut self, reply: StoreReply, out: &mut Outbox) {
        let Some(what) = self.in_flight.filter(|_| reply.seq() == self.seq) else { return };
        self.in_flight = None;
        out.push(Effect::CancelTimer { timer: OP_TIMER });
        match (what, reply) {
            (InFlight::Put { slot }, StoreReply::Done { written: true, revision, record, .. }) => {
                self.observe(revision, record, out);
                self.written(slot, out);
            }
            (InFlight::Put { .. }, StoreReply::Done { revision, record, .. }) => {
                self.give_up(what, out);
                self.observe(revision, record, out);
                self.announce(out);
                self.decide_after_read(out);
            }
            (InFlight::Get, StoreReply::Done { revision, record, .. }) => {
                self.observe(revision, record, out);
                self.announce(out);
                self.decide_after_read(out);
            }
            (InFlight::Release, StoreReply::Done { revision, record, .. }) => {
                self.observe(revision, record, out);
                self.announce(out);
                match record {
                    // A renewal sent before the leave landed first: release that revision.
                    Some(r) if r.holder == self.id => self.release(out),
                    _ => self.retry_later(out),
                }
            }
            (_, StoreReply::Failed { .. }) => {
                self.give_up(what, out);
                self.retry_later(out);
            }
        }
    }

    /// A write whose deadline ran in `slot` was written: the node leads
    /// (unless that deadline passed), and tries again as its mode says.
    fn written(&mut self, slot: Option<u8>, out: &mut Outbox) {
        let acquired = slot.is_none() && !self.leading();
        if slot.is_none_or(|s| self.running[s as usize]) {
            match self.cfg.renew_from {
                // The round succeeded: its deadline stops; the next round
                // starts a RetryPeriod from now.
                RenewFrom::Round => {
                    self.stop_slot(0, out);
                    self.active = Some(0);
                }
                RenewFrom::Send => {
                    let slot = slot.unwrap_or(0);
                    if let Some(old) = self.active.filter(|&a| a != slot) {
                        self.stop_slot(old, out);
                    }
                    self.active = Some(slot);
                }
            }
        }
        self.announce(out);
        if acquired && self.leading() && self.cfg.keep && self.cfg.renew_from == RenewFrom::Round {
            // client-go's `renew` begins as `acquire` returns: a round at once.
            self.start_round(out);
            self.try_now(out);
        } else {
            self.retry_later(out);
        }
    }

    /// Write the observed record, which names this node, with no holder.
    fn release(&mut self, out: &mut Outbox) {
        let Some(record) = self.observed.record else { return };
        let (expect, released) = (self.observed.revision, LeaseRecord { holder: 0, ..record });
        self.issue(InFlight::Release, |seq| StoreOp::Put { seq, expect, record: released, acquire: false }, out);
    }

    /// The operation `what` failed, lost or got no answer: a write's
    /// deadline, unless the node leads on it, stops.
    fn give_up(&mut self, what: InFlight, out: &mut Outbox) {
        if let InFlight::Put { slot: Some(slot) } = what
            && self.active != Some(slot)
        {
            self.stop_slot(slot, out);
        }
    }
}

impl Lease {
    fn start(&mut self, out: &mut Outbox) {
        if self.awake {
            return;
        }
        self.awake = true;
        self.announce(out);
        match self.rank * self.cfg.rank_ms {
            after if after > 0 && !self.cfg.keep => {
                out.push(Effect::SetTimer { timer: RETRY_TIMER, after_ms: after });
            }
            _ => self.try_now(out),
        }
    }

    /// One-shot: the holder's `Notify`. Kept, no node sends anything: every
    /// message is refused (an implausible term first, as every kept
    /// algorithm does).
    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        super::check_term(NAME, &msg)?;
        if let (Msg::Notify { leader }, false) = (msg, self.cfg.keep) {
            let from = self.peers.sender(port)?;
            if from != leader || leader == self.id {
                return Err(super::kept::invalid(NAME, msg, from, self.id, self.state()));
            }
            if !self.done {
                self.awake = true;
                let record = LeaseRecord { holder: leader, duration_ms: self.cfg.lease_duration_ms, transitions: 0 };
                self.observed.record = Some(record);
                self.announce(out);
            }
            return Ok(());
        }
        Err(AlgoError::UnexpectedKind { algorithm: NAME, kind: msg.kind().name() })
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        match timer {
            RETRY_TIMER => {
                self.start_round(out);
                self.try_now(out);
            }
            EXPIRE_TIMER => {
                self.expired = true;
                self.announce(out);
            }
            // A holder tries again at once (its round's poll is due); any
            // other node waits as after a failed try (client-go's sliding
            // `JitterUntil`: the wait starts when the try ends).
            OP_TIMER => {
                if let Some(what) = self.in_flight.take() {
                    self.give_up(what, out);
                    if self.leading() { self.try_now(out) } else { self.retry_later(out) }
                }
            }
            t => {
                let Some(slot) = DEADLINE_TIMERS.iter().position(|&d| d == t) else { return };
                self.running[slot] = false;
                if self.active == Some(slot as u8) {
                    self.active = None;
                    self.announce(out);
                }
            }
        }
    }

    fn leave(&mut self, _suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) {
            return false;
        }
        let held = self.leading();
        self.step_down(out);
        if let Some(slot) = self.running.iter().position(|&r| r) {
            self.stop_slot(slot as u8, out);
        }
        self.announce(out);
        if !held || self.observed.record.is_none_or(|r| r.holder != self.id) {
            return false;
        }
        // The operation in flight (a renewal) is given up: its answer is
        // ignored, and if it lands first the release is written again.
        out.push(Effect::CancelTimer { timer: RETRY_TIMER });
        self.release(out);
        true
    }

    fn store_reply(&mut self, reply: StoreReply, out: &mut Outbox) {
        if self.awake {
            self.answered(reply, out);
        }
    }
}

impl Algorithm for Lease {
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
            Input::StoreReply(reply) => self.store_reply(reply, out),
            Input::Suspect { .. } | Input::Heartbeat { .. } | Input::Restore(_) => {}
        }
        Ok(())
    }


    fn state(&self) -> &'static str {
        match self.leadership().leader {
            _ if !self.awake => "asleep",
            _ if self.leaving => "leaving",
            Some(l) if l == self.id => "leader",
            Some(_) => "follower",
            None => "candidate",
        }
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
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
mod tests;
