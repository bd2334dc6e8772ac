//! Bytes off a link: decode an envelope (and a bare body), convert the body
//! to an algorithm message, and check the message survives re-encoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use ringleader_core::algo::Msg;
use ringleader_proto::v1 as pb;

fuzz_target!(|data: &[u8]| {
    if let Ok(env) = pb::Envelope::decode(data)
        && let Some(body) = env.body.as_ref()
        && let Ok(msg) = Msg::try_from(body)
    {
        let again: pb::Body = msg.into();
        assert_eq!(Msg::try_from(&again).ok(), Some(msg), "a message survives the wire");
    }
    if let Ok(body) = pb::Body::decode(data) {
        let _ = Msg::try_from(&body);
    }
});
