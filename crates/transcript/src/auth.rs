//! Transcripts of authorizations: what an [`Authorizer`](mcp_sansio::auth::Authorizer) was told and what it answered, secrets
//! redacted, and a replay that drives a fresh `Authorizer` with the recorded answers.
//!
//! An authorization transcript is a text file of its own kind (first line [`AUTH_MAGIC`]), written
//! with the same conventions as a connection transcript (offsets, escaped byte blocks, JSON
//! event summaries); the format is in `docs/transcripts.md`. The HTTP exchanges of an
//! authorization are the core's ([`AuthExchange`](mcp_sansio::auth::AuthExchange), a
//! [`Request`](mcp_sansio::wire::Request) with its id, and
//! [`AuthResponse`](mcp_sansio::auth::AuthResponse)), so they are recorded
//! as the request and response the core sees, not as socket bytes.
//!
//! - [`AuthRecorder`] is what the runner (`mcp_sansio_net::auth::Authorization`) reports to;
//!   [`AuthRecording`] binds one to a [`TranscriptSink`](crate::sink::TranscriptSink).
//! - [`AuthTranscript::to_text`] and [`AuthTranscript::parse`] write and read the text.
//! - [`replay_auth`] drives a fresh `Authorizer` from a transcript; [`AuthReplay::check`]
//!   compares it with the transcript.
//! - Everything recorded is redacted by the core's one policy, [`mcp_sansio::auth::redact`]
//!   (URLs, headers by name, form and JSON bodies), like the connection transcripts.

mod model;
mod parse;
mod recorder;
mod replay;
mod sink;
mod summary;
#[cfg(test)]
mod tests;
mod write;

/// The first line of every authorization transcript.
pub const AUTH_MAGIC: &str = "mcp-auth-transcript 1";

/// What replaces a callback's `state` when it was the state of the authorization waiting for it
/// (a replay puts its own waiting state there). A `state` that did not match is `<redacted>`.
pub const PENDING_STATE: &str = "<pending-state>";

/// The byte a replay fills its 64 "random" bytes with: the replay's `state` and PKCE verifier.
pub const REPLAY_RANDOM_BYTE: u8 = 0x5a;

pub use model::{
    auth_request_bytes, auth_response_bytes, AuthEntry, AuthRecord, AuthTranscript,
    AuthTranscriptConfig,
};
pub use recorder::AuthRecorder;
pub use replay::{replay_auth, AuthMismatch, AuthReplay, AuthReplayError};
pub use sink::AuthRecording;
pub use summary::auth_event_summary;

use model::response_from_bytes;
use summary::refused_summary;
use write::write_auth_entry;
