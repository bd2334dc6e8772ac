//! `ringleader-check`: every schedule of every election of small size, for
//! the algorithms named (every algorithm of the catalogue in its one-shot
//! mode by default; the kept leaderships under faults with `--kept`); a line
//! per algorithm and size, the shortest counterexample of each broken
//! property (drawn as SVG with `--svg DIR`), and with `--markdown` the tables
//! of docs/checking.md. `--program DIR` checks a program of one's own (a
//! directory with its `program.json`, docs/programs.md) as it checks a
//! built-in.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use ringleader_check::{
    CheckAsk, Checked, Clock, Election, Faults, KeptCheck, Limits, Refusal, STORE_DEPTH, Sweep, check, diagram,
    split_words, sweep_drawn, sweep_kept,
};
use ringleader_check::{Walks, simulate};
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::faults::{MAX_CLOCK_RATE, MIN_CLOCK_RATE};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::spec::Provision;
use ringleader_program::{Isolation, Program, ProgramError};

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
    /// Check the program in this directory (its `program.json` and the code
    /// it names, docs/programs.md) instead, as a built-in is checked.
    #[arg(long, value_name = "DIR")]
    program: Option<PathBuf>,
    /// With --program: run it even where the host cannot give it a network
    /// namespace of its own (it may then reach the network).
    #[arg(long, requires = "program")]
    no_isolation: bool,
    /// Sizes to check, e.g. `3,4`.
    #[arg(long, value_delimiter = ',', default_value = "3,4")]
    n: Vec<u32>,
    /// Check the one election with these ids in position order, e.g.
    /// `4,4,4,4` (every node initiating; its size is their number), instead
    /// of every arrangement of 1..=n. One-shot ids may repeat: an anonymous
    /// ring, whose symmetric execution is reported in rounds.
    #[arg(long, value_delimiter = ',', conflicts_with = "anonymous")]
    ids: Vec<u64>,
    /// Check the one election in which every node has id 1 (an anonymous
    /// ring), at each size of `--n`.
    #[arg(long)]
    anonymous: bool,
    /// The seed of the nodes' random bits, as an election of this seed
    /// draws them (randomised algorithms: Itai-Rodeh's draws, ProbAsFar's
    /// directions); every schedule of those draws is checked.
    #[arg(long, default_value_t = 0)]
    seed: u64,
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
    /// Explore no schedule longer than this many steps (0: no limit): every
    /// schedule up to that length, where the states never end (a lease's
    /// record revision grows with every renewal).
    #[arg(long, default_value_t = 0)]
    max_depth: usize,
    /// Explore depth-first (a smaller queue; counterexamples need not be shortest).
    #[arg(long)]
    dfs: bool,
    /// Threads to check on: a sweep checks that many elections at once
    /// (default: the machine's cores); one election's check (kept, `--ids`)
    /// expands that many states at once breadth-first (default: 1). The same
    /// states, verdicts and counterexamples on any number (docs/checking.md,
    /// "Threads").
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
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
    /// Kept: the node with this id keeps a clock that runs at a rate other
    /// than real time's, as `ID=RATE` (`1=0.1`: id 1's clock at a tenth of
    /// real time; its timers last ten times as long), as the simulator's
    /// clock fault does. The ids of a kept check are 1..=n.
    #[arg(long, value_parser = parse_clock)]
    clock: Option<(u64, f64)>,
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
    /// Sample instead of exploring every schedule: random walks from the
    /// initial state, each taking at every state one of its moves chosen by a
    /// seeded generator, to `--depth` moves or until no move is left; the first
    /// walk that breaks a property is reported with its seed (see
    /// docs/checking.md, "Random walks"). One election: the ids of `--ids`, or
    /// 1..=n, every node initiating.
    #[arg(long)]
    simulate: bool,
    /// With --simulate: how many walks.
    #[arg(long, requires = "simulate", default_value_t = ringleader_check::Walks::DEFAULT.walks,
          value_parser = clap::value_parser!(u64).range(1..))]
    walks: u64,
    /// With --simulate: the most moves a walk takes.
    #[arg(long, requires = "simulate", default_value_t = ringleader_check::Walks::DEFAULT.depth)]
    depth: usize,
    /// With --simulate: the first walk's seed (each next walk's is drawn from
    /// the one before). A violation's seed given here walks it again first.
    #[arg(long, requires = "simulate", default_value_t = ringleader_check::Walks::DEFAULT.seed)]
    walk_seed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let program = match load(&args) {
        Ok(program) => program,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let checks = match plan(&args, program.as_ref().map(|p| p.name())) {
        Ok(checks) => checks,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    print_header(&args);
    let mut failed = false;
    for check in &checks {
        match run(&args, check) {
            Ok(broken) => failed |= broken,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(program) = program {
        let s = program.stats();
        let counted = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        eprintln!(
            "program {}: {} answered by its processes, {} from its memo; {} started, {}",
            program.name(),
            counted(s.steps, "request", "requests"),
            s.cache_hits,
            counted(s.processes_started, "process", "processes"),
            counted(s.failures, "failure", "failures"),
        );
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// The program `--program` names, loaded and installed in the catalogue (so the checks below find it by
/// its name, as they find a built-in), or `None` without `--program`.
fn load(args: &Args) -> Result<Option<Arc<Program>>, CliError> {
    let Some(dir) = &args.program else { return Ok(None) };
    if !args.algorithms.is_empty() {
        return Err(CliError::ProgramAndAlgorithms(args.algorithms.join(", ")));
    }
    let isolation = if args.no_isolation { Isolation::None } else { Isolation::Required };
    let program = ringleader_program::load(dir, ringleader_program::Limits::default(), isolation)
        .and_then(|p| p.install().map(|_| p))
        .map_err(|source| match source {
            ProgramError::Isolation { program, reason } => CliError::Isolation { program, reason },
            source => CliError::Program { dir: dir.clone(), source },
        })?;
    // A check meets the same failing step in many interleavings: it fails from the memo.
    program.remember_failures();
    Ok(Some(program))
}

/// One check to run: an algorithm at one size (and, with `--each-split`, one split), validated.
struct Planned {
    spec: &'static AlgorithmSpec,
    n: u32,
    checked: Checked,
}

/// What is wrong with a `--clock` value.
#[derive(Debug, thiserror::Error)]
enum ClockArgError {
    /// No `=` between the id and the rate.
    #[error("ID=RATE, e.g. 1=0.1")]
    Form,
    /// The id is not a number.
    #[error("id: {0}")]
    Id(#[from] std::num::ParseIntError),
    /// The rate is not a number.
    #[error("rate: {0}")]
    Rate(#[from] std::num::ParseFloatError),
    /// The rate is outside the simulator's bounds.
    #[error("rate {0}: within {MIN_CLOCK_RATE}..={MAX_CLOCK_RATE} (times real time)")]
    Bounds(f64),
}

/// `--clock ID=RATE`: an id and a rate within the simulator's bounds.
fn parse_clock(text: &str) -> Result<(u64, f64), ClockArgError> {
    let (id, rate) = text.split_once('=').ok_or(ClockArgError::Form)?;
    let (id, rate): (u64, f64) = (id.trim().parse()?, rate.trim().parse()?);
    if !(MIN_CLOCK_RATE..=MAX_CLOCK_RATE).contains(&rate) {
        return Err(ClockArgError::Bounds(rate));
    }
    Ok((id, rate))
}

/// Why the command cannot do what it was asked (exit status 2).
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// A check the controller's CheckAlgorithm would refuse too.
    #[error("{}", refused(.0))]
    Refused(Refusal),
    /// `--each-split` without kept partitions to split.
    #[error("--each-split: only with --kept and --partitions 1 or more")]
    EachSplitAlone,
    /// `--partition-side` and `--each-split` together.
    #[error("--partition-side and --each-split: one or the other")]
    SideAndEachSplit,
    /// `--clock` on a one-shot check, whose elections run at real rate.
    #[error("--clock: only with --kept (a one-shot check's clocks all run at real rate)")]
    ClockOneShot,
    /// `--clock` names an id the check does not have.
    #[error("--clock: no id {0} among 1..={1}")]
    ClockId(u64, u32),
    /// The overlay a counterexample is drawn on cannot be built.
    #[error(transparent)]
    Topology(#[from] ringleader_core::topology::TopologyError),
    /// `--program` and algorithm names together.
    #[error("--program and algorithm names ({0}): a program is checked alone")]
    ProgramAndAlgorithms(String),
    /// The program could not be loaded (its error names the manifest's field, or the step that failed).
    #[error("--program {}: {source}", dir.display())]
    Program {
        /// The directory given.
        dir: PathBuf,
        /// What loading it met.
        source: ProgramError,
    },
    /// The host cannot keep the program off the network, and `--no-isolation` was not given.
    #[error(
        "--program: program {program}: the host allows no network namespace ({reason}), and a program runs without \
         network unless --no-isolation says otherwise"
    )]
    Isolation {
        /// The program's name.
        program: String,
        /// What the host answered.
        reason: String,
    },
    /// A diagram could not be written.
    #[error("--svg {}: {source}", dir.display())]
    Svg {
        /// The directory asked for.
        dir: std::path::PathBuf,
        /// What writing met.
        source: std::io::Error,
    },
}

/// A refusal in the command line's words: the flag at fault (the algorithms are positional).
fn refused(r: &Refusal) -> String {
    match r.field {
        "algorithm" => format!("algorithm: {}", r.why),
        "detector" => format!("--period-ms/--suspect-ms: {}", r.why),
        _ => format!("{}: {}", r.flag(), r.why),
    }
}

/// Every check the arguments ask for, each validated as the controller's CheckAlgorithm validates it
/// ([`CheckAsk`]), or the first refusal.
fn plan(args: &Args, program: Option<&str>) -> Result<Vec<Planned>, CliError> {
    let names: Vec<&str> = if let Some(name) = program {
        vec![name]
    } else if args.algorithms.is_empty() {
        CATALOGUE.iter().filter(|s| !args.kept || s.kept.is_some()).map(|s| s.name).collect()
    } else {
        args.algorithms.iter().map(String::as_str).collect()
    };
    if args.each_split && (!args.kept || args.partitions == 0) {
        return Err(CliError::EachSplitAlone);
    }
    if args.clock.is_some() && !args.kept {
        return Err(CliError::ClockOneShot);
    }
    if !args.partition_side.is_empty() && args.each_split {
        return Err(CliError::SideAndEachSplit);
    }
    let mut out = Vec::new();
    let sizes = if args.ids.is_empty() { args.n.clone() } else { vec![args.ids.len() as u32] };
    for name in names {
        for &n in &sizes {
            let ask = ask(args, name, n);
            let spec = ask.spec().map_err(CliError::Refused)?;
            let mut checked = ask.check().map_err(CliError::Refused)?;
            checked.election.seed = args.seed;
            if let Some((id, rate)) = args.clock {
                let position = u32::try_from(id).ok().and_then(|i| i.checked_sub(1)).filter(|&p| p < n);
                let position = position.ok_or(CliError::ClockId(id, n))?;
                checked.election.clock = Some(Clock { position, rate });
            }
            if args.each_split {
                for side in (1..1u32 << (n - 1)).map(|side| side << 1) {
                    let mut checked = checked.clone();
                    checked.election.partition_side = Some(side);
                    out.push(Planned { spec, n, checked });
                }
            } else {
                out.push(Planned { spec, n, checked });
            }
        }
    }
    Ok(out)
}

/// The check of `name` on `n` nodes the arguments ask for. The fault counts, the delay and the
/// partitions' bounds are the kept checks' (they default to a crash and a lost message): a one-shot check
/// leaves them out.
fn ask(args: &Args, name: &str, n: u32) -> CheckAsk {
    let kept = |count: u8| if args.kept { u32::from(count) } else { 0 };
    CheckAsk {
        algorithm: name.to_string(),
        // Sized by `--ids` when given, so that a refused size names `--ids`.
        n: if args.ids.is_empty() { n } else { 0 },
        ids: args.ids.clone(),
        anonymous: args.anonymous,
        kept: args.kept,
        crashes: kept(args.crashes),
        recover: args.recover && args.kept,
        losses: kept(args.losses),
        duplications: kept(args.duplications),
        partitions: kept(args.partitions),
        delay_ms: args.delay_ms.filter(|_| args.kept),
        punctual_timers: args.punctual_timers,
        partition_ms: args.partition_ms,
        partition_side: args.partition_side.clone(),
        fifo: args.fifo,
        any_order: args.any_order,
        detector: DetectorConfig { period_ms: args.period_ms, timeout_ms: args.suspect_ms },
        walk: args.simulate,
        ..CheckAsk::default()
    }
}

/// The Markdown table's header, with `--markdown`.
fn print_header(args: &Args) {
    if args.markdown && args.kept {
        println!("| algorithm | n | faults | states | explored | depth | verdict | time |");
        println!("| --- | ---: | --- | ---: | ---: | ---: | --- | ---: |");
    } else if args.markdown {
        println!(
            "| algorithm | n | links | elections | states | depth | most messages (all initiate) | bound | verdict | time |"
        );
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    }
}

/// The threads one election's check runs on: one unless `--threads` says
/// otherwise (sharing one check's queue measured slower than one thread on
/// a 2-core machine: docs/checking.md, "Threads").
fn one_check_threads(args: &Args) -> usize {
    args.threads.map_or(1, usize::from)
}

/// The limits the arguments set on one check.
fn limits(args: &Args, fifo: bool) -> Limits {
    Limits {
        fifo,
        max_states: args.max_states,
        max_depth: args.max_depth,
        timeout: (args.timeout_s > 0).then(|| Duration::from_secs(args.timeout_s)),
        max_memory_mib: args.max_memory_mib,
        depth_first: args.dfs,
        reduce: !args.no_reduction,
        symmetric: args.symmetric,
        subsume: !args.no_subsumption,
        threads: args.threads.map_or_else(ringleader_check::cores, usize::from),
    }
}

/// Run one planned check and print its line and its counterexamples; `Ok(true)` when a property broke.
fn run(args: &Args, p: &Planned) -> Result<bool, CliError> {
    if args.simulate {
        return run_walks(args, p);
    }
    let (spec, n, e) = (p.spec, p.n, &p.checked.election);
    let fifo = p.checked.fifo;
    let result = if args.kept {
        let how = KeptCheck {
            detector: e.kept.unwrap_or_default(),
            faults: e.faults,
            delay_ms: e.delay_ms,
            punctual_timers: e.punctual_timers,
            partition_ms: e.partition_ms,
            partition_side: e.partition_side,
            clock: e.clock,
        };
        let mut limits = Limits { threads: one_check_threads(args), ..limits(args, fifo) };
        if spec.live_provision == Provision::Store && args.max_depth == 0 && args.max_states == 0 && args.timeout_s == 0
        {
            limits.max_depth = STORE_DEPTH;
            eprintln!(
                "{}: its store's revision grows with every renewal, so its schedules never end: every schedule up \
                 to {STORE_DEPTH} steps (--max-depth, --max-states or --timeout-s to choose another bound)",
                spec.name
            );
        }
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
    } else if !args.ids.is_empty() || args.anonymous {
        // One election, as given: its report as a sweep of one.
        Ok(Sweep::one(e, check(e.clone(), Limits { threads: one_check_threads(args), ..limits(args, fifo) })))
    } else {
        let mut done = 0usize;
        let r = sweep_drawn(spec, n, 7, args.seed, spec.rule, limits(args, fifo), |_, _, _| {
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
        Err(err) => {
            eprintln!("{} n={n}: {err}", spec.name);
            return Ok(false);
        }
    };
    print_line(args, p, &s);
    print_counterexamples(args, p, &s)?;
    Ok(!s.broken.is_empty())
}

/// Walk one planned check (`--simulate`) and print its line and its counterexample, in the exhaustive
/// check's words; `Ok(true)` when a walk broke a property.
fn run_walks(args: &Args, p: &Planned) -> Result<bool, CliError> {
    let (spec, n, e) = (p.spec, p.n, &p.checked.election);
    let walks = Walks { walks: args.walks, depth: args.depth, seed: args.walk_seed };
    let mut last = 0;
    let s = simulate(e.clone(), limits(args, p.checked.fifo), walks, None, |w| {
        if w.elapsed.as_secs() >= last + 5 {
            last = w.elapsed.as_secs();
            eprint!(
                "\r{} n={n}: {} walks, {} steps, {} states, deepest {} ({:.0} s)",
                spec.name,
                w.walks,
                w.steps,
                w.states,
                w.deepest,
                w.elapsed.as_secs_f64()
            );
        }
    });
    if last > 0 {
        eprintln!();
    }
    let links = if p.checked.fifo { "FIFO" } else { "any order" };
    let setting = match e.kept {
        Some(_) => format!(
            "kept ({links}, {})",
            describe(e.faults, e.punctual_timers, false, e.partition_ms, e.partition_side, n)
        ),
        None => format!("({links})"),
    };
    println!(
        "{} n={n} {setting}, random walks from seed {}: {} walk{}, {} steps, {} distinct states, deepest walk {}, \
         {} ended quiet, {} with a partition or crash; {} in {:.1} s",
        spec.name,
        walks.seed,
        s.walks,
        if s.walks == 1 { "" } else { "s" },
        s.steps,
        s.states,
        s.deepest,
        s.quiescent,
        s.faulted,
        s.words(),
        s.elapsed.as_secs_f64()
    );
    let Some(v) = s.violation else { return Ok(false) };
    println!("  walk {} (seed {}): replay with --simulate --walk-seed {} --walks 1", v.walk + 1, v.seed, v.seed);
    let broken = Sweep { broken: vec![(e.ids.clone(), e.initiators.clone(), v.counterexample)], ..Sweep::default() };
    print_counterexamples(args, p, &broken)?;
    Ok(true)
}

/// The line of one check (or its Markdown row).
fn print_line(args: &Args, p: &Planned, s: &Sweep) {
    let (spec, n, e, fifo) = (p.spec, p.n, &p.checked.election, p.checked.fifo);
    let verdict = if !s.broken.is_empty() {
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
    let words = |fifo_links| {
        let mut words = describe(e.faults, e.punctual_timers, fifo_links, e.partition_ms, e.partition_side, n);
        if let Some(c) = e.clock {
            words.push_str(&format!("; id {}'s clock at {}× real time", c.position + 1, c.rate));
        }
        words
    };
    let (most, bound) = if args.kept {
        ("—".to_string(), "—".to_string())
    } else {
        (s.all_initiators.0.to_string(), ringleader_core::spec::bound_text(s.all_initiators.1))
    };
    let secs = s.elapsed.as_secs_f64();
    if args.markdown && args.kept {
        let faults = words(fifo && !spec.assumptions.fifo);
        println!(
            "| {} | {n} | {faults} | {} | {} | {} | {verdict} | {secs:.1} s |",
            spec.name, s.states, s.explored, s.depth
        );
    } else if args.markdown {
        println!(
            "| {} | {n} | {links} | {} | {} | {} | {most} | {bound} | {verdict} | {secs:.1} s |",
            spec.name, s.elections, s.states, s.depth
        );
    } else if args.kept {
        // The links are named already.
        println!(
            "{} n={n} kept ({links}, {}): {} states ({} explored), depth {}; {verdict} in {secs:.1} s",
            spec.name,
            words(false),
            s.states,
            s.explored,
            s.depth
        );
    } else {
        println!(
            "{} n={n} ({links}): {} elections, {} states, depth {}, most messages {} (all initiating {most} of bound {bound}); {verdict} in {secs:.1} s",
            spec.name, s.elections, s.states, s.depth, s.most_messages
        );
    }
}

/// The first three counterexamples: their steps and where each node ends in words on standard output (the
/// lab's words), and their diagrams with `--svg`.
fn print_counterexamples(args: &Args, p: &Planned, s: &Sweep) -> Result<(), CliError> {
    let (spec, n, e, fifo) = (p.spec, p.n, &p.checked.election, p.checked.fifo);
    for (k, (ids, initiators, c)) in s.broken.iter().enumerate().take(3) {
        let topology = ringleader_core::topology::Topology::build(spec.default_topology(), n, 7)?;
        // The check's seed: a randomised algorithm's steps mean the same draws only with it.
        let mut drawn =
            Election { seed: e.seed, ..Election::new(spec, topology, ids.clone(), initiators.clone(), spec.rule) };
        if let Some(detector) = e.kept {
            drawn = Election {
                delay_ms: e.delay_ms,
                punctual_timers: e.punctual_timers,
                partition_ms: e.partition_ms,
                partition_side: e.partition_side,
                clock: e.clock,
                seed: e.seed,
                ..Election::kept(spec, drawn.topology, drawn.ids, detector, e.faults)
            };
        }
        if let Some(dir) = &args.svg {
            let path = dir.join(format!("{}-n{n}-{}.svg", spec.name, k + 1));
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, diagram(&drawn, fifo, c)))
                .map_err(|source| CliError::Svg { dir: dir.clone(), source })?;
            eprintln!("  diagram: {}", path.display());
        }
        let model = ringleader_check::ElectionModel::new(drawn, fifo);
        if !c.rounds.is_empty() {
            println!("  ids {ids:?}: the symmetric execution, {} steps in lock-step rounds:", c.steps.len());
            for words in &c.rounds {
                println!("    {words}");
            }
        }
        println!("  ids {ids:?}, initiators {initiators:?}: {} broken by {} steps:", c.property, c.steps.len());
        for (i, words) in model.words(&c.steps).iter().enumerate() {
            println!("    {:>3}. {words}", i + 1);
        }
        // Where each node ends, in the lab's words (its diagram labels each node so).
        let ends: Vec<String> =
            ids.iter().zip(model.outcome(&c.steps)).map(|(id, end)| format!("id {id} {end}")).collect();
        println!("    ends: {}{}", ends.join(", "), c.error.as_ref().map(|e| format!("; {e}")).unwrap_or_default());
        if let Some(caveat) = model.caveat(c.property) {
            println!("    note: {caveat}");
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `--clock` slows one node's timers in a kept check only: on a one-shot check, whose
    /// elections run at real rate, it is refused instead of printed over rows it never touched.
    #[test]
    fn a_clock_is_refused_without_kept() {
        let one_shot = Args::parse_from(["ringleader-check", "as-far", "--n", "3", "--clock", "1=0.5"]);
        assert!(matches!(plan(&one_shot, None), Err(CliError::ClockOneShot)));
        let kept = Args::parse_from(["ringleader-check", "bully", "--kept", "--n", "3", "--clock", "1=0.5"]);
        assert!(plan(&kept, None).is_ok());
    }
}
