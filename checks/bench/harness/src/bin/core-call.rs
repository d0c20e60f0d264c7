//! Core-only measurement of the `big` call's answer, no sockets.
//!
//! - `core-call sansio`: the 4 MiB `tools/call` answer of the benchmark server (`big`, modern era),
//!   fed as one HTTP response to a `Connection` whose call is in flight: HTTP decoding, JSON-RPC,
//!   the result and its content blocks, the text decoded into its `String`.
//! - `core-call value`: the same JSON-RPC body parsed with `serde_json::from_slice::<Value>`.
//!
//! - `core-call time`: the wall time of both, the median of 21 runs each (fresh connection and
//!   response per run, made before the clock starts), as JSON in milliseconds.
//!
//! Only `measure_sansio` / `measure_value` do the work, so run under
//! `valgrind --tool=callgrind --toggle-collect='*measure_*'` to count just that. Each mode prints
//! what it read as JSON (the text's length, to check both read the same answer).

use std::hint::black_box;

use bench_harness::catalog;
use bench_harness::fixture::{hinted_connection, http_json, median, request_id, rpc_body};
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{CallResult, ContentBlock};
use mcp_sansio::{Connection, Event, Instant};

/// The JSON-RPC body answering request `id` with the `big` tool's result.
fn call_body(id: u64) -> Vec<u8> {
    rpc_body(id, &catalog::call_result(&catalog::big_text(), true))
}

/// A modern connection (from a hint: no request) with the call to `big` in flight.
fn calling_connection() -> Connection {
    let mut conn = hinted_connection();
    conn.call_tool(Instant::ZERO, "big", b"{}");
    conn
}

#[inline(never)]
fn measure_sansio(
    conn: &mut Connection,
    exchange: mcp_sansio::ExchangeId,
    response: &[u8],
) -> Option<CallResult> {
    Http1Socket::new().handle_bytes(conn, Instant::ZERO, exchange, response);
    let mut result = None;
    while let Some(e) = conn.poll_event() {
        match e {
            Event::CallFinished(r) => result = Some(r),
            Event::Failed { error, .. } => panic!("the call failed: {error}"),
            _ => {}
        }
    }
    result
}

#[inline(never)]
fn measure_value(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).expect("the answer parses")
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "sansio".into());
    match mode.as_str() {
        "sansio" => {
            let mut conn = calling_connection();
            let t = conn.poll_transmit().expect("the call request");
            let response = http_json(&call_body(request_id(
                &Http1Socket::encode(&t).expect("a checked request"),
            )));
            let result = measure_sansio(&mut conn, t.exchange, &response).expect("finished");
            let text = match result.content.first() {
                Some(ContentBlock::Text { text }) => text.len(),
                other => panic!("not a text block: {other:?}"),
            };
            println!("{{\"text_bytes\":{text},\"bytes\":{}}}", response.len());
            black_box(result);
        }
        "value" => {
            let body = call_body(1);
            let v = measure_value(&body);
            let text = v["result"]["content"][0]["text"]
                .as_str()
                .expect("a text block")
                .len();
            println!("{{\"text_bytes\":{text},\"bytes\":{}}}", body.len());
            black_box(v);
        }
        "time" => {
            let mut sansio = Vec::new();
            let mut value = Vec::new();
            let body = call_body(1);
            for _ in 0..21 {
                let mut conn = calling_connection();
                let t = conn.poll_transmit().expect("the call request");
                let response = http_json(&call_body(request_id(
                    &Http1Socket::encode(&t).expect("a checked request"),
                )));
                let start = std::time::Instant::now();
                let result = measure_sansio(&mut conn, t.exchange, &response);
                sansio.push(start.elapsed().as_secs_f64() * 1e3);
                black_box(result.expect("finished"));
                let start = std::time::Instant::now();
                let v = measure_value(&body);
                value.push(start.elapsed().as_secs_f64() * 1e3);
                black_box(v);
            }
            println!(
                "{{\"sansio_ms\":{:.3},\"value_ms\":{:.3}}}",
                median(sansio),
                median(value)
            );
        }
        other => panic!("unknown mode {other}"),
    }
}
