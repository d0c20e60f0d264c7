//! What an authorization transcript holds: its configuration, its entries, and the recorded
//! (redacted) form of requests and responses.

use std::time::Duration;

use mcp_sansio::auth::redact;
use mcp_sansio::auth::{
    AuthConfig, AuthExchange, AuthLimits, AuthResponse, ClientSettings, UrlPolicy,
};
use mcp_sansio::TransportErrorKind;
use serde_json::Value;

use crate::{REDACTED, REPLAY_SECRET};

#[cfg(doc)]
use super::{auth_event_summary, PENDING_STATE};
#[cfg(doc)]
use mcp_sansio::auth::Authorizer;

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
pub fn auth_request_bytes(exchange: &AuthExchange) -> Vec<u8> {
    let req = &exchange.request;
    let mut out =
        format!("{} {}\r\n", req.method.as_str(), redact::url(&exchange.url)).into_bytes();
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
pub(super) fn response_from_bytes(status: u16, bytes: &[u8]) -> AuthResponse {
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
    /// Whether the tokens were bound to a DPoP key (`AuthConfig::dpop`; the key is never
    /// recorded, and a replay signs with a stand-in whose proofs are redacted alike).
    pub dpop: bool,
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
            dpop: config.dpop.is_some(),
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
        if self.dpop {
            c.dpop = Some(crate::model::replay_dpop_key());
        }
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
}
