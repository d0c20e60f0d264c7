//! HTTPS against in-test servers with self-signed certificates on 127.0.0.1.

mod support;

use std::net::IpAddr;
use std::sync::Arc;

use mcp_sansio::{Config, Error};
use mcp_sansio::{TransportError, TransportErrorKind};
use mcp_sansio_net::{AddressPolicy, StaticResolver};
use mcp_sansio_tokio::Client;
use rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};
use support::*;

/// A self-signed certificate for `names` and a server presenting it.
async fn tls_server(names: &[&str]) -> (Server, CertificateDer<'static>) {
    tls_server_with(names, mcp).await
}

/// A self-signed certificate for `names` and a server presenting it that answers with `handler`.
async fn tls_server_with(
    names: &[&str],
    handler: impl Fn(&Req) -> Reply + Send + Sync + 'static,
) -> (Server, CertificateDer<'static>) {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let rcgen::CertifiedKey { cert, key_pair } = rcgen::generate_simple_self_signed(names).unwrap();
    let der = cert.der().clone();
    let key = PrivatePkcs8KeyDer::from(key_pair.serialize_der());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key.into())
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    (Server::start_tls(acceptor, handler).await, der)
}

/// A loopback client that trusts exactly `root` and knows `localhost`.
fn trusting(root: Option<CertificateDer<'static>>) -> Client {
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let mut builder = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .resolver(StaticResolver::new().with("localhost", &[loopback]));
    if let Some(root) = root {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(root).unwrap();
        builder = builder.tls_config(mcp_sansio_net::client_config_with_roots(roots));
    }
    builder.build()
}

fn tls_failure(e: &Error) -> bool {
    matches!(
        e,
        Error::Transport(TransportError {
            kind: TransportErrorKind::Tls,
            ..
        })
    )
}

#[tokio::test]
async fn handshake_list_and_call_over_https() {
    let (server, root) = tls_server(&["localhost"]).await;
    let client = trusting(Some(root));
    let url = format!("https://localhost:{}/mcp", server.port());
    let mut s = client.connect(Config::new(&url).unwrap()).await.unwrap();
    assert_eq!(s.version(), "2026-07-28");
    let names: Vec<String> = s
        .list_tools()
        .await
        .unwrap()
        .tools
        .into_iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["echo", "add"]);
    assert!(!s.call_tool("echo", b"{}").await.unwrap().is_error);
    s.close().await.unwrap();
    assert_eq!(
        server.methods(),
        ["server/discover", "tools/list", "tools/call"]
    );
    assert_eq!(server.accepted(), 1, "the TLS socket is kept alive");
    let host = &server.requests()[0].head;
    assert!(
        host.contains(&format!("localhost:{}", server.port())),
        "{host}"
    );
}

#[tokio::test]
async fn an_ip_literal_is_verified_as_an_ip_address() {
    let (server, root) = tls_server(&["127.0.0.1"]).await;
    let client = trusting(Some(root));
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let mut s = client.connect(Config::new(&url).unwrap()).await.unwrap();
    assert_eq!(s.list_tools().await.unwrap().tools.len(), 2);
}

#[tokio::test]
async fn a_certificate_for_another_name_fails_the_handshake() {
    let (server, root) = tls_server(&["other.test"]).await;
    let client = trusting(Some(root));
    let url = format!("https://localhost:{}/mcp", server.port());
    let e = client
        .connect(Config::new(&url).unwrap())
        .await
        .unwrap_err();
    assert!(tls_failure(&e), "{e}");
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn an_untrusted_certificate_fails_the_handshake() {
    let (server, _) = tls_server(&["localhost"]).await;
    let client = trusting(None); // webpki roots only
    let url = format!("https://localhost:{}/mcp", server.port());
    let e = client
        .connect(Config::new(&url).unwrap())
        .await
        .unwrap_err();
    assert!(tls_failure(&e), "{e}");
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn added_root_certificates_are_trusted_besides_the_webpki_roots() {
    let (server, root) = tls_server(&["localhost"]).await;
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .resolver(StaticResolver::new().with("localhost", &[loopback]))
        .add_root_certificates([root])
        .build();
    let url = format!("https://localhost:{}/mcp", server.port());
    let mut s = client.connect(Config::new(&url).unwrap()).await.unwrap();
    assert_eq!(s.list_tools().await.unwrap().tools.len(), 2);
    s.close().await.unwrap();
    assert_eq!(server.methods(), ["server/discover", "tools/list"]);
}

/// Sessions connecting at once to an `https` origin whose server chooses HTTP/1.1 (ALPN) and
/// closes every connection unanswered, so that no socket is ever parked: one dials for HTTP/2,
/// the others wait on its dial, and once it learns HTTP/1.1 they all take HTTP/1.1 and meet the
/// server's close, rather than dialling for HTTP/2 again one after another until some give up
/// with "the origin's HTTP/2 connection kept closing" (a `Connect` error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_waiting_on_a_dial_that_chose_http1_take_http1() {
    let (server, root) = tls_server_with(&["127.0.0.1"], |_| Reply::Close).await;
    let client = trusting(Some(root));
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move { client.connect(Config::new(&url).unwrap()).await })
        })
        .collect();
    for t in tasks {
        let e = t.await.unwrap().unwrap_err();
        assert!(
            matches!(
                e,
                Error::Transport(TransportError {
                    kind: TransportErrorKind::Io,
                    ..
                })
            ),
            "{e}"
        );
    }
}
