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
        let meter = global::meter(crate::meter::NODE_SCOPE);
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
    incoming_with(listener, limits, server, TRIM_PERIOD)
}

/// How often the allocator is trimmed after connections closed.
const TRIM_PERIOD: Duration = Duration::from_secs(10);

/// [`incoming`] with the trim period as a parameter, for the tests.
fn incoming_with(
    listener: TcpListener,
    limits: ConnLimits,
    server: &'static str,
    trim_period: Duration,
) -> impl Stream<Item = io::Result<Limited>> + Send + 'static {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let refused = Arc::new(AtomicU64::new(0));
    let closes = Arc::new(AtomicU64::new(0));
    trim_after_closes(Arc::downgrade(&closes), trim_period);
    let label = [crate::meter::kv("server", server)];
    tokio_stream::wrappers::TcpListenerStream::new(listener).filter_map(move |conn| {
        let stream = match conn {
            Ok(s) => s,
            // Accept errors (EMFILE, ...) are logged by hyper's accept loop and retried.
            Err(e) => return Some(Err(e)),
        };
        let _ = stream.set_nodelay(true);
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                let slot = Slot { _permit: permit, closes: closes.clone() };
                Some(Ok(Limited::new(stream, slot, limits.idle_timeout, server)))
            }
            Err(_) => {
                closes.fetch_add(1, Ordering::Relaxed);
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
/// Every 10 s, if at least 64 connections closed (or were refused) since the
/// last look, `malloc_trim`. It counts closes rather than comparing how many
/// are open at each look, which missed a flood that came and went between two
/// looks. Ends with the listener.
fn trim_after_closes(closes: std::sync::Weak<AtomicU64>, period: Duration) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
    rt.spawn(async move {
        let mut seen = 0u64;
        loop {
            tokio::time::sleep(period).await;
            let Some(c) = closes.upgrade() else { return };
            let now = c.load(Ordering::Relaxed);
            if now.saturating_sub(seen) >= 64 {
                trim();
            }
            seen = now;
        }
    });
}

/// A connection's place under the cap; counts the close when dropped.
#[derive(Debug)]
struct Slot {
    _permit: OwnedSemaphorePermit,
    closes: Arc<AtomicU64>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.closes.fetch_add(1, Ordering::Relaxed);
    }
}

/// How many times this process trimmed its allocator after closes.
static TRIMS: AtomicU64 = AtomicU64::new(0);

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    TRIMS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {
    TRIMS.fetch_add(1, Ordering::Relaxed);
}

/// An accepted connection holding its slot, closed when it stays silent.
#[derive(Debug)]
pub struct Limited {
    stream: TcpStream,
    _slot: Slot,
    idle_timeout: Duration,
    idle: Pin<Box<tokio::time::Sleep>>,
    server: &'static str,
}

impl Limited {
    fn new(stream: TcpStream, slot: Slot, idle_timeout: Duration, server: &'static str) -> Self {
        let idle = Box::pin(tokio::time::sleep(idle_timeout));
        Limited { stream, _slot: slot, idle_timeout, idle, server }
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
                    idle_counter().add(1, &[crate::meter::kv("server", self.server)]);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A flood that comes and goes between two looks (here: connections
    /// refused over the cap, which never hold a slot) still makes the server
    /// trim its allocator. Before, the trim compared the connections open at
    /// each look and missed it: the idle-flood test's memory check then
    /// failed whenever the flood fell inside one 10 s window.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_between_two_looks_still_trims() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = ConnLimits { max_connections: 1, ..ConnLimits::DEFAULT };
        let mut accepted = Box::pin(incoming_with(listener, limits, "test", Duration::from_millis(100)));
        let held = tokio::spawn(async move {
            let mut kept = Vec::new();
            while let Some(conn) = accepted.next().await {
                kept.extend(conn.ok());
            }
        });
        let before = TRIMS.load(Ordering::Relaxed);
        let flood: Vec<_> = tokio::task::spawn_blocking(move || {
            (0..100).filter_map(|_| std::net::TcpStream::connect(addr).ok()).collect::<Vec<_>>()
        })
        .await
        .unwrap();
        assert_eq!(flood.len(), 100);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while TRIMS.load(Ordering::Relaxed) == before {
            assert!(tokio::time::Instant::now() < deadline, "no trim after 99 refused connections");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        held.abort();
    }
}
