//! What the explorer by hand shows of a state besides each node's state
//! and belief ([`crate::explore`]): the messages in flight, and each node's
//! variables.

use ringleader_core::algo::Port;
use ringleader_core::schedule::Step;

use super::ElectionModel;
use super::state::System;

impl ElectionModel {
    /// Every message in flight in `s`, link by link (sending order on a FIFO
    /// link), in words: "id 1's election (id 1, stage 1) to id 2"; then what
    /// is on its way to or from the store: "id 1's read of the lease (op 1)".
    pub fn in_flight(&self, s: &System) -> Vec<String> {
        let e = &self.election;
        let t = &e.topology;
        let mut out = Vec::new();
        for from in 0..t.len() {
            let base = self.link_base[from as usize];
            for port in 0..t.ports(from).len() {
                for f in Self::on_link(s, base + port) {
                    let words = Step::Lose { from, port: port as Port, msg: f.msg }.describe(&e.ids, t);
                    out.push(words.strip_suffix(" is lost").map_or_else(|| words.clone(), str::to_string));
                }
            }
        }
        for f in &s.store_flights {
            out.push(f.item.in_words(&format!("id {}", e.ids[f.node as usize])));
        }
        out
    }

    /// Each node's variables, in position order, as its algorithm's `Debug`
    /// writes them (`Stages { id: 3, stage: 2, best: 3, .. }`).
    pub fn variables(&self, s: &System) -> Vec<String> {
        s.nodes.iter().map(|n| format!("{:?}", n.algorithm())).collect()
    }
}
