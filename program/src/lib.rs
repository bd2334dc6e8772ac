//! Your own election algorithm as a program in any language: a directory
//! with a manifest (`program.json`) and the code it names, speaking JSON
//! lines on stdin and stdout (docs/programs.md, docs/programs.schema.json).
//! This crate turns it into a catalogue entry ([`Program::spec`]) and a
//! state machine ([`ProgramNode`]), so that every driver (the simulator,
//! the checker, the LIVE node runtime, the controller) runs it like a
//! built-in algorithm.
//!
//! A program is a stranger's code: its processes run sandboxed (own
//! process group, rlimits, a cleared environment, no network), every step
//! has a wall-clock limit and every reply is checked field by field. A
//! program that crashes, hangs, answers garbage or floods fails its node
//! with [`Effect::Fail`](ringleader_core::protocol::Effect::Fail), whose
//! text names the step and the field; nothing panics.
//!
//! ```no_run
//! use std::path::Path;
//! use ringleader_program::{Isolation, Limits};
//!
//! let program = ringleader_program::load(Path::new("examples/programs/chang-roberts"), Limits::default(), Isolation::Required)?;
//! let spec = program.install()?; // now `catalogue::find("chang-roberts")` finds it
//! println!("{} ({})", spec.name, spec.bound_formula);
//! # Ok::<(), ringleader_program::ProgramError>(())
//! ```

#![warn(missing_docs, unreachable_pub)]

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ringleader_core::algo::catalogue;
use ringleader_core::protocol::program::{KindInfo, TagTaken};
use ringleader_core::protocol::{NodeContext, PortInfo};
use ringleader_core::spec::{AlgorithmSpec, Candidates, Extras, Machine, Provision};

pub use formula::{Formula, FormulaError};
pub use manifest::{Manifest, MessageKind, RequestedLimits};
pub use node::{FAILED, ProgramNode};

pub mod formula;
pub mod manifest;
mod node;
mod process;
mod wire;

#[cfg(test)]
mod docs;
#[cfg(test)]
mod tests;

/// The most an operator lets a program use; a manifest's `limits` may ask
/// for less, never more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a step may take, ms.
    pub step_ms: u64,
    /// Address space of a process (RLIMIT_AS), MiB.
    pub memory_mib: u64,
    /// CPU time of a process (RLIMIT_CPU), s.
    pub cpu_s: u64,
    /// Longest reply line, bytes.
    pub line_bytes: usize,
    /// Most live processes per program.
    pub processes: usize,
}

impl Default for Limits {
    /// 1 s a step, 256 MiB, 600 s of CPU, 1 MiB lines, 4 processes.
    fn default() -> Self {
        Limits { step_ms: 1_000, memory_mib: 256, cpu_s: 600, line_bytes: 1 << 20, processes: 4 }
    }
}

impl Limits {
    /// These limits, each lowered to what `asked` asks for where it asks for less.
    pub fn capped(&self, asked: &RequestedLimits) -> Limits {
        let low = |mine: u64, asked: Option<u64>| asked.map_or(mine, |a| a.min(mine));
        Limits {
            step_ms: low(self.step_ms, asked.step_ms),
            memory_mib: low(self.memory_mib, asked.memory_mib),
            cpu_s: low(self.cpu_s, asked.cpu_s),
            line_bytes: low(self.line_bytes as u64, asked.line_bytes) as usize,
            processes: self.processes.max(1),
        }
    }
}

/// Whether a program must run without network access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// Each process gets a network namespace of its own (no interface but a
    /// loopback that is down); where the host allows none, the program is
    /// refused.
    #[default]
    Required,
    /// The operator's choice: where the host allows no namespace, the
    /// program runs with the host's network (a warning is printed once).
    None,
}

/// How much a program was asked, and how often it was answered from memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests (`init` and `step`) answered by a process.
    pub steps: u64,
    /// Requests answered from the memo (the same request seen before).
    pub cache_hits: u64,
    /// Processes started.
    pub processes_started: u64,
    /// Steps (and `init`s) that failed a node: a timeout, an exit, a bad reply.
    pub failures: u64,
}

/// Why a program was not loaded or installed.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// A manifest field is wrong (`field` empty: the whole file).
    #[error("{}", manifest_words(path, field, reason))]
    Manifest {
        /// The manifest's path.
        path: PathBuf,
        /// The field, e.g. `messages.election.fields[2]`.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The program's command could not be started.
    #[error("program {program}: its command could not be started: {reason}")]
    Start {
        /// The program's name.
        program: String,
        /// Why.
        reason: String,
    },
    /// No network namespace could be made, and [`Isolation::Required`].
    #[error(
        "program {program}: the host allows no network namespace ({reason}), and programs must run without network \
         (`programs.isolation = \"none\"`, or the checker's --no-isolation, runs them with the host's network)"
    )]
    Isolation {
        /// The program's name.
        program: String,
        /// What the host answered.
        reason: String,
    },
    /// The program did not answer a trial `init` correctly.
    #[error("{why}")]
    Init {
        /// The failure text (naming the field).
        why: String,
    },
    /// Its name is taken (by a built-in algorithm or another program).
    #[error(transparent)]
    Name(#[from] catalogue::NameTaken),
    /// Its messages' tag is another program's.
    #[error(transparent)]
    Tag(#[from] TagTaken),
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

fn manifest_words(path: &Path, field: &str, reason: &str) -> String {
    if field.is_empty() {
        format!("{}: {reason}", path.display())
    } else {
        format!("{}: field `{field}`: {reason}", path.display())
    }
}

/// A loaded program: its manifest, its directory, its process pool, its memo of answered requests.
pub struct Program {
    manifest: Manifest,
    dir: PathBuf,
    limits: Limits,
    tag: u32,
    timer_names: Vec<&'static str>,
    pool: process::Pool,
    memo: Mutex<Memo>,
    /// Keep failures in the memo too ([`Program::remember_failures`]).
    remember_failures: std::sync::atomic::AtomicBool,
    names: Mutex<Vec<&'static str>>,
    counters: Counters,
    spec: OnceLock<&'static AlgorithmSpec>,
}

#[derive(Default)]
struct Counters {
    steps: AtomicU64,
    cache_hits: AtomicU64,
    failures: AtomicU64,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program").field("name", &self.manifest.name).field("dir", &self.dir).finish_non_exhaustive()
    }
}

/// Most distinct state names a program shows; the rest read "other".
pub const MAX_STATE_NAMES: usize = 64;
/// Most requests the memo keeps before it starts again.
const MEMO_ENTRIES: usize = 1 << 20;
/// Most bytes of request and reply text the memo keeps before it starts again.
const MEMO_BYTES: usize = 256 << 20;

/// Answered requests by their text.
#[derive(Default)]
struct Memo {
    /// A request's reply, or the failure the program answered it with (a
    /// hang, an exit, garbage: what the program does with that request).
    replies: HashMap<Box<str>, Result<Arc<wire::Reply>, Arc<str>>>,
    bytes: usize,
}

/// The file name of a manifest.
pub const MANIFEST: &str = "program.json";

/// Read and check the program in `dir`, make its message kinds known, and
/// start one process, which must answer a trial `init` (so that a broken
/// program is refused here, with the failure text).
pub fn load(dir: &Path, limits: Limits, isolation: Isolation) -> Result<Arc<Program>, ProgramError> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).map_err(|source| ProgramError::Io { path: path.clone(), source })?;
    let manifest = Manifest::parse(&path, &text)?;
    if catalogue::CATALOGUE.iter().any(|a| a.name == manifest.name) {
        return Err(catalogue::NameTaken(manifest.name.clone(), "a built-in algorithm").into());
    }
    let kinds = manifest
        .messages
        .iter()
        .map(|k| KindInfo { name: leak(&k.name), fields: k.fields.iter().map(|f| leak(f)).collect() })
        .collect();
    let tag = ringleader_core::protocol::program::register(&manifest.name, kinds)?;
    let dir = dir.canonicalize().map_err(|source| ProgramError::Io { path: dir.to_path_buf(), source })?;
    let limits = limits.capped(&manifest.limits);
    let pool = process::Pool::new(&manifest, &dir, limits, isolation)?;
    let program = Arc::new(Program {
        timer_names: manifest.timers.iter().map(|t| leak(t)).collect(),
        manifest,
        dir,
        limits,
        tag,
        pool,
        memo: Mutex::default(),
        remember_failures: std::sync::atomic::AtomicBool::new(false),
        names: Mutex::default(),
        counters: Counters::default(),
        spec: OnceLock::new(),
    });
    program.trial()?;
    Ok(program)
}

/// [`load`] every subdirectory of `dir` that holds a `program.json`, in the
/// order of their names: the programs loaded, and the directories refused with why.
pub fn load_all(dir: &Path, limits: Limits, isolation: Isolation) -> (Vec<Arc<Program>>, Vec<(PathBuf, ProgramError)>) {
    let mut loaded = Vec::new();
    let mut refused = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => {
            refused.push((dir.to_path_buf(), ProgramError::Io { path: dir.to_path_buf(), source }));
            return (loaded, refused);
        }
    };
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.join(MANIFEST).is_file()).collect();
    dirs.sort();
    for d in dirs {
        match load(&d, limits, isolation) {
            Ok(p) => loaded.push(p),
            Err(e) => refused.push((d, e)),
        }
    }
    (loaded, refused)
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// `s` as a `&'static str`, kept once per text in this process.
fn intern(s: &str) -> &'static str {
    static TEXTS: OnceLock<Mutex<std::collections::HashSet<&'static str>>> = OnceLock::new();
    let mut texts = TEXTS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&kept) = texts.get(s) {
        return kept;
    }
    let kept = leak(s);
    texts.insert(kept);
    kept
}

/// What a program's entry says without a declared bound.
pub const NO_BOUND: &str = "not declared";

/// The message budget of a program without a declared bound: `n^3 + 64`
/// (a budget for the drivers, never checked as a claim).
pub fn budget(n: u64) -> u64 {
    n.saturating_pow(3).saturating_add(64)
}

/// Heap a program's node takes beside its process, per position, in bytes:
/// its state's text and a share of the program; an estimate (a program's
/// state is as large as its program makes it), for the controller's admission.
pub const HEAP_BYTES_PER_POSITION: u64 = 1_024;

impl Program {
    /// Its catalogue name.
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// Its manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Its directory (canonical).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The limits it runs under (the operator's, lowered by its manifest).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Its messages' tag ([`ringleader_core::protocol::program::tag`]).
    pub fn tag(&self) -> u32 {
        self.tag
    }

    /// Keep a failed step in the memo as the program's answer to that request, as a model
    /// check wants: the same request fails again at once, without a process (a hanging step costs
    /// its limit once, not at every meeting), and a replayed counterexample meets the same
    /// failure. Off by default: an election's failure may be the host's moment, and the next
    /// election asks the program again.
    pub fn remember_failures(&self) {
        self.remember_failures.store(true, Ordering::Relaxed);
    }

    /// What the program's processes and memo have done so far.
    pub fn stats(&self) -> Stats {
        Stats {
            steps: self.counters.steps.load(Ordering::Relaxed),
            cache_hits: self.counters.cache_hits.load(Ordering::Relaxed),
            processes_started: self.pool.started(),
            failures: self.counters.failures.load(Ordering::Relaxed),
        }
    }

    /// Its catalogue entry, made (and leaked) once per program.
    pub fn spec(self: &Arc<Self>) -> &'static AlgorithmSpec {
        self.spec.get_or_init(|| Box::leak(Box::new(self.make_spec())))
    }

    /// Make its entry findable by [`catalogue::find`] in this process.
    pub fn install(self: &Arc<Self>) -> Result<&'static AlgorithmSpec, ProgramError> {
        let spec = self.spec();
        catalogue::install(spec)?;
        Ok(spec)
    }

    fn make_spec(self: &Arc<Self>) -> AlgorithmSpec {
        let m = &self.manifest;
        let build_prog = Arc::clone(self);
        let build: &'static (dyn Fn(&NodeContext) -> Box<dyn ringleader_core::protocol::Algorithm> + Send + Sync) =
            Box::leak(Box::new(move |c: &NodeContext| {
                Box::new(ProgramNode::new(build_prog.clone(), c)) as Box<dyn ringleader_core::protocol::Algorithm>
            }));
        let sim_prog = Arc::clone(self);
        let simulate: ringleader_core::spec::Simulate = Box::leak(Box::new(
            move |s: &AlgorithmSpec,
                  t: &ringleader_core::topology::Topology,
                  i: &[u64],
                  k: &[u32],
                  r: ringleader_core::protocol::Rule,
                  c: &ringleader_core::report::SimConfig| {
                let prog = sim_prog.clone();
                ringleader_core::sim::run_with(s, t, i, k, r, c, move |ctx| ProgramNode::new(prog.clone(), ctx))
            },
        ));
        let bound: ringleader_core::spec::Bound = match m.bound.clone() {
            Some(f) => Box::leak(Box::new(move |n, k| f.eval(n, k))),
            None => &|n, _| budget(n),
        };
        AlgorithmSpec {
            name: leak(&m.name),
            title: leak(&m.title),
            source: leak(&format!("a program: {} (`{}`)", self.dir.display(), m.command.join(" "))),
            description: leak(&m.description),
            topologies: Box::leak(m.topologies.clone().into_boxed_slice()),
            assumptions: m.assumptions,
            rule: m.rule,
            candidates: Candidates::All,
            bound_formula: m.bound.as_ref().map_or(NO_BOUND, |f| leak(f.text())),
            bound,
            timer_events: |_| 0,
            heap_bytes_per_position: HEAP_BYTES_PER_POSITION,
            kept: None,
            live_provision: Provision::Nodes,
            machine: Machine { build, simulate },
            extras: Extras::NONE,
        }
    }

    /// Count a node's failed step.
    pub(crate) fn count_failure(&self) {
        self.counters.failures.fetch_add(1, Ordering::Relaxed);
    }

    /// The name of timer slot `slot`, if the manifest names one.
    pub(crate) fn timer_name(&self, slot: u32) -> Option<&'static str> {
        self.timer_names.get(slot as usize).copied()
    }

    /// The state name `name` as shown: interned, at most [`MAX_STATE_NAMES`] per program, then "other".
    pub(crate) fn state_name(&self, name: &str) -> &'static str {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&kept) = names.iter().find(|&&n| n == name) {
            return kept;
        }
        if names.len() >= MAX_STATE_NAMES {
            return "other";
        }
        let kept = intern(name);
        names.push(kept);
        kept
    }

    /// Answer `request` (an `init` when `init`, else a `step`): from the
    /// memo, or from a process, checked. `Err` is the failure's `<what>`.
    /// A reply that sends on a port beyond `ports` is refused here too, so
    /// that its process is replaced as for any bad reply.
    pub(crate) fn ask(&self, request: &str, init: bool, ports: u32) -> Result<Arc<wire::Reply>, String> {
        if let Some(answer) = self.memo.lock().unwrap_or_else(|e| e.into_inner()).replies.get(request) {
            self.counters.cache_hits.fetch_add(1, Ordering::Relaxed);
            return answer.clone().map_err(|why| why.to_string());
        }
        self.counters.steps.fetch_add(1, Ordering::Relaxed);
        let names = |s: &str| self.state_name(s);
        // The reply is kept for any node that asks the same: its ports are checked by the node
        // that takes it (a node with another number of ports may ask the same request).
        let _ = ports;
        let check = |line: &str| wire::parse_reply(&self.manifest, line, init, &names);
        // In a check ([`Program::remember_failures`]) a failure (it hung, exited, answered
        // garbage) is the program's answer to this request, kept like a reply: asking again would
        // wait out the same step limit again, and a replayed counterexample meets the failure the
        // search met. Elsewhere a failure may be the host's moment (a loaded machine, memory) and
        // is not kept: the next election asks again. A process that could not be started is never
        // the program's answer.
        let answer = match self.pool.ask(request, check) {
            Ok(reply) => Ok(Arc::new(reply)),
            Err(process::AskError::Failed(what)) if self.remember_failures.load(Ordering::Relaxed) => {
                Err(Arc::<str>::from(what))
            }
            Err(process::AskError::Failed(what)) => return Err(what),
            Err(process::AskError::Start(ProgramError::Start { reason, .. })) => {
                return Err(format!("no process: its command could not be started: {reason}"));
            }
            Err(process::AskError::Start(e)) => return Err(format!("no process: {e}")),
        };
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = request.len()
            + match &answer {
                Ok(reply) => reply.state.len() + 64 * (1 + reply.out.len()),
                Err(why) => why.len() + 64,
            };
        if memo.replies.len() >= MEMO_ENTRIES || memo.bytes + bytes > MEMO_BYTES {
            *memo = Memo::default();
        }
        memo.bytes += bytes;
        memo.replies.insert(request.into(), answer.clone());
        answer.map_err(|why| why.to_string())
    }

    /// A trial `init` at a two-port node, so that a program that cannot
    /// start or answer is refused at load.
    fn trial(&self) -> Result<(), ProgramError> {
        let ports = [PortInfo::default(); 2];
        let c = NodeContext { id: 1, n: 3, ports: 2, port_info: &ports, ..NodeContext::default() };
        let request = wire::init_request(&c);
        let names = |s: &str| self.state_name(s);
        self.counters.steps.fetch_add(1, Ordering::Relaxed);
        match self.pool.ask(&request, |line| wire::parse_reply(&self.manifest, line, true, &names)) {
            Ok(_) => Ok(()),
            Err(process::AskError::Start(e)) => Err(e),
            Err(process::AskError::Failed(what)) => {
                self.counters.failures.fetch_add(1, Ordering::Relaxed);
                Err(ProgramError::Init { why: format!("program {}, trial init: {what}", self.manifest.name) })
            }
        }
    }
}
