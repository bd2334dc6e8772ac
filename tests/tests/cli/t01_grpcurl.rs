use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use ringleader_tests::{controller_binary, free_port, grpcurl};

/// A running `ringleader-controller` process, killed if the test ends early.
struct Controller {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Controller {
    /// Spawn the binary with `args` and `env`, logging to a temporary file.
    fn spawn(args: &[&str], env: &[(&str, &str)], port: u16) -> Controller {
        let log = std::env::temp_dir().join(format!("ringleader-controller-{}-{port}.log", std::process::id()));
        let file = std::fs::File::create(&log).expect("log file");
        let mut cmd = Command::new(controller_binary());
        cmd.args(args).env("RUST_LOG", "info").stdin(Stdio::null()).stdout(file.try_clone().expect("log")).stderr(file);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("spawn ringleader-controller");
        Controller { child, addr: format!("127.0.0.1:{port}"), log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Wait until the health service reports the Controller SERVING.
    fn wait_serving(&mut self, grpcurl: &Path) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("ringleader-controller exited early ({status}):\n{}", self.log());
            }
            let out = run(
                grpcurl,
                &self.addr,
                &["-d", r#"{"service":"ringleader.v1.Controller"}"#],
                &["grpc.health.v1.Health/Check"],
            );
            if out.status.success() && String::from_utf8_lossy(&out.stdout).contains("SERVING") {
                return;
            }
            assert!(Instant::now() < deadline, "not serving within 60 s:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// SIGTERM, then expect a clean exit within 15 s.
    fn terminate(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "exit after SIGTERM: {status}\n{}", self.log());
                return;
            }
            assert!(Instant::now() < deadline, "no exit within 15 s of SIGTERM:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.log);
    }
}

/// `grpcurl -plaintext -max-time 60 FLAGS... ADDR VERB...` (VERB: `list ...`, or a method).
fn run(grpcurl: &Path, addr: &str, flags: &[&str], verb: &[&str]) -> Output {
    Command::new(grpcurl)
        .args(["-plaintext", "-max-time", "60"])
        .args(flags)
        .arg(addr)
        .args(verb)
        .output()
        .expect("run grpcurl")
}

fn stdout_of(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "grpcurl {what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The JSON object following `"key": {` in grpcurl's output (up to its closing brace).
fn object<'a>(json: &'a str, key: &str) -> &'a str {
    let start = json.find(&format!("\"{key}\": {{")).unwrap_or_else(|| panic!("no `{key}` in {json}"));
    let rest = &json[start..];
    &rest[..rest.find('}').unwrap_or(rest.len())]
}

/// The real grpcurl lists ringleader.v1.Controller through v1alpha reflection of the real binary
/// (`--local-nodes 8 --port P`), runs a waited AsFar election to a correct finish, and SIGTERM stops it cleanly.
#[test]
fn grpcurl_drives_the_controller_binary() {
    let Some(grpcurl) = grpcurl() else { return };
    let port = free_port();
    let mut ctl = Controller::spawn(&["--local-nodes", "8", "--port", &port.to_string()], &[], port);
    ctl.wait_serving(&grpcurl);

    let list = stdout_of(&run(&grpcurl, &ctl.addr, &[], &["list"]), "list");
    for service in ["ringleader.v1.Controller", "grpc.health.v1.Health"] {
        assert!(list.lines().any(|l| l == service), "`list` shows {service}: {list}");
    }
    let methods = stdout_of(&run(&grpcurl, &ctl.addr, &[], &["list", "ringleader.v1.Controller"]), "list Controller");
    for rpc in
        ["ListAlgorithms", "GetCluster", "StartElection", "GetElection", "ListElections", "WatchElection", "GetLeader"]
    {
        assert!(methods.contains(&format!("ringleader.v1.Controller.{rpc}")), "{rpc} in {methods}");
    }

    let out = run(
        &grpcurl,
        &ctl.addr,
        &["-d", r#"{"algorithm":"as-far","wait":true}"#],
        &["ringleader.v1.Controller/StartElection"],
    );
    let election = stdout_of(&out, "StartElection");
    assert!(election.contains(r#""state": "FINISHED""#), "{election}");
    assert!(election.contains(r#""agreed": true"#), "{election}");
    assert!(!election.contains(r#""violations""#), "{election}");
    assert!(object(&election, "leader").contains(r#""id": "8""#), "as-far elects the largest id, 8: {election}");

    let leader = stdout_of(&run(&grpcurl, &ctl.addr, &[], &["ringleader.v1.Controller/GetLeader"]), "GetLeader");
    assert!(object(&leader, "leader").contains(r#""id": "8""#), "{leader}");

    let err =
        run(&grpcurl, &ctl.addr, &["-d", r#"{"algorithm":"paxos"}"#], &["ringleader.v1.Controller/StartElection"]);
    assert!(!err.status.success());
    let stderr = String::from_utf8_lossy(&err.stderr);
    assert!(stderr.contains("InvalidArgument") && stderr.contains("algorithm: unknown algorithm"), "{stderr}");
    ctl.terminate();
}

/// RINGLEADER__CONTROLLER__PORT and RINGLEADER__CONTROLLER__LOCAL_NODES configure the binary (no flags given).
#[test]
fn environment_configures_the_binary() {
    let Some(grpcurl) = grpcurl() else { return };
    let port = free_port();
    let p = port.to_string();
    let env = [("RINGLEADER__CONTROLLER__PORT", p.as_str()), ("RINGLEADER__CONTROLLER__LOCAL_NODES", "3")];
    let mut ctl = Controller::spawn(&[], &env, port);
    ctl.wait_serving(&grpcurl);
    let cluster = stdout_of(&run(&grpcurl, &ctl.addr, &[], &["ringleader.v1.Controller/GetCluster"]), "GetCluster");
    assert_eq!(cluster.matches(r#""reachable": true"#).count(), 3, "{cluster}");
    ctl.terminate();
}

/// A bad setting stops the binary at start with exit code 2 and a message naming the key; an embedded
/// cluster larger than the open-files limit allows stops it with an error naming the key and the limit.
#[test]
fn bad_configuration_is_refused_at_start() {
    let out = Command::new(controller_binary()).args(["--local-nodes", "1"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("controller.local_nodes") && stderr.contains("at least 2"), "{stderr}");
    let out = Command::new(controller_binary())
        .env("RINGLEADER__CONTROLLER__NODES", "http://a:7000,not-a-url")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("controller.nodes") && stderr.contains("not-a-url"), "{stderr}");
    // An embedded cluster the process may not open enough files for is refused before any node
    // starts, naming the setting and the limit (100 nodes need ~856 descriptors; 512 allowed).
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n 512 && exec '{}' --local-nodes 100 --port 0", controller_binary().display()))
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("controller.local_nodes") && stderr.contains("512"), "{stderr}");
}

/// With `auth.token` set (from the environment, as a Kubernetes Secret would give it), grpcurl's
/// StartElection and InjectFault are refused UNAUTHENTICATED without the token and PERMISSION_DENIED with a
/// wrong one, and work with it; read-only calls stay open; the embedded nodes require and present the
/// agent and peer tokens (the election runs across them); refusals are logged without the secret.
#[test]
fn grpcurl_needs_the_token_for_mutating_calls() {
    let Some(grpcurl) = grpcurl() else { return };
    let port = free_port();
    let token = "s3cret-token-for-tests";
    let env = [
        ("RINGLEADER__AUTH__TOKEN", token),
        ("RINGLEADER__AUTH__AGENT_TOKEN", "agent-token-for-tests"),
        ("RINGLEADER__AUTH__PEER_TOKEN", "peer-token-for-tests"),
    ];
    let mut ctl = Controller::spawn(&["--local-nodes", "4", "--port", &port.to_string()], &env, port);
    ctl.wait_serving(&grpcurl);
    let start = ["-d", r#"{"algorithm":"stages","wait":true}"#];
    let crash = ["-d", r#"{"crash":{"node":"node-1"}}"#];
    let refused = |flags: &[&str], method: &str, code: &str| {
        let out = run(&grpcurl, &ctl.addr, flags, &[method]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(code), "{method} without the right token: {code}: {err}");
    };
    refused(&start, "ringleader.v1.Controller/StartElection", "Unauthenticated");
    refused(&crash, "ringleader.v1.Controller/InjectFault", "Unauthenticated");
    let wrong = [start[0], start[1], "-H", "authorization: Bearer not-the-token"];
    refused(&wrong, "ringleader.v1.Controller/StartElection", "PermissionDenied");

    let bearer = format!("authorization: Bearer {token}");
    let with = |flags: &[&'static str; 2]| [flags[0], flags[1], "-H", bearer.as_str()];
    let election = stdout_of(
        &run(&grpcurl, &ctl.addr, &with(&start), &["ringleader.v1.Controller/StartElection"]),
        "StartElection",
    );
    assert!(election.contains(r#""state": "FINISHED""#) && election.contains(r#""agreed": true"#), "{election}");
    let fault =
        stdout_of(&run(&grpcurl, &ctl.addr, &with(&crash), &["ringleader.v1.Controller/InjectFault"]), "InjectFault");
    assert!(fault.contains(r#""state": "ACTIVE""#), "{fault}");
    let clear = ["-d", "{}"];
    stdout_of(&run(&grpcurl, &ctl.addr, &with(&clear), &["ringleader.v1.Controller/ClearFaults"]), "ClearFaults");
    let algorithms = stdout_of(&run(&grpcurl, &ctl.addr, &[], &["ringleader.v1.Controller/ListAlgorithms"]), "read");
    assert!(algorithms.contains("as-far"), "read-only calls are open: {algorithms}");

    let log = ctl.log();
    assert!(log.contains("refused a call"), "refusals are logged: {log}");
    for secret in [token, "agent-token-for-tests", "peer-token-for-tests"] {
        assert!(!log.contains(secret), "the log leaks a secret");
    }
    ctl.terminate();
}
