//! Every authorization exchange ends within its deadline, whatever the server does with the
//! bytes: a metadata URL that trickles its TLS handshake, or a TLS record of its body, fails at
//! [`AuthHttp::timeout`] (plus a grace for a loaded machine), through the runner and through the
//! synchronous driver.

use mcp_sansio_test_support::adapter_tests::auth_deadline::{
    auth_http, certificate, challenged, timed, DEADLINE, GRACE,
};
use mcp_sansio_test_support::trickle;

use std::time::Duration;

use mcp_sansio::Endpoint;
use mcp_sansio_net::auth::AuthHttp;
use trickle::{Trickle, Trickler};

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
    let Some((r, took)) = get_metadata(auth_http(None, DEADLINE), server.metadata_url()) else {
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
    let Some((r, took)) = get_metadata(auth_http(Some(&cert), DEADLINE), server.metadata_url())
    else {
        panic!(
            "the exchange was still running {:?} after its deadline",
            GRACE * 3
        );
    };
    let e = r.unwrap_err();
    assert!(e.contains("timed out"), "{e}");
    assert!(took < DEADLINE + GRACE, "took {took:?}");
}

/// The synchronous driver (the blocking adapter's `AuthSession` runs it) against an MCP
/// endpoint whose 401 names a trickling metadata URL: the authorization fails, each of its
/// exchanges within the deadline.
fn authorize_against(server: &Trickler, root: Option<&[u8]>) {
    let (_challenger, mut auth) = challenged(server, root);
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
