//! Election history across a controller restart.

use std::time::Duration;

use ringleader_controller::elections::{ElectionRecord, Mode, State};
use ringleader_controller::history::History;
use ringleader_node::runtime::{self, NodeConfig};
use ringleader_proto::v1::{self as pb, agent_client::AgentClient};
use ringleader_tests::{TestController, assert_correct, election, kept, leader_until, simulated, test_config};

/// With `history_path` set, a controller that stops and starts again on the same file lists the same
/// elections, in the same order, with the same verdicts, leaders and metrics; the kept leadership that
/// was running when it stopped was ended by the shutdown (FINISHED, with a note saying so) and comes
/// back so; GetElection finds a restored record and new elections are added next to the old ones.
/// (A record in flight when a controller dies comes back FAILED: history.rs's unit tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_list_elections() {
    let dir = std::env::temp_dir().join(format!("ringleader-history-e2e-{}", std::process::id()));
    let mut config = test_config(4);
    config.controller.history_path = dir.join("history.redb").display().to_string();

    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    assert_correct(&client.start_election(election("stages")).await.unwrap().into_inner());
    let simulated = pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, size: 16, ..election("as-far") };
    assert_correct(&client.start_election(simulated).await.unwrap().into_inner());
    let k = client.start_election(kept("bully")).await.unwrap().into_inner();
    leader_until(&mut client, &k.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let before = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    assert_eq!(before.len(), 3);
    ctl.stop().await;

    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    let after = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    let ids = |l: &[pb::Election]| l.iter().map(|e| e.election_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before), "same elections, same order (most recent first)");
    for (a, b) in after.iter().zip(&before).filter(|(a, _)| a.election_id != k.election_id) {
        assert_eq!(a, b, "a finished election comes back as it was");
    }
    let kept_after = after.iter().find(|e| e.election_id == k.election_id).unwrap();
    assert_eq!(kept_after.state, pb::ElectionState::Finished as i32, "{kept_after:?}");
    assert!(kept_after.notes.iter().any(|n| n.contains("shutdown")), "{:?}", kept_after.notes);
    let one = client
        .get_election(pb::GetElectionRequest { election_id: before[2].election_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(one.algorithm, "stages");
    assert_correct(&client.start_election(election("as-far")).await.unwrap().into_inner());
    let more = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    assert_eq!(more.len(), 4);
    ctl.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Position 0 of a 2-node as-far election `id`, prepared and not started: something for a node to hold.
fn held_election(id: &str, peer: &str) -> pb::PrepareRequest {
    pb::PrepareRequest {
        election_id: id.into(),
        algorithm: "as-far".into(),
        rule: pb::Rule::Max as i32,
        size: 2,
        id: 1,
        ports: vec![
            pb::PortPeer { position: 1, remote_port: 1, ..Default::default() },
            pb::PortPeer { position: 1, address: peer.into(), remote_port: 0, ..Default::default() },
        ],
        ..Default::default()
    }
}

/// A node server of the real runtime on 127.0.0.1 with no orphan grace (only a controller clears
/// it): its address, a client of its Agent, and the switch that stops it.
async fn external_node(name: &str) -> (String, Agent, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let cfg = NodeConfig {
        name: name.into(),
        advertise: address.clone(),
        orphan_grace: Duration::ZERO,
        ..NodeConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(runtime::serve(listener, cfg, async move {
        let _ = stopped.await;
    }));
    let agent = AgentClient::connect(address.clone()).await.unwrap();
    (address, agent, stop)
}

type Agent = AgentClient<tonic::transport::Channel>;

/// Poll until every node behind `agents` holds `count` elections (at most 10 s).
async fn wait_held(agents: &mut [Agent], count: u64, why: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    for agent in agents {
        loop {
            let held = agent.info(pb::InfoRequest {}).await.unwrap().into_inner().elections;
            if held == count {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{why}: a node holds {held} elections, not {count}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A history whose LIVE record `e-old` was RUNNING when its controller died, and two external
/// nodes (orphan grace off) still holding `e-old` beside an election of nobody's: a controller
/// started on that history reads `e-old` back FAILED and aborts it on both nodes, leaving the other
/// alone. If the nodes hold `e-old` again afterwards (as nodes that were unreachable then would),
/// StopElection of the FAILED record aborts it there too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_controller_aborts_interrupted_elections_on_its_nodes() {
    let dir = std::env::temp_dir().join(format!("ringleader-history-interrupted-{}", std::process::id()));
    let path = dir.join("history.redb");
    let (history, _) = History::open(&path, 100, 64 << 20).unwrap();
    let running =
        ElectionRecord { state: State::Running, ..ElectionRecord::blank("e-old".into(), "as-far", Mode::Live) };
    history.put(&running);
    history.close();
    drop(history);

    let (mut addresses, mut agents, mut stops) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..2 {
        let (address, agent, stop) = external_node(&format!("external-{i}")).await;
        addresses.push(address);
        agents.push(agent);
        stops.push(stop);
    }
    for agent in &mut agents {
        agent.prepare(held_election("e-old", &addresses[0])).await.unwrap();
        agent.prepare(held_election("someone-else", &addresses[0])).await.unwrap();
    }

    tracing::info!("--- a controller starts on the history");
    let mut config = test_config(0);
    config.controller.nodes = addresses.clone();
    config.controller.history_path = path.display().to_string();
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let old = client.get_election(pb::GetElectionRequest { election_id: "e-old".into() }).await.unwrap().into_inner();
    assert_eq!(old.state, pb::ElectionState::Failed as i32, "{old:?}");
    wait_held(&mut agents, 1, "the interrupted election is aborted at start").await;
    for agent in &mut agents {
        let other = agent.status(pb::StatusRequest { election_id: "someone-else".into() }).await;
        other.expect("the other election is left alone");
    }

    tracing::info!("--- the nodes hold it again: StopElection aborts it");
    for agent in &mut agents {
        agent.prepare(held_election("e-old", &addresses[0])).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    wait_held(&mut agents, 2, "nothing aborts it meanwhile").await;
    let stopped =
        client.stop_election(pb::StopElectionRequest { election_id: "e-old".into() }).await.unwrap().into_inner();
    assert_eq!(stopped.state, pb::ElectionState::Failed as i32, "{stopped:?}");
    wait_held(&mut agents, 1, "StopElection of the interrupted record aborts it").await;

    ctl.stop().await;
    for stop in stops {
        let _ = stop.send(());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A controller restarted on a history whose only record was interrupted (FAILED) has no finished
/// election to name: GetLeader without an id says so NOT_FOUND, naming how many records there are
/// and the latest one with its state and error, instead of "no election has finished yet".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_leader_names_the_latest_record_when_none_finished() {
    let dir = std::env::temp_dir().join(format!("ringleader-history-no-leader-{}", std::process::id()));
    let path = dir.join("history.redb");
    let (history, _) = History::open(&path, 100, 64 << 20).unwrap();
    let running =
        ElectionRecord { state: State::Running, ..ElectionRecord::blank("e-cut".into(), "bully", Mode::Live) };
    history.put(&running);
    history.close();
    drop(history);

    let mut config = test_config(0);
    config.controller.history_path = path.display().to_string();
    let ctl = TestController::start_with(config).await;
    let status = ctl.client().get_leader(pb::GetLeaderRequest::default()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    let m = status.message();
    assert!(!m.contains("yet"), "records exist: {m}");
    assert!(m.contains("1 election") && m.contains("e-cut") && m.contains("FAILED"), "{m}");
    assert!(m.contains("stopped while this election was running"), "the error is quoted: {m}");
    ctl.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Stored records that outgrow `max_stored_mib` (1 MiB of SIMULATED records with diagrams): the
/// controller drops the oldest diagrams, then the oldest records, in memory and in the history
/// alike, so that stopped gracefully and started again on the same file it lists every record it
/// listed, with the same notes (a dropped diagram says so). Before, the file dropped whole records
/// by their encoded bytes while memory dropped diagrams: fewer came back, and nothing said so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_restart_keeps_every_listed_record() {
    let dir = std::env::temp_dir().join(format!("ringleader-history-pruned-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = test_config(2);
    config.controller.history_path = dir.join("history.redb").display().to_string();
    config.controller.max_stored_mib = 1;
    config.controller.max_diagram_kib = 256;
    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    let with_diagram = pb::StartElectionRequest {
        simulation: Some(pb::SimulationOptions { diagram: true, ..Default::default() }),
        ..simulated("as-far", 48)
    };
    let list = |client: &mut ringleader_tests::Client| {
        let mut client = client.clone();
        async move { client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections }
    };
    let mut more = None;
    for _ in 0..400 {
        assert_correct(&client.start_election(with_diagram.clone()).await.unwrap().into_inner());
        if more.is_none()
            && list(&mut client).await.last().is_some_and(|e| e.notes.iter().any(|n| n.contains("dropped")))
        {
            more = Some(20);
        }
        more = more.map(|m: u32| m - 1);
        if more == Some(0) {
            break;
        }
    }
    assert_eq!(more, Some(0), "the stored records never outgrew 1 MiB");
    let before = list(&mut client).await;
    ctl.stop().await;

    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let after = list(&mut client).await;
    let ids = |l: &[pb::Election]| l.iter().map(|e| e.election_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before), "{} listed, {} back", before.len(), after.len());
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(a.notes, b.notes, "{}", a.election_id);
    }
    ctl.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
