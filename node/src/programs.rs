//! Installed programs: election algorithms written as programs in any
//! language (docs/programs.md, the `ringleader-program` crate), which a
//! process loads from the operator's directory at start (the controller's
//! `controller.programs_dir`, a node's `node.programs_dir`) and installs in
//! its catalogue, so that an election naming one runs it like a built-in.
//! The `[programs]` section, shared by every process, holds the limits each
//! program's processes run under and whether they must run without network.
//!
//! ```toml
//! [programs]
//! step_ms = 1000          # longest a program may take to answer one step; past it the step fails
//! memory_mib = 256        # address space of each program process (RLIMIT_AS)
//! cpu_s = 600             # CPU seconds of each program process (RLIMIT_CPU)
//! line_bytes = 1048576    # longest reply line; a longer one fails the step
//! processes = 4           # most live processes per program
//! isolation = "required"  # "required": refuse a program that cannot be cut off the network; "none": run it anyway
//! ```

use std::path::Path;

use ringleader_core::algo::catalogue;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_program::{Isolation, Limits};
use serde::Deserialize;
use tracing::{info, warn};

use crate::setting::SettingError;

/// The `[programs]` section: the limits of every installed program's
/// processes (a program's manifest may lower each, never raise it) and the
/// network isolation they need.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ProgramsSection {
    /// Longest a program may take to answer one step, in ms; past it the
    /// process is killed and the step (so its election) fails. 1 to 60,000.
    pub step_ms: u64,
    /// Address space of each program process, MiB (RLIMIT_AS). 16 to 65,536.
    pub memory_mib: u64,
    /// CPU time of each program process, seconds (RLIMIT_CPU). 1 to 86,400.
    pub cpu_s: u64,
    /// Longest reply line a program may write, bytes. 1,024 to 67,108,864.
    pub line_bytes: usize,
    /// Most live processes per program. 1 to 64.
    pub processes: usize,
    /// `required` (default): a program runs only in a network namespace of
    /// its own, and is refused where the host allows none; `none`: run it
    /// with the host's network where no namespace can be made (warned once).
    pub isolation: String,
}

impl Default for ProgramsSection {
    fn default() -> Self {
        let l = Limits::default();
        ProgramsSection {
            step_ms: l.step_ms,
            memory_mib: l.memory_mib,
            cpu_s: l.cpu_s,
            line_bytes: l.line_bytes,
            processes: l.processes,
            isolation: "required".into(),
        }
    }
}

impl ProgramsSection {
    /// Check every key, naming the one at fault.
    pub fn validate(&self) -> Result<(), SettingError> {
        let range = |key: &'static str, value: u64, lo: u64, hi: u64, unit: &str| {
            if (lo..=hi).contains(&value) {
                Ok(())
            } else {
                Err(SettingError::new(key, format!("{value} is not between {lo} and {hi} ({unit})")))
            }
        };
        range("programs.step_ms", self.step_ms, 1, 60_000, "milliseconds")?;
        range("programs.memory_mib", self.memory_mib, 16, 65_536, "MiB")?;
        range("programs.cpu_s", self.cpu_s, 1, 86_400, "seconds")?;
        range("programs.line_bytes", self.line_bytes as u64, 1_024, 64 << 20, "bytes")?;
        range("programs.processes", self.processes as u64, 1, 64, "processes per program")?;
        self.isolation().map(drop)
    }

    /// The limits [`ringleader_program::load`] is given.
    pub fn limits(&self) -> Limits {
        Limits {
            step_ms: self.step_ms,
            memory_mib: self.memory_mib,
            cpu_s: self.cpu_s,
            line_bytes: self.line_bytes,
            processes: self.processes,
        }
    }

    /// [`Self::isolation`], parsed.
    pub fn isolation(&self) -> Result<Isolation, SettingError> {
        match self.isolation.as_str() {
            "required" => Ok(Isolation::Required),
            "none" => Ok(Isolation::None),
            other => Err(SettingError::new(
                "programs.isolation",
                format!("`{other}` is neither \"required\" (no network for programs) nor \"none\""),
            )),
        }
    }
}

/// A `*.programs_dir` setting that names no directory, as the error to
/// give (`key` is the setting's dotted name). Empty is fine: no programs.
pub fn check_dir(key: &'static str, dir: &str) -> Result<(), SettingError> {
    if dir.is_empty() || Path::new(dir).is_dir() {
        Ok(())
    } else {
        Err(SettingError::new(key, format!("`{dir}` is not a directory (one subdirectory per program)")))
    }
}

/// Load every program in `dir` (each subdirectory holding a `program.json`)
/// under `section`'s limits and install it in this process's catalogue;
/// each installed program and each refused one is logged, with its error.
/// A broken program never stops the process: it is left out. Returns the
/// installed entries, in directory order. Blocking: each program's first
/// process is started and asked for an `init` (run it off the async workers).
pub fn install_dir(dir: &Path, section: &ProgramsSection) -> Vec<&'static AlgorithmSpec> {
    let isolation = match section.isolation() {
        Ok(i) => i,
        Err(e) => {
            warn!(error = %e, "no program installed");
            return Vec::new();
        }
    };
    let (loaded, refused) = ringleader_program::load_all(dir, section.limits(), isolation);
    for (path, error) in &refused {
        warn!(program = %path.display(), %error, "program refused; it is not installed");
    }
    let mut installed = Vec::with_capacity(loaded.len());
    for program in loaded {
        match program.install() {
            Ok(spec) => {
                info!(program = spec.name, title = spec.title, bound = spec.bound_formula, dir = %dir.display(), "program installed");
                installed.push(spec);
            }
            Err(error) => warn!(program = program.name(), %error, "program refused; it is not installed"),
        }
    }
    installed
}

/// Is `spec` an installed program's entry (not a built-in algorithm)?
/// [`catalogue::find`] finds only these two kinds.
pub fn is_program(spec: &AlgorithmSpec) -> bool {
    !catalogue::CATALOGUE.iter().any(|s| s.name == spec.name)
}

/// The programs installed in this process, by name, comma-separated ("none"
/// when there is none): for errors naming what may be asked for.
pub fn installed_names() -> String {
    let names: Vec<&str> = catalogue::installed().iter().map(|s| s.name).collect();
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults are the program crate's and pass; each key out of its range, or an isolation
    /// other than "required" or "none", is refused naming that key.
    #[test]
    fn each_bad_key_is_named() {
        ProgramsSection::default().validate().unwrap();
        let bad = |f: fn(&mut ProgramsSection), key: &str| {
            let mut s = ProgramsSection::default();
            f(&mut s);
            assert_eq!(s.validate().unwrap_err().key, key);
        };
        bad(|s| s.step_ms = 0, "programs.step_ms");
        bad(|s| s.memory_mib = 1, "programs.memory_mib");
        bad(|s| s.cpu_s = 0, "programs.cpu_s");
        bad(|s| s.line_bytes = 10, "programs.line_bytes");
        bad(|s| s.processes = 0, "programs.processes");
        bad(|s| s.isolation = "off".into(), "programs.isolation");
        let none = ProgramsSection { isolation: "none".into(), ..ProgramsSection::default() };
        assert!(matches!(none.isolation(), Ok(Isolation::None)));
        assert!(check_dir("node.programs_dir", "/no/such/dir").is_err());
        assert!(check_dir("node.programs_dir", "").is_ok());
    }
}
