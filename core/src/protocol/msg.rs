//! The message table: every election message, declared once.
//!
//! One row per message kind gives the [`Msg`] variant and its fields, the
//! [`MsgKind`] with its counter name, the protobuf message it travels as
//! (the `Body` oneof of `peer.proto`, whose variant has the same name and
//! fields), and its [`Traffic`] class. The kind enum, `COUNT`, `ALL`, the
//! names, the classes and both wire conversions are generated from it, so a
//! new message kind is one row here plus its protobuf message.

use ringleader_proto::v1::{self as pb, body::Kind};

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

/// What a kind of message is for, which decides how it is counted (see
/// [`crate::counters`]) and whether the runtime traces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Traffic {
    /// A step of finding the winner.
    Election,
    /// Announcing the winner.
    Notification,
    /// Keeping a leadership (lease renewals): counted with the election
    /// messages, but not traced.
    Upkeep,
    /// Failure-detector traffic: counted apart, never against a bound, not traced.
    Heartbeat,
}

/// A field of a message in words, for [`Msg::describe`] (`None`: nothing to say).
trait Word {
    fn word(&self, name: &str) -> Option<String>;
}

impl Word for u64 {
    fn word(&self, name: &str) -> Option<String> {
        (*self != 0).then(|| format!("{} {self}", name.replace('_', " ")))
    }
}

impl Word for u32 {
    fn word(&self, name: &str) -> Option<String> {
        u64::from(*self).word(name)
    }
}

impl Word for i32 {
    fn word(&self, name: &str) -> Option<String> {
        (*self != 0).then(|| format!("{} {self}", name.replace('_', " ")))
    }
}

impl Word for bool {
    /// A flag is named when set; an answer (`granted`) is said either way,
    /// "granted" or "refused", since a refusal is what a student looks for.
    fn word(&self, name: &str) -> Option<String> {
        match name {
            "granted" => Some(if *self { "granted" } else { "refused" }.to_string()),
            _ => self.then(|| name.replace('_', " ")),
        }
    }
}

/// Declares [`Msg`], [`MsgKind`] and the wire conversions from one table.
macro_rules! messages {
    ($(
        $(#[$vmeta:meta])*
        $variant:ident $({ $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)? })?
            => $name:literal, pb::$pb:ident, $traffic:expr;
    )*) => {
        /// An election message, the domain twin of the protobuf `Body`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Msg {
            $(
                $(#[$vmeta])*
                $variant $({ $( $(#[$fmeta])* $field: $ty ),* })?,
            )*
        }

        /// Kinds of [`Msg`], for per-kind counters; the discriminant is the
        /// counter index.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum MsgKind {
            $(
                #[doc = concat!("[`Msg::", stringify!($variant), "`]")]
                $variant,
            )*
        }

        impl MsgKind {
            /// Number of kinds (size of a per-kind counter array).
            pub const COUNT: usize = [$(MsgKind::$variant),*].len();
            /// Every kind, in index order.
            pub const ALL: [MsgKind; Self::COUNT] = [$(MsgKind::$variant),*];

            /// Counter name, as reported in `messages_by_kind`.
            pub fn name(self) -> &'static str {
                match self {
                    $(MsgKind::$variant => $name,)*
                }
            }

            /// What messages of this kind are for.
            pub fn traffic(self) -> Traffic {
                match self {
                    $(MsgKind::$variant => $traffic,)*
                }
            }
        }

        impl Msg {
            /// The message's kind.
            #[inline]
            pub fn kind(&self) -> MsgKind {
                match self {
                    $(Msg::$variant { .. } => MsgKind::$variant,)*
                }
            }

            /// Its fields in words, by their Rust names (see [`Msg::describe`]).
            fn describe_fields(&self) -> String {
                let mut parts: Vec<String> = Vec::new();
                match self {
                    $(Msg::$variant { $($($field),*)? } => {
                        $($(if let Some(w) = Word::word($field, stringify!($field)) { parts.push(w); })*)?
                    })*
                }
                parts.join(", ")
            }
        }

        impl From<Msg> for pb::Body {
            fn from(m: Msg) -> Self {
                let kind = match m {
                    $(Msg::$variant { $($($field),*)? } => Kind::$variant(pb::$pb { $($($field),*)? }),)*
                };
                pb::Body { kind: Some(kind) }
            }
        }

        impl TryFrom<&pb::Body> for Msg {
            type Error = WireError;

            fn try_from(b: &pb::Body) -> Result<Self, WireError> {
                Ok(match b.kind.as_ref().ok_or(WireError::Missing("body.kind"))? {
                    $(Kind::$variant(_m) => Msg::$variant { $($($field: _m.$field),*)? },)*
                })
            }
        }
    };
}

messages! {
    /// A candidate id travelling the ring.
    Election {
        /// The candidate's id.
        id: u64,
        /// Sender's stage (Stages), 0 otherwise.
        stage: u32,
        /// Links crossed, counting the one it arrives on (All the Way learns n
        /// from it); 0 when the algorithm does not use it.
        hops: u32,
    } => "election", pb::RingElection, Traffic::Election;
    /// Controlled Distance "Forth": a probe that may cross `limit` more links.
    Probe {
        /// The candidate's id.
        id: u64,
        /// The candidate's stage.
        stage: u32,
        /// Links the probe may still cross, this one included.
        limit: u32,
    } => "probe", pb::Probe, Traffic::Election;
    /// Controlled Distance "Back": a probe returning to its originator.
    Reply {
        /// The originator's id.
        id: u64,
        /// The originator's stage.
        stage: u32,
    } => "reply", pb::Reply, Traffic::Election;
    /// Announcement of the winner.
    Notify {
        /// The leader's id, or [`UNKNOWN_LEADER`](super::UNKNOWN_LEADER)
        /// (0, which protobuf leaves off the wire) when the receiver learns
        /// only that it follows (Elect_root).
        leader: u64,
    } => "notify", pb::Notify, Traffic::Notification;
    /// Positive feedback to a candidate (Stages with Feedback).
    Feedback {
        /// The candidate's id.
        id: u64,
        /// The stage it is for.
        stage: u32,
    } => "feedback", pb::Feedback, Traffic::Election;
    /// Wake-up flood (tree saturation, mesh election).
    Wakeup => "wakeup", pb::Wakeup, Traffic::Election;
    /// Saturation message: the best id of the sender's subtree (Elect_min),
    /// or 0, no id, when only the saturation matters (Elect_root; protobuf
    /// leaves a 0 off the wire).
    Saturate {
        /// Best id the sender has seen in its subtree.
        id: u64,
    } => "saturate", pb::Saturate, Traffic::Election;
    /// Complete-network election (Villadangos et al.) `message1`: a new
    /// candidate predecessor travelling the virtual ring.
    Message1 {
        /// The candidate predecessor's id.
        id: u64,
    } => "message1", pb::Capture, Traffic::Election;
    /// Complete-network election `message2`: a higher candidate telling a
    /// lower one it is its candidate successor.
    Message2 {
        /// The candidate successor's id.
        id: u64,
    } => "message2", pb::Capture, Traffic::Election;
    /// Complete-network election `message3`: a candidate predecessor handed
    /// on to a candidate successor.
    Message3 {
        /// The candidate predecessor's id.
        id: u64,
    } => "message3", pb::Capture, Traffic::Election;
    /// Echo of a wave back towards its initiator (echo with extinction).
    Echo {
        /// The wave's (initiator's) id.
        id: u64,
    } => "echo", pb::Echo, Traffic::Election;
    /// Failure-detector heartbeat ("I am alive"), with the sender's belief.
    Heartbeat {
        /// The sender's current term (0 when it has none).
        term: u64,
        /// The sender believes it leads `term`.
        leading: bool,
        /// The sender watches the receiver: answer with heartbeats (see
        /// [`detector`](crate::algo::detector)'s reciprocity).
        watching: bool,
    } => "heartbeat", pb::Heartbeat, Traffic::Heartbeat;
    /// Bully `ELECTION`: sent to every better-ranked node by a node that
    /// knows of no live leader.
    BullyElection {
        /// The highest term the sender has seen.
        term: u64,
    } => "bully_election", pb::BullyElection, Traffic::Election;
    /// Bully `OK`: a better-ranked live node answers an election and takes it over.
    Answer {
        /// The highest term the answering node has seen.
        term: u64,
    } => "answer", pb::Answer, Traffic::Election;
    /// Bully `COORDINATOR`: the sender leads `term`.
    Coordinator {
        /// The new leader's id (the sender's own).
        leader: u64,
        /// The term it leads.
        term: u64,
    } => "coordinator", pb::Coordinator, Traffic::Notification;
    /// Repaired ring: an election travelling the logical ring.
    /// The textbook's list of forwarders is reduced to what the election uses:
    /// the best id in it and its length.
    RingCollect {
        /// The election's term.
        term: u64,
        /// The node that started it.
        initiator: u64,
        /// The best id among the nodes that forwarded it (the initiator included).
        best: u64,
        /// How many nodes forwarded it (the initiator included).
        count: u32,
    } => "ring_collect", pb::RingCollect, Traffic::Election;
    /// ZooKeeper-style `NEW_LEADER`: the sender proposes itself for `term`.
    NewLeader {
        /// The proposed term.
        term: u64,
        /// The proposer's id (the sender's own).
        leader: u64,
    } => "new_leader", pb::NewLeader, Traffic::Election;
    /// ZooKeeper-style `ACK` of a `NEW_LEADER` (`ok`), or its refusal.
    Ack {
        /// The proposal's term when `ok`; the highest term the sender has
        /// seen when refusing.
        term: u64,
        /// The proposer acknowledged (or refused).
        leader: u64,
        /// Acknowledged (true) or refused (false).
        ok: bool,
    } => "ack", pb::Ack, Traffic::Election;
    /// ZooKeeper-style `COMMIT`: a quorum acknowledged `leader` for `term`.
    Commit {
        /// The committed term.
        term: u64,
        /// The leader (the sender's own id).
        leader: u64,
    } => "commit", pb::Commit, Traffic::Notification;
    /// Chubby-style request for votes: `candidate` runs for `term`.
    VoteRequest {
        /// The term run for.
        term: u64,
        /// The candidate's id (the sender's own).
        candidate: u64,
    } => "vote_request", pb::VoteRequest, Traffic::Election;
    /// Chubby-style vote for `candidate` in `term`, or its refusal.
    Vote {
        /// The request's term when granted; the highest term the sender has
        /// seen when refusing.
        term: u64,
        /// The candidate voted for (or refused).
        candidate: u64,
        /// Granted (true) or refused (false).
        granted: bool,
    } => "vote", pb::Vote, Traffic::Election;
    /// Chubby-style lease renewal: the leader of `term` asks its voters to
    /// extend their promise.
    LeaseRenew {
        /// The leader's term.
        term: u64,
        /// The leader's id (the sender's own).
        leader: u64,
    } => "lease_renew", pb::LeaseRenew, Traffic::Upkeep;
    /// Chubby-style answer to a renewal: promise extended, or refused.
    LeaseAck {
        /// The renewal's term when granted; the highest term seen when refusing.
        term: u64,
        /// Extended (true) or refused (false).
        granted: bool,
    } => "lease_ack", pb::LeaseAck, Traffic::Upkeep;
    /// A leader that is about to stop on purpose hands its leadership of
    /// `term` over to `successor` (kept leaderships, see
    /// [`Input::Leave`](super::Input::Leave)): sent to every
    /// node, which stops waiting on the sender; the successor runs at once.
    Handover {
        /// The term the sender led (or the highest it saw).
        term: u64,
        /// The id of the node that should lead next.
        successor: u64,
    } => "handover", pb::Handover, Traffic::Election;
    /// Raft `RequestVote` (or, with `pre_vote`, PreVote's request): `candidate`
    /// runs for `term`, its log ending at (`last_log_term`, `last_log_index`).
    RaftVoteRequest {
        /// The term run for (a pre-vote: the term the candidate would run for).
        term: u64,
        /// The candidate's id (the sender's own).
        candidate: u64,
        /// Term of the candidate's last log entry.
        last_log_term: u64,
        /// Index of the candidate's last log entry.
        last_log_index: u64,
        /// A pre-vote (thesis §9.6): nobody changes term or vote for it.
        pre_vote: bool,
        /// Run on the leader's `TimeoutNow` (thesis §3.10, §4.2.3): voters
        /// that heard the leader lately grant it all the same.
        transfer: bool,
    } => "raft_vote_request", pb::RaftVoteRequest, Traffic::Election;
    /// Raft's answer to a `RequestVote` (or a pre-vote).
    RaftVote {
        /// The request's term when granted; the voter's term when refused.
        term: u64,
        /// Granted (true) or refused (false).
        granted: bool,
        /// The answer to a pre-vote.
        pre_vote: bool,
    } => "raft_vote", pb::RaftVote, Traffic::Election;
    /// Raft `AppendEntries` without entries: the leader's heartbeat.
    AppendEntries {
        /// The leader's term.
        term: u64,
        /// The leader's id (the sender's own).
        leader: u64,
        /// The heartbeat round of the term (1, 2, ...), echoed by the answer
        /// so that the leader credits its lease to the round (thesis §6.4.1).
        round: u64,
    } => "append_entries", pb::AppendEntries, Traffic::Upkeep;
    /// Raft's answer to `AppendEntries`.
    AppendAck {
        /// The heartbeat's term on success; the receiver's (higher) term otherwise.
        term: u64,
        /// The receiver follows the sender in `term`.
        success: bool,
        /// The round of the `AppendEntries` answered.
        round: u64,
        /// Term of the receiver's last log entry (the leader picks an
        /// up-to-date successor by it, thesis §3.10).
        last_log_term: u64,
        /// Index of the receiver's last log entry.
        last_log_index: u64,
    } => "append_ack", pb::AppendAck, Traffic::Upkeep;
    /// Raft `TimeoutNow` (leadership transfer, thesis §3.10): the leader of
    /// `term` asks the receiver to run at once.
    TimeoutNow {
        /// The leader's term.
        term: u64,
    } => "timeout_now", pb::TimeoutNow, Traffic::Election;
    /// A message of a program-defined algorithm (the `ringleader-program`
    /// crate, docs/programs.md), one of its election kinds. `kind` is the
    /// program's tag and the kind's index ([`super::program::kind_of`]);
    /// `a` to `d` are the kind's fields in its manifest's order.
    Program {
        /// The program's tag and the kind's index in its manifest.
        kind: u32,
        /// The kind's first field (0 when it has none).
        a: u64,
        /// The second field.
        b: u64,
        /// The third field.
        c: u64,
        /// The fourth field.
        d: u64,
    } => "program", pb::ProgramMsg, Traffic::Election;
    /// A program's message of a kind its manifest marks as a notification
    /// (announcing the winner), as [`Msg::Program`].
    ProgramNotice {
        /// The program's tag and the kind's index in its manifest.
        kind: u32,
        /// The kind's first field (0 when it has none).
        a: u64,
        /// The second field.
        b: u64,
        /// The third field.
        c: u64,
        /// The fourth field.
        d: u64,
    } => "program_notice", pb::ProgramMsg, Traffic::Notification;
    // Yo-Yo and GHS (any graph)
    /// Yo-Yo's YO- phase: the best id that came down the sender's in-links
    /// (a source's own), sent down its out-links.
    YoDown {
        /// The best id the sender received (a source: its own).
        id: u64,
    } => "yo_down", pb::YoDown, Traffic::Election;
    /// Yo-Yo's -YO phase: the vote sent back up an in-link, with pruning.
    YoUp {
        /// The id that came down this link was the best the sender saw and
        /// every vote it got was yes.
        yes: bool,
        /// Cut this link.
        prune: bool,
        /// The sender, a sink with this one in-link, leaves: the receiver is
        /// its parent for the notification.
        leaf: bool,
    } => "yo_up", pb::YoUp, Traffic::Election;
    /// GHS `Connect`: the sender's fragment, at `level`, joins over this link.
    GhsConnect {
        /// The sender's fragment level.
        level: u32,
    } => "connect", pb::GhsConnect, Traffic::Election;
    /// GHS `Initiate`: the fragment's level and name (its core edge's
    /// weight), and whether to look for the best outgoing edge.
    GhsInitiate {
        /// The fragment's level.
        level: u32,
        /// The core edge's smaller endpoint id.
        core_lo: u64,
        /// The core edge's larger endpoint id.
        core_hi: u64,
        /// Look for the best outgoing edge (`Find`), or not (`Found`).
        find: bool,
    } => "initiate", pb::GhsInitiate, Traffic::Election;
    /// GHS `Test`: does this link leave the sender's fragment?
    GhsTest {
        /// The sender's fragment level.
        level: u32,
        /// The sender's fragment name: core's smaller endpoint id.
        core_lo: u64,
        /// The core's larger endpoint id.
        core_hi: u64,
    } => "test", pb::GhsTest, Traffic::Election;
    /// GHS `Accept`: the tested link leads to another fragment.
    GhsAccept => "accept", pb::GhsAccept, Traffic::Election;
    /// GHS `Reject`: the tested link is inside the fragment.
    GhsReject => "reject", pb::GhsReject, Traffic::Election;
    /// GHS `Report`: the best outgoing edge's weight in the sender's subtree
    /// (0, 0: none) and, for the election, the best id in that subtree.
    GhsReport {
        /// The best edge's smaller endpoint id (0 with `best_hi` 0: none).
        best_lo: u64,
        /// The best edge's larger endpoint id.
        best_hi: u64,
        /// The best id in the sender's subtree.
        top: u64,
    } => "report", pb::GhsReport, Traffic::Election;
    /// GHS `Change-root`: the fragment's best outgoing edge is below the receiver.
    GhsChangeRoot => "change_root", pb::GhsChangeRoot, Traffic::Election;
    // Korach-Moran-Zaks and Afek-Gafni (complete networks, capture)
    /// Capture in a complete network (Korach-Moran-Zaks, Afek-Gafni): a
    /// candidate at `stage` (the nodes it has captured) asks the receiver to
    /// join it.
    Capture {
        /// The candidate's stage: how many nodes it has captured.
        stage: u32,
        /// The candidate's id.
        id: u64,
    } => "capture", pb::CaptureStage, Traffic::Election;
    /// The receiver of a `Capture` joins the candidate: its stage grows by one.
    CaptureAccept => "capture_accept", pb::CaptureAccept, Traffic::Election;
    /// The receiver of a `Capture` refuses it: the candidate is beaten (Korach-Moran-Zaks).
    CaptureReject => "capture_reject", pb::CaptureReject, Traffic::Election;
    /// A captured node warns its owner that a candidate at `stage` tries to
    /// capture it: the owner, if weaker, is beaten and lets it go.
    Warning {
        /// The attacking candidate's stage.
        stage: u32,
        /// The attacking candidate's id.
        id: u64,
    } => "warning", pb::CaptureStage, Traffic::Election;
    /// The owner's answer to a `Warning`: `yes`, the attacker is stronger
    /// (the owner is beaten) and may take the node; otherwise it may not.
    WarningReply {
        /// The attacker beats the owner.
        yes: bool,
    } => "warning_reply", pb::WarningReply, Traffic::Election;
    // HyperElect and chordal capture (sense of direction)
    /// HyperElect's `Match` on a hypercube: the duelist `id` of a cube of
    /// dimension `stage` − 1 challenges the duelist of the neighbouring one.
    HyperMatch {
        /// The duelist's id.
        id: u64,
        /// The duel's stage (1 to d).
        stage: u32,
        /// The dimensions crossed so far, as a bit mask: the receiver's
        /// position XOR the sender's.
        path: u32,
        /// Dimensions still to cross before the next node that routes it.
        route: u32,
    } => "match", pb::HyperMatch, Traffic::Election;
    /// Chordal capture on a complete network with chordal labels: the
    /// candidate `id`, owning the `span` positions from itself on, asks the
    /// position `span` further on for its territory.
    ChordCapture {
        /// The candidate's id.
        id: u64,
        /// Positions the candidate owns (itself and the next span − 1).
        span: u32,
    } => "chord_capture", pb::ChordCapture, Traffic::Election;
    /// The answer to a `ChordCapture`: `accepted` hands over the receiver's
    /// territory of `span` positions; otherwise the candidate is beaten.
    ChordAnswer {
        /// Positions handed over (0 when refused).
        span: u32,
        /// The capture succeeded.
        accepted: bool,
    } => "chord_answer", pb::ChordAnswer, Traffic::Election;
    // Itai-Rodeh (anonymous rings)
    /// Itai-Rodeh on an anonymous ring: an active node's random id `id` of
    /// election round `round`, `hops` links from its sender, `unique` until
    /// it passes a node that drew the same id in the same round.
    RandomId {
        /// The id drawn (1..=n).
        id: u64,
        /// The sender's election round (from 1).
        round: u32,
        /// Links crossed, counting the one it arrives on.
        hops: u32,
        /// No other active node of the round drew `id` so far.
        unique: bool,
    } => "random_id", pb::RandomId, Traffic::Election;
    // Election on an oriented torus (marking territory)
    /// Torus election: candidate `id`'s token of stage `stage` walking the
    /// border of its square, arriving at the receiver as step `step` of the
    /// walk.
    TorusMark {
        /// The candidate's id.
        id: u64,
        /// The candidate's stage (its square has side 2^(stage + 1)).
        stage: u32,
        /// The walk's step at the receiver (4L at the end, home again).
        step: u32,
        /// Kills the token has sent so far.
        kills: u32,
        /// A stronger mark stopped the token: it only walks home.
        purged: bool,
        /// The mark that stopped it was of a later stage.
        beyond: bool,
    } => "mark", pb::TorusMark, Traffic::Election;
    /// Torus election: the stronger `killer`'s token crossed the weaker
    /// `victim`'s border; the kill goes to the victim.
    TorusKill {
        /// The id of the candidate whose token crossed.
        killer: u64,
        /// The id of the candidate whose mark it found.
        victim: u64,
        /// The stage of both.
        stage: u32,
        /// Links still to go east (west when negative) to the victim.
        east: i32,
        /// Then links north (south when negative).
        north: i32,
        /// The way from the victim to the killer, east.
        back_east: i32,
        /// The way from the victim to the killer, north.
        back_north: i32,
    } => "kill", pb::TorusKill, Traffic::Election;
    /// Torus election: the victim's answer to a kill.
    TorusVerdict {
        /// The killer it goes to.
        killer: u64,
        /// The stage of the kill.
        stage: u32,
        /// The killer must give up too: the victim went past the stage, or
        /// was stopped by a later stage.
        beaten: bool,
        /// Links still to go east (west when negative) to the killer.
        east: i32,
        /// Then links north (south when negative).
        north: i32,
    } => "verdict", pb::TorusVerdict, Traffic::Election;
    /// Torus election: the leader's announcement along a spanning tree (its
    /// row, then every column).
    TorusNotify {
        /// The leader's id.
        leader: u64,
        /// Links still to go east along the leader's row after the receiver.
        east: u32,
        /// Links still to go north up the receiver's column.
        north: u32,
    } => "torus_notify", pb::TorusNotify, Traffic::Notification;
}

impl Msg {
    /// What it carries, in words, e.g. `id 6, stage 1` (fields that are 0
    /// or false left out; a true flag by its name): a diagram's label. A
    /// program's message names its fields as its manifest does.
    pub fn describe(&self) -> String {
        if let Msg::Program { kind, a, b, c, d } | Msg::ProgramNotice { kind, a, b, c, d } = *self
            && let Some(carries) = super::program::describe(kind, [a, b, c, d])
        {
            return carries;
        }
        self.describe_fields()
    }

    /// The name of its kind: [`MsgKind::name`], or a program's own name for
    /// the kind (its manifest's).
    pub fn kind_name(&self) -> &'static str {
        match *self {
            Msg::Program { kind, .. } | Msg::ProgramNotice { kind, .. } => {
                super::program::kind_name(kind).unwrap_or(self.kind().name())
            }
            _ => self.kind().name(),
        }
    }

    /// The message in words: its kind and what it carries, as the steps of a
    /// schedule say it: "election (id 3, stage 1)", "raft_vote (term 2,
    /// refused)", "heartbeat".
    pub fn in_words(&self) -> String {
        let carries = self.describe();
        if carries.is_empty() { self.kind_name().to_string() } else { format!("{} ({carries})", self.kind_name()) }
    }

    /// The term a message carries (kept leaderships' messages and
    /// heartbeats), `None` for the others.
    pub fn term(&self) -> Option<u64> {
        match *self {
            Msg::Heartbeat { term, .. }
            | Msg::BullyElection { term }
            | Msg::Answer { term }
            | Msg::Coordinator { term, .. }
            | Msg::RingCollect { term, .. }
            | Msg::NewLeader { term, .. }
            | Msg::Ack { term, .. }
            | Msg::Commit { term, .. }
            | Msg::VoteRequest { term, .. }
            | Msg::Vote { term, .. }
            | Msg::LeaseRenew { term, .. }
            | Msg::LeaseAck { term, .. }
            | Msg::Handover { term, .. }
            | Msg::RaftVoteRequest { term, .. }
            | Msg::RaftVote { term, .. }
            | Msg::AppendEntries { term, .. }
            | Msg::AppendAck { term, .. }
            | Msg::TimeoutNow { term } => Some(term),
            _ => None,
        }
    }

    /// Does the message say no: a vote refused, a proposal not
    /// acknowledged, a lease not extended? (Diagrams draw these apart from
    /// the yeses.)
    pub fn refuses(&self) -> bool {
        matches!(
            self,
            Msg::Vote { granted: false, .. }
                | Msg::Ack { ok: false, .. }
                | Msg::LeaseAck { granted: false, .. }
                | Msg::RaftVote { granted: false, .. }
                | Msg::AppendAck { success: false, .. }
                | Msg::YoUp { yes: false, .. }
                | Msg::GhsReject
        )
    }
}

impl MsgKind {
    /// Is this kind part of announcing the winner rather than finding it?
    pub fn is_notification(self) -> bool {
        self.traffic() == Traffic::Notification
    }

    /// Is this kind failure-detector traffic rather than election work? Such
    /// messages are counted apart and never against an election's bound.
    pub fn is_heartbeat(self) -> bool {
        self.traffic() == Traffic::Heartbeat
    }

    /// Is this kind steady-state upkeep of a kept leadership (heartbeats and
    /// lease renewals) rather than a step of an election? The runtime does not
    /// trace it, so a leadership kept for hours does not fill its trace.
    pub fn is_upkeep(self) -> bool {
        matches!(self.traffic(), Traffic::Upkeep | Traffic::Heartbeat)
    }
}

/// The part a kind of message plays in an election, as a diagram draws it: each role has its own
/// stroke, so a picture printed grey still tells them apart ([`crate::diagram`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MsgRole {
    /// A candidate's bid going out: its id travelling the ring or a tree, a probe, an election
    /// call, a proposal or a request for votes, a wake-up that starts the election.
    Candidate,
    /// An answer coming back to a candidate: a probe's reply, feedback, an echo, an `OK`, a vote,
    /// an acknowledgement, a candidate predecessor handed back.
    Reply,
    /// The winner made known: a notification, a coordinator, a commit, a leader's handover.
    Announcement,
    /// Keeping a leadership alive: heartbeats, lease renewals and their answers.
    Upkeep,
}

impl MsgRole {
    /// Every role, in order.
    pub const ALL: [MsgRole; 4] = [MsgRole::Candidate, MsgRole::Reply, MsgRole::Announcement, MsgRole::Upkeep];

    /// The role's name, lower case, e.g. `reply`.
    pub fn name(self) -> &'static str {
        match self {
            MsgRole::Candidate => "candidate",
            MsgRole::Reply => "reply",
            MsgRole::Announcement => "announcement",
            MsgRole::Upkeep => "upkeep",
        }
    }
}

impl MsgKind {
    /// The kind's role. One match without a catch-all: a new kind does not compile until it has
    /// a role.
    pub fn role(self) -> MsgRole {
        match self {
            MsgKind::Election
            | MsgKind::Probe
            | MsgKind::Wakeup
            | MsgKind::Saturate
            | MsgKind::Message1
            | MsgKind::Message2
            | MsgKind::BullyElection
            | MsgKind::RingCollect
            | MsgKind::NewLeader
            | MsgKind::VoteRequest
            | MsgKind::RaftVoteRequest
            | MsgKind::Program
            | MsgKind::YoDown
            | MsgKind::GhsConnect
            | MsgKind::GhsInitiate
            | MsgKind::GhsTest
            | MsgKind::GhsChangeRoot
            | MsgKind::Capture
            | MsgKind::Warning
            | MsgKind::HyperMatch
            | MsgKind::ChordCapture
            | MsgKind::RandomId
            | MsgKind::TorusMark
            | MsgKind::TorusKill => MsgRole::Candidate,
            MsgKind::Reply
            | MsgKind::Feedback
            | MsgKind::Message3
            | MsgKind::Echo
            | MsgKind::Answer
            | MsgKind::Ack
            | MsgKind::Vote
            | MsgKind::RaftVote
            | MsgKind::YoUp
            | MsgKind::GhsAccept
            | MsgKind::GhsReject
            | MsgKind::GhsReport
            | MsgKind::CaptureAccept
            | MsgKind::CaptureReject
            | MsgKind::WarningReply
            | MsgKind::ChordAnswer
            | MsgKind::TorusVerdict => MsgRole::Reply,
            MsgKind::Notify
            | MsgKind::Coordinator
            | MsgKind::Commit
            | MsgKind::Handover
            | MsgKind::TimeoutNow
            | MsgKind::ProgramNotice
            | MsgKind::TorusNotify => MsgRole::Announcement,
            MsgKind::Heartbeat
            | MsgKind::LeaseRenew
            | MsgKind::LeaseAck
            | MsgKind::AppendEntries
            | MsgKind::AppendAck => MsgRole::Upkeep,
        }
    }
}

impl Msg {
    /// The candidate id the message is about, if any: the id a candidate's message carries along
    /// (`Election`, `Probe`, `Message1`, `Message2`, a `Saturate`'s best id) or the id an answer
    /// goes back to (`Reply`, `Feedback`, `Echo`, `Message3`). `None` for the others: their ids
    /// name a leader, a proposer or a voter, which no node passes on. (Diagrams mark where a
    /// candidate's id stops: the node it reached sends no message about it after.)
    pub fn candidate(&self) -> Option<u64> {
        match *self {
            Msg::Election { id, .. }
            | Msg::Probe { id, .. }
            | Msg::Reply { id, .. }
            | Msg::Feedback { id, .. }
            | Msg::Message1 { id }
            | Msg::Message2 { id }
            | Msg::Message3 { id }
            | Msg::Echo { id }
            | Msg::YoDown { id }
            | Msg::Capture { id, .. }
            | Msg::Warning { id, .. } => Some(id),
            Msg::Saturate { id } => (id != 0).then_some(id),
            _ => None,
        }
    }
}

impl Msg {
    /// The stage or phase the message belongs to, for algorithms that have stages.
    pub fn stage(&self) -> Option<u32> {
        match *self {
            Msg::Election { stage, .. } | Msg::Probe { stage, .. } | Msg::Reply { stage, .. } => Some(stage),
            Msg::Feedback { stage, .. } | Msg::Capture { stage, .. } | Msg::Warning { stage, .. } => Some(stage),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {

    /// Votes, acknowledgements and lease answers that say no refuse; their yeses and other kinds do not.
    #[test]
    fn only_refusals_refuse() {
        assert!(Msg::Vote { term: 2, candidate: 5, granted: false }.refuses());
        assert!(!Msg::Vote { term: 2, candidate: 5, granted: true }.refuses());
        assert!(Msg::Ack { term: 2, leader: 5, ok: false }.refuses());
        assert!(
            Msg::LeaseAck { term: 2, granted: false }.refuses() && !Msg::LeaseAck { term: 2, granted: true }.refuses()
        );
        assert!(!Msg::Election { id: 6, stage: 0, hops: 3 }.refuses());
    }

    /// A message in words for a diagram's label: its non-zero fields by name, a true flag by its name,
    /// underscores as spaces; a message with nothing but zeros says nothing; a vote says whether it
    /// was granted or refused (before, a refused vote said only its term).
    #[test]
    fn messages_describe_what_they_carry() {
        assert_eq!(Msg::Election { id: 6, stage: 0, hops: 3 }.describe(), "id 6, hops 3");
        assert_eq!(Msg::Probe { id: 2, stage: 1, limit: 4 }.describe(), "id 2, stage 1, limit 4");
        assert_eq!(Msg::Election { id: 0, stage: 0, hops: 0 }.describe(), "");
        assert_eq!(Msg::RaftVote { term: 3, granted: false, pre_vote: true }.describe(), "term 3, refused, pre vote");
        assert_eq!(Msg::Vote { term: 2, candidate: 5, granted: true }.describe(), "term 2, candidate 5, granted");
    }

    use super::*;

    /// Every kind has a role, and the roles agree with the traffic classes: the notifications
    /// announce, the upkeep kinds keep a leadership, the others (election work) go out or come back;
    /// every role has kinds.
    #[test]
    fn every_kind_has_a_role() {
        for k in MsgKind::ALL {
            let role = k.role();
            assert!(MsgRole::ALL.contains(&role), "{k:?}");
            match k.traffic() {
                Traffic::Notification => assert_eq!(role, MsgRole::Announcement, "{k:?}"),
                Traffic::Upkeep | Traffic::Heartbeat => assert_eq!(role, MsgRole::Upkeep, "{k:?}"),
                Traffic::Election => assert_ne!(role, MsgRole::Upkeep, "{k:?}"),
            }
        }
        for role in MsgRole::ALL {
            assert!(MsgKind::ALL.iter().any(|k| k.role() == role), "{role:?} has no kind");
        }
        let bully: Vec<MsgRole> =
            [MsgKind::BullyElection, MsgKind::Answer, MsgKind::Coordinator].map(MsgKind::role).into();
        assert_eq!(bully, [MsgRole::Candidate, MsgRole::Reply, MsgRole::Announcement]);
    }

    /// The candidate ids that travel or are answered about are told; leaders' and voters' ids are
    /// not, nor a saturation without an id.
    #[test]
    fn candidates_are_told() {
        assert_eq!(Msg::Election { id: 6, stage: 1, hops: 0 }.candidate(), Some(6));
        assert_eq!(Msg::Reply { id: 2, stage: 1 }.candidate(), Some(2));
        assert_eq!(Msg::Saturate { id: 0 }.candidate(), None);
        assert_eq!(Msg::Notify { leader: 8 }.candidate(), None);
        assert_eq!(Msg::VoteRequest { term: 1, candidate: 3 }.candidate(), None);
    }

    /// The generated table is consistent: `ALL` is in counter-index order,
    /// names are distinct lower-case counter names, and the classes agree
    /// with the predicates the counters and the runtime use.
    #[test]
    fn the_table_is_consistent() {
        for (i, k) in MsgKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
            assert!(k.name().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "{k:?}");
        }
        let mut names: Vec<&str> = MsgKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MsgKind::COUNT);
        let notifications: Vec<MsgKind> = MsgKind::ALL.into_iter().filter(|k| k.is_notification()).collect();
        assert_eq!(
            notifications,
            [MsgKind::Notify, MsgKind::Coordinator, MsgKind::Commit, MsgKind::ProgramNotice, MsgKind::TorusNotify]
        );
        let upkeep: Vec<MsgKind> = MsgKind::ALL.into_iter().filter(|k| k.is_upkeep()).collect();
        assert_eq!(
            upkeep,
            [MsgKind::Heartbeat, MsgKind::LeaseRenew, MsgKind::LeaseAck, MsgKind::AppendEntries, MsgKind::AppendAck]
        );
        assert!(MsgKind::ALL.into_iter().filter(|k| k.is_heartbeat()).eq([MsgKind::Heartbeat]));
    }
}
