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
