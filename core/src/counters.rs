//! Message counters kept by the drivers (never by the algorithms).
//!
//! Three classes: election messages (finding the winner), notification
//! messages (announcing it) and heartbeats (failure detection,
//! [`MsgKind::is_heartbeat`]). `messages`, the figure checked against an
//! algorithm's bound, is election + notification only: a detector sends
//! heartbeats for as long as a leadership is kept, so counting them would make
//! every bound meaningless. Heartbeats still appear in `by_kind` (and their
//! bytes in `bytes`), so `messages == sum(by_kind) − heartbeat_messages`.

use crate::protocol::{Msg, MsgKind};
use crate::wire;

/// Messages and bytes sent, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Election and notification messages sent (heartbeats excluded).
    pub messages: u64,
    /// Messages that find the winner.
    pub election_messages: u64,
    /// Messages that announce the winner.
    pub notification_messages: u64,
    /// Failure-detector heartbeats, outside `messages`.
    pub heartbeat_messages: u64,
    /// Messages by [`MsgKind`] index, heartbeats included.
    pub by_kind: [u64; MsgKind::COUNT],
    /// Encoded protobuf sizes of the bodies sent, heartbeats included.
    pub bytes: u64,
}

impl Default for Counters {
    /// Nothing counted (by hand: `Default` is not derived for arrays of more than 32).
    fn default() -> Self {
        Counters {
            messages: 0,
            election_messages: 0,
            notification_messages: 0,
            heartbeat_messages: 0,
            by_kind: [0; MsgKind::COUNT],
            bytes: 0,
        }
    }
}

impl Counters {
    /// Count one sent message.
    #[inline]
    pub fn record(&mut self, msg: Msg) {
        let kind = msg.kind();
        if kind.is_heartbeat() {
            self.heartbeat_messages += 1;
        } else {
            self.messages += 1;
            if kind.is_notification() {
                self.notification_messages += 1;
            } else {
                self.election_messages += 1;
            }
        }
        self.by_kind[kind as usize] += 1;
        self.bytes += wire::encoded_len(msg) as u64;
    }

    /// Add another node's counters.
    pub fn add(&mut self, o: &Counters) {
        self.messages += o.messages;
        self.election_messages += o.election_messages;
        self.notification_messages += o.notification_messages;
        self.heartbeat_messages += o.heartbeat_messages;
        for (a, b) in self.by_kind.iter_mut().zip(o.by_kind) {
            *a += b;
        }
        self.bytes += o.bytes;
    }

    /// Non-zero per-kind counts with their names.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        MsgKind::ALL.iter().map(|k| (k.name(), self.by_kind[*k as usize])).filter(|(_, c)| *c > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recording splits election from notification messages and sums bytes.
    #[test]
    fn record_and_add() {
        let mut c = Counters::default();
        c.record(Msg::Election { id: 1, stage: 0, hops: 0 });
        c.record(Msg::Notify { leader: 1 });
        let mut t = Counters::default();
        t.add(&c);
        t.add(&c);
        assert_eq!((t.messages, t.election_messages, t.notification_messages), (4, 2, 2));
        assert_eq!(t.named().collect::<Vec<_>>(), vec![("election", 2), ("notify", 2)]);
        assert_eq!(t.bytes, 2 * (wire::encoded_len(Msg::Election { id: 1, stage: 0, hops: 0 }) + 4) as u64);
    }

    /// Heartbeats are counted in their own class and by kind, never in
    /// `messages` (the figure checked against bounds); a coordinator counts as
    /// a notification.
    #[test]
    fn heartbeats_stay_out_of_the_total() {
        let mut c = Counters::default();
        c.record(Msg::Heartbeat { term: 1, leading: false, watching: true });
        c.record(Msg::Heartbeat { term: 1, leading: false, watching: true });
        c.record(Msg::BullyElection { term: 0 });
        c.record(Msg::Coordinator { leader: 3, term: 1 });
        let mut t = Counters::default();
        t.add(&c);
        assert_eq!((t.messages, t.election_messages, t.notification_messages, t.heartbeat_messages), (2, 1, 1, 2));
        assert_eq!(t.named().collect::<Vec<_>>(), vec![("heartbeat", 2), ("bully_election", 1), ("coordinator", 1)]);
        assert_eq!(t.messages, t.by_kind.iter().sum::<u64>() - t.heartbeat_messages);
    }
}
