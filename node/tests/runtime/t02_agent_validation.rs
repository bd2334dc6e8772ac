//! The Agent service validates every request and answers with the right code, naming the field.

use ringleader_core::topology::TopologyKind;
use ringleader_proto::v1 as pb;
use tonic::Code;

use crate::fixtures::*;

fn assert_status<T: std::fmt::Debug>(r: Result<T, tonic::Status>, code: Code, needle: &str) {
    let e = r.expect_err("expected an error");
    assert_eq!(e.code(), code, "{e:?}");
    assert!(e.message().contains(needle), "`{}` does not mention `{needle}`", e.message());
}

/// Prepare refuses unknown algorithms, an unspecified rule, empty ids, bad positions, bad addresses
/// and options the algorithm does not take, naming the field; a second Prepare of the same id is ALREADY_EXISTS.
#[tokio::test]
async fn prepare_validates_and_names_the_field() {
    let mut nodes = start_nodes(2).await;
    let good = ring_plan("v", "as-far", TopologyKind::RingBi, &[1, 2], &[0, 1], pb::Rule::Max, &nodes).remove(0);
    let agent = &mut nodes[0].agent;

    let bad = |f: &dyn Fn(&mut pb::PrepareRequest)| {
        let mut r = good.clone();
        f(&mut r);
        r
    };
    assert_status(agent.prepare(bad(&|r| r.algorithm = "nope".into())).await, Code::InvalidArgument, "`algorithm`");
    assert_status(agent.prepare(bad(&|r| r.algorithm = "nope".into())).await, Code::InvalidArgument, "as-far");
    assert_status(agent.prepare(bad(&|r| r.rule = 0)).await, Code::InvalidArgument, "`rule`");
    assert_status(agent.prepare(bad(&|r| r.rule = 42)).await, Code::InvalidArgument, "`rule`");
    assert_status(agent.prepare(bad(&|r| r.election_id.clear())).await, Code::InvalidArgument, "`election_id`");
    assert_status(agent.prepare(bad(&|r| r.size = 0)).await, Code::InvalidArgument, "`size`");
    assert_status(agent.prepare(bad(&|r| r.position = 2)).await, Code::InvalidArgument, "`position`");
    assert_status(agent.prepare(bad(&|r| r.ports[1].position = 9)).await, Code::InvalidArgument, "`ports[1].position`");
    for addr in ["not a url", "ftp://127.0.0.1:1", "127.0.0.1:7000", "http://"] {
        let r = bad(&|r| r.ports[1].address = addr.into());
        assert_status(agent.prepare(r).await, Code::InvalidArgument, "`ports[1].address`");
    }
    let option = |k: &str, v: &str| [(k.to_string(), v.to_string())].into_iter().collect();
    assert_status(agent.prepare(bad(&|r| r.options = option("x", "1"))).await, Code::InvalidArgument, "`options.x`");
    let raft = |r: &mut pb::PrepareRequest| {
        r.algorithm = "raft".into();
        r.options = option("pre_vote", "true");
    };
    // PreVote is an option of raft's kept mode only.
    assert_status(agent.prepare(bad(&raft)).await, Code::InvalidArgument, "`options.pre_vote`");
    // Nothing of the refused requests was installed.
    assert_eq!(agent.info(pb::InfoRequest {}).await.unwrap().into_inner().elections, 0);

    agent.prepare(good.clone()).await.expect("a valid request is accepted");
    assert_status(agent.prepare(good).await, Code::AlreadyExists, "`v`");
}

/// Start, Status and Abort of an unknown election are NOT_FOUND; Abort removes the election; an empty id is
/// INVALID_ARGUMENT; Info reports the node.
#[tokio::test]
async fn start_status_abort_of_unknown_elections() {
    let mut nodes = start_nodes(2).await;
    let plan = ring_plan("x", "as-far", TopologyKind::RingUni, &[1, 2], &[1], pb::Rule::Max, &nodes);
    let agent = &mut nodes[0].agent;
    assert_status(agent.start(pb::StartRequest { election_id: "nope".into() }).await, Code::NotFound, "`nope`");
    assert_status(agent.status(pb::StatusRequest { election_id: "nope".into() }).await, Code::NotFound, "`nope`");
    assert_status(
        agent.abort(pb::AbortRequest { election_id: "nope".into(), ..Default::default() }).await,
        Code::NotFound,
        "`nope`",
    );
    assert_status(
        agent.start(pb::StartRequest { election_id: String::new() }).await,
        Code::InvalidArgument,
        "`election_id`",
    );

    agent.prepare(plan[0].clone()).await.unwrap();
    // Position 0 is not an initiator: Start is allowed and simply wakes it.
    agent.start(pb::StartRequest { election_id: "x".into() }).await.unwrap();
    let st = agent.status(pb::StatusRequest { election_id: "x".into() }).await.unwrap().into_inner();
    assert_eq!((st.position, st.election_messages, st.role), (0, 1, pb::Role::Undecided as i32));
    assert_eq!(st.sent_by_kind.get("election"), Some(&1));

    let info = agent.info(pb::InfoRequest {}).await.unwrap().into_inner();
    assert_eq!((info.name.as_str(), info.elections), ("node-0", 1));
    assert_eq!(info.address, nodes[0].address);
    assert!(!info.version.is_empty());

    let agent = &mut nodes[0].agent;
    agent.abort(pb::AbortRequest { election_id: "x".into(), ..Default::default() }).await.unwrap();
    assert_status(agent.status(pb::StatusRequest { election_id: "x".into() }).await, Code::NotFound, "`x`");
    // The id can be used again.
    agent.prepare(plan[0].clone()).await.unwrap();
}
