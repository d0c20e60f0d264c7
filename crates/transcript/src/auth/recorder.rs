//! [`AuthRecorder`]: what a runner reports an authorization to, every secret redacted as it is
//! recorded.

use std::time::Duration;

use mcp_sansio::auth::redact;
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, AuthExchange, AuthRequestId, AuthResponse,
};
use mcp_sansio::{Instant, TransportError};

use crate::REDACTED;

use super::*;

#[cfg(doc)]
use mcp_sansio::auth::Authorizer;

fn decoded_name(raw: &str) -> String {
    mcp_sansio::auth::form::decode(raw).unwrap_or_else(|_| raw.to_owned())
}

/// A callback query as recorded: `state` equal to `pending_state` becomes [`PENDING_STATE`],
/// every other secret `<redacted>`.
pub(super) fn redact_callback(query: &str, pending_state: Option<&str>) -> String {
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
/// `Send`, never fails; every secret is redacted as it is recorded. Its `Debug` output never
/// shows the `state` it keeps to recognise the callback.
#[derive(Clone)]
pub struct AuthRecorder {
    start: Instant,
    last: Duration,
    header_taken: bool,
    pending_state: Option<String>,
    transcript: AuthTranscript,
}

impl std::fmt::Debug for AuthRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthRecorder")
            .field("start", &self.start)
            .field("last", &self.last)
            .field("header_taken", &self.header_taken)
            .field(
                "pending_state",
                &self.pending_state.as_ref().map(|_| REDACTED),
            )
            .field("transcript", &self.transcript)
            .finish()
    }
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
    pub fn request(&mut self, now: Instant, req: &AuthExchange) {
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
