//! What became of each message as drawn (arrived, lost, dropped, in flight), and where a
//! candidate's id stops: facts of the run, before anything is placed.

use std::collections::HashMap;

use super::{Arrow, Diagram};
use crate::protocol::MsgRole;

/// What became of a message, as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// It arrived.
    Arrived,
    /// The network lost it (a fault, a partition).
    Lost,
    /// It reached a node that was down, which dropped it.
    Dropped,
    /// The run ended with it on its way.
    InFlight,
}

/// What became of `a` in `d`: a message that arrives while its receiver is down (or is never
/// received by a node down when it was sent) was dropped there, not lost.
pub(super) fn fate(d: &Diagram<'_>, a: &Arrow) -> Fate {
    let down_at =
        |t: u64| d.outages.iter().any(|o| o.position == a.to && o.crashed <= t && o.recovered.is_none_or(|r| t < r));
    match a.received {
        Some(r) if down_at(r) => Fate::Dropped,
        Some(_) => Fate::Arrived,
        None if a.in_flight => Fate::InFlight,
        None if down_at(a.sent) => Fate::Dropped,
        None => Fate::Lost,
    }
}

/// An id that stops where its arrow arrives: the node there (`by`, its id) sends nothing about it
/// after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Swallowed {
    /// The id carried.
    pub(super) id: u64,
    /// The receiver's id.
    pub(super) by: u64,
    /// How many ids the same node swallowed at the same moment before this one (Stages takes
    /// both neighbours' at once): the marks stand side by side.
    pub(super) nth: u32,
}

/// The arrows `drawn` whose candidate id stops where they arrive, each as (the id, the receiver's
/// id): a message of the candidate role carrying id x delivered to a node whose own id beats x,
/// after which that node sends no message about x (see
/// [`Msg::candidate`](crate::protocol::Msg::candidate)). Which ids beat which is told by the
/// leader's id (the largest or the smallest); without a leader, or without ids, nothing is
/// marked. Every arrow counts for what a node sends later, those not drawn too; one pass over
/// them and a map.
pub(super) fn swallowed(d: &Diagram<'_>, drawn: &[Arrow]) -> Vec<Option<Swallowed>> {
    let none = vec![None; drawn.len()];
    let Some(beats) = beats(d) else { return none };
    let mut last_sent: HashMap<(u32, u64), u64> = HashMap::new();
    for a in d.arrows {
        if let Some(x) = a.msg.and_then(|m| m.candidate()) {
            let t = last_sent.entry((a.from, x)).or_insert(a.sent);
            *t = (*t).max(a.sent);
        }
    }
    // Marks so far at each (node, moment).
    let mut at: HashMap<(u32, u64), u32> = HashMap::new();
    drawn
        .iter()
        .map(|a| {
            let (Some(m), Some(r)) = (a.msg, a.received) else { return None };
            let (Some(x), Some(&own)) = (m.candidate(), d.ids.get(a.to as usize)) else { return None };
            let stops = a.kind.role() == MsgRole::Candidate
                && beats(own, x)
                && fate(d, a) == Fate::Arrived
                && last_sent.get(&(a.to, x)).is_none_or(|&t| t < r);
            stops.then(|| {
                let nth = at.entry((a.to, r)).or_insert(0);
                *nth += 1;
                Swallowed { id: x, by: own, nth: *nth - 1 }
            })
        })
        .collect()
}

/// Which id beats which, told by the leader's id: `Some(larger)` if it is the largest id, the
/// smaller if the smallest; `None` without a leader, ids, or a choice (one id).
fn beats(d: &Diagram<'_>) -> Option<fn(u64, u64) -> bool> {
    let best = *d.ids.get(d.leader? as usize)?;
    let (max, min) = (d.ids.iter().max()?, d.ids.iter().min()?);
    match (best == *max, best == *min) {
        (true, false) => Some(|a, b| a > b),
        (false, true) => Some(|a, b| a < b),
        _ => None,
    }
}
