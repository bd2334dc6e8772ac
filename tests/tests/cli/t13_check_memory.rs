//! Checks (`CheckAlgorithm`) under Kubernetes' settings, measured on the real
//! binary: at most `max_concurrent_checks` run at once, each within its share
//! of `memory_budget_mib`, the others waiting in the queue, identical ones
//! sharing a run, and the process's peak resident memory stays within its
//! baseline plus the budget.

use std::process::{Command, Stdio};
use std::time::Duration;

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc, controller_binary, free_port, status_kib};
use tokio_stream::StreamExt;

/// The budget k8s/10-config.yaml gives the controller, MiB.
const BUDGET_MIB: u64 = 320;
/// Checks sent at once.
const CHECKS: usize = 8;

/// A controller with k8s/'s `memory_budget_mib = 320` and `max_concurrent_checks = 1` takes 8
/// breadth-first checks of kept bully on 4 nodes with a crash (9.75 million states, about 1.2 KB
/// each breadth-first: far beyond the budget) sent at once, four with ids 1 2 3 4 and four with
/// 4 3 2 1: none is refused; the two checks run one after the other, each stopped at its share of
/// the budget (`stopped_by` naming `memory_budget_mib`), the other three calls of each sharing its
/// run; and the controller's peak RSS (VmHWM) minus its RSS before stays within the budget. The
/// figures are printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_breadth_first_checks_stay_within_the_budget() {
    let api = free_port();
    let child = Command::new(controller_binary())
        .args(["--host", "127.0.0.1", "--port", &api.to_string()])
        .env("RINGLEADER__CONTROLLER__MEMORY_BUDGET_MIB", BUDGET_MIB.to_string())
        .env("RINGLEADER__CONTROLLER__MAX_CONCURRENT_CHECKS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ringleader-controller");
    let pid = child.id();
    let _controller = Proc(child);
    let mut client = None;
    for _ in 0..100 {
        if let Ok(c) = ControllerClient::connect(format!("http://127.0.0.1:{api}")).await {
            client = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let client = client.expect("the controller answers");
    let baseline_kib = status_kib(pid, "VmRSS");

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..CHECKS {
        let mut c = client.clone();
        let ids = if i % 2 == 0 { vec![1, 2, 3, 4] } else { vec![4, 3, 2, 1] };
        let req = pb::CheckRequest {
            algorithm: "bully".into(),
            n: 4,
            ids,
            kept: true,
            crashes: 1,
            timeout_s: 300,
            ..Default::default()
        };
        calls.spawn(async move {
            let mut stream = c.check_algorithm(req).await?.into_inner();
            let mut verdict = None;
            while let Some(event) = stream.next().await {
                if let Some(pb::check_event::Kind::Verdict(v)) = event?.kind {
                    verdict = Some(v);
                }
            }
            Ok::<_, tonic::Status>(verdict.expect("every check ends with its verdict"))
        });
    }
    let mut verdicts = Vec::new();
    while let Some(r) = calls.join_next().await {
        let v = r.expect("the call task").expect("no check refused");
        eprintln!("{} (shared: {}, cached: {})", v.summary, v.shared, v.cached);
        verdicts.push(v);
    }
    let peak_kib = status_kib(pid, "VmHWM");
    let grown_mib = peak_kib.saturating_sub(baseline_kib) / 1024;
    let runs = verdicts.iter().filter(|v| !v.shared && !v.cached).count();
    eprintln!(
        "memory budget {BUDGET_MIB} MiB: {CHECKS} checks answered by {runs} runs; RSS {} MiB before, peak {} MiB \
         (+{grown_mib} MiB)",
        baseline_kib / 1024,
        peak_kib / 1024
    );
    assert!(grown_mib <= BUDGET_MIB, "peak RSS grew by {grown_mib} MiB, beyond the {BUDGET_MIB} MiB budget");
    assert_eq!(runs, 2, "one run for each of the two checks");
    for v in &verdicts {
        assert_eq!(v.stopped_by, "memory_budget_mib", "{}", v.summary);
        assert!(v.summary.contains("controller.memory_budget_mib"), "{}", v.summary);
    }
}
