//! Peers that do not read what they asked for, and connections that ask
//! nothing: what the servers hold for them is counted and bounded, and they
//! are closed ([`ringleader_node::unread`]). In a test binary of its own: the
//! account is process-wide, and one test here lowers its budget.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ringleader_node::http::{self, HttpLimits};
use ringleader_node::limits::{self, ConnLimits};
use ringleader_node::runtime::AbortOnDrop;
use ringleader_node::unread;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The tests share the process's account: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A gRPC server (grpc.health.v1 only) under `limits`.
async fn health_server(limits: ConnLimits) -> (SocketAddr, AbortOnDrop) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_reporter, service) = tonic_health::server::health_reporter();
    let task = tokio::spawn(async move {
        limits::apply_http2(tonic::transport::Server::builder(), &limits)
            .add_service(service)
            .serve_with_incoming(limits::incoming(listener, limits, "test-grpc"))
            .await
            .unwrap();
    });
    (addr, AbortOnDrop(task))
}

/// An HTTP port whose `/big` answers `size` bytes.
async fn http_server(size: usize, stall: Duration) -> (SocketAddr, AbortOnDrop) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let page = Bytes::from(vec![b'x'; size]);
    let app = axum::Router::new().route("/big", axum::routing::get(move || async move { page.clone() }));
    let limits = HttpLimits { stall_timeout: stall, ..HttpLimits::default() };
    (addr, AbortOnDrop(tokio::spawn(http::serve(listener, app, limits, "test-http"))))
}

/// An HTTP/2 client that grants no window: the server may send headers, no byte of an answer.
/// Its connection task answers pings; it resolves when the server closes the connection.
async fn unreader(addr: SocketAddr) -> (h2::client::SendRequest<Bytes>, tokio::task::JoinHandle<()>) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::Builder::new().initial_window_size(0).handshake(tcp).await.unwrap();
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    (client, task)
}

/// Ask `calls` Health/Check on `client` and keep the answers unread.
async fn ask(
    mut client: h2::client::SendRequest<Bytes>,
    addr: SocketAddr,
    calls: usize,
) -> Vec<h2::client::ResponseFuture> {
    let mut answers = Vec::new();
    for _ in 0..calls {
        client = client.ready().await.unwrap();
        let req = ::http::Request::post(format!("http://{addr}/grpc.health.v1.Health/Check"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
        let (answer, mut send) = client.send_request(req, false).unwrap();
        send.send_data(Bytes::from_static(&[0, 0, 0, 0, 0]), true).unwrap();
        answers.push(answer);
    }
    answers
}

/// Wait until `cond` holds, at most `within`; whether it did.
async fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

/// 200 Health/Check calls from a client that grants no flow-control window are all counted while
/// the server holds their answers, and once the answers have waited 500 ms (the stall timeout) the
/// server closes the connection and releases every call. Before, the server ran every call and
/// kept every answer for as long as the client answered pings (the controller was OOM-killed
/// after ~13,000 such GetCluster calls).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_grants_no_window_is_closed_and_its_answers_released() {
    let _one = ONE_AT_A_TIME.lock().await;
    let limits = ConnLimits { stall_timeout: Duration::from_millis(500), ..ConnLimits::DEFAULT };
    let (addr, _server) = health_server(limits).await;
    let before = unread::totals();
    let (client, conn) = unreader(addr).await;
    let started = Instant::now();
    let _answers = ask(client, addr, 200).await;
    assert!(
        eventually(Duration::from_secs(5), || unread::totals().calls >= before.calls + 200).await || conn.is_finished(),
        "the 200 calls were never counted: {:?}",
        unread::totals()
    );
    assert!(unread::totals().peak >= 200 * unread::CALL_COST, "{:?}", unread::totals());
    assert!(eventually(Duration::from_secs(10), || conn.is_finished()).await, "the server never closed the peer");
    let closed_after = started.elapsed();
    assert!(closed_after >= Duration::from_millis(500), "closed before the stall timeout: {closed_after:?}");
    assert!(
        eventually(Duration::from_secs(5), || unread::totals().calls == before.calls).await,
        "the calls were not released: {:?}",
        unread::totals()
    );
}

/// A gRPC connection that sent the preface and answers every ping but never asks anything is
/// closed after the idle timeout (1 s here); a client that keeps calling is not. Before, pings
/// kept such a connection open for good: 1,100 of them took every descriptor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_asks_nothing_is_closed_though_it_answers_pings() {
    let _one = ONE_AT_A_TIME.lock().await;
    let limits = ConnLimits { idle_timeout: Duration::from_secs(1), ..ConnLimits::DEFAULT };
    let (addr, _server) = health_server(limits).await;
    let (_silent, silent_conn) = unreader(addr).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(2_500) {
        health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(silent_conn.is_finished(), "the silent connection is still open after 2.5 s of a 1 s idle timeout");
}

/// A server full of connections that ask nothing (here its cap, 8, of them, answering pings) still
/// serves a new client: the new connection takes the place of the one idle longest. Before, the
/// new client was closed at accept until one of them went away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_gives_a_new_client_the_place_of_an_idle_connection() {
    let _one = ONE_AT_A_TIME.lock().await;
    let limits = ConnLimits { max_connections: 8, ..ConnLimits::DEFAULT };
    let (addr, _server) = health_server(limits).await;
    let mut holders = Vec::new();
    for _ in 0..8 {
        holders.push(unreader(addr).await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let answer = tokio::time::timeout(
        Duration::from_secs(5),
        health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }),
    )
    .await
    .expect("an answer within 5 s");
    assert!(answer.is_ok(), "the new client was refused: {answer:?}");
    // The server closed a holder to make room; its client sees the end a moment later.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !holders.iter().any(|(_, c)| c.is_finished()) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let closed = holders.iter().filter(|(_, c)| c.is_finished()).count();
    assert!(closed >= 1, "no holder gave its place");
}

/// A client that asks for a 32 MiB page over HTTP/1 and never reads it: what the server still holds
/// for it is counted (at least 8 MiB, past what the sockets' buffers take), and after the stall
/// timeout (1 s) it is closed and the bytes released. Before, 250 such clients of a 4 MiB page
/// OOM-killed a controller in a 512 MiB cgroup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_client_that_stops_reading_is_counted_then_closed() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (addr, _server) = http_server(32 << 20, Duration::from_secs(1)).await;
    let before = unread::totals();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || unread::totals().queued >= before.queued + (8 << 20)).await,
        "the held answer is not counted: {:?}",
        unread::totals()
    );
    let started = Instant::now();
    assert!(
        eventually(Duration::from_secs(10), || unread::totals().queued <= before.queued).await,
        "the answer was never released: {:?}",
        unread::totals()
    );
    assert!(started.elapsed() >= Duration::from_millis(500), "released before the stall timeout");
    // The server closed it: reading drains what the socket had, then meets the end.
    let mut buf = vec![0u8; 1 << 20];
    let drained = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert!(drained.is_ok(), "the connection is still open");
}

/// With the process's budget at 24 MiB, three clients that each leave a 16 MiB page unread cannot
/// make the servers hold more than the budget for long: the heaviest are closed as soon as the
/// total passes it (well before the 20 s stall timeout), and a new client is still served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_answers_over_the_budget_close_the_heaviest() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (addr, _server) = http_server(16 << 20, Duration::from_secs(20)).await;
    unread::set_budget(24 << 20);
    let mut clients = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
        clients.push(s);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let held = eventually(Duration::from_secs(3), || unread::totals().queued <= 24 << 20).await;
    let peak = unread::totals().peak;
    unread::set_budget(unread::DEFAULT_BUDGET);
    assert!(held, "the servers hold more than the budget: {:?}", unread::totals());
    assert!(peak <= (24 + 16 + 1) << 20, "the peak went past the budget and one answer: {peak}");
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await.unwrap().unwrap();
    assert!(out.starts_with(b"HTTP/1.1 404"), "{}", String::from_utf8_lossy(&out[..out.len().min(200)]));
}

/// The pool of connections all servers may hold is the open-file limit less a quarter of it (at
/// least 128) and never more than it: 1,024 open files leave 768, 20,000 leave 15,000, 256 leave 128.
#[test]
fn the_pool_leaves_room_below_the_open_file_limit() {
    for (limit, pool) in [(1_024, 768), (20_000, 15_000), (256, 128), (100, 16)] {
        assert_eq!(limits::pool_for(limit), pool, "open files {limit}");
        assert!(limits::pool_for(limit) < limit);
    }
}
