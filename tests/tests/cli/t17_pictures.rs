//! The pictures in docs/, as a reader's browser draws them: chromium lays out
//! every SVG under docs/ with its real fonts, and the test measures each text
//! label's box. No two labels may overlap, none may cover the mark of a
//! swallowed id or stick out of the picture (the legend is inside it), and no
//! picture may be wider than a page comfortably shows.
//!
//! Needs `chromedriver` and `chromium` (see t10); skipped without them,
//! except in CI.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::browser::{Browser, chromedriver};

/// The widest a picture in docs/ may be, in CSS pixels.
const MAX_WIDTH: f64 = 1_040.0;

/// Every SVG file under `dir`, sorted.
fn pictures(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "svg") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The overlapping pairs of text labels in the picture open in `browser` (each label's words and
/// box), the labels over a swallowed id's mark or out of the picture, the picture's width and its
/// number of swallowed ids' marks. Two boxes overlap if they share more than a pixel each way.
fn overlaps(browser: &Browser) -> (Vec<String>, f64, u64) {
    let v = browser.run(
        "const svg = document.documentElement;
         const boxes = Array.from(document.querySelectorAll('text'))
           .filter(t => t.textContent.trim() !== '' && t.getAttribute('display') !== 'none')
           .map(t => { const r = t.getBoundingClientRect();
                       return {t: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; });
         const out = [];
         for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
           const a = boxes[i], b = boxes[j];
           const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
           if (w > 1 && h > 1) out.push(`\"${a.t}\" and \"${b.t}\" (${w.toFixed(0)} x ${h.toFixed(0)} px at ${a.x0.toFixed(0)},${a.y0.toFixed(0)})`);
         }
         const page = svg.getBoundingClientRect();
         for (const a of boxes) {
           if (a.x0 < page.left - 1 || a.y0 < page.top - 1 || a.x1 > page.right + 1 || a.y1 > page.bottom + 1)
             out.push(`\"${a.t}\" out of the picture (at ${a.x0.toFixed(0)},${a.y0.toFixed(0)})`);
           for (const m of document.querySelectorAll('.swallowed circle')) {
             const r = m.getBoundingClientRect();
             const w = Math.min(a.x1, r.right) - Math.max(a.x0, r.left), h = Math.min(a.y1, r.bottom) - Math.max(a.y0, r.top);
             if (w > 1 && h > 1) out.push(`\"${a.t}\" over a swallowed id's mark at ${r.left.toFixed(0)},${r.top.toFixed(0)}`);
           }
         }
         return [out, svg.getBoundingClientRect().width, document.querySelectorAll('.swallowed').length];",
    );
    let pairs = v[0].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
    (pairs, v[1].as_f64().unwrap_or(0.0), v[2].as_u64().unwrap_or(0))
}

/// Every picture under docs/, laid out by chromium: no two text labels overlap, none covers a
/// swallowed id's mark (there are some) or sticks out of the picture, and none is wider than
/// about a page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_label_in_the_docs_pictures_overprints_another() {
    let Some(driver) = chromedriver() else { return };
    let docs = ringleader_tests::workspace_root().join("docs");
    let files = pictures(&docs);
    assert!(files.len() >= 10, "the pictures of docs/: {files:?}");
    let (found, marks) = tokio::task::spawn_blocking(move || {
        let browser = Browser::start(&driver);
        let (mut found, mut marks) = (Vec::new(), 0);
        for f in &files {
            browser.go(&format!("file://{}", f.display()));
            let (pairs, width, swallowed) = overlaps(&browser);
            let name = f.strip_prefix(&docs).unwrap_or(f).display().to_string();
            if width > MAX_WIDTH {
                found.push(format!("{name}: {width:.0} px wide"));
            }
            found.extend(pairs.into_iter().map(|p| format!("{name}: {p}")));
            marks += swallowed;
        }
        (found, marks)
    })
    .await
    .unwrap();
    assert!(found.is_empty(), "{} problems:\n{}", found.len(), found.join("\n"));
    assert!(marks > 0, "the ring pictures mark swallowed ids, so their check is not empty");
}

/// A kept diagram's failover: the x range of its vote messages (`kinds`) sent at or after the
/// first crash drawn (`data-at` of the first `class="down"`), and the plot's width, from the SVG.
fn failover_span(svg: &str, kinds: &[&str]) -> (f64, f64, usize) {
    let attr = |tag: &str, name: &str| -> Option<f64> {
        let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        tag[at..].split('"').next()?.parse().ok()
    };
    let root = svg.lines().find(|l| l.starts_with("<svg")).unwrap_or_default();
    let plot = attr(root, "data-right").unwrap_or(0.0) - attr(root, "data-left").unwrap_or(0.0);
    let crash = svg.lines().find(|l| l.contains(r#"class="down""#)).and_then(|l| attr(l, "data-at"));
    let crash = crash.expect("a crash drawn");
    let (mut from, mut to, mut count) = (f64::INFINITY, 0.0f64, 0);
    for line in svg.lines().filter(|l| l.starts_with(r#"<line class="msg"#) || l.starts_with(r#"<g class="msg"#)) {
        let kind = line.split(r#"data-kind=""#).nth(1).and_then(|k| k.split('"').next()).unwrap_or_default();
        if !kinds.contains(&kind) || attr(line, "data-at").is_none_or(|t| t < crash) {
            continue;
        }
        count += 1;
        for name in ["x1", "x2"] {
            for part in line.split(&format!(" {name}=\"")).skip(1) {
                if let Some(x) = part.split('"').next().and_then(|v| v.parse::<f64>().ok()) {
                    from = from.min(x);
                    to = to.max(x);
                }
            }
        }
    }
    (to - from, plot, count)
}

/// A kept leadership of `algorithm` on 8 nodes with its leader crashed, its diagram: SIMULATED
/// (crashed at 500 virtual ms, kept for 2 s) or LIVE (on 8 embedded nodes, crashed once a leader
/// is agreed, stopped once another is).
async fn kept_crash_diagram(client: &mut ringleader_tests::Client, algorithm: &str, live: bool) -> String {
    use ringleader_proto::v1 as pb;
    use std::time::Duration;
    let ids = vec![3, 7, 1, 8, 2, 6, 4, 5];
    if !live {
        let crash = pb::ScheduledFault { at_ms: 500, fault: Some(pb::scheduled_fault::Fault::CrashLeader(true)) };
        let request = pb::StartElectionRequest {
            mode: pb::Mode::Simulated as i32,
            wait: true,
            diagram: true,
            ids,
            simulation: Some(pb::SimulationOptions { horizon_ms: 2_000, faults: vec![crash], ..Default::default() }),
            ..ringleader_tests::kept(algorithm)
        };
        let e = client.start_election(request).await.unwrap().into_inner();
        assert_eq!(e.failovers.len(), 1, "{algorithm} SIMULATED: {:?}", e.failovers);
        return e.diagram_svg;
    }
    let request = pb::StartElectionRequest { diagram: true, ids, ..ringleader_tests::kept(algorithm) };
    let e = ringleader_tests::elect(client, request).await;
    let first = ringleader_tests::leader_until(client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.is_some()
    })
    .await;
    ringleader_tests::crash_the_leader(client, &first).await;
    let old = first.leader.as_ref().map(|l| l.id);
    ringleader_tests::leader_until(client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().map(|l| l.id) != old && l.term > first.term
    })
    .await;
    // Let the last answers arrive before the logs are read.
    tokio::time::sleep(Duration::from_millis(300)).await;
    ringleader_tests::stop_kept(client, e.election_id.clone()).await;
    ringleader_tests::clear_faults(client).await;
    let got = client.get_election(pb::GetElectionRequest { election_id: e.election_id }).await.unwrap().into_inner();
    got.diagram_svg
}

/// An 8-node Raft leader crash, SIMULATED and LIVE: in the kept diagram the failover's vote
/// messages (requests and votes after the crash) span at least a third of the plot's width, and
/// the SIMULATED one draws no heartbeats (append_entries) by default; a bully crash's election
/// messages too. Then every kept diagram (Raft and bully, SIMULATED and LIVE) is laid out by
/// chromium, when there is one: no two labels overlap, none sticks out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_failover_gets_a_third_of_the_width_and_labels_apart() {
    let (ctl, mut client) = ringleader_tests::TestController::with_client(8).await;
    let mut pictures = Vec::new();
    for (algorithm, kinds) in
        [("raft", &["raft_vote_request", "raft_vote"][..]), ("bully", &["bully_election", "answer", "coordinator"][..])]
    {
        for live in [false, true] {
            let svg = kept_crash_diagram(&mut client, algorithm, live).await;
            let mode = if live { "LIVE" } else { "SIMULATED" };
            let (span, plot, count) = failover_span(&svg, kinds);
            eprintln!(
                "{algorithm} {mode}: {count} failover messages span {span:.0} of {plot:.0} px ({:.2})",
                span / plot
            );
            assert!(count > 0, "{algorithm} {mode}: the failover's messages drawn");
            assert!(span / plot >= 1.0 / 3.0, "{algorithm} {mode}: {span:.0} of {plot:.0} px");
            assert!(!svg.contains(r#"data-kind="append_entries""#), "{algorithm} {mode}: heartbeats left out");
            pictures.push((format!("{algorithm}-{mode}"), svg));
        }
    }
    ctl.stop().await;
    let Some(driver) = chromedriver() else { return };
    let dir = std::env::temp_dir().join(format!("ringleader-kept-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let found = tokio::task::spawn_blocking(move || {
        let browser = Browser::start(&driver);
        let mut found = Vec::new();
        for (name, svg) in &pictures {
            let path = dir.join(format!("{name}.svg"));
            std::fs::write(&path, svg).unwrap();
            browser.go(&format!("file://{}", path.display()));
            let (pairs, _, _) = overlaps(&browser);
            found.extend(pairs.into_iter().map(|p| format!("{name}: {p}")));
        }
        found
    })
    .await
    .unwrap();
    assert!(found.is_empty(), "{} problems:\n{}", found.len(), found.join("\n"));
}
