//! Event summaries: the JSON form in which transcripts record events and replays compare them.

use mcp_sansio::{ContentBlock, ResourceContents};
use mcp_sansio::{Era, Event, Operation};
use serde_json::{json, Value};

/// The JSON summary of an event, as transcripts record it and replays compare it.
pub fn event_summary(event: &Event) -> Value {
    match event {
        Event::Connected {
            era,
            version,
            server_info,
            from_hint,
            ..
        } => json!({"connected": {
            "era": era_name(*era),
            "version": version,
            "server": server_info.as_ref().map(|s| json!({"name": s.name, "version": s.version})),
            "from_hint": from_hint,
        }}),
        Event::ToolsListed(catalog) => {
            let mut listed = json!({
                "pages": catalog.pages,
                "tools": catalog.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
                "refused": catalog.refused.iter().map(|r| json!({
                    "index": r.index, "name": r.name, "reason": r.reason.to_string(),
                })).collect::<Vec<_>>(),
            });
            // Only where some refusals were not kept, so that older summaries stay as they were.
            if catalog.refused_beyond > 0 {
                listed["refused_beyond"] = json!(catalog.refused_beyond);
            }
            json!({ "tools_listed": listed })
        }
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
        Event::TaskReported(report) => {
            let t = &report.task;
            let result = report.result.as_ref().map(|r| {
                json!({"is_error": r.is_error,
                    "content": r.content.iter().map(block_summary).collect::<Vec<_>>()})
            });
            let error = report
                .error
                .as_ref()
                .map(|e| json!({"code": e.code, "message": e.message}));
            json!({"task_reported": {
                "id": t.id.as_str(),
                "status": t.status.as_str(),
                "status_message": t.status_message,
                "ttl_ms": t.ttl_ms,
                "poll_interval_ms": t.poll_interval_ms,
                "result": result,
                "error": error,
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
        // An event this summary does not know yet: recorded by its debug form, so that a replay
        // still compares it.
        other => json!({"unknown_event": format!("{other:?}")}),
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
        other => json!({"unknown_block": format!("{other:?}")}),
    }
}

pub(crate) fn era_name(era: Era) -> &'static str {
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
