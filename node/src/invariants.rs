//! Election invariants, one concern each, shared by the simulator and the
//! controller's verdict on live elections. Each returns `Err(description)`
//! when violated.

use crate::algo::{Decision, Role, Rule};

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

/// Every node decided, and all name the same leader, which is the leader's own id.
pub fn all_agree_on_leader(ids: &[u64], decisions: &[Option<Decision>]) -> Result<(), String> {
    let undecided = decisions.iter().filter(|d| d.is_none()).count();
    if undecided > 0 {
        let first = decisions.iter().position(|d| d.is_none()).unwrap_or(0);
        return Err(format!("{undecided} nodes never decided (first at position {first})"));
    }
    let mut named = decisions.iter().flatten().map(|d| d.leader);
    let first = named.next();
    if let Some(first) = first
        && let Some(other) = named.find(|&l| l != first)
    {
        return Err(format!("nodes disagree on the leader: {first} and {other}"));
    }
    for (pos, d) in decisions.iter().enumerate() {
        if let Some(d) = d
            && d.role == Role::Leader
            && d.leader != ids[pos]
        {
            return Err(format!("leader at position {pos} has id {} but announces {}", ids[pos], d.leader));
        }
    }
    Ok(())
}

/// The leader holds the winning id under `rule` among all of `ids`.
pub fn leader_is_extremum(rule: Rule, ids: &[u64], decisions: &[Option<Decision>]) -> Result<(), String> {
    leader_is_expected(rule.winner(ids.iter().copied()), rule, ids, decisions)
}

/// The leader holds `expected`, the winning id among the algorithm's
/// candidates (see [`crate::algo::catalogue::Candidates`]).
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
    /// Every node decided and named the same leader.
    pub agreed: bool,
    /// Descriptions of the invariants that failed.
    pub violations: Vec<String>,
}

/// Check every invariant of a finished election; `expected` is the id that
/// must win ([`crate::algo::catalogue::AlgorithmSpec::expected_winner`]).
pub fn verdict(
    expected: Option<u64>,
    rule: Rule,
    ids: &[u64],
    decisions: &[Option<Decision>],
    messages: u64,
    bound: u64,
    formula: &str,
) -> Verdict {
    let mut violations = Vec::new();
    let checks = [
        at_most_one_leader(decisions),
        some_leader(decisions),
        all_agree_on_leader(ids, decisions),
        leader_is_expected(expected, rule, ids, decisions),
        messages_within_bound(messages, bound, formula),
    ];
    let agreed = checks[2].is_ok();
    violations.extend(checks.into_iter().filter_map(Result::err));
    let mut leaders = decisions.iter().enumerate().filter(|(_, d)| matches!(d, Some(d) if d.role == Role::Leader));
    let leader = match (leaders.next(), leaders.next()) {
        (Some((p, _)), None) => Some(p as u32),
        _ => None,
    };
    Verdict { leader, agreed, violations }
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
        assert_eq!(v, Verdict { leader: Some(1), agreed: true, violations: vec![] });
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
}
