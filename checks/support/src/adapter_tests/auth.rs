//! The authorization tests of both adapters: `AuthSession` authorizes once on a 401 and retries the
//! operation, steps up on a 403 `insufficient_scope`, and never authorizes on a plain 403; the
//! session it replaces after authorizing is ended (a legacy session's `DELETE`) once the new one is
//! connected, even when that `DELETE` is refused, and kept when the new one fails. An adapter's
//! `tests/auth.rs` brings the protected server ([`crate::auth_server`]) and this module (as `auth`)
//! into scope, and declares the tests with [`crate::auth_tests!`], giving only how its runtime
//! drives a session. Its `tests/step_up.rs` declares the bound on step-ups
//! ([`crate::step_up_tests!`]) the same way.
#![allow(dead_code)]

use mcp_sansio::auth::{AuthConfig, ClientSettings, UrlPolicy};
use mcp_sansio_net::auth::{AuthHttp, Authorization};
use mcp_sansio_net::AddressPolicy;

use crate::auth_server::{AuthServer, Browser, Seen};

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

/// The positions in `seen` of the requests with this HTTP method and JSON-RPC method (`None`:
/// any or no body) that carried legacy session `sid`.
pub fn requests(seen: &[Seen], method: &str, rpc: Option<&str>, sid: &str) -> Vec<usize> {
    seen.iter()
        .enumerate()
        .filter(|(_, s)| {
            s.method == method
                && s.header("mcp-session-id") == Some(sid)
                && rpc.is_none_or(|m| s.rpc_method().as_deref() == Some(m))
        })
        .map(|(i, _)| i)
        .collect()
}

/// Declares the authorization tests of an adapter whose `Client` and `AuthSession` are in scope:
/// `#[$test]` is its test attribute, `async` is present when its operations are futures and
/// `[$($wait)*]` is what waits for an operation (`.await`, or nothing).
#[macro_export]
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
            // Replacing a modern (sessionless) session sends nothing to end it.
            assert_eq!(server.count("DELETE", "/mcp"), 0);
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_legacy_session_replaced_after_authorizing_is_ended_once_the_new_one_connects() {
            let server = AuthServer::start(Mode::Legacy);
            let client = Client::builder().policy(policy()).build();
            let b = browser();
            let opened = b.opened.clone();
            let config = Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap();
            assert_eq!(s.session().session_id(), Some("sess-1"));
            // tools/call needs `write`: the 403 insufficient_scope authorizes again, a new session
            // is connected and the call retried on it.
            let r = s.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert!(!r.is_error);
            assert_eq!(opened.load(Ordering::SeqCst), 2);
            assert_eq!(s.session().session_id(), Some("sess-2"));
            let seen = server.seen();
            let deleted = auth::requests(&seen, "DELETE", None, "sess-1");
            assert_eq!(deleted.len(), 1, "{seen:?}");
            // Ended with the token it was opened with.
            let delete = &seen[deleted[0]];
            assert_eq!(delete.header("authorization"), Some("Bearer tok-1"));
            // The new session was connected (its `initialized` sent) before the old one was ended.
            let initialized =
                auth::requests(&seen, "POST", Some("notifications/initialized"), "sess-2");
            assert_eq!(initialized.len(), 1, "{seen:?}");
            assert!(initialized[0] < deleted[0], "{seen:?}");
            // The call refused on the old session was retried on the new one, after the DELETE.
            assert_eq!(auth::requests(&seen, "POST", Some("tools/call"), "sess-1").len(), 1);
            let retried = auth::requests(&seen, "POST", Some("tools/call"), "sess-2");
            assert_eq!(retried.len(), 1, "{seen:?}");
            assert!(deleted[0] < retried[0], "{seen:?}");
            assert_eq!(server.live_sessions(), ["sess-2"]);
            s.close()$($wait)*.unwrap();
            assert!(server.live_sessions().is_empty());
            assert_eq!(server.count("DELETE", "/mcp"), 2);
        }

        #[$test]
        $($async)? fn a_refused_delete_of_the_replaced_session_does_not_fail_the_retry() {
            // Each authorization revokes the earlier tokens: the old session's DELETE gets a 401.
            let server = AuthServer::start(Mode::LegacyRevoking);
            let client = Client::builder().policy(policy()).build();
            let b = browser();
            let opened = b.opened.clone();
            let config = Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap();
            let r = s.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert!(!r.is_error);
            // The refused DELETE started no third authorization.
            assert_eq!(opened.load(Ordering::SeqCst), 2);
            assert_eq!(s.session().session_id(), Some("sess-2"));
            let seen = server.seen();
            let deleted = auth::requests(&seen, "DELETE", None, "sess-1");
            assert_eq!(deleted.len(), 1, "{seen:?}");
            assert_eq!(seen[deleted[0]].header("authorization"), Some("Bearer tok-1"));
            let retried = auth::requests(&seen, "POST", Some("tools/call"), "sess-2");
            assert_eq!(retried.len(), 1, "{seen:?}");
            assert!(deleted[0] < retried[0], "{seen:?}");
            // The server refused to end it: it is still live there.
            assert_eq!(server.live_sessions(), ["sess-1", "sess-2"]);
            let catalog = s.list_tools()$($wait)*.unwrap();
            assert_eq!(catalog.tools[0].name(), "echo");
            s.close()$($wait)*.unwrap();
            assert_eq!(server.live_sessions(), ["sess-1"]);
        }

        #[$test]
        $($async)? fn when_the_new_session_fails_to_connect_the_old_one_is_kept_and_not_ended() {
            let server = AuthServer::start(Mode::LegacyOneSession);
            let client = Client::builder().policy(policy()).build();
            let b = browser();
            let opened = b.opened.clone();
            let config = Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap();
            let e = s.call_tool("echo", b"{}")$($wait)*.unwrap_err();
            assert!(
                matches!(e, AuthSessionError::Mcp(Error::HttpStatus { status: 500 })),
                "{e:?}"
            );
            assert_eq!(opened.load(Ordering::SeqCst), 2);
            assert_eq!(s.session().session_id(), Some("sess-1"));
            assert_eq!(server.count("DELETE", "/mcp"), 0);
            assert_eq!(server.live_sessions(), ["sess-1"]);
            // Closing the kept session ends it.
            s.close()$($wait)*.unwrap();
            assert!(server.live_sessions().is_empty());
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

/// Declares the step-up bound test of an adapter whose `Client` and `AuthSession` are in scope, as
/// [`crate::auth_tests!`] does: a server that refuses every call once with 403
/// `insufficient_scope` (a new scope each time) and accepts it after the step-up sends the user to
/// the browser at most `MAX_STEP_UPS` times after the session connected; the next step-up fails
/// with `AuthorizeError::UserAgentLimit` before the user agent opens, for the rest of the session.
#[macro_export]
macro_rules! step_up_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        #[$test]
        $($async)? fn a_server_asking_for_a_step_up_on_every_call_gets_at_most_max_step_ups() {
            use ::mcp_sansio_net::auth::{AuthSessionError, AuthorizeError, MAX_STEP_UPS};
            use ::std::sync::atomic::Ordering;
            use $crate::adapter_tests::auth::{authorization, browser, policy};
            use $crate::auth_server::{AuthServer, Mode};

            let server = AuthServer::start(Mode::EscalatingScope);
            let client = Client::builder().policy(policy()).build();
            let b = browser();
            let opened = b.opened.clone();
            let config = ::mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, authorization(&server, b))$($wait)*
                .unwrap();
            assert_eq!(opened.load(Ordering::SeqCst), 1);
            for i in 1..=MAX_STEP_UPS as usize {
                let r = s.call_tool("echo", b"{}")$($wait)*.unwrap();
                assert!(!r.is_error);
                assert_eq!(opened.load(Ordering::SeqCst), 1 + i, "one step-up per call");
            }
            let e = s.call_tool("echo", b"{}")$($wait)*.unwrap_err();
            assert!(
                matches!(
                    e,
                    AuthSessionError::Authorization(AuthorizeError::UserAgentLimit { limit })
                        if limit == MAX_STEP_UPS
                ),
                "{e:?}"
            );
            assert_eq!(e.kind(), ::mcp_sansio::ErrorKind::AuthenticationFailed);
            assert!(e.to_string().contains("step-up limit"), "{e}");
            // The user agent was not opened for the refused step-up.
            assert_eq!(opened.load(Ordering::SeqCst), 1 + MAX_STEP_UPS as usize);
            assert_eq!(server.count("GET", "/authorize"), 1 + MAX_STEP_UPS as usize);
            // The limit holds for the rest of the session.
            let e = s.call_tool("echo", b"{}")$($wait)*.unwrap_err();
            assert!(
                matches!(
                    e,
                    AuthSessionError::Authorization(AuthorizeError::UserAgentLimit { .. })
                ),
                "{e:?}"
            );
            assert_eq!(opened.load(Ordering::SeqCst), 1 + MAX_STEP_UPS as usize);
            s.close()$($wait)*.unwrap();
        }
    };
}
