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
//!   connection that sends no next request.
//! * Every response carries `X-Content-Type-Options: nosniff`, and a
//!   `Content-Security-Policy` of [`DEFAULT_POLICY`] unless its route set one
//!   (the pages set theirs).

use std::time::Duration;

use axum::http::{HeaderValue, header};
use axum::response::Response;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_stream::StreamExt;
use tracing::{debug, warn};

use crate::limits::{self, ConnLimits};

/// Longest wait for a request's head (the idle timeout if shorter).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// waiting for it closes its connection.
    pub header_read_timeout: Duration,
}

impl HttpLimits {
    /// The HTTP port's limits in a process whose gRPC servers have `grpc`: a
    /// sixteenth of its connections (at least 4), the same idle timeout, and
    /// [`HEADER_READ_TIMEOUT`] or the idle timeout if shorter for a head.
    pub fn sharing(grpc: &ConnLimits) -> HttpLimits {
        HttpLimits {
            max_connections: (grpc.max_connections / 16).max(4),
            idle_timeout: grpc.idle_timeout,
            header_read_timeout: HEADER_READ_TIMEOUT.min(grpc.idle_timeout),
        }
    }
}

impl Default for HttpLimits {
    /// [`HttpLimits::sharing`] the default gRPC limits: 256 connections, 60 s idle, 10 s per head.
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
        ..ConnLimits::DEFAULT
    };
    let mut incoming = std::pin::pin!(limits::incoming(listener, conn_limits, server));
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
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            if let Err(e) = http1.serve_connection(TokioIo::new(conn), service).await {
                debug!(server, error = %e, "HTTP connection closed");
            }
        });
    }
}

/// `nosniff` on every response, and [`DEFAULT_POLICY`] on one without a policy.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.entry(header::CONTENT_SECURITY_POLICY).or_insert(HeaderValue::from_static(DEFAULT_POLICY));
    response
}
