//! The decisions of a session that authorizes ([`AuthRetry`]), checked without a network: which
//! refusals call for authorization, that an operation is retried once after authorizing and
//! never more, and how often the user agent may open after the session connected.
//!
//! The MCP specification's authorization (2025-11-25 and later), as the reference notes sum it
//! up: "401: authorization is required or the token is invalid or expired"; on a "403 with
//! `WWW-Authenticate: Bearer error=\"insufficient_scope\", …`" the client "does a step-up: it
//! re-authorizes with the union of its previous scopes and the challenged scopes, then retries
//! a limited number of times"; "A plain 403 can also mean an invalid `Origin` (transport)",
//! which no token cures.

use mcp_sansio::auth::{
    calls_for_authorization, AfterRefusal, Attempt, AuthRetry, UserAgent, MAX_STEP_UPS,
};
use mcp_sansio::Error;

fn refused(status: u16, challenge: Option<&str>) -> Error {
    Error::Authentication {
        status,
        challenge: challenge.map(str::to_owned),
    }
}

const SCOPE_CHALLENGE: &str = r#"Bearer error="insufficient_scope", scope="files:write""#;

/// "401: authorization is required or the token is invalid or expired": the first refusal
/// authorizes (with the server's challenge) and the operation is tried again.
#[test]
fn a_401_on_the_first_try_authorizes_then_retries() {
    let challenge = r#"Bearer resource_metadata="https://mcp.example/prm""#;
    for c in [Some(challenge), None] {
        assert_eq!(
            AuthRetry::new().after_failure(Attempt::First, &refused(401, c)),
            AfterRefusal::AuthorizeThenRetry {
                status: 401,
                challenge: c.map(str::to_owned),
            }
        );
    }
}

/// A 403 whose Bearer (or DPoP, RFC 9449 §7.1) challenge says `insufficient_scope` is a
/// step-up; a plain 403, or one with another error code, is not (RFC 6750 §3.1: only
/// `insufficient_scope` asks for a token with more scope).
#[test]
fn only_a_403_insufficient_scope_steps_up() {
    let retry = AuthRetry::new();
    let dpop = r#"DPoP error="insufficient_scope", algs="ES256""#;
    for c in [SCOPE_CHALLENGE, dpop] {
        assert!(calls_for_authorization(403, Some(c)), "{c}");
        assert_eq!(
            retry.after_failure(Attempt::First, &refused(403, Some(c))),
            AfterRefusal::AuthorizeThenRetry {
                status: 403,
                challenge: Some(c.to_owned()),
            }
        );
    }
    for c in [
        None,
        Some(r#"Bearer error="invalid_token""#),
        Some(r#"Basic realm="x", error="insufficient_scope""#),
        Some("Bearer error=\"insufficient_scope"),
    ] {
        assert!(!calls_for_authorization(403, c), "{c:?}");
        assert_eq!(
            retry.after_failure(Attempt::First, &refused(403, c)),
            AfterRefusal::Return,
            "{c:?}"
        );
    }
}

/// A refusal of the try after authorizing is returned as it is, whatever it says; so is every
/// error that is not a refusal calling for authorization.
#[test]
fn every_error_after_authorizing_and_every_other_error_is_returned() {
    let retry = AuthRetry::new();
    for e in [refused(401, None), refused(403, Some(SCOPE_CHALLENGE))] {
        assert_eq!(
            retry.after_failure(Attempt::AfterAuthorization, &e),
            AfterRefusal::Return,
            "{e}"
        );
    }
    for e in [
        Error::HttpStatus { status: 500 },
        Error::HttpStatus { status: 401 },
        Error::SessionExpired,
        Error::Redirect {
            status: 302,
            location: None,
        },
    ] {
        assert_eq!(
            retry.after_failure(Attempt::First, &e),
            AfterRefusal::Return,
            "{e}"
        );
    }
}

/// What an adapter does with the decisions, against a server that refuses every token: the
/// operation is tried twice and authorized once, then the refusal comes back ("retries a
/// limited number of times").
#[test]
fn an_operation_against_a_server_that_always_refuses_tries_twice() {
    for refusal in [refused(401, None), refused(403, Some(SCOPE_CHALLENGE))] {
        let retry = AuthRetry::new();
        let (mut tries, mut authorizations) = (0, 0);
        let mut attempt = Attempt::First;
        let returned = loop {
            tries += 1;
            assert!(tries <= 10, "the operation is retried without end");
            match retry.after_failure(attempt, &refusal) {
                AfterRefusal::AuthorizeThenRetry { .. } => {
                    authorizations += 1;
                    attempt = Attempt::AfterAuthorization;
                }
                AfterRefusal::Return => break refusal.clone(),
            }
        };
        assert_eq!((tries, authorizations), (2, 1));
        assert_eq!(returned.to_string(), refusal.to_string());
    }
}

/// Before the session connected the user agent is not limited (the first authorization is the
/// user's own); after, it opens at most `MAX_STEP_UPS` times, and the next authorization that
/// would open it is refused, naming the limit, as is every one after it.
#[test]
fn the_user_agent_opens_at_most_max_step_ups_times_after_connecting() {
    let mut retry = AuthRetry::new();
    for _ in 0..3 * MAX_STEP_UPS {
        assert_eq!(retry.open_user_agent(), UserAgent::Open);
    }
    assert_eq!(retry.user_agent_left(), None);
    retry.connected();
    assert_eq!(retry.user_agent_left(), Some(4));
    let opened = (0..3 * MAX_STEP_UPS)
        .take_while(|_| retry.open_user_agent() == UserAgent::Open)
        .count();
    assert_eq!(opened, 4);
    for _ in 0..2 {
        assert_eq!(retry.open_user_agent(), UserAgent::Refuse { limit: 4 });
    }
    assert_eq!(MAX_STEP_UPS, 4);
    assert_eq!(mcp_sansio::limits::MAX_STEP_UPS, MAX_STEP_UPS);
}

/// Connecting again after a step-up does not give the server a fresh allowance: otherwise a
/// server that refuses every second operation would send the user to the browser forever.
#[test]
fn connecting_again_does_not_restore_the_allowance() {
    let mut retry = AuthRetry::new();
    retry.connected();
    for _ in 0..3 {
        assert_eq!(retry.open_user_agent(), UserAgent::Open);
        retry.connected();
    }
    assert_eq!(retry.user_agent_left(), Some(1));
    assert_eq!(retry.open_user_agent(), UserAgent::Open);
    retry.connected();
    assert_eq!(retry.open_user_agent(), UserAgent::Refuse { limit: 4 });
}

/// An embedder's own limit replaces the allowance; `None` lifts it.
#[test]
fn an_explicit_limit_counts_down_from_itself() {
    let mut retry = AuthRetry::new();
    retry.connected();
    retry.limit_user_agent(Some(1));
    assert_eq!(retry.open_user_agent(), UserAgent::Open);
    assert_eq!(retry.open_user_agent(), UserAgent::Refuse { limit: 1 });
    retry.limit_user_agent(None);
    assert_eq!(retry.open_user_agent(), UserAgent::Open);
}
