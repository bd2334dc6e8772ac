//! Optional TLS and mutual TLS (rustls through tonic) for every link: users
//! to the controller, controller to nodes, node to node.
//!
//! One `[tls]` section for both programs (environment `RINGLEADER__TLS__<KEY>`):
//!
//! ```toml
//! [tls]
//! cert = "/etc/ringleader/tls/tls.crt"  # this process's certificate chain (PEM), server and client
//! key = "/etc/ringleader/tls/tls.key"   # its private key (PEM)
//! ca = "/etc/ringleader/tls/ca.crt"     # the CA that signs every certificate of the cluster
//! mutual = true                         # servers require client certificates signed by `ca`
//! ```
//!
//! With a certificate, the servers speak TLS only, and clients dial
//! `https://` addresses trusting `ca` (presenting their own certificate when
//! `mutual`). Node addresses then start with `https://` (`--advertise`,
//! `controller.nodes`); the embedded local cluster does this by itself.

use std::path::PathBuf;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig};

use crate::setting::SettingError;

/// The `[tls]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsSection {
    /// Certificate chain (PEM).
    pub cert: Option<PathBuf>,
    /// Private key (PEM).
    pub key: Option<PathBuf>,
    /// CA certificate(s) (PEM) trusted for servers and, with `mutual`, clients.
    pub ca: Option<PathBuf>,
    /// Require and verify client certificates.
    pub mutual: bool,
}

/// Loaded TLS material.
#[derive(Clone)]
pub struct Tls {
    identity: Identity,
    ca: Certificate,
    mutual: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("mutual", &self.mutual).finish_non_exhaustive()
    }
}

impl PartialEq for Tls {
    fn eq(&self, other: &Self) -> bool {
        self.mutual == other.mutual && self.ca.as_ref() == other.ca.as_ref()
    }
}

impl Eq for Tls {}

impl TlsSection {
    /// Read the files (`Ok(None)`: TLS off); an error names the key.
    pub fn load(&self) -> Result<Option<Tls>, SettingError> {
        let read = |path: &PathBuf, key: &'static str| {
            let pem = std::fs::read(path)
                .map_err(|e| SettingError::new(key, format!("cannot read {}: {e}", path.display())))?;
            if !String::from_utf8_lossy(&pem).contains("-----BEGIN ") {
                return Err(SettingError::new(key, format!("{} is not PEM", path.display())));
            }
            Ok(pem)
        };
        match (&self.cert, &self.key, &self.ca) {
            (None, None, None) if !self.mutual => Ok(None),
            (Some(cert), Some(key), Some(ca)) => Ok(Some(Tls {
                identity: Identity::from_pem(read(cert, "tls.cert")?, read(key, "tls.key")?),
                ca: Certificate::from_pem(read(ca, "tls.ca")?),
                mutual: self.mutual,
            })),
            (None, _, _) => Err(SettingError::new("tls.cert", "TLS needs cert, key and ca")),
            (_, None, _) => Err(SettingError::new("tls.key", "TLS needs cert, key and ca")),
            (_, _, None) => Err(SettingError::new(
                "tls.ca",
                "TLS needs cert, key and ca (the CA that signs the cluster's certificates)",
            )),
        }
    }
}

impl Tls {
    /// Build from PEM bytes (tests, embedding).
    pub fn from_pem(cert: impl AsRef<[u8]>, key: impl AsRef<[u8]>, ca: impl AsRef<[u8]>, mutual: bool) -> Tls {
        Tls { identity: Identity::from_pem(cert, key), ca: Certificate::from_pem(ca), mutual }
    }

    /// Are client certificates required and presented?
    pub fn mutual(&self) -> bool {
        self.mutual
    }

    /// The servers' side: this certificate, and with `mutual` client certificates verified against `ca`.
    pub fn server(&self) -> ServerTlsConfig {
        let config = ServerTlsConfig::new().identity(self.identity.clone());
        if self.mutual { config.client_ca_root(self.ca.clone()) } else { config }
    }

    /// The clients' side: trust `ca`, and with `mutual` present this certificate.
    pub fn client(&self) -> ClientTlsConfig {
        let config = ClientTlsConfig::new().ca_certificate(self.ca.clone());
        if self.mutual { config.identity(self.identity.clone()) } else { config }
    }

    /// The URL scheme of servers that use this configuration.
    pub fn scheme(tls: Option<&Tls>) -> &'static str {
        if tls.is_some() { "https" } else { "http" }
    }
}

/// Why an address is no endpoint this process can dial.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// Not a URL at all.
    #[error("`{address}` is not a URL: {source}")]
    NotUrl {
        /// The address given.
        address: String,
        /// What the parser said.
        source: tonic::transport::Error,
    },
    /// An `https://` address, and no `[tls]` CA to verify it with.
    #[error("`{0}` is https:// but this process has no [tls] ca to trust")]
    NoTls(String),
    /// The TLS settings do not apply to the address.
    #[error("TLS for `{address}`: {source}")]
    Tls {
        /// The address given.
        address: String,
        /// What tonic said.
        source: tonic::transport::Error,
    },
}

/// An endpoint for `address`: `https://` ones speak TLS with `tls` (which they need), `http://` ones plain text.
pub fn endpoint(address: &str, tls: Option<&Tls>) -> Result<Endpoint, EndpointError> {
    let endpoint = Endpoint::from_shared(address.to_string())
        .map_err(|source| EndpointError::NotUrl { address: address.to_string(), source })?;
    if address.starts_with("https://") {
        let tls = tls.ok_or_else(|| EndpointError::NoTls(address.to_string()))?;
        return endpoint
            .tls_config(tls.client())
            .map_err(|source| EndpointError::Tls { address: address.to_string(), source });
    }
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No files: TLS off; a partial section or unreadable or non-PEM files name the key.
    #[test]
    fn loading_names_the_key() {
        assert!(TlsSection::default().load().unwrap().is_none());
        let dir = std::env::temp_dir().join(format!("ringleader-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not a certificate").unwrap();
        let cases = [
            (TlsSection { cert: Some(junk.clone()), ..Default::default() }, "tls.key"),
            (TlsSection { mutual: true, ..Default::default() }, "tls.cert"),
            (TlsSection { cert: Some(junk.clone()), key: Some(junk.clone()), ..Default::default() }, "tls.ca"),
            (
                TlsSection { cert: Some(junk.clone()), key: Some(junk.clone()), ca: Some(junk.clone()), mutual: true },
                "tls.cert",
            ),
            (
                TlsSection { cert: Some(dir.join("missing")), key: Some(junk.clone()), ca: Some(junk), mutual: false },
                "tls.cert",
            ),
        ];
        for (section, key) in cases {
            assert_eq!(section.load().unwrap_err().key, key, "{section:?}");
        }
        let no_tls = endpoint("https://127.0.0.1:1", None).unwrap_err();
        assert!(matches!(&no_tls, EndpointError::NoTls(a) if a == "https://127.0.0.1:1"), "{no_tls}");
        assert!(no_tls.to_string().contains("[tls]"));
        assert!(endpoint("http://127.0.0.1:1", None).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
