//! `ringleader-controller`: wiring only (flags -> config -> telemetry -> serve).

use std::process::ExitCode;

use clap::Parser;
use ringleader_controller::config::{Config, Flags};
use ringleader_controller::{run, shutdown_signal, telemetry};

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse();
    telemetry::init();
    let config = match Config::load(&flags).and_then(|c| c.validate().map(|()| c)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ringleader-controller: {e}");
            return ExitCode::from(2);
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
    match run(config, listener, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ringleader-controller: {e}");
            ExitCode::FAILURE
        }
    }
}
