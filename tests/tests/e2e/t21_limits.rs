//! Overload is refused, not absorbed.

use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, elect, election, fault, inject, kept, leader_until, wait_for};

/// With `max_running_elections = 1`, a second StartElection while a kept leadership runs is refused
/// RESOURCE_EXHAUSTED with a message naming the setting; once the first is stopped the next one runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_running_elections_are_refused() {
    let ctl = TestController::start_tuned(4, |c| c.max_running_elections = 1).await;
    let mut client = ctl.client();
    let k = elect(&mut client, kept("bully")).await;
    leader_until(&mut client, &k.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let refused = client.start_election(election("as-far")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("max_running_elections"), "{}", refused.message());
    client.stop_election(pb::StopElectionRequest { election_id: k.election_id }).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let e = wait_for("still refused", deadline, Duration::from_millis(50), || {
        let mut client = client.clone();
        async move {
            match client.start_election(election("as-far")).await {
                Ok(e) => Ok(e.into_inner()),
                Err(s) if s.code() == tonic::Code::ResourceExhausted => Err(s),
                Err(s) => panic!("{s:?}"),
            }
        }
    })
    .await;
    assert_correct(&e);
    ctl.stop().await;
}

/// A kept leadership whose election the embedded cluster's one process cannot carry (a 64-node
/// repaired ring with a 10 ms detector period: its electing nodes watch everyone, 64 · 63
/// heartbeats a period, 403,200 a second, five times what the largest ring that agreed here sent)
/// is refused up front, RESOURCE_EXHAUSTED naming `detector`, saying what it would send and which
/// detector would fit; that detector is accepted. (Before, 256 nodes at 50 ms started, never
/// agreed and starved the process.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_leadership_the_process_cannot_carry_is_refused_up_front() {
    let (ctl, mut client) = TestController::with_client(64).await;
    let with_period = |period_ms| pb::StartElectionRequest {
        detector: Some(pb::FailureDetector { period_ms, timeout_ms: 4 * period_ms }),
        ..kept("repaired-ring")
    };
    let refused = client.start_election(with_period(10)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused:?}");
    let m = refused.message();
    assert!(m.starts_with("detector: ") && m.contains("403200 messages a second"), "{m}");
    assert!(m.contains("period_ms 50 and timeout_ms 200"), "{m}");
    let k = elect(&mut client, with_period(50)).await;
    client.stop_election(pb::StopElectionRequest { election_id: k.election_id }).await.unwrap();
    ctl.stop().await;
}

/// With the default `max_faults` (256), 256 faults are held (a link fault and a crash, scheduled ones
/// too); the 257th InjectFault is refused RESOURCE_EXHAUSTED naming controller.max_faults, and so is a
/// scheduled one, while a recover (which holds nothing) is still taken; once one is cleared the next is
/// accepted, with the next id (`f258`: the recover had `f257`; refusals took none); GetCluster describes
/// 16 of a node's faults and counts the rest. Failed before the fix: there was no cap, every fault was
/// accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_faults_are_capped() {
    use pb::inject_fault_request::Kind;
    let (ctl, mut client) = TestController::with_client(2).await;
    let slow = |ms| fault(Kind::Link(pb::LinkFaultSpec { delay_ms: ms, ..Default::default() }));
    let later = |ms| pb::InjectFaultRequest { at_ms: 600_000, ..slow(ms) };
    let crash = fault(Kind::Crash(pb::CrashFault { node: "node-1".into(), ..Default::default() }));
    assert_eq!(inject(&mut client, crash).await.fault_id, "f1");
    for i in 2..=255 {
        assert_eq!(inject(&mut client, slow(i)).await.fault_id, format!("f{i}"));
    }
    assert_eq!(inject(&mut client, later(1)).await.fault_id, "f256");
    for refused in [slow(1), later(1)] {
        let status = client.inject_fault(refused).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
        assert!(status.message().contains("controller.max_faults"), "{}", status.message());
    }
    let recover = fault(Kind::Recover(pb::RecoverFault { node: "node-1".into() }));
    assert_eq!(inject(&mut client, recover).await.fault_id, "f257", "a recover holds no place");
    client.clear_faults(pb::ClearFaultsRequest { fault_id: "f2".into(), ..Default::default() }).await.unwrap();
    assert_eq!(inject(&mut client, slow(1)).await.fault_id, "f258");
    let held = client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults;
    assert_eq!(held.len(), 255, "f1 went with the recover, f2 was cleared");
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let described = &cluster.nodes[0].faults;
    assert_eq!(described.len(), 17, "GetCluster describes 16 faults per node, then counts the rest");
    assert_eq!(described[16], "... and 238 more (ListFaults lists them all)");
    ctl.stop().await;
}
