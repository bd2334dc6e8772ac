use super::*;
use crate::algo::kept::testing::{self, decide, lead};
use crate::algo::{Effect, catalogue};
use crate::faults::{Fault, FaultPlan, Scheduled};
use crate::invariants;
use crate::sim::{self, SimConfig, SimReport};
use crate::topology::Topology;

const IDS: [u64; 5] = [3, 7, 1, 8, 2];
const CFG: LeaseConfig = LeaseConfig::LOOPBACK;

/// Node `id` of {1, 2, 3} with the loopback timing.
fn node(id: u64) -> Lease {
    let peers: Vec<u64> = [1, 2, 3].into_iter().filter(|&p| p != id).collect();
    testing::node(id, &peers, |c| Lease::with_config(c, CFG))
}

fn rec(holder: u64, transitions: u64) -> LeaseRecord {
    LeaseRecord { holder, duration_ms: CFG.lease_duration_ms, transitions }
}

fn done(seq: u32, written: bool, revision: u64, record: Option<LeaseRecord>) -> StoreReply {
    StoreReply::Done { seq, written, revision, record }
}

fn reply(a: &mut Lease, r: StoreReply) -> Vec<Effect> {
    let mut out = Outbox::default();
    a.on_store_reply(r, &mut out);
    out.effects().to_vec()
}

fn timer(a: &mut Lease, t: TimerId) -> Vec<Effect> {
    let mut out = Outbox::default();
    a.on_timer(t, &mut out);
    out.effects().to_vec()
}

fn set(timer: TimerId, after_ms: u64) -> Effect {
    Effect::SetTimer { timer, after_ms }
}

fn cancel(timer: TimerId) -> Effect {
    Effect::CancelTimer { timer }
}

/// `node` started and answered that the store holds no record: it is about
/// to have written itself as holder (its write in flight, seq 2).
fn acquiring(id: u64) -> Lease {
    let (mut a, _) = testing::started(node(id));
    reply(&mut a, done(1, false, 0, None));
    a
}

/// A node that starts reads the record first, with a RetryPeriod to answer.
#[test]
fn start_reads_the_record() {
    let (_, out) = testing::started(node(2));
    assert_eq!(
        out.effects(),
        [lead(0, None), Effect::Store(StoreOp::Get { seq: 1 }), set(OP_TIMER, CFG.retry_period_ms)]
    );
}

/// With no record, a node writes itself as holder on revision 0, with its
/// renew deadline started when it sends; written, it leads term 1 and
/// renews a RetryPeriod later on the revision it wrote, without reading.
#[test]
fn a_free_record_is_acquired_then_renewed() {
    let (mut a, _) = testing::started(node(2));
    assert_eq!(
        reply(&mut a, done(1, false, 0, None)),
        [
            cancel(OP_TIMER),
            set(DEADLINE_TIMERS[0], CFG.renew_deadline_ms),
            Effect::Store(StoreOp::Put { seq: 2, expect: 0, record: rec(2, 0), acquire: true }),
            set(OP_TIMER, CFG.retry_period_ms),
        ]
    );
    assert_eq!(
        reply(&mut a, done(2, true, 1, Some(rec(2, 0)))),
        [
            cancel(OP_TIMER),
            set(EXPIRE_TIMER, CFG.lease_duration_ms),
            lead(1, Some(2)),
            decide(Role::Leader, 2),
            set(RETRY_TIMER, CFG.retry_period_ms),
        ]
    );
    assert!(a.leading());
    // The renewal's deadline runs in the other slot while the lease's keeps running.
    assert_eq!(
        timer(&mut a, RETRY_TIMER),
        [
            set(DEADLINE_TIMERS[1], CFG.renew_deadline_ms),
            Effect::Store(StoreOp::Put { seq: 3, expect: 1, record: rec(2, 0), acquire: false }),
            set(OP_TIMER, CFG.retry_period_ms),
        ]
    );
    // Written: it leads on the renewal's deadline, and the older one stops.
    let effects = reply(&mut a, done(3, true, 2, Some(rec(2, 0))));
    assert!(effects.contains(&cancel(DEADLINE_TIMERS[0])), "{effects:?}");
    assert_eq!(timer(&mut a, DEADLINE_TIMERS[0]), [], "a stopped deadline ends nothing");
    assert!(a.leading());
}

/// A node that finds another holder follows it, and takes the record over
/// only once it has seen it unchanged for LeaseDuration (its expiry timer),
/// on the revision it saw, as holder of the next transition.
#[test]
fn a_held_record_is_taken_only_after_it_expired() {
    let (mut a, _) = testing::started(node(2));
    assert_eq!(
        reply(&mut a, done(1, false, 4, Some(rec(3, 1)))),
        [
            cancel(OP_TIMER),
            set(EXPIRE_TIMER, CFG.lease_duration_ms),
            lead(2, Some(3)),
            decide(Role::Follower, 3),
            set(RETRY_TIMER, CFG.retry_period_ms),
        ]
    );
    // The same revision again: nothing restarts, it waits.
    timer(&mut a, RETRY_TIMER);
    assert_eq!(reply(&mut a, done(2, false, 4, Some(rec(3, 1)))), [cancel(OP_TIMER), set(RETRY_TIMER, 50)]);
    assert_eq!(timer(&mut a, EXPIRE_TIMER), [lead(2, None)]);
    timer(&mut a, RETRY_TIMER);
    let effects = reply(&mut a, done(3, false, 4, Some(rec(3, 1))));
    assert!(
        effects.contains(&Effect::Store(StoreOp::Put { seq: 4, expect: 4, record: rec(2, 2), acquire: true })),
        "{effects:?}"
    );
}

/// A renewal observed in time restarts the observer's expiry: the holder
/// keeps the record for as long as it renews.
#[test]
fn a_renewed_record_does_not_expire() {
    let (mut a, _) = testing::started(node(2));
    reply(&mut a, done(1, false, 4, Some(rec(3, 1))));
    timer(&mut a, RETRY_TIMER);
    let effects = reply(&mut a, done(2, false, 5, Some(rec(3, 1))));
    assert_eq!(effects[1], set(EXPIRE_TIMER, CFG.lease_duration_ms), "{effects:?}");
    assert!(!effects.iter().any(|e| matches!(e, Effect::Store(_))), "{effects:?}");
}

/// A holder whose renewals all fail stops leading at the deadline of the
/// last write that succeeded, not later.
#[test]
fn a_holder_that_cannot_renew_stops_at_its_deadline() {
    let mut a = acquiring(2);
    reply(&mut a, done(2, true, 1, Some(rec(2, 0))));
    timer(&mut a, RETRY_TIMER); // renewal seq 3 in slot 1
    let failed = reply(&mut a, StoreReply::Failed { seq: 3 });
    assert_eq!(failed, [cancel(OP_TIMER), cancel(DEADLINE_TIMERS[1]), set(RETRY_TIMER, CFG.retry_period_ms)]);
    timer(&mut a, RETRY_TIMER); // renewal seq 4, unanswered
    let silent = timer(&mut a, OP_TIMER);
    assert!(silent.contains(&cancel(DEADLINE_TIMERS[1])), "the unanswered write's deadline stops: {silent:?}");
    assert!(a.leading());
    assert_eq!(timer(&mut a, DEADLINE_TIMERS[0]), [lead(1, None)]);
    assert!(!a.leading());
}

/// A written answer that comes after its own deadline passed does not make
/// the node lead: the lease it would rest on is over.
#[test]
fn a_write_answered_after_its_deadline_gives_no_lease() {
    let mut a = acquiring(2);
    timer(&mut a, DEADLINE_TIMERS[0]);
    let effects = reply(&mut a, done(2, true, 1, Some(rec(2, 0))));
    assert!(!a.leading() && !effects.contains(&lead(1, Some(2))), "{effects:?}");
}

/// An answer to an operation the node gave up on (an older tag) changes nothing.
#[test]
fn a_late_answer_is_ignored() {
    let mut a = acquiring(2);
    timer(&mut a, OP_TIMER); // gives the write up, reads again (seq 3)
    assert_eq!(reply(&mut a, done(2, true, 1, Some(rec(2, 0)))), []);
    assert!(!a.leading());
}

/// A lost compare-and-swap reads as a read: the node follows the winner.
#[test]
fn a_lost_race_follows_the_winner() {
    let mut a = acquiring(2);
    let effects = reply(&mut a, done(2, false, 1, Some(rec(3, 0))));
    assert!(effects.contains(&cancel(DEADLINE_TIMERS[0])) && effects.contains(&lead(1, Some(3))), "{effects:?}");
    assert!(!a.leading());
}

/// On a planned stop the holder stops leading at once and writes the record
/// with no holder on its revision (ReleaseOnCancel); then it only reads.
#[test]
fn leaving_releases_the_record() {
    let mut a = acquiring(2);
    reply(&mut a, done(2, true, 1, Some(rec(2, 0))));
    let mut out = Outbox::default();
    assert!(a.on_leave(&[], &mut out));
    let release = Effect::Store(StoreOp::Put { seq: 3, expect: 1, record: rec(0, 0), acquire: false });
    assert!(out.effects().contains(&lead(1, None)) && out.effects().contains(&release), "{:?}", out.effects());
    assert!(!a.on_leave(&[], &mut Outbox::default()), "a second leave hands nothing over");
    reply(&mut a, done(3, true, 2, Some(rec(0, 0))));
    let effects = timer(&mut a, RETRY_TIMER);
    assert_eq!(effects[0], Effect::Store(StoreOp::Get { seq: 4 }));
}

/// The loopback timing is client-go's ratios at the loopback detector's
/// period; every preset validates; RenewDeadline must stay below LeaseDuration.
#[test]
fn timing_presets() {
    assert_eq!(LeaseConfig::for_detector(DetectorConfig::LOOPBACK), LeaseConfig::LOOPBACK);
    for c in [LeaseConfig::LOOPBACK, LeaseConfig::PRODUCTION, LeaseConfig::ONE_SHOT] {
        c.validate().unwrap();
    }
    let bad = LeaseConfig { renew_deadline_ms: 400, ..LeaseConfig::LOOPBACK };
    assert!(bad.validate().unwrap_err().0.contains("lease_duration_ms"));
    assert_eq!(convergence_bound_ms(LeaseConfig::PRODUCTION, 0), 21_000);
}

// ---- simulated runs ----------------------------------------------------------

/// A kept run of `IDS` with the loopback timing and `faults` at their times.
fn kept(seed: u64, faults: Vec<(u64, Fault)>, horizon: u64) -> SimReport {
    let n = IDS.len() as u32;
    let faults = faults.into_iter().map(|(at, fault)| Scheduled::new(at, at, fault)).collect();
    let cfg =
        SimConfig { seed, max_delay: 8, faults: FaultPlan { faults }, horizon: Some(horizon), ..SimConfig::default() };
    let spec = catalogue::find(NAME).unwrap();
    let all: Vec<u32> = (0..n).collect();
    let r = sim::run_kept(spec, &Topology::complete(n).unwrap(), &IDS, &all, Rule::Max, &cfg).unwrap();
    assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
    let timeline: Vec<_> = r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
    invariants::one_leader_per_term(&IDS, &timeline).unwrap();
    r
}

/// Is position `p` down at `t`?
fn down(r: &SimReport, p: u32, t: u64) -> bool {
    r.outages.iter().any(|o| o.position == p && o.crashed <= t && o.recovered.is_none_or(|back| t < back))
}

/// The belief of position `p` at the end of time `t`.
fn belief(r: &SimReport, p: u32, t: u64) -> Option<Leadership> {
    r.leaderships.iter().rev().find(|e| e.position == p && e.time <= t).map(|e| e.leadership)
}

/// The live positions that believe they lead at the end of `t`.
fn leaders_at(r: &SimReport, t: u64) -> Vec<u32> {
    (0..IDS.len() as u32)
        .filter(|&p| !down(r, p, t) && belief(r, p, t).is_some_and(|l| l.leader == Some(IDS[p as usize])))
        .collect()
}

/// Never two live leaders at the end of any instant.
fn at_most_one_at_once(r: &SimReport, seed: u64) {
    for e in &r.leaderships {
        let leaders = leaders_at(r, e.time);
        assert!(leaders.len() <= 1, "seed {seed}: {leaders:?} lead at {}", e.time);
    }
}

/// The first time from `from` on at which every live position follows one
/// live leader, and that leader.
fn agreed_after(r: &SimReport, from: u64) -> Option<(u64, u32)> {
    let mut times: Vec<u64> = r.leaderships.iter().map(|e| e.time).filter(|&t| t >= from).collect();
    times.insert(0, from);
    times.into_iter().find_map(|t| {
        let [leader] = leaders_at(r, t)[..] else { return None };
        let id = IDS[leader as usize];
        let live = (0..IDS.len() as u32).filter(|&p| !down(r, p, t));
        live.into_iter().all(|p| belief(r, p, t).is_some_and(|l| l.leader == Some(id))).then_some((t, leader))
    })
}

/// Without faults, one node takes the record and keeps it for the whole run:
/// every node follows it within the convergence bound, and no other ever leads.
#[test]
fn a_leader_is_elected_and_kept() {
    for seed in 0..20 {
        let r = kept(seed, vec![], 5_000);
        at_most_one_at_once(&r, seed);
        let (t, leader) = agreed_after(&r, 0).unwrap_or_else(|| panic!("seed {seed}: no agreement"));
        assert!(t <= convergence_bound_ms(CFG, 16), "seed {seed}: agreed at {t}");
        assert_eq!(leaders_at(&r, 5_000), [leader], "seed {seed}");
    }
}

/// Crash the holder: another node takes the record after LeaseDuration,
/// every live node follows it within the convergence bound, and no two live
/// nodes lead at once.
#[test]
fn a_crashed_holder_is_replaced() {
    for seed in 0..20 {
        let r = kept(seed, vec![(1_000, Fault::CrashLeader)], 4_000);
        at_most_one_at_once(&r, seed);
        let crashed = r.outages[0].position;
        let (t, leader) = agreed_after(&r, 1_001).unwrap_or_else(|| panic!("seed {seed}: no new leader"));
        assert_ne!(leader, crashed, "seed {seed}");
        assert!(t - 1_000 >= CFG.lease_duration_ms, "seed {seed}: taken over after {} ms", t - 1_000);
        assert!(t - 1_000 <= convergence_bound_ms(CFG, 16), "seed {seed}: taken over after {} ms", t - 1_000);
    }
}

/// A planned stop of the holder releases the record: another node leads well
/// before LeaseDuration, and the leaving node learns who.
#[test]
fn a_planned_stop_hands_over_quickly() {
    for seed in 0..20 {
        let r = kept(seed, vec![(1_000, Fault::LeaveLeader)], 3_000);
        at_most_one_at_once(&r, seed);
        let (t, _) = agreed_after(&r, 1_001).unwrap_or_else(|| panic!("seed {seed}: no handover"));
        assert!(t - 1_000 < CFG.lease_duration_ms, "seed {seed}: handed over after {} ms", t - 1_000);
        assert!(t - 1_000 <= 2 * CFG.retry_period_ms + 32, "seed {seed}: handed over after {} ms", t - 1_000);
    }
}

/// A holder cut off from the store stops leading at its renew deadline,
/// before any other node takes the record (LeaseDuration after it last saw
/// a change), and another takes it; healed, the old holder follows.
#[test]
fn a_holder_cut_off_from_the_store_stops_before_another_leads() {
    for seed in 0..20 {
        let first = kept(seed, vec![], 1_000);
        let [holder] = leaders_at(&first, 1_000)[..] else { panic!("seed {seed}: no leader") };
        let cut = Fault::Store { node: Some(holder), cut: true, delay_ms: 0 };
        let heal = Fault::Store { node: Some(holder), cut: false, delay_ms: 0 };
        let r = kept(seed, vec![(1_000, cut), (2_000, heal)], 3_000);
        at_most_one_at_once(&r, seed);
        let stopped = r.leaderships.iter().find(|e| e.time >= 1_000 && e.position == holder).map(|e| e.time);
        let stopped = stopped.unwrap_or_else(|| panic!("seed {seed}: the cut-off holder never stopped"));
        assert!(stopped <= 1_000 + CFG.renew_deadline_ms, "seed {seed}: stopped at {stopped}");
        let next =
            r.leaderships.iter().find(|e| e.time >= 1_000 && e.leadership.leader == Some(IDS[e.position as usize]));
        let next = next.unwrap_or_else(|| panic!("seed {seed}: nobody took over"));
        assert!(next.position != holder && next.time > stopped, "seed {seed}: {next:?} after {stopped}");
        let (_, leader) = agreed_after(&r, 2_500).unwrap_or_else(|| panic!("seed {seed}: no agreement after healing"));
        assert_ne!(leader, holder, "seed {seed}");
    }
}

/// A slow store (every operation 40 ms more each way, 1.6 RetryPeriods a
/// round trip) delays renewals but keeps one leader at a time.
#[test]
fn a_slow_store_keeps_one_leader_at_a_time() {
    for seed in 0..10 {
        let slow = Fault::Store { node: None, cut: false, delay_ms: 40 };
        let r = kept(seed, vec![(500, slow)], 3_000);
        at_most_one_at_once(&r, seed);
    }
}

/// The one-shot entry, with every node, one or two initiating: the best
/// initiator tries first and leads, and its n − 1 notifications make every
/// other node, initiator or not, follow it: exactly n − 1 messages.
#[test]
fn one_shot_elects_the_best_initiator() {
    let spec = catalogue::find(NAME).unwrap();
    let n = IDS.len() as u32;
    for (initiators, best) in [((0..n).collect::<Vec<u32>>(), 8), (vec![2], 1), (vec![0, 1], 7)] {
        let r = sim::run(spec, &Topology::complete(n).unwrap(), &IDS, &initiators, Rule::Max, &SimConfig::default());
        assert!(r.verdict.violations.is_empty() && r.errors.is_empty(), "{:?} {:?}", r.verdict.violations, r.errors);
        assert!(r.decisions.iter().all(|d| d.is_some_and(|d| d.leader == best)), "{:?}", r.decisions);
        assert_eq!(r.counters.messages, u64::from(n - 1));
    }
}

/// A kept node takes no message at all: a notification is refused, and an
/// implausible term is refused as such first.
#[test]
fn kept_nodes_take_no_messages() {
    let (mut a, _) = testing::started(node(2));
    let refused = a.on_message(0, Msg::Notify { leader: 1 }, &mut Outbox::default());
    assert!(matches!(refused, Err(AlgoError::UnexpectedKind { .. })), "{refused:?}");
    let forged = a.on_message(0, Msg::AppendEntries { term: u64::MAX, leader: 1, round: 1 }, &mut Outbox::default());
    assert!(matches!(forged, Err(AlgoError::Implausible { field: "term", .. })), "{forged:?}");
}
