//! A rough, local hop-latency comparison between the runtime and raw tonic
//! streaming (the real benchmark is `tests/benches/hop.rs`). Ignored by
//! default: timings mean nothing in a debug build or on a busy machine.
//! Run: `cargo test -p ringleader-node --release --test runtime hop_timing -- --ignored --nocapture`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ringleader_node::topology::TopologyKind;
use ringleader_proto::v1::{
    self as pb, Envelope, LinkReply,
    peer_client::PeerClient,
    peer_server::{Peer, PeerServer},
};
use tokio::sync::{Mutex, mpsc};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::{TcpListenerStream, UnboundedReceiverStream};
use tonic::{Request, Response, Status, Streaming};

use crate::fixtures::*;

const N: usize = 8;

/// Forwards every envelope to the next server until its hop budget (`causal_time`) is spent.
struct Forwarder {
    next: Mutex<Option<mpsc::UnboundedSender<Envelope>>>,
    done: mpsc::UnboundedSender<()>,
}

#[tonic::async_trait]
impl Peer for Forwarder {
    type LinkStream = tokio_stream::Empty<Result<LinkReply, Status>>;

    async fn link(&self, req: Request<Streaming<Envelope>>) -> Result<Response<Self::LinkStream>, Status> {
        let mut incoming = req.into_inner();
        let next = self.next.lock().await.clone().ok_or_else(|| Status::unavailable("ring not closed"))?;
        let done = self.done.clone();
        tokio::spawn(async move {
            while let Some(Ok(mut env)) = incoming.next().await {
                env.seq += 1;
                if env.seq >= env.causal_time {
                    let _ = done.send(());
                } else {
                    let _ = next.send(env);
                }
            }
        });
        Ok(Response::new(tokio_stream::empty()))
    }
}

async fn raw_ring() -> (mpsc::UnboundedSender<Envelope>, mpsc::UnboundedReceiver<()>) {
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut addrs = Vec::new();
    let mut fwds = Vec::new();
    for _ in 0..N {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addrs.push(format!("http://{}", l.local_addr().unwrap()));
        let f = Arc::new(Forwarder { next: Mutex::new(None), done: done_tx.clone() });
        fwds.push(f.clone());
        let incoming = TcpListenerStream::new(l).map(|c| c.inspect(|s| s.set_nodelay(true).unwrap()));
        tokio::spawn(
            tonic::transport::Server::builder().add_service(PeerServer::from_arc(f)).serve_with_incoming(incoming),
        );
    }
    let mut first = None;
    for i in 0..N {
        let ch = tonic::transport::Endpoint::from_shared(addrs[(i + 1) % N].clone()).unwrap().tcp_nodelay(true);
        let mut client = PeerClient::new(ch.connect().await.unwrap());
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let _ = client.link(UnboundedReceiverStream::new(rx)).await;
            std::future::pending::<()>().await;
        });
        if i == N - 1 {
            first = Some(tx.clone());
        }
        *fwds[i].next.lock().await = Some(tx);
    }
    (first.unwrap(), done_rx)
}

/// Prints the time per hop of an AsFar election chain on the runtime next to a token on a raw tonic ring.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "timing measurement; run in release with --ignored --nocapture"]
async fn hop_timing() {
    let rounds = 300u32;
    let hops = (2 * N - 1) as u64;

    let (first, mut done) = raw_ring().await;
    let token = |budget: u64| Envelope {
        election_id: "raw-token".into(),
        sender: 0,
        port: 0,
        seq: 0,
        causal_time: budget,
        traceparent: String::new(),
        body: Some(pb::Body::from(ringleader_node::algo::Msg::Election { id: 1, stage: 0, hops: 0 })),
    };
    for _ in 0..20 {
        first.send(token(hops)).unwrap();
        done.recv().await.unwrap();
    }
    let t0 = Instant::now();
    for _ in 0..rounds {
        first.send(token(hops)).unwrap();
        done.recv().await.unwrap();
    }
    let raw = t0.elapsed() / (rounds * hops as u32);

    let mut nodes = start_nodes(N).await;
    let mut events = nodes[N - 1].agent.events(pb::EventsRequest {}).await.unwrap().into_inner();
    // Position 0 alone starts, holding the maximum: N election hops, then N - 1 notification hops to position N-1.
    let mut ids: Vec<u64> = (1..=N as u64).collect();
    ids.reverse();
    let mut elapsed = Duration::ZERO;
    for r in 0..(rounds + 20) {
        let eid = format!("hop-{r}");
        let plan = ring_plan(&eid, "as-far", TopologyKind::RingUni, &ids, &[0], pb::Rule::Max, &nodes);
        prepare_all(&mut nodes, plan).await;
        let t0 = Instant::now();
        start_all(&mut nodes, &eid, &[0]).await;
        let ev = events.message().await.unwrap().unwrap();
        if r >= 20 {
            elapsed += t0.elapsed();
        }
        assert_eq!(ev.election_id, eid);
        for n in nodes.iter_mut() {
            n.agent.abort(pb::AbortRequest { election_id: eid.clone() }).await.unwrap();
        }
    }
    let runtime = elapsed / (rounds * hops as u32);
    println!(
        "raw tonic hop: {raw:?}  runtime hop (incl. Start RPC and event): {runtime:?}  ratio {:.2}",
        runtime.as_secs_f64() / raw.as_secs_f64()
    );
}
