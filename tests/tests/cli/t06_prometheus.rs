//! The Grafana dashboards against real data: Debian's Prometheus scrapes the
//! `/metrics` endpoint of the controller binary (with its embedded cluster)
//! while elections run, then every Prometheus expression of every dashboard
//! in `dashboards/` must return series.
//!
//! Needs `prometheus` on the PATH (`apt-get install prometheus`); skipped
//! without it, except in CI (`CI=true`) where that is a failure.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{
    Proc, assert_correct, controller_binary, crash_leader, election, free_port, in_ci, kept, leader_until, which,
    workspace_root,
};
use serde_json::Value;

/// `GET path` from 127.0.0.1:`port` over HTTP/1.0 (no chunking): the body.
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
}

/// Percent-encode a query-string value.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The series with a finite value an instant query returns (an error names the problem).
fn query(port: u16, expr: &str) -> Result<usize, String> {
    let body = http_get(port, &format!("/api/v1/query?query={}", encode(expr))).map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
    if v["status"] != "success" {
        return Err(format!("{}", v["error"]));
    }
    // Count series with a number (histogram_quantile over no increase gives NaN: not data).
    let finite = |s: &Value| s["value"][1].as_str().and_then(|x| x.parse::<f64>().ok()).is_some_and(f64::is_finite);
    Ok(v["data"]["result"].as_array().map_or(0, |r| r.iter().filter(|s| finite(s)).count()))
}

/// Every Prometheus expression of a dashboard: panel targets (rows included)
/// whose data source is not Tempo, annotation queries, and the metric of each
/// `label_values(metric, label)` variable. With the dashboard's variables
/// replaced as Grafana would (`$algorithm` = All).
fn expressions(dashboard: &Value) -> Vec<(String, String)> {
    fn is_tempo(v: &Value) -> bool {
        v["datasource"]["uid"] == "tempo" || v["datasource"]["type"] == "tempo"
    }
    fn panels(list: &Value, out: &mut Vec<(String, String)>) {
        for p in list.as_array().into_iter().flatten() {
            panels(&p["panels"], out);
            if is_tempo(p) {
                continue;
            }
            for t in p["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = t["expr"].as_str().filter(|_| !is_tempo(t)) {
                    out.push((format!("panel `{}`", p["title"].as_str().unwrap_or("?")), expr.to_string()));
                }
            }
        }
    }
    let mut out = Vec::new();
    panels(&dashboard["panels"], &mut out);
    for a in dashboard["annotations"]["list"].as_array().into_iter().flatten() {
        if let Some(expr) = a["expr"].as_str().or(a["target"]["expr"].as_str()) {
            out.push((format!("annotation `{}`", a["name"].as_str().unwrap_or("?")), expr.to_string()));
        }
    }
    for v in dashboard["templating"]["list"].as_array().into_iter().flatten() {
        let q = v["query"].as_str().or(v["query"]["query"].as_str()).or(v["definition"].as_str()).unwrap_or("");
        if let Some(inner) = q.strip_prefix("label_values(").and_then(|r| r.strip_suffix(')')) {
            let metric = inner.rsplit_once(',').map_or(inner, |(m, _)| m).trim();
            out.push((format!("variable `{}`", v["name"].as_str().unwrap_or("?")), metric.to_string()));
        }
    }
    out.into_iter()
        .map(|(w, e)| {
            (w, e.replace("$__rate_interval", "1m").replace("${algorithm}", ".*").replace("$algorithm", ".*"))
        })
        .collect()
}

/// The `ringleader_*` metric names an expression uses.
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("ringleader_") {
        let tail = &rest[i..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

/// Every Prometheus query of every dashboard, and every metric they name, returns series once Prometheus
/// has scraped the controller
/// (embedded cluster) through LIVE and SIMULATED elections, a failed one (its messages lost, then stopped), and a kept leadership that
/// loses its leader to a crash fault (left running, with the fault active, while the queries run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_query_returns_series() {
    let Some(prometheus) = which("prometheus") else {
        assert!(!in_ci(), "CI needs `prometheus` on the PATH (apt-get install prometheus)");
        eprintln!("skipped: no `prometheus` on the PATH (apt-get install prometheus)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("ringleader-prometheus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (api, metrics, prom) = (free_port(), free_port(), free_port());
    let log = std::fs::File::create(dir.join("controller.log")).unwrap();
    let _controller = Proc(
        Command::new(controller_binary())
            .args(["--local-nodes", "5", "--host", "127.0.0.1", "--port", &api.to_string()])
            .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{metrics}"))
            .env("RINGLEADER__CONTROLLER__DECISION_TIMEOUT_MS", "1500")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn ringleader-controller"),
    );
    let config = format!(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: ringleader-controller\n    static_configs:\n      - targets: ['127.0.0.1:{metrics}']\n"
    );
    std::fs::write(dir.join("prometheus.yml"), config).unwrap();
    // A port taken by another process between `free_port()` and Prometheus's bind ends Prometheus at
    // once ("address already in use", seen in CI): then try again on another port.
    let mut prom = prom;
    let mut attempts = 0;
    let _prometheus = loop {
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let mut child = Proc(
            Command::new(&prometheus)
                .arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
                .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
                .arg(format!("--web.listen-address=127.0.0.1:{prom}"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("spawn prometheus"),
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        attempts += 1;
        match child.0.try_wait() {
            Ok(Some(status)) if attempts < 5 => {
                eprintln!("prometheus on port {prom} exited ({status}); trying another port");
                prom = free_port();
            }
            _ => break child,
        }
    };

    // Prometheus scraping the controller before anything happens, so rates see every election.
    let deadline = Instant::now() + Duration::from_secs(90);
    while query(prom, "up{job=\"ringleader-controller\"} == 1") != Ok(1) {
        assert!(Instant::now() < deadline, "prometheus never scraped the controller; see {}", dir.display());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut client = ControllerClient::connect(format!("http://127.0.0.1:{api}")).await.expect("controller");
    // Two rounds with scrapes between them: a histogram series is born with its first election, so
    // rate() over it needs a second one (as on a real dashboard).
    for round in 0..2 {
        for algorithm in ["as-far", "stages", "controlled-distance"] {
            assert_correct(&client.start_election(election(algorithm)).await.unwrap().into_inner());
            let simulated =
                pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, seed: round, ..election(algorithm) };
            assert_correct(&client.start_election(simulated).await.unwrap().into_inner());
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    // A LIVE election whose messages are all lost, stopped before it could decide: FAILED. (A crashed
    // node no longer fails one: elections run on the nodes that are up.)
    let drop_all = pb::InjectFaultRequest {
        kind: Some(pb::inject_fault_request::Kind::Link(pb::LinkFaultSpec { drop: 1.0, ..Default::default() })),
        ..Default::default()
    };
    client.inject_fault(drop_all).await.unwrap();
    let lost = pb::StartElectionRequest { wait: false, ..election("as-far") };
    let lost = client.start_election(lost).await.unwrap().into_inner();
    let stop = pb::StopElectionRequest { election_id: lost.election_id };
    let failed = client.stop_election(stop).await.unwrap().into_inner();
    assert_eq!(failed.state, pb::ElectionState::Failed as i32, "{failed:?}");
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap();
    let k = client.start_election(kept("bully")).await.unwrap().into_inner();
    let first = leader_until(&mut client, &k.election_id, Duration::from_secs(20), |l| l.agreed).await;
    client.inject_fault(crash_leader()).await.unwrap();
    leader_until(&mut client, &k.election_id, Duration::from_secs(20), |l| l.agreed && l.term > first.term).await;
    // A few more scrapes.
    tokio::time::sleep(Duration::from_secs(5)).await;

    let mut checked = 0;
    let mut failures = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("dashboards"))
        .expect("dashboards/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no dashboards");
    for file in &files {
        let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let exprs = expressions(&dashboard);
        assert!(!exprs.is_empty(), "{} has no Prometheus query", file.display());
        // Every metric a query names must itself have data, so that a fallback such as
        // `... or on() vector(-1)` cannot hide a metric the programs never export.
        let mut names: Vec<String> = exprs.iter().flat_map(|(_, e)| metric_names(e)).collect();
        names.sort();
        names.dedup();
        for name in names {
            checked += 1;
            match query(prom, &name) {
                Ok(0) => failures.push(format!("{}: metric {name} has no series", file.display())),
                Ok(_) => {}
                Err(e) => failures.push(format!("{}: metric {name}: {e}", file.display())),
            }
        }
        for (what, expr) in exprs {
            checked += 1;
            match query(prom, &expr) {
                Ok(0) => failures.push(format!("{}: {what}: no series for {expr}", file.display())),
                Ok(_) => {}
                Err(e) => failures.push(format!("{}: {what}: {e} for {expr}", file.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} dashboard queries and metric names failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{checked} dashboard queries and metric names returned series");
    let _ = client.stop_election(pb::StopElectionRequest { election_id: k.election_id }).await;
    let _ = std::fs::remove_dir_all(&dir);
}
