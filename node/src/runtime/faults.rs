//! The live fault layer: what this node does to its own traffic because the
//! controller injected a fault (`Agent.SetFaults` sets them all,
//! `Agent.ChangeFaults` one change).
//!
//! * **Crashed**: the node takes no messages (they are dropped on arrival),
//!   fires no timers, ignores `Start` and sends nothing, until the controller
//!   clears it. Its elections in flight keep their state (a live "recover" is
//!   a process that resumes, not a new incarnation).
//! * **Partitioned**: the node only sends to the peers of its group. Both
//!   sides apply their own group, so traffic is cut both ways.
//! * **Link rules**: for each message sent, the last rule that matches it
//!   decides: its `to` is empty or the peer, its `kind` empty or the
//!   message's kind, and with `nth = k` the message is the k-th to that peer
//!   matching `to` and `kind` since the rule arrived (every message sent
//!   while the node is up counts, whatever becomes of it; a rule that comes
//!   back with the same `fault_id` keeps its counts). The message is
//!   dropped with probability `drop`; otherwise sent once,
//!   or twice with probability `duplicate`, after `delay_ms + uniform(0..=jitter_ms)`.
//!   Delayed messages keep the link's FIFO order unless `reorder` lets one
//!   overtake. Each rule draws from its own generator seeded with its `seed`.
//!
//! * **Clock rate**: the node's timers run at `clock_rate` times real time
//!   (0.5: its clock runs at half speed); a change re-times the rest of
//!   every pending timer ([`sleep_by_clock`]).
//!
//! * **Paused** (`pause_ms`): for that long the node's elections take no
//!   step: what arrives (envelopes, store answers) is held in arrival order,
//!   at most [`MAX_HELD`] per election (beyond, dropped and counted), timers
//!   that come due are deferred, nothing new is sent. On resume the deferred
//!   timers fire first, in deadline order, then the held input is handed
//!   over in arrival order (`Election::resume`). The table keeps when the
//!   pause ends; the agent resumes the elections then ([`Resume`]). A new
//!   `pause_ms` replaces the end (the controller sends the latest end of the
//!   pauses it holds), `0` resumes at once; a crash drops what was held.
//!
//! **Scoped to one election.** Each election holds a table of its own
//! whose parent is the node's ([`FaultTable::scoped`]): the faults the
//! controller injected with an election id (`ElectionFaults`,
//! `ChangeFaultsRequest.election_id`). Its instance is crashed or paused when
//! either table says so; its messages meet its own rules first (a drop is
//! final), then the node's, and the delays add up; its timers run at its own
//! clock rate times the node's. The node's other elections do not see it,
//! and it goes with the election.
//!
//! The rules are the core's [`LinkRule`] (selector, nth counting, precedence
//! and the order of random draws), the very code the simulator runs, so a
//! fault with the same seed decides the same fates live and simulated.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use ringleader_proto::v1 as pb;

use ringleader_core::algo::MsgKind;
use ringleader_core::faults::{self, LinkFate, LinkFault, LinkRule, kind_named};

/// What happens to one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Lost.
    Drop,
    /// Sent `copies` times after `delay`; `reorder` lets it overtake earlier delayed messages.
    Send {
        /// 1, or 2 when duplicated.
        copies: u32,
        /// Extra delay.
        delay: Duration,
        /// May overtake.
        reorder: bool,
    },
}

/// Longest injected delay or jitter accepted (one day).
pub(crate) const MAX_DELAY_MS: u64 = 86_400_000;

/// Most link rules a node holds (every message sent is weighed against each):
/// as many as the controller's largest `max_faults`.
pub(crate) const MAX_RULES: usize = 4_096;

/// Longest pause accepted (ten minutes), as the controller's `pause.ms`;
/// most inputs one election holds while its node is paused.
pub(crate) use ringleader_core::faults::{MAX_HELD, MAX_PAUSE_MS};

/// A fault request this node refuses (INVALID_ARGUMENT), naming the field
/// at fault: nothing of the request is applied.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub(crate) struct FaultsError {
    /// The request field at fault, e.g. `links[0].drop` or `clock_rate`.
    pub(crate) field: String,
    /// What is wrong with it.
    pub(crate) problem: Problem,
}

/// What is wrong with a fault request's field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum Problem {
    /// A drop, duplicate or reorder probability outside [0, 1].
    #[error("{0} is not a probability in [0, 1]")]
    NotProbability(f64),
    /// A delay or jitter over [`MAX_DELAY_MS`].
    #[error("delays are at most {MAX_DELAY_MS} ms (a day)")]
    Delay,
    /// A pause over [`MAX_PAUSE_MS`].
    #[error("{0} ms; a pause lasts at most {MAX_PAUSE_MS} ms")]
    Pause(u64),
    /// More rules than [`MAX_RULES`] in a whole table.
    #[error("{0} rules; a node holds at most {MAX_RULES}")]
    Rules(usize),
    /// More rules than [`MAX_RULES`] once a change is made.
    #[error("{0} rules after the change; a node holds at most {MAX_RULES}")]
    RulesAfterChange(usize),
    /// A value the core's checks refuse (a clock rate, a message kind), as they say.
    #[error("{}", .0.reason)]
    Core(faults::FaultError),
}

impl FaultsError {
    fn new(field: impl Into<String>, problem: Problem) -> Self {
        FaultsError { field: field.into(), problem }
    }

    /// The same refusal of a request nested at `at` (e.g. `elections[2]`).
    pub(crate) fn within(self, at: &str) -> Self {
        FaultsError { field: format!("{at}.{}", self.field), ..self }
    }
}

/// What a request did to the pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PauseChange {
    /// Nothing.
    Unchanged,
    /// Paused (or a pause in force given a new end) until `until`: pause
    /// number `number` ends then ([`FaultTable::expire`]).
    Until {
        /// The pause's number.
        number: u64,
        /// When it ends.
        until: tokio::time::Instant,
    },
    /// The pause ended now: resume.
    Resume(Resume),
}

/// A pause that ended: from when to when, unix µs on this node's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resume {
    /// When it began.
    pub(crate) from_us: u64,
    /// When it ended.
    pub(crate) until_us: u64,
}

#[derive(Debug, Default)]
struct PauseState {
    /// The pause in force: its end, number and start (unix µs).
    until: Option<tokio::time::Instant>,
    number: u64,
    since_us: u64,
}

/// Unix time in microseconds.
pub(crate) fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// The fate of a message with no fault in the way.
pub(crate) const CLEAN: Fate = Fate::Send { copies: 1, delay: Duration::ZERO, reorder: false };

#[derive(Debug, Default)]
struct Table {
    /// The link rules in force, oldest first, keyed by peer address (the
    /// sender is always this node: [`ME`]); the same rule as the simulator's.
    rules: Vec<LinkRule<String>>,
    /// Each rule's `fault_id`, by index.
    fault_ids: Vec<String>,
    reachable: Option<HashSet<String>>,
}

/// This node's faults and what they did (or, with a parent, one election's).
#[derive(Debug, Default)]
pub(crate) struct FaultTable {
    /// The node's table, for an election's own: its faults apply too.
    parent: Option<Arc<FaultTable>>,
    crashed: AtomicBool,
    /// Fast path: no rule and no partition.
    clean: AtomicBool,
    table: Mutex<Table>,
    /// Messages lost to faults (sent or received while crashed, dropped,
    /// partitioned); an election's table counts in its node's.
    pub(crate) dropped: AtomicU64,
    /// Extra copies sent.
    pub(crate) duplicated: AtomicU64,
    /// The clock rate its timers run at.
    clock: Clock,
    /// Fast path: a pause is in force.
    paused: AtomicBool,
    pause: Mutex<PauseState>,
}

/// A node's clock rate, watched by its pending timers.
#[derive(Debug)]
struct Clock(watch::Sender<f64>);

impl Default for Clock {
    fn default() -> Self {
        Clock(watch::Sender::new(1.0))
    }
}

/// The clock rate a request gives (0 = real time), checked against the core's bounds.
fn clock_rate(rate: f64) -> Result<f64, FaultsError> {
    if rate == 0.0 {
        return Ok(1.0);
    }
    faults::clock_rate("clock_rate", rate).map_err(|e| FaultsError::new(e.field, Problem::Core(e)))?;
    Ok(rate)
}

/// The clock rate an election's timers run at: its own table's times its
/// node's (see [`FaultTable::clock`]).
#[derive(Clone, Debug)]
pub(crate) struct Rate {
    own: watch::Receiver<f64>,
    node: Option<watch::Receiver<f64>>,
}

impl Rate {
    /// The rate now (times real time), marking it seen.
    fn now(&mut self) -> f64 {
        let own = *self.own.borrow_and_update();
        own * self.node.as_mut().map_or(1.0, |n| *n.borrow_and_update())
    }

    /// Wait for a change of either rate (an error: a table is gone).
    async fn changed(&mut self) -> Result<(), watch::error::RecvError> {
        let Rate { own, node } = self;
        match node {
            None => own.changed().await,
            Some(node) => tokio::select! {
                r = own.changed() => r,
                r = node.changed() => r,
            },
        }
    }
}

/// Sleep `after_ms` by a clock whose rate `rate` holds (times real time); a
/// change of rate re-times what is left.
pub(crate) async fn sleep_by_clock(after_ms: u64, mut rate: Rate) {
    let mut left = after_ms as f64;
    loop {
        let r = rate.now();
        let real = Duration::from_secs_f64(left / r / 1_000.0);
        let started = tokio::time::Instant::now();
        tokio::select! {
            _ = tokio::time::sleep(real) => return,
            changed = rate.changed() => {
                if changed.is_err() {
                    // The table is gone with its node: sleep out the rest at the old rate.
                    tokio::time::sleep_until(started + real).await;
                    return;
                }
                left -= started.elapsed().as_secs_f64() * 1_000.0 * r;
                if left <= 0.0 {
                    return;
                }
            }
        }
    }
}

/// A pause length a request gives, checked.
fn pause_ms(ms: u64) -> Result<(), FaultsError> {
    if ms > MAX_PAUSE_MS {
        return Err(FaultsError::new("pause_ms", Problem::Pause(ms)));
    }
    Ok(())
}

fn probability(field: impl FnOnce() -> String, p: f64) -> Result<(), FaultsError> {
    if (0.0..=1.0).contains(&p) { Ok(()) } else { Err(FaultsError::new(field(), Problem::NotProbability(p))) }
}

/// The shared link rule (`ringleader_core::faults`) a checked request rule
/// `r` asks for, on messages of `kind` (all kinds: `None`), towards `r.to`
/// (every peer when empty).
fn link_rule(r: &pb::LinkRule, kind: Option<MsgKind>) -> LinkRule<String> {
    let fault = LinkFault {
        drop: r.drop,
        delay_ms: r.delay_ms,
        jitter_ms: r.jitter_ms,
        duplicate: r.duplicate,
        reorder: r.reorder,
        kind,
        nth: r.nth,
    };
    LinkRule::new(None, (!r.to.is_empty()).then(|| r.to.clone()), fault, r.seed)
}

impl FaultTable {
    /// A table with no faults.
    pub(crate) fn new() -> Self {
        FaultTable { clean: AtomicBool::new(true), ..FaultTable::default() }
    }

    /// An election's own table, with no faults, under its node's `node`.
    pub(crate) fn scoped(node: Arc<FaultTable>) -> Self {
        FaultTable { parent: Some(node), ..FaultTable::new() }
    }

    /// The table that counts losses: the node's.
    fn counter(&self) -> &FaultTable {
        self.parent.as_deref().unwrap_or(self)
    }

    /// Count `n` messages lost to faults (in the node's count).
    pub(crate) fn count_dropped(&self, n: u64) {
        self.counter().dropped.fetch_add(n, Ordering::Relaxed);
    }

    /// Replace every fault with `req` (checked first: nothing changes on error).
    pub(crate) fn set(&self, req: &pb::SetFaultsRequest) -> Result<PauseChange, FaultsError> {
        let rate = clock_rate(req.clock_rate)?;
        pause_ms(req.pause_ms)?;
        let mut rules = checked_rules(&req.links, "links")?;
        if rules.len() > MAX_RULES {
            return Err(FaultsError::new("links", Problem::Rules(rules.len())));
        }
        let fault_ids: Vec<String> = req.links.iter().map(|r| r.fault_id.clone()).collect();
        let reachable = req.partitioned.then(|| req.reachable.iter().cloned().collect());
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        // The same fault pushed again (another fault changed) goes on counting and drawing where it was.
        let old = std::mem::take(&mut *t);
        let mut old: Vec<(String, LinkRule<String>)> = old.fault_ids.into_iter().zip(old.rules).collect();
        for (id, new) in fault_ids.iter().zip(rules.iter_mut()).filter(|(id, _)| !id.is_empty()) {
            if let Some((_, o)) = old.iter_mut().find(|(o_id, o)| o_id == id && o.fault.nth == new.fault.nth) {
                new.continue_from(o);
            }
        }
        let clean = rules.is_empty() && reachable.is_none();
        *t = Table { rules, fault_ids, reachable };
        self.clean.store(clean, Ordering::SeqCst);
        self.crashed.store(req.crashed, Ordering::SeqCst);
        self.set_clock(rate);
        Ok(self.set_pause(req.pause_ms))
    }

    /// Pause for `ms` from now (replacing the end of a pause in force), or
    /// resume (`0`).
    fn set_pause(&self, ms: u64) -> PauseChange {
        let mut p = self.pause.lock().unwrap_or_else(|e| e.into_inner());
        if ms == 0 {
            if p.until.take().is_none() {
                return PauseChange::Unchanged;
            }
            self.paused.store(false, Ordering::SeqCst);
            return PauseChange::Resume(Resume { from_us: p.since_us, until_us: unix_us() });
        }
        if p.until.is_none() {
            p.since_us = unix_us();
        }
        p.number += 1;
        let until = tokio::time::Instant::now() + Duration::from_millis(ms);
        p.until = Some(until);
        self.paused.store(true, Ordering::SeqCst);
        PauseChange::Until { number: p.number, until }
    }

    /// Pause number `number` has run its time: it ends, unless another
    /// request replaced or ended it since.
    pub(crate) fn expire(&self, number: u64) -> Option<Resume> {
        let mut p = self.pause.lock().unwrap_or_else(|e| e.into_inner());
        if p.number != number || p.until.take().is_none() {
            return None;
        }
        self.paused.store(false, Ordering::SeqCst);
        Some(Resume { from_us: p.since_us, until_us: unix_us() })
    }

    /// Is the node (or, for an election's table, the election) paused?
    #[inline]
    pub(crate) fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed) || self.parent.as_ref().is_some_and(|p| p.paused())
    }

    /// Make the node's timers run at `rate` (pending ones re-timed), if it changed.
    fn set_clock(&self, rate: f64) {
        self.clock.0.send_if_modified(|r| std::mem::replace(r, rate) != rate);
    }

    /// The rate the node's (an election's) timers run at, to sleep by ([`sleep_by_clock`]).
    pub(crate) fn clock(&self) -> Rate {
        Rate { own: self.clock.0.subscribe(), node: self.parent.as_ref().map(|p| p.clock.0.subscribe()) }
    }

    /// Change the faults as `req` says, keeping the rest (checked first:
    /// nothing changes on error). The work is that of the rules removed and
    /// added, and a pass over the rules held when some go.
    pub(crate) fn change(&self, req: &pb::ChangeFaultsRequest) -> Result<PauseChange, FaultsError> {
        let rate = req.clock_rate.map(clock_rate).transpose()?;
        req.pause_ms.map(pause_ms).transpose()?;
        let mut added = checked_rules(&req.add, "add")?;
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let Table { rules, fault_ids, reachable } = &mut *t;
        // A fault added again replaces its rule and goes on counting and drawing where it was.
        let mut gone: HashSet<&str> = req.remove.iter().map(String::as_str).collect();
        for (r, new) in req.add.iter().zip(added.iter_mut()).filter(|(r, _)| !r.fault_id.is_empty()) {
            if let Some(i) = fault_ids.iter().position(|id| *id == r.fault_id) {
                if rules[i].fault.nth == new.fault.nth {
                    new.continue_from(&mut rules[i]);
                }
                gone.insert(&r.fault_id);
            }
        }
        let keep: Option<Vec<bool>> = (!gone.is_empty())
            .then(|| fault_ids.iter().map(|id| id.is_empty() || !gone.contains(id.as_str())).collect());
        let kept = keep.as_ref().map_or(rules.len(), |k| k.iter().filter(|&&k| k).count());
        if kept + added.len() > MAX_RULES {
            return Err(FaultsError::new("add", Problem::RulesAfterChange(kept + added.len())));
        }
        if let Some(keep) = keep {
            let mut k = keep.iter().copied();
            rules.retain(|_| k.next().unwrap_or(true));
            let mut k = keep.iter().copied();
            fault_ids.retain(|_| k.next().unwrap_or(true));
        }
        rules.extend(added);
        fault_ids.extend(req.add.iter().map(|r| r.fault_id.clone()));
        if let Some(partitioned) = req.partitioned {
            *reachable = partitioned.then(|| req.reachable.iter().cloned().collect());
        }
        self.clean.store(rules.is_empty() && reachable.is_none(), Ordering::SeqCst);
        if let Some(crashed) = req.crashed {
            self.crashed.store(crashed, Ordering::SeqCst);
        }
        if let Some(rate) = rate {
            self.set_clock(rate);
        }
        Ok(req.pause_ms.map_or(PauseChange::Unchanged, |ms| self.set_pause(ms)))
    }

    /// Is the node (or, for an election's table, the election's instance) crashed?
    #[inline]
    pub(crate) fn crashed(&self) -> bool {
        self.crashed.load(Ordering::Relaxed) || self.parent.as_ref().is_some_and(|p| p.crashed())
    }

    /// Count a message lost because the node is crashed.
    pub(crate) fn lost_to_crash(&self) {
        self.count_dropped(1);
    }

    /// What happens to a message of `kind` this node (election) sends to
    /// `peer`: an election's own rules first (a drop is final), then its
    /// node's; the delays add up, a duplicate or a reorder of either holds.
    pub(crate) fn fate(&self, peer: &str, kind: MsgKind) -> Fate {
        if self.crashed() {
            self.count_dropped(1);
            return Fate::Drop;
        }
        let own = self.own_fate(peer, kind);
        let (Some(node), Fate::Send { copies, delay, reorder }) = (&self.parent, own) else { return own };
        match node.fate(peer, kind) {
            Fate::Drop => Fate::Drop,
            Fate::Send { copies: c, delay: d, reorder: r } => {
                Fate::Send { copies: copies.max(c), delay: delay + d, reorder: reorder || r }
            }
        }
    }

    /// What this table's own rules do to a message of `kind` to `peer`.
    fn own_fate(&self, peer: &str, kind: MsgKind) -> Fate {
        if self.clean.load(Ordering::Relaxed) {
            return CLEAN;
        }
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        // Every message sent counts towards nth selectors, as in the simulator.
        faults::count_all(&mut t.rules, ME, peer, kind);
        if t.reachable.as_ref().is_some_and(|r| !r.contains(peer)) {
            self.count_dropped(1);
            return Fate::Drop;
        }
        match faults::decide(&mut t.rules, ME, peer, kind) {
            None => CLEAN,
            Some(LinkFate::Drop) => {
                self.count_dropped(1);
                Fate::Drop
            }
            Some(LinkFate::Send { extra_delay_ms, duplicate, reorder }) => {
                if duplicate {
                    self.counter().duplicated.fetch_add(1, Ordering::Relaxed);
                }
                let copies = if duplicate { 2 } else { 1 };
                Fate::Send { copies, delay: Duration::from_millis(extra_delay_ms), reorder }
            }
        }
    }
}

/// The shared link rules that request rules `links` ask for, each checked
/// (an error names `{field}[i]` and the bad value).
fn checked_rules(links: &[pb::LinkRule], field: &str) -> Result<Vec<LinkRule<String>>, FaultsError> {
    let mut rules = Vec::with_capacity(links.len());
    for (i, r) in links.iter().enumerate() {
        probability(|| format!("{field}[{i}].drop"), r.drop)?;
        probability(|| format!("{field}[{i}].duplicate"), r.duplicate)?;
        probability(|| format!("{field}[{i}].reorder"), r.reorder)?;
        // Delays arrive over the network: bound them so `now + delay` cannot overflow.
        if r.delay_ms > MAX_DELAY_MS || r.jitter_ms > MAX_DELAY_MS {
            return Err(FaultsError::new(format!("{field}[{i}].delay_ms"), Problem::Delay));
        }
        let kind = kind_named("kind", &r.kind)
            .map_err(|e| FaultsError::new(format!("{field}[{i}].{}", e.field), Problem::Core(e)))?;
        rules.push(link_rule(r, kind));
    }
    Ok(rules)
}

/// The sender of every message a node's rules judge: the node itself (its
/// rules select only by receiver).
const ME: &str = "";

#[cfg(test)]
mod tests {
    use super::*;

    /// On tokio's paused clock: a timer of 100 ms by a clock at half speed takes 200 ms; a 400 ms
    /// timer whose clock goes ten times as fast after 100 ms has 300 ms of its own left, 30 real.
    #[tokio::test(start_paused = true)]
    async fn timers_run_at_the_clock_rate_and_are_retimed_by_a_change() {
        let table = FaultTable::new();
        table.set(&pb::SetFaultsRequest { clock_rate: 0.5, ..Default::default() }).unwrap();
        let start = tokio::time::Instant::now();
        sleep_by_clock(100, table.clock()).await;
        assert_eq!(start.elapsed(), Duration::from_millis(200));
        table.set(&pb::SetFaultsRequest::default()).unwrap();
        let start = tokio::time::Instant::now();
        let timer = tokio::spawn(sleep_by_clock(400, table.clock()));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let change = pb::ChangeFaultsRequest { clock_rate: Some(10.0), ..Default::default() };
        table.change(&change).unwrap();
        timer.await.unwrap();
        let took = start.elapsed().as_millis();
        assert!((129..=131).contains(&took), "{took} ms");
    }

    /// Two elections' tables under one node's: a crash, pause or rule in one election's table touches
    /// that election only; its messages meet its own rules first (a drop is final), then the node's,
    /// the delays adding up; a node-wide crash or pause reaches both; losses count in the node's table.
    #[test]
    fn an_elections_table_adds_its_faults_to_its_nodes() {
        let node = Arc::new(FaultTable::new());
        let (a, b) = (FaultTable::scoped(node.clone()), FaultTable::scoped(node.clone()));
        a.set(&pb::SetFaultsRequest { crashed: true, ..Default::default() }).unwrap();
        assert!(a.crashed() && !b.crashed() && !node.crashed());
        assert_eq!((a.fate("x", MsgKind::Election), b.fate("x", MsgKind::Election)), (Fate::Drop, CLEAN));
        a.set(&pb::SetFaultsRequest::default()).unwrap();
        node.set(&pb::SetFaultsRequest { crashed: true, ..Default::default() }).unwrap();
        assert!(a.crashed() && b.crashed(), "a node-wide crash reaches every election");
        node.set(&pb::SetFaultsRequest { links: vec![rule("", |r| r.delay_ms = 3)], ..Default::default() }).unwrap();
        a.change(&pb::ChangeFaultsRequest { add: vec![rule("", |r| r.delay_ms = 5)], ..Default::default() }).unwrap();
        let slow = |ms| Fate::Send { copies: 1, delay: Duration::from_millis(ms), reorder: false };
        assert_eq!(a.fate("x", MsgKind::Election), slow(8), "its own delay and the node's");
        assert_eq!(b.fate("x", MsgKind::Election), slow(3), "the node's only");
        a.set(&pb::SetFaultsRequest { links: vec![rule("y", |r| r.drop = 1.0)], ..Default::default() }).unwrap();
        assert_eq!(a.fate("y", MsgKind::Election), Fate::Drop);
        assert_eq!(b.fate("y", MsgKind::Election), slow(3));
        a.set(&pb::SetFaultsRequest { partitioned: true, reachable: vec!["x".into()], ..Default::default() }).unwrap();
        assert_eq!((a.fate("z", MsgKind::Election), b.fate("z", MsgKind::Election)), (Fate::Drop, slow(3)));
        assert_eq!(node.dropped.load(Ordering::Relaxed), 3, "the elections' losses count in the node's table");
        assert!(matches!(
            a.set(&pb::SetFaultsRequest { pause_ms: 500, ..Default::default() }),
            Ok(PauseChange::Until { .. })
        ));
        assert!(a.paused() && !b.paused() && !node.paused());
        node.set(&pb::SetFaultsRequest { pause_ms: 500, ..Default::default() }).unwrap();
        assert!(b.paused(), "a node-wide pause reaches every election");
    }

    /// An election's timers run at its own clock rate times its node's (on tokio's paused clock: 2
    /// times 0.5 is real time; the node's rate changing re-times them too).
    #[tokio::test(start_paused = true)]
    async fn an_elections_clock_runs_at_its_rate_times_its_nodes() {
        let node = Arc::new(FaultTable::new());
        let a = FaultTable::scoped(node.clone());
        a.set(&pb::SetFaultsRequest { clock_rate: 2.0, ..Default::default() }).unwrap();
        node.set(&pb::SetFaultsRequest { clock_rate: 0.5, ..Default::default() }).unwrap();
        let start = tokio::time::Instant::now();
        sleep_by_clock(100, a.clock()).await;
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        let start = tokio::time::Instant::now();
        let timer = tokio::spawn(sleep_by_clock(100, a.clock()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        node.set(&pb::SetFaultsRequest { clock_rate: 5.0, ..Default::default() }).unwrap();
        timer.await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(55), "50 ms of 100, then 50 at ten times");
    }

    /// A clock rate outside 0.1..=10 is refused naming `clock_rate`, and changes nothing.
    #[test]
    fn clock_rates_outside_the_bounds_are_refused() {
        let table = FaultTable::new();
        for rate in [0.05, 11.0, -1.0, f64::NAN] {
            let e = table.set(&pb::SetFaultsRequest { clock_rate: rate, ..Default::default() }).unwrap_err();
            assert!(e.field == "clock_rate" && e.to_string().starts_with("clock_rate: "), "{rate}: {e}");
            let change = pb::ChangeFaultsRequest { clock_rate: Some(rate), ..Default::default() };
            assert_eq!(table.change(&change).unwrap_err().field, "clock_rate");
        }
        assert_eq!(table.clock().now(), 1.0);
    }

    /// A pause request starts a numbered pause; a later one gives it a new end and number, so the
    /// first one's end does nothing and the second's ends it; 0 resumes (nothing to resume: no
    /// change); a request without a pause leaves it; more than MAX_PAUSE_MS is refused naming
    /// `pause_ms`, changing nothing.
    #[tokio::test]
    async fn pauses_are_numbered_extended_and_ended() {
        let t = FaultTable::new();
        let pause = |ms| pb::SetFaultsRequest { pause_ms: ms, ..Default::default() };
        assert_eq!(t.set(&pause(0)).unwrap(), PauseChange::Unchanged);
        assert!(matches!(t.set(&pause(500)).unwrap(), PauseChange::Until { number: 1, .. }));
        assert!(t.paused());
        let change = pb::ChangeFaultsRequest { pause_ms: Some(900), ..Default::default() };
        assert!(matches!(t.change(&change).unwrap(), PauseChange::Until { number: 2, .. }));
        assert_eq!(t.change(&pb::ChangeFaultsRequest::default()).unwrap(), PauseChange::Unchanged);
        assert_eq!(t.expire(1), None, "replaced by the second request");
        let e = t.set(&pause(MAX_PAUSE_MS + 1)).unwrap_err();
        assert_eq!(e, FaultsError { field: "pause_ms".into(), problem: Problem::Pause(MAX_PAUSE_MS + 1) });
        assert!(e.to_string().starts_with("pause_ms: "), "{e}");
        assert!(t.paused(), "a refused request changes nothing");
        let r = t.expire(2).expect("the second pause ends");
        assert!(r.from_us <= r.until_us && !t.paused());
        assert_eq!(t.expire(2), None, "ended once");
    }

    fn rule(to: &str, f: impl FnOnce(&mut pb::LinkRule)) -> pb::LinkRule {
        let mut r = pb::LinkRule { to: to.into(), seed: 7, ..Default::default() };
        f(&mut r);
        r
    }

    /// The runtime applies the simulator's link rule: for the same faults and seeds, a stream of messages to
    /// several peers and of several kinds meets the same fates (drop, extra delay, duplicate, reorder) as
    /// the core's `LinkRule`s the simulator uses, nth selectors and precedence included. Failed before the
    /// rules were shared: the runtime drew duplicate before jitter, and drew probabilities another way.
    #[test]
    fn live_fates_are_the_simulators() {
        let links = vec![
            rule("", |r| {
                (r.drop, r.delay_ms, r.jitter_ms, r.duplicate, r.reorder, r.seed) = (0.2, 5, 40, 0.3, 0.5, 11);
            }),
            rule("b", |r| (r.drop, r.jitter_ms, r.duplicate, r.seed) = (0.1, 9, 0.6, 12)),
            rule("c", |r| (r.kind, r.nth, r.drop, r.seed) = ("notify".into(), 3, 1.0, 13)),
        ];
        let t = FaultTable::new();
        t.set(&pb::SetFaultsRequest { links: links.clone(), ..Default::default() }).unwrap();
        let mut model: Vec<LinkRule<String>> =
            links.iter().map(|r| link_rule(r, kind_named("kind", &r.kind).unwrap())).collect();
        let (mut drops, mut dups, mut late) = (0, 0, 0);
        for i in 0..3_000u32 {
            let peer = ["a", "b", "c"][(i % 3) as usize];
            let kind = if i % 5 == 0 { MsgKind::Notify } else { MsgKind::Election };
            faults::count_all(&mut model, ME, peer, kind);
            let want = match faults::decide(&mut model, ME, peer, kind) {
                None => CLEAN,
                Some(LinkFate::Drop) => Fate::Drop,
                Some(LinkFate::Send { extra_delay_ms, duplicate, reorder }) => Fate::Send {
                    copies: if duplicate { 2 } else { 1 },
                    delay: Duration::from_millis(extra_delay_ms),
                    reorder,
                },
            };
            let got = t.fate(peer, kind);
            assert_eq!(got, want, "message {i} to {peer} ({kind:?})");
            match got {
                Fate::Drop => drops += 1,
                Fate::Send { copies, delay, .. } => {
                    dups += u32::from(copies == 2);
                    late += u32::from(delay > Duration::from_millis(5));
                }
            }
        }
        // The stream exercised every outcome.
        assert!(drops > 100 && dups > 100 && late > 100, "{drops} {dups} {late}");
    }

    /// No faults: every message is sent once at once; crashed: everything is dropped; clearing restores it.
    #[test]
    fn crash_and_clear() {
        let t = FaultTable::new();
        assert_eq!(t.fate("a", MsgKind::Election), CLEAN);
        t.set(&pb::SetFaultsRequest { crashed: true, ..Default::default() }).unwrap();
        assert!(t.crashed());
        assert_eq!(t.fate("a", MsgKind::Election), Fate::Drop);
        t.set(&pb::SetFaultsRequest::default()).unwrap();
        assert_eq!(t.fate("a", MsgKind::Election), CLEAN);
        assert_eq!(t.dropped.load(Ordering::Relaxed), 1);
    }

    /// The last matching rule decides: drop 1.0 to one peer loses every message to it, while a later rule for
    /// every peer delays; a partition only lets messages reach the group; bad probabilities and delays are refused.
    #[test]
    fn rules_partitions_and_validation() {
        let t = FaultTable::new();
        let req = pb::SetFaultsRequest {
            links: vec![rule("", |r| r.delay_ms = 5), rule("b", |r| r.drop = 1.0)],
            ..Default::default()
        };
        t.set(&req).unwrap();
        assert_eq!(t.fate("b", MsgKind::Election), Fate::Drop);
        assert_eq!(
            t.fate("a", MsgKind::Election),
            Fate::Send { copies: 1, delay: Duration::from_millis(5), reorder: false }
        );
        let part = pb::SetFaultsRequest { partitioned: true, reachable: vec!["a".into()], ..Default::default() };
        t.set(&part).unwrap();
        assert_eq!(t.fate("a", MsgKind::Election), CLEAN);
        assert_eq!(t.fate("c", MsgKind::Election), Fate::Drop);
        let bad = pb::SetFaultsRequest { links: vec![rule("", |r| r.duplicate = 2.0)], ..Default::default() };
        assert_eq!(t.set(&bad).unwrap_err().field, "links[0].duplicate");
        let huge = pb::SetFaultsRequest { links: vec![rule("", |r| r.delay_ms = u64::MAX)], ..Default::default() };
        assert_eq!(
            t.set(&huge).unwrap_err(),
            FaultsError { field: "links[0].delay_ms".into(), problem: Problem::Delay }
        );
        assert_eq!(t.fate("c", MsgKind::Election), Fate::Drop, "a refused request changes nothing");
    }

    /// A kind-selected rule only touches that kind, and a later kind-less rule shadows it; an nth rule drops
    /// exactly the nth matching message to each peer (other kinds do not count), its count survives a new request
    /// carrying the same fault id, and an unknown kind is refused naming `links[i].kind`.
    #[test]
    fn kind_and_nth_selectors() {
        let t = FaultTable::new();
        let notify = rule("", |r| {
            r.kind = "notify".into();
            r.drop = 1.0;
        });
        t.set(&pb::SetFaultsRequest { links: vec![notify.clone()], ..Default::default() }).unwrap();
        assert_eq!(t.fate("a", MsgKind::Notify), Fate::Drop);
        assert_eq!(t.fate("a", MsgKind::Election), CLEAN);
        let delay = rule("", |r| r.delay_ms = 3);
        t.set(&pb::SetFaultsRequest { links: vec![notify.clone(), delay.clone()], ..Default::default() }).unwrap();
        let slow = Fate::Send { copies: 1, delay: Duration::from_millis(3), reorder: false };
        assert_eq!(t.fate("a", MsgKind::Notify), slow, "the later kind-less rule wins");
        t.set(&pb::SetFaultsRequest { links: vec![delay, notify], ..Default::default() }).unwrap();
        assert_eq!(t.fate("a", MsgKind::Notify), Fate::Drop, "the later kind rule wins for its kind");
        assert_eq!(t.fate("a", MsgKind::Heartbeat), slow, "and leaves the rest to the earlier one");

        let second = rule("", |r| {
            r.kind = "heartbeat".into();
            r.nth = 2;
            r.drop = 1.0;
            r.fault_id = "f1".into();
        });
        t.set(&pb::SetFaultsRequest { links: vec![second.clone()], ..Default::default() }).unwrap();
        let before = t.dropped.load(Ordering::Relaxed);
        assert_eq!(t.fate("a", MsgKind::Heartbeat), CLEAN);
        assert_eq!(t.fate("a", MsgKind::Election), CLEAN, "another kind does not count");
        assert_eq!(t.fate("b", MsgKind::Heartbeat), CLEAN);
        // The same fault pushed again keeps counting: a's next heartbeat is its 2nd.
        t.set(&pb::SetFaultsRequest { links: vec![second], ..Default::default() }).unwrap();
        assert_eq!(t.fate("a", MsgKind::Heartbeat), Fate::Drop);
        assert_eq!(t.fate("b", MsgKind::Heartbeat), Fate::Drop);
        assert!((0..10).all(|_| t.fate("a", MsgKind::Heartbeat) == CLEAN), "only the 2nd");
        assert_eq!(t.dropped.load(Ordering::Relaxed) - before, 2, "one message per peer");

        let bad = pb::SetFaultsRequest { links: vec![rule("", |r| r.kind = "elected".into())], ..Default::default() };
        let e = t.set(&bad).unwrap_err().to_string();
        assert!(e.starts_with("links[0].kind: unknown message kind `elected`"), "{e}");
    }

    /// A change keeps what it does not name: an added rule comes after every rule held (and so wins), a
    /// removed fault's rules go and the others stay in order, a fault added again keeps its nth count, the
    /// crash and the partition change only when given; a bad rule is refused naming `add[i]`, changing nothing.
    #[test]
    fn changes_keep_what_they_do_not_name() {
        let t = FaultTable::new();
        let with_id = |id: &str, f: fn(&mut pb::LinkRule)| rule("", |r| (f(r), r.fault_id = id.into()).1);
        let change = |f: fn(&mut pb::ChangeFaultsRequest)| {
            let mut c = pb::ChangeFaultsRequest::default();
            f(&mut c);
            c
        };
        let slow = |ms| Fate::Send { copies: 1, delay: Duration::from_millis(ms), reorder: false };
        t.set(&pb::SetFaultsRequest { links: vec![with_id("f1", |r| r.delay_ms = 3)], ..Default::default() }).unwrap();
        t.change(&pb::ChangeFaultsRequest { add: vec![with_id("f2", |r| r.delay_ms = 7)], ..Default::default() })
            .unwrap();
        assert_eq!(t.fate("a", MsgKind::Election), slow(7), "the added rule is the last: it decides");
        t.change(&change(|c| c.remove = vec!["f2".into()])).unwrap();
        assert_eq!(t.fate("a", MsgKind::Election), slow(3), "f1 stays");

        let second = with_id("f3", |r| (r.nth, r.drop) = (2, 1.0));
        t.change(&pb::ChangeFaultsRequest { add: vec![second.clone()], ..Default::default() }).unwrap();
        assert_eq!(t.fate("a", MsgKind::Election), slow(3), "a's 1st message after f3");
        t.change(&pb::ChangeFaultsRequest { add: vec![second], ..Default::default() }).unwrap();
        assert_eq!(t.fate("a", MsgKind::Election), Fate::Drop, "f3 again: a's next message is its 2nd");

        t.change(&change(|c| (c.partitioned, c.reachable) = (Some(true), vec!["b".into()]))).unwrap();
        assert_eq!(t.fate("c", MsgKind::Election), Fate::Drop, "c is beyond the partition");
        t.change(&change(|c| c.crashed = Some(true))).unwrap();
        assert!(t.crashed());
        t.change(&change(|c| c.remove = vec!["f1".into(), "f3".into()])).unwrap();
        assert!(t.crashed(), "a change without `crashed` leaves the crash");
        t.change(&change(|c| (c.crashed, c.partitioned) = (Some(false), Some(false)))).unwrap();
        assert_eq!(t.fate("c", MsgKind::Election), CLEAN, "nothing left");

        let bad = pb::ChangeFaultsRequest {
            add: vec![rule("", |r| r.drop = 2.0)],
            crashed: Some(true),
            ..Default::default()
        };
        assert_eq!(t.change(&bad).unwrap_err().field, "add[0].drop");
        assert!(!t.crashed(), "a refused change changes nothing");

        let many = |n: usize, tag: &str| (0..n).map(|i| with_id(&format!("{tag}{i}"), |r| r.delay_ms = 1)).collect();
        t.change(&pb::ChangeFaultsRequest { add: many(MAX_RULES, "a"), ..Default::default() }).unwrap();
        let more = pb::ChangeFaultsRequest { add: many(1, "b"), crashed: Some(true), ..Default::default() };
        let e = t.change(&more).unwrap_err();
        assert_eq!(e.problem, Problem::RulesAfterChange(MAX_RULES + 1), "a node holds at most MAX_RULES rules");
        assert!(e.to_string().contains("at most 4096"), "{e}");
        assert!(!t.crashed(), "a refused change changes nothing");
        let swap = pb::ChangeFaultsRequest { add: many(1, "b"), remove: vec!["a0".into()], ..Default::default() };
        t.change(&swap).unwrap();
        let too_many = pb::SetFaultsRequest { links: many(MAX_RULES + 1, "c"), ..Default::default() };
        assert_eq!(t.set(&too_many).unwrap_err().problem, Problem::Rules(MAX_RULES + 1));
    }

    /// Drop, duplicate and jitter are drawn from the rule's seed: the same seed gives the same fates, and the
    /// frequencies follow the probabilities.
    #[test]
    fn seeded_fates() {
        let fates = |seed| {
            let t = FaultTable::new();
            let r = rule("", |r| {
                r.drop = 0.3;
                r.duplicate = 0.2;
                r.jitter_ms = 10;
                r.seed = seed;
            });
            t.set(&pb::SetFaultsRequest { links: vec![r], ..Default::default() }).unwrap();
            (0..2000).map(|_| t.fate("x", MsgKind::Election)).collect::<Vec<_>>()
        };
        let (a, b) = (fates(1), fates(1));
        assert_eq!(a, b);
        assert_ne!(a, fates(2));
        let dropped = a.iter().filter(|f| **f == Fate::Drop).count();
        assert!((450..750).contains(&dropped), "{dropped} of 2000 dropped at p = 0.3");
        let twice = a.iter().filter(|f| matches!(f, Fate::Send { copies: 2, .. })).count();
        assert!((200..360).contains(&twice), "{twice} of ~1400 duplicated at p = 0.2");
        assert!(a.iter().all(|f| match f {
            Fate::Send { delay, .. } => *delay <= Duration::from_millis(10),
            Fate::Drop => true,
        }));
    }
}
