//! The metrics of sessions (feature `metrics` of mcp-sansio-net, on in these tests), read back by
//! the OpenTelemetry SDK's in-memory exporter through the global meter provider.
//!
//! One test only: the global meter provider is the process's, and another test of this binary
//! running at once would add its own values.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use mcp_sansio::{Budget, Config};
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_test_support::h2_server;
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use support::*;

const TOKEN: &str = "tok-metrics-7f3a91";
const ARGUMENT: &str = "argument-value-5c2e";

/// The conventions' bucket boundaries of both duration histograms: "This metric SHOULD be
/// specified with ExplicitBucketBoundaries of `[ 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10,
/// 30, 60, 120, 300 ]`" (semantic-conventions, `docs/gen-ai/mcp.md`, both metrics).
const SPEC_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

fn metric<'a>(all: &'a ResourceMetrics, name: &str) -> &'a Metric {
    let found: Vec<&Metric> = all
        .scope_metrics()
        .filter(|s| s.scope().name() == "mcp-sansio")
        .flat_map(|s| s.metrics())
        .filter(|m| m.name() == name)
        .collect();
    assert_eq!(found.len(), 1, "one metric {name}");
    found[0]
}

fn attrs<'a>(kv: impl Iterator<Item = &'a KeyValue>) -> BTreeMap<String, String> {
    kv.map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect()
}

/// Each data point of histogram `m` (f64): its attributes, count and bounds.
fn histogram_f64(m: &Metric) -> Vec<(BTreeMap<String, String>, u64, Vec<f64>)> {
    match m.data() {
        AggregatedMetrics::F64(MetricData::Histogram(h)) => h
            .data_points()
            .map(|p| (attrs(p.attributes()), p.count(), p.bounds().collect()))
            .collect(),
        other => panic!("{}: not an f64 histogram: {other:?}", m.name()),
    }
}

/// Each data point of counter `m` (u64): its attributes and value.
fn sum_u64(m: &Metric) -> Vec<(BTreeMap<String, String>, u64)> {
    match m.data() {
        AggregatedMetrics::U64(MetricData::Sum(s)) => {
            assert!(s.is_monotonic(), "{} is a counter", m.name());
            s.data_points()
                .map(|p| (attrs(p.attributes()), p.value()))
                .collect()
        }
        other => panic!("{}: not a u64 counter: {other:?}", m.name()),
    }
}

fn has(a: &BTreeMap<String, String>, k: &str, v: &str) -> bool {
    a.get(k).map(String::as_str) == Some(v)
}

/// `mcp.client.operation.duration` ("Histogram", unit "`s`", "The duration of the MCP request
/// or notification as observed on the sender"; `mcp.method.name` "Required", `error.type`
/// "Conditionally Required: If and only if the operation fails", `gen_ai.tool.name`
/// "Conditionally Required: When operation is related to a specific tool",
/// `gen_ai.operation.name` "SHOULD be set to `execute_tool` when the operation describes a tool
/// call", `network.protocol.name` "SHOULD be normalized to lowercase", `network.transport` "SHOULD
/// be set to `tcp` or `quic` if the transport protocol is HTTP", `server.address`,
/// `server.port`, `mcp.protocol.version` Recommended) and `mcp.client.session.duration`
/// ("Histogram", `s`, "The duration of the MCP session as observed on the MCP client";
/// `error.type` "If and only if session ends with an error"), from semantic-conventions'
/// `docs/gen-ai/mcp.md`; `network.protocol.version`: "The actual version of the protocol used for
/// network communication", `1.1` or `2`); and this crate's counts: budget hits by budget, errors
/// by kind, bytes read, requests per work item (checked against the requests the servers saw),
/// pooled socket reuse (the requests less the sockets the server accepted) and multiplexed reuse
/// over HTTP/2 (the sessions less the connections the server accepted). No token, argument or
/// URL path appears in any exported value.
#[tokio::test]
async fn sessions_record_the_conventions_metrics_and_the_operators_counts() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());

    let server = Server::start(mcp).await;
    let client = loopback_client();
    // Work item 1: discovery, a listing, a call, the close.
    let mut s = client
        .connect(Config::new(&server.url()).unwrap().with_bearer_token(TOKEN))
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    let argument = format!(r#"{{"text":"{ARGUMENT}"}}"#);
    s.call_tool("echo", argument.as_bytes()).await.unwrap();
    s.close().await.unwrap();
    // Work item 2, on the era hint and the pooled socket.
    let mut s = client
        .connect(Config::new(&server.url()).unwrap().with_bearer_token(TOKEN))
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    s.close().await.unwrap();

    // Work item 3: a listing a flood ends at the byte budget; the session is dropped.
    let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n".to_vec();
    let flood = Server::start(move |_: &Req| Reply::Flood(head.clone())).await;
    let mut budgets = time_budgets(ms(30_000));
    budgets.response_bytes = 64 * 1024;
    budgets.sse_event_bytes = 1024 * 1024;
    let mut s = client
        .connect(hinted(&flood.url()).with_budgets(budgets))
        .await
        .unwrap();
    let e = s.list_tools().await.unwrap_err();
    assert_eq!(
        e.budget().map(|b| b.budget),
        Some(Budget::ResponseBytes),
        "{e}"
    );
    let code = e.kind().code();
    drop(s);

    provider.force_flush().unwrap();
    let exported = exporter.get_finished_metrics().unwrap();
    let all = exported.last().expect("an export");

    // mcp.client.operation.duration
    let op = metric(all, "mcp.client.operation.duration");
    assert_eq!(op.unit(), "s");
    let points = histogram_f64(op);
    let port = server.port().to_string();
    let by_method = |method: &str| -> Vec<&(BTreeMap<String, String>, u64, Vec<f64>)> {
        points
            .iter()
            .filter(|(a, _, _)| has(a, "mcp.method.name", method))
            .collect()
    };
    for (a, _, bounds) in &points {
        assert_eq!(bounds, &SPEC_BOUNDARIES, "{a:?}");
        assert!(has(a, "network.protocol.name", "http"), "{a:?}");
        assert!(has(a, "network.protocol.version", "1.1"), "{a:?}");
        assert!(has(a, "network.transport", "tcp"), "{a:?}");
        assert!(has(a, "server.address", "127.0.0.1"), "{a:?}");
        assert!(a.contains_key("mcp.method.name"), "{a:?}");
    }
    let discover = by_method("server/discover");
    let discovered: u64 = discover.iter().map(|p| p.1).sum();
    assert_eq!(discovered, 3, "three connects: {points:?}");
    let call = by_method("tools/call");
    assert_eq!(call.len(), 1, "{points:?}");
    let (a, n, _) = call[0];
    assert_eq!(*n, 1);
    assert!(has(a, "gen_ai.tool.name", "echo"), "{a:?}");
    assert!(has(a, "gen_ai.operation.name", "execute_tool"), "{a:?}");
    assert!(has(a, "mcp.protocol.version", "2026-07-28"), "{a:?}");
    assert!(has(a, "server.port", &port), "{a:?}");
    assert!(!a.contains_key("error.type"), "{a:?}");
    let lists = by_method("tools/list");
    let ok: u64 = lists
        .iter()
        .filter(|p| !p.0.contains_key("error.type"))
        .map(|p| p.1)
        .sum();
    let failed: Vec<_> = lists
        .iter()
        .filter(|p| p.0.contains_key("error.type"))
        .collect();
    assert_eq!(ok, 2, "{points:?}");
    assert_eq!(failed.len(), 1, "{points:?}");
    assert!(has(&failed[0].0, "error.type", code), "{failed:?}");
    assert_eq!(failed[0].1, 1);
    assert!(
        points
            .iter()
            .all(|(a, _, _)| !has(a, "mcp.method.name", "") && !has(a, "mcp.method.name", "close")),
        "a close sends no MCP request: {points:?}"
    );

    // mcp.client.session.duration
    let session = metric(all, "mcp.client.session.duration");
    assert_eq!(session.unit(), "s");
    let sessions = histogram_f64(session);
    assert_eq!(sessions.iter().map(|p| p.1).sum::<u64>(), 3, "{sessions:?}");
    let ended_in_error: Vec<_> = sessions
        .iter()
        .filter(|p| p.0.contains_key("error.type"))
        .collect();
    assert_eq!(ended_in_error.len(), 1, "{sessions:?}");
    assert!(has(&ended_in_error[0].0, "error.type", code));
    assert_eq!(ended_in_error[0].1, 1);
    for (a, _, bounds) in &sessions {
        assert_eq!(bounds, &SPEC_BOUNDARIES);
        assert!(has(a, "network.transport", "tcp"), "{a:?}");
        assert!(!a.contains_key("mcp.method.name"), "{a:?}");
    }

    // Budget hits by budget, errors by kind.
    let hits = sum_u64(metric(all, "mcp_sansio.client.budget.hits"));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(
        has(&hits[0].0, "mcp_sansio.budget", "response_bytes"),
        "{hits:?}"
    );
    assert!(has(&hits[0].0, "mcp.method.name", "tools/list"), "{hits:?}");
    assert_eq!(hits[0].1, 1);
    let errors = sum_u64(metric(all, "mcp_sansio.client.errors"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(has(&errors[0].0, "error.type", code), "{errors:?}");
    assert_eq!(errors[0].1, 1);

    // Bytes read: at least the flood's byte budget, on the failed listing.
    let bytes = sum_u64(metric(all, "mcp_sansio.client.bytes_read"));
    assert_eq!(metric(all, "mcp_sansio.client.bytes_read").unit(), "By");
    let listed: u64 = bytes
        .iter()
        .filter(|p| has(&p.0, "mcp.method.name", "tools/list"))
        .map(|p| p.1)
        .sum();
    assert!(listed >= 64 * 1024, "{bytes:?}");
    assert!(
        bytes
            .iter()
            .any(|p| has(&p.0, "mcp.method.name", "tools/call") && p.1 > 0),
        "{bytes:?}"
    );

    // Requests per work item: their sum is what the servers saw.
    let requests = metric(all, "mcp_sansio.client.session.requests");
    assert_eq!(requests.unit(), "{request}");
    let (count, sum) = match requests.data() {
        AggregatedMetrics::U64(MetricData::Histogram(h)) => h
            .data_points()
            .fold((0, 0), |(c, s), p| (c + p.count(), s + p.sum())),
        other => panic!("not a u64 histogram: {other:?}"),
    };
    let seen = (server.requests().len() + flood.requests().len()) as u64;
    assert_eq!(count, 3, "one value per work item");
    assert_eq!(sum, seen, "the requests the servers saw");

    // Pooled reuse: every request of `server` but those on a freshly accepted socket.
    let reuse = sum_u64(metric(all, "mcp_sansio.client.socket.reuse"));
    let pooled: u64 = reuse
        .iter()
        .filter(|p| has(&p.0, "mcp_sansio.reuse", "pooled"))
        .map(|p| p.1)
        .sum();
    let expected = server.requests().len() - server.accepted();
    assert!(expected > 0);
    assert_eq!(pooled, expected as u64, "{reuse:?}");

    // Nothing secret in any exported value.
    let text = format!("{exported:?}");
    for secret in [TOKEN, ARGUMENT, "/mcp"] {
        assert!(!text.contains(secret), "{secret} in the metrics");
    }

    // Over HTTP/2 (h2c): a second session joins the first one's connection.
    let h2 = h2_server::Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", h2.port);
    let h2_client = mcp_sansio_tokio::Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .h2_prior_knowledge(true)
        .build();
    let mut a = h2_client.connect(h2_server::config(&url)).await.unwrap();
    a.list_tools().await.unwrap();
    let mut b = h2_client.connect(h2_server::config(&url)).await.unwrap();
    b.list_tools().await.unwrap();
    a.close().await.unwrap();
    b.close().await.unwrap();
    let connections = h2.accepted.load(Ordering::SeqCst);
    assert_eq!(connections, 1, "one HTTP/2 connection");
    provider.force_flush().unwrap();
    let exported = exporter.get_finished_metrics().unwrap();
    let all = exported.last().expect("an export");
    let reuse = sum_u64(metric(all, "mcp_sansio.client.socket.reuse"));
    let multiplexed: u64 = reuse
        .iter()
        .filter(|p| has(&p.0, "mcp_sansio.reuse", "multiplexed"))
        .map(|p| p.1)
        .sum();
    assert_eq!(multiplexed, 2 - connections as u64, "{reuse:?}");
    let h2_lists: u64 = histogram_f64(metric(all, "mcp.client.operation.duration"))
        .iter()
        .filter(|(a, _, _)| {
            has(a, "network.protocol.version", "2") && has(a, "mcp.method.name", "tools/list")
        })
        .map(|p| p.1)
        .sum();
    assert_eq!(h2_lists, 2, "network.protocol.version `2` over HTTP/2");
    provider.shutdown().unwrap();
}
