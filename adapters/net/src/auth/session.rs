//! The session that authorizes when the server asks, written once for every runtime
//! ([`AuthSession`]).

use std::future::Future;
use std::time::Duration;

use mcp_sansio::auth::{AfterRefusal, Attempt, AuthExchange, AuthResponse};
use mcp_sansio::task::TaskHandle;
use mcp_sansio::{CallResult, Catalog, Config, Error, TransportError};

#[cfg(doc)]
use crate::auth::MAX_STEP_UPS;
use crate::auth::{
    AuthHttp, AuthSessionError, AuthStep, Authorization, AuthorizeError, SharedHook, SharedRefresh,
};
use crate::session::io::CallObserver;
#[cfg(doc)]
use mcp_sansio::auth::AuthRetry;

/// What an [`AuthSession`] needs of its adapter.
pub trait AuthRuntime {
    /// The adapter's client.
    type Client: Clone + Send + Sync;
    /// The adapter's session.
    type Session: Send;

    /// Connects a session with `config`.
    fn connect(
        client: &Self::Client,
        config: Config,
    ) -> impl Future<Output = Result<Self::Session, Error>> + Send;

    /// Lists every tool.
    fn list_tools(s: &mut Self::Session) -> impl Future<Output = Result<Catalog, Error>> + Send;

    /// Calls tool `name`, reporting to `observer`.
    fn call_tool_with(
        s: &mut Self::Session,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> impl Future<Output = Result<CallResult, Error>> + Send;

    /// Resumes the task of `handle` (the adapter session's `resume_task_with`), reporting to
    /// `observer`: how a call whose task was created goes on after the session authorized again.
    fn resume_task_with(
        s: &mut Self::Session,
        handle: &TaskHandle,
        observer: &mut dyn CallObserver,
    ) -> impl Future<Output = Result<CallResult, Error>> + Send;

    /// Closes the session.
    fn close(s: Self::Session) -> impl Future<Output = Result<(), Error>> + Send;

    /// Sends one authorization request within [`AuthHttp::exchange_timeout`].
    fn send(
        http: &AuthHttp,
        req: &AuthExchange,
    ) -> impl Future<Output = Result<AuthResponse, TransportError>> + Send;

    /// Opens the user agent through the embedder's hook (which blocks by contract).
    fn open_user_agent(
        hook: SharedHook,
        url: String,
    ) -> impl Future<Output = Result<String, String>> + Send;

    /// Waits `d` while another session refreshes the same grant ([`refresh`]). By default the
    /// calling thread sleeps (right for a runtime whose operations block it); an async runtime
    /// sleeps on its timer.
    fn pause(d: Duration) -> impl Future<Output = ()> + Send {
        std::thread::sleep(d);
        std::future::ready(())
    }
}

/// Refreshes the tokens of `auth` through its token store ([`crate::auth::tokens`]): one
/// refresh per grant among the sessions sharing the store, the others waiting
/// ([`AuthRuntime::pause`], at most the authorization's deadline) and taking its tokens.
pub async fn refresh<R: AuthRuntime>(auth: &mut Authorization) -> Result<(), AuthorizeError> {
    loop {
        match auth.begin_shared_refresh() {
            SharedRefresh::Adopted => return Ok(()),
            SharedRefresh::Wait(d) => R::pause(d).await,
            SharedRefresh::Refresh(ticket) => {
                let result = drive::<R>(auth).await;
                return auth.end_shared_refresh(ticket, result);
            }
            SharedRefresh::Failed(e) => return Err(e),
        }
    }
}

/// Drives the authorization `auth` started to its end: every request through
/// [`AuthRuntime::send`] with [`Authorization::exchange_http`] (so no exchange outlives the
/// authorization's own deadline), the user agent through [`AuthRuntime::open_user_agent`].
pub async fn drive<R: AuthRuntime>(auth: &mut Authorization) -> Result<(), AuthorizeError> {
    loop {
        match auth.next_step() {
            AuthStep::Send(req) => {
                // Within the exchange's deadline and what the authorization's own has left.
                let http = auth.exchange_http();
                let result = R::send(&http, &req).await;
                auth.response(&req, result);
            }
            AuthStep::OpenUserAgent(url) => {
                let result = R::open_user_agent(auth.hook(), url).await;
                auth.user_agent(result);
            }
            AuthStep::Done(result) => return result,
        }
    }
}

/// The session that authorizes, written once for every runtime ([`AuthSession`]). What it does
/// when the MCP server refuses is the core's decision ([`AuthRetry`], consulted after every
/// failed try): on a 401 (or 403 with `error="insufficient_scope"`) it runs the OAuth 2.1
/// authorization once through its [`Authorization`], connects again with the new bearer token
/// and retries the operation; a plain 403 never triggers authorization; a second refusal after
/// authorizing is returned as it is.
///
/// A 401 to a session that holds a token, expired or not (a server may revoke a token before
/// its expiry, and the client's clock may be behind the server's), refreshes it through the
/// token store first ([`refresh`]: one refresh per grant among the sessions sharing it, so two
/// executors never spend one refresh token) and tries again with the new token; if that
/// refresh fails, or the try after it is refused again, the authorization runs as above (once).
///
/// When it connects again, the new session is connected first; only once it is connected is
/// the session it replaces closed (best effort: its error is ignored, since the server may no
/// longer accept the old token). If the new connection fails, the old session is kept as it was
/// and the error returned. After it connected, a session opens the user agent at most
/// [`MAX_STEP_UPS`] more times.
///
/// The adapter says how to connect, run an operation, send an authorization request and open
/// the user agent on its runtime ([`AuthRuntime`]).
pub struct AuthSession<R: AuthRuntime> {
    client: R::Client,
    config: Config,
    auth: Authorization,
    session: R::Session,
    /// The current operation's last refusal was answered by a refresh through the token store:
    /// the next refusal authorizes.
    refreshed: bool,
}

/// Answers a refusal that calls for authorization (`status`, `challenge`): a 401 while a token
/// is held refreshes it through the token store, once per operation (`refreshed`), and the next
/// try may still authorize ([`Attempt::First`]); otherwise, or when that refresh fails, the
/// core's authorization runs ([`Attempt::AfterAuthorization`]).
async fn answer_refusal<R: AuthRuntime>(
    auth: &mut Authorization,
    refreshed: &mut bool,
    status: u16,
    challenge: Option<&str>,
) -> Result<Attempt, AuthorizeError> {
    if status == 401 && auth.has_token() && !*refreshed {
        *refreshed = true;
        if refresh::<R>(auth).await.is_ok() {
            return Ok(Attempt::First);
        }
    }
    auth.begin_authorize(status, challenge)?;
    drive::<R>(auth).await?;
    Ok(Attempt::AfterAuthorization)
}

impl<R: AuthRuntime> std::fmt::Debug for AuthSession<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthSession")
            .field("server", &self.config.endpoint.origin())
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

impl<R: AuthRuntime> AuthSession<R> {
    /// Connects with `config`, sending the stored token if `auth` holds one (refreshed first
    /// when it has expired); on a 401 (or 403 `insufficient_scope`) authorizes once and
    /// connects again.
    pub async fn connect(
        client: &R::Client,
        mut config: Config,
        mut auth: Authorization,
    ) -> Result<Self, AuthSessionError> {
        if auth.has_token() && auth.token_expired() {
            // A failed refresh is not fatal: the server's 401 starts a full authorization.
            let _ = refresh::<R>(&mut auth).await;
        }
        auth.present(&mut config);
        let mut attempt = Attempt::First;
        let mut refreshed = false;
        let session = loop {
            let e = match R::connect(client, config.clone()).await {
                Ok(s) => break s,
                Err(e) => e,
            };
            match auth.retry().after_failure(attempt, &e) {
                AfterRefusal::AuthorizeThenRetry { status, challenge } => {
                    attempt = answer_refusal::<R>(
                        &mut auth,
                        &mut refreshed,
                        status,
                        challenge.as_deref(),
                    )
                    .await?;
                    auth.present(&mut config);
                }
                AfterRefusal::Return => return Err(e.into()),
            }
        };
        auth.accepted();
        auth.session_connected();
        Ok(AuthSession {
            client: client.clone(),
            config,
            auth,
            session,
            refreshed: false,
        })
    }

    /// The session in use (it changes when the session authorizes again).
    pub fn session(&self) -> &R::Session {
        &self.session
    }

    /// The authorization (its credentials, to save elsewhere).
    pub fn authorization(&self) -> &Authorization {
        &self.auth
    }

    /// After try `attempt` of an operation failed with `e`, carries out the core's decision
    /// ([`AuthRetry::after_failure`]): authorizes and reconnects, and gives the next try, or
    /// gives `e` back. The new session is connected first; the old one is then closed, best
    /// effort.
    async fn recover(&mut self, attempt: Attempt, e: Error) -> Result<Attempt, AuthSessionError> {
        let (status, challenge) = match self.auth.retry().after_failure(attempt, &e) {
            AfterRefusal::AuthorizeThenRetry { status, challenge } => (status, challenge),
            AfterRefusal::Return => return Err(e.into()),
        };
        // A 401 while a token is held (expired or not) refreshes through the token store (one
        // refresh per grant among the sessions sharing it); any other refusal, a refresh that
        // fails, or a refusal again after it, authorizes as the core says.
        let next = answer_refusal::<R>(
            &mut self.auth,
            &mut self.refreshed,
            status,
            challenge.as_deref(),
        )
        .await?;
        self.auth.present(&mut self.config);
        let fresh = R::connect(&self.client, self.config.clone()).await?;
        let old = std::mem::replace(&mut self.session, fresh);
        let _ = R::close(old).await;
        self.auth.session_connected();
        Ok(next)
    }

    /// Lists every tool; authorizes and retries once when the server asks.
    pub async fn list_tools(&mut self) -> Result<Catalog, AuthSessionError> {
        let mut attempt = Attempt::First;
        self.refreshed = false;
        let r = loop {
            match R::list_tools(&mut self.session).await {
                Ok(c) => break c,
                Err(e) => attempt = self.recover(attempt, e).await?,
            }
        };
        self.auth.accepted();
        Ok(r)
    }

    /// Calls tool `name`; authorizes and retries once when the server asks.
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments_json: &[u8],
    ) -> Result<CallResult, AuthSessionError> {
        self.call_tool_with(name, arguments_json, &mut crate::session::NoObserver)
            .await
    }

    /// Calls tool `name` with an observer; authorizes and retries once when the server asks.
    ///
    /// A call whose answer created a task (SEP-2663) is not called again after the session
    /// authorized: a second `tools/call` would start a second task. The retry resumes the task
    /// from the last handle the observer got ([`AuthRuntime::resume_task_with`]), under the new
    /// token: a handle is bound to the principal (the grant, `AuthContext::principal`), so a
    /// token that expired while the task ran and was refreshed goes on polling the same task.
    pub async fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        let mut keeper = HandleKeeper {
            inner: observer,
            handle: None,
        };
        let mut attempt = Attempt::First;
        self.refreshed = false;
        let r = loop {
            let result = match keeper.handle.clone() {
                None => {
                    R::call_tool_with(&mut self.session, name, arguments_json, &mut keeper).await
                }
                Some(handle) => R::resume_task_with(&mut self.session, &handle, &mut keeper).await,
            };
            match result {
                Ok(c) => break c,
                Err(e) => attempt = self.recover(attempt, e).await?,
            }
        };
        self.auth.accepted();
        Ok(r)
    }

    /// Runs `op` on the session (a task resume, poll or cancel of the adapter's session, say);
    /// authorizes and retries once when the server asks, as [`list_tools`](Self::list_tools)
    /// does. A retry runs `op` again on the new session, with the new token: a task handle is
    /// bound to the principal it was created for (`AuthContext::principal`: the grant), so a
    /// handle resumed after a refresh or a new authorization of the same grant is accepted; one
    /// of another principal is refused (`TaskError::Handle`), never presented under its
    /// credential.
    pub async fn run<T>(
        &mut self,
        mut op: impl AsyncFnMut(&mut R::Session) -> Result<T, Error>,
    ) -> Result<T, AuthSessionError> {
        let mut attempt = Attempt::First;
        self.refreshed = false;
        let r = loop {
            match op(&mut self.session).await {
                Ok(c) => break c,
                Err(e) => attempt = self.recover(attempt, e).await?,
            }
        };
        self.auth.accepted();
        Ok(r)
    }

    /// Closes the session.
    pub async fn close(self) -> Result<(), AuthSessionError> {
        Ok(R::close(self.session).await?)
    }
}

/// Passes everything a call reports on to the embedder's observer, and keeps the last task
/// handle, from which a call that authorized again resumes its task.
struct HandleKeeper<'a> {
    inner: &'a mut dyn CallObserver,
    handle: Option<TaskHandle>,
}

impl CallObserver for HandleKeeper<'_> {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.inner.progress(progress, total, message);
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.inner.input_required(requests)
    }

    fn task_handle(&mut self, handle: &TaskHandle) {
        self.handle = Some(handle.clone());
        self.inner.task_handle(handle);
    }

    fn task_status(&mut self, status: mcp_sansio::task::TaskStatus, message: Option<&str>) {
        self.inner.task_status(status, message);
    }

    fn server_request(
        &mut self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Option<Vec<u8>> {
        self.inner.server_request(method, params)
    }
}
