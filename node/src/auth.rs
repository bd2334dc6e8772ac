//! Bearer tokens: who may call what.
//!
//! Three secrets, all optional, all sent as `authorization: Bearer <token>`
//! gRPC metadata:
//!
//! * `auth.token`: the controller's mutating calls (`StartElection`,
//!   `StopElection`, `InjectFault`, `ClearFaults`, `CompareAlgorithms`,
//!   `CheckAlgorithm`).
//!   `auth.read_token` allows the read-only calls only; `auth.protect_reads`
//!   makes the read-only calls need one of the two.
//! * `auth.agent_token`: controller to node (`ringleader.v1.Agent`). A node
//!   with it set takes Agent calls only from whoever holds it: the controller.
//! * `auth.peer_token`: node to node (`ringleader.v1.Peer` links). A node with
//!   it set takes links only from members of its cluster.
//!
//! Each may come from the configuration (`RINGLEADER__AUTH__TOKEN`, ...) or
//! from a file (`token_file`, ... : a mounted Kubernetes Secret). Refusals are
//! `UNAUTHENTICATED` (no or malformed credentials) or `PERMISSION_DENIED`
//! (credentials that do not allow this call), counted in
//! `ringleader.auth.refused` and logged without the secret, at most one
//! WARN per [`WARN_INTERVAL`] (with the number
//! left out): a caller without a token makes as many as it likes. The health and
//! reflection services stay open (probes and `grpcurl list`).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::logs::{Throttle, WARN_INTERVAL};
use crate::observe::kv;
use crate::setting::SettingError;
use opentelemetry::global;
use opentelemetry::metrics::Counter;
use subtle::ConstantTimeEq;
use tonic::metadata::{AsciiMetadataValue, MetadataMap};
use tonic::{Request, Status};

/// A secret: compared in constant time, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wrap a token (checked by [`AuthSection::resolve`]).
    pub fn new(token: impl Into<Arc<str>>) -> Secret {
        Secret(token.into())
    }

    /// Does `presented` equal this secret? (Constant time in the secret's content.)
    pub fn matches(&self, presented: &str) -> bool {
        self.0.as_bytes().ct_eq(presented.as_bytes()).into()
    }

    /// The `authorization` metadata value that presents this secret.
    pub fn bearer(&self) -> AsciiMetadataValue {
        // Tokens are checked to be visible ASCII, so this cannot fail.
        format!("Bearer {}", self.0).parse().unwrap_or_else(|_| AsciiMetadataValue::from_static(""))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The `[auth]` section of both programs' configuration (environment
/// `RINGLEADER__AUTH__<KEY>`). The controller uses every key; a node uses
/// `agent_token` and `peer_token` (and their files).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSection {
    /// Token for every controller call, mutating ones included.
    pub token: Option<String>,
    /// File holding `token` (e.g. a mounted Secret); surrounding whitespace is ignored.
    pub token_file: Option<PathBuf>,
    /// Token for the controller's read-only calls.
    pub read_token: Option<String>,
    /// File holding `read_token`.
    pub read_token_file: Option<PathBuf>,
    /// Read-only controller calls need `token` or `read_token` too.
    pub protect_reads: bool,
    /// Token of controller-to-node calls.
    pub agent_token: Option<String>,
    /// File holding `agent_token`.
    pub agent_token_file: Option<PathBuf>,
    /// Token of node-to-node links.
    pub peer_token: Option<String>,
    /// File holding `peer_token`.
    pub peer_token_file: Option<PathBuf>,
}

/// The resolved secrets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Auth {
    /// Full access to the controller.
    pub token: Option<Secret>,
    /// Read-only access to the controller.
    pub read_token: Option<Secret>,
    /// Read-only calls need a token.
    pub protect_reads: bool,
    /// Controller to node.
    pub agent_token: Option<Secret>,
    /// Node to node.
    pub peer_token: Option<Secret>,
}

impl AuthSection {
    /// Read the token files and check every token; an error names the key.
    pub fn resolve(&self) -> Result<Auth, SettingError> {
        fn one(
            value: &Option<String>,
            file: &Option<PathBuf>,
            key: &'static str,
            file_key: &'static str,
        ) -> Result<Option<Secret>, SettingError> {
            let token = match (value, file) {
                (Some(_), Some(_)) => {
                    return Err(SettingError::new(key, format!("give {key} or {file_key}, not both")));
                }
                (Some(v), None) => v.clone(),
                (None, Some(path)) => std::fs::read_to_string(path)
                    .map_err(|e| SettingError::new(file_key, format!("cannot read {}: {e}", path.display())))?
                    .trim()
                    .to_string(),
                (None, None) => return Ok(None),
            };
            if token.len() < 8 {
                return Err(SettingError::new(key, "must be at least 8 characters"));
            }
            if !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(SettingError::new(key, "must be printable ASCII without spaces"));
            }
            Ok(Some(Secret::new(token)))
        }
        let auth = Auth {
            token: one(&self.token, &self.token_file, "auth.token", "auth.token_file")?,
            read_token: one(&self.read_token, &self.read_token_file, "auth.read_token", "auth.read_token_file")?,
            protect_reads: self.protect_reads,
            agent_token: one(&self.agent_token, &self.agent_token_file, "auth.agent_token", "auth.agent_token_file")?,
            peer_token: one(&self.peer_token, &self.peer_token_file, "auth.peer_token", "auth.peer_token_file")?,
        };
        if auth.token.is_none() && (auth.read_token.is_some() || auth.protect_reads) {
            return Err(SettingError::new(
                "auth.token",
                "read_token and protect_reads need a token for the mutating calls",
            ));
        }
        if auth.token.is_some() && auth.token == auth.read_token {
            return Err(SettingError::new("auth.read_token", "must differ from auth.token"));
        }
        Ok(auth)
    }
}

/// What a call needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A read-only call.
    Read,
    /// A call that changes state.
    Write,
}

/// The bearer token in `metadata`: `Ok(None)` when there is no `authorization`
/// entry, `Err` when it is not `Bearer <token>`.
pub fn bearer(metadata: &MetadataMap) -> Result<Option<&str>, Status> {
    let Some(value) = metadata.get("authorization") else { return Ok(None) };
    let text = value.to_str().map_err(|_| Status::unauthenticated("the authorization metadata is not ASCII"))?;
    match text.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => {
            Ok(Some(token.trim()))
        }
        _ => Err(Status::unauthenticated("the authorization metadata must be `Bearer <token>`")),
    }
}

impl Auth {
    /// May a controller call of `access` with `metadata` go ahead?
    pub fn check_controller(&self, metadata: &MetadataMap, method: &str, access: Access) -> Result<(), Status> {
        let Some(full) = &self.token else { return Ok(()) };
        if access == Access::Read && !self.protect_reads {
            return Ok(());
        }
        let Some(presented) = bearer(metadata)? else {
            return Err(Status::unauthenticated(format!(
                "{method} needs `authorization: Bearer <token>` metadata (the controller's auth.token)"
            )));
        };
        let read_only = self.read_token.as_ref().is_some_and(|r| r.matches(presented));
        match access {
            _ if full.matches(presented) => Ok(()),
            Access::Read if read_only => Ok(()),
            Access::Write if read_only => {
                Err(Status::permission_denied(format!("{method} changes state; the read-only token may not call it")))
            }
            _ => Err(Status::permission_denied(format!("the bearer token does not allow {method}"))),
        }
    }
}

/// Count and log a refusal (never the secret).
pub fn refused(service: &'static str, method: &str, remote: Option<std::net::SocketAddr>, status: &Status) {
    static REFUSED: OnceLock<Counter<u64>> = OnceLock::new();
    let counter = REFUSED.get_or_init(|| {
        global::meter(crate::observe::NODE_SCOPE)
            .u64_counter("ringleader.auth.refused")
            .with_unit("{call}")
            .with_description("Calls refused for missing or wrong credentials, by service and code")
            .build()
    });
    let code = match status.code() {
        tonic::Code::Unauthenticated => "unauthenticated",
        tonic::Code::PermissionDenied => "permission_denied",
        _ => "other",
    };
    counter.add(1, &[kv("service", service), kv("code", code)]);
    // Anyone who reaches the port can be refused at will: the counter counts each, the log samples.
    static LOGGED: Throttle = Throttle::new(WARN_INTERVAL);
    crate::warn_throttled!(LOGGED, service, method, remote = ?remote, code, reason = status.message(), "refused a call");
}

/// A server interceptor that lets through only calls presenting `expected`
/// (everything when it is `None`).
#[derive(Clone, Debug)]
pub struct Gate {
    /// `agent` or `peer`.
    pub service: &'static str,
    /// The secret callers must present.
    pub expected: Option<Secret>,
}

impl tonic::service::Interceptor for Gate {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else { return Ok(request) };
        let outcome = match bearer(request.metadata()) {
            Ok(Some(t)) if expected.matches(t) => return Ok(request),
            Ok(Some(_)) => Status::permission_denied(format!(
                "the bearer token is not this cluster's {} token (auth.{}_token)",
                self.service, self.service
            )),
            Ok(None) => Status::unauthenticated(format!(
                "ringleader.v1.{} needs `authorization: Bearer <token>` metadata (auth.{}_token)",
                if self.service == "agent" { "Agent" } else { "Peer" },
                self.service
            )),
            Err(e) => e,
        };
        refused(self.service, "*", request.remote_addr(), &outcome);
        Err(outcome)
    }
}

/// A client interceptor that presents a secret (or nothing).
#[derive(Clone, Debug, Default)]
pub struct Bearer(pub Option<Secret>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(s) = &self.0 {
            request.metadata_mut().insert("authorization", s.bearer());
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code;
    use tonic::service::Interceptor;

    fn md(auth: Option<&str>) -> MetadataMap {
        let mut m = MetadataMap::new();
        if let Some(a) = auth {
            m.insert("authorization", a.parse().unwrap());
        }
        m
    }

    fn full() -> Auth {
        Auth {
            token: Some(Secret::new("write-secret")),
            read_token: Some(Secret::new("read-secret")),
            ..Auth::default()
        }
    }

    /// Mutating calls need the full token: none is UNAUTHENTICATED, the read token or another token is
    /// PERMISSION_DENIED; reads are open unless protect_reads, then either token does.
    #[test]
    fn controller_access() {
        let a = full();
        let code = |auth: &Auth, m: Option<&str>, access| auth.check_controller(&md(m), "StartElection", access);
        assert!(code(&a, Some("Bearer write-secret"), Access::Write).is_ok());
        assert_eq!(code(&a, None, Access::Write).unwrap_err().code(), Code::Unauthenticated);
        assert_eq!(code(&a, Some("Basic abc"), Access::Write).unwrap_err().code(), Code::Unauthenticated);
        assert_eq!(code(&a, Some("Bearer read-secret"), Access::Write).unwrap_err().code(), Code::PermissionDenied);
        assert_eq!(code(&a, Some("Bearer guess-guess"), Access::Write).unwrap_err().code(), Code::PermissionDenied);
        assert!(code(&a, None, Access::Read).is_ok());
        let protected = Auth { protect_reads: true, ..full() };
        assert_eq!(code(&protected, None, Access::Read).unwrap_err().code(), Code::Unauthenticated);
        assert!(code(&protected, Some("Bearer read-secret"), Access::Read).is_ok());
        assert!(code(&protected, Some("bearer write-secret"), Access::Read).is_ok());
        assert!(code(&Auth::default(), None, Access::Write).is_ok(), "no token configured: open");
        let e = code(&a, None, Access::Write).unwrap_err();
        assert!(e.message().contains("StartElection") && !e.message().contains("write-secret"), "{e:?}");
    }

    /// A node's gate takes only its token; the client interceptor presents it; secrets never print.
    #[test]
    fn gate_and_bearer() {
        let secret = Secret::new("peer-secret-1");
        let mut gate = Gate { service: "peer", expected: Some(secret.clone()) };
        let presented = Bearer(Some(secret.clone())).call(Request::new(())).unwrap();
        assert!(gate.call(presented).is_ok());
        assert_eq!(gate.call(Request::new(())).unwrap_err().code(), Code::Unauthenticated);
        let wrong = Bearer(Some(Secret::new("other-secret"))).call(Request::new(())).unwrap();
        assert_eq!(gate.call(wrong).unwrap_err().code(), Code::PermissionDenied);
        assert!(Gate { service: "agent", expected: None }.call(Request::new(())).is_ok());
        assert_eq!(format!("{secret:?}"), "Secret(***)");
    }

    /// A flood of refused calls (5,000, as a caller without a token makes them at will) logs at most
    /// one WARN, not one each (before: 5,000 lines, 1.3 MiB): refusals are counted in the metrics
    /// and their warning is rate-limited.
    #[test]
    fn a_flood_of_refusals_logs_at_most_one_warning() {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
        tracing::subscriber::with_default(subscriber, || {
            let mut gate = Gate { service: "peer", expected: Some(Secret::new("peer-secret-1")) };
            for _ in 0..5_000 {
                assert_eq!(gate.call(Request::new(())).unwrap_err().code(), Code::Unauthenticated);
            }
        });
        let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let warnings = log.lines().filter(|l| l.contains("refused a call")).count();
        assert!(warnings <= 1, "{warnings} warnings, {} bytes of log", log.len());
    }

    /// Tokens come from values or files (trimmed); bad combinations and weak tokens name the key.
    #[test]
    fn resolving_the_section() {
        let dir = std::env::temp_dir().join(format!("ringleader-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "from-a-file-123\n").unwrap();
        let s = AuthSection {
            token_file: Some(file.clone()),
            peer_token: Some("peer-token-1".into()),
            ..Default::default()
        };
        let a = s.resolve().unwrap();
        assert!(a.token.unwrap().matches("from-a-file-123"));
        assert!(a.peer_token.unwrap().matches("peer-token-1"));
        let bad = [
            (AuthSection { token: Some("x".repeat(8)), token_file: Some(file), ..Default::default() }, "auth.token"),
            (AuthSection { token: Some("short".into()), ..Default::default() }, "auth.token"),
            (AuthSection { agent_token: Some("has a space".into()), ..Default::default() }, "auth.agent_token"),
            (AuthSection { protect_reads: true, ..Default::default() }, "auth.token"),
            (AuthSection { token_file: Some(dir.join("missing")), ..Default::default() }, "auth.token_file"),
            (
                AuthSection {
                    token: Some("same-token".into()),
                    read_token: Some("same-token".into()),
                    ..Default::default()
                },
                "auth.read_token",
            ),
        ];
        for (section, key) in bad {
            assert_eq!(section.resolve().unwrap_err().key, key, "{section:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
