//! A controller driving external nodes (`--nodes`) says which of them do not
//! answer, instead of serving as if all were there.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_tests::{Proc, controller_binary, free_port, node_binary};

/// A `ringleader-node` on 127.0.0.1:`port`, once it takes connections.
fn node(name: &str, port: u16) -> Proc {
    let child = Command::new(node_binary())
        .args(["--listen", &format!("127.0.0.1:{port}"), "--name", name])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ringleader-node");
    let node = Proc(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{name} does not listen on {port} within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    node
}

/// The first line of the log at `path` that has every one of `words`, waiting up to 30 s for it.
fn line_with(path: &Path, words: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(line) = log.lines().find(|l| words.iter().all(|w| l.contains(w))) {
            return line.to_string();
        }
        assert!(Instant::now() < deadline, "no line with {words:?} within 30 s:\n{log}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A controller started with `--nodes` naming one running node and one address nobody answers logs a
/// WARN, within about `rpc_timeout_ms` (here 1 s), naming the silent address (not the one that answers)
/// and what it does meanwhile; once a node starts there, an INFO says every node answers. Failed
/// before the fix: the controller logged no warning at all and served as if both were there.
#[test]
fn a_controller_names_the_nodes_that_do_not_answer() {
    let (api, up, silent) = (free_port(), free_port(), free_port());
    let _up = node("up", up);
    let (up_addr, silent_addr) = (format!("http://127.0.0.1:{up}"), format!("http://127.0.0.1:{silent}"));
    let log = std::env::temp_dir().join(format!("ringleader-silent-nodes-{}-{api}.log", std::process::id()));
    let file = std::fs::File::create(&log).expect("log file");
    let child = Command::new(controller_binary())
        .args(["--host", "127.0.0.1", "--port", &api.to_string(), "--nodes", &format!("{up_addr},{silent_addr}")])
        .env("RUST_LOG", "info")
        .env("RINGLEADER__CONTROLLER__RPC_TIMEOUT_MS", "1000")
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("spawn ringleader-controller");
    let _controller = Proc(child);

    let warn = line_with(&log, &["WARN", "did not answer"]);
    assert!(warn.contains(&silent_addr), "the warning names {silent_addr}: {warn}");
    assert!(!warn.contains(&up_addr), "the warning names only the silent node, not {up_addr}: {warn}");
    assert!(warn.contains("retr"), "the warning says the controller keeps trying: {warn}");

    let _late = node("late", silent);
    let info = line_with(&log, &["INFO", "every node answers"]);
    let _ = std::fs::remove_file(&log);
    assert!(info.contains("2"), "{info}");
}
