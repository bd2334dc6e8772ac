//! The controller's memory budget, measured on the real
//! binary: concurrent maximal requests are admitted only as far as their
//! estimates fit `memory_budget_mib`, the others are refused
//! RESOURCE_EXHAUSTED naming the budget, and the process's peak resident
//! memory stays within its baseline plus the budget.

use std::process::{Command, Stdio};
use std::time::Duration;

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc, controller_binary, free_port, simulated, status_kib};
use tonic::Code;

/// The budget the controller gets, MiB.
const BUDGET_MIB: u64 = 200;
/// Positions of each request: controlled-distance's estimate is about 59 MiB, so three fit.
const SIZE: u32 = 130_000;
/// Requests sent at once.
const REQUESTS: usize = 8;

/// A controller with `memory_budget_mib = 200` and no nodes takes 8 SIMULATED controlled-distance
/// elections of 130,000 positions sent at once (each estimated at about 59 MiB): the ones that
/// fit beside the running ones finish correct, the others are refused RESOURCE_EXHAUSTED with a
/// message naming memory_budget_mib and the estimate; a request larger than the whole budget is
/// refused saying so; and the controller's peak RSS (VmHWM) minus its RSS before the requests
/// stays within the budget. The figures are printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_maximal_requests_stay_within_the_budget() {
    let api = free_port();
    let child = Command::new(controller_binary())
        .args(["--host", "127.0.0.1", "--port", &api.to_string()])
        .env("RINGLEADER__CONTROLLER__MEMORY_BUDGET_MIB", BUDGET_MIB.to_string())
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
    let mut client = client.expect("the controller answers");
    // Warm up (allocator arenas, the catalogue) with a small election, then take the baseline.
    client.start_election(simulated("controlled-distance", 1_000)).await.expect("a small election");
    let baseline_kib = status_kib(pid, "VmRSS");

    let too_big = client.start_election(simulated("controlled-distance", 1_000_000)).await.unwrap_err();
    assert_eq!(too_big.code(), Code::ResourceExhausted, "{too_big:?}");
    assert!(too_big.message().contains("more than the controller's whole budget of 200 MiB"), "{}", too_big.message());

    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..REQUESTS {
        let mut c = client.clone();
        calls.spawn(async move { c.start_election(simulated("controlled-distance", SIZE)).await });
    }
    let (mut admitted, mut refused) = (0, 0);
    while let Some(r) = calls.join_next().await {
        match r.expect("the call task") {
            Ok(e) => {
                let e = e.into_inner();
                assert_eq!(e.state, pb::ElectionState::Finished as i32, "{:?}", e.error);
                admitted += 1;
            }
            Err(s) => {
                assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
                assert!(s.message().starts_with("memory_budget_mib: a SIMULATED controlled-distance election of 130000 positions is estimated to take"), "{}", s.message());
                refused += 1;
            }
        }
    }
    let peak_kib = status_kib(pid, "VmHWM");
    let grown_mib = peak_kib.saturating_sub(baseline_kib) / 1024;
    eprintln!(
        "memory budget {BUDGET_MIB} MiB: {admitted} of {REQUESTS} admitted, {refused} refused; RSS {} MiB before, \
         peak {} MiB (+{grown_mib} MiB)",
        baseline_kib / 1024,
        peak_kib / 1024
    );
    assert!(admitted >= 1 && refused >= 1, "{admitted} admitted, {refused} refused");
    assert!(grown_mib <= BUDGET_MIB, "peak RSS grew by {grown_mib} MiB, beyond the {BUDGET_MIB} MiB budget");
}
