//! Election invariants, one concern each, shared by the simulator, the
//! checker and the controller's verdict on live elections. Each returns the
//! [`Violation`] it finds: drivers match on its variant, users read its text.
//!
//! Which invariants judge a run depends on what it was asked to do
//! ([`Rules`]): a one-shot election decides once, and its winner and message
//! count are the literature's; a kept leadership elects again after every
//! failure and heartbeats all along, so only its terms are judged.
//!
//! A verdict ([`Outcome::verdict`]) splits them in two. *Safety* (at most one
//! leader, one leader per term) is always a violation. The others (a leader
//! exists, every live node agrees, the expected id wins, the bound holds, the
//! run went quiet without errors) are violations too, unless faults explain
//! why the election could not finish: then they become the verdict's
//! [`Verdict::failed_reason`], naming the faults.

use std::collections::BTreeMap;

use crate::protocol::{Decision, Leadership, Role, Rule, UNKNOWN_LEADER};

/// A broken invariant, or a run that went wrong. Its text ([`std::fmt::Display`])
/// is what records, pages and the checker show.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// More than one node claims leadership: how many, and the first eight positions.
    #[error("{count} leaders, at positions {positions:?}")]
    SeveralLeaders {
        /// Nodes that claim leadership.
        count: usize,
        /// The first eight of their positions.
        positions: Vec<usize>,
    },
    /// No node claims leadership.
    #[error("no node became leader")]
    NoLeader,
    /// Nodes that are up never decided.
    #[error("{count} nodes never decided (first at position {first})")]
    Undecided {
        /// How many.
        count: usize,
        /// The first one's position.
        first: usize,
    },
    /// Two nodes name different leaders.
    #[error("nodes disagree on the leader: {first} and {other}")]
    Disagree {
        /// The first leader id named.
        first: u64,
        /// Another one.
        other: u64,
    },
    /// A leader announces an id that is not its own.
    #[error("leader at position {position} has id {id} but announces {announced}")]
    FalseAnnouncement {
        /// The leader's position.
        position: usize,
        /// Its id.
        id: u64,
        /// The id it announces.
        announced: u64,
    },
    /// Terms of a kept leadership that had two leaders: each term with its leaders' positions.
    #[error("two leaders in one term: {}", clashes.iter().map(|(term, at)| format!("term {term} at positions {at:?}")).collect::<Vec<_>>().join("; "))]
    TwoLeadersInATerm {
        /// (term, its leaders' positions, sorted), by term.
        clashes: Vec<(u64, Vec<u32>)>,
    },
    /// Live nodes that believe in a leader of one term name different ones.
    #[error("nodes of term {term} name different leaders")]
    SplitTerm {
        /// The term.
        term: u64,
    },
    /// The leader's id is not the one the rule makes win.
    #[error("leader has id {id} but the {} id is {expected}", rule.as_str())]
    UnexpectedLeader {
        /// The leader's id.
        id: u64,
        /// The winner rule.
        rule: Rule,
        /// The id that should have won.
        expected: u64,
    },
    /// More messages than the literature's bound.
    #[error("{messages} messages exceed the bound {formula} = {bound}")]
    OverBound {
        /// Messages sent.
        messages: u64,
        /// The bound.
        bound: u64,
        /// The bound's formula.
        formula: String,
    },
    /// What the driver saw go wrong: an algorithm's error, a run that did not go quiet.
    #[error("{0}")]
    Run(String),
}

impl Violation {
    /// Is it a safety violation (two leaders at once, or in one term), which no fault excuses?
    pub fn is_safety(&self) -> bool {
        matches!(self, Violation::SeveralLeaders { .. } | Violation::TwoLeadersInATerm { .. })
    }
}

/// No two nodes claim leadership.
pub fn at_most_one_leader(decisions: &[Option<Decision>]) -> Result<(), Violation> {
    let leaders: Vec<usize> = decisions
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d, Some(d) if d.role == Role::Leader))
        .map(|(i, _)| i)
        .collect();
    if leaders.len() > 1 {
        return Err(Violation::SeveralLeaders {
            count: leaders.len(),
            positions: leaders[..leaders.len().min(8)].to_vec(),
        });
    }
    Ok(())
}

/// Some node claims leadership.
pub fn some_leader(decisions: &[Option<Decision>]) -> Result<(), Violation> {
    if decisions.iter().any(|d| matches!(d, Some(d) if d.role == Role::Leader)) {
        Ok(())
    } else {
        Err(Violation::NoLeader)
    }
}

/// Every node decided, and all name the same leader, which is the leader's
/// own id (followers that do not know the leader, [`UNKNOWN_LEADER`], name nobody).
pub fn all_agree_on_leader(ids: &[u64], decisions: &[Option<Decision>]) -> Result<(), Violation> {
    live_nodes_agree_on_leader(ids, decisions, &[])
}

/// [`all_agree_on_leader`] among the nodes that are up: positions in
/// `crashed` are left out (a crashed node cannot decide).
pub fn live_nodes_agree_on_leader(
    ids: &[u64],
    decisions: &[Option<Decision>],
    crashed: &[u32],
) -> Result<(), Violation> {
    let live = || decisions.iter().enumerate().filter(|(p, _)| !crashed.contains(&(*p as u32)));
    let undecided = live().filter(|(_, d)| d.is_none()).count();
    if undecided > 0 {
        let first = live().find(|(_, d)| d.is_none()).map_or(0, |(p, _)| p);
        return Err(Violation::Undecided { count: undecided, first });
    }
    let mut named = live().filter_map(|(_, d)| d.map(|d| d.leader)).filter(|&l| l != UNKNOWN_LEADER);
    let first = named.next();
    if let Some(first) = first
        && let Some(other) = named.find(|&l| l != first)
    {
        return Err(Violation::Disagree { first, other });
    }
    for (pos, d) in live() {
        if let Some(d) = d
            && d.role == Role::Leader
            && d.leader != ids[pos]
        {
            return Err(Violation::FalseAnnouncement { position: pos, id: ids[pos], announced: d.leader });
        }
    }
    Ok(())
}

/// No two different nodes lead in one term of a kept-leadership timeline:
/// `timeline` holds each (position, belief) a node announced, and a node
/// leads a term when its belief names its own id (so a kept leadership's
/// ids must be distinct: its drivers refuse repeats). Every term with more than
/// one leader is reported with the leaders' positions.
pub fn one_leader_per_term(ids: &[u64], timeline: &[(u32, Leadership)]) -> Result<(), Violation> {
    let mut leaders: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for &(pos, l) in timeline {
        if l.leader.is_some() && l.leader == ids.get(pos as usize).copied() {
            let at = leaders.entry(l.term).or_default();
            if !at.contains(&pos) {
                at.push(pos);
            }
        }
    }
    let clashes: Vec<(u64, Vec<u32>)> = leaders
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(term, mut at)| {
            at.sort_unstable();
            (term, at)
        })
        .collect();
    if clashes.is_empty() { Ok(()) } else { Err(Violation::TwoLeadersInATerm { clashes }) }
}

/// The live nodes that believe in a leader of one term name the same one
/// (`beliefs`: each node's belief now, `None` for a node that is down).
pub fn one_belief_per_term(beliefs: &[Option<Leadership>]) -> Result<(), Violation> {
    let mut named: BTreeMap<u64, u64> = BTreeMap::new();
    for b in beliefs.iter().flatten() {
        if let Some(leader) = b.leader
            && *named.entry(b.term).or_insert(leader) != leader
        {
            return Err(Violation::SplitTerm { term: b.term });
        }
    }
    Ok(())
}

/// The leader holds the winning id under `rule` among all of `ids`. Ids may
/// repeat (an anonymous ring): several nodes then hold the extremum, and any
/// one of them leading is fine (two leading is [`at_most_one_leader`]'s to judge).
pub fn leader_is_extremum(rule: Rule, ids: &[u64], decisions: &[Option<Decision>]) -> Result<(), Violation> {
    leader_is_expected(rule.winner(ids.iter().copied()), rule, ids, decisions)
}

/// The leader holds `expected`, the winning id among the algorithm's
/// candidates (see [`crate::spec::Candidates`]): by its id, so where ids
/// repeat any node holding `expected` may lead.
pub fn leader_is_expected(
    expected: Option<u64>,
    rule: Rule,
    ids: &[u64],
    decisions: &[Option<Decision>],
) -> Result<(), Violation> {
    let Some(expected) = expected else {
        return Ok(());
    };
    for (pos, d) in decisions.iter().enumerate() {
        if let Some(d) = d
            && d.role == Role::Leader
            && ids[pos] != expected
        {
            return Err(Violation::UnexpectedLeader { id: ids[pos], rule, expected });
        }
    }
    Ok(())
}

/// The message count does not exceed the literature's bound.
pub fn messages_within_bound(messages: u64, bound: u64, formula: &str) -> Result<(), Violation> {
    if messages > bound {
        return Err(Violation::OverBound { messages, bound, formula: formula.to_string() });
    }
    Ok(())
}

/// The invariants that judge a run, by what it was asked to do. Every driver
/// picks them by the run's mode (the simulator's [`run_kept`](crate::sim::run_kept),
/// a LIVE or SIMULATED `keep_leader`), so no kept leadership is judged by a
/// one-shot rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rules {
    /// A one-shot election: at most one node decides it leads, every live
    /// node decides and names it, the expected id wins
    /// ([`leader_is_expected`]), and the messages stay within the bound
    /// ([`messages_within_bound`]).
    #[default]
    OneShot,
    /// A kept leadership: at most one leader per term
    /// ([`one_leader_per_term`]), and the live nodes that believe in a leader
    /// of one term name the same one ([`one_belief_per_term`]). A kept leader
    /// is whoever wins a term (Raft's and the lease's first candidate, whatever
    /// its id; the next best after a failure), and heartbeats, acknowledgements
    /// and re-elections have no one-shot bound: neither is judged, nor the
    /// first decisions, which a failover supersedes.
    Kept,
}

impl Rules {
    /// The rules of a kept leadership (`true`) or a one-shot election.
    pub fn of(kept: bool) -> Rules {
        if kept { Rules::Kept } else { Rules::OneShot }
    }
}

/// The outcome of checking every invariant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Position of the (single) leader, if exactly one.
    pub leader: Option<u32>,
    /// Every node that is up decided and named the same leader.
    pub agreed: bool,
    /// The invariants that failed: safety always, the others when no fault
    /// explains them (an algorithm or driver bug).
    pub violations: Vec<Violation>,
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
    /// Which invariants apply: a one-shot election's or a kept leadership's.
    pub rules: Rules,
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
    /// Each position's kept-leadership belief at the end (`None`: none, or down).
    pub beliefs: &'a [Option<Leadership>],
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
    /// Check every invariant of its [`Rules`].
    pub fn verdict(self) -> Verdict {
        match self.rules {
            Rules::OneShot => self.one_shot(),
            Rules::Kept => self.kept(),
        }
    }

    /// A one-shot election's verdict: on the decisions, the winner and the bound.
    fn one_shot(self) -> Verdict {
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
        let rest: Vec<Violation> = [some, agree, expected, bound].into_iter().filter_map(Result::err).collect();
        let (violations, failed_reason) = blame(safety, rest, o.failures, o.fault_reasons, headline);
        let mut leaders =
            o.decisions.iter().enumerate().filter(|(_, d)| matches!(d, Some(d) if d.role == Role::Leader));
        let leader = match (leaders.next(), leaders.next()) {
            (Some((p, _)), None) => Some(p as u32),
            _ => None,
        };
        Verdict { leader, agreed, violations, failed_reason }
    }

    /// A kept leadership's verdict: on its terms. Its leader is the one every
    /// live node believes in at the end, itself live.
    fn kept(self) -> Verdict {
        let o = self;
        let safety = [one_leader_per_term(o.ids, o.timeline)];
        let live = |p: usize| !o.crashed.contains(&(p as u32));
        let live_beliefs: Vec<Option<Leadership>> =
            o.beliefs.iter().enumerate().map(|(p, b)| b.filter(|_| live(p))).collect();
        let split = one_belief_per_term(&live_beliefs);
        let headline = if split.is_err() { "the nodes of one term name different leaders" } else { "the run failed" };
        let rest: Vec<Violation> = split.err().into_iter().collect();
        let (violations, failed_reason) = blame(safety, rest, o.failures, o.fault_reasons, headline);
        let mut held = live_beliefs.iter().enumerate().filter(|&(p, _)| live(p)).map(|(_, b)| *b);
        let first = held.next().flatten();
        let leader = first
            .filter(|f| held.all(|b| b == Some(*f)))
            .and_then(|f| o.ids.iter().position(|&id| Some(id) == f.leader))
            .filter(|&p| live(p))
            .map(|p| p as u32);
        Verdict { leader, agreed: leader.is_some(), violations, failed_reason }
    }
}

/// Split a verdict's failed checks: `safety` always violations; `rest` and
/// the driver's `failures` too, unless `fault_reasons` explain them, when they
/// become the failed reason, under `headline`.
fn blame<const N: usize>(
    safety: [Result<(), Violation>; N],
    mut rest: Vec<Violation>,
    failures: Vec<String>,
    fault_reasons: &[String],
    headline: &str,
) -> (Vec<Violation>, Option<String>) {
    let mut violations: Vec<Violation> = safety.into_iter().filter_map(Result::err).collect();
    rest.extend(failures.into_iter().map(Violation::Run));
    let mut failed_reason = None;
    if fault_reasons.is_empty() {
        violations.extend(rest);
    } else if !rest.is_empty() {
        // Losses can set off a cascade of algorithm errors: name the first few.
        const SHOWN: usize = 4;
        let more = rest.len().saturating_sub(SHOWN);
        let mut shown: Vec<String> = rest.iter().take(SHOWN).map(ToString::to_string).collect();
        if more > 0 {
            shown.push(format!("and {more} more"));
        }
        failed_reason = Some(format!("{headline}: {} ({})", fault_reasons.join("; "), shown.join("; ")));
    }
    (violations, failed_reason)
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

    /// On repeated ids (an anonymous ring) the judges stay true: one of the several nodes holding
    /// the extremum leading is a correct election whichever it is, and two of them leading is two
    /// leaders, at their positions.
    #[test]
    fn repeated_ids_are_judged_by_position() {
        let ids = [4, 2, 4];
        for leader in [0, 2] {
            let decisions: Vec<_> = (0..3).map(|p| if p == leader { lead(4) } else { follow(4) }).collect();
            let v = verdict(Some(4), Rule::Max, &ids, &decisions, 5, 9, "9");
            assert_eq!((v.leader, v.violations.clone()), (Some(leader as u32), vec![]), "leader at {leader}");
            assert_eq!(leader_is_extremum(Rule::Max, &ids, &decisions), Ok(()));
        }
        let two = [lead(4), follow(4), lead(4)];
        assert_eq!(at_most_one_leader(&two), Err(Violation::SeveralLeaders { count: 2, positions: vec![0, 2] }));
        assert!(verdict(Some(4), Rule::Max, &ids, &two, 5, 9, "9").violations.iter().any(Violation::is_safety));
        let low = [follow(2), lead(2), follow(2)];
        assert!(leader_is_extremum(Rule::Max, &ids, &low).is_err(), "2 is not the maximum");
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
        let undecided = all_agree_on_leader(&ids, &[follow(3), lead(3), None]).unwrap_err();
        assert_eq!(undecided, Violation::Undecided { count: 1, first: 2 });
        assert_eq!(undecided.to_string(), "1 nodes never decided (first at position 2)");
        let disagree = all_agree_on_leader(&ids, &[follow(2), lead(3), follow(3)]).unwrap_err();
        assert_eq!(disagree.to_string(), "nodes disagree on the leader: 2 and 3");
        let unexpected = leader_is_extremum(Rule::Min, &ids, &[follow(3), lead(3), follow(3)]).unwrap_err();
        assert_eq!(unexpected.to_string(), "leader has id 3 but the min id is 1");
        let over = messages_within_bound(10, 9, "n").unwrap_err();
        assert_eq!(over.to_string(), "10 messages exceed the bound n = 9");
        let two = at_most_one_leader(&[lead(1), lead(3), None]).unwrap_err();
        assert_eq!((two.to_string().as_str(), two.is_safety()), ("2 leaders, at positions [0, 1]", true));
        assert_eq!(some_leader(&[None]).unwrap_err().to_string(), "no node became leader");
        let false_claim = all_agree_on_leader(&ids, &[follow(2), lead(2), follow(2)]).unwrap_err();
        assert_eq!(false_claim.to_string(), "leader at position 1 has id 3 but announces 2");
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
        assert_eq!(e, Violation::TwoLeadersInATerm { clashes: vec![(5, vec![1, 3]), (7, vec![0, 2])] });
        assert_eq!(e.to_string(), "two leaders in one term: term 5 at positions [1, 3]; term 7 at positions [0, 2]");
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
        assert!(v.violations.contains(&Violation::NoLeader), "{:?}", v.violations);

        let two = [lead(1), lead(3), None];
        let v = Outcome { decisions: &two, fault_reasons: &reasons, ..base.clone() }.verdict();
        assert!(v.violations.iter().any(|e| e.to_string().contains("2 leaders")), "{:?}", v.violations);

        let without_2 = [follow(3), lead(3), None];
        let v = Outcome { decisions: &without_2, crashed: &[2], fault_reasons: &reasons, ..base.clone() }.verdict();
        assert_eq!(v, Verdict { leader: Some(1), agreed: true, violations: vec![], failed_reason: None });

        let timeline = [(0, leads(4, Some(1))), (1, leads(4, Some(3)))];
        let done = [follow(3), lead(3), follow(3)];
        let v = Outcome { decisions: &done, timeline: &timeline, fault_reasons: &reasons, ..base }.verdict();
        assert_eq!(v.violations, vec![Violation::TwoLeadersInATerm { clashes: vec![(4, vec![0, 1])] }]);
        assert_eq!(v.violations[0].to_string(), "two leaders in one term: term 4 at positions [0, 1]");
    }
    /// A kept leadership is judged by the kept rules only: a leader that is not the extremum, more
    /// messages than the one-shot bound and two first decisions of "leader" (a failover) are no
    /// violation, and its leader is the one every live node believes in at the end; two leaders of
    /// one term are, and two live nodes naming different leaders of one term are, unless faults
    /// explain it. The same outcome under the one-shot rules is judged by them.
    #[test]
    fn kept_rules_judge_terms_only() {
        let ids = [1, 3, 2];
        let decisions = [lead(1), follow(1), lead(2)];
        let timeline = [(0, leads(1, Some(1))), (2, leads(2, Some(2))), (1, leads(2, Some(2)))];
        let beliefs = [Some(leads(2, Some(2))), Some(leads(2, Some(2))), Some(leads(2, Some(2)))];
        let kept = Outcome {
            rules: Rules::Kept,
            expected: Some(3),
            ids: &ids,
            decisions: &decisions,
            messages: 500,
            bound: 8,
            formula: "4(n-1)",
            timeline: &timeline,
            beliefs: &beliefs,
            ..Outcome::default()
        };
        let v = kept.clone().verdict();
        assert_eq!(v, Verdict { leader: Some(2), agreed: true, violations: vec![], failed_reason: None });
        let one_shot = Outcome { rules: Rules::OneShot, ..kept.clone() }.verdict();
        let texts: Vec<String> = one_shot.violations.iter().map(ToString::to_string).collect();
        assert!(texts.contains(&"2 leaders, at positions [0, 2]".to_string()), "{texts:?}");
        assert!(texts.contains(&"500 messages exceed the bound 4(n-1) = 8".to_string()), "{texts:?}");

        let clash = [(0, leads(2, Some(1))), (2, leads(2, Some(2)))];
        let v = Outcome { timeline: &clash, ..kept.clone() }.verdict();
        assert_eq!(v.violations, vec![Violation::TwoLeadersInATerm { clashes: vec![(2, vec![0, 2])] }]);

        let split = [Some(leads(2, Some(2))), Some(leads(2, Some(3))), Some(leads(2, Some(2)))];
        let v = Outcome { beliefs: &split, ..kept.clone() }.verdict();
        assert_eq!((v.violations, v.leader, v.agreed), (vec![Violation::SplitTerm { term: 2 }], None, false));
        let reasons = ["position 1 was cut off at 40".to_string()];
        let v = Outcome { beliefs: &split, fault_reasons: &reasons, ..kept.clone() }.verdict();
        assert!(v.violations.is_empty(), "{:?}", v.violations);
        let why = v.failed_reason.unwrap();
        assert!(why.starts_with("the nodes of one term name different leaders: position 1 was cut off"), "{why}");

        // A crashed leader is no leader at the end; a crashed follower's stale belief does not count.
        let v = Outcome { crashed: &[2], ..kept.clone() }.verdict();
        assert_eq!((v.leader, v.agreed), (None, false));
        let stale = [Some(leads(2, Some(2))), Some(leads(1, Some(1))), Some(leads(2, Some(2)))];
        let v = Outcome { beliefs: &stale, crashed: &[1], ..kept }.verdict();
        assert_eq!((v.leader, v.agreed, v.violations.is_empty()), (Some(2), true, true));
    }
}
