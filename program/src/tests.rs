//! The crate's tests with real programs: tiny Python programs (standard
//! library only) written into temporary directories.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringleader_core::protocol::program::kind_of;
use ringleader_core::protocol::{
    AlgoError, Algorithm, Decision, Effect, Input, Leadership, Msg, NodeContext, Outbox, PortInfo, Role, Rule, Stable,
};
use serde_json::{Value, json};

use crate::{Isolation, Limits, Program, ProgramError, ProgramNode, load};

/// The loop every test program shares: `init` answers the node's id and
/// port count (and its process id), `step` is the program's own; a step
/// that returns a string writes it as the reply line as it is.
const BASE: &str = r#"
import json, os, sys, time, errno, socket, subprocess

def init(node):
    return {"state": {"id": node["id"], "ports": len(node["ports"]), "rule": node["rule"]}, "name": "asleep"}

def main():
    log = open("requests.log", "a") if os.path.exists("log-requests") else None
    for line in sys.stdin:
        if log:
            log.write(line)
            log.flush()
        req = json.loads(line)
        if req["op"] == "init":
            reply = init(req["node"])
        else:
            reply = step(req["state"], req["input"])
        sys.stdout.write(reply if isinstance(reply, str) else json.dumps(reply))
        sys.stdout.write("\n")
        sys.stdout.flush()
"#;

/// A fresh directory for the program `name`: `program.json` from `manifest`
/// (its `name` and `command` filled in) and `main.py` from [`BASE`] + `step`.
fn program_dir(name: &str, mut manifest: Value, step: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringleader-program-tests-{}", std::process::id())).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    manifest["name"] = json!(name);
    if manifest.get("command").is_none() {
        manifest["command"] = json!(["python3", "main.py"]);
    }
    std::fs::write(dir.join("program.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.join("main.py"), format!("{BASE}\n{step}\nmain()\n")).unwrap();
    dir
}

/// A manifest with two kinds (`elected` a notification, index 0;
/// `election` with fields id and hops, index 1) and two timers.
fn manifest() -> Value {
    json!({
        "protocol": 1,
        "topology": ["RING_BIDIRECTIONAL", "RING_UNIDIRECTIONAL"],
        "rule": "max",
        "messages": {"election": {"fields": ["id", "hops"]}, "elected": {"notification": true}},
        "timers": ["tick", "retry"],
        "bound": "n * (n + 1) / 2 + n"
    })
}

fn load_ok(dir: &Path, limits: Limits) -> Arc<Program> {
    load(dir, limits, Isolation::Required).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

const PORTS: [PortInfo; 2] = [PortInfo { neighbour: 3, label: ringleader_core::protocol::Compass::None }; 2];

fn context(id: u64) -> NodeContext<'static> {
    NodeContext { id, rule: Rule::Max, n: 5, coin: 77, ports: 2, port_info: &PORTS, ..NodeContext::default() }
}

fn step(node: &mut ProgramNode, input: Input<'_>) -> Vec<Effect> {
    let mut out = Outbox::default();
    node.step(input, &mut out).unwrap();
    out.effects().to_vec()
}

fn state(node: &ProgramNode) -> Value {
    serde_json::from_str(node.state_text()).unwrap()
}

const ECHO: &str = r#"
def step(state, inp):
    t = inp["type"]
    state["last"] = inp
    out = []
    if t == "start":
        out = [
            {"type": "send", "port": 1, "kind": "election", "fields": {"id": state["id"], "hops": 3}},
            {"type": "send", "port": 0, "kind": "elected"},
            {"type": "decide", "role": "leader", "leader": state["id"]},
            {"type": "decide", "role": "follower", "leader": 9},
            {"type": "set_timer", "timer": "retry", "after_ms": 250},
            {"type": "cancel_timer", "timer": "tick"},
            {"type": "lead", "term": 3, "leader": None},
            {"type": "lead", "term": 4, "leader": 7},
            {"type": "persist", "term": 3, "vote": None},
            {"type": "persist", "term": 4, "vote": 5},
            {"type": "handing_over"},
        ]
    elif t == "message":
        out = [{"type": "send", "port": inp["port"], "kind": inp["kind"], "fields": inp["fields"]}]
    return {"state": state, "name": t, "out": out}
"#;

/// A correct program sees every input form as documented and every output form it answers becomes
/// the effect it names: messages by kind (a notification kind as notification traffic), timers by
/// name, decisions, beliefs, records and a handover.
#[test]
fn an_echo_program_round_trips_every_input_and_output() {
    let dir = program_dir("echo-all", manifest(), ECHO);
    std::fs::write(dir.join("log-requests"), "").unwrap();
    let prog = load_ok(&dir, Limits::default());
    let tag = prog.tag();
    let mut node = ProgramNode::new(prog.clone(), &context(7));
    assert_eq!(node.state(), "asleep");
    assert_eq!(state(&node), json!({"id": 7, "ports": 2, "rule": "max"}));

    let effects = step(&mut node, Input::Start);
    assert_eq!(
        effects,
        vec![
            Effect::Send { port: 1, msg: Msg::Program { kind: kind_of(tag, 1), a: 7, b: 3, c: 0, d: 0 } },
            Effect::Send { port: 0, msg: Msg::ProgramNotice { kind: kind_of(tag, 0), a: 0, b: 0, c: 0, d: 0 } },
            Effect::Decide(Decision { role: Role::Leader, leader: 7 }),
            Effect::Decide(Decision { role: Role::Follower, leader: 9 }),
            Effect::SetTimer { timer: 1, after_ms: 250 },
            Effect::CancelTimer { timer: 0 },
            Effect::Lead(Leadership { term: 3, leader: None }),
            Effect::Lead(Leadership { term: 4, leader: Some(7) }),
            Effect::Persist(Stable { term: 3, vote: None }),
            Effect::Persist(Stable { term: 4, vote: Some(5) }),
            Effect::HandingOver,
        ]
    );
    assert_eq!(node.state(), "start");

    let election = Msg::Program { kind: kind_of(tag, 1), a: 9, b: 2, c: 0, d: 0 };
    let elected = Msg::ProgramNotice { kind: kind_of(tag, 0), a: 0, b: 0, c: 0, d: 0 };
    let suspected = [false, true];
    let cases: Vec<(Input<'_>, Value, Vec<Effect>)> = vec![
        (
            Input::Message { port: 1, msg: election },
            json!({"type": "message", "port": 1, "kind": "election", "fields": {"id": 9, "hops": 2}}),
            vec![Effect::Send { port: 1, msg: election }],
        ),
        (
            Input::Message { port: 0, msg: elected },
            json!({"type": "message", "port": 0, "kind": "elected", "fields": {}}),
            vec![Effect::Send { port: 0, msg: elected }],
        ),
        (Input::Timer(1), json!({"type": "timer", "timer": "retry"}), vec![]),
        (Input::Suspect { port: 0, suspected: true }, json!({"type": "suspect", "port": 0, "suspected": true}), vec![]),
        (
            Input::Heartbeat { port: 1, term: 3, leading: false },
            json!({"type": "heartbeat", "port": 1, "term": 3, "leading": false}),
            vec![],
        ),
        (Input::Leave { suspected: &suspected }, json!({"type": "leave", "suspected": [false, true]}), vec![]),
        (Input::Restore(Stable { term: 3, vote: None }), json!({"type": "restore", "term": 3, "vote": null}), vec![]),
        (Input::Restore(Stable { term: 4, vote: Some(2) }), json!({"type": "restore", "term": 4, "vote": 2}), vec![]),
    ];
    for (input, json, effects) in cases {
        assert_eq!(step(&mut node, input), effects, "{json}");
        let last = state(&node)["last"].clone();
        assert_eq!(last, json);
        crate::wire::parse_input(prog.manifest(), &last).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(node.state(), json["type"].as_str().unwrap());
    }
    // Every request the program got is one of the documented forms.
    let log = std::fs::read_to_string(dir.join("requests.log")).unwrap();
    assert_eq!(log.lines().count(), 2 + 9, "the trial init, the node's init, 9 steps");
    for line in log.lines() {
        crate::wire::parse_request(prog.manifest(), line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert_eq!(node.timer_name(1), Some("retry"));
    assert_eq!(node.timer_name(2), None);
    assert_eq!(prog.stats().failures, 0);
}

/// Nodes are equal and hash alike exactly when their program states are: the same input
/// from equal states gives equal nodes again, whatever the node's step count.
#[test]
fn nodes_are_equal_when_their_states_are() {
    let prog = load_ok(&program_dir("echo-eq", manifest(), ECHO), Limits::default());
    let hash = |n: &ProgramNode| {
        let mut h = DefaultHasher::new();
        n.hash(&mut h);
        h.finish()
    };
    let mut a = ProgramNode::new(prog.clone(), &context(7));
    let mut b = ProgramNode::new(prog.clone(), &context(7));
    let other = ProgramNode::new(prog.clone(), &context(8));
    assert_eq!(a, b);
    assert_eq!(hash(&a), hash(&b));
    assert_ne!(a, other);
    step(&mut a, Input::Start);
    assert_ne!(a, b);
    step(&mut b, Input::Start);
    assert_eq!(a, b);
    assert_eq!(hash(&a), hash(&b));
    // A timer, then the same timer again: the same state as after one.
    let after_one = {
        step(&mut a, Input::Timer(0));
        a.clone()
    };
    step(&mut a, Input::Timer(0));
    assert_eq!(a, after_one);
    assert_eq!(hash(&a), hash(&after_one));
}

/// A repeated request (the same state and input) is answered from the memo: the cache hits grow,
/// the requests to a process do not.
#[test]
fn the_memo_answers_a_repeated_step_without_the_process() {
    let prog = load_ok(&program_dir("echo-memo", manifest(), ECHO), Limits::default());
    let mut a = ProgramNode::new(prog.clone(), &context(7));
    let mut b = a.clone();
    let before = prog.stats();
    let first = step(&mut a, Input::Start);
    let middle = prog.stats();
    assert_eq!(middle.steps, before.steps + 1);
    assert_eq!(middle.cache_hits, before.cache_hits);
    let second = step(&mut b, Input::Start);
    let after = prog.stats();
    assert_eq!(second, first);
    assert_eq!(a, b);
    assert_eq!(after.steps, middle.steps);
    assert_eq!(after.cache_hits, middle.cache_hits + 1);
    // A node built again for the same context: its init is a hit too.
    let _c = ProgramNode::new(prog.clone(), &context(7));
    assert_eq!(prog.stats().cache_hits, after.cache_hits + 1);
    assert_eq!(prog.stats().steps, after.steps);
}

/// A message from the network that is not this program's (another tag, a kind index beyond its
/// kinds, the wrong traffic, a built-in kind, a field beyond its fields, an unknown port) is refused
/// with an error, and the node goes on.
#[test]
fn foreign_messages_are_refused_without_failing_the_node() {
    let prog = load_ok(&program_dir("echo-refuse", manifest(), ECHO), Limits::default());
    let tag = prog.tag();
    let mut node = ProgramNode::new(prog.clone(), &context(7));
    let refused = [
        (1, Msg::Program { kind: kind_of(tag ^ 1, 1), a: 9, b: 0, c: 0, d: 0 }, "no message kind"),
        (1, Msg::Program { kind: kind_of(tag, 5), a: 9, b: 0, c: 0, d: 0 }, "no message kind"),
        (1, Msg::Program { kind: kind_of(tag, 0), a: 0, b: 0, c: 0, d: 0 }, "travel as notifications"),
        (1, Msg::ProgramNotice { kind: kind_of(tag, 1), a: 9, b: 0, c: 0, d: 0 }, "travel as election traffic"),
        (1, Msg::Program { kind: kind_of(tag, 1), a: 9, b: 0, c: 4, d: 0 }, "an undeclared field is 4"),
        (1, Msg::Program { kind: kind_of(tag, 1), a: 1 << 60, b: 0, c: 0, d: 0 }, "id is 1152921504606846976"),
        (1, Msg::Notify { leader: 3 }, "does not use"),
        (2, Msg::Program { kind: kind_of(tag, 1), a: 9, b: 0, c: 0, d: 0 }, "port 2 does not exist"),
    ];
    for (port, msg, words) in refused {
        let mut out = Outbox::default();
        let e = node.step(Input::Message { port, msg }, &mut out).expect_err(words);
        assert!(e.to_string().contains(words), "{words}: {e}");
        assert!(matches!(e, AlgoError::Invalid(_) | AlgoError::BadPort { .. }));
        assert!(out.effects().is_empty());
    }
    assert!(!node.failed());
    assert_eq!(step(&mut node, Input::Timer(0)), vec![]);
    assert_eq!(node.state(), "timer");
}

const BAD: &str = r#"
mode = sys.argv[1]

def init(node):
    kid = subprocess.Popen(["sleep", "60"]) if mode == "sleep" else None
    return {"state": {"id": node["id"], "pid": os.getpid(), "kid": kid.pid if kid else 0}}

def step(state, inp):
    if mode == "sleep":
        time.sleep(60)
    if mode == "exit":
        sys.stderr.write("boom: giving up\n")
        sys.stderr.flush()
        sys.exit(3)
    if mode == "garbage":
        return "hello"
    if mode == "huge":
        return "[" + "1," * (5 << 20) + "1]"
    if mode == "unknown":
        return {"state": state, "out": [{"type": "explode"}]}
    if mode == "port":
        return {"state": state, "out": [{"type": "send", "port": 1, "kind": "election"},
                                        {"type": "send", "port": 5, "kind": "election", "fields": {"id": 1}}]}
    if mode == "field":
        return {"state": state, "out": [{"type": "send", "port": 1, "kind": "election", "fields": {"idd": 1}}]}
    if mode == "typo":
        return {"state": state, "outs": []}
    if mode == "error":
        return {"error": "no idea what to do"}
    return {"state": state}
"#;

/// Is the process `pid` gone (or a zombie nobody reaped yet)? A SIGKILL to a process this one
/// does not wait for takes effect soon, not at once: asked again for up to 10 s.
fn gone(pid: u64) -> bool {
    let dead = || match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    };
    for _ in 0..1_000 {
        if dead() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// A program that breaks in a step fails its node with one `Fail` naming the step, the input and the
/// field, for each way of breaking; the node then takes no further step, its process (and the
/// process's children) is killed, and the next request gets a fresh process (but for a well-formed
/// reply wrong only for this node, a port it lacks: the node refuses it, the process stays).
#[test]
fn each_way_of_breaking_fails_the_node_with_a_clear_text() {
    let limits = Limits { step_ms: 400, ..Limits::default() };
    let cases = [
        ("sleep", "no reply within 400 ms (the step limit): the program was stopped"),
        ("exit", "the program exited (status 3); its last stderr: boom: giving up"),
        ("garbage", "reply is not JSON: expected value at line 1 column 1"),
        ("huge", "reply line longer than 1048576 bytes: the program was stopped"),
        ("unknown", "reply field `out[0].type`: `explode` is not an output type"),
        ("port", "reply field `out[1].port`: 5 is not a port of this node (it has 2)"),
        ("field", "reply field `out[0].fields.idd`: `election` messages have no field `idd` (id, hops)"),
        ("typo", "reply field `outs`: unknown key; known: state, name, out"),
        ("error", "the program said: no idea what to do"),
    ];
    for (mode, what) in cases {
        let name = format!("bad-{mode}");
        let mut m = manifest();
        m["command"] = json!(["python3", "main.py", mode]);
        let prog = load_ok(&program_dir(&name, m, BAD), limits);
        let mut node = ProgramNode::new(prog.clone(), &context(7));
        let s = state(&node);
        let started = prog.stats().processes_started;
        let effects = step(&mut node, Input::Start);
        let [Effect::Fail { why }] = effects[..] else { panic!("{mode}: {effects:?}") };
        let expected = format!("program {name}, id 7, step 1 (start): {what}");
        assert!(why.starts_with(&expected), "{mode}:\n  got  {why}\n  want {expected}");
        assert_eq!(node.state(), "failed");
        assert!(node.failed());
        assert_eq!(step(&mut node, Input::Timer(0)), vec![], "{mode}: a failed node takes no step");
        assert_eq!(prog.stats().failures, 1, "{mode}");
        // A reply that is well formed but wrong for this node (a port it does not have) is the
        // node's refusal: the process answered as asked and stays.
        if mode == "port" {
            continue;
        }
        assert!(gone(s["pid"].as_u64().unwrap()), "{mode}: the process was not stopped");
        if mode == "sleep" {
            assert!(gone(s["kid"].as_u64().unwrap()), "the process's child was not stopped with its group");
        }
        // A fresh process answers the next request (a new node's init: not in the memo, its id differs).
        let fresh = ProgramNode::new(prog.clone(), &context(8));
        assert!(!fresh.failed(), "{mode}");
        assert_eq!(prog.stats().processes_started, started + 1, "{mode}");
    }
}

/// A step the program failed (here it hangs past the step limit) is asked again by the next node
/// that meets it in an election (the failure may have been the host's moment); in a check
/// (`remember_failures`) it is the program's answer to that request: a second node asking the same
/// gets the same failure from the memo at once, with no process asked and none started.
#[test]
fn a_failed_step_is_kept_in_the_memo_only_for_a_check() {
    let limits = Limits { step_ms: 300, ..Limits::default() };
    let mut m = manifest();
    m["command"] = json!(["python3", "main.py", "sleep"]);
    let prog = load_ok(&program_dir("bad-memo", m, BAD), limits);
    let mut a = ProgramNode::new(prog.clone(), &context(7));
    let (mut b, mut c) = (a.clone(), a.clone());
    let first = step(&mut a, Input::Start);
    let [Effect::Fail { why }] = first[..] else { panic!("{first:?}") };
    assert!(why.contains("no reply within"), "{why}");
    let before = prog.stats();
    let again = step(&mut b, Input::Start);
    assert!(matches!(again[..], [Effect::Fail { why }] if why.contains("no reply within")), "{again:?}");
    let asked_again = prog.stats();
    assert_eq!(asked_again.steps, before.steps + 1, "an election asks the process again");
    prog.remember_failures();
    let mut d = c.clone();
    let remembered = step(&mut c, Input::Start);
    let kept = prog.stats();
    assert_eq!(step(&mut d, Input::Start), remembered, "the same failure, the same text");
    let after = prog.stats();
    assert_eq!(after.steps, kept.steps, "no process was asked");
    assert_eq!(after.processes_started, kept.processes_started);
    assert_eq!(after.cache_hits, kept.cache_hits + 1);
    assert!(d.failed());
}

/// A message step that fails names the message in words and its port.
#[test]
fn a_failed_message_step_names_the_message() {
    let mut m = manifest();
    m["command"] = json!(["python3", "main.py", "error"]);
    let prog = load_ok(&program_dir("bad-message", m, BAD), Limits::default());
    prog.install().unwrap();
    let mut node = ProgramNode::new(prog.clone(), &context(7));
    let msg = Msg::Program { kind: kind_of(prog.tag(), 1), a: 9, b: 0, c: 0, d: 0 };
    let effects = step(&mut node, Input::Message { port: 1, msg });
    assert_eq!(
        effects,
        vec![Effect::Fail {
            why: "program bad-message, id 7, step 1 (message election (id 9) on port 1): the program said: no idea what to do"
        }]
    );
}

const NET: &str = r#"
def attempt(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return "connected"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e))

def step(state, inp):
    state["loopback"] = attempt("127.0.0.1", 9)
    state["outside"] = attempt("192.0.2.1", 80)
    return {"state": state}
"#;

/// A program sees no network: a connection to the loopback and one to an outside address both find
/// the network unreachable from inside the program (or, where the host allows no namespace, the
/// program is refused rather than run with the host's network).
#[test]
fn a_program_sees_no_network() {
    let dir = program_dir("no-network", manifest(), NET);
    let prog = match load(&dir, Limits { step_ms: 10_000, ..Limits::default() }, Isolation::Required) {
        Ok(prog) => prog,
        Err(e @ ProgramError::Isolation { .. }) => {
            assert!(e.to_string().contains("no network namespace"), "{e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let mut node = ProgramNode::new(prog, &context(7));
    assert_eq!(step(&mut node, Input::Start), vec![]);
    let s = state(&node);
    assert_eq!(s["loopback"], "ENETUNREACH", "{s}");
    assert_eq!(s["outside"], "ENETUNREACH", "{s}");
}

/// A program that cannot be loaded is refused with why: a built-in's name, a command that is not
/// there, a trial `init` answered wrongly, no manifest.
#[test]
fn broken_programs_are_refused_at_load() {
    let e = load(&program_dir("as-far", manifest(), ECHO), Limits::default(), Isolation::Required).unwrap_err();
    assert!(matches!(e, ProgramError::Name(_)), "{e}");
    assert_eq!(e.to_string(), "the name `as-far` is taken by a built-in algorithm");

    let mut m = manifest();
    m["command"] = json!(["no-such-interpreter", "main.py"]);
    let e = load(&program_dir("no-command", m, ECHO), Limits::default(), Isolation::Required).unwrap_err();
    assert!(matches!(e, ProgramError::Start { .. }), "{e}");
    assert!(e.to_string().contains("`no-such-interpreter` is not in /usr/local/bin:/usr/bin:/bin"), "{e}");

    let bad_init = "def init(node):\n    return {\"state\": 1, \"name\": \"Asleep\"}\ndef step(s, i):\n    return {\"state\": s}\n";
    let e = load(&program_dir("bad-init", manifest(), bad_init), Limits::default(), Isolation::Required).unwrap_err();
    assert!(matches!(e, ProgramError::Init { .. }), "{e}");
    assert!(
        e.to_string().starts_with("program bad-init, trial init: reply field `name`: `Asleep` is not a state name"),
        "{e}"
    );

    let e = load(Path::new("/nonexistent/program"), Limits::default(), Isolation::Required).unwrap_err();
    assert!(matches!(e, ProgramError::Io { .. }), "{e}");
}

const CHANG_ROBERTS: &str = r#"
def beats(rule, a, b):
    return a > b if rule == "max" else a < b

def send(kind, i):
    return {"type": "send", "port": 1, "kind": kind, "fields": {"id": i}}

def step(s, inp):
    out = []
    t = inp["type"]
    if t == "start" and s.get("phase", "asleep") == "asleep":
        s["phase"], s["best"] = "awake", s["id"]
        out.append(send("election", s["id"]))
    elif t == "message" and inp["kind"] == "election":
        i = inp["fields"]["id"]
        phase = s.get("phase", "asleep")
        if phase == "asleep":
            s["phase"] = "awake"
            s["best"] = i if beats(s["rule"], i, s["id"]) else s["id"]
            out.append(send("election", s["best"]))
        elif phase == "awake" and i == s["id"]:
            s["phase"] = "done"
            out += [{"type": "decide", "role": "leader", "leader": i}, send("elected", i)]
        elif phase == "awake" and beats(s["rule"], i, s["best"]):
            s["best"] = i
            out.append(send("election", i))
    elif t == "message" and inp["kind"] == "elected" and s.get("phase") != "done":
        s["phase"] = "done"
        out += [{"type": "decide", "role": "follower", "leader": inp["fields"]["id"]}, send("elected", inp["fields"]["id"])]
    return {"state": s, "name": s.get("phase", "asleep"), "out": out}
"#;

/// The program's catalogue entry runs in the simulator like a built-in: a Chang-Roberts in Python
/// elects the same leader with exactly the built-in as-far's message counts on the same ids, and its
/// declared bound is the entry's.
#[test]
fn a_python_chang_roberts_simulates_like_as_far() {
    let m = json!({
        "protocol": 1,
        "topology": "RING_UNIDIRECTIONAL",
        "rule": "max",
        "messages": {"election": {"fields": ["id"]}, "elected": {"fields": ["id"], "notification": true}},
        "bound": "n*(n+1)/2 + n"
    });
    let prog = load_ok(&program_dir("cr-sim-test", m, CHANG_ROBERTS), Limits::default());
    let spec = prog.install().unwrap();
    assert!(std::ptr::eq(spec, prog.spec()));
    assert!(std::ptr::eq(ringleader_core::algo::catalogue::find("cr-sim-test").unwrap(), spec));
    assert_eq!(spec.bound_formula, "n*(n+1)/2 + n");
    assert_eq!((spec.bound)(5, 5), 20);
    let builtin = ringleader_core::algo::catalogue::find("as-far").unwrap();
    let topo =
        ringleader_core::topology::Topology::ring(ringleader_core::topology::TopologyKind::RingUni, 5, 0).unwrap();
    let cfg = ringleader_core::report::SimConfig::default();
    for ids in [[3, 1, 4, 5, 2], [5, 4, 3, 2, 1], [1, 2, 3, 4, 5]] {
        let ours = ringleader_core::sim::run(spec, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &cfg);
        let theirs = ringleader_core::sim::run(builtin, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &cfg);
        assert!(ours.errors.is_empty(), "{ids:?}: {:?}", ours.errors);
        assert_eq!(ours.decisions, theirs.decisions, "{ids:?}");
        assert_eq!(ours.counters.election_messages, theirs.counters.election_messages, "{ids:?}");
        assert_eq!(ours.counters.notification_messages, theirs.counters.notification_messages, "{ids:?}");
    }
}

/// A program whose command disappears after its process failed fails the next node with a text
/// saying that no process could be started (nothing panics, no process is left half-made).
#[test]
fn a_command_that_is_gone_fails_the_next_step() {
    use std::os::unix::fs::PermissionsExt;
    let mut m = manifest();
    m["command"] = json!(["./main.py", "exit"]);
    let dir = program_dir("gone-command", m, BAD);
    let script = dir.join("main.py");
    let code = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, format!("#!/usr/bin/env python3\n{code}")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prog = load_ok(&dir, Limits::default());
    let mut node = ProgramNode::new(prog.clone(), &context(7));
    assert!(matches!(step(&mut node, Input::Start)[..], [Effect::Fail { .. }]));
    std::fs::remove_file(&script).unwrap();
    let mut next = ProgramNode::new(prog.clone(), &context(8));
    let effects = step(&mut next, Input::Start);
    let [Effect::Fail { why }] = effects[..] else { panic!("{effects:?}") };
    assert!(
        why.starts_with("program gone-command, id 8, step 0 (init): no process: its command could not be started: "),
        "{why}"
    );
    assert_eq!(prog.stats().failures, 2);
}

/// `load_all` loads every subdirectory holding a manifest, in name order, and lists each refused
/// one with its error; a program without a bound lists it as not declared, with the drivers' budget.
#[test]
fn load_all_loads_each_program_and_lists_the_refused() {
    let root = std::env::temp_dir().join(format!("ringleader-program-tests-{}", std::process::id())).join("all");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("not-a-program")).unwrap();
    let mut m = manifest();
    m.as_object_mut().unwrap().remove("bound");
    for (sub, m) in [("b-good", m.clone()), ("a-bad", json!({"protocol": 1, "name": "a-bad"}))] {
        let made = program_dir(sub, m, ECHO);
        std::fs::rename(&made, root.join(sub)).unwrap();
    }
    let (loaded, refused) = crate::load_all(&root, Limits::default(), Isolation::Required);
    assert_eq!(loaded.iter().map(|p| p.name()).collect::<Vec<_>>(), ["b-good"]);
    assert_eq!(refused.len(), 1);
    assert!(refused[0].0.ends_with("a-bad"));
    let e = refused[0].1.to_string();
    assert!(
        e.ends_with(
            "a-bad/program.json: field `topology`: missing: a topology name or an array of them (the first the default)"
        ),
        "{e}"
    );
    let spec = loaded[0].spec();
    assert_eq!(spec.bound_formula, crate::NO_BOUND);
    assert_eq!((spec.bound)(4, 1), 4 * 4 * 4 + 64);
    let (none, refused) = crate::load_all(&root.join("nowhere"), Limits::default(), Isolation::Required);
    assert!(none.is_empty() && matches!(refused[..], [(_, ProgramError::Io { .. })]));
}

/// A process that takes longer than the step limit to start (a slow interpreter) is not failed for
/// it: its first request gets the start allowance, its later ones the step limit.
#[test]
fn a_slow_start_is_not_a_slow_step() {
    let slow = format!("time.sleep(1.0)\n{ECHO}");
    let prog = load_ok(&program_dir("slow-start", manifest(), &slow), Limits { step_ms: 300, ..Limits::default() });
    let mut node = ProgramNode::new(prog.clone(), &context(7));
    assert_eq!(step(&mut node, Input::Start).len(), 11);
    assert_eq!(prog.stats().failures, 0);
}

const BURN: &str = r#"
def step(state, inp):
    end = time.process_time() + 1.2
    while time.process_time() < end:
        pass
    state["burnt"] = state.get("burnt", 0) + 1
    return {"state": state}
"#;

/// A process that used half its CPU allowance is replaced between steps, before RLIMIT_CPU would
/// stop it mid-step: the program goes on in a fresh process and nothing fails.
#[test]
fn a_process_that_used_half_its_cpu_is_replaced() {
    let prog = load_ok(
        &program_dir("cpu-burner", manifest(), BURN),
        Limits { step_ms: 30_000, cpu_s: 2, ..Limits::default() },
    );
    let mut node = ProgramNode::new(prog.clone(), &context(7));
    let started = prog.stats().processes_started;
    step(&mut node, Input::Start);
    step(&mut node, Input::Timer(0));
    assert_eq!(state(&node)["burnt"], 2);
    assert_eq!(prog.stats().failures, 0);
    assert_eq!(prog.stats().processes_started, started + 1, "the first process was retired after its burn");
}
