//! Authorization over the guard: the HTTP runner for the core's authorization requests
//! ([`AuthHttp`]) and the driver of an [`Authorizer`] ([`Authorization`]) that both adapters use.
//!
//! Every request of an authorization (protected-resource and authorization-server metadata,
//! registration, token) is chosen by a server the client does not trust, so it takes the same
//! path to the network as the MCP traffic: the host is resolved once and only the addresses the
//! [`AddressPolicy`] admits are dialled, `https` uses the same rustls configuration (with any
//! extra roots), the HTTP/1.1 request is encoded and the response decoded by the core, no
//! redirect is ever followed (a 3xx is handed to the core, which refuses it), and at most
//! [`AuthExchange::max_response_bytes`] plus one byte of body is kept (the core refuses the
//! excess). The whole exchange — dial, TLS handshake, request and response — has one deadline
//! ([`AuthHttp::timeout`]), checked around every socket operation, and one byte limit on what
//! is read from the socket, TLS records included. The exchange runs on the same sockets as the
//! MCP traffic: the runtime's TCP socket, which counts every raw byte it reads below TLS
//! ([`Connect::limit_reads`]), the runtime's TLS layer
//! ([`Runtime::tls`]), and the core's
//! [`Http1Socket`](mcp_sansio::socket::Http1Socket) decoding the response (`read::AuthRead`).
//! So a server that trickles its handshake or streams records without end is cut off at the
//! deadline or the limit, whichever comes first.
//!
//! [`Authorization`] runs one authorization to its end: it asks the [`AuthHook`] to open the
//! user agent, and loads and saves the [`CredentialStore`] through it: on the calling thread
//! with [`AuthHttp::send`] ([`Authorization::authorize`]), or, in every adapter's authorizing
//! session ([`crate::auth::session::AuthSession`]), step by step ([`Authorization::next_step`])
//! with the exchanges on the adapter's runtime ([`crate::auth::async_auth::send`]), under the same
//! deadline, and the embedder's user agent (which blocks by contract) where the runtime allows
//! blocking.
//! Refreshes go through the [`AuthHttp`]'s token store ([`tokens`]): one refresh per grant among
//! the sessions sharing it (by default the clones of one [`AuthHttp`]; across a fleet with a
//! shared store), the others taking the new tokens.
//! [`Authorization::record_to`] records every exchange of its authorizations (secrets
//! redacted) as an authorization transcript (`mcp_sansio_transcript::auth`, format in
//! `docs/transcripts.md`).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant as StdInstant};

use mcp_sansio::auth::{
    AfterRefusal, Attempt, AuthConfig, AuthError, AuthEvent, AuthExchange, AuthResponse, AuthRetry,
    AuthSecrets, Authorizer, CredentialStore, UserAgent,
};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::{Endpoint, Instant, Scheme, TransportError, TransportErrorKind};
use rustls::ClientConfig;

use mcp_sansio_transcript::{AuthRecorder, AuthRecording, TranscriptSink};

use crate::guard::dial::{io_error, DialDeadline};
use crate::guard::policy::AddressPolicy;
use crate::guard::resolve::{vetted_addresses, Resolve, SystemResolver};
use crate::runtime::{block_on, connect, Connect, Runtime, StdNet};
use read::{raw_limit, AuthRead, EXCHANGE_READ};

pub mod async_auth;
pub(crate) mod read;
pub(crate) mod session;
pub(crate) mod signer;
pub mod tokens;

pub use async_auth::AsyncAuth;
pub use session::{drive, refresh, AuthRuntime, AuthSession};
pub use signer::{KeyError, KeySigner};
pub use tokens::{MemoryTokens, SharedTokens, TokenEntry, TokenStore};

use tokens::{relation, spent_digest, Held, Relation, MAX_LINEAGE};

/// Default deadline of one authorization exchange (dial, request and response).
pub const DEFAULT_AUTH_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// How many times an authorizing session may open the user agent after it connected: the core's
/// rule ([`AuthRetry`]), which [`Authorization`] carries out.
pub use mcp_sansio::auth::MAX_STEP_UPS;

/// Sends authorization requests through the address guard: see the [module docs](self).
#[derive(Clone)]
pub struct AuthHttp {
    policy: AddressPolicy,
    resolver: Arc<dyn Resolve>,
    tls: Arc<ClientConfig>,
    timeout: Duration,
    /// Where refreshes meet ([`tokens`]): shared by the clones.
    tokens: SharedTokens,
}

impl std::fmt::Debug for AuthHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthHttp")
            .field("policy", &self.policy)
            .field("timeout", &self.timeout)
            .field("tokens", &self.tokens)
            .finish_non_exhaustive()
    }
}

/// One authorization exchange ready to run on a socket ([`AuthHttp::prepare`]): where to dial,
/// the request's bytes and the response's limit.
#[derive(Debug)]
pub struct Prepared {
    /// The host to resolve (or the IP literal), and the TLS server name.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether the exchange runs over TLS (`https`).
    pub tls: bool,
    /// The request, encoded as HTTP/1.1 by the core (with `Connection: close`).
    pub request: Vec<u8>,
    /// The most body bytes the response may have ([`AuthExchange::max_response_bytes`]); one
    /// more is kept, so that the core sees the excess and refuses it.
    pub max_body: usize,
}

impl Prepared {
    /// The most raw bytes the exchange reads from its socket (TLS records included): the body
    /// limit, one byte and an allowance for the head and framing, and over TLS a sixteenth more
    /// and an allowance for the handshake.
    pub fn raw_limit(&self) -> u64 {
        raw_limit(self.max_body, self.tls)
    }

    /// The response's reader.
    fn reader(&self) -> AuthRead {
        AuthRead::new(self.max_body)
    }
}

impl AuthHttp {
    /// A runner with this policy, resolver and TLS configuration: give it the same ones as the
    /// MCP client, so that authorization reaches exactly the addresses the client may reach.
    /// Its token store is a new [`MemoryTokens`], shared by its clones: the authorizations made
    /// with it refresh each grant once ([`tokens`]).
    pub fn new(policy: AddressPolicy, resolver: Arc<dyn Resolve>, tls: Arc<ClientConfig>) -> Self {
        AuthHttp {
            policy,
            resolver,
            tls,
            timeout: DEFAULT_AUTH_EXCHANGE_TIMEOUT,
            tokens: SharedTokens::default(),
        }
    }

    /// Sets the token store where the refreshes of the authorizations made with this runner (and
    /// its clones made afterwards) meet: one refresh per grant across everything sharing it
    /// ([`tokens`]).
    #[must_use]
    pub fn token_store(mut self, tokens: SharedTokens) -> Self {
        self.tokens = tokens;
        self
    }

    /// The token store ([`AuthHttp::token_store`]).
    pub fn shared_tokens(&self) -> &SharedTokens {
        &self.tokens
    }

    /// A runner with this policy, the system resolver and the default TLS configuration.
    pub fn with_policy(policy: AddressPolicy) -> Self {
        AuthHttp::new(
            policy,
            Arc::new(SystemResolver),
            crate::guard::tls::client_config(),
        )
    }

    /// Sets the deadline of one exchange (dial, TLS handshake, request and response).
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// The deadline of one exchange.
    pub fn exchange_timeout(&self) -> Duration {
        self.timeout
    }

    /// The address policy.
    pub fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    /// Resolves `host` once and keeps the addresses the policy admits ([`vetted_addresses`]).
    /// Blocks (name resolution).
    pub fn vetted(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<std::net::SocketAddr>, TransportError> {
        Ok(vetted_addresses(
            self.resolver.as_ref(),
            &self.policy,
            host,
            port,
        )?)
    }

    /// The error of an exchange that ran out of its deadline.
    pub fn expired(&self) -> TransportError {
        TransportError {
            kind: TransportErrorKind::Io,
            message: format!(
                "the authorization exchange timed out after {} ms (dial, TLS handshake, request \
                 and response)",
                self.timeout.as_millis()
            ),
        }
    }

    /// `req` as an exchange to run on a socket: its request encoded by the core (with
    /// `Connection: close`), over TLS for `https`.
    pub fn prepare(&self, req: &AuthExchange) -> Result<Prepared, TransportError> {
        self.prepare_request(&req.endpoint, &req.request, req.max_response_bytes)
    }

    fn prepare_request(
        &self,
        endpoint: &Endpoint,
        request: &Request,
        max_body: usize,
    ) -> Result<Prepared, TransportError> {
        let mut request = request.clone();
        request.headers.push(("Connection".into(), "close".into()));
        let request = mcp_sansio::http1::encode(&request).map_err(|e| TransportError {
            kind: TransportErrorKind::Io,
            message: format!("request not encodable: {e}"),
        })?;
        Ok(Prepared {
            host: endpoint.host().to_owned(),
            port: endpoint.port(),
            tls: endpoint.scheme() == Scheme::Https,
            request,
            max_body,
        })
    }

    /// Performs `req` on the calling thread: see the [module docs](self). A 3xx answer is
    /// returned as it is (never followed); a body longer than `req.max_response_bytes` is cut
    /// one byte past the limit, so the core sees the excess and refuses it.
    pub fn send(&self, req: &AuthExchange) -> Result<AuthResponse, TransportError> {
        let start = StdInstant::now();
        let prepared = self.prepare(req)?;
        self.run(start, prepared)
    }

    /// A `GET` of `endpoint` with these headers, under the same guard and bounds as
    /// [`AuthHttp::send`]: what a headless user agent does with an authorization URL.
    pub fn get(
        &self,
        endpoint: &Endpoint,
        headers: &[(String, String)],
        max_response_bytes: usize,
    ) -> Result<AuthResponse, TransportError> {
        let start = StdInstant::now();
        let request = Request {
            method: Method::Get,
            authority: endpoint.authority().to_owned(),
            path: endpoint.target().to_owned(),
            headers: headers.to_vec(),
            body: Vec::new(),
        };
        let prepared = self.prepare_request(endpoint, &request, max_response_bytes)?;
        self.run(start, prepared)
    }

    /// Resolves, vets and dials as every MCP dial does ([`connect`]), then runs the exchange on
    /// [`StdNet`]'s socket (reads counted against [`Prepared::raw_limit`], each read and write
    /// ending by the deadline) and TLS, all within one deadline counted from `start`.
    fn run(&self, start: StdInstant, p: Prepared) -> Result<AuthResponse, TransportError> {
        let deadline = DialDeadline::new(start, self.timeout);
        let late = |e: TransportError| {
            if deadline.left(StdInstant::now()).is_none() {
                self.expired()
            } else {
                e
            }
        };
        let addresses = self.vetted(&p.host, p.port)?;
        let (_, mut tcp) = block_on(connect(&StdNet, &addresses, &deadline)).map_err(late)?;
        StdNet::limit_reads(&mut tcp, p.raw_limit());
        tcp.until(deadline.at());
        let response = if p.tls {
            let mut tls = block_on(StdNet.tls(tcp, &self.tls, &p.host, &deadline)).map_err(late)?;
            self.exchange_on(&mut tls, &p)
        } else {
            self.exchange_on(&mut tcp, &p)
        };
        response.map_err(late)
    }

    /// Writes the request on `socket` and reads until the response (see [`AuthRead`]); a read or
    /// write that timed out ran out of the deadline.
    fn exchange_on(
        &self,
        socket: &mut (impl Read + Write),
        p: &Prepared,
    ) -> Result<AuthResponse, TransportError> {
        let failed = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::TimedOut => self.expired(),
            _ => io_error(&e),
        };
        socket.write_all(&p.request).map_err(failed)?;
        socket.flush().map_err(failed)?;
        let mut read = p.reader();
        let mut buf = vec![0u8; EXCHANGE_READ];
        loop {
            let got = socket.read(&mut buf);
            if let Some(done) = read.after_read(got, &buf, failed) {
                return done;
            }
        }
    }
}

/// What the embedder supplies for authorization: the user agent and the credential vault.
pub trait AuthHook: Send {
    /// Opens `url` (the authorization request) in a user agent and returns the query of the
    /// redirect that came back to the redirect URI (the part after `?`, e.g.
    /// `code=…&state=…`). An error abandons the authorization; its text is reported as is, so
    /// it must not contain a secret.
    fn open_user_agent(&mut self, url: &str) -> Result<String, String>;

    /// The credentials saved earlier, if any.
    fn load(&mut self) -> Option<CredentialStore> {
        None
    }

    /// Saves the credentials (they hold secrets: keep them in a vault or a private file).
    fn save(&mut self, _store: &CredentialStore) {}
}

/// Why an authorization did not give a token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorizeError {
    /// The authorization core refused or failed (names the budget or cause).
    #[error("authorization failed: {0}")]
    Auth(#[from] AuthError),
    /// The user agent failed or was abandoned.
    #[error("authorization failed: the user agent: {0}")]
    UserAgent(String),
    /// No random bytes for the `state` and PKCE verifier.
    #[error("authorization failed: no random bytes for state and PKCE verifier")]
    Random,
    /// The authorization could not be set up (a callback listener, a certificate file…).
    #[error("authorization could not start: {0}")]
    Setup(String),
    /// The authorization stopped without an outcome (nothing left to send or wait for).
    #[error("authorization failed: the authorization stopped without an outcome")]
    Stalled,
    /// Another session held the lease on the same grant's refresh for the whole authorization
    /// deadline, and no new tokens came of it ([`tokens`]).
    #[error(
        "authorization failed: another refresh of the same grant held its lease for {waited_ms} \
         ms (the authorization's deadline) without new tokens"
    )]
    RefreshWait {
        /// How long the session waited, in milliseconds.
        waited_ms: u64,
    },
    /// The authorization would open the user agent once more than allowed
    /// ([`Authorization::limit_user_agent`]): an authorizing session asks the user at most
    /// `limit` times after it connected, however often the server asks for more scopes.
    #[error(
        "authorization refused: the server asked for a new authorization in the user agent \
         more than {limit} times after the session connected (the step-up limit)"
    )]
    UserAgentLimit {
        /// The limit that was reached.
        limit: u32,
    },
}

/// Whether an MCP answer calls for authorization: the core's rule.
pub use mcp_sansio::auth::calls_for_authorization;

/// 64 random bytes for [`AuthSecrets::from_random_bytes`], from the system's generator.
pub fn random_secrets() -> Result<AuthSecrets, AuthorizeError> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 64];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| AuthorizeError::Random)?;
    Ok(AuthSecrets::from_random_bytes(&bytes))
}

/// The embedder's hook, shared between an [`Authorization`] and whoever opens the user agent on
/// its behalf (the tokio adapter does it on its blocking pool, since the hook blocks).
pub type SharedHook = Arc<Mutex<Box<dyn AuthHook>>>;

/// Locks the hook (a hook that panicked earlier is used as it is).
pub fn lock_hook(hook: &SharedHook) -> MutexGuard<'_, Box<dyn AuthHook>> {
    hook.lock().unwrap_or_else(|p| p.into_inner())
}

/// What an authorization needs next from whoever drives it ([`Authorization::next_step`]).
/// Its `Debug` output redacts the secrets of the user agent's URL (`state`, the code
/// challenge…); a request redacts its own.
#[non_exhaustive]
pub enum AuthStep {
    /// Send this request ([`AuthHttp::send`], or the same exchange run asynchronously with
    /// [`AuthHttp::prepare`]) and report its outcome with [`Authorization::response`].
    Send(AuthExchange),
    /// Open the user agent at this URL with the hook ([`Authorization::hook`]) and report with
    /// [`Authorization::user_agent`].
    OpenUserAgent(String),
    /// The authorization ended: a token is held ([`Authorization::bearer`]), or why not.
    Done(Result<(), AuthorizeError>),
}

impl std::fmt::Debug for AuthStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthStep::Send(req) => f.debug_tuple("Send").field(req).finish(),
            AuthStep::OpenUserAgent(url) => f
                .debug_tuple("OpenUserAgent")
                .field(&mcp_sansio::auth::redact::url(url))
                .finish(),
            AuthStep::Done(result) => f.debug_tuple("Done").field(result).finish(),
        }
    }
}

/// An [`Authorizer`] with its runner and hook. [`Authorization::authorize`] and
/// [`Authorization::refresh`] run an authorization on the calling thread; an async adapter
/// drives the same steps itself ([`Authorization::begin_authorize`],
/// [`Authorization::next_step`]). Its timeline is the wall clock, so token expiry survives a
/// round trip through the hook's store.
pub struct Authorization {
    authorizer: Authorizer,
    http: AuthHttp,
    hook: SharedHook,
    config: AuthConfig,
    stored: bool,
    recording: Option<AuthRecording>,
    /// The core was asked once to check its deadlines with nothing to do.
    idle: bool,
    /// How the user agent failed, reported by the next step.
    failure: Option<AuthorizeError>,
    /// The span of the running authorization (feature `tracing`).
    trace: crate::trace::AuthTrace,
    /// The core's decisions of a session that authorizes: when the user agent may open.
    retry: AuthRetry,
    /// When a shared refresh started waiting, and until when it may ([`tokens`]).
    shared_wait: Option<(StdInstant, StdInstant)>,
}

/// What a refresh through the token store needs next ([`Authorization::begin_shared_refresh`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum SharedRefresh {
    /// Another session's new tokens were taken: nothing to refresh.
    Adopted,
    /// Another session is refreshing: wait this long (the runtime's sleep, or
    /// [`TokenStore::wait`]), then ask again.
    Wait(Duration),
    /// Refresh: drive the steps ([`Authorization::next_step`]) and give their outcome and the
    /// ticket to [`Authorization::end_shared_refresh`].
    Refresh(RefreshTicket),
    /// The refresh cannot run.
    Failed(AuthorizeError),
}

/// The lease of a refresh that runs ([`SharedRefresh::Refresh`]); `None` inside when the store
/// could not be used and the refresh runs on its own. Dropping it stops renewing the lease.
#[derive(Debug)]
pub struct RefreshTicket(Option<Held>);

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorization")
            .field("authorizer", &self.authorizer)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// An authorization for `config.server_url`, starting from the credentials the hook loads.
    pub fn new(
        config: AuthConfig,
        http: AuthHttp,
        mut hook: Box<dyn AuthHook>,
    ) -> Result<Self, AuthError> {
        let mut authorizer = Authorizer::new(config.clone())?;
        let mut stored = false;
        if let Some(store) = hook.load() {
            authorizer = authorizer.with_store(store);
            stored = true;
        }
        Ok(Authorization {
            authorizer,
            http,
            hook: Arc::new(Mutex::new(hook)),
            config,
            stored,
            recording: None,
            idle: false,
            failure: None,
            trace: crate::trace::AuthTrace::default(),
            retry: AuthRetry::new(),
            shared_wait: None,
        })
    }

    /// Records every exchange of this authorization (the requests as sent and the answers as
    /// received, the user-agent step and its callback query, the calls on the authorizer) into
    /// `sink` as session `session`, secrets redacted ([`AuthRecorder`]); `comment` heads the
    /// transcript. The text is written after each authorization and when this is dropped.
    #[must_use]
    pub fn record_to(mut self, sink: Arc<dyn TranscriptSink>, session: u64, comment: &str) -> Self {
        let mut recorder = AuthRecorder::new(&self.config, self.stored, self.now());
        recorder.comment(comment);
        self.recording = Some(AuthRecording::new(recorder, sink, session));
        self
    }

    fn record(&mut self, f: impl FnOnce(&mut AuthRecorder)) {
        if let Some(r) = &mut self.recording {
            f(r.recorder());
        }
    }

    fn flush(&mut self) {
        if let Some(r) = &mut self.recording {
            r.flush();
        }
    }

    /// The authorizer's timeline is the wall clock (time since the Unix epoch), so that the
    /// expiry of a token saved by one process means the same to the next one.
    fn now(&self) -> Instant {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Instant::from_duration(since_epoch)
    }

    /// The access token to send to the MCP server, if any. Never print it.
    pub fn bearer(&self) -> Option<&str> {
        self.authorizer.bearer()
    }

    /// The access token as a DPoP binding for [`Config::dpop`](mcp_sansio::Config::dpop),
    /// when it is bound to the configured DPoP key, with a fresh random seed for its proofs'
    /// `jti`s. `None` without a token, for a Bearer token, or if the system's random source
    /// fails. Never print it.
    pub fn dpop_binding(&self) -> Option<mcp_sansio::auth::DpopBinding> {
        use base64::Engine as _;
        use ring::rand::SecureRandom;
        let mut seed = [0u8; 32];
        ring::rand::SystemRandom::new().fill(&mut seed).ok()?;
        let seed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(seed);
        self.authorizer.dpop_binding(seed)
    }

    /// Puts the access token in `config`: as its bearer token, or as its DPoP binding when the
    /// token is bound to the DPoP key (the bearer token is then cleared), with the grant that
    /// obtained it ([`Config::grant`](mcp_sansio::Config::grant), part of the authorization
    /// context that keys what the client stores). Nothing changes without a token.
    pub fn present(&self, config: &mut mcp_sansio::Config) {
        if let Some(token) = self.bearer() {
            config.bearer_token = token.to_owned();
            config.dpop = None;
        } else if let Some(binding) = self.dpop_binding() {
            config.bearer_token.clear();
            config.dpop = Some(binding);
        } else {
            return;
        }
        config.grant = Some(self.authorizer.grant_identity());
    }

    /// Whether it holds an access token for the server (Bearer or DPoP-bound).
    pub fn has_token(&self) -> bool {
        self.bearer().is_some() || self.authorizer.dpop_binding(String::new()).is_some()
    }

    /// The authorizer.
    pub fn authorizer(&self) -> &Authorizer {
        &self.authorizer
    }

    /// The runner of the authorization's requests.
    pub fn http(&self) -> &AuthHttp {
        &self.http
    }

    /// The runner for the next exchange of the running authorization: [`Authorization::http`],
    /// its deadline of one exchange cut to what the authorization's own deadline
    /// ([`AuthLimits::time`](mcp_sansio::auth::AuthLimits::time), counted by the
    /// [`Authorizer`]) has left. An authorization thus ends by its limit even when an exchange
    /// stalls: an exchange cut short fails at that deadline, and the authorizer then fails the
    /// authorization with its time budget. Without an authorization running, the runner as
    /// it is.
    pub fn exchange_http(&self) -> AuthHttp {
        let http = self.http.clone();
        match self.authorizer.poll_timeout() {
            Some(deadline) => {
                let left = deadline.saturating_since(self.now());
                if left < http.exchange_timeout() {
                    http.timeout(left)
                } else {
                    http
                }
            }
            None => http,
        }
    }

    /// The embedder's hook (it opens the user agent and keeps the credentials).
    pub fn hook(&self) -> SharedHook {
        self.hook.clone()
    }

    /// From now on, the user agent may be opened at most `n` more times (`None`: no limit); an
    /// authorization that would open it once more fails with [`AuthorizeError::UserAgentLimit`]
    /// before opening it ([`AuthRetry::limit_user_agent`]).
    pub fn limit_user_agent(&mut self, n: Option<u32>) {
        self.retry.limit_user_agent(n);
    }

    /// The session this authorization serves connected: from the first time on, the user agent
    /// opens at most [`MAX_STEP_UPS`] more times ([`AuthRetry::connected`]).
    pub fn session_connected(&mut self) {
        self.retry.connected();
    }

    /// The core's decisions of the session this authorization serves ([`AuthRetry`]).
    pub fn retry(&self) -> &AuthRetry {
        &self.retry
    }

    /// The MCP server accepted a request with the current token.
    pub fn accepted(&mut self) {
        self.authorizer.accepted();
        let now = self.now();
        self.record(|r| r.accepted(now));
    }

    /// Whether the current token has expired.
    pub fn token_expired(&self) -> bool {
        self.authorizer.token_expired(self.now())
    }

    /// Refreshes the current tokens (when a refresh token is held), on the calling thread,
    /// through the token store ([`tokens`]): one refresh per grant among the sessions sharing
    /// it, the others taking its tokens.
    pub fn refresh(&mut self) -> Result<(), AuthorizeError> {
        loop {
            match self.begin_shared_refresh() {
                SharedRefresh::Adopted => return Ok(()),
                SharedRefresh::Wait(d) => {
                    let key = self.authorizer.token_key().to_owned();
                    self.http.tokens.store().wait(&key, d);
                }
                SharedRefresh::Refresh(ticket) => {
                    let result = self.drive();
                    return self.end_shared_refresh(ticket, result);
                }
                SharedRefresh::Failed(e) => return Err(e),
            }
        }
    }

    /// The first step of a refresh through the token store ([`tokens`]): takes a successor of
    /// the current tokens if the store holds one, else takes the lease and starts the refresh
    /// ([`Authorization::begin_refresh`]), else says how long to wait before asking again (for
    /// at most the authorization's deadline). A store that fails is left aside: the refresh
    /// runs on its own.
    pub fn begin_shared_refresh(&mut self) -> SharedRefresh {
        let key = self.authorizer.token_key().to_owned();
        let Some(mut mine) = self.current_credentials() else {
            return self.refresh_alone();
        };
        let now = StdInstant::now();
        let (since, deadline) = *self
            .shared_wait
            .get_or_insert((now, now + self.config.limits.time));
        let shared = self.http.tokens.clone();
        let store = shared.store();
        match store.read(&key) {
            Ok(entry) => {
                if let Some(adopted) = self.adopt_successor(&mine, entry.as_ref()) {
                    if !self.token_expired() {
                        self.shared_wait = None;
                        return SharedRefresh::Adopted;
                    }
                    mine = adopted;
                }
            }
            Err(_) => return self.refresh_alone(),
        }
        let lease = match store.lease(&key, shared.ttl()) {
            Ok(Some(lease)) => lease,
            Ok(None) if now < deadline => {
                return SharedRefresh::Wait(shared.poll_interval().min(deadline - now));
            }
            Ok(None) => {
                self.shared_wait = None;
                let waited_ms = u64::try_from(now.duration_since(since).as_millis());
                return SharedRefresh::Failed(AuthorizeError::RefreshWait {
                    waited_ms: waited_ms.unwrap_or(u64::MAX),
                });
            }
            Err(_) => return self.refresh_alone(),
        };
        // Read again under the lease: the last holder may have written just before releasing.
        let entry = match store.read(&key) {
            Ok(e) => e,
            Err(_) => {
                store.release(&lease);
                return self.refresh_alone();
            }
        };
        if let Some(adopted) = self.adopt_successor(&mine, entry.as_ref()) {
            if !self.token_expired() {
                store.release(&lease);
                self.shared_wait = None;
                return SharedRefresh::Adopted;
            }
            mine = adopted;
        }
        let (version, spent) = match &entry {
            Some(e) if relation(&mine, e) == Relation::Same => (e.version, e.spent.clone()),
            Some(e) => (e.version, Vec::new()),
            None => (0, Vec::new()),
        };
        self.shared_wait = None;
        if let Err(e) = self.begin_refresh() {
            store.release(&lease);
            return SharedRefresh::Failed(e);
        }
        SharedRefresh::Refresh(RefreshTicket(Some(Held::new(
            &shared, lease, version, spent, mine, deadline,
        ))))
    }

    /// The refresh started by [`Authorization::begin_shared_refresh`] ended with `result`:
    /// new tokens are written to the store (compare-and-set on the version read; a conflict
    /// keeps them in this session), a failure reads the store once more and takes a successor
    /// written meanwhile before it is reported; then the lease is released.
    pub fn end_shared_refresh(
        &mut self,
        ticket: RefreshTicket,
        result: Result<(), AuthorizeError>,
    ) -> Result<(), AuthorizeError> {
        self.shared_wait = None;
        let Some(held) = ticket.0 else {
            return result;
        };
        let shared = self.http.tokens.clone();
        let store = shared.store();
        let outcome = match result {
            Ok(()) => {
                if let Some(now) = self.current_credentials() {
                    let mut spent: Vec<_> = held
                        .before
                        .tokens
                        .refresh_token
                        .as_deref()
                        .map(spent_digest)
                        .into_iter()
                        .collect();
                    spent.extend(held.spent.iter().copied());
                    spent.truncate(MAX_LINEAGE);
                    // A conflict or a failing store keeps the tokens here (the store keeps
                    // what it could not write, if it can).
                    let _ = store.write(&held.lease, held.version, &now, &spent);
                }
                Ok(())
            }
            Err(e) => match store.read(held.lease.key()) {
                Ok(entry) if self.adopt_successor(&held.before, entry.as_ref()).is_some() => Ok(()),
                _ => Err(e),
            },
        };
        store.release(&held.lease);
        drop(held);
        outcome
    }

    /// The refresh without the store.
    fn refresh_alone(&mut self) -> SharedRefresh {
        self.shared_wait = None;
        match self.begin_refresh() {
            Ok(()) => SharedRefresh::Refresh(RefreshTicket(None)),
            Err(e) => SharedRefresh::Failed(e),
        }
    }

    /// The credentials under this authorization's token key.
    fn current_credentials(&self) -> Option<mcp_sansio::auth::ResourceCredentials> {
        let key = self.authorizer.token_key();
        self.authorizer.store().resources.get(key).cloned()
    }

    /// Takes `entry` when it is a successor of `mine`, saving it through the hook.
    fn adopt_successor(
        &mut self,
        mine: &mcp_sansio::auth::ResourceCredentials,
        entry: Option<&TokenEntry>,
    ) -> Option<mcp_sansio::auth::ResourceCredentials> {
        let entry = entry.filter(|e| relation(mine, e) == Relation::Successor)?;
        let mut store = self.authorizer.store().clone();
        store.resources.insert(
            self.authorizer.token_key().to_owned(),
            entry.credentials.clone(),
        );
        // The configuration was accepted when this authorization was made.
        let placeholder = Authorizer::new(self.config.clone()).ok()?;
        let authorizer = std::mem::replace(&mut self.authorizer, placeholder);
        self.authorizer = authorizer.with_store(store);
        lock_hook(&self.hook).save(self.authorizer.store());
        Some(entry.credentials.clone())
    }

    /// Starts a refresh of the current tokens on its own, without the token store ([`tokens`]:
    /// prefer [`Authorization::begin_shared_refresh`]); drive it with
    /// [`Authorization::next_step`].
    pub fn begin_refresh(&mut self) -> Result<(), AuthorizeError> {
        self.trace.begin("refresh", None);
        // A grant without a user agent runs again on a refresh: its assertions need a jti.
        self.authorizer.reseed(&random_secrets()?);
        let now = self.now();
        let result = self.authorizer.start_refresh(now);
        self.record(|r| r.refresh(now, result.as_ref().copied()));
        if result.is_err() {
            self.trace.end(false);
            self.flush();
        }
        self.idle = false;
        Ok(result?)
    }

    /// The MCP server answered `status` with this `WWW-Authenticate` value: authorizes (once)
    /// on the calling thread and returns when a token is held ([`Authorization::bearer`]) or
    /// the authorization failed.
    pub fn authorize(
        &mut self,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<(), AuthorizeError> {
        self.begin_authorize(status, www_authenticate)?;
        self.drive()
    }

    /// Starts the authorization [`Authorization::authorize`] runs; drive it with
    /// [`Authorization::next_step`].
    pub fn begin_authorize(
        &mut self,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<(), AuthorizeError> {
        self.trace.begin("challenge", Some(status));
        let secrets = random_secrets()?;
        let values: Vec<&[u8]> = www_authenticate.map(str::as_bytes).into_iter().collect();
        let now = self.now();
        let result = self
            .authorizer
            .handle_challenge(now, status, &values, secrets);
        self.record(|r| r.challenge(now, status, www_authenticate, result.as_ref().copied()));
        if result.is_err() {
            self.trace.end(false);
            self.flush();
        }
        self.idle = false;
        Ok(result?)
    }

    /// Runs the steps on the calling thread: requests with [`AuthHttp::send`], the user agent
    /// with the hook.
    fn drive(&mut self) -> Result<(), AuthorizeError> {
        loop {
            match self.next_step() {
                AuthStep::Send(req) => {
                    let result = self.exchange_http().send(&req);
                    self.response(&req, result);
                }
                AuthStep::OpenUserAgent(url) => {
                    let result = lock_hook(&self.hook).open_user_agent(&url);
                    self.user_agent(result);
                }
                AuthStep::Done(result) => return result,
            }
        }
    }

    /// What the authorization started with [`Authorization::begin_authorize`] or
    /// [`Authorization::begin_refresh`] needs next.
    pub fn next_step(&mut self) -> AuthStep {
        let step = self.step();
        if let AuthStep::Done(result) = &step {
            self.trace.end(result.is_ok());
        }
        step
    }

    fn step(&mut self) -> AuthStep {
        if let Some(e) = self.failure.take() {
            self.flush();
            return AuthStep::Done(Err(e));
        }
        loop {
            if let Some(req) = self.authorizer.poll_request() {
                self.idle = false;
                let sent_at = self.now();
                self.record(|r| r.request(sent_at, &req));
                self.trace
                    .step(purpose_name(req.purpose), Some(&req.endpoint));
                return AuthStep::Send(req);
            }
            let event = self.authorizer.poll_event();
            if let Some(ev) = &event {
                self.record(|r| r.event(ev));
            }
            match event {
                Some(AuthEvent::OpenUserAgent { url, .. }) => {
                    self.idle = false;
                    if let UserAgent::Refuse { limit } = self.retry.open_user_agent() {
                        let now = self.now();
                        self.record(|r| r.cancel(now));
                        self.authorizer.cancel();
                        self.flush();
                        return AuthStep::Done(Err(AuthorizeError::UserAgentLimit { limit }));
                    }
                    self.trace.step("user agent", None);
                    return AuthStep::OpenUserAgent(url);
                }
                Some(AuthEvent::Authorized { .. }) => {
                    lock_hook(&self.hook).save(self.authorizer.store());
                    self.flush();
                    return AuthStep::Done(Ok(()));
                }
                Some(AuthEvent::Failed(e)) => {
                    lock_hook(&self.hook).save(self.authorizer.store());
                    self.flush();
                    return AuthStep::Done(Err(e.into()));
                }
                None if !self.idle => {
                    // Nothing to send or report: let the core check its deadlines once.
                    let now = self.now();
                    self.record(|r| r.timeout(now));
                    self.authorizer.handle_timeout(now);
                    self.idle = true;
                }
                None => {
                    let now = self.now();
                    self.record(|r| r.cancel(now));
                    self.authorizer.cancel();
                    self.flush();
                    return AuthStep::Done(Err(AuthorizeError::Stalled));
                }
            }
        }
    }

    /// The outcome of the request of [`AuthStep::Send`].
    pub fn response(&mut self, req: &AuthExchange, result: Result<AuthResponse, TransportError>) {
        let now = self.now();
        match result {
            Ok(resp) => {
                self.record(|r| r.response(now, req.id, &resp));
                self.authorizer.handle_response(now, req.id, resp);
            }
            Err(e) => {
                self.record(|r| r.transport_error(now, req.id, &e));
                self.authorizer.handle_transport_error(now, req.id, e);
            }
        }
    }

    /// What the user agent of [`AuthStep::OpenUserAgent`] gave: the query of the redirect, or
    /// why it failed (the authorization then ends with [`AuthorizeError::UserAgent`]).
    pub fn user_agent(&mut self, result: Result<String, String>) {
        let now = self.now();
        match result {
            Ok(query) => {
                self.record(|r| r.callback(now, &query));
                self.authorizer.handle_callback(now, &query);
            }
            Err(e) => {
                self.record(|r| r.user_agent_error(now, &e));
                self.authorizer.cancel();
                self.failure = Some(AuthorizeError::UserAgent(e));
            }
        }
    }
}

/// The error of an operation of an authorizing session: the MCP error, or the authorization
/// that the server's 401 (or 403 `insufficient_scope`) called for failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthSessionError {
    /// The operation failed (including an authentication error that does not call for
    /// authorization, a plain 403, or one that persists after authorizing once).
    #[error(transparent)]
    Mcp(#[from] mcp_sansio::Error),
    /// The authorization failed.
    #[error(transparent)]
    Authorization(#[from] AuthorizeError),
}

impl AuthSessionError {
    /// The core's error kind: an authorization failure is `mcp_authentication_failed_error`.
    pub fn kind(&self) -> mcp_sansio::ErrorKind {
        match self {
            AuthSessionError::Mcp(e) => e.kind(),
            AuthSessionError::Authorization(_) => mcp_sansio::ErrorKind::AuthenticationFailed,
        }
    }
}

/// The status and `WWW-Authenticate` value of `e` when it calls for authorization on an
/// operation's first try ([`AuthRetry::after_failure`]).
pub fn authorization_needed(e: &mcp_sansio::Error) -> Option<(u16, Option<String>)> {
    match AuthRetry::new().after_failure(Attempt::First, e) {
        AfterRefusal::AuthorizeThenRetry { status, challenge } => Some((status, challenge)),
        AfterRefusal::Return => None,
    }
}

/// The name of an authorization step in traces: what the request is for.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
fn purpose_name(purpose: mcp_sansio::auth::Purpose) -> &'static str {
    use mcp_sansio::auth::Purpose;
    match purpose {
        Purpose::ResourceMetadata => "discovery: protected-resource metadata",
        Purpose::ServerMetadata => "discovery: authorization-server metadata",
        Purpose::Registration => "registration",
        Purpose::Token => "token exchange",
        Purpose::Refresh => "token refresh",
        Purpose::TokenExchange => "token exchange at the identity provider",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6749 §10.12, RFC 7636 §4.4: the user agent's URL carries `state` and the code
    /// challenge; the step's `Debug` output shows neither.
    #[test]
    fn the_user_agent_step_prints_without_state_and_code_challenge() {
        let step = AuthStep::OpenUserAgent(
            "https://auth.example/a?response_type=code&state=STATE-SECRET-1&code_challenge=CHALLENGE-SECRET-2&code_challenge_method=S256".into(),
        );
        for text in [format!("{step:?}"), format!("{step:#?}")] {
            assert!(
                text.contains("OpenUserAgent") && text.contains("auth.example/a"),
                "{text}"
            );
            assert!(!text.contains("STATE-SECRET-1"), "{text}");
            assert!(!text.contains("CHALLENGE-SECRET-2"), "{text}");
        }
    }
}
