//! Multi-host failover in Linux network namespaces: one
//! namespace per node, each with its own network stack and a veth link to a
//! bridge; the controller reaches them over the bridge from the root
//! namespace. The network is impaired in the kernel: `tc netem` loss and
//! delay where the kernel has netem, else random loss with nftables (`numgen`)
//! — this test prints which. Partitions are cut links: blackhole routes
//! between the namespaces, both ways.
//!
//! Needs root and iproute2 (nftables for loss without netem). Outside CI
//! without them it prints a note and passes; in CI (`CI=true`) their absence
//! is a failure, so the run cannot silently skip it. The node processes log
//! to `$TMPDIR/ringleader-netns-<tag>-node<i>.log` at the level in
//! `NETNS_NODE_LOG` (default `warn`; `info` shows every belief).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pb::controller_client::ControllerClient;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, election, in_ci, node_binary, test_config};
use tonic::transport::Channel;

const NODES: usize = 5;
const PORT: u16 = 7000;

/// Run a command; its error output on failure.
fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0]).args(&args[1..]).output().map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The namespaces, the bridge and the node processes; all removed on drop.
struct Hosts {
    tag: String,
    subnet: String,
    namespaces: Vec<String>,
    nodes: Vec<Option<Child>>,
    /// How the kernel impairs the links: "netem ..." or "nftables ..." or "none".
    impairment: String,
}

impl Hosts {
    fn bridge(&self) -> String {
        format!("rlb{}", self.tag)
    }

    /// The iptables command that inserts (`-I`) or deletes (`-D`) the rule accepting what `bridge`
    /// forwards between its own ports.
    fn forward_rule<'a>(op: &'a str, bridge: &'a str) -> [&'a str; 9] {
        ["iptables", op, "FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT"]
    }

    fn ip(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, i + 1)
    }

    /// Build the namespaces and the bridge; `Err` when this host cannot (not root, no iproute2).
    fn create() -> Result<Hosts, String> {
        let pid = std::process::id();
        let tag = format!("{}", pid % 100_000);
        let subnet = format!("10.77.{}", pid % 250);
        let mut hosts = Hosts { tag, subnet, namespaces: Vec::new(), nodes: Vec::new(), impairment: "none".into() };
        let br = hosts.bridge();
        run(&["ip", "link", "add", &br, "type", "bridge"])?;
        run(&["ip", "addr", "add", &format!("{}.254/24", hosts.subnet), "dev", &br])?;
        run(&["ip", "link", "set", &br, "up"])?;
        // A Docker daemon on this host sets the FORWARD policy to DROP, and with br_netfilter bridged
        // frames pass through it: let the bridge forward between its own ports (removed on drop;
        // nothing to do, and an error ignored, where iptables is absent).
        let _ = run(&Self::forward_rule("-I", &br));
        for i in 0..NODES {
            let ns = format!("rl{}n{i}", hosts.tag);
            run(&["ip", "netns", "add", &ns])?;
            hosts.namespaces.push(ns.clone());
            let (outer, inner) = (format!("rlv{}x{i}", hosts.tag), format!("rlv{}y{i}", hosts.tag));
            run(&["ip", "link", "add", &outer, "type", "veth", "peer", "name", &inner])?;
            run(&["ip", "link", "set", &inner, "netns", &ns])?;
            run(&["ip", "link", "set", &outer, "master", &br])?;
            run(&["ip", "link", "set", &outer, "up"])?;
            run(&["ip", "-n", &ns, "addr", "add", &format!("{}/24", hosts.ip(i)), "dev", &inner])?;
            run(&["ip", "-n", &ns, "link", "set", &inner, "up"])?;
            run(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(hosts)
    }

    /// Impair every node's outgoing traffic to the other nodes: netem loss and delay if the kernel has
    /// it, else random loss with nftables, else nothing (recorded in `impairment`).
    fn impair(&mut self, loss_percent: u32) {
        let netem: Vec<_> = (0..NODES)
            .map(|i| {
                let dev = format!("rlv{}y{i}", self.tag);
                let loss = format!("{loss_percent}%");
                run(&["ip", "netns", "exec", &self.namespaces[i], "tc", "qdisc", "add", "dev", &dev, "root", "netem"]
                    .into_iter()
                    .chain(["delay", "2ms", "1ms", "loss", &loss])
                    .collect::<Vec<_>>())
            })
            .collect();
        if netem.iter().all(Result::is_ok) {
            self.impairment = format!("tc netem: delay 2 ms ± 1 ms, loss {loss_percent}%");
            return;
        }
        let nft = |ns: &str, rule: &str| run(&["ip", "netns", "exec", ns, "nft", rule]);
        let nodes_net = format!("{}.0/24", self.subnet);
        let controller = format!("{}.254", self.subnet);
        let mut all = Ok(());
        for ns in &self.namespaces {
            all = all
                .and_then(|_| nft(ns, "add table inet ringleader"))
                .and_then(|_| nft(ns, "add chain inet ringleader out { type filter hook output priority 0 ; }"))
                .and_then(|_| {
                    nft(
                        ns,
                        &format!(
                            "add rule inet ringleader out ip daddr {nodes_net} ip daddr != {controller} \
                             numgen random mod 100 < {loss_percent} drop"
                        ),
                    )
                });
        }
        self.impairment = match all {
            Ok(()) => format!(
                "nftables: loss {loss_percent}% between nodes, no added delay (this kernel has no netem: {})",
                netem[0].as_ref().unwrap_err()
            ),
            Err(e) => format!("none (no netem: {}; no nftables: {e})", netem[0].as_ref().unwrap_err()),
        };
    }

    /// Cut (or restore) the links between node `a` and every node of `others`, both ways.
    fn cut(&self, a: usize, others: &[usize], cut: bool) {
        let verb = if cut { "add" } else { "del" };
        for &b in others {
            for (from, to) in [(a, b), (b, a)] {
                let dst = format!("{}/32", self.ip(to));
                run(&["ip", "-n", &self.namespaces[from], "route", verb, "blackhole", &dst]).expect("blackhole route");
            }
        }
    }

    fn spawn_nodes(&mut self) {
        self.nodes.resize_with(NODES, || None);
        for i in 0..NODES {
            self.spawn(i);
        }
    }

    /// Start node `i`'s process in its namespace (again, after a kill).
    fn spawn(&mut self, i: usize) {
        {
            let log = std::env::temp_dir().join(format!("ringleader-netns-{}-node{i}.log", self.tag));
            let file = std::fs::OpenOptions::new().create(true).append(true).open(&log).expect("log file");
            let child = Command::new("ip")
                .args(["netns", "exec", &self.namespaces[i]])
                .arg(node_binary())
                .args(["--listen", &format!("{}:{PORT}", self.ip(i)), "--name", &format!("host-{}", i + 1)])
                .env("RUST_LOG", std::env::var("NETNS_NODE_LOG").unwrap_or_else(|_| "warn".into()))
                .stdin(Stdio::null())
                .stdout(file.try_clone().expect("log"))
                .stderr(file)
                .spawn()
                .expect("spawn ringleader-node in its namespace");
            self.nodes[i] = Some(child);
        }
    }

    /// Cut the network into `groups` (nodes of different groups cannot talk), or restore it.
    fn partition(&self, groups: &[&[usize]], cut: bool) {
        for (g, group) in groups.iter().enumerate() {
            let others: Vec<usize> = groups[g + 1..].iter().flat_map(|o| o.iter().copied()).collect();
            for &a in group.iter() {
                self.cut(a, &others, cut);
            }
        }
    }

    /// SIGKILL node `i`'s process (`ip netns exec` execs the node, so the child is the node).
    fn kill(&mut self, i: usize) {
        let mut child = self.nodes[i].take().expect("node running");
        run(&["kill", "-KILL", &child.id().to_string()]).expect("kill -KILL");
        let status = child.wait().expect("wait");
        assert!(!status.success(), "killed by a signal: {status}");
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for child in self.nodes.iter_mut().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for ns in &self.namespaces {
            let _ = run(&["ip", "netns", "del", ns]);
        }
        let br = self.bridge();
        let _ = run(&["ip", "link", "del", &br]);
        let _ = run(&Self::forward_rule("-D", &br));
    }
}

/// Wait until the controller reaches every node (60 s at most).
async fn all_reachable(client: &mut ControllerClient<Channel>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let c = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
        if c.nodes.len() == NODES && c.nodes.iter().all(|n| n.reachable) {
            return;
        }
        assert!(Instant::now() < deadline, "nodes in namespaces not reachable within 60 s: {c:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Poll GetLeader until `ok` holds, or panic after `within`.
async fn leader_until(
    client: &mut ControllerClient<Channel>,
    id: &str,
    within: Duration,
    what: &str,
    ok: impl Fn(&pb::Leader) -> bool,
) -> pb::Leader {
    let deadline = Instant::now() + within;
    loop {
        let last = match client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await {
            Ok(l) if ok(l.get_ref()) => return l.into_inner(),
            other => other,
        };
        assert!(Instant::now() < deadline, "{what}: not within {within:?}; last answer {last:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A kept leadership of `algorithm` on the complete network of the five hosts, ids 1..=5.
fn req_for(algorithm: &str, detector: pb::FailureDetector) -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        keep_leader: true,
        wait: false,
        ids: (1..=NODES as u64).collect(),
        detector: Some(detector),
        topology: Some(pb::Topology { kind: pb::TopologyKind::Complete as i32, ..Default::default() }),
        ..election(algorithm)
    }
}

/// Five node processes, each in its own network namespace behind a bridge, with loss injected by the
/// kernel (netem, or nftables where the kernel lacks netem): kept bully elects host-5; SIGKILL of
/// host-5's process makes host-4 the single agreed leader with a higher term within the expected
/// time (detector timeout + bully's answer timeout + slack), recorded as a failover whose cause is
/// the unreachable node; cutting host-4's links to the rest makes host-3 lead a higher term;
/// restoring them ends with one agreed leader; two leaders of one term, which bully does not rule out
/// when a delay outlasts its answer timeout (TCP retransmitting a lost segment) or across a partition
/// (docs/algorithms.md, bully's chaos results), are reported, and nothing else may break. Then
/// the killed process restarts, a ZooKeeper-style leadership elects host-5, and cutting the network
/// into {1, 2} {3, 4} {5} leaves it without a leader (FAILED_PRECONDITION "no leader") and elects
/// nobody while no group holds a majority; healing brings one agreed leader of a higher term, with
/// no two leaders of one term. (Two leaders of *different* terms may overlap for a moment after the
/// heal: ZooKeeper-style election promises one leader per term, not leases.) Last, a Chubby-style
/// leader cut off from the other four: they elect another node of a higher term, healing brings one
/// agreed leader, and leases keep any two self-believed leaders from overlapping at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_killed_across_network_namespaces() {
    let mut hosts = match Hosts::create() {
        Ok(h) => h,
        Err(e) if in_ci() => panic!("CI must run the network-namespace test as root with iproute2: {e}"),
        Err(e) => {
            eprintln!("note: skipping the network-namespace test (needs root and iproute2): {e}");
            return;
        }
    };
    hosts.impair(2);
    eprintln!("netns: links impaired by {}", hosts.impairment);
    hosts.spawn_nodes();
    let mut config = test_config(0);
    config.controller.nodes = (0..NODES).map(|i| format!("http://{}:{PORT}", hosts.ip(i))).collect();
    config.controller.rpc_timeout_ms = 3_000;
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    all_reachable(&mut client).await;

    // A detector that rides out TCP retransmissions after a lost segment (200 ms and more).
    let detector = pb::FailureDetector { period_ms: 100, timeout_ms: 1_000 };
    let e = client.start_election(req_for("bully", detector)).await.unwrap().into_inner();
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(30), "host-5 agreed", |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5)
    })
    .await;

    // Detection within timeout + period; bully's answer timeout is 2.5 detector timeouts; the rest is slack
    // for a loaded 2-core machine and retransmissions.
    let expected = Duration::from_millis(detector.timeout_ms + detector.period_ms + detector.timeout_ms * 5 / 2);
    let within = expected + Duration::from_secs(10);
    let killed = Instant::now();
    hosts.kill(4);
    let second = leader_until(&mut client, &e.election_id, within, "host-4 agreed after the kill", |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 4) && l.term > first.term
    })
    .await;
    let took = killed.elapsed();
    let fo = second.last_failover.clone().expect("the kill is recorded as a failover");
    assert_eq!(fo.leader.as_ref().map(|l| l.id), Some(5), "{fo:?}");
    assert!(fo.cause.contains("unreachable"), "{fo:?}");
    eprintln!(
        "netns: SIGKILL of the leader -> host-4 agreed in {} ms (expected about {} ms); controller figures: \
         detection {:?} ms, agreement {:?} ms",
        took.as_millis(),
        expected.as_millis(),
        fo.detection_ms,
        fo.agreement_ms
    );

    // A partition: host-4 (the leader) loses its links to hosts 1-3; they elect host-3 in a higher term.
    hosts.cut(3, &[0, 1, 2], true);
    let third = leader_until(&mut client, &e.election_id, within, "host-3 leads the cut-off majority", |l| {
        l.leader.as_ref().is_some_and(|r| r.id == 3) && l.term > second.term
    })
    .await;
    eprintln!("netns: links of host-4 cut: host-3 leads term {}", third.term);
    hosts.cut(3, &[0, 1, 2], false);
    let healed = leader_until(&mut client, &e.election_id, within * 2, "one agreed leader after healing", |l| {
        l.agreed && l.term > third.term.min(second.term)
    })
    .await;
    eprintln!("netns: healed: {} leads term {}", healed.leader.as_ref().unwrap().node, healed.term);

    let done = client.stop_election(pb::StopElectionRequest { election_id: e.election_id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "{done:?}");
    // CI once saw "two leaders of term 2: host-3 and host-4" after a kill whose agreement took 6.1 s
    // (expected 3.6 s): lost segments outlasted the answer timeout, outside bully's model.
    assert!(done.violations.iter().all(|v| v.starts_with("two leaders of term")), "bully: {:?}", done.violations);
    eprintln!("netns: bully, two leaders of one term (outside its model, reported): {:?}", done.violations);

    // The killed process restarts; then a quorum algorithm under a partition that leaves no majority.
    hosts.spawn(4);
    all_reachable(&mut client).await;
    let z = client.start_election(req_for("zookeeper", detector)).await.unwrap().into_inner();
    let zk = leader_until(&mut client, &z.election_id, within, "zookeeper: host-5 agreed", |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5)
    })
    .await;
    let groups: [&[usize]; 3] = [&[0, 1], &[2, 3], &[4]];
    hosts.partition(&groups, true);
    let cut = Instant::now();
    let deadline = cut + within;
    let refusal = loop {
        match client.get_leader(pb::GetLeaderRequest { election_id: z.election_id.clone() }).await {
            Err(s) => break s,
            Ok(l) => assert!(Instant::now() < deadline, "zookeeper: still a leader without a majority: {l:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(refusal.code(), tonic::Code::FailedPrecondition, "{refusal:?}");
    assert!(refusal.message().contains("no leader"), "{}", refusal.message());
    eprintln!("netns: zookeeper cut into 2 + 2 + 1: no leader after {} ms", cut.elapsed().as_millis());
    // Nobody is elected while no group holds a majority (three detector timeouts and more).
    let quiet = Instant::now() + Duration::from_secs(4);
    while Instant::now() < quiet {
        let answer = client.get_leader(pb::GetLeaderRequest { election_id: z.election_id.clone() }).await;
        assert!(answer.is_err(), "zookeeper elected without a majority: {answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    hosts.partition(&groups, false);
    let back = leader_until(&mut client, &z.election_id, within * 2, "zookeeper: a leader after healing", |l| {
        l.agreed && l.term > zk.term
    })
    .await;
    eprintln!("netns: zookeeper healed: {} leads term {}", back.leader.as_ref().unwrap().node, back.term);
    let done = client.stop_election(pb::StopElectionRequest { election_id: z.election_id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "zookeeper: {done:?}");
    assert!(done.violations.is_empty(), "zookeeper: two leaders of one term: {:?}", done.violations);
    // Without leases an old leader may believe it leads until the new leader's COMMIT reaches it
    // (docs/algorithms.md, "False suspicion"): reported, allowed, and never of one term (checked above).
    eprintln!("netns: zookeeper overlaps of different terms: {:?}", done.overlaps);

    // Leases do promise no overlap: a Chubby-style leader cut off from the majority steps down before
    // the majority, bound by its promises for a lease, can elect anyone (lease 5 s, margin 0.5 s here).
    let c = client.start_election(req_for("chubby", detector)).await.unwrap().into_inner();
    let ch = leader_until(&mut client, &c.election_id, within, "chubby: host-5 agreed", |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5)
    })
    .await;
    let cut = Instant::now();
    hosts.cut(4, &[0, 1, 2, 3], true);
    let majority = leader_until(&mut client, &c.election_id, within * 2, "chubby: the majority elects", |l| {
        l.leader.as_ref().is_some_and(|r| r.id != 5) && l.term > ch.term
    })
    .await;
    eprintln!(
        "netns: chubby leader cut off: {} leads term {} after {} ms",
        majority.leader.as_ref().unwrap().node,
        majority.term,
        cut.elapsed().as_millis()
    );
    hosts.cut(4, &[0, 1, 2, 3], false);
    let rejoined =
        leader_until(&mut client, &c.election_id, within * 2, "chubby: one agreed leader after healing", |l| {
            l.agreed && l.term >= majority.term
        })
        .await;
    eprintln!("netns: chubby healed: {} leads term {}", rejoined.leader.as_ref().unwrap().node, rejoined.term);
    let done = client.stop_election(pb::StopElectionRequest { election_id: c.election_id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "chubby: {done:?}");
    assert!(done.violations.is_empty(), "chubby: two leaders of one term: {:?}", done.violations);
    assert!(done.overlaps.is_empty(), "chubby: two self-believed leaders at once: {:?}", done.overlaps);
    ctl.stop().await;
}
