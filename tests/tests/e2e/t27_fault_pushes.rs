//! What InjectFault and ClearFaults send the nodes: each change goes to the
//! nodes it concerns, as one change, whatever the faults already held.

use std::sync::{Arc, Mutex};

use pb::inject_fault_request::Kind;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, fault, inject};
use tokio::sync::watch;
use tonic::{Request, Response, Status};

/// One fault call a node received: the call, and how many link rules it carried.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Call {
    /// `SetFaults`: the node's whole share, with this many rules.
    Set(usize),
    /// `ChangeFaults`: rules added, fault ids removed.
    Change { added: usize, removed: Vec<String> },
}

/// A stand-in node that answers every Agent call and records its fault calls.
#[derive(Clone, Debug)]
struct Recorder {
    name: String,
    calls: Arc<Mutex<Vec<Call>>>,
    /// Has the controller opened this node's event stream?
    followed: Arc<std::sync::atomic::AtomicBool>,
    /// Refuse the next fault call (UNAVAILABLE), as a node that went away would.
    refuse_next: Arc<std::sync::atomic::AtomicBool>,
}

impl Recorder {
    /// The fault calls received since the last `take`.
    fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    /// Record a fault call, or refuse it if told to.
    fn record(&self, call: Call) -> Answer<pb::SetFaultsResponse> {
        if self.refuse_next.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Err(Status::unavailable("refused by the test"));
        }
        self.calls.lock().unwrap().push(call);
        empty()
    }
}

type Answer<T> = Result<Response<T>, Status>;

fn empty<T: Default>() -> Answer<T> {
    Ok(Response::new(T::default()))
}

#[tonic::async_trait]
impl pb::agent_server::Agent for Recorder {
    async fn prepare(&self, _: Request<pb::PrepareRequest>) -> Answer<pb::PrepareResponse> {
        empty()
    }
    async fn start(&self, _: Request<pb::StartRequest>) -> Answer<pb::StartResponse> {
        empty()
    }
    async fn abort(&self, _: Request<pb::AbortRequest>) -> Answer<pb::AbortResponse> {
        empty()
    }
    async fn status(&self, _: Request<pb::StatusRequest>) -> Answer<pb::NodeElectionStatus> {
        empty()
    }
    async fn info(&self, _: Request<pb::InfoRequest>) -> Answer<pb::NodeInfo> {
        Ok(Response::new(pb::NodeInfo { name: self.name.clone(), ..Default::default() }))
    }
    async fn set_faults(&self, request: Request<pb::SetFaultsRequest>) -> Answer<pb::SetFaultsResponse> {
        self.record(Call::Set(request.get_ref().links.len()))
    }
    async fn change_faults(&self, request: Request<pb::ChangeFaultsRequest>) -> Answer<pb::SetFaultsResponse> {
        let r = request.into_inner();
        self.record(Call::Change { added: r.add.len(), removed: r.remove })
    }
    async fn messages(&self, _: Request<pb::MessagesRequest>) -> Answer<pb::MessageLog> {
        empty()
    }
    async fn leave(&self, _: Request<pb::LeaveRequest>) -> Answer<pb::LeaveResponse> {
        empty()
    }
    type EventsStream = tokio_stream::Pending<Result<pb::NodeEvent, Status>>;
    async fn events(&self, _: Request<pb::EventsRequest>) -> Answer<Self::EventsStream> {
        self.followed.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(Response::new(tokio_stream::pending()))
    }
}

/// A link fault from node `from` (every node when empty) that delays by `ms`.
fn slow(from: &str, ms: u64) -> pb::InjectFaultRequest {
    fault(Kind::Link(pb::LinkFaultSpec { from: from.into(), delay_ms: ms, ..Default::default() }))
}

/// `n` recording nodes (`rec-0`, ...), followed by a controller that drives them: the controller, a
/// client, the recorders, and what stops the nodes.
async fn recorded(n: usize) -> (TestController, ringleader_tests::Client, Vec<Recorder>, watch::Sender<bool>) {
    let (stop, stopped) = watch::channel(false);
    let mut recorders = Vec::new();
    let mut addresses = Vec::new();
    for i in 0..n {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addresses.push(format!("http://{}", listener.local_addr().unwrap()));
        let recorder = Recorder {
            name: format!("rec-{i}"),
            calls: Arc::default(),
            followed: Arc::default(),
            refuse_next: Arc::default(),
        };
        recorders.push(recorder.clone());
        let mut rx = stopped.clone();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(pb::agent_server::AgentServer::new(recorder))
                .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), async move {
                    let _ = rx.wait_for(|s| *s).await;
                }),
        );
    }
    let ctl = TestController::start_tuned(0, |c| c.nodes = addresses.clone()).await;
    let client = ctl.client();
    // The nodes' names come from their Info answers; the controller follows each node's events.
    ringleader_tests::wait_for(
        "the nodes' names and event streams",
        std::time::Instant::now() + std::time::Duration::from_secs(10),
        std::time::Duration::from_millis(20),
        || {
            let (mut client, recorders) = (client.clone(), &recorders);
            async move {
                let c = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
                let named = c.nodes.iter().all(|n| n.name.starts_with("rec-"));
                if named && recorders.iter().all(|r| r.followed.load(std::sync::atomic::Ordering::SeqCst)) {
                    Ok(())
                } else {
                    Err(c)
                }
            }
        },
    )
    .await;
    (ctl, client, recorders, stop)
}

/// Three recording nodes behind a controller that holds 100 link faults from `rec-0`: the 101st reaches
/// `rec-0` alone, as one ChangeFaults adding one rule (not the 101 rules held); a fault from every node
/// reaches each node as one added rule; clearing one fault sends its id to the nodes that hold it, and
/// clearing all sends each node an empty SetFaults. The first change sends every node its whole share
/// (SetFaults), which clears what a previous controller may have left. Failed before the fix: every
/// injection sent every node its whole share (the 101st: SetFaults with 101 rules to rec-0, and to the
/// other two nodes too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_injection_sends_only_its_change() {
    let (ctl, mut client, recorders, stop) = recorded(3).await;
    let calls = |recorders: &[Recorder]| recorders.iter().map(Recorder::take).collect::<Vec<_>>();

    assert_eq!(inject(&mut client, slow("rec-0", 1)).await.fault_id, "f1");
    let first = [vec![Call::Set(1)], vec![Call::Set(0)], vec![Call::Set(0)]];
    assert_eq!(calls(&recorders), first, "the first change: every node its whole share");
    for ms in 2..=100 {
        inject(&mut client, slow("rec-0", ms)).await;
    }
    recorders.iter().for_each(|r| drop(r.take()));
    assert_eq!(inject(&mut client, slow("rec-0", 101)).await.fault_id, "f101");
    let one = Call::Change { added: 1, removed: vec![] };
    assert_eq!(calls(&recorders), [vec![one.clone()], vec![], vec![]], "the 101st: one rule, to rec-0 only");

    assert_eq!(inject(&mut client, slow("", 5)).await.fault_id, "f102");
    let each = [vec![one.clone()], vec![one.clone()], vec![one]];
    assert_eq!(calls(&recorders), each, "a fault from every node: one rule to each");

    client.clear_faults(pb::ClearFaultsRequest { fault_id: "f7".into(), ..Default::default() }).await.unwrap();
    let gone = Call::Change { added: 0, removed: vec!["f7".into()] };
    assert_eq!(calls(&recorders), [vec![gone], vec![], vec![]], "clearing f7: its id, to rec-0 only");
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap();
    assert_eq!(calls(&recorders), [vec![Call::Set(0)], vec![Call::Set(0)], vec![Call::Set(0)]], "clearing all");
    ctl.stop().await;
    stop.send(true).unwrap();
}

/// A node whose push failed is out of step: the next change, even one that does not concern it, sends it its
/// whole share, and after that it gets changes again. (The fault whose push failed stays registered;
/// InjectFault answers UNAVAILABLE naming the node.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_out_of_step_gets_its_whole_share_with_the_next_change() {
    let (ctl, mut client, recorders, stop) = recorded(3).await;
    let calls = |recorders: &[Recorder]| recorders.iter().map(Recorder::take).collect::<Vec<_>>();
    inject(&mut client, slow("rec-0", 1)).await;
    calls(&recorders);
    recorders[1].refuse_next.store(true, std::sync::atomic::Ordering::SeqCst);
    let failed = client.inject_fault(slow("", 2)).await.unwrap_err();
    assert_eq!(failed.code(), tonic::Code::Unavailable, "{failed:?}");
    assert!(failed.message().contains("rec-1"), "{}", failed.message());
    let one = Call::Change { added: 1, removed: vec![] };
    let [to0, to1, to2] = <[Vec<Call>; 3]>::try_from(calls(&recorders)).unwrap();
    assert_eq!((to0, to1), (vec![one.clone()], vec![]));
    // rec-2 gets the one rule: as a change, or, if its event stream opened again meanwhile (as on a
    // loaded machine, where CI once saw it), as its whole share, which holds just that rule.
    assert!(to2 == [one.clone()] || to2 == [Call::Set(1)], "{to2:?}");

    inject(&mut client, slow("rec-0", 3)).await;
    assert_eq!(calls(&recorders), [vec![one.clone()], vec![Call::Set(1)], vec![]], "rec-1 is brought back");
    inject(&mut client, slow("rec-1", 4)).await;
    assert_eq!(calls(&recorders), [vec![], vec![one], vec![]], "and is in step again");
    ctl.stop().await;
    stop.send(true).unwrap();
}
