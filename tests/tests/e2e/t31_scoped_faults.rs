//! Faults scoped to one election (`InjectFaultRequest.election_id`): they
//! touch that election alone, other elections on the same nodes run on, and
//! they end with their election; the lab's clicks use them by default.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{
    Client, Proc, TestController, assert_refused, controller_binary, elect, election, fault, first_leader, free_port,
    inject, kept, leader_until, leads, simulated, stop_kept,
};
use tonic::Code;

use pb::inject_fault_request::Kind;

/// A crash of `node` (or of the leader) scoped to election `id`.
fn crash_in(id: &str, node: &str, leader: bool) -> pb::InjectFaultRequest {
    pb::InjectFaultRequest {
        election_id: id.into(),
        ..fault(Kind::Crash(pb::CrashFault { node: node.into(), leader, planned: false }))
    }
}

async fn faults(client: &mut Client) -> Vec<pb::FaultInfo> {
    client.list_faults(pb::ListFaultsRequest {}).await.unwrap().into_inner().faults
}

/// Eight embedded nodes keep a bully leader; its leader is crashed by a fault scoped to the leadership
/// (`crash.leader` with its election id): the leadership records a failover caused by the crash and
/// agrees on id 7, while a LIVE one-shot election on all eight nodes, started after the crash, FINISHES
/// with a leader (a node-wide crash would have it refused: the node is down). The fault is listed with
/// its scope; GetCluster describes it as that election's only. Stopping the leadership leaves no fault
/// listed, and the nodes take a new 8-node election. Before scoped faults, the crash was node-wide.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_crash_ends_with_its_leadership_and_spares_other_elections() {
    let ctl = TestController::start(8).await;
    let mut client = ctl.client();
    let kept = elect(&mut client, kept("bully")).await;
    let id = kept.election_id.clone();
    let first = first_leader(&mut client, &id, 8).await;
    let leader_node = first.leader.as_ref().unwrap().node.clone();

    tracing::info!("--- crash the leader, scoped to the leadership");
    let f = inject(&mut client, crash_in(&id, "", true)).await;
    assert_eq!(f.election_id, id);
    assert_eq!(f.description, format!("crash {leader_node} in election {id}"));
    let fo = leader_until(&mut client, &id, Duration::from_secs(20), |l| {
        l.agreed && leads(l, 7) && l.last_failover.as_ref().is_some_and(|f| f.agreement_ms.is_some())
    })
    .await
    .last_failover
    .unwrap();
    assert_eq!((fo.leader.as_ref().map(|l| l.id), fo.cause.as_str()), (Some(8), "crash fault"), "{fo:?}");
    assert_eq!(fo.new_leader.as_ref().map(|l| l.id), Some(7), "{fo:?}");
    println!("scoped crash failover: detection {:?} ms, agreement {:?} ms", fo.detection_ms, fo.agreement_ms);

    tracing::info!("--- another LIVE election on all eight nodes runs on");
    let other = elect(&mut client, election("as-far")).await;
    assert_eq!(other.state, pb::ElectionState::Finished as i32, "{other:?}");
    assert_eq!(other.n, 8, "{other:?}");
    assert!(other.leader.is_some(), "{other:?}");
    let listed = faults(&mut client).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!((listed[0].election_id.as_str(), listed[0].state), (id.as_str(), pb::FaultState::Active as i32));
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let on = cluster.nodes.iter().find(|n| n.name == leader_node).unwrap();
    assert_eq!(on.faults, [format!("crashed ({}, election {id} only)", f.fault_id)], "{on:?}");

    tracing::info!("--- stopping the leadership ends its fault");
    stop_kept(&mut client, id).await;
    assert!(faults(&mut client).await.is_empty(), "no fault left behind");
    let after = elect(&mut client, election("as-far")).await;
    assert_eq!((after.state, after.n), (pb::ElectionState::Finished as i32, 8), "{after:?}");
    ctl.stop().await;
}

/// A scoped fault that cannot apply is refused, naming the field: an unknown election NOT_FOUND
/// (`election_id`), a SIMULATED one and one that has ended FAILED_PRECONDITION (`election_id`), a node
/// that does not run the election INVALID_ARGUMENT (`crash.node`, `link.to`), a planned stop
/// INVALID_ARGUMENT (`crash.planned`: it is node-wide); nothing refused is listed. A scoped fault of a
/// one-shot election that then finishes is gone with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_faults_that_cannot_apply_are_refused() {
    let ctl = TestController::start(5).await;
    let mut client = ctl.client();
    let refused = |status: Result<tonic::Response<pb::FaultInfo>, tonic::Status>| status.unwrap_err();

    let status = refused(client.inject_fault(crash_in("e404-0", "node-1", false)).await);
    assert_refused(&status, Code::NotFound, "election_id");

    let sim = elect(&mut client, simulated("as-far", 4)).await;
    let status = refused(client.inject_fault(crash_in(&sim.election_id, "node-1", false)).await);
    assert_refused(&status, Code::FailedPrecondition, "election_id");
    assert!(status.message().contains("SIMULATED"), "{status:?}");

    let done = elect(&mut client, election("as-far")).await;
    let status = refused(client.inject_fault(crash_in(&done.election_id, "node-1", false)).await);
    assert_refused(&status, Code::FailedPrecondition, "election_id");
    assert!(status.message().contains("ended"), "{status:?}");

    // A kept leadership on three of the five nodes (node-0..node-2).
    let three = elect(&mut client, pb::StartElectionRequest { size: 3, ..kept("bully") }).await;
    let id = three.election_id.clone();
    let status = refused(client.inject_fault(crash_in(&id, "node-4", false)).await);
    assert_refused(&status, Code::InvalidArgument, "crash.node");
    let link = pb::InjectFaultRequest {
        election_id: id.clone(),
        ..fault(Kind::Link(pb::LinkFaultSpec { to: "node-3".into(), drop: 1.0, ..Default::default() }))
    };
    assert_refused(&refused(client.inject_fault(link).await), Code::InvalidArgument, "link.to");
    let planned = pb::InjectFaultRequest {
        election_id: id.clone(),
        ..fault(Kind::Crash(pb::CrashFault { node: "node-1".into(), leader: false, planned: true }))
    };
    assert_refused(&refused(client.inject_fault(planned).await), Code::InvalidArgument, "crash.planned");
    assert!(faults(&mut client).await.is_empty());

    // Accepted on its own node; a node-wide recover of that node recovers it too.
    inject(&mut client, crash_in(&id, "node-1", false)).await;
    let recover = fault(Kind::Recover(pb::RecoverFault { node: "node-1".into() }));
    inject(&mut client, recover).await;
    assert!(faults(&mut client).await.is_empty(), "a node-wide recover takes the scoped crash");
    stop_kept(&mut client, id).await;
    ctl.stop().await;
}

/// One HTTP/1.1 exchange with the controller's HTTP port `port` (closed after it): status and body.
fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the HTTP port");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nx-ringleader-lab: 1\r\n\
         content-type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0), body.to_string())
}

/// The lab's calls over HTTP (the controller binary, 8 embedded nodes): `POST /lab/act` crash on a kept
/// leadership's page scopes the crash to that leadership (listed with its election id, `GET
/// /lab/cluster` shows it with `electionId` and no node crashed node-wide), so a LIVE 8-node election
/// still FINISHES; `clear` with no election and no fault id clears what the lab set, and leaves an
/// operator's node-wide fault, which `clear` with its `fault_id` then clears; a crash clicked again,
/// then `stop` on the page: no fault is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_labs_clicks_are_scoped_to_the_election_shown() {
    let (api, web) = (free_port(), free_port());
    let _controller = Proc(
        Command::new(controller_binary())
            .args(["--local-nodes", "8", "--host", "127.0.0.1", "--port", &api.to_string()])
            .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{web}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ringleader-controller"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut client = loop {
        match pb::controller_client::ControllerClient::connect(format!("http://127.0.0.1:{api}")).await {
            Ok(c) => break c,
            Err(e) => assert!(Instant::now() < deadline, "controller not up: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    while std::net::TcpStream::connect(("127.0.0.1", web)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP port did not open");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let id = elect(&mut client, kept("bully")).await.election_id;
    first_leader(&mut client, &id, 8).await;

    tracing::info!("--- the lab crashes node-3 on the leadership's page");
    let click = format!(r#"{{"election_id":"{id}","action":"crash","nodes":["node-3"]}}"#);
    let (status, body) = http(web, "POST", "/lab/act", &click);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&format!("crash node-3 in election {id}")), "{body}");
    let listed = faults(&mut client).await;
    assert_eq!(listed.iter().map(|f| f.election_id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    let (status, body) = http(web, "GET", "/lab/cluster", "");
    assert_eq!(status, 200, "{body}");
    let cluster: serde_json::Value = serde_json::from_str(&body).unwrap();
    let nodes = cluster["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 8, "{body}");
    assert!(nodes.iter().all(|n| n["reachable"] == true && n["crashed"] == false), "{body}");
    let held = &cluster["faults"][0];
    assert_eq!((&held["electionId"], &held["state"]), (&serde_json::json!(id), &serde_json::json!("ACTIVE")));
    let other = elect(&mut client, election("as-far")).await;
    assert_eq!((other.state, other.n), (pb::ElectionState::Finished as i32, 8), "{other:?}");

    tracing::info!("--- an operator's node-wide fault stays when the lab clears its own");
    let slow = fault(Kind::Link(pb::LinkFaultSpec { from: "node-0".into(), delay_ms: 1, ..Default::default() }));
    let operator = inject(&mut client, slow).await;
    let (status, body) = http(web, "POST", "/lab/act", r#"{"action":"clear"}"#);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("cleared 1 fault"), "{body}");
    let left = faults(&mut client).await;
    assert_eq!(left.iter().map(|f| f.fault_id.as_str()).collect::<Vec<_>>(), [operator.fault_id.as_str()]);
    let by_id = format!(r#"{{"action":"clear","fault_id":"{}"}}"#, operator.fault_id);
    let (status, body) = http(web, "POST", "/lab/act", &by_id);
    assert_eq!(status, 200, "{body}");
    assert!(faults(&mut client).await.is_empty());

    tracing::info!("--- a crash clicked again, then stop on the page: no fault left behind");
    let (status, body) = http(web, "POST", "/lab/act", &click);
    assert_eq!(status, 200, "{body}");
    assert_eq!(faults(&mut client).await.len(), 1);
    let stop = format!(r#"{{"election_id":"{id}","action":"stop"}}"#);
    let (status, body) = http(web, "POST", "/lab/act", &stop);
    assert_eq!(status, 200, "{body}");
    assert!(faults(&mut client).await.is_empty(), "the stopped leadership's fault ended with it");
    let (_, body) = http(web, "GET", "/lab/cluster", "");
    assert!(body.contains(r#""faults":[]"#), "{body}");
    let after = elect(&mut client, election("as-far")).await;
    assert_eq!((after.state, after.n), (pb::ElectionState::Finished as i32, 8), "{after:?}");
}

/// A crash scoped to a kept bully leadership of 8 nodes, injected at once after StartElection
/// returns (before or after its nodes are prepared, as the race goes), of the node holding id 8:
/// in each of 4 trials the crash reaches the node: either the leadership agrees on id 7, or, when
/// the crash landed before the node was started, the election fails naming the crash. Before, a
/// scoped fault that arrived before the node held the election was skipped there for good (listed
/// ACTIVE, never applied), and id 8 led.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_fault_injected_at_the_start_reaches_its_nodes() {
    let ctl = TestController::start(8).await;
    let mut client = ctl.client();
    for trial in 0..4 {
        let request = pb::StartElectionRequest { ids: (1..=8).collect(), ..kept("bully") };
        let e = client.start_election(request).await.unwrap().into_inner();
        client.inject_fault(crash_in(&e.election_id, "node-7", false)).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        let outcome = loop {
            let asked = pb::GetLeaderRequest { election_id: e.election_id.clone() };
            match client.get_leader(asked).await {
                // Id 8 may lead for a moment when the crash lands just after the start.
                Ok(l) if l.get_ref().agreed && l.get_ref().leader.as_ref().is_some_and(|r| r.id == 7) => {
                    break "id 7 agreed".to_string();
                }
                Err(s) if s.message().contains("crashed (an injected fault)") => {
                    break format!("failed: {}", s.message());
                }
                _ => {}
            }
            assert!(Instant::now() < deadline, "trial {trial}: neither id 7 agreed nor the crash named in 15 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        eprintln!("trial {trial}: {outcome}");
        if outcome == "id 7 agreed" {
            stop_kept(&mut client, e.election_id.clone()).await;
        }
        assert!(faults(&mut client).await.is_empty(), "the fault ended with its leadership");
    }
    ctl.stop().await;
}
