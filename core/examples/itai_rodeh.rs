//! Itai-Rodeh's rounds, sampled: termination with probability 1 shown by
//! running many seeds in the simulator on an anonymous ring (every node id
//! 1, every node initiating), beside the expectation of this algorithm's
//! round count and Lavault-Louchard's figure.
//!
//! `cargo run --release -p ringleader-core --example itai_rodeh [RUNS]`
//! (default 2,000 seeds per size) prints, per ring size n: the mean and
//! largest number of rounds over the seeds, the mean messages, and
//! `E(n)`, the expected rounds of this algorithm with n active nodes each
//! drawing from {1..n} (the nodes holding the round's greatest draw go on;
//! one alone leads): E(a) = 1 + Σ_{j≥2} P(a, j) E(j), P(a, j) the chance
//! that exactly j of a draws hold the maximum. Last, `M(n)`: Lavault and
//! Louchard's expected rounds of Itai-Rodeh's other protocol, in which each
//! of the a candidates left stays one with probability 1/a (their
//! recurrence; its limit M(∞) = 2.441716 is the "about 2.44" often quoted).
//! The two count different rounds: only `E(n)` is this algorithm's.

use ringleader_core::algo::catalogue;
use ringleader_core::protocol::Msg;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{Topology, TopologyKind};

/// Binomial coefficients as f64, row by row up to `n`.
fn binomials(n: usize) -> Vec<Vec<f64>> {
    let mut c = vec![vec![1.0f64]];
    for a in 1..=n {
        let mut row = vec![1.0; a + 1];
        for j in 1..a {
            row[j] = c[a - 1][j - 1] + c[a - 1][j];
        }
        c.push(row);
    }
    c
}

/// E(a) for a = 0..=n: expected rounds until one of a nodes drawing from {1..n} holds the maximum alone.
fn expected_rounds(n: usize) -> Vec<f64> {
    let c = binomials(n);
    let nf = n as f64;
    let mut e = vec![0.0; n + 1];
    for a in 2..=n {
        // P(a, j) = C(a, j) Σ_m (1/n)^j ((m − 1)/n)^(a − j), m the maximum drawn.
        let p = |j: usize| -> f64 {
            let s: f64 = (1..=n).map(|m| ((m - 1) as f64 / nf).powi((a - j) as i32)).sum();
            c[a][j] * nf.powi(-(j as i32)) * s
        };
        let rest: f64 = (2..a).map(|j| p(j) * e[j]).sum();
        e[a] = (1.0 + rest) / (1.0 - p(a));
    }
    e
}

/// Lavault-Louchard's M(a): each of a candidates stays one with probability 1/a; none left repeats
/// the round with the same a.
fn lavault_louchard(n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n + 1];
    for a in 2..=n {
        let q = 1.0 / a as f64;
        // The binomial(a, 1/a) probabilities, term by term (no coefficient overflows).
        let mut p = vec![(1.0 - q).powi(a as i32); a + 1];
        for j in 0..a {
            p[j + 1] = p[j] * (a - j) as f64 / (j + 1) as f64 * q / (1.0 - q);
        }
        let rest: f64 = (2..a).map(|j| p[j] * m[j]).sum();
        m[a] = (1.0 + rest) / (1.0 - p[0] - p[a]);
    }
    m
}

fn main() {
    let runs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2_000);
    let spec = catalogue::find("itai-rodeh").expect("in the catalogue");
    let sizes = [3usize, 4, 5, 8, 16, 32, 64];
    let ll = lavault_louchard(4_096);
    println!(
        "| n | runs | mean rounds | most rounds | E(n), this algorithm | mean messages | M(n), Lavault-Louchard |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for n in sizes {
        let topo = Topology::build(TopologyKind::RingUni, n as u32, 1).expect("ring");
        let ids = vec![1u64; n];
        let all: Vec<u32> = (0..n as u32).collect();
        let (mut rounds, mut most, mut messages) = (0u64, 0u32, 0u64);
        for seed in 0..runs {
            let cfg = SimConfig { seed, log_arrows: true, ..SimConfig::default() };
            let r = sim::run(spec, &topo, &ids, &all, spec.rule, &cfg);
            assert!(r.verdict.violations.is_empty() && r.verdict.leader.is_some(), "n = {n}, seed {seed}: {r:?}");
            let last = r
                .arrows
                .iter()
                .filter_map(|a| match a.msg {
                    Some(Msg::RandomId { round, .. }) => Some(round),
                    _ => None,
                })
                .max()
                .expect("round 1 at least");
            rounds += u64::from(last);
            most = most.max(last);
            messages += r.sent_per_node.iter().sum::<u64>();
        }
        println!(
            "| {n} | {runs} | {:.3} | {most} | {:.3} | {:.1} | {:.3} |",
            rounds as f64 / runs as f64,
            expected_rounds(n)[n],
            messages as f64 / runs as f64,
            ll[n]
        );
    }
    println!("M(4096) = {:.6} (Lavault-Louchard's limit M(∞) = 2.441716)", ll[4_096]);
}
