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
//! policy, resolver and TLS configuration as the [`Client`], and take the MCP traffic's path to
//! the network on the runtime: the name is resolved and vetted on the blocking pool as the MCP
//! dial does, then the vetted address is dialled and the exchange (tokio-rustls as for the MCP
//! traffic, every raw byte counted below it, the core's `Http1Socket` reading the response) runs
//! as a task-free future under the exchange's
//! deadline ([`AuthHttp::timeout`]), so a server that trickles its handshake or its body is cut
//! off at that deadline and dropping the operation cancels the exchange. Only the embedder's
//! [`AuthHook::open_user_agent`], which blocks by contract, runs on the blocking pool.
//!
//! After it connected, a session opens the user agent at most [`MAX_STEP_UPS`] more times (a
//! server can otherwise ask for a new authorization on every operation, alternating acceptance
//! and 403 `insufficient_scope`): the next authorization that would open it fails with
//! [`AuthorizeError::UserAgentLimit`] before opening it.
//!
//! Without an [`AuthSession`] nothing changes: a 401 is the `mcp_authentication_failed_error` it
//! always was.
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

pub use mcp_sansio_net::auth::{
    AuthHook, AuthHttp, AuthSessionError, Authorization, AuthorizeError, MAX_STEP_UPS,
};

#[allow(unused_imports)] // the module docs name them
use crate::{Client, Session};

/// A [`Session`] that authorizes when the server asks: see the [module docs](self).
pub type AuthSession = mcp_sansio_net::auth::AuthSession<TokioAuth>;

/// The tokio side of an [`AuthSession`]: sessions of this crate, authorization requests through
/// [`send`], the user agent (the embedder's blocking hook) on the blocking pool.
pub type TokioAuth = mcp_sansio_net::auth::AsyncAuth<crate::Tokio>;

/// One authorization exchange on tokio, within [`AuthHttp::exchange_timeout`] counted from its
/// start ([`mcp_sansio_net::auth::async_auth::send`]).
pub async fn send(
    http: &AuthHttp,
    req: &mcp_sansio::auth::AuthExchange,
) -> Result<mcp_sansio::auth::AuthResponse, mcp_sansio::TransportError> {
    mcp_sansio_net::auth::async_auth::send::<crate::Tokio>(http, req).await
}
