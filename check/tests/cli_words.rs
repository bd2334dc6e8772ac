//! What `ringleader-check` tells its user on the command line: a refusal names the flag the user
//! gave.

use std::process::{Command, Output};

/// `ringleader-check` run with `args`.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ringleader-check")).args(args).output().expect("ringleader-check runs")
}

/// `--ids` of 7 nodes (above the checker's 6), or of 3 for a hypercube algorithm, is refused naming
/// `--ids`, the flag given, not `--n`, which was not.
#[test]
fn a_size_given_by_ids_is_refused_naming_ids() {
    for args in [["as-far", "--ids", "1,2,3,4,5,6,7"], ["hyper-elect", "--ids", "1,2,3"]] {
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("--ids: "), "{args:?} should name --ids: {stderr}");
        assert!(!stderr.contains("--n:"), "{args:?}: {stderr}");
    }
}

/// ProbAsFar (randomised) on ids [4, 4, 4] with `--seed 5` breaks "at most one leader": the
/// counterexample printed is told with the draws of seed 5 (the same ones the check used), so its
/// ends show the leaders that break the property, not seed 0's replay of the same steps.
#[test]
fn a_counterexample_is_told_with_the_checks_seed() {
    let out = run(&["prob-as-far", "--ids", "4,4,4", "--seed", "5"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("at most one leader broken by"), "{stdout}");
    let ends = stdout.lines().find(|l| l.trim_start().starts_with("ends:")).expect("an ends line");
    assert!(ends.matches(" leads").count() >= 2, "two leaders or more: {stdout}");
}
