//! The properties every state must keep: [`PROPERTIES`] for one-shot
//! elections, [`KEPT_PROPERTIES`] for kept leaderships, and whether a state
//! keeps each ([`ElectionModel::holds`]).

use ringleader_core::algo::{Decision, Leadership, Role, UNKNOWN_LEADER};
use ringleader_core::invariants;

use super::ElectionModel;
use super::state::System;

/// The properties a one-shot election keeps at every state, in the order
/// they are reported.
pub const PROPERTIES: [&str; 6] = [
    "no node errs",
    "at most one leader",
    "decided nodes agree",
    "the leader is the expected winner",
    "within the bound",
    "every final state is a finished election",
];

/// The properties a kept leadership keeps at every state, in the order they
/// are reported. One leader per term is over the whole run so far (as the
/// simulator's `invariants::one_leader_per_term`): no term ever had two. The no-overlap one only for
/// leased leaderships (`KeptSpec::lease`: Chubby-style, the store's lease, Raft with its lease). The last
/// is liveness made a safety property by the algorithm's documented bound
/// (`KeptSpec::convergence_bound_ms`): once that long has passed since the
/// last fault (a partition lasts until it heals), every state has one
/// agreed live leader, so every continuation without faults reaches one and
/// keeps it.
pub const KEPT_PROPERTIES: [&str; 5] = [
    "no node errs",
    "at most one leader per term",
    "the nodes of one term agree on its leader",
    "no two leases overlap",
    "one agreed leader from the convergence bound after the last fault on",
];

impl ElectionModel {
    /// The names of the properties this model checks ([`PROPERTIES`] or
    /// [`KEPT_PROPERTIES`]).
    pub fn properties(&self) -> &'static [&'static str] {
        if self.is_kept() { &KEPT_PROPERTIES } else { &PROPERTIES }
    }

    /// What a broken `property` may owe to the schedules the checker tries
    /// rather than to the algorithm: for the convergence property of an
    /// algorithm whose bound assumes timing the checker does not give
    /// ([`KeptSpec::liveness_needs`]), that assumption in words; for the
    /// no-overlap and convergence properties of an election with a node's
    /// clock off real time's rate ([`Election::clock`]), that clock.
    ///
    /// [`KeptSpec::liveness_needs`]: ringleader_core::spec::KeptSpec::liveness_needs
    /// [`Election::clock`]: super::Election::clock
    pub fn caveat(&self, property: &str) -> Option<&'static str> {
        let convergence = KEPT_PROPERTIES[KEPT_PROPERTIES.len() - 1];
        if self.election.clock.is_some() && (property == convergence || property == KEPT_PROPERTIES[3]) {
            return Some(
                "a node's clock runs off real time's rate (--clock): a lease keeps one leader at a time only \
                 while every clock's rate stays within its tolerance, and a convergence bound is in real time",
            );
        }
        if property != convergence {
            return None;
        }
        self.election.spec.kept.and_then(|k| k.liveness_needs)
    }

    /// Does `s` keep property `i` of [`ElectionModel::properties`]?
    pub fn holds(&self, i: usize, s: &System) -> bool {
        if self.is_kept() {
            return self.kept_holds(i, s);
        }
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

    fn kept_holds(&self, i: usize, s: &System) -> bool {
        let ids = &self.election.ids;
        let beliefs = s.beliefs();
        let leaders =
            || beliefs.iter().zip(ids).filter_map(|(b, &id)| b.filter(|b| b.leader == Some(id)).map(|b| (b.term, id)));
        match i {
            0 => s.error.is_none(),
            1 => s.led.windows(2).all(|w| w[0].0 != w[1].0),
            2 => {
                let mut named: Vec<(u64, u64)> =
                    beliefs.iter().flatten().filter_map(|b| b.leader.map(|l| (b.term, l))).collect();
                named.sort_unstable();
                named.dedup();
                named.windows(2).all(|w| w[0].0 != w[1].0)
            }
            // A leased leadership ([`KeptSpec::lease`]): never two leaders at once, of any term.
            3 => !self.election.spec.kept.is_some_and(|k| k.leased()) || leaders().count() <= 1,
            _ => s.since_fault.is_some() || self.settled(s),
        }
    }

    /// A kept leadership is settled: every live node believes in the same
    /// leader of the same term, and that leader is live (so it believes it
    /// leads).
    fn settled(&self, s: &System) -> bool {
        let mut first: Option<Leadership> = None;
        for (p, node) in s.nodes.iter().enumerate() {
            if s.is_down(p as u32) {
                continue;
            }
            match (node.leadership(), first) {
                (Some(b), _) if b.leader.is_none() => return false,
                (None, _) => return false,
                (Some(b), None) => first = Some(b),
                (Some(b), Some(f)) if b != f => return false,
                _ => {}
            }
        }
        first.is_some_and(|f| {
            self.election.ids.iter().enumerate().any(|(p, &id)| f.leader == Some(id) && !s.is_down(p as u32))
        })
    }

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

/// Do the nodes that decided name one leader? (A follower told only that
/// somebody leads, [`UNKNOWN_LEADER`], agrees with anybody.)
fn decided_agree(decisions: &[Option<Decision>]) -> bool {
    let mut named = decisions.iter().flatten().filter(|d| d.role == Role::Leader || d.leader != UNKNOWN_LEADER);
    match named.next() {
        None => true,
        Some(first) => named.all(|d| d.leader == first.leader),
    }
}
