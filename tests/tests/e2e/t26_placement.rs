use pb::inject_fault_request::Kind;
use ringleader_proto::v1 as pb;
use ringleader_tests::{Client, TestController, assert_refused, elect_correct, election, fault, inject, kept, leads};
use tonic::Code;

/// `InjectFault` that crashes the node named `node`.
fn crash(node: &str) -> pb::InjectFaultRequest {
    fault(Kind::Crash(pb::CrashFault { node: node.into(), leader: false, planned: false }))
}

/// The node names of an election's positions, in order.
fn placed(e: &pb::Election) -> Vec<String> {
    e.participants.iter().map(|p| p.node.clone()).collect()
}

/// `StartElection`, which must be refused: its status.
async fn refused(client: &mut Client, request: pb::StartElectionRequest) -> tonic::Status {
    client.start_election(request).await.unwrap_err()
}

/// A LIVE election smaller than the cluster runs on nodes that are up: with node-1 of 4 crashed,
/// as-far on 3 positions runs on node-0, node-2 and node-3 and is correct (it failed "the node
/// is crashed" while position i always ran on node-i); on 4 positions it is refused
/// FAILED_PRECONDITION naming `size` and the crashed node; named nodes run the positions in the
/// order named, and a named node that is crashed, unknown or named twice is refused naming
/// `nodes`, as are named nodes for a SIMULATED election or for another size. The refusal's advice
/// names a call that exists (it named a method "RecoverFault" that the API does not have).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_elections_run_on_the_nodes_that_are_up() {
    let ctl = TestController::start(4).await;
    let mut client = ctl.client();
    inject(&mut client, crash("node-1")).await;

    let three = pb::StartElectionRequest { size: 3, ..election("as-far") };
    let e = elect_correct(&mut client, three).await;
    assert_eq!(placed(&e), ["node-0", "node-2", "node-3"]);

    let all = refused(&mut client, election("as-far")).await;
    assert_refused(&all, Code::FailedPrecondition, "size");
    assert!(all.message().contains("only 3 of the cluster's 4 nodes are up"), "{all:?}");
    assert!(all.message().contains("node-1 (crashed by an injected fault)"), "{all:?}");
    assert!(all.message().contains("recover the nodes (InjectFault with `recover`)"), "{all:?}");

    let named = |nodes: &[&str]| pb::StartElectionRequest {
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        ..election("as-far")
    };
    let e = elect_correct(&mut client, named(&["node-3", "node-0"])).await;
    assert_eq!(placed(&e), ["node-3", "node-0"]);
    assert_eq!(e.n, 2);

    let down = refused(&mut client, named(&["node-0", "node-1"])).await;
    assert_refused(&down, Code::FailedPrecondition, "nodes");
    assert!(down.message().contains("`node-1` is down: crashed by an injected fault"), "{down:?}");
    let unknown = refused(&mut client, named(&["node-0", "node-9"])).await;
    assert_refused(&unknown, Code::InvalidArgument, "nodes");
    assert!(unknown.message().contains("no node `node-9`"), "{unknown:?}");
    assert_refused(&refused(&mut client, named(&["node-0", "node-0"])).await, Code::InvalidArgument, "nodes");
    let simulated = pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..named(&["node-0", "node-2"]) };
    assert_refused(&refused(&mut client, simulated).await, Code::InvalidArgument, "nodes");
    let sized = pb::StartElectionRequest { size: 3, ..named(&["node-0", "node-2"]) };
    assert_refused(&refused(&mut client, sized).await, Code::InvalidArgument, "nodes");
    ctl.stop().await;
}

/// A kept leadership placed on nodes other than the first judges the faults by its own nodes: bully
/// kept on node-1, node-2 and node-3 of 4 elects node-3's id; crashing that node (cluster index 3,
/// position 2) is a failover to another of its nodes, the crash seen as the crash of its position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_leadership_on_named_nodes_sees_their_faults() {
    let ctl = TestController::start(4).await;
    let mut client = ctl.client();
    let request = pb::StartElectionRequest {
        nodes: vec!["node-1".into(), "node-2".into(), "node-3".into()],
        ids: vec![10, 20, 30],
        ..kept("bully")
    };
    let e = client.start_election(request).await.unwrap().into_inner();
    assert_eq!(placed(&e), ["node-1", "node-2", "node-3"]);
    let within = std::time::Duration::from_secs(30);
    let first = ringleader_tests::first_leader(&mut client, &e.election_id, 30).await;
    assert_eq!(first.leader.as_ref().unwrap().node, "node-3");
    inject(&mut client, crash("node-3")).await;
    let next = ringleader_tests::leader_until(&mut client, &e.election_id, within, |l| leads(l, 20) && l.agreed).await;
    let failover = next.last_failover.expect("the crash is a failover");
    assert_eq!(failover.cause, "crash fault", "{failover:?}");
    let done = ringleader_tests::stop_kept(&mut client, e.election_id).await;
    assert!(done.overlaps.is_empty(), "{:?}", done.overlaps);
    ctl.stop().await;
}

/// GetLeader says when the leader it names is down: a finished as-far election's leader crashed
/// afterwards is still the election's result, with `leader_down` and the reason (it was named
/// with nothing to say it is down).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_leader_says_when_the_leader_is_down() {
    let ctl = TestController::start(3).await;
    let mut client = ctl.client();
    let e = elect_correct(&mut client, election("as-far")).await;
    let asked = pb::GetLeaderRequest { election_id: e.election_id.clone() };
    let before = client.get_leader(asked.clone()).await.unwrap().into_inner();
    assert!(before.agreed && !before.leader_down, "{before:?}");
    let node = before.leader.as_ref().unwrap().node.clone();
    inject(&mut client, crash(&node)).await;
    let after = client.get_leader(asked).await.unwrap().into_inner();
    assert_eq!(after.leader, before.leader, "still the election's result");
    assert!(after.leader_down, "{after:?}");
    assert_eq!(after.leader_down_reason, format!("{node} is crashed by an injected fault"));
    ctl.stop().await;
}
