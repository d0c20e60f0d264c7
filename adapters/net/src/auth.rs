//! Authorization over the guard: the HTTP runner for the core's authorization requests
//! ([`AuthHttp`]) and the synchronous driver of an [`Authorizer`] ([`Authorization`]) that both
//! adapters use.
//!
//! Every request of an authorization (protected-resource and authorization-server metadata,
//! registration, token) is chosen by a server the client does not trust, so it goes through the
//! same guard as the MCP traffic: the host is resolved once and only the addresses the
//! [`AddressPolicy`] admits are dialled, `https` uses the same rustls configuration (with any
//! extra roots), the HTTP/1.1 request is encoded and the response decoded by the core, no
//! redirect is ever followed (a 3xx is handed to the core, which refuses it), at most
//! [`AuthRequest::max_response_bytes`] plus one byte of body is read (the core refuses the
//! excess), and the whole exchange has a deadline.
//!
//! [`Authorization`] runs one authorization to its end on the calling thread: it asks the
//! [`AuthHook`] to open the user agent, and loads and saves the [`CredentialStore`] through it.
//! The tokio adapter runs it on a blocking thread. [`Authorization::record_to`] records every
//! exchange of its authorizations (secrets redacted) as an authorization transcript
//! (`mcp_sansio_transcript::auth`, format in `docs/transcripts.md`).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use mcp_sansio::auth::{
    parse_challenges, AuthConfig, AuthError, AuthEvent, AuthRequest, AuthResponse, AuthSecrets,
    Authorizer, BearerChallenge, BearerErrorCode, CredentialStore, HttpMethod,
};
use mcp_sansio::internals::{ByteLedger, Method, Request, ResponseDecoder, ResponseEvent};
use mcp_sansio::{Endpoint, Instant, Scheme, TransportError, TransportErrorKind};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use mcp_sansio_transcript::{AuthRecorder, AuthRecording, TranscriptSink};

use crate::policy::{parse_literal_host, AddressPolicy};
use crate::resolve::{vetted_addresses, Resolve, SystemResolver};

/// Default deadline of one authorization exchange (dial, request and response).
pub const DEFAULT_AUTH_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes of response head and framing allowed on top of the body limit.
const HEAD_ALLOWANCE: usize = 64 * 1024;

/// Sends authorization requests through the address guard: see the [module docs](self).
#[derive(Clone)]
pub struct AuthHttp {
    policy: AddressPolicy,
    resolver: Arc<dyn Resolve>,
    tls: Arc<ClientConfig>,
    timeout: Duration,
}

impl std::fmt::Debug for AuthHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthHttp")
            .field("policy", &self.policy)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl AuthHttp {
    /// A runner with this policy, resolver and TLS configuration: give it the same ones as the
    /// MCP client, so that authorization reaches exactly the addresses the client may reach.
    pub fn new(policy: AddressPolicy, resolver: Arc<dyn Resolve>, tls: Arc<ClientConfig>) -> Self {
        AuthHttp {
            policy,
            resolver,
            tls,
            timeout: DEFAULT_AUTH_EXCHANGE_TIMEOUT,
        }
    }

    /// A runner with this policy, the system resolver and the default TLS configuration.
    pub fn with_policy(policy: AddressPolicy) -> Self {
        AuthHttp::new(
            policy,
            Arc::new(SystemResolver),
            crate::tls::client_config(),
        )
    }

    /// Sets the deadline of one exchange (dial, request and response).
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// The address policy.
    pub fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    /// Performs `req`: see the [module docs](self). A 3xx answer is returned as it is (never
    /// followed); a body longer than `req.max_response_bytes` is cut one byte past the limit, so
    /// the core sees the excess and refuses it.
    pub fn send(&self, req: &AuthRequest) -> Result<AuthResponse, TransportError> {
        let method = match req.method {
            HttpMethod::Get => Method::Get,
            HttpMethod::Post => Method::Post,
        };
        self.exchange(
            method,
            &req.endpoint,
            &req.headers,
            &req.body,
            req.max_response_bytes,
        )
    }

    /// A `GET` of `endpoint` with these headers, under the same guard and bounds as
    /// [`AuthHttp::send`]: what a headless user agent does with an authorization URL.
    pub fn get(
        &self,
        endpoint: &Endpoint,
        headers: &[(String, String)],
        max_response_bytes: usize,
    ) -> Result<AuthResponse, TransportError> {
        self.exchange(Method::Get, endpoint, headers, &[], max_response_bytes)
    }

    fn exchange(
        &self,
        method: Method,
        endpoint: &Endpoint,
        headers: &[(String, String)],
        body: &[u8],
        max_body: usize,
    ) -> Result<AuthResponse, TransportError> {
        let deadline = StdInstant::now() + self.timeout;
        let mut headers = headers.to_vec();
        headers.push(("Connection".into(), "close".into()));
        let request = Request {
            method,
            target: endpoint.target().to_owned(),
            authority: endpoint.authority().to_owned(),
            headers,
            body: body.to_vec(),
        }
        .encode()
        .map_err(|e| io_error(format!("request not encodable: {e}")))?;
        let mut stream = self.dial(endpoint, deadline)?;
        stream
            .write_all(&request)
            .and_then(|()| stream.flush())
            .map_err(|e| io_error(e.to_string()))?;
        read_response(&mut stream, deadline, max_body)
    }

    fn dial(&self, endpoint: &Endpoint, deadline: StdInstant) -> Result<Stream, TransportError> {
        let host = endpoint.host();
        let addresses =
            vetted_addresses(self.resolver.as_ref(), &self.policy, host, endpoint.port())?;
        let mut failures = Vec::new();
        let mut tcp = None;
        for address in addresses {
            let left = remaining(deadline)?;
            match TcpStream::connect_timeout(&address, left) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => failures.push(format!("{address}: {e}")),
            }
        }
        let tcp = tcp.ok_or_else(|| TransportError {
            kind: TransportErrorKind::Connect,
            message: failures.join("; "),
        })?;
        let _ = tcp.set_nodelay(true);
        set_timeouts(&tcp, deadline)?;
        if endpoint.scheme() == Scheme::Http {
            return Ok(Stream::Plain(tcp));
        }
        let tls_error = |message: String| TransportError {
            kind: TransportErrorKind::Tls,
            message,
        };
        let name = match parse_literal_host(host) {
            Some(ip) => ServerName::IpAddress(ip.into()),
            None => ServerName::try_from(host.to_owned())
                .map_err(|e| tls_error(format!("server name {host:?}: {e}")))?,
        };
        let mut conn =
            ClientConnection::new(self.tls.clone(), name).map_err(|e| tls_error(e.to_string()))?;
        let mut tcp = tcp;
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)
                .map_err(|e| tls_error(e.to_string()))?;
        }
        Ok(Stream::Tls(Box::new(StreamOwned::new(conn, tcp))))
    }
}

enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

fn io_error(message: String) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        message,
    }
}

fn remaining(deadline: StdInstant) -> Result<Duration, TransportError> {
    let left = deadline.saturating_duration_since(StdInstant::now());
    if left.is_zero() {
        return Err(io_error(
            "the authorization exchange deadline passed".into(),
        ));
    }
    Ok(left)
}

fn set_timeouts(tcp: &TcpStream, deadline: StdInstant) -> Result<(), TransportError> {
    let left = remaining(deadline)?;
    tcp.set_read_timeout(Some(left))
        .and_then(|()| tcp.set_write_timeout(Some(left)))
        .map_err(|e| io_error(e.to_string()))
}

/// Reads one response with the core's decoder: head, then at most `max_body + 1` body bytes.
fn read_response(
    stream: &mut Stream,
    deadline: StdInstant,
    max_body: usize,
) -> Result<AuthResponse, TransportError> {
    let mut decoder = ResponseDecoder::new(Default::default());
    let limit = max_body.saturating_add(1).saturating_add(HEAD_ALLOWANCE);
    let mut ledger = ByteLedger::new(limit as u64);
    let mut response = AuthResponse::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut eof = false;
    let mut pending: Vec<u8> = Vec::new();
    loop {
        // Decode everything buffered.
        let mut at = 0;
        loop {
            let d = decoder
                .decode(&pending[at..], &mut ledger)
                .map_err(|e| io_error(format!("response: {e}")))?;
            at += d.consumed;
            match d.event {
                Some(ResponseEvent::Head(h)) => {
                    response.status = h.status;
                    response.headers = h.headers;
                }
                Some(ResponseEvent::Body(b)) => {
                    let room = max_body.saturating_add(1) - response.body.len();
                    response.body.extend_from_slice(&b[..b.len().min(room)]);
                    if response.body.len() > max_body {
                        return Ok(response);
                    }
                }
                Some(ResponseEvent::End { .. }) => return Ok(response),
                None if d.consumed == 0 => break,
                None => {}
            }
        }
        pending.drain(..at);
        if eof {
            return match decoder.finish() {
                Ok(_) => Ok(response),
                Err(e) => Err(io_error(format!("response: {e}"))),
            };
        }
        set_timeouts(stream.tcp(), deadline)?;
        match stream.read(&mut buf) {
            Ok(0) => eof = true,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => eof = true,
            Err(e) => return Err(io_error(e.to_string())),
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
}

/// Whether an MCP answer of `status` with this `WWW-Authenticate` value calls for
/// authorization: a 401, or a 403 whose Bearer challenge has `error="insufficient_scope"`. A
/// plain 403 does not.
pub fn calls_for_authorization(status: u16, www_authenticate: Option<&str>) -> bool {
    match status {
        401 => true,
        403 => {
            let Some(v) = www_authenticate else {
                return false;
            };
            let Ok(challenges) = parse_challenges([v.as_bytes()]) else {
                return false;
            };
            challenges.iter().any(|c| {
                c.is_scheme("bearer")
                    && BearerChallenge::from_challenge(c).error
                        == Some(BearerErrorCode::InsufficientScope)
            })
        }
        _ => false,
    }
}

/// 64 random bytes for [`AuthSecrets::from_random_bytes`], from the system's generator.
pub fn random_secrets() -> Result<AuthSecrets, AuthorizeError> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 64];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| AuthorizeError::Random)?;
    Ok(AuthSecrets::from_random_bytes(&bytes))
}

/// An [`Authorizer`] with its runner and hook: runs an authorization on the calling thread. Its
/// timeline is the wall clock, so token expiry survives a round trip through the hook's store.
pub struct Authorization {
    authorizer: Authorizer,
    http: AuthHttp,
    hook: Box<dyn AuthHook>,
    config: AuthConfig,
    stored: bool,
    recording: Option<AuthRecording>,
}

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
            hook,
            config,
            stored,
            recording: None,
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

    /// The authorizer.
    pub fn authorizer(&self) -> &Authorizer {
        &self.authorizer
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

    /// Refreshes the current tokens (when a refresh token is held).
    pub fn refresh(&mut self) -> Result<(), AuthorizeError> {
        let now = self.now();
        let result = self.authorizer.start_refresh(now);
        self.record(|r| r.refresh(now, result.as_ref().copied()));
        if result.is_err() {
            self.flush();
        }
        result?;
        self.drive()
    }

    /// The MCP server answered `status` with this `WWW-Authenticate` value: authorizes (once)
    /// and returns when a token is held ([`Authorization::bearer`]) or the authorization failed.
    pub fn authorize(
        &mut self,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<(), AuthorizeError> {
        let secrets = random_secrets()?;
        let values: Vec<&[u8]> = www_authenticate.map(str::as_bytes).into_iter().collect();
        let now = self.now();
        let result = self
            .authorizer
            .handle_challenge(now, status, &values, secrets);
        self.record(|r| r.challenge(now, status, www_authenticate, result.as_ref().copied()));
        if result.is_err() {
            self.flush();
        }
        result?;
        self.drive()
    }

    fn drive(&mut self) -> Result<(), AuthorizeError> {
        let result = self.drive_inner();
        self.flush();
        result
    }

    fn drive_inner(&mut self) -> Result<(), AuthorizeError> {
        let mut idle = false;
        loop {
            if let Some(req) = self.authorizer.poll_request() {
                idle = false;
                let sent_at = self.now();
                self.record(|r| r.request(sent_at, &req));
                let result = self.http.send(&req);
                let now = self.now();
                match result {
                    Ok(resp) => {
                        self.record(|r| r.response(now, req.id, &resp));
                        self.authorizer.handle_response(now, req.id, resp)
                    }
                    Err(e) => {
                        self.record(|r| r.transport_error(now, req.id, &e));
                        self.authorizer.handle_transport_error(now, req.id, e)
                    }
                }
                continue;
            }
            let event = self.authorizer.poll_event();
            if let Some(ev) = &event {
                self.record(|r| r.event(ev));
            }
            match event {
                Some(AuthEvent::OpenUserAgent { url, .. }) => {
                    idle = false;
                    match self.hook.open_user_agent(&url) {
                        Ok(query) => {
                            let now = self.now();
                            self.record(|r| r.callback(now, &query));
                            self.authorizer.handle_callback(now, &query);
                        }
                        Err(e) => {
                            let now = self.now();
                            self.record(|r| r.user_agent_error(now, &e));
                            self.authorizer.cancel();
                            return Err(AuthorizeError::UserAgent(e));
                        }
                    }
                }
                Some(AuthEvent::Authorized { .. }) => {
                    self.hook.save(self.authorizer.store());
                    return Ok(());
                }
                Some(AuthEvent::Failed(e)) => {
                    self.hook.save(self.authorizer.store());
                    return Err(e.into());
                }
                None if !idle => {
                    // Nothing to send or report: let the core check its deadlines once.
                    let now = self.now();
                    self.record(|r| r.timeout(now));
                    self.authorizer.handle_timeout(now);
                    idle = true;
                }
                None => {
                    let now = self.now();
                    self.record(|r| r.cancel(now));
                    self.authorizer.cancel();
                    return Err(AuthorizeError::Stalled);
                }
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

/// The status and `WWW-Authenticate` value of `e` when it calls for authorization
/// ([`calls_for_authorization`]).
pub fn authorization_needed(e: &mcp_sansio::Error) -> Option<(u16, Option<String>)> {
    match e {
        mcp_sansio::Error::Authentication { status, challenge }
            if calls_for_authorization(*status, challenge.as_deref()) =>
        {
            Some((*status, challenge.clone()))
        }
        _ => None,
    }
}

/// Replaces an authorizing session's session after an authorization, in both adapters:
/// `$connect` (the client's `connect` with the new token) runs first; only once it has given a
/// session does that session take the place of `$session`, and the old one is ended with its
/// `close` (a legacy session's `DELETE`, nothing on the wire for a modern one). The close is
/// best effort: its error is ignored, since the server may no longer accept the old token, and
/// it waits no longer than the close budget. If connecting fails, `$session` is left as it was
/// and the error is returned with `?`. `[$($wait)*]` is what waits for an operation (`.await`,
/// or nothing).
#[macro_export]
#[doc(hidden)]
macro_rules! replace_authorized_session {
    ($session:expr, $connect:expr, [$($wait:tt)*]) => {{
        let fresh = $connect $($wait)* ?;
        let old = ::core::mem::replace(&mut $session, fresh);
        let _ = old.close() $($wait)*;
    }};
}
