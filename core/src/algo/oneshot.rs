//! What the one-shot algorithms share: how an election ends at a node, and
//! the plumbing of a ring node.
//!
//! Every one-shot algorithm ends the same way at a node: it decides once and
//! for good ([`Ending`]). On a ring the winner then sends [`Msg::Notify`]
//! round the ring, and every other node decides and passes it on until it is
//! back at its sender, where it stops ([`Ending::elect`],
//! [`Ending::notified`], [`Ending::announce`]). Each algorithm still says, in
//! its own states, *when* a node decides; these helpers do what follows, which
//! is the same logic in every algorithm.
//!
//! Controlled Distance, Stages without FIFO and Alternate go through the same
//! statuses, Santoro's ([`CandidateStatus`]: asleep, candidate, defeated,
//! decided), and so do AsFar, ProbAsFar and All the Way ([`AwakeStatus`]:
//! asleep, awake, decided).
//! The ring algorithms also share some plumbing: a candidate sends its id
//! both ways ([`send_both`]), a defeated one relays the messages it held for a
//! later stage ([`relay_held`]), a node refuses ports it does not have
//! ([`ring_port`]), and MinMax, MinMax+ and BiMinMax find the extremum with
//! the same collecting round ([`collect`], [`collect_on`]). The errors several
//! algorithms report in the same words are built here too ([`misplaced`],
//! [`after_the_end`]), and so is the way Stages without FIFO and Alternate
//! take the notification ([`CandidateStatus::notified`]).
//!
//! Each one-shot ring algorithm is a [`OneShotNode`]: it writes its rules alone
//! (how it starts, how it takes a message, its state names), and its
//! [`Algorithm`] comes from one blanket impl that starts a node at most once,
//! refuses ports a ring node does not have and names the algorithm in the
//! error for a kind it does not use. AsFar and ProbAsFar are one
//! [`AsFarNode`](super::as_far::AsFarNode): the same rules, with the
//! direction of the own id fixed or drawn.

use std::fmt;

use super::{AlgoError, Algorithm, Decision, Input, LEFT, Msg, Outbox, Port, RIGHT, Role, Rule, TimerId, other};

/// What a node of a one-shot election has decided: nothing, then one
/// [`Decision`] for good, pushed as [`Effect::Decide`](super::Effect::Decide)
/// when it is made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ending {
    decision: Option<Decision>,
}

impl Ending {
    /// Decide `role` for `leader`.
    #[inline]
    pub fn decide(&mut self, role: Role, leader: u64, out: &mut Outbox) {
        self.decision = Some(Decision { role, leader });
        out.decide(role, leader);
    }

    /// Decide for `leader`: lead if it is this node's `own` id, follow
    /// otherwise (where the node that learns the winner need not be it).
    #[inline]
    pub fn decide_for(&mut self, own: u64, leader: u64, out: &mut Outbox) {
        self.decide(if leader == own { Role::Leader } else { Role::Follower }, leader, out);
    }

    /// This node, `id`, won: lead, and send the notification round the ring
    /// (to the right).
    #[inline]
    pub fn elect(&mut self, id: u64, out: &mut Outbox) {
        self.decide(Role::Leader, id, out);
        out.send(RIGHT, Msg::Notify { leader: id });
    }

    /// The notification of `leader` arrived on `port`: follow, and pass it
    /// on round the ring (out of the other port).
    #[inline]
    pub fn follow(&mut self, port: Port, leader: u64, out: &mut Outbox) {
        self.decide(Role::Follower, leader, out);
        out.send(other(port), Msg::Notify { leader });
    }

    /// The winner's notification of `leader` arrived on `port`. A node that
    /// has not decided follows and passes it on ([`Ending::follow`]); at a node
    /// that has (the leader, its notification back) it stops.
    #[inline]
    pub fn notified(&mut self, port: Port, leader: u64, out: &mut Outbox) {
        if self.decision.is_none() {
            self.follow(port, leader, out);
        }
    }

    /// Decide for `leader` as [`Ending::decide_for`] does, and send its
    /// notification on `to`: the node that learns the winner starts the
    /// notification (`to` = [`RIGHT`]), the others pass it on.
    #[inline]
    pub fn announce(&mut self, own: u64, leader: u64, to: Port, out: &mut Outbox) {
        self.decide_for(own, leader, out);
        out.send(to, Msg::Notify { leader });
    }

    /// The decision, once made.
    #[inline]
    pub fn decision(&self) -> Option<Decision> {
        self.decision
    }

    /// Has the node decided?
    #[inline]
    pub fn decided(&self) -> bool {
        self.decision.is_some()
    }

    /// The state name of a node that has decided: `"leader"` if it leads,
    /// else `"follower"`.
    pub fn role_name(&self) -> &'static str {
        match self.decision {
            Some(Decision { role: Role::Leader, .. }) => "leader",
            _ => "follower",
        }
    }
}

/// Where a node of a stage-based ring election stands, in Santoro's
/// statuses: Controlled Distance, Stages without FIFO and Alternate go
/// through exactly these (each with its own transitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CandidateStatus {
    /// Not woken yet.
    Asleep,
    /// Still competing for the current stage (or step).
    Candidate,
    /// Beaten: it relays what passes until the notification comes.
    Defeated,
    /// Decided (what, its [`Ending`] says).
    Done,
}

impl CandidateStatus {
    /// The state name of a node in this status whose decision is in `end`.
    pub fn name(self, end: &Ending) -> &'static str {
        match self {
            CandidateStatus::Asleep => "asleep",
            CandidateStatus::Candidate => "candidate",
            CandidateStatus::Defeated => "defeated",
            CandidateStatus::Done => end.role_name(),
        }
    }

    /// The notification of `leader` arrived on `port` at node `node`, in an
    /// algorithm whose candidates all wait for their stage's ids (Stages
    /// without FIFO, Alternate): only a defeated node can get it (it follows
    /// and passes it on) or the leader (it stops there); a candidate cannot.
    #[inline]
    pub fn notified(
        &mut self,
        end: &mut Ending,
        node: u64,
        port: Port,
        leader: u64,
        out: &mut Outbox,
    ) -> Result<(), AlgoError> {
        match self {
            CandidateStatus::Asleep | CandidateStatus::Candidate => Err(notified_candidate(node)),
            CandidateStatus::Defeated | CandidateStatus::Done => {
                *self = CandidateStatus::Done;
                end.notified(port, leader, out);
                Ok(())
            }
        }
    }
}

/// Where a node stands in an election in which every awake node plays the
/// same part until it decides: AsFar, ProbAsFar and All the Way go through
/// exactly these statuses (each with its own transitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AwakeStatus {
    /// Not woken yet.
    Asleep,
    /// Taking part.
    Awake,
    /// Decided (what, its [`Ending`] says).
    Done,
}

impl AwakeStatus {
    /// The state name of a node in this status whose decision is in `end`.
    pub fn name(self, end: &Ending) -> &'static str {
        match self {
            AwakeStatus::Asleep => "asleep",
            AwakeStatus::Awake => "awake",
            AwakeStatus::Done => end.role_name(),
        }
    }
}

/// Send a candidate's `msg` both ways round the ring, right first.
#[inline]
pub fn send_both(msg: Msg, out: &mut Outbox) {
    out.send(RIGHT, msg);
    out.send(LEFT, msg);
}

/// A ring candidate is defeated: relay the messages it held for a later
/// stage, in arrival order, each out of the port opposite the one it came on.
#[inline]
pub fn relay_held(held: &mut Vec<(Port, Msg)>, out: &mut Outbox) {
    for (port, msg) in std::mem::take(held) {
        out.send(other(port), msg);
    }
}

/// Send `msg` on each of a node's `ports` but `except`, in port order: a
/// wake-up or a notification flooding a tree or a mesh.
#[inline]
pub fn send_all_but(ports: u32, except: Option<Port>, msg: Msg, out: &mut Outbox) {
    for p in (0..ports).filter(|&p| Some(p) != except) {
        out.send(p, msg);
    }
}

/// Refuse a port a ring node does not have (anything but
/// [`LEFT`] and [`RIGHT`]).
#[inline]
pub fn ring_port(port: Port) -> Result<(), AlgoError> {
    if port > RIGHT { Err(AlgoError::BadPort { port }) } else { Ok(()) }
}

/// How a message wakes a sleeping [`OneShotNode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wake {
    /// An election message wakes it, as a start would, before the node
    /// takes it (Santoro's rule on rings).
    OnElection,
    /// Messages reach it asleep, and it decides itself whether one wakes it
    /// (AsFar, the participant ring and Controlled Distance, whose sleeping
    /// nodes pass a better id on without starting).
    InStep,
    /// A [`Msg::Wakeup`] wakes it, and is consumed:
    /// wake-ups are flooded first, and one reaching an awake node (two
    /// cross on a link) is ignored (tree saturation, Elect_root, the mesh).
    OnWakeup,
}

/// A node of a one-shot election, written as the algorithm's own rules
/// alone. Its [`Algorithm`] is the blanket impl below, which does what
/// every such node does alike: an initiator starts at most once (only while
/// [`OneShotNode::asleep`]), a message wakes a sleeping node as
/// [`OneShotNode::WAKE`] says, a port the node does not have is refused
/// before the algorithm sees the message ([`OneShotNode::check_port`]), and
/// the state name, the held count and the error for a kind the algorithm
/// does not use ([`OneShotNode::unexpected`]) come from one place. The ring
/// algorithms and the tree and mesh elections that flood wake-ups are such
/// nodes. Items are declared, and implemented, in the order one reads a
/// node: what it is (its name, how it wakes, its ports, its states), then
/// what it does (`start`, `receive`).
pub trait OneShotNode: Send + Sync + fmt::Debug + Clone + Eq + std::hash::Hash + 'static {
    /// The algorithm's catalogue name, in the errors it reports.
    const NAME: &'static str;

    /// How a message wakes a sleeping node ([`Wake::OnElection`] by default).
    const WAKE: Wake = Wake::OnElection;

    /// How many ports the node has (2 on a ring).
    #[inline]
    fn ports(&self) -> u32 {
        2
    }

    /// Current state name (see [`Algorithm::state`]).
    fn status(&self) -> &'static str;

    /// Has the node not woken yet (neither started nor reached by a
    /// message)? By default: is its state named `"asleep"`, the name of
    /// Santoro's first status, which the algorithms here keep (one that
    /// names it otherwise says so here).
    #[inline]
    fn asleep(&self) -> bool {
        self.status() == "asleep"
    }

    /// How many messages the node holds for later (see [`Algorithm::held`]).
    fn held(&self) -> usize {
        0
    }

    /// Refuse `msg` on a `port` this node takes nothing from: a port it
    /// does not have by default (on a ring, anything but [`LEFT`] and
    /// [`RIGHT`]).
    #[inline]
    fn check_port(&self, port: Port, _msg: Msg) -> Result<(), AlgoError> {
        if port >= self.ports() { Err(AlgoError::BadPort { port }) } else { Ok(()) }
    }

    /// The error for `msg`, of a kind this algorithm does not use.
    fn unexpected(msg: Msg) -> AlgoError {
        AlgoError::UnexpectedKind { algorithm: Self::NAME, kind: msg.kind().name() }
    }

    /// Wake and start the node's part: spontaneously (`woken_by` is `None`:
    /// [`Input::Start`] at a sleeping node; an awake one ignores a
    /// start), or woken by a message on port `woken_by` (see
    /// [`OneShotNode::WAKE`]).
    fn start(&mut self, woken_by: Option<Port>, out: &mut Outbox);

    /// `msg` arrived on `port`, which [`OneShotNode::check_port`] let
    /// through, after waking the node if it [wakes](OneShotNode::WAKE) it.
    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError>;
}

/// A one-shot node takes starts and messages; it runs without a failure
/// detector, sets no timer, keeps nothing on disk or in a store and has no
/// leadership to hand over, so every other input leaves it as it is.
impl<N: OneShotNode> Algorithm for N {
    #[inline(always)]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => {
                if self.asleep() {
                    self.start(None, out);
                }
                Ok(())
            }
            Input::Message { port, msg } => {
                self.check_port(port, msg)?;
                match (N::WAKE, msg) {
                    (Wake::OnElection, Msg::Election { .. }) if self.asleep() => self.start(Some(port), out),
                    (Wake::OnWakeup, Msg::Wakeup) => {
                        if self.asleep() {
                            self.start(Some(port), out);
                        }
                        return Ok(());
                    }
                    _ => {}
                }
                self.receive(port, msg, out)
            }
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => Ok(()),
        }
    }

    fn state(&self) -> &'static str {
        self.status()
    }

    fn held(&self) -> usize {
        OneShotNode::held(self)
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

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}

/// The stage of the collecting round's message: MinMax, MinMax+ and BiMinMax
/// end with one last candidate (or envelope) that is in general not the
/// extremum, so it sends its own id round the ring, every node passing on the
/// better of what it got and its own id; the extremum comes back to it.
pub const COLLECT: u32 = 0;

/// Start the collecting round with this node's `own` id, to the right.
#[inline]
pub fn collect(own: u64, out: &mut Outbox) {
    out.send(RIGHT, Msg::Election { id: own, stage: COLLECT, hops: 0 });
}

/// Pass the collecting round, which has seen `id`, on out of `to`, carrying
/// the better of `id` and this node's `own` under `rule`.
#[inline]
pub fn collect_on(rule: Rule, own: u64, id: u64, to: Port, out: &mut Outbox) {
    out.send(to, Msg::Election { id: rule.best(id, own), stage: COLLECT, hops: 0 });
}

/// `msg` cannot reach the node with id `node` in `state`.
pub fn misplaced(node: u64, msg: Msg, state: impl fmt::Debug) -> AlgoError {
    AlgoError::Invalid(format!("{msg:?} reached {node} in state {state:?}"))
}

/// Id `id` arrived after the election ended at this node: where the last
/// candidate waits for its id from both sides (or links are FIFO), nothing
/// can still be in flight.
pub fn after_the_end(id: u64) -> AlgoError {
    AlgoError::Invalid(format!("id {id} arrived after the election ended"))
}

/// The notification reached `node` while it was still a candidate (only a
/// defeated node can be passed the notification).
fn notified_candidate(node: u64) -> AlgoError {
    AlgoError::Invalid(format!("notification reached candidate {node}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::Feed;
    use crate::algo::{Effect, LEFT};

    /// The winner decides, then starts the notification to the right; a
    /// follower decides, then passes it on out of its other port.
    #[test]
    fn elect_and_follow_decide_then_notify() {
        let (mut winner, mut out) = (Ending::default(), Outbox::default());
        assert_eq!((winner.decision(), winner.decided()), (None, false));
        winner.elect(9, &mut out);
        let leads = Decision { role: Role::Leader, leader: 9 };
        assert_eq!(
            out.effects(),
            &[Effect::Decide(leads), Effect::Send { port: RIGHT, msg: Msg::Notify { leader: 9 } }]
        );
        assert_eq!((winner.decision(), winner.decided(), winner.role_name()), (Some(leads), true, "leader"));
        let mut follower = Ending::default();
        out.clear();
        follower.follow(RIGHT, 9, &mut out);
        let follows = Decision { role: Role::Follower, leader: 9 };
        assert_eq!(
            out.effects(),
            &[Effect::Decide(follows), Effect::Send { port: LEFT, msg: Msg::Notify { leader: 9 } }]
        );
        assert_eq!((follower.decision(), follower.role_name()), (Some(follows), "follower"));
    }

    /// A notification makes an undecided node follow and pass it on; at a
    /// decided node (the leader it came back to) it stops.
    #[test]
    fn notified_follows_once_then_stops() {
        let (mut leader, mut node, mut out) = (Ending::default(), Ending::default(), Outbox::default());
        leader.elect(5, &mut out);
        out.clear();
        leader.notified(LEFT, 5, &mut out);
        assert!(out.effects().is_empty(), "the notification stops at the leader");
        node.notified(LEFT, 5, &mut out);
        node.notified(LEFT, 5, &mut out);
        let follows = Decision { role: Role::Follower, leader: 5 };
        assert_eq!(
            out.effects(),
            &[Effect::Decide(follows), Effect::Send { port: RIGHT, msg: Msg::Notify { leader: 5 } }]
        );
        assert_eq!(node.decision(), Some(follows));
    }

    /// Announcing decides by ownership: the owner of the winning id leads
    /// even when it only relays the notification.
    #[test]
    fn announce_leads_only_the_owner() {
        let (mut owner, mut other, mut out) = (Ending::default(), Ending::default(), Outbox::default());
        owner.announce(4, 4, LEFT, &mut out);
        other.announce(3, 4, RIGHT, &mut out);
        assert_eq!(
            out.effects(),
            &[
                Effect::Decide(Decision { role: Role::Leader, leader: 4 }),
                Effect::Send { port: LEFT, msg: Msg::Notify { leader: 4 } },
                Effect::Decide(Decision { role: Role::Follower, leader: 4 }),
                Effect::Send { port: RIGHT, msg: Msg::Notify { leader: 4 } },
            ]
        );
        assert_eq!((owner.role_name(), other.role_name()), ("leader", "follower"));
    }

    /// Statuses are named as Santoro names them; a decided node by its role.
    #[test]
    fn status_names() {
        let (mut end, mut out) = (Ending::default(), Outbox::default());
        let names =
            [CandidateStatus::Asleep, CandidateStatus::Candidate, CandidateStatus::Defeated].map(|s| s.name(&end));
        assert_eq!(names, ["asleep", "candidate", "defeated"]);
        end.elect(3, &mut out);
        assert_eq!(CandidateStatus::Done.name(&end), "leader");
        assert_eq!(CandidateStatus::Done.name(&Ending::default()), "follower");
        assert_eq!([AwakeStatus::Asleep, AwakeStatus::Awake].map(|s| s.name(&end)), ["asleep", "awake"]);
        assert_eq!(AwakeStatus::Done.name(&end), "leader");
    }

    /// Where candidates wait for their stage's ids, a defeated node follows
    /// the notification and passes it on, the leader stops it, and a
    /// candidate (or a node still asleep) refuses it, staying as it was.
    #[test]
    fn candidate_statuses_take_the_notification() {
        let mut out = Outbox::default();
        let (mut status, mut end) = (CandidateStatus::Defeated, Ending::default());
        status.notified(&mut end, 3, LEFT, 9, &mut out).unwrap();
        let follows = Decision { role: Role::Follower, leader: 9 };
        assert_eq!(
            out.effects(),
            &[Effect::Decide(follows), Effect::Send { port: RIGHT, msg: Msg::Notify { leader: 9 } }]
        );
        assert_eq!((status, end.decision()), (CandidateStatus::Done, Some(follows)));
        let (mut leader, mut won) = (CandidateStatus::Done, Ending::default());
        won.elect(9, &mut out);
        out.clear();
        leader.notified(&mut won, 9, LEFT, 9, &mut out).unwrap();
        assert!(out.effects().is_empty(), "back at the leader");
        for before in [CandidateStatus::Asleep, CandidateStatus::Candidate] {
            let (mut early, mut none) = (before, Ending::default());
            let refused = early.notified(&mut none, 4, LEFT, 9, &mut out);
            assert_eq!(refused, Err(AlgoError::Invalid("notification reached candidate 4".into())));
            assert_eq!((early, none.decision()), (before, None));
        }
        assert!(out.effects().is_empty());
    }

    /// A candidate's message goes right then left; the collecting round
    /// starts with the own id to the right and carries the better id on.
    #[test]
    fn both_ways_and_collecting_round() {
        let m = Msg::Election { id: 3, stage: 1, hops: 0 };
        let mut out = Outbox::default();
        send_both(m, &mut out);
        collect(4, &mut out);
        collect_on(Rule::Max, 4, 9, RIGHT, &mut out);
        collect_on(Rule::Min, 4, 9, LEFT, &mut out);
        let c = |id| Msg::Election { id, stage: COLLECT, hops: 0 };
        assert_eq!(
            out.effects(),
            &[
                Effect::Send { port: RIGHT, msg: m },
                Effect::Send { port: LEFT, msg: m },
                Effect::Send { port: RIGHT, msg: c(4) },
                Effect::Send { port: RIGHT, msg: c(9) },
                Effect::Send { port: LEFT, msg: c(4) },
            ]
        );
    }

    /// The shared errors say what went wrong in the words the algorithms used.
    #[test]
    fn errors_name_the_message_and_the_node() {
        #[derive(Debug)]
        enum State {
            Relay,
        }
        let n = Msg::Notify { leader: 9 };
        assert_eq!(misplaced(3, n, State::Relay).to_string(), "Notify { leader: 9 } reached 3 in state Relay");
        assert_eq!(after_the_end(7).to_string(), "id 7 arrived after the election ended");
        assert_eq!(notified_candidate(4).to_string(), "notification reached candidate 4");
    }

    /// Every one-shot ring algorithm (the [`OneShotNode`]s, SyncHs, TimeSlice, VariableSpeeds and
    /// Itai-Rodeh) starts at most once: a fresh node is asleep, its first start wakes it and sends (or sets
    /// its timer), a second start does nothing; a port beyond LEFT and RIGHT is refused before the algorithm
    /// sees the message.
    #[test]
    fn ring_nodes_start_once_and_refuse_foreign_ports() {
        use crate::algo::catalogue::CATALOGUE;
        use crate::algo::harness;
        use crate::topology::TopologyKind;
        let rings = [TopologyKind::RingUni, TopologyKind::RingBi, TopologyKind::RingBiUnoriented];
        let mut checked = 0;
        for spec in CATALOGUE.iter().filter(|s| s.kept.is_none() && rings.contains(&s.default_topology())) {
            let (mut a, _) = harness::node(spec, 5, false).unwrap();
            assert!(["asleep", "non-participant"].contains(&a.state()), "{}: {}", spec.name, a.state());
            let mut out = Outbox::default();
            a.on_start(&mut out);
            assert!(!out.effects().is_empty(), "{}: a start sends", spec.name);
            assert!(!["asleep", "non-participant"].contains(&a.state()), "{}: awake after a start", spec.name);
            out.clear();
            a.on_start(&mut out);
            assert!(out.effects().is_empty(), "{}: a second start does nothing", spec.name);
            let refused = a.on_message(2, Msg::Notify { leader: 9 }, &mut out);
            assert_eq!(refused, Err(AlgoError::BadPort { port: 2 }), "{}", spec.name);
            checked += 1;
        }
        assert_eq!(checked, 18, "the ring one-shot algorithms");
    }

    /// Held messages go back out of the port opposite their arrival, in
    /// arrival order, and none is kept; ports beyond RIGHT are refused.
    #[test]
    fn relay_held_and_ring_port() {
        let a = Msg::Election { id: 7, stage: 2, hops: 0 };
        let b = Msg::Election { id: 8, stage: 3, hops: 0 };
        let mut held = vec![(LEFT, a), (RIGHT, b)];
        let mut out = Outbox::default();
        relay_held(&mut held, &mut out);
        assert_eq!(out.effects(), &[Effect::Send { port: RIGHT, msg: a }, Effect::Send { port: LEFT, msg: b }]);
        assert!(held.is_empty());
        assert_eq!((ring_port(LEFT), ring_port(RIGHT)), (Ok(()), Ok(())));
        assert_eq!(ring_port(2), Err(AlgoError::BadPort { port: 2 }));
    }
}
