//! Memory held for peers: every accepted connection of every server in the
//! process has an account ([`Conn`]) of the calls it has in flight and the
//! bytes of their answers that the server holds because the peer has not
//! read them yet. A peer that asks and never reads (an HTTP/2 client that
//! grants no flow-control window, an HTTP/1 client that stops reading its
//! socket) would otherwise make the server run every call and keep every
//! answer: the controller was OOM-killed after ~13,000 unread GetCluster
//! streams.
//!
//! * Each call costs [`CALL_COST`] (the stream's state, the request, the
//!   task), and each answer the bytes the server holds for it: the answer is
//!   encoded as soon as it is ready and handed to the transport in slices of
//!   [`SLICE`], so what waits for the peer is counted here, exactly, and at
//!   most one slice of it sits in the transport's buffers.
//! * A connection whose account passes [`per_conn_budget`] is closed, and so
//!   is the heaviest connection in the process whenever all accounts together
//!   pass [`budget`] (64 MiB unless the binary sets it: [`set_budget`]).
//! * A connection that owes its peer an answer the peer has not taken for
//!   the server's stall timeout (the transport has not asked for the next
//!   slice: no flow-control window, a full socket) is closed: a peer that
//!   stops reading is closed, not buffered for.
//! * A gRPC connection with no call in flight for its idle timeout is closed,
//!   whether or not it answers pings (a connection that only sent the
//!   preface held a descriptor for good).
//!
//! A closed connection drops its streams, and with them their answers and
//! accounts. Closes are logged (the first, then one in each interval with
//! the count) and counted in `ringleader.connections.closed{server, reason}`.
//! [`Totals`] gives the process's figures.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use atomic_waker::AtomicWaker;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use opentelemetry::global;
use opentelemetry::metrics::Counter;
use tracing::warn;

/// What one call in flight is counted at besides its answer's bytes: the
/// HTTP/2 stream, the decoded request and the task serving it (measured
/// before these limits: ~6 KiB per unread Health/Check stream, ~27 KiB per
/// GetCluster). With [`DEFAULT_BUDGET`] it admits 4,096 calls in flight.
pub const CALL_COST: usize = 16 << 10;

/// The largest piece of an answer handed to the transport at once (HTTP/2's
/// default frame size): the rest waits here, counted.
pub const SLICE: usize = 16 << 10;

/// The default of [`budget`]: 64 MiB for all connections of the process.
pub const DEFAULT_BUDGET: usize = 64 << 20;

static BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_BUDGET);
static QUEUED: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Most bytes (answers and calls in flight) held for all peers of this
/// process together; past it, the heaviest connection is closed.
pub fn budget() -> usize {
    BUDGET.load(Ordering::Relaxed)
}

/// Set [`budget`] (at least 1 MiB); the binaries take it from their
/// configuration (`max_unread_mib`).
pub fn set_budget(bytes: usize) {
    BUDGET.store(bytes.max(1 << 20), Ordering::Relaxed);
}

/// Most one connection may hold: a quarter of [`budget`], at least 4 MiB
/// (one large answer, such as a page of records, fits).
pub fn per_conn_budget() -> usize {
    (budget() / 4).max(4 << 20)
}

/// The process's figures, for metrics and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    /// Bytes held for peers now (answers not yet taken, and [`CALL_COST`] per call).
    pub queued: usize,
    /// The most [`Totals::queued`] has been.
    pub peak: usize,
    /// Calls in flight on accounted connections.
    pub calls: usize,
    /// Accounted connections open.
    pub connections: usize,
}

/// The figures now.
pub fn totals() -> Totals {
    let connections = registry().lock().map(|r| r.conns.len()).unwrap_or(0);
    Totals {
        queued: QUEUED.load(Ordering::Relaxed),
        peak: PEAK.load(Ordering::Relaxed),
        calls: CALLS.load(Ordering::Relaxed),
        connections,
    }
}

/// Why a connection was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// Its peer left an answer untaken for the stall timeout.
    Stalled,
    /// It held more than [`per_conn_budget`].
    OverConnBudget,
    /// It was the heaviest when the process passed [`budget`].
    OverBudget,
    /// No call in flight for the idle timeout.
    Idle,
    /// Its place was given to a new connection when the server was full.
    Evicted,
}

impl CloseReason {
    fn label(self) -> &'static str {
        match self {
            CloseReason::Stalled => "stalled",
            CloseReason::OverConnBudget => "over_connection_budget",
            CloseReason::OverBudget => "over_budget",
            CloseReason::Idle => "idle",
            CloseReason::Evicted => "evicted",
        }
    }
}

fn closed_counter() -> &'static Counter<u64> {
    static C: OnceLock<Counter<u64>> = OnceLock::new();
    C.get_or_init(|| {
        global::meter(crate::meter::NODE_SCOPE)
            .u64_counter("ringleader.connections.closed")
            .with_unit("{connection}")
            .with_description("Connections the server closed: stalled readers, accounts over budget, idle, evicted")
            .build()
    })
}

/// Milliseconds since the process's first account, plus one (0 means "never").
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// The account of one accepted connection.
#[derive(Debug)]
pub struct Conn {
    server: &'static str,
    peer: Option<SocketAddr>,
    key: Option<(SocketAddr, SocketAddr)>,
    /// A gRPC connection is closed after this long with no call; none for HTTP/1
    /// (its request-head timeout closes a connection between requests).
    call_idle: Option<Duration>,
    stall: Duration,
    calls: AtomicUsize,
    queued: AtomicUsize,
    last_call_ms: AtomicU64,
    owed: Mutex<Vec<Weak<Owed>>>,
    killed: AtomicBool,
    read_waker: AtomicWaker,
    write_waker: AtomicWaker,
}

impl Conn {
    /// A new account, registered for the sweeps (and, with both addresses,
    /// for [`UnreadService`] to find by them).
    pub(crate) fn register(
        server: &'static str,
        local: Option<SocketAddr>,
        peer: Option<SocketAddr>,
        call_idle: Option<Duration>,
        stall: Duration,
    ) -> Arc<Conn> {
        let key = local.zip(peer);
        let conn = Arc::new(Conn {
            server,
            peer,
            key,
            call_idle,
            stall,
            calls: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
            last_call_ms: AtomicU64::new(now_ms()),
            owed: Mutex::new(Vec::new()),
            killed: AtomicBool::new(false),
            read_waker: AtomicWaker::new(),
            write_waker: AtomicWaker::new(),
        });
        let mut r = registry().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        r.conns.push(Arc::downgrade(&conn));
        if let Some(k) = key {
            r.by_addr.insert(k, Arc::downgrade(&conn));
        }
        drop(r);
        start_sweeper();
        conn
    }

    /// The server this connection came to.
    pub fn server(&self) -> &'static str {
        self.server
    }

    /// Whether it has been closed (or is being closed).
    pub fn is_closed(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }

    /// Calls in flight.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    /// Bytes held for it now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Close it: its transport fails its next read or write (both are woken).
    pub fn close(&self, reason: CloseReason) {
        if self.killed.swap(true, Ordering::AcqRel) {
            return;
        }
        closed_counter().add(1, &[crate::meter::kv("server", self.server), crate::meter::kv("reason", reason.label())]);
        crate::warn_throttled!(
            CLOSE_LOG,
            server = self.server, peer = ?self.peer, reason = reason.label(),
            calls = self.calls(), held_bytes = self.queued(),
            "closed a connection (at most one line in 10 s; `suppressed` counts those not logged since)"
        );
        self.read_waker.wake();
        self.write_waker.wake();
    }

    /// For the transport: `Err` once closed; registers `cx` to be woken by a close.
    pub(crate) fn poll_closed_read(&self, cx: &Context<'_>) -> bool {
        self.read_waker.register(cx.waker());
        self.is_closed()
    }

    /// As [`Conn::poll_closed_read`], for writes.
    pub(crate) fn poll_closed_write(&self, cx: &Context<'_>) -> bool {
        self.write_waker.register(cx.waker());
        self.is_closed()
    }

    /// Whether it has no call in flight and has had none for its idle timeout.
    fn idle_since(&self, now: u64) -> Option<u64> {
        (self.calls() == 0).then(|| now.saturating_sub(self.last_call_ms.load(Ordering::Relaxed)))
    }

    /// How long its oldest untaken answer has waited for the peer (ms; 0 if none waits).
    fn owed_for(&self, now: u64) -> u64 {
        let mut owed = self.owed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        owed.retain(|o| o.strong_count() > 0);
        owed.iter()
            .filter_map(Weak::upgrade)
            .map(|o| o.since.load(Ordering::Relaxed))
            .filter(|since| *since != 0)
            .map(|since| now.saturating_sub(since))
            .max()
            .unwrap_or(0)
    }

    /// Whether an answer has waited for its peer longer than the stall timeout.
    fn stalled(&self, now: u64) -> bool {
        self.owed_for(now) > self.stall.as_millis() as u64
    }

    fn add(&self, bytes: usize) {
        self.queued.fetch_add(bytes, Ordering::Relaxed);
        let total = QUEUED.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(total, Ordering::Relaxed);
    }

    fn sub(&self, bytes: usize) {
        self.queued.fetch_sub(bytes, Ordering::Relaxed);
        QUEUED.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Count a new call; `Err` with the reason if it may not run: the
    /// connection is closed (or just closed for going over its share).
    fn admit(self: &Arc<Self>) -> Result<Call, NotAdmitted> {
        if self.is_closed() {
            return Err(NotAdmitted::Closing);
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        self.last_call_ms.store(now_ms(), Ordering::Relaxed);
        self.add(CALL_COST);
        let call = Call { conn: self.clone(), bytes: 0, owed: Arc::new(Owed { since: AtomicU64::new(0) }) };
        if self.queued() > per_conn_budget() {
            self.close(CloseReason::OverConnBudget);
            return Err(NotAdmitted::OverConnBudget { kib: self.queued() >> 10, max_kib: per_conn_budget() >> 10 });
        }
        if QUEUED.load(Ordering::Relaxed) > budget() {
            shed();
            if self.is_closed() {
                return Err(NotAdmitted::OverBudget { max_mib: budget() >> 20 });
            }
        }
        self.owed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(Arc::downgrade(&call.owed));
        Ok(call)
    }
}

/// Why a call is not admitted on its connection (the refusal's text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
enum NotAdmitted {
    /// The connection is closing already.
    #[error("this connection is being closed")]
    Closing,
    /// This connection went over its share, and is closed for it.
    #[error("this connection holds {kib} KiB of answers its peer has not read (at most {max_kib} KiB per connection)")]
    OverConnBudget { kib: usize, max_kib: usize },
    /// The server went over its budget, and this connection was shed.
    #[error("the server holds over {max_mib} MiB of unread answers")]
    OverBudget { max_mib: usize },
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(k) = self.key {
            let mut r = registry().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if r.by_addr.get(&k).is_some_and(|w| w.strong_count() == 0) {
                r.by_addr.remove(&k);
            }
        }
    }
}

/// Closes are logged at most once in 10 s: an attack makes thousands.
static CLOSE_LOG: crate::logs::Throttle = crate::logs::Throttle::new(crate::logs::WARN_INTERVAL);

/// When an answer started waiting for its peer to take it (0: not waiting).
#[derive(Debug)]
struct Owed {
    since: AtomicU64,
}

/// One call in flight: releases its cost and its held bytes when dropped.
#[derive(Debug)]
struct Call {
    conn: Arc<Conn>,
    bytes: usize,
    owed: Arc<Owed>,
}

impl Call {
    /// Count `bytes` more held for the peer, closing its connection (or the
    /// heaviest) if that goes over a budget.
    fn hold(&mut self, bytes: usize) {
        self.bytes += bytes;
        self.conn.add(bytes);
        // One answer alone may be large (a page of records); many on one connection may not.
        if self.conn.calls() > 1 && self.conn.queued() > per_conn_budget() {
            self.conn.close(CloseReason::OverConnBudget);
        } else if QUEUED.load(Ordering::Relaxed) > budget() {
            shed();
        }
    }

    fn release(&mut self, bytes: usize) {
        let b = bytes.min(self.bytes);
        self.bytes -= b;
        self.conn.sub(b);
    }

    fn owe(&self, yes: bool) {
        self.owed.since.store(if yes { now_ms() } else { 0 }, Ordering::Relaxed);
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.conn.sub(self.bytes + CALL_COST);
        self.conn.calls.fetch_sub(1, Ordering::Relaxed);
        CALLS.fetch_sub(1, Ordering::Relaxed);
        self.conn.last_call_ms.store(now_ms(), Ordering::Relaxed);
    }
}

struct Registry {
    conns: Vec<Weak<Conn>>,
    by_addr: HashMap<(SocketAddr, SocketAddr), Weak<Conn>>,
}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Registry { conns: Vec::new(), by_addr: HashMap::new() }))
}

/// The open accounts (dropping the registry's dead entries).
fn live() -> Vec<Arc<Conn>> {
    let mut r = registry().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    r.conns.retain(|w| w.strong_count() > 0);
    r.conns.iter().filter_map(Weak::upgrade).collect()
}

/// The account of the connection between `local` and `peer`, if one is open.
fn find(local: SocketAddr, peer: SocketAddr) -> Option<Arc<Conn>> {
    registry().lock().ok()?.by_addr.get(&(local, peer)).and_then(Weak::upgrade)
}

/// Over [`budget`]: close connections not yet closed until what the rest
/// hold fits: first those whose peer has left an answer untaken for a
/// second or more, heaviest first, then the others, heaviest first (a
/// client that is reading a large answer goes last).
fn shed() {
    let now = now_ms();
    let mut conns: Vec<(bool, usize, Arc<Conn>)> =
        live().into_iter().filter(|c| !c.is_closed()).map(|c| (c.owed_for(now) >= 1_000, c.queued(), c)).collect();
    conns.sort_by_key(|(slow, queued, _)| std::cmp::Reverse((*slow, *queued)));
    // What the connections already closing hold is on its way out.
    let mut held: usize = conns.iter().map(|(_, q, _)| q).sum();
    let conns = conns.into_iter().map(|(_, _, c)| c);
    for c in conns {
        if held <= budget() {
            break;
        }
        held -= c.queued();
        c.close(CloseReason::OverBudget);
    }
}

/// Make room for a new connection to `server` (or any server when `None`):
/// close the one that most deserves it, a stalled reader first, then the one
/// idle longest (no call in flight). `true` if one was closed.
pub(crate) fn evict_for(server: Option<&'static str>) -> bool {
    let now = now_ms();
    let conns: Vec<Arc<Conn>> =
        live().into_iter().filter(|c| !c.is_closed() && server.is_none_or(|s| c.server == s)).collect();
    if let Some(c) = conns.iter().find(|c| c.stalled(now)) {
        c.close(CloseReason::Stalled);
        return true;
    }
    if let Some(c) = conns.iter().filter_map(|c| c.idle_since(now).map(|i| (i, c))).max_by_key(|(i, _)| *i) {
        c.1.close(CloseReason::Evicted);
        return true;
    }
    false
}

/// The sweeps: on a thread of its own (not a runtime's task, which would end
/// with its runtime), every 100 ms, close stalled readers and idle gRPC
/// connections.
fn start_sweeper() {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new().name("unread-sweeper".into()).spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(100));
            sweep();
        }
    });
    if let Err(e) = spawned {
        STARTED.store(false, Ordering::Release);
        warn!(error = %e, "cannot start the connection sweeper");
    }
}

fn sweep() {
    let now = now_ms();
    for c in live() {
        if c.is_closed() {
            continue;
        }
        if c.stalled(now) {
            c.close(CloseReason::Stalled);
        } else if let (Some(limit), Some(idle)) = (c.call_idle, c.idle_since(now))
            && idle > limit.as_millis() as u64
        {
            c.close(CloseReason::Idle);
        }
    }
    if QUEUED.load(Ordering::Relaxed) > budget() {
        shed();
    }
}

/// The connection a request came on, from what the server put in its
/// extensions (plain TCP or TLS).
fn conn_of<B>(req: &http::Request<B>) -> Option<Arc<Conn>> {
    use tonic::transport::server::TcpConnectInfo;
    let ext = req.extensions();
    let info = ext.get::<TcpConnectInfo>().cloned().or_else(|| {
        ext.get::<tonic::transport::server::TlsConnectInfo<TcpConnectInfo>>().map(|t| t.get_ref().clone())
    })?;
    find(info.local_addr()?, info.remote_addr()?)
}

/// A refusal of a call the account does not admit, in the server's protocol.
pub type Refusal<B> = fn(String) -> http::Response<B>;

/// The tower layer that counts every call and answer against its
/// connection's account; `refuse` answers a call that is not admitted.
#[derive(Debug)]
pub struct UnreadLayer<B> {
    refuse: Refusal<B>,
}

impl<B> Clone for UnreadLayer<B> {
    fn clone(&self) -> Self {
        UnreadLayer { refuse: self.refuse }
    }
}

impl UnreadLayer<tonic::body::Body> {
    /// For a tonic server: a call not admitted gets `RESOURCE_EXHAUSTED`.
    pub fn grpc() -> Self {
        UnreadLayer { refuse: |m| tonic::Status::resource_exhausted(m).into_http() }
    }
}

impl<S, B> tower::Layer<S> for UnreadLayer<B> {
    type Service = UnreadService<S, B>;

    fn layer(&self, inner: S) -> Self::Service {
        UnreadService { inner, conn: None, refuse: self.refuse }
    }
}

/// See [`UnreadLayer`].
#[derive(Debug)]
pub struct UnreadService<S, B> {
    inner: S,
    conn: Option<Arc<Conn>>,
    refuse: Refusal<B>,
}

impl<S: Clone, B> Clone for UnreadService<S, B> {
    fn clone(&self) -> Self {
        UnreadService { inner: self.inner.clone(), conn: self.conn.clone(), refuse: self.refuse }
    }
}

impl<S, B> UnreadService<S, B> {
    /// For one connection whose account is known (an HTTP/1 connection served
    /// by hand).
    pub(crate) fn for_conn(inner: S, conn: Arc<Conn>, refuse: Refusal<B>) -> Self {
        UnreadService { inner, conn: Some(conn), refuse }
    }
}

impl<S, ReqB, B> tower::Service<http::Request<ReqB>> for UnreadService<S, B>
where
    S: tower::Service<http::Request<ReqB>, Response = http::Response<B>>,
    B: Body<Data = Bytes> + Unpin,
{
    type Response = http::Response<Counted<B>>;
    type Error = S::Error;
    type Future = Counting<S::Future, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqB>) -> Self::Future {
        let Some(conn) = self.conn.clone().or_else(|| conn_of(&req)) else {
            return Counting { state: State::Running(Box::pin(self.inner.call(req)), None) };
        };
        match conn.admit() {
            Ok(call) => Counting { state: State::Running(Box::pin(self.inner.call(req)), Some(call)) },
            Err(reason) => Counting { state: State::Refused(Some((self.refuse)(reason.to_string()))) },
        }
    }
}

/// The future of an accounted call: on its answer, takes the first frame of
/// the body at once, so that what is held for the peer is counted from the
/// start.
#[derive(Debug)]
pub struct Counting<F, B> {
    state: State<F, B>,
}

#[derive(Debug)]
enum State<F, B> {
    // Boxed: the future stays put while `Counting` itself moves freely (it is `Unpin`).
    Running(Pin<Box<F>>, Option<Call>),
    Refused(Option<http::Response<B>>),
    Done,
}

impl<F, B, E> std::future::Future for Counting<F, B>
where
    F: std::future::Future<Output = Result<http::Response<B>, E>>,
    B: Body<Data = Bytes> + Unpin,
{
    type Output = Result<http::Response<Counted<B>>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.state {
            State::Refused(r) => {
                let r = r.take().expect("polled after completion");
                self.state = State::Done;
                Poll::Ready(Ok(r.map(|b| Counted::new(b, None))))
            }
            State::Running(fut, call) => {
                let out = std::task::ready!(fut.as_mut().poll(cx));
                let call = call.take();
                self.state = State::Done;
                Poll::Ready(out.map(|res| {
                    res.map(|b| {
                        let mut body = Counted::new(b, call);
                        body.take_first(cx);
                        body
                    })
                }))
            }
            State::Done => panic!("polled after completion"),
        }
    }
}

/// An answer's body under its call's account: held frames are counted, and
/// handed out in slices of at most [`SLICE`].
#[derive(Debug)]
pub struct Counted<B> {
    inner: B,
    held: Option<Frame<Bytes>>,
    call: Option<Call>,
}

impl<B: Body<Data = Bytes> + Unpin> Counted<B> {
    fn new(inner: B, call: Option<Call>) -> Self {
        let c = Counted { inner, held: None, call };
        if let Some(call) = &c.call {
            // Until the transport first asks for it, the answer is owed.
            call.owe(true);
        }
        c
    }

    /// Take the body's first frame now if it is ready, so it is counted.
    fn take_first(&mut self, cx: &mut Context<'_>) {
        if self.call.is_none() || self.inner.is_end_stream() {
            return;
        }
        if let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut self.inner).poll_frame(cx) {
            self.hold(frame);
        }
        // An error or the end is met again on the transport's first poll
        // (`poll_frame` after an error or the end returns the same).
    }

    fn hold(&mut self, frame: Frame<Bytes>) {
        if let (Some(call), Some(data)) = (&mut self.call, frame.data_ref()) {
            call.hold(data.len());
        }
        self.held = Some(frame);
    }

    /// The next piece of the held frame: a slice of data, or the whole frame.
    fn next_held(&mut self) -> Option<Frame<Bytes>> {
        let frame = self.held.take()?;
        let frame = match frame.into_data() {
            Ok(mut data) => {
                let piece = if data.len() > SLICE { data.split_to(SLICE) } else { std::mem::take(&mut data) };
                if !data.is_empty() {
                    self.held = Some(Frame::data(data));
                }
                if let Some(call) = &mut self.call {
                    call.release(piece.len());
                }
                Frame::data(piece)
            }
            Err(other) => other,
        };
        Some(frame)
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Counted<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        if let Some(call) = &this.call {
            // The transport asks: whatever it was owed, it has taken.
            call.owe(false);
        }
        let frame = match this.next_held() {
            Some(f) => f,
            None => match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    this.hold(frame);
                    this.next_held().expect("just held")
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    // The answer is whole: the call is over.
                    this.call = None;
                    return Poll::Ready(None);
                }
            },
        };
        if let Some(call) = &this.call {
            call.owe(true);
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.held.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let held = self.held.as_ref().and_then(Frame::data_ref).map_or(0, |d| d.len() as u64);
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + held);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + held);
        }
        hint
    }
}
