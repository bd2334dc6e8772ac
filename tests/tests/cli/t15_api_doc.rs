//! docs/api.md and the README's five-minute start, run as a reader runs them: the document's start command
//! starts the real controller binary, and every `sh` block after it that talks to the controller runs in one
//! bash session (so shell variables carry over from block to block) with the real grpcurl and jq on the PATH
//! (blocks that build, install or run other programs are the reader's own). A block followed by an output block (fenced `text`) must print what it
//! shows: each shown line, trimmed, is found in order among the printed ones, where `…` stands for text that
//! varies from run to run (ids, times, addresses).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_tests::{controller_binary, free_port, grpcurl, in_ci, workspace_root};

/// One fenced block of the document: its info string, its text, and the line it starts on.
#[derive(Debug)]
struct Block {
    info: String,
    text: String,
    line: usize,
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in doc.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block { info: info.trim().to_string(), text: String::new(), line: i + 1 })
            }
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some(b), None) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// Does `line` match `want`, where `…` in `want` stands for any text?
fn line_matches(line: &str, want: &str) -> bool {
    let parts: Vec<&str> = want.split('…').collect();
    let [first, middle @ .., last] = parts.as_slice() else { return line == want };
    let Some(mut rest) = line.strip_prefix(first) else { return false };
    for part in middle {
        let Some(i) = rest.find(part) else { return false };
        rest = &rest[i + part.len()..];
    }
    rest.ends_with(last)
}

/// Does `printed` show every line of `shown` (trimmed), in order?
fn shows(printed: &str, shown: &str) -> Result<(), String> {
    let printed: Vec<&str> = printed.lines().map(str::trim).collect();
    let mut at = 0;
    for want in shown.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "…") {
        match printed[at..].iter().position(|l| line_matches(l, want)) {
            Some(i) => at += i + 1,
            None => return Err(format!("no line matching {want:?} (after line {at} of the output)")),
        }
    }
    Ok(())
}

/// The output-matching rules themselves: in order, `…` within a line, whole lines otherwise.
#[test]
fn shown_output_is_matched_line_by_line_in_order() {
    let printed = "{\n  \"electionId\": \"e1-1a2b\",\n  \"state\": \"FINISHED\",\n  \"n\": 8\n}\n";
    assert!(shows(printed, "\"electionId\": \"e1-…\",\n\"n\": 8").is_ok());
    assert!(shows(printed, "…\n\"state\": \"FINISHED\",").is_ok());
    assert!(shows(printed, "\"n\": 8\n\"state\": \"FINISHED\",").is_err(), "out of order");
    assert!(shows(printed, "\"n\": 80").is_err(), "a line is matched whole");
    assert!(shows(printed, "\"state\": \"FIN…\"").is_err(), "the text after … must end the line");
    assert!(shows(printed, "\"state\": \"FIN…").is_ok());
}

/// Every example of docs/api.md runs against a fresh controller started with the document's own start
/// command, and prints what the document shows.
#[test]
fn every_example_of_the_api_doc_runs_as_shown() {
    run_doc("docs/api.md");
}

/// The README's five-minute start: its election and its kept leadership run as shown.
#[test]
fn the_readme_start_runs_as_shown() {
    run_doc("README.md");
}

/// A reader who runs the README's start and then docs/api.md, which "goes on from here", against the
/// same controller sees every example of both as shown: the README leaves the cluster as it found it
/// (its crash ends with its leadership). Before, its node-wide crash and running leadership made 12 of
/// api.md's blocks fail.
#[test]
fn the_api_doc_runs_after_the_readme_on_one_controller() {
    run_docs(&["README.md", "docs/api.md"]);
}

/// Is this `sh` block the reader's own (building, installing, or running a program other than grpcurl)?
fn not_an_api_call(text: &str) -> bool {
    ["cargo ", "pip install", "ringleader-controller ", "ringleader-check"].iter().any(|w| text.contains(w))
}

fn run_doc(path: &str) {
    run_docs(&[path]);
}

/// Run the examples of `paths`, in order, in one bash session against one controller started with
/// the first document's start command.
fn run_docs(paths: &[&str]) {
    let path = paths.join(" then ");
    let Some(grpcurl) = grpcurl() else { return };
    let jq = Command::new("jq").arg("--version").output().is_ok_and(|o| o.status.success());
    if !jq {
        assert!(!in_ci(), "jq not found: {path}'s examples need it (apt-get install jq)");
        eprintln!("note: skipping the {path} examples: jq not found");
        return;
    }
    let docs: Vec<(&str, Vec<Block>)> =
        paths.iter().map(|p| (*p, blocks(&std::fs::read_to_string(workspace_root().join(p)).unwrap()))).collect();
    // Each document's start command: its first sh block that runs the controller; the first one's arguments
    // start ours.
    let start_of =
        |blocks: &[Block]| blocks.iter().position(|b| b.info == "sh" && b.text.contains("ringleader-controller"));
    let start = &docs[0].1[start_of(&docs[0].1).expect("start")];
    let args: Vec<&str> =
        start.text.split_whitespace().skip_while(|w| !w.ends_with("ringleader-controller")).skip(1).collect();
    assert!(args.contains(&"--local-nodes"), "{args:?}");
    let port = free_port();
    let http = free_port();
    let log = std::env::temp_dir().join(format!("ringleader-doc-{}-{port}.log", std::process::id()));
    let mut controller = Command::new(controller_binary())
        .args(&args)
        .env("RINGLEADER__CONTROLLER__PORT", port.to_string())
        .env("RINGLEADER__TELEMETRY__METRICS_LISTEN", format!("127.0.0.1:{http}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn the controller");
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = format!("127.0.0.1:{port}");
    while !Command::new(&grpcurl).args(["-plaintext", &addr, "list"]).output().is_ok_and(|o| o.status.success()) {
        assert!(Instant::now() < deadline, "not serving:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(200));
    }
    // The examples, one bash session; each block's output (stdout and stderr) between markers.
    let mut examples: Vec<(&str, &[Block], usize, &Block)> = Vec::new();
    for (doc, blocks) in &docs {
        let first = start_of(blocks).expect("start") + 1;
        for (i, b) in blocks.iter().enumerate().skip(first) {
            if b.info == "sh" && !not_an_api_call(&b.text) {
                examples.push((doc, blocks, i, b));
            }
        }
    }
    let mut script = String::from("cd \"$(mktemp -d)\"\n");
    for (k, (_, _, _, b)) in examples.iter().enumerate() {
        let text = b.text.replace("127.0.0.1:50051", &addr).replace("127.0.0.1:9464", &format!("127.0.0.1:{http}"));
        script.push_str(&format!("echo '@@{k}@@'\n{{\n{text}\n}} 2>&1\necho \"@@exit $?@@\"\n"));
    }
    let bin = Path::new(&grpcurl).parent().unwrap();
    let search_path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash").arg("-c").arg(&script).env("PATH", search_path).output().expect("bash");
    let _ = controller.kill();
    let _ = controller.wait();
    let printed = String::from_utf8_lossy(&out.stdout).to_string();
    let mut failures = Vec::new();
    for (k, (path, blocks, i, b)) in examples.iter().enumerate() {
        let begin = format!("@@{k}@@\n");
        let Some(from) = printed.find(&begin) else {
            failures.push(format!("{path}:{}: never ran", b.line));
            continue;
        };
        let body = &printed[from + begin.len()..];
        let end = body.find("@@exit ").unwrap_or(body.len());
        let output = &body[..end];
        let expected = blocks.get(i + 1).filter(|next| next.info == "text");
        // A block whose shown output has no refusal ("ERROR:") must succeed; a refusal shown is matched as text.
        let code = body[end..].strip_prefix("@@exit ").and_then(|r| r.split("@@").next()).unwrap_or("?");
        let refuses = expected.is_some_and(|e| e.text.contains("ERROR:"));
        if code != "0" && !refuses {
            failures.push(format!("{path}:{}: exit {code}:\n{output}", b.line));
        }
        if let Some(e) = expected
            && let Err(why) = shows(output, &e.text)
        {
            failures.push(format!("{path}:{}: {why}; it printed:\n{output}", b.line));
        }
    }
    let _ = std::fs::remove_file(&log);
    assert!(
        failures.is_empty(),
        "{} of {} examples differ:\n\n{}",
        failures.len(),
        examples.len(),
        failures.join("\n\n")
    );
}
