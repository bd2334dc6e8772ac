//! The HTTP port of both binaries behind its guard: the Host rule on every
//! route, and `auth.protect_reads` on every read (pages, records, diagrams,
//! comparisons, `/metrics`), with a bearer token or a browser's session.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc, controller_binary, free_port, node_binary, simulated};

const FULL: &str = "full-token-19";
const READ: &str = "read-token-19";

/// One HTTP/1.1 exchange with 127.0.0.1:`port` naming `host`, with `headers` (the connection
/// closed after it): status, the head (lower case) and the body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the HTTP port");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Wait until the HTTP port at `port` accepts connections.
fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what}'s HTTP port {port} did not open");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The controller binary with `auth.protect_reads` (a full and a read-only token): every read of
/// its HTTP port (the lab, the index, an election's page, record, diagram, a comparison,
/// `/metrics`) is 401 without credentials and answered with the read-only token as a bearer or
/// with the session cookie `POST /session` sets for it; a lab call with only the session still
/// needs the full token (the API's own 401), and passes with it; and a foreign Host is 421 on
/// every route, credentials or not. Before, every read and every Host was answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_reads_cover_every_route_of_the_controllers_http_port() {
    let (api, web) = (free_port(), free_port());
    let _controller = Proc(
        Command::new(controller_binary())
            .args(["--local-nodes", "3", "--host", "127.0.0.1", "--port", &api.to_string()])
            .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{web}"))
            .env("RINGLEADER__AUTH__TOKEN", FULL)
            .env("RINGLEADER__AUTH__READ_TOKEN", READ)
            .env("RINGLEADER__AUTH__PROTECT_READS", "true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ringleader-controller"),
    );
    tracing::info!("--- a drawn election to read");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut client = loop {
        match ControllerClient::connect(format!("http://127.0.0.1:{api}")).await {
            Ok(c) => break c,
            Err(e) => assert!(Instant::now() < deadline, "controller not up: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut start = tonic::Request::new(ringleader_proto::v1::StartElectionRequest {
        diagram: true,
        wait: true,
        ..simulated("as-far", 4)
    });
    start.metadata_mut().insert("authorization", format!("Bearer {FULL}").parse().unwrap());
    let id = client.start_election(start).await.expect("a SIMULATED election").into_inner().election_id;
    wait_for_port(web, "the controller");
    let host = format!("127.0.0.1:{web}");
    let reads = [
        "/".to_string(),
        "/elections".into(),
        format!("/elections/{id}"),
        format!("/elections/{id}/record.json"),
        format!("/elections/{id}/diagram.svg"),
        format!("/compare/{id}/{id}"),
        "/metrics".into(),
    ];

    tracing::info!("--- without credentials, then with the read-only token");
    let read_bearer = format!("Bearer {READ}");
    for path in &reads {
        let (status, head, body) = http(web, "GET", path, &host, &[], "");
        assert_eq!(status, 401, "{path}: {body}");
        assert!(head.contains("www-authenticate: bearer"), "{path}: {head}");
        let (status, _, body) = http(web, "GET", path, &host, &[("authorization", &read_bearer)], "");
        assert_eq!(status, 200, "{path}: {body}");
        if path.ends_with("record.json") {
            assert!(body.contains(&id), "{body}");
        }
    }
    let (status, _, body) = http(web, "GET", "/metrics", &host, &[("authorization", "Bearer wrong-token-19")], "");
    assert_eq!(status, 403, "{body}");

    tracing::info!("--- a browser: the sign-in page, then its session");
    let (status, _, page) = http(web, "GET", "/elections", &host, &[("accept", "text/html")], "");
    assert_eq!(status, 401);
    assert!(page.contains("/session.js"), "{page}");
    let (status, head, _) = http(web, "POST", "/session", &host, &[("authorization", &read_bearer)], "");
    assert_eq!(status, 204, "{head}");
    let set = head.lines().find_map(|l| l.strip_prefix("set-cookie: ")).expect("a session cookie").to_string();
    let session = set.split(';').next().unwrap().to_string();
    for path in &reads {
        assert_eq!(http(web, "GET", path, &host, &[("cookie", &session)], "").0, 200, "{path} with the session");
    }
    let explore = r#"{"algorithm":"as-far","n":3}"#;
    let lab = [("cookie", session.as_str()), ("x-ringleader-lab", "1"), ("content-type", "application/json")];
    let (status, _, body) = http(web, "POST", "/lab/explore", &host, &lab, explore);
    assert_eq!(status, 401, "a lab call still takes the full token: {body}");
    assert!(body.contains("UNAUTHENTICATED"), "{body}");
    let full_bearer = format!("Bearer {FULL}");
    let with_full = [lab[0], lab[1], lab[2], ("authorization", full_bearer.as_str())];
    assert_eq!(http(web, "POST", "/lab/explore", &host, &with_full, explore).0, 200);

    tracing::info!("--- a rebound name: refused on every route, whatever the credentials");
    for path in &reads {
        let (status, _, body) = http(web, "GET", path, "rebound.example:80", &[("authorization", &full_bearer)], "");
        assert_eq!(status, 421, "{path}: {body}");
        assert!(body.contains("telemetry.http_hosts"), "{body}");
    }
    let (status, _, _) = http(web, "POST", "/lab/explore", &format!("rebound.example:{web}"), &with_full, explore);
    assert_eq!(status, 421);
    assert_eq!(
        http(web, "GET", "/metrics", &format!("localhost:{web}"), &[("authorization", &read_bearer)], "").0,
        200
    );
}

/// The node binary's `/metrics`: open reads answer a loopback Host and refuse a rebound name
/// (421); with `auth.protect_reads` (and its own `auth.token`), it is 401 without credentials and
/// answered with the token. Before, a node's `/metrics` answered any Host and any caller.
#[test]
fn a_nodes_metrics_obey_the_host_rule_and_protected_reads() {
    for protect in [false, true] {
        let (grpc, web) = (free_port(), free_port());
        let mut command = Command::new(node_binary());
        command
            .args(["--listen", &format!("127.0.0.1:{grpc}"), "--name", "guarded"])
            .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{web}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if protect {
            command.env("RINGLEADER__AUTH__TOKEN", FULL).env("RINGLEADER__AUTH__PROTECT_READS", "true");
        }
        let _node = Proc(command.spawn().expect("spawn ringleader-node"));
        wait_for_port(web, "the node");
        let host = format!("127.0.0.1:{web}");
        let bearer = format!("Bearer {FULL}");
        let (status, _, body) = http(web, "GET", "/metrics", &host, &[], "");
        assert_eq!(status, if protect { 401 } else { 200 }, "protect_reads {protect}: {body}");
        let (status, _, body) = http(web, "GET", "/metrics", &host, &[("authorization", &bearer)], "");
        assert_eq!(status, 200, "{body}");
        let (status, _, body) = http(web, "GET", "/metrics", "rebound.example", &[("authorization", &bearer)], "");
        assert_eq!(status, 421, "{body}");
    }
}
