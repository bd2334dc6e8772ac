//! `ringleader-check`: every schedule of every election of small size, for
//! the algorithms named (every algorithm of the catalogue in its one-shot
//! mode by default; the kept leaderships under faults with `--kept`); a line
//! per algorithm and size, the shortest counterexample of each broken
//! property (drawn as SVG with `--svg DIR`), and with `--markdown` the tables
//! of docs/checking.md.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ringleader_check::{Election, Faults, KeptCheck, Limits, diagram, split_words, sweep, sweep_kept};
use ringleader_core::algo::catalogue::{self, CATALOGUE};
use ringleader_core::algo::detector::DetectorConfig;

// A check clones and drops a state per move: glibc's malloc and free took a
// quarter of a kept check's time, mimalloc's much less (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Deliver in sending order on every link, even where the algorithm does
    /// not assume FIFO links, as the runtime's one stream per directed link
    /// does: a stronger assumption than such an algorithm's own, for fewer
    /// states (see docs/checking.md, "FIFO links").
    #[arg(long, conflicts_with = "any_order")]
    fifo: bool,
    /// Stop each election's check after about this many states (0: none).
    #[arg(long, default_value_t = 0)]
    max_states: usize,
    /// Stop each election's check after this many seconds (0: none).
    #[arg(long, default_value_t = 0)]
    timeout_s: u64,
    /// Explore depth-first (a smaller queue; counterexamples need not be shortest).
    #[arg(long)]
    dfs: bool,
    /// Kept: let quiet heartbeats arrive at every point, not only just before
    /// their receiver's steps (no partial-order reduction; same verdicts,
    /// many more states).
    #[arg(long)]
    no_reduction: bool,
    /// Kept: tell states apart by the ticks since the last fault too, instead
    /// of exploring a state again only when it comes back later after a fault
    /// (no subsumption; same verdicts, many more states).
    #[arg(long)]
    no_subsumption: bool,
    /// On a complete network, check one arrangement of the ids per set of
    /// initiators, not all n! of them: the others are renamings of it.
    #[arg(long)]
    symmetric: bool,
    /// Stop when the process's resident memory passes this many MiB (0: none).
    #[arg(long, default_value_t = 0)]
    max_memory_mib: u64,
    /// Check the kept leaderships (the algorithms with a kept mode)
    /// behind the heartbeat detector, with the faults below, instead of the
    /// one-shot elections.
    #[arg(long)]
    kept: bool,
    /// Kept: crashes a schedule may contain (each may recover).
    #[arg(long, default_value_t = 1)]
    crashes: u8,
    /// Kept: a crashed node may recover, as a new incarnation (otherwise
    /// crashes are for good).
    #[arg(long)]
    recover: bool,
    /// Kept: lost messages a schedule may contain.
    #[arg(long, default_value_t = 1)]
    losses: u8,
    /// Kept: duplicated messages a schedule may contain.
    #[arg(long, default_value_t = 0)]
    duplications: u8,
    /// Kept: partitions a schedule may contain (each heals).
    #[arg(long, default_value_t = 0)]
    partitions: u8,
    /// Kept: the detector's heartbeat period, in ms.
    #[arg(long, default_value_t = DetectorConfig::LOOPBACK.period_ms)]
    period_ms: u64,
    /// Kept: silence after which the detector suspects a neighbour, in ms.
    #[arg(long, default_value_t = DetectorConfig::LOOPBACK.timeout_ms)]
    suspect_ms: u64,
    /// The longest a message takes, in ms: one tick of the model's clock
    /// (default: the detector's period).
    #[arg(long)]
    delay_ms: Option<u64>,
    /// Kept: timers fire on time (a node whose timer is due takes no message
    /// sent after it fell due): a stronger assumption than the default, which
    /// lets a due timer fire anywhere in its tick, for far fewer states (see
    /// docs/checking.md, "Punctual timers").
    #[arg(long)]
    punctual_timers: bool,
    /// Kept: a partition heals within this many ms (default: at any point,
    /// or never; the side without a quorum may then climb through terms, and
    /// the states with it, without end).
    #[arg(long)]
    partition_ms: Option<u64>,
    /// Kept, with partitions: the ids on one side of the one split a
    /// partition makes, e.g. `4` (the node with id 4 alone) or `1,2`
    /// (default: any split). The ids of a kept check are 1..=n.
    #[arg(long, value_delimiter = ',')]
    partition_side: Vec<u64>,
    /// Kept, with partitions: check each split alone, a line each (the same
    /// states as one check of every split, in pieces that finish and report
    /// on their own).
    #[arg(long)]
    each_split: bool,
    /// Write each counterexample's space-time diagram (SVG) into this directory.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// Print the results as the Markdown table of docs/checking.md.
    #[arg(long)]
    markdown: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let specs: Vec<_> = if args.algorithms.is_empty() {
        CATALOGUE.iter().filter(|s| !args.kept || s.kept.is_some()).collect()
    } else {
        let mut specs = Vec::new();
        for name in &args.algorithms {
            match catalogue::find(name) {
                Some(s) if args.kept && s.kept.is_none() => {
                    eprintln!("--kept: {name} has no kept mode ({} do)", catalogue::kept_names());
                    return ExitCode::from(2);
                }
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
    let detector = DetectorConfig { period_ms: args.period_ms, timeout_ms: args.suspect_ms };
    if let Err(e) = detector.validate() {
        eprintln!("--period-ms/--suspect-ms: {e}");
        return ExitCode::from(2);
    }
    if args.delay_ms == Some(0) {
        eprintln!("--delay-ms must be positive");
        return ExitCode::from(2);
    }
    if args.partition_ms == Some(0) {
        eprintln!("--partition-ms must be positive");
        return ExitCode::from(2);
    }
    if (!args.partition_side.is_empty() || args.each_split) && (!args.kept || args.partitions == 0) {
        eprintln!("--partition-side/--each-split: only with --kept and --partitions 1 or more");
        return ExitCode::from(2);
    }
    if !args.partition_side.is_empty() && args.each_split {
        eprintln!("--partition-side and --each-split: one or the other");
        return ExitCode::from(2);
    }
    if args.punctual_timers && !args.kept {
        eprintln!("--punctual-timers: only kept leaderships have timers (add --kept)");
        return ExitCode::from(2);
    }
    let faults = Faults {
        crashes: args.crashes,
        recover: args.recover,
        losses: args.losses,
        duplications: args.duplications,
        partitions: args.partitions,
    };
    if args.markdown && args.kept {
        println!("| algorithm | n | faults | states | explored | depth | verdict | time |");
        println!("| --- | ---: | --- | ---: | ---: | ---: | --- | ---: |");
    } else if args.markdown {
        println!(
            "| algorithm | n | links | elections | states | depth | most messages (all initiate) | bound | verdict | time |"
        );
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    }
    let mut failed = false;
    for spec in specs {
        for &n in &args.n {
            let sides: Vec<Option<u32>> = if args.each_split {
                (1..1u32 << (n - 1)).map(|side| Some(side << 1)).collect()
            } else if args.partition_side.is_empty() {
                vec![None]
            } else {
                match side_of(&args.partition_side, n) {
                    Ok(side) => vec![Some(side)],
                    Err(e) => {
                        eprintln!("--partition-side: {e}");
                        return ExitCode::from(2);
                    }
                }
            };
            for side in sides {
                let fifo = (spec.assumptions.fifo || args.fifo) && !args.any_order;
                let limits = Limits {
                    fifo,
                    max_states: args.max_states,
                    max_depth: 0,
                    timeout: (args.timeout_s > 0).then(|| Duration::from_secs(args.timeout_s)),
                    max_memory_mib: args.max_memory_mib,
                    depth_first: args.dfs,
                    reduce: !args.no_reduction,
                    symmetric: args.symmetric,
                    subsume: !args.no_subsumption,
                };
                let result = if args.kept {
                    let delay_ms = args.delay_ms.unwrap_or(detector.period_ms);
                    let (punctual_timers, partition_ms) = (args.punctual_timers, args.partition_ms);
                    let how =
                        KeptCheck { detector, faults, delay_ms, punctual_timers, partition_ms, partition_side: side };
                    let mut last = 0;
                    let r = sweep_kept(spec, n, how, limits, None, |p| {
                        if p.elapsed.as_secs() >= last + 5 {
                            last = p.elapsed.as_secs();
                            eprint!(
                                "\r{} n={n}: {} states, depth {} ({:.0} s)",
                                spec.name,
                                p.states,
                                p.depth,
                                p.elapsed.as_secs_f64()
                            );
                        }
                    });
                    if last > 0 {
                        eprintln!();
                    }
                    r
                } else {
                    let mut done = 0usize;
                    let r = sweep(spec, n, 7, spec.rule, limits, |_, _, _| {
                        done += 1;
                        if done.is_multiple_of(100) {
                            eprint!("\r{} n={n}: {done} elections checked", spec.name);
                        }
                    });
                    if done >= 100 {
                        eprintln!();
                    }
                    r
                };
                let s = match result {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("{} n={n}: {e}", spec.name);
                        continue;
                    }
                };
                let verdict = if !s.broken.is_empty() {
                    failed = true;
                    let mut elections: Vec<_> = s.broken.iter().map(|(ids, initiators, _)| (ids, initiators)).collect();
                    elections.dedup();
                    let properties = s.broken.len();
                    let plural = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
                    format!(
                        "BROKEN ({} in {})",
                        plural(properties, "property", "properties"),
                        plural(elections.len(), "election", "elections")
                    )
                } else if !s.complete {
                    "holds where explored (limits reached)".to_string()
                } else {
                    "holds on every schedule".to_string()
                };
                let links = if fifo { "FIFO" } else { "any order" };
                // The faults in words, saying "FIFO links" where the algorithm does not assume them.
                let words = |fifo_links| describe(faults, args.punctual_timers, fifo_links, args.partition_ms, side, n);
                let (most, bound) = if args.kept {
                    ("—".to_string(), "—".to_string())
                } else {
                    (s.all_initiators.0.to_string(), s.all_initiators.1.to_string())
                };
                if args.markdown && args.kept {
                    println!(
                        "| {} | {n} | {} | {} | {} | {} | {verdict} | {:.1} s |",
                        spec.name,
                        words(fifo && !spec.assumptions.fifo),
                        s.states,
                        s.explored,
                        s.depth,
                        s.elapsed.as_secs_f64()
                    );
                } else if args.markdown {
                    println!(
                        "| {} | {n} | {links} | {} | {} | {} | {most} | {bound} | {verdict} | {:.1} s |",
                        spec.name,
                        s.elections,
                        s.states,
                        s.depth,
                        s.elapsed.as_secs_f64()
                    );
                } else if args.kept {
                    println!(
                        "{} n={n} kept ({links}, {}): {} states ({} explored), depth {}; {verdict} in {:.1} s",
                        spec.name,
                        words(false), // the links are named already
                        s.states,
                        s.explored,
                        s.depth,
                        s.elapsed.as_secs_f64()
                    );
                } else {
                    println!(
                        "{} n={n} ({links}): {} elections, {} states, depth {}, most messages {} (all initiating {most} of bound {bound}); {verdict} in {:.1} s",
                        spec.name,
                        s.elections,
                        s.states,
                        s.depth,
                        s.most_messages,
                        s.elapsed.as_secs_f64()
                    );
                }
                for (k, (ids, initiators, c)) in s.broken.iter().enumerate().take(3) {
                    if let Some(dir) = &args.svg {
                        let topology = match ringleader_core::topology::Topology::build(spec.default_topology(), n, 7) {
                            Ok(t) => t,
                            Err(e) => {
                                eprintln!("{e}");
                                return ExitCode::from(2);
                            }
                        };
                        let mut e = Election::new(spec, topology, ids.clone(), initiators.clone(), spec.rule);
                        if args.kept {
                            e = Election {
                                delay_ms: args.delay_ms.unwrap_or(detector.period_ms),
                                punctual_timers: args.punctual_timers,
                                partition_ms: args.partition_ms,
                                partition_side: side,
                                ..Election::kept(spec, e.topology, e.ids, detector, faults)
                            };
                        }
                        let path = dir.join(format!("{}-n{n}-{}.svg", spec.name, k + 1));
                        match std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, diagram(&e, fifo, c))) {
                            Ok(()) => eprintln!("  diagram: {}", path.display()),
                            Err(err) => {
                                eprintln!("--svg {}: {err}", dir.display());
                                return ExitCode::from(2);
                            }
                        }
                    }
                    eprintln!(
                        "  ids {ids:?}, initiators {initiators:?}: {} broken by {} steps:",
                        c.property,
                        c.steps.len()
                    );
                    for (i, step) in c.steps.iter().enumerate() {
                        eprintln!("    {:>3}. {step:?}", i + 1);
                    }
                    eprintln!(
                        "    decisions: {:?}; beliefs: {:?}{}",
                        c.decisions,
                        c.beliefs,
                        c.error.as_ref().map(|e| format!("; {e}")).unwrap_or_default()
                    );
                }
            }
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// The positions on one side of a split of the kept check's nodes (ids
/// 1..=n, position = id − 1), from the ids on that side.
fn side_of(ids: &[u64], n: u32) -> Result<u32, String> {
    let mut side = 0u32;
    for &id in ids {
        if !(1..=u64::from(n)).contains(&id) {
            return Err(format!("id {id}: the ids of a kept check of {n} nodes are 1..={n}"));
        }
        side |= 1 << (id - 1);
    }
    if side.count_ones() as usize != ids.len() {
        return Err(format!("{ids:?} names a node twice"));
    }
    if side.count_ones() == n {
        return Err(format!("{ids:?} is every node: a split needs a node on each side"));
    }
    Ok(side)
}

/// The faults of a kept check, in words (with how soon a partition heals,
/// the one split it makes, the timers' punctuality, and links made FIFO).
fn describe(
    f: Faults,
    punctual_timers: bool,
    fifo: bool,
    partition_ms: Option<u64>,
    side: Option<u32>,
    n: u32,
) -> String {
    let mut parts = Vec::new();
    let mut some = |count: u8, what: &str| {
        if count > 0 {
            parts.push(format!("{count} {what}"));
        }
    };
    some(f.crashes, if f.recover { "crash (recovering)" } else { "crash" });
    some(f.losses, "lost message");
    some(f.duplications, "duplicate");
    let mut partition = "partition".to_string();
    if let Some(side) = side {
        let ids: Vec<u64> = (1..=u64::from(n)).collect();
        partition = format!("partition {}", split_words(side, &ids));
    }
    if let Some(ms) = partition_ms {
        partition = format!("{partition} (healing within {ms} ms)");
    }
    some(f.partitions, &partition);
    let faults = if parts.is_empty() { "none".into() } else { parts.join(", ") };
    let mut words = faults;
    if punctual_timers {
        words.push_str("; punctual timers");
    }
    if fifo {
        words.push_str("; FIFO links");
    }
    words
}
