//! The lab on a projector: a 1280 x 720 window in chromium. Every page a
//! class opens (the lab, a kept election with a failover, two elections
//! compared, a check's result) fits the window's width, the lab's text is
//! at least 12 px, and a refused start shows its reason where the student
//! is looking. Needs chromium and chromedriver as t16 does.

use ringleader_proto::v1 as pb;
use serde_json::Value;

use crate::browser::{Browser, Served, chromedriver};

/// The projector's window.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;

/// Assert the page `what` has no horizontal scroll: the document is no wider than the window.
/// What the window shows is saved in the temporary directory, to be looked at.
fn fits(b: &Browser, what: &str) {
    let (scroll, inner) = b.widths();
    let shot = std::env::temp_dir().join(format!("ringleader-t20-{}.png", what.replace(' ', "-")));
    b.screenshot(&shot);
    println!("{what}: document {scroll} px wide in a window of {inner} px (seen: {})", shot.display());
    assert!(inner > 0.0 && scroll <= inner, "{what}: the page is {scroll} px wide in a {inner} px window");
}

/// Assert the element `css` (on the page `what`) is inside the viewport, wholly.
fn in_view(b: &Browser, css: &str, what: &str) {
    let (w, h) = b.viewport();
    let r = b.rect(css).unwrap_or_else(|| panic!("{what}: no {css}"));
    println!("{what}: {css} at {r:?} in a {w} x {h} viewport");
    assert!(r[2] > r[0] && r[3] > r[1], "{what}: {css} is not drawn: {r:?}");
    assert!(r[0] >= 0.0 && r[1] >= 0.0 && r[2] <= w && r[3] <= h, "{what}: {css} at {r:?}, out of {w} x {h}");
}

/// Every visible text of the element `css` selects: its computed font size, the smallest first,
/// with the text it sizes.
fn font_sizes(b: &Browser, css: &str) -> Vec<(f64, String)> {
    let v = b.run(&format!(
        "const out = []; const root = document.querySelector({});\
         const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);\
         for (let t = walk.nextNode(); t; t = walk.nextNode()) {{\
           if (!t.textContent.trim()) continue;\
           const e = t.parentElement; if (!e || e.closest('[hidden]') || e.getClientRects().length === 0) continue;\
           out.push([parseFloat(getComputedStyle(e).fontSize), t.textContent.trim().slice(0, 40)]);\
         }}\
         for (const e of root.querySelectorAll('input, select, button')) {{\
           if (e.closest('[hidden]') || e.getClientRects().length === 0) continue;\
           out.push([parseFloat(getComputedStyle(e).fontSize), e.tagName.toLowerCase() + ' ' + (e.name || e.id)]);\
         }}\
         return out;",
        serde_json::json!(css)
    ));
    let mut sizes: Vec<(f64, String)> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p[0].as_f64().unwrap_or(0.0), p[1].as_str().unwrap_or("").to_string()))
        .collect();
    sizes.sort_by(|a, b| a.0.total_cmp(&b.0));
    sizes
}

/// The diagrams' text on the page, in screen pixels: each SVG text's font size times the scale
/// its picture is drawn at (its width on screen over its own), the smallest first. Printed, not
/// asserted: the diagrams' sizes are the drawing's.
fn diagram_text(b: &Browser, css: &str) -> Vec<f64> {
    let v = b.run(&format!(
        "const out = []; for (const svg of document.querySelectorAll({})) {{\
           const own = Number(svg.getAttribute('width')); const drawn = svg.getBoundingClientRect().width;\
           if (!own || !drawn) continue;\
           for (const t of svg.querySelectorAll('text')) {{\
             if (t.getClientRects().length === 0) continue;\
             out.push(parseFloat(getComputedStyle(t).fontSize) * drawn / own);\
           }}\
         }} return out;",
        serde_json::json!(css)
    ));
    let mut sizes: Vec<f64> = v.as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
    sizes.sort_by(f64::total_cmp);
    let widths = b.run(&format!(
        "return Array.from(document.querySelectorAll({})).map(s => [Number(s.getAttribute('width')), \
         Math.round(s.getBoundingClientRect().width)]);",
        serde_json::json!(css)
    ));
    println!("{css}: [own width, drawn width] {widths}; smallest text on screen {:?} px", &sizes[..sizes.len().min(3)]);
    sizes
}

/// In chromium at 1280 x 720: the lab fits the window's width and every text of its start form
/// is at least 12 px; n = 1 is refused with its reason beside n, inside the viewport (the page
/// scrolled back up to it from the Run button), and the status beside Run says the start was
/// refused; a fault's recovery the form cannot schedule is refused beside the fault row, in view
/// (before, the form was 1,957 px wide and that reason sat at x = 2,005). A SIMULATED kept bully
/// whose leader crashes, its election page; a comparison of two elections on the same ids; and
/// a check's counterexample on the lab: each page fits the window's width.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lab_fits_a_projector() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(4, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    let mut client = served.client.clone();
    let mut compared = Vec::new();
    for algorithm in ["as-far", "stages"] {
        let start = pb::StartElectionRequest {
            algorithm: algorithm.into(),
            mode: pb::Mode::Simulated as i32,
            size: 8,
            id_order: pb::IdOrder::Random as i32,
            seed: 3,
            diagram: true,
            wait: true,
            ..Default::default()
        };
        compared.push(client.start_election(start).await.unwrap().into_inner().election_id);
    }
    tokio::task::spawn_blocking(move || {
        let b = Browser::sized(&driver, WIDTH, HEIGHT);
        let (w, h) = b.viewport();
        println!("viewport {w} x {h}");
        b.go(&format!("{base}/"));
        tracing::info!("--- the lab");
        fits(&b, "the lab");
        let sizes = font_sizes(&b, "#start");
        println!("the start form's smallest texts: {:?}", &sizes[..sizes.len().min(5)]);
        assert!(sizes.len() > 20, "texts measured: {sizes:?}");
        assert!(sizes[0].0 >= 12.0, "a text under 12 px on the lab's form: {:?}", sizes[0]);

        tracing::info!("--- n = 1 refused: its reason beside n, in view");
        b.type_into("input[name=size]", "1");
        b.click("#run");
        b.wait_until("return document.querySelector('.error[data-for=size]').textContent !== '';", "n refused");
        assert_eq!(b.text(".error[data-for=size]"), "size: an election needs at least 2 positions, got 1");
        in_view(&b, ".error[data-for=size]", "n = 1 refused");
        let status = b.text("#status");
        assert!(status.starts_with("not started: refused"), "the status says what happened: {status:?}");
        let beside = b.run(
            "const f = document.querySelector('input[name=size]').getBoundingClientRect(); \
             const e = document.querySelector('.error[data-for=size]').getBoundingClientRect(); \
             return e.left >= f.right && e.top < f.bottom && e.bottom > f.top;",
        );
        assert_eq!(beside, Value::Bool(true), "the reason is beside n, on its row");
        fits(&b, "the lab with a refusal");

        tracing::info!("--- a recovery the form cannot schedule: refused beside the fault row, in view");
        b.go(&format!("{base}/"));
        b.run(
            "const s = document.querySelector('select[name=algorithm]'); s.value = 'bully'; \
               s.dispatchEvent(new Event('change'));",
        );
        b.click("input[name=mode][value=simulated]");
        b.click("input[name=keep_leader]");
        b.run("document.querySelector('select[name=fault]').value = 'crash_leader';");
        b.type_into("input[name=undo_at_ms]", "900");
        b.click("#run");
        let fault = ".error[data-for=\"simulation.faults\"]";
        b.wait_until(&format!("return document.querySelector('{fault}').textContent !== '';"), "the fault refused");
        assert!(b.text(fault).contains("not known in advance"), "{}", b.text(fault));
        in_view(&b, fault, "the fault refused");
        fits(&b, "the lab with the fault refused");

        tracing::info!("--- a kept bully whose leader crashes: its page");
        b.type_into("input[name=undo_at_ms]", "0");
        b.type_into("input[name=horizon_ms]", "2000");
        b.click("#run");
        b.wait_until("return location.pathname.startsWith('/elections/e');", "the election's page opens");
        b.wait_until(
            "return (document.getElementById('verdict') || {}).textContent.startsWith('FINISHED');",
            "it runs to its horizon",
        );
        b.wait_until("return document.querySelectorAll('.topo-node').length === 8;", "its topology");
        assert_eq!(b.run("return document.getElementById('failovers').rows.length;"), Value::from(2), "a failover");
        fits(&b, "a kept election with a failover");
        diagram_text(&b, "#diagram svg");

        tracing::info!("--- two elections compared");
        b.go(&format!("{base}/compare/{}/{}", compared[0], compared[1]));
        b.wait_until("return document.querySelectorAll('.panel .topo-node').length === 16;", "both topologies");
        fits(&b, "the comparison");
        diagram_text(&b, ".panel .diagram svg");
        // One time scale: a message sent at time t leaves at the same x in both diagrams.
        let sends = b.run(
            "return Array.from(document.querySelectorAll('.panel')).map(p => \
             Array.from(p.querySelectorAll('.diagram .msg[data-step]')).map(a => \
             [Number(a.dataset.at), Number((a.tagName === 'line' ? a : a.querySelector('line')).getAttribute('x1'))]));",
        );
        let sends: Vec<Vec<(f64, f64)>> = serde_json::from_value(sends).unwrap();
        let mut same_time = 0;
        for &(t, x) in &sends[0] {
            for &(u, y) in &sends[1] {
                if t == u {
                    assert!((x - y).abs() < 0.6, "sent at {t}: x = {x} above, {y} below");
                    same_time += 1;
                }
            }
        }
        assert!(same_time > 0, "some messages sent at the same time in both: {sends:?}");
        let so_far = "return Array.from(document.querySelectorAll('.panel .so-far')).map(s => s.textContent);";
        let all: Vec<String> = sends.iter().map(|s| format!("{} messages in all", s.len())).collect();
        assert_eq!(b.run(so_far), serde_json::json!(all), "at the end, every message");
        b.click("#first");
        b.wait_until(
            "return Array.from(document.querySelectorAll('.panel .so-far')).every(s => s.dataset.sent === '0');",
            "no message sent at the start",
        );
        assert_eq!(b.text(".panel .so-far"), format!("0 of {} messages sent so far", sends[0].len()));
        for _ in 0..12 {
            b.click("#forward");
        }
        let sent = "return Array.from(document.querySelectorAll('.panel')).map(p => [Number(p.querySelector('.so-far').dataset.sent), \
                    Array.from(p.querySelectorAll('.diagram .msg[data-step]')).filter(a => a.style.display !== 'none').length]);";
        b.wait_until(
            &format!("const s = (function () {{ {sent} }})(); return s.every(([said, shown]) => said === shown) && s.some(([said]) => said > 0);"),
            "the messages so far follow the step bar",
        );

        tracing::info!("--- a check's counterexample");
        b.go(&format!("{base}/"));
        b.run("const s = document.querySelector('#check select[name=algorithm]'); s.value = 'stages';");
        b.click("#check input[name=any_order]");
        b.click("#check-run");
        b.wait_until("return !document.getElementById('check-result').hidden;", "the check's verdict");
        assert!(b.text("#check-verdict").contains("BROKEN"), "{}", b.text("#check-verdict"));
        b.click("#check-end");
        fits(&b, "the check's counterexample");
        diagram_text(&b, "#check-diagram svg");
        let logged: Vec<String> =
            b.console_but("/lab/start - Failed to load resource");
        assert_eq!(logged, Vec::<String>::new(), "console messages");
    })
    .await
    .unwrap();
}

/// In chromium, a controller taking one check at a time while a long check (kept bully with a
/// partition) holds the place: the lab's check waits, and the status beside Check says
/// "waiting: position 1 in the queue"; once the long check's caller goes, the waiting check runs
/// and its verdict shows (Stages on links that reorder: BROKEN).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_check_shows_its_place_in_the_queue() {
    use tokio_stream::StreamExt as _;
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[("RINGLEADER__CONTROLLER__MAX_CONCURRENT_CHECKS", "1")]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    let hold =
        pb::CheckRequest { algorithm: "bully".into(), kept: true, partitions: 1, timeout_s: 600, ..Default::default() };
    let mut blocker = served.client.clone().check_algorithm(hold).await.unwrap().into_inner();
    let first = blocker.next().await.unwrap().unwrap();
    assert!(
        matches!(first.kind, Some(pb::check_event::Kind::Queued(pb::CheckQueued { position: 0, .. }))),
        "the long check runs: {first:?}"
    );
    let b = tokio::task::spawn_blocking(move || {
        let b = Browser::sized(&driver, WIDTH, HEIGHT);
        b.go(&format!("{base}/"));
        b.run("const s = document.querySelector('#check select[name=algorithm]'); s.value = 'stages';");
        b.click("#check input[name=any_order]");
        b.click("#check-run");
        b.wait_until(
            "return document.getElementById('check-status').textContent.startsWith('waiting: position 1 in the queue');",
            "the check's place in the queue",
        );
        in_view(&b, "#check-status", "the place in the queue");
        b
    })
    .await
    .unwrap();
    tracing::info!("--- the long check's caller goes: the lab's check runs");
    drop(blocker);
    tokio::task::spawn_blocking(move || {
        b.wait_until("return !document.getElementById('check-result').hidden;", "the check's verdict");
        assert!(b.text("#check-verdict").contains("BROKEN"), "{}", b.text("#check-verdict"));
        assert!(!b.text("#check-status").starts_with("waiting"), "{}", b.text("#check-status"));
    })
    .await
    .unwrap();
}
