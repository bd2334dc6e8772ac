//! # Echo with extinction (Chang 1982)
//!
//! * Source: E. J. H. Chang, "Echo algorithms: depth parallel operations on
//!   general graphs", IEEE Trans. Software Eng. SE-8(4), 1982; G. Tel,
//!   *Introduction to Distributed Algorithms*, §7.3.1 "Extinction" (Tel's
//!   election by extinction applied to the echo algorithm).
//! * Network: any connected graph, bidirectional links, no FIFO, no sense of
//!   direction; a node knows only its degree (its number of ports), not n,
//!   the diameter or its neighbours' ids.
//! * Winner: the best *initiator* (maximum, or minimum when mirrored);
//!   nodes that do not wake spontaneously never start a wave.
//! * Messages: at most 2m per wave (m edges) and at most k waves (k
//!   initiators), plus n − 1 notifications: 2·m·k + n − 1. With one
//!   initiator exactly 2m + n − 1 on every schedule.
//! * Time: with unit delays and all initiators starting at 0, every node
//!   decides by 3D + 2 (D the diameter): nothing slows the best wave, so a
//!   node at distance d joins it at time d (a BFS tree), has every
//!   non-child's token by d + 2, echoes by D + 2 + (D − d), and the root
//!   completes by 2D + 2; the notification takes D more.
//!
//! Every initiator starts an echo wave (PIF) tagged with its id: a token
//! (`Election { id, stage: 0, hops: 0 }`) to every neighbour. A node keeps
//! the best wave it has seen (`caw`, Tel's "currently active wave"): a token
//! of a better wave makes it join that wave, with the sender as its parent,
//! and forward the token to every other neighbour; tokens and echoes of
//! worse waves are dropped, so those waves never complete (extinction). A
//! node that has heard one message of its wave from every port (the token
//! from its parent, and from each other neighbour either that neighbour's
//! token or its `Echo`) sends `Echo` to its parent; neighbours that echoed
//! are its children. The wave of the best initiator is never dropped, so it
//! completes at its initiator, which becomes leader and sends `Notify` down
//! the spanning tree the wave built (children only: n − 1 messages).
//!
//! Why 2m per wave: a node joins a wave at most once (its `caw` only
//! improves) and then sends at most one message per port in that wave:
//! tokens on all ports but its parent's and one echo to its parent (an
//! initiator: tokens on all ports). Summed over nodes that is at most
//! Σ deg = 2m. Every wave is an initiator's, so there are at most k.
//!
//! No FIFO is needed: a neighbour sends a node exactly one message per wave
//! (it joins a wave once), an echo of wave w can only come from a child that
//! joined w through this node, and a notification is sent only after the
//! node's echo (the whole subtree had finished), so no message overtaking
//! another can be misread.
//!
//! Only the initiators' ids can win. Under the simulator's staggered
//! schedules a message may reach a designated initiator before its start;
//! that node is then no initiator (Santoro's and Tel's model; a start of a
//! node already awake is ignored), and the simulator expects the best of the
//! initiators that did wake by themselves. Live, the runtime holds such
//! messages until Start, so every designated initiator competes.

use super::oneshot::Ending;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision};
use super::{AlgoError, Algorithm, Decision, Input, Msg, NodeContext, Outbox, Port, Role, Rule, TimerId};
use crate::machine;
use crate::topology::TopologyKind;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "echo-extinction",
    title: "Echo with extinction (Chang 1982)",
    source: "E. J. H. Chang, Echo algorithms: depth parallel operations on general graphs, IEEE Trans. Software \
             Eng. SE-8(4), 1982; G. Tel, Introduction to Distributed Algorithms, Cambridge University Press 2000, \
             7.3.1 (extinction)",
    description: "Each initiator starts an echo wave tagged with its id; a node joins the best wave it \
                  has seen (worse waves die), forwards it to its other neighbours and echoes to its \
                  parent once every neighbour answered; only the best initiator's wave completes, and \
                  its initiator leads and notifies down the wave's spanning tree.",
    topologies: &[
        TopologyKind::Graph,
        TopologyKind::Tree,
        TopologyKind::Mesh,
        TopologyKind::Complete,
        TopologyKind::RingBi,
        TopologyKind::RingBiUnoriented,
        TopologyKind::Torus,
        TopologyKind::Hypercube,
    ],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::Initiators,
    bound_formula: "2mk + n - 1 (m = links of the overlay)",
    bound: &|n, k| 2 * k * n.max(n * n.saturating_sub(1) / 2) + n.saturating_sub(1),
    timer_events: |_| 0,
    heap_bytes_per_position: 587,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(EchoExtinction::new),
    extras: Extras { bound_on: Some(|n, m, k| 2 * m * k + n.saturating_sub(1)), ..Extras::NONE },
};

/// What a node has heard on one port in its current wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Heard {
    Nothing,
    /// The neighbour's token: it is in the wave but not this node's child.
    Token,
    /// The neighbour's echo: it joined the wave through this node (a child).
    Echo,
}

/// One node of echo with extinction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EchoExtinction {
    id: u64,
    rule: Rule,
    /// Started its own wave (a start while asleep).
    initiator: bool,
    /// The best wave seen, i.e. the wave this node is in (`None`: asleep).
    wave: Option<u64>,
    /// Port of the parent in `wave`; `None` in its own wave.
    parent: Option<Port>,
    /// Per port, what arrived in `wave`.
    heard: Vec<Heard>,
    heard_count: u32,
    /// Sent its echo for `wave` (waiting for the notification).
    echoed: bool,
    end: Ending,
}

impl EchoExtinction {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        EchoExtinction {
            id: c.id,
            rule: c.rule,
            initiator: false,
            wave: None,
            parent: None,
            heard: vec![Heard::Nothing; c.ports as usize],
            heard_count: 0,
            echoed: false,
            end: Ending::default(),
        }
    }

    fn degree(&self) -> u32 {
        self.heard.len() as u32
    }

    /// Is `w` better than the current wave (or is the node asleep)?
    fn better(&self, w: u64) -> bool {
        self.wave.is_none_or(|cur| self.rule.beats(w, cur))
    }

    /// Join wave `w` (from `parent`, or as its initiator) and send its token on every other port.
    fn join(&mut self, w: u64, parent: Option<Port>, out: &mut Outbox) {
        self.wave = Some(w);
        self.parent = parent;
        self.heard.fill(Heard::Nothing);
        self.heard_count = 0;
        self.echoed = false;
        for p in 0..self.degree() {
            if Some(p) != parent {
                out.send(p, Msg::Election { id: w, stage: 0, hops: 0 });
            }
        }
        if let Some(p) = parent {
            self.hear(p, Heard::Token, out);
        } else {
            self.maybe_complete(out);
        }
    }

    /// Record one message of the current wave on `port`.
    fn hear(&mut self, port: Port, what: Heard, out: &mut Outbox) {
        self.heard[port as usize] = what;
        self.heard_count += 1;
        self.maybe_complete(out);
    }

    /// Once every port has answered: echo to the parent, or win.
    fn maybe_complete(&mut self, out: &mut Outbox) {
        let (Some(w), false) = (self.wave, self.echoed) else { return };
        if self.heard_count < self.degree() || self.end.decided() {
            return;
        }
        match self.parent {
            Some(parent) => {
                out.send(parent, Msg::Echo { id: w });
                self.echoed = true;
            }
            None => self.decide(w, out),
        }
    }

    /// Decide for `leader` and notify the children.
    fn decide(&mut self, leader: u64, out: &mut Outbox) {
        self.end.decide_for(self.id, leader, out);
        for (p, h) in self.heard.iter().enumerate() {
            if *h == Heard::Echo {
                out.send(p as Port, Msg::Notify { leader });
            }
        }
    }

    fn invalid(&self, port: Port, msg: Msg) -> AlgoError {
        AlgoError::Invalid(format!(
            "{msg:?} on port {port} in wave {:?} (parent {:?}, echoed {}, decided {})",
            self.wave,
            self.parent,
            self.echoed,
            self.end.decided()
        ))
    }
}

impl EchoExtinction {
    fn start(&mut self, out: &mut Outbox) {
        // A node a message reached first is not an initiator.
        if self.wave.is_none() {
            self.initiator = true;
            self.join(self.id, None, out);
        }
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        if port >= self.degree() {
            return Err(AlgoError::BadPort { port });
        }
        match msg {
            Msg::Election { id: w, stage: 0, hops: 0 } => {
                if w == self.id && !self.initiator {
                    // Only this node can start a wave with its id.
                    return Err(self.invalid(port, msg));
                }
                if self.better(w) {
                    if self.end.decided() {
                        // The winner's wave was the best: no better one exists.
                        return Err(self.invalid(port, msg));
                    }
                    self.join(w, Some(port), out);
                } else if self.wave == Some(w) {
                    if self.heard[port as usize] != Heard::Nothing {
                        return Err(self.invalid(port, msg));
                    }
                    self.hear(port, Heard::Token, out);
                }
                // A worse wave dies here.
            }
            Msg::Echo { id: w } => {
                if self.better(w) {
                    // A child joins a wave through this node: this node joined it first.
                    return Err(self.invalid(port, msg));
                }
                if self.wave == Some(w) {
                    if self.heard[port as usize] != Heard::Nothing || Some(port) == self.parent {
                        return Err(self.invalid(port, msg));
                    }
                    self.hear(port, Heard::Echo, out);
                }
                // An echo of an abandoned wave: dropped.
            }
            Msg::Notify { leader } => {
                if !self.echoed || self.end.decided() || self.wave != Some(leader) || self.parent != Some(port) {
                    return Err(self.invalid(port, msg));
                }
                self.decide(leader, out);
            }
            Msg::Election { .. } => return Err(self.invalid(port, msg)),
            _ => return Err(AlgoError::UnexpectedKind { algorithm: "echo-extinction", kind: msg.kind().name() }),
        }
        Ok(())
    }
}

impl Algorithm for EchoExtinction {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.start(out),
            Input::Message { port, msg } => return self.receive(port, msg, out),
            Input::Timer(_)
            | Input::Suspect { .. }
            | Input::Heartbeat { .. }
            | Input::Leave { .. }
            | Input::StoreReply(_)
            | Input::Restore(_) => {}
        }
        Ok(())
    }

    fn state(&self) -> &'static str {
        match (self.wave, self.echoed, self.end.decision()) {
            (_, _, Some(Decision { role: Role::Leader, .. })) => "leader",
            (_, _, Some(_)) => "follower",
            (None, _, None) => "asleep",
            (Some(_), false, None) => "active",
            (Some(_), true, None) => "echoed",
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::Feed;
    use crate::algo::catalogue;
    use crate::algo::harness::{Probe, decide, send};
    use crate::sim::{self, SimConfig};
    use crate::topology::{Topology, TopologyKind};

    fn token(id: u64) -> Msg {
        Msg::Election { id, stage: 0, hops: 0 }
    }

    /// The context of every node built in these tests.
    fn ctx(id: u64, ports: u32, rule: Rule) -> NodeContext<'static> {
        NodeContext { id, rule, n: 8, coin: 0, ports, ..Default::default() }
    }

    fn node(id: u64, ports: u32, rule: Rule) -> EchoExtinction {
        EchoExtinction::new(&ctx(id, ports, rule))
    }

    /// An initiator sends its wave's token on every port and waits.
    #[test]
    fn initiator_floods_its_token() {
        Probe::new(node(7, 3, Rule::Max))
            .start(&[send(0, token(7)), send(1, token(7)), send(2, token(7))])
            .in_state("active");
    }

    /// A node woken by a token joins that wave with the sender as parent and forwards it to every other
    /// port; a leaf has no other port and echoes at once.
    #[test]
    fn woken_node_forwards_and_a_leaf_echoes() {
        Probe::new(node(1, 3, Rule::Max)).on(1, token(9), &[send(0, token(9)), send(2, token(9))]);
        Probe::new(node(2, 1, Rule::Max)).on(0, token(9), &[send(0, Msg::Echo { id: 9 })]).in_state("echoed");
    }

    /// A node echoes to its parent only once every port has answered, echoes and tokens alike, in any
    /// order (no FIFO needed); the notification then goes to the ports that echoed (its children) only.
    #[test]
    fn echo_after_every_port_then_notify_children_only() {
        let (echo, notify) = (Msg::Echo { id: 9 }, Msg::Notify { leader: 9 });
        Probe::new(node(1, 4, Rule::Max))
            .on(2, token(9), &[send(0, token(9)), send(1, token(9)), send(3, token(9))])
            .on(3, echo, &[])
            .on(0, token(9), &[]) // port 1 has not answered
            .on(1, echo, &[send(2, echo)])
            .on(2, notify, &[decide(Role::Follower, 9), send(1, notify), send(3, notify)])
            .in_state("follower");
    }

    /// The initiator whose wave every port answers leads and notifies only its children (not the
    /// neighbours whose token it got).
    #[test]
    fn completed_wave_elects_its_initiator() {
        let (echo, notify) = (Msg::Echo { id: 9 }, Msg::Notify { leader: 9 });
        Probe::new(node(9, 3, Rule::Max))
            .start(&[send(0, token(9)), send(1, token(9)), send(2, token(9))])
            .on(0, echo, &[])
            .on(1, token(9), &[])
            .on(2, echo, &[decide(Role::Leader, 9), send(0, notify), send(2, notify)])
            .in_state("leader");
    }

    /// Extinction: a better token makes an initiator abandon its own wave (forwarding the better one on
    /// every other port); tokens and echoes of the abandoned or any worse wave are then dropped silently.
    #[test]
    fn better_wave_extinguishes_worse_ones() {
        Probe::new(node(3, 2, Rule::Max))
            .start(&[send(0, token(3)), send(1, token(3))])
            .on(0, token(8), &[send(1, token(8))])
            .on(1, Msg::Echo { id: 3 }, &[])
            .on(1, token(5), &[])
            .on(0, token(3), &[])
            .on(1, token(8), &[send(0, Msg::Echo { id: 8 })]);
    }

    /// Under the min rule the smaller wave wins: a node in wave 4 joins wave 2 and drops wave 6.
    #[test]
    fn min_rule_prefers_smaller_waves() {
        Probe::new(node(5, 2, Rule::Min)).on(0, token(4), &[send(1, token(4))]).on(1, token(6), &[]).on(
            1,
            token(2),
            &[send(0, token(2))],
        );
    }

    /// A node already awake ignores a late start: a message reached it first, so it is no initiator.
    #[test]
    fn start_after_a_message_is_ignored() {
        Probe::new(node(9, 2, Rule::Max)).on(0, token(4), &[send(1, token(4))]).start(&[]);
        // Only an initiator may have tokens of its own id.
        Probe::new(node(9, 2, Rule::Max)).refuses(0, token(9));
    }

    /// Messages that no run can produce are refused with an error, never a panic: a second message of a
    /// wave on one port, an echo of a wave never joined or from the parent, a notification that is not
    /// from the parent after the echo, a token with stage or hops set, a bad port, a foreign kind.
    #[test]
    fn impossible_messages_are_errors() {
        let mut out = Outbox::default();
        let mut a = node(1, 3, Rule::Max);
        a.on_message(0, token(9), &mut out).unwrap();
        assert!(a.on_message(0, token(9), &mut out).is_err(), "second token from the parent");
        assert!(a.on_message(0, Msg::Echo { id: 9 }, &mut out).is_err(), "echo from the parent");
        assert!(a.on_message(1, Msg::Echo { id: 12 }, &mut out).is_err(), "echo of a wave never joined");
        assert!(a.on_message(0, Msg::Notify { leader: 9 }, &mut out).is_err(), "notify before the echo");
        a.on_message(1, Msg::Echo { id: 9 }, &mut out).unwrap();
        assert!(a.on_message(1, token(9), &mut out).is_err(), "token after the echo on one port");
        a.on_message(2, token(9), &mut out).unwrap();
        assert!(a.on_message(1, Msg::Notify { leader: 9 }, &mut out).is_err(), "notify from a child");
        assert!(a.on_message(0, Msg::Notify { leader: 8 }, &mut out).is_err(), "notify of another wave");
        assert!(a.on_message(0, Msg::Election { id: 10, stage: 1, hops: 0 }, &mut out).is_err());
        assert!(a.on_message(3, token(10), &mut out).is_err());
        assert!(a.on_message(0, Msg::Wakeup, &mut out).is_err());
        a.on_message(0, Msg::Notify { leader: 9 }, &mut out).unwrap();
        assert!(a.on_message(1, token(10), &mut out).is_err(), "a better wave after the end");
        assert!(a.on_message(0, Msg::Notify { leader: 9 }, &mut out).is_err(), "second notify");
        a.on_message(1, token(4), &mut out).unwrap();
    }

    /// With one initiator the count is exactly 2m + n - 1 on every schedule: the wave crosses each edge
    /// twice and the notification each tree edge once (triangle with a tail: m = 4, n = 4).
    #[test]
    fn one_initiator_costs_exactly_2m_plus_n_minus_1() {
        let spec = catalogue::find("echo-extinction").unwrap();
        let g = Topology::graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)]).unwrap();
        assert_eq!(g.kind(), TopologyKind::Graph);
        for start in 0..4 {
            for cfg in [
                SimConfig { seed: start as u64, ..SimConfig::default() },
                SimConfig { seed: 5, fifo: false, max_delay: 64, ..SimConfig::default() },
                SimConfig { unit_delay: true, ..SimConfig::default() },
            ] {
                let r = sim::run(spec, &g, &[4, 1, 3, 2], &[start], Rule::Max, &cfg);
                assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
                assert_eq!((r.counters.election_messages, r.counters.notification_messages), (8, 3));
            }
        }
    }

    /// Measurement, not a check of exact values (run with `--ignored --nocapture`): prints the
    /// docs/algorithms.md table of message counts on each topology against 2mk + n − 1 (the graph's
    /// actual m) and the catalogue bound, random ids and initiators, FIFO random delays, seed 1; asserts
    /// only the verdict and both bounds.
    #[test]
    #[ignore = "measurement for the docs; slow in debug builds"]
    fn measure_topologies() {
        use crate::topology::{IdOrder, pick_initiators};
        let spec = catalogue::find("echo-extinction").unwrap();
        println!(
            "| topology | n | m | k | election | notification | total | 2mk + n − 1 | ratio | bound | ratio | ideal time |"
        );
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for kind in
            [TopologyKind::Graph, TopologyKind::Tree, TopologyKind::Mesh, TopologyKind::RingBi, TopologyKind::Complete]
        {
            for n in [16u32, 64, 256, 1024] {
                if kind == TopologyKind::Complete && n > 256 {
                    continue;
                }
                let topo = Topology::build(kind, n, 1).unwrap();
                let m = topo.edges().len() as u64;
                for k in [1, 8, n] {
                    let ids = IdOrder::Random(1).arrange(n).unwrap();
                    let init = pick_initiators(n, k, 1);
                    let r =
                        sim::run(spec, &topo, &ids, &init, Rule::Max, &SimConfig { seed: 1, ..SimConfig::default() });
                    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
                    let c = r.counters;
                    let tight = 2 * m * k as u64 + n as u64 - 1;
                    assert!(c.messages <= tight && c.messages <= r.bound);
                    println!(
                        "| {} | {n} | {m} | {k} | {} | {} | {} | {tight} | {:.3} | {} | {:.4} | {} |",
                        kind.name(),
                        c.election_messages,
                        c.notification_messages,
                        c.messages,
                        c.messages as f64 / tight as f64,
                        r.bound,
                        c.messages as f64 / r.bound as f64,
                        r.ideal_time
                    );
                }
            }
        }
    }
}
