//! Outgoing peer links: one persistent `Peer.Link` stream per destination
//! address, shared by every election that sends there; the streams of every
//! node of one process to one destination share one HTTP/2 connection
//! ([`ChannelPool`]), so sockets grow with servers, not with pairs of nodes.
//!
//! A send never blocks and never spawns per message: the envelope goes into
//! the link's unbounded channel, in the order the algorithm emitted it, and
//! the channel *is* the request stream of the gRPC call. The stream is opened
//! lazily on the first send; a task reads the reply stream (which only
//! carries rejections) and logs them. If the connection fails or the peer
//! ends the stream, the link forgets its channel so the next send
//! reconnects, and whatever was still queued is counted as lost (node-wide
//! and in the errors of each election it belonged to).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use ringleader_proto::v1::{self as pb, peer_client::PeerClient};
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tonic::transport::Endpoint;
use tracing::{debug, error, info, warn};

use super::faults::{Fate, FaultTable};
use ringleader_core::algo::MsgKind;

/// Most envelopes one outgoing link holds for a peer that does not take them.
pub const MAX_QUEUED: usize = 65_536;

/// How long a connection attempt to a peer may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// HTTP/2 keep-alive, so a peer that vanished without closing is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Node-wide link figures.
#[derive(Debug, Default)]
pub(crate) struct LinkStats {
    /// Envelopes that were queued on a link that then failed.
    pub(crate) lost: AtomicU64,
    /// Connections or streams that failed.
    pub(crate) failures: AtomicU64,
    /// Rejections peers sent back.
    pub(crate) rejections_received: AtomicU64,
}

/// Why a peer address is refused (each names the address).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PeerAddressError {
    /// Not a URL at all.
    #[error("`{address}` is not a valid URL: {source}")]
    NotUrl { address: String, source: tonic::transport::Error },
    /// Plain text to a node that speaks TLS.
    #[error("`{0}` is http:// but this node speaks TLS; use https://")]
    PlainToTls(String),
    /// TLS from a node without TLS settings.
    #[error("`{0}` is https:// but this node has no [tls] settings")]
    NoTls(String),
    /// Another scheme.
    #[error("`{0}` must be an http:// or https:// URL, e.g. http://10.0.0.7:7000")]
    Scheme(String),
    /// No host to dial.
    #[error("`{0}` has no host")]
    NoHost(String),
    /// The endpoint cannot be made.
    #[error(transparent)]
    Endpoint(#[from] crate::tls::EndpointError),
}

/// Parse and check a peer address; the endpoint carries the client settings
/// (TLS with `tls` for an `https://` address).
pub(crate) fn endpoint(address: &str, tls: Option<&crate::tls::Tls>) -> Result<Endpoint, PeerAddressError> {
    let ep = Endpoint::from_shared(address.to_string())
        .map_err(|source| PeerAddressError::NotUrl { address: address.to_string(), source })?;
    match (ep.uri().scheme_str(), tls) {
        (Some("http"), None) | (Some("https"), Some(_)) => {}
        (Some("http"), Some(_)) => return Err(PeerAddressError::PlainToTls(address.to_string())),
        (Some("https"), None) => return Err(PeerAddressError::NoTls(address.to_string())),
        _ => return Err(PeerAddressError::Scheme(address.to_string())),
    }
    if ep.uri().host().is_none_or(str::is_empty) {
        return Err(PeerAddressError::NoHost(address.to_string()));
    }
    let ep = crate::tls::endpoint(address, tls)?;
    Ok(ep
        .tcp_nodelay(true)
        .connect_timeout(CONNECT_TIMEOUT)
        .http2_keep_alive_interval(KEEP_ALIVE)
        .keep_alive_timeout(KEEP_ALIVE)
        .keep_alive_while_idle(true)
        // One connection carries the streams of every local node to that peer.
        .initial_connection_window_size(4 << 20))
}

/// One HTTP/2 connection (a lazily connected, self-reconnecting tonic
/// `Channel`) per destination address, shared by every node of a process
/// that holds the same pool: the embedded cluster gives all its nodes one
/// ([`super::NodeConfig::channels`]), so n local nodes of a complete network
/// open n connections, not n(n − 1). Each link is its own stream on it, so
/// per-link FIFO order is kept.
#[derive(Debug, Default)]
pub struct ChannelPool(Mutex<HashMap<String, tonic::transport::Channel>>);

impl ChannelPool {
    /// The shared connection to `address` (made from `endpoint` on first use).
    fn channel(&self, address: &str, endpoint: &Endpoint) -> tonic::transport::Channel {
        lock(&self.0).entry(address.to_string()).or_insert_with(|| endpoint.connect_lazy()).clone()
    }

    /// Connections made so far.
    pub fn len(&self) -> usize {
        lock(&self.0).len()
    }

    /// None made yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A pool shared by the nodes given the same one; compared by identity.
#[derive(Clone, Debug, Default)]
pub struct SharedChannels(pub Arc<ChannelPool>);

impl PartialEq for SharedChannels {
    fn eq(&self, other: &SharedChannels) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedChannels {}

/// Every outgoing link of this node, by destination address.
#[derive(Debug)]
pub(crate) struct Links {
    map: Mutex<HashMap<String, Arc<Link>>>,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    pool: SharedChannels,
    stats: LinkStats,
    closed: AtomicBool,
    table: Weak<dyn LossReport>,
    /// Presents this cluster's peer token on every link.
    bearer: crate::auth::Bearer,
}

impl Links {
    pub(crate) fn new(
        table: Weak<dyn LossReport>,
        peer_token: Option<crate::auth::Secret>,
        pool: SharedChannels,
    ) -> Self {
        let bearer = crate::auth::Bearer(peer_token);
        let closed = AtomicBool::new(false);
        Links {
            map: Mutex::new(HashMap::new()),
            shared: Arc::new(Shared { pool, stats: LinkStats::default(), closed, table, bearer }),
        }
    }

    /// The link to `address` (created, not yet connected, on first use).
    pub(crate) fn get(&self, address: &str, endpoint: Endpoint) -> Arc<Link> {
        let mut map = lock(&self.map);
        if let Some(l) = map.get(address) {
            return l.clone();
        }
        let link = Arc::new(Link {
            address: address.to_string(),
            endpoint,
            queued: 0.into(),
            state: Mutex::new(LinkState { tx: None, generation: 0 }),
            delayed: Mutex::new(Delayed::default()),
            shared: self.shared.clone(),
        });
        map.insert(address.to_string(), link.clone());
        link
    }

    /// Node-wide link figures.
    pub(crate) fn stats(&self) -> &LinkStats {
        &self.shared.stats
    }

    /// End every outgoing stream (after sending what is queued) and refuse new ones.
    pub(crate) fn close(&self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        for link in lock(&self.map).values() {
            lock(&link.state).tx = None;
        }
    }
}

/// One directed link to a peer process.
#[derive(Debug)]
pub(crate) struct Link {
    address: String,
    endpoint: Endpoint,
    /// Envelopes in the link's queue, not yet taken by the stream.
    queued: std::sync::atomic::AtomicUsize,
    state: Mutex<LinkState>,
    /// Messages an injected delay holds back, in FIFO order.
    delayed: Mutex<Delayed>,
    shared: Arc<Shared>,
}

/// The delay queue of a link with a delay fault.
#[derive(Debug, Default)]
struct Delayed {
    /// Feeds the task that releases delayed messages in order.
    tx: Option<mpsc::UnboundedSender<(tokio::time::Instant, pb::Envelope)>>,
    /// Release time of the last message queued (FIFO: later ones wait for it).
    last: Option<tokio::time::Instant>,
}

#[derive(Debug)]
struct LinkState {
    /// Feeds the current stream; `None` until the first send or after a failure.
    tx: Option<mpsc::UnboundedSender<pb::Envelope>>,
    /// Bumped for each stream, so a dying stream only clears its own sender.
    generation: u64,
}

impl Link {
    /// Send `env`, a message of `kind`, as the sending election's `faults`
    /// say (its own and its node's: [`FaultTable::fate`]; dropped,
    /// delayed, duplicated or at once). Never blocks. Says how many copies
    /// are on their way (none when dropped; two when duplicated) and how many
    /// were lost at once (the link's queue full): the caller, which may hold
    /// its election's lock, records that loss itself.
    pub(crate) fn send(self: &Arc<Self>, env: pb::Envelope, kind: MsgKind, faults: &FaultTable) -> Sent {
        match faults.fate(&self.address, kind) {
            Fate::Drop => Sent::default(),
            Fate::Send { copies, delay, reorder } => {
                let now = tokio::time::Instant::now();
                let mut d = lock(&self.delayed);
                let behind = d.last.is_some_and(|t| t > now);
                if delay.is_zero() && (!behind || reorder) {
                    drop(d);
                    let mut sent = Sent::default();
                    for _ in 1..copies {
                        sent.add(self.enqueue(env.clone(), false));
                    }
                    sent.add(self.enqueue(env, false));
                    return sent;
                }
                let Ok(rt) = tokio::runtime::Handle::try_current() else {
                    self.shared.stats.lost.fetch_add(1, Ordering::Relaxed);
                    return Sent { on_way: 0, lost: copies };
                };
                let mut at = now + delay;
                if reorder {
                    // Overtaking allowed: its own timer, outside the FIFO queue.
                    drop(d);
                    let link = self.clone();
                    rt.spawn(async move {
                        tokio::time::sleep_until(at).await;
                        for _ in 1..copies {
                            link.enqueue(env.clone(), true);
                        }
                        link.enqueue(env, true);
                    });
                    return Sent { on_way: copies, lost: 0 };
                }
                at = at.max(d.last.unwrap_or(at));
                d.last = Some(at);
                let tx = d.tx.get_or_insert_with(|| {
                    let (tx, mut rx) = mpsc::unbounded_channel::<(tokio::time::Instant, pb::Envelope)>();
                    let link = Arc::downgrade(self);
                    rt.spawn(async move {
                        while let Some((at, env)) = rx.recv().await {
                            tokio::time::sleep_until(at).await;
                            let Some(link) = link.upgrade() else { return };
                            link.enqueue(env, true);
                        }
                    });
                    tx
                });
                for _ in 0..copies {
                    let _ = tx.send((at, env.clone()));
                }
                Sent { on_way: copies, lost: 0 }
            }
        }
    }

    /// Queue `env` on this link, opening the stream if there is none. Never
    /// blocks; a link whose peer does not take its messages holds at most
    /// [`MAX_QUEUED`] of them, and loses (and counts) the rest, so a dead or
    /// slow peer costs bounded memory and never stalls the other links.
    /// Returns whether it was queued; a loss is told to its election when
    /// `report` (a caller holding the election's lock reports it itself).
    fn enqueue(self: &Arc<Self>, env: pb::Envelope, report: bool) -> bool {
        if self.queued.fetch_add(1, Ordering::Relaxed) >= MAX_QUEUED {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            let lost = self.shared.stats.lost.fetch_add(1, Ordering::Relaxed) + 1;
            if lost.is_power_of_two() {
                warn!(peer = %self.address, queued = MAX_QUEUED, lost, "link queue full: the peer is not taking messages; dropping");
            }
            if report && let Some(t) = self.shared.table.upgrade() {
                t.lost(&env.election_id, self.full());
            }
            return false;
        }
        let mut st = lock(&self.state);
        let env = match &st.tx {
            Some(tx) => match tx.send(env) {
                Ok(()) => return true,
                // The stream ended under us: reconnect below.
                Err(mpsc::error::SendError(env)) => env,
            },
            None => env,
        };
        if self.shared.closed.load(Ordering::SeqCst) {
            debug!(peer = %self.address, "node is shutting down; message not sent");
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            error!(peer = %self.address, "no tokio runtime to open a link on; message lost");
            self.shared.stats.lost.fetch_add(1, Ordering::Relaxed);
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return false;
        };
        let (tx, rx) = mpsc::unbounded_channel();
        // The receiver is alive, so this cannot fail.
        let _ = tx.send(env);
        st.tx = Some(tx);
        st.generation += 1;
        let generation = st.generation;
        drop(st);
        rt.spawn(self.clone().run(rx, generation));
        true
    }

    /// What a message lost to this link's full queue is recorded as.
    pub(crate) fn full(&self) -> String {
        format!("link to {} full ({MAX_QUEUED} queued): a message was lost", self.address)
    }

    /// Forget the stream of `generation`, if it is still the current one.
    fn forget(&self, generation: u64) {
        let mut st = lock(&self.state);
        if st.generation == generation {
            st.tx = None;
        }
    }

    /// Connect, run the stream, read the rejections until the stream ends.
    async fn run(self: Arc<Self>, rx: mpsc::UnboundedReceiver<pb::Envelope>, generation: u64) {
        let dead = Arc::new(AtomicBool::new(false));
        let outgoing = Outgoing { rx, seq: 0, dead: dead.clone(), link: self.clone() };
        // Connects on first use (a failure to connect comes back as the call's status below).
        let channel = self.shared.pool.0.channel(&self.address, &self.endpoint);
        let mut replies = match PeerClient::with_interceptor(channel, self.shared.bearer.clone()).link(outgoing).await {
            Ok(r) => {
                debug!(peer = %self.address, "link connected");
                r.into_inner()
            }
            Err(status) => {
                // A connection that could not be made shows here too, its cause in the source chain.
                let cause = std::error::Error::source(&status).map(|e| DisplayChain(e).to_string()).unwrap_or_default();
                error!(
                    peer = %self.address, code = ?status.code(), message = status.message(), cause = %cause,
                    "cannot open the link to the peer"
                );
                self.shared.stats.failures.fetch_add(1, Ordering::Relaxed);
                self.forget(generation);
                return;
            }
        };
        // Envelopes to an election the peer no longer runs are the normal end of every
        // election (heartbeats cross the aborts): counted, logged once per connection.
        let mut unknown = 0u64;
        loop {
            match replies.message().await {
                Ok(Some(pb::LinkReply { kind: Some(pb::link_reply::Kind::Reject(r)) })) => {
                    self.shared.stats.rejections_received.fetch_add(1, Ordering::Relaxed);
                    let code = tonic::Code::from_i32(r.code);
                    if code == tonic::Code::NotFound {
                        unknown += 1;
                        if unknown == 1 {
                            info!(peer = %self.address, election = %r.election_id, message = %r.message,
                                "peer no longer runs an election (further ones on this link at debug level)");
                        } else {
                            debug!(peer = %self.address, election = %r.election_id, "peer no longer runs the election");
                        }
                        continue;
                    }
                    warn!(
                        peer = %self.address, seq = r.seq, election = %r.election_id,
                        code = ?code, message = %r.message,
                        "peer rejected an envelope"
                    );
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    if self.shared.closed.load(Ordering::SeqCst) {
                        debug!(peer = %self.address, "link closed");
                    } else {
                        info!(peer = %self.address, "peer closed the link; the next message reconnects");
                    }
                    break;
                }
                Err(status) => {
                    self.shared.stats.failures.fetch_add(1, Ordering::Relaxed);
                    error!(
                        peer = %self.address, code = ?status.code(), message = status.message(),
                        "link failed; the next message reconnects"
                    );
                    break;
                }
            }
        }
        dead.store(true, Ordering::SeqCst);
        // Dropping the sender also wakes the request stream, which then ends.
        self.forget(generation);
    }
}

/// The request stream of one `Peer.Link` call: the link's channel, numbered.
/// Dropping it counts whatever was still queued as lost.
struct Outgoing {
    rx: mpsc::UnboundedReceiver<pb::Envelope>,
    seq: u64,
    dead: Arc<AtomicBool>,
    link: Arc<Link>,
}

impl Stream for Outgoing {
    type Item = pb::Envelope;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<pb::Envelope>> {
        if self.dead.load(Ordering::Relaxed) {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(mut env)) => {
                self.link.queued.fetch_sub(1, Ordering::Relaxed);
                self.seq += 1;
                env.seq = self.seq;
                Poll::Ready(Some(env))
            }
            other => other,
        }
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        self.rx.close();
        let mut lost: Vec<(String, u64)> = Vec::new();
        let mut total = 0u64;
        while let Ok(env) = self.rx.try_recv() {
            self.link.queued.fetch_sub(1, Ordering::Relaxed);
            total += 1;
            match lost.iter_mut().find(|(e, _)| *e == env.election_id) {
                Some(slot) => slot.1 += 1,
                None => lost.push((env.election_id, 1)),
            }
        }
        if total == 0 {
            return;
        }
        let link = &self.link;
        link.shared.stats.lost.fetch_add(total, Ordering::Relaxed);
        error!(peer = %link.address, lost = total, "link to peer failed with messages still queued; they are lost");
        let Some(table) = link.shared.table.upgrade() else { return };
        for (election_id, n) in lost {
            table.lost(&election_id, format!("link to {} failed: {n} message(s) lost", link.address));
        }
    }
}

/// Where links report the messages they lose, by election: the node's
/// election table (kept behind this trait so links need not know elections).
/// What became of a [`Link::send`]: copies on their way, and copies lost at
/// once to the link's full queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) on_way: u32,
    pub(crate) lost: u32,
}

impl Sent {
    fn add(&mut self, queued: bool) {
        if queued {
            self.on_way += 1;
        } else {
            self.lost += 1;
        }
    }
}

/// Links for the runtime's own tests.
#[cfg(test)]
impl Links {
    /// A link to `address` whose stream is already `tx` (a test's channel, standing for the peer).
    pub(crate) fn to_channel(address: &str, tx: mpsc::UnboundedSender<pb::Envelope>) -> Arc<Link> {
        #[derive(Debug)]
        struct NoReport;
        impl LossReport for NoReport {
            fn lost(&self, _: &str, _: String) {}
        }
        let table: Weak<dyn LossReport> = Weak::<NoReport>::new();
        let links = Links::new(table, None, SharedChannels::default());
        let endpoint = Endpoint::from_shared(format!("http://{address}")).expect("a test address");
        let link = links.get(address, endpoint);
        let mut st = lock(&link.state);
        st.tx = Some(tx);
        st.generation = 1;
        drop(st);
        link
    }
}

pub(crate) trait LossReport: Send + Sync + std::fmt::Debug {
    /// Election `election_id` lost a message on a link: `what` says how.
    fn lost(&self, election_id: &str, what: String);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An error with its chain of sources (tonic's transport errors hide the cause in them).
struct DisplayChain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for DisplayChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut src = self.0.source();
        while let Some(s) = src {
            write!(f, ": {s}")?;
            src = s.source();
        }
        Ok(())
    }
}
