//! The authorization tests of both adapters: `AuthSession` authorizes once on a 401 and retries
//! the operation, steps up on a 403 `insufficient_scope`, and never authorizes on a plain 403. An
//! adapter's `tests/auth.rs` includes the protected server (`adapters/net/tests/auth_server`) as
//! `auth_server` and this file by `#[path]` (with `#[macro_use]`), and declares the tests with
//! [`auth_tests!`], giving only how its runtime drives a session.
#![allow(dead_code)]

use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio_net::auth::{AuthHttp, Authorization};
use mcp_sansio_net::AddressPolicy;

use crate::auth_server::{AuthServer, Browser};

/// The policy of the tests: loopback allowed.
pub fn policy() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

/// The authorization of `server`'s MCP endpoint, the user agent played by `browser`.
pub fn authorization(server: &AuthServer, browser: Browser) -> Authorization {
    let mut c = AuthConfig::new(
        server.url(),
        ClientSettings::new("tests", "http://127.0.0.1:9/callback"),
    );
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    Authorization::new(c, AuthHttp::with_policy(policy()), Box::new(browser)).unwrap()
}

/// A user agent that follows the authorization server's redirect.
pub fn browser() -> Browser {
    Browser::new(AuthHttp::with_policy(policy()))
}

/// The bearer token of an `AuthSession`'s authorization, however the adapter hands it out.
pub trait Bearer {
    /// The token, if any.
    fn token(&self) -> Option<&str>;
}

impl Bearer for &Authorization {
    fn token(&self) -> Option<&str> {
        self.bearer()
    }
}

impl Bearer for Option<&Authorization> {
    fn token(&self) -> Option<&str> {
        self.and_then(Authorization::bearer)
    }
}

/// Declares the authorization tests of an adapter whose `Client` and `AuthSession` are in scope:
/// `#[$test]` is its test attribute, `async` is present when its operations are futures and
/// `[$($wait)*]` is what waits for an operation (`.await`, or nothing).
macro_rules! auth_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        #[$test]
        $($async)? fn a_401_authorizes_once_then_lists_and_a_403_insufficient_scope_steps_up() {
            let server = AuthServer::start(Mode::Normal);
            let client = Client::builder().policy(policy()).build();
            let b = browser();
            let opened = b.opened.clone();
            let config = Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap();
            assert_eq!(opened.load(Ordering::SeqCst), 1);
            let catalog = s.list_tools()$($wait)*.unwrap();
            assert_eq!(catalog.tools[0].name(), "echo");
            // tools/call needs `write`: a 403 insufficient_scope steps up with the union of scopes.
            let r = s.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert!(!r.is_error);
            assert_eq!(opened.load(Ordering::SeqCst), 2);
            assert_eq!(server.authorization_scopes(), ["read", "read write"]);
            assert!(!server.bearer_leaked_to_authorization_server());
            assert_eq!(Bearer::token(&s.authorization()), Some("tok-2"));
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_plain_403_never_authorizes() {
            let server = AuthServer::start(Mode::Forbidden);
            let client = Client::builder().policy(policy()).build();
            let b = browser();
            let opened = b.opened.clone();
            let config = Config::new(&server.url()).unwrap();
            let e = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap_err();
            assert!(
                matches!(e, AuthSessionError::Mcp(Error::Authentication { status: 403, .. })),
                "{e:?}"
            );
            assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
            assert_eq!(opened.load(Ordering::SeqCst), 0);
            assert_eq!(server.count("GET", "/.well-known/oauth-protected-resource/mcp"), 0);
        }

        #[$test]
        $($async)? fn a_failed_authorization_is_an_authentication_failure() {
            let server = AuthServer::start(Mode::Normal);
            let client = Client::builder().policy(policy()).build();
            let mut b = browser();
            b.refuse = true;
            let config = Config::new(&server.url()).unwrap();
            let e = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap_err();
            assert!(
                matches!(e, AuthSessionError::Authorization(AuthorizeError::UserAgent(_))),
                "{e:?}"
            );
            assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
        }

        #[$test]
        $($async)? fn without_an_auth_session_a_401_is_the_error_it_always_was() {
            let server = AuthServer::start(Mode::Normal);
            let client = Client::builder().policy(policy()).build();
            let e = client.connect(Config::new(&server.url()).unwrap())$($wait)*.unwrap_err();
            assert!(matches!(e, Error::Authentication { status: 401, .. }), "{e:?}");
            assert_eq!(server.count("GET", "/.well-known/oauth-protected-resource/mcp"), 0);
        }
    };
}
