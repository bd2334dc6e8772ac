//! The lab page (`/` on the controller's HTTP port) in a real browser:
//! elections started from its form, refusals shown by the field at fault.
//! Needs chromium and chromedriver as t10 does.

use serde_json::Value;

use crate::browser::{Browser, Served, chromedriver};

/// In chromium: the lab loads with no console message; ids typed "5 1 8 3" with id 1 unticked as
/// an initiator, SIMULATED, causal axis, labels, and Run open the new election's page: as-far on
/// 4 nodes with 3 initiators, every node agreeing on id 8, drawn on the causal axis with labels. n = 1 is refused beside the n field (the API's
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
        b.run("document.querySelector('select[name=axis]').value = 'causal'; return true;");
        b.click("input[name=labels]");
        b.click("#run");
        b.wait_until("return location.pathname.startsWith('/elections/e');", "the election's page opens");
        b.wait_until("return document.getElementById('verdict') !== null;", "the page loads");
        let title = b.text("h1");
        assert_eq!(title, "as-far · SIMULATED · n = 4, k = 3", "{title}");
        let drawn = b.run(
            "const svg = document.querySelector('#diagram svg'); \
             return [svg.dataset.axis || '', document.querySelectorAll('#diagram .label').length];",
        );
        assert!(drawn[0].as_str().is_some_and(|a| a.contains("causal")), "the axis chosen: {drawn}");
        assert!(drawn[1].as_u64().is_some_and(|n| n > 0), "labels asked for: {drawn}");
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
        start_kept_bully_of_4(&b);
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
            b.console_but("/lab/act - Failed to load resource");
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
        let logged: Vec<String> = b.console_but("/lab/start - Failed to load resource");
        assert_eq!(logged, Vec::<String>::new(), "console messages");
    })
    .await
    .unwrap();
}

/// In chromium: the explorer by hand. Kept bully on 3 nodes with a crash, explored from the check
/// form's fields: the first choices are the three starts in words, with every node in the table.
/// Choosing id 2's start and then id 1's lists them in that order among the steps so far; the
/// first choice is taken until a node's state changes, which its row marks; "back" pops the last
/// choice (one step fewer, every node as it was before it). Stages on links that reorder, followed
/// by clicks along the check's own counterexample (its steps in words), ends with "no node errs"
/// broken in red at its last step, the node's error said and no choice left. An explorer asked
/// for n = 5 is refused beside n.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_explorer_takes_steps_by_hand_and_back() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(2, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        b.go(&format!("{base}/"));
        let texts =
            |css: &str| b.run(&format!("return Array.from(document.querySelectorAll('{css}')).map(e => e.textContent);"));
        let rows = "return Array.from(document.querySelectorAll('#explore-nodes tbody tr'))\
                    .map(r => [r.dataset.id, r.cells[2].textContent, r.cells[3].textContent, r.dataset.changed]);";
        let taken = |k: usize| {
            b.wait_until(&format!("return document.querySelectorAll('#explore-steps li').length === {k};"), "the step")
        };
        let choose = |choice: usize, k: usize| {
            b.click(&format!("#explore-choices button[data-choice='{choice}']"));
            taken(k);
        };

        tracing::info!("--- kept bully, 3 nodes, a crash: the first state");
        b.run("document.querySelector('#check select[name=algorithm]').value = 'bully';");
        b.click("#check input[name=kept]");
        b.type_into("#check input[name=crashes]", "1");
        b.click("#explore-run");
        b.wait_until("return !document.getElementById('explore').hidden;", "the explorer opens");
        let starts = ["id 1 wakes up and starts", "id 2 wakes up and starts", "id 3 wakes up and starts"];
        assert_eq!(texts("#explore-choices button"), serde_json::json!(starts));
        let first = b.run(rows);
        assert_eq!(first.as_array().map(Vec::len), Some(3), "every node in the table: {first}");
        assert!(first.as_array().unwrap().iter().all(|r| r[3] == "false"), "nothing changed yet: {first}");

        tracing::info!("--- id 2 starts, then id 1: in that order");
        choose(1, 1);
        let mut before = b.run(rows);
        choose(0, 2);
        assert_eq!(texts("#explore-steps li"), serde_json::json!(["id 2 wakes up and starts", starts[0]]));

        tracing::info!("--- the first choice until a node's state changes, then back");
        let changed = "return Array.from(document.querySelectorAll('#explore-nodes tbody tr'))\
                       .filter(r => r.dataset.changed === 'true' && r.cells[2].querySelector('mark')).length;";
        let mut k = 2;
        while b.run(changed) == 0 {
            assert!(k < 30, "no node's state changed in {k} steps");
            before = b.run(rows);
            choose(0, k + 1);
            k += 1;
        }
        assert_ne!(b.run(rows), before, "the state shown changed");
        b.click("#explore-back");
        taken(k - 1);
        assert_eq!(b.run(rows), before, "one step back, every node as it was");
        assert!(b.text("#explore-where").contains("after "), "{}", b.text("#explore-where"));

        tracing::info!("--- stages on links that reorder, along the check's counterexample");
        b.run("document.querySelector('#check select[name=algorithm]').value = 'stages';");
        b.click("#check input[name=kept]");
        b.type_into("#check input[name=crashes]", "0");
        b.click("#check input[name=any_order]");
        b.click("#check-run");
        b.wait_until("return !document.getElementById('check-result').hidden;", "the check's verdict");
        let schedule = texts("#check-steps li");
        let schedule: Vec<String> = serde_json::from_value(schedule).unwrap();
        assert!(!schedule.is_empty(), "a counterexample");
        b.click("#explore-run");
        taken(0);
        for (k, words) in schedule.iter().enumerate() {
            let script = format!(
                "const c = Array.from(document.querySelectorAll('#explore-choices button')).find(b => b.textContent === {});\
                 return c ? Number(c.dataset.choice) : -1;",
                serde_json::json!(words)
            );
            let choice = b.run(&script).as_i64().unwrap_or(-1);
            assert!(choice >= 0, "step {}: {words:?} not among {}", k + 1, texts("#explore-choices button"));
            assert_eq!(b.run("return document.querySelectorAll('#explore-properties li.bad').length;"), Value::from(0));
            choose(choice as usize, k + 1);
        }
        let broken = texts("#explore-properties li.bad");
        assert_eq!(broken, serde_json::json!([format!("no node errs: BROKEN since step {}", schedule.len())]));
        assert!(b.text("#explore-error").starts_with("a node erred: "), "{}", b.text("#explore-error"));
        assert_eq!(b.run("return document.querySelectorAll('#explore-choices button').length;"), Value::from(0));

        tracing::info!("--- n = 5 refused beside n");
        b.type_into("#check input[name=n]", "5");
        b.click("#explore-run");
        b.wait_until("return document.querySelector('#check .error[data-for=n]').textContent !== '';", "n refused");
        let refusal = b.text("#check .error[data-for=n]");
        assert!(refusal.starts_with("n: 5 nodes: the explorer takes at most 4"), "{refusal}");
        assert_eq!(b.run("return document.getElementById('explore').hidden;"), Value::Bool(true));

        let logged: Vec<String> =
            b.console_but("/lab/explore - Failed to load resource");
        assert_eq!(logged, Vec::<String>::new(), "console messages on the lab");
    })
    .await
    .unwrap();
}

/// In chromium: Stages on links that reorder, checked, then "open this counterexample in the
/// explorer": the explorer opens on links that may reorder, at the counterexample's last step
/// (its steps taken, "no node errs" broken, the messages still in flight and each node's
/// variables shown), and the address names that path; the address opened
/// afresh shows the same place. With the box unticked, the explorer's links are FIFO. A check
/// whose property holds offers no step buttons and no explorer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counterexample_opens_in_the_explorer_at_its_address() {
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(0, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        b.go(&format!("{base}/"));
        let texts = |css: &str| {
            b.run(&format!("return Array.from(document.querySelectorAll('{css}')).map(e => e.textContent);"))
        };
        b.run("document.querySelector('#check select[name=algorithm]').value = 'stages';");
        b.click("#check input[name=any_order]");
        b.click("#check-run");
        b.wait_until("return !document.getElementById('check-result').hidden;", "the check's verdict");
        let schedule = texts("#check-steps li");
        b.click("#check-explore");
        b.wait_until("return !document.getElementById('explore').hidden;", "the explorer opens");
        assert_eq!(texts("#explore-steps li"), schedule, "the counterexample's steps, taken");
        let broken = texts("#explore-properties li.bad");
        assert_eq!(broken[0].as_str().map(|t| t.starts_with("no node errs: BROKEN")), Some(true), "{broken}");
        assert!(
            b.text("#explore-where").contains("on links that may reorder messages"),
            "{}",
            b.text("#explore-where")
        );
        b.screenshot(&std::env::temp_dir().join("ringleader-t16-explorer.png"));
        let flight: Vec<String> = serde_json::from_value(texts("#explore-flight li")).unwrap();
        assert!(!flight.is_empty(), "messages still in flight at the violation");
        assert!(flight.iter().all(|m| m.starts_with("id ") && m.contains(" to id ")), "{flight:?}");
        let variables: Vec<String> = serde_json::from_value(texts("#explore-nodes td.variables")).unwrap();
        assert_eq!(variables.len(), 3, "{variables:?}");
        assert!(variables.iter().all(|v| v.starts_with("id: ") && v.contains("stage: ")), "{variables:?}");
        let address = b.run("return location.href;").as_str().unwrap_or_default().to_string();
        assert!(address.contains("#explore?") && address.contains("any_order=true"), "{address}");
        assert_eq!(b.run("return document.getElementById('explore-link').href;").as_str(), Some(address.as_str()));

        b.go("about:blank");
        b.go(&address);
        b.wait_until(
            &format!(
                "return document.querySelectorAll('#explore-steps li').length === {};",
                schedule.as_array().unwrap().len()
            ),
            "the address opens the explorer at its path",
        );
        assert_eq!(texts("#explore-steps li"), schedule);

        b.go(&format!("{base}/"));
        b.run("document.querySelector('#check select[name=algorithm]').value = 'as-far';");
        b.click("#explore-run");
        b.wait_until("return !document.getElementById('explore').hidden;", "the explorer opens");
        assert!(b.text("#explore-where").contains("on FIFO links"), "{}", b.text("#explore-where"));
        b.click("#check-run");
        b.wait_until("return !document.getElementById('check-result').hidden;", "as-far's verdict");
        assert!(b.text("#check-verdict").contains("holds"), "{}", b.text("#check-verdict"));
        let offered =
            "return ['check-controls', 'check-explore'].map(id => document.getElementById(id).offsetParent !== null);";
        assert_eq!(b.run(offered), serde_json::json!([false, false]), "nothing to step through or explore");
        assert_eq!(b.console(), Vec::<String>::new(), "console messages on the lab");
    })
    .await
    .unwrap();
}

/// In chromium, a controller with `auth.protect_reads`: the lab's address shows the sign-in page
/// instead of the lab; the full token typed there once opens the lab, which starts a kept bully
/// whose page follows it while it runs (its `record.json` read with the tab's session cookie)
/// until one leader shows, and stops it (a call that changes state, with the token the tab
/// kept); no console message but the first page's 401. Before, the lab and every page were read
/// without a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_reads_sign_a_browser_in_once() {
    let Some(driver) = chromedriver() else { return };
    let env = [
        ("RINGLEADER__AUTH__TOKEN", "full-token-16"),
        ("RINGLEADER__AUTH__READ_TOKEN", "read-token-16"),
        ("RINGLEADER__AUTH__PROTECT_READS", "true"),
    ];
    let served = Served::start(4, &env).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        b.go(&format!("{base}/"));
        b.wait_until("return document.getElementById('sign-in') !== null;", "the sign-in page");
        assert!(b.run("return document.querySelector('select[name=algorithm]') === null;") == Value::Bool(true));
        b.type_into("#token", "full-token-16");
        b.click("#sign-in");
        b.wait_until("return document.querySelector('select[name=algorithm]') !== null;", "the lab, signed in");
        start_kept_bully_of_4(&b);
        b.wait_until(
            "return Array.from(document.querySelectorAll('#topology-view .topo-node'))\
             .filter(g => g.dataset.state === 'leader').length === 1;",
            "one leader shown, from record.json read while it runs",
        );
        b.click("#stop");
        b.wait_until(
            "return (document.getElementById('verdict') || {}).textContent.startsWith('FINISHED');",
            "stopped with the tab's token",
        );
        let logged: Vec<String> = b.console_but("401");
        assert_eq!(logged, Vec::<String>::new(), "console messages");
    })
    .await
    .unwrap();
}

/// In chromium: the lab's front page shows the cluster. An operator's node-wide crash of node-2
/// shows node-2 CRASHED and the fault node-wide; its own "clear" button clears it and node-2 is
/// up again. A crash scoped to a running kept leadership shows with its election, and "Clear
/// every fault the lab set" clears it, leaving no fault held. Before, the front page had no way
/// to see or recover a crashed node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_page_shows_the_cluster_and_clears_faults() {
    use ringleader_proto::v1 as pb;
    let Some(driver) = chromedriver() else { return };
    let served = Served::start(4, &[]).await;
    let base = format!("http://127.0.0.1:{}", served.web);
    let mut client = served.client.clone();
    let crash = |node: &str, election_id: &str| pb::InjectFaultRequest {
        kind: Some(pb::inject_fault_request::Kind::Crash(pb::CrashFault { node: node.into(), ..Default::default() })),
        election_id: election_id.into(),
        ..Default::default()
    };
    client.inject_fault(crash("node-2", "")).await.unwrap();
    let b = tokio::task::spawn_blocking(move || {
        let b = Browser::start(&driver);
        b.go(&format!("{base}/"));
        b.wait_until(
            "const n = document.querySelector('#cluster-nodes [data-node=\"node-2\"]'); return !!n && n.dataset.state === 'crashed';",
            "node-2 shown crashed",
        );
        assert!(b.text("#cluster-nodes").starts_with("4 nodes, 3 up, 1 down: "), "{}", b.text("#cluster-nodes"));
        let fault = b.text("#cluster-faults li");
        assert!(fault.starts_with("crash node-2 (node-wide)"), "{fault}");
        assert_eq!(b.run("return document.getElementById('cluster-clear').hidden;"), Value::Bool(true), "no lab fault");
        b.click("#cluster-faults li button.clear-one");
        b.wait_until(
            "return document.querySelector('#cluster-nodes [data-node=\"node-2\"]').dataset.state === 'up' && \
             document.querySelectorAll('#cluster-faults li[data-fault]').length === 0;",
            "node-2 up again, no fault held",
        );
        b
    })
    .await
    .unwrap();
    tracing::info!("--- a crash scoped to a running kept leadership, cleared as the lab's");
    let kept = pb::StartElectionRequest {
        algorithm: "bully".into(),
        size: 4,
        keep_leader: true,
        mode: pb::Mode::Live as i32,
        ..Default::default()
    };
    let election = client.start_election(kept).await.unwrap().into_inner().election_id;
    // As a student does from its page: once it leads. (A scoped crash that lands before a node of
    // a kept leadership is started fails the start, naming the crash.)
    let agreed = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let asked = pb::GetLeaderRequest { election_id: election.clone() };
        if client.get_leader(asked).await.is_ok_and(|l| l.get_ref().agreed) {
            break;
        }
        assert!(std::time::Instant::now() < agreed, "the kept bully agrees on a leader");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    client.inject_fault(crash("node-1", &election)).await.unwrap();
    let scoped = election.clone();
    tokio::task::spawn_blocking(move || {
        let listed = format!(
            "return Array.from(document.querySelectorAll('#cluster-faults li')).some(li => li.dataset.scope === '{scoped}');"
        );
        // Up to 40 s: a loaded machine reads the cluster slowly.
        for _ in 0..200 {
            if b.run(&listed) == Value::Bool(true) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        assert_eq!(
            b.run(&listed),
            Value::Bool(true),
            "the scoped fault listed: {} / {} / {}",
            b.text("#cluster-nodes"),
            b.text("#cluster-faults"),
            b.text("#cluster-status")
        );
        let fault = b.text("#cluster-faults li");
        assert!(fault.contains(&format!("election {scoped} only")), "{fault}");
        b.click("#cluster-clear");
        b.wait_until(
            "return document.querySelectorAll('#cluster-faults li[data-fault]').length === 0;",
            "the lab's fault cleared",
        );
        assert!(b.text("#cluster-status").starts_with("cleared 1 fault"), "{}", b.text("#cluster-status"));
        assert_eq!(b.console(), Vec::<String>::new(), "console messages on the lab");
    })
    .await
    .unwrap();
    client.stop_election(pb::StopElectionRequest { election_id: election }).await.unwrap();
}

/// From the lab's form: a kept bully leadership of 4 nodes, then wait for its page to open.
fn start_kept_bully_of_4(b: &Browser) {
    b.run(
        "const s = document.querySelector('select[name=algorithm]'); s.value = 'bully'; \
           s.dispatchEvent(new Event('change'));",
    );
    b.type_into("input[name=size]", "4");
    b.click("input[name=keep_leader]");
    b.click("#run");
    b.wait_until("return location.pathname.startsWith('/elections/e');", "the election's page opens");
}
