//! A schedule shown: its messages as the arrows of a space-time diagram
//! ([`ElectionModel::arrows`]), its steps and where each node ends, in
//! words ([`ElectionModel::words`], [`ElectionModel::outcome`]), and each
//! node's state ([`ElectionModel::node_states`], [`ElectionModel::fates`]).

use ringleader_core::algo::detector::is_reserved;
use ringleader_core::algo::{Msg, Port, Role};
use ringleader_core::diagram::{Arrow, Mark};
use ringleader_core::faults::Outage;
use ringleader_core::protocol::store::{MemStore, StoreOp};
use ringleader_core::schedule::{Step, StoreItem};

use super::ElectionModel;
use super::state::{Sent, System};

/// The messages on each link in the order they were sent, each with the
/// step that sent it, as a schedule is replayed: what the arrows and the
/// words of [`ElectionModel`] need and a state does not keep (a link that
/// may reorder holds its messages as a multiset).
struct Flying {
    /// Per link (`link_base[from] + port`): (message, step that sent it), oldest first.
    links: Vec<Vec<(Msg, u64)>>,
}

/// A message taken off its link by a step: who sent it, on which port, and when.
struct Landed {
    from: u32,
    port: Port,
    msg: Msg,
    sent: u64,
}

impl Flying {
    fn new(model: &ElectionModel) -> Flying {
        let t = &model.election.topology;
        let links = model.link_base.last().map_or(0, |&b| b + t.ports(t.len() - 1).len());
        Flying { links: vec![Vec::new(); links] }
    }

    /// The messages sent on the link of `from`'s `port` before `msg` and
    /// still in flight: what `msg` overtakes if it arrives now.
    fn overtaken(&self, model: &ElectionModel, from: u32, port: Port, msg: Msg) -> Vec<Msg> {
        let link = &self.links[model.link_base[from as usize] + port as usize];
        let k = link.iter().position(|&(m, _)| m == msg).unwrap_or(0);
        link[..k].iter().map(|&(m, _)| m).collect()
    }

    /// Take `msg` off the link of `from`'s `port` (delivered or lost).
    fn land(&mut self, model: &ElectionModel, from: u32, port: Port, msg: Msg) -> Option<Landed> {
        let link = &mut self.links[model.link_base[from as usize] + port as usize];
        let k = link.iter().position(|&(m, _)| m == msg)?;
        let (_, sent) = link.remove(k);
        Some(Landed { from, port, msg, sent })
    }

    /// What step `at` put on the links: its sends (those lost at once are
    /// returned, not kept) and a duplicate.
    fn put(&mut self, model: &ElectionModel, step: Step, log: &[Sent], at: u64) -> Vec<Sent> {
        if let Step::Duplicate { from, port, msg } = step {
            self.links[model.link_base[from as usize] + port as usize].push((msg, at));
        }
        let mut lost = Vec::new();
        for sent in log {
            if sent.lost {
                lost.push(*sent);
            } else {
                self.links[model.link_base[sent.from as usize] + sent.port as usize].push((sent.msg, at));
            }
        }
        lost
    }

    /// Drop what `next` no longer has on its links (a crash or a partition
    /// took it off), returning each with its sender, port and sending step.
    fn sweep(&mut self, model: &ElectionModel, next: &System) -> Vec<Landed> {
        let mut gone = Vec::new();
        for (l, link) in self.links.iter_mut().enumerate() {
            let mut left: Vec<Msg> = ElectionModel::on_link(next, l).iter().map(|f| f.msg).collect();
            let from = model.link_base.partition_point(|&b| b <= l) as u32 - 1;
            let port = (l - model.link_base[from as usize]) as Port;
            link.retain(|&(m, sent)| match left.iter().position(|&x| x == m) {
                Some(k) => {
                    left.swap_remove(k);
                    true
                }
                None => {
                    gone.push(Landed { from, port, msg: m, sent });
                    false
                }
            });
        }
        gone
    }
}

impl ElectionModel {
    /// The messages of the schedule `steps`, as arrows of a space-time
    /// diagram ([`ringleader_core::diagram`]) whose time is the step number
    /// (step 1 is the first): each from the step that sent it to the step
    /// that delivered it, or not received (a lost step, a crash of its
    /// receiver, a partition, or sent to a crashed node or across a
    /// partition), or still in flight at the end (`in_flight`). With them
    /// come the marks of the events at nodes (starts, timeouts other than
    /// the detector's clock, named as the steps name them, losses,
    /// partitions), each crash until its recovery, and how many messages
    /// were still in flight.
    pub fn arrows(&self, steps: &[Step]) -> (Vec<Arrow>, Vec<Mark>, Vec<Outage>, usize) {
        let t = &self.election.topology;
        let mut s = self.initial();
        let mut arrows = Vec::new();
        let mut marks = Vec::new();
        let mut outages: Vec<Outage> = Vec::new();
        let mut flying = Flying::new(self);
        let mut log = Vec::new();
        let to_of = |from: u32, port: Port| t.ports(from)[port as usize].peer;
        let arrow = |l: &Landed, received: Option<u64>, in_flight: bool| Arrow {
            from: l.from,
            to: to_of(l.from, l.port),
            kind: l.msg.kind(),
            sent: l.sent,
            received,
            msg: Some(l.msg),
            slow: false,
            in_flight,
        };
        for (i, &step) in steps.iter().enumerate() {
            let at = i as u64 + 1;
            let mut mark = |node: u32, label: String| marks.push(Mark { node, at, label });
            match step {
                Step::Start(p) => mark(p, "start".into()),
                Step::Fire { node, timer } if !is_reserved(timer) => mark(node, self.timer_words(node, timer)),
                Step::Crash(p) => outages.push(Outage { position: p, crashed: at, recovered: None }),
                Step::Recover(p) => {
                    if let Some(o) = outages.iter_mut().rev().find(|o| o.position == p && o.recovered.is_none()) {
                        o.recovered = Some(at);
                    }
                }
                Step::Lose { from, port, .. } => {
                    mark(from, format!("loses one to id {}", self.election.ids[to_of(from, port) as usize]))
                }
                Step::Partition(side) => {
                    (0..t.len()).filter(|p| side >> p & 1 == 1).for_each(|p| mark(p, "cut off".into()))
                }
                Step::Heal => (0..t.len()).for_each(|p| mark(p, "heal".into())),
                Step::Store { node, item: StoreItem::Op(StoreOp::Get { .. }) } => {
                    mark(node, "read at the store".into())
                }
                Step::Store { node, item: StoreItem::Op(StoreOp::Put { .. }) } => {
                    mark(node, "write at the store".into())
                }
                Step::StoreLost { node, item: StoreItem::Op(_) } => mark(node, "store operation lost".into()),
                Step::StoreLost { node, item: StoreItem::Answer(_) } => mark(node, "store answer lost".into()),
                _ => {}
            }
            match step {
                Step::Deliver { from, port, msg } => {
                    arrows.extend(flying.land(self, from, port, msg).map(|l| arrow(&l, Some(at), false)))
                }
                Step::Lose { from, port, msg } => {
                    arrows.extend(flying.land(self, from, port, msg).map(|l| arrow(&l, None, false)))
                }
                _ => {}
            }
            log.clear();
            let Some(next) = self.next_state_logged(&s, step, Some(&mut log)) else { break };
            for sent in flying.put(self, step, &log, at) {
                let landed = Landed { from: sent.from, port: sent.port, msg: sent.msg, sent: at };
                arrows.push(arrow(&landed, None, false));
            }
            // What a crash or a partition took off the links is lost.
            arrows.extend(flying.sweep(self, &next).iter().map(|l| arrow(l, None, false)));
            s = next;
        }
        // What is still on its way at the end is drawn to the chart's edge.
        let mut still = 0;
        for (l, link) in flying.links.iter().enumerate() {
            let from = self.link_base.partition_point(|&b| b <= l) as u32 - 1;
            let port = (l - self.link_base[from as usize]) as Port;
            for &(msg, sent) in link {
                still += 1;
                arrows.push(arrow(&Landed { from, port, msg, sent }, None, true));
            }
        }
        (arrows, marks, outages, still)
    }

    /// A timer of the node at `node` as the steps name it: "answer timer",
    /// or "timer 2" when its algorithm gives it no name.
    pub(super) fn timer_words(&self, node: u32, timer: ringleader_core::algo::TimerId) -> String {
        match self.fresh.get(node as usize).and_then(|a| a.timer_name(timer)) {
            Some(name) => format!("{name} timer"),
            None => format!("timer {timer}"),
        }
    }
}

impl ElectionModel {
    /// Each node's state along `steps` (time is the step number, 0 before
    /// the first): its algorithm's state, or `crashed` while down
    /// ([`ElectionModel::node_states`]); for the diagram's state bands and
    /// the page's topology.
    pub fn states(&self, steps: &[Step]) -> Vec<ringleader_core::diagram::StateChange<'static>> {
        let mut log = ringleader_core::report::StateLog::new(self.election.ids.len());
        let note = |log: &mut ringleader_core::report::StateLog, s: &System, time: u64| {
            for (p, state) in self.node_states(s).into_iter().enumerate() {
                log.note(p, time, state);
            }
        };
        let mut s = self.initial();
        note(&mut log, &s, 0);
        for (i, &step) in steps.iter().enumerate() {
            match self.next_state(&s, step) {
                Some(next) => s = next,
                None => break,
            }
            note(&mut log, &s, i as u64 + 1);
        }
        log.into_changes()
    }

    /// Each node's state in `s`, in position order: its algorithm's state
    /// name (`"candidate"`, `"leader"`, ...), or `crashed` while down.
    pub fn node_states(&self, s: &System) -> Vec<&'static str> {
        let states = s.nodes.iter().enumerate();
        states.map(|(p, node)| if s.is_down(p as u32) { "crashed" } else { node.algorithm().state() }).collect()
    }

    /// Each step of `steps` in words, naming nodes by their ids and the
    /// algorithm's timers by what they wait for ("id 1's answer timer
    /// fires"); a message that arrives before one sent earlier on its link
    /// names the one it overtook ("…, overtaking election (id 3), sent
    /// before it"), and a step after which a node's failure detector
    /// suspects a neighbour, or stops suspecting it, says so ("…; id 1
    /// now suspects id 3").
    pub fn words(&self, steps: &[Step]) -> Vec<String> {
        self.narrate(steps, &[]).0
    }

    /// The steps `next` that may follow the schedule `taken`, each in words
    /// as [`ElectionModel::words`] would say it after `taken` (the
    /// explorer's choices).
    pub fn next_words(&self, taken: &[Step], next: &[Step]) -> Vec<String> {
        self.narrate(taken, next).1
    }

    /// The words of the schedule `steps`, and of each step of `next` as an
    /// alternative after it.
    fn narrate(&self, steps: &[Step], next: &[Step]) -> (Vec<String>, Vec<String>) {
        let e = &self.election;
        let mut s = self.initial();
        let mut flying = Flying::new(self);
        let mut log = Vec::new();
        let mut words = Vec::with_capacity(steps.len());
        for (i, &step) in steps.iter().enumerate() {
            log.clear();
            let (text, after) = self.say(&s, &flying, step, &mut log);
            words.push(text);
            let Some(after) = after else {
                words.extend(steps[i + 1..].iter().map(|st| st.describe(&e.ids, &e.topology)));
                return (words, Vec::new());
            };
            if let Step::Deliver { from, port, msg } | Step::Lose { from, port, msg } = step {
                flying.land(self, from, port, msg);
            }
            flying.put(self, step, &log, i as u64 + 1);
            flying.sweep(self, &after);
            s = after;
        }
        let choices = next.iter().map(|&step| self.say(&s, &flying, step, &mut Vec::new()).0).collect();
        (words, choices)
    }

    /// `step` taken in `s`, in words, with the messages on the links in
    /// sending order (`flying`), and the state after it (`None`: it cannot
    /// be taken); what it sent is logged in `log`.
    fn say(&self, s: &System, flying: &Flying, step: Step, log: &mut Vec<Sent>) -> (String, Option<System>) {
        let e = &self.election;
        let mut text = match step {
            Step::Fire { node, timer } if !is_reserved(timer) && e.ids.get(node as usize).is_some() => {
                format!("id {}'s {} fires", e.ids[node as usize], self.timer_words(node, timer))
            }
            _ => step.describe(&e.ids, &e.topology),
        };
        if let Step::Deliver { from, port, msg } = step {
            let overtaken = flying.overtaken(self, from, port, msg);
            if !overtaken.is_empty() {
                let names: Vec<String> = overtaken.iter().map(Msg::in_words).collect();
                let them = if names.len() == 1 { "it" } else { "them" };
                text.push_str(&format!(", overtaking {}, sent before {them}", names.join(" and ")));
            }
        }
        let after = self.next_state_logged(s, step, Some(log));
        if let (Step::Store { item: StoreItem::Op(op), .. }, Some(after)) = (step, &after) {
            text.push_str(&Self::store_words(op, &s.store(), &after.store()));
        }
        for change in after.iter().flat_map(|after| self.suspicions(s, after)) {
            text.push_str("; ");
            text.push_str(&change);
        }
        (text, after)
    }

    /// What an operation `op` did to the store, from `before` to `after`, in
    /// words: ": it now holds id 2, revision 4" (a write that took), ": not
    /// written, it holds id 1, revision 3", ": it holds id 1, revision 3" (a
    /// read), ": it holds no record".
    fn store_words(op: StoreOp, before: &MemStore, after: &MemStore) -> String {
        let holds = match after.stored {
            Some(l) if l.record.holder == 0 => format!("released, revision {}", after.revision),
            Some(l) => format!("id {}, revision {}", l.record.holder, after.revision),
            None => "no record".to_string(),
        };
        match op {
            StoreOp::Put { .. } if after.revision != before.revision => format!(": it now holds {holds}"),
            StoreOp::Put { .. } => format!(": not written, it holds {holds}"),
            StoreOp::Get { .. } => format!(": it holds {holds}"),
        }
    }

    /// The suspicions that began or ended between `before` and `after`, in
    /// words: "id 1 now suspects id 3", "id 1 no longer suspects id 3".
    fn suspicions(&self, before: &System, after: &System) -> Vec<String> {
        let (ids, t) = (&self.election.ids, &self.election.topology);
        let mut changes = Vec::new();
        for p in 0..t.len() {
            if after.is_down(p) || before.is_down(p) {
                continue;
            }
            let (was, now) = (before.nodes[p as usize].algorithm(), after.nodes[p as usize].algorithm());
            for (port, link) in t.ports(p).iter().enumerate() {
                let port = port as Port;
                let (id, other) = (ids[p as usize], ids[link.peer as usize]);
                match (was.suspects(port), now.suspects(port)) {
                    (false, true) => changes.push(format!("id {id} now suspects id {other}")),
                    (true, false) => changes.push(format!("id {id} no longer suspects id {other}")),
                    _ => {}
                }
            }
        }
        changes
    }

    /// Where each node ends after `steps`, in words ([`ElectionModel::fates`]).
    pub fn outcome(&self, steps: &[Step]) -> Vec<String> {
        let mut s = self.initial();
        for &step in steps {
            match self.next_state(&s, step) {
                Some(next) => s = next,
                None => break,
            }
        }
        self.fates(&s)
    }

    /// What each node of `s` believes (kept leaderships) or decided, in
    /// words, in position order: "leads term 2", "follows 3 (term 1)",
    /// "no leader (term 2)", "leads", "follows 3", "undecided", "crashed".
    pub fn fates(&self, s: &System) -> Vec<String> {
        s.nodes
            .iter()
            .enumerate()
            .map(|(p, node)| match (node.leadership(), node.decision()) {
                _ if s.is_down(p as u32) => "crashed".into(),
                (Some(l), _) => match l.leader {
                    Some(id) if id == self.election.ids[p] => format!("leads term {}", l.term),
                    Some(id) => format!("follows {id} (term {})", l.term),
                    None => format!("no leader (term {})", l.term),
                },
                (None, Some(d)) if d.role == Role::Leader => "leads".into(),
                (None, Some(d)) => format!("follows {}", d.leader),
                (None, None) => "undecided".into(),
            })
            .collect()
    }
}
