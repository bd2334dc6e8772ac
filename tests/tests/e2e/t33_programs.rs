//! Installed programs through the API: a controller given
//! `controller.programs_dir` runs a program SIMULATED and LIVE like a
//! built-in (`StartElectionRequest.program`); a program that misbehaves
//! fails its own election, naming the step, and nothing else.

use std::path::{Path, PathBuf};

use ringleader_proto::v1 as pb;
use ringleader_tests::{Client, TestController, assert_correct, assert_failed, assert_refused, elect, test_config};

/// The example programs: Chang-Roberts and Franklin in Python, each with its planted-bug variant.
fn examples() -> PathBuf {
    ringleader_tests::workspace_root().join("examples/programs")
}

/// The example programs that misbehave, each with the step it misbehaves at and what its election's
/// error must say (examples/programs/misbehaving/README.md).
const MISBEHAVING: &[(&str, u32, &str)] = &[
    ("sleeper", 3, "no reply within 1000 ms (the step limit)"),
    ("exiter", 2, "the program exited (status 3)"),
    ("garbage", 2, "reply is not JSON"),
    ("flood", 2, "reply line longer than 1048576 bytes"),
];

/// A controller with `local_nodes` embedded nodes that installed the programs in `dir`. The
/// misbehaving programs get the default limits (a step may take 1 s); the examples that must
/// behave get 10 s, so that a loaded machine never fails a correct step.
async fn with_programs(local_nodes: u32, dir: &Path) -> (TestController, Client) {
    let mut config = test_config(local_nodes);
    config.controller.programs_dir = dir.display().to_string();
    if !dir.ends_with("misbehaving") {
        config.programs.step_ms = 10_000;
    }
    let ctl = TestController::start_with(config).await;
    let client = ctl.client();
    (ctl, client)
}

/// A request for the installed program `name`, waited for.
fn program(name: &str, mode: pb::Mode, ids: &[u64]) -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        program: name.into(),
        mode: mode as i32,
        ids: ids.to_vec(),
        wait: true,
        ..Default::default()
    }
}

/// Every arrangement of `items`.
fn permutations(items: &[u64]) -> Vec<Vec<u64>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            all.push(p);
        }
    }
    all
}

/// The counts two elections must share: all, election and notification messages, and the leader's id.
fn counts(e: &pb::Election) -> (u64, u64, u64, u64) {
    let m = e.metrics.as_ref().unwrap();
    (m.messages, m.election_messages, m.notification_messages, e.leader.as_ref().unwrap().id)
}

/// ListAlgorithms shows the installed programs after the built-ins, marked as programs, with their declared
/// bound (or "not declared"); the Python Chang-Roberts (examples/programs), SIMULATED on every arrangement of
/// ids 1..=5 (120), is correct and sends exactly the built-in as-far's messages (election and notification) on
/// the same ids, its record naming the program and counting its kinds as `program` / `program_notice`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_chang_roberts_counts_as_the_built_in_simulated() {
    let (ctl, mut client) = with_programs(0, &examples()).await;
    let algos = client.list_algorithms(pb::ListAlgorithmsRequest {}).await.unwrap().into_inner().algorithms;
    let builtins = ringleader_core::algo::catalogue::CATALOGUE.len();
    assert!(algos[..builtins].iter().all(|a| !a.program));
    let listed: Vec<(&str, bool)> = algos[builtins..].iter().map(|a| (a.name.as_str(), a.program)).collect();
    assert_eq!(
        listed,
        [("chang-roberts", true), ("chang-roberts-bug", true), ("franklin", true), ("franklin-bug", true)]
    );
    let cr = &algos[builtins];
    assert_eq!(cr.bound_formula, "n*(n+1)/2 + n");
    assert_eq!(cr.default_topology, pb::TopologyKind::RingUnidirectional as i32);

    let mut arrangements = 0;
    for ids in permutations(&[1, 2, 3, 4, 5]) {
        let ours = elect(&mut client, simulated_program(&ids)).await;
        assert_correct(&ours);
        let builtin = pb::StartElectionRequest { algorithm: "as-far".into(), ..simulated_program(&ids) };
        let theirs = elect(&mut client, pb::StartElectionRequest { program: String::new(), ..builtin }).await;
        assert_correct(&theirs);
        assert_eq!(counts(&ours), counts(&theirs), "ids {ids:?}");
        assert_eq!(ours.algorithm, "chang-roberts");
        let m = ours.metrics.as_ref().unwrap();
        let by_kind = &m.messages_by_kind;
        assert_eq!(
            (by_kind.get("program").copied(), by_kind.get("program_notice").copied()),
            (Some(m.election_messages), Some(m.notification_messages)),
            "{by_kind:?}"
        );
        arrangements += 1;
    }
    assert_eq!(arrangements, 120);
    ctl.stop().await;
}

/// A SIMULATED request for the example Chang-Roberts on `ids`.
fn simulated_program(ids: &[u64]) -> pb::StartElectionRequest {
    program("chang-roberts", pb::Mode::Simulated, ids)
}

/// LIVE on 8 embedded nodes, the Python Chang-Roberts is correct and sends exactly the built-in as-far's
/// messages on the same ids (random ids from three seeds, then the worst and the best arrangement), and its
/// LIVE record draws a diagram like a built-in's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_chang_roberts_counts_as_the_built_in_live() {
    let (ctl, mut client) = with_programs(8, &examples()).await;
    let mut arrangements: Vec<Vec<u64>> = Vec::new();
    for seed in [1u64, 2, 3] {
        let random = pb::StartElectionRequest {
            algorithm: "as-far".into(),
            size: 8,
            seed,
            mode: pb::Mode::Simulated as i32,
            wait: true,
            ..Default::default()
        };
        arrangements.push(elect(&mut client, random).await.participants.iter().map(|p| p.id).collect());
    }
    arrangements.push((1..=8).rev().collect());
    arrangements.push((1..=8).collect());
    for ids in arrangements {
        let live = pb::StartElectionRequest { diagram: true, ..program("chang-roberts", pb::Mode::Live, &ids) };
        let ours = elect(&mut client, live.clone()).await;
        assert_correct(&ours);
        assert!(ours.diagram_svg.starts_with("<svg "), "a diagram");
        let builtin = pb::StartElectionRequest { algorithm: "as-far".into(), program: String::new(), ..live };
        let theirs = elect(&mut client, builtin).await;
        assert_correct(&theirs);
        assert_eq!(counts(&ours), counts(&theirs), "ids {ids:?}");
    }
    ctl.stop().await;
}

/// A request names only a program this controller installed, by name: an unknown name, a path, or a
/// program another controller of the process installed is FAILED_PRECONDITION naming `program` (listing the
/// installed ones); giving `algorithm` too is INVALID_ARGUMENT naming `program`; a program named as an
/// `algorithm` is refused naming `algorithm`. A program without a bound is listed "not declared".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_installed_programs_can_be_named() {
    // The example Chang-Roberts under another name, without its bound.
    let dir = std::env::temp_dir().join(format!("ringleader-t33-{}", std::process::id()));
    let unbounded = dir.join("unbounded");
    std::fs::create_dir_all(&unbounded).unwrap();
    let source = examples().join("chang-roberts");
    std::fs::copy(source.join("chang_roberts.py"), unbounded.join("chang_roberts.py")).unwrap();
    let manifest = std::fs::read_to_string(source.join("program.json")).unwrap();
    let manifest = manifest.replace(r#""name": "chang-roberts""#, r#""name": "t33-unbounded""#);
    let manifest = manifest.replace(",\n  \"bound\": \"n*(n+1)/2 + n\"", "");
    assert!(manifest.contains("t33-unbounded") && !manifest.contains("\"bound\""), "{manifest}");
    std::fs::write(unbounded.join("program.json"), manifest).unwrap();

    let (ctl, mut client) = with_programs(0, &dir).await;
    let algos = client.list_algorithms(pb::ListAlgorithmsRequest {}).await.unwrap().into_inner().algorithms;
    let listed = algos.iter().find(|a| a.name == "t33-unbounded").expect("listed");
    assert!(listed.program && listed.bound_formula == "not declared", "{listed:?}");
    assert_correct(&elect(&mut client, program("t33-unbounded", pb::Mode::Simulated, &[3, 1, 2])).await);
    for name in ["no-such-program", "../chang-roberts", "/usr/bin/python3", "chang-roberts"] {
        let status = client.start_election(program(name, pb::Mode::Simulated, &[])).await.unwrap_err();
        assert_refused(&status, tonic::Code::FailedPrecondition, "program");
        assert!(status.message().ends_with("installed programs: t33-unbounded"), "{status:?}");
    }
    let both = pb::StartElectionRequest { algorithm: "as-far".into(), ..program("t33-unbounded", pb::Mode::Live, &[]) };
    let status = client.start_election(both).await.unwrap_err();
    assert_refused(&status, tonic::Code::InvalidArgument, "program");
    let as_algorithm = pb::StartElectionRequest {
        algorithm: "t33-unbounded".into(),
        program: String::new(),
        ..program("", pb::Mode::Simulated, &[])
    };
    let status = client.start_election(as_algorithm).await.unwrap_err();
    assert_refused(&status, tonic::Code::InvalidArgument, "algorithm");
    // Another controller in this process, given no programs, knows none of them.
    let (other, mut other_client) = TestController::with_client(0).await;
    let status = other_client.start_election(program("t33-unbounded", pb::Mode::Simulated, &[])).await.unwrap_err();
    assert_refused(&status, tonic::Code::FailedPrecondition, "program");
    let listed = other_client.list_algorithms(pb::ListAlgorithmsRequest {}).await.unwrap().into_inner().algorithms;
    assert!(listed.iter().all(|a| !a.program));
    other.stop().await;
    ctl.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each misbehaving example (a program that sleeps past the 1 s step limit, exits, prints non-JSON, or a
/// 10 MB line) fails its own election, LIVE on 8 nodes and SIMULATED, with an error naming the program,
/// the step and what went wrong, while a built-in LIVE election started at the same time on the same nodes
/// (their links carry both) finishes correct; the controller and the nodes go on (a built-in election after
/// them is correct).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_program_fails_only_its_election() {
    let (ctl, mut client) = with_programs(8, &examples().join("misbehaving")).await;
    for &(name, step, says) in MISBEHAVING {
        tracing::info!("--- {name}, LIVE, beside a built-in");
        let bad = program(name, pb::Mode::Live, &[]);
        let good = pb::StartElectionRequest {
            algorithm: "as-far".into(),
            seed: 7,
            mode: pb::Mode::Live as i32,
            wait: true,
            ..Default::default()
        };
        let (mut a, mut b) = (client.clone(), client.clone());
        let (bad, good) = tokio::join!(elect(&mut a, bad), elect(&mut b, good));
        assert_correct(&good);
        assert_failed(&bad, says);
        assert!(bad.error.contains(&format!("failed: program {name}, id ")), "{}", bad.error);
        assert!(bad.error.contains(&format!(", step {step} (")), "{}", bad.error);
        let took = good.metrics.as_ref().map_or(0, |m| m.duration_ms);
        tracing::info!(error = %bad.error, built_in_ms = took, "--- {name}, SIMULATED");
        let sim =
            elect(&mut client, pb::StartElectionRequest { size: 2, ..program(name, pb::Mode::Simulated, &[]) }).await;
        assert_failed(&sim, says);
        assert!(sim.error.contains(&format!(", step {step} (")), "{}", sim.error);
    }
    let after = pb::StartElectionRequest {
        algorithm: "as-far".into(),
        mode: pb::Mode::Live as i32,
        wait: true,
        ..Default::default()
    };
    assert_correct(&elect(&mut client, after).await);
    ctl.stop().await;
}
