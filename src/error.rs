//! Errors: typed causes, each mapped to one of three [`ErrorKind`]s a caller can branch on.
use crate::prelude::*;

use crate::auth::AuthError;
use crate::budget::BudgetExceeded;
use crate::endpoint::EndpointError;
use crate::h2::H2Error;
use crate::http1::{Http1Error, RequestError};
use crate::sse::SseError;
use crate::wire::WireError;

/// The three kinds of failure a caller must tell apart without reading prose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Unreachable, refused address, timeout, a budget exceeded, an HTTP failure other than
    /// 401/403, a redirect, a malformed stream, a pagination loop, a bad configuration.
    ConnectionFailed,
    /// The server answered 401 or 403.
    AuthenticationFailed,
    /// The server answered, but with a JSON-RPC error or an answer that cannot be used.
    ServerAnswered,
}

impl ErrorKind {
    /// The stable identifier of the kind, e.g. `mcp_connection_failed_error`.
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::ConnectionFailed => "mcp_connection_failed_error",
            ErrorKind::AuthenticationFailed => "mcp_authentication_failed_error",
            ErrorKind::ServerAnswered => "mcp_server_answered_error",
        }
    }
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.code())
    }
}

/// A configuration the core refuses before sending anything.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The endpoint URL is not usable.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The bearer token contains a character that cannot be sent in a header (CR, LF, NUL or
    /// another control character). The token itself is never printed.
    #[error("the bearer token contains a character not allowed in an HTTP header")]
    InvalidToken,
    /// Client info or another configured value cannot be sent.
    #[error("invalid configuration value: {what}")]
    InvalidValue {
        /// What is invalid.
        what: &'static str,
    },
    /// No protocol version is offered.
    #[error("no protocol version is offered")]
    NoVersions,
    /// `client_capabilities` declares the tasks extension (`extensions` holds
    /// `io.modelcontextprotocol/tasks`) while [`Config::tasks`](crate::Config::tasks) is off:
    /// a server could then answer with a task this client would not follow. Turn tasks on
    /// instead, which declares the extension where it applies.
    #[error("client capabilities declare the tasks extension, but tasks are not enabled")]
    TasksNotEnabled,
    /// A trace context value (`traceparent`, `tracestate`, `baggage`) breaks its W3C format:
    /// it is never sent.
    #[error(transparent)]
    TraceContext(#[from] crate::trace_context::TraceContextError),
    /// A tool-call argument value is not a JSON object.
    #[error("unusable tool arguments: {reason}")]
    InvalidArguments {
        /// Why they were refused.
        reason: String,
    },
}

/// A failure reported by the adapter for one exchange: the socket could not be opened, written or
/// read. The core does not interpret it beyond ending the operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct TransportError {
    /// What failed.
    pub kind: TransportErrorKind,
    /// A description, for people.
    pub message: String,
}

/// The stage at which the transport failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// Name resolution failed.
    Resolve,
    /// The address policy refused every resolved address (nothing was sent).
    AddressRefused,
    /// Connecting failed.
    Connect,
    /// The TLS handshake failed.
    Tls,
    /// Reading or writing failed.
    Io,
}

impl core::fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            TransportErrorKind::Resolve => "name resolution failed",
            TransportErrorKind::AddressRefused => "address refused by policy",
            TransportErrorKind::Connect => "connect failed",
            TransportErrorKind::Tls => "TLS failed",
            TransportErrorKind::Io => "I/O failed",
        })
    }
}

/// A JSON-RPC error object the server answered with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The HTTP status it came with.
    pub status: u16,
    /// The JSON-RPC error code.
    pub code: i64,
    /// The message (truncated to a bounded length).
    pub message: String,
    /// The raw JSON of `data`, if any (truncated to a bounded length).
    pub data: Option<String>,
}

impl core::fmt::Display for RpcError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "JSON-RPC error {} (HTTP {}): {}",
            self.code, self.status, self.message
        )
    }
}

/// The server broke the protocol in a way that makes the stream unusable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// A body that should hold a JSON-RPC message does not.
    #[error("malformed JSON-RPC message: {reason}")]
    MalformedMessage {
        /// serde_json's description.
        reason: String,
    },
    /// A batch (JSON array) where a single message is expected.
    #[error("a JSON-RPC batch was received; batches are not accepted")]
    Batch,
    /// A response for another request id.
    #[error("response id {got} does not match the request id {expected}")]
    WrongId {
        /// The id sent.
        expected: u64,
        /// The id received (raw JSON, truncated).
        got: String,
    },
    /// The response's content type is neither JSON nor an event stream.
    #[error("unexpected content type {content_type:?} for HTTP {status}")]
    UnexpectedContentType {
        /// The HTTP status.
        status: u16,
        /// The media type received, if any.
        content_type: Option<String>,
    },
    /// A response stream ended before the response arrived and cannot be resumed.
    #[error("the response stream ended without the response and cannot be resumed: {reason}")]
    StreamEnded {
        /// Why it cannot be resumed.
        reason: &'static str,
    },
    /// The session id changed, or is not a visible-ASCII token.
    #[error("invalid session id: {reason}")]
    InvalidSession {
        /// What is wrong.
        reason: &'static str,
    },
    /// A listing returned a cursor it had already returned: following it would loop.
    #[error("pagination loop: cursor {cursor:?} was already followed")]
    PaginationLoop {
        /// The repeated cursor (truncated).
        cursor: String,
    },
}

/// Why an operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration was refused; nothing was sent.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// A budget was exceeded.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// The response could not be read off its wire: a malformed HTTP/1.1 response, a failed
    /// HTTP/2 stream or connection. The [`WireError`] names the cause.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A request could not be encoded (a header value with CR/LF, …).
    #[error("request: {0}")]
    Request(#[from] RequestError),
    /// The event stream is malformed.
    #[error(transparent)]
    Sse(#[from] SseError),
    /// The transport failed.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// The connection to the server closed before the response was complete.
    #[error("the server closed the connection: {stage}")]
    UnexpectedEof {
        /// Where in the exchange.
        stage: &'static str,
    },
    /// The protocol was broken.
    #[error("protocol: {0}")]
    Protocol(#[from] ProtocolError),
    /// The server answered with a redirect, which is never followed.
    #[error("HTTP {status} redirect (to {location:?}); redirects are never followed")]
    Redirect {
        /// The status (3xx).
        status: u16,
        /// The `Location` header, if any (truncated).
        location: Option<String>,
    },
    /// The server answered 401 or 403.
    #[error("authentication failed: HTTP {status}")]
    Authentication {
        /// 401 or 403.
        status: u16,
        /// The `WWW-Authenticate` challenge, if any (truncated).
        challenge: Option<String>,
    },
    /// The server answered with an HTTP status that is not a usable answer.
    #[error("unexpected HTTP status {status}")]
    HttpStatus {
        /// The status.
        status: u16,
    },
    /// The legacy session ended on the server (HTTP 404 to a request carrying its id) again
    /// after the operation had started a new session for the first such answer.
    #[error("the server ended the session (HTTP 404), also the new one started for the operation")]
    SessionExpired,
    /// No protocol version is spoken by both sides.
    #[error("no mutual protocol version: we offer {ours:?}, the server supports {theirs:?}")]
    NoMutualVersion {
        /// The versions this client offered.
        ours: Vec<String>,
        /// The versions the server named (truncated list).
        theirs: Vec<String>,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{0}")]
    Rpc(RpcError),
    /// The server requires client capabilities this client did not declare: JSON-RPC `-32021`
    /// (MissingRequiredClientCapability, 2026-07-28), whose `data.requiredCapabilities` names
    /// them. The request cannot succeed until the client declares them.
    #[error(
        "the server requires client capabilities this client did not declare: {} ({rpc})",
        required.join(", ")
    )]
    MissingClientCapability {
        /// The names of the required capabilities (the keys of `data.requiredCapabilities`), in
        /// the server's order: at most [`MAX_REQUIRED_CAPABILITIES`], each truncated to
        /// [`MAX_CAPABILITY_NAME`] bytes.
        required: Vec<String>,
        /// The raw JSON of `data.requiredCapabilities`, if it fits in
        /// [`MAX_REQUIRED_CAPABILITIES_BYTES`] (absent otherwise, and when the server sent none).
        raw: Option<String>,
        /// The JSON-RPC error itself (message and `data` truncated as for [`Error::Rpc`]).
        rpc: RpcError,
    },
    /// The server's answer arrived but cannot be used.
    #[error("unusable answer to {method}: {reason}")]
    InvalidAnswer {
        /// The request method.
        method: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The caller started an operation the connection cannot run now.
    #[error("operation not allowed: {reason}")]
    Misuse {
        /// Why.
        reason: &'static str,
    },
    /// The connection was closed while the operation was running.
    #[error("the connection was closed by the caller")]
    Closed,
    /// The caller abandoned the running operation ([`Connection::abandon`](crate::Connection::abandon),
    /// e.g. by dropping its future): its request was cancelled and the connection stays usable.
    #[error("the operation was abandoned by the caller")]
    Abandoned,
    /// A bug of this crate: the connection's state machine was asked to make a transition its
    /// [transition table](crate::Connection#transitions) does not list. A release
    /// build ends the connection with it (a debug build stops at the bug); kind
    /// [`ErrorKind::ConnectionFailed`], and every later operation fails with it.
    #[error("invalid state transition {from} → {to} (a bug of mcp-sansio)")]
    InvalidTransition {
        /// The state the connection was in.
        from: crate::connection::ConnectionState,
        /// The state it was asked to move to.
        to: crate::connection::ConnectionState,
    },
    /// A task (SEP-2663) broke its rules, or the server no longer knows it; its kind is
    /// [`TaskError::kind`](crate::task::TaskError::kind).
    #[error("task: {0}")]
    Task(crate::task::TaskError),
    /// Authorization (OAuth 2.1) failed; its kind is [`AuthError::kind`].
    #[error("authorization: {0}")]
    Auth(#[from] AuthError),
    /// A tool changed since it was pinned and the policy is
    /// [`PinPolicy::Refuse`](crate::pin::PinPolicy::Refuse) (see [`crate::pin`]): a listing that
    /// shows it, or a call of it (not sent), fails. Kind [`ErrorKind::ServerAnswered`]: the
    /// server answered, with a definition this client will not use.
    #[error(
        "tool {name:?} changed since it was pinned ({changed} changed tool(s) in all); the {} is refused",
        match operation { crate::Operation::CallTool => "call", _ => "listing" }
    )]
    ToolChanged {
        /// The first changed tool's name.
        name: String,
        /// What saw it: a listing or a call.
        operation: crate::Operation,
        /// How many tools changed (1 for a call).
        changed: usize,
    },
}

impl From<Http1Error> for Error {
    fn from(e: Http1Error) -> Error {
        Error::Wire(WireError::Http1(e))
    }
}

impl From<H2Error> for Error {
    fn from(e: H2Error) -> Error {
        Error::Wire(WireError::Http2(e))
    }
}

impl Error {
    /// The kind of the failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Authentication { .. } => ErrorKind::AuthenticationFailed,
            Error::Auth(e) => e.kind(),
            Error::Task(e) => e.kind(),
            Error::Rpc(_)
            | Error::MissingClientCapability { .. }
            | Error::InvalidAnswer { .. }
            | Error::ToolChanged { .. } => ErrorKind::ServerAnswered,
            _ => ErrorKind::ConnectionFailed,
        }
    }

    /// The budget this error names, if it is an exceeded budget.
    pub fn budget(&self) -> Option<BudgetExceeded> {
        match self {
            Error::Budget(b) => Some(*b),
            Error::Wire(e) => e.budget(),
            Error::Sse(SseError::Budget(b)) => Some(*b),
            Error::Task(crate::task::TaskError::Budget(b)) => Some(*b),
            _ => None,
        }
    }
}

/// Capability names kept in [`Error::MissingClientCapability::required`].
pub const MAX_REQUIRED_CAPABILITIES: usize = 16;

/// Bytes kept of each capability name in [`Error::MissingClientCapability::required`].
pub const MAX_CAPABILITY_NAME: usize = 64;

/// Bytes of `data.requiredCapabilities` kept raw in [`Error::MissingClientCapability::raw`].
pub const MAX_REQUIRED_CAPABILITIES_BYTES: usize = 1024;

/// The `-32021` error the server answered with, typed: the names of `data.requiredCapabilities`
/// (bounded) and its raw JSON if small enough.
pub(crate) fn missing_capability(
    data: Option<&serde_json::value::RawValue>,
    rpc: RpcError,
) -> Error {
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    use serde::Deserialize;

    /// The names of an object's members: the first [`MAX_REQUIRED_CAPABILITIES`] kept.
    struct Names(Vec<String>);
    impl<'de> Deserialize<'de> for Names {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Names;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("an object of capabilities")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Names, A::Error> {
                    let mut out = Vec::new();
                    while let Some(k) = a.next_key::<alloc::borrow::Cow<'de, str>>()? {
                        a.next_value::<IgnoredAny>()?;
                        if out.len() < MAX_REQUIRED_CAPABILITIES {
                            out.push(truncated(&k, MAX_CAPABILITY_NAME));
                        }
                    }
                    Ok(Names(out))
                }
            }
            d.deserialize_map(V)
        }
    }

    #[derive(Deserialize)]
    struct Data<'a> {
        #[serde(rename = "requiredCapabilities", borrow, default)]
        required: Option<&'a serde_json::value::RawValue>,
    }
    let raw = data
        .and_then(|d| serde_json::from_str::<Data<'_>>(d.get()).ok())
        .and_then(|d| d.required);
    let required = raw
        .and_then(|r| serde_json::from_str::<Names>(r.get()).ok())
        .map(|n| n.0)
        .unwrap_or_default();
    Error::MissingClientCapability {
        required,
        raw: raw
            .map(|r| r.get())
            .filter(|r| r.len() <= MAX_REQUIRED_CAPABILITIES_BYTES)
            .map(str::to_owned),
        rpc,
    }
}

/// Truncates `s` to at most `max` bytes on a character boundary.
pub(crate) fn truncated(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// Lossy, truncated text of raw header bytes.
pub(crate) fn truncated_bytes(b: &[u8], max: usize) -> String {
    let b = &b[..b.len().min(max)];
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;

    #[test]
    fn wrapped_errors_say_each_thing_once() {
        let url = Error::Config(ConfigError::Endpoint(EndpointError::UnsupportedScheme));
        assert_eq!(
            url.to_string(),
            "invalid configuration: invalid endpoint URL: the scheme is not http or https"
        );
        let sse = Error::Sse(SseError::Budget(BudgetExceeded::new(Budget::SseEvent, 4)));
        assert_eq!(
            sse.to_string(),
            "event stream: budget exceeded: sse_event_bytes (limit 4)"
        );
        let http = Error::from(Http1Error::Malformed {
            what: "status line",
        });
        assert_eq!(http.to_string(), "malformed HTTP/1 response: status line");
        let h2 = Error::from(crate::h2::H2Error::SettingsTimeout { ms: 10 });
        assert!(h2.to_string().starts_with("HTTP/2: "), "{h2}");
        let args = Error::Config(ConfigError::InvalidArguments {
            reason: "not a JSON object".into(),
        });
        assert_eq!(
            args.to_string(),
            "invalid configuration: unusable tool arguments: not a JSON object"
        );
    }
}
