//! # Hirschberg-Sinclair, synchronous
//!
//! * Source: D. S. Hirschberg, J. B. Sinclair, "Decentralized extrema-finding
//!   in circular configurations of processors", CACM 23(11), 1980 (HS);
//!   N. Lynch, *Distributed Algorithms*, Morgan Kaufmann 1996, §3.4 (the
//!   synchronous HS and its analysis).
//! * Network: bidirectional ring, no orientation, no FIFO, **synchronous**:
//!   every message sent at a node's round-r tick is received before the
//!   receiver's round-(r + 1) tick (see [`ROUND_MS`]).
//! * Winner: the maximum (HS), or the minimum when mirrored.
//! * Messages: at most 8n(1 + ⌈log2 n⌉) election messages (Lynch §3.4)
//!   plus n notifications. The count depends on the ids only: not on the
//!   initiators, the delays or the order of delivery.
//! * Time: with every node initiating, the leader decides at round
//!   2^(p+1) − 2 + n, p = ⌈log2 n⌉ (≤ 3n − 2 for n a power of two, < 5n in
//!   general: Lynch's 3n / 5n), and the last node learns the leader n − 1
//!   rounds later.
//!
//! ## Rounds
//!
//! A node acts only at the ticks of its round clock, a timer
//! ([`ROUND_TIMER`]) re-armed every [`ROUND_MS`] from the moment it wakes.
//! What arrives between two ticks waits in an inbox and is handled, in
//! arrival order, at the next tick, which then sends that round's messages:
//! one hop costs exactly one round. An initiator's wake-up is its round 0
//! tick. A node woken by a message starts its clock then; at its first tick
//! it starts phase 0 and handles the waking message (every node takes part,
//! as in HS, so the global extremum wins whoever initiates).
//!
//! Phase i (0, 1, ...) of a candidate begins `2^(i+1) − 2` rounds after the
//! candidate's phase 0 ([`phase_start`]): it sends `Probe {id, stage: i,
//! limit: 2^i}` both ways; `limit` counts the links the probe may still cross.
//! A node receiving a probe with a better id than its own relays it with
//! `limit − 1`, or, when `limit` is 1, answers `Reply {id, stage}` back the
//! way it came; a probe with a worse id is swallowed. Replies are relayed back
//! to their owner. Both of a phase's replies reach the candidate at the same
//! tick, 2^(i+1) rounds after it probed, and it starts phase i + 1 at that
//! tick; if a probe was swallowed the candidate never hears of it again and
//! simply stops (it still relays). A probe that reaches its owner has gone
//! round the ring (2^i ≥ n): its owner beats everybody, decides it leads and
//! sends `Notify` round the ring; its second probe arrives at the same tick
//! and is dropped; each node decides when the notification reaches it.
//!
//! Under the synchrony assumption nothing but the notification is in flight
//! once the leader decides: another candidate v, joined at round s_v, has a
//! last phase j with 2^j < n, so its traffic is over by round
//! s_v + 2^(p+1) − 2, before the leader's probes come back at
//! s* + 2^(p+1) − 2 + n (joining rounds differ by less than n). Deciding does not
//! change how a node treats election messages, so on a schedule that breaks
//! the assumption (delays longer than a round, clocks started at different
//! times) the algorithm is still Lynch's HS: correct, and with the same count,
//! only its rounds are no longer the ones above.
//!
//! ## Why the count depends on the ids only
//!
//! As in Lynch's HS (and unlike `controlled-distance`, where relaying a better
//! probe defeats a candidate), whether u enters phase i + 1 depends only on
//! whether u beats every id within 2^i on both sides, and how far each probe
//! and reply travels only on the ids it meets. Every node starts phase 0
//! exactly once, whether it initiates or is woken. So the election messages
//! are a function of the id arrangement, and each node sends exactly one
//! notification. In particular a unimodal arrangement (e.g. ascending ids,
//! one local extremum) costs 3n in phase 0, 4·2^i for the winner's phases
//! 1..p − 1, 2n for its last and n notifications: [`best_case_messages`].
//!
//! ## Corrections to a common informal description of HS
//!
//! * "halts when the node receives its probe message": a candidate receives
//!   its own id back in every phase, as replies. The election ends when an
//!   *outbound* probe (not a reply) reaches its owner, i.e. has crossed the
//!   whole ring; that happens only to the extremum, in phase ⌈log2 n⌉.
//! * "stop forwarding when the hop count becomes 0": the node where the count
//!   runs out must *answer* (send the reply back), not just stop, or no
//!   candidate ever survives a phase. Its `<uid, hops, direction>` is
//!   carried as `Probe {id, stage, limit}` out and `Reply {id, stage}` back.
//! * "if the incoming is lesser than its own, it discards" is about probes:
//!   a reply only retraces nodes its probe beat, so it is always relayed.
//! * It assumes every node starts; here non-initiators join when the
//!   first message wakes them.

use super::oneshot::{self, Ending};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, BI_RINGS, Candidates, Extras, Provision, ascending, ceil_log2,
};
use super::{
    AlgoError, Algorithm, Decision, Effect, Input, Msg, NodeContext, Outbox, Port, Role, Rule, TimerId, other,
};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "sync-hs",
    title: "Hirschberg-Sinclair, synchronous rounds",
    source: "D. S. Hirschberg, J. B. Sinclair, Decentralized extrema-finding in circular configurations of \
             processors, CACM 23(11), 1980; N. A. Lynch, Distributed Algorithms, Morgan Kaufmann 1996, 3.4",
    description: "HS in lock-step rounds: nodes act only at the ticks of a round clock (a timer), one \
                  hop per round, so phase i (probes to distance 2^i and back) of every candidate \
                  takes exactly 2^(i+1) rounds; a probe that goes round the ring elects its owner. \
                  Unlike controlled-distance (asynchronous), relaying a better probe does not \
                  defeat a candidate and every node joins, so the count depends on the ids only.",
    topologies: BI_RINGS,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "8n(1+ceil(log2 n)) + n",
    bound: &|n, _| 8 * n * (1 + ceil_log2(n)) + n,
    timer_events: max_timer_events,
    heap_bytes_per_position: 715,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(SyncHs::new),
    extras: Extras {
        schedule_independent: true,
        best_case: Some(Arrangement {
            description: "ASCENDING (one local extremum): 3n in phase 0, then only the extremum probes: 6n + 2^(p+2) - 8 messages, p = ceil(log2 n), the least possible",
            ids: |n, _| ascending(n),
        }),
        ..Extras::NONE
    },
};

/// Length of a round, in milliseconds (virtual milliseconds in the simulator).
///
/// **Synchrony assumption**: every message sent at a node's round-r tick is
/// received before the receiver's round-(r + 1) tick, i.e. link delays are
/// shorter than a round and the round clocks of neighbours are aligned.
///
/// * Simulator: ticks at time t handle what arrived *before* t (timers fire
///   before deliveries of the same instant), so a round must exceed the
///   largest delay. The default configuration draws delays in 1..=16, so 20
///   is enough; initiators all wake at time 0, so with every node initiating
///   the clocks are aligned and the assumption holds exactly. Unit delays keep
///   it with any initiators (a woken node's clock is one time unit late,
///   which a unit delay absorbs). Random delays with nodes woken by messages,
///   staggered wake-ups, or `max_delay` above 19 (the conformance suite's
///   non-FIFO schedule uses 64) break it: the election is still correct with
///   the same count, but not in lock-step.
/// * Live on loopback a hop takes well under a millisecond, so 20 ms is
///   ample; but clocks start when each node wakes and drift with the timers'
///   lateness, so they are not aligned and a hop waits for the receiver's
///   next tick, up to a round but often less: live rounds are approximate,
///   which again changes timing only.
pub const ROUND_MS: u64 = 20;

crate::timers! {
    /// The timer that drives the round clock.
    ROUND_TIMER = 0 => "round";
}

/// Rounds from a candidate's phase 0 to the start of its phase `i`: phase j
/// lasts 2^(j+1) rounds (2^j out, 2^j back), so 2 + 4 + ... + 2^i = 2^(i+1) − 2.
pub fn phase_start(i: u32) -> u64 {
    (1u64 << (i + 1)) - 2
}

/// Most round-clock events of a run on `n` nodes: the winner's probe goes
/// round the ring in its phase p = ⌈log2 n⌉, which ends by round
/// `phase_start(p + 1)`, and the notification takes n more rounds; every node
/// ticks once a round. The simulator's timer budget for this algorithm
/// (twice this), so a large ring is not cut short by a fixed cap.
pub fn max_timer_events(n: u64) -> u64 {
    let p = crate::spec::ceil_log2(n).min(61) as u32;
    n.saturating_mul(phase_start(p + 1).saturating_add(n).saturating_add(2))
}

/// Links a phase-`i` probe may cross: 2^i (saturating).
fn distance(i: u32) -> u32 {
    1u32.checked_shl(i).unwrap_or(u32::MAX)
}

/// The message count (election + notification) of a unimodal arrangement of n
/// ids (one local extremum, e.g. ascending): 6n + 2^(p+2) − 8, p = ⌈log2 n⌉.
/// No arrangement costs less: phase 0 always costs 3n (2n probes, one reply
/// per link), and the winner's later phases 4·(2^p − 2) + 2n.
pub fn best_case_messages(n: u64) -> u64 {
    let p = crate::spec::ceil_log2(n);
    6 * n + (1u64 << (p + 2)) - 8
}

/// One node of synchronous HS.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SyncHs {
    id: u64,
    rule: Rule,
    awake: bool,
    /// Woken by a message: phase 0 starts at the first tick.
    start_pending: bool,
    /// Current phase (the `stage` of its probes).
    phase: u32,
    /// Replies of the current phase received so far.
    replies: u8,
    end: Ending,
    /// Nothing left to wait for: a follower that has decided, or the leader
    /// once its notification has come back. The clock then stops when the
    /// inbox is empty.
    done: bool,
    /// The round timer is armed.
    clock: bool,
    /// Messages received since the last tick, in arrival order.
    inbox: Vec<(Port, Msg)>,
}

impl SyncHs {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        SyncHs {
            id: c.id,
            rule: c.rule,
            awake: false,
            start_pending: false,
            phase: 0,
            replies: 0,
            end: Ending::default(),
            done: false,
            clock: false,
            inbox: Vec::new(),
        }
    }

    fn arm(&mut self, out: &mut Outbox) {
        self.clock = true;
        out.push(Effect::SetTimer { timer: ROUND_TIMER, after_ms: ROUND_MS });
    }

    fn probe_both(&self, out: &mut Outbox) {
        oneshot::send_both(Msg::Probe { id: self.id, stage: self.phase, limit: distance(self.phase) }, out);
    }

    /// Refuse what this node cannot have been sent, before it is queued (a
    /// tick cannot report errors).
    fn check(&self, port: Port, msg: &Msg) -> Result<(), AlgoError> {
        oneshot::ring_port(port)?;
        match *msg {
            Msg::Probe { id, limit, .. } => {
                if limit == 0 {
                    return Err(AlgoError::Invalid(format!("probe of {id} with no distance left")));
                }
                if id == self.id && !self.awake {
                    return Err(AlgoError::Invalid(format!("own probe {id} reached a node that never probed")));
                }
            }
            Msg::Reply { id, stage } => {
                if !self.awake || self.start_pending {
                    return Err(AlgoError::Invalid(format!("reply for {id} woke a node that never relayed its probe")));
                }
                if id == self.id && stage != self.phase {
                    return Err(AlgoError::Invalid(format!(
                        "reply of phase {stage} reached its candidate in phase {}",
                        self.phase
                    )));
                }
            }
            Msg::Notify { leader } => {
                if !self.awake {
                    return Err(AlgoError::Invalid(format!("notification of {leader} woke a node")));
                }
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: "sync-hs", kind: msg.kind().name() }),
        }
        Ok(())
    }

    /// One message, at a tick.
    fn handle(&mut self, port: Port, msg: Msg, out: &mut Outbox) {
        match msg {
            Msg::Probe { id, stage, limit } => {
                if id == self.id {
                    // Round the ring: the first copy elects, the second (same
                    // tick under synchrony) ends here too.
                    if !self.end.decided() {
                        self.end.elect(id, out);
                    }
                } else if self.rule.beats(id, self.id) {
                    if limit > 1 {
                        out.send(other(port), Msg::Probe { id, stage, limit: limit - 1 });
                    } else {
                        out.send(port, Msg::Reply { id, stage });
                    }
                }
                // A worse id is swallowed.
            }
            Msg::Reply { id, .. } if id != self.id => out.send(other(port), msg),
            Msg::Reply { .. } => {
                self.replies += 1;
                if self.replies == 2 {
                    self.phase = self.phase.saturating_add(1);
                    self.replies = 0;
                    self.probe_both(out);
                }
            }
            Msg::Notify { leader } => {
                // A follower is done once it has passed the notification on;
                // the leader, once its own notification is back.
                self.end.notified(port, leader, out);
                self.done = true;
            }
            _ => {}
        }
    }
}

impl SyncHs {
    fn start(&mut self, out: &mut Outbox) {
        if self.awake {
            return;
        }
        // Round 0: probe at once, then tick every round.
        self.awake = true;
        self.probe_both(out);
        self.arm(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        self.check(port, &msg)?;
        super::room_to_hold(self.inbox.len())?;
        if !self.awake {
            self.awake = true;
            self.start_pending = true;
        }
        self.inbox.push((port, msg));
        if !self.clock {
            self.arm(out);
        }
        Ok(())
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        if timer != ROUND_TIMER || !self.clock {
            return;
        }
        self.clock = false;
        if self.start_pending {
            self.start_pending = false;
            self.probe_both(out);
        }
        let mut inbox = std::mem::take(&mut self.inbox);
        for (port, msg) in inbox.drain(..) {
            self.handle(port, msg, out);
        }
        // Keep the allocation for the next round.
        self.inbox = inbox;
        if !self.done {
            self.arm(out);
        }
    }
}

impl Algorithm for SyncHs {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }


    fn held(&self) -> usize {
        self.inbox.len()
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
    }

    fn state(&self) -> &'static str {
        match self.end.decision() {
            _ if !self.awake => "asleep",
            None => "candidate",
            Some(Decision { role: Role::Leader, .. }) => "leader",
            Some(Decision { role: Role::Follower, .. }) => "follower",
        }
    }

    fn watched(&self, _port: Port) -> bool {
        true
    }

    fn suspects(&self, _port: Port) -> bool {
        false
    }

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::Feed;
    use crate::algo::catalogue::{find};
    use crate::spec::{ceil_log2};
    use crate::algo::harness::ring;
    use crate::algo::{Effect, LEFT, RIGHT};
    use crate::sim::{self, SimConfig};
    use crate::topology::{IdOrder, Topology, TopologyKind};

    const TICK: Effect = Effect::SetTimer { timer: ROUND_TIMER, after_ms: ROUND_MS };

    fn send(port: Port, msg: Msg) -> Effect {
        Effect::Send { port, msg }
    }

    fn probe(id: u64, stage: u32, limit: u32) -> Msg {
        Msg::Probe { id, stage, limit }
    }

    /// An awake candidate in `phase` (its phase-`phase` probes sent), with an empty outbox.
    fn candidate_in(id: u64, phase: u32) -> (SyncHs, Outbox) {
        let mut a = ring(SyncHs::new, id, Rule::Max);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        for p in 0..phase {
            for port in [LEFT, RIGHT] {
                a.on_message(port, Msg::Reply { id, stage: p }, &mut out).unwrap();
            }
            a.on_timer(ROUND_TIMER, &mut out);
        }
        out.clear();
        (a, out)
    }

    /// An initiator probes both ways to distance 1 at once (its round 0) and starts its round clock.
    #[test]
    fn initiator_probes_at_round_zero_and_starts_its_clock() {
        let mut a = ring(SyncHs::new, 5, Rule::Max);
        let mut out = Outbox::default();
        a.on_start(&mut out);
        assert_eq!(out.effects(), &[send(RIGHT, probe(5, 0, 1)), send(LEFT, probe(5, 0, 1)), TICK]);
        assert_eq!(a.state(), "candidate");
        out.clear();
        a.on_start(&mut out);
        assert!(out.effects().is_empty(), "a second start is ignored");
    }

    /// Nothing is handled between ticks: a node woken by a message only starts its clock, and at its first tick
    /// starts phase 0 and handles everything that arrived, in arrival order.
    #[test]
    fn messages_wait_for_the_tick_and_a_woken_node_joins_at_its_first() {
        let mut a = ring(SyncHs::new, 3, Rule::Max);
        let mut out = Outbox::default();
        a.on_message(LEFT, probe(5, 1, 2), &mut out).unwrap();
        assert_eq!(out.effects(), &[TICK], "woken: clock started, nothing sent yet");
        out.clear();
        a.on_message(RIGHT, probe(9, 0, 1), &mut out).unwrap();
        assert!(out.effects().is_empty(), "the clock is already running");
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(
            out.effects(),
            &[
                send(RIGHT, probe(3, 0, 1)),
                send(LEFT, probe(3, 0, 1)),
                send(RIGHT, probe(5, 1, 1)),
                send(RIGHT, Msg::Reply { id: 9, stage: 0 }),
                TICK
            ]
        );
    }

    /// Relays: a better probe goes on with one link less, or is answered at its limit; a worse one is
    /// swallowed; replies for other candidates are passed on towards them.
    #[test]
    fn relays_count_down_bounce_swallow_and_pass_replies() {
        let (mut a, mut out) = candidate_in(4, 0);
        a.on_message(LEFT, probe(7, 2, 3), &mut out).unwrap();
        a.on_message(RIGHT, probe(6, 0, 1), &mut out).unwrap();
        a.on_message(RIGHT, probe(2, 1, 2), &mut out).unwrap();
        a.on_message(LEFT, Msg::Reply { id: 9, stage: 3 }, &mut out).unwrap();
        assert!(out.effects().is_empty());
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(
            out.effects(),
            &[
                send(RIGHT, probe(7, 2, 2)),
                send(RIGHT, Msg::Reply { id: 6, stage: 0 }),
                send(RIGHT, Msg::Reply { id: 9, stage: 3 }),
                TICK
            ]
        );
    }

    /// A candidate starts phase i + 1 only with both replies of phase i, at the tick that handles the second,
    /// probing twice as far.
    #[test]
    fn next_phase_needs_both_replies() {
        let (mut a, mut out) = candidate_in(5, 1);
        a.on_message(LEFT, Msg::Reply { id: 5, stage: 1 }, &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(out.effects(), &[TICK], "one reply is not enough");
        out.clear();
        a.on_message(RIGHT, Msg::Reply { id: 5, stage: 1 }, &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(out.effects(), &[send(RIGHT, probe(5, 2, 4)), send(LEFT, probe(5, 2, 4)), TICK]);
    }

    /// A candidate that loses a probe stops: its other reply alone never starts a phase, however many rounds
    /// pass, yet it still relays better probes.
    #[test]
    fn a_candidate_that_loses_a_probe_stops_but_relays() {
        let (mut a, mut out) = candidate_in(5, 2);
        a.on_message(RIGHT, Msg::Reply { id: 5, stage: 2 }, &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        out.clear();
        for _ in 0..10 {
            a.on_timer(ROUND_TIMER, &mut out);
        }
        assert!(out.effects().iter().all(|e| *e == TICK), "no probe without the second reply: {:?}", out.effects());
        out.clear();
        a.on_message(LEFT, probe(8, 3, 8), &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(out.effects(), &[send(RIGHT, probe(8, 3, 7)), TICK]);
        assert_eq!(a.state(), "candidate");
    }

    /// The leader's probe going round elects it: the first copy decides and starts one notification, the
    /// second (same tick) changes nothing, and the clock stops once the notification has come back.
    #[test]
    fn own_probe_round_the_ring_elects() {
        let (mut a, mut out) = candidate_in(9, 3);
        a.on_message(LEFT, probe(9, 3, 2), &mut out).unwrap();
        a.on_message(RIGHT, probe(9, 3, 2), &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        let leads = Decision { role: Role::Leader, leader: 9 };
        assert_eq!(out.effects(), &[Effect::Decide(leads), send(RIGHT, Msg::Notify { leader: 9 }), TICK]);
        assert_eq!((a.end.decision(), a.state()), (Some(leads), "leader"));
        out.clear();
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(out.effects(), &[TICK], "the leader ticks until its notification is back");
        out.clear();
        a.on_message(LEFT, Msg::Notify { leader: 9 }, &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        assert!(out.effects().is_empty(), "notification back: no resend, clock stopped");
    }

    /// A follower decides on the notification, passes it on away from where it came, and stops its clock; a
    /// message reaching it later restarts the clock and is still handled (HS rules do not depend on deciding).
    #[test]
    fn follower_decides_forwards_and_stops() {
        let (mut a, mut out) = candidate_in(3, 0);
        a.on_message(RIGHT, Msg::Notify { leader: 9 }, &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        let follows = Decision { role: Role::Follower, leader: 9 };
        assert_eq!(out.effects(), &[Effect::Decide(follows), send(LEFT, Msg::Notify { leader: 9 })]);
        assert_eq!(a.state(), "follower");
        out.clear();
        a.on_message(LEFT, probe(8, 4, 1), &mut out).unwrap();
        a.on_timer(ROUND_TIMER, &mut out);
        assert_eq!(out.effects(), &[TICK, send(LEFT, Msg::Reply { id: 8, stage: 4 })]);
    }

    /// What a node cannot have been sent is refused on arrival (a tick cannot report errors) and not queued.
    #[test]
    fn impossible_messages_are_refused_on_arrival() {
        let mut out = Outbox::default();
        let mut asleep = ring(SyncHs::new, 3, Rule::Max);
        assert!(asleep.on_message(LEFT, Msg::Reply { id: 5, stage: 0 }, &mut out).is_err());
        assert!(asleep.on_message(LEFT, Msg::Notify { leader: 5 }, &mut out).is_err());
        assert!(asleep.on_message(LEFT, probe(3, 0, 1), &mut out).is_err(), "its own probe before it probed");
        assert!(asleep.on_message(LEFT, Msg::Wakeup, &mut out).is_err());
        assert!(asleep.on_message(2, probe(5, 0, 1), &mut out).is_err());
        assert!(asleep.on_message(LEFT, probe(5, 0, 0), &mut out).is_err());
        assert!(out.effects().is_empty() && asleep.state() == "asleep");
        let (mut a, mut out) = candidate_in(5, 1);
        assert!(a.on_message(LEFT, Msg::Reply { id: 5, stage: 0 }, &mut out).is_err(), "reply of another phase");
        assert!(out.effects().is_empty());
    }

    /// The ideal synchronous system: aligned clocks, every message sent at round r handled at round r + 1.
    /// Returns every effect with its round and position.
    fn lockstep(kind: TopologyKind, ids: &[u64], initiators: &[u32]) -> Vec<(u64, u32, Effect)> {
        let n = ids.len() as u32;
        let topo = Topology::build(kind, n, 3).unwrap();
        let mut nodes: Vec<SyncHs> = ids.iter().map(|&id| ring(SyncHs::new, id, Rule::Max)).collect();
        let mut log = Vec::new();
        let mut in_flight: Vec<(u32, Port, Msg)> = Vec::new();
        let mut tick_next = vec![false; n as usize];
        let mut out = Outbox::default();
        // Effects of `pos` at `round`: sends fly to round + 1; a timer set at a tick fires next round.
        let mut apply = |round: u64, pos: u32, out: &mut Outbox, fly: &mut Vec<_>, tick: &mut Vec<bool>| {
            for e in out.drain() {
                match e {
                    Effect::Send { port, msg } => {
                        let l = topo.link(pos, port).unwrap();
                        fly.push((l.peer, l.remote_port, msg));
                    }
                    Effect::SetTimer { after_ms, .. } => {
                        assert_eq!(after_ms, ROUND_MS);
                        tick[pos as usize] = true;
                    }
                    _ => {}
                }
                log.push((round, pos, e));
            }
        };
        for &p in initiators {
            nodes[p as usize].on_start(&mut out);
            apply(0, p, &mut out, &mut in_flight, &mut tick_next);
        }
        for round in 1.. {
            if in_flight.is_empty() && !tick_next.contains(&true) {
                break;
            }
            // Round r - 1's messages arrive before the tick of round r; a clock they start ticks at r.
            let mut tick_now = std::mem::replace(&mut tick_next, vec![false; n as usize]);
            let mut unused = Vec::new();
            for (to, port, msg) in std::mem::take(&mut in_flight) {
                nodes[to as usize].on_message(port, msg, &mut out).unwrap();
                apply(round, to, &mut out, &mut unused, &mut tick_now);
            }
            assert!(unused.is_empty(), "nothing is sent between ticks");
            for p in 0..n {
                if tick_now[p as usize] {
                    nodes[p as usize].on_timer(ROUND_TIMER, &mut out);
                    apply(round, p, &mut out, &mut in_flight, &mut tick_next);
                }
            }
        }
        log
    }

    /// Round of an effect matching `f` (the first), if any.
    fn round_of(log: &[(u64, u32, Effect)], f: impl Fn(u32, &Effect) -> bool) -> Option<u64> {
        log.iter().find(|(_, p, e)| f(*p, e)).map(|(r, ..)| *r)
    }

    /// Phases start and end at the rounds they should, in the ideal synchronous system: a candidate that
    /// joins at round s (0 for initiators, its distance to the nearest initiator otherwise) sends its phase-i
    /// probes at round s + 2^(i+1) - 2 exactly; the leader decides at s* + 2^(p+1) - 2 + n (p = ceil(log2 n)),
    /// after which only the notification moves, and everybody knows by n - 1 rounds later.
    #[test]
    fn phases_end_at_the_rounds_they_should() {
        for n in 2..=40u32 {
            for seed in 0..6u64 {
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                let initiators: Vec<u32> = match seed % 3 {
                    0 => (0..n).collect(),
                    1 => vec![(seed as u32 * 7) % n],
                    _ => (0..n).filter(|p| p % 3 == 0).collect(),
                };
                let kind = if seed % 2 == 0 { TopologyKind::RingBi } else { TopologyKind::RingBiUnoriented };
                let log = lockstep(kind, &ids, &initiators);
                let ctx = format!("n={n} ids={ids:?} initiators={initiators:?} {kind:?}");
                let joined =
                    |p: u32| initiators.iter().map(|&i| (p.abs_diff(i)).min(n - p.abs_diff(i)) as u64).min().unwrap();
                for &(round, pos, e) in &log {
                    if let Effect::Send { msg: Msg::Probe { id, stage, .. }, .. } = e
                        && id == ids[pos as usize]
                    {
                        assert_eq!(round, joined(pos) + phase_start(stage), "{ctx}: phase {stage} of {id}");
                    }
                }
                let winner = *ids.iter().max().unwrap();
                let leader = ids.iter().position(|&id| id == winner).unwrap() as u32;
                let p = ceil_log2(n as u64) as u32;
                let decided = round_of(&log, |_, e| matches!(e, Effect::Decide(d) if d.role == Role::Leader));
                let expected = joined(leader) + phase_start(p) + n as u64;
                assert_eq!(decided, Some(expected), "{ctx}");
                assert!(
                    log.iter().all(|(r, _, e)| *r <= expected
                        || !matches!(e, Effect::Send { msg: Msg::Probe { .. } | Msg::Reply { .. }, .. })),
                    "{ctx}: election messages after the decision"
                );
                let last = log.iter().filter(|(_, _, e)| matches!(e, Effect::Decide(_))).map(|(r, ..)| *r).max();
                assert_eq!(last, Some(expected + n as u64 - 1), "{ctx}");
                let decisions = log.iter().filter(|(_, _, e)| matches!(e, Effect::Decide(_))).count();
                assert_eq!(decisions, n as usize, "{ctx}");
            }
        }
    }

    /// In the simulator, with every node initiating, both the default schedule (FIFO, random delays up to 16,
    /// less than a round) and unit delays are lock-step: the leader's notification is back at round
    /// 2^(p+1) - 2 + 2n exactly, so the run ends at that many rounds times ROUND_MS, and Lynch's time bound
    /// (3n rounds to elect for n a power of two, 5n otherwise) holds.
    #[test]
    fn the_simulator_runs_in_lock_step_under_the_assumption() {
        let spec = find("sync-hs").unwrap();
        for n in [2u32, 3, 5, 8, 13, 64, 100, 257] {
            let ring = Topology::ring(TopologyKind::RingBi, n, 0).unwrap();
            let all: Vec<u32> = (0..n).collect();
            let p = ceil_log2(n as u64) as u32;
            let elected = phase_start(p) + n as u64;
            let lynch = if n.is_power_of_two() { 3 * n as u64 } else { 5 * n as u64 };
            assert!(elected <= lynch, "n = {n}: elected at round {elected}, Lynch says at most {lynch}");
            for seed in 0..3 {
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                for cfg in [
                    SimConfig { seed, ..SimConfig::default() },
                    SimConfig { seed, unit_delay: true, ..SimConfig::default() },
                ] {
                    assert!(cfg.unit_delay || cfg.max_delay < ROUND_MS, "the default delays fit in a round");
                    let r = sim::run(spec, &ring, &ids, &all, Rule::Max, &cfg);
                    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
                    assert_eq!(r.end_time, (elected + n as u64) * ROUND_MS, "n = {n} ids={ids:?} {cfg:?}");
                }
            }
        }
    }

    /// Unit delays keep the lock-step with any initiators: a node h links from the nearest initiator joins at
    /// round h and its round-g tick falls at time g * ROUND_MS + h (each wake-up hop adds one time unit, which
    /// neighbours' clocks absorb since timers fire before deliveries of the same instant). So the last follower
    /// at notification distance j decides at round s* + 2^(p+1) - 2 + n + j, and the run ends at the latest of
    /// those ticks and the leader's tick that takes its notification back.
    #[test]
    fn unit_delays_are_lock_step_with_any_initiators() {
        let spec = find("sync-hs").unwrap();
        for n in [2u32, 3, 6, 11, 32, 50] {
            for seed in 0..6u64 {
                let ring = Topology::ring(TopologyKind::RingBi, n, 0).unwrap();
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                let init =
                    crate::topology::pick_initiators(n, [1, 2, n / 3].map(|k| k.max(1))[seed as usize % 3], seed);
                let cfg = SimConfig { seed, unit_delay: true, ..SimConfig::default() };
                let r = sim::run(spec, &ring, &ids, &init, Rule::Max, &cfg);
                assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
                let h = |p: u32| init.iter().map(|&i| p.abs_diff(i).min(n - p.abs_diff(i)) as u64).min().unwrap();
                let leader = ids.iter().position(|&id| id == n as u64).unwrap() as u32;
                let decided = h(leader) + phase_start(ceil_log2(n as u64) as u32) + n as u64;
                // The notification goes right (RIGHT leads to position + 1 on this oriented ring).
                let follower_ticks = (1..n).map(|j| (decided + j as u64) * ROUND_MS + h((leader + j) % n));
                let last = follower_ticks.chain([(decided + n as u64) * ROUND_MS + h(leader)]).max().unwrap();
                assert_eq!(r.end_time, last, "n = {n} ids={ids:?} initiators={init:?}");
            }
        }
    }

    /// The count depends on the ids only: every initiator set and every schedule, including those that break
    /// the synchrony assumption (random delays with woken nodes, staggered wake-ups, non-FIFO delays up to 64,
    /// longer than a round), on either orientation, gives the same total, the same per-node sends and the same
    /// bytes, and it stays within Lynch's bound.
    #[test]
    fn the_count_depends_on_the_ids_only() {
        let spec = find("sync-hs").unwrap();
        for n in [2u32, 3, 4, 7, 16, 33, 100] {
            for seed in 0..4u64 {
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                let all: Vec<u32> = (0..n).collect();
                let reference = sim::run(
                    spec,
                    &Topology::ring(TopologyKind::RingBi, n, 0).unwrap(),
                    &ids,
                    &all,
                    Rule::Max,
                    &SimConfig::default(),
                );
                assert!(reference.counters.messages <= reference.bound);
                assert_eq!(reference.counters.notification_messages, n as u64);
                for k in [1, n / 2, n] {
                    let init = crate::topology::pick_initiators(n, k.max(1), seed);
                    for kind in [TopologyKind::RingBi, TopologyKind::RingBiUnoriented] {
                        let ring = Topology::ring(kind, n, seed).unwrap();
                        for cfg in [
                            SimConfig { seed, ..SimConfig::default() },
                            SimConfig { seed, unit_delay: true, fifo: false, ..SimConfig::default() },
                            SimConfig { seed, stagger: true, ..SimConfig::default() },
                            SimConfig { seed, fifo: false, max_delay: 64, ..SimConfig::default() },
                            SimConfig { seed, fifo: false, stagger: true, max_delay: 200, ..SimConfig::default() },
                        ] {
                            let r = sim::run(spec, &ring, &ids, &init, Rule::Max, &cfg);
                            let ctx = format!("n={n} ids={ids:?} init={init:?} {kind:?} {cfg:?}");
                            assert!(r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
                            assert_eq!(r.counters, reference.counters, "{ctx}");
                            assert_eq!(r.sent_per_node, reference.sent_per_node, "{ctx}");
                        }
                    }
                }
            }
        }
    }

    /// A unimodal arrangement (ascending ids: one local extremum under either rule) costs exactly
    /// 6n + 2^(p+2) - 8, and no random arrangement costs less.
    #[test]
    fn unimodal_arrangements_cost_the_least() {
        let spec = find("sync-hs").unwrap();
        for n in 2..=70u32 {
            let ring = Topology::ring(TopologyKind::RingBi, n, 0).unwrap();
            let all: Vec<u32> = (0..n).collect();
            for rule in [Rule::Max, Rule::Min] {
                let cost =
                    |ids: &[u64]| sim::run(spec, &ring, ids, &all, rule, &SimConfig::default()).counters.messages;
                let best = cost(&IdOrder::Ascending.arrange(n).unwrap());
                assert_eq!(best, best_case_messages(n as u64), "n = {n} {rule:?}");
                for seed in 0..5 {
                    assert!(cost(&IdOrder::Random(seed).arrange(n).unwrap()) >= best);
                }
            }
        }
    }
}
