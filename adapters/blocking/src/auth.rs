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

use mcp_sansio::{CallResult, Catalog, Config, Error};
use mcp_sansio_net::auth::authorization_needed;
pub use mcp_sansio_net::auth::{
    AuthHook, AuthHttp, AuthSessionError, Authorization, AuthorizeError, MAX_STEP_UPS,
};

use crate::{CallObserver, Client, Session};

/// A [`Session`] that authorizes when the server asks: see the [module docs](self).
pub struct AuthSession {
    client: Client,
    config: Config,
    auth: Authorization,
    session: Session,
}

impl std::fmt::Debug for AuthSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthSession")
            .field("server", &self.config.endpoint.origin())
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

impl AuthSession {
    /// Connects with `config`, sending the stored token if `auth` holds one (refreshed first
    /// when it has expired); on a 401 (or 403 `insufficient_scope`) authorizes once and
    /// connects again.
    pub fn connect(
        client: &Client,
        mut config: Config,
        mut auth: Authorization,
    ) -> Result<AuthSession, AuthSessionError> {
        if auth.bearer().is_some() && auth.token_expired() {
            // A failed refresh is not fatal: the server's 401 starts a full authorization.
            let _ = auth.refresh();
        }
        if let Some(token) = auth.bearer() {
            config.bearer_token = token.to_owned();
        }
        let session = match client.connect(config.clone()) {
            Ok(s) => s,
            Err(e) => {
                let Some((status, challenge)) = authorization_needed(&e) else {
                    return Err(e.into());
                };
                auth.authorize(status, challenge.as_deref())?;
                if let Some(token) = auth.bearer() {
                    config.bearer_token = token.to_owned();
                }
                client.connect(config.clone())?
            }
        };
        auth.accepted();
        auth.limit_user_agent(Some(MAX_STEP_UPS));
        Ok(AuthSession {
            client: client.clone(),
            config,
            auth,
            session,
        })
    }

    /// The session in use (it changes when the session authorizes again).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The authorization (its credentials).
    pub fn authorization(&self) -> &Authorization {
        &self.auth
    }

    /// After `e`: authorizes and reconnects when `e` calls for it, else gives `e` back. The new
    /// session is connected first; the old one is then ended, best effort.
    fn recover(&mut self, e: Error) -> Result<(), AuthSessionError> {
        let Some((status, challenge)) = authorization_needed(&e) else {
            return Err(e.into());
        };
        self.auth.authorize(status, challenge.as_deref())?;
        if let Some(token) = self.auth.bearer() {
            self.config.bearer_token = token.to_owned();
        }
        mcp_sansio_net::replace_authorized_session!(
            self.session,
            self.client.connect(self.config.clone()),
            []
        );
        Ok(())
    }

    /// Lists every tool; authorizes and retries once when the server asks.
    pub fn list_tools(&mut self) -> Result<Catalog, AuthSessionError> {
        let r = match self.session.list_tools() {
            Ok(c) => c,
            Err(e) => {
                self.recover(e)?;
                self.session.list_tools()?
            }
        };
        self.auth.accepted();
        Ok(r)
    }

    /// Calls tool `name`; authorizes and retries once when the server asks.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments_json: &[u8],
    ) -> Result<CallResult, AuthSessionError> {
        let r = match self.session.call_tool(name, arguments_json) {
            Ok(c) => c,
            Err(e) => {
                self.recover(e)?;
                self.session.call_tool(name, arguments_json)?
            }
        };
        self.auth.accepted();
        Ok(r)
    }

    /// Calls tool `name` with an observer; authorizes and retries once when the server asks.
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        let r = match self.session.call_tool_with(name, arguments_json, observer) {
            Ok(c) => c,
            Err(e) => {
                self.recover(e)?;
                self.session
                    .call_tool_with(name, arguments_json, observer)?
            }
        };
        self.auth.accepted();
        Ok(r)
    }

    /// Closes the session.
    pub fn close(self) -> Result<(), AuthSessionError> {
        Ok(self.session.close()?)
    }
}
