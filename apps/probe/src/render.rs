//! Rendering results and errors, as JSON documents or as readable text.

use std::io::Write;

use mcp_sansio::{CallResult, ContentBlock, ResourceContents};
use mcp_sansio::{Catalog, RefusedTool, Tool};
use mcp_sansio::{Error, ErrorKind};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::inert;

/// Writes the `--json` document of a listing to `out`, one tool at a time: nothing the size of
/// the catalog is built (each input schema is written as the server sent it).
pub fn write_catalog_json(
    out: &mut impl Write,
    version: &str,
    http_version: &str,
    catalog: &Catalog,
) -> std::io::Result<()> {
    let doc = CatalogDoc {
        version,
        http_version,
        catalog,
    };
    serde_json::to_writer(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// The `--json` document of a listing, keys in the order a `serde_json::Value` has them.
struct CatalogDoc<'a> {
    version: &'a str,
    http_version: &'a str,
    catalog: &'a Catalog,
}

impl Serialize for CatalogDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.catalog;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("http_version", self.http_version)?;
        m.serialize_entry("protocol_version", self.version)?;
        m.serialize_entry("refused", &Refused(&c.refused))?;
        m.serialize_entry("refused_beyond", &c.refused_beyond)?;
        m.serialize_entry("tools", &Tools(&c.tools))?;
        m.end()
    }
}

/// The tools of the document.
struct Tools<'a>(&'a [Tool]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ToolDoc))
    }
}

/// One tool of the document.
struct ToolDoc<'a>(&'a Tool);

impl Serialize for ToolDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        // A listed schema is one JSON object; a tool built by hand that breaks that is `null`.
        let schema = serde_json::from_str::<&RawValue>(t.input_schema()).ok();
        // The rest of the definition, verbatim, each key only when present.
        fn raw(r: Option<&str>) -> Option<&RawValue> {
            r.and_then(|r| serde_json::from_str::<&RawValue>(r).ok())
        }
        let mut m = s.serialize_map(None)?;
        if let Some(a) = raw(t.annotations()) {
            m.serialize_entry("annotations", a)?;
        }
        m.serialize_entry("description", &t.description())?;
        let icons: Vec<&RawValue> = t.icons().filter_map(|i| raw(Some(i.raw()))).collect();
        if !icons.is_empty() {
            m.serialize_entry("icons", &icons)?;
        }
        m.serialize_entry("input_schema", &schema)?;
        if let Some(x) = raw(t.meta()) {
            m.serialize_entry("meta", x)?;
        }
        m.serialize_entry("name", t.name())?;
        if !t.notes().is_empty() {
            let notes: Vec<String> = t.notes().iter().map(ToString::to_string).collect();
            m.serialize_entry("notes", &notes)?;
        }
        if let Some(o) = raw(t.output_schema()) {
            m.serialize_entry("output_schema", o)?;
        }
        if let Some(title) = t.title() {
            m.serialize_entry("title", title)?;
        }
        m.end()
    }
}

/// The refused entries of the document.
struct Refused<'a>(&'a [RefusedTool]);

impl Serialize for Refused<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .iter()
                .map(|r| json!({"index": r.index, "name": r.name, "reason": r.reason.to_string()})),
        )
    }
}

/// Writes the `--json` document of a call result to `out`, one block at a time: nothing the
/// size of the result is built (base64 is encoded as it is written, structured content is
/// written as the server sent it).
pub fn write_call_json(
    out: &mut impl Write,
    http_version: &str,
    result: &CallResult,
    task: Option<&TaskSummary>,
) -> std::io::Result<()> {
    serde_json::to_writer(
        &mut *out,
        &CallDoc {
            http_version,
            result,
            task,
        },
    )?;
    out.write_all(b"\n")
}

/// The `--json` document of a call result, keys in the order a `serde_json::Value` has them.
struct CallDoc<'a> {
    http_version: &'a str,
    result: &'a CallResult,
    task: Option<&'a TaskSummary>,
}

/// The `task` object of a call's `--json` document when the call became a task (SEP-2663): the
/// task's id, the polls (`tasks/get` reports) seen, and the last status reported.
#[derive(Clone, Default)]
pub struct TaskSummary {
    /// The task id (the server's; written inert like every string a server chose).
    pub id: String,
    /// How many status reports came.
    pub polls: u64,
    /// The last status reported (`working` before any report).
    pub status: String,
    /// `task get`: what the report said besides the status.
    pub detail: Option<TaskDetail>,
}

/// What `task get` shows of a report besides the status: `status_message`, `ttl_ms` and
/// `poll_interval_ms` are written even when absent (`null`: no message, an unlimited TTL, no
/// interval given).
#[derive(Clone, Default)]
pub struct TaskDetail {
    /// The `statusMessage` (already cut and made inert by the core; written inert again).
    pub status_message: Option<String>,
    /// `ttlMs` (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs` as sent.
    pub poll_interval_ms: Option<u64>,
}

impl TaskSummary {
    /// The summary of `task get`'s one report.
    pub fn of_report(task: &mcp_sansio::task::Task) -> TaskSummary {
        TaskSummary {
            id: task.id.as_str().to_owned(),
            polls: 1,
            status: task.status.as_str().to_owned(),
            detail: Some(TaskDetail {
                status_message: task.status_message.clone(),
                ttl_ms: task.ttl_ms,
                poll_interval_ms: task.poll_interval_ms,
            }),
        }
    }
}

impl Serialize for TaskSummary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        if let Some(d) = &self.detail {
            m.serialize_entry("poll_interval_ms", &d.poll_interval_ms)?;
        }
        m.serialize_entry("polls", &self.polls)?;
        m.serialize_entry("status", &self.status)?;
        if let Some(d) = &self.detail {
            m.serialize_entry("status_message", &d.status_message)?;
            m.serialize_entry("ttl_ms", &d.ttl_ms)?;
        }
        m.end()
    }
}

/// The `--json` document of `task get` for a task without a result: its `task` object, and
/// the `error` of a failed or cancelled task (`kind` and `message`).
pub fn write_task_json(
    out: &mut impl Write,
    http_version: &str,
    task: &TaskSummary,
    error: Option<(ErrorKind, &str)>,
) -> std::io::Result<()> {
    let mut doc = json!({"http_version": http_version});
    if let Some((kind, message)) = error {
        doc["error"] = json!({"type": kind.code(), "message": message});
    }
    doc["task"] = serde_json::to_value(task).map_err(std::io::Error::other)?;
    serde_json::to_writer(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// The readable report of `task get`: the id, the status with its `statusMessage` on one inert
/// line, the TTL and the poll interval.
pub fn task_report_text(task: &TaskSummary) -> String {
    let detail = task.detail.clone().unwrap_or_default();
    let mut out = format!("task {}\n", one_line(&task.id, 256));
    out.push_str(&task_status_line(
        &task.status,
        detail.status_message.as_deref(),
    ));
    out.push('\n');
    match detail.ttl_ms {
        Some(ms) => out.push_str(&format!("ttl {ms} ms\n")),
        None => out.push_str("ttl unlimited\n"),
    }
    match detail.poll_interval_ms {
        Some(ms) => out.push_str(&format!("poll interval {ms} ms\n")),
        None => out.push_str("poll interval not given\n"),
    }
    out
}

/// The line shown for a task status report: the status, and the server's `statusMessage` on
/// one line, inert (no control or bidirectional formatting character reaches the terminal).
pub fn task_status_line(status: &str, message: Option<&str>) -> String {
    match message {
        Some(m) if !m.is_empty() => format!("task {status}: {}", one_line(m, 200)),
        _ => format!("task {status}"),
    }
}

impl Serialize for CallDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("content", &Blocks(&self.result.content))?;
        m.serialize_entry("http_version", self.http_version)?;
        m.serialize_entry("is_error", &self.result.is_error)?;
        if let Some(raw) = &self.result.structured_content {
            m.serialize_entry("structured_content", raw)?;
        }
        if let Some(task) = self.task {
            m.serialize_entry("task", task)?;
        }
        m.end()
    }
}

/// The content blocks of the document; a block kind added to the core later is not part of its
/// contract and is left out.
struct Blocks<'a>(&'a [ContentBlock]);

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().filter_map(|b| match b {
            ContentBlock::Text { .. }
            | ContentBlock::Image { .. }
            | ContentBlock::Audio { .. }
            | ContentBlock::Resource { .. }
            | ContentBlock::ResourceLink { .. } => Some(Block(b)),
            _ => None,
        }))
    }
}

/// One content block of the document.
struct Block<'a>(&'a ContentBlock);

/// Bytes written as standard base64 while they are serialized.
struct Base64<'a>(&'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let engine = &base64::engine::general_purpose::STANDARD;
        s.collect_str(&base64::display::Base64Display::new(self.0, engine))
    }
}

impl Serialize for Block<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self.0 {
            ContentBlock::Text { text } => {
                m.serialize_entry("text", text)?;
                m.serialize_entry("type", "text")?;
            }
            ContentBlock::Image { data, mime_type } | ContentBlock::Audio { data, mime_type } => {
                let kind = match self.0 {
                    ContentBlock::Image { .. } => "image",
                    _ => "audio",
                };
                m.serialize_entry("data", &Base64(data))?;
                m.serialize_entry("mime_type", mime_type)?;
                m.serialize_entry("type", kind)?;
            }
            ContentBlock::Resource {
                uri,
                mime_type,
                contents,
            } => {
                if let ResourceContents::Blob(data) = contents {
                    m.serialize_entry("data", &Base64(data))?;
                }
                m.serialize_entry("mime_type", mime_type)?;
                if let ResourceContents::Text(text) = contents {
                    m.serialize_entry("text", text)?;
                }
                m.serialize_entry("type", "resource")?;
                m.serialize_entry("uri", uri)?;
            }
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
            } => {
                m.serialize_entry("mime_type", mime_type)?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("type", "resource_link")?;
                m.serialize_entry("uri", uri)?;
            }
            _ => {}
        }
        m.end()
    }
}

/// The `--json` document of an error of `kind`.
pub fn error_json(kind: ErrorKind, message: &str) -> Value {
    json!({"error": {"type": kind.code(), "message": message}})
}

/// The exit code of a failure.
pub fn exit_code(error: &Error) -> u8 {
    if matches!(error, Error::Config(_)) {
        return 2;
    }
    match error.kind() {
        ErrorKind::ConnectionFailed => 3,
        ErrorKind::AuthenticationFailed => 4,
        ErrorKind::ServerAnswered => 5,
    }
}

/// One line of at most `max` characters: controls become spaces, and what else could act on a
/// terminal (bidirectional overrides) is escaped ([`inert::line`]).
fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = inert::line(&flat).into_owned();
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// A readable listing.
pub fn catalog_text(version: &str, era: &str, server: Option<String>, catalog: &Catalog) -> String {
    let mut out = format!("protocol {version} ({era})");
    if let Some(s) = server {
        out.push_str(&format!(", server {}", one_line(&s, 200)));
    }
    out.push_str(&format!(
        "\n{} tool{} in {} page{}:\n",
        catalog.tools.len(),
        if catalog.tools.len() == 1 { "" } else { "s" },
        catalog.pages,
        if catalog.pages == 1 { "" } else { "s" }
    ));
    for t in &catalog.tools {
        out.push_str(&format!("  {}", one_line(t.name(), 128)));
        if let Some(title) = t.title() {
            out.push_str(&format!(" \"{}\"", one_line(title, 100)));
        }
        // Untrusted hints, shown as the server gave them.
        let hints = t.hints();
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        let mut shown = Vec::new();
        if let Some(r) = hints.read_only {
            shown.push(format!("read-only: {}", yes_no(r)));
        }
        if let Some(d) = hints.destructive {
            shown.push(format!("destructive: {}", yes_no(d)));
        }
        if !shown.is_empty() {
            out.push_str(&format!(" [hints: {}]", shown.join(", ")));
        }
        if let Some(d) = t.description() {
            out.push_str(&format!(" — {}", one_line(d, 100)));
        }
        out.push('\n');
        out.push_str(&format!(
            "      input: {}\n",
            one_line(t.input_schema(), 100)
        ));
    }
    if catalog.refused_count() > 0 {
        out.push_str(&format!("{} entries refused:\n", catalog.refused_count()));
        for r in &catalog.refused {
            out.push_str(&format!(
                "  #{} {}: {}\n",
                r.index,
                r.name
                    .as_deref()
                    .map(|n| one_line(n, 64))
                    .unwrap_or_else(|| "(no name)".into()),
                one_line(&r.reason.to_string(), 200)
            ));
        }
        if catalog.refused_beyond > 0 {
            out.push_str(&format!(
                "  and {} more, not kept (the first {} are)\n",
                catalog.refused_beyond,
                catalog.refused.len()
            ));
        }
    }
    out
}

/// A readable call result.
pub fn call_text(result: &CallResult) -> String {
    let mut out = Vec::new();
    // Writing to a `Vec` does not fail.
    let _ = write_call_text(&mut out, result);
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes a readable call result to `out`, one block at a time.
pub fn write_call_text(out: &mut impl Write, result: &CallResult) -> std::io::Result<()> {
    if result.is_error {
        out.write_all(b"the tool reported an error:\n")?;
    }
    for b in &result.content {
        match b {
            ContentBlock::Text { text } => {
                let text = inert::text(text);
                out.write_all(text.as_bytes())?;
                if !text.ends_with('\n') {
                    out.write_all(b"\n")?;
                }
            }
            ContentBlock::Image { data, mime_type } => writeln!(
                out,
                "[image {}, {} bytes]",
                inert::line(mime_type),
                data.len()
            )?,
            ContentBlock::Audio { data, mime_type } => writeln!(
                out,
                "[audio {}, {} bytes]",
                inert::line(mime_type),
                data.len()
            )?,
            ContentBlock::Resource {
                uri,
                mime_type,
                contents,
            } => {
                let mt = inert::line(mime_type.as_deref().unwrap_or("unknown type"));
                let uri = inert::line(uri);
                match contents {
                    ResourceContents::Text(t) => {
                        writeln!(out, "[resource {uri} ({mt})]\n{}", inert::text(t))?
                    }
                    ResourceContents::Blob(b) => {
                        writeln!(out, "[resource {uri} ({mt}), {} bytes]", b.len())?
                    }
                }
            }
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
            } => {
                let mt = inert::line(mime_type.as_deref().unwrap_or("unknown type"));
                let (name, uri) = (inert::line(name), inert::line(uri));
                writeln!(out, "[link {name}: {uri} ({mt})]")?
            }
            _ => out.write_all(b"[a content block of a kind not shown]\n")?,
        }
    }
    if let Some(s) = &result.structured_content {
        out.write_all(b"structured content: ")?;
        out.write_all(inert::line(s.get()).as_bytes())?;
        out.write_all(b"\n")?;
    }
    let dropped = result.dropped_invalid + result.dropped_unknown;
    if dropped > 0 {
        writeln!(out, "({dropped} content blocks dropped)")?;
    }
    Ok(())
}

/// A progress bar line: `[#####-----] 2/4 message`.
pub fn progress_line(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    const WIDTH: usize = 24;
    let msg = message
        .map(|m| format!(" {}", one_line(m, 60)))
        .unwrap_or_default();
    match total {
        Some(t) if t > 0.0 && progress.is_finite() => {
            let frac = (progress / t).clamp(0.0, 1.0);
            let filled = (frac * WIDTH as f64).round() as usize;
            format!(
                "[{}{}] {}/{}{msg}",
                "#".repeat(filled),
                "-".repeat(WIDTH - filled),
                num(progress),
                num(t)
            )
        }
        _ => format!("[{}] {}{msg}", "?".repeat(WIDTH), num(progress)),
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task's `statusMessage` is the server's text: on the status line no control character
    /// (C0, DEL, C1: an escape sequence, a carriage return that rewrites the line) and no
    /// bidirectional formatting character (U+202A..U+202E, U+2066..U+2069, U+200E/F, U+061C)
    /// reaches the terminal.
    #[test]
    fn a_task_status_line_is_inert() {
        let hostile = "ok\x1b]0;title\x07\x1b[31m red\r\nfake line\u{9b}\u{202e}desrever\u{2066}x\u{200f}\u{61c}";
        let line = task_status_line("working", Some(hostile));
        assert!(line.starts_with("task working: ok"), "{line}");
        let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}');
        assert!(!line.chars().any(|c| c.is_control() || bidi(c)), "{line:?}");
        assert_eq!(task_status_line("completed", None), "task completed");
    }

    /// `task get`'s report shows the server's task id and `statusMessage` inert (no control or
    /// bidirectional formatting character reaches the terminal), one per line, with the TTL and
    /// the poll interval, `unlimited` and `not given` when absent.
    #[test]
    fn a_task_report_is_inert_and_names_ttl_and_interval() {
        let summary = |ttl, interval| TaskSummary {
            id: "t\x1b[2J\u{202e}1".into(),
            polls: 1,
            status: "working".into(),
            detail: Some(TaskDetail {
                status_message: Some("a\r\nfake\x1b]0;x\x07".into()),
                ttl_ms: ttl,
                poll_interval_ms: interval,
            }),
        };
        let text = task_report_text(&summary(Some(60_000), Some(100)));
        let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || bidi(c)),
            "{text:?}"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text:?}");
        assert!(lines[1].starts_with("task working: a"), "{text:?}");
        assert_eq!(&lines[2..], ["ttl 60000 ms", "poll interval 100 ms"]);
        let text = task_report_text(&summary(None, None));
        assert!(
            text.ends_with("ttl unlimited\npoll interval not given\n"),
            "{text:?}"
        );
    }

    #[test]
    fn progress_lines_show_the_share_done() {
        assert_eq!(
            progress_line(1.0, Some(4.0), Some("step")),
            format!("[{}{}] 1/4 step", "#".repeat(6), "-".repeat(18))
        );
        assert!(progress_line(0.5, None, None).ends_with("] 0.50"));
        assert!(progress_line(9.0, Some(4.0), None).starts_with(&format!("[{}]", "#".repeat(24))));
    }

    #[test]
    fn long_and_control_text_is_flattened() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
