//! What a finished election's record costs the controller, in heap bytes:
//! an in-process controller with 16 embedded nodes runs the same LIVE
//! elections (AsFar, Stages, Controlled Distance and Alternate in turn, 16
//! positions, every node an initiator) twice, once keeping every record
//! (`max_elections` above their number) and once keeping 10, and this
//! process's heap in use is read after each (a counting allocator: bytes
//! allocated and not freed). The difference over the records the first run
//! kept beyond the second's is one record's share, everything it holds
//! included (its participants, metrics, the entry and its map slots), the
//! allocator's own slack excluded. Nothing is asserted; every figure is
//! measured in this run.
//!
//! `cargo bench -p ringleader-tests --bench record_memory [-- ELECTIONS]` (default 1000).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, election};

/// The system allocator, counting the bytes in use.
struct Counting;

static IN_USE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        IN_USE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const NODES: u32 = 16;
const ALGORITHMS: [&str; 4] = ["as-far", "stages", "controlled-distance", "alternate"];

/// Heap bytes in use once `elections` LIVE elections have run on a fresh
/// controller keeping `keep` records, less those in use before them.
async fn grown(elections: u64, keep: usize) -> isize {
    let ctl = TestController::start_tuned(NODES, |c| c.max_elections = keep).await;
    let mut client = ctl.client();
    // One election first: the links, channels and pools every later one reuses.
    assert_correct(&client.start_election(election("as-far")).await.expect("StartElection").into_inner());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = IN_USE.load(Ordering::Relaxed);
    for i in 0..elections {
        let req = pb::StartElectionRequest { seed: i, ..election(ALGORITHMS[i as usize % ALGORITHMS.len()]) };
        assert_correct(&client.start_election(req).await.expect("StartElection").into_inner());
    }
    // Let the nodes' batched aborts land, so their elections are gone from the count.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = IN_USE.load(Ordering::Relaxed);
    drop(client);
    drop(ctl);
    after - before
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let elections: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1000).max(20);
    let all = grown(elections, elections as usize + 10).await;
    let few = grown(elections, 10).await;
    let kept = elections as isize - 10;
    println!(
        "record_memory: {elections} LIVE elections on {NODES} embedded nodes ({}); heap grown keeping every record: \
         {:.1} KiB, keeping 10: {:.1} KiB; per record: {:.2} KiB",
        ALGORITHMS.join(", "),
        all as f64 / 1024.0,
        few as f64 / 1024.0,
        (all - few) as f64 / kept as f64 / 1024.0
    );
}
