//! Step-up authorizations are bounded per session on tokio's `AuthSession`: a server that
//! refuses every call once with 403 `insufficient_scope` (a new scope each time) and accepts it
//! after the step-up sends the user to the browser at most `MAX_STEP_UPS` times after the
//! session connected; the next step-up fails with `AuthorizeError::UserAgentLimit` before the
//! user agent opens, for the rest of the session.

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::auth_server;

use std::sync::atomic::Ordering;

use auth::{authorization, browser, policy};
use auth_server::{AuthServer, Mode};
use mcp_sansio::{Config, ErrorKind};
use mcp_sansio_tokio::auth::{AuthSessionError, AuthorizeError, MAX_STEP_UPS};
use mcp_sansio_tokio::{AuthSession, Client};

#[tokio::test]
async fn a_server_asking_for_a_step_up_on_every_call_gets_at_most_max_step_ups() {
    let server = AuthServer::start(Mode::EscalatingScope);
    let client = Client::builder().policy(policy()).build();
    let b = browser();
    let opened = b.opened.clone();
    let config = Config::new(&server.url()).unwrap();
    let mut s = AuthSession::connect(&client, config, authorization(&server, b))
        .await
        .unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    for i in 1..=MAX_STEP_UPS as usize {
        let r = s.call_tool("echo", b"{}").await.unwrap();
        assert!(!r.is_error);
        assert_eq!(opened.load(Ordering::SeqCst), 1 + i, "one step-up per call");
    }
    let e = s.call_tool("echo", b"{}").await.unwrap_err();
    assert!(
        matches!(
            e,
            AuthSessionError::Authorization(AuthorizeError::UserAgentLimit { limit })
                if limit == MAX_STEP_UPS
        ),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
    assert!(e.to_string().contains("step-up limit"), "{e}");
    // The user agent was not opened for the refused step-up.
    assert_eq!(opened.load(Ordering::SeqCst), 1 + MAX_STEP_UPS as usize);
    assert_eq!(server.count("GET", "/authorize"), 1 + MAX_STEP_UPS as usize);
    // The limit holds for the rest of the session.
    let e = s.call_tool("echo", b"{}").await.unwrap_err();
    assert!(
        matches!(
            e,
            AuthSessionError::Authorization(AuthorizeError::UserAgentLimit { .. })
        ),
        "{e:?}"
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1 + MAX_STEP_UPS as usize);
    s.close().await.unwrap();
}
