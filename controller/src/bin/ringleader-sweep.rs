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
//!
//! With `--lower-bound` it sets the algorithms against the Ω(n log n) lower
//! bound for comparison-based ring algorithms instead: each on the
//! bit-reversal ring of every size (`spec::bit_reversal`, mirrored for the
//! min rule), every node initiating, in the simulator in-process (the
//! arrangement is not one of the API's id orders), with the bound's curve.

use std::path::PathBuf;
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
    /// Run the algorithms on bit-reversal rings in-process and plot them
    /// against the lower bound for comparison-based algorithms (see the
    /// crate doc); --orders, --repetitions and --mode do not apply.
    #[arg(long)]
    lower_bound: bool,
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

/// Why a sweep failed: what `ringleader-sweep` prints before it exits with 1.
#[derive(Debug, thiserror::Error)]
enum SweepError {
    /// `--token` is blank.
    #[error("--token: empty")]
    EmptyToken,
    /// `--token` is not a header value.
    #[error("--token: not a valid header value")]
    BadToken,
    /// A file a flag names cannot be read (`--token-file`, `--ca`, `--cert`, `--key`).
    #[error("{flag} {}: {source}", path.display())]
    Read { flag: &'static str, path: PathBuf, source: std::io::Error },
    /// `--token-file` names an empty file.
    #[error("--token-file {}: the file is empty", .0.display())]
    EmptyTokenFile(PathBuf),
    /// `--controller` is not a URL.
    #[error("--controller {url}: {source}")]
    BadUrl { url: String, source: tonic::transport::Error },
    /// `--ca` with a plain-text controller.
    #[error("--ca: the controller URL {0} is not https://")]
    NotHttps(String),
    /// The TLS settings do not apply.
    #[error("TLS: {0}")]
    Tls(tonic::transport::Error),
    /// The controller cannot be reached.
    #[error("cannot reach {url}: {source}")]
    Unreachable { url: String, source: tonic::transport::Error },
    /// An unknown `--orders` value.
    #[error("--orders: unknown order `{0}` (random, ascending, descending, worst-case, best-case)")]
    UnknownOrder(String),
    /// An unknown `--mode` value.
    #[error("--mode: `{0}` is neither simulated nor live")]
    UnknownMode(String),
    /// An output file exists, and no `--force`.
    #[error("{flag} {}: the file exists; give --force to replace it", path.display())]
    Exists { flag: &'static str, path: PathBuf },
    /// The in-process controller cannot listen.
    #[error("bind: {0}")]
    Bind(std::io::Error),
    /// The in-process controller's address is unknown.
    #[error("{0}")]
    LocalAddr(std::io::Error),
    /// The controller refused the sweep (with a hint when it wants a token).
    #[error("{}{}", .0.message(), token_hint(.0.code()))]
    Refused(tonic::Status),
    /// The sweep failed while it ran.
    #[error("sweep failed: {}", .0.message())]
    Failed(tonic::Status),
    /// The stream ended without the result.
    #[error("the controller ended the sweep without a result")]
    NoResult,
    /// `--lower-bound` with a name the catalogue does not have.
    #[error("--algorithms: no algorithm `{0}` in the catalogue")]
    UnknownAlgorithm(String),
    /// `--lower-bound` could not build a point.
    #[error("{0}")]
    Simulation(String),
    /// An output file cannot be written.
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// Some elections were not correct.
    #[error("{0} elections were not correct")]
    Incorrect(usize),
}

/// What to add to a refusal for want of the controller's token.
fn token_hint(code: tonic::Code) -> &'static str {
    match code {
        tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => {
            " (give the controller's token: --token, --token-file or RINGLEADER__AUTH__TOKEN)"
        }
        _ => "",
    }
}

/// The token to send, from `--token` or the file `--token-file` names (trimmed, as the controller reads it).
fn token(args: &Args) -> Result<Option<String>, SweepError> {
    match (&args.token, &args.token_file) {
        (Some(t), _) if t.trim().is_empty() => Err(SweepError::EmptyToken),
        (Some(t), _) => Ok(Some(t.trim().to_string())),
        (None, Some(path)) => {
            let t = std::fs::read_to_string(path).map_err(|source| SweepError::Read {
                flag: "--token-file",
                path: path.clone(),
                source,
            })?;
            if t.trim().is_empty() {
                return Err(SweepError::EmptyTokenFile(path.clone()));
            }
            Ok(Some(t.trim().to_string()))
        }
        (None, None) => Ok(None),
    }
}

/// A channel to `url`, with TLS when `--ca` is given.
async fn connect(url: &str, args: &Args) -> Result<tonic::transport::Channel, SweepError> {
    use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
    let read = |flag: &'static str, path: &std::path::Path| {
        std::fs::read(path).map_err(|source| SweepError::Read { flag, path: path.to_path_buf(), source })
    };
    let mut endpoint =
        Endpoint::from_shared(url.to_string()).map_err(|source| SweepError::BadUrl { url: url.to_string(), source })?;
    if let Some(ca) = &args.ca {
        if !url.starts_with("https://") {
            return Err(SweepError::NotHttps(url.to_string()));
        }
        let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read("--ca", ca)?));
        if let (Some(cert), Some(key)) = (&args.cert, &args.key) {
            tls = tls.identity(Identity::from_pem(read("--cert", cert)?, read("--key", key)?));
        }
        if let Some(domain) = &args.tls_domain {
            tls = tls.domain_name(domain.clone());
        }
        endpoint = endpoint.tls_config(tls).map_err(SweepError::Tls)?;
    }
    endpoint.connect().await.map_err(|source| SweepError::Unreachable { url: url.to_string(), source })
}

fn order(s: &str) -> Result<pb::IdOrder, SweepError> {
    Ok(match s.to_ascii_lowercase().replace('_', "-").as_str() {
        "random" => pb::IdOrder::Random,
        "ascending" => pb::IdOrder::Ascending,
        "descending" => pb::IdOrder::Descending,
        "worst-case" | "worst" => pb::IdOrder::WorstCase,
        "best-case" | "best" => pb::IdOrder::BestCase,
        other => return Err(SweepError::UnknownOrder(other.to_string())),
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

async fn run(args: Args) -> Result<(), SweepError> {
    let mode = match args.mode.as_str() {
        "simulated" => pb::Mode::Simulated,
        "live" => pb::Mode::Live,
        other => return Err(SweepError::UnknownMode(other.to_string())),
    };
    let id_orders = args.orders.iter().map(|o| order(o).map(|o| o as i32)).collect::<Result<Vec<_>, _>>()?;
    for (flag, path) in [("--csv", &args.csv), ("--svg", &args.svg)] {
        if let Some(path) = path.as_ref().filter(|p| p.exists() && !args.force) {
            return Err(SweepError::Exists { flag, path: path.clone() });
        }
    }
    if args.lower_bound {
        return lower_bound::run(&args);
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
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(SweepError::Bind)?;
            let addr = listener.local_addr().map_err(SweepError::LocalAddr)?;
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
        Some(t) => {
            Some(format!("Bearer {t}").parse::<tonic::metadata::MetadataValue<_>>().map_err(|_| SweepError::BadToken)?)
        }
        None => None,
    };
    let mut client = ControllerClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
        if let Some(b) = &bearer {
            req.metadata_mut().insert("authorization", b.clone());
        }
        Ok(req)
    });
    let mut stream = client.compare_algorithms(request).await.map_err(SweepError::Refused)?.into_inner();
    let mut result = None;
    let mut wrong = 0;
    while let Some(ev) = stream.next().await {
        match ev.map_err(SweepError::Failed)?.kind {
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
    let result = result.ok_or(SweepError::NoResult)?;
    let write = |path: &PathBuf, text: &str| {
        std::fs::write(path, text).map_err(|source| SweepError::Write { path: path.clone(), source })
    };
    match &args.csv {
        Some(path) => write(path, &result.csv)?,
        None => print!("{}", result.csv),
    }
    if let Some(path) = &args.svg {
        write(path, &result.svg)?;
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
    if wrong > 0 { Err(SweepError::Incorrect(wrong)) } else { Ok(()) }
}

/// `--lower-bound`: the algorithms on bit-reversal rings against the lower
/// bound for comparison-based ring algorithms.
mod lower_bound {
    use std::fmt::Write as _;

    use ringleader_core::algo::catalogue;
    use ringleader_core::diagram::Pen;
    use ringleader_core::sim::{self, SimConfig};
    use ringleader_core::spec::{bit_reversal, mirror};
    use ringleader_core::topology::Topology;

    use super::{Args, SweepError};

    /// The lower bound plotted, for n a power of two ≥ 8: on the bit-reversal
    /// ring every comparison-based synchronous algorithm sends at least
    /// n / (2(2k + 1)) messages in its k-th active round, for k = 1..n/8
    /// (Frederickson-Lynch, JACM 1987; the constants of Attiya-Welch,
    /// Distributed Computing, 2nd ed. 2004, §3.4.2). Their sum, about
    /// (n/4)·ln(n/4) = 0.17·n·log2 n, is the curve.
    pub(super) fn bound(n: u64) -> f64 {
        (1..=n / 8).map(|k| n as f64 / (2.0 * (2 * k + 1) as f64)).sum()
    }

    /// Sizes: the given ones, else powers of two from --min-size to --max-size.
    fn sizes(args: &Args) -> Vec<u32> {
        if !args.sizes.is_empty() {
            return args.sizes.clone();
        }
        let mut v = Vec::new();
        let mut n = args.min_size.max(2).next_power_of_two();
        while n <= args.max_size {
            v.push(n);
            n *= 2;
        }
        v
    }

    pub(super) fn run(args: &Args) -> Result<(), SweepError> {
        let specs: Vec<_> = args
            .algorithms
            .iter()
            .map(|name| catalogue::find(name).ok_or_else(|| SweepError::UnknownAlgorithm(name.clone())))
            .collect::<Result<_, _>>()?;
        let sizes = sizes(args);
        let mut csv = String::from("algorithm,n,messages,election,notification,bound,lower_bound,leader_ok\n");
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for spec in &specs {
            let mut points = Vec::new();
            for &n in &sizes {
                let topo = Topology::build(spec.default_topology(), n, args.seed)
                    .map_err(|e| SweepError::Simulation(format!("{} on {n}: {e}", spec.name)))?;
                let ids = mirror(bit_reversal(n), n, spec.rule);
                let all: Vec<u32> = (0..n).collect();
                let r = sim::run(
                    spec,
                    &topo,
                    &ids,
                    &all,
                    spec.rule,
                    &SimConfig { seed: args.seed, ..SimConfig::default() },
                );
                let ok = r.verdict.violations.is_empty();
                eprintln!(
                    "{} n={n}: {} messages{}",
                    spec.name,
                    r.counters.messages,
                    if ok { "" } else { " NOT correct" }
                );
                let _ = writeln!(
                    csv,
                    "{},{n},{},{},{},{},{:.1},{ok}",
                    spec.name,
                    r.counters.messages,
                    r.counters.election_messages,
                    r.counters.notification_messages,
                    r.bound,
                    bound(u64::from(n))
                );
                if !ok {
                    return Err(SweepError::Incorrect(1));
                }
                points.push((f64::from(n), r.counters.messages as f64));
            }
            series.push((spec.name.to_string(), points));
        }
        let curve: Vec<(f64, f64)> =
            sizes.iter().filter(|&&n| n >= 8).map(|&n| (f64::from(n), bound(u64::from(n)))).collect();
        let svg = plot(&series, &curve);
        let write = |path: &std::path::PathBuf, text: &str| {
            std::fs::write(path, text).map_err(|source| SweepError::Write { path: path.clone(), source })
        };
        match &args.csv {
            Some(path) => write(path, &csv)?,
            None => print!("{csv}"),
        }
        if let Some(path) = &args.svg {
            write(path, &svg)?;
        }
        Ok(())
    }

    const COLOURS: &[&str] = &[
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
        "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
    ];

    /// A log-log plot of messages against n: one solid line per algorithm,
    /// the lower bound dashed and black, a legend on the right.
    fn plot(series: &[(String, Vec<(f64, f64)>)], curve: &[(f64, f64)]) -> String {
        let (w, h, left, top, pw, ph) = (900.0, 560.0, 70.0, 40.0, 560.0, 460.0);
        let all = series.iter().flat_map(|s| s.1.iter()).chain(curve.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y.max(1.0));
            y1 = y1.max(y);
        }
        let (lx0, lx1) = (x0.log10(), x1.log10().max(x0.log10() + 1e-9));
        let (ly0, ly1) = (y0.log10().floor(), y1.log10().ceil().max(y0.log10().floor() + 1.0));
        let px = |x: f64| left + (x.log10() - lx0) / (lx1 - lx0) * pw;
        let py = |y: f64| top + ph - (y.max(1.0).log10() - ly0) / (ly1 - ly0) * ph;
        let mut pen = Pen::new();
        pen.element("svg")
            .attr("xmlns", "http://www.w3.org/2000/svg")
            .attr("width", w)
            .attr("height", h)
            .attr("viewBox", format_args!("0 0 {w} {h}"))
            .attr("font-family", "sans-serif")
            .attr("font-size", 12)
            .open();
        pen.newline();
        pen.rect().attr("width", w).attr("height", h).attr("fill", "white").close();
        pen.text()
            .px("x", left + pw / 2.0)
            .attr("y", 22)
            .attr("font-size", 15)
            .attr("text-anchor", "middle")
            .content("Messages on bit-reversal rings, every node initiating (log-log)");
        pen.newline();
        // Decades on y, sizes on x.
        let mut d = ly0 as i32;
        while f64::from(d) <= ly1 {
            let y = py(10f64.powi(d));
            pen.line().px("x1", left).px("y1", y).px("x2", left + pw).px("y2", y).attr("stroke", "#ddd").close();
            pen.text().px("x", left - 6.0).px("y", y + 4.0).attr("text-anchor", "end").content(format_args!("10^{d}"));
            pen.newline();
            d += 1;
        }
        let xs: Vec<f64> = series.first().map(|s| s.1.iter().map(|p| p.0).collect()).unwrap_or_default();
        for x in xs {
            let gx = px(x);
            pen.line().px("x1", gx).px("y1", top).px("x2", gx).px("y2", top + ph).attr("stroke", "#eee").close();
            pen.text().px("x", gx).px("y", top + ph + 16.0).attr("text-anchor", "middle").content(x);
            pen.newline();
        }
        pen.text().px("x", left + pw / 2.0).px("y", h - 12.0).attr("text-anchor", "middle").content("n (ring size)");
        pen.rect()
            .px("x", left)
            .px("y", top)
            .px("width", pw)
            .px("height", ph)
            .attr("fill", "none")
            .attr("stroke", "#444")
            .close();
        pen.newline();
        let path = |pts: &[(f64, f64)]| {
            pts.iter()
                .enumerate()
                .map(|(i, &(x, y))| format!("{}{:.1},{:.1}", if i == 0 { "M" } else { "L" }, px(x), py(y)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let legend_x = left + pw + 20.0;
        for (i, (name, pts)) in series.iter().enumerate() {
            let c = COLOURS[i % COLOURS.len()];
            pen.path().attr("d", path(pts)).attr("fill", "none").attr("stroke", c).attr("stroke-width", 1.8).close();
            for &(x, y) in pts {
                pen.circle().px("cx", px(x)).px("cy", py(y)).attr("r", 2.5).attr("fill", c).close();
            }
            let ly = top + 10.0 + 18.0 * i as f64;
            pen.line()
                .px("x1", legend_x)
                .px("y1", ly)
                .px("x2", legend_x + 22.0)
                .px("y2", ly)
                .attr("stroke", c)
                .attr("stroke-width", 2)
                .close();
            pen.text().px("x", legend_x + 28.0).px("y", ly + 4.0).content(name);
            pen.newline();
        }
        let ly = top + 10.0 + 18.0 * series.len() as f64;
        let dashed = [("fill", "none"), ("stroke", "black"), ("stroke-width", "2.2"), ("stroke-dasharray", "7,4")];
        pen.path().attr("d", path(curve)).attrs(&dashed).close();
        pen.line().px("x1", legend_x).px("y1", ly).px("x2", legend_x + 22.0).px("y2", ly).attrs(&dashed).close();
        pen.text().px("x", legend_x + 28.0).px("y", ly + 4.0).content("lower bound for comparison-based");
        pen.text()
            .px("x", legend_x + 28.0)
            .px("y", ly + 18.0)
            .attr("font-size", 11)
            .attr("fill", "#555")
            .content("Σ n/(2(2k+1)), k = 1..n/8");
        pen.newline();
        pen.end("svg");
        pen.newline();
        pen.finish()
    }
}
