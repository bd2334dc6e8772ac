use std::path::Path;
use std::process::Command;

use ringleader_tests::{controller_binary, workspace_root};

/// `cargo run -p ringleader-controller`, the README's main command, runs the controller even though the crate
/// has a second binary (ringleader-sweep): the crate names its default-run binary.
#[test]
fn cargo_run_picks_the_controller() {
    let bin = controller_binary(); // builds it first, so the run below has nothing left to compile
    let profile_dir = bin.parent().expect("profile dir");
    let target_dir = profile_dir.parent().expect("target dir");
    let profile = profile_dir.file_name().and_then(|p| p.to_str()).unwrap_or("debug");
    let profile = if profile == "debug" { "dev" } else { profile };
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(workspace_root())
        .args(["run", "--quiet", "-p", "ringleader-controller", "--profile", profile, "--target-dir"])
        .arg(Path::new(target_dir))
        .args(["--", "--version"])
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo run failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("ringleader-controller "), "{stdout}");
}
