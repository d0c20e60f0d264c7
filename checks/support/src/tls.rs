//! Self-signed TLS for the in-test servers: a certificate for a name with the server
//! configuration presenting it and a client configuration trusting it, and a one-shot TLS
//! server for `as.test` that answers one request with given bytes, with the authorization
//! client and the metadata request that reach it (the authorization exchanges' TLS tests of
//! mcp-sansio-net and the tokio adapter).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::Arc;

use mcp_sansio::auth::{AuthExchange, AuthRequestId, Purpose};
use mcp_sansio::Endpoint;
use mcp_sansio_net::auth::AuthHttp;
use mcp_sansio_net::{AddressPolicy, StaticResolver};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A self-signed certificate for `name` and a server configuration (ring provider, safe default
/// protocol versions) presenting it.
pub fn self_signed(name: &str) -> (CertificateDer<'static>, Arc<rustls::ServerConfig>) {
    let ck = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
    let der = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(ck.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key)
        .unwrap();
    (der, Arc::new(server))
}

/// A server configuration for a self-signed certificate for `name`, and a client configuration
/// (the network crate's, with only that certificate as root) that trusts it.
pub fn pair(name: &str) -> (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>) {
    let (der, server) = self_signed(name);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der).unwrap();
    (server, mcp_sansio_net::client_config_with_roots(roots))
}

/// A TLS server for `as.test` on a loopback port that accepts one connection, reads the
/// request's head and answers `answer`, one byte per TLS record if `per_record` (each costing
/// 22 more raw bytes), closing without close_notify. Returns its port and a client
/// configuration that trusts it.
pub fn answer_once(answer: Vec<u8>, per_record: bool) -> (u16, Arc<rustls::ClientConfig>) {
    let (server, client) = pair("as.test");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((tcp, _)) = listener.accept() else {
            return;
        };
        let conn = rustls::ServerConnection::new(server).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut head = Vec::new();
        let mut b = [0u8; 512];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&b[..n]),
            }
        }
        if per_record {
            for byte in &answer {
                if tls.write_all(std::slice::from_ref(byte)).is_err() {
                    return;
                }
            }
        } else {
            let _ = tls.write_all(&answer);
        }
        let _ = tls.flush();
    });
    (port, client)
}

/// The authorization client of the [`answer_once`] tests: loopback allowed, `as.test` resolved
/// to 127.0.0.1, TLS by `tls`.
pub fn auth_http(tls: Arc<rustls::ClientConfig>) -> AuthHttp {
    AuthHttp::new(
        AddressPolicy::strict().allow_loopback(true),
        Arc::new(StaticResolver::new().with("as.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)])),
        tls,
    )
}

/// A `GET` of `as.test`'s authorization server metadata on `port` whose body may hold
/// `max_response_bytes`.
pub fn metadata_get(port: u16, max_response_bytes: usize) -> AuthExchange {
    let url = format!("https://as.test:{port}/.well-known/oauth-authorization-server");
    let endpoint = Endpoint::parse(&url).unwrap();
    AuthExchange {
        id: AuthRequestId(1),
        purpose: Purpose::ServerMetadata,
        url,
        request: mcp_sansio::wire::Request {
            method: mcp_sansio::wire::Method::Get,
            authority: endpoint.authority().into(),
            path: endpoint.target().into(),
            headers: Vec::new(),
            body: Vec::new(),
        },
        endpoint,
        max_response_bytes,
    }
}
