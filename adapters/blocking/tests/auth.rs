//! `AuthSession` on the blocking adapter: a 401 authorizes once and the operation is retried; a 403
//! `insufficient_scope` steps up; a plain 403 never authorizes.

#[path = "../../net/tests/auth_server/mod.rs"]
mod auth_server;

use std::sync::atomic::Ordering;

use auth_server::{AuthServer, Browser, Mode};
use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio::{Config, Error, ErrorKind};
use mcp_sansio_blocking::auth::{AuthHttp, AuthSessionError, Authorization, AuthorizeError};
use mcp_sansio_blocking::{AddressPolicy, AuthSession, Client};

fn policy() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

fn authorization(server: &AuthServer, browser: Browser) -> Authorization {
    let mut c = AuthConfig::new(
        server.url(),
        ClientSettings::new("tests", "http://127.0.0.1:9/callback"),
    );
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    Authorization::new(c, AuthHttp::with_policy(policy()), Box::new(browser)).unwrap()
}

fn browser() -> Browser {
    Browser::new(AuthHttp::with_policy(policy()))
}

#[test]
fn a_401_authorizes_once_then_lists_and_a_403_insufficient_scope_steps_up() {
    let server = AuthServer::start(Mode::Normal);
    let client = Client::builder().policy(policy()).build();
    let b = browser();
    let opened = b.opened.clone();
    let mut s = AuthSession::connect(
        &client,
        Config::new(&server.url()).unwrap(),
        authorization(&server, b),
    )
    .unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    let catalog = s.list_tools().unwrap();
    assert_eq!(catalog.tools[0].name(), "echo");
    // tools/call needs `write`: a 403 insufficient_scope steps up with the union of scopes.
    let r = s.call_tool("echo", b"{}").unwrap();
    assert!(!r.is_error);
    assert_eq!(opened.load(Ordering::SeqCst), 2);
    assert_eq!(server.authorization_scopes(), ["read", "read write"]);
    assert!(!server.bearer_leaked_to_authorization_server());
    assert_eq!(s.authorization().bearer(), Some("tok-2"));
    s.close().unwrap();
}

#[test]
fn a_plain_403_never_authorizes() {
    let server = AuthServer::start(Mode::Forbidden);
    let client = Client::builder().policy(policy()).build();
    let b = browser();
    let opened = b.opened.clone();
    let e = AuthSession::connect(
        &client,
        Config::new(&server.url()).unwrap(),
        authorization(&server, b),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            AuthSessionError::Mcp(Error::Authentication { status: 403, .. })
        ),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
    assert_eq!(opened.load(Ordering::SeqCst), 0);
    assert_eq!(
        server.count("GET", "/.well-known/oauth-protected-resource/mcp"),
        0
    );
}

#[test]
fn a_failed_authorization_is_an_authentication_failure() {
    let server = AuthServer::start(Mode::Normal);
    let client = Client::builder().policy(policy()).build();
    let mut b = browser();
    b.refuse = true;
    let e = AuthSession::connect(
        &client,
        Config::new(&server.url()).unwrap(),
        authorization(&server, b),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            AuthSessionError::Authorization(AuthorizeError::UserAgent(_))
        ),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
}

#[test]
fn without_an_auth_session_a_401_is_the_error_it_always_was() {
    let server = AuthServer::start(Mode::Normal);
    let client = Client::builder().policy(policy()).build();
    let e = client
        .connect(Config::new(&server.url()).unwrap())
        .unwrap_err();
    assert!(
        matches!(e, Error::Authentication { status: 401, .. }),
        "{e:?}"
    );
    assert_eq!(
        server.count("GET", "/.well-known/oauth-protected-resource/mcp"),
        0
    );
}
