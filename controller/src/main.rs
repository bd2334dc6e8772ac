//! `ringleader-controller`: wiring only (flags -> config -> telemetry -> serve).

use std::process::ExitCode;

use clap::Parser;
use ringleader_controller::config::{Config, Flags};
use ringleader_controller::{run, shutdown_signal, telemetry};

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse();
    let config = match Config::load(&flags).and_then(|c| c.validate().map(|()| c)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ringleader-controller: {e}");
            return ExitCode::from(2);
        }
    };
    ringleader_node::unread::set_budget(config.controller.max_unread_mib << 20);
    // Before the first election: the instruments come from the global meter.
    // With auth.protect_reads the HTTP port's pages and /metrics take a token too.
    let reads = config.auth.resolve().ok().and_then(|auth| ringleader_controller::pages::read_check(&auth));
    let settings = config
        .telemetry
        .settings("ringleader-controller")
        .with_http("controller-http", &config.controller.limits())
        .protect_reads(reads);
    let telemetry = match telemetry::Telemetry::init(&settings).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ringleader-controller: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (host, port) = (config.controller.host.clone(), config.controller.port);
    let listener = match tokio::net::TcpListener::bind((host.as_str(), port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("ringleader-controller: cannot listen on {host}:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match run(config, listener, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ringleader-controller: {e}");
            ExitCode::FAILURE
        }
    };
    telemetry.shutdown().await;
    code
}
