//! What a transcript holds: its configuration and its entries, in the order they happened.

use std::time::Duration;

use mcp_sansio::Budgets;
use mcp_sansio::Scheme;
use mcp_sansio::{ClientInfo, Config, Connection, EraHint, Instant};
use mcp_sansio::{ConfigError, TransportErrorKind};
use mcp_sansio::{Tool, ToolNameRule};
use serde_json::Value;

use crate::h2::H2Setup;
use crate::summary::is_lifecycle;
use crate::{REDACTED, REPLAY_SECRET, REPLAY_TOKEN};
use mcp_sansio::auth::redact::url as redact_url;

/// A request as transcripts and replays compare it: its exchange, whether the core asked for a
/// fresh socket, and its bytes after redaction.
pub type Sent = (u64, bool, Vec<u8>);

/// A task handle's bytes ([`TaskHandle::to_bytes`](mcp_sansio::task::TaskHandle::to_bytes)) in a
/// recorded operation. The task id they hold may be a bearer secret to the server ("Servers MAY
/// use task IDs as bearer tokens"), so `Debug` shows their length only; the transcript holds them
/// whole.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HandleBytes(pub Vec<u8>);

impl core::fmt::Debug for HandleBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "HandleBytes(<{} bytes>)", self.0.len())
    }
}

impl HandleBytes {
    /// The bytes a transcript records for `handle`, resumed on a connection with `config`: the
    /// handle rebound ([`TaskHandle::rebound`](mcp_sansio::task::TaskHandle::rebound)) to the
    /// stand-in configuration a replay of that connection runs with
    /// ([`TranscriptConfig::to_config`]: [`REPLAY_TOKEN`], a stand-in DPoP key,
    /// [`REPLAY_SECRET`] for redacted query values, no grant). A replay's resumption then meets
    /// the handle's server and context as the recorded one did; the transcript holds neither the
    /// URL's secret query values nor a digest of the credential. `None` when the handle is not
    /// of `config`'s server and context (the resumption is refused and records the real bytes)
    /// or cannot be rebound.
    pub fn for_recording(
        handle: &mcp_sansio::task::TaskHandle,
        config: &Config,
    ) -> Option<HandleBytes> {
        handle.check(config).ok()?;
        let stand_in = TranscriptConfig::from_config(config).to_config().ok()?;
        Some(HandleBytes(handle.rebound(&stand_in).ok()?.to_bytes()))
    }
}

/// An operation the adapter started on the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedOperation {
    /// [`Connection::connect`].
    Connect,
    /// [`Connection::list_tools`].
    ListTools,
    /// [`Connection::call_tool`] with the tool name and the raw
    /// argument bytes.
    CallTool {
        /// The tool name.
        name: String,
        /// The arguments, raw JSON as given.
        arguments: Vec<u8>,
    },
    /// [`Connection::call_known_tool`]: the tool's name and
    /// raw `inputSchema` (which gives its `x-mcp-header` parameters) and the raw argument bytes.
    CallKnownTool {
        /// The tool name.
        name: String,
        /// The tool's `inputSchema`, raw JSON.
        input_schema: String,
        /// The arguments, raw JSON as given.
        arguments: Vec<u8>,
    },
    /// [`Connection::close`].
    Close,
    /// [`Connection::abandon`]: the embedder gave the running operation up (dropped its future).
    Abandon,
    /// [`Connection::provide_input`]: the responses given to an
    /// input request (raw JSON object), or `None` for a decline.
    ProvideInput(Option<Vec<u8>>),
    /// [`Connection::answer_server_request`]: the server request's raw id and the result given
    /// (raw JSON object), or `None` for a refusal.
    AnswerServerRequest {
        /// The request's raw JSON id.
        id: String,
        /// The result, or `None`.
        result: Option<Vec<u8>>,
    },
    /// [`Connection::resume_task`] with a task handle's bytes
    /// ([`TaskHandle::to_bytes`](mcp_sansio::task::TaskHandle::to_bytes)), followed by
    /// [`Connection::cancel_task`] when `cancel`. The handle names its server URL and
    /// authorization context: a session with credentials or secret query values records it
    /// rebound to the replay's stand-ins ([`HandleBytes::for_recording`]).
    ResumeTask {
        /// The handle's bytes.
        handle: HandleBytes,
        /// Whether the task was cancelled at once.
        cancel: bool,
    },
    /// [`Connection::get_task`] with a task handle's bytes: one `tasks/get`, the operation
    /// ending with its report.
    GetTask {
        /// The handle's bytes.
        handle: HandleBytes,
    },
}

impl RecordedOperation {
    /// The record of [`Connection::call_known_tool`] with
    /// `tool` and `arguments`.
    pub fn known_tool(tool: &Tool, arguments: &[u8]) -> RecordedOperation {
        RecordedOperation::CallKnownTool {
            name: tool.name().to_owned(),
            input_schema: tool.input_schema().to_owned(),
            arguments: arguments.to_vec(),
        }
    }

    /// Starts this operation on `conn` at `now`, as it was started when recorded.
    pub fn apply(&self, conn: &mut Connection, now: Instant) {
        match self {
            RecordedOperation::Connect => conn.connect(now),
            RecordedOperation::ListTools => conn.list_tools(now),
            RecordedOperation::CallTool { name, arguments } => conn.call_tool(now, name, arguments),
            RecordedOperation::CallKnownTool {
                name,
                input_schema,
                arguments,
            } => {
                // A listed tool's schema always gives its parameters (else it was refused).
                let params = mcp_sansio::header_params(input_schema).unwrap_or_default();
                let tool = Tool::new(name, None, input_schema, params);
                conn.call_known_tool(now, &tool, arguments)
            }
            RecordedOperation::Close => conn.close(now),
            RecordedOperation::Abandon => conn.abandon(now),
            RecordedOperation::ProvideInput(answers) => conn.provide_input(now, answers.as_deref()),
            RecordedOperation::AnswerServerRequest { id, result } => {
                // A recorded id was a JSON value; one that is not replays as nothing sent.
                if let Ok(id) = serde_json::value::RawValue::from_string(id.clone()) {
                    let _ = conn.answer_server_request(now, &id, result.as_deref());
                }
            }
            RecordedOperation::ResumeTask { handle, cancel } => {
                // A recorded handle was read when recorded; one that is not replays as nothing
                // started.
                if let Ok(handle) = mcp_sansio::task::TaskHandle::from_bytes(&handle.0) {
                    conn.resume_task(now, &handle);
                    if *cancel {
                        // Fails only when the resume failed at once, as when recorded.
                        let _ = conn.cancel_task(now);
                    }
                }
            }
            RecordedOperation::GetTask { handle } => {
                if let Ok(handle) = mcp_sansio::task::TaskHandle::from_bytes(&handle.0) {
                    conn.get_task(now, &handle);
                }
            }
        }
    }
}

/// One thing that happened, with its offset from the start of the recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Time since the recording started.
    pub at: Duration,
    /// What happened.
    pub record: Record,
}

/// What a transcript entry holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// An operation was started.
    Operation(RecordedOperation),
    /// A request was sent (bytes after redaction).
    Send {
        /// Its exchange.
        exchange: u64,
        /// Whether the core asked for a fresh socket.
        fresh: bool,
        /// The request bytes, redacted.
        bytes: Vec<u8>,
    },
    /// The adapter says which socket carried an exchange: a pooled one (`reused`) or a new one.
    Socket {
        /// The exchange.
        exchange: u64,
        /// Whether an idle pooled socket was reused.
        reused: bool,
    },
    /// Response bytes fed to the connection, exactly as one `Http1Socket::handle_bytes` call.
    Recv {
        /// The exchange.
        exchange: u64,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// The server closed the exchange's socket (`handle_eof`).
    Eof {
        /// The exchange.
        exchange: u64,
    },
    /// The transport failed for an exchange (`Input::TransportError`).
    TransportError {
        /// The exchange.
        exchange: u64,
        /// The stage.
        kind: TransportErrorKind,
        /// The description.
        message: String,
    },
    /// `handle_timeout` was called.
    Timeout,
    /// An event was drained: its summary (see [`event_summary`](crate::event_summary)), compact JSON.
    Event(String),
    /// HTTP/2: socket `socket` was opened and the work item moved onto it (the first socket, or a
    /// fresh one after [`H2Socket::poll_fresh`](mcp_sansio::mux::H2Socket::poll_fresh)).
    H2Open {
        /// The socket number, from 1, one more than the previous socket's.
        socket: u64,
    },
    /// HTTP/2: bytes the core wrote to socket `socket` (one
    /// [`H2Socket::poll_transmit`](mcp_sansio::mux::H2Socket::poll_transmit)), with
    /// secrets redacted ([`H2WriteRedactor`](crate::h2::H2WriteRedactor)).
    H2Write {
        /// The socket.
        socket: u64,
        /// The bytes, redacted.
        bytes: Vec<u8>,
    },
    /// HTTP/2: bytes read from socket `socket`, fed in one `handle_bytes` call.
    H2Read {
        /// The socket.
        socket: u64,
        /// The bytes, as received.
        bytes: Vec<u8>,
    },
    /// HTTP/2: the server closed socket `socket` (`handle_eof`).
    H2Eof {
        /// The socket.
        socket: u64,
    },
    /// HTTP/2: socket `socket` failed (the driver then ends it with `handle_eof`).
    H2Failure {
        /// The socket.
        socket: u64,
        /// The stage.
        kind: TransportErrorKind,
        /// The description.
        message: String,
    },
    /// HTTP/2: the fresh socket the core asked for could not be opened; the requests waiting for
    /// it fail with this error (an `Input::TransportError` of each).
    H2DialError {
        /// The stage.
        kind: TransportErrorKind,
        /// The description.
        message: String,
    },
}

/// A signer for replays of DPoP sessions: its proofs are never compared (a transcript holds
/// `DPoP: <redacted>`), so its signature is a constant and its key a fixed public point.
struct ReplaySigner;

impl mcp_sansio::auth::JwtSigner for ReplaySigner {
    fn algorithm(&self) -> mcp_sansio::auth::JwsAlgorithm {
        mcp_sansio::auth::JwsAlgorithm::ES256
    }

    fn sign(&self, _: &[u8]) -> Result<Vec<u8>, mcp_sansio::auth::SignError> {
        Ok(vec![0; 64])
    }

    fn public_jwk(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"kty": "EC", "crv": "P-256", "x": "replay", "y": "replay"}))
    }
}

/// The DPoP binding a replay configures when the recorded connection had one: requests then
/// carry `Authorization: DPoP <redacted>` and `DPoP: <redacted>` after redaction, like the
/// recorded ones.
fn replay_dpop() -> mcp_sansio::auth::DpopBinding {
    mcp_sansio::auth::DpopBinding::new(REPLAY_TOKEN, replay_dpop_key(), "replay")
}

/// The DPoP key of a replay ([`ReplaySigner`]).
pub(crate) fn replay_dpop_key() -> mcp_sansio::auth::DpopKey {
    mcp_sansio::auth::DpopKey(std::sync::Arc::new(ReplaySigner))
}

/// The configuration a replay needs: everything that shapes the requests the core sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptConfig {
    /// The endpoint URL, with the values of secret query parameters redacted
    /// ([`redact::url`](mcp_sansio::auth::redact::url)).
    pub url: String,
    /// The client name and version sent to the server.
    pub client_info: ClientInfo,
    /// Whether a bearer token was configured (its value is never recorded).
    pub bearer_token: bool,
    /// Whether a DPoP-bound token was configured ([`Config::dpop`]; neither the token, its key
    /// nor its proofs are recorded).
    pub dpop: bool,
    /// Modern versions offered.
    pub modern_versions: Vec<String>,
    /// Legacy versions accepted.
    pub legacy_versions: Vec<String>,
    /// The era hint given to the connection.
    pub era_hint: Option<EraHint>,
    /// The declared client capabilities (raw JSON object).
    pub client_capabilities: String,
    /// Whether input requests are answered by the embedder.
    pub input_hook: bool,
    /// The tool-name rule.
    pub tool_names: ToolNameRule,
    /// The budgets.
    pub budgets: Budgets,
    /// `Some` for an HTTP/2 session (`config http 2`): its scheme and socket limits.
    pub http2: Option<H2Setup>,
    /// Whether the client followed tasks ([`Config::tasks`], `config tasks`): each request then
    /// declares the tasks extension, and a replay must declare it too.
    pub tasks: bool,
    /// The Unix time at the timeline's zero ([`Config::unix_at_zero`], `config unix-at-zero`):
    /// a task handle's deadlines are computed from it, so a replay needs the recorded value.
    pub unix_at_zero: core::time::Duration,
}

impl TranscriptConfig {
    /// What a transcript records of `config`.
    pub fn from_config(config: &Config) -> TranscriptConfig {
        let scheme = match config.endpoint.scheme() {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        TranscriptConfig {
            url: redact_url(&format!(
                "{scheme}://{}{}",
                config.endpoint.authority(),
                config.endpoint.target()
            )),
            client_info: config.client_info.clone(),
            bearer_token: !config.bearer_token.is_empty(),
            dpop: config.dpop.is_some(),
            modern_versions: config.modern_versions.clone(),
            legacy_versions: config.legacy_versions.clone(),
            era_hint: config.era_hint.clone(),
            client_capabilities: config.client_capabilities.clone(),
            input_hook: config.input_hook,
            tool_names: config.tool_names,
            budgets: config.budgets.clone(),
            http2: None,
            tasks: config.tasks,
            unix_at_zero: config.unix_at_zero,
        }
    }

    /// A configuration that makes the core send what was recorded. A recorded token becomes
    /// [`REPLAY_TOKEN`] and a redacted query value [`REPLAY_SECRET`], which redaction hides again.
    pub fn to_config(&self) -> Result<Config, ConfigError> {
        let mut c = Config::new(&self.url.replace(REDACTED, REPLAY_SECRET))?;
        if self.bearer_token {
            c.bearer_token = REPLAY_TOKEN.to_owned();
        }
        if self.dpop {
            c.dpop = Some(replay_dpop());
        }
        c.client_info = self.client_info.clone();
        c.modern_versions = self.modern_versions.clone();
        c.legacy_versions = self.legacy_versions.clone();
        c.era_hint = self.era_hint.clone();
        c.client_capabilities = self.client_capabilities.clone();
        c.input_hook = self.input_hook;
        c.tool_names = self.tool_names;
        c.budgets = self.budgets.clone();
        c.tasks = self.tasks;
        c.unix_at_zero = self.unix_at_zero;
        Ok(c)
    }
}

/// A whole recording: the configuration and the entries in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    /// The configuration.
    pub config: TranscriptConfig,
    /// Free comment lines (without the leading `# `), kept at the top of the text.
    pub comments: Vec<String>,
    /// The entries.
    pub entries: Vec<Entry>,
}

impl Transcript {
    /// The outcome: every event summary that is not an exchange lifecycle event, in order.
    pub fn outcome(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|v| !is_lifecycle(v))
            .collect()
    }

    /// The requests recorded, in order, in [`Replay::sends`](crate::Replay::sends)'s form.
    pub fn sends(&self) -> Vec<Sent> {
        self.entries
            .iter()
            .filter_map(|e| match &e.record {
                Record::Send {
                    exchange,
                    fresh,
                    bytes,
                } => Some((*exchange, *fresh, bytes.clone())),
                _ => None,
            })
            .collect()
    }

    /// HTTP/2: what the core wrote, in order: the socket and the redacted bytes of each `write`
    /// entry ([`Replay::writes`](crate::Replay::writes)'s form).
    pub fn h2_writes(&self) -> Vec<(u64, Vec<u8>)> {
        self.entries
            .iter()
            .filter_map(|e| match &e.record {
                Record::H2Write { socket, bytes } => Some((*socket, bytes.clone())),
                _ => None,
            })
            .collect()
    }

    /// Every recorded event summary, parsed, in order.
    pub fn events(&self) -> Vec<Value> {
        self.entries
            .iter()
            .filter_map(|e| match &e.record {
                Record::Event(s) => serde_json::from_str(s).ok(),
                _ => None,
            })
            .collect()
    }
}
