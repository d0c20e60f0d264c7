//! The rustls client configuration: ring provider, webpki roots, ALPN `http/1.1` (or `h2` first,
//! [`with_h2_alpn`], where the adapter speaks HTTP/2); the TLS sessions a client keeps per origin
//! for resumption ([`OriginSessions`]); and extra roots read from PEM files, for servers behind a
//! private certificate authority.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use crate::lock::lock;

/// The default client configuration, trusting the Mozilla roots of `webpki-roots`.
pub fn client_config() -> Arc<ClientConfig> {
    client_config_with_roots(webpki_root_store())
}

/// A client configuration trusting exactly `roots` (e.g. a test CA).
pub fn client_config_with_roots(roots: RootCertStore) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// `config` offering ALPN `h2` then `http/1.1`: the configuration of a client that speaks
/// HTTP/2 where the server chooses it (the adapter reads the negotiated protocol after the
/// handshake).
pub fn with_h2_alpn(config: &ClientConfig) -> Arc<ClientConfig> {
    let mut config = config.clone();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}

/// The origins whose TLS sessions a client keeps at most ([`OriginSessions`]); the origin dialled
/// least recently is forgotten first. rustls's default store keeps as many server names.
pub const RESUMABLE_ORIGINS: usize = 32;

/// The TLS sessions rustls keeps of one origin: up to 8 TLS 1.3 tickets and one TLS 1.2
/// session (rustls's memory store, sized for one server).
const SESSIONS_PER_ORIGIN: usize = 8;

/// The TLS configurations of a client's dials when the client builds its own configuration:
/// a copy of it per origin (scheme, host and port), each with a session store of its own, which
/// the origin's HTTP/1.1 and HTTP/2 dials share.
///
/// rustls keys the sessions of one store by the TLS server name alone, so two origins on one
/// host (two ports) would take each other's tickets: each resumption would offer one origin's
/// ticket to the other, which cannot resume it (a full handshake, and a ticket shown to a server
/// it was not issued by). Kept per origin, the dials of a client make one full handshake per
/// origin and resume after it, for as long as the server honours its tickets and the origin is
/// among the [`RESUMABLE_ORIGINS`] last dialled.
#[derive(Debug)]
pub struct OriginSessions {
    base: Arc<ClientConfig>,
    origins: Mutex<VecDeque<OriginConfigs>>,
}

#[derive(Debug)]
struct OriginConfigs {
    origin: String,
    http1: Arc<ClientConfig>,
    h2: Arc<ClientConfig>,
}

impl OriginSessions {
    /// Per-origin copies of `base` (ALPN `http/1.1`; the HTTP/2 copies offer `h2` first).
    pub fn new(base: Arc<ClientConfig>) -> OriginSessions {
        OriginSessions {
            base,
            origins: Mutex::new(VecDeque::new()),
        }
    }

    /// The configuration of a dial of `origin` ([`mcp_sansio::Endpoint::origin`]), offering
    /// `h2` first if `h2`.
    pub fn config(&self, origin: &str, h2: bool) -> Arc<ClientConfig> {
        let mut origins = lock(&self.origins);
        let at = origins.iter().position(|o| o.origin == origin);
        let entry = match at.and_then(|i| origins.remove(i)) {
            Some(entry) => entry,
            None => {
                let mut http1 = ClientConfig::clone(&self.base);
                http1.resumption = Resumption::in_memory_sessions(SESSIONS_PER_ORIGIN);
                OriginConfigs {
                    origin: origin.to_owned(),
                    h2: with_h2_alpn(&http1),
                    http1: Arc::new(http1),
                }
            }
        };
        let config = if h2 { &entry.h2 } else { &entry.http1 }.clone();
        origins.push_back(entry);
        while origins.len() > RESUMABLE_ORIGINS {
            origins.pop_front();
        }
        config
    }

    /// The origins whose sessions are kept now.
    #[cfg(test)]
    fn origins(&self) -> usize {
        lock(&self.origins).len()
    }
}

/// Whether the ALPN protocol a handshake negotiated is HTTP/2.
pub fn is_h2(alpn: Option<&[u8]>) -> bool {
    alpn == Some(b"h2")
}

/// A client configuration trusting the webpki roots and `extra` (certificates of private
/// certificate authorities, e.g. from [`read_ca_certificates`]). A certificate that cannot be a
/// trust anchor is skipped; [`read_ca_certificates`] refuses such a file up front.
pub fn client_config_with_extra_roots(extra: &[CertificateDer<'static>]) -> Arc<ClientConfig> {
    let mut roots = webpki_root_store();
    roots.add_parsable_certificates(extra.iter().cloned());
    client_config_with_roots(roots)
}

fn webpki_root_store() -> RootCertStore {
    RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

/// Why a file of CA certificates cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaCertError {
    /// The file could not be read.
    #[error("cannot read the CA certificate file {}: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's description.
        message: String,
    },
    /// The file holds no `CERTIFICATE` PEM section.
    #[error("the CA certificate file {} holds no PEM certificate", path.display())]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// A PEM section is malformed (bad base64, no end line, …).
    #[error("the CA certificate file {} is not valid PEM: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A certificate cannot serve as a trust anchor (its DER cannot be parsed as X.509).
    #[error(
        "certificate {index} of the CA certificate file {} cannot be a trust anchor: {reason}",
        path.display()
    )]
    Unusable {
        /// The file.
        path: PathBuf,
        /// The certificate's position in the file, from 1.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Reads the PEM certificates of `path` (sections other than `CERTIFICATE`, such as a private key,
/// are ignored) and checks that each can be a trust anchor.
pub fn read_ca_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, CaCertError> {
    let pem = std::fs::read(path).map_err(|e| CaCertError::Read {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    parse_ca_certificates(&pem).map_err(|e| match e {
        PemProblem::None => CaCertError::NoCertificate {
            path: path.to_owned(),
        },
        PemProblem::Malformed(reason) => CaCertError::Malformed {
            path: path.to_owned(),
            reason,
        },
        PemProblem::Unusable(index, reason) => CaCertError::Unusable {
            path: path.to_owned(),
            index,
            reason,
        },
    })
}

enum PemProblem {
    None,
    Malformed(String),
    Unusable(usize, String),
}

fn parse_ca_certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, PemProblem> {
    let mut certs = Vec::new();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| PemProblem::Malformed(e.to_string()))?;
        if let Err(e) = RootCertStore::empty().add(cert.clone()) {
            return Err(PemProblem::Unusable(certs.len() + 1, e.to_string()));
        }
        certs.push(cert);
    }
    if certs.is_empty() {
        return Err(PemProblem::None);
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_http11_only() {
        let c = super::client_config();
        assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }

    #[test]
    fn the_h2_configuration_offers_h2_first_and_keeps_the_roots() {
        let c = super::client_config();
        let h2 = with_h2_alpn(&c);
        assert_eq!(
            h2.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        assert_eq!(
            c.alpn_protocols,
            vec![b"http/1.1".to_vec()],
            "the original is untouched"
        );
        assert!(is_h2(Some(b"h2")));
        assert!(!is_h2(Some(b"http/1.1")));
        assert!(!is_h2(None));
    }

    /// Each origin has a store of its own, shared by its HTTP/1.1 and HTTP/2 configurations;
    /// the least recently dialled origin is forgotten past the bound.
    #[test]
    fn every_origin_has_its_own_session_store_and_the_book_is_bounded() {
        let sessions = OriginSessions::new(client_config());
        let a1 = sessions.config("https://a.test", false);
        let a2 = sessions.config("https://a.test", true);
        let b = sessions.config("https://a.test:8443", false);
        assert_eq!(a1.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert_eq!(
            a2.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        assert!(Arc::ptr_eq(&a1, &sessions.config("https://a.test", false)));
        assert!(!Arc::ptr_eq(&a1, &b));
        for i in 0..RESUMABLE_ORIGINS + 5 {
            sessions.config(&format!("https://o{i}.test"), false);
            assert!(sessions.origins() <= RESUMABLE_ORIGINS);
        }
        assert_eq!(sessions.origins(), RESUMABLE_ORIGINS);
        assert!(
            !Arc::ptr_eq(&a1, &sessions.config("https://a.test", false)),
            "a.test was forgotten"
        );
    }

    fn temp_file(test: &str, name: &str, contents: &[u8]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-sansio-net-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    #[test]
    fn a_file_that_is_not_a_usable_ca_is_a_typed_error() {
        let missing = Path::new("/nonexistent-dir/ca.pem");
        assert!(matches!(
            read_ca_certificates(missing),
            Err(CaCertError::Read { path, .. }) if path == missing
        ));
        let empty = temp_file("bad-ca", "empty.pem", b"just some text\n");
        assert_eq!(
            read_ca_certificates(&empty),
            Err(CaCertError::NoCertificate {
                path: empty.clone()
            })
        );
        let bad = temp_file(
            "bad-ca",
            "bad.pem",
            b"-----BEGIN CERTIFICATE-----\n!!!not base64!!!\n-----END CERTIFICATE-----\n",
        );
        assert!(matches!(
            read_ca_certificates(&bad),
            Err(CaCertError::Malformed { .. })
        ));
        // Valid PEM whose DER is not a certificate.
        let junk = temp_file(
            "bad-ca",
            "junk.pem",
            b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n",
        );
        let e = read_ca_certificates(&junk).unwrap_err();
        assert!(matches!(e, CaCertError::Unusable { index: 1, .. }), "{e:?}");
        assert!(e.to_string().contains("junk.pem"), "{e}");
        std::fs::remove_dir_all(empty.parent().unwrap()).unwrap();
    }

    #[test]
    fn every_certificate_of_a_file_is_read_and_other_sections_are_ignored() {
        let ca = |name: &str| {
            let key = rcgen::KeyPair::generate().unwrap();
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, name);
            (params.self_signed(&key).unwrap(), key)
        };
        let (one, key) = ca("one");
        let (two, _) = ca("two");
        let pem = format!("{}{}{}", one.pem(), key.serialize_pem(), two.pem());
        let path = temp_file("two-cas", "cas.pem", pem.as_bytes());
        let certs = read_ca_certificates(&path).unwrap();
        assert_eq!(certs, [one.der().clone(), two.der().clone()]);
        let with = client_config_with_extra_roots(&certs);
        assert_eq!(with.alpn_protocols, vec![b"http/1.1".to_vec()]);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
