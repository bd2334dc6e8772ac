//! `ringleader-sweep`: run chosen algorithms over a range of ring sizes and id
//! orders (through the `CompareAlgorithms` RPC) and write the table as CSV and
//! a plot of messages versus n, next to each algorithm's bound, as SVG.
//!
//! Without `--controller` it starts a controller in-process (with
//! `--local-nodes N` node servers on loopback for LIVE sweeps).
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
    /// Id orders: random, ascending, descending, worst-case, best-case.
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
    let mut client = ControllerClient::connect(url.clone()).await.map_err(|e| format!("cannot reach {url}: {e}"))?;
    let mut stream = client.compare_algorithms(request).await.map_err(|s| s.message().to_string())?.into_inner();
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
