//! The complete-network election (Villadangos et al.) over real links, without a controller.

use std::time::Duration;

use ringleader_core::algo::{Rule, catalogue};
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{Topology, TopologyKind};
use ringleader_proto::v1 as pb;

use crate::fixtures::*;

const FINISH: Duration = Duration::from_secs(10);

/// Six nodes on a complete network, ids 4 and 7 initiating (9 is higher but passive): 7 leads under max and 4 under
/// min, with exactly 2n + 2k − 3 = 13 messages (6 message1, 1 message2, 1 message3, 5 notifications), the
/// simulator's counts, bytes and ideal time. Id 7 starts after id 4's message1 has reached it: it holds it until its
/// own Start and still competes.
#[tokio::test]
async fn two_initiators_on_six_nodes_match_the_simulator() {
    let mut nodes = start_nodes(6).await;
    let ids = [4, 9, 2, 7, 5, 1];
    let (first, late) = (0u32, 3u32);
    let spec = catalogue::find("complete-villadangos").unwrap();
    let topo = Topology::build(TopologyKind::Complete, 6, 1).unwrap();
    for (eid, rule, pb_rule, winner) in
        [("vil-max", Rule::Max, pb::Rule::Max, 7), ("vil-min", Rule::Min, pb::Rule::Min, 4)]
    {
        let plan = ring_plan(eid, spec.name, TopologyKind::Complete, &ids, &[first, late], pb_rule, &nodes);
        prepare_all(&mut nodes, plan).await;
        start_all(&mut nodes, eid, &[first]).await;
        if rule == Rule::Max {
            // 4's message1 goes 4 → 2 → 1 → 9 → 7 and waits there for 7's Start.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let st = nodes[late as usize].agent.status(pb::StatusRequest { election_id: eid.into() }).await;
            let st = st.unwrap().into_inner();
            assert_eq!((st.received, st.election_messages), (0, 0), "{st:#?}");
            let st = nodes[1].agent.status(pb::StatusRequest { election_id: eid.into() }).await.unwrap().into_inner();
            assert_eq!(st.sent_by_kind.get("message1"), Some(&1), "9 forwarded 4's message1: {st:#?}");
        }
        start_all(&mut nodes, eid, &[late]).await;
        let all = wait_finished(&mut nodes, eid, FINISH).await;
        assert_elected(&all, winner);

        let kind = |k: &str| all.iter().map(|s| s.sent_by_kind.get(k).copied().unwrap_or(0)).sum::<u64>();
        assert_eq!((kind("message1"), kind("message2"), kind("message3"), kind("notify")), (6, 1, 1, 5), "{rule:?}");
        let (election, notification, bytes, ideal) = totals(&all);
        assert_eq!(election + notification, (spec.bound)(6, 2), "the bound, exactly");
        let report = sim::run(spec, &topo, &ids, &[first, late], rule, &SimConfig::default());
        assert!(report.verdict.violations.is_empty(), "{:?}", report.verdict.violations);
        let c = report.counters;
        assert_eq!(
            (election, notification, bytes, ideal),
            (c.election_messages, c.notification_messages, c.bytes, report.ideal_time),
            "{rule:?}"
        );
        assert!(ideal <= 6 + 2, "ideal time {ideal} > n + k");
    }
}
