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
//! policy, resolver and TLS configuration as the [`Client`]; they run on the runtime's blocking
//! pool, as name resolution does. Without an [`AuthSession`] nothing changes: a 401 is the
//! `mcp_authentication_failed_error` it always was.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_sansio::auth::{AuthConfig, ClientSettings};
//! use mcp_sansio::Config;
//! use mcp_sansio_net::auth::{AuthHook, AuthHttp, Authorization};
//! use mcp_sansio_tokio::{AddressPolicy, AuthSession, Client};
//!
//! struct Browser;
//! impl AuthHook for Browser {
//!     fn open_user_agent(&mut self, url: &str) -> Result<String, String> {
//!         Err(format!("open {url} and paste the callback query"))
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let policy = AddressPolicy::strict();
//! let client = Client::builder().policy(policy).build();
//! let settings = ClientSettings::new("my client", "http://127.0.0.1:33418/callback");
//! let auth = Authorization::new(
//!     AuthConfig::new("https://mcp.example/mcp", settings),
//!     AuthHttp::with_policy(policy),
//!     Box::new(Browser),
//! )?;
//! let mut session = AuthSession::connect(&client, Config::new("https://mcp.example/mcp")?, auth).await?;
//! let catalog = session.list_tools().await?;
//! # Ok(()) }
//! ```

use mcp_sansio::{CallResult, Catalog, Config, Error};
use mcp_sansio_net::auth::authorization_needed;
pub use mcp_sansio_net::auth::{
    AuthHook, AuthHttp, AuthSessionError, Authorization, AuthorizeError,
};

use crate::{CallObserver, Client, Session};

/// A [`Session`] that authorizes when the server asks: see the [module docs](self).
#[derive(Debug)]
pub struct AuthSession {
    client: Client,
    config: Config,
    auth: Option<Authorization>,
    session: Session,
}

impl AuthSession {
    /// Connects with `config`, sending the stored token if `auth` holds one; on a 401 (or 403
    /// `insufficient_scope`) authorizes once and connects again.
    pub async fn connect(
        client: &Client,
        mut config: Config,
        mut auth: Authorization,
    ) -> Result<AuthSession, AuthSessionError> {
        if auth.bearer().is_some() && auth.token_expired() {
            // A failed refresh is not fatal: the server's 401 starts a full authorization.
            auth = refresh(auth).await?;
        }
        if let Some(token) = auth.bearer() {
            config.bearer_token = token.to_owned();
        }
        let first = client.connect(config.clone()).await;
        let (session, auth) = match first {
            Ok(s) => (s, auth),
            Err(e) => {
                let Some((status, challenge)) = authorization_needed(&e) else {
                    return Err(e.into());
                };
                let (auth, r) = authorize(auth, status, challenge).await;
                r?;
                let auth = auth.ok_or(AuthorizeError::Stalled)?;
                if let Some(token) = auth.bearer() {
                    config.bearer_token = token.to_owned();
                }
                (client.connect(config.clone()).await?, auth)
            }
        };
        let mut s = AuthSession {
            client: client.clone(),
            config,
            auth: Some(auth),
            session,
        };
        s.accepted();
        Ok(s)
    }

    /// The session in use (it changes when the session authorizes again).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The authorization (its credentials, to save elsewhere).
    pub fn authorization(&self) -> Option<&Authorization> {
        self.auth.as_ref()
    }

    fn accepted(&mut self) {
        if let Some(a) = &mut self.auth {
            a.accepted();
        }
    }

    /// After `e`: authorizes and reconnects when `e` calls for it, else gives `e` back. The new
    /// session is connected first; the old one is then ended, best effort.
    async fn recover(&mut self, e: Error) -> Result<(), AuthSessionError> {
        let Some((status, challenge)) = authorization_needed(&e) else {
            return Err(e.into());
        };
        let Some(auth) = self.auth.take() else {
            return Err(e.into());
        };
        let (auth, r) = authorize(auth, status, challenge).await;
        self.auth = auth;
        r?;
        if let Some(token) = self.auth.as_ref().and_then(|a| a.bearer()) {
            self.config.bearer_token = token.to_owned();
        }
        mcp_sansio_net::replace_authorized_session!(
            self.session,
            self.client.connect(self.config.clone()),
            [.await]
        );
        Ok(())
    }

    /// Lists every tool; authorizes and retries once when the server asks.
    pub async fn list_tools(&mut self) -> Result<Catalog, AuthSessionError> {
        let r = match self.session.list_tools().await {
            Ok(c) => c,
            Err(e) => {
                self.recover(e).await?;
                self.session.list_tools().await?
            }
        };
        self.accepted();
        Ok(r)
    }

    /// Calls tool `name`; authorizes and retries once when the server asks.
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments_json: &[u8],
    ) -> Result<CallResult, AuthSessionError> {
        let r = match self.session.call_tool(name, arguments_json).await {
            Ok(c) => c,
            Err(e) => {
                self.recover(e).await?;
                self.session.call_tool(name, arguments_json).await?
            }
        };
        self.accepted();
        Ok(r)
    }

    /// Calls tool `name` with an observer; authorizes and retries once when the server asks.
    pub async fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        let r = match self
            .session
            .call_tool_with(name, arguments_json, observer)
            .await
        {
            Ok(c) => c,
            Err(e) => {
                self.recover(e).await?;
                self.session
                    .call_tool_with(name, arguments_json, observer)
                    .await?
            }
        };
        self.accepted();
        Ok(r)
    }

    /// Closes the session.
    pub async fn close(self) -> Result<(), AuthSessionError> {
        Ok(self.session.close().await?)
    }
}

/// Runs one authorization on the blocking pool (its I/O and the user agent block); gives the
/// authorization back with the outcome (`None` only if the blocking task panicked).
async fn authorize(
    mut auth: Authorization,
    status: u16,
    challenge: Option<String>,
) -> (Option<Authorization>, Result<(), AuthSessionError>) {
    let joined = tokio::task::spawn_blocking(move || {
        let r = auth.authorize(status, challenge.as_deref());
        (auth, r)
    })
    .await;
    match joined {
        Ok((auth, r)) => (Some(auth), r.map_err(Into::into)),
        Err(_) => (None, Err(AuthorizeError::Stalled.into())),
    }
}

/// Refreshes the tokens on the blocking pool; a failed refresh leaves the tokens as they were
/// (the server's 401 then starts a full authorization).
async fn refresh(mut auth: Authorization) -> Result<Authorization, AuthSessionError> {
    tokio::task::spawn_blocking(move || {
        let _ = auth.refresh();
        auth
    })
    .await
    .map_err(|_| AuthorizeError::Stalled.into())
}
