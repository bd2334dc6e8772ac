//! Connection limits of a gRPC server (the node's and the controller's):
//! at most `max_connections` open at once (a connection beyond is closed as
//! soon as it is accepted, logged and counted), and a connection that sends
//! nothing for `idle_timeout` is closed. Live HTTP/2 clients are never idle
//! that long: the server pings every connection more often than that and a
//! live client answers (the links and the controller's agent channels also
//! ping on their own every 10 s).
//! Together with HTTP/2's own limits (concurrent streams per connection,
//! keep-alive timeouts: [`apply_http2`]) this bounds what idle or flooding
//! clients can hold: descriptors, buffers, memory.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use opentelemetry::global;
use opentelemetry::metrics::Counter;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::{Connected, TcpConnectInfo};
use tracing::warn;

/// Connection limits of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// A connection that sends nothing this long is closed.
    pub idle_timeout: Duration,
    /// Most concurrent HTTP/2 streams per connection.
    pub max_streams: u32,
}

impl ConnLimits {
    /// The defaults: 4,096 connections (a node of a 1,000-node cluster holds
    /// one per peer process and the controller's; the embedded cluster shares
    /// one per process), 60 s idle, 1,024 streams per connection.
    pub const DEFAULT: ConnLimits =
        ConnLimits { max_connections: 4_096, idle_timeout: Duration::from_secs(60), max_streams: 1_024 };
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits::DEFAULT
    }
}

/// HTTP/2 keep-alive: ping every 20 s (a third of the idle timeout if that
/// is shorter, so a live client's answers keep its connection from ever
/// looking idle), close a connection whose ping is not answered as long;
/// and the streams cap.
pub fn apply_http2(builder: tonic::transport::Server, limits: &ConnLimits) -> tonic::transport::Server {
    let ping = Duration::from_secs(20).min(limits.idle_timeout / 3);
    builder
        .tcp_nodelay(true)
        .max_concurrent_streams(Some(limits.max_streams))
        .http2_keepalive_interval(Some(ping))
        .http2_keepalive_timeout(Some(ping))
}

/// The connection counters: closed at accept (over the cap), closed idle.
fn counters() -> &'static [Counter<u64>; 2] {
    static C: std::sync::OnceLock<[Counter<u64>; 2]> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let meter = global::meter(crate::observe::NODE_SCOPE);
        let counter = |name: &'static str, description: &'static str| {
            meter.u64_counter(name).with_unit("{connection}").with_description(description).build()
        };
        [
            counter(
                "ringleader.connections.refused",
                "Connections closed at once because the server held max_connections, by server",
            ),
            counter(
                "ringleader.connections.idle_closed",
                "Connections closed because they sent nothing for idle_timeout, by server",
            ),
        ]
    })
}

fn refused_counter() -> &'static Counter<u64> {
    &counters()[0]
}

fn idle_counter() -> &'static Counter<u64> {
    &counters()[1]
}

/// The accepted connections of `listener` within `limits`, for
/// `serve_with_incoming`; `server` names it in logs and metrics.
pub fn incoming(
    listener: TcpListener,
    limits: ConnLimits,
    server: &'static str,
) -> impl Stream<Item = io::Result<Limited>> + Send + 'static {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let refused = Arc::new(AtomicU64::new(0));
    trim_after_closes(Arc::downgrade(&permits), limits.max_connections);
    let label = [crate::observe::kv("server", server)];
    tokio_stream::wrappers::TcpListenerStream::new(listener).filter_map(move |conn| {
        let stream = match conn {
            Ok(s) => s,
            // Accept errors (EMFILE, ...) are logged by hyper's accept loop and retried.
            Err(e) => return Some(Err(e)),
        };
        let _ = stream.set_nodelay(true);
        match permits.clone().try_acquire_owned() {
            Ok(permit) => Some(Ok(Limited::new(stream, permit, limits.idle_timeout, server))),
            Err(_) => {
                let n = refused.fetch_add(1, Ordering::Relaxed) + 1;
                refused_counter().add(1, &label);
                if n == 1 || n.is_power_of_two() {
                    warn!(
                        server, max_connections = limits.max_connections, refused = n,
                        peer = ?stream.peer_addr().ok(),
                        "connection limit reached: closing new connections until some close"
                    );
                }
                drop(stream);
                None
            }
        }
    })
}

/// Give freed memory back to the operating system after connections close:
/// glibc's allocator keeps what its per-thread arenas freed (a flood of
/// connections would leave the process at its high-water mark for good).
/// Every 10 s, if at least 64 connections closed since the last look,
/// `malloc_trim`. Ends with the listener.
fn trim_after_closes(permits: std::sync::Weak<Semaphore>, max: usize) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
    rt.spawn(async move {
        let mut last_open = 0usize;
        loop {
            tokio::time::sleep(Duration::from_secs(10)).await;
            let Some(p) = permits.upgrade() else { return };
            let open = max - p.available_permits();
            if last_open >= open + 64 {
                trim();
            }
            last_open = open;
        }
    });
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

/// An accepted connection holding its slot, closed when it stays silent.
#[derive(Debug)]
pub struct Limited {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    idle_timeout: Duration,
    idle: Pin<Box<tokio::time::Sleep>>,
    server: &'static str,
}

impl Limited {
    fn new(stream: TcpStream, permit: OwnedSemaphorePermit, idle_timeout: Duration, server: &'static str) -> Self {
        let idle = Box::pin(tokio::time::sleep(idle_timeout));
        Limited { stream, _permit: permit, idle_timeout, idle, server }
    }
}

impl Connected for Limited {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Limited {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                let deadline = tokio::time::Instant::now() + self.idle_timeout;
                self.idle.as_mut().reset(deadline);
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                if self.idle.as_mut().poll(cx).is_ready() {
                    idle_counter().add(1, &[crate::observe::kv("server", self.server)]);
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "idle connection closed")));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl AsyncWrite for Limited {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
