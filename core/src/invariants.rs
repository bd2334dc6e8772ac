//! Election invariants, one concern each, shared by the simulator and the
//! controller's verdict on live elections. Each returns `Err(description)`
//! when violated.
//!
//! A verdict ([`Outcome::verdict`]) splits them in two. *Safety* (at most one
//! leader, one leader per term) is always a violation. The others (a leader
//! exists, every live node agrees, the expected id wins, the bound holds, the
//! run went quiet without errors) are violations too, unless faults explain
//! why the election could not finish: then they become the verdict's
//! [`Verdict::failed_reason`], naming the faults.

use std::collections::BTreeMap;

use crate::protocol::{Decision, Leadership, Role, Rule, UNKNOWN_LEADER};

/// No two nodes claim leadership.
pub fn at_most_one_leader(decisions: &[Option<Decision>]) -> Result<(), String> {
    let leaders: Vec<usize> = decisions
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d, Some(d) if d.role == Role::Leader))
        .map(|(i, _)| i)
        .collect();
    if leaders.len() > 1 {
        return Err(format!("{} leaders, at positions {:?}", leaders.len(), &leaders[..leaders.len().min(8)]));
    }
    Ok(())
}

/// Some node claims leadership.
pub fn some_leader(decisions: &[Option<Decision>]) -> Result<(), String> {
    if decisions.iter().any(|d| matches!(d, Some(d) if d.role == Role::Leader)) {
        Ok(())
    } else {
        Err("no node became leader".into())
    }
}

/// Every node decided, and all name the same leader, which is the leader's
/// own id (followers that do not know the leader, [`UNKNOWN_LEADER`], name nobody).
pub fn all_agree_on_leader(ids: &[u64], decisions: &[Option<Decision>]) -> Result<(), String> {
    live_nodes_agree_on_leader(ids, decisions, &[])
}

/// [`all_agree_on_leader`] among the nodes that are up: positions in
/// `crashed` are left out (a crashed node cannot decide).
pub fn live_nodes_agree_on_leader(ids: &[u64], decisions: &[Option<Decision>], crashed: &[u32]) -> Result<(), String> {
    let live = || decisions.iter().enumerate().filter(|(p, _)| !crashed.contains(&(*p as u32)));
    let undecided = live().filter(|(_, d)| d.is_none()).count();
    if undecided > 0 {
        let first = live().find(|(_, d)| d.is_none()).map_or(0, |(p, _)| p);
        return Err(format!("{undecided} nodes never decided (first at position {first})"));
    }
    let mut named = live().filter_map(|(_, d)| d.map(|d| d.leader)).filter(|&l| l != UNKNOWN_LEADER);
    let first = named.next();
    if let Some(first) = first
        && let Some(other) = named.find(|&l| l != first)
    {
        return Err(format!("nodes disagree on the leader: {first} and {other}"));
    }
    for (pos, d) in live() {
        if let Some(d) = d
            && d.role == Role::Leader
            && d.leader != ids[pos]
        {
            return Err(format!("leader at position {pos} has id {} but announces {}", ids[pos], d.leader));
        }
    }
    Ok(())
}

/// No two different nodes lead in one term of a kept-leadership timeline:
/// `timeline` holds each (position, belief) a node announced, and a node
/// leads a term when its belief names its own id. Every term with more than
/// one leader is reported with the leaders' positions.
pub fn one_leader_per_term(ids: &[u64], timeline: &[(u32, Leadership)]) -> Result<(), String> {
    let mut leaders: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for &(pos, l) in timeline {
        if l.leader.is_some() && l.leader == ids.get(pos as usize).copied() {
            let at = leaders.entry(l.term).or_default();
            if !at.contains(&pos) {
                at.push(pos);
            }
        }
    }
    let clashes: Vec<String> = leaders
        .iter_mut()
        .filter(|(_, at)| at.len() > 1)
        .map(|(term, at)| {
            at.sort_unstable();
            format!("term {term} at positions {at:?}")
        })
        .collect();
    if clashes.is_empty() { Ok(()) } else { Err(format!("two leaders in one term: {}", clashes.join("; "))) }
}

/// The leader holds the winning id under `rule` among all of `ids`.
pub fn leader_is_extremum(rule: Rule, ids: &[u64], decisions: &[Option<Decision>]) -> Result<(), String> {
    leader_is_expected(rule.winner(ids.iter().copied()), rule, ids, decisions)
}

/// The leader holds `expected`, the winning id among the algorithm's
/// candidates (see [`crate::spec::Candidates`]).
pub fn leader_is_expected(
    expected: Option<u64>,
    rule: Rule,
    ids: &[u64],
    decisions: &[Option<Decision>],
) -> Result<(), String> {
    let Some(expected) = expected else {
        return Ok(());
    };
    for (pos, d) in decisions.iter().enumerate() {
        if let Some(d) = d
            && d.role == Role::Leader
            && ids[pos] != expected
        {
            return Err(format!("leader has id {} but the {} id is {expected}", ids[pos], rule.as_str()));
        }
    }
    Ok(())
}

/// The message count does not exceed the literature's bound.
pub fn messages_within_bound(messages: u64, bound: u64, formula: &str) -> Result<(), String> {
    if messages > bound {
        return Err(format!("{messages} messages exceed the bound {formula} = {bound}"));
    }
    Ok(())
}

/// The outcome of checking every invariant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Position of the (single) leader, if exactly one.
    pub leader: Option<u32>,
    /// Every node that is up decided and named the same leader.
    pub agreed: bool,
    /// Descriptions of the invariants that failed: safety always, the others
    /// when no fault explains them (an algorithm or driver bug).
    pub violations: Vec<String>,
    /// Why the election did not finish when faults explain it, e.g. "no
    /// leader: 3 messages were dropped by faults (no node became leader)".
    /// `None` when it finished, or when nothing but a bug explains it.
    pub failed_reason: Option<String>,
}

/// Check every invariant of a finished election; `expected` is the id that
/// must win ([`crate::spec::AlgorithmSpec::expected_winner`]).
/// The verdict of a run without faults, kept leaderships or driver errors.
pub fn verdict(
    expected: Option<u64>,
    rule: Rule,
    ids: &[u64],
    decisions: &[Option<Decision>],
    messages: u64,
    bound: u64,
    formula: &str,
) -> Verdict {
    Outcome { expected, rule, ids, decisions, messages, bound, formula, ..Outcome::default() }.verdict()
}

/// Everything a verdict looks at.
#[derive(Clone, Debug, Default)]
pub struct Outcome<'a> {
    /// The id that must win, if any.
    pub expected: Option<u64>,
    /// Which extremum wins.
    pub rule: Rule,
    /// Ids in position order.
    pub ids: &'a [u64],
    /// Each position's decision.
    pub decisions: &'a [Option<Decision>],
    /// Messages sent.
    pub messages: u64,
    /// The bound on messages, and its formula.
    pub bound: u64,
    /// The bound as text.
    pub formula: &'a str,
    /// Every kept-leadership belief announced, as (position, belief).
    pub timeline: &'a [(u32, Leadership)],
    /// Failures the driver saw: algorithm errors, not going quiet.
    pub failures: Vec<String>,
    /// Positions down at the end, left out of "every node agrees".
    pub crashed: &'a [u32],
    /// What faults did that the algorithm cannot be asked to survive (e.g.
    /// "3 messages were dropped by faults", "position 2 crashed at 40"); when
    /// not empty, failed checks other than safety are blamed on them.
    pub fault_reasons: &'a [String],
}

impl Outcome<'_> {
    /// Check every invariant.
    pub fn verdict(self) -> Verdict {
        let o = self;
        let safety = [at_most_one_leader(o.decisions), one_leader_per_term(o.ids, o.timeline)];
        let some = some_leader(o.decisions);
        let agree = live_nodes_agree_on_leader(o.ids, o.decisions, o.crashed);
        let expected = leader_is_expected(o.expected, o.rule, o.ids, o.decisions);
        let bound = messages_within_bound(o.messages, o.bound, o.formula);
        let agreed = agree.is_ok();
        let headline = if some.is_err() {
            "no leader"
        } else if agree.is_err() {
            "the nodes that are up do not agree"
        } else if expected.is_err() {
            "an unexpected leader"
        } else if bound.is_err() {
            "too many messages"
        } else {
            "the run failed"
        };
        let mut violations: Vec<String> = safety.into_iter().filter_map(Result::err).collect();
        let mut rest: Vec<String> = [some, agree, expected, bound].into_iter().filter_map(Result::err).collect();
        rest.extend(o.failures);
        let mut failed_reason = None;
        if o.fault_reasons.is_empty() {
            violations.extend(rest);
        } else if !rest.is_empty() {
            // Losses can set off a cascade of algorithm errors: name the first few.
            const SHOWN: usize = 4;
            let more = rest.len().saturating_sub(SHOWN);
            rest.truncate(SHOWN);
            if more > 0 {
                rest.push(format!("and {more} more"));
            }
            failed_reason = Some(format!("{headline}: {} ({})", o.fault_reasons.join("; "), rest.join("; ")));
        }
        let mut leaders =
            o.decisions.iter().enumerate().filter(|(_, d)| matches!(d, Some(d) if d.role == Role::Leader));
        let leader = match (leaders.next(), leaders.next()) {
            (Some((p, _)), None) => Some(p as u32),
            _ => None,
        };
        Verdict { leader, agreed, violations, failed_reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lead(id: u64) -> Option<Decision> {
        Some(Decision { role: Role::Leader, leader: id })
    }
    fn follow(id: u64) -> Option<Decision> {
        Some(Decision { role: Role::Follower, leader: id })
    }

    /// A correct outcome passes every check and names the leader's position.
    #[test]
    fn correct_election() {
        let v = verdict(Some(3), Rule::Max, &[1, 3, 2], &[follow(3), lead(3), follow(3)], 5, 9, "x");
        assert_eq!(v, Verdict { leader: Some(1), agreed: true, violations: vec![], failed_reason: None });
    }

    /// Each kind of failure is reported by its own check.
    #[test]
    fn failures_are_named() {
        let ids = [1, 3, 2];
        assert!(at_most_one_leader(&[lead(1), lead(3), None]).is_err());
        assert!(some_leader(&[follow(3), follow(3), None]).is_err());
        assert!(all_agree_on_leader(&ids, &[follow(3), lead(3), None]).unwrap_err().contains("never decided"));
        assert!(all_agree_on_leader(&ids, &[follow(2), lead(3), follow(3)]).unwrap_err().contains("disagree"));
        assert!(leader_is_extremum(Rule::Min, &ids, &[follow(3), lead(3), follow(3)]).is_err());
        assert!(messages_within_bound(10, 9, "n").is_err());
        let v = verdict(Some(3), Rule::Max, &ids, &[lead(1), lead(3), follow(3)], 1, 9, "x");
        assert_eq!(v.leader, None);
        assert!(!v.agreed);
        assert!(v.violations.len() >= 2);
    }

    fn leads(term: u64, leader: Option<u64>) -> Leadership {
        Leadership { term, leader }
    }

    /// Two nodes leading one term are reported with the term and both positions, for every such term;
    /// a node leading a term twice, followers' beliefs, and leaders of different terms are fine.
    #[test]
    fn one_leader_per_term_names_each_clash() {
        let ids = [10, 20, 30, 40];
        let fine = [(0, leads(1, Some(10))), (1, leads(1, Some(10))), (0, leads(1, Some(10))), (2, leads(2, Some(30)))];
        assert_eq!(one_leader_per_term(&ids, &fine), Ok(()));
        let nobody = [(0, leads(3, None)), (1, leads(3, None))];
        assert_eq!(one_leader_per_term(&ids, &nobody), Ok(()));
        let clash = [
            (3, leads(5, Some(40))),
            (1, leads(5, Some(20))),
            (0, leads(7, Some(10))),
            (2, leads(7, Some(30))),
            (1, leads(8, Some(20))),
        ];
        let e = one_leader_per_term(&ids, &clash).unwrap_err();
        assert_eq!(e, "two leaders in one term: term 5 at positions [1, 3]; term 7 at positions [0, 2]");
    }

    /// With fault reasons, failed liveness checks become the failed reason, never violations; safety stays a
    /// violation; crashed positions are left out of agreement; without reasons everything is a violation.
    #[test]
    fn faults_explain_liveness_not_safety() {
        let ids = [1, 3, 2];
        let reasons = ["3 messages were dropped by faults".to_string()];
        let undecided = [None, None, None];
        let base = Outcome { expected: Some(3), ids: &ids, decisions: &undecided, bound: 9, ..Outcome::default() };
        let v = Outcome { fault_reasons: &reasons, ..base.clone() }.verdict();
        assert!(v.violations.is_empty(), "{:?}", v.violations);
        let why = v.failed_reason.unwrap();
        assert!(why.starts_with("no leader: 3 messages were dropped by faults (no node became leader"), "{why}");
        let v = base.clone().verdict();
        assert!(v.failed_reason.is_none());
        assert!(v.violations.iter().any(|e| e.contains("no node became leader")), "{:?}", v.violations);

        let two = [lead(1), lead(3), None];
        let v = Outcome { decisions: &two, fault_reasons: &reasons, ..base.clone() }.verdict();
        assert!(v.violations.iter().any(|e| e.contains("2 leaders")), "{:?}", v.violations);

        let without_2 = [follow(3), lead(3), None];
        let v = Outcome { decisions: &without_2, crashed: &[2], fault_reasons: &reasons, ..base.clone() }.verdict();
        assert_eq!(v, Verdict { leader: Some(1), agreed: true, violations: vec![], failed_reason: None });

        let timeline = [(0, leads(4, Some(1))), (1, leads(4, Some(3)))];
        let done = [follow(3), lead(3), follow(3)];
        let v = Outcome { decisions: &done, timeline: &timeline, fault_reasons: &reasons, ..base }.verdict();
        assert_eq!(v.violations, vec!["two leaders in one term: term 4 at positions [0, 1]".to_string()]);
    }
}
