//! What a catalogue entry says about an algorithm: its name, source,
//! topologies, assumptions, who wins, its message bound as a function of n
//! (positions) and k (initiators), its worst and best arrangements, and how
//! to build and simulate its state machine. Each algorithm's file declares its
//! own entry (`SPEC`) beside its code, with [`machine!`](crate::machine)
//! naming its constructor once; `catalogue` lists them.

use crate::protocol::detector::DetectorConfig;
use crate::protocol::{Algorithm, NodeContext, Rule};
use crate::report::{SimConfig, SimReport};
use crate::topology::{Topology, TopologyKind};

/// Creates one node's state machine. A function for a built-in entry
/// ([`machine!`](crate::machine)); a program's entry, made when the program
/// is installed, captures the program (the `ringleader-program` crate).
pub type Build = &'static (dyn Fn(&NodeContext) -> Box<dyn Algorithm> + Send + Sync);

/// Creates one node's state machine in "keep a leader" mode, with the failure
/// detector's settings; the algorithm derives its own timeouts from them.
pub type BuildKept = fn(&NodeContext, DetectorConfig) -> Box<dyn Algorithm>;

/// Runs the simulator with an algorithm's concrete state machine
/// (see [`crate::sim::run_with`]); arguments as [`crate::sim::run`].
pub type Simulate =
    &'static (dyn Fn(&AlgorithmSpec, &Topology, &[u64], &[u32], Rule, &SimConfig) -> SimReport + Send + Sync);

/// The bound on all messages for n positions and k initiators: a function
/// for a built-in entry (`bound: &|n, k| ...`), a program's declared
/// formula for a program's entry.
pub type Bound = &'static (dyn Fn(u64, u64) -> u64 + Send + Sync);

/// The bound of an entry for which no finite message bound holds on every
/// run (a randomised algorithm whose rounds are unbounded: Itai-Rodeh).
/// Every message count is within it; no figure or ratio against it is
/// shown to a user ([`bound_text`], [`finite_bound`]).
pub const UNBOUNDED: u64 = u64::MAX;

/// `bound`, or `None` when it is [`UNBOUNDED`].
pub fn finite_bound(bound: u64) -> Option<u64> {
    (bound != UNBOUNDED).then_some(bound)
}

/// A bound as a user reads it: its figure, or "unbounded".
pub fn bound_text(bound: u64) -> String {
    finite_bound(bound).map_or_else(|| "unbounded".to_string(), |b| b.to_string())
}

/// Network assumptions of an algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assumptions {
    /// Needs links both ways.
    pub bidirectional: bool,
    /// Needs a common sense of direction.
    pub oriented: bool,
    /// Needs FIFO links.
    pub fifo: bool,
}

/// One catalogue entry: every fact about an algorithm that its drivers,
/// tests and pages rely on. Each is named in the entry's literal, so an entry
/// that leaves one out does not compile; the claims only some algorithms make
/// sit in [`Extras`], whose [`Extras::NONE`] makes none of them. Stated whole,
/// an entry compiles:
///
/// ```
/// use ringleader_core::algo::as_far::AsFar;
/// use ringleader_core::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, RINGS};
/// use ringleader_core::algo::Rule;
/// const MINE: AlgorithmSpec = AlgorithmSpec {
///     name: "mine",
///     title: "Mine",
///     source: "a scratch entry, in the rustdoc",
///     description: "AsFar under another name.",
///     topologies: RINGS,
///     assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
///     rule: Rule::Max,
///     candidates: Candidates::All,
///     bound_formula: "n(n+1)/2 + n",
///     bound: &|n, _| n * (n + 1) / 2 + n,
///     timer_events: |_| 0,
///     heap_bytes_per_position: 308,
///     kept: None,
///     live_provision: Provision::Nodes,
///     machine: ringleader_core::machine!(AsFar::new),
///     extras: Extras { schedule_independent: true, ..Extras::NONE },
/// };
/// ```
///
/// and with a fact left out (here its winner rule), it does not:
///
/// ```compile_fail,E0063
/// use ringleader_core::algo::as_far::AsFar;
/// use ringleader_core::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, RINGS};
/// const MINE: AlgorithmSpec = AlgorithmSpec {
///     name: "mine",
///     title: "Mine",
///     source: "a scratch entry, in the rustdoc",
///     description: "AsFar under another name.",
///     topologies: RINGS,
///     assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
///     candidates: Candidates::All,
///     bound_formula: "n(n+1)/2 + n",
///     bound: &|n, _| n * (n + 1) / 2 + n,
///     timer_events: |_| 0,
///     heap_bytes_per_position: 308,
///     kept: None,
///     live_provision: Provision::Nodes,
///     machine: ringleader_core::machine!(AsFar::new),
///     extras: Extras::NONE,
/// };
/// ```
#[derive(Clone, Copy)]
pub struct AlgorithmSpec {
    /// Catalogue name, e.g. `as-far`.
    pub name: &'static str,
    /// Human title.
    pub title: &'static str,
    /// The literature it follows: authors, title, venue or book (with chapter), year.
    pub source: &'static str,
    /// One-paragraph description.
    pub description: &'static str,
    /// Topologies it runs on; the first is the default.
    pub topologies: &'static [TopologyKind],
    /// Network assumptions.
    pub assumptions: Assumptions,
    /// Its own winner rule (a request may mirror it).
    pub rule: Rule,
    /// Whose ids can win.
    pub candidates: Candidates,
    /// The bound on all messages (election + notification), as text.
    pub bound_formula: &'static str,
    /// The bound on all messages for n positions and k initiators, valid on
    /// every overlay the algorithm accepts.
    pub bound: Bound,
    /// Most timer events a failure-free one-shot run on n nodes fires: a
    /// round clock ticks every node every round (`sync-hs`); `|_| 0` for
    /// algorithms whose timers are few. The simulator's timer budget and
    /// the controller's size check follow it.
    pub timer_events: fn(n: u64) -> u64,
    /// Peak heap per position of a SIMULATED election, in bytes, as
    /// `cargo run --release -p ringleader-core --example memory` measures it
    /// (on a complete network at [`HEAP_MEASURED_AT`] positions: it grows
    /// with n there). The controller's memory admission estimates from it;
    /// a catalogue test refuses 0.
    pub heap_bytes_per_position: u64,
    /// What keeping a leader with it takes, for failure-tolerant algorithms
    /// (its kept mode, with a failure detector); `None`: one-shot only.
    pub kept: Option<KeptSpec>,
    /// What a LIVE run of it must be given besides its nodes.
    pub live_provision: Provision,
    /// Its state machine: [`machine!`](crate::machine)`(Type::new)`.
    pub machine: Machine,
    /// The claims only some algorithms make ([`Extras::NONE`]: none).
    pub extras: Extras,
}

/// An entry's state machine, built by its drivers: from the one constructor
/// `Type::new(&NodeContext)`, [`machine!`](crate::machine) gives both.
#[derive(Clone, Copy)]
pub struct Machine {
    /// Creates one node's state machine.
    pub build: Build,
    /// Simulates an election with the concrete state machine (no boxing).
    pub simulate: Simulate,
}

impl std::fmt::Debug for AlgorithmSpec {
    /// The entry's name and its facts that are data (not its functions).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlgorithmSpec")
            .field("name", &self.name)
            .field("topologies", &self.topologies)
            .field("assumptions", &self.assumptions)
            .field("rule", &self.rule)
            .field("candidates", &self.candidates)
            .field("bound_formula", &self.bound_formula)
            .field("kept", &self.kept.is_some())
            .field("live_provision", &self.live_provision)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Machine { .. }")
    }
}

/// What a LIVE run of an algorithm must provision besides its nodes and
/// their links; the controller refuses a LIVE election it cannot provision,
/// and the node connects to it. (SIMULATED and checked runs model it all.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provision {
    /// Nothing more: the nodes only message each other.
    Nodes,
    /// A store every node reaches (etcd): the nodes keep their state there
    /// ([`crate::protocol::store`]) rather than (or besides) messaging each other.
    Store,
}

/// The claims only some algorithms make, each strengthening what is
/// checked of it; [`Extras::NONE`] makes none of them, so an entry states
/// only its own (`extras: Extras { exact: Some(..), ..Extras::NONE }`). A
/// claim left out is never wrong, only unchecked (the conformance tests and
/// pages then do without it), except that an algorithm that takes settings
/// must list them in `options`: a request's setting it does not list is
/// refused.
#[derive(Clone, Copy, Debug)]
pub struct Extras {
    /// A sharper bound for one overlay, where the count depends on its shape:
    /// called with n, the overlay's number of edges m, and k. Drivers use
    /// [`AlgorithmSpec::bound_for`], which prefers it. `None`: `bound` alone.
    pub bound_on: Option<fn(n: u64, m: u64, k: u64) -> u64>,
    /// The exact message count, where it is the same on every schedule in
    /// which initiators wake before any message reaches them (on FIFO links
    /// where the algorithm assumes FIFO).
    pub exact: Option<fn(n: u64, k: u64) -> u64>,
    /// On an oriented ring with FIFO links, for given ids and initiators, the
    /// message count is the same on every schedule in which initiators wake
    /// before any message reaches them. LIVE and SIMULATED counts must then match.
    pub schedule_independent: bool,
    /// The arrangement of ids 1..=n (in ring order) that costs the most
    /// messages under a rule, and how it is built; `None` where the
    /// literature gives none (or the count does not depend on the ids).
    pub worst_case: Option<Arrangement>,
    /// The arrangement that costs the fewest messages.
    pub best_case: Option<Arrangement>,
    /// The settings a request may give it (`StartElection.options`); the
    /// state machine reads them from [`NodeContext::options`].
    pub options: &'static [AlgoOption],
    /// It needs no ids: it elects on an anonymous ring, where every node has
    /// the same id (randomness breaks the symmetry; Angluin's theorem says
    /// no deterministic algorithm can). Every other algorithm assumes
    /// distinct ids, and on repeated ids may elect several leaders or none.
    pub anonymous: bool,
    /// For an algorithm that waits by design (silence is information): how
    /// long, in milliseconds, a failure-free LIVE run with these ids (ring
    /// order) and initiators (positions) under this rule lasts at least. The
    /// controller refuses a LIVE run that would outlast its decision timeout,
    /// naming `ids` (or `initiators` when the ids were placed by an order).
    /// `None`: no wait.
    pub live_wait_ms: Option<LiveWait>,
    /// It tries its ports one at a time in the order of their labels (a
    /// capture goes to port 0 first), so on a complete network one
    /// arrangement of the ids is not the same election as another with the
    /// positions renamed: the checker's symmetric sweep
    /// (`ringleader_check::Limits::symmetric`) runs every arrangement for it.
    pub port_order_matters: bool,
}

/// How long a LIVE run with these ids (ring order) and initiators
/// (positions) under this rule lasts at least, in milliseconds
/// ([`Extras::live_wait_ms`]).
pub type LiveWait = fn(ids: &[u64], initiators: &[u32], rule: Rule) -> u64;

impl Extras {
    /// No claim: no sharper bound, no exact count, not schedule-independent,
    /// no known arrangements, no options, ids assumed distinct, no wait, ports alike.
    pub const NONE: Extras = Extras {
        bound_on: None,
        exact: None,
        schedule_independent: false,
        worst_case: None,
        best_case: None,
        options: &[],
        anonymous: false,
        live_wait_ms: None,
        port_order_matters: false,
    };
}

impl Default for Extras {
    /// [`Extras::NONE`].
    fn default() -> Self {
        Extras::NONE
    }
}

/// A setting an algorithm takes from a request: a name and a text value,
/// declared in its catalogue entry, so that drivers check it and
/// `ListAlgorithms` lists it without knowing the algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AlgoOption {
    /// Its name in `StartElection.options`, e.g. `pre_vote`.
    pub name: &'static str,
    /// What it does, its values and its default, for `ListAlgorithms`.
    pub help: &'static str,
    /// One value per position, separated by commas (or one value for all):
    /// each node gets its own in [`NodeContext::options`].
    pub per_node: bool,
    /// Only a kept leadership takes it.
    pub kept_only: bool,
    /// Checks one value (one node's, for a per-node option).
    pub check: fn(&str) -> Result<(), OptionError>,
    /// `Some` when setting it to `true` gives the leader a lease (never two
    /// leaders at once, of any term; the checker and the failover records
    /// then treat the leadership as [`KeptSpec::lease`] says).
    pub lease: Option<Lease>,
}

/// Why [`AlgoOption::check`] refused a value; its words are the request's refusal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// The value is not of the option's form.
    #[error("`{value}` is not {form}")]
    Form {
        /// The value refused.
        value: String,
        /// The form and the values the option takes, e.g. "a flag: true or false".
        form: &'static str,
    },
    /// The value has the option's form, but a number in it is above the
    /// largest the algorithm takes.
    #[error("{what} {value} {why}: {limit} is at most {max} ({max_is})")]
    TooLarge {
        /// What the number is, e.g. "term".
        what: &'static str,
        /// The number refused.
        value: u64,
        /// What goes wrong with it, e.g. "leaves no term to run for".
        why: &'static str,
        /// Whose largest value `max` is, e.g. "a log's term".
        limit: &'static str,
        /// The largest value taken.
        max: u64,
        /// How `max` comes about.
        max_is: &'static str,
    },
}

impl OptionError {
    /// `value` is not of the form `form` describes.
    pub fn form(value: &str, form: &'static str) -> OptionError {
        OptionError::Form { value: value.to_string(), form }
    }
}

/// [`AlgoOption::check`] of a flag: `true` or `false`.
pub fn flag(value: &str) -> Result<(), OptionError> {
    match value {
        "true" | "false" => Ok(()),
        _ => Err(OptionError::form(value, "a flag: true or false")),
    }
}

/// Check a request's options against `spec` for `n` positions: each a known
/// option, kept-only ones in a kept leadership, each value (every node's
/// value of a per-node option, one or `n` of them) accepted by its check.
/// `Err((field, why))` names the field, as `options.<name>`.
pub fn check_options(
    spec: &AlgorithmSpec,
    options: &[(String, String)],
    n: u32,
    kept: bool,
) -> Result<(), (String, String)> {
    for (name, value) in options {
        let field = format!("options.{name}");
        let Some(o) = spec.extras.options.iter().find(|o| o.name == name) else {
            let known: Vec<&str> = spec.extras.options.iter().map(|o| o.name).collect();
            let known =
                if known.is_empty() { "it takes none".to_string() } else { format!("known: {}", known.join(", ")) };
            return Err((field, format!("{} has no option `{name}`; {known}", spec.name)));
        };
        if o.kept_only && !kept {
            return Err((field, "applies to a kept leadership (keep_leader) only".to_string()));
        }
        if o.per_node {
            let values: Vec<&str> = value.split(',').map(str::trim).collect();
            if values.len() != 1 && values.len() != n as usize {
                return Err((
                    field,
                    format!("one value for every node or {n} (one per position), not {}", values.len()),
                ));
            }
            for (i, v) in values.iter().enumerate() {
                (o.check)(v).map_err(|e| {
                    (field.clone(), if values.len() == 1 { e.to_string() } else { format!("position {i}: {e}") })
                })?;
            }
        } else {
            (o.check)(value).map_err(|e| (field.clone(), e.to_string()))?;
        }
    }
    Ok(())
}

/// The options of the node at `position`: a per-node option's value cut to
/// that node's (options [`check_options`] accepted).
pub fn node_options(spec: &AlgorithmSpec, options: &[(String, String)], position: u32) -> Vec<(String, String)> {
    options
        .iter()
        .map(|(name, value)| {
            let per_node = spec.extras.options.iter().any(|o| o.name == name && o.per_node);
            let mut values = value.split(',').map(str::trim);
            let mine = if per_node && value.contains(',') { values.nth(position as usize) } else { Some(value.trim()) };
            (name.clone(), mine.unwrap_or_default().to_string())
        })
        .collect()
}

/// The lease the options give the leader, if one of them does (see [`AlgoOption::lease`]).
pub fn option_lease(spec: &AlgorithmSpec, options: &[(String, String)]) -> Option<Lease> {
    spec.extras.options.iter().filter(|o| options.iter().any(|(k, v)| k == o.name && v == "true")).find_map(|o| o.lease)
}

/// Size at which the complete-network algorithms' [`AlgorithmSpec::heap_bytes_per_position`] is measured.
pub const HEAP_MEASURED_AT: u64 = 2_048;

/// What keeping a leader with an algorithm takes: how to build its node in
/// that mode, what it costs and how soon it agrees. Every field is required,
/// so a kept algorithm that misses a fact does not compile. Stated whole, a
/// kept mode compiles:
///
/// ```
/// use ringleader_core::spec::KeptSpec;
/// const BULLY: KeptSpec = ringleader_core::algo::bully::SPEC.kept.unwrap();
/// const MINE: KeptSpec = KeptSpec {
///     build: BULLY.build,
///     heartbeats_per_period: |topo| 2 * u64::from(topo.len() - 1),
///     election_load_per_second: |topo, d| u64::from(topo.len()) * 1_000 / d.period_ms,
///     convergence_bound_ms: |d, _, delay_ms| 10 * d.timeout_ms + 4 * delay_ms,
///     max_local_nodes: 64,
///     lease: None,
///     liveness_needs: None,
/// };
/// ```
///
/// and with a fact left out (here its convergence bound), it does not:
///
/// ```compile_fail,E0063
/// use ringleader_core::spec::KeptSpec;
/// const BULLY: KeptSpec = ringleader_core::algo::bully::SPEC.kept.unwrap();
/// const MINE: KeptSpec = KeptSpec {
///     build: BULLY.build,
///     heartbeats_per_period: |topo| 2 * u64::from(topo.len() - 1),
///     election_load_per_second: |topo, d| u64::from(topo.len()) * 1_000 / d.period_ms,
///     max_local_nodes: 64,
///     lease: None,
///     liveness_needs: None,
/// };
/// ```
#[derive(Clone, Copy, Debug)]
pub struct KeptSpec {
    /// Creates one node's state machine in "keep a leader" mode, with the
    /// failure detector's settings.
    pub build: BuildKept,
    /// Heartbeats a settled leadership sends per detector period on a
    /// topology, at most (whom its nodes watch, and the detector answers
    /// whoever watches it). While a node looks for a leader it watches
    /// everyone: elections cost more, for as long as they last.
    pub heartbeats_per_period: fn(&Topology) -> u64,
    /// Messages a second the leadership sends while every node elects at
    /// once (its start, or a partition healing), by the model of what the
    /// algorithm must get through in time.
    pub election_load_per_second: fn(&Topology, DetectorConfig) -> u64,
    /// How long after the last fault heals, with the detector's settings,
    /// `n` nodes and messages delayed by at most `delay_ms`, the nodes agree
    /// on one live leader at most (a live majority assumed where the
    /// algorithm needs one), in ms; the algorithm's rustdoc argues it.
    pub convergence_bound_ms: fn(d: DetectorConfig, n: u32, delay_ms: u64) -> u64,
    /// The largest leadership, in nodes, that `benches/keep` saw agree on
    /// the embedded cluster's one process (release build, 2 cores, loopback
    /// detector: 50 ms period, 200 ms timeout); the controller refuses larger
    /// ones there. The next size up never agreed within 120 s: an election's
    /// burst and opening a stream per pair of nodes took longer than the
    /// timeouts, and each timeout started another election; a slower detector
    /// did not rescue it, so the limit is on nodes (docs/performance.md).
    pub max_local_nodes: u32,
    /// `Some` when its leader holds a lease: never two leaders at once, of
    /// any term (the checker checks it).
    pub lease: Option<Lease>,
    /// What its convergence bound assumes of timing beyond the detector's,
    /// in words, when it assumes something the checker's schedules do not
    /// give (Raft: randomised timeouts that end split votes; the checker
    /// lets timers fire in every order, together too). The checker says it
    /// beside a broken convergence property, so that a liveness
    /// counterexample that only luck avoids is read as what it is.
    pub liveness_needs: Option<&'static str>,
}

/// `messages` every `ms` milliseconds, as messages a second.
pub fn per_second(messages: u64, ms: u64) -> u64 {
    messages.saturating_mul(1_000) / ms.max(1)
}

/// What an algorithm whose leader holds a lease says of it.
#[derive(Clone, Copy, Debug)]
pub struct Lease {
    /// A failover's cause when the leader gave up because its lease was not renewed.
    pub lost: &'static str,
}

impl KeptSpec {
    /// Does its leader hold a lease?
    pub fn leased(&self) -> bool {
        self.lease.is_some()
    }
}

/// Whose ids an algorithm elects from: the winner is the extremum of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidates {
    /// Every position (non-initiators are woken and compete).
    All,
    /// Only the initiators (a node that has not woken by itself stays passive).
    Initiators,
    /// Only the corners of a mesh (positions with two ports).
    MeshCorners,
    /// Whichever node the run makes the root of its spanning tree (which
    /// depends on the schedule): no id is expected to win.
    Root,
    /// Whichever initiator's random draws win (Itai-Rodeh on an anonymous
    /// ring): no id is expected to win.
    Drawn,
    /// Whichever initiator captures every node (Korach-Moran-Zaks,
    /// Afek-Gafni): a smaller id that has captured more beats a larger one,
    /// so the schedule decides and no id is expected to win.
    Captor,
    /// Whichever candidate outlasts every stage (the torus election): a
    /// weaker id that got a stage further beats a better one, so the
    /// schedule decides and no id is expected to win.
    Survivor,
}

impl Candidates {
    /// Human description, as `ListAlgorithms` reports it.
    pub fn describe(self) -> &'static str {
        match self {
            Candidates::All => "every node",
            Candidates::Initiators => "the initiators",
            Candidates::MeshCorners => "the mesh corners",
            Candidates::Root => "the root the run builds (the better of the two saturated nodes)",
            Candidates::Drawn => "the initiator whose random draws win",
            Candidates::Captor => "the initiator that captures every node (the schedule decides)",
            Candidates::Survivor => "the candidate that outlasts every stage (the schedule decides)",
        }
    }
}

/// A named id arrangement of 1..=n for a rule.
#[derive(Clone, Copy, Debug)]
pub struct Arrangement {
    /// How it is built, for `ListAlgorithms` and the docs.
    pub description: &'static str,
    /// Ids of positions 0..n.
    pub ids: fn(n: u32, rule: Rule) -> Vec<u64>,
}

/// 1, 2, ..., n.
pub fn ascending(n: u32) -> Vec<u64> {
    (1..=n as u64).collect()
}

/// n, n-1, ..., 1.
pub fn descending(n: u32) -> Vec<u64> {
    (1..=n as u64).rev().collect()
}

/// Mirror an arrangement built for the max rule so it serves the min rule:
/// id v becomes n + 1 - v (the order of every comparison is reversed).
pub fn mirror(ids: Vec<u64>, n: u32, rule: Rule) -> Vec<u64> {
    match rule {
        Rule::Max => ids,
        Rule::Min => ids.into_iter().map(|v| n as u64 + 1 - v).collect(),
    }
}

/// Position i holds 1 + its rank when positions are sorted by the bit
/// reversal of i (over ⌈log2 n⌉ bits): for n = 2^p, the ids of every
/// stage's candidates alternate high and low, so exactly half survive.
pub fn bit_reversal(n: u32) -> Vec<u64> {
    let bits = ceil_log2(n as u64) as u32;
    let key = |i: u32| if bits == 0 { 0 } else { i.reverse_bits() >> (32 - bits) };
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_by_key(|&i| key(i));
    let mut ids = vec![0u64; n as usize];
    for (rank, &pos) in order.iter().enumerate() {
        ids[pos as usize] = rank as u64 + 1;
    }
    ids
}

/// The arrangement read the other way round (ring order reversed).
pub fn reversed(mut ids: Vec<u64>) -> Vec<u64> {
    ids.reverse();
    ids
}

/// Every order of `items`, in lexicographic order of their positions (all
/// orders starting with `items[0]` first): `items.len()!` of them.
pub fn permutations(items: &[u64]) -> Vec<Vec<u64>> {
    arrangements(Vec::with_capacity(items.len()), items.to_vec())
}

/// The arrangements of ids `1..=n` on a ring up to rotation: every order
/// with id 1 at position 0 ((n − 1)! of them, in the order of
/// [`permutations`] of the others). A rotation costs the same where the
/// initiators are all the nodes or range over every subset.
pub fn ring_arrangements(n: u32) -> Vec<Vec<u64>> {
    let mut prefix = Vec::with_capacity(n as usize);
    prefix.push(1);
    arrangements(prefix, (2..=u64::from(n)).collect())
}

/// `prefix` followed by every order of `rest`, in lexicographic order of positions.
fn arrangements(mut prefix: Vec<u64>, mut rest: Vec<u64>) -> Vec<Vec<u64>> {
    fn rec(prefix: &mut Vec<u64>, rest: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
        if rest.is_empty() {
            out.push(prefix.clone());
            return;
        }
        for i in 0..rest.len() {
            let x = rest.remove(i);
            prefix.push(x);
            rec(prefix, rest, out);
            prefix.pop();
            rest.insert(i, x);
        }
    }
    let mut out = Vec::new();
    rec(&mut prefix, &mut rest, &mut out);
    out
}

/// An arrangement of 1..=n (ring order, max rule) on which Stages with
/// Feedback sends [`feedback_worst_case_cost`] messages, the most found: it
/// equals the exhaustive maximum for every n ≤ 8 and no random or
/// hill-climbing search has beaten it (see `docs/algorithms.md`).
///
/// A stage with c ≥ 3 candidates costs 2n ids plus one feedback per segment
/// between neighbouring candidates, except one segment per local maximum;
/// a stage with two candidates costs 3n (the loser feeds back both ways);
/// the last candidate's ids and the notification 3n. So the construction
/// keeps as many stages as possible, ends them with two candidates, and
/// makes the survivors the only local maxima, with their missing feedback on
/// the shortest segments. With k = max{k : 2·3^(k−1) ≤ n}: U_1 = [2, 1];
/// U_(j+1) puts after each id of U_j (raised above all new ids) a run of two
/// new smaller ids, so stage 1 keeps exactly U_j and every gap triples. The
/// n − 2·3^(k−1) remaining ids, smallest and decreasing, lengthen the run
/// right after the maximum: its segments always carry feedback.
pub fn feedback_worst_case(n: u32) -> Vec<u64> {
    let n = n as usize;
    if n <= 1 {
        return vec![1; n];
    }
    let mut u: Vec<u64> = vec![2, 1];
    while 3 * u.len() <= n {
        let s = u.len() as u64;
        let mut next = Vec::with_capacity(3 * u.len());
        let mut small = 2 * s;
        for &v in &u {
            next.extend([v + 2 * s, small, small - 1]);
            small -= 2;
        }
        u = next;
    }
    let extra = (n - u.len()) as u64;
    // The maximum stays first; its run is the one or two ids after it.
    let run_end = u.len().min(3);
    let mut ids: Vec<u64> = u.iter().map(|&v| v + extra).collect();
    ids.splice(run_end..run_end, (1..=extra).rev());
    ids
}

/// 1, 2, ..., n with the disjoint pairs of positions (n−3, n−2), (n−5, n−4),
/// ... down to position 1 swapped: every swapped pair's first id is a local
/// maximum and so is n, ⌊n/2⌋ local maxima in all, and only n is larger than
/// the two nearest ids on each side. Stages with Feedback's best
/// case: a stage of n candidates costs 2n ids plus a feedback from every
/// candidate that is not a local maximum, at least ⌈n/2⌉, then the last
/// candidate's ids and the notification cost 3n; this arrangement needs no
/// more (5n + ⌈n/2⌉ for n ≥ 3).
pub fn zigzag(n: u32) -> Vec<u64> {
    let mut ids = ascending(n);
    let mut j = n as i64 - 3;
    while j >= 1 {
        ids.swap(j as usize, j as usize + 1);
        j -= 2;
    }
    ids
}

/// What [`feedback_worst_case`] costs Stages with Feedback (all messages):
/// 12 for n = 2 and 6n − 1 for n = 3..5 (one stage); otherwise, with k as
/// there, k − 1 stages of 3n less the 2·3^(k−2) links of the segments
/// without feedback, a stage of two candidates (3n), and 3n for the last
/// candidate and the notification: 3n(k + 1) − 2(k − 1)·3^(k−2).
pub fn feedback_worst_case_cost(n: u64) -> u64 {
    let mut k = 1u32;
    while 2 * 3u64.pow(k) <= n {
        k += 1;
    }
    match (k, n) {
        (_, 0 | 1) => 0,
        (1, 2) => 12,
        (1, _) => 6 * n - 1,
        _ => 3 * n * (k as u64 + 1) - 2 * (k as u64 - 1) * 3u64.pow(k - 2),
    }
}

impl AlgorithmSpec {
    /// Most timer events a failure-free one-shot run on `n` nodes fires
    /// ([`Self::timer_events`]).
    pub fn timer_event_bound(&self, n: u64) -> u64 {
        (self.timer_events)(n)
    }

    /// Its kept mode's convergence bound ([`KeptSpec::convergence_bound_ms`]); `None` without a kept mode.
    pub fn convergence_bound_ms(&self, d: DetectorConfig, n: u32, delay_ms: u64) -> Option<u64> {
        self.kept.map(|k| (k.convergence_bound_ms)(d, n, delay_ms))
    }

    /// No finite message bound holds on every run: its bound is
    /// [`UNBOUNDED`] (tried at a small and a large size).
    pub fn unbounded(&self) -> bool {
        [(3, 3), (1024, 1024)].iter().all(|&(n, k)| (self.bound)(n, k) == UNBOUNDED)
    }

    /// The default topology.
    pub fn default_topology(&self) -> TopologyKind {
        self.topologies[0]
    }

    /// Can it run on `t`?
    pub fn supports(&self, t: TopologyKind) -> bool {
        self.topologies.contains(&t)
    }

    /// The bound on `topo` with `k` initiators: [`Extras::bound_on`] with the
    /// overlay's edge count where the entry has one, else [`Self::bound`].
    pub fn bound_for(&self, topo: &Topology, k: u64) -> u64 {
        let n = topo.len() as u64;
        match self.extras.bound_on {
            Some(f) => f(n, topo.edge_count() as u64, k),
            None => (self.bound)(n, k),
        }
    }

    /// The id that must win on `topo` with these ids and initiators under `rule`.
    pub fn expected_winner(&self, topo: &Topology, ids: &[u64], initiators: &[u32], rule: Rule) -> Option<u64> {
        match self.candidates {
            Candidates::All => rule.winner(ids.iter().copied()),
            Candidates::Initiators => rule.winner(initiators.iter().filter_map(|&p| ids.get(p as usize).copied())),
            Candidates::MeshCorners => rule.winner(
                (0..topo.len()).filter(|&p| topo.ports(p).len() == 2).filter_map(|p| ids.get(p as usize).copied()),
            ),
            Candidates::Root | Candidates::Drawn | Candidates::Captor | Candidates::Survivor => None,
        }
    }
}

/// ⌈log2 n⌉ (0 for n ≤ 1).
pub fn ceil_log2(n: u64) -> u64 {
    if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() as u64 }
}

/// ⌊log3 n⌋ (0 for n ≤ 2).
pub fn floor_log3(mut n: u64) -> u64 {
    let mut k = 0;
    while n >= 3 {
        n /= 3;
        k += 1;
    }
    k
}

/// ⌊log2 n⌋ (0 for n ≤ 1).
pub fn floor_log2(n: u64) -> u64 {
    if n <= 1 { 0 } else { 63 - n.leading_zeros() as u64 }
}

/// Every ring: unidirectional, bidirectional oriented and unoriented.
pub const RINGS: &[TopologyKind] = &[TopologyKind::RingUni, TopologyKind::RingBi, TopologyKind::RingBiUnoriented];
/// Rings where every node's right is the same way round (the unidirectional algorithms of Santoro's ch. 3).
pub const ORIENTED_RINGS: &[TopologyKind] = &[TopologyKind::RingUni, TopologyKind::RingBi];
/// Bidirectional rings, oriented or not.
pub const BI_RINGS: &[TopologyKind] = &[TopologyKind::RingBi, TopologyKind::RingBiUnoriented];
/// Trees.
pub const TREES: &[TopologyKind] = &[TopologyKind::Tree];
/// Oriented tori (compass labels).
pub const TORI: &[TopologyKind] = &[TopologyKind::Torus];
/// Oriented hypercubes (dimension labels).
pub const HYPERCUBES: &[TopologyKind] = &[TopologyKind::Hypercube];
/// Complete networks with chordal labels.
pub const CHORDAL_COMPLETE: &[TopologyKind] = &[TopologyKind::CompleteChordal];

#[cfg(test)]
mod tests {
    use super::*;

    /// A bound reads as its figure, or "unbounded" for [`UNBOUNDED`] (never
    /// the sentinel); only Itai-Rodeh's entry is unbounded.
    #[test]
    fn unbounded_reads_as_a_word() {
        assert_eq!((bound_text(44), bound_text(UNBOUNDED)), ("44".to_string(), "unbounded".to_string()));
        assert_eq!((finite_bound(44), finite_bound(UNBOUNDED)), (Some(44), None));
        let unbounded: Vec<_> =
            crate::algo::catalogue::CATALOGUE.iter().filter(|s| s.unbounded()).map(|s| s.name).collect();
        assert_eq!(unbounded, ["itai-rodeh"]);
    }

    /// Permutations come in lexicographic order of positions, each exactly
    /// once; ring arrangements are those with id 1 first, in the same order.
    #[test]
    fn arrangements_in_lexicographic_order() {
        assert_eq!(permutations(&[]), vec![Vec::<u64>::new()]);
        assert_eq!(
            permutations(&[1, 2, 3]),
            vec![vec![1, 2, 3], vec![1, 3, 2], vec![2, 1, 3], vec![2, 3, 1], vec![3, 1, 2], vec![3, 2, 1]]
        );
        assert_eq!(permutations(&[7, 4]), vec![vec![7, 4], vec![4, 7]], "orders of positions, not of values");
        assert_eq!(
            ring_arrangements(4),
            vec![[1, 2, 3, 4], [1, 2, 4, 3], [1, 3, 2, 4], [1, 3, 4, 2], [1, 4, 2, 3], [1, 4, 3, 2]]
        );
        assert_eq!(ring_arrangements(1), vec![vec![1]]);
        let all = permutations(&[1, 2, 3, 4, 5]);
        let mut unique = all.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!((all.len(), unique.len()), (120, 120));
        assert_eq!(ring_arrangements(6).len(), 120);
    }
}
