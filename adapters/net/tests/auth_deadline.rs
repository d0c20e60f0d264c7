//! Every authorization exchange ends within its deadline, whatever the server does with the
//! bytes: a metadata URL that trickles its TLS handshake, or a TLS record of its body, fails at
//! [`AuthHttp::timeout`] (plus a grace for a loaded machine), through the runner and through the
//! synchronous driver.

use mcp_sansio_test_support::adapter_tests::auth_deadline::{certificate, policy, DEADLINE, GRACE};
use mcp_sansio_test_support::trickle;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio::Endpoint;
use mcp_sansio_net::auth::{AuthHook, AuthHttp, Authorization};
use mcp_sansio_net::{client_config_with_roots, SystemResolver};
use trickle::{Challenger, Trickle, Trickler};

/// A runner for loopback trusting `root` (or the webpki roots), with the test deadline.
fn runner(root: Option<&[u8]>) -> AuthHttp {
    let policy = policy();
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
    AuthHttp::new(policy, Arc::new(SystemResolver), tls).timeout(DEADLINE)
}

/// Runs `f` on a thread; its result and how long it took, or `None` if it had not ended after
/// `DEADLINE` and three times the grace (the thread is then left behind: the test fails).
fn timed<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<(T, Duration)> {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let r = f();
        let _ = tx.send((r, start.elapsed()));
    });
    rx.recv_timeout(DEADLINE + GRACE * 3).ok()
}

fn get_metadata(http: AuthHttp, url: String) -> Option<(Result<(), String>, Duration)> {
    timed(move || {
        let e = Endpoint::parse(&url).unwrap();
        http.get(&e, &[], 65536)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

#[test]
fn a_metadata_url_trickling_its_tls_handshake_fails_at_the_exchange_deadline() {
    let server = Trickler::start(Trickle::Handshake);
    let Some((r, took)) = get_metadata(runner(None), server.metadata_url()) else {
        panic!(
            "the exchange was still running {:?} after its deadline",
            GRACE * 3
        );
    };
    let e = r.unwrap_err();
    assert!(e.contains("timed out"), "{e}");
    assert!(took < DEADLINE + GRACE, "took {took:?}");
    assert!(
        took >= DEADLINE - Duration::from_millis(50),
        "took {took:?}"
    );
}

#[test]
fn a_metadata_url_trickling_a_tls_record_of_its_body_fails_at_the_exchange_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::TlsBody {
        cert: cert.clone(),
        key,
    });
    let Some((r, took)) = get_metadata(runner(Some(&cert)), server.metadata_url()) else {
        panic!(
            "the exchange was still running {:?} after its deadline",
            GRACE * 3
        );
    };
    let e = r.unwrap_err();
    assert!(e.contains("timed out"), "{e}");
    assert!(took < DEADLINE + GRACE, "took {took:?}");
}

struct NoBrowser;

impl AuthHook for NoBrowser {
    fn open_user_agent(&mut self, _url: &str) -> Result<String, String> {
        Err("no user agent in this test".into())
    }
}

/// The synchronous driver (the blocking adapter's `AuthSession` runs it) against an MCP
/// endpoint whose 401 names a trickling metadata URL: the authorization fails, each of its
/// exchanges within the deadline.
fn authorize_against(server: &Trickler, root: Option<&[u8]>) {
    let challenger = Challenger::start(server.metadata_url());
    let mut config = AuthConfig::new(
        challenger.url(),
        ClientSettings::new("tests", "http://127.0.0.1:9/callback"),
    );
    config.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let mut auth = Authorization::new(config, runner(root), Box::new(NoBrowser)).unwrap();
    let challenge = format!("Bearer resource_metadata=\"{}\"", server.metadata_url());
    let Some((r, took)) = timed(move || {
        auth.authorize(401, Some(&challenge))
            .map_err(|e| e.to_string())
    }) else {
        panic!(
            "the authorization was still running {:?} after its deadline",
            GRACE * 3
        );
    };
    let e = r.unwrap_err();
    assert!(took < DEADLINE + GRACE, "took {took:?}: {e}");
    assert!(server.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}

#[test]
fn an_authorization_whose_metadata_url_trickles_its_handshake_fails_within_the_deadline() {
    let server = Trickler::start(Trickle::Handshake);
    authorize_against(&server, None);
}

#[test]
fn an_authorization_whose_metadata_url_trickles_its_body_fails_within_the_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::TlsBody {
        cert: cert.clone(),
        key,
    });
    authorize_against(&server, Some(&cert));
}
