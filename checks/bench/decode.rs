//! Decode throughput of the HTTP/1.1 response decoder and the SSE decoder, with ratios against
//! simple baselines measured in the same run.
//!
//! Run with `cargo bench --bench decode`. Each case and its baseline are warmed up, then timed
//! interleaved over `RUNS` samples (each a batch of iterations); the median per-iteration time is
//! reported. MB/s is over the raw input bytes of the case. `ratio` is ours/baseline time (lower
//! is better; 1.00 is as fast as the baseline).

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_sansio::http1::{ResponseDecoder, ResponseEvent, ResponseLimits};
use mcp_sansio::internals::{SseDecoder, SseItem};
use mcp_sansio::ByteLedger;

const WARMUP: usize = 3;
const RUNS: usize = 15;
const SAMPLE: Duration = Duration::from_millis(40);
const CHUNK: usize = 16 * 1024;
const TARGET_BODY: usize = 1024 * 1024;

/// Median wall time per iteration of `ours` and of `base`, measured interleaved (so drift in
/// clock speed or cache state hits both alike): `WARMUP` unmeasured rounds, then `RUNS` rounds,
/// each timing a batch of iterations sized to take about `SAMPLE` for `ours`.
fn compare<A: FnMut(), B: FnMut()>(mut ours: A, mut base: B) -> (Duration, Duration) {
    let start = Instant::now();
    for _ in 0..WARMUP {
        ours();
        base();
    }
    let once = start.elapsed().as_secs_f64() / WARMUP as f64;
    let iters = ((SAMPLE.as_secs_f64() / once).ceil() as u32).max(1);
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        start.elapsed() / iters
    };
    let (mut a, mut b): (Vec<Duration>, Vec<Duration>) = (0..RUNS)
        .map(|_| (time(&mut ours), time(&mut base)))
        .unzip();
    a.sort();
    b.sort();
    (a[RUNS / 2], b[RUNS / 2])
}

fn mb_per_s(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / 1e6 / t.as_secs_f64()
}

fn report(name: &str, bytes: usize, ours: Duration, base: Duration, base_name: &str) {
    println!(
        "{name:<34} {:>9.1} MB/s   baseline {:>9.1} MB/s ({base_name:<16})  ratio {:>6.2}",
        mb_per_s(bytes, ours),
        mb_per_s(bytes, base),
        ours.as_secs_f64() / base.as_secs_f64(),
    );
}

/// A tools/list result of about `TARGET_BODY` bytes: many tools with nested input schemas.
fn tools_list_body() -> Vec<u8> {
    let mut tools = Vec::new();
    let mut len = 0usize;
    let mut i = 0usize;
    while len < TARGET_BODY {
        let tool = serde_json::json!({
            "name": format!("tool_{i}"),
            "title": format!("Tool number {i}"),
            "description": format!(
                "Performs operation {i} on the given resource. Accepts a path, a set of options \
                 and an optional list of tags; returns a structured result."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "Resource path" },
                    "recursive": { "type": "boolean", "default": false },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 1000 },
                    "options": {
                        "type": "object",
                        "properties": {
                            "mode": { "type": "string", "enum": ["fast", "safe", "auto"] },
                            "retries": { "type": "integer", "minimum": 0 },
                            "filters": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "field": { "type": "string" },
                                        "op": { "type": "string", "enum": ["eq", "ne", "lt", "gt"] },
                                        "value": {}
                                    },
                                    "required": ["field", "op"]
                                }
                            }
                        }
                    },
                    "tags": { "type": "array", "items": { "type": "string" } }
                },
                "required": ["path"],
                "additionalProperties": false
            },
            "annotations": { "readOnlyHint": i % 2 == 0, "idempotentHint": true }
        });
        len += serde_json::to_vec(&tool).expect("serialize tool").len() + 1;
        tools.push(tool);
        i += 1;
    }
    let response = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": { "tools": tools, "nextCursor": "cursor-2" }
    });
    serde_json::to_vec(&response).expect("serialize response")
}

/// An HTTP/1.1 response carrying `body` with `Transfer-Encoding: chunked` in `CHUNK`-byte chunks.
fn chunked_response(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / CHUNK * 16 + 256);
    out.extend_from_slice(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
          Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n\r\n",
    );
    for chunk in body.chunks(CHUNK) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// Decodes one whole response, appending its body to `body`.
fn decode_response(raw: &[u8], body: &mut Vec<u8>) {
    let mut decoder = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = ByteLedger::new(u64::MAX / 2);
    let mut input = raw;
    while !decoder.is_ended() {
        let step = decoder.decode(input, &mut ledger).expect("decode response");
        input = &input[step.consumed..];
        match step.event {
            Some(ResponseEvent::Body(bytes)) => body.extend_from_slice(bytes),
            Some(_) => {}
            None => assert!(step.consumed > 0, "no progress before End"),
        }
    }
    assert!(input.is_empty(), "bytes left after End");
}

/// Decodes a whole event stream; returns the number of items and the data bytes seen.
fn decode_sse(raw: &[u8]) -> (usize, usize) {
    let mut decoder = SseDecoder::new(u64::MAX / 2);
    let mut input = raw;
    let (mut items, mut data) = (0usize, 0usize);
    while !input.is_empty() {
        let step = decoder.decode(input).expect("decode sse");
        input = &input[step.consumed..];
        if let Some(item) = step.item {
            items += 1;
            if let SseItem::Event(event) = item {
                data += event.data.len();
            }
        }
    }
    (items, data)
}

fn count_lines(raw: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', raw).count()
}

fn bench_chunked() {
    let body = tools_list_body();
    let raw = chunked_response(&body);
    println!(
        "# chunked JSON: body {} bytes, response {} bytes, {} KiB chunks",
        body.len(),
        raw.len(),
        CHUNK / 1024
    );

    // Sanity: the decoder returns the body unchanged.
    let mut check = Vec::new();
    decode_response(&raw, &mut check);
    assert_eq!(check, body);

    let (decode_and_parse, parse_only) = compare(
        || {
            let mut out = Vec::with_capacity(body.len());
            decode_response(black_box(&raw), &mut out);
            let value: serde_json::Value = serde_json::from_slice(&out).expect("parse body");
            black_box(value);
        },
        || {
            let value: serde_json::Value =
                serde_json::from_slice(black_box(&body)).expect("parse body");
            black_box(value);
        },
    );
    report(
        "http1 chunked decode + json parse",
        raw.len(),
        decode_and_parse,
        parse_only,
        "json parse only",
    );

    let (decode_only, scan) = compare(
        || {
            let mut out = Vec::with_capacity(body.len());
            decode_response(black_box(&raw), &mut out);
            black_box(out);
        },
        || {
            black_box(count_lines(black_box(&raw)));
        },
    );
    report(
        "http1 chunked decode only",
        raw.len(),
        decode_only,
        scan,
        "memchr \\n scan",
    );
}

fn bench_sse(name: &str, raw: &[u8], expect_items: usize) {
    let (items, _) = decode_sse(raw);
    assert_eq!(items, expect_items, "{name}: item count");
    let (ours, scan) = compare(
        || {
            black_box(decode_sse(black_box(raw)));
        },
        || {
            black_box(count_lines(black_box(raw)));
        },
    );
    report(name, raw.len(), ours, scan, "memchr \\n scan");
}

fn large_event() -> Vec<u8> {
    let payload = "x".repeat(TARGET_BODY);
    format!("event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"blob\":\"{payload}\"}}}}\n\n")
        .into_bytes()
}

fn small_events(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        out.extend_from_slice(
            format!(
                "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notify\",\"params\":{{\"n\":{i:06}}}}}\n\n"
            )
            .as_bytes(),
        );
    }
    out
}

fn main() {
    let start = Instant::now();
    bench_chunked();
    let large = large_event();
    let small = small_events(20_000);
    println!(
        "# sse: one event of {} bytes; 20000 small events, {} bytes",
        large.len(),
        small.len()
    );
    bench_sse("sse one ~1 MiB event", &large, 1);
    bench_sse("sse 20000 small events", &small, 20_000);
    println!("# total {:.1} s", start.elapsed().as_secs_f64());
}
