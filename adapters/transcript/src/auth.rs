//! Transcripts of authorizations: what an [`Authorizer`] was told and what it answered, secrets
//! redacted, and a replay that drives a fresh `Authorizer` with the recorded answers.
//!
//! An authorization transcript is a text file of its own kind (first line [`AUTH_MAGIC`]), written
//! with the same conventions as a connection transcript (offsets, escaped byte blocks, JSON
//! event summaries); the format is in `docs/transcripts.md`. The HTTP exchanges of an
//! authorization are wire-neutral ([`AuthRequest`] and [`AuthResponse`]), so they are recorded
//! as the request and response the core sees, not as socket bytes.
//!
//! - [`AuthRecorder`] is what the runner (`mcp_sansio_net::auth::Authorization`) reports to;
//!   [`AuthRecording`] binds one to a [`TranscriptSink`].
//! - [`AuthTranscript::to_text`] and [`AuthTranscript::parse`] write and read the text.
//! - [`replay_auth`] drives a fresh [`Authorizer`] from a transcript; [`AuthReplay::check`]
//!   compares it with the transcript.
//! - Everything recorded is redacted by the core's one policy, [`mcp_sansio::auth::redact`]
//!   (URLs, headers by name, form and JSON bodies), like the connection transcripts.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::auth::redact;
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, AuthLimits, AuthRequest, AuthRequestId, AuthResponse,
    AuthSecrets, Authorizer, ClientSettings, UrlPolicy,
};
use mcp_sansio::{Instant, TransportError, TransportErrorKind};
use serde_json::{json, Value};

use crate::escape::{escape, unescape, write_block};
use crate::parse::{kind_from_name, parse_at, truncate, ParseError, ParseErrorKind};
use crate::sink::TranscriptSink;
use crate::write::{format_at, kind_name};
use crate::{REDACTED, REPLAY_SECRET};

/// The first line of every authorization transcript.
pub const AUTH_MAGIC: &str = "mcp-auth-transcript 1";

/// What replaces a callback's `state` when it was the state of the authorization waiting for it
/// (a replay puts its own waiting state there). A `state` that did not match is `<redacted>`.
pub const PENDING_STATE: &str = "<pending-state>";

/// The byte a replay fills its 64 "random" bytes with: the replay's `state` and PKCE verifier.
pub const REPLAY_RANDOM_BYTE: u8 = 0x5a;

fn decoded_name(raw: &str) -> String {
    mcp_sansio::auth::form::decode(raw).unwrap_or_else(|_| raw.to_owned())
}

fn content_type<'a, V: AsRef<[u8]> + 'a>(
    headers: impl IntoIterator<Item = &'a (String, V)>,
) -> Option<String> {
    headers
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| String::from_utf8_lossy(v.as_ref()).into_owned())
}

/// The recorded form of a request: `METHOD URL`, the headers, an empty line and the body, lines
/// ending in CRLF, every secret redacted.
pub fn auth_request_bytes(req: &AuthRequest) -> Vec<u8> {
    let mut out = format!("{} {}\r\n", req.method.as_str(), redact::url(&req.url)).into_bytes();
    for (n, v) in &req.headers {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&redact::header(n, v.as_bytes()));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&redact::body(
        content_type(&req.headers).as_deref(),
        &req.body,
    ));
    out
}

/// The recorded form of a response's headers and body (its status is on the entry line): the
/// headers, an empty line and the body, every secret redacted.
pub fn auth_response_bytes(resp: &AuthResponse) -> Vec<u8> {
    let mut out = Vec::new();
    for (n, v) in &resp.headers {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&redact::header(n, v));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&redact::body(
        content_type(&resp.headers).as_deref(),
        &resp.body,
    ));
    out
}

/// Reads [`auth_response_bytes`] back into a response with `status`.
fn response_from_bytes(status: u16, bytes: &[u8]) -> AuthResponse {
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n");
    let (head, body) = match (bytes.starts_with(b"\r\n"), split) {
        (true, _) => (&bytes[..0], &bytes[2..]),
        (false, Some(i)) => (&bytes[..i], &bytes[i + 4..]),
        (false, None) => (bytes, &bytes[bytes.len()..]),
    };
    let mut headers = Vec::new();
    for line in head.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if let Some(c) = line.windows(2).position(|w| w == b": ") {
            headers.push((
                String::from_utf8_lossy(&line[..c]).into_owned(),
                line[c + 2..].to_vec(),
            ));
        }
    }
    AuthResponse {
        status,
        headers,
        body: body.to_vec(),
    }
}

/// The JSON summary of an authorization event, secrets redacted:
/// `{"open_user_agent":{"url":…}}`, `{"authorized":{"issuer":…,"scopes":[…]}}` or
/// `{"failed":{"error":…}}`.
pub fn auth_event_summary(event: &AuthEvent) -> Value {
    match event {
        AuthEvent::OpenUserAgent { url, .. } => {
            json!({"open_user_agent": {"url": redact::url(url)}})
        }
        AuthEvent::Authorized { issuer, scopes } => {
            json!({"authorized": {"issuer": issuer, "scopes": scopes}})
        }
        AuthEvent::Failed(e) => json!({"failed": {"error": e.to_string()}}),
    }
}

fn refused_summary(e: &AuthError) -> Value {
    json!({"refused": {"error": e.to_string()}})
}

/// What an authorization transcript records of the [`AuthConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthTranscriptConfig {
    /// The MCP server's URL, secret query values redacted.
    pub server_url: String,
    /// How the client identifies itself; pre-registered client secrets are `<redacted>`.
    pub client: ClientSettings,
    /// Whether plain http to loopback hosts is allowed.
    pub allow_loopback_http: bool,
    /// The bounds.
    pub limits: AuthLimits,
    /// Whether the authorization started from stored credentials (never recorded; such a
    /// transcript does not replay).
    pub stored_credentials: bool,
}

impl AuthTranscriptConfig {
    /// What a transcript records of `config`.
    pub fn from_config(config: &AuthConfig, stored_credentials: bool) -> Self {
        let mut client = config.client.clone();
        for p in &mut client.pre_registered {
            if p.credentials.client_secret.is_some() {
                p.credentials.client_secret = Some(REDACTED.to_owned());
            }
        }
        AuthTranscriptConfig {
            server_url: redact::url(&config.server_url),
            client,
            allow_loopback_http: config.policy.allow_loopback_http,
            limits: config.limits,
            stored_credentials,
        }
    }

    /// The configuration a replay uses: redacted values become [`REPLAY_SECRET`].
    pub fn to_config(&self) -> AuthConfig {
        let mut client = self.client.clone();
        for p in &mut client.pre_registered {
            if p.credentials.client_secret.is_some() {
                p.credentials.client_secret = Some(REPLAY_SECRET.to_owned());
            }
        }
        let mut c = AuthConfig::new(self.server_url.replace(REDACTED, REPLAY_SECRET), client);
        c.policy = UrlPolicy {
            allow_loopback_http: self.allow_loopback_http,
        };
        c.limits = self.limits;
        c
    }
}

/// One thing that happened during an authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthRecord {
    /// [`Authorizer::handle_challenge`] with the status and the `WWW-Authenticate` value (the
    /// random secrets passed are never recorded; a replay passes its own).
    Challenge {
        /// The MCP server's status.
        status: u16,
        /// Its `WWW-Authenticate` value, if any.
        www_authenticate: Option<String>,
    },
    /// [`Authorizer::start_refresh`].
    Refresh,
    /// A request taken from [`Authorizer::poll_request`] ([`auth_request_bytes`]).
    Send {
        /// Its id.
        id: u64,
        /// The request, redacted.
        bytes: Vec<u8>,
    },
    /// [`Authorizer::handle_response`] ([`auth_response_bytes`]).
    Recv {
        /// The request id.
        id: u64,
        /// The status.
        status: u16,
        /// Headers and body, redacted.
        bytes: Vec<u8>,
    },
    /// [`Authorizer::handle_transport_error`].
    TransportError {
        /// The request id.
        id: u64,
        /// The stage.
        kind: TransportErrorKind,
        /// The description.
        message: String,
    },
    /// [`Authorizer::handle_callback`] with the redirect's query (redacted; a matching `state`
    /// is [`PENDING_STATE`]).
    Callback(String),
    /// The user agent failed with this message and the authorization was cancelled.
    UserAgentError(String),
    /// [`Authorizer::cancel`].
    Cancel,
    /// [`Authorizer::accepted`].
    Accepted,
    /// [`Authorizer::handle_timeout`].
    Timeout,
    /// An event or a refusal: its summary ([`auth_event_summary`], or `{"refused":…}` for an
    /// error returned by `handle_challenge` or `start_refresh`), compact JSON.
    Event(String),
}

/// An [`AuthRecord`] at its offset from the start of the recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthEntry {
    /// Time since the recording started.
    pub at: Duration,
    /// What happened.
    pub record: AuthRecord,
}

/// A recorded authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthTranscript {
    /// The configuration.
    pub config: AuthTranscriptConfig,
    /// Comment lines.
    pub comments: Vec<String>,
    /// The entries, in order.
    pub entries: Vec<AuthEntry>,
}

impl AuthTranscript {
    /// The requests recorded, in order: (id, redacted bytes).
    pub fn sends(&self) -> Vec<(u64, Vec<u8>)> {
        self.entries
            .iter()
            .filter_map(|e| match &e.record {
                AuthRecord::Send { id, bytes } => Some((*id, bytes.clone())),
                _ => None,
            })
            .collect()
    }

    /// The outcome: every event summary, in order.
    pub fn outcome(&self) -> Vec<Value> {
        self.entries
            .iter()
            .filter_map(|e| match &e.record {
                AuthRecord::Event(s) => serde_json::from_str(s).ok(),
                _ => None,
            })
            .collect()
    }

    fn write_header(&self, out: &mut String) {
        out.push_str(AUTH_MAGIC);
        out.push('\n');
        for c in &self.comments {
            let _ = writeln!(out, "# {c}");
        }
        let c = &self.config;
        let _ = writeln!(out, "config server {}", c.server_url);
        let client = serde_json::to_string(&c.client).unwrap_or_default();
        let _ = writeln!(out, "config client {}", escape(client.as_bytes()));
        if c.allow_loopback_http {
            out.push_str("config loopback-http\n");
        }
        let _ = writeln!(
            out,
            "config limits {} {} {} {}",
            c.limits.max_exchanges,
            c.limits.time.as_millis(),
            c.limits.callback_time.as_millis(),
            c.limits.max_attempts
        );
        if c.stored_credentials {
            out.push_str("config stored-credentials <redacted>\n");
        }
    }

    /// The text form (see `docs/transcripts.md`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_header(&mut out);
        for e in &self.entries {
            write_auth_entry(&mut out, e);
        }
        out
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<AuthTranscript, ParseError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, l)) if l.trim_end() == AUTH_MAGIC => {}
            _ => {
                return Err(ParseError {
                    line: 1,
                    kind: ParseErrorKind::NotATranscript,
                })
            }
        }
        let mut server = None;
        let mut client: Option<ClientSettings> = None;
        let mut allow_loopback_http = false;
        let mut limits = AuthLimits::default();
        let mut stored_credentials = false;
        let mut comments = Vec::new();
        let mut entries: Vec<AuthEntry> = Vec::new();
        let mut block: Option<&'static str> = None;
        let mut last_line = 1;
        for (n, line) in lines {
            last_line = n;
            let err = |kind| ParseError { line: n, kind };
            let malformed = |what| err(ParseErrorKind::Malformed { what });
            if let Some(data) = line.strip_prefix("> ").or_else(|| line.strip_prefix("< ")) {
                if block != Some(&line[..2]) {
                    return Err(err(ParseErrorKind::StrayData));
                }
                let bytes = unescape(data).map_err(err)?;
                match entries.last_mut().map(|e| &mut e.record) {
                    Some(AuthRecord::Send { bytes: b, .. })
                    | Some(AuthRecord::Recv { bytes: b, .. }) => b.extend_from_slice(&bytes),
                    _ => return Err(err(ParseErrorKind::StrayData)),
                }
                continue;
            }
            block = None;
            if line.trim().is_empty() {
                continue;
            }
            if let Some(c) = line.strip_prefix('#') {
                comments.push(c.strip_prefix(' ').unwrap_or(c).to_owned());
                continue;
            }
            if let Some(rest) = line.strip_prefix("config ") {
                let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
                match key {
                    "server" => server = Some(value.to_owned()),
                    "client" => {
                        let raw = unescape(value).map_err(err)?;
                        client =
                            Some(serde_json::from_slice(&raw).map_err(|_| malformed("client"))?);
                    }
                    "loopback-http" => allow_loopback_http = true,
                    "limits" => {
                        let v: Vec<u64> = value
                            .split(' ')
                            .map(str::parse)
                            .collect::<Result<_, _>>()
                            .map_err(|_| malformed("limits"))?;
                        let [ex, time, cb, att] = v[..] else {
                            return Err(malformed("limits"));
                        };
                        limits = AuthLimits {
                            max_exchanges: u32::try_from(ex).map_err(|_| malformed("limits"))?,
                            time: Duration::from_millis(time),
                            callback_time: Duration::from_millis(cb),
                            max_attempts: u32::try_from(att).map_err(|_| malformed("limits"))?,
                        };
                    }
                    "stored-credentials" => stored_credentials = true,
                    other => return Err(err(ParseErrorKind::UnknownRecord(truncate(other)))),
                }
                continue;
            }
            let (at, rest) = line.split_once(' ').unwrap_or((line, ""));
            let Some(at) = parse_at(at) else {
                return Err(err(ParseErrorKind::UnknownRecord(truncate(line))));
            };
            let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let id = |s: Option<&str>| {
                s.and_then(|s| s.parse::<u64>().ok())
                    .ok_or(malformed("request id"))
            };
            let record = match word {
                "challenge" => {
                    let (status, value) = args.split_once(' ').unwrap_or((args, "-"));
                    let status = status.parse().map_err(|_| malformed("challenge status"))?;
                    let www_authenticate = match value {
                        "-" => None,
                        v => Some(
                            serde_json::from_str::<String>(v)
                                .map_err(|_| malformed("challenge value"))?,
                        ),
                    };
                    AuthRecord::Challenge {
                        status,
                        www_authenticate,
                    }
                }
                "refresh" => AuthRecord::Refresh,
                "send" => {
                    block = Some("> ");
                    AuthRecord::Send {
                        id: id(Some(args))?,
                        bytes: Vec::new(),
                    }
                }
                "recv" => {
                    let mut it = args.split(' ');
                    let rid = id(it.next())?;
                    let status = it
                        .next()
                        .and_then(|s| s.parse().ok())
                        .ok_or(malformed("recv status"))?;
                    block = Some("< ");
                    AuthRecord::Recv {
                        id: rid,
                        status,
                        bytes: Vec::new(),
                    }
                }
                "transport-error" => {
                    let mut it = args.splitn(3, ' ');
                    let rid = id(it.next())?;
                    let kind = it
                        .next()
                        .and_then(kind_from_name)
                        .ok_or(malformed("transport-error kind"))?;
                    let message = unescape(it.next().unwrap_or("")).map_err(err)?;
                    AuthRecord::TransportError {
                        id: rid,
                        kind,
                        message: String::from_utf8_lossy(&message).into_owned(),
                    }
                }
                "callback" => AuthRecord::Callback(
                    String::from_utf8_lossy(&unescape(args).map_err(err)?).into_owned(),
                ),
                "user-agent-error" => AuthRecord::UserAgentError(
                    String::from_utf8_lossy(&unescape(args).map_err(err)?).into_owned(),
                ),
                "cancel" => AuthRecord::Cancel,
                "accepted" => AuthRecord::Accepted,
                "timeout" => AuthRecord::Timeout,
                "event" => {
                    let v: Value =
                        serde_json::from_str(args).map_err(|_| err(ParseErrorKind::BadEvent))?;
                    AuthRecord::Event(v.to_string())
                }
                _ => return Err(err(ParseErrorKind::UnknownRecord(truncate(word)))),
            };
            entries.push(AuthEntry { at, record });
        }
        let no = |kind| ParseError {
            line: last_line,
            kind,
        };
        let server_url = server.ok_or(no(ParseErrorKind::NoUrl))?;
        let client = client.ok_or(no(ParseErrorKind::Malformed { what: "no client" }))?;
        Ok(AuthTranscript {
            config: AuthTranscriptConfig {
                server_url,
                client,
                allow_loopback_http,
                limits,
                stored_credentials,
            },
            comments,
            entries,
        })
    }
}

fn write_auth_entry(out: &mut String, e: &AuthEntry) {
    let at = format_at(e.at);
    match &e.record {
        AuthRecord::Challenge {
            status,
            www_authenticate,
        } => {
            let v = match www_authenticate {
                Some(v) => Value::String(v.clone()).to_string(),
                None => "-".to_owned(),
            };
            let _ = writeln!(out, "{at} challenge {status} {v}");
        }
        AuthRecord::Refresh => {
            let _ = writeln!(out, "{at} refresh");
        }
        AuthRecord::Send { id, bytes } => {
            let _ = writeln!(out, "{at} send {id}");
            write_block(out, "> ", bytes);
        }
        AuthRecord::Recv { id, status, bytes } => {
            let _ = writeln!(out, "{at} recv {id} {status}");
            write_block(out, "< ", bytes);
        }
        AuthRecord::TransportError { id, kind, message } => {
            let _ = writeln!(
                out,
                "{at} transport-error {id} {} {}",
                kind_name(*kind),
                escape(message.as_bytes())
            );
        }
        AuthRecord::Callback(q) => {
            let _ = writeln!(out, "{at} callback {}", escape(q.as_bytes()));
        }
        AuthRecord::UserAgentError(m) => {
            let _ = writeln!(out, "{at} user-agent-error {}", escape(m.as_bytes()));
        }
        AuthRecord::Cancel => {
            let _ = writeln!(out, "{at} cancel");
        }
        AuthRecord::Accepted => {
            let _ = writeln!(out, "{at} accepted");
        }
        AuthRecord::Timeout => {
            let _ = writeln!(out, "{at} timeout");
        }
        AuthRecord::Event(s) => {
            let _ = writeln!(out, "{at} event {s}");
        }
    }
}

/// A callback query as recorded: `state` equal to `pending_state` becomes [`PENDING_STATE`],
/// every other secret `<redacted>`.
fn redact_callback(query: &str, pending_state: Option<&str>) -> String {
    let mut out = String::with_capacity(query.len());
    for (i, part) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match part.split_once('=') {
            Some((name, value)) if decoded_name(name) == "state" => {
                let value = mcp_sansio::auth::form::decode(value).ok();
                out.push_str(name);
                out.push('=');
                if value.is_some() && value.as_deref() == pending_state {
                    out.push_str(PENDING_STATE);
                } else {
                    out.push_str(REDACTED);
                }
            }
            _ => out.push_str(&redact::form(part)),
        }
    }
    out
}

/// Records an authorization: what a runner reports to, next to its [`Authorizer`]. Pure,
/// `Send`, never fails; every secret is redacted as it is recorded.
#[derive(Clone, Debug)]
pub struct AuthRecorder {
    start: Instant,
    last: Duration,
    header_taken: bool,
    pending_state: Option<String>,
    transcript: AuthTranscript,
}

impl AuthRecorder {
    /// A recorder of an authorizer made with `config` (`stored_credentials`: it started from
    /// credentials loaded from a store), whose timeline starts at `start`.
    pub fn new(config: &AuthConfig, stored_credentials: bool, start: Instant) -> Self {
        AuthRecorder {
            start,
            last: Duration::ZERO,
            header_taken: false,
            pending_state: None,
            transcript: AuthTranscript {
                config: AuthTranscriptConfig::from_config(config, stored_credentials),
                comments: Vec::new(),
                entries: Vec::new(),
            },
        }
    }

    /// Adds comment lines.
    pub fn comment(&mut self, text: &str) {
        self.transcript
            .comments
            .extend(text.lines().map(str::to_owned));
    }

    fn push(&mut self, now: Option<Instant>, record: AuthRecord) {
        if let Some(now) = now {
            self.last = now.saturating_since(self.start).max(self.last);
        }
        self.transcript.entries.push(AuthEntry {
            at: self.last,
            record,
        });
    }

    /// `handle_challenge` was called at `now` with `status` and this value, and returned
    /// `result` (an error is recorded as a `refused` event).
    pub fn challenge(
        &mut self,
        now: Instant,
        status: u16,
        www_authenticate: Option<&str>,
        result: Result<(), &AuthError>,
    ) {
        let record = AuthRecord::Challenge {
            status,
            www_authenticate: www_authenticate.map(str::to_owned),
        };
        self.push(Some(now), record);
        if let Err(e) = result {
            self.push(None, AuthRecord::Event(refused_summary(e).to_string()));
        }
    }

    /// `start_refresh` was called at `now` and returned `result`.
    pub fn refresh(&mut self, now: Instant, result: Result<(), &AuthError>) {
        self.push(Some(now), AuthRecord::Refresh);
        if let Err(e) = result {
            self.push(None, AuthRecord::Event(refused_summary(e).to_string()));
        }
    }

    /// A request was taken from `poll_request` and sent at `now`.
    pub fn request(&mut self, now: Instant, req: &AuthRequest) {
        let record = AuthRecord::Send {
            id: req.id.0,
            bytes: auth_request_bytes(req),
        };
        self.push(Some(now), record);
    }

    /// The answer to request `id` was given to `handle_response` at `now`.
    pub fn response(&mut self, now: Instant, id: AuthRequestId, resp: &AuthResponse) {
        let record = AuthRecord::Recv {
            id: id.0,
            status: resp.status,
            bytes: auth_response_bytes(resp),
        };
        self.push(Some(now), record);
    }

    /// The transport failed for request `id` (`handle_transport_error`) at `now`.
    pub fn transport_error(&mut self, now: Instant, id: AuthRequestId, error: &TransportError) {
        let record = AuthRecord::TransportError {
            id: id.0,
            kind: error.kind,
            message: error.message.clone(),
        };
        self.push(Some(now), record);
    }

    /// The user agent came back with `query` (`handle_callback`) at `now`.
    pub fn callback(&mut self, now: Instant, query: &str) {
        let q = redact_callback(query, self.pending_state.as_deref());
        self.push(Some(now), AuthRecord::Callback(q));
    }

    /// The user agent failed with `message` at `now`, and the authorization was cancelled.
    pub fn user_agent_error(&mut self, now: Instant, message: &str) {
        self.push(Some(now), AuthRecord::UserAgentError(message.to_owned()));
    }

    /// `cancel` was called at `now`.
    pub fn cancel(&mut self, now: Instant) {
        self.push(Some(now), AuthRecord::Cancel);
    }

    /// `accepted` was called at `now`.
    pub fn accepted(&mut self, now: Instant) {
        self.push(Some(now), AuthRecord::Accepted);
    }

    /// `handle_timeout` was called at `now`.
    pub fn timeout(&mut self, now: Instant) {
        self.push(Some(now), AuthRecord::Timeout);
    }

    /// An event was drained from `poll_event`.
    pub fn event(&mut self, event: &AuthEvent) {
        if let AuthEvent::OpenUserAgent { pending, .. } = event {
            self.pending_state = Some(pending.secrets.state().to_owned());
        }
        self.push(
            None,
            AuthRecord::Event(auth_event_summary(event).to_string()),
        );
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &AuthTranscript {
        &self.transcript
    }

    /// The text recorded since the last call (with the header on the first call); those
    /// entries are forgotten. The pieces, concatenated, are one transcript.
    pub fn take_text(&mut self) -> String {
        let mut out = String::new();
        if !self.header_taken {
            self.header_taken = true;
            self.transcript.write_header(&mut out);
        }
        for e in self.transcript.entries.drain(..) {
            write_auth_entry(&mut out, &e);
        }
        out
    }

    /// Ends the recording.
    pub fn finish(self) -> AuthTranscript {
        self.transcript
    }
}

/// An [`AuthRecorder`] bound to a [`TranscriptSink`] as session `session`: what a runner holds
/// when recording is on. [`flush`](AuthRecording::flush) writes what was recorded since the
/// last flush; dropping it flushes and finishes the session.
pub struct AuthRecording {
    recorder: AuthRecorder,
    sink: Arc<dyn TranscriptSink>,
    session: u64,
}

impl std::fmt::Debug for AuthRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthRecording")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl AuthRecording {
    /// Records into `sink` as session `session`.
    pub fn new(recorder: AuthRecorder, sink: Arc<dyn TranscriptSink>, session: u64) -> Self {
        AuthRecording {
            recorder,
            sink,
            session,
        }
    }

    /// The recorder, to report to.
    pub fn recorder(&mut self) -> &mut AuthRecorder {
        &mut self.recorder
    }

    /// Writes what was recorded since the last flush.
    pub fn flush(&mut self) {
        let text = self.recorder.take_text();
        if !text.is_empty() {
            self.sink.write(self.session, &text);
        }
    }
}

impl Drop for AuthRecording {
    fn drop(&mut self) {
        self.flush();
        self.sink.finish(self.session);
    }
}

/// Why an authorization transcript cannot be replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthReplayError {
    /// The recorded configuration is refused by the core.
    #[error("the recorded authorization configuration: {0}")]
    Config(AuthError),
    /// The recording started from stored credentials, which are never recorded.
    #[error("the recording started from stored credentials, which a transcript does not hold")]
    StoredCredentials,
}

/// How a replay differs from its authorization transcript.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthMismatch {
    /// Request `index` differs.
    #[error("authorization request {index} differs: recorded {recorded:?}, replayed {replayed:?}")]
    Send {
        /// Its position.
        index: usize,
        /// The recorded request (redacted, as text).
        recorded: String,
        /// The replayed one.
        replayed: String,
    },
    /// Not the same number of requests.
    #[error("{recorded} authorization requests recorded, {replayed} replayed")]
    SendCount {
        /// Recorded.
        recorded: usize,
        /// Replayed.
        replayed: usize,
    },
    /// Event `index` differs.
    #[error("authorization event {index} differs: recorded {recorded}, replayed {replayed}")]
    Event {
        /// Its position.
        index: usize,
        /// The recorded summary.
        recorded: String,
        /// The replayed one.
        replayed: String,
    },
    /// Not the same number of events.
    #[error("{recorded} authorization events recorded, {replayed} replayed")]
    EventCount {
        /// Recorded.
        recorded: usize,
        /// Replayed.
        replayed: usize,
    },
}

/// What a replay of an authorization transcript gave: its requests and events, and what it
/// recorded of itself.
#[derive(Clone, Debug)]
pub struct AuthReplay {
    /// The requests sent, (id, redacted bytes), in order.
    pub sends: Vec<(u64, Vec<u8>)>,
    /// The event summaries, in order (refusals included).
    pub events: Vec<Value>,
    /// Whether the replayed authorizer ended holding an access token.
    pub has_bearer: bool,
    /// The replay's own recording.
    pub recording: AuthTranscript,
}

impl AuthReplay {
    /// Compares with `t`: the same requests (after redaction) in the same order, the same
    /// events in the same order.
    pub fn check(&self, t: &AuthTranscript) -> Result<(), AuthMismatch> {
        let recorded = t.sends();
        for (index, (r, p)) in recorded.iter().zip(&self.sends).enumerate() {
            if r != p {
                return Err(AuthMismatch::Send {
                    index,
                    recorded: format!("{} {}", r.0, String::from_utf8_lossy(&r.1)),
                    replayed: format!("{} {}", p.0, String::from_utf8_lossy(&p.1)),
                });
            }
        }
        if recorded.len() != self.sends.len() {
            return Err(AuthMismatch::SendCount {
                recorded: recorded.len(),
                replayed: self.sends.len(),
            });
        }
        let outcome = t.outcome();
        for (index, (r, p)) in outcome.iter().zip(&self.events).enumerate() {
            if r != p {
                return Err(AuthMismatch::Event {
                    index,
                    recorded: r.to_string(),
                    replayed: p.to_string(),
                });
            }
        }
        if outcome.len() != self.events.len() {
            return Err(AuthMismatch::EventCount {
                recorded: outcome.len(),
                replayed: self.events.len(),
            });
        }
        Ok(())
    }
}

/// The callback query a replay gives: [`PENDING_STATE`] becomes the replay's waiting state,
/// every other `<redacted>` value [`REPLAY_SECRET`].
fn replay_callback(recorded: &str, pending_state: Option<&str>) -> String {
    let state = pending_state.map(mcp_sansio::auth::form::encode);
    let with_state = recorded.replace(PENDING_STATE, state.as_deref().unwrap_or(REPLAY_SECRET));
    with_state.replace(REDACTED, REPLAY_SECRET)
}

/// Replays `t` against a fresh [`Authorizer`]: the recorded inputs in order at their offsets
/// (from [`Instant::ZERO`]), the recorded answers (redacted values as they were recorded; a
/// recorded `<redacted>` access token is a header-safe token), [`REPLAY_RANDOM_BYTE`]s as the
/// random secrets, and every request and event drained after each input.
pub fn replay_auth(t: &AuthTranscript) -> Result<AuthReplay, AuthReplayError> {
    if t.config.stored_credentials {
        return Err(AuthReplayError::StoredCredentials);
    }
    let config = t.config.to_config();
    let mut az = Authorizer::new(config.clone()).map_err(AuthReplayError::Config)?;
    let mut rec = AuthRecorder::new(&config, false, Instant::ZERO);
    let mut out = AuthReplay {
        sends: Vec::new(),
        events: Vec::new(),
        has_bearer: false,
        recording: rec.transcript().clone(),
    };
    let mut pending_state: Option<String> = None;
    for e in &t.entries {
        let now = Instant::from_duration(e.at);
        match &e.record {
            AuthRecord::Challenge {
                status,
                www_authenticate,
            } => {
                let values: Vec<&[u8]> = www_authenticate
                    .as_deref()
                    .map(str::as_bytes)
                    .into_iter()
                    .collect();
                let secrets = AuthSecrets::from_random_bytes(&[REPLAY_RANDOM_BYTE; 64]);
                let r = az.handle_challenge(now, *status, &values, secrets);
                rec.challenge(
                    now,
                    *status,
                    www_authenticate.as_deref(),
                    r.as_ref().copied(),
                );
                if let Err(e) = r {
                    out.events.push(refused_summary(&e));
                }
            }
            AuthRecord::Refresh => {
                let r = az.start_refresh(now);
                rec.refresh(now, r.as_ref().copied());
                if let Err(e) = r {
                    out.events.push(refused_summary(&e));
                }
            }
            AuthRecord::Recv { id, status, bytes } => {
                let resp = response_from_bytes(*status, bytes);
                rec.response(now, AuthRequestId(*id), &resp);
                az.handle_response(now, AuthRequestId(*id), resp);
            }
            AuthRecord::TransportError { id, kind, message } => {
                let error = TransportError {
                    kind: *kind,
                    message: message.clone(),
                };
                rec.transport_error(now, AuthRequestId(*id), &error);
                az.handle_transport_error(now, AuthRequestId(*id), error);
            }
            AuthRecord::Callback(q) => {
                let query = replay_callback(q, pending_state.as_deref());
                rec.callback(now, &query);
                az.handle_callback(now, &query);
            }
            AuthRecord::UserAgentError(m) => {
                rec.user_agent_error(now, m);
                az.cancel();
            }
            AuthRecord::Cancel => {
                rec.cancel(now);
                az.cancel();
            }
            AuthRecord::Accepted => {
                rec.accepted(now);
                az.accepted();
            }
            AuthRecord::Timeout => {
                rec.timeout(now);
                az.handle_timeout(now);
            }
            // Outputs: the replay drains its own below.
            AuthRecord::Send { .. } | AuthRecord::Event(_) => continue,
        }
        // Drain as the runner does: requests first, then events.
        loop {
            if let Some(req) = az.poll_request() {
                rec.request(now, &req);
                out.sends.push((req.id.0, auth_request_bytes(&req)));
                continue;
            }
            match az.poll_event() {
                Some(ev) => {
                    if let AuthEvent::OpenUserAgent { pending, .. } = &ev {
                        pending_state = Some(pending.secrets.state().to_owned());
                    }
                    rec.event(&ev);
                    out.events.push(auth_event_summary(&ev));
                }
                None => break,
            }
        }
    }
    out.has_bearer = az.bearer().is_some();
    out.recording = rec.finish();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::auth::{HttpMethod, Purpose};

    #[test]
    fn form_bodies_before_and_after() {
        let table = [
            (
                "grant_type=authorization_code&code=abc123&redirect_uri=http%3A%2F%2Fx&code_verifier=vvv",
                "grant_type=authorization_code&code=<redacted>&redirect_uri=http%3A%2F%2Fx&code_verifier=<redacted>",
            ),
            (
                "grant_type=refresh_token&refresh_token=rt-1&client_id=c&client_secret=s3",
                "grant_type=refresh_token&refresh_token=<redacted>&client_id=c&client_secret=<redacted>",
            ),
            (
                "access_token=at&token_type=bearer&id_token=x.y.z",
                "access_token=<redacted>&token_type=bearer&id_token=<redacted>",
            ),
            // Names percent-encoded or in another case are secrets too.
            ("client%5Fsecret=s&CODE=c", "client%5Fsecret=<redacted>&CODE=<redacted>"),
            // Derived from the verifier: differs on every run.
            (
                "code_challenge=E9Mel&code_challenge_method=S256",
                "code_challenge=<redacted>&code_challenge_method=S256",
            ),
            ("registration_access_token=r", "registration_access_token=<redacted>"),
            // Harmless parameters, empty pairs and pairs without `=` are kept.
            ("scope=read+write&&flag&resource=x", "scope=read+write&&flag&resource=x"),
            ("", ""),
        ];
        for (before, after) in table {
            assert_eq!(redact::form(before), after, "{before}");
        }
    }

    #[test]
    fn json_bodies_before_and_after() {
        let table: [(&str, &str); 5] = [
            (
                r#"{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}"#,
                r#"{"access_token":"<redacted>","expires_in":3600,"refresh_token":"<redacted>","token_type":"Bearer"}"#,
            ),
            (
                r#"{"client_id":"id","client_secret":"cs","registration_access_token":"rat","registration_client_uri":"https://as/r/1"}"#,
                r#"{"client_id":"id","client_secret":"<redacted>","registration_access_token":"<redacted>","registration_client_uri":"https://as/r/1"}"#,
            ),
            (
                r#"{"nested":{"id_token":"x"},"list":[{"code":"c"}]}"#,
                r#"{"list":[{"code":"<redacted>"}],"nested":{"id_token":"<redacted>"}}"#,
            ),
            (
                r#"{"error":"invalid_grant","error_description":"bad"}"#,
                r#"{"error":"invalid_grant","error_description":"bad"}"#,
            ),
            (
                r#"{"client_id":"a","redirect_uris":["http://127.0.0.1/cb"]}"#,
                r#"{"client_id":"a","redirect_uris":["http://127.0.0.1/cb"]}"#,
            ),
        ];
        for (before, after) in table {
            let got = redact::json(before.as_bytes()).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), after, "{before}");
            // The same through the body dispatcher, as JSON.
            let via_body = redact::body(Some("application/json"), before.as_bytes());
            assert_eq!(String::from_utf8(via_body).unwrap(), after);
        }
        assert_eq!(redact::json(b"not json"), None);
        assert_eq!(redact::body(None, b"<html>"), b"<6 bytes>".to_vec());
        assert_eq!(
            redact::body(
                Some("application/x-www-form-urlencoded; charset=utf-8"),
                b"access_token=a&x=1"
            ),
            b"access_token=<redacted>&x=1".to_vec()
        );
    }

    #[test]
    fn callback_and_location_urls_before_and_after() {
        let table = [
            (
                "http://localhost:3000/callback?code=abc&state=xyz&iss=https%3A%2F%2Fas",
                "http://localhost:3000/callback?code=<redacted>&state=<redacted>&iss=https%3A%2F%2Fas",
            ),
            (
                "https://as/authorize?response_type=code&client_id=c&code_challenge=ch&code_challenge_method=S256&state=s&scope=a",
                "https://as/authorize?response_type=code&client_id=c&code_challenge=<redacted>&code_challenge_method=S256&state=<redacted>&scope=a",
            ),
            (
                "http://cb/#access_token=t&state=s",
                "http://cb/#access_token=<redacted>&state=<redacted>",
            ),
            ("https://as/.well-known/x", "https://as/.well-known/x"),
        ];
        for (before, after) in table {
            assert_eq!(redact::url(before), after, "{before}");
        }
        assert_eq!(
            redact::header("Location", b"http://cb?code=c&state=s"),
            b"http://cb?code=<redacted>&state=<redacted>".to_vec()
        );
        assert_eq!(
            redact::header("authorization", b"Basic Y2xpZW50OnNlY3JldA=="),
            b"Basic <redacted>".to_vec()
        );
        assert_eq!(
            redact::header("Set-Cookie", b"sid=1"),
            b"<redacted>".to_vec()
        );
        assert_eq!(redact::header("Content-Type", b"a/b"), b"a/b".to_vec());
    }

    #[test]
    fn a_matching_callback_state_is_marked_and_a_wrong_one_redacted() {
        assert_eq!(
            redact_callback("code=c&state=st&iss=x", Some("st")),
            "code=<redacted>&state=<pending-state>&iss=x"
        );
        assert_eq!(
            redact_callback("state=other&code=c", Some("st")),
            "state=<redacted>&code=<redacted>"
        );
        assert_eq!(
            redact_callback("error=access_denied", None),
            "error=access_denied"
        );
        assert_eq!(
            replay_callback("code=<redacted>&state=<pending-state>", Some("abc")),
            "code=replay-secret&state=abc"
        );
        assert_eq!(
            replay_callback("state=<redacted>", Some("abc")),
            "state=replay-secret"
        );
    }

    fn request(body: &[u8]) -> AuthRequest {
        let url = "https://as.example/token?x=1";
        AuthRequest {
            id: AuthRequestId(3),
            purpose: Purpose::Token,
            method: HttpMethod::Post,
            url: url.into(),
            endpoint: mcp_sansio::Endpoint::parse(url).unwrap(),
            headers: vec![
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("Authorization".into(), "Basic c2VjcmV0".into()),
            ],
            body: body.to_vec(),
            max_response_bytes: 10,
        }
    }

    #[test]
    fn requests_and_responses_are_recorded_redacted_and_read_back() {
        let bytes = auth_request_bytes(&request(b"grant_type=authorization_code&code=c1"));
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "POST https://as.example/token?x=1\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: Basic <redacted>\r\n\r\ngrant_type=authorization_code&code=<redacted>"
        );
        let resp = AuthResponse {
            status: 302,
            headers: vec![("Location".into(), b"http://cb?code=c&state=s".to_vec())],
            body: Vec::new(),
        };
        let bytes = auth_response_bytes(&resp);
        let back = response_from_bytes(302, &bytes);
        assert_eq!(
            back.headers,
            vec![(
                "Location".to_owned(),
                b"http://cb?code=<redacted>&state=<redacted>".to_vec()
            )]
        );
        assert!(back.body.is_empty());
        let no_headers = response_from_bytes(200, b"\r\n{}");
        assert!(no_headers.headers.is_empty());
        assert_eq!(no_headers.body, b"{}");
    }

    fn config() -> AuthConfig {
        let mut client = ClientSettings::new("t", "http://127.0.0.1:1/cb");
        client.pre_registered.push(mcp_sansio::auth::PreRegistered {
            issuer: None,
            credentials: mcp_sansio::auth::ClientCredentials {
                client_id: "id".into(),
                client_secret: Some("very-secret".into()),
                auth_method: mcp_sansio::auth::TokenAuthMethod::ClientSecretBasic,
            },
        });
        let mut c = AuthConfig::new("https://mcp.example/mcp?api_key=k", client);
        c.policy = UrlPolicy {
            allow_loopback_http: true,
        };
        c
    }

    /// Records a short run by hand: a challenge whose metadata request fails.
    fn recorded() -> AuthTranscript {
        let config = config();
        let mut az = Authorizer::new(config.clone()).unwrap();
        let mut rec = AuthRecorder::new(&config, false, Instant::ZERO);
        let now = Instant::from_duration(Duration::from_millis(5));
        let www = r#"Bearer resource_metadata="https://mcp.example/prm""#;
        let r = az.handle_challenge(
            now,
            401,
            &[www.as_bytes()],
            AuthSecrets::from_random_bytes(&[7; 64]),
        );
        rec.challenge(now, 401, Some(www), r.as_ref().copied());
        let req = az.poll_request().unwrap();
        rec.request(now, &req);
        let resp = AuthResponse::new(500, "oops");
        rec.response(now, req.id, &resp);
        az.handle_response(now, req.id, resp);
        while let Some(req) = az.poll_request() {
            rec.request(now, &req);
            let resp = AuthResponse::new(404, "");
            rec.response(now, req.id, &resp);
            az.handle_response(now, req.id, resp);
        }
        while let Some(ev) = az.poll_event() {
            rec.event(&ev);
        }
        rec.finish()
    }

    #[test]
    fn a_recording_round_trips_through_text_and_replays() {
        let t = recorded();
        let text = t.to_text();
        assert!(!text.contains("very-secret"), "{text}");
        assert!(!text.contains("api_key=k"), "{text}");
        assert!(text.contains("\"client_secret\":\"<redacted>\""), "{text}");
        let back = AuthTranscript::parse(&text).unwrap();
        assert_eq!(back, t);
        assert!(t.sends().len() >= 2);
        assert!(t.outcome().last().unwrap().get("failed").is_some());
        let r = replay_auth(&back).unwrap();
        r.check(&back).unwrap();
        assert!(!r.has_bearer);
    }

    #[test]
    fn a_replay_that_differs_is_reported() {
        let mut t = recorded();
        // Another answer to the first request: the core goes another way.
        for e in &mut t.entries {
            if let AuthRecord::Recv { status, bytes, .. } = &mut e.record {
                *status = 200;
                // No headers, then a valid protected-resource metadata document.
                let body = r#"{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"]}"#;
                *bytes = [b"\r\n".as_slice(), body.as_bytes()].concat();
                break;
            }
        }
        let r = replay_auth(&t).unwrap();
        assert!(r.check(&recorded()).is_err());
        // A recorded request that the core would not send.
        let mut t = recorded();
        for e in &mut t.entries {
            if let AuthRecord::Send { bytes, .. } = &mut e.record {
                bytes.extend_from_slice(b"x");
                break;
            }
        }
        let r = replay_auth(&t).unwrap();
        assert!(matches!(
            r.check(&t),
            Err(AuthMismatch::Send { index: 0, .. })
        ));
        // Stored credentials are never recorded, so such a recording does not replay.
        let mut t = recorded();
        t.config.stored_credentials = true;
        assert_eq!(
            replay_auth(&t).unwrap_err(),
            AuthReplayError::StoredCredentials
        );
    }

    #[test]
    fn malformed_text_is_refused_with_its_line() {
        let good = recorded().to_text();
        let cases = [
            ("mcp-transcript 1\n", 1),
            (&good.replace("config limits 12", "config limits x"), 0),
            (&format!("{good}@1.000 nonsense\n"), 0),
            (&format!("{good}> stray\n"), 0),
            (&format!("{good}@1.000 recv 1\n"), 0),
            (&format!("{good}@1.000 challenge 401 notjson\n"), 0),
        ];
        for (text, line) in cases {
            let e = AuthTranscript::parse(text).unwrap_err();
            if line > 0 {
                assert_eq!(e.line, line);
            }
        }
        assert!(AuthTranscript::parse(&format!("{good}@9.000 timeout\n@9.000 accepted\n")).is_ok());
    }
}
