//! # Ring with repair (the failure-tolerant ring election)
//!
//! * Source: the ring election of A. S. Tanenbaum, M. van Steen,
//!   *Distributed Systems: Principles and Paradigms*, Prentice Hall 2002, in
//!   its usual failure-tolerant form: broken links are detected by the
//!   message sender and the ring repaired; the election message tracks the
//!   ids of all processes that forward it; once it has gone round, a
//!   coordinator message is sent out; once that reaches the initiator, the
//!   election succeeded if the coordinator appears in the list, otherwise a
//!   new election starts. Several initiators follow E. Chang, R. Roberts
//!   (CACM 22(5), 1979): a participant suppresses the elections of worse
//!   initiators.
//! * Network: complete, used as a logical ring: every node orders all ids
//!   (from `port_info`) and its successor is the next id in ring order (next
//!   higher, wrapping) that it does not suspect. Asynchronous, not FIFO.
//! * Winner: the best id (max, or min under [`Rule::Min`]) of the nodes that
//!   forwarded the election.
//! * Terms: an initiator starts term `t + 1` where `t` is the highest term it
//!   has seen; elections compare by `(term, initiator)`.
//!
//! **Simplification of the forwarders' list.** [`Msg`] is `Copy` and carries no
//! list, and the list is only used (1) to pick the coordinator, its best id,
//! and (2) to check that the coordinator is still alive when the coordinator
//! message returns. [`Msg::RingCollect`] therefore carries the running best id
//! and the number of forwarders instead of the ids; check (2) is the
//! initiator's failure detector, and it is made continuously rather than once
//! when the [`Msg::Coordinator`] comes back: an initiator whose election
//! returns with a suspected best starts a new election (higher term) instead of
//! a coordinator round, and any node that suspects the leader it believes (the
//! initiator included, while its coordinator travels) starts one at once.
//!
//! **Rules.** A node forwards an election strictly better than the one it
//! last joined (adding itself to `best` and `count`) and drops a worse or
//! equal one, so an election whose initiator crashed stops after one round.
//! The initiator, on its election's return (if it has joined no better one),
//! believes `best` leads `term` and sends `Coordinator { leader: best, term }`
//! round the ring; each node believes it and forwards it once. A node that
//! knows no leader keeps an election timer and starts a new election when it
//! fires (a message sent to a node that crashed before forwarding it is
//! lost); a node that suspects its leader starts one at once.
//!
//! **At most one coordinator per term.** A node initiates only a term above
//! every term it has seen, so a node that joined `(t, a)` never initiates
//! `t`; an initiator `b` of `t` drops `(t, a)` for a worse `a`. If both
//! `(t, a)` and `(t, b)` returned, `(t, a)` passed `b` before `b` initiated
//! (so `b` joined `t` and could not initiate it) — a contradiction.
//!
//! **Message complexity (one-shot, no failure).** Election `(1, x)` is
//! dropped at the first node that joined a better election, at the latest at
//! the next better initiator, so it crosses at most the ring distance to it;
//! the best initiator's crosses all `n` links. As for Chang and Roberts, the
//! sum is at most `n + (n − 1) + … + 1 = n(n + 1)/2` (initiators ranked
//! decreasing along the ring, all starting before any message arrives). Then
//! one coordinator round: `n` messages. Bound: `n(n + 1)/2 + n = n(n + 3)/2`.
//! After a leader crash in the kept mode, with one initiator: `n − 1`
//! elections and `n − 1` coordinators on the `n − 1` live nodes.

use super::detector::{Behind, Detected, DetectorConfig};
use super::kept::{OneTimer, Peers};
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, KeptSpec, Provision, per_second};
use super::{
    AlgoError, Algorithm, Effect, Input, Leadership, Msg, NodeContext, Outbox, Port, Reports, Role, Rule, TimerId,
};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "repaired-ring",
    title: "Ring with repair (failure-tolerant)",
    source: "A. S. Tanenbaum, M. van Steen, Distributed Systems: Principles and Paradigms, Prentice Hall 2002 (ring \
             election: crashed successors skipped, forwarders collected, coordinator round); E. Chang, R. Roberts, \
             CACM 22(5), 1979 (several initiators)",
    description: "The complete network used as a logical ring in id order; a node's successor is the next id \
                  it does not suspect. An election carries its term, its initiator and the best id of the \
                  nodes that forwarded it (the textbook's list, reduced to its maximum and length); a node \
                  forwards only elections better than the one it joined. Back at its initiator, it sends \
                  COORDINATOR round the ring; if the coordinator is suspected when that returns, a new \
                  election with a higher term. One-shot here; the kept mode adds heartbeats.",
    topologies: &[TopologyKind::Complete],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n(n+3)/2 (elections n(n+1)/2 as Chang-Roberts, one coordinator round n)",
    bound: &|n, _| n * (n + 3) / 2,
    timer_events: |_| 0,
    heap_bytes_per_position: 53_984,
    kept: Some(KeptSpec {
        build: |c, d| Box::new(kept(c, RingConfig::for_detector(d), d)),
        // The leader and its followers watch each other, and each follower its
        // ring successor too, which answers.
        heartbeats_per_period: |topo| 4 * u64::from(topo.len().saturating_sub(1)),
        // Electing nodes watch everyone: a heartbeat per directed link every period.
        election_load_per_second: |topo, d| per_second(topo.link_count() as u64, d.period_ms),
        convergence_bound_ms,
        max_local_nodes: 64,
        lease: None,
        liveness_needs: None,
    }),
    live_provision: Provision::Nodes,
    machine: machine!(RepairedRing::new),
    extras: Extras::NONE,
};

const NAME: &str = "repaired-ring";

crate::timers! {
    /// Timer: a node that knows no leader gives the election this long.
    ELECTION_TIMER = 0 => "election";
}

/// The repaired ring's timeout, in milliseconds (virtual ones in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingConfig {
    /// How long a node that knows no leader waits before it starts a new
    /// election (`None`: never). Must exceed two trips round the ring: an
    /// early timeout restarts elections that would have succeeded.
    pub election_timeout_ms: Option<u64>,
}

impl RingConfig {
    /// The catalogue's one-shot election: no timer. Without failures no
    /// message is lost, and a trip round the ring grows with n (1,000 nodes
    /// with simulated delays up to 64 ms take up to 64 s), so any fixed
    /// timeout would restart elections of large rings that were succeeding.
    pub const ONE_SHOT: RingConfig = RingConfig { election_timeout_ms: None };
    /// Kept leadership on loopback: hops take well under a millisecond, so
    /// 1.5 s covers two trips round rings of hundreds of nodes.
    pub const LOOPBACK: RingConfig = RingConfig { election_timeout_ms: Some(1_500) };

    /// Kept leadership with an election timeout of 7.5 detector timeouts
    /// (1.5 s for [`DetectorConfig::LOOPBACK`], the preset above).
    pub fn for_detector(d: DetectorConfig) -> RingConfig {
        RingConfig { election_timeout_ms: Some(d.timeout_ms.saturating_mul(15) / 2) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Asleep,
    Electing,
    Following(u64),
    Leading,
}

/// One node of the repaired ring.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RepairedRing {
    id: u64,
    rule: Rule,
    cfg: RingConfig,
    peers: Peers,
    /// Ports in ring order starting after this node (next higher id first, wrapping).
    ring: Box<[Port]>,
    /// Per port: its position in `ring`.
    position: Box<[u32]>,
    suspected: Box<[bool]>,
    phase: Phase,
    /// Highest term seen.
    term: u64,
    /// The best election `(term, initiator)` this node started or forwarded.
    joined: Option<(u64, u64)>,
    /// Highest term whose coordinator this node sent or forwarded.
    coordinated: u64,
    /// The term of this node's own coordinator round under way.
    awaiting: Option<u64>,
    /// [`ELECTION_TIMER`], when pending.
    timer: OneTimer,
    /// Following: the leader's heartbeat said it leads nothing in this
    /// node's term (or a later one), and [`ELECTION_TIMER`] gives it time to
    /// learn; if it still leads nothing when the timer fires, elect.
    doubt: bool,
    /// The port this node last sent an election on, while electing.
    sent_to: Option<Port>,
    /// While leading: neighbours whose heartbeats show an older term.
    behind: Behind,
    reports: Reports,
    /// About to stop ([`Input::Leave`]): it elects no more, and the
    /// elections it forwards do not count it as a candidate.
    leaving: bool,
}

/// How long after the last fault heals every live node of an `n`-node ring
/// follows one live leader at most, with the election timeout E that
/// [`RingConfig::for_detector`] derives from `d` and messages delayed by at
/// most `delay_ms`: **2E + T + 2P + 2nδ** (66 periods + 2nδ for the default
/// T = 4P). Argument: a node left electing by the faults restarts within E,
/// and that election and its coordinator go round the ring (2nδ); an
/// election started just before the heal may have been lost, which costs a
/// second E; a stale leader or a node that missed a coordinator is told by
/// the leader within a heartbeat (P), and a suspicion left over from the
/// faults clears within T. A follower of a node that never learnt it leads
/// (its coordinator lost) waits for that node's election timeout, the first
/// E, or its own doubt's, which starts within P + δ of the heal. Argued, not proved; `core/tests/repaired_ring_chaos.rs`
/// asserts it on 2,000 seeded runs of the full fault mix.
pub fn convergence_bound_ms(d: DetectorConfig, n: u32, delay_ms: u64) -> u64 {
    let e = RingConfig::for_detector(d).election_timeout_ms.unwrap_or(0);
    2 * e + d.timeout_ms + 2 * d.period_ms + 2 * u64::from(n) * delay_ms
}

/// A kept-leadership repaired-ring node: [`RepairedRing`] behind a heartbeat failure detector.
pub fn kept(c: &NodeContext, ring: RingConfig, detector: DetectorConfig) -> Detected<RepairedRing> {
    Detected::new(RepairedRing::with_config(c, ring), c.id, c.ports, detector)
}

impl RepairedRing {
    /// An asleep node with the one-shot timeout: the catalogue's entry.
    pub fn new(c: &NodeContext) -> Self {
        RepairedRing::with_config(c, RingConfig::ONE_SHOT)
    }

    /// An asleep node with the given timeout.
    pub fn with_config(c: &NodeContext, cfg: RingConfig) -> Self {
        let peers = Peers::new(c);
        let mut ring: Vec<Port> = (0..peers.len() as Port).collect();
        // Higher ids first (ascending), then the lower ones (ascending): ring order from here.
        ring.sort_by_key(|&p| (peers[p as usize] < c.id, peers[p as usize]));
        let mut position = vec![0u32; ring.len()];
        for (i, &p) in ring.iter().enumerate() {
            position[p as usize] = i as u32;
        }
        RepairedRing {
            position: position.into(),
            id: c.id,
            rule: c.rule,
            cfg,
            suspected: vec![false; peers.len()].into(),
            peers,
            ring: ring.into(),
            phase: Phase::Asleep,
            term: 0,
            joined: None,
            coordinated: 0,
            awaiting: None,
            timer: OneTimer::default(),
            doubt: false,
            sent_to: None,
            behind: Behind::new(c.port_info.len()),
            reports: Reports::default(),
            leaving: false,
        }
    }

    /// What this node believes now: its term and leader (`None` while electing).
    pub fn leadership(&self) -> Leadership {
        let leader = match self.phase {
            Phase::Following(l) => Some(l),
            Phase::Leading => Some(self.id),
            Phase::Asleep | Phase::Electing => None,
        };
        Leadership { term: self.term, leader }
    }

    /// The port of the first unsuspected node after this one in ring order.
    fn successor(&self) -> Option<Port> {
        self.ring.iter().copied().find(|&p| !self.suspected[p as usize])
    }

    /// Is election `a` better than `b`? Later terms first, then the better initiator.
    fn better(&self, a: (u64, u64), b: (u64, u64)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && self.rule.beats(a.1, b.1))
    }

    fn announce(&mut self, out: &mut Outbox) {
        let l = self.leadership();
        self.reports.announce(l, out);
    }

    /// Give the election under way its time (a new set replaces the pending one).
    fn set_timer(&mut self, out: &mut Outbox) {
        if let Some(after_ms) = self.cfg.election_timeout_ms {
            self.timer.set(ELECTION_TIMER, after_ms, out);
        }
    }

    /// Start election `term + 1` (none once the term space is used up:
    /// [`super::next_term`]).
    fn elect(&mut self, out: &mut Outbox) {
        if self.leaving {
            return;
        }
        self.start_election(self.id, out);
    }

    /// Start election `term + 1` carrying `best` (this node's id, or, for a
    /// leaving one, the worst id: it is no candidate).
    fn start_election(&mut self, best: u64, out: &mut Outbox) {
        let Some(term) = super::next_term(self.term) else { return };
        self.term = term;
        self.joined = Some((self.term, self.id));
        self.awaiting = None;
        self.doubt = false;
        let Some(port) = self.successor() else {
            if self.leaving {
                return; // nobody to hand over to
            }
            // Nobody else is alive: lead alone (this term now has its leader).
            self.coordinated = self.term;
            self.believe(self.id, out);
            return;
        };
        self.phase = Phase::Electing;
        self.announce(out);
        self.sent_to = Some(port);
        out.send(port, Msg::RingCollect { term: self.term, initiator: self.id, best, count: 1 });
        self.set_timer(out);
    }

    /// Believe `leader` leads the current term.
    fn believe(&mut self, leader: u64, out: &mut Outbox) {
        self.timer.stop(out);
        self.doubt = false;
        self.behind.told_all();
        self.phase = if leader == self.id { Phase::Leading } else { Phase::Following(leader) };
        self.announce(out);
        let role = if leader == self.id { Role::Leader } else { Role::Follower };
        self.reports.decide_once(role, leader, out);
    }

    fn is_suspected(&self, id: u64) -> bool {
        self.peers.iter().zip(self.suspected.iter()).any(|(&p, &s)| p == id && s)
    }

    fn on_collect(&mut self, term: u64, initiator: u64, best: u64, count: u32, out: &mut Outbox) {
        if initiator == self.id {
            // Our election came back: it succeeded unless we joined a better one since.
            if self.joined != Some((term, self.id)) {
                return;
            }
            if best != self.id && self.is_suspected(best) {
                // "Coordinator not in the list": it died after forwarding.
                self.elect(out);
                return;
            }
            self.coordinated = term;
            self.awaiting = Some(term);
            self.believe(best, out);
            if let Some(port) = self.successor() {
                out.send(port, Msg::Coordinator { leader: best, term });
            }
            return;
        }
        let worse = self.joined.is_some_and(|j| !self.better((term, initiator), j));
        if term < self.term || (term <= self.coordinated && !worse) {
            // Of a past term, or one that would be joined but whose term
            // already has a leader: only a node that missed the later terms
            // sends it (one restarted, or back from a partition). Tell it who
            // leads, or it would elect alone, after its timeout, in a term
            // somebody else may have led. (Never without failures: every
            // election has term 1 then, and none beats the one that won.)
            if let (Some(leader), Some(port)) =
                (self.leadership().leader, self.peers.iter().position(|&p| p == initiator))
            {
                out.send(port as Port, Msg::Coordinator { leader, term: self.term });
            }
            return;
        }
        if worse {
            return; // worse than the election we joined, or its second round
        }
        self.term = term;
        self.joined = Some((term, initiator));
        self.awaiting = None;
        self.doubt = false;
        self.phase = Phase::Electing;
        self.announce(out);
        if let Some(port) = self.successor() {
            let best = if self.leaving { best } else { self.rule.best(best, self.id) };
            self.sent_to = Some(port);
            out.send(port, Msg::RingCollect { term, initiator, best, count: count.saturating_add(1) });
        }
        self.set_timer(out);
    }

    fn on_coordinator(&mut self, leader: u64, term: u64, out: &mut Outbox) {
        if self.awaiting == Some(term) {
            // Our coordinator went round: done. (A suspicion of the leader
            // meanwhile has already started a new election, with a new term.)
            self.awaiting = None;
            return;
        }
        if term < self.term || term <= self.coordinated {
            return; // stale, or already forwarded (its initiator crashed)
        }
        self.term = term;
        self.coordinated = term;
        self.believe(leader, out);
        if let Some(port) = self.successor() {
            out.send(port, Msg::Coordinator { leader, term });
        }
        if leader != self.id && self.is_suspected(leader) {
            self.elect(out);
        }
    }
}

impl RepairedRing {
    fn start(&mut self, out: &mut Outbox) {
        if self.phase == Phase::Asleep {
            self.elect(out);
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        self.peers.sender(port)?;
        super::check_term(NAME, &msg)?;
        match msg {
            Msg::RingCollect { term, initiator, best, count } => self.on_collect(term, initiator, best, count, out),
            Msg::Coordinator { leader, term } => {
                if leader != self.id && !self.peers.contains(&leader) {
                    return Err(AlgoError::Invalid(format!(
                        "{NAME}: a coordinator names {leader}, no member of the ring"
                    )));
                }
                self.on_coordinator(leader, term, out)
            }
            _ => return Err(AlgoError::UnexpectedKind { algorithm: NAME, kind: msg.kind().name() }),
        }
        Ok(())
    }

    fn fire(&mut self, timer: TimerId, out: &mut Outbox) {
        if !self.timer.fired(timer) {
            return;
        }
        if self.phase == Phase::Electing || self.doubt {
            self.elect(out);
        }
    }

    fn suspect(&mut self, port: Port, suspected: bool, out: &mut Outbox) {
        let Some(&peer) = self.peers.get(port as usize) else { return };
        self.suspected[port as usize] = suspected;
        let lost = self.phase == Phase::Electing && self.sent_to == Some(port);
        if suspected && (self.phase == Phase::Following(peer) || lost) {
            // The leader died, or the election this node sent went to a node
            // that died (the sender detects the broken link): elect again.
            self.elect(out);
        }
    }

    /// The leader, hearing a neighbour whose latest term is below its own,
    /// tells it who leads (once per heartbeat period until it catches up): a
    /// node whose `Coordinator` was lost, or that came back from a partition
    /// or a crash while nobody elected, would otherwise follow a stale leader
    /// that is still alive (or lead a stale term itself) for ever. The
    /// `Coordinator` goes on round the ring from there and stops at the next
    /// node, which has seen its term. Two leaders of one term (each side of
    /// a partition elected alone) meet here too: the worse one starts a new
    /// election, of a later term, which the whole ring joins.
    ///
    /// A follower whose leader says it leads nothing (in the follower's term
    /// or later) doubts: the coordinator may still be on its way to the
    /// leader (it reaches the nodes before the leader first) or may have been
    /// lost. It gives the leader an election timeout to learn; a heartbeat
    /// that says "leading" ends the doubt. Electing at once raced the
    /// coordinator in every term, and kept the ring electing for ever.
    fn heartbeat(&mut self, port: Port, term: u64, leading: bool, out: &mut Outbox) {
        let Some(&peer) = self.peers.get(port as usize) else { return };
        if self.phase == Phase::Following(peer) {
            if leading && self.doubt {
                self.doubt = false;
                self.timer.stop(out);
            } else if !leading && term >= self.term && !self.doubt {
                self.doubt = true;
                self.set_timer(out);
            }
            return;
        }
        if self.phase != Phase::Leading {
            return;
        }
        if term < self.term {
            if self.behind.heard(port) {
                out.send(port, Msg::Coordinator { leader: self.id, term: self.term });
            }
        } else if term == self.term && leading && self.rule.beats(peer, self.id) {
            self.elect(out);
        }
    }

    /// A leader that leaves starts the election its crash would cause,
    /// without waiting for anybody's detector, and takes no part in it as a
    /// candidate: the election goes round the ring collecting the best of
    /// the others, and back at the leaver its coordinator names that node
    /// (the leaver then follows it: the handover is done). The ring's own
    /// rule, at most one coordinator per term, is kept: it is an election
    /// like any other. The others are without a leader from the election's
    /// arrival to the coordinator's: about one trip round the ring.
    fn leave(&mut self, _suspected: &[bool], out: &mut Outbox) -> bool {
        if !super::kept::start_leaving(&mut self.leaving) || self.phase != Phase::Leading {
            return false;
        }
        let nobody = match self.rule {
            Rule::Max => 0,
            Rule::Min => u64::MAX,
        };
        self.start_election(nobody, out);
        self.phase == Phase::Electing
    }
}

impl Algorithm for RepairedRing {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(timer) => self.fire(timer, out),
            Input::Suspect { port, suspected } => self.suspect(port, suspected, out),
            Input::Heartbeat { port, term, leading } => self.heartbeat(port, term, leading, out),
            Input::Leave { suspected } => {
                if self.leave(suspected, out) {
                    out.push(Effect::HandingOver);
                }
            }
            Input::StoreReply(_) | Input::Restore(_) => {}
        }
        Ok(())
    }


    /// The leader watches every node (their heartbeats tell it who is
    /// behind); a follower watches its leader and its ring successors up to
    /// the first one it does not suspect (the ring it would send an
    /// election on, and whether a skipped one came back); a node electing,
    /// or asleep, watches everyone (its election's best may be anyone).
    /// So a settled ring sends O(n) heartbeats a period (about 4n).
    fn watched(&self, port: Port) -> bool {
        let Phase::Following(leader) = self.phase else { return true };
        if self.peers.get(port as usize) == Some(&leader) {
            return true;
        }
        let Some(&at) = self.position.get(port as usize) else { return false };
        // The successor is found in as many steps as suspected nodes precede it.
        self.successor().is_none_or(|s| at <= self.position[s as usize])
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        TIMERS.name(timer)
    }

    fn state(&self) -> &'static str {
        match self.phase {
            Phase::Asleep => "asleep",
            Phase::Electing => "electing",
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

    /// The election timeout derived from the loopback detector is the loopback preset.
    #[test]
    fn timeout_follows_the_detector() {
        assert_eq!(RingConfig::for_detector(DetectorConfig::LOOPBACK), RingConfig::LOOPBACK);
        assert_eq!(RingConfig::for_detector(DetectorConfig::KUBERNETES).election_timeout_ms, Some(15_000));
    }
    use crate::algo::Effect;
    use crate::algo::kept::testing::{self, PEERS_OF_3, decide, lead, send, started};

    /// Node `id` whose ports lead to `peers`, in port order, with the loopback timeout.
    fn node(id: u64, peers: &[u64]) -> RepairedRing {
        testing::node(id, peers, |c| RepairedRing::with_config(c, RingConfig::LOOPBACK))
    }

    fn collect(term: u64, initiator: u64, best: u64, count: u32) -> Msg {
        Msg::RingCollect { term, initiator, best, count }
    }

    const SET: Effect = Effect::SetTimer { timer: ELECTION_TIMER, after_ms: 1_500 };
    const CANCEL: Effect = Effect::CancelTimer { timer: ELECTION_TIMER };

    // Node 3 of {1..5} (`PEERS_OF_3`): its successor is 4 (port 2), then 5 (port 0), 1, 2.

    /// What a node does on learning that `leader` leads `term`: it stops its
    /// election timer, announces and decides (as `role`), and forwards the
    /// coordinator on `port`.
    fn believes(term: u64, leader: u64, role: Role, port: Port) -> [Effect; 4] {
        [CANCEL, lead(term, Some(leader)), decide(role, leader), send(port, Msg::Coordinator { leader, term })]
    }

    /// An initiator sends term 1 with itself as best to its successor (4);
    /// a woken node adds itself (best 3, count 2) and forwards; the highest id
    /// wraps round to the lowest.
    #[test]
    fn elections_go_to_the_next_higher_id_and_collect() {
        let (_, mut out) = started(node(3, &PEERS_OF_3));
        assert_eq!(out.effects(), &[lead(1, None), send(2, collect(1, 3, 3, 1)), SET]);
        let mut b = node(3, &PEERS_OF_3);
        out.clear();
        b.on_message(3, collect(1, 2, 2, 1), &mut out).unwrap();
        assert_eq!(out.effects(), &[lead(1, None), send(2, collect(1, 2, 3, 2)), SET]);
        let mut top = node(5, &[4, 3, 2, 1]);
        out.clear();
        top.on_message(0, collect(1, 4, 4, 4), &mut out).unwrap();
        assert_eq!(out.effects(), &[lead(1, None), send(3, collect(1, 4, 5, 5)), SET]);
    }

    /// An election of a past term, or of a term that already has a leader, is not joined: its initiator
    /// (restarted, or back from a partition) is told who leads now, and follows.
    #[test]
    fn a_late_election_is_answered_with_the_leader() {
        let mut out = Outbox::default();
        let mut a = node(3, &PEERS_OF_3);
        a.on_message(0, Msg::Coordinator { leader: 4, term: 2 }, &mut out).unwrap();
        out.clear();
        a.on_message(3, collect(1, 5, 5, 1), &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::Coordinator { leader: 4, term: 2 })], "term 1 is over");
        out.clear();
        a.on_message(3, collect(2, 5, 5, 1), &mut out).unwrap();
        assert_eq!(out.effects(), &[send(0, Msg::Coordinator { leader: 4, term: 2 })], "term 2 has a leader");
        out.clear();
        a.on_message(3, collect(3, 5, 5, 1), &mut out).unwrap();
        assert_eq!(out.effects()[..2], [lead(3, None), send(2, collect(3, 5, 5, 2))], "term 3 is joined");
        let mut back = node(5, &[4, 3, 2, 1]);
        back.on_start(&mut out);
        out.clear();
        back.on_message(2, Msg::Coordinator { leader: 4, term: 2 }, &mut out).unwrap();
        assert_eq!(back.leadership(), Leadership { term: 2, leader: Some(4) }, "the restarted node follows");
    }

    /// A suspected successor is skipped (the ring is repaired), and un-suspecting
    /// it puts it back.
    #[test]
    fn a_suspected_successor_is_skipped() {
        let mut a = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        a.on_suspect(2, true, &mut out);
        a.on_suspect(0, true, &mut out);
        assert!(out.effects().is_empty());
        a.on_start(&mut out);
        assert_eq!(out.effects(), &[lead(1, None), send(1, collect(1, 3, 3, 1)), SET], "4 and 5 skipped: to 1");
        a.on_suspect(2, false, &mut out);
        out.clear();
        a.on_suspect(1, true, &mut out);
        assert_eq!(out.effects(), &[lead(2, None), send(2, collect(2, 3, 3, 1)), SET], "sent to 1, which died: again");
        a.on_suspect(1, false, &mut out);
        out.clear();
        a.on_message(3, collect(3, 2, 2, 3), &mut out).unwrap();
        assert_eq!(out.effects(), &[lead(3, None), send(2, collect(3, 2, 3, 4)), SET]);
    }

    /// Elections of worse initiators (or older terms) are dropped by a
    /// participant, and a second round of a joined election stops.
    #[test]
    fn participants_suppress_worse_elections() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        out.clear();
        a.on_message(3, collect(1, 2, 5, 4), &mut out).unwrap();
        assert!(out.effects().is_empty(), "initiator 2 < 3 in term 1");
        a.on_message(1, collect(1, 4, 4, 2), &mut out).unwrap();
        assert_eq!(out.effects(), &[send(2, collect(1, 4, 4, 3)), SET], "initiator 4 > 3: joined");
        out.clear();
        a.on_message(1, collect(1, 4, 5, 5), &mut out).unwrap();
        assert!(out.effects().is_empty(), "second round");
        a.on_message(3, collect(1, 3, 5, 5), &mut out).unwrap();
        assert!(out.effects().is_empty(), "own election, but 3 joined a better one");
    }

    /// The initiator's election comes back: it believes the best id, decides,
    /// and sends COORDINATOR round the ring; others believe and forward it once;
    /// its return to the initiator ends the round.
    #[test]
    fn coordinator_round() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        out.clear();
        a.on_message(3, collect(1, 3, 5, 5), &mut out).unwrap();
        assert_eq!(out.effects(), believes(1, 5, Role::Follower, 2));
        out.clear();
        a.on_message(3, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        assert!(out.effects().is_empty());
        assert_eq!(a.leadership(), Leadership { term: 1, leader: Some(5) });

        let mut top = node(5, &[4, 3, 2, 1]);
        out.clear();
        top.on_message(0, collect(1, 3, 4, 3), &mut out).unwrap();
        out.clear();
        top.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        assert_eq!(out.effects(), believes(1, 5, Role::Leader, 3));
        out.clear();
        top.on_message(0, Msg::Coordinator { leader: 5, term: 1 }, &mut out).unwrap();
        assert!(out.effects().is_empty(), "forwarded once only");
    }

    /// The coordinator died: an election returning with a suspected best
    /// starts a new election with a higher term that skips it, and a node
    /// that suspects the leader it follows does the same.
    #[test]
    fn a_failed_coordinator_means_a_new_election_with_a_higher_term() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        a.on_suspect(0, true, &mut out);
        out.clear();
        a.on_message(3, collect(1, 3, 5, 5), &mut out).unwrap();
        assert_eq!(out.effects(), &[lead(2, None), send(2, collect(2, 3, 3, 1)), SET]);
        assert_eq!(a.reports.decision(), None);
        out.clear();
        a.on_message(3, collect(2, 3, 4, 4), &mut out).unwrap();
        assert_eq!(out.effects(), believes(2, 4, Role::Follower, 2));
        out.clear();
        a.on_suspect(2, true, &mut out);
        assert_eq!(out.effects(), &[lead(3, None), send(1, collect(3, 3, 3, 1)), SET], "4 and 5 skipped");
        out.clear();
        a.on_message(3, Msg::Coordinator { leader: 4, term: 2 }, &mut out).unwrap();
        assert!(out.effects().is_empty(), "stale coordinator");
    }

    /// The leader's heartbeat sent before the coordinator reached it says
    /// "not leading" in the very term its follower believes it leads: the
    /// follower gives it an election timeout to learn (a heartbeat that says
    /// "leading" ends the doubt) instead of electing at once, which in every
    /// term raced the coordinator and kept the ring electing for ever (the
    /// checker's schedule after one lost coordinator, docs/checking.md). A
    /// leader that never learns is still replaced when the timeout runs out.
    #[test]
    fn a_leader_is_given_time_to_learn_it_leads() {
        let (mut a, mut out) = started(node(3, &PEERS_OF_3));
        a.on_message(3, collect(1, 3, 5, 5), &mut out).unwrap();
        out.clear();
        a.on_heartbeat(0, 1, false, &mut out);
        assert_eq!(out.effects(), &[SET], "5 may not have heard the coordinator yet");
        assert_eq!(a.leadership(), Leadership { term: 1, leader: Some(5) });
        out.clear();
        a.on_heartbeat(0, 1, false, &mut out);
        assert!(out.effects().is_empty(), "the doubt's timeout is not pushed back");
        a.on_heartbeat(0, 1, true, &mut out);
        assert_eq!(out.effects(), &[CANCEL], "5 leads: no doubt left");
        out.clear();
        a.on_timer(ELECTION_TIMER, &mut out);
        assert!(out.effects().is_empty(), "a cancelled doubt elects nobody");
        a.on_heartbeat(0, 1, false, &mut out);
        out.clear();
        a.on_timer(ELECTION_TIMER, &mut out);
        assert_eq!(out.effects(), &[lead(2, None), send(2, collect(2, 3, 3, 1)), SET], "5 never learnt: elect");
    }

    /// With no timer pending nothing happens; an unanswered election times
    /// out into a new one; the one-shot configuration sets no timer; a lone node leads.
    #[test]
    fn timeouts_and_a_lone_node() {
        let mut a = node(3, &PEERS_OF_3);
        let mut out = Outbox::default();
        a.on_timer(ELECTION_TIMER, &mut out);
        assert!(out.effects().is_empty());
        a.on_start(&mut out);
        out.clear();
        a.on_timer(ELECTION_TIMER, &mut out);
        assert_eq!(out.effects(), &[lead(2, None), send(2, collect(2, 3, 3, 1)), SET]);
        let mut one_shot = testing::node(3, &[4, 5], RepairedRing::new);
        out.clear();
        one_shot.on_start(&mut out);
        assert_eq!(out.effects(), &[lead(1, None), send(0, collect(1, 3, 3, 1))]);
        let mut alone = node(3, &[]);
        out.clear();
        alone.on_start(&mut out);
        assert_eq!(out.effects(), &[lead(1, Some(3)), decide(Role::Leader, 3)]);
        assert_eq!(a.on_message(9, Msg::Wakeup, &mut out), Err(AlgoError::BadPort { port: 9 }));
        assert!(matches!(a.on_message(0, Msg::Wakeup, &mut out), Err(AlgoError::UnexpectedKind { .. })));
    }
}
