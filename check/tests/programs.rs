//! A program of one's own in the checker (`ringleader-check --program DIR`): the Python
//! Chang-Roberts and Franklin of examples/programs checked as the built-in AsFar and Stages are,
//! a planted bug caught with a short counterexample told in the program's own words, and a
//! program that misbehaves failing its step, as a verdict, without taking the checker down.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Instant;

use ringleader_check::{CheckAsk, Election, ElectionModel, Limits, Step, Sweep, diagram, sweep};
use ringleader_core::algo::catalogue;
use ringleader_core::schedule::replay;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::Topology;
use ringleader_program::{Isolation, Program, ProgramError};

/// The directory of the example program `name` (examples/programs/NAME).
fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/programs").join(name)
}

/// Can this host keep a program off the network? (If not, these tests, which are about checking
/// and not about the sandbox, run their programs with the host's network and say so.)
fn isolated() -> bool {
    use std::sync::OnceLock;
    static ISOLATED: OnceLock<bool> = OnceLock::new();
    *ISOLATED.get_or_init(|| {
        let loaded = ringleader_program::load(&example("chang-roberts"), Default::default(), Isolation::Required);
        let isolated = !matches!(loaded, Err(ProgramError::Isolation { .. }));
        if !isolated {
            eprintln!("this host allows no network namespace: the programs run with its network");
        }
        isolated
    })
}

/// The example program `name`, loaded and installed in the catalogue.
fn installed(name: &str) -> (Arc<Program>, &'static AlgorithmSpec) {
    let isolation = if isolated() { Isolation::Required } else { Isolation::None };
    // 10 s a step: a loaded machine must never fail a correct step (the misbehaving ones fail at once).
    let limits = ringleader_program::Limits { step_ms: 10_000, ..Default::default() };
    let program = ringleader_program::load(&example(name), limits, isolation)
        .unwrap_or_else(|e| panic!("examples/programs/{name}: {e}"));
    let spec = program.install().unwrap_or_else(|e| panic!("examples/programs/{name}: {e}"));
    (program, spec)
}

/// Every election of `spec` on `n` nodes, every schedule, with the links a check asked for by name
/// takes (the command line's and the controller's way: [`CheckAsk`]); and whether they were FIFO.
fn sweep_named(spec: &'static AlgorithmSpec, n: u32) -> (Sweep, bool) {
    let asked = CheckAsk { algorithm: spec.name.to_string(), n, ..CheckAsk::default() };
    let fifo = asked.check().unwrap_or_else(|e| panic!("{}: {e}", spec.name)).fifo;
    let s = sweep(spec, n, 7, spec.rule, Limits { fifo, ..Limits::default() }, |_, _, _| {}).unwrap();
    (s, fifo)
}

/// `ringleader-check` run with `args`.
fn run(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringleader-check"));
    command.args(args);
    if !isolated() && args.contains(&"--program") {
        command.arg("--no-isolation");
    }
    command.output().expect("ringleader-check runs")
}

/// The Python Chang-Roberts (examples/programs/chang-roberts) and the built-in AsFar, each checked
/// on every arrangement of the ids (up to rotation) and every set of initiators of 3 and of 4 nodes,
/// every schedule: the same elections, distinct states, depth, most messages, bound and verdict
/// (holds on every schedule). Prints each side's states per second and the program's memo hits
/// (a measurement, not asserted).
#[test]
fn the_python_chang_roberts_checks_as_the_built_in_as_far() {
    let (program, ours) = installed("chang-roberts");
    assert_eq!(catalogue::find(ours.name).map(|s| s.name), Some(ours.name), "installed: found by its name");
    let unknown = CheckAsk { algorithm: "nonesuch".into(), ..CheckAsk::default() }.check().unwrap_err();
    assert!(unknown.why.contains(&format!(", {}", ours.name)), "an unknown name's refusal lists it: {}", unknown.why);
    checks_as(&program, ours, "as-far");
}

/// The Python Franklin (examples/programs/franklin) and the built-in Stages, on FIFO bidirectional
/// rings of 3 and 4 nodes, every election and schedule: the same facts and verdict, as above.
#[test]
fn the_python_franklin_checks_as_the_built_in_stages() {
    let (program, ours) = installed("franklin");
    checks_as(&program, ours, "stages");
}

/// `ours` (the program `program`'s entry) and the built-in `builtin`, each swept at n = 3 and 4:
/// the same facts, both holding; each side's states per second printed.
fn checks_as(program: &Program, ours: &'static AlgorithmSpec, builtin: &str) {
    let builtin = catalogue::find(builtin).unwrap();
    for n in [3, 4] {
        let started = Instant::now();
        let (b, b_fifo) = sweep_named(builtin, n);
        let b_secs = started.elapsed().as_secs_f64();
        let before = program.stats();
        let started = Instant::now();
        let (p, p_fifo) = sweep_named(ours, n);
        let p_secs = started.elapsed().as_secs_f64();
        let after = program.stats();
        println!(
            "n={n}: {} {} states in {b_secs:.3} s ({:.0} states/s); {} {} states in {p_secs:.3} s ({:.0} states/s), \
             {} requests answered by its processes and {} from its memo",
            builtin.name,
            b.states,
            b.states as f64 / b_secs,
            ours.name,
            p.states,
            p.states as f64 / p_secs,
            after.steps - before.steps,
            after.cache_hits - before.cache_hits,
        );
        assert_eq!(p_fifo, b_fifo, "n={n}: the same links");
        let facts =
            |s: &Sweep| (s.elections, s.states, s.explored, s.depth, s.most_messages, s.bound, s.all_initiators);
        assert_eq!(facts(&p), facts(&b), "n={n}: (elections, states, explored, depth, most messages, bound, worst)");
        assert!(b.holds(), "n={n}: {} holds: {:?}", builtin.name, b.broken.first());
        assert!(p.holds(), "n={n}: {} holds: {:?}", ours.name, p.broken.first());
        assert_eq!(after.failures, before.failures, "n={n}: no request failed");
    }
}

/// The planted-bug Chang-Roberts and Franklin (examples/programs/{chang-roberts,franklin}-bug) on
/// 3 and 4 nodes: the checker finds a broken property, its shortest counterexample is short (at
/// most 30 steps) and replays on the second driver (`schedule::replay`) to the same decisions, its
/// words name the program's own message kinds ("election (id 3)", never the generic "program"),
/// and its diagram names them too.
#[test]
fn the_planted_bugs_are_caught_with_short_counterexamples_in_the_programs_words() {
    for name in ["chang-roberts-bug", "franklin-bug"] {
        planted_bug_is_caught(name);
    }
}

/// The checks of [`the_planted_bugs_are_caught_with_short_counterexamples_in_the_programs_words`]
/// for the example program `name`.
fn planted_bug_is_caught(name: &str) {
    let (program, spec) = installed(name);
    let kinds: Vec<&str> = program.manifest().messages.iter().map(|k| k.name.as_str()).collect();
    for n in [3, 4] {
        let (s, fifo) = sweep_named(spec, n);
        let (ids, initiators, c) = s
            .broken
            .iter()
            .min_by_key(|(_, _, c)| c.steps.len())
            .unwrap_or_else(|| panic!("{name} n={n}: no bug found"));
        let topology = Topology::build(spec.default_topology(), n, 7).unwrap();
        let election = Election::new(spec, topology, ids.clone(), initiators.clone(), spec.rule);
        let model = ElectionModel::new(election.clone(), fifo);
        let words = model.words(&c.steps);
        println!(
            "{name} n={n}: ids {ids:?}, initiators {initiators:?}: \"{}\" broken by {} steps:\n  {}\n  ends: {:?}; {}",
            c.property,
            c.steps.len(),
            words.join("\n  "),
            model.outcome(&c.steps),
            c.error.as_deref().unwrap_or("no error"),
        );
        assert!(c.steps.len() <= 30, "{name} n={n}: {} steps", c.steps.len());
        let delivered: Vec<_> = c
            .steps
            .iter()
            .filter_map(|st| if let Step::Deliver { msg, .. } = st { Some(*msg) } else { None })
            .collect();
        assert!(!delivered.is_empty(), "{name} n={n}: a message is delivered");
        for msg in &delivered {
            assert!(kinds.contains(&msg.kind_name()), "{name} n={n}: {} is one of {kinds:?}", msg.kind_name());
            assert!(
                words.iter().any(|w| w.contains(&msg.in_words())),
                "{name} n={n}: {} in {words:#?}",
                msg.in_words()
            );
        }
        assert!(!words.iter().any(|w| w.contains("program (")), "{name} n={n}: {words:#?}");
        let again = replay(spec, &election.topology, ids, spec.rule, None, fifo, &c.steps)
            .unwrap_or_else(|e| panic!("{name} n={n}: the schedule replays on the second driver: {e}"));
        assert_eq!(again.decisions, c.decisions, "{name} n={n}: the replay ends where the check did");
        let svg = diagram(&election, fifo, c);
        assert!(svg.contains(&format!("{} (", delivered[0].kind_name())), "{name} n={n}: the diagram names its kinds");
        assert!(svg.contains(spec.name), "{name} n={n}: the diagram's title names the program");
    }
}

/// The misbehaving examples that exit in a node's 2nd step and that answer it with a line that is
/// not JSON (examples/programs/misbehaving/{exiter,garbage}), checked on 3 nodes by the command: the
/// step that failed ends a counterexample of "no node errs" whose error names the program, the node,
/// the step and what went wrong; the command exits with status 1 (a property broke), not 2 (refused)
/// and not by a panic.
#[test]
fn a_misbehaving_program_fails_its_step_as_a_verdict() {
    for (name, what) in [("exiter", "the program exited (status 3)"), ("garbage", "reply is not JSON")] {
        let dir = example("misbehaving").join(name);
        let out = run(&["--program", dir.to_str().unwrap(), "--n", "3"]);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        println!("{name}: status {:?}\n{stdout}{stderr}", out.status.code());
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stdout.contains("BROKEN") && stdout.contains("no node errs broken by"), "{name}: {stdout}");
        let ends = stdout.lines().find(|l| l.trim_start().starts_with("ends:")).expect("where each node ends");
        let failure = format!("program {name}, id ");
        assert!(ends.contains(&failure) && ends.contains(", step 2 (message ") && ends.contains(what), "{ends}");
        // The step that failed is the schedule's last: the words before the ends line end with it.
        let last = stdout.lines().take_while(|l| !l.trim_start().starts_with("ends:")).last().unwrap();
        let delivered = ends.split(", step 2 (message ").nth(1).unwrap().split(" on port").next().unwrap();
        assert!(last.contains(&format!("receives {delivered} from id ")), "{last} / {ends}");
    }
}

/// `--program` with an algorithm name, and a program whose manifest has a wrong field: each is
/// refused (status 2) with words that name the conflict or the field, and nothing is checked.
#[test]
fn a_program_with_algorithms_or_a_bad_manifest_is_refused_by_name() {
    let cr = example("chang-roberts");
    let out = run(&["--program", cr.to_str().unwrap(), "as-far", "--n", "3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--program and algorithm names (as-far)"), "{stderr}");
    assert!(out.stdout.is_empty());

    let dir = std::env::temp_dir().join(format!("ringleader-check-bad-program-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = std::fs::read_to_string(cr.join("program.json")).unwrap();
    let bad = manifest.replacen("\"protocol\": 1", "\"protocol\": 9", 1);
    assert_ne!(bad, manifest, "the example's manifest says \"protocol\": 1");
    std::fs::write(dir.join("program.json"), bad).unwrap();
    let out = run(&["--program", dir.to_str().unwrap(), "--n", "3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("program.json: field `protocol`"), "{stderr}");
    assert!(out.stdout.is_empty());
}
