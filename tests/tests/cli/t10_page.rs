//! The election pages in a real browser: Debian's chromium, headless, driven
//! through chromedriver's WebDriver API against the controller binary's
//! HTTP port (the one serving `/metrics`).
//!
//! Needs `chromedriver` and `chromium` on the PATH (`apt-get install chromium
//! chromium-driver`); skipped without them, except in CI (`CI=true`) where
//! that is a failure. The browser is driven as `browser.rs` says.

use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{crash_leader, election, kept, leader_until};
use serde_json::Value;

use crate::browser::{Browser, Served, chromedriver};

/// In chromium: an election's page loads with no console error, shows its verdict, metrics and
/// diagram; stepping from the start reveals one message at a time in sending order (forward,
/// forward, back) and says which, a swallowed id's mark only once its message arrived; pointing at an arrow describes its message (fields, causal
/// time, contents); the index links to every election; and the page of a running kept
/// leadership drops the next heartbeat from the first node clicked to the second (one node is
/// refused) and shows the failover an injected crash causes without being reloaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_election_page_works_in_a_browser() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(5, &[]).await;
    let (web, mut client) = (served.web, served.client.clone());
    let drawn = pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        size: 8,
        id_order: pb::IdOrder::WorstCase as i32,
        diagram_options: Some(pb::DiagramOptions {
            axis: pb::DiagramAxis::Causal as i32,
            labels: true,
            heartbeats: false,
        }),
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
        browser.wait_until("return document.querySelectorAll('#topology-view .topo-node').length === 8;", "topology");
        browser.click("#first");
        assert_eq!(browser.visible_steps(), Vec::<u64>::new(), "at the start, no message");
        assert_eq!(browser.node_states(), ["asleep"; 8], "at the start every node sleeps");
        // Step by event: the first initiator wakes (a change of state), then sends.
        let mut k = 0;
        while browser.visible_steps().is_empty() {
            browser.press("ArrowRight");
            k += 1;
            assert!(k < 20, "no message sent in 20 events");
        }
        assert_eq!(browser.visible_steps(), [0]);
        assert!(
            browser.node_states().iter().any(|s| s != "asleep"),
            "a node woke before it sent: {:?}",
            browser.node_states()
        );
        let info = browser.text("#info");
        assert!(info.starts_with(&format!("step {k} of ")) && info.contains(": sends election from "), "{info}");
        assert!(info.contains(" virtual time"), "times say their unit: {info}");
        assert_eq!(browser.in_flight(), (1, 1), "one arrow in flight, half drawn, one dot on the topology");
        // On to the first arrival: that message lands (whole), the dots follow what is in flight.
        while !browser.text("#info").contains(": receives ") {
            browser.click("#forward");
            k += 1;
        }
        let (arrows_in_flight, dots) = browser.in_flight();
        assert_eq!(arrows_in_flight, dots);
        assert_eq!(arrows_in_flight + 1, browser.visible_steps().len(), "all but the one received are in flight");
        browser.click("#back");
        assert_eq!(browser.in_flight().0, browser.visible_steps().len(), "back: in flight again");
        let events = browser.run("return Number(document.getElementById('slider').max);");
        let place = browser.text("#where");
        assert!(place.starts_with(&format!("event {} of {events}, at ", k - 1)), "{place}");
        // A swallowed id's mark shows once its message has arrived, not while it is in flight.
        let flying_marks = "return document.querySelectorAll('#diagram .msg.flight .swallowed').length;";
        let shown_marks = "return Array.from(document.querySelectorAll('#diagram .swallowed'))\
             .filter(e => getComputedStyle(e).display !== 'none' && e.closest('.msg').style.display !== 'none').length;";
        let mut steps = 0;
        while browser.run(flying_marks).as_u64() == Some(0) {
            browser.click("#forward");
            steps += 1;
            assert!(steps < 300, "no message to be swallowed in flight within 300 events");
        }
        let in_flight_shown = browser.run(
            "return Array.from(document.querySelectorAll('#diagram .msg.flight .swallowed'))\
             .filter(e => getComputedStyle(e).display !== 'none').length;",
        );
        assert_eq!(in_flight_shown.as_u64(), Some(0), "a swallowed mark shown while its message flies");
        browser.click("#last");
        assert_eq!(browser.run(shown_marks).as_u64(), Some(7), "as-far on 8 worst-ordered ids swallows 7 ids");
        assert_eq!(browser.visible_steps().len(), total);
        assert_eq!(browser.in_flight(), (0, 0), "at the end nothing is in flight");
        let states = browser.node_states();
        assert_eq!(states.iter().filter(|s| *s == "leader").count(), 1, "{states:?}");
        assert_eq!(states.iter().filter(|s| *s == "follower").count(), 7, "{states:?}");
        browser.hover("#diagram .msg[data-step=\"3\"]");
        let info = browser.text("#info");
        assert!(info.contains(" from ") && info.contains("causal time ") && info.contains("carrying id "), "{info}");
        browser.click("#diagram .msg[data-step=\"3\"]");
        browser.hover("#diagram .msg[data-step=\"5\"]");
        assert!(browser.text("#info").starts_with("pinned: "), "a click pins a message: {}", browser.text("#info"));
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

    // The running kept leadership: its page drops the next message of a kind on the link from the
    // first node selected to the second (refused with one node), and follows a failover as it happens.
    let b = tokio::task::spawn_blocking(move || {
        b.go(&kept_page);
        assert!(b.text("#verdict").starts_with("RUNNING"), "{}", b.text("#verdict"));
        b.wait_until("return document.querySelectorAll('#topology-view .topo-node').length === 5;", "kept topology");
        b.click("#topology-view .topo-node[data-position=\"2\"]");
        b.click("#drop");
        b.wait_until(
            "return document.getElementById('fault-status').textContent.includes('select two nodes');",
            "refusal",
        );
        b.click("#topology-view .topo-node[data-position=\"1\"]");
        b.type_into("#drop-kind", "heartbeat");
        b.click("#drop");
        b.wait_until("return document.getElementById('fault-status').className === 'ok';", "the drop injected");
        let done = b.text("#fault-status");
        assert!(done.starts_with("link node-2 -> node-1, heartbeat messages, message #1"), "{done}");
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
        // The refused drop's 400 is logged by chromium itself ("Failed to load resource"): not the page's.
        let console: Vec<String> = b.console_but("Failed to load resource");
        assert_eq!(console, Vec::<String>::new(), "console messages while following the kept leadership");
    })
    .await
    .unwrap();
}

/// What a panel of the comparison page shows: its visible arrows' sending times and its hidden
/// ones', and the times its "now" stands at (from the bar's text).
fn panel_times(b: &crate::browser::Browser, panel: usize) -> (Vec<f64>, Vec<f64>) {
    let v = b.run(&format!(
        "const arrows = Array.from(document.querySelectorAll('.panel')[{panel}].querySelectorAll('.msg[data-step]'));\
         const at = (e) => Number(e.dataset.at);\
         return [arrows.filter(e => e.style.display !== 'none').map(at), arrows.filter(e => e.style.display === 'none').map(at)];"
    ));
    let list = |i: usize| v[i].as_array().into_iter().flatten().filter_map(Value::as_f64).collect::<Vec<f64>>();
    (list(0), list(1))
}

/// In chromium: "Same ids, another algorithm" on a finished as-far election's page starts Stages
/// on the same ids, mode, delays and seed and opens both side by side: one costs table, both
/// topologies, one bar of controls. Stepping is synchronised by time: at every step, in both
/// panels, every message shown was sent no later than the bar's "now" and every one hidden no
/// earlier (fails if the two elections' events are concatenated instead of merged by time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_ids_another_algorithm_steps_side_by_side() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[]).await;
    let (web, mut client) = (served.web, served.client.clone());
    let first = pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        size: 6,
        id_order: pb::IdOrder::WorstCase as i32,
        simulation: Some(pb::SimulationOptions { unit_delay: true, ..Default::default() }),
        diagram: true,
        ..election("as-far")
    };
    let first = client.start_election(first).await.unwrap().into_inner();
    let browser = tokio::task::spawn_blocking(move || Browser::start(&driver)).await.unwrap();
    let page = format!("http://127.0.0.1:{web}/elections/{}", first.election_id);
    let messages = first.metrics.as_ref().unwrap().messages as usize;
    tokio::task::spawn_blocking(move || {
        let b = browser;
        b.go(&page);
        b.run("document.querySelector('#again select').value = 'stages'; return true;");
        b.click("#again button");
        b.wait_until("return location.pathname.startsWith('/compare/');", "the comparison page");
        b.wait_until(
            "return document.querySelectorAll('.panel .topology-view .topo-node').length === 12;",
            "both topologies",
        );
        let console: Vec<String> = b.console_but("Failed to load resource");
        assert_eq!(console, Vec::<String>::new(), "console messages on the comparison page");
        let costs = b.text("#costs");
        assert!(costs.contains("as-far") && costs.contains("stages") && costs.contains("n(n+1)/2"), "{costs}");
        assert!(b.text("h1 + p").starts_with("Both on the ids 6 5 4 3 2 1"), "{}", b.text("h1 + p"));
        let (shown, _) = panel_times(&b, 0);
        assert_eq!(shown.len(), messages, "at first every as-far message is shown");
        b.click("#first");
        assert_eq!((panel_times(&b, 0).0.len(), panel_times(&b, 1).0.len()), (0, 0), "at the start, no message");
        let total = b.run("return Number(document.getElementById('slider').max);").as_u64().unwrap();
        let mut both_moved = false;
        for k in 1..=40.min(total) {
            b.press("ArrowRight");
            let place = b.text("#where");
            let now: f64 = place
                .split(", at ")
                .nth(1)
                .and_then(|t| t.split(' ').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("step {k}: no time in {place:?}"));
            assert!(
                place.starts_with(&format!("event {k} of {total}"))
                    && place.contains("as-far ")
                    && place.contains("stages ")
            );
            let (a, b2) = (panel_times(&b, 0), panel_times(&b, 1));
            for (name, (shown, hidden)) in [("as-far", &a), ("stages", &b2)] {
                assert!(shown.iter().all(|&t| t <= now), "step {k}, {name}: a message after now {now}: {shown:?}");
                assert!(hidden.iter().all(|&t| t >= now), "step {k}, {name}: one before now {now} hidden: {hidden:?}");
            }
            both_moved |= !a.0.is_empty() && !b2.0.is_empty();
        }
        assert!(both_moved, "within 40 steps both elections sent something");
        b.click("#last");
        assert_eq!(panel_times(&b, 0).1.len() + panel_times(&b, 1).1.len(), 0, "at the end everything is shown");
    })
    .await
    .unwrap();
}
