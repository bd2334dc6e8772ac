//! Domain <-> protobuf conversions of election messages, in one place.
//!
//! Both drivers count bytes as [`encoded_len`]: the encoded size of the
//! protobuf `Body`, so simulated and live byte counts are the same figure.

use prost::Message;
use ringleader_proto::v1::{self as pb, body::Kind};

use crate::algo::{Compass, Msg, Rule};

/// Errors turning a protobuf message into a domain one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A required field is missing.
    #[error("missing field `{0}`")]
    Missing(&'static str),
    /// A field has a value the domain cannot represent.
    #[error("bad value of field `{field}`: {reason}")]
    Bad {
        /// Field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl From<Msg> for pb::Body {
    fn from(m: Msg) -> Self {
        let kind = match m {
            Msg::Election { id, stage, hops } => Kind::Election(pb::RingElection { id, stage, hops }),
            Msg::Probe { id, stage, limit } => Kind::Probe(pb::Probe { id, stage, limit }),
            Msg::Reply { id, stage } => Kind::Reply(pb::Reply { id, stage }),
            Msg::Notify { leader } => Kind::Notify(pb::Notify { leader }),
            Msg::Feedback { id, stage } => Kind::Feedback(pb::Feedback { id, stage }),
            Msg::Wakeup => Kind::Wakeup(pb::Wakeup {}),
            Msg::Saturate { id } => Kind::Saturate(pb::Saturate { id }),
            Msg::Message1 { id } => Kind::Message1(pb::Capture { id }),
            Msg::Message2 { id } => Kind::Message2(pb::Capture { id }),
            Msg::Message3 { id } => Kind::Message3(pb::Capture { id }),
            Msg::Echo { id } => Kind::Echo(pb::Echo { id }),
            Msg::Heartbeat { term, leading, watching } => Kind::Heartbeat(pb::Heartbeat { term, leading, watching }),
            Msg::BullyElection { term } => Kind::BullyElection(pb::BullyElection { term }),
            Msg::Answer { term } => Kind::Answer(pb::Answer { term }),
            Msg::Coordinator { leader, term } => Kind::Coordinator(pb::Coordinator { leader, term }),
            Msg::RingCollect { term, initiator, best, count } => {
                Kind::RingCollect(pb::RingCollect { term, initiator, best, count })
            }
            Msg::NewLeader { term, leader } => Kind::NewLeader(pb::NewLeader { term, leader }),
            Msg::Ack { term, leader, ok } => Kind::Ack(pb::Ack { term, leader, ok }),
            Msg::Commit { term, leader } => Kind::Commit(pb::Commit { term, leader }),
            Msg::VoteRequest { term, candidate } => Kind::VoteRequest(pb::VoteRequest { term, candidate }),
            Msg::Vote { term, candidate, granted } => Kind::Vote(pb::Vote { term, candidate, granted }),
            Msg::LeaseRenew { term, leader } => Kind::LeaseRenew(pb::LeaseRenew { term, leader }),
            Msg::LeaseAck { term, granted } => Kind::LeaseAck(pb::LeaseAck { term, granted }),
        };
        pb::Body { kind: Some(kind) }
    }
}

impl TryFrom<&pb::Body> for Msg {
    type Error = WireError;

    fn try_from(b: &pb::Body) -> Result<Self, WireError> {
        Ok(match b.kind.as_ref().ok_or(WireError::Missing("body.kind"))? {
            Kind::Election(e) => Msg::Election { id: e.id, stage: e.stage, hops: e.hops },
            Kind::Probe(p) => Msg::Probe { id: p.id, stage: p.stage, limit: p.limit },
            Kind::Reply(r) => Msg::Reply { id: r.id, stage: r.stage },
            Kind::Notify(n) => Msg::Notify { leader: n.leader },
            Kind::Feedback(f) => Msg::Feedback { id: f.id, stage: f.stage },
            Kind::Wakeup(_) => Msg::Wakeup,
            Kind::Saturate(s) => Msg::Saturate { id: s.id },
            Kind::Message1(c) => Msg::Message1 { id: c.id },
            Kind::Message2(c) => Msg::Message2 { id: c.id },
            Kind::Message3(c) => Msg::Message3 { id: c.id },
            Kind::Echo(e) => Msg::Echo { id: e.id },
            Kind::Heartbeat(h) => Msg::Heartbeat { term: h.term, leading: h.leading, watching: h.watching },
            Kind::BullyElection(e) => Msg::BullyElection { term: e.term },
            Kind::Answer(a) => Msg::Answer { term: a.term },
            Kind::Coordinator(c) => Msg::Coordinator { leader: c.leader, term: c.term },
            Kind::RingCollect(r) => {
                Msg::RingCollect { term: r.term, initiator: r.initiator, best: r.best, count: r.count }
            }
            Kind::NewLeader(m) => Msg::NewLeader { term: m.term, leader: m.leader },
            Kind::Ack(m) => Msg::Ack { term: m.term, leader: m.leader, ok: m.ok },
            Kind::Commit(m) => Msg::Commit { term: m.term, leader: m.leader },
            Kind::VoteRequest(m) => Msg::VoteRequest { term: m.term, candidate: m.candidate },
            Kind::Vote(m) => Msg::Vote { term: m.term, candidate: m.candidate, granted: m.granted },
            Kind::LeaseRenew(m) => Msg::LeaseRenew { term: m.term, leader: m.leader },
            Kind::LeaseAck(m) => Msg::LeaseAck { term: m.term, granted: m.granted },
        })
    }
}

/// Encoded size in bytes of the message's protobuf `Body`.
#[inline]
pub fn encoded_len(m: Msg) -> usize {
    pb::Body::from(m).encoded_len()
}

impl From<Rule> for pb::Rule {
    fn from(r: Rule) -> Self {
        match r {
            Rule::Min => pb::Rule::Min,
            Rule::Max => pb::Rule::Max,
        }
    }
}

impl TryFrom<pb::Rule> for Rule {
    type Error = WireError;

    fn try_from(r: pb::Rule) -> Result<Self, WireError> {
        match r {
            pb::Rule::Min => Ok(Rule::Min),
            pb::Rule::Max => Ok(Rule::Max),
            pb::Rule::Unspecified => Err(WireError::Missing("rule")),
        }
    }
}

impl From<Compass> for pb::Compass {
    fn from(c: Compass) -> Self {
        match c {
            Compass::None => pb::Compass::Unspecified,
            Compass::North => pb::Compass::North,
            Compass::East => pb::Compass::East,
            Compass::South => pb::Compass::South,
            Compass::West => pb::Compass::West,
        }
    }
}

impl From<pb::Compass> for Compass {
    fn from(c: pb::Compass) -> Self {
        match c {
            pb::Compass::Unspecified => Compass::None,
            pb::Compass::North => Compass::North,
            pb::Compass::East => Compass::East,
            pb::Compass::South => Compass::South,
            pb::Compass::West => Compass::West,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message survives a round trip through its protobuf form and bytes.
    #[test]
    fn round_trip() {
        let msgs = [
            Msg::Election { id: u64::MAX, stage: 3, hops: 9 },
            Msg::Probe { id: 1, stage: 0, limit: 4 },
            Msg::Reply { id: 5, stage: 2 },
            Msg::Notify { leader: 0 },
            Msg::Feedback { id: 3, stage: 1 },
            Msg::Wakeup,
            Msg::Saturate { id: 9 },
            Msg::Message1 { id: 2 },
            Msg::Message2 { id: 3 },
            Msg::Message3 { id: u64::MAX },
            Msg::Echo { id: 7 },
            Msg::Heartbeat { term: 3, leading: true, watching: true },
            Msg::BullyElection { term: 0 },
            Msg::Answer { term: 7 },
            Msg::Coordinator { leader: u64::MAX, term: 2 },
            Msg::RingCollect { term: 4, initiator: 2, best: u64::MAX, count: 5 },
            Msg::NewLeader { term: 7, leader: 9 },
            Msg::Ack { term: 7, leader: 9, ok: true },
            Msg::Ack { term: 8, leader: 9, ok: false },
            Msg::Commit { term: 7, leader: u64::MAX },
            Msg::VoteRequest { term: 3, candidate: 4 },
            Msg::Vote { term: 3, candidate: 4, granted: true },
            Msg::Vote { term: 5, candidate: 4, granted: false },
            Msg::LeaseRenew { term: 3, leader: 4 },
            Msg::LeaseAck { term: 3, granted: true },
            Msg::LeaseAck { term: 6, granted: false },
        ];
        let mut kinds: Vec<_> = msgs.iter().map(Msg::kind).collect();
        kinds.dedup();
        assert_eq!(kinds.len(), crate::algo::MsgKind::COUNT, "one message of every kind");
        for m in msgs {
            let bytes = pb::Body::from(m).encode_to_vec();
            assert_eq!(bytes.len(), encoded_len(m));
            let back = pb::Body::decode(bytes.as_slice()).unwrap();
            assert_eq!(Msg::try_from(&back).unwrap(), m);
        }
    }

    /// A body without a kind is an error naming the field, not a panic.
    #[test]
    fn empty_body_is_rejected() {
        assert_eq!(Msg::try_from(&pb::Body { kind: None }), Err(WireError::Missing("body.kind")));
    }
}
