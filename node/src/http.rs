//! The HTTP port of both programs (Prometheus `/metrics`, and the
//! controller's election pages): HTTP/1.1 under the gRPC servers' connection
//! limits ([`crate::limits`]), a deadline on each request's head, and
//! security headers on every response.
//!
//! * At most [`HttpLimits::max_connections`] open at once: a sixteenth of the
//!   process's `max_connections`, at least 4 (256 by default). The port serves
//!   a scraper and a few browsers; its own, smaller cap keeps a flood of it
//!   from using up the descriptors the gRPC API needs (at the common limit of
//!   1,024 open files, 256 leave the rest to gRPC). A connection beyond is
//!   closed as soon as it is accepted, logged (the first, then at powers of
//!   two) and counted in `ringleader.connections.refused{server}`, with
//!   `server` `node-http` or `controller-http`.
//! * A connection that sends nothing for `idle_timeout` is closed and counted
//!   in `ringleader.connections.idle_closed`, as on gRPC.
//! * A request's head must arrive whole within
//!   [`HttpLimits::header_read_timeout`] (10 s, the idle timeout if shorter),
//!   counted from when the server starts waiting for it: a client that
//!   trickles header bytes (slowloris) is closed then, and so is a kept-alive
//!   connection that sends no next request. Its body must arrive whole within
//!   the same time again, counted from when the head was read, and be at most
//!   [`MAX_REQUEST_BODY`]: a `Content-Length` above it is answered 413 at
//!   once; a body that is late or longer fails the request (400 from the
//!   route that reads it) and the connection is closed.
//! * An answer the client does not read is counted and bounded like a gRPC
//!   one ([`crate::unread`]): a client that leaves it untaken for the stall
//!   timeout is closed, and so is the heaviest when the process holds too
//!   much.
//! * Every response carries `X-Content-Type-Options: nosniff`, and a
//!   `Content-Security-Policy` of [`DEFAULT_POLICY`] unless its route set one
//!   (the pages set theirs).

use std::time::Duration;

use std::future::Future;
use std::pin::Pin;

use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_stream::StreamExt;
use tower::ServiceExt;
use tracing::{debug, warn};

use crate::limits::{self, ConnLimits};

/// Longest wait for a request's head (the idle timeout if shorter), and
/// again for its body.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest request body the port reads (its routes may take less).
pub const MAX_REQUEST_BODY: u64 = 1 << 20;

/// The policy of a response that sets none: nothing may be loaded or run, and
/// no page may frame it.
pub const DEFAULT_POLICY: &str = "default-src 'none'; frame-ancestors 'none'";

/// Limits of the HTTP port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// A connection that sends nothing this long is closed.
    pub idle_timeout: Duration,
    /// A request whose head is not whole this long after the server started
    /// waiting for it closes its connection; so does one whose body is not
    /// whole this long after its head.
    pub header_read_timeout: Duration,
    /// A client that leaves an answer untaken this long is closed.
    pub stall_timeout: Duration,
}

impl HttpLimits {
    /// The HTTP port's limits in a process whose gRPC servers have `grpc`: a
    /// sixteenth of its connections (at least 4), the same idle and stall
    /// timeouts, and [`HEADER_READ_TIMEOUT`] or the idle timeout if shorter
    /// for a head.
    pub fn sharing(grpc: &ConnLimits) -> HttpLimits {
        HttpLimits {
            max_connections: (grpc.max_connections / 16).max(4),
            idle_timeout: grpc.idle_timeout,
            header_read_timeout: HEADER_READ_TIMEOUT.min(grpc.idle_timeout),
            stall_timeout: grpc.stall_timeout,
        }
    }
}

impl Default for HttpLimits {
    /// [`HttpLimits::sharing`] the default gRPC limits: 256 connections, 60 s idle, 10 s per head,
    /// 20 s for a client to take an answer.
    fn default() -> Self {
        HttpLimits::sharing(&ConnLimits::DEFAULT)
    }
}

/// Serve `app` over HTTP/1.1 on `listener` within `limits`, with the security
/// headers; `server` names the port in logs and metrics. Runs until the task
/// is dropped.
pub async fn serve(listener: TcpListener, app: axum::Router, limits: HttpLimits, server: &'static str) {
    let app = app.layer(axum::middleware::map_response(security_headers));
    let conn_limits = ConnLimits {
        max_connections: limits.max_connections,
        idle_timeout: limits.idle_timeout,
        stall_timeout: limits.stall_timeout,
        ..ConnLimits::DEFAULT
    };
    let mut incoming = std::pin::pin!(limits::incoming_http(listener, conn_limits, server));
    while let Some(conn) = incoming.next().await {
        let conn = match conn {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors (EMFILE) and the like: give closes a moment.
                warn!(server, error = %e, "cannot accept an HTTP connection");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
        let account = conn.account();
        let app = app.clone();
        let body_timeout = limits.header_read_timeout;
        let guarded = tower::service_fn(move |req: Request<Incoming>| {
            let app = app.clone();
            async move {
                if let Some(refusal) = too_large(&req) {
                    return Ok::<_, std::convert::Infallible>(security_headers(refusal).await);
                }
                let req = req.map(|b| BoundedBody::new(b, body_timeout));
                app.oneshot(req).await
            }
        });
        let refuse: crate::unread::Refusal<axum::body::Body> = |m| (StatusCode::SERVICE_UNAVAILABLE, m).into_response();
        let service = TowerToHyperService::new(crate::unread::UnreadService::for_conn(guarded, account, refuse));
        tokio::spawn(async move {
            if let Err(e) = http1.serve_connection(TokioIo::new(conn), service).await {
                debug!(server, error = %e, "HTTP connection closed");
            }
        });
    }
}

/// A 413 for a request whose `Content-Length` is over [`MAX_REQUEST_BODY`].
fn too_large<B>(req: &Request<B>) -> Option<Response> {
    let length = req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse::<u64>().ok()?;
    (length > MAX_REQUEST_BODY).then(|| {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Content-Length {length} is over this port's {MAX_REQUEST_BODY} bytes\n"),
        )
            .into_response()
    })
}

/// A request body that must arrive whole within a time and be at most
/// [`MAX_REQUEST_BODY`] bytes; otherwise it fails.
struct BoundedBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    timeout: Duration,
    left: u64,
}

impl BoundedBody {
    fn new(inner: Incoming, timeout: Duration) -> Self {
        BoundedBody { inner, deadline: Box::pin(tokio::time::sleep(timeout)), timeout, left: MAX_REQUEST_BODY }
    }
}

impl http_body::Body for BoundedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        use std::task::Poll;
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let len = frame.data_ref().map_or(0, |d| d.len() as u64);
                if len > self.left {
                    return Poll::Ready(Some(Err(format!("the body is over {MAX_REQUEST_BODY} bytes").into())));
                }
                self.left -= len;
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(other) => Poll::Ready(other.map(|r| r.map_err(Into::into))),
            Poll::Pending => {
                if self.deadline.as_mut().poll(cx).is_ready() {
                    let t = self.timeout;
                    return Poll::Ready(Some(Err(format!("the body did not arrive whole within {t:?}").into())));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// `nosniff` on every response, and [`DEFAULT_POLICY`] on one without a policy.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.entry(header::CONTENT_SECURITY_POLICY).or_insert(HeaderValue::from_static(DEFAULT_POLICY));
    response
}
