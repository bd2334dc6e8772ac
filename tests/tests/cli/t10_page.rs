//! The election pages in a real browser: Debian's chromium, headless, driven
//! through chromedriver's WebDriver API against the controller binary's
//! HTTP port (the one serving `/metrics`).
//!
//! Needs `chromedriver` and `chromium` on the PATH (`apt-get install chromium
//! chromium-driver`); skipped without them, except in CI (`CI=true`) where
//! that is a failure. The WebDriver calls are plain JSON over HTTP/1.1 (a
//! dozen endpoints; a client crate would add some thirty dependencies).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc, controller_binary, crash_leader, election, free_port, in_ci, kept, leader_until, which};
use serde_json::{Value, json};

/// One HTTP/1.1 exchange with 127.0.0.1:`port` (the connection closed after it): status and body.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    // Read the head, then exactly Content-Length bytes (chromedriver keeps the connection open).
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = out.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let read = s.read(&mut buf)?;
        if read == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no HTTP head"));
        }
        out.extend_from_slice(&buf[..read]);
    };
    let head = String::from_utf8_lossy(&out[..head_end]).to_ascii_lowercase();
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    // chromedriver answers with a Content-Length; a chunked body would need decoding.
    assert!(!head.contains("transfer-encoding: chunked"), "chunked answer: {head}");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while out.len() < head_end + length {
        let read = s.read(&mut buf)?;
        if read == 0 {
            break;
        }
        out.extend_from_slice(&buf[..read]);
    }
    Ok((status, String::from_utf8_lossy(&out[head_end..]).into_owned()))
}

/// A WebDriver session of chromium, closed (and chromedriver stopped) when dropped.
struct Browser {
    port: u16,
    session: String,
    _driver: Proc,
}

impl Browser {
    fn start(driver: &PathBuf) -> Browser {
        let port = free_port();
        let log = std::fs::File::create(std::env::temp_dir().join(format!("ringleader-chromedriver-{port}.log")))
            .expect("chromedriver log");
        let driver = Proc(
            Command::new(driver)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("spawn chromedriver"),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while http(port, "GET", "/status", None).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not answer on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut options = json!({
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1300,1000"]
        });
        if let Some(chromium) = which("chromium") {
            options["binary"] = json!(chromium);
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let (status, body) = http(port, "POST", "/session", Some(&caps)).expect("new session");
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let session = v["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session ({status}): {body}"));
        Browser { port, session: session.to_string(), _driver: driver }
    }

    /// A command of the session; its `value`, or a panic naming the WebDriver error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, text) = http(self.port, method, &format!("/session/{}{path}", self.session), body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}"));
        assert_eq!(status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    /// Run `script` (a function body) in the page; what it returns.
    fn run(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({ "script": script, "args": [] })))
    }

    /// The element `css` selects (its WebDriver reference).
    fn find(&self, css: &str) -> Value {
        self.call("POST", "/element", Some(json!({ "using": "css selector", "value": css })))
    }

    fn click(&self, css: &str) {
        let e = self.find(css);
        let id = e.as_object().and_then(|o| o.values().next()).and_then(Value::as_str).expect("element id");
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Move the pointer onto the middle of the element `css` selects.
    fn hover(&self, css: &str) {
        let e = self.find(css);
        let actions = json!({"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": e, "x": 0, "y": 0}]
        }]});
        self.call("POST", "/actions", Some(actions));
    }

    /// What the page logged to the console since the last call, as "LEVEL message".
    fn console(&self) -> Vec<String> {
        let entries = self.call("POST", "/se/log", Some(json!({ "type": "browser" })));
        entries
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| format!("{} {}", e["level"].as_str().unwrap_or("?"), e["message"].as_str().unwrap_or("")))
            .collect()
    }

    /// The visible arrows' steps, in order.
    fn visible_steps(&self) -> Vec<u64> {
        let v = self.run(
            "return Array.from(document.querySelectorAll('#diagram .msg'))\
             .filter(e => e.style.display !== 'none').map(e => Number(e.dataset.step));",
        );
        v.as_array().into_iter().flatten().filter_map(Value::as_u64).collect()
    }

    fn text(&self, css: &str) -> String {
        self.run(&format!("return document.querySelector({}).textContent;", json!(css)))
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(self.port, "DELETE", &format!("/session/{}", self.session), None);
    }
}

/// In chromium: an election's page loads with no console error, shows its verdict, metrics and
/// diagram; stepping from the start reveals one message at a time in sending order (forward,
/// forward, back) and says which; pointing at an arrow describes its message (fields, causal
/// time, contents); the index links to every election; and the page of a running kept
/// leadership shows the failover an injected crash causes without being reloaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_election_page_works_in_a_browser() {
    let Some(driver) = which("chromedriver") else {
        assert!(!in_ci(), "CI needs chromedriver and chromium (apt-get install chromium chromium-driver)");
        eprintln!("skipped: no `chromedriver` on the PATH (apt-get install chromium chromium-driver)");
        return;
    };
    let (api, web) = (free_port(), free_port());
    let log_path = std::env::temp_dir().join(format!("ringleader-t10-{api}.log"));
    let log = std::fs::File::create(&log_path).unwrap();
    let _controller = Proc(
        Command::new(controller_binary())
            .args(["--local-nodes", "5", "--host", "127.0.0.1", "--port", &api.to_string()])
            .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{web}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn ringleader-controller"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut client = loop {
        match ControllerClient::connect(format!("http://127.0.0.1:{api}")).await {
            Ok(c) => break c,
            Err(e) => assert!(Instant::now() < deadline, "controller not up: {e}; see {}", log_path.display()),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let drawn = pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        size: 8,
        id_order: pb::IdOrder::WorstCase as i32,
        diagram_options: Some(pb::DiagramOptions { axis: pb::DiagramAxis::Causal as i32, labels: true }),
        ..election("as-far")
    };
    let one_shot = client.start_election(drawn).await.unwrap().into_inner();
    assert_eq!(one_shot.state, pb::ElectionState::Finished as i32, "{one_shot:?}");
    let keep = client.start_election(kept("bully")).await.unwrap().into_inner();
    leader_until(&mut client, &keep.election_id, Duration::from_secs(20), |l| l.agreed).await;

    let browser = tokio::task::spawn_blocking(move || Browser::start(&driver)).await.unwrap();
    let base = format!("http://127.0.0.1:{web}");
    let (page, id) = (format!("{base}/elections/{}", one_shot.election_id), one_shot.election_id.clone());
    let kept_page = format!("{base}/elections/{}", keep.election_id);
    let b = tokio::task::spawn_blocking(move || {
        browser.go(&page);
        assert_eq!(browser.console(), Vec::<String>::new(), "console messages while loading {page}");
        assert!(
            browser.text("#verdict").starts_with("FINISHED: every node agrees on sim-"),
            "{}",
            browser.text("#verdict")
        );
        assert!(browser.text("#metrics").contains("n(n+1)/2"), "the bound's formula: {}", browser.text("#metrics"));
        let total = browser.visible_steps().len();
        assert_eq!(
            total as u64,
            one_shot.metrics.as_ref().unwrap().messages,
            "every message drawn, all shown at first"
        );
        browser.click("#first");
        assert_eq!(browser.visible_steps(), Vec::<u64>::new(), "at the start, no message");
        browser.click("#forward");
        assert_eq!(browser.visible_steps(), [0]);
        assert!(browser.text("#info").starts_with("step 1: election from "), "{}", browser.text("#info"));
        browser.click("#forward");
        assert_eq!(browser.visible_steps(), [0, 1], "stepping reveals the next message");
        browser.click("#back");
        assert_eq!(browser.visible_steps(), [0]);
        assert_eq!(browser.text("#where"), format!("message 1 of {total}"));
        browser.click("#last");
        assert_eq!(browser.visible_steps().len(), total);
        browser.hover("#diagram .msg[data-step=\"3\"]");
        let info = browser.text("#info");
        assert!(info.contains(" from ") && info.contains("causal time ") && info.contains("carries id "), "{info}");
        let shot = browser.call("GET", "/screenshot", None);
        let png = shot.as_str().unwrap_or_default();
        assert!(png.starts_with("iVBORw0KGgo") && png.len() > 20_000, "a PNG screenshot of the page");

        browser.go(&format!("{base}/elections"));
        assert_eq!(browser.console(), Vec::<String>::new(), "console messages on the index");
        let links =
            browser.run("return Array.from(document.querySelectorAll('#elections a')).map(a => a.textContent);");
        let links: Vec<&str> = links.as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(links.contains(&id.as_str()), "{links:?}");
        browser
    })
    .await
    .unwrap();

    // The running kept leadership: its page follows a failover as it happens.
    let b = tokio::task::spawn_blocking(move || {
        b.go(&kept_page);
        assert!(b.text("#verdict").starts_with("RUNNING"), "{}", b.text("#verdict"));
        b
    })
    .await
    .unwrap();
    client.inject_fault(crash_leader()).await.unwrap();
    tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let verdict = b.text("#verdict");
            let rows = b.run("return document.getElementById('failovers').rows.length;").as_u64().unwrap_or(0);
            if verdict.contains("1 failover(s)") && rows == 2 {
                break;
            }
            assert!(Instant::now() < deadline, "the page never showed the failover: {verdict}, {rows} rows");
            std::thread::sleep(Duration::from_millis(250));
        }
        assert_eq!(b.console(), Vec::<String>::new(), "console messages while following the kept leadership");
    })
    .await
    .unwrap();
}
