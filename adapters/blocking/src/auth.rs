//! Sessions that authorize: when the MCP server answers 401 (or 403 with
//! `error="insufficient_scope"`), an [`AuthSession`] runs the OAuth 2.1 authorization once
//! through its [`Authorization`] (discovery, registration, the user agent through the
//! embedder's [`AuthHook`], the token), connects again with the new bearer token and retries the
//! operation. A plain 403 never triggers authorization; a second refusal after authorizing is
//! returned as it is.
//!
//! When it connects again, the new session is connected first; only once it is connected is
//! the session it replaces ended with [`Session::close`] (`DELETE` with the session id of a
//! legacy session; nothing on the wire for a modern one). That close is best effort: its error
//! is ignored, since the server may no longer accept the old token, and it waits no longer than
//! the close budget before the operation is retried. If the new connection fails, the old
//! session is kept as it was and the error returned.
//!
//! The authorization's own requests go through an [`AuthHttp`] built with the same address
//! policy, resolver and TLS configuration as the [`Client`], on the calling thread, and take the
//! MCP traffic's path to the network: resolve and vet once, dial a vetted address within the
//! deadline, TLS driven by hand with the same configuration, the core's HTTP/1.1 codec, every raw
//! byte counted, and one deadline ([`AuthHttp::timeout`]) checked around every socket
//! operation, so a server that trickles its handshake or its body is cut off at that deadline.
//!
//! After it connected, a session opens the user agent at most [`MAX_STEP_UPS`] more times (a
//! server can otherwise ask for a new authorization on every operation, alternating acceptance
//! and 403 `insufficient_scope`): the next authorization that would open it fails with
//! [`AuthorizeError::UserAgentLimit`] before opening it.
//!
//! Without an [`AuthSession`] nothing changes: a 401 is the `mcp_authentication_failed_error` it
//! always was.

use std::future::{ready, Future};

use mcp_sansio::auth::{AuthRequest, AuthResponse};
use mcp_sansio::{CallResult, Catalog, Config, Error, TransportError};
use mcp_sansio_net::auth::{lock_hook, SharedHook};
pub use mcp_sansio_net::auth::{
    AuthHook, AuthHttp, AuthSessionError, Authorization, AuthorizeError, MAX_STEP_UPS,
};
use mcp_sansio_net::authsession::{self, AuthRuntime};
use mcp_sansio_net::runtime::block_on;

use crate::{CallObserver, Client, Session};

/// A [`Session`] that authorizes when the server asks: see the [module docs](self). The shared
/// [`authsession::AuthSession`], run on the calling thread.
#[derive(Debug)]
pub struct AuthSession(authsession::AuthSession<StdAuth>);

/// The blocking side of an [`AuthSession`]: every step runs on the calling thread, so its
/// futures are ready when first polled.
#[derive(Debug)]
pub struct StdAuth;

impl AuthRuntime for StdAuth {
    type Client = Client;
    type Session = Session;

    fn connect(client: &Client, config: Config) -> impl Future<Output = Result<Session, Error>> {
        ready(client.connect(config))
    }

    fn list_tools(s: &mut Session) -> impl Future<Output = Result<Catalog, Error>> {
        ready(s.list_tools())
    }

    fn call_tool_with(
        s: &mut Session,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> impl Future<Output = Result<CallResult, Error>> {
        ready(s.call_tool_with(name, arguments_json, observer))
    }

    fn close(s: Session) -> impl Future<Output = Result<(), Error>> {
        ready(s.close())
    }

    fn send(
        http: &AuthHttp,
        req: &AuthRequest,
    ) -> impl Future<Output = Result<AuthResponse, TransportError>> {
        ready(http.send(req))
    }

    fn open_user_agent(
        hook: SharedHook,
        url: String,
    ) -> impl Future<Output = Result<String, String>> {
        ready(lock_hook(&hook).open_user_agent(&url))
    }
}

impl AuthSession {
    /// Connects with `config`, sending the stored token if `auth` holds one (refreshed first
    /// when it has expired); on a 401 (or 403 `insufficient_scope`) authorizes once and
    /// connects again.
    pub fn connect(
        client: &Client,
        config: Config,
        auth: Authorization,
    ) -> Result<AuthSession, AuthSessionError> {
        block_on(authsession::AuthSession::connect(client, config, auth)).map(AuthSession)
    }

    /// The session in use (it changes when the session authorizes again).
    pub fn session(&self) -> &Session {
        self.0.session()
    }

    /// The authorization (its credentials).
    pub fn authorization(&self) -> &Authorization {
        self.0.authorization()
    }

    /// Lists every tool; authorizes and retries once when the server asks.
    pub fn list_tools(&mut self) -> Result<Catalog, AuthSessionError> {
        block_on(self.0.list_tools())
    }

    /// Calls tool `name`; authorizes and retries once when the server asks.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments_json: &[u8],
    ) -> Result<CallResult, AuthSessionError> {
        block_on(self.0.call_tool(name, arguments_json))
    }

    /// Calls tool `name` with an observer; authorizes and retries once when the server asks.
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        block_on(self.0.call_tool_with(name, arguments_json, observer))
    }

    /// Closes the session.
    pub fn close(self) -> Result<(), AuthSessionError> {
        block_on(self.0.close())
    }
}
