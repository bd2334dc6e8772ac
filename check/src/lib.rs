//! # Every schedule, not a sample
//!
//! An exhaustive checker of one election: every order in which the network
//! may deliver the messages in flight (first in, first out on each link, or
//! in any order where the algorithm does not assume FIFO links) and every
//! order in which the initiators wake (each before any message reaches it:
//! a node a message reaches first is woken by it, so it is no initiator, and
//! the algorithms' claims about initiators assume this), explored state by
//! state, breadth-first. Each node is the
//! very state machine the gRPC runtime and the simulator run, inside the same
//! node shell (`ringleader_core::shell::Shell`: decide once, counters, port
//! checks), so a schedule found here is one the real system can take.
//!
//! A state is every node's state machine and shell, the messages in flight on
//! each directed link, the initiators not started yet and the messages sent
//! so far; states are deduplicated by a 64-bit fingerprint of their hash, and
//! a schedule is rebuilt from each state's parent and step by replaying it.
//! (Why not the stateright crate, the anchor: see docs/checking.md.) What is
//! checked, at every state:
//!
//! * no node's algorithm refuses a message or asks for something a node
//!   cannot do (a send on a port it lacks, a timer: the one-shot algorithms
//!   checked here set none);
//! * at most one node leads, and the nodes that decided name the same leader;
//! * the leader holds the id the algorithm must elect (its candidates'
//!   extremum, `AlgorithmSpec::expected_winner`);
//! * the messages sent stay within the algorithm's published bound;
//! * once nothing is in flight and every initiator has started (a final
//!   state: no schedule goes on from it), every node has decided and the
//!   verdict of the simulator's own invariants holds: no deadlock.
//!
//! Breadth-first search finds the shortest schedule that breaks a property
//! ([`Counterexample`]); a state that breaks one is not explored further, so
//! each other property reported is broken by the shortest schedule that does
//! not break another first. The largest message count over every schedule is
//! reported beside the bound. Limits on states, depth and time, and a cancel
//! flag, end a check early, and say so ([`Report::complete`]); progress is
//! reported as it goes ([`Progress`]).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ringleader_core::algo::catalogue::AlgorithmSpec;
use ringleader_core::algo::{Algorithm, Decision, Msg, NodeContext, Port, PortInfo, Role, Rule, UNKNOWN_LEADER};
use ringleader_core::invariants;
use ringleader_core::shell::{Output, Outputs, Shell};
use ringleader_core::sim;
use ringleader_core::topology::Topology;

/// One election to check: an algorithm on an overlay, its ids (in position
/// order), its initiators and the rule that picks the winner.
#[derive(Clone, Debug)]
pub struct Election {
    /// The algorithm.
    pub spec: &'static AlgorithmSpec,
    /// The overlay.
    pub topology: Topology,
    /// Ids in position order.
    pub ids: Vec<u64>,
    /// Positions that wake spontaneously.
    pub initiators: Vec<u32>,
    /// Which extremum wins.
    pub rule: Rule,
}

/// How far a check may go.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Links deliver first in, first out (`true`), or in any order.
    pub fifo: bool,
    /// Stop after about this many states (0: no limit).
    pub max_states: usize,
    /// Explore no deeper than this many steps (0: no limit).
    pub max_depth: usize,
    /// Stop after this long.
    pub timeout: Option<Duration>,
    /// Explore depth-first: the same states and verdicts, a smaller queue
    /// of states waiting to be explored, but a counterexample need not be
    /// the shortest.
    pub depth_first: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { fifo: true, max_states: 0, max_depth: 0, timeout: None, depth_first: false }
    }
}

/// One step of a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The initiator at this position wakes.
    Start(u32),
    /// The message `msg`, sent by position `from` on its port `port`, is
    /// delivered (to the neighbour behind that port).
    Deliver {
        /// Sending position.
        from: u32,
        /// The sender's port.
        port: Port,
        /// The message.
        msg: Msg,
    },
}

/// The whole system at one point of a schedule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct System {
    nodes: Vec<Shell<Box<dyn Algorithm>>>,
    /// Messages in flight on each directed link (sender, port), in sending
    /// order on FIFO links, sorted (a multiset) otherwise.
    links: Vec<Vec<Msg>>,
    /// Initiators that have not woken yet, in position order.
    unstarted: Vec<u32>,
    /// Messages sent so far.
    sent: u64,
    /// The first thing that went wrong, if anything did.
    error: Option<String>,
}

impl System {
    /// Each position's decision.
    pub fn decisions(&self) -> Vec<Option<Decision>> {
        self.nodes.iter().map(|n| n.decision()).collect()
    }

    /// Messages sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Nothing in flight and every initiator started: no schedule goes on.
    pub fn is_final(&self) -> bool {
        self.unstarted.is_empty() && self.links.iter().all(Vec::is_empty)
    }
}

/// The stateright model of one [`Election`] under some [`Limits`].
#[derive(Debug)]
pub struct ElectionModel {
    election: Election,
    fifo: bool,
    /// The first link index of each position (`link_base[p] + port`).
    link_base: Vec<usize>,
    expected: Option<u64>,
    bound: u64,
}

impl ElectionModel {
    /// The model of `election`; `fifo` as [`Limits::fifo`].
    pub fn new(election: Election, fifo: bool) -> Self {
        let t = &election.topology;
        let mut link_base = Vec::with_capacity(t.len() as usize);
        let mut links = 0;
        for p in 0..t.len() {
            link_base.push(links);
            links += t.ports(p).len();
        }
        let k = election.initiators.len() as u64;
        let bound = election.spec.bound_for(t, k);
        let expected = election.spec.expected_winner(t, &election.ids, &election.initiators, election.rule);
        ElectionModel { election, fifo, link_base, expected, bound }
    }

    /// The system before anything happens.
    fn initial(&self) -> System {
        let e = &self.election;
        let t = &e.topology;
        let mut info: Vec<PortInfo> = Vec::new();
        let n = t.len();
        let nodes = (0..n)
            .map(|p| {
                sim::port_info(t, &e.ids, p, &mut info);
                let ports = info.len() as Port;
                let coin = ringleader_core::algo::coin(0, p);
                let ctx = NodeContext { id: e.ids[p as usize], rule: e.rule, n, coin, ports, port_info: &info };
                let receive_only = t.ports(p).iter().enumerate().filter(|(_, l)| !l.outgoing).map(|(q, _)| q as Port);
                Shell::new((e.spec.build)(&ctx)).with_links(ports, receive_only.collect::<Vec<_>>())
            })
            .collect();
        let links = vec![Vec::new(); self.link_base.last().map_or(0, |&b| b + t.ports(n - 1).len())];
        let mut unstarted = e.initiators.clone();
        unstarted.sort_unstable();
        unstarted.dedup();
        System { nodes, links, unstarted, sent: 0, error: None }
    }

    /// Carry out what position `p`'s step put in `out`: sends go on their
    /// links; anything a one-shot node cannot ask for is the state's error.
    fn absorb(&self, s: &mut System, p: u32, out: &mut Outputs) {
        for o in out.drain() {
            match o {
                Output::Send { port, msg } => {
                    let link = &mut s.links[self.link_base[p as usize] + port as usize];
                    link.push(msg);
                    if !self.fifo {
                        link.sort_unstable();
                    }
                    s.sent += 1;
                }
                Output::Decided(_) | Output::Lead(_) | Output::BeliefEnded(_) => {}
                Output::SetTimer { timer, .. } => {
                    s.error.get_or_insert_with(|| format!("position {p} set timer {timer}: {TIMERS_UNSUPPORTED}"));
                }
                Output::Misstep(m) => {
                    s.error.get_or_insert_with(|| format!("position {p}: {m:?}"));
                }
            }
        }
    }

    /// The election checked.
    pub fn election(&self) -> &Election {
        &self.election
    }
}

impl ElectionModel {
    /// The steps that can follow `s`, in a fixed order.
    fn actions(&self, s: &System, actions: &mut Vec<Step>) {
        if s.error.is_some() {
            return;
        }
        actions.extend(s.unstarted.iter().map(|&p| Step::Start(p)));
        let t = &self.election.topology;
        for from in 0..t.len() {
            let base = self.link_base[from as usize];
            for (port, to) in t.ports(from).iter().enumerate() {
                let link = &s.links[base + port];
                let port = port as Port;
                if s.unstarted.binary_search(&to.peer).is_ok() {
                    // An initiator wakes before any message reaches it.
                    continue;
                }
                if self.fifo {
                    if let Some(&msg) = link.first() {
                        actions.push(Step::Deliver { from, port, msg });
                    }
                } else {
                    // A multiset: each distinct message once.
                    let mut last = None;
                    for &msg in link {
                        if last != Some(msg) {
                            actions.push(Step::Deliver { from, port, msg });
                            last = Some(msg);
                        }
                    }
                }
            }
        }
    }

    /// The state `step` leads to from `last` (`None`: the step is not possible).
    fn next_state(&self, last: &System, step: Step) -> Option<System> {
        let mut s = last.clone();
        let mut out = Outputs::default();
        match step {
            Step::Start(p) => {
                s.unstarted.retain(|&q| q != p);
                s.nodes[p as usize].start(&mut out);
                self.absorb(&mut s, p, &mut out);
            }
            Step::Deliver { from, port, msg } => {
                let link = &mut s.links[self.link_base[from as usize] + port as usize];
                let at = link.iter().position(|&m| m == msg)?;
                link.remove(at);
                let to = self.election.topology.ports(from)[port as usize];
                if let Err(e) = s.nodes[to.peer as usize].message(to.remote_port, msg, &mut out) {
                    s.error.get_or_insert_with(|| format!("position {} refused {msg:?}: {e}", to.peer));
                }
                self.absorb(&mut s, to.peer, &mut out);
            }
        }
        Some(s)
    }
}

impl ElectionModel {
    /// At a final state: every node decided, and the simulator's verdict
    /// (one leader, agreement, the expected winner, the bound) holds.
    fn finished(&self, s: &System) -> bool {
        let e = &self.election;
        let decisions = s.decisions();
        if decisions.iter().any(Option::is_none) {
            return false;
        }
        let v =
            invariants::verdict(self.expected, e.rule, &e.ids, &decisions, s.sent, self.bound, e.spec.bound_formula);
        v.violations.is_empty() && v.leader.is_some()
    }
}

/// The properties checked at every state, in the order they are reported.
pub const PROPERTIES: [&str; 6] = [
    "no node errs",
    "at most one leader",
    "decided nodes agree",
    "the leader is the expected winner",
    "within the bound",
    "every final state is a finished election",
];

impl ElectionModel {
    /// Does `s` keep property `i` of [`PROPERTIES`]?
    fn holds(&self, i: usize, s: &System) -> bool {
        match i {
            0 => s.error.is_none(),
            1 => invariants::at_most_one_leader(&s.decisions()).is_ok(),
            2 => decided_agree(&s.decisions()),
            3 => invariants::leader_is_expected(self.expected, self.election.rule, &self.election.ids, &s.decisions())
                .is_ok(),
            4 => s.sent <= self.bound,
            _ => !s.is_final() || self.finished(s),
        }
    }
}

/// Do the nodes that decided name one leader? (A follower told only that
/// somebody leads, [`UNKNOWN_LEADER`], agrees with anybody.)
fn decided_agree(decisions: &[Option<Decision>]) -> bool {
    let mut named = decisions.iter().flatten().filter(|d| d.role == Role::Leader || d.leader != UNKNOWN_LEADER);
    match named.next() {
        None => true,
        Some(first) => named.all(|d| d.leader == first.leader),
    }
}

/// A schedule that breaks a property: the steps from the initial state, the
/// shortest such (breadth-first).
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The property broken.
    pub property: &'static str,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Each position's decision at the end.
    pub decisions: Vec<Option<Decision>>,
    /// What went wrong at the end, if a node erred.
    pub error: Option<String>,
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct Report {
    /// Distinct states visited.
    pub states: usize,
    /// The longest schedule explored, in steps.
    pub depth: usize,
    /// Final states reached (finished elections, one per distinct outcome
    /// state).
    pub final_states: u64,
    /// The most messages any schedule sent.
    pub most_messages: u64,
    /// The algorithm's bound for this election.
    pub bound: u64,
    /// Every state was explored (no limit cut the check short).
    pub complete: bool,
    /// The properties broken, each with its shortest schedule.
    pub counterexamples: Vec<Counterexample>,
    /// How long the check took.
    pub elapsed: Duration,
}

impl Report {
    /// No property broken, and every state explored.
    pub fn holds(&self) -> bool {
        self.complete && self.counterexamples.is_empty()
    }
}

/// How far a check has got, as it goes.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Distinct states found so far.
    pub states: usize,
    /// The depth (steps from the start) being explored.
    pub depth: usize,
    /// Time since the check began.
    pub elapsed: Duration,
}

/// Fingerprints are already hashes: store them as they are.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A state's 64-bit fingerprint.
fn fingerprint(s: &System) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Check `election` on every schedule within `limits`, breadth-first (or
/// depth-first, [`Limits::depth_first`]).
pub fn check(election: Election, limits: Limits) -> Report {
    check_with(election, limits, None, |_| {})
}

/// [`check`], stopped early when `cancel` is set, telling `progress` how far
/// it has got about four times a second.
pub fn check_with(
    election: Election,
    limits: Limits,
    cancel: Option<&AtomicBool>,
    mut progress: impl FnMut(Progress),
) -> Report {
    let started = Instant::now();
    let model = ElectionModel::new(election, limits.fifo);
    let init = model.initial();
    // Each state seen: its parent's fingerprint and the index of the step that led here.
    let mut seen: HashMap<u64, (u64, u32), BuildHasherDefault<Identity>> = HashMap::default();
    let root = fingerprint(&init);
    seen.insert(root, (root, u32::MAX));
    let mut queue = VecDeque::from([(init, root, 0usize)]);
    let mut found: [Option<u64>; PROPERTIES.len()] = [None; PROPERTIES.len()];
    let (mut depth, mut final_states, mut most_messages) = (0usize, 0u64, 0u64);
    let mut complete = true;
    let mut actions = Vec::new();
    let mut last_report = Instant::now();
    let next = |q: &mut VecDeque<(System, u64, usize)>| if limits.depth_first { q.pop_back() } else { q.pop_front() };
    while let Some((s, fp, d)) = next(&mut queue) {
        depth = depth.max(d);
        let mut broken = false;
        for (i, slot) in found.iter_mut().enumerate() {
            if !model.holds(i, &s) {
                broken = true;
                slot.get_or_insert(fp);
            }
        }
        if broken {
            continue;
        }
        if s.is_final() {
            final_states += 1;
            most_messages = most_messages.max(s.sent);
            continue;
        }
        let limited = (limits.max_states > 0 && seen.len() >= limits.max_states)
            || (limits.max_depth > 0 && d >= limits.max_depth)
            || limits.timeout.is_some_and(|t| started.elapsed() >= t)
            || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        if limited {
            complete = false;
            if limits.max_depth > 0 && d >= limits.max_depth {
                continue;
            }
            break;
        }
        model.actions(&s, &mut actions);
        for (i, step) in actions.drain(..).enumerate() {
            let Some(next) = model.next_state(&s, step) else { continue };
            let nfp = fingerprint(&next);
            if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(nfp) {
                e.insert((fp, i as u32));
                queue.push_back((next, nfp, d + 1));
            }
        }
        if last_report.elapsed() >= Duration::from_millis(250) {
            last_report = Instant::now();
            progress(Progress { states: seen.len(), depth, elapsed: started.elapsed() });
        }
    }
    progress(Progress { states: seen.len(), depth, elapsed: started.elapsed() });
    let mut counterexamples: Vec<Counterexample> =
        found.iter().enumerate().filter_map(|(i, fp)| fp.map(|fp| model.replay(PROPERTIES[i], &seen, fp))).collect();
    counterexamples.sort_by_key(|c| c.steps.len());
    Report {
        states: seen.len(),
        depth,
        final_states,
        most_messages,
        bound: model.bound,
        complete,
        counterexamples,
        elapsed: started.elapsed(),
    }
}

impl ElectionModel {
    /// The schedule from the start to the state with fingerprint `fp`,
    /// replayed step by step.
    fn replay<S: std::hash::BuildHasher>(
        &self,
        property: &'static str,
        seen: &HashMap<u64, (u64, u32), S>,
        mut fp: u64,
    ) -> Counterexample {
        let mut indices = Vec::new();
        while let Some(&(parent, i)) = seen.get(&fp) {
            if i == u32::MAX {
                break;
            }
            indices.push(i as usize);
            fp = parent;
        }
        let mut s = self.initial();
        let mut steps = Vec::with_capacity(indices.len());
        let mut actions = Vec::new();
        for &i in indices.iter().rev() {
            actions.clear();
            self.actions(&s, &mut actions);
            let step = actions[i];
            steps.push(step);
            s = self.next_state(&s, step).expect("a recorded step replays");
        }
        Counterexample { property, steps, decisions: s.decisions(), error: s.error.clone() }
    }
}

/// Why an election of a sweep was not checked.
pub const TIMERS_UNSUPPORTED: &str = "timers are not explored yet";

/// What every election of one algorithm at one size gave.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    /// Elections checked (id arrangements × initiator sets).
    pub elections: usize,
    /// Distinct states over all of them.
    pub states: usize,
    /// The longest schedule.
    pub depth: usize,
    /// The most messages on any schedule of any of them.
    pub most_messages: u64,
    /// The largest bound among them (the bound depends on the initiators).
    pub bound: u64,
    /// The most messages on any schedule with every node initiating, and
    /// that election's bound: the worst case against the published one.
    pub all_initiators: (u64, u64),
    /// Every election was explored to the end.
    pub complete: bool,
    /// The elections that broke a property: (ids, initiators, counterexample).
    pub broken: Vec<(Vec<u64>, Vec<u32>, Counterexample)>,
    /// The algorithm sets timers, which the checker does not explore yet.
    pub unsupported: bool,
    /// How long the sweep took.
    pub elapsed: Duration,
}

impl Sweep {
    /// Every election explored to the end, none broken.
    pub fn holds(&self) -> bool {
        self.complete && self.broken.is_empty() && !self.unsupported
    }
}

/// The id arrangements a sweep of `n` nodes on `topology` runs: on a ring,
/// every arrangement up to rotation (a rotation is the same election); on
/// any other overlay, every arrangement.
pub fn arrangements(topology: &Topology) -> Vec<Vec<u64>> {
    let n = topology.len();
    if topology.kind().is_ring() {
        ringleader_core::algo::harness::ring_arrangements(n)
    } else {
        ringleader_core::algo::harness::permutations(&(1..=u64::from(n)).collect::<Vec<_>>())
    }
}

/// Check `spec` on `n` nodes of its default overlay (built with `seed`) under
/// `rule`: every id arrangement ([`arrangements`]) × every non-empty set of
/// initiators, every schedule of each. `progress` is told each election's
/// report as it ends.
pub fn sweep(
    spec: &'static AlgorithmSpec,
    n: u32,
    seed: u64,
    rule: Rule,
    limits: Limits,
    mut progress: impl FnMut(&[u64], &[u32], &Report),
) -> Result<Sweep, String> {
    let started = Instant::now();
    let topology = Topology::build(spec.default_topology(), n, seed).map_err(|e| e.to_string())?;
    let mut out = Sweep { complete: true, ..Sweep::default() };
    for ids in arrangements(&topology) {
        for set in 1..(1u64 << n) {
            let initiators: Vec<u32> = (0..n).filter(|p| set >> p & 1 == 1).collect();
            let election = Election { spec, topology: topology.clone(), ids: ids.clone(), initiators, rule };
            let initiators = election.initiators.clone();
            let r = check(election, limits);
            progress(&ids, &initiators, &r);
            out.elections += 1;
            out.states += r.states;
            out.depth = out.depth.max(r.depth);
            out.most_messages = out.most_messages.max(r.most_messages);
            out.bound = out.bound.max(r.bound);
            if initiators.len() == n as usize {
                out.all_initiators.0 = out.all_initiators.0.max(r.most_messages);
                out.all_initiators.1 = r.bound;
            }
            out.complete &= r.complete;
            for c in r.counterexamples {
                if c.error.as_deref().is_some_and(|e| e.ends_with(TIMERS_UNSUPPORTED)) {
                    out.unsupported = true;
                } else {
                    out.broken.push((ids.clone(), initiators.clone(), c));
                }
            }
            if out.unsupported {
                out.elapsed = started.elapsed();
                return Ok(out);
            }
        }
    }
    out.elapsed = started.elapsed();
    Ok(out)
}
