//! `AuthSession` on tokio ends within the authorization exchange deadline when the metadata URL
//! a 401 names trickles its TLS handshake or a TLS record of its body: the exchanges run on the
//! runtime under that deadline, not on a blocking thread that cannot be stopped. The runtime is
//! a current-thread one shut down with a short timeout, so a blocking task left behind cannot
//! hold the test either.

use mcp_sansio_test_support::adapter_tests::auth_deadline::{certificate, policy, DEADLINE, GRACE};
use mcp_sansio_test_support::trickle;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio::{Config, ErrorKind};
use mcp_sansio_net::{client_config_with_roots, SystemResolver};
use mcp_sansio_tokio::auth::{AuthHook, AuthHttp, AuthSessionError, Authorization};
use mcp_sansio_tokio::{AuthSession, Client};
use trickle::{Challenger, Trickle, Trickler};

struct NoBrowser;

impl AuthHook for NoBrowser {
    fn open_user_agent(&mut self, _url: &str) -> Result<String, String> {
        Err("no user agent in this test".into())
    }
}

/// Connects an `AuthSession` to an MCP endpoint whose 401 names `server`'s metadata URL; the
/// error and how long it took, or `None` if it was still running long after the deadline.
fn connect_against(server: &Trickler, root: Option<&[u8]>) -> Option<(AuthSessionError, Duration)> {
    connect_with(server, root, DEADLINE, None)
}

/// [`connect_against`], each exchange ending at `exchange`, the authorization's own deadline
/// (`AuthLimits::time`) `time` (the default without).
fn connect_with(
    server: &Trickler,
    root: Option<&[u8]>,
    exchange: Duration,
    time: Option<Duration>,
) -> Option<(AuthSessionError, Duration)> {
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
    let http = AuthHttp::new(policy(), Arc::new(SystemResolver), tls).timeout(exchange);
    let mut c = AuthConfig::new(
        challenger.url(),
        ClientSettings::new("tests", "http://127.0.0.1:9/callback"),
    );
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    if let Some(time) = time {
        c.limits.time = time;
    }
    let auth = Authorization::new(c, http, Box::new(NoBrowser)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = challenger.url();
    let outcome = rt.block_on(async move {
        let client = Client::builder().policy(policy()).build();
        let start = Instant::now();
        let connecting = AuthSession::connect(&client, Config::new(&url).unwrap(), auth);
        match tokio::time::timeout(DEADLINE + GRACE * 3, connecting).await {
            Ok(r) => Some((r.unwrap_err(), start.elapsed())),
            Err(_) => None,
        }
    });
    rt.shutdown_timeout(Duration::from_millis(100));
    outcome
}

fn check(outcome: Option<(AuthSessionError, Duration)>, server: &Trickler) {
    let Some((e, took)) = outcome else {
        panic!(
            "the authorization was still running {:?} after its deadline",
            GRACE * 3
        );
    };
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed, "{e}");
    assert!(took < DEADLINE + GRACE, "took {took:?}: {e}");
    assert!(server.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}

#[test]
fn a_metadata_url_trickling_its_tls_handshake_ends_the_auth_session_within_the_deadline() {
    let server = Trickler::start(Trickle::Handshake);
    check(connect_against(&server, None), &server);
}

#[test]
fn a_metadata_url_trickling_its_body_ends_the_auth_session_within_the_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::TlsBody {
        cert: cert.clone(),
        key,
    });
    check(connect_against(&server, Some(&cert)), &server);
}

/// The authorization's own deadline (`AuthLimits::time`) bounds each of its exchanges too: with
/// an exchange deadline of a minute and an authorization limit of one second, a metadata URL
/// that trickles its TLS handshake ends the session by the second.
#[test]
fn a_stalled_exchange_ends_the_auth_session_by_the_authorization_limit() {
    let server = Trickler::start(Trickle::Handshake);
    let long = Duration::from_secs(60);
    check(connect_with(&server, None, long, Some(DEADLINE)), &server);
}
