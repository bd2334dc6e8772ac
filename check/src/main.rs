//! `ringleader-check`: every schedule of every election of small size, for
//! the algorithms named (all one-shot algorithms of the catalogue by
//! default); a line per algorithm and size, the shortest counterexample of
//! each broken property, and with `--markdown` the table of docs/checking.md.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ringleader_check::{Limits, sweep};
use ringleader_core::algo::catalogue::{self, CATALOGUE};

/// Check every schedule (delivery order and wake-up order) of every id
/// arrangement and initiator set of small elections.
#[derive(Parser, Debug)]
#[command(name = "ringleader-check", version)]
struct Args {
    /// Algorithms to check (catalogue names); every one by default (in its
    /// one-shot mode).
    algorithms: Vec<String>,
    /// Sizes to check, e.g. `3,4`.
    #[arg(long, value_delimiter = ',', default_value = "3,4")]
    n: Vec<u32>,
    /// Deliver in any order, even where the algorithm assumes FIFO links.
    #[arg(long)]
    any_order: bool,
    /// Stop each election's check after about this many states (0: none).
    #[arg(long, default_value_t = 0)]
    max_states: usize,
    /// Stop each election's check after this many seconds (0: none).
    #[arg(long, default_value_t = 0)]
    timeout_s: u64,
    /// Explore depth-first (a smaller queue; counterexamples need not be shortest).
    #[arg(long)]
    dfs: bool,
    /// Print the results as the Markdown table of docs/checking.md.
    #[arg(long)]
    markdown: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let specs: Vec<_> = if args.algorithms.is_empty() {
        CATALOGUE.iter().collect()
    } else {
        let mut specs = Vec::new();
        for name in &args.algorithms {
            match catalogue::find(name) {
                Some(s) => specs.push(s),
                None => {
                    eprintln!("unknown algorithm {name:?}; known: {}", catalogue::names());
                    return ExitCode::from(2);
                }
            }
        }
        specs
    };
    if let Some(&n) = args.n.iter().find(|&&n| !(2..=6).contains(&n)) {
        eprintln!("--n {n}: sizes from 2 to 6 only (the state space grows factorially)");
        return ExitCode::from(2);
    }
    if args.markdown {
        println!(
            "| algorithm | n | links | elections | states | depth | most messages (all initiate) | bound | verdict | time |"
        );
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    }
    let mut failed = false;
    for spec in specs {
        for &n in &args.n {
            let fifo = spec.assumptions.fifo && !args.any_order;
            let limits = Limits {
                fifo,
                max_states: args.max_states,
                max_depth: 0,
                timeout: (args.timeout_s > 0).then(|| Duration::from_secs(args.timeout_s)),
                depth_first: args.dfs,
            };
            let mut done = 0usize;
            let result = sweep(spec, n, 7, spec.rule, limits, |_, _, _| {
                done += 1;
                if done.is_multiple_of(100) {
                    eprint!("\r{} n={n}: {done} elections checked", spec.name);
                }
            });
            if done >= 100 {
                eprintln!();
            }
            let s = match result {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{} n={n}: {e}", spec.name);
                    continue;
                }
            };
            let verdict = if s.unsupported {
                "not checked: sets timers".to_string()
            } else if !s.broken.is_empty() {
                failed = true;
                format!("BROKEN ({} elections)", s.broken.len())
            } else if !s.complete {
                "holds where explored (limits reached)".to_string()
            } else {
                "holds on every schedule".to_string()
            };
            let links = if fifo { "FIFO" } else { "any order" };
            if args.markdown && s.unsupported {
                println!("| {} | {n} | {links} | — | — | — | — | — | {verdict} | — |", spec.name);
            } else if args.markdown {
                println!(
                    "| {} | {n} | {links} | {} | {} | {} | {} | {} | {verdict} | {:.1} s |",
                    spec.name,
                    s.elections,
                    s.states,
                    s.depth,
                    s.all_initiators.0,
                    s.all_initiators.1,
                    s.elapsed.as_secs_f64()
                );
            } else {
                println!(
                    "{} n={n} ({links}): {} elections, {} states, depth {}, most messages {} (all initiating {} of bound {}); {verdict} in {:.1} s",
                    spec.name,
                    s.elections,
                    s.states,
                    s.depth,
                    s.most_messages,
                    s.all_initiators.0,
                    s.all_initiators.1,
                    s.elapsed.as_secs_f64()
                );
            }
            for (ids, initiators, c) in s.broken.iter().take(3) {
                eprintln!(
                    "  ids {ids:?}, initiators {initiators:?}: {} broken by {} steps:",
                    c.property,
                    c.steps.len()
                );
                for (i, step) in c.steps.iter().enumerate() {
                    eprintln!("    {:>3}. {step:?}", i + 1);
                }
                eprintln!(
                    "    decisions: {:?}{}",
                    c.decisions,
                    c.error.as_ref().map(|e| format!("; {e}")).unwrap_or_default()
                );
            }
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
