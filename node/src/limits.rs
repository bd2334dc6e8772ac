//! Connection limits of every server of the process (the node's and the
//! controller's gRPC servers, and the HTTP ports):
//!
//! * At most `max_connections` open at once on one server, and never more
//!   than the process's descriptors allow: all servers together accept at
//!   most [`descriptor_pool`] connections, the open-file limit less a
//!   quarter (at least 128) kept for everything else (outgoing links,
//!   files, the listeners). A server's cap is the smaller of the two. When a
//!   server (or the process) is full, a new connection takes the place of
//!   one that deserves it least, a stalled reader first, then the one with
//!   no call in flight for longest ([`crate::unread`]); only when there is
//!   none is the new connection closed as soon as it is accepted, logged and
//!   counted.
//! * A connection that sends nothing for `idle_timeout` is closed, and so is
//!   a gRPC connection with no call in flight that long, whether or not it
//!   answers the server's pings.
//! * What a connection holds in memory for a peer that does not read is
//!   counted and bounded ([`crate::unread`]).
//!
//! Together with HTTP/2's own limits (concurrent streams per connection,
//! keep-alive timeouts: [`apply_http2`]) this bounds what idle or flooding
//! clients can hold: descriptors, buffers, memory.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use opentelemetry::global;
use opentelemetry::metrics::Counter;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::{Connected, TcpConnectInfo};
use tracing::{info, warn};

use crate::unread::Conn;

/// Connection limits of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// A connection that sends nothing this long is closed.
    pub idle_timeout: Duration,
    /// Most concurrent HTTP/2 streams per connection.
    pub max_streams: u32,
    /// A connection whose peer leaves an answer untaken this long is closed
    /// ([`crate::unread`]).
    pub stall_timeout: Duration,
}

impl ConnLimits {
    /// The defaults: 4,096 connections (a node of a 1,000-node cluster holds
    /// one per peer process and the controller's; the embedded cluster shares
    /// one per process; never more than [`descriptor_pool`]), 60 s idle,
    /// 1,024 streams per connection, 20 s for a peer to take an answer.
    pub const DEFAULT: ConnLimits = ConnLimits {
        max_connections: 4_096,
        idle_timeout: Duration::from_secs(60),
        max_streams: 1_024,
        stall_timeout: Duration::from_secs(20),
    };
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits::DEFAULT
    }
}

/// A gRPC server with [`apply_http2`]'s settings and layer.
pub type Http2Server = tonic::transport::Server<
    tower::layer::util::Stack<crate::unread::UnreadLayer<tonic::body::Body>, tower::layer::util::Identity>,
>;

/// HTTP/2 keep-alive: ping every 20 s (a third of the idle timeout if that
/// is shorter), close a connection whose ping is not answered as long; the
/// streams cap; and the account of every call and unread answer
/// ([`crate::unread::UnreadLayer`]).
pub fn apply_http2(builder: tonic::transport::Server, limits: &ConnLimits) -> Http2Server {
    let ping = Duration::from_secs(20).min(limits.idle_timeout / 3);
    builder
        .tcp_nodelay(true)
        .max_concurrent_streams(Some(limits.max_streams))
        .http2_keepalive_interval(Some(ping))
        .http2_keepalive_timeout(Some(ping))
        .layer(crate::unread::UnreadLayer::grpc())
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

/// The accepted connections of a gRPC server's `listener` within `limits`,
/// for `serve_with_incoming`; `server` names it in logs and metrics. A
/// connection with no call in flight for `idle_timeout` is closed.
pub fn incoming(
    listener: TcpListener,
    limits: ConnLimits,
    server: &'static str,
) -> impl Stream<Item = io::Result<Limited>> + Send + 'static {
    incoming_with(listener, limits, server, TRIM_PERIOD, Some(limits.idle_timeout))
}

/// [`incoming`] for an HTTP/1 server: a connection between two requests is
/// closed by the server's own head timeout, not for having no call.
pub(crate) fn incoming_http(
    listener: TcpListener,
    limits: ConnLimits,
    server: &'static str,
) -> impl Stream<Item = io::Result<Limited>> + Send + 'static {
    incoming_with(listener, limits, server, TRIM_PERIOD, None)
}

/// How often the allocator is trimmed after connections closed.
const TRIM_PERIOD: Duration = Duration::from_secs(10);

/// Connections open on all servers of the process.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// How far a full server (or process) may go over its cap while the
/// connections it closed to make room finish closing.
const OVERDRAFT: usize = 64;

/// The connections all servers of this process may hold together: the
/// open-file limit (after raising the soft limit to the hard one, as Go
/// does) less a quarter of it, at least 128, kept for outgoing links,
/// files and listeners. Read once.
pub fn descriptor_pool() -> usize {
    static POOL: OnceLock<usize> = OnceLock::new();
    *POOL.get_or_init(|| match open_file_limit() {
        Some(limit) => {
            let pool = pool_for(limit);
            info!(open_file_limit = limit, connections = pool, "connections accepted by all servers at most");
            pool
        }
        None => usize::MAX,
    })
}

/// The connections a process with `limit` open files may accept: the limit
/// less a quarter of it, at least 128, kept for everything else (and at
/// least 16).
pub fn pool_for(limit: usize) -> usize {
    limit.saturating_sub((limit / 4).max(128)).max(16)
}

/// The soft open-file limit, raised to the hard one first.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn open_file_limit() -> Option<usize> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: setrlimit reads the struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    if lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    usize::try_from(lim.rlim_cur).ok()
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn open_file_limit() -> Option<usize> {
    None
}

/// A server's cap: its `max_connections`, or [`descriptor_pool`] if smaller
/// (logged when it is).
fn server_cap(limits: &ConnLimits, server: &'static str) -> usize {
    let pool = descriptor_pool();
    if limits.max_connections > pool {
        warn!(
            server,
            max_connections = limits.max_connections,
            open_file_limit_allows = pool,
            "max_connections is above what the open-file limit allows; holding at most the latter"
        );
    }
    limits.max_connections.min(pool)
}

/// Take a place under `cap` in `count`, making room by closing a connection
/// of `server` (any server when `None`) if full.
fn take_place(count: &AtomicUsize, cap: usize, server: Option<&'static str>) -> bool {
    let now = count.load(Ordering::Relaxed);
    if now >= cap && !(now < cap + OVERDRAFT && crate::unread::evict_for(server)) {
        return false;
    }
    count.fetch_add(1, Ordering::Relaxed);
    true
}

/// [`incoming`] with the trim period and the no-call idle timeout as parameters.
fn incoming_with(
    listener: TcpListener,
    limits: ConnLimits,
    server: &'static str,
    trim_period: Duration,
    call_idle: Option<Duration>,
) -> impl Stream<Item = io::Result<Limited>> + Send + 'static {
    let cap = server_cap(&limits, server);
    let here = Arc::new(AtomicUsize::new(0));
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
        let placed = take_place(&here, cap, Some(server));
        if placed && take_place(&OPEN, descriptor_pool(), None) {
            let slot = Slot { here: here.clone(), closes: closes.clone() };
            return Some(Ok(Limited::new(stream, slot, &limits, server, call_idle)));
        }
        if placed {
            here.fetch_sub(1, Ordering::Relaxed);
        }
        closes.fetch_add(1, Ordering::Relaxed);
        let n = refused.fetch_add(1, Ordering::Relaxed) + 1;
        refused_counter().add(1, &label);
        if n == 1 || n.is_power_of_two() {
            warn!(
                server, max_connections = cap, open_in_process = OPEN.load(Ordering::Relaxed),
                process_cap = descriptor_pool(), refused = n, peer = ?stream.peer_addr().ok(),
                "connection limit reached and no connection to close for it: closing new connections"
            );
        }
        drop(stream);
        None
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

/// A connection's place under its server's and the process's caps; gives
/// both back and counts the close when dropped.
#[derive(Debug)]
struct Slot {
    here: Arc<AtomicUsize>,
    closes: Arc<AtomicU64>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.here.fetch_sub(1, Ordering::Relaxed);
        OPEN.fetch_sub(1, Ordering::Relaxed);
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

/// An accepted connection holding its slot and its account, closed when it
/// stays silent or its account closes it.
#[derive(Debug)]
pub struct Limited {
    stream: TcpStream,
    _slot: Slot,
    conn: Arc<Conn>,
    idle_timeout: Duration,
    idle: Pin<Box<tokio::time::Sleep>>,
    server: &'static str,
}

impl Limited {
    fn new(
        stream: TcpStream,
        slot: Slot,
        limits: &ConnLimits,
        server: &'static str,
        call_idle: Option<Duration>,
    ) -> Self {
        let conn =
            Conn::register(server, stream.local_addr().ok(), stream.peer_addr().ok(), call_idle, limits.stall_timeout);
        let idle = Box::pin(tokio::time::sleep(limits.idle_timeout));
        Limited { stream, _slot: slot, conn, idle_timeout: limits.idle_timeout, idle, server }
    }

    /// This connection's account of calls and unread answers.
    pub fn account(&self) -> Arc<Conn> {
        self.conn.clone()
    }
}

fn closed_by_account() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, "connection closed by the server's limits")
}

impl Connected for Limited {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Limited {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.conn.poll_closed_read(cx) {
            return Poll::Ready(Err(closed_by_account()));
        }
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
        if self.conn.poll_closed_write(cx) {
            return Poll::Ready(Err(closed_by_account()));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.conn.poll_closed_write(cx) {
            return Poll::Ready(Err(closed_by_account()));
        }
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
        if self.conn.poll_closed_write(cx) {
            return Poll::Ready(Err(closed_by_account()));
        }
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
    /// refused over the cap, which never hold a slot; the first 64 over it
    /// take the places of idle ones instead) still makes the server
    /// trim its allocator. Before, the trim compared the connections open at
    /// each look and missed it: the idle-flood test's memory check then
    /// failed whenever the flood fell inside one 10 s window.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_between_two_looks_still_trims() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = ConnLimits { max_connections: 1, ..ConnLimits::DEFAULT };
        let mut accepted = Box::pin(incoming_with(listener, limits, "test", Duration::from_millis(100), None));
        let held = tokio::spawn(async move {
            let mut kept = Vec::new();
            while let Some(conn) = accepted.next().await {
                kept.extend(conn.ok());
            }
        });
        let before = TRIMS.load(Ordering::Relaxed);
        let flood: Vec<_> = tokio::task::spawn_blocking(move || {
            (0..200).filter_map(|_| std::net::TcpStream::connect(addr).ok()).collect::<Vec<_>>()
        })
        .await
        .unwrap();
        assert_eq!(flood.len(), 200);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while TRIMS.load(Ordering::Relaxed) == before {
            assert!(tokio::time::Instant::now() < deadline, "no trim after 135 refused connections");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        held.abort();
    }
}
