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
//! The authorization's own requests are sent as on every async runtime
//! ([`mcp_sansio_net::auth::async_auth::send`] on [`SmolThreads`]), under the `block_on` that runs the
//! operation: resolved and vetted once with the [`AuthHttp`]'s address policy and resolver, the
//! vetted addresses dialled and TLS run with its configuration, all within one deadline
//! ([`AuthHttp::timeout`]), every raw byte counted. The embedder's [`AuthHook`] opens the user
//! agent on the calling thread.
//!
//! After it connected, a session opens the user agent at most [`MAX_STEP_UPS`] more times (a
//! server can otherwise ask for a new authorization on every operation, alternating acceptance
//! and 403 `insufficient_scope`): the next authorization that would open it fails with
//! [`AuthorizeError::UserAgentLimit`] before opening it.
//!
//! Without an [`AuthSession`] nothing changes: a 401 is the `mcp_authentication_failed_error` it
//! always was.

use std::future::{ready, Future};

use mcp_sansio::auth::{AuthExchange, AuthResponse};
use mcp_sansio::{CallResult, Catalog, Config, Error, TransportError};
use mcp_sansio_net::auth::{self as net_auth, async_auth, lock_hook, AuthRuntime, SharedHook};
pub use mcp_sansio_net::auth::{
    AuthHook, AuthHttp, AuthSessionError, Authorization, AuthorizeError, MAX_STEP_UPS,
};
use mcp_sansio_net::runtime::smol::{OwnThread, SmolThreads};

use crate::{CallObserver, Client, Session};

/// A [`Session`] that authorizes when the server asks: see the [module docs](self). The shared
/// [`net_auth::AuthSession`], each operation a `block_on` ([`OwnThread::block_on`]) on the
/// calling thread.
#[derive(Debug)]
pub struct AuthSession(net_auth::AuthSession<StdAuth>);

/// The blocking side of an [`AuthSession`]: its sessions' operations and the user agent hook
/// block the calling thread (their futures are ready when first polled); an authorization
/// request is the async runtimes' exchange on [`SmolThreads`].
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

    fn resume_task_with(
        s: &mut Session,
        handle: &mcp_sansio::task::TaskHandle,
        observer: &mut dyn CallObserver,
    ) -> impl Future<Output = Result<CallResult, Error>> {
        ready(s.resume_task_with(handle, observer))
    }

    fn close(s: Session) -> impl Future<Output = Result<(), Error>> {
        ready(s.close())
    }

    fn send(
        http: &AuthHttp,
        req: &AuthExchange,
    ) -> impl Future<Output = Result<AuthResponse, TransportError>> {
        async_auth::send::<SmolThreads>(http, req)
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
        OwnThread::block_on(net_auth::AuthSession::connect(client, config, auth)).map(AuthSession)
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
        OwnThread::block_on(self.0.list_tools())
    }

    /// Calls tool `name`; authorizes and retries once when the server asks.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments_json: &[u8],
    ) -> Result<CallResult, AuthSessionError> {
        OwnThread::block_on(self.0.call_tool(name, arguments_json))
    }

    /// Calls tool `name` with an observer; authorizes and retries once when the server asks.
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        OwnThread::block_on(self.0.call_tool_with(name, arguments_json, observer))
    }

    /// Closes the session.
    pub fn close(self) -> Result<(), AuthSessionError> {
        OwnThread::block_on(self.0.close())
    }
}
