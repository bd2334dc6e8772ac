//! Peak heap of one simulated election per position, for every algorithm of
//! the catalogue: the figures a memory budget of the controller can estimate
//! from (docs/containers.md).
//!
//! `cargo run --release -p ringleader-core --example memory [N]` runs each
//! algorithm on its default topology (at most N positions, default 65,536;
//! fewer where its bound plus its timer events exceed 2^23, and at most 2,048
//! on complete networks), all nodes initiating, with random ids and with its
//! worst-case arrangement where it has one, and prints the larger peak of
//! allocated bytes per position (a counting allocator: bytes asked of the
//! system allocator and not yet freed).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{IdOrder, Topology};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let largest: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 16);
    println!("| algorithm | n | peak bytes per position | arrangement |");
    println!("| --- | ---: | ---: | --- |");
    for spec in CATALOGUE {
        // The largest power of two up to `largest` whose bound is at most 2^23 messages (a
        // quadratic algorithm on 2^16 positions would take hours; memory per position does not
        // depend on n).
        // A complete network has n(n - 1) links: at most 2,048 nodes.
        use ringleader_core::topology::TopologyKind;
        let mut n = if matches!(spec.default_topology(), TopologyKind::Complete | TopologyKind::CompleteChordal) {
            largest.min(2_048)
        } else {
            largest
        };
        let topo = loop {
            match Topology::build(spec.default_topology(), n, 1) {
                Ok(t) if spec.bound_for(&t, n as u64) + (spec.timer_events)(n as u64) <= 1 << 23 || n <= 1024 => {
                    break Some(t);
                }
                _ if n <= 1024 => break None,
                _ => n /= 2,
            }
        };
        let Some(topo) = topo else {
            println!("| {} | - | (no topology of these sizes) | |", spec.name);
            continue;
        };
        let all: Vec<u32> = (0..n).collect();
        let mut worst = (0usize, "");
        let mut arrangements = vec![("random", IdOrder::Random(1).arrange(n).expect("ids"))];
        if let Some(a) = spec.extras.worst_case {
            arrangements.push(("worst case", (a.ids)(n, spec.rule)));
        }
        for (name, ids) in arrangements {
            let before = NOW.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let r = sim::run(spec, &topo, &ids, &all, spec.rule, &SimConfig { seed: 1, ..SimConfig::default() });
            let peak = PEAK.load(Ordering::Relaxed) - before;
            drop(r);
            if peak > worst.0 {
                worst = (peak, name);
            }
        }
        println!("| {} | {n} | {} | {} |", spec.name, worst.0 / n as usize, worst.1);
    }
}
