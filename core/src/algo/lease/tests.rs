use super::*;
use crate::algo::harness::Feed;
use crate::algo::kept::testing::{self, decide, lead};
use crate::algo::{Effect, catalogue};
use crate::faults::{Fault, FaultPlan, Scheduled};
use crate::invariants;
use crate::sim::{self, SimConfig, SimReport};
use crate::topology::Topology;

const IDS: [u64; 5] = [3, 7, 1, 8, 2];
const CFG: LeaseConfig = LeaseConfig::LOOPBACK;
/// The loopback timing with RenewDeadline from each write's send.
const SEND: LeaseConfig = LeaseConfig { renew_from: RenewFrom::Send, ..CFG };

/// Node `id` of {1, 2, 3} with the loopback timing (coin 0).
fn node(id: u64) -> Lease {
    node_cfg(id, CFG)
}

/// Node `id` of {1, 2, 3} with `cfg` (coin 0).
fn node_cfg(id: u64, cfg: LeaseConfig) -> Lease {
    let peers: Vec<u64> = [1, 2, 3].into_iter().filter(|&p| p != id).collect();
    testing::node(id, &peers, |c| Lease::with_config(c, cfg))
}

/// The wait before the try after the `i`-th jitter draw of a node with coin 0 that does not lead.
fn jittered(i: u32) -> u64 {
    CFG.retry_period_ms + crate::protocol::coin(0, i % 8) % (CFG.retry_period_ms * 6 / 5)
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
    acquiring_cfg(id, CFG)
}

/// [`acquiring`] with `cfg`.
fn acquiring_cfg(id: u64, cfg: LeaseConfig) -> Lease {
    let (mut a, _) = testing::started(node_cfg(id, cfg));
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

/// With `renew_from = send` and no record, a node writes itself as holder
/// on revision 0, with its renew deadline started when it sends; written,
/// it leads term 1 and renews a RetryPeriod later on the revision it wrote,
/// without reading.
#[test]
fn send_rule_a_free_record_is_acquired_then_renewed() {
    let (mut a, _) = testing::started(node_cfg(2, SEND));
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
            set(RETRY_TIMER, jittered(0)),
        ]
    );
    // The same revision again: nothing restarts, it waits.
    timer(&mut a, RETRY_TIMER);
    assert_eq!(reply(&mut a, done(2, false, 4, Some(rec(3, 1)))), [cancel(OP_TIMER), set(RETRY_TIMER, jittered(1))]);
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

/// With `renew_from = send`, a holder whose renewals all fail stops leading
/// at the deadline of the last write that succeeded (RenewDeadline after
/// its send), not later.
#[test]
fn send_rule_a_holder_that_cannot_renew_stops_at_its_deadline() {
    let mut a = acquiring_cfg(2, SEND);
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

/// With `renew_from = send`, a written answer that comes after its own
/// deadline passed does not make the node lead: the lease it would rest on is over.
#[test]
fn send_rule_a_write_answered_after_its_deadline_gives_no_lease() {
    let mut a = acquiring_cfg(2, SEND);
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

/// A lost compare-and-swap reads as a read: the node follows the winner
/// (with `renew_from = send`, the lost write's deadline stops).
#[test]
fn a_lost_race_follows_the_winner() {
    for cfg in [CFG, SEND] {
        let mut a = acquiring_cfg(2, cfg);
        let effects = reply(&mut a, done(2, false, 1, Some(rec(3, 0))));
        assert!(effects.contains(&lead(1, Some(3))), "{effects:?}");
        let deadline_stopped = effects.contains(&cancel(DEADLINE_TIMERS[0]));
        assert_eq!(deadline_stopped, cfg.renew_from == RenewFrom::Send, "{effects:?}");
        assert!(!a.leading());
    }
}

/// On a planned stop the holder stops leading at once and writes the record
/// with no holder on its revision (ReleaseOnCancel); then it only reads.
#[test]
fn leaving_releases_the_record() {
    let mut a = acquiring(2);
    reply(&mut a, done(2, true, 1, Some(rec(2, 0))));
    reply(&mut a, done(3, true, 2, Some(rec(2, 0))));
    let mut out = Outbox::default();
    assert!(a.on_leave(&[], &mut out));
    let release = Effect::Store(StoreOp::Put { seq: 4, expect: 2, record: rec(0, 0), acquire: false });
    assert!(out.effects().contains(&lead(1, None)) && out.effects().contains(&release), "{:?}", out.effects());
    assert!(!a.on_leave(&[], &mut Outbox::default()), "a second leave hands nothing over");
    reply(&mut a, done(4, true, 3, Some(rec(0, 0))));
    let effects = timer(&mut a, RETRY_TIMER);
    assert_eq!(effects[0], Effect::Store(StoreOp::Get { seq: 5 }));
}

/// The loopback timing is client-go's ratios at the loopback detector's
/// period; every preset validates; RenewDeadline must stay below
/// LeaseDuration; the convergence bound is LD + 3·2.2·RP + 4δ; the
/// `renew_from` option picks the rule, client-go's round when not given.
#[test]
fn timing_presets() {
    assert_eq!(LeaseConfig::for_detector(DetectorConfig::LOOPBACK), LeaseConfig::LOOPBACK);
    for c in [LeaseConfig::LOOPBACK, LeaseConfig::PRODUCTION, LeaseConfig::ONE_SHOT] {
        c.validate().unwrap();
    }
    let bad = LeaseConfig { renew_deadline_ms: 400, ..LeaseConfig::LOOPBACK };
    assert!(bad.validate().unwrap_err().0.contains("lease_duration_ms"));
    assert_eq!(convergence_bound_ms(LeaseConfig::PRODUCTION, 0), 15_000 + 3 * 4_400);
    assert_eq!(convergence_bound_ms(LeaseConfig::LOOPBACK, 16), 375 + 3 * 110 + 64);
    let chosen = |v: &str| {
        let o = [("renew_from".to_string(), v.to_string())];
        CFG.with_chosen(crate::algo::Options(&o)).renew_from
    };
    assert_eq!((chosen("send"), chosen("round")), (RenewFrom::Send, RenewFrom::Round));
    assert_eq!(CFG.with_chosen(crate::algo::Options(&[])).renew_from, RenewFrom::Round);
    assert!(RenewFrom::parse("sent").unwrap_err().to_string().contains("round or send"));
}

/// The clock-rate tolerance ρ < (LD − H) / (LD + H), H the longest a
/// holder leads after its last success: RP + RD by client-go's round rule,
/// 1/9 (11.1%) at its defaults 15/10/2 s and at the loopback ones; RD from
/// the write's send, 1/5 (20%).
#[test]
fn clock_tolerance_at_the_presets() {
    for c in [LeaseConfig::PRODUCTION, LeaseConfig::LOOPBACK] {
        assert!((clock_tolerance(c) - 1.0 / 9.0).abs() < 1e-12, "{c:?}");
        let send = LeaseConfig { renew_from: RenewFrom::Send, ..c };
        assert!((clock_tolerance(send) - 1.0 / 5.0).abs() < 1e-12, "{c:?}");
    }
}

// ---- client-go's timing ------------------------------------------------------

/// Node `id` of {1, 2, 3} with `cfg` and the random bits `coin`.
fn node_with(id: u64, cfg: LeaseConfig, coin: u64) -> Lease {
    let peers: Vec<u64> = [1, 2, 3].into_iter().filter(|&p| p != id).collect();
    let info: Vec<crate::algo::PortInfo> =
        peers.iter().map(|&p| crate::algo::PortInfo { neighbour: p, ..Default::default() }).collect();
    let c = NodeContext { id, rule: Rule::Max, n: 3, coin, ports: 2, port_info: &info, ..Default::default() };
    Lease::with_config(&c, cfg)
}

/// A node that finds the record held waits RetryPeriod plus a draw in
/// [0, 1.2·RetryPeriod) before each next try (client-go's `JitterUntil` with
/// JitterFactor 1.2): the i-th wait is RP + coin(node's coin, i mod 8) mod
/// 1.2·RP, the same for the same coin, so the simulator and a live node draw alike.
#[test]
fn acquire_retries_wait_retry_period_plus_jitter() {
    let coin = 0x5eed;
    let mut a = node_with(2, CFG, coin);
    a.on_start(&mut Outbox::default());
    let spread = CFG.retry_period_ms * 6 / 5;
    let mut waits = Vec::new();
    for i in 0..10u32 {
        let effects = reply(&mut a, done(i + 1, false, 4, Some(rec(3, 1))));
        let Some(&Effect::SetTimer { after_ms, .. }) =
            effects.iter().find(|e| matches!(e, Effect::SetTimer { timer: RETRY_TIMER, .. }))
        else {
            panic!("no retry: {effects:?}")
        };
        assert_eq!(after_ms, CFG.retry_period_ms + crate::protocol::coin(coin, i % 8) % spread, "try {i}");
        waits.push(after_ms);
        timer(&mut a, RETRY_TIMER);
    }
    assert!(waits.iter().any(|&w| w != waits[0]), "the waits vary: {waits:?}");
    assert_eq!(waits[8..], waits[..2], "eight draws, then again: the state stays finite");
}

/// client-go's renew loop: after a success the next round starts a
/// RetryPeriod later, and the holder leads until no try of the round has
/// succeeded within RenewDeadline of the round's start. Acquiring starts a
/// round at once (client-go's `renew` right after `acquire`); a failed try
/// is retried a RetryPeriod later, within the round, still leading.
#[test]
fn a_holder_leads_until_a_renewal_round_fails() {
    let mut a = acquiring(2);
    assert_eq!(
        reply(&mut a, done(2, true, 1, Some(rec(2, 0)))),
        [
            cancel(OP_TIMER),
            set(EXPIRE_TIMER, CFG.lease_duration_ms),
            lead(1, Some(2)),
            decide(Role::Leader, 2),
            set(DEADLINE_TIMERS[0], CFG.renew_deadline_ms),
            Effect::Store(StoreOp::Put { seq: 3, expect: 1, record: rec(2, 0), acquire: false }),
            set(OP_TIMER, CFG.retry_period_ms),
        ],
        "acquired: a renewal round starts at once"
    );
    assert_eq!(
        reply(&mut a, done(3, true, 2, Some(rec(2, 0)))),
        [
            cancel(OP_TIMER),
            set(EXPIRE_TIMER, CFG.lease_duration_ms),
            cancel(DEADLINE_TIMERS[0]),
            set(RETRY_TIMER, CFG.retry_period_ms)
        ],
        "renewed: the round ends, the next starts a RetryPeriod later"
    );
    assert_eq!(
        timer(&mut a, RETRY_TIMER),
        [
            set(DEADLINE_TIMERS[0], CFG.renew_deadline_ms),
            Effect::Store(StoreOp::Put { seq: 4, expect: 2, record: rec(2, 0), acquire: false }),
            set(OP_TIMER, CFG.retry_period_ms),
        ],
        "a round: its deadline starts, and a try at once"
    );
    assert_eq!(
        reply(&mut a, StoreReply::Failed { seq: 4 }),
        [cancel(OP_TIMER), set(RETRY_TIMER, CFG.retry_period_ms)],
        "a failed try: again a RetryPeriod later, the round's deadline running"
    );
    assert!(a.leading());
    assert_eq!(
        timer(&mut a, RETRY_TIMER),
        [
            Effect::Store(StoreOp::Put { seq: 5, expect: 2, record: rec(2, 0), acquire: false }),
            set(OP_TIMER, CFG.retry_period_ms)
        ],
        "the same round: no new deadline"
    );
    assert_eq!(timer(&mut a, DEADLINE_TIMERS[0]), [lead(1, None)], "the round's deadline: it stops leading");
    assert!(!a.leading());
    let late = reply(&mut a, done(5, true, 3, Some(rec(2, 0))));
    assert!(!a.leading() && !late.contains(&lead(1, Some(2))), "a try of a failed round gives no lease: {late:?}");
}

/// Expiry is judged by the lease duration the record carries (client-go's
/// `observedTime + LeaseDurationSeconds` of the observed record), not by
/// the observer's own; a forged duration beyond a day counts as a day.
#[test]
fn expiry_is_judged_by_the_records_duration() {
    let (mut a, _) = testing::started(node(2));
    let long = LeaseRecord { holder: 3, duration_ms: 1_000, transitions: 1 };
    let effects = reply(&mut a, done(1, false, 4, Some(long)));
    assert_eq!(effects[1], set(EXPIRE_TIMER, 1_000), "{effects:?}");
    timer(&mut a, RETRY_TIMER);
    let forged = LeaseRecord { duration_ms: u64::MAX, ..long };
    let effects = reply(&mut a, done(2, false, 5, Some(forged)));
    assert_eq!(effects[1], set(EXPIRE_TIMER, 86_400_000), "{effects:?}");
}

/// `validate` makes client-go's checks (`NewLeaderElector`): LeaseDuration
/// > RenewDeadline > 1.2·RetryPeriod (JitterFactor) > 0, each refusal naming the field.
#[test]
fn validation_matches_client_go() {
    let c = |ld, rd, rp| LeaseConfig {
        lease_duration_ms: ld,
        renew_deadline_ms: rd,
        retry_period_ms: rp,
        ..LeaseConfig::LOOPBACK
    };
    assert!(c(375, 61, 50).validate().is_ok(), "61 > 1.2 × 50");
    let field = |c: LeaseConfig| c.validate().unwrap_err().0;
    assert!(field(c(375, 60, 50)).contains("renew_deadline_ms must be above 1.2 × retry_period_ms"));
    assert!(field(c(375, 55, 50)).contains("renew_deadline_ms"));
    assert!(field(c(250, 250, 50)).contains("lease_duration_ms"));
    assert!(field(c(375, 250, 0)).contains("retry_period_ms"));
    assert!(field(c(u64::MAX, u64::MAX - 1, u64::MAX)).contains("renew_deadline_ms"), "no overflow");
}

// ---- simulated runs ----------------------------------------------------------

/// A kept run of `IDS` with the loopback timing and `faults` at their times.
fn kept(seed: u64, faults: Vec<(u64, Fault)>, horizon: u64) -> SimReport {
    kept_with(seed, faults, horizon, DetectorConfig::LOOPBACK, &[])
}

/// [`kept`] with the timing of `detector` and the election's `options`.
fn kept_with(
    seed: u64,
    faults: Vec<(u64, Fault)>,
    horizon: u64,
    detector: DetectorConfig,
    options: &[(&str, &str)],
) -> SimReport {
    let n = IDS.len() as u32;
    let faults = faults.into_iter().map(|(at, fault)| Scheduled::new(at, at, fault)).collect();
    let options = options.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect();
    let cfg = SimConfig {
        seed,
        max_delay: 8,
        faults: FaultPlan { faults },
        horizon: Some(horizon),
        detector,
        options,
        ..SimConfig::default()
    };
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
/// before LeaseDuration, and the leaving node learns who, within two of the
/// longest waits between tries (2.2·RP each) and the store's round trips.
#[test]
fn a_planned_stop_hands_over_quickly() {
    for seed in 0..20 {
        let r = kept(seed, vec![(1_000, Fault::LeaveLeader)], 3_000);
        at_most_one_at_once(&r, seed);
        let (t, _) = agreed_after(&r, 1_001).unwrap_or_else(|| panic!("seed {seed}: no handover"));
        assert!(t - 1_000 < CFG.lease_duration_ms, "seed {seed}: handed over after {} ms", t - 1_000);
        let bound = 2 * longest_wait_ms(CFG.retry_period_ms) + 32;
        assert!(t - 1_000 <= bound, "seed {seed}: handed over after {} ms", t - 1_000);
    }
}

/// A holder cut off from the store stops leading when its renewal round
/// fails (at most RP + RD after the cut), before any other node takes the
/// record (LeaseDuration after it last saw a change), and another takes it;
/// healed, the old holder follows.
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
        let latest = 1_000 + CFG.retry_period_ms + CFG.renew_deadline_ms;
        assert!(stopped <= latest, "seed {seed}: stopped at {stopped}");
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

/// client-go's production timing (15/10/2 s): RetryPeriod the detector's period.
const PRODUCTION_TIMING: DetectorConfig = DetectorConfig { period_ms: 2_000, timeout_ms: 8_000 };
/// When the clocks change (every timer set from then on runs at its node's rate), and when the
/// holder is cut off from the store, many rounds later.
const CLOCKS_AT: u64 = 1_000;
const CUT_AT: u64 = 30_000;

/// Did two live positions believe they led at once, at the end of some instant?
fn two_at_once(r: &SimReport) -> bool {
    r.leaderships.iter().any(|e| leaders_at(r, e.time).len() > 1)
}

/// A run at client-go's production timing (`renew_from` as given) in which, from [`CLOCKS_AT`],
/// the holder's clock runs at 1 − ρ and every other node's at 1 + ρ, and the holder is cut off
/// from the store at [`CUT_AT`]: the worst case of clock rates within ±ρ.
fn skewed(seed: u64, renew_from: &str, rho: f64) -> SimReport {
    let options = [("renew_from", renew_from)];
    let first = kept_with(seed, vec![], CLOCKS_AT, PRODUCTION_TIMING, &options);
    let [holder] = leaders_at(&first, CLOCKS_AT)[..] else { panic!("seed {seed}: no leader") };
    let mut faults: Vec<(u64, Fault)> = (0..IDS.len() as u32)
        .map(|node| (CLOCKS_AT, Fault::Clock { node, rate: if node == holder { 1.0 - rho } else { 1.0 + rho } }))
        .collect();
    faults.push((CUT_AT, Fault::Store { node: Some(holder), cut: true, delay_ms: 0 }));
    let r = kept_with(seed, faults, CUT_AT + 40_000, PRODUCTION_TIMING, &options);
    assert!(leaders_at(&r, CUT_AT - 1) == [holder], "seed {seed}: {holder} no longer leads at the cut");
    assert!(
        r.leaderships.iter().any(|e| e.time > CUT_AT && e.position != holder && leaders_at(&r, e.time) != [holder]),
        "seed {seed}: nobody took over"
    );
    r
}

/// The clock-rate tolerance at its boundary, 50 seeds each, the holder's clock slow and every
/// other clock fast by ρ, the holder cut off from the store: with client-go's round rule, ρ =
/// 11% (just inside 1/9) never gives two leaders at once and ρ = 25% always does; with
/// `renew_from = send`, ρ = 19% (just inside 1/5) never does and ρ = 40% always does.
#[test]
fn clock_rates_within_the_tolerance_keep_one_leader_and_beyond_it_do_not() {
    for (renew_from, inside, outside) in [("round", 0.11, 0.25), ("send", 0.19, 0.4)] {
        let mode = LeaseConfig { renew_from: RenewFrom::parse(renew_from).unwrap(), ..LeaseConfig::PRODUCTION };
        assert!(inside < clock_tolerance(mode) && clock_tolerance(mode) < outside, "{renew_from}");
        for seed in 0..50 {
            assert!(!two_at_once(&skewed(seed, renew_from, inside)), "{renew_from} seed {seed}: two at {inside}");
            assert!(two_at_once(&skewed(seed, renew_from, outside)), "{renew_from} seed {seed}: one at {outside}");
        }
    }
}

/// A measurement, not a check: for each rule and ρ from 10% to 31% in 1% steps, how many of 50
/// seeds of [`skewed`] give two leaders at once (the figures in the module docs).
#[test]
#[ignore = "a measurement: prints the share of seeds with two leaders at once per clock-rate error"]
fn clock_rate_sweep() {
    for renew_from in ["round", "send"] {
        for pct in 10..32 {
            let rho = f64::from(pct) / 100.0;
            let overlapping = (0..50).filter(|&seed| two_at_once(&skewed(seed, renew_from, rho))).count();
            eprintln!("renew_from={renew_from} rho={pct}%: {overlapping} of 50 seeds with two leaders at once");
        }
    }
}
