//! `ringleader-sweep`: run chosen algorithms over a range of ring sizes and id
//! orders (through the `CompareAlgorithms` RPC) and write the table as CSV and
//! a plot of messages versus n, next to each algorithm's bound, as SVG.
//!
//! Without `--controller` it starts a controller in-process (with
//! `--local-nodes N` node servers on loopback for LIVE sweeps). A deployed
//! controller that requires a token gets it from `--token`, `--token-file`
//! or the controller's own variables (`RINGLEADER__AUTH__TOKEN`,
//! `RINGLEADER__AUTH__TOKEN_FILE`); one that serves TLS (an `https://` URL)
//! is verified with `--ca`, and mutual TLS adds `--cert` and `--key`.
//!
//! ```text
//! ringleader-sweep --algorithms as-far,stages,controlled-distance --max-size 4096 \
//!     --orders random,worst-case --repetitions 3 --csv sweep.csv --svg sweep.svg
//! ```

use std::process::ExitCode;

use clap::Parser;
use ringleader_proto::v1::{self as pb, controller_client::ControllerClient};
use tokio::sync::oneshot;
use tokio_stream::StreamExt;

/// Run algorithms over sizes and id orders; write CSV and an SVG plot.
#[derive(Debug, Parser)]
#[command(name = "ringleader-sweep", version)]
struct Args {
    /// A running controller, e.g. http://localhost:50051 (default: start one in-process).
    #[arg(long)]
    controller: Option<String>,
    /// Node servers of the in-process controller (for `--mode live`).
    #[arg(long, default_value_t = 0)]
    local_nodes: u32,
    /// Catalogue names, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    algorithms: Vec<String>,
    /// Sizes, comma-separated (default: powers of two from --min-size to --max-size).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<u32>,
    /// Smallest size of the default series.
    #[arg(long, default_value_t = 8)]
    min_size: u32,
    /// Largest size of the default series.
    #[arg(long, default_value_t = 1024)]
    max_size: u32,
    /// Id orders: random, ascending, descending, worst-case, best-case (the
    /// last two for the algorithms that have such an arrangement: a note
    /// names the others; an order none of them has is refused).
    #[arg(long, value_delimiter = ',', default_value = "random")]
    orders: Vec<String>,
    /// Seeds per point for random ids.
    #[arg(long, default_value_t = 1)]
    repetitions: u32,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// simulated or live.
    #[arg(long, default_value = "simulated")]
    mode: String,
    /// Initiators per election (0 = all).
    #[arg(long, default_value_t = 0)]
    initiators: u32,
    /// Write the table here (default: standard output).
    #[arg(long)]
    csv: Option<std::path::PathBuf>,
    /// Write the plot here.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// Replace the files given to --csv and --svg if they exist (by default
    /// an existing file is refused before the sweep starts, so that a sweep
    /// never rewrites a tracked file by accident).
    #[arg(long)]
    force: bool,
    /// Bearer token of a controller that requires one (its `auth.token`).
    #[arg(long, env = "RINGLEADER__AUTH__TOKEN", hide_env_values = true, requires = "controller")]
    token: Option<String>,
    /// Read the token from this file (as the controller reads `auth.token_file`).
    #[arg(long, env = "RINGLEADER__AUTH__TOKEN_FILE", conflicts_with = "token", requires = "controller")]
    token_file: Option<std::path::PathBuf>,
    /// CA certificate (PEM) that signed the controller's certificate (with an https:// --controller).
    #[arg(long, requires = "controller")]
    ca: Option<std::path::PathBuf>,
    /// Client certificate (PEM), for a controller that requires mutual TLS.
    #[arg(long, requires = "key", requires = "ca")]
    cert: Option<std::path::PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, requires = "cert")]
    key: Option<std::path::PathBuf>,
    /// The name to verify in the controller's certificate (default: the URL's host).
    #[arg(long, requires = "ca")]
    tls_domain: Option<String>,
}

/// The token to send, from `--token` or the file `--token-file` names (trimmed, as the controller reads it).
fn token(args: &Args) -> Result<Option<String>, String> {
    match (&args.token, &args.token_file) {
        (Some(t), _) if t.trim().is_empty() => Err("--token: empty".into()),
        (Some(t), _) => Ok(Some(t.trim().to_string())),
        (None, Some(path)) => {
            let t = std::fs::read_to_string(path).map_err(|e| format!("--token-file {}: {e}", path.display()))?;
            if t.trim().is_empty() {
                return Err(format!("--token-file {}: the file is empty", path.display()));
            }
            Ok(Some(t.trim().to_string()))
        }
        (None, None) => Ok(None),
    }
}

/// A channel to `url`, with TLS when `--ca` is given.
async fn connect(url: &str, args: &Args) -> Result<tonic::transport::Channel, String> {
    use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
    let read =
        |flag: &str, path: &std::path::Path| std::fs::read(path).map_err(|e| format!("{flag} {}: {e}", path.display()));
    let mut endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| format!("--controller {url}: {e}"))?;
    if let Some(ca) = &args.ca {
        if !url.starts_with("https://") {
            return Err(format!("--ca: the controller URL {url} is not https://"));
        }
        let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read("--ca", ca)?));
        if let (Some(cert), Some(key)) = (&args.cert, &args.key) {
            tls = tls.identity(Identity::from_pem(read("--cert", cert)?, read("--key", key)?));
        }
        if let Some(domain) = &args.tls_domain {
            tls = tls.domain_name(domain.clone());
        }
        endpoint = endpoint.tls_config(tls).map_err(|e| format!("TLS: {e}"))?;
    }
    endpoint.connect().await.map_err(|e| format!("cannot reach {url}: {e}"))
}

fn order(s: &str) -> Result<pb::IdOrder, String> {
    Ok(match s.to_ascii_lowercase().replace('_', "-").as_str() {
        "random" => pb::IdOrder::Random,
        "ascending" => pb::IdOrder::Ascending,
        "descending" => pb::IdOrder::Descending,
        "worst-case" | "worst" => pb::IdOrder::WorstCase,
        "best-case" | "best" => pb::IdOrder::BestCase,
        other => {
            return Err(format!(
                "--orders: unknown order `{other}` (random, ascending, descending, worst-case, best-case)"
            ));
        }
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ringleader-sweep: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let mode = match args.mode.as_str() {
        "simulated" => pb::Mode::Simulated,
        "live" => pb::Mode::Live,
        other => return Err(format!("--mode: `{other}` is neither simulated nor live")),
    };
    let id_orders = args.orders.iter().map(|o| order(o).map(|o| o as i32)).collect::<Result<Vec<_>, _>>()?;
    for (flag, path) in [("--csv", &args.csv), ("--svg", &args.svg)] {
        if let Some(path) = path.as_ref().filter(|p| p.exists() && !args.force) {
            return Err(format!("{flag} {}: the file exists; give --force to replace it", path.display()));
        }
    }
    let request = pb::CompareRequest {
        algorithms: args.algorithms.clone(),
        sizes: args.sizes.clone(),
        min_size: args.min_size,
        max_size: args.max_size,
        id_orders,
        repetitions: args.repetitions,
        seed: args.seed,
        mode: mode as i32,
        initiators: args.initiators,
    };

    // Our own controller, unless one was named.
    let mut embedded: Option<(oneshot::Sender<()>, tokio::task::JoinHandle<_>)> = None;
    let url = match &args.controller {
        Some(u) => u.clone(),
        None => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("bind: {e}"))?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            let mut config = ringleader_controller::config::Config::default();
            config.controller.host = "127.0.0.1".into();
            config.controller.port = addr.port();
            config.controller.local_nodes = args.local_nodes;
            let (stop, stopped) = oneshot::channel::<()>();
            let task = tokio::spawn(ringleader_controller::run(config, listener, async move {
                let _ = stopped.await;
            }));
            embedded = Some((stop, task));
            format!("http://{addr}")
        }
    };
    let token = token(&args)?;
    let channel = connect(&url, &args).await?;
    let bearer = match &token {
        Some(t) => Some(
            format!("Bearer {t}")
                .parse::<tonic::metadata::MetadataValue<_>>()
                .map_err(|_| "--token: not a valid header value".to_string())?,
        ),
        None => None,
    };
    let mut client = ControllerClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
        if let Some(b) = &bearer {
            req.metadata_mut().insert("authorization", b.clone());
        }
        Ok(req)
    });
    let mut stream = client
        .compare_algorithms(request)
        .await
        .map_err(|s| match s.code() {
            tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => format!(
                "{} (give the controller's token: --token, --token-file or RINGLEADER__AUTH__TOKEN)",
                s.message()
            ),
            _ => s.message().to_string(),
        })?
        .into_inner();
    let mut result = None;
    let mut wrong = 0;
    while let Some(ev) = stream.next().await {
        match ev.map_err(|s| format!("sweep failed: {}", s.message()))?.kind {
            Some(pb::compare_event::Kind::Progress(p)) if !p.current.is_empty() => {
                eprintln!("[{:>5}/{}] {}", p.done + 1, p.total, p.current);
            }
            Some(pb::compare_event::Kind::Row(r)) if !r.correct => {
                wrong += 1;
                eprintln!("        election {} was NOT correct (see GetElection)", r.election_id);
            }
            Some(pb::compare_event::Kind::Result(r)) => result = Some(r),
            _ => {}
        }
    }
    let result = result.ok_or("the controller ended the sweep without a result")?;
    match &args.csv {
        Some(path) => std::fs::write(path, &result.csv).map_err(|e| format!("{}: {e}", path.display()))?,
        None => print!("{}", result.csv),
    }
    if let Some(path) = &args.svg {
        std::fs::write(path, &result.svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for note in &result.notes {
        eprintln!("note: {note}");
    }
    eprintln!(
        "{} elections, {wrong} incorrect{}{}",
        result.rows.len(),
        args.csv.as_ref().map(|p| format!("; table in {}", p.display())).unwrap_or_default(),
        args.svg.as_ref().map(|p| format!("; plot in {}", p.display())).unwrap_or_default()
    );
    if let Some((stop, task)) = embedded {
        let _ = stop.send(());
        let _ = task.await;
    }
    if wrong > 0 { Err(format!("{wrong} elections were not correct")) } else { Ok(()) }
}
