//! The HTTP port (`/metrics`, the controller's pages) holds against idle,
//! flooding and slow clients like the gRPC servers do, and every response
//! carries the security headers. Each test serves a small router under short
//! configured limits on 127.0.0.1:0.

use std::net::SocketAddr;
use std::time::Duration;

use axum::http::header;
use axum::routing::get;
use ringleader_node::http::{self, DEFAULT_POLICY, HttpLimits};
use ringleader_node::runtime::AbortOnDrop;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A policy a route sets itself.
const OWN_POLICY: &str = "default-src 'self'";

/// Serve `/metrics` and `/own` (which sets its own policy) under `limits`.
async fn serve(limits: HttpLimits) -> (SocketAddr, AbortOnDrop) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route("/metrics", get(|| async { "up 1\n" }))
        .route("/echo", axum::routing::post(|b: axum::body::Bytes| async move { b.len().to_string() }))
        .route("/own", get(|| async { ([(header::CONTENT_SECURITY_POLICY, OWN_POLICY)], "<p>own</p>") }));
    (addr, AbortOnDrop(tokio::spawn(http::serve(listener, app, limits, "test-http"))))
}

fn limits(max_connections: usize, idle_ms: u64, header_ms: u64) -> HttpLimits {
    HttpLimits {
        max_connections,
        idle_timeout: Duration::from_millis(idle_ms),
        header_read_timeout: Duration::from_millis(header_ms),
        stall_timeout: Duration::from_secs(20),
    }
}

/// Whether the server closed `s` within `wait`: a read sees the end (or a reset) rather than
/// nothing. Whatever the server sent first is read past.
async fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 1024];
    tokio::time::timeout(wait, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await
    .is_ok()
}

/// One request on `s`: the response's head (lower case) and body.
async fn request(s: &mut TcpStream, path: &str, close: bool) -> (String, String) {
    let connection = if close { "close" } else { "keep-alive" };
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: {connection}\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            if let Some(end) = out.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&out[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if out.len() >= end + 4 + length {
                    let body = String::from_utf8_lossy(&out[end + 4..end + 4 + length]).into_owned();
                    return (head, body);
                }
            }
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "the connection ended before the response: {}", String::from_utf8_lossy(&out));
            out.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("a response within 10 s")
}

/// Ten idle connections to a port capped at 4 (60 s idle and head timeouts): each one beyond the
/// cap takes the place of the one idle longest, so the six oldest are closed, the four newest stay
/// open and are served. Before the HTTP port had limits, all ten stayed open; before connections
/// gave way, the six newest were closed at accept and a new client could not get in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_take_the_places_of_idle_ones() {
    let (addr, _server) = serve(limits(4, 60_000, 60_000)).await;
    let mut conns = Vec::new();
    for _ in 0..10 {
        conns.push(TcpStream::connect(addr).await.unwrap());
        // In turn: each newcomer finds the one before it idle longer than the rest.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (i, s) in conns.iter_mut().enumerate().take(6) {
        assert!(closed_within(s, Duration::from_secs(5)).await, "connection {i}, the oldest, is still open");
    }
    for (i, s) in conns.iter_mut().enumerate().skip(6) {
        assert!(!closed_within(s, Duration::from_millis(300)).await, "connection {i}, among the newest, was closed");
    }
    let (head, body) = request(&mut conns[9], "/metrics", true).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(body, "up 1\n");
}

/// A `Content-Length` of 1,000,000,000 with 10 bytes sent is answered 413 at once, naming the
/// port's limit. Before, the server waited for the rest until the idle timeout (60 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_announced_too_large_is_refused_at_once() {
    let (addr, _server) = serve(limits(16, 60_000, 10_000)).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000000\r\n\r\n0123456789").await.unwrap();
    let started = std::time::Instant::now();
    let mut out = vec![0u8; 4096];
    let n =
        tokio::time::timeout(Duration::from_secs(2), s.read(&mut out)).await.expect("an answer within 2 s").unwrap();
    let head = String::from_utf8_lossy(&out[..n]).to_string();
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(head.contains("1048576"), "the answer names the limit: {head}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// A body trickled a byte every 300 ms (each byte keeps the 60 s idle timeout from firing) fails
/// its request once it is not whole 1 s after its head (the head timeout, again for the body): the
/// client gets an error status or a close within 3 s. Before, a byte every 20 s kept each of 256
/// connections open for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_body_fails_after_the_body_timeout() {
    let (addr, _server) = serve(limits(16, 60_000, 1_000)).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n").await.unwrap();
    let started = std::time::Instant::now();
    let trickle = async {
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if s.write_all(b"x").await.is_err() {
                break;
            }
            let mut out = [0u8; 512];
            if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(1), s.read(&mut out)).await {
                return String::from_utf8_lossy(&out[..n]).to_string();
            }
        }
        String::new()
    };
    let answer = tokio::time::timeout(Duration::from_secs(5), trickle).await.expect("no end to the trickle in 5 s");
    let took = started.elapsed();
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 4"), "{answer}");
    assert!(took < Duration::from_secs(3), "the trickle went on for {took:?}");
    assert!(took >= Duration::from_millis(900), "cut before the body timeout: {took:?}");
}

/// Under a 1 s idle timeout (60 s for a head), connections that never send a byte and one kept
/// alive after a request are all closed, and their places are free again: a new connection is
/// served. Before, they stayed open (100 still open 85 s after a 3 s idle timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_kept_alive_connections_are_closed_after_the_idle_timeout() {
    let (addr, _server) = serve(limits(4, 1_000, 60_000)).await;
    let mut conns = Vec::new();
    for _ in 0..3 {
        conns.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut kept = TcpStream::connect(addr).await.unwrap();
    let (head, _) = request(&mut kept, "/metrics", false).await;
    assert!(head.starts_with("http/1.1 200") && !head.contains("connection: close"), "{head}");
    conns.push(kept);
    for (i, s) in conns.iter_mut().enumerate() {
        assert!(closed_within(s, Duration::from_secs(10)).await, "connection {i} still open 10 s after 1 s idle");
    }
    let mut fresh = TcpStream::connect(addr).await.unwrap();
    let (head, _) = request(&mut fresh, "/metrics", true).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
}

/// A slowloris client sends a request head one byte every 200 ms and never finishes it: its bytes
/// keep the 60 s idle timeout from firing, but the 1 s head timeout closes it, while a request
/// sent whole is served. Before, such a connection stayed open as long as it trickled (200 of
/// them for 100 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowloris_client_is_closed_after_the_header_read_timeout() {
    let (addr, _server) = serve(limits(4, 60_000, 1_000)).await;
    let (mut rd, mut wr) = TcpStream::connect(addr).await.unwrap().into_split();
    let trickle = AbortOnDrop(tokio::spawn(async move {
        for b in b"GET /metrics HTTP/1.1\r\nHost: test\r\nX-Slow: ".iter().chain(std::iter::repeat(&b'a')) {
            if wr.write_all(&[*b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }));
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    drop(trickle);
    assert!(closed.is_ok(), "the slowloris connection is still open after 15 s (head timeout 1 s)");

    let mut whole = TcpStream::connect(addr).await.unwrap();
    let (head, body) = request(&mut whole, "/metrics", true).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(body, "up 1\n");
}

/// Every response of the port, found or not, says `X-Content-Type-Options: nosniff` and carries a
/// `Content-Security-Policy`: the default one, or the route's own where it set one. Before, none
/// carried either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_nosniff_and_a_policy() {
    let (addr, _server) = serve(HttpLimits::default()).await;
    for (path, status, policy) in
        [("/metrics", "200", DEFAULT_POLICY), ("/nowhere", "404", DEFAULT_POLICY), ("/own", "200", OWN_POLICY)]
    {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let (head, _) = request(&mut s, path, true).await;
        assert!(head.starts_with(&format!("http/1.1 {status}")), "{path}: {head}");
        assert!(head.contains("\r\nx-content-type-options: nosniff"), "{path}: {head}");
        let csp = format!("\r\ncontent-security-policy: {}", policy.to_ascii_lowercase());
        assert!(head.contains(&csp), "{path}: {head}");
        assert_eq!(head.matches("content-security-policy:").count(), 1, "{path}: {head}");
    }
}
