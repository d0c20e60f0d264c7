//! The text form, written: [`Transcript::to_text`] (format in `docs/transcripts.md`).

use std::fmt::Write as _;
use std::time::Duration;

use mcp_sansio::Budgets;
use mcp_sansio::ToolNameRule;
use mcp_sansio::TransportErrorKind;
use serde_json::Value;

use crate::escape::{escape, write_block};
use crate::h2::{h2_overrides, Annotator, Piece};
use crate::model::{Entry, Record, RecordedOperation, Transcript};
use crate::summary::era_name;
use crate::{MAGIC, REDACTED};

pub(crate) fn format_at(at: Duration) -> String {
    let us = at.as_micros();
    format!("@{}.{:03}", us / 1000, us % 1000)
}

pub(crate) fn kind_name(kind: TransportErrorKind) -> &'static str {
    match kind {
        TransportErrorKind::Resolve => "resolve",
        TransportErrorKind::AddressRefused => "address-refused",
        TransportErrorKind::Connect => "connect",
        TransportErrorKind::Tls => "tls",
        TransportErrorKind::Io => "io",
        // A kind the format does not name yet: the parser refuses it rather than replay it as
        // another kind.
        _ => "unknown",
    }
}

pub(crate) type BudgetField = (&'static str, fn(&Budgets) -> u64, fn(&mut Budgets, u64));

pub(crate) const BUDGET_FIELDS: [BudgetField; 22] = [
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
    (
        "task_time_ms",
        |b| ms(b.task_time),
        |b, v| b.task_time = Duration::from_millis(v),
    ),
    (
        "task_polls",
        |b| u64::from(b.task_polls),
        |b, v| b.task_polls = u32::try_from(v).unwrap_or(u32::MAX),
    ),
    (
        "task_poll_floor_ms",
        |b| ms(b.task_poll_floor),
        |b, v| b.task_poll_floor = Duration::from_millis(v),
    ),
    (
        "task_poll_ceiling_ms",
        |b| ms(b.task_poll_ceiling),
        |b, v| b.task_poll_ceiling = Duration::from_millis(v),
    ),
    (
        "task_id_bytes",
        |b| b.task_id_bytes as u64,
        |b, v| b.task_id_bytes = usize::try_from(v).unwrap_or(usize::MAX),
    ),
    (
        "status_message_bytes",
        |b| b.status_message_bytes as u64,
        |b, v| b.status_message_bytes = usize::try_from(v).unwrap_or(usize::MAX),
    ),
    (
        "task_update_rounds",
        |b| u64::from(b.task_update_rounds),
        |b, v| b.task_update_rounds = u32::try_from(v).unwrap_or(u32::MAX),
    ),
    (
        "task_cancel_time_ms",
        |b| ms(b.task_cancel_time),
        |b, v| b.task_cancel_time = Duration::from_millis(v),
    ),
];

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn json_string(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

impl Transcript {
    /// The text form (see `docs/transcripts.md`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_header(&mut out);
        let mut notes = Annotator::default();
        for e in &self.entries {
            write_entry(&mut out, e, &mut notes);
        }
        out
    }

    /// The first line, the comments and the configuration.
    pub(crate) fn write_header(&self, out: &mut String) {
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
        if c.dpop {
            let _ = writeln!(out, "config dpop {REDACTED}");
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
        if c.tasks {
            out.push_str("config tasks\n");
        }
        if !c.unix_at_zero.is_zero() {
            let _ = writeln!(
                out,
                "config unix-at-zero {}.{:09}",
                c.unix_at_zero.as_secs(),
                c.unix_at_zero.subsec_nanos()
            );
        }
        let defaults = Budgets::default();
        for (name, get, _) in BUDGET_FIELDS {
            if get(&c.budgets) != get(&defaults) {
                let _ = writeln!(out, "config budget {name} {}", get(&c.budgets));
            }
        }
        if let Some(h2) = &c.http2 {
            let _ = writeln!(out, "config http 2 {}", h2.scheme);
            for (name, value) in h2_overrides(h2, &c.budgets) {
                let _ = writeln!(out, "config h2 {name} {value}");
            }
        }
    }
}

/// Writes one entry (and its data lines).
pub(crate) fn write_entry(out: &mut String, e: &Entry, notes: &mut Annotator) {
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
                RecordedOperation::Abandon => writeln!(out, "{at} op abandon"),
                RecordedOperation::ProvideInput(Some(r)) => {
                    writeln!(out, "{at} op input {}", escape(r))
                }
                RecordedOperation::ProvideInput(None) => {
                    writeln!(out, "{at} op decline")
                }
                RecordedOperation::AnswerServerRequest {
                    id,
                    result: Some(r),
                } => writeln!(out, "{at} op answer {} {}", json_string(id), escape(r)),
                RecordedOperation::AnswerServerRequest { id, result: None } => {
                    writeln!(out, "{at} op refuse {}", json_string(id))
                }
                RecordedOperation::ResumeTask { handle, cancel } => {
                    let word = if *cancel { "resume_cancel" } else { "resume" };
                    writeln!(out, "{at} op {word} {}", escape(&handle.0))
                }
                RecordedOperation::GetTask { handle } => {
                    writeln!(out, "{at} op resume_get {}", escape(&handle.0))
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
        Record::H2Open { socket } => {
            notes.opened(*socket);
            let _ = writeln!(out, "{at} open {socket}");
        }
        Record::H2Write { socket, bytes } => {
            let _ = writeln!(out, "{at} write {socket}");
            write_pieces(out, "> ", notes.pieces(*socket, true, bytes));
        }
        Record::H2Read { socket, bytes } => {
            let _ = writeln!(out, "{at} read {socket}");
            write_pieces(out, "< ", notes.pieces(*socket, false, bytes));
        }
        Record::H2Eof { socket } => {
            let _ = writeln!(out, "{at} eof {socket}");
        }
        Record::H2Failure {
            socket,
            kind,
            message,
        } => {
            let _ = writeln!(
                out,
                "{at} transport-error {socket} {} {}",
                kind_name(*kind),
                escape(message.as_bytes())
            );
        }
        Record::H2DialError { kind, message } => {
            let _ = writeln!(
                out,
                "{at} dial-error {} {}",
                kind_name(*kind),
                escape(message.as_bytes())
            );
        }
    }
}

/// The bytes of an HTTP/2 block: each frame from a new line, each annotation a `# ` line.
fn write_pieces(out: &mut String, prefix: &str, pieces: Vec<Piece<'_>>) {
    for p in pieces {
        match p {
            Piece::Bytes(b) => write_block(out, prefix, b),
            Piece::Note(n) => {
                out.push_str("# ");
                out.push_str(&n);
                out.push('\n');
            }
        }
    }
}
