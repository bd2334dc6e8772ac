//! Stepping through a finished failover in a real browser: the election page tells the truth
//! at every step (who is down, who leads, and only once they do), and jumps to the failover.
//! Needs chromium and chromedriver as t10 does.

use ringleader_proto::v1 as pb;
use serde_json::Value;

use crate::browser::{Browser, Served, chromedriver};

/// Save a screenshot of the page open in `b` as `name`.png in $RINGLEADER_SCREENSHOTS, if set
/// (to look at what the test saw).
fn screenshot(b: &Browser, name: &str) {
    let Ok(dir) = std::env::var("RINGLEADER_SCREENSHOTS") else { return };
    let png = b.call("GET", "/screenshot", None);
    let path = std::path::Path::new(&dir).join(format!("{name}.png"));
    let mut child = std::process::Command::new("base64")
        .args(["-d", "-i"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(&path).unwrap())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(png.as_str().unwrap_or_default().as_bytes()).unwrap();
    child.wait().unwrap();
    eprintln!("screenshot: {}", path.display());
}

/// A SIMULATED kept bully on ids 3 7 1 8 2 6 4 5 whose leader (id 8, position 3) crashes at 500
/// virtual ms, stepped in chromium at 1280 x 720: at event 0 no row is marked "(leader)" and no
/// node is down; "next failover" jumps to the crash's step, where id 8 is drawn down on the
/// topology (crossed, "down" in the legend beside its swatch) and on its row; one step back it
/// is up and the leader; at the end it is still down and id 7 leads. The topology and the
/// diagram are on screen together, and every state in the legend has a swatch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_failover_steps_truthfully() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[]).await;
    let mut client = served.client.clone();
    let crash = pb::ScheduledFault { at_ms: 500, fault: Some(pb::scheduled_fault::Fault::CrashLeader(true)) };
    let request = pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        diagram: true,
        ids: vec![3, 7, 1, 8, 2, 6, 4, 5],
        simulation: Some(pb::SimulationOptions { horizon_ms: 2_000, faults: vec![crash], ..Default::default() }),
        ..ringleader_tests::kept("bully")
    };
    let e = client.start_election(request).await.unwrap().into_inner();
    assert_eq!(e.failovers.len(), 1, "{:?}", e.failovers);
    let url = format!("http://127.0.0.1:{}/elections/{}", served.web, e.election_id);
    tokio::task::spawn_blocking(move || {
        let b = Browser::sized(&driver, 1280, 720);
        b.go(&url);
        b.wait_until("return document.querySelectorAll('#topology-view .topo-node').length === 8;", "the topology");
        assert_eq!(b.console(), Vec::<String>::new(), "console messages while loading");
        let down_row =
            "return document.querySelector('#diagram g.row[data-position=\"3\"]').classList.contains('is-down');";
        let lead_mark = "const m = document.querySelector('#diagram .row .lead'); \
                         return !!m && m.style.display !== 'none';";
        let legend = "return Array.from(document.querySelectorAll('#topology-legend .legend-item'))\
                      .map(i => [i.dataset.state, i.querySelectorAll('svg.swatch').length]);";

        b.run("document.getElementById('first').scrollIntoView(); return true;");
        // The end: the crashed leader is down, id 7 (position 1) leads.
        let states = b.node_states();
        eprintln!("at the end: {states:?}");
        assert_eq!(states[3], "down", "{states:?}");
        assert_eq!(states[1], "leader", "{states:?}");
        assert_eq!(b.run(down_row), Value::Bool(true));
        assert_eq!(b.run(lead_mark), Value::Bool(true), "the verdict's leader marked at the end");
        screenshot(&b, "t21-end");

        // Event 0: nothing has happened: no leader mark, nobody down or leading.
        b.press("Home");
        let states = b.node_states();
        eprintln!("at event 0: {states:?}");
        assert!(!states.iter().any(|s| s == "leader" || s == "down"), "{states:?}");
        assert_eq!(b.run(lead_mark), Value::Bool(false), "no (leader) before the election");
        assert_eq!(b.run("return document.querySelectorAll('#diagram .row.leading').length;"), Value::from(0));

        // The failover: "next failover" jumps to the crash.
        assert_eq!(b.run("return document.getElementById('next-failover').hidden;"), Value::Bool(false));
        b.click("#next-failover");
        let at = b.text("#where");
        let info = b.text("#info");
        eprintln!("next failover: {at}; {info}");
        assert!(at.ends_with(", at 500 virtual ms"), "{at}");
        assert!(info.contains("id 8 crashes at 500"), "{info}");
        let states = b.node_states();
        assert_eq!(states[3], "down", "drawn down at its crash: {states:?}");
        assert_eq!(b.run(down_row), Value::Bool(true), "its row too");
        let items = b.run(legend);
        eprintln!("legend at the crash: {items}");
        let items = items.as_array().cloned().unwrap_or_default();
        assert!(items.iter().any(|i| i[0] == "down"), "{items:?}");
        assert!(items.iter().all(|i| i[1] == 1), "a swatch each: {items:?}");
        screenshot(&b, "t21-crash");

        // One step before: id 8 is up and leads (its row bold, the old leader).
        b.press("ArrowLeft");
        let states = b.node_states();
        assert_eq!(states[3], "leader", "up and leading before its crash: {states:?}");
        assert_eq!(b.run(down_row), Value::Bool(false));
        assert_eq!(
            b.run(
                "return document.querySelector('#diagram g.row[data-position=\"3\"]').classList.contains('leading');"
            ),
            Value::Bool(true)
        );

        // The topology beside the diagram, both in view once the step controls are at the top.
        b.run("document.getElementById('first').scrollIntoView(); return true;");
        let (_, height) = b.viewport();
        let topology = b.rect("#topology-view").unwrap();
        let diagram = b.rect("#diagram svg").unwrap();
        eprintln!("viewport height {height}: topology {topology:?}, diagram {diagram:?}");
        assert!(topology[2] <= diagram[0] + 1.0, "the topology left of the diagram");
        for r in [topology, diagram] {
            assert!(r[1] >= -1.0 && r[3] <= height + 1.0, "in view: {r:?} of {height}");
        }
        screenshot(&b, "t21-beside");
    })
    .await
    .unwrap();
}

/// A SIMULATED kept Raft on 5 nodes whose leader is cut off from the rest at 500 virtual ms and
/// healed at 1,500, stepped in chromium: "next failover" jumps to the cut, where the leader is
/// ringed as cut off on the topology ("cut off" in the legend) and its row drawn so, and it is
/// not drawn down; one step back it is not cut off; at the end (healed) no node is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_leader_is_drawn_cut_off_while_stepping() {
    use pb::scheduled_fault::Fault as F;
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[]).await;
    let mut client = served.client.clone();
    let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
    let request = pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        diagram: true,
        ids: vec![3, 1, 5, 2, 4],
        simulation: Some(pb::SimulationOptions {
            horizon_ms: 2_500,
            faults: vec![at(500, F::CutOffLeader(true)), at(1_500, F::Heal(true))],
            ..Default::default()
        }),
        ..ringleader_tests::kept("raft")
    };
    let e = client.start_election(request).await.unwrap().into_inner();
    assert!(!e.failovers.is_empty(), "{:?}", e.failovers);
    let url = format!("http://127.0.0.1:{}/elections/{}", served.web, e.election_id);
    tokio::task::spawn_blocking(move || {
        let b = Browser::sized(&driver, 1280, 720);
        b.go(&url);
        b.wait_until("return document.querySelectorAll('#topology-view .topo-node').length === 5;", "the topology");
        let cut = "return Array.from(document.querySelectorAll('#topology-view .topo-node.is-cut'))\
                   .map(g => Number(g.dataset.position));";
        let cut_rows = "return Array.from(document.querySelectorAll('#diagram g.row.is-cut'))\
                        .map(g => Number(g.dataset.position));";
        assert_eq!(b.run(cut), Value::Array(vec![]), "healed at the end");
        b.press("Home");
        b.click("#next-failover");
        let (at, info) = (b.text("#where"), b.text("#info"));
        eprintln!("next failover: {at}; {info}");
        assert!(at.ends_with(", at 500 virtual ms") && info.contains("cut off from the rest"), "{at}; {info}");
        let cut_now = b.run(cut);
        let p = cut_now[0].as_u64().expect("one node cut off");
        assert_eq!(cut_now.as_array().map(Vec::len), Some(1), "{cut_now}");
        assert_eq!(b.run(cut_rows), cut_now, "its row too");
        let states = b.node_states();
        assert_eq!(states[p as usize], "leader", "cut off, not down: the leader still: {states:?}");
        let legend = b.run(
            "return Array.from(document.querySelectorAll('#topology-legend .legend-item')).map(i => i.dataset.state);",
        );
        assert!(legend.as_array().is_some_and(|l| l.iter().any(|s| s == "cut off")), "{legend}");
        screenshot(&b, "t21-cut");
        b.press("ArrowLeft");
        assert_eq!(b.run(cut), Value::Array(vec![]), "not before the cut");
    })
    .await
    .unwrap();
}

/// A SIMULATED kept bully on ids 1..=5 whose follower id 2 crashes at 300 virtual ms and whose
/// leader crashes at 800: "next failover" skips the follower's crash (no failover: its leader
/// stays) and jumps to the leader's. Before, it stopped at every crash or cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_failover_skips_a_followers_crash() {
    use pb::scheduled_fault::Fault as F;
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[]).await;
    let mut client = served.client.clone();
    let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
    let request = pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        diagram: true,
        ids: vec![1, 2, 3, 4, 5],
        simulation: Some(pb::SimulationOptions {
            horizon_ms: 2_000,
            faults: vec![at(300, F::CrashId(2)), at(800, F::CrashLeader(true))],
            ..Default::default()
        }),
        ..ringleader_tests::kept("bully")
    };
    let e = client.start_election(request).await.unwrap().into_inner();
    assert_eq!(e.failovers.len(), 1, "only the leader's crash: {:?}", e.failovers);
    let url = format!("http://127.0.0.1:{}/elections/{}", served.web, e.election_id);
    tokio::task::spawn_blocking(move || {
        let b = Browser::sized(&driver, 1280, 720);
        b.go(&url);
        b.wait_until("return document.querySelectorAll('#topology-view .topo-node').length === 5;", "the topology");
        b.press("Home");
        b.click("#next-failover");
        let at = b.text("#where");
        eprintln!("next failover from the start: {at}; {}", b.text("#info"));
        assert!(at.ends_with(", at 800 virtual ms"), "the leader's crash, not the follower's: {at}");
        assert_eq!(b.node_states()[4], "down", "id 5, the leader, down at its crash");
    })
    .await
    .unwrap();
}

/// The lab's check of kept Raft on 3 nodes with a crash, stepped in chromium: the verdict shows
/// the note that Raft relies on randomised timeouts; at step 0 the crash's marks in the
/// counterexample's diagram are hidden (before, a crash was drawn from the first step on), and
/// at the violation they are shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checks_diagram_shows_a_crash_from_its_step() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::sized(&driver, 1280, 720);
        b.go(&base);
        b.run("const s = document.querySelector('#check select[name=algorithm]'); s.value = 'raft';");
        b.click("#check input[name=kept]");
        b.type_into("#check input[name=crashes]", "1");
        b.click("#check-run");
        b.wait_until("return !document.getElementById('check-result').hidden;", "the check's verdict");
        let verdict = b.text("#check-verdict");
        eprintln!("verdict: {verdict}");
        assert!(verdict.contains("BROKEN") && verdict.contains("Raft relies on randomised timeouts"), "{verdict}");
        let crash_shown = "const d = Array.from(document.querySelectorAll('#check-diagram svg .down')); \
                           return [d.length, d.filter(e => e.style.display !== 'none').length];";
        b.run(
            "const s = document.getElementById('check-slider'); s.value = '0'; \
               s.dispatchEvent(new Event('input')); return true;",
        );
        let at_start = b.run(crash_shown);
        b.click("#check-end");
        let at_end = b.run(crash_shown);
        eprintln!("crash marks [drawn, shown]: at step 0 {at_start}, at the violation {at_end}");
        assert!(at_start[0].as_u64().is_some_and(|n| n > 0), "the diagram draws the crash: {at_start}");
        assert_eq!(at_start[1], Value::from(0), "hidden before its step");
        assert_eq!(at_end[1], at_end[0], "all shown at the violation");
    })
    .await
    .unwrap();
}
