use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::spec::Candidates;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, election, live_and_simulated};

/// For every algorithm whose count does not depend on the schedule, LIVE and
/// SIMULATED runs with the same ids, initiators and seed count the same
/// messages, per kind, and the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_and_simulated_counts_match_where_schedule_independent() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let mut compared = 0;
    for spec in CATALOGUE.iter().filter(|s| s.extras.schedule_independent) {
        for (seed, initiators, id_order) in [
            (1, 0, pb::IdOrder::Random),
            (2, 3, pb::IdOrder::Random),
            (3, 1, pb::IdOrder::Descending),
            (4, 0, pb::IdOrder::Ascending),
        ] {
            let request =
                pb::StartElectionRequest { seed, initiators, id_order: id_order as i32, ..election(spec.name) };
            let (live, sim) = live_and_simulated(&mut client, request).await;
            let ctx = format!("{} seed={seed} initiators={initiators} {id_order:?}", spec.name);
            let ids = |e: &pb::Election| e.participants.iter().map(|p| (p.id, p.initiator)).collect::<Vec<_>>();
            assert_eq!(ids(&live), ids(&sim), "{ctx}: same ids and initiators");
            let (l, s) = (live.metrics.clone().unwrap(), sim.metrics.clone().unwrap());
            assert_eq!(
                (l.messages, l.election_messages, l.notification_messages, l.bytes),
                (s.messages, s.election_messages, s.notification_messages, s.bytes),
                "{ctx}"
            );
            assert_eq!(l.messages_by_kind, s.messages_by_kind, "{ctx}");
            // Where the run picks the root (Elect_root), the count is fixed but who
            // sends the two ids is not: only the totals must match.
            if spec.candidates != Candidates::Root {
                let sent = |e: &pb::Election| e.participants.iter().map(|p| p.messages_sent).collect::<Vec<_>>();
                assert_eq!(sent(&live), sent(&sim), "{ctx}: per node");
            }
            compared += 1;
        }
    }
    assert!(compared >= 3 * 4, "the catalogue lists at least three schedule-independent algorithms");
    ctl.stop().await;
}

/// Controlled Distance's count depends on the schedule, so LIVE and SIMULATED only have to agree on the leader and the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controlled_distance_live_and_simulated_agree_on_the_leader() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let request = pb::StartElectionRequest { seed: 9, initiators: 4, ..election("controlled-distance") };
    let (live, sim) = live_and_simulated(&mut client, request).await;
    assert_eq!(live.leader.unwrap().id, sim.leader.unwrap().id);
    ctl.stop().await;
}
