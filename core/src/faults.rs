//! Faults: what the controller injects and every driver applies in its
//! transport layer, so the simulator and the live runtime fail alike.
//!
//! A [`Fault`] names nodes by overlay position. A [`FaultPlan`] is a list of
//! faults, each switched on at a time (virtual time units in the simulator,
//! milliseconds live), or that long after an event of the election (a
//! [`Trigger`]), and carrying the seed of its random choices, so a run
//! replays exactly. [`validate`] checks a fault against the size of the
//! overlay and names the field at fault, as the controller's API reports it.
//!
//! # Selectors
//!
//! A link fault selects messages by sending node (`from`), receiving node
//! (`to`), message kind ([`LinkFault::kind`], a [`MsgKind`]; heartbeats are a
//! kind too) and position in the stream ([`LinkFault::nth`]): with `nth = k`
//! the fault only touches the k-th message that matches `from`, `to` and
//! `kind` on each directed link it selects, counted from when the fault takes
//! effect, per link and per fault. Every message sent on a link while the
//! fault is in force counts, whatever happens to it afterwards (including
//! messages a partition or a crashed receiver then loses); messages a crashed
//! sender never sends do not.
//!
//! # Triggers
//!
//! [`Scheduled::after`] makes a fault wait for an event of the election
//! instead of a time: it takes effect `at` after the event. The events
//! ([`Trigger`]): a node announces that it leads (a kept [`crate::protocol::Effect::Lead`]
//! naming itself, or a one-shot leader decision); the election and
//! notification messages sent (heartbeats excluded) reach a count; a node
//! claims to lead a term of at least a given number. A trigger fires once;
//! a fault whose event never comes never takes effect. The simulator sees
//! each event at its exact instant; live, the controller watches the
//! election's reports (every 10 ms: leadership events as the nodes send
//! them, message counts from the nodes' `Status`), so a live fault lands a
//! few milliseconds after its event, and a message count may be overshot
//! by the messages sent meanwhile.
//!
//! # Precedence: later faults win
//!
//! Faults take effect in time order (`at`; faults of one time in plan order)
//! and a later fault overrides an earlier one where they overlap:
//!
//! * **Link faults.** A message from `a` to `b` of kind `k` meets the
//!   *latest* link fault whose selector matches it (`from` is `None` or `a`,
//!   `to` is `None` or `b`, `kind` is `None` or `k`, and `nth` is 0 or the
//!   message is the nth that fault counted on that link), and only that one:
//!   faults are not combined. A later fault on the same selector therefore
//!   replaces the earlier one, a later kind-less fault shadows an earlier
//!   kind-specific one on the links it selects, while a later kind-specific
//!   fault leaves the earlier kind-less one in force for the other kinds. An
//!   nth-selected fault only decides its one message per link: the messages
//!   before and after it meet the earlier faults. A fault with no effect (no
//!   drop, delay, duplicate or reorder, [`LinkFault::has_effect`]) and
//!   `nth = 0` clears the links (and kind) it selects:
//!   `Link { from: None, to: None, fault: LinkFault::default() }` clears
//!   every link fault.
//! * **Partitions.** A partition replaces the previous one; a partition with
//!   one group holding every node heals the network.
//! * **Crashes.** `Crash` of a node that is down and `Recover` of a node that
//!   is up do nothing (the simulator logs them).
//!
//! # Seeds
//!
//! Each scheduled fault draws its random choices (drop, jitter, duplicate,
//! reorder, in that order, per message it applies to) from its own generator
//! seeded with its `seed`. Adding a fault therefore changes neither the
//! scheduler's choices nor another fault's; a probability of 0 or 1 draws
//! nothing.
//!
//! # One rule for both drivers
//!
//! [`LinkRule`] is the one implementation of all of the above for a link
//! fault in force: the selector, the nth counting, the precedence
//! ([`count_all`], [`decide`]) and the random draws ([`LinkRule::fate`]). The simulator keys
//! it by overlay position, the gRPC runtime by peer address; both seed it
//! with [`LinkRule::new`], so a fault with the same seed meeting the same
//! messages decides the same fates in both.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashSet};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::protocol::MsgKind;

/// Largest extra delay a link fault gives a message (about 35 years of
/// milliseconds), so that no clock can overflow.
pub const MAX_FAULT_DELAY: u64 = 1 << 40;

/// What a link fault does to one message it decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkFate {
    /// Lost.
    Drop,
    /// Delivered after `extra_delay_ms` more than usual, twice if
    /// `duplicate`; `reorder` lets it overtake earlier messages of a FIFO link.
    Send {
        /// Extra delay: `delay_ms + uniform(0..=jitter_ms)`, at most [`MAX_FAULT_DELAY`].
        extra_delay_ms: u64,
        /// Delivered a second time.
        duplicate: bool,
        /// Exempt from FIFO order.
        reorder: bool,
    },
}

/// A link fault in force, keyed by `A` (an overlay position in the
/// simulator, a peer address in the runtime): its selector, its nth counts
/// per directed link and its own random generator. Messages are judged by a
/// borrowed key `Q` (`u32`, or `str` for a `String` address), so judging
/// allocates nothing unless an nth selector counts a new link.
#[derive(Clone, Debug)]
pub struct LinkRule<A> {
    /// Only messages sent by this node (`None`: any).
    pub from: Option<A>,
    /// Only messages sent to this node (`None`: any).
    pub to: Option<A>,
    /// What it does, to which kind, and `nth`.
    pub fault: LinkFault,
    rng: Pcg64Mcg,
    /// With `nth > 0`: messages counted so far per directed link (from, to).
    counts: BTreeMap<(A, A), u64>,
    /// Whether the message being judged is this rule's nth (set by [`LinkRule::count`]).
    hit: bool,
}

impl<A: Ord + Clone> LinkRule<A> {
    /// A rule in force from now, drawing from a generator seeded by `seed`
    /// (the fault's own seed, as both drivers receive it).
    pub fn new(from: Option<A>, to: Option<A>, fault: LinkFault, seed: u64) -> Self {
        let rng = Pcg64Mcg::seed_from_u64(seed ^ 0x6661_756c_7473);
        LinkRule { from, to, fault, rng, counts: BTreeMap::new(), hit: false }
    }

    /// Go on counting and drawing where `old` (the same fault, pushed again) was.
    pub fn continue_from(&mut self, old: &mut LinkRule<A>) {
        self.counts = std::mem::take(&mut old.counts);
        self.rng = old.rng.clone();
    }

    /// Does the message selector (links and kind, not `nth`) match?
    #[inline]
    pub fn selects<Q>(&self, from: &Q, to: &Q, kind: MsgKind) -> bool
    where
        A: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.from.as_ref().is_none_or(|f| f.borrow() == from)
            && self.to.as_ref().is_none_or(|t| t.borrow() == to)
            && self.fault.kind.is_none_or(|k| k == kind)
    }

    /// Count a message sent from `from` to `to` if the selector matches;
    /// remember whether it is the nth.
    #[inline]
    pub fn count<Q>(&mut self, from: &Q, to: &Q, kind: MsgKind)
    where
        A: Borrow<Q>,
        Q: Ord + ToOwned<Owned = A> + ?Sized,
    {
        self.hit = false;
        if self.fault.nth > 0 && self.selects(from, to, kind) {
            let c = self.counts.entry((from.to_owned(), to.to_owned())).or_default();
            *c += 1;
            self.hit = *c == self.fault.nth;
        }
    }

    /// Does the rule decide this message ([`LinkRule::count`] first)?
    #[inline]
    pub fn matches<Q>(&self, from: &Q, to: &Q, kind: MsgKind) -> bool
    where
        A: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.selects(from, to, kind) && (self.fault.nth == 0 || self.hit)
    }

    /// Does this rule decide every message `other` would (so `other` can
    /// go)? Only a fault on every message (`nth = 0`) can, on the same or
    /// wider links, of `other`'s kind or of every kind.
    pub fn covers(&self, other: &LinkRule<A>) -> bool {
        self.fault.nth == 0
            && (self.from.is_none() || self.from == other.from)
            && (self.to.is_none() || self.to == other.to)
            && (self.fault.kind.is_none() || self.fault.kind == other.fault.kind)
    }

    /// The fate of one message this rule decides. Draws in the order drop,
    /// jitter, duplicate, reorder, each only where it can go either way (a
    /// probability of 0 or 1, or no jitter, draws nothing).
    #[inline]
    pub fn fate(&mut self) -> LinkFate {
        let f = self.fault;
        if chance(&mut self.rng, f.drop) {
            return LinkFate::Drop;
        }
        let jitter = if f.jitter_ms > 0 { self.rng.random_range(0..=f.jitter_ms) } else { 0 };
        let extra_delay_ms = f.delay_ms.saturating_add(jitter).min(MAX_FAULT_DELAY);
        let duplicate = chance(&mut self.rng, f.duplicate);
        let reorder = chance(&mut self.rng, f.reorder);
        LinkFate::Send { extra_delay_ms, duplicate, reorder }
    }
}

/// Count one message sent from `from` to `to` on every rule in force (every
/// message sent counts towards nth selectors, whatever becomes of it: call
/// this before a partition or a crashed receiver loses it).
#[inline]
pub fn count_all<A, Q>(rules: &mut [LinkRule<A>], from: &Q, to: &Q, kind: MsgKind)
where
    A: Ord + Clone + Borrow<Q>,
    Q: Ord + ToOwned<Owned = A> + ?Sized,
{
    for r in rules.iter_mut() {
        r.count(from, to, kind);
    }
}

/// The fate of a message [`count_all`] counted: the latest rule in force
/// (rules are kept oldest first) that matches it decides, and only that one.
/// `None`: no rule decides it.
#[inline]
pub fn decide<A, Q>(rules: &mut [LinkRule<A>], from: &Q, to: &Q, kind: MsgKind) -> Option<LinkFate>
where
    A: Ord + Clone + Borrow<Q>,
    Q: Ord + ?Sized,
{
    rules.iter_mut().rev().find(|r| r.matches(from, to, kind)).map(LinkRule::fate)
}

/// Draw an event of probability `p` (0 and 1 draw nothing).
#[inline]
fn chance(rng: &mut Pcg64Mcg, p: f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        rng.random::<f64>() < p
    }
}

/// What goes wrong on the links a [`Fault::Link`] selects, and which of
/// their messages it selects (`kind`, `nth`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkFault {
    /// Probability in [0, 1] that a message is lost.
    pub drop: f64,
    /// Fixed extra delay of every message.
    pub delay_ms: u64,
    /// Extra delay drawn uniformly from `0..=jitter_ms` per message.
    pub jitter_ms: u64,
    /// Probability in [0, 1] that a message is delivered twice.
    pub duplicate: f64,
    /// Probability in [0, 1] that a message may overtake earlier ones on its
    /// link (FIFO order is kept otherwise).
    pub reorder: f64,
    /// Only messages of this kind (`None`: every kind, heartbeats included).
    pub kind: Option<MsgKind>,
    /// Only the nth matching message (1-based) on each selected link,
    /// counted from when the fault takes effect; 0 = every message.
    pub nth: u64,
}

impl LinkFault {
    /// Does the fault do anything to the messages it selects? One that does
    /// not (and has `nth = 0`) clears the link faults it shadows.
    pub fn has_effect(&self) -> bool {
        self.drop > 0.0 || self.delay_ms > 0 || self.jitter_ms > 0 || self.duplicate > 0.0 || self.reorder > 0.0
    }
}

/// The message kind called `name` (as [`MsgKind::name`] spells it), or the
/// error naming `field` and listing the valid names. An empty name is `None`:
/// every kind.
pub fn kind_named(field: &'static str, name: &str) -> Result<Option<MsgKind>, FaultError> {
    if name.is_empty() {
        return Ok(None);
    }
    MsgKind::ALL.iter().copied().find(|k| k.name() == name).map(Some).ok_or_else(|| {
        let names: Vec<&str> = MsgKind::ALL.iter().map(|k| k.name()).collect();
        bad(field, format!("unknown message kind `{name}`; kinds: {}", names.join(", ")))
    })
}

/// The event a [`Scheduled`] fault waits for (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// A node first announces that it leads.
    LeaderElected,
    /// The election and notification messages sent reach this count (≥ 1).
    Messages(u64),
    /// A node first claims to lead a term of at least this (≥ 1).
    Term(u64),
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trigger::LeaderElected => write!(f, "a leader is elected"),
            Trigger::Messages(k) => write!(f, "{k} election messages were sent"),
            Trigger::Term(t) => write!(f, "a leader of term {t} or more appears"),
        }
    }
}

/// One fault.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// The node stops handling messages and timers; messages to it are lost
    /// (those it sent before still arrive); its pending timers are void.
    Crash {
        /// Position of the node.
        node: u32,
    },
    /// Whoever leads at the time the fault fires crashes: the live node whose
    /// latest kept leadership names itself (the highest term if several), or
    /// else a live node that decided to lead a one-shot election. Nothing
    /// happens when no node leads.
    CrashLeader,
    /// Whoever leads (as for [`Fault::CrashLeader`]) is about to stop on
    /// purpose and hands its leadership over ([`Input::Leave`]); it
    /// keeps running (a later crash stops it), as a node does between
    /// SIGTERM and its exit. Nothing happens when no node leads.
    ///
    /// [`Input::Leave`]: crate::protocol::Input::Leave
    LeaveLeader,
    /// Whoever leads (as for [`Fault::CrashLeader`]) is cut off from every
    /// other node: a [`Fault::Partition`] of it alone and the rest. Nothing
    /// happens when no node leads.
    CutOffLeader,
    /// Whoever leads (as for [`Fault::CrashLeader`]): its clock runs at
    /// `rate` times real time from now on, as [`Fault::Clock`]. Nothing
    /// happens when no node leads.
    LeaderClock {
        /// Within [`MIN_CLOCK_RATE`]..=[`MAX_CLOCK_RATE`].
        rate: f64,
    },
    /// Whoever leads (as for [`Fault::CrashLeader`]) pauses for `ms`, as
    /// [`Fault::Pause`]. Nothing happens when no node leads.
    PauseLeader {
        /// Within 1..=[`MAX_PAUSE_MS`].
        ms: u64,
    },
    /// A crashed node comes back with fresh state (a new incarnation, built
    /// from its original context and woken as an initiator).
    Recover {
        /// Position of the node.
        node: u32,
    },
    /// Messages sent on the links from `from` to `to` (`None` = every node)
    /// from `at` on; the latest matching link fault wins (see the module docs).
    Link {
        /// Sending position, or every node.
        from: Option<u32>,
        /// Receiving position, or every node.
        to: Option<u32>,
        /// What happens to them.
        fault: LinkFault,
    },
    /// Messages sent between different groups are lost; a node in no group
    /// forms a group of its own. Replaces the previous partition; one group
    /// of every node heals it.
    Partition {
        /// Disjoint groups of positions.
        groups: Vec<Vec<u32>>,
    },
    /// The node's clock runs at `rate` times real time from now on: a timer
    /// of d ms it sets fires after d / `rate` (0.5: its clock runs slow and
    /// its timers take twice as long), the rest of a pending timer too. A
    /// rate of 1 restores it. Only timers: nobody reads a clock otherwise.
    Clock {
        /// Position of the node.
        node: u32,
        /// Within [`MIN_CLOCK_RATE`]..=[`MAX_CLOCK_RATE`].
        rate: f64,
    },
    /// The node pauses for `ms` (a GC pause, SIGSTOP, a VM stall): it takes
    /// no step. Messages and store answers that reach it are held in arrival
    /// order (at most [`MAX_HELD`]; beyond, dropped and counted), timers that
    /// come due are deferred; it sends nothing. When the pause ends, first
    /// every deferred timer fires (in deadline order), then the held input
    /// is handed over in arrival order. Its beliefs stay as they were until
    /// those steps change them. Another pause of a paused node extends it
    /// (to the later end); a crash drops what was held.
    Pause {
        /// Position of the node.
        node: u32,
        /// Within 1..=[`MAX_PAUSE_MS`].
        ms: u64,
    },
    /// Simulator only: `msg` reaches `node` on `port` as if the neighbour
    /// behind it had sent it: what a member holding the peer token could
    /// forge. Nothing counts it as sent; a refusal lands in the report's
    /// errors like any other.
    Forge {
        /// Receiving position.
        node: u32,
        /// The port it arrives on.
        port: u32,
        /// The forged message.
        msg: crate::protocol::Msg,
    },
    /// Simulator only, for algorithms that keep a record in a store
    /// (`lease`): the operations of `node` (every node when `None`) and the
    /// store's answers to them are lost while `cut`, and otherwise take
    /// `delay_ms` more each way (a slow store, or a slow path to it). The
    /// latest store fault for a node wins; `cut: false, delay_ms: 0` heals.
    Store {
        /// Position of the node, or every node.
        node: Option<u32>,
        /// Cut off from the store.
        cut: bool,
        /// Extra delay each way, in ms (at most [`MAX_FAULT_DELAY`]).
        delay_ms: u64,
    },
}

/// A fault switched on at `at` (virtual time units in the simulator,
/// milliseconds after the election's start live), or `at` after the event
/// `after`, with its own seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    /// When it takes effect: from the start, or after the event.
    pub at: u64,
    /// The seed of its random choices (drop, jitter, duplicate, reorder).
    pub seed: u64,
    /// The fault.
    pub fault: Fault,
    /// Wait for this event, then `at` more (`None`: `at` from the start).
    pub after: Option<Trigger>,
}

impl Scheduled {
    /// `fault` at time `at`, drawing from `seed`.
    pub fn new(at: u64, seed: u64, fault: Fault) -> Self {
        Scheduled { at, seed, fault, after: None }
    }

    /// The same fault, `at` after `trigger` instead.
    pub fn after(self, trigger: Trigger) -> Self {
        Scheduled { after: Some(trigger), ..self }
    }
}

/// The faults of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    /// In any order; applied by time.
    pub faults: Vec<Scheduled>,
}

/// A fault refused, naming the request field at fault (as the API reports it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FaultError {
    /// The field, e.g. `link.drop` or `partition.groups`.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

fn bad(field: &'static str, reason: impl Into<String>) -> FaultError {
    FaultError { field, reason: reason.into() }
}

fn probability(field: &'static str, p: f64) -> Result<(), FaultError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(bad(field, format!("{p} is not a probability in [0, 1]")));
    }
    Ok(())
}

fn position(field: &'static str, p: u32, n: u32) -> Result<(), FaultError> {
    if p >= n {
        return Err(bad(field, format!("node {p} is not a position of this overlay (0..{n})")));
    }
    Ok(())
}

/// The longest [`Fault::Pause`]: ten minutes.
pub const MAX_PAUSE_MS: u64 = 600_000;

/// Most inputs a paused node holds (per election, live).
pub const MAX_HELD: usize = 4_096;

/// Check a pause length (`field` names it): within 1..=[`MAX_PAUSE_MS`].
pub fn pause_ms(field: &'static str, ms: u64) -> Result<(), FaultError> {
    if !(1..=MAX_PAUSE_MS).contains(&ms) {
        return Err(bad(field, format!("{ms} ms; a pause lasts 1..={MAX_PAUSE_MS} ms")));
    }
    Ok(())
}

/// The slowest clock a [`Fault::Clock`] sets: a tenth of real time.
pub const MIN_CLOCK_RATE: f64 = 0.1;
/// The fastest clock a [`Fault::Clock`] sets: ten times real time.
pub const MAX_CLOCK_RATE: f64 = 10.0;

/// Check a clock rate (`field` names it): within [`MIN_CLOCK_RATE`]..=[`MAX_CLOCK_RATE`].
pub fn clock_rate(field: &'static str, rate: f64) -> Result<(), FaultError> {
    if !(MIN_CLOCK_RATE..=MAX_CLOCK_RATE).contains(&rate) {
        return Err(bad(
            field,
            format!(
                "{rate} is outside {MIN_CLOCK_RATE}..={MAX_CLOCK_RATE} (times real time; 0.5 = a clock at half speed)"
            ),
        ));
    }
    Ok(())
}

/// A timer of `after_ms` by a clock that runs at `rate` times real time, in real ms (at least 1).
pub fn at_rate(after_ms: u64, rate: f64) -> u64 {
    if rate == 1.0 { after_ms } else { ((after_ms as f64 / rate).round() as u64).max(1) }
}

/// Check `fault` against an overlay of `n` positions.
pub fn validate(fault: &Fault, n: u32) -> Result<(), FaultError> {
    match fault {
        Fault::Clock { node, rate } => {
            position("clock.node", *node, n)?;
            clock_rate("clock.rate", *rate)
        }
        Fault::Pause { node, ms } => {
            position("pause.node", *node, n)?;
            pause_ms("pause.ms", *ms)
        }
        Fault::Crash { node } => position("crash.node", *node, n),
        Fault::CrashLeader | Fault::LeaveLeader | Fault::CutOffLeader => Ok(()),
        Fault::LeaderClock { rate } => clock_rate("leader_clock", *rate),
        Fault::PauseLeader { ms } => pause_ms("pause_leader", *ms),
        Fault::Recover { node } => position("recover.node", *node, n),
        Fault::Forge { node, .. } => position("forge.node", *node, n),
        Fault::Store { node, delay_ms, .. } => {
            if let Some(p) = node {
                position("store.node", *p, n)?;
            }
            if *delay_ms > MAX_FAULT_DELAY {
                return Err(bad("store.delay_ms", format!("{delay_ms} ms is above {MAX_FAULT_DELAY} ms")));
            }
            Ok(())
        }
        Fault::Link { from, to, fault } => {
            if let Some(f) = from {
                position("link.from", *f, n)?;
            }
            if let Some(t) = to {
                position("link.to", *t, n)?;
            }
            if from.is_some() && from == to {
                return Err(bad("link.to", "a link joins two different nodes"));
            }
            probability("link.drop", fault.drop)?;
            probability("link.duplicate", fault.duplicate)?;
            probability("link.reorder", fault.reorder)?;
            if fault.nth > 0 && !fault.has_effect() {
                return Err(bad(
                    "link.nth",
                    "a fault on one message needs an effect (drop, delay_ms, jitter_ms, duplicate or reorder)",
                ));
            }
            Ok(())
        }
        Fault::Partition { groups } => {
            if groups.is_empty() {
                return Err(bad("partition.groups", "give at least one group"));
            }
            let mut seen = HashSet::new();
            for g in groups {
                if g.is_empty() {
                    return Err(bad("partition.groups", "a group is empty"));
                }
                for &p in g {
                    position("partition.groups", p, n)?;
                    if !seen.insert(p) {
                        return Err(bad("partition.groups", format!("node {p} is named twice")));
                    }
                }
            }
            Ok(())
        }
    }
}

/// Check a trigger: counts of 0 would be met before anything happens.
pub fn validate_trigger(t: &Trigger) -> Result<(), FaultError> {
    match t {
        Trigger::Messages(0) => Err(bad("after.messages", "count at least 1 message")),
        Trigger::Term(0) => Err(bad("after.term", "terms start at 1")),
        _ => Ok(()),
    }
}

impl FaultPlan {
    /// Check every fault (and trigger) against an overlay of `n` positions.
    pub fn validate(&self, n: u32) -> Result<(), FaultError> {
        self.faults.iter().try_for_each(|s| {
            validate(&s.fault, n)?;
            s.after.map_or(Ok(()), |t| validate_trigger(&t))
        })
    }
}

/// A node's time down: crashed at `crashed`, up again at `recovered`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    /// The node's position.
    pub position: u32,
    /// Time of the crash.
    pub crashed: u64,
    /// Time of the recovery, if any.
    pub recovered: Option<u64>,
}

impl Outage {
    /// Is the node down at `t` (a crash takes effect before the events of its instant)?
    pub fn covers(&self, t: u64) -> bool {
        self.crashed <= t && self.recovered.is_none_or(|r| t < r)
    }
}

/// A partition in force: its groups (a node in none is alone), from `from`
/// until the next partition replaced or healed it (`None`: to the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// When it took effect.
    pub from: u64,
    /// When it was replaced or healed.
    pub until: Option<u64>,
    /// Its groups of positions, as the fault gave them.
    pub groups: Vec<Vec<u32>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link rule draws in the documented order, drop, jitter, duplicate, reorder, from a generator
    /// seeded by the fault's seed, and draws nothing for a probability of 0 or 1: replaying the draws by
    /// hand from the same generator gives the same fates.
    #[test]
    fn link_rule_draws_drop_jitter_duplicate_reorder() {
        let fault =
            LinkFault { drop: 0.25, delay_ms: 3, jitter_ms: 20, duplicate: 0.5, reorder: 1.0, ..LinkFault::default() };
        let mut rule: LinkRule<u32> = LinkRule::new(None, None, fault, 42);
        let mut rng = Pcg64Mcg::seed_from_u64(42 ^ 0x6661_756c_7473);
        for i in 0..1_000 {
            let want = if rng.random::<f64>() < 0.25 {
                LinkFate::Drop
            } else {
                let jitter: u64 = rng.random_range(0..=20);
                let duplicate = rng.random::<f64>() < 0.5;
                // reorder = 1.0: true, no draw
                LinkFate::Send { extra_delay_ms: 3 + jitter, duplicate, reorder: true }
            };
            assert_eq!(rule.fate(), want, "message {i}");
        }
    }

    /// Faults naming unknown nodes, probabilities outside [0, 1], a link from a node to itself, and partitions
    /// with an empty group or a node named twice are refused naming the field; good faults pass.
    #[test]
    fn validation_names_the_field() {
        let field = |f: Fault| validate(&f, 4).unwrap_err().field;
        assert_eq!(field(Fault::Crash { node: 4 }), "crash.node");
        assert_eq!(field(Fault::Recover { node: 9 }), "recover.node");
        assert_eq!(field(Fault::Clock { node: 9, rate: 1.0 }), "clock.node");
        for rate in [0.0, 0.09, 10.5, f64::NAN, -1.0] {
            assert_eq!(field(Fault::Clock { node: 1, rate }), "clock.rate", "{rate}");
        }
        assert!(
            validate(&Fault::Clock { node: 1, rate: 0.1 }, 4).is_ok()
                && validate(&Fault::Clock { node: 1, rate: 10.0 }, 4).is_ok()
        );
        let link = |from, to, fault| Fault::Link { from, to, fault };
        assert_eq!(field(link(Some(5), None, LinkFault::default())), "link.from");
        assert_eq!(field(link(None, Some(4), LinkFault::default())), "link.to");
        assert_eq!(field(link(Some(1), Some(1), LinkFault::default())), "link.to");
        assert_eq!(field(link(None, None, LinkFault { drop: 1.5, ..LinkFault::default() })), "link.drop");
        assert_eq!(field(link(None, None, LinkFault { duplicate: -0.1, ..LinkFault::default() })), "link.duplicate");
        assert_eq!(field(link(None, None, LinkFault { reorder: f64::NAN, ..LinkFault::default() })), "link.reorder");
        assert_eq!(field(Fault::Partition { groups: vec![] }), "partition.groups");
        assert_eq!(field(Fault::Partition { groups: vec![vec![0], vec![]] }), "partition.groups");
        let twice = validate(&Fault::Partition { groups: vec![vec![0, 1], vec![1, 2]] }, 4).unwrap_err();
        assert!(twice.reason.contains("node 1 is named twice"), "{twice}");
        assert!(validate(&Fault::Partition { groups: vec![vec![0, 1], vec![2]] }, 4).is_ok());
        assert!(
            validate(&link(Some(0), None, LinkFault { drop: 1.0, delay_ms: 5, ..LinkFault::default() }), 4).is_ok()
        );
        assert!(validate(&Fault::CrashLeader, 4).is_ok());
    }

    /// Kind names resolve as `MsgKind::name` spells them (empty = every kind); an unknown name is refused naming
    /// the field and listing the valid names; an nth-selected fault without an effect and triggers that count to 0
    /// are refused naming `link.nth`, `after.messages` and `after.term`.
    #[test]
    fn selectors_and_triggers_are_checked() {
        assert_eq!(kind_named("link.kind", "coordinator"), Ok(Some(MsgKind::Coordinator)));
        assert_eq!(kind_named("link.kind", "heartbeat"), Ok(Some(MsgKind::Heartbeat)));
        assert_eq!(kind_named("link.kind", ""), Ok(None));
        let e = kind_named("link.kind", "Elected").unwrap_err();
        assert_eq!(e.field, "link.kind");
        assert!(e.reason.contains("`Elected`") && e.reason.contains("notify, ") && e.reason.contains("commit"), "{e}");
        let nth = |fault| Fault::Link { from: None, to: Some(1), fault };
        let e = validate(&nth(LinkFault { nth: 1, ..LinkFault::default() }), 4).unwrap_err();
        assert_eq!(e.field, "link.nth");
        assert!(validate(&nth(LinkFault { nth: 1, drop: 1.0, ..LinkFault::default() }), 4).is_ok());
        let plan = |t| FaultPlan { faults: vec![Scheduled::new(0, 0, Fault::CrashLeader).after(t)] };
        assert_eq!(plan(Trigger::Messages(0)).validate(4).unwrap_err().field, "after.messages");
        assert_eq!(plan(Trigger::Term(0)).validate(4).unwrap_err().field, "after.term");
        assert!(plan(Trigger::LeaderElected).validate(4).is_ok());
        assert!(plan(Trigger::Term(2)).validate(4).is_ok());
    }
}
