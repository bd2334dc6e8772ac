//! Elections over real links: results, message counts against the simulator,
//! the initiator's pending queue, and concurrent elections.

use std::time::Duration;

use ringleader_core::algo::{Rule, catalogue};
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{Topology, TopologyKind};
use ringleader_proto::v1 as pb;

use crate::fixtures::*;

const FINISH: Duration = Duration::from_secs(10);

/// AsFar on a unidirectional ring of 4 with ids [4,3,2,1] elects 4 with exactly 10 election + 4 notification messages.
#[tokio::test]
async fn as_far_ring_of_four_elects_max_with_exact_counts() {
    let mut nodes = start_nodes(4).await;
    let mut events = Vec::new();
    for n in nodes.iter_mut() {
        events.push(n.agent.events(pb::EventsRequest::default()).await.unwrap().into_inner());
    }
    let plan =
        ring_plan("asfar-4", "as-far", TopologyKind::RingUni, &[4, 3, 2, 1], &[0, 1, 2, 3], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, plan).await;
    start_all(&mut nodes, "asfar-4", &[0, 1, 2, 3]).await;
    let all = wait_finished(&mut nodes, "asfar-4", FINISH).await;

    assert_elected(&all, 4);
    assert_eq!(all[0].role, pb::Role::Leader as i32, "position 0 holds id 4");
    let (election, notification, bytes, ideal) = totals(&all);
    assert_eq!((election, notification), (10, 4));
    let kinds: u64 = all.iter().map(|s| s.sent_by_kind.get("election").copied().unwrap_or(0)).sum();
    assert_eq!(kinds, 10);

    // Same figures as the simulator on the same ring, ids and initiators.
    let spec = catalogue::find("as-far").unwrap();
    let ring = Topology::ring(TopologyKind::RingUni, 4, 1).unwrap();
    let report = sim::run(spec, &ring, &[4, 3, 2, 1], &[0, 1, 2, 3], Rule::Max, &SimConfig::default());
    assert_eq!(
        (election, notification, bytes),
        (report.counters.election_messages, report.counters.notification_messages, report.counters.bytes)
    );
    assert!(ideal >= 4, "the notification alone is a causal chain of 4, got {ideal}");

    // Every node streamed its decision.
    for (pos, ev) in events.iter_mut().enumerate() {
        let e = tokio::time::timeout(FINISH, ev.message()).await.unwrap().unwrap().unwrap();
        assert_eq!((e.election_id.as_str(), e.position, e.leader_id), ("asfar-4", pos as u32, 4));
    }
}

/// A message reaching an initiator before its Start waits for it, so the counts are those of the all-initiators
/// schedule: id 2 still travels although id 3 reached its node first.
#[tokio::test]
async fn initiator_queues_messages_until_start() {
    let mut nodes = start_nodes(4).await;
    let plan = ring_plan("queue", "as-far", TopologyKind::RingUni, &[4, 3, 2, 1], &[0, 1, 2, 3], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, plan).await;
    start_all(&mut nodes, "queue", &[1]).await;
    // Id 3 arrives at position 2 and must wait there.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let st = nodes[2].agent.status(pb::StatusRequest { election_id: "queue".into() }).await.unwrap().into_inner();
    assert_eq!((st.received, st.election_messages), (0, 0), "{st:#?}");
    let st = nodes[1].agent.status(pb::StatusRequest { election_id: "queue".into() }).await.unwrap().into_inner();
    assert_eq!(st.election_messages, 1);

    start_all(&mut nodes, "queue", &[2, 3, 0]).await;
    let all = wait_finished(&mut nodes, "queue", FINISH).await;
    assert_elected(&all, 4);
    let (election, notification, _, _) = totals(&all);
    assert_eq!((election, notification), (10, 4));
}

/// Two elections at once on the same four nodes, sharing their links, both finish correctly.
#[tokio::test]
async fn two_elections_at_once_both_finish() {
    let mut nodes = start_nodes(4).await;
    let a = ring_plan("two-a", "as-far", TopologyKind::RingUni, &[4, 3, 2, 1], &[0, 1, 2, 3], pb::Rule::Max, &nodes);
    let b = ring_plan("two-b", "as-far", TopologyKind::RingUni, &[1, 2, 3, 4], &[0, 1, 2, 3], pb::Rule::Min, &nodes);
    prepare_all(&mut nodes, a).await;
    prepare_all(&mut nodes, b).await;
    for p in 0..4 {
        start_all(&mut nodes, "two-a", &[p]).await;
        start_all(&mut nodes, "two-b", &[p]).await;
    }
    let all_a = wait_finished(&mut nodes, "two-a", FINISH).await;
    let all_b = wait_finished(&mut nodes, "two-b", FINISH).await;
    assert_elected(&all_a, 4);
    assert_elected(&all_b, 1);
    // Mirrored rule on mirrored ids: the same worst case.
    assert_eq!(counts(&all_a), (10, 4));
    assert_eq!(counts(&all_b), (10, 4));
    let info = nodes[0].agent.info(pb::InfoRequest {}).await.unwrap().into_inner();
    assert_eq!(info.elections, 2);
}

/// Every catalogue algorithm on its default topology elects the simulator's leader with the simulator's counts
/// where those are schedule-independent (but `lease`, which needs an etcd: tests/tests/cli/t18_lease_etcd.rs).
#[tokio::test]
async fn every_algorithm_matches_the_simulator() {
    let mut nodes = start_nodes(5).await;
    let ids = [3, 5, 1, 4, 2];
    for spec in catalogue::CATALOGUE.iter().filter(|s| s.live_provision == ringleader_core::spec::Provision::Nodes) {
        let kind = spec.default_topology();
        // Five positions make no mesh; meshes run live in the controller's end-to-end tests.
        let Ok(topo) = Topology::build(kind, 5, 1) else { continue };
        let eid = format!("cat-{}", spec.name);
        let rule = if spec.rule == Rule::Max { pb::Rule::Max } else { pb::Rule::Min };
        let all_pos = [0, 1, 2, 3, 4];
        let plan = ring_plan(&eid, spec.name, kind, &ids, &all_pos, rule, &nodes);
        prepare_all(&mut nodes, plan).await;
        start_all(&mut nodes, &eid, &all_pos).await;
        let all = wait_finished(&mut nodes, &eid, FINISH).await;
        match spec.expected_winner(&topo, &ids, &all_pos, spec.rule) {
            Some(winner) => assert_elected(&all, winner),
            // The run picks the winner (Elect_root's root): one leads, the others follow.
            None => assert_one_leader(&all),
        }
        if spec.extras.schedule_independent {
            let report = sim::run(spec, &topo, &ids, &all_pos, spec.rule, &SimConfig::default());
            let (e, n, b, _) = totals(&all);
            let c = report.counters;
            assert_eq!((e, n, b), (c.election_messages, c.notification_messages, c.bytes), "{}", spec.name);
        }
    }
}
