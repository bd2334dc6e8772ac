//! # Heartbeat failure detector, as a wrapper around any algorithm
//!
//! * Source: a dedicated failure detector at every process, unreliable in the
//!   sense of T. D. Chandra, S. Toueg, "Unreliable failure detectors for
//!   reliable distributed systems", JACM 43(2), 1996: it can miss a crash
//!   (incompleteness) and suspect a live node (inaccuracy).
//! * Network: any; the neighbours the inner algorithm says it needs
//!   ([`Algorithm::watched`], every one by default) are watched. Timer-driven
//!   and pure: no clock, only [`Effect::SetTimer`].
//! * Cost: one [`Msg::Heartbeat`] per watched port, and one per port that
//!   watches this node, every `period`; counted apart from election messages
//!   ([`crate::counters`]) and never against a bound.
//!
//! [`Detected<A>`] wraps a failure-tolerant algorithm `A`. Every `period` it
//! sends `Heartbeat { term, leading, watching: true }` on every watched port
//! (the last term the inner algorithm announced with [`Effect::Lead`], 0
//! before any, and whether that announcement named this node as the leader)
//! and counts, per
//! port, the ticks since it last heard from that neighbour. **Any message
//! counts as hearing**, not heartbeats only: a neighbour busy sending election
//! messages is plainly alive, and a leader's reply to an election un-suspects
//! it *before* the inner algorithm handles the reply, so the two agree.
//! A neighbour silent for `timeout` is suspected: the inner algorithm gets
//! [`Input::Suspect`] `{ port, suspected: true }`. Because the detector only looks at
//! its clock every `period`, suspicion comes after between `timeout` and
//! `timeout + period` of silence (exactly: after ⌈timeout/period⌉ + 1 ticks
//! without a message). The first message heard from a suspected neighbour
//! un-suspects it (`suspected: false`) before that message is handed
//! on. A heartbeat's term goes to the inner algorithm as
//! [`Input::Heartbeat`] (so a node that missed a newer term's
//! election messages still learns of it, see [`super::bully`]); every other
//! message goes to the inner algorithm unchanged. A heartbeat whose term is
//! above [`super::MAX_TERM`] is refused and counts as no hearing.
//!
//! **Reciprocity.** Watching is often one-sided: a follower of the
//! ZooKeeper-style algorithm watches its leader only, while a node looking for
//! a leader watches everyone. A node that watches another would then suspect
//! it although it lives, since nothing makes the other one send heartbeats.
//! So heartbeats say whether their sender watches the receiver, and a node
//! answers every neighbour that asked within the suspicion window with
//! heartbeats of its own (`watching: false`, which are not answered in
//! turn). Every watched neighbour that lives is therefore heard every period,
//! whatever it watches itself, and heartbeats per period stay at most twice
//! the watched pairs: O(n) when every node watches O(1) neighbours and the
//! leader watches all.
//!
//! **Timers.** A node has [`TIMER_SLOTS`](super::TIMER_SLOTS) (8)
//! timers, ids 0..=7 (see [`Effect::SetTimer`]). The detector owns ids 6 and
//! 7 (7 is its clock; 6 is reserved for it); inner algorithms use 0..=5. An
//! inner timer on 6 or 7 would silently replace the detector's clock: the
//! wrapper checks every timer effect of the inner algorithm and panics on one
//! (a programming error; the runtime turns the panic into a recorded failure
//! of that election).
//!
//! **False suspicion.** The detector cannot tell a crashed neighbour from a
//! slow one: a link delay, a GC pause or a descheduled process longer than
//! `timeout` makes a live node suspected (Chandra and Toueg's "inaccuracy").
//! Under the bully algorithm ([`super::bully`]) a falsely suspected leader
//! costs an election: if the leader answers it in time, nothing changes but
//! messages; if it does not, a lower node leads a higher term, and the old
//! leader steps down when that node's `Coordinator` reaches it (then, being the
//! better id, it bullies its way back with a still higher term). Pick `timeout`
//! well above the worst pause you expect: [`DetectorConfig::LOOPBACK`] for
//! local clusters, [`DetectorConfig::KUBERNETES`] across pods and nodes.
//!
//! **Termination.** Heartbeats never stop: a detected algorithm keeps a
//! leadership until its driver stops it, and a simulation of one never goes
//! quiet. The catalogue's one-shot entries therefore run without the detector
//! (see [`super::bully`]); only the kept-leadership mode composes it.

use super::{AlgoError, Algorithm, Effect, Input, Msg, Outbox, Port, TimerId};

/// Reserved for the detector (inner algorithms must not use it): the first
/// slot above an algorithm's own ([`ALGORITHM_TIMERS`](super::ALGORITHM_TIMERS)).
pub const RESERVED_TIMER: TimerId = super::ALGORITHM_TIMERS;
/// The detector's clock: the node's last slot.
pub const HEARTBEAT_TIMER: TimerId = RESERVED_TIMER + 1;
const _: () = assert!(HEARTBEAT_TIMER as usize == super::TIMER_SLOTS - 1, "the detector takes the last two slots");
/// Is `timer` off limits to an inner algorithm: one of the detector's ids (6
/// or 7), or beyond the [`TIMER_SLOTS`](super::TIMER_SLOTS), which
/// are no timers at all?
pub fn is_reserved(timer: TimerId) -> bool {
    timer >= RESERVED_TIMER
}

pub use crate::protocol::detector::{DetectorConfig, MAX_TIMEOUT_MS};

/// A leader's memory of which neighbours' heartbeats show an older term
/// since it last told them who leads. A heartbeat sent just before the
/// leader's announcement arrived is normal and costs nothing; the second
/// one in a row means the announcement was lost, and the leader tells that
/// neighbour again ([`Behind::heard`] returns `true`). So a failure-free
/// run sends no message beyond the algorithm's own, and a lost announcement
/// is repaired within two heartbeat periods.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Behind(Box<[u8]>);

impl Behind {
    /// No neighbour behind, on `ports` ports.
    pub fn new(ports: usize) -> Behind {
        Behind(vec![0; ports].into())
    }

    /// A heartbeat on `port` showed an older term: is it time to tell it again?
    pub fn heard(&mut self, port: Port) -> bool {
        let Some(c) = self.0.get_mut(port as usize) else { return false };
        *c = c.saturating_add(1);
        if *c >= 2 {
            *c = 0;
            return true;
        }
        false
    }

    /// Every neighbour was just told.
    pub fn told_all(&mut self) {
        self.0.iter_mut().for_each(|c| *c = 0);
    }
}

/// An algorithm with a heartbeat failure detector in front of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Detected<A> {
    inner: A,
    cfg: DetectorConfig,
    started: bool,
    /// Per port: clock ticks since the neighbour was last heard (at most
    /// `suspect_after`).
    silent: Vec<u32>,
    /// Per port: currently suspected.
    suspected: Vec<bool>,
    /// Per port: clock ticks since the neighbour last sent a heartbeat that
    /// asked for answers (`watching: true`), counting no further than
    /// `suspect_after` (where it stops mattering; also the start value: as
    /// if it asked long ago).
    asked: Vec<u32>,
    suspect_after: u32,
    /// The inner algorithm's last announced term, carried by heartbeats.
    term: u64,
    /// Its last announcement named this node the leader.
    leading: bool,
    /// This node's id.
    id: u64,
}

impl<A: Algorithm> Detected<A> {
    /// Watch `ports` neighbours on behalf of `inner`, the algorithm of node `id`.
    pub fn new(inner: A, id: u64, ports: u32, cfg: DetectorConfig) -> Self {
        Detected {
            inner,
            cfg,
            started: false,
            silent: vec![0; ports as usize],
            suspected: vec![false; ports as usize],
            asked: vec![cfg.suspect_after(); ports as usize],
            suspect_after: cfg.suspect_after(),
            term: 0,
            leading: false,
            id,
        }
    }

    /// The wrapped algorithm.
    pub fn inner(&self) -> &A {
        &self.inner
    }

    /// Is the neighbour behind `port` suspected now?
    pub fn is_suspected(&self, port: Port) -> bool {
        self.suspected.get(port as usize).copied().unwrap_or(false)
    }

    /// The detector's settings.
    pub fn config(&self) -> DetectorConfig {
        self.cfg
    }

    /// A heartbeat to every watched neighbour (asking for answers), and an
    /// answer to every other one that asked within the suspicion window.
    fn heartbeats(&self, out: &mut Outbox) {
        for port in 0..self.silent.len() as Port {
            let watching = self.inner.watched(port);
            if watching || self.asked[port as usize] < self.suspect_after {
                out.send(port, Msg::Heartbeat { term: self.term, leading: self.leading, watching });
            }
        }
    }

    /// Start the clock (once): first heartbeats now, the next after a period.
    fn start(&mut self, out: &mut Outbox) {
        if self.started {
            return;
        }
        self.started = true;
        self.heartbeats(out);
        out.push(Effect::SetTimer { timer: HEARTBEAT_TIMER, after_ms: self.cfg.period_ms });
    }

    /// Check what the inner algorithm queued since `from`: its timers must
    /// stay off the detector's ids, and its latest term goes into heartbeats.
    fn inspect(&mut self, out: &Outbox, from: usize) {
        for e in &out.effects()[from..] {
            match *e {
                Effect::SetTimer { timer, .. } | Effect::CancelTimer { timer } => assert!(
                    !is_reserved(timer),
                    "timer {timer} is reserved for the failure detector (inner algorithms use 0..=5)"
                ),
                Effect::Lead(l) => {
                    self.term = l.term;
                    self.leading = l.leader == Some(self.id);
                }
                _ => {}
            }
        }
    }

    fn tick(&mut self, out: &mut Outbox) {
        self.heartbeats(out);
        // Both counters stop at the window: beyond it, counting changes no
        // behaviour, and a node's state stays a finite value (the checker's
        // state space of a quiet cluster is finite).
        let window = self.suspect_after;
        self.asked.iter_mut().for_each(|a| *a = a.saturating_add(1).min(window));
        out.push(Effect::SetTimer { timer: HEARTBEAT_TIMER, after_ms: self.cfg.period_ms });
        for port in 0..self.silent.len() {
            if !self.inner.watched(port as Port) {
                // Not watched: no heartbeats expected, so silence means nothing (a suspicion
                // already made stands until the neighbour is heard).
                self.silent[port] = 0;
                continue;
            }
            self.silent[port] = self.silent[port].saturating_add(1).min(window);
            if self.silent[port] >= self.suspect_after && !self.suspected[port] {
                self.suspected[port] = true;
                let _ = self.pass(Input::Suspect { port: port as Port, suspected: true }, out);
            }
        }
    }
}

impl<A: Algorithm> Detected<A> {
    /// Hand `input` to the inner algorithm and check what it queued.
    fn pass(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        let from = out.effects().len();
        let r = self.inner.step(input, out);
        self.inspect(out, from);
        r
    }

    /// A message arrived on `port`: the neighbour lives (un-suspected
    /// first if it was suspected); a heartbeat's term and claim go in as
    /// [`Input::Heartbeat`], any other message as it is.
    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let p = port as usize;
        if p >= self.silent.len() {
            return Err(AlgoError::BadPort { port });
        }
        if let Msg::Heartbeat { .. } = msg {
            super::check_term("failure detector", &msg)?;
        }
        // A node woken by a message is awake: its clock runs from now.
        self.start(out);
        self.silent[p] = 0;
        let from = out.effects().len();
        if self.suspected[p] {
            self.suspected[p] = false;
            let _ = self.inner.step(Input::Suspect { port, suspected: false }, out);
        }
        let r = match msg {
            Msg::Heartbeat { term, leading, watching } => {
                if watching {
                    self.asked[p] = 0;
                }
                self.inner.step(Input::Heartbeat { port, term, leading }, out)
            }
            _ => self.inner.step(Input::Message { port, msg }, out),
        };
        self.inspect(out, from);
        r
    }
}

/// Every input but the detector's own (its clock, its heartbeats) reaches
/// the inner algorithm; what the inner algorithm queues is checked
/// (`inspect`).
impl<A: Algorithm + Clone + Eq + std::hash::Hash + 'static> Algorithm for Detected<A> {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                self.start(out);
                self.pass(Input::Start, out)
            }
            Input::Message { port, msg } => self.receive(port, msg, out),
            Input::Timer(HEARTBEAT_TIMER) => {
                self.tick(out);
                Ok(())
            }
            Input::Timer(RESERVED_TIMER) => Ok(()),
            // The inner algorithm hands over, told whom this detector suspects.
            Input::Leave { suspected: _ } => {
                let from = out.effects().len();
                let r = self.inner.step(Input::Leave { suspected: &self.suspected }, out);
                self.inspect(out, from);
                r
            }
            // Suspicion from outside (a driver's own detector) goes straight to the inner algorithm.
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => self.pass(input, out),
        }
    }

    fn held(&self) -> usize {
        self.inner.held()
    }

    /// A heartbeat from a neighbour this node does not suspect, with a term
    /// it accepts, that the inner algorithm ignores (its state unchanged,
    /// nothing queued: tried on a copy): all it does is zero the neighbour's
    /// `silent` (and `asked`, if it asks for answers), which only the clock
    /// ([`HEARTBEAT_TIMER`]) and the first start read. The node must be
    /// awake (a message wakes a sleeping one, which is a step).
    fn only_refreshes(&self, port: Port, msg: &Msg) -> bool {
        let Msg::Heartbeat { term, leading, .. } = *msg else { return false };
        let p = port as usize;
        if !self.started || p >= self.silent.len() || self.suspected[p] || super::check_term("", msg).is_err() {
            return false;
        }
        let mut inner = self.inner.clone();
        let mut out = Outbox::default();
        let _ = inner.step(Input::Heartbeat { port, term, leading }, &mut out);
        out.effects().is_empty() && inner == self.inner
    }

    /// The detector's own timers have no name in the inner algorithm's words.
    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        match timer {
            HEARTBEAT_TIMER | RESERVED_TIMER => None,
            _ => self.inner.timer_name(timer),
        }
    }

    fn state(&self) -> &'static str {
        self.inner.state()
    }

    /// What the detector watches is its own business: the question is for
    /// its inner algorithm, which the detector asks itself.
    fn watched(&self, _port: Port) -> bool {
        true
    }

    fn suspects(&self, port: Port) -> bool {
        self.is_suspected(port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::Leadership;
    use crate::algo::harness::Feed;
    use crate::algo::kept::testing::started;

    /// Test inner algorithm: records what reaches it, echoes a `Notify` back,
    /// and sets the timer a `Wakeup` names.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    struct Recorder {
        got: Vec<(Port, Msg)>,
        suspicions: Vec<(Port, bool)>,
        timers: Vec<TimerId>,
        heard: Vec<(Port, u64, bool)>,
        /// Ports not watched (every port is watched by default).
        unwatched: Vec<Port>,
    }

    impl Algorithm for Recorder {
        fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
            match input {
                Input::Start => {
                    out.push(Effect::Lead(Leadership { term: 4, leader: Some(1) }));
                    out.push(Effect::SetTimer { timer: 0, after_ms: 10 });
                }
                Input::Message { port, msg } => {
                    self.got.push((port, msg));
                    match msg {
                        Msg::Notify { leader } => out.send(port, Msg::Notify { leader }),
                        Msg::Saturate { id } => out.push(Effect::SetTimer { timer: id as TimerId, after_ms: 1 }),
                        _ => {}
                    }
                }
                Input::Timer(timer) => self.timers.push(timer),
                Input::Suspect { port, suspected } => self.suspicions.push((port, suspected)),
                Input::Heartbeat { port, term, leading } => self.heard.push((port, term, leading)),
                Input::Leave { .. } | Input::StoreReply(_) | Input::Restore(_) => {}
            }
            Ok(())
        }
        fn state(&self) -> &'static str {
            "recording"
        }
        fn watched(&self, port: Port) -> bool {
            !self.unwatched.contains(&port)
        }
        fn suspects(&self, _port: Port) -> bool {
            false
        }
        fn timer_name(&self, _timer: TimerId) -> Option<&'static str> {
            None
        }
        fn held(&self) -> usize {
            0
        }
        fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
            false
        }
    }

    fn detected(ports: u32) -> Detected<Recorder> {
        Detected::new(Recorder::default(), 1, ports, DetectorConfig { period_ms: 50, timeout_ms: 200 })
    }

    /// Heartbeats on every port; the recorder (node 1) announced that it leads term 4.
    fn heartbeats(term: u64, ports: u32) -> Vec<Effect> {
        (0..ports)
            .map(|port| Effect::Send { port, msg: Msg::Heartbeat { term, leading: term == 4, watching: true } })
            .collect()
    }

    fn clock() -> Effect {
        Effect::SetTimer { timer: HEARTBEAT_TIMER, after_ms: 50 }
    }

    /// An inner algorithm that ignores heartbeats (as a settled follower does).
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    struct Deaf;

    impl Algorithm for Deaf {
        fn step(&mut self, _input: Input<'_>, _out: &mut Outbox) -> Result<(), AlgoError> {
            Ok(())
        }
        fn state(&self) -> &'static str {
            "deaf"
        }
        fn watched(&self, _port: Port) -> bool {
            true
        }
        fn suspects(&self, _port: Port) -> bool {
            false
        }
        fn timer_name(&self, _timer: TimerId) -> Option<&'static str> {
            None
        }
        fn held(&self) -> usize {
            0
        }
        fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
            false
        }
    }

    /// A heartbeat "only refreshes" exactly when delivering it changes nothing but the sender's
    /// `silent` and `asked` counts (what only the clock reads) and queues nothing: not before the
    /// node wakes, not from a suspected neighbour, not with an implausible term, not when the
    /// inner algorithm does something with it, and never for other messages.
    #[test]
    fn only_a_heartbeat_the_inner_algorithm_ignores_only_refreshes() {
        let hb = Msg::Heartbeat { term: 0, leading: false, watching: true };
        let mut d = Detected::new(Deaf, 1, 2, DetectorConfig { period_ms: 50, timeout_ms: 200 });
        assert!(!d.only_refreshes(1, &hb), "asleep: the message wakes it");
        let mut out = Outbox::default();
        d.on_start(&mut out);
        for _ in 0..2 {
            d.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        assert!(d.only_refreshes(1, &hb));
        let mut expected = d.clone();
        (expected.silent[1], expected.asked[1]) = (0, 0);
        let mut out = Outbox::default();
        d.on_message(1, hb, &mut out).unwrap();
        assert!(out.effects().is_empty(), "{:?}", out.effects());
        assert_eq!(d, expected, "only the sender's counts changed");
        assert!(
            !d.only_refreshes(1, &Msg::Heartbeat { term: crate::algo::MAX_TERM + 1, leading: false, watching: true })
        );
        assert!(!d.only_refreshes(1, &Msg::Notify { leader: 3 }));
        assert!(!d.only_refreshes(2, &hb), "no such port");
        for _ in 0..10 {
            d.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        assert!(d.is_suspected(0));
        assert!(!d.only_refreshes(0, &hb), "un-suspects the sender");
        let (r, _) = started(detected(2));
        assert!(!r.only_refreshes(1, &hb), "the recorder takes note of every heartbeat");
    }

    /// The detector's state is a finite value (so the checker's state space of a quiet cluster is
    /// finite): its counters stop at the suspicion window, where counting further changes nothing,
    /// so a node quiet for 6 ticks and one quiet for 60 are the same state, heartbeats and all.
    #[test]
    fn counters_stop_at_the_suspicion_window() {
        let (mut d, mut out) = started(detected(2));
        d.on_message(1, Msg::Heartbeat { term: 0, leading: false, watching: true }, &mut out).unwrap();
        for _ in 0..6 {
            d.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        let (mut later, mut longer) = (d.clone(), Outbox::default());
        for _ in 0..54 {
            later.on_timer(HEARTBEAT_TIMER, &mut longer);
        }
        assert_eq!(later, d, "quiet for 60 ticks as for 6");
        let (mut fresh, mut out) = started(detected(2));
        for _ in 0..6 {
            fresh.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        let asked_long_ago = {
            let mut d = d.clone();
            d.inner = fresh.inner.clone();
            d
        };
        assert_eq!(asked_long_ago, fresh, "a neighbour that asked long ago is one that never asked");
    }

    /// Starting sends heartbeats on every port and sets the clock before the
    /// inner algorithm starts; heartbeats carry the term it announced.
    #[test]
    fn start_sends_heartbeats_and_sets_the_clock() {
        let (mut d, mut out) = started(detected(3));
        let mut expected = heartbeats(0, 3);
        expected.push(clock());
        expected.push(Effect::Lead(Leadership { term: 4, leader: Some(1) }));
        expected.push(Effect::SetTimer { timer: 0, after_ms: 10 });
        assert_eq!(out.effects(), &expected[..]);
        out.clear();
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        let mut expected = heartbeats(4, 3);
        expected.push(clock());
        assert_eq!(out.effects(), &expected[..], "the next heartbeats carry term 4");
    }

    /// Timers driven by hand: with period 50 and timeout 200, a neighbour
    /// silent for 4 ticks is not yet suspected and is at the 5th (silence of
    /// 200..250 ms); one that keeps talking never is; a heartbeat from the
    /// suspected one un-suspects it (reported once, before anything else),
    /// and it is suspected again only after another full timeout.
    #[test]
    fn suspects_after_timeout_and_unsuspects_on_a_heartbeat() {
        let (mut d, mut out) = started(detected(2));
        for tick in 1..=4 {
            d.on_timer(HEARTBEAT_TIMER, &mut out);
            d.on_message(1, Msg::Heartbeat { term: 0, leading: false, watching: true }, &mut out).unwrap();
            assert!(d.inner().suspicions.is_empty(), "tick {tick}");
        }
        out.clear();
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        assert_eq!(d.inner().suspicions, vec![(0, true)], "port 0 silent for 5 ticks; port 1 talked");
        assert!(d.is_suspected(0) && !d.is_suspected(1));
        let mut expected = heartbeats(4, 2);
        expected.push(clock());
        assert_eq!(out.effects(), &expected[..], "heartbeats still go to a suspected neighbour");
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        assert_eq!(d.inner().suspicions.len(), 1, "suspected once, not at every tick");
        d.on_message(0, Msg::Heartbeat { term: 9, leading: true, watching: true }, &mut out).unwrap();
        assert_eq!(d.inner().suspicions, vec![(0, true), (0, false)]);
        assert!(d.inner().got.is_empty(), "heartbeats never reach the inner algorithm as messages");
        assert_eq!(d.inner().heard.last(), Some(&(0, 9, true)), "their term and claim do, after the un-suspicion");
        for _ in 0..4 {
            d.on_timer(HEARTBEAT_TIMER, &mut out);
            d.on_message(1, Msg::Heartbeat { term: 0, leading: false, watching: true }, &mut out).unwrap();
        }
        assert_eq!(d.inner().suspicions.len(), 2, "a fresh timeout starts at the last message");
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        assert_eq!(d.inner().suspicions[2..], [(0, true)]);
    }

    /// Any message counts as a sign of life: a suspected neighbour's election
    /// message un-suspects it first and is then handed to the inner algorithm
    /// unchanged, with the inner algorithm's reply.
    #[test]
    fn forwards_other_messages_after_unsuspecting() {
        let (mut d, mut out) = started(detected(2));
        for _ in 0..5 {
            d.on_timer(HEARTBEAT_TIMER, &mut out);
        }
        assert!(d.is_suspected(1));
        out.clear();
        d.on_message(1, Msg::Notify { leader: 3 }, &mut out).unwrap();
        assert_eq!(d.inner().suspicions, vec![(0, true), (1, true), (1, false)]);
        assert_eq!(d.inner().got, vec![(1, Msg::Notify { leader: 3 })]);
        assert_eq!(out.effects(), &[Effect::Send { port: 1, msg: Msg::Notify { leader: 3 } }]);
        assert!(matches!(d.on_message(2, Msg::Wakeup, &mut out), Err(AlgoError::BadPort { port: 2 })));
        assert_eq!(d.state(), "recording");
    }

    /// A neighbour this node does not watch gets no heartbeats and is never
    /// suspected, until it asks: a heartbeat with `watching: true` from it is
    /// answered (`watching: false`) at every tick of the suspicion window after
    /// it, so the asking side never suspects a live node that does not need it.
    /// Answers are not answered (no ping-pong between two nodes that watch
    /// neither), and the answers stop one window after the questions do.
    #[test]
    fn answers_the_neighbours_that_watch_it() {
        let mut d = Detected::new(
            Recorder { unwatched: vec![1], ..Recorder::default() },
            1,
            2,
            DetectorConfig { period_ms: 50, timeout_ms: 200 },
        );
        let sent_to = |out: &Outbox| -> Vec<(Port, bool)> {
            out.effects()
                .iter()
                .filter_map(|e| match *e {
                    Effect::Send { port, msg: Msg::Heartbeat { watching, .. } } => Some((port, watching)),
                    _ => None,
                })
                .collect()
        };
        let mut out = Outbox::default();
        d.on_start(&mut out);
        assert_eq!(sent_to(&out), [(0, true)], "only the watched port");
        for _ in 0..10 {
            out.clear();
            d.on_timer(HEARTBEAT_TIMER, &mut out);
            assert_eq!(sent_to(&out), [(0, true)]);
        }
        assert!(!d.is_suspected(1), "an unwatched neighbour is never suspected");
        d.on_message(1, Msg::Heartbeat { term: 0, leading: false, watching: false }, &mut out).unwrap();
        out.clear();
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        assert_eq!(sent_to(&out), [(0, true)], "an answer is not answered");
        d.on_message(1, Msg::Heartbeat { term: 0, leading: false, watching: true }, &mut out).unwrap();
        let suspect_after = DetectorConfig { period_ms: 50, timeout_ms: 200 }.suspect_after();
        for tick in 0..suspect_after {
            out.clear();
            d.on_timer(HEARTBEAT_TIMER, &mut out);
            assert_eq!(sent_to(&out), [(0, true), (1, false)], "tick {tick} after the question");
        }
        out.clear();
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        assert_eq!(sent_to(&out), [(0, true)], "the answers stop a window after the questions");
    }

    /// The inner algorithm's timers 0..=5 pass through both ways; the
    /// detector's own ids never reach it; an inner timer on a reserved id
    /// (6, 7, or 14 = 6 modulo the 8 slots) is refused.
    #[test]
    fn reserves_timers_6_and_7() {
        let (mut d, mut out) = started(detected(1));
        for t in 0..=5 {
            d.on_message(0, Msg::Saturate { id: t }, &mut out).unwrap();
            d.on_timer(t as TimerId, &mut out);
        }
        d.on_timer(RESERVED_TIMER, &mut out);
        d.on_timer(HEARTBEAT_TIMER, &mut out);
        assert_eq!(d.inner().timers, vec![0, 1, 2, 3, 4, 5]);
        assert!((0..6).all(|t| !is_reserved(t)) && is_reserved(6) && is_reserved(7) && is_reserved(14));
        for t in [6u64, 7, 14] {
            let mut d = detected(1);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                d.on_message(0, Msg::Saturate { id: t }, &mut Outbox::default())
            }));
            assert!(r.is_err(), "inner timer {t} must be refused");
        }
    }

    /// The presets are valid, Kubernetes' is the slower one, and a timeout
    /// shorter than the period is refused.
    #[test]
    fn configurations() {
        assert_eq!(DetectorConfig::default(), DetectorConfig::LOOPBACK);
        assert!(DetectorConfig::LOOPBACK.validate().is_ok() && DetectorConfig::KUBERNETES.validate().is_ok());
        const { assert!(DetectorConfig::KUBERNETES.timeout_ms > DetectorConfig::LOOPBACK.timeout_ms) };
        assert!(DetectorConfig { period_ms: 0, timeout_ms: 10 }.validate().is_err());
        assert!(DetectorConfig { period_ms: 100, timeout_ms: 50 }.validate().is_err());
        assert_eq!(DetectorConfig { period_ms: 50, timeout_ms: 120 }.suspect_after(), 4);
    }
}
