use std::time::Duration;

use ringleader_proto::v1 as pb;
use ringleader_tests::{
    clear_faults, crash_the_leader, fault, first_leader, inject, leader_until, leads, start_kept, stop_kept,
};

/// Bully keeps a leader on 5 LIVE nodes: the highest id leads in term >= 1; crashing it with
/// `crash: {leader: true}` makes the next highest id lead with a higher term, agreed by every live node (the
/// crashed leader's frozen belief does not count); the timeline never shows two
/// leaders of one term; the crash is recorded as a failover with its detection and agreement times and
/// messages; recovering the crashed leader restarts it, and it bullies back with a higher term, agreed by
/// all; StopElection ends it FINISHED with no violations and the whole timeline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bully_keeps_a_leader_across_a_crash() {
    let (ctl, mut client, e) = start_kept("bully", 5).await;
    // Agreed first: the loss of a leader not yet agreed by all is no failover (docs: the tracker).
    let first = first_leader(&mut client, &e.election_id, 5).await;
    assert!(!first.since.is_empty());
    crash_the_leader(&mut client, &first).await;
    let second =
        leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 4) && l.term > first.term)
            .await;
    let second =
        leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed && l.term == second.term).await;
    assert_ne!(second.leader.as_ref().unwrap().node, first.leader.as_ref().unwrap().node);
    // The crash is recorded as a failover: detected, agreed, and (read from the nodes a moment later) its messages.
    let fo = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.last_failover.as_ref().is_some_and(|f| f.messages.is_some())
    })
    .await
    .last_failover
    .unwrap();
    assert_eq!(fo.leader.as_ref().map(|l| l.id), Some(5), "{fo:?}");
    assert_eq!((fo.term, fo.cause.as_str()), (first.term, "crash fault"), "{fo:?}");
    assert_eq!(fo.new_leader.as_ref().map(|l| l.id), Some(4), "{fo:?}");
    assert!(fo.new_term > fo.term, "{fo:?}");
    let (detection, agreement) = (fo.detection_ms.unwrap(), fo.agreement_ms.unwrap());
    assert!(detection <= agreement, "{fo:?}");
    assert!(
        fo.messages.unwrap() >= 4,
        "at least an election to the one better node, its answer and coordinators: {fo:?}"
    );
    // Recovery is a restart: the old leader comes back as a new incarnation (not frozen in its old
    // belief), bullies back as the highest id with a higher term, and every node agrees.
    clear_faults(&mut client).await;
    let third = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && leads(l, 5) && l.term > second.term
    })
    .await;
    let done = stop_kept(&mut client, e.election_id).await;
    assert!(done.timeline.len() >= 5, "{:?}", done.timeline);
    assert!(done.term >= third.term);
    ctl.stop().await;
}

/// A planned stop of the leader (`crash: {leader: true, planned: true}`, what a node does on
/// SIGTERM) hands the leadership over before the node stops, for every kept algorithm (bully,
/// ZooKeeper-style, Chubby-style, the repaired ring): the fault reports one handover, to id 4 in a
/// higher term, measured on the leaving node; every live node agrees on 4 with no failure detector
/// involved (well within the 200 ms detection timeout); the failover is recorded with the
/// planned-stop cause and its messages left unmeasured; at most one node (bully, ZooKeeper and
/// Chubby: the successor while it runs) names no leader after the stop, except on the ring, where
/// the handover is an election round the ring; StopElection finds no violation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kept_algorithm_hands_over_on_a_planned_stop() {
    for algorithm in ["bully", "zookeeper", "chubby", "repaired-ring"] {
        let (ctl, mut client, e) = start_kept(algorithm, 5).await;
        let first = first_leader(&mut client, &e.election_id, 5).await;
        let since_us = ringleader_tests::unix_us();
        let stop = fault(pb::inject_fault_request::Kind::Crash(pb::CrashFault {
            node: String::new(),
            leader: true,
            planned: true,
        }));
        let f = inject(&mut client, stop).await;
        let leaver = first.leader.as_ref().unwrap().node.clone();
        let handed = format!("planned stop {leaver} (handed over: id 4 leads term");
        assert!(f.description.starts_with(&handed), "{algorithm}: {f:?}");
        assert_eq!(f.handovers.len(), 1, "{algorithm}: {f:?}");
        let h = &f.handovers[0];
        assert!(h.handed_over && h.new_leader_id == 4 && h.new_term > first.term, "{algorithm}: {h:?}");
        assert!(h.took_us < 200_000, "{algorithm}: a handover, not a detection: {h:?}");
        let second = leader_until(&mut client, &e.election_id, Duration::from_secs(5), |l| {
            l.agreed && leads(l, 4) && l.last_failover.is_some()
        })
        .await;
        let fo = second.last_failover.unwrap();
        assert_eq!(fo.cause, "planned stop (the leader hands over if it can)", "{algorithm}: {fo:?}");
        assert_eq!((fo.leader.as_ref().map(|l| l.id), fo.new_leader.as_ref().map(|l| l.id)), (Some(5), Some(4)));
        assert_eq!(fo.messages, None, "{algorithm}: {fo:?}");
        let done = stop_kept(&mut client, e.election_id).await;
        assert!(done.violations.is_empty(), "{algorithm}: {:?}", done.violations);
        let leaderless: std::collections::BTreeSet<&str> = done
            .timeline
            .iter()
            .filter(|c| c.node_us >= since_us && c.leader_id == 0 && c.node != leaver)
            .map(|c| c.node.as_str())
            .collect();
        if algorithm != "repaired-ring" {
            assert!(leaderless.len() <= 1, "{algorithm}: only the successor, while it runs: {:?}", done.timeline);
        }
        eprintln!("{algorithm}: handed over in {} µs; nodes without a leader meanwhile: {leaderless:?}", h.took_us);
        ctl.stop().await;
    }
}

/// WatchElection on a kept leadership streams what happens as it happens: every change of belief
/// (`leadership` events) and the failover a crash of the leader causes (`failover` events: first the
/// loss, naming the lost leader, its term and the cause "crash fault", then its agreement on the next
/// highest id). GetCluster shows the crash beside the crashed node, which still answers (reachable),
/// and nothing beside the others. The latency from the crash to the first failover event is printed
/// (the issue asks for under a second; timing is not asserted here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_see_every_change_and_the_failover_as_it_happens() {
    use ringleader_proto::v1::{self as pb, election_event::Kind};
    let (ctl, mut client, e) = start_kept("bully", 5).await;
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 5) && l.agreed).await;
    let request = pb::WatchElectionRequest { election_id: e.election_id.clone() };
    let mut stream = client.watch_election(request).await.unwrap().into_inner();
    async fn next(stream: &mut tonic::Streaming<pb::ElectionEvent>) -> Kind {
        match tokio::time::timeout(Duration::from_secs(20), stream.message()).await {
            Ok(Ok(Some(ev))) => ev.kind.expect("every event has a kind"),
            other => panic!("the stream ended or stalled: {other:?}"),
        }
    }
    let first_event = next(&mut stream).await;
    assert!(matches!(first_event, Kind::Snapshot(_)), "{first_event:?}");
    let crashed = crash_the_leader(&mut client, &first).await;
    let mut changes = Vec::new();
    let lost = loop {
        match next(&mut stream).await {
            Kind::Failover(f) => break f,
            Kind::Leadership(c) => changes.push(c),
            other => panic!("a kept leadership streams changes and failovers, not {other:?}"),
        }
    };
    println!("first failover event {} ms after the crash", crashed.elapsed().as_millis());
    assert_eq!(lost.leader.as_ref().map(|l| l.id), Some(5), "{lost:?}");
    assert_eq!((lost.term, lost.cause.as_str()), (first.term, "crash fault"), "{lost:?}");
    let agreed = loop {
        match next(&mut stream).await {
            Kind::Failover(f) if f.agreement_ms.is_some() => break f,
            Kind::Failover(_) => {}
            Kind::Leadership(c) => changes.push(c),
            other => panic!("a kept leadership streams changes and failovers, not {other:?}"),
        }
    };
    assert_eq!(agreed.new_leader.as_ref().map(|l| l.id), Some(4), "{agreed:?}");
    assert!(agreed.new_term > first.term, "{agreed:?}");
    assert!(
        changes.iter().any(|c| c.leader_id == 4 && c.term == agreed.new_term),
        "every change of belief is streamed, the new leader's among them: {changes:?}"
    );
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let crashed_node = first.leader.as_ref().unwrap().node.clone();
    for node in &cluster.nodes {
        if node.name == crashed_node {
            assert!(node.reachable && node.faults.len() == 1 && node.faults[0].starts_with("crashed ("), "{node:?}");
        } else {
            assert!(node.faults.is_empty(), "{node:?}");
        }
    }
    stop_kept(&mut client, e.election_id).await;
    ctl.stop().await;
}

/// A kept leadership's diagram, drawn when it stops, shows what it lived through: both terms in the
/// strip above the nodes, the crashed leader's line down from the crash, where the others suspected
/// it, and every message (heartbeats left out) as an arrow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_diagram_shows_terms_crash_and_suspicions() {
    use ringleader_proto::v1 as pb;
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    let req = pb::StartElectionRequest { diagram: true, ..ringleader_tests::kept("bully") };
    let e = client.start_election(req).await.unwrap().into_inner();
    let first = first_leader(&mut client, &e.election_id, 5).await;
    crash_the_leader(&mut client, &first).await;
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 4) && l.agreed).await;
    let done = stop_kept(&mut client, e.election_id).await;
    let svg = &done.diagram_svg;
    assert_eq!(svg.matches(r#"class="term""#).count(), 2, "{svg}");
    assert!(
        svg.contains(&format!(">term {}: {} (id 5)</text>", first.term, first.leader.as_ref().unwrap().node)),
        "{svg}"
    );
    assert_eq!(svg.matches(r#"class="down""#).count(), 1, "the crashed leader: {svg}");
    assert!(svg.contains(">suspects</text>"), "{svg}");
    // Every message: delivered, lost, or dropped at the crashed leader.
    let arrows = svg.matches(r#"class="msg"#).count();
    assert_eq!(arrows as u64, done.metrics.unwrap().messages, "{svg}");
    ctl.stop().await;
}

/// The README's kept bully on 8 LIVE nodes, drawn: left leading for 2.5 s, its leader crashed,
/// recovered once the others agree, then stopped. The failover's messages (sent between the crash
/// and the recovery) span at least a third of the diagram's plot, whatever the seconds of quiet
/// around them, and the crash, the recovery and each term are drawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_failover_gets_a_third_of_its_diagram() {
    use ringleader_proto::v1 as pb;
    let ctl = ringleader_tests::TestController::start(8).await;
    let mut client = ctl.client();
    let req = pb::StartElectionRequest {
        diagram: true,
        ids: vec![3, 7, 1, 8, 2, 6, 4, 5],
        ..ringleader_tests::kept("bully")
    };
    let e = client.start_election(req).await.unwrap().into_inner();
    let first = first_leader(&mut client, &e.election_id, 8).await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    crash_the_leader(&mut client, &first).await;
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 7) && l.agreed).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    clear_faults(&mut client).await;
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 8) && l.agreed).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let done = stop_kept(&mut client, e.election_id).await;
    let svg = &done.diagram_svg;
    let saved = std::env::temp_dir().join("ringleader-live-failover.svg");
    std::fs::write(&saved, svg).unwrap();
    eprintln!("the diagram: {}", saved.display());
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!(" {name}=\"")).unwrap_or_else(|| panic!("{name} in {tag}")) + name.len() + 3;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    };
    let root = svg.split('>').next().unwrap();
    let (left, right) = (attr(root, "data-left"), attr(root, "data-right"));
    let at_of = |class: &str| attr(svg.split(&format!(r#"class="{class}""#)).nth(1).unwrap(), "data-at");
    let (crashed, recovered) = (at_of("down"), at_of("recover"));
    let mut xs = Vec::new();
    for tag in svg.split("<line class=\"msg\"").skip(1) {
        let tag = tag.split('>').next().unwrap();
        if (crashed..recovered).contains(&attr(tag, "data-at")) {
            xs.push((attr(tag, "x1"), attr(tag, "x2")));
        }
    }
    assert!(xs.len() >= 4, "the failover's messages: {svg}");
    let from = xs.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    let to = xs.iter().map(|x| x.1).fold(0.0, f64::max);
    let share = (to - from) / (right - left);
    eprintln!("the failover's {} messages span {share:.2} of the plot", xs.len());
    assert!(share >= 1.0 / 3.0, "{from}..{to} of {left}..{right}: {svg}");
    for label in [">crash</text>", ">recover</text>"] {
        assert!(svg.contains(label), "{label}: {svg}");
    }
    assert!(svg.matches(r#"class="term""#).count() >= 3, "{svg}");
    ctl.stop().await;
}

/// A SIMULATED kept leadership runs to its horizon with its scheduled faults, waited for: bully
/// on ids 3 7 1 8 2 6 4 5 with its leader crashed at 500 virtual ms ends FINISHED after 2,000,
/// id 7 leading and agreed in a higher term, one failover (id 8's, detected and agreed, with
/// its messages), the timeline, and a diagram with the crash and both terms. Chubby's leader cut
/// off at 500 and healed at 2,500 is drawn with its partition, and fails over like a crashed one
/// (a "partition" failover row: the majority agrees on another leader in a higher term). A fault naming an unknown id is
/// refused naming `simulation.faults`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulated_kept_leadership_runs_its_scheduled_faults() {
    use pb::scheduled_fault::Fault as F;
    let (ctl, mut client) = ringleader_tests::TestController::with_client(0).await;
    let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
    let simulated = |horizon_ms, faults| pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        diagram: true,
        ids: vec![3, 7, 1, 8, 2, 6, 4, 5],
        simulation: Some(pb::SimulationOptions { horizon_ms, faults, ..Default::default() }),
        ..ringleader_tests::kept("bully")
    };
    let e = client.start_election(simulated(2_000, vec![at(500, F::CrashLeader(true))])).await.unwrap().into_inner();
    let shown = pb::Election { diagram_svg: String::new(), participants: Vec::new(), ..e.clone() };
    assert_eq!(e.state, pb::ElectionState::Finished as i32, "{shown:?}");
    let leader = e.leader.clone().expect("a leader");
    assert_eq!((leader.id, e.agreed, e.term >= 2), (7, true, true), "{shown:?}");
    assert_eq!(e.failovers.len(), 1, "{:?}", e.failovers);
    let f = &e.failovers[0];
    assert_eq!(f.leader.as_ref().map(|l| l.id), Some(8));
    assert!(f.detection_ms.is_some() && f.agreement_ms.is_some() && f.messages.is_some_and(|m| m > 0), "{f:?}");
    assert!(!e.timeline.is_empty() && e.violations.is_empty(), "{shown:?}");
    let svg = &e.diagram_svg;
    assert!(svg.contains(">crash</text>") && svg.matches(r#"class="term""#).count() >= 2, "{}", svg.len());
    let chubby = pb::StartElectionRequest {
        algorithm: "chubby".into(),
        ids: vec![1, 2, 3, 4, 5],
        ..simulated(3_000, vec![at(500, F::CutOffLeader(true)), at(2_500, F::Heal(true))])
    };
    let c = client.start_election(chubby).await.unwrap().into_inner();
    assert_eq!((c.state, c.error.as_str()), (pb::ElectionState::Finished as i32, ""));
    assert!(c.diagram_svg.contains(r#"class="partition""#), "{}", c.diagram_svg.len());
    // The leader cut off from the majority fails over like a crashed one.
    assert_eq!(c.failovers.len(), 1, "{:?}", c.failovers);
    let f = &c.failovers[0];
    assert_eq!((f.leader.as_ref().map(|l| l.id), f.lost_at_ms), (Some(5), 500), "{f:?}");
    assert!(f.cause.starts_with("partition") && f.agreement_ms.is_some(), "{f:?}");
    assert!(f.new_leader.as_ref().is_some_and(|l| l.id != 5) && f.new_term > f.term, "{f:?}");
    let bad = simulated(1_000, vec![at(10, F::CrashId(9))]);
    let refused = client.start_election(bad).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().contains("simulation.faults") && refused.message().contains("id 9"), "{refused:?}");
    ctl.stop().await;
}

/// A SIMULATED leadership lost with no crash or cut-off of its leader is a failover too, as the
/// LIVE record has it (before, SIMULATED listed crashes and cut-offs only): Raft on ids 1..5, seed
/// 1, whose follower id 3 is cut off at 1,000 and rejoins at 2,500 with a higher term, records id 1
/// "deposed by a higher term" and agreed again; a client-go lease whose holder is paused for 600 ms
/// records the pause as the cause and the new holder; the same holder cut off from its peers (not
/// from the store) records nothing, and a 300 ms pause the holder survives nothing either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulated_leadership_lost_without_a_fault_is_a_failover() {
    use pb::scheduled_fault::Fault as F;
    let (ctl, mut client) = ringleader_tests::TestController::with_client(0).await;
    let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
    let run = |algorithm: &str, horizon_ms, faults| pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        ids: vec![1, 2, 3, 4, 5],
        seed: 1,
        simulation: Some(pb::SimulationOptions { horizon_ms, faults, ..Default::default() }),
        ..ringleader_tests::kept(algorithm)
    };
    let cut = vec![at(1_000, F::CutOff(pb::IdSet { ids: vec![3] })), at(2_500, F::Heal(true))];
    let raft = client.start_election(run("raft", 4_000, cut)).await.unwrap().into_inner();
    let causes: Vec<(&str, u64)> = raft.failovers.iter().map(|f| (f.cause.as_str(), f.term)).collect();
    assert_eq!(causes, [("deposed by a higher term", 1)], "{:?}", raft.failovers);
    let f = &raft.failovers[0];
    assert!(f.lost_at_ms >= 2_500 && f.agreement_ms.is_some() && f.new_term > 1, "{f:?}");
    let pause = |ms| vec![at(3_000, F::PauseLeader(ms))];
    let paused = client.start_election(run("lease", 10_000, pause(600))).await.unwrap().into_inner();
    assert_eq!(paused.failovers.len(), 1, "{:?}", paused.failovers);
    let f = &paused.failovers[0];
    assert_eq!((f.cause.as_str(), f.lost_at_ms), ("paused (the leader took no step)", 3_000), "{f:?}");
    assert!(f.new_leader.as_ref().is_some_and(|l| Some(l.id) != f.leader.as_ref().map(|l| l.id)), "{f:?}");
    let short = client.start_election(run("lease", 10_000, pause(300))).await.unwrap().into_inner();
    assert!(short.failovers.is_empty(), "{:?}", short.failovers);
    let peers = client.start_election(run("lease", 10_000, vec![at(3_000, F::CutOffLeader(true))])).await;
    let peers = peers.unwrap().into_inner();
    assert!(peers.failovers.is_empty(), "{:?}", peers.failovers);
    ctl.stop().await;
}

/// Every kept algorithm of the catalogue (bully, repaired ring, ZooKeeper, Chubby, Raft, the
/// lease...), SIMULATED on its default overlay with ids 3 7 1 8 2 6 4 5 and no fault, over three
/// seeds, ends FINISHED, agreed, with a leader and no violation: a kept leadership is judged by
/// the kept rules (one leader per term), never by the one-shot ones (Raft's and the lease's
/// leader need not hold the largest id; heartbeats exceed the one-shot bound).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kept_algorithm_simulated_without_faults_has_no_violation() {
    let (ctl, mut client) = ringleader_tests::TestController::with_client(0).await;
    let kept = ringleader_core::algo::catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some());
    let mut names = Vec::new();
    for spec in kept {
        names.push(spec.name);
        for seed in 1..=3 {
            let req = pb::StartElectionRequest {
                mode: pb::Mode::Simulated as i32,
                wait: true,
                seed,
                ids: vec![3, 7, 1, 8, 2, 6, 4, 5],
                topology: None,
                ..ringleader_tests::kept(spec.name)
            };
            let e = client.start_election(req).await.unwrap().into_inner();
            let shown = pb::Election { diagram_svg: String::new(), timeline: Vec::new(), ..e.clone() };
            assert_eq!((e.state, e.error.as_str()), (pb::ElectionState::Finished as i32, ""), "{shown:?}");
            assert!(e.violations.is_empty() && e.agreed && e.leader.is_some(), "{shown:?}");
        }
    }
    assert!(
        ["bully", "repaired-ring", "zookeeper", "chubby", "raft", "lease"].iter().all(|n| names.contains(n)),
        "{names:?}"
    );
    ctl.stop().await;
}

/// A leader's clock fault, SIMULATED: Chubby on 5 nodes with its leader cut off at 500 virtual ms
/// overlaps nobody when the leader's clock runs 3% slow (within the 10% its lease allows), and
/// with the leader's clock at half speed (`leader_clock: 0.5`) the record reports the old and the
/// new leader believing they led at once, for the old lease's extra length. A rate outside
/// 0.1..=10 is refused naming `simulation.faults`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_leader_clock_shows_as_an_overlap_simulated() {
    use pb::scheduled_fault::Fault as F;
    let (ctl, mut client) = ringleader_tests::TestController::with_client(0).await;
    let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
    let chubby = |rate| pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        ids: vec![1, 2, 3, 4, 5],
        simulation: Some(pb::SimulationOptions {
            horizon_ms: 3_000,
            faults: vec![at(500, F::LeaderClock(rate)), at(500, F::CutOffLeader(true))],
            ..Default::default()
        }),
        ..ringleader_tests::kept("chubby")
    };
    let within = client.start_election(chubby(0.97)).await.unwrap().into_inner();
    assert_eq!((within.state, within.error.as_str()), (pb::ElectionState::Finished as i32, ""));
    assert!(within.overlaps.is_empty(), "{:?}", within.overlaps);
    assert_eq!(within.failovers.len(), 1, "{:?}", within.failovers);
    let beyond = client.start_election(chubby(0.5)).await.unwrap().into_inner();
    assert_eq!(beyond.overlaps.len(), 1, "{:?}", beyond.overlaps);
    let o = &beyond.overlaps[0];
    assert!(o.contains("sim-4 (term 1)") && o.contains("believed they led at once for"), "{o}");
    let refused = client.start_election(chubby(20.0)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().contains("simulation.faults") && refused.message().contains("0.1..=10"), "{refused:?}");
    ctl.stop().await;
}

/// A leader's clock fault, LIVE: Chubby keeps a leader on 5 nodes; `clock: {node, rate: 0.5}` on
/// the leader is listed on its node, and cutting the leader off then makes the majority elect
/// another while the old one still believes in its lease, twice as long by its slow clock: the
/// record reports the overlap on the nodes' clocks, of at least 100 ms. A rate outside 0.1..=10 is refused naming
/// `clock.rate`; clearing the faults gives the node real time back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_leader_clock_shows_as_an_overlap_live() {
    use pb::inject_fault_request::Kind;
    let (ctl, mut client, e) = start_kept("chubby", 5).await;
    let first = first_leader(&mut client, &e.election_id, 5).await;
    let old = first.leader.clone().unwrap().node;
    let clock = |rate| fault(Kind::Clock(pb::ClockFault { node: old.clone(), rate }));
    let refused = client.inject_fault(clock(0.05)).await.unwrap_err();
    ringleader_tests::assert_refused(&refused, tonic::Code::InvalidArgument, "clock.rate");
    let f = inject(&mut client, clock(0.5)).await;
    assert_eq!(f.description, format!("clock {old} at 0.5 times real time"));
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let shown = cluster.nodes.iter().find(|n| n.name == old).unwrap();
    assert!(shown.faults.iter().any(|f| f.starts_with("clock at 0.5 times real time")), "{shown:?}");
    let others: Vec<String> = cluster.nodes.iter().map(|n| n.name.clone()).filter(|n| *n != old).collect();
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    inject(&mut client, ringleader_tests::partition(&[&[old.as_str()], &others])).await;
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.leader.as_ref().is_some_and(|r| r.node != old) && l.term > first.term
    })
    .await;
    // Time for the old lease to run out by the slow clock, before the partition heals.
    tokio::time::sleep(Duration::from_secs(3)).await;
    clear_faults(&mut client).await;
    let done = stop_kept(&mut client, e.election_id).await;
    let overlap = done.overlaps.iter().find(|o| o.contains(&format!("{old} (term {})", first.term)));
    assert!(overlap.is_some(), "{:?}", done.overlaps);
    let ms: u64 = overlap.unwrap().rsplit(" for ").next().unwrap().trim_end_matches(" ms").parse().unwrap();
    eprintln!("{}", overlap.unwrap());
    // The lease (5 detector timeouts, 1 s) lasts twice as long by the slow clock: far more than a blip.
    assert!(ms >= 100, "{:?}", done.overlaps);
    ctl.stop().await;
}

/// Raft keeps a leader on 5 LIVE nodes with PreVote, CheckQuorum and the lease switched on by the
/// request's `options` (the record shows them): a crash of the agreed leader is recorded as a
/// failover to another node of a higher term, agreed by every live node; after the crashed node
/// recovers, a planned stop of the leader hands over with TimeoutNow (handed over well within one
/// election timeout, to a higher term, cause "planned stop"); StopElection finds no violation and
/// no overlap (the lease).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raft_keeps_a_leader_across_a_crash_and_hands_over() {
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    let options = [("pre_vote", "true"), ("check_quorum", "true"), ("lease", "true")];
    let req = pb::StartElectionRequest {
        options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..ringleader_tests::kept("raft")
    };
    let e = ringleader_tests::elect(&mut client, req).await;
    assert_eq!(e.options.get("lease").map(String::as_str), Some("true"), "{e:?}");
    let within = Duration::from_secs(20);
    let first = leader_until(&mut client, &e.election_id, within, |l| l.agreed && l.term >= 1).await;
    let crashed = first.leader.clone().unwrap();
    ringleader_tests::crash_the_leader(&mut client, &first).await;
    let second = leader_until(&mut client, &e.election_id, within, |l| {
        l.agreed && l.term > first.term && l.last_failover.is_some()
    })
    .await;
    let fo = second.last_failover.clone().unwrap();
    assert_eq!((fo.cause.as_str(), fo.leader.as_ref().map(|l| l.id)), ("crash fault", Some(crashed.id)), "{fo:?}");
    assert_ne!(second.leader.as_ref().unwrap().id, crashed.id);
    clear_faults(&mut client).await;
    let stop = fault(pb::inject_fault_request::Kind::Crash(pb::CrashFault {
        node: String::new(),
        leader: true,
        planned: true,
    }));
    let f = inject(&mut client, stop).await;
    assert_eq!(f.handovers.len(), 1, "{f:?}");
    let h = &f.handovers[0];
    assert!(
        h.handed_over && h.new_term > second.term && h.new_leader_id != second.leader.as_ref().unwrap().id,
        "{h:?}"
    );
    assert!(h.took_us < 200_000, "a handover, not an election timeout: {h:?}");
    let third = leader_until(&mut client, &e.election_id, within, |l| {
        l.agreed && l.last_failover.as_ref().is_some_and(|f| f.cause.starts_with("planned stop"))
    })
    .await;
    assert_eq!(third.leader.as_ref().map(|l| l.id), Some(h.new_leader_id), "{third:?}");
    clear_faults(&mut client).await;
    let done = stop_kept(&mut client, e.election_id).await;
    assert!(done.overlaps.is_empty(), "{:?}", done.overlaps);
    eprintln!("raft: crash failover {fo:?}; handed over in {} µs", h.took_us);
    ctl.stop().await;
}

/// Raft's `log` option takes a term only below MAX_TERM (2^53 − 1): a log term of 2^53 − 1 or
/// 2^53, LIVE or SIMULATED, for all nodes or one, is refused with INVALID_ARGUMENT naming
/// `options.log` (before, the nodes started in that term, had none to run for, and the election
/// never had a leader, saying nothing); 2^53 − 2 is taken and elects a leader in term 2^53 − 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raft_log_terms_are_bounded() {
    let (ctl, mut client) = ringleader_tests::TestController::with_client(3).await;
    let raft = |log: &str, mode: pb::Mode| pb::StartElectionRequest {
        mode: mode as i32,
        wait: mode == pb::Mode::Simulated,
        ids: vec![1, 2, 3],
        options: [("log".to_string(), log.to_string())].into(),
        ..ringleader_tests::kept("raft")
    };
    for log in ["9007199254740991:0", "9007199254740992:5", "1:1,9007199254740991:2,1:1"] {
        for mode in [pb::Mode::Live, pb::Mode::Simulated] {
            let refused = client.start_election(raft(log, mode)).await.unwrap_err();
            ringleader_tests::assert_refused(&refused, tonic::Code::InvalidArgument, "options.log");
            assert!(refused.message().contains("at most 9007199254740990"), "{log}: {refused:?}");
        }
    }
    let e = client.start_election(raft("9007199254740990:0", pb::Mode::Simulated)).await.unwrap().into_inner();
    assert_eq!((e.state, e.agreed, e.term), (pb::ElectionState::Finished as i32, true, (1 << 53) - 1), "{e:?}");
    ctl.stop().await;
}
