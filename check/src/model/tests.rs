//! Tests of the model's insides: the remembered answers about quiet
//! heartbeats, and losses on FIFO links.

use super::*;
use ringleader_core::topology::Topology;
use std::collections::VecDeque;

/// The remembered answer to "would this node only refresh its detector on this heartbeat?"
/// is the node's own, asked afresh, for every heartbeat in flight in the first few thousand
/// states of ZooKeeper-style with a lost message on 3 nodes (many answered from memory,
/// both ways).
#[test]
fn a_remembered_quiet_heartbeat_is_the_nodes_own_answer() {
    let spec = ringleader_core::algo::catalogue::find("zookeeper").unwrap();
    let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
    let faults = Faults { losses: 1, ..Faults::NONE };
    let e =
        Election { delay_ms: 10, ..Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults) };
    let model = ElectionModel::new(e, false);
    let mut queue = VecDeque::from([model.initial()]);
    let (mut asked, mut answers, mut out) = (0, [0, 0], Vec::new());
    while let Some(s) = queue.pop_front().filter(|_| asked < 20_000) {
        for f in s.links.iter().filter(|f| matches!(f.msg, Msg::Heartbeat { .. })) {
            let from = model.sender(f.link);
            let port = model.election.topology.ports(from)[f.link as usize - model.link_base[from as usize]];
            let node = &s.nodes[port.peer as usize];
            let own = node.only_refreshes(port.remote_port, f.msg);
            assert_eq!(model.only_refreshes(node, port.remote_port, f.msg), own, "{f:?} in {s:?}");
            asked += 1;
            answers[usize::from(own)] += 1;
        }
        model.successors(&s, &mut out);
        queue.extend(out.drain(..).map(|(_, next)| next));
    }
    let remembered = model.refreshes.lock().unwrap().len();
    assert!(asked >= 20_000 && remembered < asked / 10, "{asked} asked, {remembered} remembered");
    assert!(answers.iter().all(|&k| k > 50), "answers {answers:?}");
}

/// On a FIFO link a loss takes the last copy of its message, the one just sent, wherever it
/// lies on the link (a loss strikes as its message is sent, see "Faults at their earliest"):
/// in the first states of kept bully on 3 nodes with FIFO links and a loss in the budget, every
/// message behind another on its link can be lost, and only it leaves the link.
#[test]
fn on_a_fifo_link_the_message_just_sent_can_be_lost() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
    let faults = Faults { losses: 1, ..Faults::NONE };
    let e = Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults);
    let model = ElectionModel::new(e, true);
    let mut queue = VecDeque::from([model.initial()]);
    let (mut behind, mut out, mut explored) = (0, Vec::new(), 0);
    while let Some(s) = queue.pop_front().filter(|_| explored < 5_000) {
        explored += 1;
        for (i, f) in s.links.iter().enumerate() {
            if i == 0 || s.links[i - 1].link != f.link || s.used.losses > 0 {
                continue;
            }
            let from = model.sender(f.link);
            let port = f.link - model.link_base[from as usize] as u32;
            let lost = model.next_state(&s, Step::Lose { from, port, msg: f.msg });
            let lost = lost.unwrap_or_else(|| panic!("{f:?} cannot be lost in {s:?}"));
            let mut expected = s.links.clone();
            let last = expected.iter().rposition(|g| (g.link, g.msg) == (f.link, f.msg)).unwrap();
            expected.remove(last);
            assert_eq!(lost.links, expected);
            behind += 1;
        }
        model.successors(&s, &mut out);
        queue.extend(out.drain(..).map(|(_, next)| next));
    }
    assert!(behind > 100, "{behind} messages behind another");
}
