# Images of the two Ringleader programs, built from this workspace:
#
#   docker build --target node       -t ringleader/node:0.1.0 .
#   docker build --target controller -t ringleader/controller:0.1.0 .
#
# (k8s/README.md loads them into a kind cluster.) The proto crate's build
# script uses the vendored protoc, but the etcd-client crate (the node's
# etcd v3 client, for `lease`) compiles etcd's protos with the system's:
# the builder installs Debian's protobuf-compiler and libprotobuf-dev. It needs
# BuildKit (the default builder of Docker 23 and later; DOCKER_BUILDKIT=1
# before), for the cache mounts and to skip the stages a target does not use.
#
# Where no registry can be reached, every base can be replaced by a local
# image (docs/containers.md):
#
#   RUNTIME_IMAGE  the base of both images (default: distroless cc, nonroot);
#                  scripts/stand-in-base makes a local stand-in with debootstrap
#   BUILDER_IMAGE  the Rust toolchain image the binaries are compiled in
#   BINARIES       `builder` (default: compile in BUILDER_IMAGE) or `prebuilt`:
#                  take ringleader-node and ringleader-controller from the
#                  directory PREBUILT of the build context instead (binaries
#                  built on a Debian 12 host, e.g. `cargo build --release`,
#                  copied into a context of their own; see scripts/build-images)

ARG RUST_VERSION=1.95
ARG BUILDER_IMAGE=rust:${RUST_VERSION}-slim-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot
ARG BINARIES=builder

# ---- builder: both release binaries in one cargo invocation ----------------
FROM ${BUILDER_IMAGE} AS builder
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends protobuf-compiler libprotobuf-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
# The cargo registry and the target directory are BuildKit caches, so a
# rebuild after a source change only recompiles the workspace crates. The
# cache mount is not part of the image: copy the binaries out of it into
# /app/target/release.
RUN --mount=type=cache,id=ringleader-cargo-registry,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,id=ringleader-cargo-git,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,id=ringleader-target,target=/cache/target,sharing=locked \
    CARGO_TARGET_DIR=/cache/target \
    cargo build --release --locked -p ringleader-node -p ringleader-controller \
 && mkdir -p /app/target/release \
 && cp /cache/target/release/ringleader-node /cache/target/release/ringleader-controller /app/target/release/

# ---- prebuilt: binaries built elsewhere, from the build context -------------
FROM scratch AS prebuilt
ARG PREBUILT=bin
COPY ${PREBUILT}/ringleader-node ${PREBUILT}/ringleader-controller /app/target/release/

# ---- binaries: whichever of the two BINARIES names --------------------------
FROM ${BINARIES} AS binaries

# ---- node: Peer and Agent gRPC on 7000, Prometheus /metrics on 9464 --------
FROM ${RUNTIME_IMAGE} AS node
LABEL org.opencontainers.image.title="ringleader-node" \
      org.opencontainers.image.description="Ringleader node: runs its share of leader elections over gRPC" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=binaries /app/target/release/ringleader-node /usr/local/bin/ringleader-node
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
EXPOSE 7000 7001 9464
ENTRYPOINT ["/usr/local/bin/ringleader-node"]

# ---- controller: Controller API gRPC on 50051, /metrics on 9464 ------------
FROM ${RUNTIME_IMAGE} AS controller
LABEL org.opencontainers.image.title="ringleader-controller" \
      org.opencontainers.image.description="Ringleader controller: starts leader elections on the nodes and reports them" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=binaries /app/target/release/ringleader-controller /usr/local/bin/ringleader-controller
USER 10001:10001
EXPOSE 50051 50052 9464
ENTRYPOINT ["/usr/local/bin/ringleader-controller"]
