//! `AuthSession` on tokio ends within the authorization exchange deadline when the metadata URL
//! a 401 names trickles its TLS handshake or a TLS record of its body: the exchanges run on the
//! runtime under that deadline, not on a blocking thread that cannot be stopped. The runtime is
//! a current-thread one shut down with a short timeout, so a blocking task left behind cannot
//! hold the test either.

use mcp_sansio_test_support::adapter_tests::auth_deadline::{
    certificate, challenged_with, check_auth, policy, DEADLINE, GRACE,
};
use mcp_sansio_test_support::trickle;

use std::time::{Duration, Instant};

use mcp_sansio::Config;
use mcp_sansio_tokio::auth::AuthSessionError;
use mcp_sansio_tokio::{AuthSession, Client};
use trickle::{Trickle, Trickler};

/// Connects an `AuthSession` to an MCP endpoint whose 401 names `server`'s metadata URL; the
/// outcome and how long it took, or `None` if it was still running long after the deadline.
fn connect_against(
    server: &Trickler,
    root: Option<&[u8]>,
) -> Option<(Result<(), AuthSessionError>, Duration)> {
    connect_with(server, root, DEADLINE, None)
}

/// [`connect_against`], each exchange ending at `exchange`, the authorization's own deadline
/// (`AuthLimits::time`) `time` (the default without).
fn connect_with(
    server: &Trickler,
    root: Option<&[u8]>,
    exchange: Duration,
    time: Option<Duration>,
) -> Option<(Result<(), AuthSessionError>, Duration)> {
    let (challenger, auth) = challenged_with(server, root, exchange, time);
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
            Ok(r) => Some((r.map(|_| ()), start.elapsed())),
            Err(_) => None,
        }
    });
    rt.shutdown_timeout(Duration::from_millis(100));
    outcome
}

#[test]
fn a_metadata_url_trickling_its_tls_handshake_ends_the_auth_session_within_the_deadline() {
    let server = Trickler::start(Trickle::Handshake);
    check_auth(connect_against(&server, None), &server);
}

#[test]
fn a_metadata_url_trickling_its_body_ends_the_auth_session_within_the_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::TlsBody {
        cert: cert.clone(),
        key,
    });
    check_auth(connect_against(&server, Some(&cert)), &server);
}

/// The authorization's own deadline (`AuthLimits::time`) bounds each of its exchanges too: with
/// an exchange deadline of a minute and an authorization limit of one second, a metadata URL
/// that trickles its TLS handshake ends the session by the second.
#[test]
fn a_stalled_exchange_ends_the_auth_session_by_the_authorization_limit() {
    let server = Trickler::start(Trickle::Handshake);
    let long = Duration::from_secs(60);
    check_auth(connect_with(&server, None, long, Some(DEADLINE)), &server);
}
