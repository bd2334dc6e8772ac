//! Mutual TLS on every link: the user's client to the controller, the
//! controller to the nodes, and node to node, with certificates the test
//! makes itself.

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use ringleader_node::tls::TlsSection;
use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{assert_correct, election, free_port, test_config};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// A certificate and key signed by `ca`, valid for `names`, for servers and clients.
fn leaf(ca: &CertifiedIssuer<'_, KeyPair>, common_name: &str, names: &[&str]) -> (String, String) {
    let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, common_name);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, ca).unwrap();
    (cert.pem(), key.serialize_pem())
}

fn write(dir: &Path, name: &str, pem: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, pem).unwrap();
    path
}

/// With `[tls]` cert, key, ca and `mutual`, the controller serves TLS only and its embedded nodes are
/// https:// (controller to node and node to node over mutual TLS); a client with a certificate from the
/// cluster's CA runs a LIVE election to a correct finish, while a plain-text client and a TLS client
/// without a certificate are turned away; Kubernetes' plain-text gRPC probes get SERVING from the
/// `controller.health_listen` port, which serves nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn election_over_mutual_tls_on_every_link() {
    let dir = std::env::temp_dir().join(format!("ringleader-mtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "ringleader test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let (server_cert, server_key) = leaf(&ca, "ringleader", &["localhost", "127.0.0.1"]);
    let (user_cert, user_key) = leaf(&ca, "a user", &["user.example"]);

    let mut config = test_config(4);
    config.tls = TlsSection {
        cert: Some(write(&dir, "tls.crt", &server_cert)),
        key: Some(write(&dir, "tls.key", &server_key)),
        ca: Some(write(&dir, "ca.crt", &ca.pem())),
        mutual: true,
    };
    let health_port = free_port();
    config.controller.health_listen = format!("127.0.0.1:{health_port}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(ringleader_controller::run(config, listener, async move {
        let _ = stopped.await;
    }));

    let tls = |with_identity: bool| {
        let c = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca.pem())).domain_name("localhost");
        if with_identity { c.identity(Identity::from_pem(&user_cert, &user_key)) } else { c }
    };
    let endpoint = Endpoint::from_shared(format!("https://{addr}")).unwrap();
    let mut client = ControllerClient::new(endpoint.clone().tls_config(tls(true)).unwrap().connect_lazy());
    // The controller serves once its embedded nodes are up.
    let cluster = loop {
        match client.get_cluster(pb::GetClusterRequest {}).await {
            Ok(c) => break c.into_inner(),
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    };
    assert_eq!(cluster.nodes.len(), 4);
    for node in &cluster.nodes {
        assert!(node.address.starts_with("https://"), "nodes speak TLS: {node:?}");
    }
    assert_correct(&client.start_election(election("stages")).await.unwrap().into_inner());

    let mut anonymous = ControllerClient::new(endpoint.clone().tls_config(tls(false)).unwrap().connect_lazy());
    let refused = anonymous.get_cluster(pb::GetClusterRequest {}).await.unwrap_err();
    // Under TLS 1.3 the client finishes its side of the handshake before the server checks its
    // certificate, so the refusal reaches it as the server's CertificateRequired alert, or as the
    // connection the server closed while the client was writing (seen: Unknown "broken pipe",
    // Cancelled "connection closed"): a transport error in every case, never a status the service sent.
    let transport = std::error::Error::source(&refused).is_some_and(|e| e.is::<tonic::transport::Error>())
        || format!("{refused:?}").contains("CertificateRequired");
    assert!(transport, "no client certificate, no connection: {refused:?}");
    let mut plain = ControllerClient::new(Endpoint::from_shared(format!("http://{addr}")).unwrap().connect_lazy());
    assert!(plain.get_cluster(pb::GetClusterRequest {}).await.is_err(), "plain text is not served");

    let probe = Endpoint::from_shared(format!("http://127.0.0.1:{health_port}")).unwrap().connect().await.unwrap();
    let status = HealthClient::new(probe.clone()).check(HealthCheckRequest { service: String::new() }).await.unwrap();
    assert_eq!(status.into_inner().status, ServingStatus::Serving as i32, "the probe port answers in plain text");
    let only_health = ControllerClient::new(probe).get_cluster(pb::GetClusterRequest {}).await.unwrap_err();
    assert_eq!(
        only_health.code(),
        tonic::Code::Unimplemented,
        "the probe port serves nothing but health: {only_health:?}"
    );

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
