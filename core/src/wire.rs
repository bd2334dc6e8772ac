//! Domain <-> protobuf conversions of the core's types. Messages convert
//! through the message table ([`crate::protocol::Msg`]'s module), which
//! generates `From<Msg> for pb::Body` and `TryFrom<&pb::Body> for Msg`.
//!
//! Both drivers count bytes as [`encoded_len`]: the encoded size of the
//! protobuf `Body`, so simulated and live byte counts are the same figure.

use prost::Message;
use ringleader_proto::v1 as pb;

use crate::protocol::{Compass, Msg, Rule};

pub use crate::protocol::WireError;

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
            Msg::Handover { term: 4, successor: 9 },
            Msg::RaftVoteRequest {
                term: 3,
                candidate: 4,
                last_log_term: 2,
                last_log_index: 9,
                pre_vote: true,
                transfer: false,
            },
            Msg::RaftVote { term: 3, granted: true, pre_vote: false },
            Msg::AppendEntries { term: 3, leader: 4, round: 6 },
            Msg::AppendAck { term: 5, success: false, round: 7, last_log_term: 2, last_log_index: 9 },
            Msg::TimeoutNow { term: 3 },
            Msg::Program { kind: 0x1234_5671, a: 7, b: 0, c: u64::MAX, d: 1 },
            Msg::ProgramNotice { kind: 0x10, a: 0, b: 2, c: 0, d: 0 },
            Msg::Capture { stage: 3, id: u64::MAX },
            Msg::CaptureAccept,
            Msg::CaptureReject,
            Msg::Warning { stage: u32::MAX, id: 2 },
            Msg::WarningReply { yes: true },
            Msg::HyperMatch { id: 9, stage: 3, path: 5, route: 2 },
            Msg::ChordCapture { id: 4, span: 7 },
            Msg::ChordAnswer { span: 3, accepted: true },
            Msg::RandomId { id: 3, round: 2, hops: 4, unique: false },
            Msg::YoDown { id: u64::MAX },
            Msg::YoUp { yes: true, prune: false, leaf: true },
            Msg::GhsConnect { level: 3 },
            Msg::GhsInitiate { level: 2, core_lo: 1, core_hi: u64::MAX, find: true },
            Msg::GhsTest { level: 1, core_lo: 4, core_hi: 9 },
            Msg::GhsAccept,
            Msg::GhsReject,
            Msg::GhsReport { best_lo: 0, best_hi: 0, top: 7 },
            Msg::GhsChangeRoot,
            Msg::TorusMark { id: 5, stage: 2, step: 9, kills: 1, purged: true, beyond: false },
            Msg::TorusKill {
                killer: 9,
                victim: 5,
                stage: 1,
                east: -3,
                north: 2,
                back_east: i32::MIN,
                back_north: i32::MAX,
            },
            Msg::TorusVerdict { killer: 9, stage: 1, beaten: true, east: 0, north: -1 },
            Msg::TorusNotify { leader: 9, east: 3, north: 0 },
        ];
        let mut kinds: Vec<_> = msgs.iter().map(Msg::kind).collect();
        kinds.dedup();
        assert_eq!(kinds.len(), crate::protocol::MsgKind::COUNT, "one message of every kind");
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
