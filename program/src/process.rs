//! A program's processes: each started in a sandbox (its own process
//! group, rlimits, a cleared environment, a network namespace of its own),
//! asked one request line at a time with a wall-clock limit and a cap on
//! the reply's length, and killed with its whole group when it fails.
//! A [`Pool`] keeps up to [`Limits::processes`] of them per program and
//! replaces a failed one by a fresh one at the next request.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::manifest::Manifest;
use crate::{Isolation, Limits, ProgramError};

/// The PATH a program's command is looked up in and runs with.
pub(crate) const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Bytes of a process's stderr kept for failure texts.
const STDERR_TAIL: usize = 4_096;
/// Largest file a program may write (RLIMIT_FSIZE).
const FSIZE_BYTES: u64 = 1 << 20;
/// Most open files of a program (RLIMIT_NOFILE).
const NOFILE: u64 = 64;
/// A process is replaced between steps once it used this share (1/n) of its CPU allowance.
const CPU_SHARE_REPLACED: u64 = 2;
/// Requests between two looks at a process's CPU time (every request in the crate's tests).
const CPU_LOOK_EVERY: u64 = if cfg!(test) { 1 } else { 256 };
/// Time a fresh process gets for its first reply beyond the step limit: an interpreter's start
/// (Python's takes tens of milliseconds, more on a loaded host) is not the program's step.
pub(crate) const STARTUP_MS: u64 = 5_000;
/// The errno a sandboxed child exits its `pre_exec` with when no network namespace could be made.
const NO_NAMESPACE: i32 = libc::EPROTONOSUPPORT;

/// How a request failed.
#[derive(Debug)]
pub(crate) enum AskError {
    /// No process could be started.
    Start(ProgramError),
    /// The process failed: the failure's `<what>`.
    Failed(String),
}

/// What a program's processes are started with.
struct Recipe {
    program: String,
    argv0: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    limits: Limits,
    isolation: Isolation,
}

/// Up to [`Limits::processes`] processes of one program.
pub(crate) struct Pool {
    recipe: Recipe,
    state: Mutex<PoolState>,
    freed: Condvar,
    started: AtomicU64,
}

#[derive(Default)]
struct PoolState {
    idle: Vec<Proc>,
    live: usize,
}

impl Pool {
    /// A pool for the program `m` in `dir` (no process started yet).
    pub(crate) fn new(m: &Manifest, dir: &Path, limits: Limits, isolation: Isolation) -> Result<Pool, ProgramError> {
        let argv0 =
            resolve(&m.command[0], dir).map_err(|reason| ProgramError::Start { program: m.name.clone(), reason })?;
        Ok(Pool {
            recipe: Recipe {
                program: m.name.clone(),
                argv0,
                args: m.command[1..].to_vec(),
                dir: dir.to_path_buf(),
                limits,
                isolation,
            },
            state: Mutex::default(),
            freed: Condvar::new(),
            started: AtomicU64::new(0),
        })
    }

    /// Processes started so far.
    pub(crate) fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Ask a process `request` and check its reply line with `check`; a
    /// process whose reply fails (or is refused by `check`) is killed with
    /// its group, and the next request starts a fresh one.
    pub(crate) fn ask<T>(&self, request: &str, check: impl FnOnce(&str) -> Result<T, String>) -> Result<T, AskError> {
        let mut proc = self.take()?;
        match proc.ask(request, &self.recipe.limits).and_then(|line| check(&line)) {
            Ok(t) => {
                self.give_back(proc);
                Ok(t)
            }
            Err(what) => {
                drop(proc);
                self.gone();
                Err(AskError::Failed(what))
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self) -> Result<Proc, AskError> {
        let limits = &self.recipe.limits;
        let waited = Duration::from_millis(limits.step_ms + STARTUP_MS);
        let deadline = Instant::now() + waited;
        let mut state = self.lock();
        loop {
            if let Some(p) = state.idle.pop() {
                return Ok(p);
            }
            if state.live < self.recipe.limits.processes.max(1) {
                state.live += 1;
                drop(state);
                return match Proc::spawn(&self.recipe) {
                    Ok(p) => {
                        self.started.fetch_add(1, Ordering::Relaxed);
                        Ok(p)
                    }
                    Err(e) => {
                        self.gone();
                        Err(AskError::Start(e))
                    }
                };
            }
            // Every process is busy (other nodes' steps): wait, but not past a step's limit.
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(AskError::Failed(format!(
                    "no process was free within {} ms: all {} of the program's processes were busy",
                    waited.as_millis(),
                    limits.processes.max(1)
                )));
            }
            state = self.freed.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    fn give_back(&self, mut proc: Proc) {
        proc.asked += 1;
        if proc.asked.is_multiple_of(CPU_LOOK_EVERY) && proc.cpu_s() * CPU_SHARE_REPLACED >= self.recipe.limits.cpu_s {
            drop(proc);
            self.gone();
            return;
        }
        self.lock().idle.push(proc);
        self.freed.notify_one();
    }

    fn gone(&self) {
        self.lock().live -= 1;
        self.freed.notify_one();
    }
}

/// `argv0` as run: looked up in [`PATH`] without a `/`, else relative to `dir`.
fn resolve(argv0: &str, dir: &Path) -> Result<PathBuf, String> {
    if argv0.contains('/') {
        let path = dir.join(argv0);
        return if path.is_file() { Ok(path) } else { Err(format!("`{argv0}` is not a file in {}", dir.display())) };
    }
    PATH.split(':')
        .map(|d| Path::new(d).join(argv0))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("`{argv0}` is not in {PATH}"))
}

/// What the stdout reader saw instead of a line.
#[derive(Debug)]
enum ReadEnd {
    Eof,
    TooLong,
    NotUtf8,
    Io(String),
}

/// The last bytes a process wrote to stderr, and whether it closed it.
#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
    closed: bool,
}

/// One running process of a program.
struct Proc {
    child: Child,
    pid: i32,
    requests: Option<SyncSender<Vec<u8>>>,
    lines: Receiver<Result<String, ReadEnd>>,
    stderr: Arc<(Mutex<Tail>, Condvar)>,
    asked: u64,
    /// Waited for: its pid may be another's now, so it is never signalled again.
    reaped: bool,
}

static WARNED: AtomicBool = AtomicBool::new(false);

impl Proc {
    fn spawn(r: &Recipe) -> Result<Proc, ProgramError> {
        let mut cmd = Command::new(&r.argv0);
        cmd.args(&r.args)
            .current_dir(&r.dir)
            .env_clear()
            .env("PATH", PATH)
            .env("LANG", "C.UTF-8")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1")
            .env("HOME", &r.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let limits = r.limits;
        let required = r.isolation == Isolation::Required;
        // SAFETY: the closure runs in the forked child before exec and only
        // makes system calls (setpgid, unshare, setrlimit), which are
        // async-signal-safe; it allocates nothing and takes no lock.
        unsafe {
            cmd.pre_exec(move || sandbox(limits, required));
        }
        let mut child = cmd.spawn().map_err(|e| {
            if e.raw_os_error() == Some(NO_NAMESPACE) {
                ProgramError::Isolation {
                    program: r.program.clone(),
                    reason: "unshare(CLONE_NEWNET) and unshare(CLONE_NEWUSER | CLONE_NEWNET) were both refused".into(),
                }
            } else {
                ProgramError::Start { program: r.program.clone(), reason: format!("{}: {e}", r.argv0.display()) }
            }
        })?;
        let pid = child.id() as i32;
        if !required && !isolated(pid) && !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "warning: program {} runs with the host's network: the host allows no network namespace, \
                 and programs.isolation is \"none\" (or the checker's --no-isolation)",
                r.program
            );
        }
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(mut stdin), Some(stdout), Some(mut stderr)) = (stdin, stdout, stderr) else {
            kill_group(pid, &mut child);
            return Err(ProgramError::Start { program: r.program.clone(), reason: "no pipes to it".into() });
        };
        let (req_tx, req_rx) = sync_channel::<Vec<u8>>(1);
        let (line_tx, line_rx) = sync_channel(2);
        let tail: Arc<(Mutex<Tail>, Condvar)> = Arc::default();
        let cap = limits.line_bytes;
        let spawned = std::thread::Builder::new().name("program-stdin".into()).spawn(move || {
            for line in req_rx {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        let spawned = spawned.and_then(|_| {
            std::thread::Builder::new().name("program-stdout".into()).spawn(move || read_lines(stdout, cap, line_tx))
        });
        let tail_in = Arc::clone(&tail);
        let spawned = spawned.and_then(|_| {
            std::thread::Builder::new().name("program-stderr".into()).spawn(move || {
                let mut buf = [0u8; 1024];
                loop {
                    let n = match stderr.read(&mut buf) {
                        Ok(0) | Err(_) => 0,
                        Ok(n) => n,
                    };
                    let mut t = tail_in.0.lock().unwrap_or_else(|e| e.into_inner());
                    if n == 0 {
                        t.closed = true;
                        tail_in.1.notify_all();
                        return;
                    }
                    t.bytes.extend(&buf[..n]);
                    let over = t.bytes.len().saturating_sub(STDERR_TAIL);
                    t.bytes.drain(..over);
                }
            })
        });
        if let Err(e) = spawned {
            kill_group(pid, &mut child);
            return Err(ProgramError::Start {
                program: r.program.clone(),
                reason: format!("no thread to talk to it: {e}"),
            });
        }
        Ok(Proc { child, pid, requests: Some(req_tx), lines: line_rx, stderr: tail, asked: 0, reaped: false })
    }

    /// Write `request` and wait for one reply line, within the step limit.
    fn ask(&mut self, request: &str, limits: &Limits) -> Result<String, String> {
        match self.lines.try_recv() {
            Ok(Ok(line)) => {
                let line: String = line.chars().take(80).collect();
                return Err(format!("the program wrote a line nobody asked for (`{line}`): the program was stopped"));
            }
            Ok(Err(end)) => return Err(self.ended(end, limits)),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => return Err(self.ended(ReadEnd::Eof, limits)),
        }
        let mut line = Vec::with_capacity(request.len() + 1);
        line.extend_from_slice(request.as_bytes());
        line.push(b'\n');
        let allowed = if self.asked == 0 { limits.step_ms + STARTUP_MS } else { limits.step_ms };
        let deadline = Instant::now() + Duration::from_millis(allowed);
        // The writer thread holds at most one request: a program that did not read the last one
        // (its pipe full) fails now, within the limit, rather than block this thread for good.
        if let Some(tx) = &self.requests {
            match tx.try_send(line) {
                Ok(()) => {}
                Err(std::sync::mpsc::TrySendError::Full(_)) => {
                    self.stop();
                    return Err("the program did not read its last request: the program was stopped".into());
                }
                Err(std::sync::mpsc::TrySendError::Disconnected(_)) => return Err(self.ended(ReadEnd::Eof, limits)),
            }
        }
        match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(end)) => Err(self.ended(end, limits)),
            Err(RecvTimeoutError::Timeout) if self.asked == 0 => {
                self.stop();
                Err(format!(
                    "no reply within {allowed} ms (the step limit and {STARTUP_MS} ms to start): the program was stopped"
                ))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(format!("no reply within {allowed} ms (the step limit): the program was stopped"))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.ended(ReadEnd::Eof, limits)),
        }
    }

    /// The failure text of a stdout that gave no line: the process is stopped (if it still runs).
    fn ended(&mut self, end: ReadEnd, limits: &Limits) -> String {
        match end {
            ReadEnd::TooLong => {
                self.stop();
                format!("reply line longer than {} bytes: the program was stopped", limits.line_bytes)
            }
            ReadEnd::NotUtf8 => {
                self.stop();
                "reply is not UTF-8 text: the program was stopped".into()
            }
            ReadEnd::Io(e) => {
                self.stop();
                format!("its output could not be read ({e}): the program was stopped")
            }
            ReadEnd::Eof => {
                let status = self.exit_status(Duration::from_millis(limits.step_ms.min(1_000)));
                let stderr = self.stderr_tail();
                let said = if stderr.is_empty() {
                    "it wrote nothing to stderr".into()
                } else {
                    format!("its last stderr: {stderr}")
                };
                match status {
                    Some(s) => format!("the program exited ({}); {said}", status_words(s)),
                    None => format!("the program closed its stdout: the program was stopped; {said}"),
                }
            }
        }
    }

    /// Its exit status, waiting up to `wait` for it to exit (then killing its group).
    fn exit_status(&mut self, wait: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + wait;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                // Reaped: its pid stays a group's id only while the group has members, killed here.
                // SAFETY: as in `kill_group`.
                unsafe {
                    libc::kill(-self.pid, libc::SIGKILL);
                }
                self.reaped = true;
                return Some(s);
            }
            if Instant::now() >= until {
                self.stop();
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The last of its stderr, once it closed it (or after a short wait).
    fn stderr_tail(&self) -> String {
        let (lock, closed) = &*self.stderr;
        let t = lock.lock().unwrap_or_else(|e| e.into_inner());
        let (t, _) =
            closed.wait_timeout_while(t, Duration::from_millis(200), |t| !t.closed).unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = t.bytes.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_string()
    }

    /// Kill its process group and reap it (once).
    fn stop(&mut self) {
        if !self.reaped {
            kill_group(self.pid, &mut self.child);
            self.reaped = true;
        }
    }

    /// CPU seconds it used (user + system), from /proc; 0 when unreadable.
    fn cpu_s(&self) -> u64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else { return 0 };
        // Fields after the command (in parentheses, which may hold spaces): state is field 3, utime 14, stime 15.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else { return 0 };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields.get(11..13).map_or(0, |f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum());
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        ticks / hz
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.requests = None;
        self.stop();
    }
}

/// `status` in words: "status 1", "signal 9".
fn status_words(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// Kill the process group `pgid` (the child's) and reap the child.
fn kill_group(pgid: i32, child: &mut Child) {
    // SAFETY: kill has no memory preconditions; a negative pid names the group
    // the child made with setpgid(0, 0), which holds only it and its own children.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Is the process `pid` in another network namespace than this one?
fn isolated(pid: i32) -> bool {
    let theirs = std::fs::read_link(format!("/proc/{pid}/ns/net"));
    let ours = std::fs::read_link("/proc/self/ns/net");
    matches!((theirs, ours), (Ok(a), Ok(b)) if a != b)
}

/// In the forked child before exec: its own process group, no network, the limits.
fn sandbox(limits: Limits, required: bool) -> std::io::Result<()> {
    // SAFETY (whole function): plain system calls on this (child) process, no memory shared.
    unsafe {
        if libc::setpgid(0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::unshare(libc::CLONE_NEWNET) != 0
            && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0
            && required
        {
            return Err(std::io::Error::from_raw_os_error(NO_NAMESPACE));
        }
        let mib = limits.memory_mib.saturating_mul(1 << 20);
        for (resource, value) in [
            (libc::RLIMIT_AS, mib),
            (libc::RLIMIT_CPU, limits.cpu_s),
            (libc::RLIMIT_FSIZE, FSIZE_BYTES),
            (libc::RLIMIT_NOFILE, NOFILE),
            (libc::RLIMIT_CORE, 0),
        ] {
            let rl = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
            if libc::setrlimit(resource, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Read `out` line by line, never buffering more than `cap` bytes of a line.
fn read_lines(out: ChildStdout, cap: usize, tx: SyncSender<Result<String, ReadEnd>>) {
    let mut r = BufReader::with_capacity(64 * 1024, out);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let buf = match r.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Err(ReadEnd::Io(e.to_string())));
                return;
            }
        };
        if buf.is_empty() {
            let _ = tx.send(Err(ReadEnd::Eof));
            return;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if line.len() + take > cap {
            let _ = tx.send(Err(ReadEnd::TooLong));
            return;
        }
        line.extend_from_slice(&buf[..take]);
        r.consume(if done { take + 1 } else { take });
        if done {
            let sent = match String::from_utf8(std::mem::take(&mut line)) {
                Ok(text) => tx.send(Ok(text)),
                Err(_) => tx.send(Err(ReadEnd::NotUtf8)),
            };
            if sent.is_err() {
                return;
            }
        }
    }
}
