//! Feature `opentelemetry`: with no trace context from the embedder, every request of an
//! operation carries the current OpenTelemetry context in `params._meta`, through
//! `tracing-opentelemetry`: the operation's span is a child of the current context, and its
//! span context is the parent written. MCP 2026-07-28 (SEP-414): the `_meta` keys `traceparent`,
//! `tracestate` and `baggage` "are reserved for OpenTelemetry propagation"; W3C Trace Context
//! §3.2: `traceparent` is `version-traceId-parentId-traceFlags`; OpenTelemetry's MCP
//! conventions: "inject `traceparent` and `tracestate` to the MCP message `params._meta`".
//!
//! The tracer here is OpenTelemetry's no-op one, whose spans carry their parent's span context:
//! the trace id and the parent id the server sees are those of the context attached by the test.
//! An embedder's own context ([`SessionDriver::set_trace_context`]) wins over it.
#![cfg(feature = "opentelemetry")]

mod support;

use mcp_sansio::{Completion, Config, ExchangeId, TraceContext, Transmit, TransportError};
use mcp_sansio_net::{ClientBuilder, Io, NoObserver, Report, SessionDriver, Start};
use opentelemetry::baggage::BaggageExt;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::KeyValue;
use support::TestClient;
use tracing_subscriber::layer::SubscriberExt;

/// Requests started and not yet answered, with the `_meta` they carried.
#[derive(Default)]
struct Waiting(Vec<(ExchangeId, String, u64, serde_json::Value)>);

impl Io for Waiting {
    fn start(&mut self, t: Transmit, request: Vec<u8>) -> Result<(), TransportError> {
        let text = String::from_utf8_lossy(&request).into_owned();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        let method = v["method"].as_str().unwrap_or("?").to_owned();
        let meta = v["params"]["_meta"].clone();
        self.0
            .push((t.exchange, method, v["id"].as_u64().unwrap_or(0), meta));
        Ok(())
    }
    fn read_on(&mut self, _: ExchangeId) {}
    fn finish(&mut self, _: ExchangeId, _: bool) {}
    fn abandon(&mut self, _: ExchangeId) {}
}

fn answer(method: &str, id: u64) -> Vec<u8> {
    let body = match method {
        "server/discover" => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{}}}},"ttlMs":0}}}}"#
        ),
        _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"isError":false}}}}"#),
    };
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Runs `op`; returns the `(method, _meta)` of each request.
fn run(d: &mut SessionDriver, op: Start<'_>) -> Vec<(String, serde_json::Value)> {
    let mut io = Waiting::default();
    let mut seen = Vec::new();
    d.start(op);
    for _ in 0..100 {
        if let Some(r) = d.pump(&mut io, &mut NoObserver) {
            assert!(
                matches!(r, Ok(Completion::Connected | Completion::Called(_))),
                "{r:?}"
            );
            return seen;
        }
        let (id, method, rpc_id, meta) = io.0.remove(0);
        d.feed(id, Report::Bytes(answer(&method, rpc_id)));
        seen.push((method, meta));
    }
    panic!("the operation did not end");
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID: &str = "00f067aa0ba902b7";

#[test]
fn the_current_opentelemetry_context_is_the_parent_of_every_request() {
    let tracer = opentelemetry::trace::noop::NoopTracerProvider::new();
    let tracer = opentelemetry::trace::TracerProvider::tracer(&tracer, "test");
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
    let _guard = tracing::subscriber::set_default(subscriber);

    let parent = SpanContext::new(
        TraceId::from_hex(TRACE_ID).unwrap(),
        SpanId::from_hex(SPAN_ID).unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::from_key_value([("vendor", "v1")]).unwrap(),
    );
    let cx = opentelemetry::Context::new()
        .with_remote_span_context(parent)
        .with_baggage([KeyValue::new("tenant", "acme corp")]);
    let _attached = cx.attach();

    let client = ClientBuilder::<TestClient>::new().build();
    let mut d =
        SessionDriver::new(&client.0, Config::new("http://127.0.0.1:9/mcp").unwrap()).unwrap();
    let mut seen = run(&mut d, Start::Connect);
    seen.extend(run(&mut d, Start::call("echo", b"{}")));
    let methods: Vec<&str> = seen.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods, ["server/discover", "tools/call"]);
    for (method, meta) in &seen {
        let tp = meta["traceparent"]
            .as_str()
            .unwrap_or_else(|| panic!("{method}: {meta}"));
        let parts: Vec<&str> = tp.split('-').collect();
        assert_eq!(parts[0], "00", "{tp}");
        assert_eq!(parts[1], TRACE_ID, "{tp}");
        assert_eq!(parts[3], "01", "sampled: {tp}");
        assert_eq!(meta["tracestate"], "vendor=v1", "{meta}");
        // W3C Baggage: the space is outside baggage-octet and goes percent-encoded.
        assert_eq!(meta["baggage"], "tenant=acme%20corp", "{meta}");
    }

    // The embedder's context wins.
    d.set_trace_context(Some(
        TraceContext::new(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
            None,
            None,
        )
        .unwrap(),
    ));
    let seen = run(&mut d, Start::call("echo", b"{}"));
    assert_eq!(
        seen[0].1["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
    );
    assert!(seen[0].1.get("baggage").is_none());
}
