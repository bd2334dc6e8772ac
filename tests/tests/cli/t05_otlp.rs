//! Telemetry end to end: four `ringleader-node` processes and the
//! `ringleader-controller` binary export over OTLP/gRPC to a test receiver.

use std::collections::{HashMap, HashSet};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc, assert_correct, controller_binary, free_port, node_binary};
use tonic::{Request, Response, Status};

/// One span as received, with the service that sent it.
#[derive(Clone, Debug)]
struct Received {
    service: String,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    name: String,
    attrs: HashMap<String, String>,
}

/// A minimal OTLP collector: keeps every span and every metric name.
#[derive(Clone, Default)]
struct Receiver {
    spans: Arc<Mutex<Vec<Received>>>,
    metrics: Arc<Mutex<HashSet<(String, String)>>>,
}

fn text(kv: &[KeyValue]) -> HashMap<String, String> {
    kv.iter()
        .filter_map(|kv| {
            let v = match kv.value.as_ref()?.value.as_ref()? {
                any_value::Value::StringValue(s) => s.clone(),
                any_value::Value::IntValue(i) => i.to_string(),
                any_value::Value::BoolValue(b) => b.to_string(),
                any_value::Value::DoubleValue(d) => d.to_string(),
                other => format!("{other:?}"),
            };
            Some((kv.key.clone(), v))
        })
        .collect()
}

/// The `service.name` of an exported resource (empty if it has none).
fn service_name(resource: Option<Resource>) -> String {
    text(&resource.map(|r| r.attributes).unwrap_or_default()).remove("service.name").unwrap_or_default()
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        let mut spans = self.spans.lock().unwrap();
        for rs in request.into_inner().resource_spans {
            let service = service_name(rs.resource);
            for s in rs.scope_spans.into_iter().flat_map(|s| s.spans) {
                spans.push(Received {
                    service: service.clone(),
                    trace_id: s.trace_id,
                    span_id: s.span_id,
                    parent: s.parent_span_id,
                    name: s.name,
                    attrs: text(&s.attributes),
                });
            }
        }
        Ok(Response::new(ExportTraceServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl MetricsService for Receiver {
    async fn export(
        &self,
        request: Request<ExportMetricsServiceRequest>,
    ) -> Result<Response<ExportMetricsServiceResponse>, Status> {
        let mut metrics = self.metrics.lock().unwrap();
        for rm in request.into_inner().resource_metrics {
            let service = service_name(rm.resource);
            for m in rm.scope_metrics.into_iter().flat_map(|s| s.metrics) {
                metrics.insert((service.clone(), m.name));
            }
        }
        Ok(Response::new(ExportMetricsServiceResponse::default()))
    }
}

fn spawn(program: std::path::PathBuf, args: &[String], env: &[(&str, String)], log: &str) -> Proc {
    let path = std::env::temp_dir().join(format!("ringleader-otlp-{}-{log}.log", std::process::id()));
    let file = std::fs::File::create(&path).expect("log file");
    let mut cmd = Command::new(program);
    cmd.args(args).env("RUST_LOG", "info").stdin(Stdio::null()).stdout(file.try_clone().expect("log")).stderr(file);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Proc(cmd.spawn().expect("spawn"))
}

/// A LIVE election across four node processes gives ONE trace: the controller's root span, and a span per
/// message handled on every node whose parent is the span (on the sending node) that sent the message,
/// with election id, algorithm, node, kind, stage and causal time; the documented metrics arrive over OTLP
/// from the controller and from the nodes, under the service names of `OTEL_SERVICE_NAME`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_per_election_with_parents_across_node_processes() {
    let receiver = Receiver::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(receiver.clone()))
            .add_service(MetricsServiceServer::new(receiver.clone()))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let telemetry = |service: &str| {
        vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone()),
            ("OTEL_SERVICE_NAME", service.to_string()),
            ("RINGLEADER__TELEMETRY__EXPORT_INTERVAL_MS", "300".to_string()),
        ]
    };
    let ports: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let _nodes: Vec<Proc> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let args = ["--listen".to_string(), format!("127.0.0.1:{p}"), "--name".to_string(), format!("p{i}")];
            spawn(node_binary(), &args, &telemetry("ringleader-node"), &format!("p{i}"))
        })
        .collect();
    let port = free_port();
    let nodes = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
    let args = ["--port".to_string(), port.to_string(), "--host".into(), "127.0.0.1".into(), "--nodes".into(), nodes];
    let _controller = spawn(controller_binary(), &args, &telemetry("ringleader-controller"), "controller");

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut client = loop {
        if let Ok(c) = ControllerClient::connect(format!("http://127.0.0.1:{port}")).await {
            let cluster = c.clone().get_cluster(pb::GetClusterRequest {}).await.map(|r| r.into_inner());
            if cluster.is_ok_and(|c| c.nodes.iter().filter(|n| n.reachable).count() == 4) {
                break c;
            }
        }
        assert!(Instant::now() < deadline, "controller and nodes not up within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Stages has stages; every position starts (4 initiators).
    let request = pb::StartElectionRequest { algorithm: "stages".into(), wait: true, ..Default::default() };
    let election = client.start_election(request).await.unwrap().into_inner();
    assert_correct(&election);
    let messages = election.metrics.as_ref().unwrap().messages;

    // Wait for the root and one span per message received plus one per start.
    let expected = messages as usize + 4 + 1;
    let deadline = Instant::now() + Duration::from_secs(30);
    let spans = loop {
        let spans: Vec<Received> = receiver
            .spans
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.attrs.get("ringleader.election.id") == Some(&election.election_id))
            .cloned()
            .collect();
        if spans.len() >= expected || Instant::now() > deadline {
            break spans;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(spans.len(), expected, "root + {messages} receives + 4 starts: {spans:#?}");
    let traces: HashSet<&Vec<u8>> = spans.iter().map(|s| &s.trace_id).collect();
    assert_eq!(traces.len(), 1, "one trace per election");
    let by_id: HashMap<&Vec<u8>, &Received> = spans.iter().map(|s| (&s.span_id, s)).collect();
    let roots: Vec<&Received> = spans.iter().filter(|s| s.parent.is_empty()).collect();
    assert_eq!(roots.len(), 1, "one root: {roots:#?}");
    assert_eq!((roots[0].name.as_str(), roots[0].service.as_str()), ("election stages", "ringleader-controller"));
    assert_eq!(roots[0].attrs.get("ringleader.state").map(String::as_str), Some("finished"));
    let mut nodes_seen = HashSet::new();
    for s in spans.iter().filter(|s| !s.parent.is_empty()) {
        assert_eq!(s.service, "ringleader-node", "{s:?}");
        let parent = by_id.get(&s.parent).unwrap_or_else(|| panic!("parent of {s:?} is in the trace"));
        for key in ["ringleader.algorithm", "ringleader.node", "ringleader.position", "ringleader.causal_time"] {
            assert!(s.attrs.contains_key(key), "{key} on {s:?}");
        }
        nodes_seen.insert(s.attrs["ringleader.node"].clone());
        if s.name == "start" {
            assert!(parent.parent.is_empty(), "a start hangs off the root: {s:?}");
        } else {
            assert!(s.name.starts_with("receive "), "{s:?}");
            assert_eq!(s.attrs["ringleader.message.kind"], s.name["receive ".len()..]);
            // The parent is the step, on the sending node, that sent this message, one causal step earlier or more.
            assert_eq!(parent.attrs.get("ringleader.position"), s.attrs.get("ringleader.message.sender"), "{s:?}");
            let (t, pt): (u64, u64) = (
                s.attrs["ringleader.causal_time"].parse().unwrap(),
                parent.attrs["ringleader.causal_time"].parse().unwrap(),
            );
            assert!(t > pt, "causal time grows along the chain: {parent:?} -> {s:?}");
            if s.attrs["ringleader.message.kind"] == "election" {
                assert!(s.attrs.contains_key("ringleader.stage"), "{s:?}");
            }
        }
    }
    assert_eq!(nodes_seen, (0..4).map(|i| format!("p{i}")).collect::<HashSet<_>>(), "spans on every node");

    // Metrics over OTLP, from both kinds of process.
    let wanted = [
        ("ringleader-controller", "ringleader.elections.started"),
        ("ringleader-controller", "ringleader.elections.finished"),
        ("ringleader-controller", "ringleader.election.duration"),
        ("ringleader-controller", "ringleader.election.messages"),
        ("ringleader-controller", "ringleader.election.measured_to_bound"),
        ("ringleader-controller", "ringleader.faults.active"),
        ("ringleader-node", "ringleader.messages.sent"),
        ("ringleader-node", "ringleader.messages.received"),
        ("ringleader-node", "ringleader.messages.sent.size"),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = receiver.metrics.lock().unwrap().clone();
        let missing: Vec<_> = wanted.iter().filter(|(s, m)| !got.contains(&(s.to_string(), m.to_string()))).collect();
        if missing.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "metrics missing over OTLP: {missing:?}; got {got:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.abort();
}
