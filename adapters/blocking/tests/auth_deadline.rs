//! Deadlines the blocking adapter keeps whatever the server does with its bytes: `AuthSession`
//! ends within the authorization exchange deadline when the metadata URL a 401 names trickles
//! its TLS handshake or a TLS record of its body, and the MCP dial ends within the dial timeout
//! when the server trickles its TLS handshake (the authorization's requests take the MCP
//! traffic's path: the async exchange on smol, under one deadline).

use mcp_sansio_test_support::trickle;

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio::{Config, Error, ErrorKind, TransportErrorKind};
use mcp_sansio_blocking::auth::{AuthHook, AuthHttp, Authorization};
use mcp_sansio_blocking::{AddressPolicy, AuthSession, Client};
use mcp_sansio_net::{client_config_with_roots, SystemResolver};
use trickle::{Challenger, Trickle, Trickler};

const DEADLINE: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(4);

fn certificate() -> (Vec<u8>, Vec<u8>) {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    (ck.cert.der().to_vec(), ck.signing_key.serialize_der())
}

fn policy() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

/// Runs `f` on a thread; its result and how long it took, or `None` if it was still running
/// long after the deadline (the thread is then left behind: the test fails).
fn timed<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<(T, Duration)> {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let r = f();
        let _ = tx.send((r, start.elapsed()));
    });
    rx.recv_timeout(DEADLINE + GRACE * 3).ok()
}

struct NoBrowser;

impl AuthHook for NoBrowser {
    fn open_user_agent(&mut self, _url: &str) -> Result<String, String> {
        Err("no user agent in this test".into())
    }
}

fn connect_against(server: &Trickler, root: Option<&[u8]>) {
    let challenger = Challenger::start(server.metadata_url());
    let tls = match root {
        Some(der) => {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(rustls::pki_types::CertificateDer::from(der.to_vec()))
                .unwrap();
            client_config_with_roots(roots)
        }
        None => mcp_sansio_net::client_config(),
    };
    let http = AuthHttp::new(policy(), Arc::new(SystemResolver), tls).timeout(DEADLINE);
    let mut c = AuthConfig::new(
        challenger.url(),
        ClientSettings::new("tests", "http://127.0.0.1:9/callback"),
    );
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let auth = Authorization::new(c, http, Box::new(NoBrowser)).unwrap();
    let url = challenger.url();
    let Some((r, took)) = timed(move || {
        let client = Client::builder().policy(policy()).build();
        AuthSession::connect(&client, Config::new(&url).unwrap(), auth).map(|_| ())
    }) else {
        panic!(
            "the authorization was still running {:?} after its deadline",
            GRACE * 3
        );
    };
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed, "{e}");
    assert!(took < DEADLINE + GRACE, "took {took:?}: {e}");
    assert!(server.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}

#[test]
fn a_metadata_url_trickling_its_tls_handshake_ends_the_auth_session_within_the_deadline() {
    let server = Trickler::start(Trickle::Handshake);
    connect_against(&server, None);
}

#[test]
fn a_metadata_url_trickling_its_body_ends_the_auth_session_within_the_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::TlsBody {
        cert: cert.clone(),
        key,
    });
    connect_against(&server, Some(&cert));
}

#[test]
fn an_mcp_server_trickling_its_tls_handshake_fails_the_dial_at_its_timeout() {
    let server = Trickler::start(Trickle::Handshake);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let Some((r, took)) = timed(move || {
        let client = Client::builder()
            .policy(policy())
            .dial_timeout(DEADLINE)
            .build();
        client.connect(Config::new(&url).unwrap()).map(|_| ())
    }) else {
        panic!(
            "the dial was still running {:?} after its timeout",
            GRACE * 3
        );
    };
    let e = r.unwrap_err();
    assert!(
        matches!(&e, Error::Transport(t) if t.kind == TransportErrorKind::Connect
            && t.message.contains("timed out")),
        "{e:?}"
    );
    assert!(took < DEADLINE + GRACE, "took {took:?}");
    assert!(server.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}
