//! Benchmark: election hops through the node runtime next to raw tonic
//! streaming on the same loopback, and the simulator's deliveries per second.
//!
//! Run: `cargo bench -p ringleader-tests --bench hop` (add `-- --quick` for a
//! short run). Everything is measured in this one run and printed as ratios;
//! nothing is asserted (timing thresholds are flaky on shared machines).
//!
//! * Hop latency. Raw: a token crosses a ring of N tonic servers, each
//!   forwarding the `Envelope` it receives on its persistent `Peer.Link`
//!   stream to the next server's stream (no election logic). Runtime: an
//!   AsFar election on N `ringleader-node` servers with one initiator holding
//!   the maximum id, a purely sequential chain of 2N-1 hops (N election + N-1
//!   notification messages until the last node decides), started by the
//!   `Start` RPC and ended by the last `Events` decision. Both are measured
//!   on a long chain (32 nodes) and a short one (8 nodes), and a hop costs
//!   the difference divided by the extra hops, which cancels fixed costs
//!   (injecting the token; the `Start` call and the event). The election
//!   phase (n hops, to the leader's decision) and the whole election (2n-1
//!   hops, to the last decision) are reported apart.
//! * Throughput: C tokens of N² hops circulating at once on the raw ring
//!   versus C concurrent All the Way elections (N² messages each, one
//!   initiator each) on the nodes.
//! * Simulator: deliveries per second of AsFar on 100,000 nodes and All the
//!   Way on 2,048 nodes, single-threaded.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ringleader_core::algo::catalogue;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{IdOrder, Topology, TopologyKind};
use ringleader_node::runtime::{self, NodeConfig};
use ringleader_proto::v1::{
    self as pb, Envelope, LinkReply, agent_client::AgentClient, peer_client::PeerClient, peer_server::Peer,
    peer_server::PeerServer,
};
use tokio::sync::{Mutex, mpsc};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::{TcpListenerStream, UnboundedReceiverStream};
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

// ---------------------------------------------------------------- raw tonic

/// A raw forwarder: every envelope received is sent on to the next server
/// with `seq + 1`, until `seq` reaches the envelope's `causal_time` (the
/// token's hop budget), when the token is reported done. Its `Link` has the
/// same shape as the runtime's: the reply stream stays open (and silent).
struct Forwarder {
    next: Mutex<Option<mpsc::UnboundedSender<Envelope>>>,
    done: mpsc::UnboundedSender<u64>,
}

#[tonic::async_trait]
impl Peer for Forwarder {
    type LinkStream = tokio_stream::Pending<Result<LinkReply, Status>>;

    async fn link(&self, req: Request<Streaming<Envelope>>) -> Result<Response<Self::LinkStream>, Status> {
        let mut incoming = req.into_inner();
        let next = self.next.lock().await.clone().ok_or_else(|| Status::unavailable("ring not closed yet"))?;
        let done = self.done.clone();
        tokio::spawn(async move {
            while let Some(Ok(mut env)) = incoming.next().await {
                if env.seq >= env.causal_time {
                    let _ = done.send(env.sender as u64);
                } else {
                    env.seq += 1;
                    let _ = next.send(env);
                }
            }
        });
        Ok(Response::new(tokio_stream::pending()))
    }
}

struct RawRing {
    first: mpsc::UnboundedSender<Envelope>,
    done: mpsc::UnboundedReceiver<u64>,
}

async fn raw_ring(n: usize) -> RawRing {
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut addrs = Vec::new();
    let mut forwarders = Vec::new();
    for _ in 0..n {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addrs.push(format!("http://{}", l.local_addr().unwrap()));
        let f = Arc::new(Forwarder { next: Mutex::new(None), done: done_tx.clone() });
        forwarders.push(f.clone());
        let incoming = TcpListenerStream::new(l).map(|c| {
            c.inspect(|s| {
                let _ = s.set_nodelay(true);
            })
        });
        tokio::spawn(
            tonic::transport::Server::builder()
                .tcp_nodelay(true)
                .add_service(PeerServer::from_arc(f))
                .serve_with_incoming(incoming),
        );
    }
    // Server i forwards to server i+1 (channel i+1 is the request stream to
    // server i+1); the bench feeds server 0 through channel 0.
    let mut txs = Vec::new();
    let mut rxs = Vec::new();
    for _ in 0..n {
        let (tx, rx) = mpsc::unbounded_channel();
        txs.push(tx);
        rxs.push(rx);
    }
    for i in 0..n {
        *forwarders[i].next.lock().await = Some(txs[(i + 1) % n].clone());
    }
    for (addr, rx) in addrs.iter().zip(rxs) {
        let ch = Channel::from_shared(addr.clone()).unwrap().tcp_nodelay(true).connect().await.unwrap();
        let mut client = PeerClient::new(ch);
        tokio::spawn(async move {
            if let Ok(r) = client.link(UnboundedReceiverStream::new(rx)).await {
                let mut r = r.into_inner();
                while r.next().await.is_some() {}
            }
        });
    }
    let first = txs.swap_remove(0);
    RawRing { first, done: done_rx }
}

fn token(id: u32, hops: u64) -> Envelope {
    Envelope {
        election_id: "bench".into(),
        sender: id,
        port: 0,
        seq: 1,
        causal_time: hops,
        traceparent: String::new(),
        body: Some(pb::Body::from(ringleader_core::algo::Msg::Election { id: 7, stage: 0, hops: 0 })),
        message_seq: 0,
    }
}

/// Mean time of one token crossing `hops` hops, over `rounds` rounds.
async fn raw_chain(ring: &mut RawRing, hops: u32, rounds: u32) -> Duration {
    let start = Instant::now();
    for _ in 0..rounds {
        ring.first.send(token(0, hops as u64)).unwrap();
        ring.done.recv().await.unwrap();
    }
    start.elapsed() / rounds
}

/// Hops per second with `tokens` tokens circulating at once, each for `hops` hops.
async fn raw_throughput(ring: &mut RawRing, tokens: u32, hops: u64) -> f64 {
    let start = Instant::now();
    for t in 0..tokens {
        ring.first.send(token(t, hops)).unwrap();
    }
    for _ in 0..tokens {
        ring.done.recv().await.unwrap();
    }
    (tokens as u64 * hops) as f64 / start.elapsed().as_secs_f64()
}

// ---------------------------------------------------------------- runtime

struct Nodes {
    addrs: Vec<String>,
    agents: Vec<AgentClient<Channel>>,
    events: mpsc::UnboundedReceiver<pb::NodeEvent>,
}

async fn start_nodes(n: usize) -> Nodes {
    let mut addrs = Vec::new();
    for i in 0..n {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let advertise = format!("http://{}", l.local_addr().unwrap());
        addrs.push(advertise.clone());
        tokio::spawn(runtime::serve(
            l,
            NodeConfig { name: format!("node-{i}"), advertise, ..NodeConfig::default() },
            std::future::pending(),
        ));
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let mut agents = Vec::new();
    for a in &addrs {
        let ch = Channel::from_shared(a.clone()).unwrap().tcp_nodelay(true).connect().await.unwrap();
        let mut agent = AgentClient::new(ch);
        let mut ev = agent.events(pb::EventsRequest::default()).await.unwrap().into_inner();
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(Ok(e)) = ev.next().await {
                let _ = tx.send(e);
            }
        });
        agents.push(agent);
    }
    Nodes { addrs, agents, events: rx }
}

static ELECTION: AtomicU64 = AtomicU64::new(0);

/// Prepare an election of `algorithm` on a unidirectional ring over all nodes.
async fn prepare(nodes: &mut Nodes, algorithm: &str, ids: &[u64], initiators: &[u32]) -> String {
    let n = nodes.addrs.len() as u32;
    let eid = format!("bench-{}", ELECTION.fetch_add(1, Ordering::Relaxed));
    let topo = Topology::ring(TopologyKind::RingUni, n, 0).unwrap();
    let mut calls = Vec::new();
    for p in 0..n {
        let ports = topo
            .ports(p)
            .iter()
            .map(|l| pb::PortPeer {
                position: l.peer,
                address: if l.outgoing { nodes.addrs[l.peer as usize].clone() } else { String::new() },
                remote_port: l.remote_port,
                id: ids[l.peer as usize],
                ..Default::default()
            })
            .collect();
        let req = pb::PrepareRequest {
            election_id: eid.clone(),
            algorithm: algorithm.into(),
            rule: pb::Rule::Max as i32,
            position: p,
            size: n,
            id: ids[p as usize],
            ports,
            initiator: initiators.contains(&p),
            coin: 0,
            keep_leader: false,
            detector: None,
            traceparent: String::new(),
            log_messages: false,
            start: false,
            options: Default::default(),
            etcd_endpoint: String::new(),
            controller_incarnation: 0,
        };
        let mut agent = nodes.agents[p as usize].clone();
        calls.push(tokio::spawn(async move { agent.prepare(req).await.unwrap() }));
    }
    for c in calls {
        c.await.unwrap();
    }
    eid
}

async fn start(nodes: &mut Nodes, eid: &str, initiators: &[u32]) {
    for &p in initiators {
        nodes.agents[p as usize].start(pb::StartRequest { election_id: eid.into() }).await.unwrap();
    }
}

async fn wait_decisions(nodes: &mut Nodes, count: usize) {
    for _ in 0..count {
        tokio::time::timeout(Duration::from_secs(30), nodes.events.recv()).await.expect("decision").unwrap();
    }
}

async fn abort(nodes: &mut Nodes, eid: &str) {
    for a in nodes.agents.iter_mut() {
        a.abort(pb::AbortRequest { election_id: eid.into(), ..Default::default() }).await.unwrap();
    }
}

/// Mean wall times of one AsFar election with the maximum as the only
/// initiator: (until the leader decides: n election hops, no other decision
/// on the way; until the last node decides: 2n-1 hops, n-1 of them also
/// emitting a decision event). Both include the `Start` call and one event.
async fn runtime_chain(nodes: &mut Nodes, rounds: u32) -> (Duration, Duration) {
    let n = nodes.addrs.len() as u32;
    let ids: Vec<u64> = (1..=n as u64).rev().collect(); // position 0 holds the maximum
    // Prepare every round's election first, so no set-up traffic overlaps the chains.
    let mut eids = Vec::new();
    for _ in 0..rounds {
        eids.push(prepare(nodes, "as-far", &ids, &[0]).await);
    }
    let (mut to_leader, mut to_all) = (Duration::ZERO, Duration::ZERO);
    for eid in &eids {
        let t = Instant::now();
        start(nodes, eid, &[0]).await;
        wait_decisions(nodes, 1).await;
        to_leader += t.elapsed();
        wait_decisions(nodes, n as usize - 1).await;
        to_all += t.elapsed();
    }
    for eid in &eids {
        abort(nodes, eid).await;
    }
    (to_leader / rounds, to_all / rounds)
}

/// Election messages per second with `elections` All the Way elections at
/// once, each started at one node (All the Way wakes the others and still
/// sends n² messages), so one `Start` call per n² messages.
async fn runtime_throughput(nodes: &mut Nodes, elections: u32) -> f64 {
    let n = nodes.addrs.len() as u32;
    let ids: Vec<u64> = (1..=n as u64).collect();
    let mut eids = Vec::new();
    for e in 0..elections {
        let first = e % n;
        eids.push((prepare(nodes, "all-the-way", &ids, &[first]).await, first));
    }
    let t = Instant::now();
    let mut calls = Vec::new();
    for (eid, first) in &eids {
        let mut agent = nodes.agents[*first as usize].clone();
        let req = pb::StartRequest { election_id: eid.clone() };
        calls.push(tokio::spawn(async move { agent.start(req).await.unwrap() }));
    }
    for c in calls {
        c.await.unwrap();
    }
    wait_decisions(nodes, (n * elections) as usize).await;
    let secs = t.elapsed().as_secs_f64();
    for (eid, _) in &eids {
        abort(nodes, eid).await;
    }
    (elections as u64 * n as u64 * n as u64) as f64 / secs
}

// ---------------------------------------------------------------- simulator

fn sim_rate(name: &str, n: u32, unit_delay: bool) -> (u64, f64) {
    let spec = catalogue::find(name).unwrap();
    let kind = spec.default_topology();
    let ring = Topology::build(kind, n, 1).unwrap();
    let ids = IdOrder::Random(1).arrange(n).unwrap();
    let all: Vec<u32> = (0..n).collect();
    let cfg = SimConfig { seed: 1, unit_delay, ..SimConfig::default() };
    let t = Instant::now();
    let r = sim::run(spec, &ring, &ids, &all, spec.rule, &cfg);
    let secs = t.elapsed().as_secs_f64();
    assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
    (r.deliveries, r.deliveries as f64 / secs)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (reps, rounds, tokens) = if quick { (3, 10, 16) } else { (15, 20, 64) };
    // Chains on `n` and on `short` nodes; their difference is the measured part.
    let (n, short) = (32usize, 8usize);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!("# Ringleader hop benchmark ({reps} batches x {rounds} rounds, multi-threaded tokio, loopback)");
    rt.block_on(async {
        let mut raw = raw_ring(n).await;
        let mut nodes = start_nodes(n).await;
        let mut few = start_nodes(short).await;
        // Warm up connections and allocators.
        raw_chain(&mut raw, 2 * n as u32, 5).await;
        let _ = runtime_chain(&mut nodes, 3).await;
        let _ = runtime_chain(&mut few, 3).await;

        // Every figure is the difference of a long and a short chain, which
        // cancels fixed costs: injecting the token for raw tonic; the Start
        // call and the decision event for the runtime. Raw and runtime chains
        // alternate in `reps` batches so that drift on a shared machine hits
        // both alike; medians over the batches are reported.
        let (nl, ns) = (n as u32, short as u32);
        let per_hop = |long: Duration, short: Duration, hops: u32| {
            long.saturating_sub(short).as_secs_f64() / hops as f64
        };
        let (mut raw_e, mut rt_e, mut raw_w, mut rt_w) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            let raw_el = raw_chain(&mut raw, nl, rounds).await;
            let raw_es = raw_chain(&mut raw, ns, rounds).await;
            let raw_wl = raw_chain(&mut raw, 2 * nl - 1, rounds).await;
            let raw_ws = raw_chain(&mut raw, 2 * ns - 1, rounds).await;
            let (rt_el, rt_wl) = runtime_chain(&mut nodes, rounds).await;
            let (rt_es, rt_ws) = runtime_chain(&mut few, rounds).await;
            raw_e.push(per_hop(raw_el, raw_es, nl - ns));
            rt_e.push(per_hop(rt_el, rt_es, nl - ns));
            raw_w.push(per_hop(raw_wl, raw_ws, 2 * (nl - ns)));
            rt_w.push(per_hop(rt_wl, rt_ws, 2 * (nl - ns)));
        }
        let show = |label: String, raw: &mut Vec<f64>, rt: &mut Vec<f64>| {
            let (raw_m, rt_m) = (median(raw), median(rt));
            println!("{label}");
            println!("  hop latency   raw tonic stream: {:>8.1} µs (median of {reps} batches)", raw_m * 1e6);
            println!("  hop latency   election runtime: {:>8.1} µs", rt_m * 1e6);
            println!("  ratio runtime/raw:              {:>8.2}x", rt_m / raw_m);
        };
        show(format!("election phase (n hops to the leader's decision; chains on {nl} and {ns} nodes):"), &mut raw_e, &mut rt_e);
        show(
            format!("whole election (2n-1 hops to the last decision, n-1 of them also emit a decision event; {nl} and {ns} nodes):"),
            &mut raw_w,
            &mut rt_w,
        );

        let raw_tp = raw_throughput(&mut raw, tokens, (n * n) as u64).await;
        let rt_tp = runtime_throughput(&mut nodes, tokens).await;
        println!("throughput    raw tonic stream: {:>10.0} msg/s ({tokens} tokens x {} hops)", raw_tp, n * n);
        println!(
            "throughput    election runtime: {:>10.0} msg/s ({tokens} all-the-way elections x {} msgs)",
            rt_tp,
            n * n
        );
        println!("ratio raw/runtime (throughput): {:>8.2}x", raw_tp / rt_tp);
    });
    drop(rt);
    for (name, n, unit) in [("as-far", 100_000, true), ("as-far", 100_000, false), ("all-the-way", 2048, true)] {
        let mut rates = Vec::new();
        let mut d = 0;
        for _ in 0..if quick { 1 } else { 5 } {
            let (deliveries, rate) = sim_rate(name, n, unit);
            d = deliveries;
            rates.push(rate);
        }
        let delays = if unit { "unit delays" } else { "random delays, FIFO" };
        let best = rates.iter().cloned().fold(0.0, f64::max);
        println!(
            "simulator     {name} n={n} ({delays}): {d} deliveries, {:.1} M deliveries/s (median of {}; best {:.1})",
            median(&mut rates) / 1e6,
            rates.len(),
            best / 1e6
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
