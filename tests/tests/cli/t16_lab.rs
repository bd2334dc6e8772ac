//! The lab page (`/` on the controller's HTTP port) in a real browser:
//! elections started from its form, refusals shown by the field at fault.
//! Needs chromium and chromedriver as t10 does.

use serde_json::Value;

use crate::browser::{Browser, Served, chromedriver};

/// In chromium: the lab loads with no console message; ids typed "5 1 8 3" with id 1 unticked as
/// an initiator, SIMULATED, and Run open the new election's page: as-far on 4 nodes with 3
/// initiators, every node agreeing on id 8. n = 1 is refused beside the n field (the API's
/// `size` refusal, word for word), and the browser stays on the lab. The check form finds the
/// schedule that breaks Stages on links that reorder, lists its steps in words, and steps through
/// its diagram to where "no node errs" breaks; n = 9 is refused beside n.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lab_starts_elections_and_shows_refusals_by_field() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(4, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        b.go(&format!("{base}/"));
        assert_eq!(b.console(), Vec::<String>::new(), "console messages while loading the lab");
        b.run(
            "const s = document.querySelector('select[name=algorithm]'); s.value = 'as-far'; \
               s.dispatchEvent(new Event('change'));",
        );
        b.type_into("input[name=ids]", "5 1 8 3");
        let boxes = b.run("return Array.from(document.querySelectorAll('input.initiator')).map(b => b.value);");
        assert_eq!(boxes, serde_json::json!(["5", "1", "8", "3"]), "one box per typed id");
        b.click("input.initiator[value='1']");
        b.click("input[name=mode][value=simulated]");
        b.click("#run");
        b.wait_until("return location.pathname.startsWith('/elections/e');", "the election's page opens");
        b.wait_until("return document.getElementById('verdict') !== null;", "the page loads");
        let title = b.text("h1");
        assert_eq!(title, "as-far · SIMULATED · n = 4, k = 3", "{title}");
        let verdict = b.text("#verdict");
        assert!(verdict.starts_with("FINISHED: every node agrees on ") && verdict.contains("(id 8)"), "{verdict}");

        b.go(&format!("{base}/"));
        b.type_into("input[name=size]", "1");
        b.click("#run");
        b.wait_until(
            "return document.querySelector('.error[data-for=size]').textContent !== '';",
            "the refusal is shown beside n",
        );
        let refusal = b.text(".error[data-for=size]");
        assert_eq!(refusal, "size: an election needs at least 2 positions, got 1");
        assert_eq!(b.run("return location.pathname;"), Value::from("/"), "still on the lab");

        // The checker: Stages on links that reorder breaks; step through to the violation.
        b.run("const s = document.querySelector('#check select[name=algorithm]'); s.value = 'stages';");
        b.click("#check input[name=any_order]");
        b.click("#check-run");
        b.wait_until("return !document.getElementById('check-result').hidden;", "the check's verdict");
        assert!(b.text("#check-verdict").contains("BROKEN"), "{}", b.text("#check-verdict"));
        let steps = b.run("return Array.from(document.querySelectorAll('#check-steps li')).map(li => li.textContent);");
        assert_eq!(steps[0], Value::from("id 1 wakes up and starts"), "steps in words: {steps}");
        let shown = "return Array.from(document.querySelectorAll('#check-diagram .msg'))\
                     .filter(e => e.style.display !== 'none').length;";
        assert_eq!(b.run(shown), Value::from(0), "before the first step, no message");
        b.click("#check-end");
        let place = b.text("#check-where");
        assert!(place.starts_with("step 6 of 6: ") && place.ends_with("here \"no node errs\" breaks"), "{place}");
        assert!(b.run(shown).as_u64().unwrap_or(0) > 0, "the messages up to the violation");
        b.type_into("#check input[name=n]", "9");
        b.click("#check-run");
        b.wait_until("return document.querySelector('#check .error[data-for=n]').textContent !== '';", "n refused");
        assert!(b.text("#check .error[data-for=n]").starts_with("n: "), "{}", b.text("#check .error[data-for=n]"));

        // Chromium logs the refused calls themselves (400 answers); nothing else may be logged.
        let logged: Vec<String> = b
            .console()
            .into_iter()
            .filter(|m| {
                !m.contains("/lab/start - Failed to load resource")
                    && !m.contains("/lab/check - Failed to load resource")
            })
            .collect();
        assert_eq!(logged, Vec::<String>::new(), "console messages on the lab");
    })
    .await
    .unwrap();
}

/// In chromium: a kept bully started from the lab shows its leader on the topology (coloured by
/// what each node believes) and its diagram so far; clicking the leader and "crash" crashes it
/// through the lab's call, the failover appears in the table, in the diagram (redrawn while it
/// runs: the crash and a second term) and another node leads on the topology; "stop the
/// leadership" ends it and the page reloads FINISHED. A refused call (no node selected) is said
/// on the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_leadership_is_broken_and_stopped_from_its_page() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(4, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        b.go(&format!("{base}/"));
        b.run(
            "const s = document.querySelector('select[name=algorithm]'); s.value = 'bully'; \
               s.dispatchEvent(new Event('change'));",
        );
        b.type_into("input[name=size]", "4");
        b.click("input[name=keep_leader]");
        b.click("#run");
        b.wait_until("return location.pathname.startsWith('/elections/e');", "the election's page opens");
        let leader = "return Array.from(document.querySelectorAll('#topology-view .topo-node'))\
                      .filter(g => g.dataset.state === 'leader').map(g => Number(g.dataset.position));";
        b.wait_until(&format!("const l = (function () {{ {leader} }})(); return l.length === 1;"), "one leader shown");
        let first = b.run(leader)[0].as_u64().unwrap();
        b.wait_until(
            "const t = document.querySelector('#diagram-so-far svg text'); return !!t && t.textContent.includes('so far');",
            "the diagram so far",
        );
        b.click("#crash");
        b.wait_until("return document.getElementById('fault-status').textContent.startsWith('nodes: ');", "refusal");
        b.click(&format!("#topology-view .topo-node[data-position='{first}']"));
        b.click("#crash");
        b.wait_until("return document.getElementById('fault-status').textContent.startsWith('crash ');", "crashed");
        b.wait_until("return document.getElementById('failovers').rows.length === 2;", "the failover in the table");
        // The diagram grows while the leadership runs: the crash and the failover's messages appear.
        b.wait_until(
            "const d = document.querySelector('#diagram-so-far svg'); \
             return !!d && !!d.querySelector('.down') && d.querySelectorAll('.term').length >= 2;",
            "the failover drawn while it runs",
        );
        b.wait_until(
            &format!("const l = (function () {{ {leader} }})(); return l.length === 1 && l[0] !== {first};"),
            "another leader on the topology",
        );
        b.click("#stop");
        b.wait_until(
            "return (document.getElementById('verdict') || {}).textContent.startsWith('FINISHED');",
            "stopped",
        );
        let logged: Vec<String> =
            b.console().into_iter().filter(|m| !m.contains("/lab/act - Failed to load resource")).collect();
        assert_eq!(logged, Vec::<String>::new(), "console messages on the kept leadership's page");
    })
    .await
    .unwrap();
}

/// In chromium: a SIMULATED kept bully from the lab, its leader crashing at 500 virtual ms, runs
/// to its horizon and its page shows it FINISHED with the failover in the table and the crash on
/// the diagram, stepped like any election (back to the start: no message shown). A recovery
/// asked for the crashed leader is refused beside the fault (`simulation.faults`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulated_kept_leadership_with_a_fault_runs_from_the_lab() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(2, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        let fill = |undo: &str| {
            b.go(&format!("{base}/"));
            b.run(
                "const s = document.querySelector('select[name=algorithm]'); s.value = 'bully'; \
                   s.dispatchEvent(new Event('change'));",
            );
            b.click("input[name=mode][value=simulated]");
            b.click("input[name=keep_leader]");
            b.type_into("input[name=horizon_ms]", "2000");
            b.run("document.querySelector('select[name=fault]').value = 'crash_leader';");
            b.type_into("input[name=undo_at_ms]", undo);
            b.click("#run");
        };
        fill("900");
        b.wait_until(
            "return document.querySelector('.error[data-for=\"simulation.faults\"]').textContent !== '';",
            "the recovery of an unknown leader refused beside the fault",
        );
        assert!(b.text(".error[data-for=\"simulation.faults\"]").contains("not known in advance"));
        fill("0");
        b.wait_until("return location.pathname.startsWith('/elections/e');", "the election's page opens");
        b.wait_until(
            "return (document.getElementById('verdict') || {}).textContent.startsWith('FINISHED');",
            "it runs to its horizon",
        );
        assert_eq!(b.run("return document.getElementById('failovers').rows.length;"), Value::from(2));
        assert_eq!(b.run("return document.querySelectorAll('#diagram svg .down').length;"), Value::from(1));
        b.click("#first");
        let shown = "return Array.from(document.querySelectorAll('#diagram svg .msg'))\
                     .filter(e => e.style.display !== 'none').length;";
        assert_eq!(b.run(shown), Value::from(0), "stepped back to the start");
        let logged: Vec<String> =
            b.console().into_iter().filter(|m| !m.contains("/lab/start - Failed to load resource")).collect();
        assert_eq!(logged, Vec::<String>::new(), "console messages");
    })
    .await
    .unwrap();
}
