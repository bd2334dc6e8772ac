//! Message counters kept by the drivers (never by the algorithms).

use crate::algo::{Msg, MsgKind};
use crate::wire;

/// Messages and bytes sent, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Every message sent.
    pub messages: u64,
    /// Messages that find the winner.
    pub election_messages: u64,
    /// Messages that announce the winner.
    pub notification_messages: u64,
    /// Messages by [`MsgKind`] index.
    pub by_kind: [u64; MsgKind::COUNT],
    /// Encoded protobuf sizes of the bodies sent.
    pub bytes: u64,
}

impl Counters {
    /// Count one sent message.
    #[inline]
    pub fn record(&mut self, msg: Msg) {
        let kind = msg.kind();
        self.messages += 1;
        if kind.is_notification() {
            self.notification_messages += 1;
        } else {
            self.election_messages += 1;
        }
        self.by_kind[kind as usize] += 1;
        self.bytes += wire::encoded_len(msg) as u64;
    }

    /// Add another node's counters.
    pub fn add(&mut self, o: &Counters) {
        self.messages += o.messages;
        self.election_messages += o.election_messages;
        self.notification_messages += o.notification_messages;
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
}
