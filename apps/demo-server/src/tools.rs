//! The demo tools: their catalog entries and what a call returns.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::Options;

/// A 1×1 transparent PNG.
pub const PNG_1X1: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// The bytes the `audio` tool returns: a WAV file of 8 silent 8-bit mono samples at 8 kHz.
pub fn wav_bytes() -> Vec<u8> {
    let samples = [0x80u8; 8];
    let mut w = Vec::with_capacity(44 + samples.len());
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes()); // PCM
    w.extend_from_slice(&1u16.to_le_bytes()); // mono
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&8u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    w.extend_from_slice(&samples);
    w
}

/// The bytes of the blob embedded by the `resource` tool.
pub const RESOURCE_BLOB: &[u8] = b"\x00\x01\x02demo blob\xff";

/// The names of the built-in tools, in catalog order.
pub const BUILTIN_TOOLS: [&str; 9] = [
    "echo",
    "add",
    "image",
    "audio",
    "resource",
    "resource_link",
    "fail",
    "slow",
    "big",
];

/// Catalog entries a careful client refuses: a name with a space, and no input schema.
pub const BROKEN_TOOLS: [&str; 2] = [
    r#"{"name":"has space","description":"A name outside [A-Za-z0-9_.-].","inputSchema":{"type":"object"}}"#,
    r#"{"name":"no_schema","description":"No inputSchema at all."}"#,
];

/// Every tool's catalog entry, serialized, in order: the built-in tools, the broken ones if
/// asked for, then the fillers.
pub fn catalog(options: &Options) -> Vec<String> {
    let tools: Vec<Value> = vec![
        json!({"name":"echo","title":"Echo","description":"Returns the given text.",
            "inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The text to return."}},"required":["text"]},
            "annotations":{"readOnlyHint":true}}),
        json!({"name":"add","title":"Add","description":"Adds two numbers; returns the sum as text and as structured content.",
            "inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]},
            "outputSchema":{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]},
            "annotations":{"readOnlyHint":true,"idempotentHint":true}}),
        // Icons: a client keeps `https:` and `data:` sources only, so the `http:` one is dropped.
        json!({"name":"image","description":"Returns a 1x1 PNG image.","inputSchema":{"type":"object"},
            "icons":[{"src":"data:image/png;base64,iVBORw0KGgo=","mimeType":"image/png","sizes":["1x1"]},
                {"src":"http://icons.example/image.png"}],
            "_meta":{"io.example/kind":"media"}}),
        json!({"name":"audio","description":"Returns a short silent WAV clip.","inputSchema":{"type":"object"}}),
        json!({"name":"resource","description":"Returns two embedded resources: one text, one blob.","inputSchema":{"type":"object"}}),
        json!({"name":"resource_link","description":"Returns a link to a resource.","inputSchema":{"type":"object"}}),
        json!({"name":"fail","description":"Always fails: the result has isError true.","inputSchema":{"type":"object"}}),
        json!({"name":"slow","description":"Reports progress for each step, then returns.",
            "inputSchema":{"type":"object","properties":{
                "steps":{"type":"integer","minimum":0,"maximum":1000,"default":3},
                "delay_ms":{"type":"integer","minimum":0,"maximum":60000,"default":100}}}}),
        json!({"name":"big","description":format!("Returns a text of {} bytes.", options.big_text_bytes),"inputSchema":{"type":"object"}}),
    ];
    let mut out: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
    if options.broken_tools {
        out.extend(BROKEN_TOOLS.iter().map(|t| (*t).to_owned()));
    }
    out.extend((0..options.filler_tools).map(|i| filler_tool(i, options.filler_schema_bytes)));
    out
}

/// A filler tool whose schema is about `schema_bytes` long when serialized (written directly:
/// large catalogs start fast even in debug builds).
fn filler_tool(i: usize, schema_bytes: usize) -> String {
    let mut props = String::with_capacity(schema_bytes + 256);
    let mut required = String::new();
    let mut p = 0;
    while props.len() + required.len() + 64 < schema_bytes || p == 0 {
        if p > 0 {
            props.push(',');
        }
        let prop = match p % 4 {
            0 => format!(
                r#""field_{p:03}":{{"type":"string","description":"Text parameter {p} of filler tool {i}; free-form, at most 256 characters.","maxLength":256}}"#
            ),
            1 => format!(
                r#""field_{p:03}":{{"type":"integer","description":"Count parameter {p}; between 0 and 10000.","minimum":0,"maximum":10000}}"#
            ),
            2 => format!(
                r#""field_{p:03}":{{"type":"boolean","description":"Flag parameter {p}; defaults to false.","default":false}}"#
            ),
            _ => format!(
                r#""field_{p:03}":{{"type":"array","description":"List parameter {p}; tags, each one of the listed values.","items":{{"type":"string","enum":["alpha","beta","gamma","delta"]}},"maxItems":16}}"#
            ),
        };
        props.push_str(&prop);
        if p % 3 == 0 {
            if !required.is_empty() {
                required.push(',');
            }
            required.push_str(&format!(r#""field_{p:03}""#));
        }
        p += 1;
    }
    format!(
        r#"{{"name":"filler_{i:05}","description":"Filler tool number {i}: does nothing useful, exists to make the catalog large.","inputSchema":{{"type":"object","properties":{{{props}}},"required":[{required}],"additionalProperties":false}},"annotations":{{"readOnlyHint":true,"openWorldHint":false}}}}"#
    )
}

/// What a tool call produces.
pub enum Outcome {
    /// A `CallToolResult` object (without `resultType` and `_meta`).
    Result(Value),
    /// Progress notifications, one per step after `delay`, then the result.
    Slow {
        /// How many steps.
        steps: u64,
        /// The wait before each step.
        delay: Duration,
    },
    /// A JSON-RPC error `-32602` with this message.
    InvalidParams(String),
}

/// Runs the tool `name` on `arguments` (a JSON object or null).
pub fn call(name: &str, arguments: &Value, options: &Options) -> Outcome {
    let b64 = base64::engine::general_purpose::STANDARD;
    let text = |t: String| json!({"content":[{"type":"text","text":t}],"isError":false});
    match name {
        "echo" => match arguments.get("text").and_then(Value::as_str) {
            Some(t) => Outcome::Result(text(t.to_owned())),
            None => Outcome::Result(
                json!({"content":[{"type":"text","text":"missing string argument: text"}],"isError":true}),
            ),
        },
        "add" => {
            let a = arguments.get("a").and_then(Value::as_f64);
            let b = arguments.get("b").and_then(Value::as_f64);
            match (a, b) {
                (Some(a), Some(b)) => {
                    let sum = a + b;
                    let sum_json = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
                        json!(sum as i64)
                    } else {
                        json!(sum)
                    };
                    Outcome::Result(json!({
                        "content":[{"type":"text","text":json!({"sum":sum_json}).to_string()}],
                        "structuredContent":{"sum":sum_json},
                        "isError":false
                    }))
                }
                _ => Outcome::Result(
                    json!({"content":[{"type":"text","text":"a and b must be numbers"}],"isError":true}),
                ),
            }
        }
        "image" => Outcome::Result(
            json!({"content":[{"type":"image","data":b64.encode(PNG_1X1),"mimeType":"image/png"}],"isError":false}),
        ),
        "audio" => Outcome::Result(
            json!({"content":[{"type":"audio","data":b64.encode(wav_bytes()),"mimeType":"audio/wav"}],"isError":false}),
        ),
        "resource" => Outcome::Result(json!({"content":[
            {"type":"resource","resource":{"uri":"demo://notes/readme.txt","mimeType":"text/plain","text":"Embedded text resource."}},
            {"type":"resource","resource":{"uri":"demo://blobs/data.bin","mimeType":"application/octet-stream","blob":b64.encode(RESOURCE_BLOB)}}
        ],"isError":false})),
        "resource_link" => Outcome::Result(json!({"content":[
            {"type":"resource_link","uri":"demo://notes/readme.txt","name":"readme.txt","mimeType":"text/plain","description":"A demo resource."}
        ],"isError":false})),
        "fail" => Outcome::Result(
            json!({"content":[{"type":"text","text":"the fail tool always fails"}],"isError":true}),
        ),
        "slow" => {
            let steps = arguments
                .get("steps")
                .and_then(Value::as_u64)
                .unwrap_or(3)
                .min(1000);
            let delay = arguments
                .get("delay_ms")
                .and_then(Value::as_u64)
                .unwrap_or(100)
                .min(60_000);
            Outcome::Slow {
                steps,
                delay: Duration::from_millis(delay),
            }
        }
        "big" => Outcome::Result(text(big_text(options.big_text_bytes))),
        _ if name.starts_with("filler_")
            && name[7..]
                .parse::<usize>()
                .is_ok_and(|i| i < options.filler_tools) =>
        {
            Outcome::Result(text(format!("{name} did nothing")))
        }
        _ => Outcome::InvalidParams(format!("Unknown tool: {name}")),
    }
}

/// The result of the `slow` tool after `steps` steps.
pub fn slow_result(steps: u64) -> Value {
    json!({"content":[{"type":"text","text":format!("done after {steps} steps")}],"isError":false})
}

/// A printable ASCII text of exactly `len` bytes.
pub fn big_text(len: usize) -> String {
    const LINE: &str = "The quick brown fox jumps over the lazy dog. 0123456789 ";
    let mut s = String::with_capacity(len);
    while s.len() + LINE.len() <= len {
        s.push_str(LINE);
    }
    s.push_str(&LINE[..len - s.len()]);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_text_has_the_exact_length() {
        for n in [0, 1, 55, 56, 57, 4096, 100_003] {
            assert_eq!(big_text(n).len(), n);
        }
    }

    #[test]
    fn filler_schemas_reach_the_requested_size() {
        for target in [0, 500, 8192] {
            let t = filler_tool(7, target);
            let v: Value = serde_json::from_str(&t).expect("a filler tool is JSON");
            assert_eq!(v["name"], "filler_00007");
            assert_eq!(v["inputSchema"]["type"], "object");
            assert!(t.len() >= target, "{} < {target}", t.len());
            assert!(
                t.len() < target + 1024,
                "{} too far above {target}",
                t.len()
            );
        }
    }

    #[test]
    fn wav_header_sizes_are_consistent() {
        let w = wav_bytes();
        assert_eq!(&w[..4], b"RIFF");
        assert_eq!(
            u32::from_le_bytes([w[4], w[5], w[6], w[7]]) as usize,
            w.len() - 8
        );
    }
}
