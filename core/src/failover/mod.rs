//! Failover measurements from a kept-leadership timeline:
//! for each crash of a leader (or a leader cut off from every majority by a
//! partition, [`cut_off_failovers`]), how long until someone noticed, how long until
//! every live node agreed on a new leader of a higher term, and how many
//! election and notification messages were sent in between.
//!
//! Each loss has its [`Cause`]; [`KeptVerdict`] gathers a simulated kept
//! leadership's failovers with their causes, its [`overlap`]s, its agreement
//! and its leader.
//!
//! Pure functions over what a simulated run reports
//! ([`crate::sim::SimReport::leaderships`], the outages of its fault plan,
//! [`crate::sim::SimReport::message_times`]); no clock of their own.
//!
//! * **Detection**: the first [`LeadershipEvent`] at or after the crash, from
//!   another node, that no longer names the crashed leader at its term
//!   (`leader: None` while electing, or any other belief).
//! * **Agreement**: the first instant at or after the crash when every live
//!   node's latest belief is the same leader, that leader is live, and its
//!   term is above the crashed leader's. A node that recovered counts as live
//!   from its recovery, and must have learned the leader too.
//! * **Messages**: election and notification messages sent in
//!   `[crash, agreement]`, heartbeats excluded; an election started there for
//!   another reason (a false suspicion) is counted too.

mod cause;
pub mod overlap;
mod verdict;

pub use cause::Cause;
pub use verdict::KeptVerdict;

use crate::algo::Leadership;
use crate::faults::{Fault, FaultPlan};
use crate::sim::LeadershipEvent;

pub use crate::faults::Outage;

/// One leader's crash and what followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failover {
    /// The crashed leader's position.
    pub position: u32,
    /// Its term.
    pub term: u64,
    /// Time of the crash.
    pub crashed: u64,
    /// Time from the crash to the first node's change of belief.
    pub detection: Option<u64>,
    /// Time from the crash to agreement on a new leader.
    pub agreement: Option<u64>,
    /// The new leader's id and term.
    pub new_leader: Option<(u64, u64)>,
    /// Election and notification messages sent from the crash to agreement.
    pub messages: Option<u64>,
}

/// The outages of a plan's explicit `Crash` and `Recover` faults, in time
/// order (a crash of a node already down and a recovery of a node up do
/// nothing, as in the simulator). `CrashLeader` and faults waiting for a
/// trigger are resolved only while running, so they are not listed.
pub fn outages(plan: &FaultPlan) -> Vec<Outage> {
    let mut sched = plan.faults.clone();
    sched.sort_by_key(|s| s.at);
    let mut out: Vec<Outage> = Vec::new();
    // A triggered fault's time is known only while running.
    for s in sched.iter().filter(|s| s.after.is_none()) {
        match s.fault {
            Fault::Crash { node } if !out.iter().any(|o| o.position == node && o.recovered.is_none()) => {
                out.push(Outage { position: node, crashed: s.at, recovered: None });
            }
            Fault::Recover { node } => {
                if let Some(o) = out.iter_mut().find(|o| o.position == node && o.recovered.is_none()) {
                    o.recovered = Some(s.at);
                }
            }
            _ => {}
        }
    }
    out
}

/// Is `p` down at `t`?
fn down(outages: &[Outage], p: u32, t: u64) -> bool {
    outages.iter().any(|o| o.position == p && o.covers(t))
}

/// The first time at or after `from` when every live node believes the same
/// live leader with a term above `above`, and that leadership.
pub fn agreement(
    ids: &[u64],
    timeline: &[LeadershipEvent],
    outages: &[Outage],
    from: u64,
    above: u64,
) -> Option<(u64, Leadership)> {
    let n = ids.len();
    let mut latest: Vec<Option<Leadership>> = vec![None; n];
    let mut i = 0;
    // Beliefs held before `from`, and a recovered node forgets its old one.
    let mut checks: Vec<u64> = timeline.iter().map(|e| e.time).filter(|&t| t >= from).collect();
    checks.push(from);
    checks.extend(outages.iter().flat_map(|o| [Some(o.crashed), o.recovered]).flatten().filter(|&t| t >= from));
    checks.sort_unstable();
    checks.dedup();
    let mut recoveries: Vec<(u64, u32)> = outages.iter().filter_map(|o| o.recovered.map(|r| (r, o.position))).collect();
    recoveries.sort_unstable();
    let mut r = 0;
    for t in checks {
        // Events and recoveries in time order; a recovery precedes the events of its instant.
        loop {
            let rec = recoveries.get(r).map(|x| x.0).filter(|&rt| rt <= t);
            let ev = timeline.get(i).map(|e| e.time).filter(|&et| et <= t);
            match (rec, ev) {
                (Some(rt), Some(et)) if et < rt => {}
                (Some(_), _) => {
                    latest[recoveries[r].1 as usize] = None;
                    r += 1;
                    continue;
                }
                (None, Some(_)) => {}
                (None, None) => break,
            }
            let e = timeline[i];
            latest[e.position as usize] = Some(e.leadership);
            i += 1;
        }
        let live: Vec<usize> = (0..n).filter(|&p| !down(outages, p as u32, t)).collect();
        let Some(&first) = live.first() else { continue };
        let Some(l) = latest[first] else { continue };
        let Some(leader) = l.leader else { continue };
        let Some(lp) = ids.iter().position(|&id| id == leader) else { continue };
        if l.term > above && !down(outages, lp as u32, t) && live.iter().all(|&p| latest[p] == Some(l)) {
            return Some((t, l));
        }
    }
    None
}

/// A leadership lost at a time: the leader's position, when, and what it believed.
struct Lost {
    position: u32,
    at: u64,
    leadership: Leadership,
}

impl Lost {
    /// Its failover: detected by the first change of belief at or after it of a node `watches`
    /// counts, agreed as [`agreement`] says with `outages` counted as down (`None`: nobody can
    /// agree), with the messages sent from the loss to the agreement.
    fn measure(
        &self,
        ids: &[u64],
        timeline: &[LeadershipEvent],
        outages: Option<&[Outage]>,
        message_times: &[u64],
        watches: impl Fn(u32) -> bool,
    ) -> Failover {
        let (at, l) = (self.at, self.leadership);
        let detected =
            timeline.iter().find(|e| e.time >= at && watches(e.position) && e.leadership != l).map(|e| e.time - at);
        let agreed = outages.and_then(|o| agreement(ids, timeline, o, at, l.term));
        let messages = agreed.map(|(t, _)| {
            let lo = message_times.partition_point(|&m| m < at);
            let hi = message_times.partition_point(|&m| m <= t);
            (hi - lo) as u64
        });
        Failover {
            position: self.position,
            term: l.term,
            crashed: at,
            detection: detected,
            agreement: agreed.map(|(t, _)| t - at),
            new_leader: agreed.and_then(|(_, l)| l.leader.map(|id| (id, l.term))),
            messages,
        }
    }
}

/// Every crash of a leader in `outages` and its failover. A crashed node was
/// a leader if its latest belief before the crash named itself.
pub fn failovers(
    ids: &[u64],
    timeline: &[LeadershipEvent],
    outages: &[Outage],
    message_times: &[u64],
) -> Vec<Failover> {
    let mut out = Vec::new();
    for o in outages {
        let before = timeline.iter().rev().find(|e| e.position == o.position && e.time < o.crashed);
        let Some(l) = before.map(|e| e.leadership) else { continue };
        if l.leader != Some(ids[o.position as usize]) {
            continue;
        }
        let lost = Lost { position: o.position, at: o.crashed, leadership: l };
        out.push(lost.measure(ids, timeline, Some(outages), message_times, |p| p != o.position));
    }
    out
}

/// Every leader a partition in `splits` cut off from every majority, and its
/// failover, measured as for a crash ([`failovers`]) with the nodes outside
/// the majority's group counted as down while the partition lasts: the
/// cut-off leader may go on believing it leads (until its lease or its
/// detector tells it otherwise), and the majority must agree on another of a
/// higher term. Under a partition with no majority group nobody can: it is
/// listed with no agreement. Its `crashed` is when it happened (the
/// partition's start).
pub fn cut_off_failovers(
    ids: &[u64],
    timeline: &[LeadershipEvent],
    outages: &[Outage],
    splits: &[crate::faults::Split],
    message_times: &[u64],
) -> Vec<Failover> {
    let n = ids.len();
    let mut out = Vec::new();
    for split in splits {
        let majority = split.groups.iter().find(|g| 2 * g.len() > n);
        let in_majority = |p: u32| majority.is_some_and(|g| g.contains(&p));
        // The nodes outside the majority, down as far as the failover is concerned.
        let mut counted: Vec<Outage> = outages.to_vec();
        counted.extend((0..n as u32).filter(|&p| !in_majority(p)).map(|p| Outage {
            position: p,
            crashed: split.from,
            recovered: split.until,
        }));
        for p in (0..n as u32).filter(|&p| !in_majority(p) && !down(outages, p, split.from)) {
            let before = timeline.iter().rev().find(|e| e.position == p && e.time < split.from);
            let Some(l) = before.map(|e| e.leadership) else { continue };
            if l.leader != Some(ids[p as usize]) {
                continue;
            }
            let lost = Lost { position: p, at: split.from, leadership: l };
            let counted = majority.map(|_| counted.as_slice());
            out.push(lost.measure(ids, timeline, counted, message_times, in_majority));
        }
    }
    out
}

/// Why an agreed leadership ended when no crash or partition of its leader
/// explains it ([`belief_failovers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// A higher term reached the leader (a node that came back with one, or
    /// an election it did not win): it names another leader or a later term.
    Deposed,
    /// The leader names no leader in its own term now (a lease not renewed,
    /// CheckQuorum).
    SteppedDown,
    /// The leader was paused (it took no step) when the others moved on.
    Paused,
}

/// Every agreed leadership that ended without a crash or a cut-off of its
/// leader (those are [`failovers`] and [`cut_off_failovers`]), and its
/// failover, measured as for a crash from when it was lost: when the leader
/// first believed otherwise, or, if it was paused then (`pauses`: position,
/// from, until), when its pause began. The next agreed leadership is looked
/// for from there on.
pub fn belief_failovers(
    ids: &[u64],
    timeline: &[LeadershipEvent],
    outages: &[Outage],
    splits: &[crate::faults::Split],
    pauses: &[(u32, u64, u64)],
    message_times: &[u64],
) -> Vec<(Failover, Ended)> {
    let n = ids.len();
    // The nodes a partition cuts off from its majority count as down while it lasts, as for
    // [`cut_off_failovers`]: the majority's leader is agreed without them.
    let mut counted: Vec<Outage> = outages.to_vec();
    for split in splits {
        let Some(majority) = split.groups.iter().find(|g| 2 * g.len() > n) else { continue };
        let minority = (0..n as u32).filter(|p| !majority.contains(p));
        counted.extend(minority.map(|p| Outage { position: p, crashed: split.from, recovered: split.until }));
    }
    let outages = counted.as_slice();
    let mut out = Vec::new();
    let (mut from, mut above) = (0, 0);
    while let Some((t, l)) = agreement(ids, timeline, outages, from, above) {
        let Some(lp) = l.leader.and_then(|id| ids.iter().position(|&x| x == id)).map(|p| p as u32) else { break };
        let changed = timeline.iter().find(|e| e.time > t && e.position == lp && e.leadership != l);
        let crashed = outages.iter().filter(|o| o.position == lp && o.crashed > t).map(|o| o.crashed).min();
        let cut = splits
            .iter()
            .filter(|s| s.from > t && !s.groups.iter().any(|g| 2 * g.len() > n && g.contains(&lp)))
            .map(|s| s.from)
            .min();
        let Some(changed) = changed else { break };
        let fault = crashed.into_iter().chain(cut).min();
        if fault.is_some_and(|f| f <= changed.time) {
            // A crash or a cut of the leader ended it: the other lists have it.
            (from, above) = (fault.unwrap_or(changed.time), l.term);
            continue;
        }
        // The same leader agreed again in the same term (it stepped down for a moment and took
        // its own record back) is no failover.
        let below = l.term.saturating_sub(1);
        if let Some((again, _)) = agreement(ids, timeline, outages, changed.time, below).filter(|a| a.1 == l) {
            (from, above) = (again, below);
            continue;
        }
        let paused = pauses
            .iter()
            .find(|&&(p, start, until)| p == lp && start > t && start < changed.time && until >= changed.time);
        let (at, why) = match (paused, changed.leadership) {
            (Some(&(_, start, _)), _) => (start, Ended::Paused),
            (None, now) if now.term == l.term && now.leader.is_none() => (changed.time, Ended::SteppedDown),
            (None, _) => (changed.time, Ended::Deposed),
        };
        let lost = Lost { position: lp, at, leadership: l };
        out.push((lost.measure(ids, timeline, Some(outages), message_times, |p| p != lp), why));
        (from, above) = (changed.time, l.term);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::Scheduled;

    fn ev(time: u64, position: u32, term: u64, leader: Option<u64>) -> LeadershipEvent {
        LeadershipEvent { time, position, leadership: Leadership { term, leader } }
    }

    /// Five nodes follow id 5 at term 1; at 100 a partition cuts it off with id 4, and the other
    /// three (a majority) elect id 3 in term 2 by 160 while id 5 still believes it leads: one
    /// failover, detected at 30, agreed at 60, counting the majority only. A partition that leaves
    /// no majority gives a failover with no agreement; one that leaves the leader with the
    /// majority gives none.
    #[test]
    fn a_leader_cut_off_from_the_majority_fails_over() {
        use crate::faults::Split;
        let ids = [1, 2, 3, 4, 5];
        let mut tl: Vec<LeadershipEvent> = (0..5).map(|p| ev(1, p, 1, Some(5))).collect();
        tl.extend([ev(130, 0, 1, None), ev(140, 2, 2, Some(3)), ev(150, 0, 2, Some(3)), ev(160, 1, 2, Some(3))]);
        let times = [0, 50, 100, 120, 160, 170];
        let cut = |groups: Vec<Vec<u32>>| [Split { from: 100, until: None, groups }];
        let f = cut_off_failovers(&ids, &tl, &[], &cut(vec![vec![3, 4], vec![0, 1, 2]]), &times);
        assert_eq!(
            f,
            vec![Failover {
                position: 4,
                term: 1,
                crashed: 100,
                detection: Some(30),
                agreement: Some(60),
                new_leader: Some((3, 2)),
                messages: Some(3),
            }]
        );
        let split_three_ways = cut_off_failovers(&ids, &tl, &[], &cut(vec![vec![4], vec![0, 1], vec![2, 3]]), &times);
        assert_eq!(split_three_ways.len(), 1);
        assert_eq!(split_three_ways[0].agreement, None);
        assert!(cut_off_failovers(&ids, &tl, &[], &cut(vec![vec![0, 1], vec![2, 3, 4]]), &times).is_empty());
    }

    /// Three nodes follow id 3 at term 1; it crashes at 100, node 1 starts electing at 130, node 2
    /// leads term 2 at 150 and node 1 follows at 152: detection 30, agreement 52, and the messages
    /// of [100, 152] only.
    #[test]
    fn one_failover_measured() {
        let ids = [1, 2, 3];
        let tl = vec![
            ev(0, 2, 1, Some(3)),
            ev(1, 0, 1, Some(3)),
            ev(1, 1, 1, Some(3)),
            ev(130, 0, 1, None),
            ev(150, 1, 2, Some(2)),
            ev(152, 0, 2, Some(2)),
        ];
        let outs = [Outage { position: 2, crashed: 100, recovered: None }];
        let times = [0, 0, 1, 99, 100, 130, 131, 150, 152, 153];
        let f = failovers(&ids, &tl, &outs, &times);
        assert_eq!(
            f,
            vec![Failover {
                position: 2,
                term: 1,
                crashed: 100,
                detection: Some(30),
                agreement: Some(52),
                new_leader: Some((2, 2)),
                messages: Some(5),
            }]
        );
    }

    /// A follower's crash is no failover; a node that recovered must learn the leader before
    /// the cluster agrees; a leader that never gets replaced has no agreement.
    #[test]
    fn followers_recoveries_and_no_agreement() {
        let ids = [1, 2, 3];
        let tl = vec![ev(0, 2, 1, Some(3)), ev(1, 0, 1, Some(3)), ev(1, 1, 1, Some(3))];
        let follower = [Outage { position: 0, crashed: 10, recovered: Some(20) }];
        assert!(failovers(&ids, &tl, &follower, &[]).is_empty());
        assert_eq!(agreement(&ids, &tl, &follower, 10, 0), Some((10, Leadership { term: 1, leader: Some(3) })));
        let mut learned = tl.clone();
        learned.push(ev(25, 0, 1, Some(3)));
        assert_eq!(agreement(&ids, &learned, &follower, 20, 0).map(|(t, _)| t), Some(25));
        let leader = [Outage { position: 2, crashed: 10, recovered: None }];
        let f = failovers(&ids, &tl, &leader, &[]);
        assert_eq!((f[0].detection, f[0].agreement, f[0].messages), (None, None, None));
    }

    /// Three nodes follow id 3 in term 1. At 100 id 3 hears term 4 (a node back from a cut) and
    /// follows nobody; all follow id 3 again in term 4 by 140: one failover, deposed, lost at 100,
    /// agreed at 40. Then id 3 names no leader in term 4 at 200 (a lease not renewed) and id 2
    /// leads term 5 by 260: stepped down. A crash of the leader is left to `failovers`, a pause of
    /// the leader dates the loss at the pause's start, and a leader that names no leader for a
    /// moment and is followed again in the same term has no failover.
    #[test]
    fn leaderships_that_end_without_a_fault_are_failovers() {
        let ids = [1, 2, 3];
        let mut tl: Vec<LeadershipEvent> = (0..3).map(|p| ev(1, p, 1, Some(3))).collect();
        tl.extend([ev(100, 2, 4, None), ev(120, 2, 4, Some(3)), ev(130, 0, 4, Some(3)), ev(140, 1, 4, Some(3))]);
        tl.extend([ev(200, 2, 4, None), ev(250, 1, 5, Some(2)), ev(255, 0, 5, Some(2)), ev(260, 2, 5, Some(2))]);
        let f = belief_failovers(&ids, &tl, &[], &[], &[], &[]);
        let seen: Vec<_> = f.iter().map(|(f, why)| (f.term, f.crashed, f.agreement, f.new_leader, *why)).collect();
        assert_eq!(
            seen,
            [(1, 100, Some(40), Some((3, 4)), Ended::Deposed), (4, 200, Some(60), Some((2, 5)), Ended::SteppedDown)]
        );
        let crash = [Outage { position: 2, crashed: 90, recovered: None }];
        assert!(belief_failovers(&ids, &tl, &crash, &[], &[], &[]).iter().all(|(f, _)| f.crashed != 100));
        let paused = belief_failovers(&ids, &tl, &[], &[], &[(2, 150, 200)], &[]);
        assert_eq!((paused[1].0.crashed, paused[1].1), (150, Ended::Paused));
        let mut blip: Vec<LeadershipEvent> = (0..3).map(|p| ev(1, p, 1, Some(3))).collect();
        blip.extend([ev(100, 2, 1, None), ev(110, 2, 1, Some(3))]);
        assert!(belief_failovers(&ids, &blip, &[], &[], &[(2, 50, 100)], &[]).is_empty());
    }

    /// Outages follow the plan's explicit crashes and recoveries in time order.
    #[test]
    fn outages_from_a_plan() {
        let s = |at, fault| Scheduled::new(at, 0, fault);
        let plan = FaultPlan {
            faults: vec![
                s(50, Fault::Recover { node: 1 }),
                s(10, Fault::Crash { node: 1 }),
                s(20, Fault::Crash { node: 1 }),
                s(60, Fault::Crash { node: 2 }),
            ],
        };
        assert_eq!(
            outages(&plan),
            vec![
                Outage { position: 1, crashed: 10, recovered: Some(50) },
                Outage { position: 2, crashed: 60, recovered: None }
            ]
        );
    }
}
