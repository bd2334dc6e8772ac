use std::process::Command;

use ringleader_tests::sweep_binary;

/// `ringleader-sweep` never replaces a file by accident: given a `--csv` path that exists it fails before
/// sweeping, naming the flag and `--force`, and leaves the file as it was; with `--force` it sweeps and
/// writes the table there.
#[test]
fn the_sweep_refuses_to_overwrite_without_force() {
    let dir = std::env::temp_dir().join(format!("ringleader-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("tracked.csv");
    std::fs::write(&csv, "keep me\n").unwrap();
    let sweep = |force: bool| {
        let mut cmd = Command::new(sweep_binary());
        cmd.args(["--algorithms", "as-far", "--sizes", "8", "--csv"]).arg(&csv);
        if force {
            cmd.arg("--force");
        }
        cmd.output().expect("run ringleader-sweep")
    };
    let refused = sweep(false);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("--csv") && stderr.contains("--force"), "{stderr}");
    assert!(!stderr.contains("[    1/"), "refused before sweeping: {stderr}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "keep me\n");
    let forced = sweep(true);
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(table.starts_with("algorithm,n,") && table.lines().nth(1).is_some_and(|l| l.starts_with("as-far,8,")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ringleader-sweep --orders worst-case` over as-far and all-the-way prints a note on standard error naming
/// all-the-way's missing WORST_CASE rows; `--orders random,best-case` over all-the-way alone fails before
/// sweeping, naming id_orders and BEST_CASE. Failed before the fix: the first printed no note, the second
/// answered RANDOM rows only and succeeded.
#[test]
fn the_sweep_notes_or_refuses_orders_an_algorithm_lacks() {
    let sweep = |algorithms: &str, orders: &str| {
        Command::new(sweep_binary())
            .args(["--algorithms", algorithms, "--sizes", "8", "--orders", orders])
            .output()
            .expect("run ringleader-sweep")
    };
    let noted = sweep("as-far,all-the-way", "worst-case");
    let stderr = String::from_utf8_lossy(&noted.stderr);
    assert!(noted.status.success(), "{stderr}");
    assert!(stderr.contains("note: WORST_CASE: no rows for all-the-way"), "{stderr}");
    let refused = sweep("all-the-way", "random,best-case");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("id_orders") && stderr.contains("BEST_CASE"), "{stderr}");
    assert!(!stderr.contains("[    1/"), "refused before sweeping: {stderr}");
}
