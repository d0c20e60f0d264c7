//! Arbitrary bytes as a `traceparent`, a `tracestate` and a `baggage` (split at the first two
//! NUL bytes) through `TraceContext::new`, and an accepted context through a connection's first
//! request. No panic; an accepted value is kept verbatim, is printable ASCII within its bound
//! (so it goes into JSON unescaped and into no header), its ids are lowercase hex and not all
//! zero; the `server/discover` request carries exactly those values in `params._meta`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::trace_context::{MAX_BAGGAGE_LEN, MAX_TRACESTATE_LEN};
use mcp_sansio::{Config, Connection, Instant, TraceContext};

fn printable(s: &str) -> bool {
    s.bytes().all(|c| (0x20..0x7f).contains(&c))
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let tp = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let state = parts.next().map(|b| String::from_utf8_lossy(b).into_owned());
    let baggage = parts.next().map(|b| String::from_utf8_lossy(b).into_owned());
    let Ok(t) = TraceContext::new(&tp, state.as_deref(), baggage.as_deref()) else {
        return;
    };
    assert_eq!(t.traceparent(), tp);
    assert!(printable(t.traceparent()));
    for id in [t.trace_id(), t.parent_id()] {
        assert!(id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        assert!(id.bytes().any(|c| c != b'0'));
    }
    assert_eq!(t.trace_id().len(), 32);
    if let Some(s) = t.tracestate() {
        assert_eq!(Some(s), state.as_deref());
        assert!(printable(s) && s.len() <= MAX_TRACESTATE_LEN);
    }
    if let Some(b) = t.baggage() {
        assert_eq!(Some(b), baggage.as_deref());
        assert!(printable(b) && b.len() <= MAX_BAGGAGE_LEN);
    }

    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_trace_context(Some(t.clone()));
    let mut conn = Connection::new(config).unwrap();
    conn.connect(Instant::ZERO);
    let sent = conn.poll_transmit().expect("the discover request");
    let body: serde_json::Value = serde_json::from_slice(&sent.request.body).unwrap();
    let meta = &body["params"]["_meta"];
    assert_eq!(meta["traceparent"], t.traceparent());
    assert_eq!(meta["tracestate"].as_str(), t.tracestate());
    assert_eq!(meta["baggage"].as_str(), t.baggage());
});
