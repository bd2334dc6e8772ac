//! `--raft-vs-etcd`: crash failover of Ringleader's LIVE Raft beside a real
//! etcd on the same machine, printed as the rows of the table "Raft beside
//! etcd" in docs/performance.md.
//!
//! Rows: 3 and 5 members (`--members`), at etcd's defaults (heartbeat 100 ms,
//! election timeout 1,000 ms) and at the loopback setting (50 / 250, etcd's
//! minimum of five heartbeats), `--setting P/T` to replace them; 20 crashes
//! per row (`--trials N`). The two systems alternate row by row, so a change
//! in the machine's load falls on both.
//!
//! * **Ringleader.** `raft` kept (`keep_leader`, no options: no PreVote,
//!   CheckQuorum or lease) on an embedded cluster, failure detector `P/T`, so
//!   heartbeats every P ms and election timeouts uniform in [T, 2T)
//!   (`RaftConfig::for_detector`). A crash is `InjectFault crash {leader:
//!   true}`; the time is until a client polling the controller's `GetLeader`
//!   every 5 ms sees a leader of a higher term agreed by every live node.
//! * **etcd.** Debian's etcd-server with `--heartbeat-interval P` and
//!   `--election-timeout max(T, 5P)`; a crash is SIGKILL of the Raft leader's
//!   process; the time is until a poll of every surviving member's gRPC
//!   `Maintenance.Status` (every 5 ms, each member asked in turn) finds them
//!   all naming one new leader of a higher term.
//!
//! After the table, how many terms each failover took (the new leader's term
//! less the crashed one's): more than 1 is a split vote or a candidacy that
//! lost, which costs another election timeout.
//!
//! Both clusters stay up for all the crashes of a row: the crashed member is
//! started again (Ringleader: recovered; etcd: the same process started on its
//! data directory), and the next crash waits three timeouts and a leader agreed
//! by every member.

use std::time::{Duration, Instant};

use etcd_client::ConnectOptions;
use ringleader_tests::{TestController, test_config};

use super::{Args, Client, Crashes, Etcd, crash_trials, median, quantile, start_kept};

const MEMBERS: [u32; 2] = [3, 5];
/// (heartbeat, election timeout) in ms: etcd's defaults, then the loopback setting.
const SETTINGS: [(u64, u64); 2] = [(100, 1_000), (50, 250)];
const TRIALS: usize = 20;
const POLL: Duration = Duration::from_millis(5);

/// Print the table's header and one row per system, cluster size and setting.
pub(super) async fn run(args: &Args) {
    let trials = args.trials.unwrap_or(TRIALS);
    let members = if args.members.is_empty() { MEMBERS.to_vec() } else { args.members.clone() };
    let settings = if args.settings.is_empty() { SETTINGS.to_vec() } else { args.settings.clone() };
    let etcd = etcd_version();
    println!("crash failover, client-seen, {trials} crashes per row; setting = heartbeat / election timeout in ms");
    println!();
    println!("| system | members | setting | trials | median | p95 | max (ms) |");
    println!("| --- | ---: | --- | ---: | ---: | ---: | ---: |");
    let mut rounds = Vec::new();
    for &n in &members {
        for &(heartbeat, timeout) in &settings {
            let mut raft = ringleader_raft(n, heartbeat, timeout, trials).await;
            println!("{}", row("Ringleader LIVE Raft", n, (heartbeat, timeout), &mut raft));
            rounds.push(terms("Ringleader LIVE Raft", n, (heartbeat, timeout), &raft));
            // etcd refuses an election timeout below five heartbeats.
            let election = timeout.max(5 * heartbeat);
            let line = match (&etcd, etcd_raft(n, heartbeat, election, trials).await) {
                (Some(version), Some(mut c)) => {
                    rounds.push(terms(version, n, (heartbeat, election), &c));
                    row(version, n, (heartbeat, election), &mut c)
                }
                _ => "etcd: not installed (apt-get install etcd-server)".into(),
            };
            println!("{line}");
        }
    }
    println!();
    println!("terms per failover (the new leader's term less the crashed one's; 1: the first candidacy won):");
    for line in rounds {
        println!("{line}");
    }
}

/// How many failovers of a row took how many terms, e.g. "1 ×18, 2 ×2".
fn terms(system: &str, members: u32, (heartbeat, election): (u64, u64), c: &Crashes) -> String {
    let mut counts = std::collections::BTreeMap::new();
    for &t in &c.terms {
        *counts.entry(t).or_insert(0) += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(t, k)| format!("{t} ×{k}")).collect();
    format!("* {system}, {members} members, {heartbeat} / {election}: {}", counts.join(", "))
}

/// One markdown row; crashes without a new leader are counted in the trials cell.
fn row(system: &str, members: u32, (heartbeat, election): (u64, u64), c: &mut Crashes) -> String {
    let (median, p95, max) = match median(&mut c.seen) {
        _ if c.seen.is_empty() => ("-".into(), "-".into(), "-".into()),
        m => (grouped(m), grouped(quantile(&c.seen, 0.95)), grouped(c.seen[c.seen.len() - 1])),
    };
    let trials = match c.failed {
        0 => c.seen.len().to_string(),
        f => format!("{} ({f} without a new leader in 60 s)", c.seen.len() + f),
    };
    let setting = format!("{} / {}", grouped(heartbeat), grouped(election));
    format!("| {system} | {members} | {setting} | {trials} | {median} | {p95} | {max} |")
}

/// `n` with a comma between thousands, as the docs write figures.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// "etcd 3.4.23", from `etcd --version`; `None` if etcd is not installed.
fn etcd_version() -> Option<String> {
    let out = std::process::Command::new("etcd").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.lines().find_map(|l| l.strip_prefix("etcd Version: "))?;
    Some(format!("etcd {}", version.trim()))
}

/// Crashes of the agreed leader of a kept `raft` election on `n` embedded nodes.
async fn ringleader_raft(n: u32, period_ms: u64, timeout_ms: u64, trials: usize) -> Crashes {
    let ctl = TestController::start_with(test_config(n)).await;
    let mut client: Client = ctl.client();
    let id = start_kept(&mut client, "raft", &[], period_ms, timeout_ms).await.expect("start kept raft");
    let crashes = crash_trials(&mut client, &id, trials, timeout_ms).await;
    let _ = client.stop_election(ringleader_proto::v1::StopElectionRequest { election_id: id }).await;
    ctl.stop().await;
    crashes
}

/// A member's view: its own id, the leader it names (0: none) and its term.
#[derive(Clone, Copy, PartialEq, Eq)]
struct View {
    me: u64,
    leader: u64,
    term: u64,
}

/// gRPC clients of an etcd cluster, one per member (`None` while the member is down).
struct Members {
    clients: Vec<Option<etcd_client::Client>>,
}

impl Members {
    async fn connect(addr: &str) -> etcd_client::Client {
        let options = ConnectOptions::new()
            .with_timeout(Duration::from_millis(300))
            .with_connect_timeout(Duration::from_millis(300));
        etcd_client::Client::connect([format!("http://{addr}")], Some(options)).await.expect("etcd client")
    }

    /// Every live member's view, in member order, if each answered.
    async fn views(&mut self) -> Option<Vec<(usize, View)>> {
        let mut views = Vec::new();
        for (i, c) in self.clients.iter_mut().enumerate() {
            let Some(c) = c else { continue };
            let s = c.status().await.ok()?;
            let me = s.header()?.member_id();
            views.push((i, View { me, leader: s.leader(), term: s.raft_term() }));
        }
        Some(views)
    }

    /// Poll until every live member names one leader for which `ok` holds; that leader's
    /// member index and view.
    async fn agreed(&mut self, within: Duration, ok: impl Fn(&View) -> bool) -> Option<(usize, View)> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(views) = self.views().await
                && let Some(&(_, first)) = views.first()
                && first.leader != 0
                && views.iter().all(|(_, v)| v.leader == first.leader && v.term == first.term && ok(v))
                && let Some(&(i, v)) = views.iter().find(|(_, v)| v.me == first.leader)
            {
                return Some((i, v));
            }
            tokio::time::sleep(POLL).await;
        }
        None
    }
}

/// Crashes (SIGKILL) of the leader of an `n`-member etcd cluster; `None` if etcd is not installed.
async fn etcd_raft(n: u32, heartbeat_ms: u64, election_ms: u64, trials: usize) -> Option<Crashes> {
    let mut etcd = Etcd::start(n, heartbeat_ms, election_ms)?;
    let mut members = Members { clients: Vec::new() };
    for addr in &etcd.clients {
        members.clients.push(Some(Members::connect(addr).await));
    }
    let mut c = Crashes::default();
    for _ in 0..trials {
        let Some((leader, before)) = members.agreed(Duration::from_secs(30), |_| true).await else {
            c.failed += 1;
            break;
        };
        etcd.kill(leader);
        members.clients[leader] = None;
        let t0 = Instant::now();
        let new = |v: &View| v.term > before.term && v.leader != before.me;
        match members.agreed(Duration::from_secs(60), new).await {
            Some((_, v)) => {
                c.seen.push(t0.elapsed().as_millis() as u64);
                c.terms.push(v.term - before.term);
            }
            None => c.failed += 1,
        }
        if !etcd.restart(leader) {
            break;
        }
        members.clients[leader] = Some(Members::connect(&etcd.clients[leader]).await);
        tokio::time::sleep(Duration::from_millis(election_ms * 3)).await;
    }
    Some(c)
}
