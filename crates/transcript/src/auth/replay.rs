//! Replaying an authorization transcript against a fresh [`Authorizer`].

use mcp_sansio::auth::{AuthError, AuthEvent, AuthRequestId, AuthSecrets, Authorizer};
use mcp_sansio::{Instant, TransportError};
use serde_json::Value;

use crate::{REDACTED, REPLAY_SECRET};

use super::*;

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
    /// Whether the replayed authorizer ended holding an access token (Bearer or DPoP-bound).
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
pub(super) fn replay_callback(recorded: &str, pending_state: Option<&str>) -> String {
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
    out.has_bearer = az.bearer().is_some() || az.dpop_binding("").is_some();
    out.recording = rec.finish();
    Ok(out)
}
