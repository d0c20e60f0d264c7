//! Core-only measurements, no sockets.
//!
//! - `core-page sansio` / `core-page value`: one `tools/list` page (the last of the catalog,
//!   about 80 KiB), either fed as an HTTP response to a `Connection` that is listing (HTTP decoding,
//!   JSON-RPC classification, page and tool validation, catalog building) or parsed with
//!   `serde_json::from_slice::<Value>`. Only `measure_sansio` / `measure_value` do the work, so run
//!   under `valgrind --tool=callgrind --toggle-collect='*measure_*'` to count just that.
//! - `core-page value_all`: the 100 pages' JSON-RPC bodies parsed with `from_slice::<Value>`
//!   (`measure_value_all`), the yardstick of a whole list-all work item.
//! - `core-page retained`: lists all pages through a `Connection` from canned responses and prints
//!   the catalog's retained heap bytes next to the schema bytes it holds, as JSON.

use std::hint::black_box;

use bench_harness::catalog;
use bench_harness::fixture::{hinted_connection, http_json, median, request_id, rpc_body};
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::Catalog;
use mcp_sansio::{Connection, Event, Instant};

/// The JSON-RPC body answering request `id` with page `page`.
fn page_body(page: usize, id: u64) -> Vec<u8> {
    rpc_body(id, &catalog::page_result(page, true))
}

/// A modern connection (from a hint: no request) with a listing started.
fn listing_connection() -> Connection {
    let mut conn = hinted_connection();
    conn.list_tools(Instant::ZERO);
    conn
}

#[inline(never)]
fn measure_sansio(
    conn: &mut Connection,
    exchange: mcp_sansio::ExchangeId,
    response: &[u8],
) -> Option<Catalog> {
    Http1Socket::new().handle_bytes(conn, Instant::ZERO, exchange, response);
    let mut catalog = None;
    while let Some(e) = conn.poll_event() {
        if let Event::ToolsListed(c) = e {
            catalog = Some(c);
        }
    }
    catalog
}

#[inline(never)]
fn measure_value(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).expect("page parses")
}

#[inline(never)]
fn measure_value_all(bodies: &[Vec<u8>]) -> Vec<serde_json::Value> {
    bodies
        .iter()
        .map(|b| serde_json::from_slice(b).expect("page parses"))
        .collect()
}

/// A global allocator that counts the bytes alive, so that what a catalog retains is measured,
/// not estimated.
struct Counting;

static ALIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the wrapper only counts.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALIVE.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        ALIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALIVE.fetch_add(new_size, std::sync::atomic::Ordering::Relaxed);
        ALIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn alive() -> usize {
    ALIVE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The schema bytes a catalog holds.
fn schema_bytes(c: &Catalog) -> usize {
    c.tools.iter().map(|t| t.input_schema().len()).sum()
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "sansio".into());
    let last = catalog::PAGES - 1;
    match mode.as_str() {
        "sansio" => {
            let mut conn = listing_connection();
            let t = conn.poll_transmit().expect("a page request");
            let response = http_json(&page_body(
                last,
                request_id(&Http1Socket::encode(&t).expect("a checked request")),
            ));
            let catalog = measure_sansio(&mut conn, t.exchange, &response).expect("listed");
            assert!(catalog.refused.is_empty(), "{:?}", catalog.refused.first());
            // The annotated tools were read with their headers: one or two each.
            let annotated = catalog
                .tools
                .iter()
                .filter(|t| !t.header_params().is_empty())
                .count();
            let expected = (0..catalog.tools.len())
                .filter(|&i| catalog::annotated(i))
                .count();
            assert_eq!(annotated, expected, "annotated tools read with headers");
            println!(
                "{{\"tools\":{},\"annotated\":{annotated},\"bytes\":{}}}",
                catalog.tools.len(),
                response.len()
            );
            black_box(catalog);
        }
        "value" => {
            let body = page_body(last, 1);
            let v = measure_value(&body);
            println!(
                "{{\"tools\":{},\"bytes\":{}}}",
                v["result"]["tools"].as_array().map_or(0, Vec::len),
                body.len()
            );
            black_box(v);
        }
        "value_all" => {
            // The 100 bodies of one list-all work item, each parsed into a `Value`: what the
            // whole-process instructions of a work item are compared with.
            let bodies: Vec<Vec<u8>> = (0..catalog::PAGES).map(|page| page_body(page, 1)).collect();
            let v = measure_value_all(&bodies);
            let tools: usize = v
                .iter()
                .map(|v| v["result"]["tools"].as_array().map_or(0, Vec::len))
                .sum();
            println!(
                "{{\"tools\":{tools},\"bytes\":{}}}",
                bodies.iter().map(Vec::len).sum::<usize>()
            );
            black_box(v);
        }
        "time" => {
            // Wall per page, median of 201 pages, each on a fresh connection: the core's share
            // of a listed page, next to `from_slice::<Value>` of the same body.
            let (mut sansio, mut value) = (Vec::new(), Vec::new());
            let body = page_body(last, 1);
            for _ in 0..201 {
                let mut conn = listing_connection();
                let t = conn.poll_transmit().expect("a page request");
                let response = http_json(&page_body(
                    last,
                    request_id(&Http1Socket::encode(&t).expect("a checked request")),
                ));
                let start = std::time::Instant::now();
                let catalog = measure_sansio(&mut conn, t.exchange, &response);
                sansio.push(start.elapsed().as_secs_f64() * 1e3);
                black_box(catalog.expect("listed"));
                let start = std::time::Instant::now();
                let v = measure_value(&body);
                value.push(start.elapsed().as_secs_f64() * 1e3);
                black_box(v);
            }
            println!(
                "{{\"sansio_ms\":{:.4},\"value_ms\":{:.4}}}",
                median(sansio),
                median(value)
            );
        }
        "retained" => {
            // Counted from before the connection exists to after it is dropped: what is left
            // is the catalog.
            let before = alive();
            let mut conn = listing_connection();
            let bodies: Vec<Vec<u8>> = (0..catalog::PAGES).map(|page| page_body(page, 0)).collect();
            let wire: usize = bodies.iter().map(Vec::len).sum();
            drop(bodies);
            let mut page = 0;
            let catalog = loop {
                let t = conn.poll_transmit().expect("a page request");
                let response = http_json(&page_body(
                    page,
                    request_id(&Http1Socket::encode(&t).expect("a checked request")),
                ));
                let listed = measure_sansio(&mut conn, t.exchange, &response);
                drop(response);
                drop(t);
                if let Some(c) = listed {
                    break c;
                }
                page += 1;
            };
            drop(conn);
            let heap = alive().saturating_sub(before);
            assert_eq!(catalog.pages as usize, catalog::PAGES);
            let schemas = schema_bytes(&catalog);
            println!(
                "{{\"tools\":{},\"refused\":{},\"page_bytes\":{wire},\"schema_bytes\":{schemas},\"retained_bytes\":{heap}}}",
                catalog.tools.len(),
                catalog.refused.len()
            );
            black_box(catalog);
        }
        other => panic!("unknown mode {other}"),
    }
}
