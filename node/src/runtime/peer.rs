//! The `Peer` service: incoming election traffic.
//!
//! Envelopes are processed inline, in the task that reads the stream: the
//! response stream of `Link` *is* the loop that reads the request stream,
//! hands each envelope to its election and yields only the rejections. No
//! channel hop and no task per message.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ringleader_proto::v1::{self as pb, peer_server::Peer};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};
use tracing::debug;

use super::node::{Node, StreamEnd};
use crate::logs::{Throttle, WARN_INTERVAL};

/// Envelopes handled in one poll before yielding to the scheduler, so a
/// flooded link cannot starve the others.
const BUDGET: usize = 128;

/// `ringleader.v1.Peer` over a node.
#[derive(Debug, Clone)]
pub(crate) struct PeerService(pub(crate) Arc<Node>);

#[tonic::async_trait]
impl Peer for PeerService {
    type LinkStream = Inbound;

    async fn link(&self, request: Request<Streaming<pb::Envelope>>) -> Result<Response<Inbound>, Status> {
        if self.0.is_stopping() {
            return Err(Status::unavailable("node is shutting down"));
        }
        let remote = request.remote_addr();
        debug!(remote = ?remote, "incoming link");
        Ok(Response::new(Inbound {
            inbound: request.into_inner(),
            node: self.0.clone(),
            end: self.0.stream_end(),
            remote,
        }))
    }
}

/// The reply stream of one incoming link; polling it processes the link's envelopes.
#[derive(Debug)]
pub(crate) struct Inbound {
    inbound: Streaming<pb::Envelope>,
    node: Arc<Node>,
    end: StreamEnd,
    remote: Option<SocketAddr>,
}

impl Stream for Inbound {
    type Item = Result<pb::LinkReply, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.end.ended(cx) {
            // Over, or shutting down: end the stream so the connection can close.
            return Poll::Ready(None);
        }
        for _ in 0..BUDGET {
            match Pin::new(&mut this.inbound).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    debug!(remote = ?this.remote, "incoming link ended");
                    this.end.finish();
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(status))) => {
                    // Undecodable bytes or a broken transport: this stream is over, the server is not.
                    static FAILED: Throttle = Throttle::new(WARN_INTERVAL);
                    crate::warn_throttled!(
                        FAILED,
                        remote = ?this.remote, code = ?status.code(), message = status.message(),
                        "incoming link failed"
                    );
                    this.end.finish();
                    return Poll::Ready(Some(Err(status)));
                }
                Poll::Ready(Some(Ok(env))) => {
                    if let Err(r) = this.node.receive(env) {
                        let code = tonic::Code::from_i32(r.code);
                        if code == tonic::Code::NotFound {
                            // An election this node no longer runs: the normal end of every election
                            // (messages cross the aborts). Counted in the metrics; the sender logs it once.
                            debug!(remote = ?this.remote, election = %r.election_id, "envelope for an election not run here");
                        } else {
                            // A peer can send envelopes to be rejected at will: the log samples them.
                            static REJECTED: Throttle = Throttle::new(WARN_INTERVAL);
                            crate::warn_throttled!(
                                REJECTED,
                                remote = ?this.remote, seq = r.seq, election = %r.election_id,
                                code = ?code, message = %r.message,
                                "rejected an envelope"
                            );
                        }
                        return Poll::Ready(Some(Ok(pb::LinkReply { kind: Some(pb::link_reply::Kind::Reject(r)) })));
                    }
                }
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
