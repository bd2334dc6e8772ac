//! The partial-order reductions and the subsumption of states: which quiet
//! heartbeats a move may take in first ([`Quiet`]), which faults may follow a
//! step at their earliest, the one node whose steps alone follow an instant
//! of punctual timers, and the rank by which one state explored stands for
//! another (see [`ElectionModel`], "Quiet heartbeats" and the sections after
//! it, and "The clock" in docs/checking.md).

use ringleader_core::algo::detector::HEARTBEAT_TIMER;
use ringleader_core::algo::{Msg, Port};
use ringleader_core::schedule::{Step, StoreItem};
#[cfg(doc)]
use ringleader_core::shell::Shell;

use super::ElectionModel;
use super::state::{Node, Sent, System};

/// Copies of one quiet heartbeat on one link (see [`ElectionModel`], "Quiet
/// heartbeats").
#[derive(Clone, Copy, Debug)]
pub(super) struct Quiet {
    pub(super) from: u32,
    pub(super) port: Port,
    pub(super) to: u32,
    pub(super) msg: Msg,
    pub(super) copies: u32,
    pub(super) old: u32,
}

impl ElectionModel {
    /// Are partitioned states told apart without the ticks they have left to
    /// heal, and ranked by them ([`Self::rank`])? Not when a crashed node may
    /// recover: a tick cut short by the bound ends at an instant no other
    /// tick reaches, at which a node may recover out of phase.
    pub fn ranks_partitions(&self) -> bool {
        !self.election.faults.recover
    }

    /// How much `s` asks of what follows it, among the states alike but for
    /// [`System::timing`]: once explored with a rank at least as high, a
    /// state need not be explored again (see "The clock" in
    /// docs/checking.md). Without a partition, its clock: a later one leaves
    /// less time to agree on a leader. In a partition (the clock stands at 0
    /// throughout), the ticks left until it must heal
    /// ([`Self::ranks_partitions`]): with more, every schedule of the state
    /// with fewer is matched by one that heals no later (a tick cut short by
    /// the bound can be followed only by the heal, which the other may take
    /// sooner).
    pub fn rank(&self, s: &System) -> u32 {
        if s.cut != 0 && self.ranks_partitions() { s.heal_left } else { s.clock() }
    }

    /// Do partitions strike at their latest and heal at their earliest (see
    /// "Partitions at their latest")? With the reduction on, and no
    /// recovery in the budget (for the reason in [`Self::ranks_partitions`]).
    pub(super) fn reduce_partitions(&self) -> bool {
        self.reduce && !self.election.faults.recover
    }

    /// The quiet heartbeats in flight in `s`, per link and message, in link
    /// order (none when the reduction is off, or when too many pile up to
    /// encode, which leaves every delivery a step of its own).
    pub(super) fn quiet(&self, s: &System) -> Vec<Quiet> {
        let mut quiet = Vec::new();
        if !self.reduce || s.error.is_some() {
            return quiet;
        }
        let t = &self.election.topology;
        for from in 0..t.len() {
            let base = self.link_base[from as usize];
            for (port, to) in t.ports(from).iter().enumerate() {
                let link = Self::on_link(s, base + port);
                let mut i = 0;
                // On a FIFO link only the copies at its head may arrive next.
                while i < link.len() && (i == 0 || !self.fifo) {
                    let msg = link[i].msg;
                    let same = link[i..].iter().take_while(|f| f.msg == msg).count();
                    if matches!(msg, Msg::Heartbeat { .. })
                        && !s.is_down(to.peer)
                        && self.only_refreshes(&s.nodes[to.peer as usize], to.remote_port, msg)
                    {
                        let old = link[i..i + same].iter().filter(|f| f.old).count() as u32;
                        let (port, copies) = (port as Port, same as u32);
                        quiet.push(Quiet { from, port, to: to.peer, msg, copies, old });
                    }
                    i += same;
                }
            }
        }
        if quiet.len() > 16 || quiet.iter().any(|q| q.copies > 3) {
            quiet.clear();
        }
        quiet
    }

    /// May a move of `step` take in the quiet heartbeat `q` first? A step
    /// of a node takes in those to it; a partition, those it would cut off;
    /// other steps none. ([`Self::moves`] and [`Self::expand`] both ask
    /// here, so a move replays as it was offered.)
    pub(super) fn in_scope(&self, step: Step, q: &Quiet) -> bool {
        match step {
            Step::Deliver { from, port, .. } => self.election.topology.ports(from)[port as usize].peer == q.to,
            Step::Fire { node, .. } | Step::Store { node, item: StoreItem::Answer(_) } => node == q.to,
            Step::Partition(side) => (side >> q.from & 1) != (side >> q.to & 1),
            _ => false,
        }
    }

    /// Of the quiet heartbeats in `step`'s scope ([`Self::in_scope`]), in
    /// scope order: the fewest and the most copies of each a move of `step`
    /// may take in first. Up to all of them before the receiver's clock
    /// ([`HEARTBEAT_TIMER`], the only reader of what they refresh) and before
    /// a partition; before any other step, none of those that stay quiet
    /// after it (they can wait for the next step that matters, see "Quiet
    /// heartbeats"), up to all of the others; on a FIFO link, all of those
    /// ahead of the message the step delivers (see "FIFO links").
    pub(super) fn choices(&self, s: &System, step: Step, quiet: &[Quiet]) -> Vec<(u32, u32)> {
        let scope = quiet.iter().filter(|q| self.in_scope(step, q));
        // Punctual timers: a node with a timer due takes in only what was
        // sent before the tick.
        let due = if self.election.punctual_timers { Self::due(s) } else { 0 };
        let cap = |q: &Quiet| if due >> q.to & 1 == 1 { q.old } else { q.copies };
        if matches!(step, Step::Fire { timer: HEARTBEAT_TIMER, .. } | Step::Partition(_)) {
            return scope.map(|q| (0, cap(q))).collect();
        }
        // The copies at the head of the step's own FIFO link, which arrive first.
        let ahead = |q: &Quiet| {
            self.fifo && matches!(step, Step::Deliver { from, port, .. } if (from, port) == (q.from, q.port))
        };
        let mut after = s.clone();
        let mut stepped = true;
        for q in quiet.iter().filter(|q| self.in_scope(step, q) && ahead(q)) {
            for _ in 0..q.copies {
                stepped &=
                    self.apply(&mut after, Step::Deliver { from: q.from, port: q.port, msg: q.msg }, None).is_some();
            }
        }
        stepped = stepped && self.apply(&mut after, step, None).is_some() && after.error.is_none();
        let t = &self.election.topology;
        scope
            .map(|q| {
                if ahead(q) {
                    // All of them, or no move (more than may arrive before a due timer).
                    return (q.copies, cap(q));
                }
                let port = t.ports(q.from)[q.port as usize].remote_port;
                let stays =
                    stepped && !after.is_down(q.to) && self.only_refreshes(&after.nodes[q.to as usize], port, q.msg);
                if stays { (0, 0) } else { (0, cap(q)) }
            })
            .collect()
    }

    /// The faults that may follow a step at their earliest (see "Faults at
    /// their earliest"), in a fixed order: the losses, then the crashes.
    /// `before` and `after` are the states around the step (its prelude
    /// included), `sent` what the step itself sent.
    pub(super) fn aftermath(
        &self,
        before: &System,
        step: Step,
        after: &System,
        sent: &[Sent],
    ) -> (Vec<Step>, Vec<Step>) {
        let (mut lose, mut crash) = (Vec::new(), Vec::new());
        if !self.reduce || after.error.is_some() || !after.unstarted.is_empty() {
            return (lose, crash);
        }
        let budget = self.election.faults;
        // The step that lets faults strike (the last start) may be followed by
        // any of them; a recovery, by any crash (one node is down at a time).
        let opened = !before.unstarted.is_empty();
        if after.used.losses < budget.losses {
            let mut add = |from: u32, port: Port, msg: Msg| {
                let l = Step::Lose { from, port, msg };
                if !lose.contains(&l) {
                    lose.push(l);
                }
            };
            if opened {
                for f in &after.links {
                    let from = self.sender(f.link);
                    add(from, f.link - self.link_base[from as usize] as u32, f.msg);
                }
            } else {
                sent.iter().filter(|s| !s.lost).for_each(|s| add(s.from, s.port, s.msg));
            }
        }
        if after.used.crashes < budget.crashes && after.down == 0 {
            if opened || before.down != 0 {
                crash.extend((0..self.election.topology.len()).map(Step::Crash));
            } else if let Some(p) = self.stepper(step) {
                crash.push(Step::Crash(p));
            }
        }
        (lose, crash)
    }

    /// Would `node` only refresh its detector on taking `msg` on `port`
    /// ([`Shell::only_refreshes`], which tries it on a copy of the node)?
    /// Remembered by the node's hash (a collision as unlikely as one of
    /// fingerprints), up to 65,536 answers at a time (a few MB): a fifth of a
    /// ZooKeeper-style check's time went to the copies.
    pub(super) fn only_refreshes(&self, node: &Node, port: Port, msg: Msg) -> bool {
        let key = (node.hash, port, msg);
        let mut memo = self.refreshes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&known) = memo.get(&key) {
            return known;
        }
        let answer = node.only_refreshes(port, msg);
        if memo.len() >= 1 << 16 {
            memo.clear();
        }
        memo.insert(key, answer);
        answer
    }

    /// The node whose steps alone may follow `s` (see "Punctual timers"), if
    /// any: with punctual timers, the one of least id with a timer due, when
    /// the reduction is on and no duplication or crash after a recovery is
    /// possible (a duplicate of a message the node is to take would need it
    /// still there; a crash after a recovery may strike the node before it
    /// fires).
    pub(super) fn punctual_first(&self, s: &System) -> Option<u32> {
        let (budget, used) = (self.election.faults, s.used);
        let reduce = self.reduce
            && self.election.punctual_timers
            && s.unstarted.is_empty()
            && s.error.is_none()
            && used.duplications >= budget.duplications
            && !(budget.recover && s.down != 0 && used.crashes < budget.crashes);
        let due = Self::due(s);
        // The smallest id first, not the first position: a renaming of the
        // positions (another arrangement of the ids) reduces alike.
        let ids = &self.election.ids;
        (0..ids.len() as u32).filter(|&p| reduce && due >> p & 1 == 1).min_by_key(|&p| ids[p as usize])
    }
}
