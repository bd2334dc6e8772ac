use std::future::Future;
use std::pin::Pin;

use ringleader_node::runtime::{self, NodeConfig};
use ringleader_proto::v1 as pb;
use ringleader_tests::{
    TestController, assert_failed, assert_refused, elect, elect_correct, election, simulated, test_config,
};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tonic::{Request, Response, Status};

/// Resolves when the servers are to stop.
type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Servers this test runs itself on 127.0.0.1, for a controller with a static `nodes` list.
struct Servers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<Result<(), String>>>,
    /// Where they serve (`http://127.0.0.1:<port>`), in start order.
    addresses: Vec<String>,
}

impl Servers {
    /// `n` servers: `serve(i, listener, address, shutdown)` runs the `i`-th until `shutdown` resolves.
    async fn start<F, S>(n: usize, serve: S) -> Servers
    where
        S: Fn(usize, TcpListener, String, Shutdown) -> F,
        F: Future<Output = Result<(), String>> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        let (mut tasks, mut addresses) = (Vec::new(), Vec::new());
        for i in 0..n {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = format!("http://{}", listener.local_addr().unwrap());
            let mut rx = stopped.clone();
            let shutdown = Box::pin(async move {
                let _ = rx.wait_for(|s| *s).await;
            });
            tasks.push(tokio::spawn(serve(i, listener, address.clone(), shutdown)));
            addresses.push(address);
        }
        Servers { stop, tasks, addresses }
    }

    /// Node servers (the real runtime), named by `name(i)`.
    async fn nodes(n: usize, name: impl Fn(usize) -> String) -> Servers {
        Servers::start(n, |i, listener, advertise, shutdown| {
            let cfg = NodeConfig { name: name(i), advertise, ..NodeConfig::default() };
            async move { runtime::serve(listener, cfg, shutdown).await.map_err(|e| e.to_string()) }
        })
        .await
    }

    /// Stop them all, each without error.
    async fn stop(self) {
        self.stop.send(true).unwrap();
        for task in self.tasks {
            task.await.unwrap().unwrap();
        }
    }
}

/// With a static `nodes` list the controller drives node servers it did not start: GetCluster names them
/// and LIVE elections of every algorithm run correctly on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_node_list() {
    let servers = Servers::nodes(5, |i| format!("static-{i}")).await;
    let addresses = &servers.addresses;
    let ctl = TestController::start_tuned(0, |c| c.nodes = addresses.clone()).await;
    let mut client = ctl.client();
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let seen: Vec<(String, String, bool)> =
        cluster.nodes.into_iter().map(|n| (n.name, n.address, n.reachable)).collect();
    let expected: Vec<(String, String, bool)> =
        addresses.iter().enumerate().map(|(i, a)| (format!("static-{i}"), a.clone(), true)).collect();
    assert_eq!(seen, expected);
    for algorithm in ["all-the-way", "as-far", "controlled-distance", "stages"] {
        let e = elect_correct(&mut client, pb::StartElectionRequest { seed: 8, ..election(algorithm) }).await;
        assert_eq!(e.n, 5);
        assert!(e.leader.unwrap().node.starts_with("static-"));
    }
    ctl.stop().await;
    servers.stop().await;
}

/// The simulator's message budget refuses All the Way elections whose exact count exceeds it, and stops
/// (FAILED, with the reason) a run that reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_message_budget() {
    let ctl = TestController::start_tuned(0, |c| c.max_simulated_messages = 1_000).await;
    let mut client = ctl.client();
    let sim = |algorithm: &str| simulated(algorithm, 100);
    let err = client.start_election(sim("all-the-way")).await.unwrap_err();
    assert_refused(&err, tonic::Code::InvalidArgument, "size");
    assert!(err.message().contains("10000 messages"), "{err:?}");
    // Descending ids are AsFar's worst case: n(n+1)/2 election messages.
    let descending = pb::StartElectionRequest { id_order: pb::IdOrder::Descending as i32, ..sim("as-far") };
    assert_failed(&elect(&mut client, descending).await, "budget");
    elect_correct(&mut client, simulated("as-far", 10)).await;
    ctl.stop().await;
}

/// A node that does not answer is down: a LIVE election that needs it is refused FAILED_PRECONDITION
/// naming `size` and its address (nothing hangs; it made the election FAILED once "Prepare" failed,
/// before elections were placed on the nodes that are up), one that names it is refused naming
/// `nodes`, and GetCluster reports it unreachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_node_is_refused_by_name() {
    let server = Servers::nodes(1, |_| "alive".into()).await;
    let alive = server.addresses[0].clone();
    let dead = format!("http://127.0.0.1:{}", ringleader_tests::free_port());
    let ctl = TestController::start_tuned(0, |c| {
        c.nodes = vec![alive, dead.clone()];
        c.rpc_timeout_ms = 2_000;
    })
    .await;
    let mut client = ctl.client();
    let refused = client.start_election(election("as-far")).await.unwrap_err();
    assert_refused(&refused, tonic::Code::FailedPrecondition, "size");
    assert!(refused.message().contains(&format!("down: {dead} (not answering")), "{refused:?}");
    let named = pb::StartElectionRequest { nodes: vec![dead.clone(), "alive".into()], ..election("as-far") };
    let refused = client.start_election(named).await.unwrap_err();
    assert_refused(&refused, tonic::Code::FailedPrecondition, "nodes");
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    assert!(cluster.nodes[0].reachable);
    assert!(!cluster.nodes[1].reachable && !cluster.nodes[1].error.is_empty(), "{:?}", cluster.nodes[1]);
    ctl.stop().await;
    server.stop().await;
}

/// A node that takes part but never decides (here a stand-in Agent that answers every call and never
/// reports a decision); it counts the Info calls it answers, each after `info_delay`.
#[derive(Debug, Default)]
struct SilentAgent {
    infos: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    info_delay: std::time::Duration,
}

/// What an Agent call answers.
type Answer<T> = Result<Response<T>, Status>;

/// The empty answer: the message with every field at its default.
fn empty<T: Default>() -> Answer<T> {
    Ok(Response::new(T::default()))
}

#[tonic::async_trait]
impl pb::agent_server::Agent for SilentAgent {
    async fn prepare(&self, _: Request<pb::PrepareRequest>) -> Answer<pb::PrepareResponse> {
        empty()
    }
    async fn start(&self, _: Request<pb::StartRequest>) -> Answer<pb::StartResponse> {
        empty()
    }
    async fn abort(&self, _: Request<pb::AbortRequest>) -> Answer<pb::AbortResponse> {
        empty()
    }
    async fn status(&self, request: Request<pb::StatusRequest>) -> Answer<pb::NodeElectionStatus> {
        let election_id = request.into_inner().election_id;
        Ok(Response::new(pb::NodeElectionStatus {
            election_id,
            role: pb::Role::Undecided as i32,
            ..Default::default()
        }))
    }
    async fn info(&self, _: Request<pb::InfoRequest>) -> Answer<pb::NodeInfo> {
        self.infos.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(self.info_delay).await;
        Ok(Response::new(pb::NodeInfo { name: "silent".into(), ..Default::default() }))
    }
    async fn set_faults(&self, _: Request<pb::SetFaultsRequest>) -> Answer<pb::SetFaultsResponse> {
        empty()
    }
    async fn change_faults(&self, _: Request<pb::ChangeFaultsRequest>) -> Answer<pb::SetFaultsResponse> {
        empty()
    }
    async fn messages(&self, _: Request<pb::MessagesRequest>) -> Answer<pb::MessageLog> {
        empty()
    }
    async fn leave(&self, _: Request<pb::LeaveRequest>) -> Answer<pb::LeaveResponse> {
        empty()
    }
    type EventsStream = tokio_stream::Pending<Result<pb::NodeEvent, Status>>;
    async fn events(&self, _: Request<pb::EventsRequest>) -> Answer<Self::EventsStream> {
        Ok(Response::new(tokio_stream::pending()))
    }
}

/// An election some node never decides ends FAILED after the decision timeout, with an error that says
/// which positions are undecided, and the decided ones still listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecided_election_times_out() {
    let servers = Servers::start(3, |i, listener, _, shutdown| async move {
        tonic::transport::Server::builder()
            .add_service(pb::agent_server::AgentServer::new(SilentAgent::default()))
            .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), shutdown)
            .await
            .map_err(|e| format!("silent agent {i}: {e}"))
    })
    .await;
    let ctl = TestController::start_tuned(0, |c| {
        c.nodes = servers.addresses.clone();
        c.decision_timeout_ms = 1_500;
    })
    .await;
    let started = std::time::Instant::now();
    let e = elect(&mut ctl.client(), election("stages")).await;
    assert!(started.elapsed() >= std::time::Duration::from_millis(1_500));
    assert_failed(&e, "timed out after 1500 ms");
    assert!(e.error.contains("3 of 3 positions undecided"), "{}", e.error);
    assert!(e.participants.iter().all(|p| p.role == "undecided" && p.node == "silent"), "{:?}", e.participants);
    ctl.stop().await;
    servers.stop().await;
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

/// 100 GetCluster calls at once against three nodes that each take 300 ms to answer Info: every call
/// gets all three nodes, and the nodes are asked in shared rounds (the calls that arrive while one
/// round is asking share the next): at most 10 rounds, 30 Info calls, however the 100 calls spread
/// over a loaded machine (about 3 rounds when they arrive together; CI once saw 4). Before, each call
/// asked every node itself: 300 Info calls, and 10,000 unread GetCluster calls held 50,000 node
/// calls in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_get_cluster_calls_share_their_asking() {
    let infos = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let shared = infos.clone();
    let servers = Servers::start(3, move |i, listener, _, shutdown| {
        let agent = SilentAgent { infos: shared.clone(), info_delay: std::time::Duration::from_millis(300) };
        async move {
            tonic::transport::Server::builder()
                .add_service(pb::agent_server::AgentServer::new(agent))
                .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), shutdown)
                .await
                .map_err(|e| format!("silent agent {i}: {e}"))
        }
    })
    .await;
    let ctl = TestController::start_tuned(0, |c| c.nodes = servers.addresses.clone()).await;
    let client = ctl.client();
    client.clone().get_cluster(pb::GetClusterRequest {}).await.unwrap();
    let before = infos.load(std::sync::atomic::Ordering::Relaxed);
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let mut c = client.clone();
            tokio::spawn(async move { c.get_cluster(pb::GetClusterRequest {}).await })
        })
        .collect();
    for call in calls {
        let cluster = call.await.unwrap().unwrap().into_inner();
        assert_eq!(cluster.nodes.len(), 3);
        assert!(cluster.nodes.iter().all(|n| n.reachable), "{:?}", cluster.nodes);
    }
    let asked = infos.load(std::sync::atomic::Ordering::Relaxed) - before;
    eprintln!("100 concurrent GetCluster calls asked the nodes {asked} times ({} rounds)", asked / 3);
    assert!(asked <= 30, "100 concurrent GetCluster calls asked the nodes {asked} times");
    ctl.stop().await;
    servers.stop().await;
}
