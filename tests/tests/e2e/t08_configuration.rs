use ringleader_node::runtime::{self, NodeConfig};
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, assert_refused, election, test_config};
use tokio::sync::watch;

/// With a static `nodes` list the controller drives node servers it did not start: GetCluster names them
/// and LIVE elections of every algorithm run correctly on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_node_list() {
    let (stop, stopped) = watch::channel(false);
    let mut addresses = Vec::new();
    let mut servers = Vec::new();
    for i in 0..5 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let cfg = NodeConfig { name: format!("static-{i}"), advertise: address.clone(), ..NodeConfig::default() };
        let mut rx = stopped.clone();
        servers.push(tokio::spawn(runtime::serve(listener, cfg, async move {
            let _ = rx.wait_for(|s| *s).await;
        })));
        addresses.push(address);
    }
    let mut config = test_config(0);
    config.controller.nodes = addresses.clone();
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let seen: Vec<(String, String, bool)> =
        cluster.nodes.into_iter().map(|n| (n.name, n.address, n.reachable)).collect();
    let expected: Vec<(String, String, bool)> =
        addresses.iter().enumerate().map(|(i, a)| (format!("static-{i}"), a.clone(), true)).collect();
    assert_eq!(seen, expected);
    for algorithm in ["all-the-way", "as-far", "controlled-distance", "stages"] {
        let e = client.start_election(pb::StartElectionRequest { seed: 8, ..election(algorithm) }).await.unwrap();
        let e = e.into_inner();
        assert_correct(&e);
        assert_eq!(e.n, 5);
        assert!(e.leader.unwrap().node.starts_with("static-"));
    }
    ctl.stop().await;
    stop.send(true).unwrap();
    for s in servers {
        s.await.unwrap().unwrap();
    }
}

/// The simulator's message budget refuses All the Way elections whose exact count exceeds it, and stops
/// (FAILED, with the reason) a run that reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_message_budget() {
    let mut config = test_config(0);
    config.controller.max_simulated_messages = 1_000;
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let sim = |algorithm: &str| pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        size: 100,
        ..election(algorithm)
    };
    let err = client.start_election(sim("all-the-way")).await.unwrap_err();
    assert_refused(&err, tonic::Code::InvalidArgument, "size");
    assert!(err.message().contains("10000 messages"), "{err:?}");
    // Descending ids are AsFar's worst case: n(n+1)/2 election messages.
    let e = client
        .start_election(pb::StartElectionRequest { id_order: pb::IdOrder::Descending as i32, ..sim("as-far") })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(e.state, pb::ElectionState::Failed as i32, "{e:?}");
    assert!(e.error.contains("budget"), "{}", e.error);
    let small = client.start_election(pb::StartElectionRequest { size: 10, ..sim("as-far") }).await.unwrap();
    assert_correct(&small.into_inner());
    ctl.stop().await;
}

/// A node that does not answer makes a LIVE election FAILED with an error naming it (nothing hangs), and
/// GetCluster reports it unreachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_node_fails_the_election() {
    let (stop, stopped) = watch::channel(false);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let alive = format!("http://{}", listener.local_addr().unwrap());
    let mut rx = stopped.clone();
    let cfg = NodeConfig { name: "alive".into(), advertise: alive.clone(), ..NodeConfig::default() };
    let server = tokio::spawn(runtime::serve(listener, cfg, async move {
        let _ = rx.wait_for(|s| *s).await;
    }));
    let dead = format!("http://127.0.0.1:{}", ringleader_tests::free_port());
    let mut config = test_config(0);
    config.controller.nodes = vec![alive, dead.clone()];
    config.controller.rpc_timeout_ms = 2_000;
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let e = client.start_election(election("as-far")).await.unwrap().into_inner();
    assert_eq!(e.state, pb::ElectionState::Failed as i32, "{e:?}");
    assert!(e.error.contains("Prepare") && e.error.contains(&dead), "{}", e.error);
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    assert!(cluster.nodes[0].reachable);
    assert!(!cluster.nodes[1].reachable && !cluster.nodes[1].error.is_empty(), "{:?}", cluster.nodes[1]);
    let err = client.get_leader(pb::GetLeaderRequest { election_id: e.election_id }).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::FailedPrecondition, "{err:?}");
    ctl.stop().await;
    stop.send(true).unwrap();
    server.await.unwrap().unwrap();
}

/// A node that takes part but never decides (here a stand-in Agent that answers every call and never
/// reports a decision).
#[derive(Debug)]
struct SilentAgent;

#[tonic::async_trait]
impl pb::agent_server::Agent for SilentAgent {
    async fn prepare(
        &self,
        _: tonic::Request<pb::PrepareRequest>,
    ) -> Result<tonic::Response<pb::PrepareResponse>, tonic::Status> {
        Ok(tonic::Response::new(pb::PrepareResponse {}))
    }
    async fn start(
        &self,
        _: tonic::Request<pb::StartRequest>,
    ) -> Result<tonic::Response<pb::StartResponse>, tonic::Status> {
        Ok(tonic::Response::new(pb::StartResponse {}))
    }
    async fn abort(
        &self,
        _: tonic::Request<pb::AbortRequest>,
    ) -> Result<tonic::Response<pb::AbortResponse>, tonic::Status> {
        Ok(tonic::Response::new(pb::AbortResponse {}))
    }
    async fn status(
        &self,
        request: tonic::Request<pb::StatusRequest>,
    ) -> Result<tonic::Response<pb::NodeElectionStatus>, tonic::Status> {
        let election_id = request.into_inner().election_id;
        Ok(tonic::Response::new(pb::NodeElectionStatus {
            election_id,
            role: pb::Role::Undecided as i32,
            ..Default::default()
        }))
    }
    async fn info(&self, _: tonic::Request<pb::InfoRequest>) -> Result<tonic::Response<pb::NodeInfo>, tonic::Status> {
        Ok(tonic::Response::new(pb::NodeInfo { name: "silent".into(), ..Default::default() }))
    }
    async fn set_faults(
        &self,
        _: tonic::Request<pb::SetFaultsRequest>,
    ) -> Result<tonic::Response<pb::SetFaultsResponse>, tonic::Status> {
        Ok(tonic::Response::new(pb::SetFaultsResponse::default()))
    }
    async fn messages(
        &self,
        _: tonic::Request<pb::MessagesRequest>,
    ) -> Result<tonic::Response<pb::MessageLog>, tonic::Status> {
        Ok(tonic::Response::new(pb::MessageLog::default()))
    }
    type EventsStream = tokio_stream::Pending<Result<pb::NodeEvent, tonic::Status>>;
    async fn events(
        &self,
        _: tonic::Request<pb::EventsRequest>,
    ) -> Result<tonic::Response<Self::EventsStream>, tonic::Status> {
        Ok(tonic::Response::new(tokio_stream::pending()))
    }
}

/// An election some node never decides ends FAILED after the decision timeout, with an error that says
/// which positions are undecided, and the decided ones still listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecided_election_times_out() {
    let (stop, stopped) = watch::channel(false);
    let mut addresses = Vec::new();
    let mut servers = Vec::new();
    for i in 0..3 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        addresses.push(address.clone());
        let mut rx = stopped.clone();
        let shutdown = async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        servers.push(tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(pb::agent_server::AgentServer::new(SilentAgent))
                .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), shutdown)
                .await
                .map_err(|e| format!("silent agent {i}: {e}"))
        }));
    }
    let mut config = test_config(0);
    config.controller.nodes = addresses;
    config.controller.decision_timeout_ms = 1_500;
    let ctl = TestController::start_with(config).await;
    let started = std::time::Instant::now();
    let e = ctl.client().start_election(election("stages")).await.unwrap().into_inner();
    assert!(started.elapsed() >= std::time::Duration::from_millis(1_500));
    assert_eq!(e.state, pb::ElectionState::Failed as i32, "{e:?}");
    assert!(
        e.error.contains("timed out after 1500 ms") && e.error.contains("3 of 3 positions undecided"),
        "{}",
        e.error
    );
    assert!(e.participants.iter().all(|p| p.role == "undecided" && p.node == "silent"), "{:?}", e.participants);
    ctl.stop().await;
    stop.send(true).unwrap();
    for s in servers {
        s.await.unwrap().unwrap();
    }
}

/// A `controller.health_listen` address already taken stops the controller with an error naming the
/// setting and the address, instead of serving without the port its probes use.
#[tokio::test]
async fn health_port_in_use_is_an_error_naming_the_setting() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let mut config = test_config(0);
    config.controller.health_listen = addr.to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = ringleader_controller::run(config, listener, std::future::pending()).await.unwrap_err().to_string();
    assert!(err.contains("controller.health_listen") && err.contains(&addr.to_string()), "{err}");
}
