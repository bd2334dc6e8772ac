//! Whatever arrives on a Peer link, the node answers with a rejection or ends that stream with a status, and keeps
//! serving.

use std::time::Duration;

use prost::Message;
use prost::bytes::BufMut;
use ringleader_core::algo::Msg;
use ringleader_core::topology::TopologyKind;
use ringleader_proto::v1::{self as pb, peer_client::PeerClient};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::fixtures::*;

const WAIT: Duration = Duration::from_secs(5);

fn envelope(election_id: &str, sender: u32, port: u32, body: Option<pb::Body>) -> pb::Envelope {
    pb::Envelope {
        election_id: election_id.into(),
        sender,
        port,
        seq: 0,
        causal_time: 1,
        traceparent: String::new(),
        body,
        message_seq: 0,
    }
}

fn reject(reply: pb::LinkReply) -> pb::Reject {
    match reply.kind {
        Some(pb::link_reply::Kind::Reject(r)) => r,
        None => panic!("empty reply"),
    }
}

/// Aborted elections, bad ports, missing or empty bodies and messages the algorithm cannot take each get a Reject
/// with the right code, in order, on the same stream; the stream stays usable and the election counts them.
#[tokio::test]
async fn bad_envelopes_are_rejected_one_by_one() {
    let mut nodes = start_nodes(2).await;
    let plan = ring_plan("r", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    nodes[0].agent.prepare(plan[0].clone()).await.unwrap();
    let gone = ring_plan("nope", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    nodes[0].agent.prepare(gone[0].clone()).await.unwrap();
    nodes[0].agent.abort(pb::AbortRequest { election_id: "nope".into(), ..Default::default() }).await.unwrap();

    let (tx, rx) = mpsc::channel(16);
    let mut peer = PeerClient::new(channel(&nodes[0].address).await);
    let mut replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    let ok_body = Some(pb::Body::from(Msg::Election { id: 2, stage: 0, hops: 0 }));
    // Position 0 of a unidirectional 2-ring receives from position 1 on port 0 (LEFT).
    let cases: Vec<(pb::Envelope, Code, &str)> = vec![
        (envelope("nope", 1, 0, ok_body), Code::NotFound, "unknown election"),
        (envelope("r", 1, 7, ok_body), Code::InvalidArgument, "bad port"),
        (envelope("r", 0, 0, ok_body), Code::InvalidArgument, "bad port"),
        (envelope("r", 1, 0, None), Code::InvalidArgument, "body"),
        (envelope("r", 1, 0, Some(pb::Body { kind: None })), Code::InvalidArgument, "body.kind"),
        (
            envelope("r", 1, 0, Some(Msg::Probe { id: 2, stage: 0, limit: 1 }.into())),
            Code::InvalidArgument,
            "does not use probe",
        ),
    ];
    for (i, (env, code, needle)) in cases.into_iter().enumerate() {
        let seq = (i + 1) as u64;
        tx.send(pb::Envelope { seq, ..env }).await.unwrap();
        let r = reject(tokio::time::timeout(WAIT, replies.message()).await.unwrap().unwrap().unwrap());
        assert_eq!(r.seq, seq, "the rejection names the envelope's sequence number");
        assert_eq!(Code::from_i32(r.code), code, "{r:?}");
        assert!(r.message.contains(needle), "`{}` does not mention `{needle}`", r.message);
    }
    let st = nodes[0].agent.status(pb::StatusRequest { election_id: "r".into() }).await.unwrap().into_inner();
    assert_eq!(st.rejected, 5, "{st:#?}");
    assert_eq!(st.received, 1, "only the probe reached the algorithm");
    assert_eq!(st.errors.len(), 1, "{st:#?}");
    assert!(st.errors[0].contains("does not use probe"));
    assert_eq!(st.role, pb::Role::Undecided as i32);
}

/// Sends raw bytes on a Link stream, without protobuf encoding.
#[derive(Clone, Copy, Debug, Default)]
struct RawCodec;
#[derive(Clone, Copy, Debug, Default)]
struct RawEncoder;
#[derive(Clone, Copy, Debug, Default)]
struct ReplyDecoder;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = pb::LinkReply;
    type Encoder = RawEncoder;
    type Decoder = ReplyDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> ReplyDecoder {
        ReplyDecoder
    }
}

impl Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for ReplyDecoder {
    type Item = pb::LinkReply;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<pb::LinkReply>, tonic::Status> {
        pb::LinkReply::decode(src).map(Some).map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

/// Raw garbage bytes on a Link stream end that stream with an error status; the node keeps serving the Agent and
/// new links, and a valid envelope sent before the garbage was still processed.
#[tokio::test]
async fn garbage_bytes_end_the_stream_not_the_server() {
    let mut nodes = start_nodes(2).await;
    let plan = ring_plan("g", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    nodes[0].agent.prepare(plan[0].clone()).await.unwrap();

    let valid = envelope("g", 1, 0, Some(Msg::Election { id: 2, stage: 0, hops: 0 }.into())).encode_to_vec();
    for garbage in [vec![0xff; 32], vec![0x0a, 0x7f, 0x01], vec![0x0a, 0x02, 0xff, 0xfe]] {
        let mut grpc = tonic::client::Grpc::new(channel(&nodes[0].address).await);
        grpc.ready().await.unwrap();
        let (tx, rx) = mpsc::channel::<Vec<u8>>(4);
        tx.send(valid.clone()).await.unwrap();
        tx.send(garbage.clone()).await.unwrap();
        let path = tonic::codegen::http::uri::PathAndQuery::from_static("/ringleader.v1.Peer/Link");
        let outcome = match grpc.streaming(tonic::Request::new(ReceiverStream::new(rx)), path, RawCodec).await {
            Ok(resp) => {
                let mut stream = resp.into_inner();
                tokio::time::timeout(WAIT, stream.message()).await.expect("the stream ends promptly")
            }
            Err(status) => Err(status),
        };
        let status = outcome.expect_err("garbage must end the stream with an error status");
        assert_ne!(status.code(), Code::Ok, "{status:?}");
        assert!(status.message().contains("decode"), "{garbage:?}: {status:?}");
        drop(tx);
    }
    // The valid envelope sent ahead of the garbage reached the algorithm each time.
    let st = nodes[0].agent.status(pb::StatusRequest { election_id: "g".into() }).await.unwrap().into_inner();
    assert_eq!(st.received, 3, "{st:#?}");

    // Still serving: Info and a fresh link both work.
    nodes[0].agent.info(pb::InfoRequest {}).await.expect("agent still serves");
    let mut peer = PeerClient::new(channel(&nodes[0].address).await);
    let (tx, rx) = mpsc::channel(4);
    let mut replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    nodes[0].agent.abort(pb::AbortRequest { election_id: "g".into(), ..Default::default() }).await.unwrap();
    tx.send(envelope("g", 1, 0, None)).await.unwrap();
    let r = reject(tokio::time::timeout(WAIT, replies.message()).await.unwrap().unwrap().unwrap());
    assert_eq!(Code::from_i32(r.code), Code::NotFound);
}

/// An envelope that reaches a node before its election's Prepare waits there and is handed to the election, in
/// arrival order, once it is prepared: no Reject is sent, the report counts it as arrived on its port, and the
/// node's status shows it received.
#[tokio::test]
async fn envelopes_before_prepare_wait_for_it() {
    let mut nodes = start_nodes(2).await;
    let plan = ring_plan("w", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    let (tx, rx) = mpsc::channel(4);
    let mut peer = PeerClient::new(channel(&nodes[0].address).await);
    let mut replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    for seq in 1..=2 {
        let body = Some(Msg::Election { id: 2, stage: 0, hops: 0 }.into());
        tx.send(pb::Envelope { seq, ..envelope("w", 1, 0, body) }).await.unwrap();
    }
    // Nothing comes back for them: they wait (a short look; a Reject would come at once).
    let quiet = tokio::time::timeout(std::time::Duration::from_millis(200), replies.message()).await;
    assert!(quiet.is_err(), "no reply while the election is not prepared: {quiet:?}");
    nodes[0].agent.prepare(plan[0].clone()).await.unwrap();
    let st = nodes[0].agent.status(pb::StatusRequest { election_id: "w".into() }).await.unwrap().into_inner();
    assert_eq!((st.received, st.rejected), (2, 0), "{st:#?}");
    assert_eq!(st.arrived_by_port, [2, 0], "both arrived on port 0 (LEFT); none on RIGHT");
    // Abort takes a batch; unknown ids in the batch are ignored.
    let batch = vec!["w".to_string(), "never".to_string()];
    nodes[0].agent.abort(pb::AbortRequest { election_ids: batch, ..Default::default() }).await.unwrap();
    let gone = nodes[0].agent.status(pb::StatusRequest { election_id: "w".into() }).await.unwrap_err();
    assert_eq!(gone.code(), Code::NotFound);
}

/// An initiator whose Prepare starts it is started before the envelopes that waited for it are handed over, so
/// more of them than an unstarted initiator may hold (`MAX_HELD`, 256) are all taken, none refused.
#[tokio::test]
async fn a_started_prepare_takes_every_waiting_envelope() {
    let mut nodes = start_nodes(2).await;
    let mut plan = ring_plan("many", "as-far", TopologyKind::RingUni, &[1, 2], &[0], pb::Rule::Max, &nodes);
    let (tx, rx) = mpsc::channel(512);
    let mut peer = PeerClient::new(channel(&nodes[0].address).await);
    let _replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    let probe = ring_plan("probe", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    nodes[0].agent.prepare(probe[0].clone()).await.unwrap();
    let waiting = 300u64;
    let body = Some(Msg::Election { id: 2, stage: 0, hops: 0 }.into());
    for seq in 1..=waiting {
        tx.send(pb::Envelope { seq, ..envelope("many", 1, 0, body) }).await.unwrap();
    }
    // The link is handled in order: once the probe election's envelope, sent after them, has arrived, every one
    // of them is waiting.
    tx.send(pb::Envelope { seq: waiting + 1, ..envelope("probe", 1, 0, body) }).await.unwrap();
    for _ in 0..500 {
        let st = nodes[0].agent.status(pb::StatusRequest { election_id: "probe".into() }).await.unwrap().into_inner();
        if st.arrived_by_port[0] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    plan[0].start = true;
    nodes[0].agent.prepare(plan[0].clone()).await.unwrap();
    let st = nodes[0].agent.status(pb::StatusRequest { election_id: "many".into() }).await.unwrap().into_inner();
    assert_eq!(st.arrived_by_port[0], waiting, "{st:#?}");
    assert!(st.errors.iter().all(|e| !e.contains("held")), "nothing refused for want of room: {:?}", st.errors);
    assert_eq!(st.received, waiting, "all taken by the started node");
}
