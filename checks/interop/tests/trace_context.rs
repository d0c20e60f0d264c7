//! The trace context round trip at real servers: the Python `mcp` SDK's server (py-mcp) and
//! fastmcp's each have a tool, `trace_meta`, that answers with the `traceparent`, `tracestate`
//! and `baggage` it received in the request's `params._meta`, as the SDK parsed them. Each test
//! starts one server on a free 127.0.0.1 port (uvicorn for HTTP/1.1, hypercorn for h2c), calls
//! the tool through both adapters in both eras, and stops the server.
//!
//! The oracles are the values the test gives and the spans the OpenTelemetry SDK exported:
//!
//! - MCP 2026-07-28 (SEP-414): the `_meta` keys `traceparent`, `tracestate` and `baggage` "are
//!   reserved for OpenTelemetry propagation" and follow W3C Trace Context and W3C Baggage;
//!   OpenTelemetry's conventions for MCP ask the same of earlier revisions;
//! - an embedder's context (`Config::trace_context`) is sent exactly as given, its parent id
//!   included;
//! - without one, the current OpenTelemetry context (feature `opentelemetry`): the trace id, the
//!   flags, the trace state and the baggage (percent-encoded, W3C Baggage §3.3.1.4) of the
//!   caller's context, and as the parent id the span id of the request's own client span
//!   (`tools/call trace_meta`, OpenTelemetry's conventions for MCP: the server's span parents to
//!   the client span of that request), never the operation's (`call`);
//! - a malformed value is never sent: an embedder's cannot be built, and a baggage the
//!   OpenTelemetry context holds that W3C Baggage refuses is left out.

use std::time::Duration;

use mcp_sansio::{CallResult, Config, ContentBlock, Era, TraceContext};
use mcp_sansio_interop::Peer::{FastMcp, PyMcp};
use mcp_sansio_interop::{scenario::policy, Peer, Server, Stream, Target, Wire};
use mcp_sansio_net::ClientBuilder;
use opentelemetry::baggage::BaggageExt;
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry::KeyValue;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::Value;
use tracing_subscriber::layer::SubscriberExt;

/// The W3C Trace Context example (§3.2.2.1), with the flags `01` (sampled).
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACESTATE: &str = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
const BAGGAGE: &str = "userId=alice,serverNode=DF%2028";

/// The remote parent of the OpenTelemetry runs.
const OTEL_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const OTEL_PARENT_ID: &str = "b7ad6b7169203331";

const RUN_TIME: Duration = Duration::from_secs(60);

/// `peer` in `era` with `args` (`--h2c` for HTTP/2).
fn target(peer: Peer, era: Era, args: &'static [&'static str]) -> Target {
    Target {
        peer,
        args,
        era,
        stream: Stream::Sse,
        stateful: true,
        negotiated: false,
        legacy_version: None,
    }
}

#[derive(Clone, Copy, Debug)]
enum Adapter {
    Tokio,
    Blocking,
}

/// Connects with `config`, calls `trace_meta`, closes; the HTTP version and what the server
/// says it received.
fn round_trip(adapter: Adapter, wire: Wire<'_>, config: Config) -> (&'static str, Value) {
    fn answer(r: Result<CallResult, mcp_sansio::Error>) -> Value {
        let r = r.unwrap_or_else(|e| panic!("trace_meta failed: {e}"));
        assert!(!r.is_error, "trace_meta answered isError: {r:?}");
        let text = match r.content.as_slice() {
            [ContentBlock::Text { text }] => text.clone(),
            other => panic!("trace_meta: one text block expected, got {other:?}"),
        };
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("trace_meta: {e}: {text}"))
    }
    let h2c = matches!(wire, Wire::H2c);
    match adapter {
        Adapter::Tokio => {
            let client: mcp_sansio_tokio::Client = ClientBuilder::new()
                .policy(policy())
                .h2_prior_knowledge(h2c)
                .build();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                tokio::time::timeout(RUN_TIME, async {
                    let mut s = client.connect(config).await.expect("connect");
                    let v = answer(s.call_tool("trace_meta", b"{}").await);
                    let http = s.http_version();
                    s.close().await.expect("close");
                    (http, v)
                })
                .await
                .expect("the round trip took too long")
            })
        }
        Adapter::Blocking => {
            let client: mcp_sansio_blocking::Client = ClientBuilder::new()
                .policy(policy())
                .h2_prior_knowledge(h2c)
                .build();
            let mut s = client.connect(config).expect("connect");
            let v = answer(s.call_tool("trace_meta", b"{}"));
            let http = s.http_version();
            s.close().expect("close");
            (http, v)
        }
    }
}

/// Starts `peer` over `wire` (`Plain`: HTTP/1.1 under uvicorn; `H2c`: hypercorn) and runs
/// `check` for each adapter and era with the server's URL and the HTTP version expected.
fn each_run(peer: Peer, wire: Wire<'_>, check: impl Fn(Adapter, &Target, &str, &str)) {
    let (args, http): (&'static [&'static str], &str) = match wire {
        Wire::H2c => (&["--h2c"], "HTTP/2"),
        _ => (&[], "HTTP/1.1"),
    };
    let server = Server::start(peer, args);
    let url = server.url();
    for era in [Era::Modern, Era::Legacy] {
        let t = target(peer, era, args);
        for adapter in [Adapter::Tokio, Adapter::Blocking] {
            check(adapter, &t, &url, http);
        }
    }
    drop(server);
}

/// The embedder's context reaches the server as given; a malformed one cannot be set, and
/// without any nothing is sent.
fn embedder_context(peer: Peer, wire: Wire<'_>) {
    // W3C Trace Context §3.2.2: uppercase hex and an all-zero parent id are invalid.
    for bad in [
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
    ] {
        assert!(TraceContext::new(bad, None, None).is_err(), "{bad}");
    }
    assert!(TraceContext::new(TRACEPARENT, Some("a b=c"), None).is_err());
    assert!(TraceContext::new(TRACEPARENT, None, Some("k=\"v\"")).is_err());
    let given = TraceContext::new(TRACEPARENT, Some(TRACESTATE), Some(BAGGAGE)).unwrap();
    each_run(peer, wire, |adapter, t, url, http| {
        let who = format!("{} via {adapter:?}", t.label());
        let config = t.config(url).with_trace_context(Some(given.clone()));
        let (version, seen) = round_trip(adapter, wire, config);
        assert_eq!(version, http, "{who}");
        assert_eq!(
            seen,
            serde_json::json!({
                "traceparent": TRACEPARENT,
                "tracestate": TRACESTATE,
                "baggage": BAGGAGE,
            }),
            "{who}"
        );
        // No context (and no OpenTelemetry layer on this thread): none of the keys is sent.
        let (_, seen) = round_trip(adapter, wire, t.config(url));
        assert_eq!(seen, serde_json::json!({}), "{who}: without a context");
    });
}

/// The current OpenTelemetry context reaches the server, the parent id naming the request's
/// own client span as the SDK exported it.
fn opentelemetry_context(peer: Peer, wire: Wire<'_>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("interop")));
    let _guard = tracing::subscriber::set_default(subscriber);
    let parent = SpanContext::new(
        TraceId::from_hex(OTEL_TRACE_ID).unwrap(),
        SpanId::from_hex(OTEL_PARENT_ID).unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::from_key_value([("vendor", "v1")]).unwrap(),
    );
    let cx = opentelemetry::Context::new()
        .with_remote_span_context(parent)
        .with_baggage([KeyValue::new("tenant", "acme corp")]);
    // A baggage OpenTelemetry holds (8000 bytes of its 8192) that W3C Baggage refuses once its
    // value is percent-encoded (24000 bytes, over the 8192 of §3.3.1): left out, never sent.
    let bad = cx.with_baggage([KeyValue::new("tenant", " ".repeat(8000))]);

    each_run(peer, wire, |adapter, t, url, http| {
        let who = format!("{} via {adapter:?}", t.label());
        let run = |cx: &opentelemetry::Context| {
            exporter.reset();
            let _attached = cx.clone().attach();
            let (version, seen) = round_trip(adapter, wire, t.config(url));
            assert_eq!(version, http, "{who}");
            let _ = provider.force_flush();
            (seen, exporter.get_finished_spans().unwrap())
        };

        let (seen, spans) = run(&cx);
        let own = request_span(&spans, &who);
        let op = spans
            .iter()
            .find(|s| s.name == "call")
            .unwrap_or_else(|| panic!("{who}: no call span"));
        assert_eq!(own.parent_span_id, op.span_context.span_id(), "{who}");
        let expected = format!("00-{OTEL_TRACE_ID}-{}-01", own.span_context.span_id());
        assert_ne!(op.span_context.span_id(), own.span_context.span_id());
        assert_eq!(
            seen,
            serde_json::json!({
                "traceparent": expected,
                "tracestate": "vendor=v1",
                "baggage": "tenant=acme%20corp",
            }),
            "{who}: the server's view, against the request span {}",
            own.span_context.span_id()
        );

        let (seen, spans) = run(&bad);
        let own = request_span(&spans, &who);
        let expected = format!("00-{OTEL_TRACE_ID}-{}-01", own.span_context.span_id());
        assert_eq!(
            seen,
            serde_json::json!({"traceparent": expected, "tracestate": "vendor=v1"}),
            "{who}: a baggage W3C refuses is not sent"
        );
    });
    drop(_guard);
    let _ = provider.shutdown();
}

/// The exported client span of the `trace_meta` call.
fn request_span<'a>(spans: &'a [SpanData], who: &str) -> &'a SpanData {
    let named: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "tools/call trace_meta")
        .collect();
    match named.as_slice() {
        [one] => one,
        other => panic!(
            "{who}: one request span expected, got {}: {:?}",
            other.len(),
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        ),
    }
}

macro_rules! round_trips {
    ($($name:ident => $check:ident($peer:expr, $wire:expr);)*) => {
        $(
            #[test]
            fn $name() {
                $check($peer, $wire);
            }
        )*
    };
}

round_trips! {
    py_mcp_receives_the_embedders_trace_context_over_http1 => embedder_context(PyMcp, Wire::Plain);
    py_mcp_receives_the_embedders_trace_context_over_h2c => embedder_context(PyMcp, Wire::H2c);
    py_mcp_receives_the_request_spans_opentelemetry_context_over_http1 => opentelemetry_context(PyMcp, Wire::Plain);
    py_mcp_receives_the_request_spans_opentelemetry_context_over_h2c => opentelemetry_context(PyMcp, Wire::H2c);
    fastmcp_receives_the_embedders_trace_context_over_http1 => embedder_context(FastMcp, Wire::Plain);
    fastmcp_receives_the_embedders_trace_context_over_h2c => embedder_context(FastMcp, Wire::H2c);
    fastmcp_receives_the_request_spans_opentelemetry_context_over_http1 => opentelemetry_context(FastMcp, Wire::Plain);
    fastmcp_receives_the_request_spans_opentelemetry_context_over_h2c => opentelemetry_context(FastMcp, Wire::H2c);
}
