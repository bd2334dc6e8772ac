//! The space-time diagram of a LIVE election, drawn from the nodes' message
//! logs: each send paired with its receipts (a lost message has none, a
//! duplicated one two), in microseconds since the first send.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ringleader_core::algo::MsgKind;
use ringleader_core::diagram::{self, Arrow};
use ringleader_proto::v1 as pb;

use super::agent;
use super::run::Plan;
use crate::cluster::Node;

/// The pieces of a LIVE election's space-time diagram.
pub(super) struct LiveDiagram {
    title: String,
    nodes: Vec<String>,
    arrows: Vec<Arrow>,
    /// What is missing from the picture (unread logs, truncation).
    notes: Vec<String>,
    /// The positions form a ring (its wrap-around drawn across the edges).
    ring: bool,
}

/// Read the nodes' message logs of a LIVE election into its diagram.
pub(super) async fn read(plan: &Plan, nodes: &[Arc<Node>], election_id: &str, timeout: Duration) -> LiveDiagram {
    let logs = agent::message_logs(nodes, election_id, timeout).await;
    let names: Vec<String> = nodes.iter().map(|n| n.name()).collect();
    let title = format!("{}, n = {}, k = {}, LIVE", plan.spec.name, plan.n(), plan.k());
    LiveDiagram { ring: plan.topology.kind().is_ring(), ..LiveDiagram::from_logs(title, &names, &plan.ids, &logs) }
}

impl LiveDiagram {
    /// The diagram of the logs of positions named `names` with ids `ids` (`None`: a log not read).
    fn from_logs(title: String, names: &[String], ids: &[u64], logs: &[Option<pb::MessageLog>]) -> LiveDiagram {
        let mut notes = Vec::new();
        let unread: Vec<String> =
            logs.iter().enumerate().filter(|(_, l)| l.is_none()).map(|(i, _)| names[i].clone()).collect();
        if !unread.is_empty() {
            notes.push(format!("no log from {}", unread.join(", ")));
        }
        let truncated: u64 = logs.iter().flatten().map(|l| l.truncated).sum();
        if truncated > 0 {
            notes.push(format!("{truncated} log entries over the limit left out"));
        }
        let nodes = names.iter().zip(ids).map(|(n, id)| format!("{n} (id {id})")).collect();
        LiveDiagram { title, nodes, arrows: arrows(logs), notes, ring: false }
    }

    /// The SVG, its caption naming `messages` and whatever is missing.
    pub(super) fn svg(self, leader: Option<u32>, messages: u64) -> String {
        let mut title = format!("{}: {messages} messages", self.title);
        for note in &self.notes {
            title.push_str(&format!("; {note}"));
        }
        let (nodes, arrows, ring) = (self.nodes, &self.arrows, self.ring);
        let d = diagram::Diagram { title, nodes, arrows, leader, time_unit: "µs", marks: &[], ring, labels: false };
        diagram::svg(&d)
    }
}

/// Pair each logged send with its receipts, times relative to the first
/// send, in sending order and at most [`diagram::MAX_ARROWS`]. Kinds the
/// controller does not know are left out.
fn arrows(logs: &[Option<pb::MessageLog>]) -> Vec<Arrow> {
    let kind = |name: &str| MsgKind::ALL.into_iter().find(|k| k.name() == name);
    let mut sends: HashMap<(u32, u64), (u32, MsgKind, u64)> = HashMap::new();
    let mut origin = u64::MAX;
    for (from, log) in logs.iter().enumerate() {
        for s in log.iter().flat_map(|l| &l.sent) {
            if let Some(k) = kind(&s.kind) {
                sends.insert((from as u32, s.seq), (s.to, k, s.at_us));
                origin = origin.min(s.at_us);
            }
        }
    }
    if sends.is_empty() {
        origin = 0;
    }
    let mut arrows = Vec::with_capacity(sends.len());
    let mut received: HashSet<(u32, u64)> = HashSet::new();
    for (to, log) in logs.iter().enumerate() {
        for r in log.iter().flat_map(|l| &l.received) {
            if let Some(&(_, k, sent)) = sends.get(&(r.from, r.seq)) {
                received.insert((r.from, r.seq));
                arrows.push(Arrow {
                    from: r.from,
                    to: to as u32,
                    kind: k,
                    sent: sent.saturating_sub(origin),
                    received: Some(r.at_us.saturating_sub(origin)),
                    msg: None,
                });
            }
        }
    }
    for (&(from, seq), &(to, kind, sent)) in &sends {
        if !received.contains(&(from, seq)) {
            arrows.push(Arrow { from, to, kind, sent: sent.saturating_sub(origin), received: None, msg: None });
        }
    }
    arrows.sort_by_key(|a| (a.sent, a.from, a.to));
    arrows.truncate(diagram::MAX_ARROWS);
    arrows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(seq: u64, to: u32, kind: &str, at_us: u64) -> pb::LoggedSend {
        pb::LoggedSend { seq, to, kind: kind.into(), at_us }
    }

    fn receipt(from: u32, seq: u64, at_us: u64) -> pb::LoggedReceipt {
        pb::LoggedReceipt { from, seq, kind: String::new(), at_us }
    }

    /// A send received twice makes two arrows, a send never received one arrow without an arrival,
    /// a send of an unknown kind none; times count from the first send, in sending order.
    #[test]
    fn sends_pair_with_their_receipts() {
        let logs = [
            Some(pb::MessageLog {
                sent: vec![sent(1, 1, "election", 1_000), sent(2, 1, "notify", 1_500), sent(3, 1, "gossip", 1_600)],
                ..Default::default()
            }),
            Some(pb::MessageLog {
                received: vec![receipt(0, 1, 1_200), receipt(0, 1, 1_300), receipt(0, 3, 1_700)],
                ..Default::default()
            }),
        ];
        let election = |received| Arrow { from: 0, to: 1, kind: MsgKind::Election, sent: 0, received, msg: None };
        assert_eq!(
            arrows(&logs),
            [
                election(Some(200)),
                election(Some(300)),
                Arrow { from: 0, to: 1, kind: MsgKind::Notify, sent: 500, received: None, msg: None },
            ]
        );
        assert_eq!(arrows(&[None, None]), []);
    }

    /// Logs that could not be read or were truncated are named in the caption's notes, and every
    /// node is labelled with its id.
    #[test]
    fn missing_logs_are_noted() {
        let names = ["node-0".to_string(), "node-1".to_string(), "node-2".to_string()];
        let logs = [None, Some(pb::MessageLog { truncated: 7, ..Default::default() }), None];
        let d = LiveDiagram::from_logs("as-far".into(), &names, &[30, 10, 20], &logs);
        assert_eq!(d.notes, ["no log from node-0, node-2", "7 log entries over the limit left out"]);
        assert_eq!(d.nodes, ["node-0 (id 30)", "node-1 (id 10)", "node-2 (id 20)"]);
        assert!(d.arrows.is_empty());
    }
}
