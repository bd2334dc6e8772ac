//! # AsFar (Chang-Roberts 1979)
//!
//! * Source: E. Chang, R. Roberts, "An improved algorithm for decentralized
//!   extrema-finding in circular configurations of processes" (1979);
//!   Santoro ch. 3, "AsFar (as it can)".
//! * Network: ring; sends to the right only, so it runs on unidirectional
//!   rings and (using its local right) on any bidirectional ring; no FIFO.
//! * Winner: the maximum (Chang-Roberts), or the minimum when mirrored.
//! * Messages: worst n(n+1)/2 election + n notification (ids descending in
//!   the sending direction for max), best 2n-1 + n, average n·H_n + n.
//!
//! An awake node remembers the best id it has seen; it forwards an arriving
//! id only if that id beats everything it has seen, so each id travels as
//! far as it can. The id that comes back to its owner wins; the winner sends
//! a notification round the ring. A sleeping node woken by a message sends
//! its own id first, unless the arriving id already beats it (Santoro's
//! "avoided if" rule).

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;

use super::oneshot::{AwakeStatus, Ending, OneShotNode, Wake};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, Provision, RINGS, ascending, descending, mirror,
};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "as-far",
    title: "AsFar (Chang-Roberts)",
    source: "E. Chang, R. Roberts, An improved algorithm for decentralized extrema-finding in circular \
             configurations of processes, CACM 22(5), 1979; N. Santoro, Design and Analysis of Distributed \
             Algorithms, Wiley 2007, ch. 3 (AsFar)",
    description: "Each id travels right until it meets a better id; the id that returns to its \
                  owner wins, and the winner's notification goes round once.",
    topologies: RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n(n+1)/2 + n",
    bound: &|n, _| n * (n + 1) / 2 + n,
    timer_events: |_| 0,
    heap_bytes_per_position: 308,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(AsFar::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "ids decreasing in the sending direction (DESCENDING for max): id of rank r crosses n - r + 1 links",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids increasing in the sending direction (ASCENDING for max): every id but the winner stops after one link",
            ids: |n, r| mirror(ascending(n), n, r),
        }),
        ..Extras::NONE
    },
};

/// Which algorithm an [`AsFarNode`] runs: AsFar ([`Right`]), or ProbAsFar,
/// whose own id goes out on the port its random bit picks
/// ([`super::prob_as_far`] declares its marker, so that this file names
/// nothing of that one's).
pub trait AsFarVariant: Clone + fmt::Debug + PartialEq + Eq + Hash + Send + Sync + 'static {
    /// The algorithm's catalogue name, in the errors it reports.
    const NAME: &'static str;
}

/// AsFar: its own id goes out to the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Right;

impl AsFarVariant for Right {
    const NAME: &'static str = SPEC.name;
}

/// One node of AsFar, or of ProbAsFar (see [`AsFarVariant`]): the same
/// rules, only the port its own id goes out on differs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AsFarNode<V: AsFarVariant> {
    id: u64,
    rule: Rule,
    state: AwakeStatus,
    /// The port its own id goes out on.
    dir: Port,
    best: u64,
    end: Ending,
    variant: PhantomData<V>,
}

/// One node of AsFar.
pub type AsFar = AsFarNode<Right>;

impl AsFar {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        AsFarNode::sending(c, RIGHT)
    }
}

impl<V: AsFarVariant> AsFarNode<V> {
    /// A sleeping node whose own id will go out on `dir`.
    pub(super) fn sending(c: &NodeContext, dir: Port) -> Self {
        AsFarNode {
            id: c.id,
            rule: c.rule,
            state: AwakeStatus::Asleep,
            dir,
            best: c.id,
            end: Ending::default(),
            variant: PhantomData,
        }
    }
}

impl<V: AsFarVariant> OneShotNode for AsFarNode<V> {
    const NAME: &'static str = V::NAME;
    const WAKE: Wake = Wake::InStep;

    fn status(&self) -> &'static str {
        self.state.name(&self.end)
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.state = AwakeStatus::Awake;
        out.send(self.dir, Msg::Election { id: self.id, stage: 0, hops: 0 });
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, .. } => match self.state {
                AwakeStatus::Asleep if self.rule.beats(id, self.id) => {
                    self.state = AwakeStatus::Awake;
                    self.best = id;
                    out.send(other(port), msg);
                }
                AwakeStatus::Asleep => self.start(Some(port), out),
                AwakeStatus::Awake => {
                    if id == self.id {
                        self.state = AwakeStatus::Done;
                        self.end.elect(id, out);
                    } else if self.rule.beats(id, self.best) {
                        self.best = id;
                        out.send(other(port), msg);
                    }
                }
                // Ids still in flight when the election ended are swallowed.
                AwakeStatus::Done => {}
            },
            Msg::Notify { leader } => {
                self.state = AwakeStatus::Done;
                self.end.notified(port, leader, out);
            }
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::LEFT;
    use crate::algo::Role::Leader;
    use crate::algo::harness::{Probe, decide, election as el, ring, send};

    /// A sleeping node woken by a better id forwards it without sending its own.
    #[test]
    fn woken_by_better_id_only_forwards() {
        Probe::new(ring(AsFar::new, 3, Rule::Max)).on(LEFT, el(9, 0), &[send(RIGHT, el(9, 0))]);
    }

    /// A sleeping node woken by a worse id sends its own and swallows the other.
    #[test]
    fn woken_by_worse_id_sends_own() {
        Probe::new(ring(AsFar::new, 3, Rule::Max)).on(LEFT, el(1, 0), &[send(RIGHT, el(3, 0))]);
    }

    /// The own id coming back makes the node leader and starts the notification, which stops
    /// when it is back at the leader.
    #[test]
    fn own_id_back_elects_and_notifies() {
        let notify = Msg::Notify { leader: 3 };
        Probe::started(ring(AsFar::new, 3, Rule::Max))
            .on(LEFT, el(3, 0), &[decide(Leader, 3), send(RIGHT, notify)])
            .on(LEFT, notify, &[]);
    }

    /// An awake node drops ids that do not beat the best it has seen.
    #[test]
    fn drops_beaten_ids() {
        Probe::started(ring(AsFar::new, 3, Rule::Max)).on(LEFT, el(2, 0), &[]);
    }
}
