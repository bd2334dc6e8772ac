//! A schedule shown: its messages as the arrows of a space-time diagram
//! ([`ElectionModel::arrows`]), its steps and where each node ends, in
//! words ([`ElectionModel::words`], [`ElectionModel::outcome`]), and each
//! node's state ([`ElectionModel::node_states`], [`ElectionModel::fates`]).

use ringleader_core::algo::detector::is_reserved;
use ringleader_core::algo::{Msg, Port, Role};
use ringleader_core::diagram::{Arrow, Mark};
use ringleader_core::faults::Outage;
use ringleader_core::schedule::Step;

use super::ElectionModel;
use super::state::System;

impl ElectionModel {
    /// The messages of the schedule `steps`, as arrows of a space-time
    /// diagram ([`ringleader_core::diagram`]) whose time is the step number
    /// (step 1 is the first): each from the step that sent it to the step
    /// that delivered it, or not received (a lost step, a crash of its
    /// receiver, a partition, or sent to a crashed node or across a
    /// partition), or still in flight at the end (`in_flight`). With them
    /// come the marks of the events at nodes (starts, timeouts other than
    /// the detector's clock, losses, partitions), each crash until its
    /// recovery, and how many messages were still in flight.
    pub fn arrows(&self, steps: &[Step]) -> (Vec<Arrow>, Vec<Mark>, Vec<Outage>, usize) {
        let t = &self.election.topology;
        let mut s = self.initial();
        let mut arrows = Vec::new();
        let mut marks = Vec::new();
        let mut outages: Vec<Outage> = Vec::new();
        // In flight per link: (message, step that sent it), oldest first.
        let links = self.link_base.last().map_or(0, |&b| b + t.ports(t.len() - 1).len());
        let mut flying: Vec<Vec<(Msg, u64)>> = vec![Vec::new(); links];
        let mut log = Vec::new();
        let to_of = |from: u32, port: Port| t.ports(from)[port as usize].peer;
        for (i, &step) in steps.iter().enumerate() {
            let at = i as u64 + 1;
            let mut land = |flying: &mut Vec<Vec<(Msg, u64)>>, from: u32, port: Port, msg: Msg, received| {
                let link = &mut flying[self.link_base[from as usize] + port as usize];
                if let Some(k) = link.iter().position(|&(m, _)| m == msg) {
                    let (_, sent) = link.remove(k);
                    arrows.push(Arrow {
                        from,
                        to: to_of(from, port),
                        kind: msg.kind(),
                        sent,
                        received,
                        msg: Some(msg),
                        slow: false,
                        in_flight: false,
                    });
                }
            };
            let mut mark = |node: u32, label: String| marks.push(Mark { node, at, label });
            match step {
                Step::Start(p) => mark(p, "start".into()),
                Step::Fire { node, timer } if !is_reserved(timer) => mark(node, format!("timer {timer}")),
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
                _ => {}
            }
            match step {
                Step::Deliver { from, port, msg } => land(&mut flying, from, port, msg, Some(at)),
                Step::Lose { from, port, msg } => land(&mut flying, from, port, msg, None),
                Step::Duplicate { from, port, msg } => {
                    flying[self.link_base[from as usize] + port as usize].push((msg, at));
                }
                _ => {}
            }
            log.clear();
            let Some(next) = self.next_state_logged(&s, step, Some(&mut log)) else { break };
            for sent in &log {
                if sent.lost {
                    let to = to_of(sent.from, sent.port);
                    let (from, kind, msg) = (sent.from, sent.msg.kind(), Some(sent.msg));
                    arrows.push(Arrow { from, to, kind, sent: at, received: None, msg, slow: false, in_flight: false });
                } else {
                    flying[self.link_base[sent.from as usize] + sent.port as usize].push((sent.msg, at));
                }
            }
            // What a crash or a partition took off the links is lost.
            for (l, link) in flying.iter_mut().enumerate() {
                let mut left: Vec<Msg> = Self::on_link(&next, l).iter().map(|f| f.msg).collect();
                let from = self.link_base.partition_point(|&b| b <= l) as u32 - 1;
                let port = (l - self.link_base[from as usize]) as Port;
                link.retain(|&(m, sent)| match left.iter().position(|&x| x == m) {
                    Some(k) => {
                        left.swap_remove(k);
                        true
                    }
                    None => {
                        arrows.push(Arrow {
                            from,
                            to: to_of(from, port),
                            kind: m.kind(),
                            sent,
                            received: None,
                            msg: Some(m),
                            slow: false,
                            in_flight: false,
                        });
                        false
                    }
                });
            }
            s = next;
        }
        // What is still on its way at the end is drawn to the chart's edge.
        let mut still = 0;
        for (l, link) in flying.iter().enumerate() {
            let from = self.link_base.partition_point(|&b| b <= l) as u32 - 1;
            let to = to_of(from, (l - self.link_base[from as usize]) as Port);
            for &(m, sent) in link {
                still += 1;
                let kind = m.kind();
                arrows.push(Arrow { from, to, kind, sent, received: None, msg: Some(m), slow: false, in_flight: true });
            }
        }
        (arrows, marks, outages, still)
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
    /// fires").
    pub fn words(&self, steps: &[Step]) -> Vec<String> {
        let e = &self.election;
        steps
            .iter()
            .map(|&step| match step {
                Step::Fire { node, timer } if !is_reserved(timer) => {
                    let name = self.fresh.get(node as usize).and_then(|a| a.timer_name(timer));
                    match (name, e.ids.get(node as usize)) {
                        (Some(name), Some(id)) => format!("id {id}'s {name} timer fires"),
                        _ => step.describe(&e.ids, &e.topology),
                    }
                }
                _ => step.describe(&e.ids, &e.topology),
            })
            .collect()
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
