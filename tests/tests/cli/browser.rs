//! A headless chromium driven through chromedriver's WebDriver API, for the
//! tests of the pages. The WebDriver calls are plain JSON over HTTP/1.1 (a
//! dozen endpoints; a client crate would add some thirty dependencies).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc, controller_binary, free_port, in_ci, which};
use serde_json::{Value, json};

/// chromedriver's path; `None` (the test skips) without it, except in CI, where that fails.
pub(crate) fn chromedriver() -> Option<PathBuf> {
    let driver = which("chromedriver");
    if driver.is_none() {
        assert!(!in_ci(), "CI needs chromedriver and chromium (apt-get install chromium chromium-driver)");
        eprintln!("skipped: no `chromedriver` on the PATH (apt-get install chromium chromium-driver)");
    }
    driver
}

/// The controller binary with embedded nodes, its pages on `web`.
pub(crate) struct Served {
    /// The HTTP port of the pages.
    pub(crate) web: u16,
    /// A client of its API.
    pub(crate) client: ControllerClient<tonic::transport::Channel>,
    _process: Proc,
}

impl Served {
    /// Start it with `nodes` embedded nodes and the environment `env`, and wait until it answers.
    pub(crate) async fn start(nodes: u32, env: &[(&str, &str)]) -> Served {
        let (api, web) = (free_port(), free_port());
        let log_path = std::env::temp_dir().join(format!("ringleader-pages-{api}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let process = Proc(
            Command::new(controller_binary())
                .args(["--local-nodes", &nodes.to_string(), "--host", "127.0.0.1", "--port", &api.to_string()])
                .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{web}"))
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("spawn ringleader-controller"),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        let client = loop {
            match ControllerClient::connect(format!("http://127.0.0.1:{api}")).await {
                Ok(c) => break c,
                Err(e) => assert!(Instant::now() < deadline, "controller not up: {e}; see {}", log_path.display()),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        Served { web, client, _process: process }
    }
}

/// One HTTP/1.1 exchange with 127.0.0.1:`port` (the connection closed after it): status and body.
pub(crate) fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<(u16, String)> {
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
pub(crate) struct Browser {
    port: u16,
    session: String,
    _driver: Proc,
}

impl Browser {
    pub(crate) fn start(driver: &PathBuf) -> Browser {
        Browser::sized(driver, 1300, 1000)
    }

    /// A session whose window is `width` x `height` pixels (a projector's 1280 x 720, say).
    pub(crate) fn sized(driver: &PathBuf, width: u32, height: u32) -> Browser {
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
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", format!("--window-size={width},{height}")]
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
        let b = Browser { port, session: session.to_string(), _driver: driver };
        b.call("POST", "/window/rect", Some(json!({ "width": width, "height": height })));
        b
    }

    /// Save what the window shows as a PNG at `path` (for a person to look at).
    pub(crate) fn screenshot(&self, path: &std::path::Path) {
        let png = self.call("GET", "/screenshot", None);
        std::fs::write(path, from_base64(png.as_str().unwrap_or_default())).expect("write the screenshot");
    }

    /// The window's inner size (the viewport), in CSS pixels.
    pub(crate) fn viewport(&self) -> (f64, f64) {
        let v = self.run("return [window.innerWidth, window.innerHeight];");
        (v[0].as_f64().unwrap_or(0.0), v[1].as_f64().unwrap_or(0.0))
    }

    /// How wide the page is against its window: the document's scrollWidth and the window's
    /// innerWidth (a page wider than its window scrolls sideways).
    pub(crate) fn widths(&self) -> (f64, f64) {
        let v = self.run("return [document.documentElement.scrollWidth, window.innerWidth];");
        (v[0].as_f64().unwrap_or(0.0), v[1].as_f64().unwrap_or(0.0))
    }

    /// The bounding box of the element `css` selects, as [left, top, right, bottom] in the
    /// viewport's pixels (`None` if there is none).
    pub(crate) fn rect(&self, css: &str) -> Option<[f64; 4]> {
        let v = self.run(&format!(
            "const e = document.querySelector({}); if (!e) return null; const r = e.getBoundingClientRect(); \
             return [r.left, r.top, r.right, r.bottom];",
            json!(css)
        ));
        let a = v.as_array()?;
        Some([0, 1, 2, 3].map(|i| a[i].as_f64().unwrap_or(f64::NAN)))
    }

    /// A command of the session; its `value`, or a panic naming the WebDriver error.
    pub(crate) fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, text) = http(self.port, method, &format!("/session/{}{path}", self.session), body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}"));
        assert_eq!(status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    pub(crate) fn go(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    /// Run `script` (a function body) in the page; what it returns.
    pub(crate) fn run(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({ "script": script, "args": [] })))
    }

    /// The element `css` selects (its WebDriver reference).
    pub(crate) fn find(&self, css: &str) -> Value {
        self.call("POST", "/element", Some(json!({ "using": "css selector", "value": css })))
    }

    pub(crate) fn click(&self, css: &str) {
        let e = self.find(css);
        let id = e.as_object().and_then(|o| o.values().next()).and_then(Value::as_str).expect("element id");
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Wait (up to 20 s) until `script` (a function body) returns true in the page; panics naming `what`.
    pub(crate) fn wait_until(&self, script: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.run(script) != Value::Bool(true) {
            assert!(Instant::now() < deadline, "{what}: not within 20 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Press `key` (a WebDriver key name: "ArrowRight", or a character) on the page.
    pub(crate) fn press(&self, key: &str) {
        let code = match key {
            "ArrowRight" => "\u{E014}",
            "ArrowLeft" => "\u{E012}",
            "Home" => "\u{E011}",
            "End" => "\u{E010}",
            other => other,
        };
        let actions = json!({"actions": [{
            "type": "key", "id": "keyboard",
            "actions": [{"type": "keyDown", "value": code}, {"type": "keyUp", "value": code}]
        }]});
        self.call("POST", "/actions", Some(actions));
    }

    /// Each node's state on the topology view, in position order.
    pub(crate) fn node_states(&self) -> Vec<String> {
        let v = self.run(
            "return Array.from(document.querySelectorAll('#topology-view .topo-node'))\
             .sort((a, b) => a.dataset.position - b.dataset.position).map(g => g.dataset.state);",
        );
        v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_string)).collect()
    }

    /// The arrows drawn in flight on the diagram, and the dots on the topology view.
    pub(crate) fn in_flight(&self) -> (usize, usize) {
        let v = self.run(
            "return [document.querySelectorAll('#diagram .msg.flight').length, \
             document.querySelectorAll('#topology-view .dot').length];",
        );
        let n = |i: usize| v[i].as_u64().unwrap_or(0) as usize;
        (n(0), n(1))
    }

    /// The WebDriver id of the element `css` selects.
    fn element_id(&self, css: &str) -> String {
        let e = self.find(css);
        e.as_object().and_then(|o| o.values().next()).and_then(Value::as_str).expect("element id").to_string()
    }

    /// Clear the input `css` selects and type `text` into it, as a user would.
    pub(crate) fn type_into(&self, css: &str, text: &str) {
        let id = self.element_id(css);
        self.call("POST", &format!("/element/{id}/clear"), Some(json!({})));
        self.call("POST", &format!("/element/{id}/value"), Some(json!({ "text": text })));
    }

    /// Move the pointer onto the middle of the element `css` selects.
    pub(crate) fn hover(&self, css: &str) {
        let e = self.find(css);
        let actions = json!({"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": e, "x": 0, "y": 0}]
        }]});
        self.call("POST", "/actions", Some(actions));
    }

    /// What the page logged to the console since the last call, as "LEVEL message".
    pub(crate) fn console(&self) -> Vec<String> {
        let entries = self.call("POST", "/se/log", Some(json!({ "type": "browser" })));
        entries
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| format!("{} {}", e["level"].as_str().unwrap_or("?"), e["message"].as_str().unwrap_or("")))
            .collect()
    }

    /// What the page logged to the console since the last call ([`Browser::console`]), but the
    /// lines that contain `expected` (a refusal the test asked for logs its failed request).
    pub(crate) fn console_but(&self, expected: &str) -> Vec<String> {
        self.console().into_iter().filter(|m| !m.contains(expected)).collect()
    }

    /// The visible arrows' steps, in order.
    pub(crate) fn visible_steps(&self) -> Vec<u64> {
        let v = self.run(
            "return Array.from(document.querySelectorAll('#diagram .msg'))\
             .filter(e => e.style.display !== 'none').map(e => Number(e.dataset.step));",
        );
        v.as_array().into_iter().flatten().filter_map(Value::as_u64).collect()
    }

    pub(crate) fn text(&self, css: &str) -> String {
        self.run(&format!("return document.querySelector({}).textContent;", json!(css)))
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// The bytes `text` (standard base64, as WebDriver answers a screenshot) stands for.
fn from_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let (mut out, mut bits, mut held) = (Vec::with_capacity(text.len() * 3 / 4), 0u32, 0u32);
    for v in text.bytes().filter_map(value) {
        bits = (bits << 6) | u32::from(v);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
        }
    }
    out
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(self.port, "DELETE", &format!("/session/{}", self.session), None);
    }
}
