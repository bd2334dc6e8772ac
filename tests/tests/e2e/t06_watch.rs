use std::collections::BTreeSet;
use std::time::Duration;

use ringleader_proto::v1::{self as pb, election_event::Kind};
use ringleader_tests::{Client, TestController, assert_correct, elect, elect_correct, election};

/// Watch election `id` and read the stream to its end (failing if it does not end within 30 s).
async fn watch_all(client: &mut Client, id: &str) -> Vec<pb::ElectionEvent> {
    let request = pb::WatchElectionRequest { election_id: id.into() };
    let mut stream = client.watch_election(request).await.unwrap().into_inner();
    let mut events = Vec::new();
    let read = async {
        while let Some(ev) = stream.message().await.expect("watch stream") {
            events.push(ev);
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read).await.expect("the watch stream ends");
    events
}

/// Watching a running LIVE election gives its snapshot first, then a decision per
/// position not yet decided in that snapshot (a watcher that falls behind under load resumes
/// from a new snapshot, whose decisions count), then `finished`, and the stream ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_a_live_election_to_the_end() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let started = elect(&mut client, pb::StartElectionRequest { wait: false, seed: 4, ..election("stages") }).await;
    assert!(
        [pb::ElectionState::Pending as i32, pb::ElectionState::Running as i32].contains(&started.state),
        "wait=false answers before the end: {started:?}"
    );
    let events = watch_all(&mut client, &started.election_id).await;
    assert!(events.iter().all(|e| e.election_id == started.election_id));
    let Some(Kind::Snapshot(first)) = &events[0].kind else { panic!("first event is a snapshot: {:?}", events[0]) };
    let Some(Kind::Finished(last)) = &events[events.len() - 1].kind else { panic!("last event is `finished`") };
    assert_correct(last);
    let mut decided: BTreeSet<u32> =
        first.participants.iter().filter(|p| p.role != "undecided").map(|p| p.position).collect();
    let leader = last.leader.as_ref().unwrap();
    let mut resumed = false;
    for ev in &events[1..events.len() - 1] {
        match &ev.kind {
            Some(Kind::Decided(d)) => {
                // After a resumed snapshot, a decision it holds may still come as an event.
                assert!(decided.insert(d.position) || resumed, "position {} decided twice", d.position);
                assert_eq!(d.leader_id, leader.id);
                assert_eq!(d.node, format!("node-{}", d.position));
                assert_eq!(d.role, if d.position == leader.position { "leader" } else { "follower" });
            }
            // A watcher that fell behind resumes from a snapshot: the decisions it carries count.
            Some(Kind::Snapshot(s)) => {
                resumed = true;
                decided.extend(s.participants.iter().filter(|p| p.role != "undecided").map(|p| p.position));
            }
            other => panic!("unexpected event in the middle: {other:?}"),
        }
    }
    if first.state != pb::ElectionState::Finished as i32 {
        assert_eq!(decided.len(), 8, "every position's decision is reported");
    }
    ctl.stop().await;
}

/// Watching a finished election gives exactly its snapshot and `finished`, then the stream ends;
/// both are the record as ListElections shows it (no participants, timeline or diagram).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_of_a_finished_election_is_snapshot_then_finished() {
    let (ctl, mut client) = TestController::with_client(4).await;
    let e = elect_correct(&mut client, election("as-far")).await;
    let events = watch_all(&mut client, &e.election_id).await;
    assert_eq!(events.len(), 2, "{events:?}");
    let summary = pb::Election { participants: Vec::new(), timeline: Vec::new(), diagram_svg: String::new(), ..e };
    assert!(matches!(&events[0].kind, Some(Kind::Snapshot(s)) if s == &summary));
    assert!(matches!(&events[1].kind, Some(Kind::Finished(f)) if f == &summary));
    ctl.stop().await;
}
