//! The programs this controller was given (`controller.programs_dir`,
//! docs/operations.md): installed at start, listed by `ListAlgorithms` and
//! named by `StartElectionRequest.program`. A request can name only these:
//! never a path, a command, or a program another part of the process
//! installed.

use std::sync::Arc;

use ringleader_core::spec::AlgorithmSpec;

pub use ringleader_node::programs::is_program;

/// The programs a controller installed at start, in its directory's order.
#[derive(Clone, Default)]
pub struct Installed(Arc<Vec<&'static AlgorithmSpec>>);

impl Installed {
    /// The installed entries `specs`.
    pub fn new(specs: Vec<&'static AlgorithmSpec>) -> Self {
        Installed(Arc::new(specs))
    }

    /// The installed program named `name`.
    pub fn find(&self, name: &str) -> Option<&'static AlgorithmSpec> {
        self.0.iter().copied().find(|s| s.name == name)
    }

    /// Every installed program's entry.
    pub fn all(&self) -> &[&'static AlgorithmSpec] {
        &self.0
    }

    /// Their names, comma-separated, or what to do when there is none.
    pub fn names(&self) -> String {
        if self.0.is_empty() {
            "none (the operator installs programs with controller.programs_dir)".into()
        } else {
            self.0.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        }
    }
}

impl PartialEq for Installed {
    /// The same programs, by name.
    fn eq(&self, other: &Self) -> bool {
        self.0.iter().map(|s| s.name).eq(other.0.iter().map(|s| s.name))
    }
}

impl Eq for Installed {}

impl std::fmt::Debug for Installed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|s| s.name)).finish()
    }
}
