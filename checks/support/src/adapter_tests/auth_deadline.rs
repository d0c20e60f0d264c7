//! The deadline tests of the adapters whose operations can be run to their end on a thread
//! (blocking, and smol with `.block()`): an `AuthSession` ends within the authorization exchange
//! deadline when the metadata URL a 401 names trickles its TLS handshake or a TLS record of its
//! body, and the MCP dial ends within the dial timeout when the server trickles its TLS
//! handshake. An adapter's `tests/auth_deadline.rs` brings its `Client` and `AuthSession` into
//! scope and declares the tests with [`crate::auth_deadline_tests!`].
#![allow(dead_code)]

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio::{Error, ErrorKind, TransportErrorKind};
use mcp_sansio_net::auth::{AuthHook, AuthHttp, AuthSessionError, Authorization};
use mcp_sansio_net::{client_config_with_roots, AddressPolicy, SystemResolver};

pub use crate::trickle::{Challenger, Trickle, Trickler};

/// The authorization exchange deadline and the dial timeout of the tests.
pub const DEADLINE: Duration = Duration::from_secs(1);
/// How much later than [`DEADLINE`] an operation may end.
pub const GRACE: Duration = Duration::from_secs(4);

/// A self-signed certificate for `127.0.0.1` and its key (DER).
pub fn certificate() -> (Vec<u8>, Vec<u8>) {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    (ck.cert.der().to_vec(), ck.key_pair.serialize_der())
}

/// The policy of the tests: loopback allowed.
pub fn policy() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

/// Runs `f` on a thread; its result and how long it took, or `None` if it was still running
/// long after the deadline (the thread is then left behind: the test fails).
pub fn timed<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<(T, Duration)> {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let r = f();
        let _ = tx.send((r, start.elapsed()));
    });
    rx.recv_timeout(DEADLINE + GRACE * 3).ok()
}

/// The runner of the authorization exchanges: loopback allowed, trusting `root` (the system's
/// roots without one), each exchange ending at `exchange`.
pub fn auth_http(root: Option<&[u8]>, exchange: Duration) -> AuthHttp {
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
    AuthHttp::new(policy(), Arc::new(SystemResolver), tls).timeout(exchange)
}

/// A user agent that cannot be opened.
pub struct NoBrowser;

impl AuthHook for NoBrowser {
    fn open_user_agent(&mut self, _url: &str) -> Result<String, String> {
        Err("no user agent in this test".into())
    }
}

/// An exchange deadline far beyond [`DEADLINE`] + [`GRACE`] * 3: an operation that waits for it
/// is still running when the tests stop waiting.
pub const LONG: Duration = Duration::from_secs(60);

/// An MCP endpoint whose 401 names `server`'s metadata URL, and an authorization for it whose
/// exchanges trust `root` (the system's roots without one) and end at [`DEADLINE`].
pub fn challenged(server: &Trickler, root: Option<&[u8]>) -> (Challenger, Authorization) {
    challenged_with(server, root, DEADLINE, None)
}

/// [`challenged`], each exchange ending at `exchange`, the authorization's own deadline
/// ([`AuthLimits::time`](mcp_sansio::auth::AuthLimits::time)) `time` (the default without).
pub fn challenged_with(
    server: &Trickler,
    root: Option<&[u8]>,
    exchange: Duration,
    time: Option<Duration>,
) -> (Challenger, Authorization) {
    let challenger = Challenger::start(server.metadata_url());
    let http = auth_http(root, exchange);
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
    (challenger, auth)
}

/// The `AuthSession` failed as an authentication failure within the deadline, after `server`
/// accepted its socket.
pub fn check_auth(outcome: Option<(Result<(), AuthSessionError>, Duration)>, server: &Trickler) {
    let Some((r, took)) = outcome else {
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

/// The MCP dial failed as out of time within its timeout, after `server` accepted its socket.
pub fn check_dial(outcome: Option<(Result<(), Error>, Duration)>, server: &Trickler) {
    let Some((r, took)) = outcome else {
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

/// Declares the deadline tests of an adapter whose `Client` and `AuthSession` are in scope and
/// whose operations `[$($wait)*]` runs to their end on the calling thread (nothing, or
/// `.block()`).
#[macro_export]
macro_rules! auth_deadline_tests {
    ([$($wait:tt)*]) => {
        fn auth_session_against(
            server: &$crate::trickle::Trickler,
            root: Option<&[u8]>,
        ) {
            use $crate::adapter_tests::auth_deadline::{challenged, check_auth, policy, timed};
            let (challenger, auth) = challenged(server, root);
            let url = challenger.url();
            let outcome = timed(move || {
                let client = Client::builder().policy(policy()).build();
                let config = ::mcp_sansio::Config::new(&url).unwrap();
                AuthSession::connect(&client, config, auth)$($wait)*.map(|_| ())
            });
            check_auth(outcome, server);
        }

        /// The authorization's own deadline (`AuthLimits::time`) bounds each of its exchanges
        /// too: with an exchange deadline of a minute and an authorization limit of one second,
        /// a metadata URL that trickles its TLS handshake ends the session by the second.
        #[test]
        fn a_stalled_exchange_ends_the_auth_session_by_the_authorization_limit() {
            use $crate::adapter_tests::auth_deadline::{
                challenged_with, check_auth, policy, timed, DEADLINE, LONG,
            };
            use $crate::trickle::{Trickle, Trickler};
            let server = Trickler::start(Trickle::Handshake);
            let (challenger, auth) = challenged_with(&server, None, LONG, Some(DEADLINE));
            let url = challenger.url();
            let outcome = timed(move || {
                let client = Client::builder().policy(policy()).build();
                let config = ::mcp_sansio::Config::new(&url).unwrap();
                AuthSession::connect(&client, config, auth)$($wait)*.map(|_| ())
            });
            check_auth(outcome, &server);
        }

        #[test]
        fn a_metadata_url_trickling_its_tls_handshake_ends_the_auth_session_within_the_deadline() {
            use $crate::trickle::{Trickle, Trickler};
            let server = Trickler::start(Trickle::Handshake);
            auth_session_against(&server, None);
        }

        #[test]
        fn a_metadata_url_trickling_its_body_ends_the_auth_session_within_the_deadline() {
            use $crate::trickle::{Trickle, Trickler};
            let (cert, key) = $crate::adapter_tests::auth_deadline::certificate();
            let server = Trickler::start(Trickle::TlsBody {
                cert: cert.clone(),
                key,
            });
            auth_session_against(&server, Some(&cert));
        }

        #[test]
        fn an_mcp_server_trickling_its_tls_handshake_fails_the_dial_at_its_timeout() {
            use $crate::adapter_tests::auth_deadline::{check_dial, policy, timed, DEADLINE};
            use $crate::trickle::{Trickle, Trickler};
            let server = Trickler::start(Trickle::Handshake);
            let url = format!("https://127.0.0.1:{}/mcp", server.port());
            let outcome = timed(move || {
                let client = Client::builder()
                    .policy(policy())
                    .dial_timeout(DEADLINE)
                    .build();
                let config = ::mcp_sansio::Config::new(&url).unwrap();
                client.connect(config)$($wait)*.map(|_| ())
            });
            check_dial(outcome, &server);
        }
    };
}
