//! What one request may make the controller hold, measured on
//! this process's heap: a test binary of its own, whose global allocator
//! counts the bytes allocated and their peak.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ringleader_proto::v1 as pb;
use ringleader_tests::TestController;
use tokio_stream::StreamExt;

/// The system allocator, counting.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            let now = CURRENT.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The heap's peak above its level now, over `f`.
async fn peak_over<T>(f: impl std::future::Future<Output = T>) -> (T, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f.await;
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// Run a sweep to its end; its rows.
async fn sweep(ctl: &TestController, req: pb::CompareRequest) -> Vec<pb::CompareRow> {
    let mut stream = ctl.client().compare_algorithms(req).await.unwrap().into_inner();
    let mut rows = Vec::new();
    while let Some(ev) = stream.next().await {
        if let Some(pb::compare_event::Kind::Row(r)) = ev.unwrap().kind {
            rows.push(r);
        }
    }
    rows
}

/// A sweep of 24 SIMULATED as-far elections on 200,000 positions holds about what a sweep of one
/// does at its peak (one plan and one simulation at a time), not 24 plans: before, every point's
/// plan (7.6 MB here, 38 MB at 10^6) was built before the first ran, and 50 points at 10^6 held
/// 1.9 GiB before the first event. Fails on the code before the fix (24 plans: the peak was
/// several times the one-point sweep's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_holds_one_plan_at_a_time() {
    let ctl = TestController::start(0).await;
    let req = |repetitions| pb::CompareRequest {
        algorithms: vec!["as-far".into()],
        sizes: vec![200_000],
        repetitions,
        mode: pb::Mode::Simulated as i32,
        ..Default::default()
    };
    // Warm up (lazy statics, the runtime's blocking threads), then measure one point and 24.
    sweep(&ctl, req(1)).await;
    let (rows, one) = peak_over(sweep(&ctl, req(1))).await;
    assert_eq!(rows.len(), 1);
    let (rows, many) = peak_over(sweep(&ctl, req(24))).await;
    assert_eq!(rows.len(), 24);
    assert!(rows.iter().all(|r| r.correct), "{rows:?}");
    eprintln!("heap peak: one point {} MB, 24 points {} MB", one >> 20, many >> 20);
    assert!(many < one + one / 2, "24 points peaked at {} MB, one point at {} MB", many >> 20, one >> 20);
    ctl.stop().await;
}

/// A SIMULATED election on 256 positions with a labelled diagram on the causal axis: a diagram of
/// about a megabyte.
fn big_diagram() -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        diagram_options: Some(pb::DiagramOptions {
            axis: pb::DiagramAxis::Causal as i32,
            labels: true,
            heartbeats: false,
        }),
        ..ringleader_tests::simulated("as-far", 256)
    }
}

/// Stored diagrams count against `max_stored_mib` (here 4 MiB): after ten elections with diagrams
/// of a megabyte, the newest keep theirs, the oldest lost theirs with a note saying why, the heap
/// grew by about the cap and not by ten diagrams, and ListElections answers without diagrams (a
/// small answer). Before, `max_elections` counted records, not bytes: 70 such records OOM-killed a
/// controller under the k8s limit, and ListElections sent every diagram (28 MiB for ten). Fails on
/// the code before the fix (every diagram kept, no note; the list carried the diagrams).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_diagrams_keep_within_their_bytes() {
    let ctl = TestController::start_tuned(0, |c| c.max_stored_mib = 4).await;
    let mut client = ctl.client();
    let first = client.start_election(big_diagram()).await.unwrap().into_inner();
    let size = first.diagram_svg.len();
    assert!(size > 512 << 10, "a diagram of {size} bytes");
    let (ids, grown) = peak_over(async {
        let mut ids = vec![first.election_id.clone()];
        for _ in 0..9 {
            ids.push(client.start_election(big_diagram()).await.unwrap().into_inner().election_id);
        }
        ids
    })
    .await;
    let mut kept = 0;
    for (i, id) in ids.iter().enumerate() {
        let e = client.get_election(pb::GetElectionRequest { election_id: id.clone() }).await.unwrap().into_inner();
        if e.diagram_svg.is_empty() {
            assert!(e.notes.iter().any(|n| n.contains("controller.max_stored_mib")), "election {i}: {:?}", e.notes);
            assert_eq!(kept, 0, "the oldest diagrams go first");
        } else {
            kept += 1;
        }
    }
    eprintln!("diagrams of {} KiB: {kept} of 10 kept within 4 MiB; heap peak +{} MiB", size >> 10, grown >> 20);
    assert!(kept >= 1 && kept * size <= 4 << 20, "{kept} diagrams of {size} bytes kept");
    let list = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner();
    assert!(list.elections.iter().all(|e| e.diagram_svg.is_empty() && e.participants.is_empty()));
    let listed = prost::Message::encoded_len(&list);
    assert!(listed < 64 << 10, "ListElections of 10 records: {listed} bytes");
    ctl.stop().await;
}
