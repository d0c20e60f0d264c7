//! Transcripts of [`mcp_sansio`] connections: a faithful, replayable record of everything a
//! [`Connection`](mcp_sansio::Connection) was told and everything it answered.
//!
//! Record a session (here a connect that a server refuses with a 503), write it as text, read it
//! back and replay it against a fresh connection; adapters record through
//! `ClientBuilder::record_to`, and `mcp-probe --record FILE` from the command line:
//!
//! ```
//! use mcp_sansio::{Config, Connection, Instant};
//! use mcp_sansio_transcript::{replay, RecordedOperation, Recorder, Split, Transcript};
//!
//! let config = Config::new("http://127.0.0.1:8080/mcp")?.with_bearer_token("secret");
//! let now = Instant::ZERO;
//! let mut rec = Recorder::new(&config, now);
//! let mut conn = Connection::new(config)?;
//! rec.operation(now, RecordedOperation::Connect);
//! conn.connect(now);
//! let t = conn.poll_transmit().expect("a discovery request");
//! rec.transmit(now, &t);
//! let answer = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n";
//! rec.bytes(now, t.exchange, answer);
//! mcp_sansio::socket::Http1Socket::new().handle_bytes(&mut conn, now, t.exchange, answer);
//! while let Some(event) = conn.poll_event() {
//!     rec.event(&event);
//! }
//! let text = rec.finish().to_text();
//! assert!(text.contains("> Authorization: Bearer <redacted>\\r\\n"));
//! assert!(!text.contains("secret"));
//! let transcript = Transcript::parse(&text)?;
//! assert_eq!(transcript.outcome()[0]["failed"]["error"], "unexpected HTTP status 503");
//! // The recording replays against a fresh connection, here one byte at a time.
//! let again = replay(&transcript, Split::Pieces(1))?;
//! again.check(&transcript)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The core knows nothing of transcripts: a recorder observes it from outside, through the calls
//! an adapter already makes. An adapter holds a [`Recorder`] next to its connection and reports to
//! it what it does: the operations it starts ([`Recorder::operation`]), every
//! [`Transmit`](mcp_sansio::Transmit) it sends, every piece of bytes it feeds back
//! ([`Recorder::bytes`], with the exact split and instant), end of stream, transport failures,
//! timeouts, and the events it drains. [`Recorder::finish`] gives the [`Transcript`], which
//! [`Transcript::to_text`] writes in the line-oriented format documented in `docs/transcripts.md`
//! and [`Transcript::parse`] reads back.
//!
//! Recording is pure (no clock, no IO) and cheap: the recorder appends to a vector. Secrets never
//! reach a transcript: the credentials of every `Authorization` request header are replaced by
//! `<redacted>` when it is recorded, and so is the value of every query parameter whose name
//! marks a secret (`api_key`, `access_token`…), see [`redact_request`]. What is a secret is the
//! core's one policy, [`mcp_sansio::auth::redact`], which authorization transcripts apply too.
//!
//! Events are recorded as JSON summaries ([`event_summary`]) that keep what a caller sees: the
//! era and version, tool names, content blocks (text in full, binary data by size), the error
//! kind and its `Display`.
//!
//! The modules:
//!
//! - [`model`]: what a transcript holds ([`Transcript`], [`Entry`], [`Record`],
//!   [`RecordedOperation`], [`TranscriptConfig`]);
//! - [`recorder`]: [`Recorder`], what an adapter reports to;
//! - [`redact`]: [`redact_request`], applied to every request before it is recorded;
//! - [`summary`]: [`event_summary`], the JSON form of an event;
//! - [`escape`](mod@escape), [`write`](mod@write) and [`parse`](mod@parse): the text format,
//!   both ways;
//! - [`auth`](mod@auth): authorization transcripts ([`AuthRecorder`], [`AuthTranscript`],
//!   [`replay_auth`]), with the redaction of tokens, codes, client secrets and verifiers in form
//!   and JSON bodies and in callback and `Location` URLs;
//! - [`h2`]: HTTP/2 sessions, recorded at the socket level ([`H2Recorder`], with the calls a
//!   driver makes), the redaction of `Authorization` inside HPACK blocks ([`H2WriteRedactor`])
//!   and the per-stream comparison of what the core wrote ([`H2Writes`]);
//! - [`sink`]: [`TranscriptSink`], [`Recording`] and [`H2Recording`] (a recorder bound to a
//!   sink) and [`TranscriptFile`] (one file per session);
//! - [`replay`](mod@replay): [`replay()`], the one replay driver (a fresh `Connection`, or for
//!   an HTTP/2 session a fresh `H2Socket` per recorded socket), with a [`Split`] parameter
//!   (as recorded, fixed piece sizes, byte by byte, adjacent pieces merged), and
//!   [`Replay::check`], which compares a replay with its transcript.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auth;
pub mod escape;
pub mod h2;
mod h2replay;
pub mod model;
pub mod parse;
pub mod recorder;
pub mod redact;
pub mod replay;
pub mod sink;
pub mod summary;
pub mod write;

pub use auth::{
    auth_event_summary, auth_request_bytes, auth_response_bytes, replay_auth, AuthEntry,
    AuthMismatch, AuthRecord, AuthRecorder, AuthRecording, AuthReplay, AuthReplayError,
    AuthTranscript, AuthTranscriptConfig, AUTH_MAGIC,
};
pub use escape::{escape, unescape};
pub use h2::{redact_header_block, H2Recorder, H2Setup, H2WriteRedactor, H2Writes};
pub use model::{
    Entry, HandleBytes, Record, RecordedOperation, Sent, Transcript, TranscriptConfig,
};
pub use parse::{ParseError, ParseErrorKind};
pub use recorder::Recorder;
pub use redact::redact_request;
pub use replay::{replay, Mismatch, Replay, Split};
pub use sink::{H2Recording, Recording, TranscriptFile, TranscriptSink};
pub use summary::{event_summary, is_lifecycle};

/// The first line of every transcript.
pub const MAGIC: &str = "mcp-transcript 1";
/// What replaces a secret in a transcript: the core's ([`mcp_sansio::auth::redact`], the one
/// redaction policy).
pub use mcp_sansio::auth::redact::REDACTED;
/// The bearer token a replay configures when the recorded connection had one: requests then carry
/// `Authorization: Bearer <redacted>` after redaction, like the recorded ones.
pub const REPLAY_TOKEN: &str = "replay-token";
/// The value a replay gives to every redacted query parameter of the recorded URL: requests then
/// carry `name=<redacted>` after redaction, like the recorded ones.
pub const REPLAY_SECRET: &str = "replay-secret";

#[cfg(test)]
mod tests;
