//! Transcripts: a faithful, replayable record of everything a [`Connection`]
//! was told and everything it answered.
//!
//! An adapter holds a [`Recorder`] next to its connection and reports to it what it does: the
//! operations it starts ([`Recorder::operation`]), every [`Transmit`] it sends, every piece of
//! bytes it feeds back ([`Recorder::bytes`], with the exact split and instant), end of stream,
//! transport failures, timeouts, and the events it drains. [`Recorder::finish`] gives the
//! [`Transcript`], which [`Transcript::to_text`] writes in the line-oriented format documented in
//! `docs/transcripts.md` and [`Transcript::parse`] reads back.
//!
//! Recording is pure (no clock, no IO) and cheap: the recorder appends to a vector. Secrets never
//! reach a transcript: the value of every `Authorization` request header is replaced by
//! `Bearer <redacted>` (or `<redacted>`) when it is recorded, see [`redact_request`].
//!
//! Events are recorded as JSON summaries ([`event_summary`]) that keep what a caller sees: the
//! era and version, tool names, content blocks (text in full, binary data by size), the error
//! kind and its `Display`.
//!
//! ```
//! use mcp_sansio::transcript::{RecordedOperation, Recorder, Transcript};
//! use mcp_sansio::{Config, Connection, Instant};
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
//! conn.handle_bytes(now, t.exchange, answer);
//! while let Some(event) = conn.poll_event() {
//!     rec.event(&event);
//! }
//! let text = rec.finish().to_text();
//! assert!(text.contains("> Authorization: Bearer <redacted>\\r\\n"));
//! assert!(!text.contains("secret"));
//! let outcome = Transcript::parse(&text)?.outcome();
//! assert_eq!(outcome[0]["failed"]["error"], "unexpected HTTP status 503");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};

use crate::budget::Budgets;
use crate::call::{ContentBlock, ResourceContents};
use crate::config::{ClientInfo, Config, Era, EraHint};
use crate::connection::{Event, ExchangeId, Operation, Transmit};
use crate::endpoint::Scheme;
use crate::error::{ConfigError, TransportError, TransportErrorKind};
use crate::list::{Tool, ToolNameRule};
use crate::time::Instant;
use crate::Connection;

/// The first line of every transcript.
pub const MAGIC: &str = "mcp-transcript 1";
/// What replaces a secret in a transcript.
pub const REDACTED: &str = "<redacted>";
/// The bearer token a replay configures when the recorded connection had one: requests then carry
/// `Authorization: Bearer <redacted>` after redaction, like the recorded ones.
pub const REPLAY_TOKEN: &str = "replay-token";

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
    /// [`Connection::provide_input`]: the responses given to an
    /// input request (raw JSON object), or `None` for a decline.
    ProvideInput(Option<Vec<u8>>),
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
                let params = crate::xmcp::header_params(input_schema).unwrap_or_default();
                let tool = Tool::new(name, None, input_schema, params);
                conn.call_known_tool(now, &tool, arguments)
            }
            RecordedOperation::Close => conn.close(now),
            RecordedOperation::ProvideInput(answers) => conn.provide_input(now, answers.as_deref()),
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
    /// Response bytes fed to the connection, exactly as one `handle_bytes` call.
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
    /// The transport failed for an exchange (`handle_transport_error`).
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
    /// An event was drained: its summary (see [`event_summary`]), compact JSON.
    Event(String),
}

/// The configuration a replay needs: everything that shapes the requests the core sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptConfig {
    /// The endpoint URL.
    pub url: String,
    /// The client name and version sent to the server.
    pub client_info: ClientInfo,
    /// Whether a bearer token was configured (its value is never recorded).
    pub bearer_token: bool,
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
}

impl TranscriptConfig {
    /// What a transcript records of `config`.
    pub fn from_config(config: &Config) -> TranscriptConfig {
        let scheme = match config.endpoint.scheme() {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        TranscriptConfig {
            url: format!(
                "{scheme}://{}{}",
                config.endpoint.authority(),
                config.endpoint.target()
            ),
            client_info: config.client_info.clone(),
            bearer_token: !config.bearer_token.is_empty(),
            modern_versions: config.modern_versions.clone(),
            legacy_versions: config.legacy_versions.clone(),
            era_hint: config.era_hint.clone(),
            client_capabilities: config.client_capabilities.clone(),
            input_hook: config.input_hook,
            tool_names: config.tool_names,
            budgets: config.budgets.clone(),
        }
    }

    /// A configuration that makes the core send what was recorded. A recorded token becomes
    /// [`REPLAY_TOKEN`], which redaction hides again.
    pub fn to_config(&self) -> Result<Config, ConfigError> {
        let mut c = Config::new(&self.url)?;
        if self.bearer_token {
            c.bearer_token = REPLAY_TOKEN.to_owned();
        }
        c.client_info = self.client_info.clone();
        c.modern_versions = self.modern_versions.clone();
        c.legacy_versions = self.legacy_versions.clone();
        c.era_hint = self.era_hint.clone();
        c.client_capabilities = self.client_capabilities.clone();
        c.input_hook = self.input_hook;
        c.tool_names = self.tool_names;
        c.budgets = self.budgets.clone();
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

/// Records a connection's inputs and outputs. Cheap to hold (a vector), `Send`, never fails.
#[derive(Clone, Debug)]
pub struct Recorder {
    start: Instant,
    last: Duration,
    header_taken: bool,
    transcript: Transcript,
}

impl Recorder {
    /// A recorder for a connection made with `config`, whose timeline starts at `start`.
    pub fn new(config: &Config, start: Instant) -> Recorder {
        Recorder {
            start,
            last: Duration::ZERO,
            header_taken: false,
            transcript: Transcript {
                config: TranscriptConfig::from_config(config),
                comments: Vec::new(),
                entries: Vec::new(),
            },
        }
    }

    /// Adds a comment line to the transcript (e.g. what was recorded, against which server).
    pub fn comment(&mut self, text: &str) {
        self.transcript
            .comments
            .extend(text.lines().map(str::to_owned));
    }

    fn push(&mut self, now: Option<Instant>, record: Record) {
        if let Some(now) = now {
            self.last = now.saturating_since(self.start).max(self.last);
        }
        self.transcript.entries.push(Entry {
            at: self.last,
            record,
        });
    }

    /// An operation was started at `now`.
    pub fn operation(&mut self, now: Instant, operation: RecordedOperation) {
        self.push(Some(now), Record::Operation(operation));
    }

    /// A request was handed to the network at `now` (recorded redacted).
    pub fn transmit(&mut self, now: Instant, transmit: &Transmit) {
        let record = Record::Send {
            exchange: transmit.exchange.0,
            fresh: transmit.fresh_socket,
            bytes: redact_request(&transmit.bytes),
        };
        self.push(Some(now), record);
    }

    /// The exchange went out on a pooled socket (`reused`) or a newly opened one.
    pub fn socket(&mut self, now: Instant, exchange: ExchangeId, reused: bool) {
        let record = Record::Socket {
            exchange: exchange.0,
            reused,
        };
        self.push(Some(now), record);
    }

    /// `bytes` were fed to the connection for `exchange` at `now`, in one call.
    pub fn bytes(&mut self, now: Instant, exchange: ExchangeId, bytes: &[u8]) {
        let record = Record::Recv {
            exchange: exchange.0,
            bytes: bytes.to_vec(),
        };
        self.push(Some(now), record);
    }

    /// The server closed `exchange`'s socket at `now`.
    pub fn eof(&mut self, now: Instant, exchange: ExchangeId) {
        self.push(
            Some(now),
            Record::Eof {
                exchange: exchange.0,
            },
        );
    }

    /// The transport failed for `exchange` at `now`.
    pub fn transport_error(&mut self, now: Instant, exchange: ExchangeId, error: &TransportError) {
        let record = Record::TransportError {
            exchange: exchange.0,
            kind: error.kind,
            message: error.message.clone(),
        };
        self.push(Some(now), record);
    }

    /// `handle_timeout` was called at `now`.
    pub fn timeout(&mut self, now: Instant) {
        self.push(Some(now), Record::Timeout);
    }

    /// An event was drained (recorded at the latest instant seen).
    pub fn event(&mut self, event: &Event) {
        let summary = event_summary(event).to_string();
        self.push(None, Record::Event(summary));
    }

    /// The transcript so far, without ending the recording.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The text of what was recorded since the last call (with the header on the first call), and
    /// forgets those entries: a sink can write a long recording as it goes, with bounded memory.
    /// The pieces, concatenated, are one transcript; [`finish`](Recorder::finish) then holds only
    /// the entries not yet taken.
    pub fn take_text(&mut self) -> String {
        let mut out = String::new();
        if !self.header_taken {
            self.header_taken = true;
            self.transcript.write_header(&mut out);
        }
        for e in self.transcript.entries.drain(..) {
            write_entry(&mut out, &e);
        }
        out
    }

    /// Ends the recording.
    pub fn finish(self) -> Transcript {
        self.transcript
    }
}

// ------------------------------------------------------------------------------------------------
// Redaction

/// Replaces the value of every `Authorization` header of an HTTP/1.1 request by
/// `Bearer <redacted>` (when it was a bearer credential) or `<redacted>`. The request line, other
/// headers and the body are kept byte for byte.
pub fn redact_request(request: &[u8]) -> Vec<u8> {
    let head_end = find(request, b"\r\n\r\n").map_or(request.len(), |i| i + 4);
    let (head, body) = request.split_at(head_end);
    let mut out = Vec::with_capacity(request.len());
    for line in split_inclusive(head, b'\n') {
        let name_end = line.iter().position(|b| *b == b':');
        let is_auth = name_end.is_some_and(|i| line[..i].eq_ignore_ascii_case(b"authorization"));
        match (is_auth, name_end) {
            (true, Some(i)) => {
                let value = line[i + 1..].trim_ascii_start();
                out.extend_from_slice(&line[..=i]);
                out.push(b' ');
                let bearer = value.len() >= 7 && value[..7].eq_ignore_ascii_case(b"bearer ");
                if bearer {
                    out.extend_from_slice(&value[..7]);
                }
                out.extend_from_slice(REDACTED.as_bytes());
                let ending: &[u8] = if line.ends_with(b"\r\n") {
                    b"\r\n"
                } else if line.ends_with(b"\n") {
                    b"\n"
                } else {
                    b""
                };
                out.extend_from_slice(ending);
            }
            _ => out.extend_from_slice(line),
        }
    }
    out.extend_from_slice(body);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split_inclusive(bytes: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(move |b| *b == sep)
}

// ------------------------------------------------------------------------------------------------
// Event summaries

/// The JSON summary of an event, as transcripts record it and replays compare it.
pub fn event_summary(event: &Event) -> Value {
    match event {
        Event::Connected {
            era,
            version,
            server_info,
            from_hint,
        } => json!({"connected": {
            "era": era_name(*era),
            "version": version,
            "server": server_info.as_ref().map(|s| json!({"name": s.name, "version": s.version})),
            "from_hint": from_hint,
        }}),
        Event::ToolsListed(catalog) => json!({"tools_listed": {
            "pages": catalog.pages,
            "tools": catalog.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "refused": catalog.refused.iter().map(|r| json!({
                "index": r.index, "name": r.name, "reason": r.reason.to_string(),
            })).collect::<Vec<_>>(),
        }}),
        Event::CallFinished(result) => {
            let structured = result
                .structured_content
                .as_ref()
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok());
            json!({"call_finished": {
                "is_error": result.is_error,
                "content": result.content.iter().map(block_summary).collect::<Vec<_>>(),
                "dropped_unknown": result.dropped_unknown,
                "dropped_invalid": result.dropped_invalid,
                "structured_content": structured,
            }})
        }
        Event::InputRequired { requests } => {
            let requests = serde_json::from_str::<Value>(requests.get()).unwrap_or(Value::Null);
            json!({"input_required": {"requests": requests}})
        }
        Event::Progress {
            progress,
            total,
            message,
        } => json!({"progress": {"progress": progress, "total": total, "message": message}}),
        Event::Failed { operation, error } => json!({"failed": {
            "operation": operation_name(*operation),
            "kind": error.kind().code(),
            "error": error.to_string(),
        }}),
        Event::Closed => json!("closed"),
        Event::ExchangeFinished { exchange, reusable } => {
            json!({"exchange_finished": {"exchange": exchange.0, "reusable": reusable}})
        }
        Event::ExchangeAbandoned { exchange } => {
            json!({"exchange_abandoned": {"exchange": exchange.0}})
        }
    }
}

/// Whether a summary is an exchange lifecycle event (`exchange_finished`, `exchange_abandoned`)
/// rather than part of an operation's outcome.
pub fn is_lifecycle(summary: &Value) -> bool {
    summary.as_object().is_some_and(|o| {
        o.contains_key("exchange_finished") || o.contains_key("exchange_abandoned")
    })
}

fn block_summary(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"text": text}),
        ContentBlock::Image { data, mime_type } => {
            json!({"image": {"mime_type": mime_type, "bytes": data.len()}})
        }
        ContentBlock::Audio { data, mime_type } => {
            json!({"audio": {"mime_type": mime_type, "bytes": data.len()}})
        }
        ContentBlock::Resource {
            uri,
            mime_type,
            contents,
        } => {
            let contents = match contents {
                ResourceContents::Text(t) => json!({"text": t}),
                ResourceContents::Blob(b) => json!({"blob_bytes": b.len()}),
            };
            json!({"resource": {"uri": uri, "mime_type": mime_type, "contents": contents}})
        }
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
        } => json!({"resource_link": {"uri": uri, "name": name, "mime_type": mime_type}}),
    }
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern",
        Era::Legacy => "legacy",
    }
}

fn operation_name(op: Operation) -> &'static str {
    match op {
        Operation::Connect => "connect",
        Operation::ListTools => "list_tools",
        Operation::CallTool => "call_tool",
        Operation::Close => "close",
    }
}

// ------------------------------------------------------------------------------------------------
// Escapes

/// Writes `bytes` as escaped text: printable ASCII and valid non-control UTF-8 as is, `\\` for a
/// backslash, `\r`, `\n`, `\t`, and `\xHH` for every other byte.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, 0),
            Err(e) => {
                let (v, r) = rest.split_at(e.valid_up_to());
                let n = e.error_len().unwrap_or(r.len());
                (std::str::from_utf8(v).unwrap_or(""), n)
            }
        };
        for c in valid.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\r' => out.push_str("\\r"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        let consumed = valid.len();
        for b in &rest[consumed..consumed + bad] {
            let _ = write!(out, "\\x{b:02x}");
        }
        rest = &rest[consumed + bad..];
    }
    out
}

/// Reverses [`escape`].
pub fn unescape(text: &str) -> Result<Vec<u8>, ParseErrorKind> {
    let mut out = Vec::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b'r') => out.push(b'\r'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'x') => {
                let hex = text.get(i + 2..i + 4).ok_or(ParseErrorKind::BadEscape)?;
                let v = u8::from_str_radix(hex, 16).map_err(|_| ParseErrorKind::BadEscape)?;
                out.push(v);
                i += 4;
                continue;
            }
            _ => return Err(ParseErrorKind::BadEscape),
        }
        i += 2;
    }
    Ok(out)
}

/// Writes escaped bytes as lines prefixed with `prefix`, breaking after every `\n` byte.
fn write_block(out: &mut String, prefix: &str, bytes: &[u8]) {
    for line in split_inclusive(bytes, b'\n') {
        out.push_str(prefix);
        out.push_str(&escape(line));
        out.push('\n');
    }
}

// ------------------------------------------------------------------------------------------------
// Text form

/// A transcript that cannot be read: the line (1-based) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("transcript line {line}: {kind}")]
pub struct ParseError {
    /// The line number, from 1.
    pub line: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

/// What is wrong with a transcript line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The first line is not [`MAGIC`].
    #[error("not a transcript (the first line must be {MAGIC:?})")]
    NotATranscript,
    /// A line that is not a known record.
    #[error("unknown record {0:?}")]
    UnknownRecord(String),
    /// A record without its required fields, or with malformed ones.
    #[error("malformed {what}")]
    Malformed {
        /// Which record or field.
        what: &'static str,
    },
    /// An invalid `\` escape.
    #[error("invalid escape")]
    BadEscape,
    /// A data line (`> ` or `< `) outside a `send` or `recv` block, or of the wrong direction.
    #[error("data line outside its block")]
    StrayData,
    /// An `event` line that is not JSON.
    #[error("event is not JSON")]
    BadEvent,
    /// A configuration value that the core refuses.
    #[error("configuration: {0}")]
    Config(ConfigError),
    /// The configuration has no `url`.
    #[error("no url configured")]
    NoUrl,
}

fn format_at(at: Duration) -> String {
    let us = at.as_micros();
    format!("@{}.{:03}", us / 1000, us % 1000)
}

fn parse_at(s: &str) -> Option<Duration> {
    let s = s.strip_prefix('@')?;
    let (ms, frac) = s.split_once('.').unwrap_or((s, "0"));
    if frac.len() > 3 || ms.is_empty() {
        return None;
    }
    let ms: u64 = ms.parse().ok()?;
    let frac_us: u64 = format!("{frac:0<3}").parse().ok()?;
    Some(Duration::from_micros(
        ms.checked_mul(1000)?.checked_add(frac_us)?,
    ))
}

fn kind_name(kind: TransportErrorKind) -> &'static str {
    match kind {
        TransportErrorKind::Resolve => "resolve",
        TransportErrorKind::AddressRefused => "address-refused",
        TransportErrorKind::Connect => "connect",
        TransportErrorKind::Tls => "tls",
        TransportErrorKind::Io => "io",
    }
}

fn kind_from_name(s: &str) -> Option<TransportErrorKind> {
    Some(match s {
        "resolve" => TransportErrorKind::Resolve,
        "address-refused" => TransportErrorKind::AddressRefused,
        "connect" => TransportErrorKind::Connect,
        "tls" => TransportErrorKind::Tls,
        "io" => TransportErrorKind::Io,
        _ => return None,
    })
}

/// The budgets by their transcript names: (name, get, set); values too large saturate.
type BudgetField = (&'static str, fn(&Budgets) -> u64, fn(&mut Budgets, u64));

const BUDGET_FIELDS: [BudgetField; 14] = [
    (
        "response_bytes",
        |b| b.response_bytes,
        |b, v| b.response_bytes = v,
    ),
    (
        "header_block_bytes",
        |b| b.header_block_bytes as u64,
        |b, v| b.header_block_bytes = usize::try_from(v).unwrap_or(usize::MAX),
    ),
    (
        "header_count",
        |b| b.header_count as u64,
        |b, v| b.header_count = usize::try_from(v).unwrap_or(usize::MAX),
    ),
    (
        "chunk_line_bytes",
        |b| b.chunk_line_bytes as u64,
        |b, v| b.chunk_line_bytes = usize::try_from(v).unwrap_or(usize::MAX),
    ),
    (
        "informational_responses",
        |b| u64::from(b.informational_responses),
        |b, v| b.informational_responses = u32::try_from(v).unwrap_or(u32::MAX),
    ),
    (
        "sse_event_bytes",
        |b| b.sse_event_bytes,
        |b, v| b.sse_event_bytes = v,
    ),
    (
        "pages",
        |b| u64::from(b.pages),
        |b, v| b.pages = u32::try_from(v).unwrap_or(u32::MAX),
    ),
    (
        "responses_per_request",
        |b| u64::from(b.responses_per_request),
        |b, v| b.responses_per_request = u32::try_from(v).unwrap_or(u32::MAX),
    ),
    (
        "stalled_resumptions",
        |b| u64::from(b.stalled_resumptions),
        |b, v| b.stalled_resumptions = u32::try_from(v).unwrap_or(u32::MAX),
    ),
    (
        "request_time_ms",
        |b| ms(b.request_time),
        |b, v| b.request_time = Duration::from_millis(v),
    ),
    (
        "list_time_ms",
        |b| ms(b.list_time),
        |b, v| b.list_time = Duration::from_millis(v),
    ),
    (
        "call_time_ms",
        |b| ms(b.call_time),
        |b, v| b.call_time = Duration::from_millis(v),
    ),
    (
        "close_time_ms",
        |b| ms(b.close_time),
        |b, v| b.close_time = Duration::from_millis(v),
    ),
    (
        "max_retry_wait_ms",
        |b| ms(b.max_retry_wait),
        |b, v| b.max_retry_wait = Duration::from_millis(v),
    ),
];

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn json_string(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

impl Transcript {
    /// The outcome: every event summary that is not an exchange lifecycle event, in order.
    pub fn outcome(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|v| !is_lifecycle(v))
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

    /// The text form (see `docs/transcripts.md`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_header(&mut out);
        for e in &self.entries {
            write_entry(&mut out, e);
        }
        out
    }

    /// The first line, the comments and the configuration.
    fn write_header(&self, out: &mut String) {
        out.push_str(MAGIC);
        out.push('\n');
        for c in &self.comments {
            out.push_str("# ");
            out.push_str(c);
            out.push('\n');
        }
        let c = &self.config;
        let _ = writeln!(out, "config url {}", c.url);
        let _ = writeln!(
            out,
            "config client {} {}",
            json_string(&c.client_info.name),
            json_string(&c.client_info.version)
        );
        if c.bearer_token {
            let _ = writeln!(out, "config bearer-token {REDACTED}");
        }
        let _ = writeln!(
            out,
            "config modern-versions {}",
            c.modern_versions.join(" ")
        );
        let _ = writeln!(
            out,
            "config legacy-versions {}",
            c.legacy_versions.join(" ")
        );
        if let Some(h) = &c.era_hint {
            let _ = writeln!(out, "config era-hint {} {}", era_name(h.era), h.version);
        }
        if c.client_capabilities != "{}" {
            let _ = writeln!(
                out,
                "config capabilities {}",
                escape(c.client_capabilities.as_bytes())
            );
        }
        if c.input_hook {
            out.push_str("config input-hook\n");
        }
        if c.tool_names == ToolNameRule::Lenient {
            out.push_str("config tool-names lenient\n");
        }
        let defaults = Budgets::default();
        for (name, get, _) in BUDGET_FIELDS {
            if get(&c.budgets) != get(&defaults) {
                let _ = writeln!(out, "config budget {name} {}", get(&c.budgets));
            }
        }
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<Transcript, ParseError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, l)) if l.trim_end() == MAGIC => {}
            _ => {
                return Err(ParseError {
                    line: 1,
                    kind: ParseErrorKind::NotATranscript,
                })
            }
        }
        let mut url: Option<String> = None;
        let mut cfg = TranscriptConfig {
            url: String::new(),
            client_info: ClientInfo::default(),
            bearer_token: false,
            modern_versions: Vec::new(),
            legacy_versions: Vec::new(),
            era_hint: None,
            client_capabilities: "{}".to_owned(),
            input_hook: false,
            tool_names: ToolNameRule::Strict,
            budgets: Budgets::default(),
        };
        let defaults = Config::new("http://localhost/").map_err(|e| ParseError {
            line: 1,
            kind: ParseErrorKind::Config(e),
        })?;
        cfg.modern_versions = defaults.modern_versions.clone();
        cfg.legacy_versions = defaults.legacy_versions.clone();
        let mut comments = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        // The open data block: its direction prefix and where its bytes go.
        let mut block: Option<&'static str> = None;
        let mut last_line = 1;
        for (n, line) in lines {
            last_line = n;
            let err = |kind| ParseError { line: n, kind };
            if let Some(data) = line.strip_prefix("> ").or_else(|| line.strip_prefix("< ")) {
                let prefix = &line[..2];
                if block != Some(if prefix == "> " { "> " } else { "< " }) {
                    return Err(err(ParseErrorKind::StrayData));
                }
                let bytes = unescape(data).map_err(err)?;
                match entries.last_mut().map(|e| &mut e.record) {
                    Some(Record::Send { bytes: b, .. }) | Some(Record::Recv { bytes: b, .. }) => {
                        b.extend_from_slice(&bytes)
                    }
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
                parse_config_line(&mut cfg, &mut url, rest).map_err(err)?;
                continue;
            }
            let (at, rest) = line.split_once(' ').unwrap_or((line, ""));
            let Some(at) = parse_at(at) else {
                return Err(err(ParseErrorKind::UnknownRecord(truncate(line))));
            };
            let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let record = match word {
                "op" => Record::Operation(parse_op(args).map_err(err)?),
                "send" => {
                    let mut it = args.split(' ');
                    let exchange = parse_exchange(it.next()).map_err(err)?;
                    let fresh = match it.next() {
                        None => false,
                        Some("fresh") => true,
                        Some(_) => return Err(err(ParseErrorKind::Malformed { what: "send" })),
                    };
                    block = Some("> ");
                    Record::Send {
                        exchange,
                        fresh,
                        bytes: Vec::new(),
                    }
                }
                "recv" => {
                    block = Some("< ");
                    Record::Recv {
                        exchange: parse_exchange(Some(args)).map_err(err)?,
                        bytes: Vec::new(),
                    }
                }
                "socket" => {
                    let (ex, how) = args.split_once(' ').unwrap_or((args, ""));
                    let reused = match how {
                        "pooled" => true,
                        "new" => false,
                        _ => return Err(err(ParseErrorKind::Malformed { what: "socket" })),
                    };
                    Record::Socket {
                        exchange: parse_exchange(Some(ex)).map_err(err)?,
                        reused,
                    }
                }
                "eof" => Record::Eof {
                    exchange: parse_exchange(Some(args)).map_err(err)?,
                },
                "transport-error" => {
                    let mut it = args.splitn(3, ' ');
                    let exchange = parse_exchange(it.next()).map_err(err)?;
                    let kind = it.next().and_then(kind_from_name).ok_or(err(
                        ParseErrorKind::Malformed {
                            what: "transport-error kind",
                        },
                    ))?;
                    let message = unescape(it.next().unwrap_or("")).map_err(err)?;
                    Record::TransportError {
                        exchange,
                        kind,
                        message: String::from_utf8_lossy(&message).into_owned(),
                    }
                }
                "timeout" => Record::Timeout,
                "event" => {
                    let v: Value =
                        serde_json::from_str(args).map_err(|_| err(ParseErrorKind::BadEvent))?;
                    Record::Event(v.to_string())
                }
                _ => return Err(err(ParseErrorKind::UnknownRecord(truncate(word)))),
            };
            entries.push(Entry { at, record });
        }
        cfg.url = url.ok_or(ParseError {
            line: last_line,
            kind: ParseErrorKind::NoUrl,
        })?;
        let t = Transcript {
            config: cfg,
            comments,
            entries,
        };
        t.config
            .to_config()
            .and_then(|c| {
                // The same checks as a connection, so a parsed transcript always replays.
                Connection::new(c).map(|_| ())
            })
            .map_err(|e| ParseError {
                line: last_line,
                kind: ParseErrorKind::Config(e),
            })?;
        Ok(t)
    }
}

/// Writes one entry (and its data lines).
fn write_entry(out: &mut String, e: &Entry) {
    let at = format_at(e.at);
    match &e.record {
        Record::Operation(op) => {
            let _ = match op {
                RecordedOperation::Connect => writeln!(out, "{at} op connect"),
                RecordedOperation::ListTools => writeln!(out, "{at} op list_tools"),
                RecordedOperation::CallTool { name, arguments } => writeln!(
                    out,
                    "{at} op call_tool {} {}",
                    json_string(name),
                    escape(arguments)
                ),
                RecordedOperation::CallKnownTool {
                    name,
                    input_schema,
                    arguments,
                } => writeln!(
                    out,
                    "{at} op call_known_tool {} {} {}",
                    json_string(name),
                    json_string(input_schema),
                    escape(arguments)
                ),
                RecordedOperation::Close => writeln!(out, "{at} op close"),
                RecordedOperation::ProvideInput(Some(r)) => {
                    writeln!(out, "{at} op input {}", escape(r))
                }
                RecordedOperation::ProvideInput(None) => {
                    writeln!(out, "{at} op decline")
                }
            };
        }
        Record::Send {
            exchange,
            fresh,
            bytes,
        } => {
            let fresh = if *fresh { " fresh" } else { "" };
            let _ = writeln!(out, "{at} send {exchange}{fresh}");
            write_block(out, "> ", bytes);
        }
        Record::Socket { exchange, reused } => {
            let how = if *reused { "pooled" } else { "new" };
            let _ = writeln!(out, "{at} socket {exchange} {how}");
        }
        Record::Recv { exchange, bytes } => {
            let _ = writeln!(out, "{at} recv {exchange}");
            write_block(out, "< ", bytes);
        }
        Record::Eof { exchange } => {
            let _ = writeln!(out, "{at} eof {exchange}");
        }
        Record::TransportError {
            exchange,
            kind,
            message,
        } => {
            let _ = writeln!(
                out,
                "{at} transport-error {exchange} {} {}",
                kind_name(*kind),
                escape(message.as_bytes())
            );
        }
        Record::Timeout => {
            let _ = writeln!(out, "{at} timeout");
        }
        Record::Event(s) => {
            let _ = writeln!(out, "{at} event {s}");
        }
    }
}

fn truncate(s: &str) -> String {
    crate::error::truncated(s, 64)
}

fn parse_exchange(s: Option<&str>) -> Result<u64, ParseErrorKind> {
    s.and_then(|s| s.parse().ok())
        .ok_or(ParseErrorKind::Malformed {
            what: "exchange id",
        })
}

fn parse_op(args: &str) -> Result<RecordedOperation, ParseErrorKind> {
    let (word, rest) = args.split_once(' ').unwrap_or((args, ""));
    Ok(match word {
        "connect" => RecordedOperation::Connect,
        "list_tools" => RecordedOperation::ListTools,
        "close" => RecordedOperation::Close,
        "decline" => RecordedOperation::ProvideInput(None),
        "input" => RecordedOperation::ProvideInput(Some(unescape(rest)?)),
        "call_tool" => {
            let (name, after) = leading_string(rest, "tool name")?;
            RecordedOperation::CallTool {
                name,
                arguments: unescape(after)?,
            }
        }
        "call_known_tool" => {
            let (name, after) = leading_string(rest, "tool name")?;
            let (input_schema, after) = leading_string(after, "input schema")?;
            if serde_json::from_str::<serde::de::IgnoredAny>(&input_schema).is_err() {
                return Err(ParseErrorKind::Malformed {
                    what: "input schema",
                });
            }
            RecordedOperation::CallKnownTool {
                name,
                input_schema,
                arguments: unescape(after)?,
            }
        }
        other => return Err(ParseErrorKind::UnknownRecord(truncate(other))),
    })
}

/// A JSON string at the start of `s`, and the rest after one space.
fn leading_string<'a>(s: &'a str, what: &'static str) -> Result<(String, &'a str), ParseErrorKind> {
    let mut de = serde_json::Deserializer::from_str(s).into_iter::<String>();
    match de.next() {
        Some(Ok(v)) => Ok((v, s[de.byte_offset()..].strip_prefix(' ').unwrap_or(""))),
        _ => Err(ParseErrorKind::Malformed { what }),
    }
}

fn parse_config_line(
    cfg: &mut TranscriptConfig,
    url: &mut Option<String>,
    rest: &str,
) -> Result<(), ParseErrorKind> {
    let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
    let words = || value.split_whitespace().map(str::to_owned).collect();
    match key {
        "url" => *url = Some(value.to_owned()),
        "client" => {
            let mut de = serde_json::Deserializer::from_str(value).into_iter::<String>();
            let name = de.next().and_then(Result::ok);
            let version = de.next().and_then(Result::ok);
            match (name, version) {
                (Some(name), Some(version)) => cfg.client_info = ClientInfo { name, version },
                _ => return Err(ParseErrorKind::Malformed { what: "client" }),
            }
        }
        "bearer-token" => cfg.bearer_token = true,
        "modern-versions" => cfg.modern_versions = words(),
        "legacy-versions" => cfg.legacy_versions = words(),
        "era-hint" => {
            let (era, version) = value
                .split_once(' ')
                .ok_or(ParseErrorKind::Malformed { what: "era-hint" })?;
            let era = match era {
                "modern" => Era::Modern,
                "legacy" => Era::Legacy,
                _ => return Err(ParseErrorKind::Malformed { what: "era-hint" }),
            };
            cfg.era_hint = Some(EraHint {
                era,
                version: version.to_owned(),
            });
        }
        "capabilities" => {
            cfg.client_capabilities =
                String::from_utf8(unescape(value)?).map_err(|_| ParseErrorKind::Malformed {
                    what: "capabilities",
                })?
        }
        "input-hook" => cfg.input_hook = true,
        "tool-names" => {
            cfg.tool_names = match value {
                "strict" => ToolNameRule::Strict,
                "lenient" => ToolNameRule::Lenient,
                _ => return Err(ParseErrorKind::Malformed { what: "tool-names" }),
            }
        }
        "budget" => {
            let (name, v) = value
                .split_once(' ')
                .ok_or(ParseErrorKind::Malformed { what: "budget" })?;
            let v: u64 = v.parse().map_err(|_| ParseErrorKind::Malformed {
                what: "budget value",
            })?;
            let field = BUDGET_FIELDS.iter().find(|(n, _, _)| *n == name).ok_or(
                ParseErrorKind::Malformed {
                    what: "budget name",
                },
            )?;
            (field.2)(&mut cfg.budgets, v);
        }
        other => return Err(ParseErrorKind::UnknownRecord(truncate(other))),
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Sinks

/// Where an adapter writes the transcripts of its sessions as they are recorded.
///
/// An adapter numbers its sessions and calls [`write`](TranscriptSink::write) with pieces of
/// each session's transcript text ([`Recorder::take_text`]); the pieces of one session,
/// concatenated, are one transcript. [`finish`](TranscriptSink::finish) says that a session
/// ended (closed or dropped): no more text follows for it. The text never holds a secret (see
/// [`redact_request`]). A sink must not fail the session: it handles its own errors.
pub trait TranscriptSink: Send + Sync {
    /// The next piece of the transcript of session `session`.
    fn write(&self, session: u64, text: &str);

    /// Session `session` ended; everything written for it may be flushed.
    fn finish(&self, session: u64) {
        let _ = session;
    }
}

/// A [`Recorder`] bound to a [`TranscriptSink`]: what an adapter holds next to a connection when
/// recording is on. [`flush`](Recording::flush) writes what was recorded since the last flush;
/// dropping it flushes and finishes the session.
pub struct Recording {
    recorder: Recorder,
    sink: std::sync::Arc<dyn TranscriptSink>,
    session: u64,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// Starts recording session `session`, made with `config`, whose timeline starts at `start`.
    pub fn new(
        config: &Config,
        start: Instant,
        sink: std::sync::Arc<dyn TranscriptSink>,
        session: u64,
    ) -> Recording {
        Recording {
            recorder: Recorder::new(config, start),
            sink,
            session,
        }
    }

    /// The recorder, to report to.
    pub fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    /// The session number given to the sink.
    pub fn session(&self) -> u64 {
        self.session
    }

    /// Writes what was recorded since the last flush to the sink.
    pub fn flush(&mut self) {
        let text = self.recorder.take_text();
        if !text.is_empty() {
            self.sink.write(self.session, &text);
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.flush();
        self.sink.finish(self.session);
    }
}

// ------------------------------------------------------------------------------------------------
// Replay

/// What [`replay`] made a fresh connection do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The requests sent, in order: exchange, `fresh` flag and the redacted bytes.
    pub sends: Vec<(u64, bool, Vec<u8>)>,
    /// The summaries of every event, lifecycle events included.
    pub events: Vec<Value>,
}

impl Replay {
    /// The events without the exchange lifecycle events ([`Transcript::outcome`]'s form).
    pub fn outcome(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|v| !is_lifecycle(v))
            .cloned()
            .collect()
    }
}

impl Transcript {
    /// The requests recorded, in order, in [`Replay::sends`]'s form.
    pub fn sends(&self) -> Vec<(u64, bool, Vec<u8>)> {
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
}

/// Replays `transcript` against a fresh [`Connection`] on a virtual clock starting at
/// [`Instant::ZERO`], as `docs/transcripts.md` describes: before each entry every deadline due by
/// its offset is fired, operations are started, response bytes, end of stream and transport
/// errors are fed to their exchange unless the connection already finished or abandoned it, and
/// all outputs are drained after every input. With `piece` set, recorded response bytes are fed
/// in pieces of at most that many bytes instead of as recorded.
///
/// Fails only when the transcript's configuration is refused.
pub fn replay(transcript: &Transcript, piece: Option<usize>) -> Result<Replay, ConfigError> {
    use std::collections::HashSet;
    struct Driver {
        conn: Connection,
        now: Instant,
        ended: HashSet<u64>,
        out: Replay,
    }
    impl Driver {
        fn drain(&mut self) {
            loop {
                let mut any = false;
                while let Some(t) = self.conn.poll_transmit() {
                    self.out
                        .sends
                        .push((t.exchange.0, t.fresh_socket, redact_request(&t.bytes)));
                    any = true;
                }
                while let Some(e) = self.conn.poll_event() {
                    if let Event::ExchangeFinished { exchange, .. }
                    | Event::ExchangeAbandoned { exchange } = &e
                    {
                        self.ended.insert(exchange.0);
                    }
                    self.out.events.push(event_summary(&e));
                    any = true;
                }
                if !any {
                    return;
                }
            }
        }

        fn advance(&mut self, at: Instant) {
            for _ in 0..10_000 {
                match self.conn.poll_timeout() {
                    Some(d) if d <= at => {
                        self.now = self.now.max(d);
                        self.conn.handle_timeout(self.now);
                        self.drain();
                        if self.conn.poll_timeout() == Some(d) {
                            break;
                        }
                    }
                    _ => break,
                }
            }
            self.now = self.now.max(at);
        }
    }
    let config = transcript.config.to_config()?;
    let mut d = Driver {
        conn: Connection::new(config)?,
        now: Instant::ZERO,
        ended: HashSet::new(),
        out: Replay {
            sends: Vec::new(),
            events: Vec::new(),
        },
    };
    for entry in &transcript.entries {
        d.advance(Instant::ZERO + entry.at);
        let now = d.now;
        match &entry.record {
            Record::Operation(op) => op.apply(&mut d.conn, now),
            Record::Recv { exchange, bytes } => {
                let size = piece.unwrap_or(bytes.len()).max(1);
                for p in bytes.chunks(size) {
                    if d.ended.contains(exchange) {
                        break;
                    }
                    d.conn.handle_bytes(now, ExchangeId(*exchange), p);
                    d.drain();
                }
            }
            Record::Eof { exchange } => {
                if !d.ended.contains(exchange) {
                    d.conn.handle_eof(now, ExchangeId(*exchange));
                }
            }
            Record::TransportError {
                exchange,
                kind,
                message,
            } => {
                if !d.ended.contains(exchange) {
                    let error = TransportError {
                        kind: *kind,
                        message: message.clone(),
                    };
                    d.conn
                        .handle_transport_error(now, ExchangeId(*exchange), error);
                }
            }
            Record::Timeout => d.conn.handle_timeout(now),
            Record::Send { .. } | Record::Socket { .. } | Record::Event(_) => {}
        }
        d.drain();
    }
    d.drain();
    Ok(d.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Transcript {
        let config = Config::new("http://127.0.0.1:8080/mcp")
            .unwrap()
            .with_bearer_token("s3cret-token");
        let mut rec = Recorder::new(&config, Instant::ZERO);
        rec.comment("a sample");
        let mut conn = Connection::new(config).unwrap();
        let t0 = Instant::ZERO + Duration::from_micros(1500);
        rec.operation(t0, RecordedOperation::Connect);
        conn.connect(t0);
        let t = conn.poll_transmit().unwrap();
        rec.transmit(t0, &t);
        rec.socket(t0, t.exchange, false);
        let t1 = Instant::ZERO + Duration::from_millis(3);
        rec.bytes(t1, t.exchange, b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n");
        rec.bytes(t1, t.exchange, b"\r\n\xff\x00\\");
        rec.eof(t1, t.exchange);
        let e = TransportError {
            kind: TransportErrorKind::Io,
            message: "reset by peer\nagain".into(),
        };
        rec.transport_error(t1, t.exchange, &e);
        rec.timeout(t1 + Duration::from_secs(1));
        rec.event(&Event::Closed);
        rec.operation(
            t1,
            RecordedOperation::CallTool {
                name: "a \"b\"".into(),
                arguments: b"{\"x\":\"\\u0041\xc3\xa9\"}".to_vec(),
            },
        );
        rec.operation(
            t1,
            RecordedOperation::CallKnownTool {
                name: "t".into(),
                input_schema: "{\"type\": \"object\"}".into(),
                arguments: b"{}".to_vec(),
            },
        );
        rec.operation(t1, RecordedOperation::ProvideInput(None));
        rec.operation(t1, RecordedOperation::ProvideInput(Some(b"{}".to_vec())));
        rec.finish()
    }

    #[test]
    fn text_round_trips() {
        let t = sample();
        let text = t.to_text();
        let back = Transcript::parse(&text).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.to_text(), text);
        assert!(text.contains("@1.500 op connect"), "{text}");
        assert!(text.contains("< \\r\\n\n< \\xff\\x00\\\\\n"), "{text}");
        // Time never goes back: the event after a timeout keeps the timeout's instant.
        assert_eq!(t.entries[8].at, Duration::from_millis(1003));
    }

    #[test]
    fn secrets_are_redacted() {
        let t = sample();
        let text = t.to_text();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(
            text.contains("> Authorization: Bearer <redacted>\\r\\n"),
            "{text}"
        );
        assert!(text.contains("config bearer-token <redacted>"));
        let r = redact_request(
            b"GET / HTTP/1.1\r\nauthorization:Basic abc\r\nX: y\r\n\r\nAuthorization: body",
        );
        assert_eq!(
            r,
            b"GET / HTTP/1.1\r\nauthorization: <redacted>\r\nX: y\r\n\r\nAuthorization: body"
                .to_vec()
        );
    }

    #[test]
    fn replay_config_reproduces_requests() {
        let t = sample();
        let mut conn = Connection::new(t.config.to_config().unwrap()).unwrap();
        conn.connect(Instant::ZERO);
        let sent = redact_request(&conn.poll_transmit().unwrap().bytes);
        let Record::Send { bytes, .. } = &t.entries[1].record else {
            panic!("second entry is the send");
        };
        assert_eq!(&sent, bytes);
    }

    #[test]
    fn escapes_round_trip() {
        let all: Vec<u8> = (0..=255u8).chain("é€\u{7f}".bytes()).collect();
        assert_eq!(unescape(&escape(&all)).unwrap(), all);
        assert!(!escape(&all).contains('\n'));
        assert_eq!(unescape("\\q"), Err(ParseErrorKind::BadEscape));
        assert_eq!(unescape("\\x4"), Err(ParseErrorKind::BadEscape));
    }

    #[test]
    fn parse_errors_are_typed() {
        let bad = |text: &str| Transcript::parse(text).unwrap_err();
        assert_eq!(bad("hello").kind, ParseErrorKind::NotATranscript);
        let head = format!("{MAGIC}\nconfig url http://h/mcp\n");
        let e = bad(&format!("{head}@1.000 frobnicate\n"));
        assert_eq!(
            (e.line, e.kind),
            (3, ParseErrorKind::UnknownRecord("frobnicate".into()))
        );
        assert_eq!(
            bad(&format!("{head}< HTTP/1.1\n")).kind,
            ParseErrorKind::StrayData
        );
        assert_eq!(
            bad(&format!("{head}@0 send 1\n< x\n")).kind,
            ParseErrorKind::StrayData
        );
        assert_eq!(
            bad(&format!("{head}@0 recv 1\n< \\z\n")).kind,
            ParseErrorKind::BadEscape
        );
        assert_eq!(
            bad(&format!("{head}@0 event {{nope\n")).kind,
            ParseErrorKind::BadEvent
        );
        assert_eq!(
            bad(&format!("{head}@0 recv x\n")).kind,
            ParseErrorKind::Malformed {
                what: "exchange id"
            }
        );
        assert_eq!(
            bad(&format!("{MAGIC}\n@0 op connect\n")).kind,
            ParseErrorKind::NoUrl
        );
        assert!(matches!(
            bad(&format!("{head}config legacy-versions 1999-01-01\n")).kind,
            ParseErrorKind::Config(_)
        ));
        let e = bad(&format!("{head}config budget pages x\n"));
        assert_eq!(e.to_string(), "transcript line 3: malformed budget value");
    }

    #[test]
    fn budgets_and_hints_round_trip() {
        let mut config = Config::new("https://example.com/mcp?x=1").unwrap();
        config.budgets.pages = 3;
        config.budgets.call_time = Duration::from_millis(2500);
        config.era_hint = Some(EraHint {
            era: Era::Legacy,
            version: "2025-06-18".into(),
        });
        config.input_hook = true;
        config.client_capabilities = "{\"elicitation\":{}}".into();
        let t = Recorder::new(&config, Instant::ZERO).finish();
        let text = t.to_text();
        assert!(text.contains("config budget pages 3\n"), "{text}");
        assert!(text.contains("config budget call_time_ms 2500\n"), "{text}");
        assert!(!text.contains("config budget list_time_ms"), "{text}");
        let back = Transcript::parse(&text).unwrap();
        assert_eq!(back.config, t.config);
        let c = back.config.to_config().unwrap();
        assert_eq!(c.budgets, config.budgets);
        assert_eq!(c.endpoint, config.endpoint);
    }

    #[test]
    fn known_tool_calls_replay_their_header_parameters() {
        let schema = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#;
        let tool = Tool::new(
            "where",
            None,
            schema,
            crate::xmcp::header_params(schema).unwrap(),
        );
        let args = br#"{"region":"eu-1"}"#;
        let hint = EraHint {
            era: Era::Modern,
            version: crate::config::MODERN_VERSION.into(),
        };
        let config = Config::new("http://h/mcp")
            .unwrap()
            .with_era_hint(Some(hint));
        let mut rec = Recorder::new(&config, Instant::ZERO);
        let send = |op: &RecordedOperation| {
            let mut conn = Connection::new(config.clone()).unwrap();
            conn.connect(Instant::ZERO);
            op.apply(&mut conn, Instant::ZERO);
            conn.poll_transmit().expect("the call").bytes
        };
        let op = RecordedOperation::known_tool(&tool, args);
        rec.operation(Instant::ZERO, op.clone());
        let original = send(&op);
        let text = rec.finish().to_text();
        let back = Transcript::parse(&text).unwrap();
        let Record::Operation(parsed) = &back.entries[0].record else {
            panic!("an operation: {text}");
        };
        assert_eq!(parsed, &op);
        let replayed = send(parsed);
        assert_eq!(replayed, original);
        let needle = b"Mcp-Param-Region: eu-1\r\n";
        assert!(replayed.windows(needle.len()).any(|w| w == needle));
        let bad = text.replace(r#"{\"type\""#, r#"{\"type"#);
        assert_eq!(
            Transcript::parse(&bad).unwrap_err().kind,
            ParseErrorKind::Malformed {
                what: "input schema"
            }
        );
    }

    #[test]
    fn recordings_can_be_written_as_they_go() {
        let whole = sample();
        let mut rec = Recorder::new(&Config::new("http://h/mcp").unwrap(), Instant::ZERO);
        rec.transcript.config = whole.config.clone();
        rec.comment("a sample");
        let mut text = String::new();
        for (i, e) in whole.entries.iter().enumerate() {
            rec.transcript.entries.push(e.clone());
            if i % 3 == 0 {
                text.push_str(&rec.take_text());
            }
        }
        text.push_str(&rec.take_text());
        assert!(rec.transcript().entries.is_empty());
        assert_eq!(text, whole.to_text());
        assert_eq!(rec.take_text(), "");
    }

    #[test]
    fn recorder_is_send_and_cheap_to_move() {
        fn is_send<T: Send + Sync + Clone>() {}
        is_send::<Recorder>();
        is_send::<Transcript>();
    }
}
