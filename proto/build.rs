//! Generates the Rust code of `proto/ringleader/v1/*.proto` and the file
//! descriptor set used by gRPC server reflection. Uses the vendored `protoc`
//! unless `PROTOC` is set, so a fresh machine needs no system package. The
//! client and server stubs are generated only with the `grpc` feature.

use std::{env, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(env::var("OUT_DIR")?);
    if env::var_os("PROTOC").is_none() {
        // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
        unsafe { env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?) };
    }
    let files = ["ringleader/v1/peer.proto", "ringleader/v1/agent.proto", "ringleader/v1/controller.proto"];
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
    }
    // Without the `grpc` feature only the prost message types are generated
    // (ringleader-core's view: no tonic in its dependency tree).
    let grpc = env::var_os("CARGO_FEATURE_GRPC").is_some();
    tonic_prost_build::configure()
        .build_client(grpc)
        .build_server(grpc)
        .file_descriptor_set_path(out.join("ringleader_descriptor.bin"))
        .compile_protos(&files, &["."])?;
    Ok(())
}
