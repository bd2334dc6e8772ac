use std::time::{Duration, Instant};

use pb::LinkFaultSpec as Spec;
use pb::inject_fault_request::Kind;
use ringleader_proto::v1 as pb;
use ringleader_tests::{
    Client, TestController, assert_failed, assert_refused, clear_faults, elect, elect_correct, election, fault, inject,
    kept, leader_until, partition, wait_for,
};
use tonic::Code;

/// A link fault: what `spec` sets, on the links and messages it selects.
fn link(spec: Spec) -> pb::InjectFaultRequest {
    fault(Kind::Link(spec))
}

/// A controller of 4 local nodes whose elections give up after 2 s.
async fn cluster() -> (TestController, Client) {
    let ctl = TestController::start_tuned(4, |c| c.decision_timeout_ms = 2_000).await;
    let client = ctl.client();
    (ctl, client)
}

/// Does one of `e`'s positions run on `node`?
fn placed_on(e: &pb::Election, node: &str) -> bool {
    e.participants.iter().any(|p| p.node == node)
}

/// Poll ListFaults every 20 ms until `fired` finds what it looks for in the list, and return that; panic
/// after `deadline`.
async fn faults_until<T>(client: &Client, deadline: Instant, fired: impl Fn(&[pb::FaultInfo]) -> Option<T>) -> T {
    let fired = &fired;
    wait_for("the fault never fired", deadline, Duration::from_millis(20), || {
        let mut client = client.clone();
        async move {
            let listed = client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults;
            fired(&listed).ok_or(listed)
        }
    })
    .await
}

/// Invalid faults are refused naming the field: no kind, an unknown node, a probability outside [0, 1], a link
/// from a node to itself, a partition that names a node twice or has an empty group; crashing "the leader"
/// before any election has one is a failed precondition, and clearing an unknown fault id is NOT_FOUND.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_faults_are_refused() {
    let (ctl, mut client) = cluster().await;
    let cases = [
        (pb::InjectFaultRequest::default(), Code::InvalidArgument, "kind"),
        (
            fault(Kind::Crash(pb::CrashFault { node: "node-9".into(), leader: false, planned: false })),
            Code::InvalidArgument,
            "crash.node",
        ),
        (fault(Kind::Crash(pb::CrashFault::default())), Code::InvalidArgument, "crash.node"),
        (fault(Kind::Recover(pb::RecoverFault { node: "nobody".into() })), Code::InvalidArgument, "recover.node"),
        (link(Spec { drop: 1.5, ..Spec::default() }), Code::InvalidArgument, "link.drop"),
        (link(Spec { duplicate: -0.5, ..Spec::default() }), Code::InvalidArgument, "link.duplicate"),
        (
            link(Spec { from: "node-1".into(), to: "node-1".into(), ..Spec::default() }),
            Code::InvalidArgument,
            "link.to",
        ),
        (link(Spec { to: "node-77".into(), ..Spec::default() }), Code::InvalidArgument, "link.to"),
        (partition(&[&["node-0", "node-1"], &["node-1"]]), Code::InvalidArgument, "partition.groups"),
        (partition(&[&["node-0"], &[]]), Code::InvalidArgument, "partition.groups"),
        (
            fault(Kind::Crash(pb::CrashFault { node: String::new(), leader: true, planned: false })),
            Code::FailedPrecondition,
            "crash.leader",
        ),
    ];
    for (req, code, field) in cases {
        let status = client.inject_fault(req).await.unwrap_err();
        assert_refused(&status, code, field);
        assert!(status.message().len() > field.len() + 4, "the message says why: {}", status.message());
    }
    let twice = client.inject_fault(partition(&[&["node-0", "node-1"], &["node-1"]])).await.unwrap_err();
    assert!(twice.message().contains("node-1") && twice.message().contains("twice"), "{}", twice.message());
    let status = client
        .clear_faults(pb::ClearFaultsRequest { fault_id: "f999".into(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    assert!(client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults.is_empty());
    ctl.stop().await;
}

/// A refused InjectFault uses up no fault id: after an unknown node (INVALID_ARGUMENT) and `crash.leader`
/// with no leader yet (FAILED_PRECONDITION), the first fault accepted is `f1`, the next `f2`, and a
/// scheduled one `f3`. Failed before the fix: the refused `crash.leader` took `f1`, so the first fault
/// accepted was `f2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_faults_use_no_fault_id() {
    let (ctl, mut client) = cluster().await;
    let unknown = fault(Kind::Crash(pb::CrashFault { node: "node-9".into(), leader: false, planned: false }));
    assert_refused(&client.inject_fault(unknown).await.unwrap_err(), Code::InvalidArgument, "crash.node");
    let leader = fault(Kind::Crash(pb::CrashFault { node: String::new(), leader: true, planned: false }));
    assert_refused(&client.inject_fault(leader).await.unwrap_err(), Code::FailedPrecondition, "crash.leader");
    let slow = link(Spec { delay_ms: 1, ..Spec::default() });
    assert_eq!(inject(&mut client, slow.clone()).await.fault_id, "f1");
    assert_eq!(inject(&mut client, slow).await.fault_id, "f2");
    let later = pb::InjectFaultRequest { at_ms: 60_000, ..link(Spec { delay_ms: 2, ..Spec::default() }) };
    assert_eq!(inject(&mut client, later).await.fault_id, "f3");
    ctl.stop().await;
}

/// Dropping every message makes a LIVE election end FAILED with a reason (never hang); clearing the fault
/// restores correct elections. With a crashed node an election of every node is refused naming it, and a
/// smaller one runs on the others; after `recover` it takes part again. ListFaults shows active faults with a description, ClearFaults clears them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drops_and_crashes_fail_elections_and_clear_completely() {
    let (ctl, mut client) = cluster().await;

    let f = inject(&mut client, link(Spec { drop: 1.0, ..Spec::default() })).await;
    assert_eq!(f.state, pb::FaultState::Active as i32);
    assert!(f.description.contains("drop 1"), "{}", f.description);
    let e = elect(&mut client, election("as-far")).await;
    assert_failed(&e, "undecided");
    assert!(
        e.error.contains("injected faults active: f1 (link * -> *: drop 1"),
        "the reason names the fault: {}",
        e.error
    );
    assert_eq!(clear_faults(&mut client).await, 1);
    elect_correct(&mut client, election("as-far")).await;

    let crash = fault(Kind::Crash(pb::CrashFault { node: "node-2".into(), leader: false, planned: false }));
    inject(&mut client, crash).await;
    let refused = client.start_election(election("stages")).await.unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "size");
    assert!(refused.message().contains("node-2 (crashed by an injected fault)"), "{refused:?}");
    let three = pb::StartElectionRequest { size: 3, ..election("stages") };
    assert!(!placed_on(&elect_correct(&mut client, three).await, "node-2"), "runs on the nodes that are up");
    let listed = client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].description, "crash node-2");
    inject(&mut client, fault(Kind::Recover(pb::RecoverFault { node: "node-2".into() }))).await;
    assert!(client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults.is_empty());
    elect_correct(&mut client, election("stages")).await;

    // Delays and duplicates-free jitter keep elections correct (FIFO is kept without `reorder`).
    inject(&mut client, link(Spec { delay_ms: 20, jitter_ms: 10, ..Spec::default() })).await;
    elect_correct(&mut client, election("stages")).await;
    clear_faults(&mut client).await;
    ctl.stop().await;
}

/// A partition into two groups stops an election that needs both; a new partition replaces the old one; a
/// scheduled fault is listed as SCHEDULED until it fires; crashing "the leader" crashes the last leader's node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_schedules_and_the_leader() {
    let (ctl, mut client) = cluster().await;
    inject(&mut client, partition(&[&["node-0", "node-1"], &["node-2", "node-3"]])).await;
    assert_failed(&elect(&mut client, election("as-far")).await, "");
    inject(&mut client, partition(&[&["node-0", "node-1", "node-2", "node-3"]])).await;
    let listed = client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults;
    assert_eq!(listed.len(), 1, "the new partition replaced the old: {listed:?}");
    elect_correct(&mut client, election("as-far")).await;

    let later = pb::InjectFaultRequest { at_ms: 60_000, ..link(Spec { drop: 0.5, ..Spec::default() }) };
    let f = inject(&mut client, later).await;
    assert_eq!(f.state, pb::FaultState::Scheduled as i32);

    let leader = elect_correct(&mut client, election("as-far")).await.leader.unwrap().node;
    let crash = fault(Kind::Crash(pb::CrashFault { node: String::new(), leader: true, planned: false }));
    let f = inject(&mut client, crash).await;
    assert_eq!(f.description, format!("crash {leader}"));
    assert_eq!(clear_faults(&mut client).await, 3, "partition, scheduled drop and crash");
    assert!(client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults.is_empty());
    elect_correct(&mut client, election("as-far")).await;
    ctl.stop().await;
}

/// A kept leadership is refused for one-shot algorithms (naming `keep_leader` and the algorithms that can);
/// StopElection of a finished one-shot election returns it unchanged (t23 stops running ones).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_leader_needs_a_failure_tolerant_algorithm() {
    let (ctl, mut client) = cluster().await;
    let req = pb::StartElectionRequest { keep_leader: true, wait: false, ..election("as-far") };
    let status = client.start_election(req).await.unwrap_err();
    assert_refused(&status, Code::InvalidArgument, "keep_leader");
    assert!(status.message().contains("one-shot"), "{}", status.message());
    let e = elect(&mut client, election("as-far")).await;
    let stopped = client.stop_election(pb::StopElectionRequest { election_id: e.election_id.clone() }).await.unwrap();
    assert_eq!(stopped.get_ref(), &e);
    ctl.stop().await;
}

/// Selectors, triggers and their refusals: an unknown `link.kind` is refused listing the kinds, an nth fault
/// without an effect is refused naming `link.nth`, an empty `after` and zero counts name `after` /
/// `after.messages` / `after.term`; a fault waiting for an event that has not come is listed as WAITING with its
/// trigger described, and ClearFaults removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selectors_and_triggers_are_checked_and_listed() {
    use pb::after_event::Event;
    let (ctl, mut client) = cluster().await;
    let after = |event| pb::InjectFaultRequest {
        after: Some(pb::AfterEvent { event }),
        ..fault(Kind::Crash(pb::CrashFault { node: "node-1".into(), leader: false, planned: false }))
    };
    let cases = [
        (link(Spec { kind: "elected".into(), ..Spec::default() }), "link.kind"),
        (link(Spec { nth: 1, ..Spec::default() }), "link.nth"),
        (after(None), "after"),
        (after(Some(Event::LeaderElected(false))), "after"),
        (after(Some(Event::Messages(0))), "after.messages"),
        (after(Some(Event::Term(0))), "after.term"),
    ];
    for (req, field) in cases {
        let status = client.inject_fault(req).await.unwrap_err();
        assert_refused(&status, Code::InvalidArgument, field);
    }
    let kinds = client.inject_fault(link(Spec { kind: "elected".into(), ..Spec::default() })).await.unwrap_err();
    assert!(kinds.message().contains("coordinator") && kinds.message().contains("heartbeat"), "{}", kinds.message());

    let f = inject(&mut client, after(Some(Event::Term(1_000)))).await;
    assert_eq!(f.state, pb::FaultState::Waiting as i32);
    let listed = client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, pb::FaultState::Waiting as i32);
    assert_eq!(listed[0].description, "crash node-1; pending: 0 ms after a leader of term 1000 or more appears");
    // Nothing crashed while it waits: elections still run correctly.
    elect_correct(&mut client, election("as-far")).await;
    assert_eq!(clear_faults(&mut client).await, 1);
    ctl.stop().await;
}

/// A kind-selected drop loses only that kind, live: dropping every `notify` message leaves an as-far election
/// FAILED (the nodes never learn the leader) with the fault named in the reason, while dropping `coordinator`
/// messages, which as-far never sends, leaves it correct.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_selected_drop() {
    let (ctl, mut client) = cluster().await;
    let f = inject(&mut client, link(Spec { kind: "notify".into(), drop: 1.0, ..Spec::default() })).await;
    assert_eq!(f.description, "link * -> *, notify messages: drop 1, delay 0 ms + jitter 0 ms, duplicate 0, reorder 0");
    assert_failed(&elect(&mut client, election("as-far")).await, "notify messages");
    clear_faults(&mut client).await;
    inject(&mut client, link(Spec { kind: "coordinator".into(), drop: 1.0, ..Spec::default() })).await;
    elect_correct(&mut client, election("as-far")).await;
    clear_faults(&mut client).await;
    ctl.stop().await;
}

/// An nth-selected drop hits exactly one message per link, live: losing the first announcement to a node that
/// does not lead fails one as-far election; with the fault still in force, the next election (whose announcement
/// to that node is its second) is correct.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nth_selected_drop() {
    let (ctl, mut client) = cluster().await;
    let leader = elect_correct(&mut client, election("as-far")).await.leader.unwrap().node;
    let target = ["node-1", "node-2", "node-3"].into_iter().find(|n| *n != leader).unwrap();
    inject(&mut client, link(Spec { to: target.into(), kind: "notify".into(), nth: 1, drop: 1.0, ..Spec::default() }))
        .await;
    assert_failed(&elect(&mut client, election("as-far")).await, "message #1 per link");
    elect_correct(&mut client, election("as-far")).await;
    clear_faults(&mut client).await;
    ctl.stop().await;
}

/// `crash: {leader: true}` with `after: {leader_elected: true}`, injected before a kept bully leadership starts,
/// waits (WAITING), fires once the leadership has a leader and crashes that leader; GetLeader then shows another
/// node leading with a higher term than any the crashed node claimed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_the_leader_after_it_is_elected() {
    let (ctl, mut client) = TestController::with_client(5).await;
    let crash = pb::InjectFaultRequest {
        after: Some(pb::AfterEvent { event: Some(pb::after_event::Event::LeaderElected(true)) }),
        ..fault(Kind::Crash(pb::CrashFault { node: String::new(), leader: true, planned: false }))
    };
    let f = inject(&mut client, crash).await;
    assert_eq!(f.state, pb::FaultState::Waiting as i32);
    let e = elect(&mut client, kept("bully")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let crashed = faults_until(&client, deadline, |listed| {
        let f = listed.iter().find(|f| f.state == pb::FaultState::Active as i32)?;
        Some(f.description.strip_prefix("crash ").unwrap().to_string())
    })
    .await;
    tracing::info!("--- {crashed} crashed once elected; waiting for the next leader");
    let next = leader_until(&mut client, &e.election_id, deadline.saturating_duration_since(Instant::now()), |l| {
        l.leader.as_ref().is_some_and(|r| r.node != crashed)
    })
    .await;
    let done = client.stop_election(pb::StopElectionRequest { election_id: e.election_id }).await.unwrap().into_inner();
    let claimed = done
        .timeline
        .iter()
        .filter(|c| {
            c.node == crashed
                && c.leader_id != 0
                && Some(c.leader_id) == done.participants.get(c.position as usize).map(|p| p.id)
        })
        .map(|c| c.term)
        .max()
        .unwrap_or_else(|| panic!("{crashed} never claimed to lead: {:?}", done.timeline));
    assert!(next.term > claimed, "new term {} after {crashed} led term {claimed}", next.term);
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    clear_faults(&mut client).await;
    ctl.stop().await;
}

/// `after: {messages: 1}` waits for the next LIVE election to send a message, as the nodes' Status reports it (or,
/// once the election has ended, its record): the fault is WAITING until an as-far election runs, then becomes ACTIVE
/// (here a crash of node-1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_after_the_first_messages() {
    let (ctl, mut client) = cluster().await;
    let crash = pb::InjectFaultRequest {
        after: Some(pb::AfterEvent { event: Some(pb::after_event::Event::Messages(1)) }),
        ..fault(Kind::Crash(pb::CrashFault { node: "node-1".into(), leader: false, planned: false }))
    };
    inject(&mut client, crash).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let listed = client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults;
    assert_eq!(listed[0].state, pb::FaultState::Waiting as i32, "no election, no messages: {listed:?}");
    client.start_election(election("as-far")).await.unwrap();
    let fired = faults_until(&client, Instant::now() + Duration::from_secs(5), |listed| {
        (listed[0].state == pb::FaultState::Active as i32).then(|| listed[0].clone())
    })
    .await;
    assert_eq!(fired.description, "crash node-1");
    clear_faults(&mut client).await;
    ctl.stop().await;
}

/// A duplicated message is sent twice and arrives twice: the controller counts both copies on the link, so an
/// election under a duplicate fault ends once every copy has arrived, with the duplicates in its message counts
/// left to the verdict, and never as "did not go quiet" (the sender counting one message while two arrive).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_messages_are_counted_on_their_links() {
    let (ctl, mut client) = cluster().await;
    inject(&mut client, link(Spec { duplicate: 1.0, kind: "notify".into(), ..Spec::default() })).await;
    let e = elect(&mut client, election("as-far")).await;
    assert!(e.violations.iter().all(|v| !v.contains("quiet")), "{:?}", e.violations);
    assert_eq!(e.state, pb::ElectionState::Finished as i32, "{}", e.error);
    assert!(e.leader.is_some(), "{e:?}");
    clear_faults(&mut client).await;
    ctl.stop().await;
}

/// A pause through the real gRPC API: plain Raft keeps a leader on 5 nodes; `pause.ms` outside
/// 1..=600,000, an unknown node and a node with `leader: true` are refused naming the field;
/// `pause: {leader: true, ms: 1500}` pauses the leader (listed ACTIVE as "pause node-x for 1500 ms"
/// and shown on its node); a link fault injected during the pause reaches the paused node (the
/// process still answers the controller); the others elect a leader of a higher term meanwhile.
/// After the pause its fault leaves ListFaults by itself, the old leader follows the higher term it
/// learned from the messages it held, and the record judges the paused time no part of the old
/// leadership: no overlap anywhere near the pause's length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_resumes_and_follows_the_higher_term() {
    let (ctl, mut client, e) = ringleader_tests::start_kept("raft", 5).await;
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed && l.term >= 1).await;
    let old = first.leader.clone().unwrap().node;
    let pause = |node: &str, leader, ms| fault(Kind::Pause(pb::PauseFault { node: node.into(), leader, ms }));
    for (bad, field) in [(pause(&old, false, 0), "pause.ms"), (pause(&old, false, 600_001), "pause.ms")] {
        assert_refused(&client.inject_fault(bad).await.unwrap_err(), Code::InvalidArgument, field);
    }
    assert_refused(
        &client.inject_fault(pause("node-9", false, 5)).await.unwrap_err(),
        Code::InvalidArgument,
        "pause.node",
    );
    assert_refused(
        &client.inject_fault(pause(&old, true, 5)).await.unwrap_err(),
        Code::InvalidArgument,
        "pause.leader",
    );

    tracing::info!("--- pause the leader {old} for 1.5 s");
    let f = inject(&mut client, pause("", true, 1_500)).await;
    let paused_at = Instant::now();
    assert_eq!(
        (f.description.as_str(), f.state),
        (format!("pause {old} for 1500 ms").as_str(), pb::FaultState::Active as i32)
    );
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let shown = cluster.nodes.iter().find(|n| n.name == old).unwrap();
    assert!(shown.faults.iter().any(|f| f.starts_with("paused for 1500 ms")), "{shown:?}");

    tracing::info!("--- a link fault on the paused node, during the pause");
    let slow = inject(&mut client, link(Spec { from: old.clone(), delay_ms: 2, ..Spec::default() })).await;
    assert_eq!(slow.state, pb::FaultState::Active as i32, "pushed to the paused node: {slow:?}");
    let second = leader_until(&mut client, &e.election_id, Duration::from_secs(10), |l| {
        l.term > first.term && l.leader.as_ref().is_some_and(|r| r.node != old)
    })
    .await;
    let replaced = paused_at.elapsed();
    assert!(replaced < Duration::from_millis(1_500), "a new leader was elected during the pause");
    eprintln!("paused {old}: term {} led by another node {} ms into the pause", second.term, replaced.as_millis());

    tracing::info!("--- the pause ends by itself; the old leader follows the higher term");
    faults_until(&client, paused_at + Duration::from_secs(10), |listed| {
        (listed.len() == 1 && listed[0].fault_id == slow.fault_id).then_some(())
    })
    .await;
    let agreed = leader_until(&mut client, &e.election_id, Duration::from_secs(10), |l| {
        l.agreed && l.term >= second.term && l.leader.as_ref().is_some_and(|r| r.node != old)
    })
    .await;
    assert!(agreed.term >= second.term);
    clear_faults(&mut client).await;
    let done = ringleader_tests::stop_kept(&mut client, e.election_id).await;
    eprintln!("overlaps after a 1.5 s pause of the leader: {:?}", done.overlaps);
    for o in done.overlaps.iter().filter(|o| o.contains(&format!("{old} (term {})", first.term))) {
        let ms: u64 = o.rsplit(" for ").next().unwrap().trim_end_matches(" ms").parse().unwrap();
        assert!(ms < 500, "the paused time counted as leadership: {o}");
    }
    ctl.stop().await;
}
