//! Rendering results and errors, as JSON documents or as readable text.

use base64::Engine as _;
use mcp_sansio::Catalog;
use mcp_sansio::{CallResult, ContentBlock, ResourceContents};
use mcp_sansio::{Error, ErrorKind};
use serde_json::{json, Value};

use crate::inert;

fn raw_to_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// The `--json` document of a listing.
pub fn catalog_json(version: &str, http_version: &str, catalog: &Catalog) -> Value {
    let tools: Vec<Value> = catalog
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name(),
                "description": t.description(),
                "input_schema": raw_to_value(t.input_schema()),
            })
        })
        .collect();
    let refused: Vec<Value> = catalog
        .refused
        .iter()
        .map(|r| json!({"index": r.index, "name": r.name, "reason": r.reason.to_string()}))
        .collect();
    json!({"protocol_version": version, "http_version": http_version, "tools": tools, "refused": refused,
           "refused_beyond": catalog.refused_beyond})
}

/// The `--json` document of a call result.
pub fn call_json(http_version: &str, result: &CallResult) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD;
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|b| {
            Some(match b {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { data, mime_type } => {
                json!({"type": "image", "data": b64.encode(data), "mime_type": mime_type})
            }
            ContentBlock::Audio { data, mime_type } => {
                json!({"type": "audio", "data": b64.encode(data), "mime_type": mime_type})
            }
            ContentBlock::Resource {
                uri,
                mime_type,
                contents,
            } => match contents {
                ResourceContents::Text(text) => {
                    json!({"type": "resource", "uri": uri, "mime_type": mime_type, "text": text})
                }
                ResourceContents::Blob(data) => {
                    json!({"type": "resource", "uri": uri, "mime_type": mime_type, "data": b64.encode(data)})
                }
            },
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
            } => json!({"type": "resource_link", "uri": uri, "mime_type": mime_type, "name": name}),
            // A block kind added to the core later: not part of this document's contract.
            _ => return None,
            })
        })
        .collect();
    let mut doc =
        json!({"content": content, "is_error": result.is_error, "http_version": http_version});
    if let Some(s) = &result.structured_content {
        doc["structured_content"] = raw_to_value(s.get());
    }
    doc
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
    let mut out = String::new();
    if result.is_error {
        out.push_str("the tool reported an error:\n");
    }
    for b in &result.content {
        match b {
            ContentBlock::Text { text } => {
                let text = inert::text(text);
                out.push_str(&text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            ContentBlock::Image { data, mime_type } => out.push_str(&format!(
                "[image {}, {} bytes]\n",
                inert::line(mime_type),
                data.len()
            )),
            ContentBlock::Audio { data, mime_type } => out.push_str(&format!(
                "[audio {}, {} bytes]\n",
                inert::line(mime_type),
                data.len()
            )),
            ContentBlock::Resource {
                uri,
                mime_type,
                contents,
            } => {
                let mt = inert::line(mime_type.as_deref().unwrap_or("unknown type"));
                let uri = inert::line(uri);
                match contents {
                    ResourceContents::Text(t) => {
                        out.push_str(&format!("[resource {uri} ({mt})]\n{}\n", inert::text(t)))
                    }
                    ResourceContents::Blob(b) => {
                        out.push_str(&format!("[resource {uri} ({mt}), {} bytes]\n", b.len()))
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
                out.push_str(&format!("[link {name}: {uri} ({mt})]\n"))
            }
            _ => out.push_str("[a content block of a kind not shown]\n"),
        }
    }
    if let Some(s) = &result.structured_content {
        out.push_str(&format!("structured content: {}\n", inert::line(s.get())));
    }
    let dropped = result.dropped_invalid + result.dropped_unknown;
    if dropped > 0 {
        out.push_str(&format!("({dropped} content blocks dropped)\n"));
    }
    out
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
