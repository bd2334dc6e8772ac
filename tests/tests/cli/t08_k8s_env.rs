//! The pods' settings as deployed: the real `ringleader-node` and
//! `ringleader-controller` processes started with the `RINGLEADER__*`
//! environment of `k8s/20-node.yaml` and `k8s/30-controller.yaml`, the
//! ConfigMap's `ringleader.toml`, the tokens of Secret `ringleader-auth`
//! written where the pods mount them, and TLS turned on the way
//! `k8s/README.md` says. Only what cannot hold off a cluster is changed:
//! addresses (loopback ports instead of pod DNS names and fixed ports) and the
//! mount paths (a temporary directory instead of `/etc/...`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::manifests::{config_toml, read, ringleader_env, secret_value};
use ringleader_tests::{Proc, assert_correct, controller_binary, election, free_port, node_binary, sweep_binary};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// What `k8s/README.md` tells users to set on both workloads to turn TLS on.
const TLS_ENV: [(&str, &str); 4] = [
    ("RINGLEADER__TLS__CERT", "/etc/ringleader-tls/tls.crt"),
    ("RINGLEADER__TLS__KEY", "/etc/ringleader-tls/tls.key"),
    ("RINGLEADER__TLS__CA", "/etc/ringleader-tls/ca.crt"),
    ("RINGLEADER__TLS__MUTUAL", "true"),
];

fn spawn(program: &Path, args: &[&str], env: &[(String, String)], log: &Path) -> Proc {
    let file = std::fs::File::create(log).expect("log file");
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(file.try_clone().expect("log")).stderr(file);
    for (k, v) in env {
        command.env(k, v);
    }
    Proc(command.spawn().expect("spawn"))
}

/// Wait until `grpc.health.v1` answers SERVING in plain text on `port`.
async fn wait_serving(port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(channel) = Endpoint::from_shared(format!("http://127.0.0.1:{port}")).unwrap().connect().await
            && let Ok(r) = HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await
            && r.into_inner().status == ServingStatus::Serving as i32
        {
            return;
        }
        let logged = std::fs::read_to_string(log).unwrap_or_default();
        assert!(
            Instant::now() < deadline,
            "{what}'s plain-text health port never answered SERVING; its log:\n{logged}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The node and controller pods' own settings run as they would in the cluster once TLS is turned on as
/// the k8s README says: probes get SERVING in plain text on the health ports while the gRPC ports take
/// mutual TLS only; a bare advertised address becomes https://; the controller's mutating calls need the
/// token of Secret ringleader-auth; and a LIVE election runs across three node processes with the agent
/// and peer tokens and certificates on every link. ringleader-sweep reaches that controller with its CA,
/// a client certificate and the token (file, flag or environment), and is refused without the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_settings_from_the_manifests_run_with_tls_and_tokens() {
    let readme = read("k8s/README.md");
    for (k, v) in TLS_ENV {
        assert!(readme.contains(&format!("{k}={v}")), "k8s/README.md turns TLS on with {k}={v}");
    }
    let dir = std::env::temp_dir().join(format!("ringleader-k8s-env-{}", std::process::id()));
    let (auth_dir, tls_dir) = (dir.join("auth"), dir.join("tls"));
    std::fs::create_dir_all(&auth_dir).unwrap();
    std::fs::create_dir_all(&tls_dir).unwrap();

    // Secret ringleader-auth, as the pods mount it.
    let secret = read("k8s/12-auth.yaml");
    for key in ["token", "agent-token", "peer-token"] {
        std::fs::write(auth_dir.join(key), secret_value(&secret, key)).unwrap();
    }
    let token = secret_value(&secret, "token");
    // Secret ringleader-tls, as a user would create it: one certificate for every pod and the Service.
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "ringleader CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let mut leaf = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &ca).unwrap();
    std::fs::write(tls_dir.join("tls.crt"), cert.pem()).unwrap();
    std::fs::write(tls_dir.join("tls.key"), key.serialize_pem()).unwrap();
    std::fs::write(tls_dir.join("ca.crt"), ca.pem()).unwrap();

    let config = dir.join("ringleader.toml");
    std::fs::write(&config, config_toml(&read("k8s/10-config.yaml"))).unwrap();
    let config_arg = config.to_str().unwrap().to_string();
    // Mount paths to the temporary directory; TLS on; no telemetry export (no collector here).
    let localize = |env: Vec<(String, String)>| -> Vec<(String, String)> {
        env.into_iter()
            .chain(TLS_ENV.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .map(|(k, v)| {
                let v = v
                    .replace("/etc/ringleader-auth", auth_dir.to_str().unwrap())
                    .replace("/etc/ringleader-tls", tls_dir.to_str().unwrap());
                (k, v)
            })
            .chain([
                ("RINGLEADER__TELEMETRY__OTLP_ENDPOINT".to_string(), String::new()),
                ("RINGLEADER__TELEMETRY__METRICS_LISTEN".to_string(), String::new()),
            ])
            .collect()
    };

    let node_env = ringleader_env(&read("k8s/20-node.yaml"));
    let names: Vec<&str> = node_env.iter().map(|(k, _)| k.as_str()).collect();
    for wanted in
        ["RINGLEADER__NODE__HEALTH_LISTEN", "RINGLEADER__AUTH__AGENT_TOKEN_FILE", "RINGLEADER__AUTH__PEER_TOKEN_FILE"]
    {
        assert!(names.contains(&wanted), "20-node.yaml sets {wanted}: {names:?}");
    }
    let mut nodes = Vec::new();
    let mut node_urls = Vec::new();
    for i in 0..3 {
        let (port, health) = (free_port(), free_port());
        let env: Vec<(String, String)> = localize(node_env.clone())
            .into_iter()
            .map(|(k, v)| match k.as_str() {
                "RINGLEADER__NODE__NAME" => (k, format!("node-{i}")),
                "RINGLEADER__NODE__LISTEN" => (k, format!("127.0.0.1:{port}")),
                // Bare host:port, as in the manifest (whose value is the pod's DNS name).
                "RINGLEADER__NODE__ADVERTISE" => {
                    assert!(!v.contains("://"), "the manifest advertises a bare host:port: {v}");
                    (k, format!("127.0.0.1:{port}"))
                }
                "RINGLEADER__NODE__HEALTH_LISTEN" => (k, format!("127.0.0.1:{health}")),
                _ => (k, v),
            })
            .collect();
        let log = dir.join(format!("node-{i}.log"));
        nodes.push(spawn(&node_binary(), &["--config", &config_arg], &env, &log));
        wait_serving(health, &format!("node-{i}"), &log).await;
        node_urls.push(format!("https://127.0.0.1:{port}"));
    }

    let controller_env = ringleader_env(&read("k8s/30-controller.yaml"));
    let names: Vec<&str> = controller_env.iter().map(|(k, _)| k.as_str()).collect();
    for wanted in ["RINGLEADER__AUTH__TOKEN_FILE", "RINGLEADER__AUTH__AGENT_TOKEN_FILE"] {
        assert!(names.contains(&wanted), "30-controller.yaml sets {wanted}: {names:?}");
    }
    let (port, health) = (free_port(), free_port());
    let mut env = localize(controller_env);
    env.extend(
        [
            ("RINGLEADER__CONTROLLER__HOST", "127.0.0.1".to_string()),
            ("RINGLEADER__CONTROLLER__PORT", port.to_string()),
            ("RINGLEADER__CONTROLLER__HEALTH_LISTEN", format!("127.0.0.1:{health}")),
            ("RINGLEADER__CONTROLLER__HISTORY_PATH", dir.join("history.redb").to_str().unwrap().to_string()),
            // The nodes by address instead of behind the headless Service's DNS name.
            ("RINGLEADER__CONTROLLER__DISCOVER", String::new()),
            ("RINGLEADER__CONTROLLER__DISCOVER_NODES", "0".to_string()),
            ("RINGLEADER__CONTROLLER__NODES", node_urls.join(",")),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    let log = dir.join("controller.log");
    let _controller = spawn(&controller_binary(), &["--config", &config_arg], &env, &log);
    wait_serving(health, "the controller", &log).await;

    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca.pem()))
        .identity(Identity::from_pem(cert.pem(), key.serialize_pem()))
        .domain_name("localhost");
    let channel: Channel = Endpoint::from_shared(format!("https://127.0.0.1:{port}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = ControllerClient::new(channel);
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    assert_eq!(cluster.nodes.len(), 3, "{cluster:?}");
    assert!(cluster.nodes.iter().all(|n| n.address.starts_with("https://") && n.reachable), "{cluster:?}");

    let refused = client.start_election(election("stages")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    let mut request = tonic::Request::new(election("stages"));
    request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    let e = client.start_election(request).await.unwrap().into_inner();
    assert_eq!(e.n, 3);
    assert_correct(&e);

    let plain = Endpoint::from_shared(format!("http://127.0.0.1:{port}")).unwrap().connect_lazy();
    assert!(
        ControllerClient::new(plain).get_cluster(pb::GetClusterRequest {}).await.is_err(),
        "the API port takes TLS only"
    );

    // ringleader-sweep against the deployed controller: TLS with a client certificate, and the token from
    // the Secret's file, from the flag or from the controller's own variable; without one it is refused,
    // and says how to give it.
    let sweep = |token: &[&str], env_token: Option<&str>| {
        let mut cmd = Command::new(sweep_binary());
        cmd.args(["--controller", &format!("https://127.0.0.1:{port}"), "--tls-domain", "localhost"])
            .args(["--ca", tls_dir.join("ca.crt").to_str().unwrap()])
            .args(["--cert", tls_dir.join("tls.crt").to_str().unwrap()])
            .args(["--key", tls_dir.join("tls.key").to_str().unwrap()])
            .args(["--algorithms", "as-far", "--sizes", "8"])
            .args(token)
            .env_remove("RINGLEADER__AUTH__TOKEN")
            .env_remove("RINGLEADER__AUTH__TOKEN_FILE");
        if let Some(t) = env_token {
            cmd.env("RINGLEADER__AUTH__TOKEN", t);
        }
        cmd.output().expect("run ringleader-sweep")
    };
    let token_file = auth_dir.join("token");
    for (how, out) in [
        ("--token-file", sweep(&["--token-file", token_file.to_str().unwrap()], None)),
        ("--token", sweep(&["--token", &token], None)),
        ("RINGLEADER__AUTH__TOKEN", sweep(&[], Some(&token))),
    ] {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{how}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.lines().nth(1).is_some_and(|l| l.starts_with("as-far,8,")), "{how}: {stdout}");
    }
    let refused = sweep(&[], None);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("--token"), "{stderr}");
    drop(nodes);
    std::fs::remove_dir_all(&dir).unwrap();
}
