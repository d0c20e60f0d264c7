//! What the core-only measurements (`core-page`, `core-call`) share: canned responses, a
//! connection that needs no request to be connected, and the median of timed runs.

use mcp_sansio::{Config, Connection, Era, EraHint, Instant};

/// The JSON-RPC body answering request `id` with `result` (JSON text).
pub fn rpc_body(id: u64, result: &str) -> Vec<u8> {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}").into_bytes()
}

/// `body` as a `200 OK` JSON response with a `Content-Length`.
pub fn http_json(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// A modern connection, connected from an era hint (no request), its events taken.
pub fn hinted_connection() -> Connection {
    let config = Config::new("http://127.0.0.1:1/mcp")
        .expect("endpoint")
        .with_era_hint(Some(EraHint {
            era: Era::Modern,
            version: mcp_sansio::MODERN_VERSION.into(),
        }));
    let mut conn = Connection::new(config).expect("config");
    conn.connect(Instant::ZERO);
    while conn.poll_event().is_some() {}
    conn
}

/// The JSON-RPC id of the HTTP request in `bytes`.
pub fn request_id(bytes: &[u8]) -> u64 {
    let start = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("head")
        + 4;
    let v: serde_json::Value = serde_json::from_slice(&bytes[start..]).expect("json body");
    v["id"].as_u64().expect("id")
}

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
