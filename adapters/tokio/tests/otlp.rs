//! Spans and metrics exported for real: `opentelemetry-otlp` (HTTP, protobuf) sends a work item's
//! `tracing` spans (through `tracing-opentelemetry`) and its metrics (feature `metrics`) to a
//! receiver started for the test on 127.0.0.1, `checks/otlp/receiver.py`, which decodes them with
//! PyPI's `opentelemetry-proto` classes, independently of the Rust exporter; the work item runs
//! against the demo server through the tokio adapter, as `examples/otlp` does.

#[path = "../examples/otlp/http.rs"]
mod http;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::Config;
use mcp_sansio_demo_server::{DemoServer, Options};
use mcp_sansio_net::AddressPolicy;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::Value;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const TOKEN: &str = "tok-otlp-2b94e7";
const ARGUMENT: &str = "argument-value-a81f";

/// The spans the export carries, by name, and the names their parent may have: the work item's
/// span (`work_item`, made by the test) is the root; the operations are its children; each
/// exchange is a child of its operation. Every exported span must be named here, and every name
/// here exported. The `opentelemetry` feature's spans by the conventions join this table.
/// The operations under which a request's client span (named by its MCP method) may be.
const REQUEST_PARENTS: &[&str] = &["connect", "list", "call", "close"];

const SPANS: &[(&str, &[&str])] = &[
    ("work_item", &[]),
    ("connect", &["work_item"]),
    ("list", &["work_item"]),
    ("call", &["work_item"]),
    ("close", &["work_item"]),
    ("exchange", &["connect", "list", "call", "close"]),
];

/// The receiver's process, killed when dropped, and the JSON lines it printed.
struct Receiver {
    child: Child,
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../checks/otlp/receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs checks/otlp/receiver.py (opentelemetry-proto installed)");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        let port = first
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the receiver's first line: {first:?}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                let v: Value = serde_json::from_str(&line).unwrap();
                sink.lock().unwrap().push(v);
            }
        });
        Receiver { child, port, lines }
    }

    /// The lines printed for `path` once there is one, within 10 s.
    fn wait(&self, path: &str) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got: Vec<Value> = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .filter(|l| l["path"] == path)
                .cloned()
                .collect();
            if !got.is_empty() || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_default()
}

/// The span names of the table, the parent/child links across a list and a call, one trace id
/// for the work item, the operations' fields as attributes; the metrics' names, units and the
/// conventions' attributes (`mcp.client.operation.duration`: histogram, unit `s`,
/// `mcp.method.name` Required, `gen_ai.tool.name` "When operation is related to a specific
/// tool", `error.type` `tool_error` for a result with `isError`; `mcp.client.session.duration`:
/// histogram, `s`; semantic-conventions'
/// `docs/gen-ai/mcp.md`), as the receiver decoded them; and neither the bearer token, nor the
/// tool's argument, nor the endpoint's URL in any byte the exporters sent.
#[tokio::test]
async fn spans_and_metrics_reach_an_otlp_receiver_decoded_independently() {
    let receiver = Receiver::start();
    let collector = format!("http://127.0.0.1:{}", receiver.port);
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(http::StdHttpClient)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{collector}/v1/traces"))
        .build()
        .unwrap();
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .build();
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(http::StdHttpClient)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{collector}/v1/metrics"))
        .build()
        .unwrap();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics).build())
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());
    let _subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("mcp-sansio-test")))
        .set_default();

    let server = DemoServer::start(Options::default().bearer_token(TOKEN)).unwrap();
    let client = mcp_sansio_tokio::Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build();
    let url = server.url();
    let work = async {
        let config = Config::new(&url).unwrap().with_bearer_token(TOKEN);
        let mut session = client.connect(config).await.unwrap();
        session.list_tools().await.unwrap();
        let argument = format!(r#"{{"text":"{ARGUMENT}"}}"#);
        let result = session
            .call_tool("echo", argument.as_bytes())
            .await
            .unwrap();
        assert!(!result.is_error);
        let failed = session.call_tool("fail", b"{}").await.unwrap();
        assert!(failed.is_error, "the demo server's `fail` answers isError");
        session.close().await.unwrap();
    };
    work.instrument(tracing::info_span!("work_item")).await;
    tracer.force_flush().unwrap();
    meter.force_flush().unwrap();

    // Spans.
    let traces = receiver.wait("/v1/traces");
    assert!(!traces.is_empty(), "no span export reached the receiver");
    assert!(
        traces.iter().all(|l| l.get("error").is_none()),
        "{traces:?}"
    );
    let spans: Vec<&Value> = traces
        .iter()
        .flat_map(|l| l["spans"].as_array().unwrap())
        .collect();
    let by_id: BTreeMap<&str, &Value> = spans.iter().map(|v| (s(v, "span_id"), *v)).collect();
    let work_item = spans
        .iter()
        .find(|v| s(v, "name") == "work_item")
        .expect("the work item's span");
    let trace_id = s(work_item, "trace_id");
    assert_eq!(trace_id.len(), 32);
    for span in &spans {
        let name = s(span, "name");
        // A request's client span (OpenTelemetry's MCP conventions) is named by its method (and
        // tool): `{mcp.method.name} {target}`, under the operation that sent it.
        let method = span["attributes"]["mcp.method.name"].as_str();
        let parents = match method {
            Some(method) => {
                let tool = span["attributes"]["gen_ai.tool.name"].as_str();
                let expected = match tool {
                    Some(tool) => format!("{method} {tool}"),
                    None => method.to_owned(),
                };
                assert_eq!(name, expected, "a request span's name");
                REQUEST_PARENTS
            }
            None => {
                SPANS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .unwrap_or_else(|| panic!("span {name} is not in the table"))
                    .1
            }
        };
        assert_eq!(
            s(span, "trace_id"),
            trace_id,
            "{name} in the work item's trace"
        );
        let parent = s(span, "parent_span_id");
        if parents.is_empty() {
            assert_eq!(parent, "", "{name} is a root");
        } else {
            let parent_name = by_id
                .get(parent)
                .map(|p| s(p, "name"))
                .unwrap_or_else(|| panic!("{name}'s parent {parent} was not exported"));
            assert!(parents.contains(&parent_name), "{name} under {parent_name}");
        }
    }
    for (name, _) in SPANS {
        assert!(
            spans.iter().any(|v| s(v, "name") == *name),
            "no span {name}"
        );
    }
    // A request span for each request of the list and the calls, named by the conventions.
    for name in ["tools/list", "tools/call echo", "tools/call fail"] {
        assert!(
            spans.iter().any(|v| s(v, "name") == name),
            "no request span {name}"
        );
    }
    // The server saw the work item's trace id in every request's `_meta.traceparent` (the
    // trace context comes from the current OpenTelemetry context).
    let seen = server.trace_contexts();
    assert!(
        seen.iter().any(|t| t.method == "tools/call"),
        "the server recorded no trace context of a call: {seen:?}"
    );
    for t in &seen {
        assert_eq!(
            t.trace_id(),
            Some(trace_id),
            "{}: {}",
            t.method,
            t.traceparent
        );
    }
    // Each request names its own client span as the parent (the conventions' context
    // propagation: the server's span is a child of the client span of that request): the
    // `traceparent`'s parent id is the span id of an exported span of the request's method,
    // under an operation, and no two requests name the same span.
    let mut parents = std::collections::BTreeSet::new();
    for t in &seen {
        let parent_id = t.traceparent.split('-').nth(2).unwrap_or_default();
        let named = by_id
            .get(parent_id)
            .unwrap_or_else(|| panic!("{}: parent {parent_id} was not exported", t.method));
        assert_eq!(
            named["attributes"]["mcp.method.name"], t.method,
            "{}: the parent is the request's span: {named}",
            t.method
        );
        let op = by_id
            .get(s(named, "parent_span_id"))
            .map(|p| s(p, "name"))
            .unwrap_or_default();
        assert!(REQUEST_PARENTS.contains(&op), "{}: under {op}", t.method);
        assert!(
            parents.insert(parent_id),
            "{parent_id} named twice: {seen:?}"
        );
    }
    // Across a list and a call: each has an exchange of its own under it.
    for (op, rpc) in [("list", "tools/list"), ("call", "tools/call")] {
        let op_span = spans.iter().find(|v| s(v, "name") == op).unwrap();
        let attrs = &op_span["attributes"];
        assert_eq!(attrs["outcome"], "ok", "{op}: {attrs}");
        assert_eq!(attrs["http_version"], "HTTP/1.1", "{op}: {attrs}");
        assert!(
            s(attrs, "origin").starts_with("http://127.0.0.1:"),
            "{attrs}"
        );
        let children: Vec<_> = spans
            .iter()
            .filter(|v| s(v, "parent_span_id") == s(op_span, "span_id"))
            .collect();
        assert!(
            children
                .iter()
                .any(|c| s(c, "name") == "exchange" && c["attributes"]["rpc"] == rpc),
            "{op} has an exchange carrying {rpc}: {children:?}"
        );
    }
    let calls: Vec<&str> = spans
        .iter()
        .filter(|v| s(v, "name") == "call")
        .map(|v| s(&v["attributes"], "tool"))
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls.contains(&"echo") && calls.contains(&"fail"),
        "{calls:?}"
    );

    // Metrics: the last export holds every instrument (cumulative).
    let exports = receiver.wait("/v1/metrics");
    assert!(!exports.is_empty(), "no metric export reached the receiver");
    assert!(
        exports.iter().all(|l| l.get("error").is_none()),
        "{exports:?}"
    );
    let last = exports.last().unwrap();
    let metric = |name: &str| -> &Value {
        last["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no metric {name} in {last}"))
    };
    for (name, unit, kind) in [
        ("mcp.client.operation.duration", "s", "histogram"),
        ("mcp.client.session.duration", "s", "histogram"),
        ("mcp_sansio.client.bytes_read", "By", "sum"),
        (
            "mcp_sansio.client.session.requests",
            "{request}",
            "histogram",
        ),
    ] {
        let m = metric(name);
        assert_eq!(m["unit"], unit, "{name}");
        assert_eq!(m["type"], kind, "{name}");
        assert_eq!(m["scope"], "mcp-sansio", "{name}");
    }
    let points = metric("mcp.client.operation.duration")["points"]
        .as_array()
        .unwrap();
    let methods: Vec<&str> = points
        .iter()
        .map(|p| s(&p["attributes"], "mcp.method.name"))
        .collect();
    for m in ["tools/list", "tools/call"] {
        assert!(methods.contains(&m), "{methods:?}");
    }
    assert!(
        methods.contains(&"server/discover") || methods.contains(&"initialize"),
        "{methods:?}"
    );
    let call = |tool: &str| -> &Value {
        points
            .iter()
            .find(|p| {
                p["attributes"]["mcp.method.name"] == "tools/call"
                    && p["attributes"]["gen_ai.tool.name"] == tool
            })
            .unwrap_or_else(|| panic!("no tools/call point for {tool}: {points:?}"))
    };
    let echo = call("echo");
    assert_eq!(echo["attributes"]["gen_ai.operation.name"], "execute_tool");
    assert_eq!(echo["attributes"]["network.transport"], "tcp");
    assert_eq!(echo["attributes"]["server.address"], "127.0.0.1");
    assert!(echo["attributes"].get("error.type").is_none(), "{echo}");
    assert_eq!(echo["count"], 1);
    // "When CallToolResult is returned with `isError` set to `true`, this attribute [error.type]
    // SHOULD be set to `tool_error`."
    assert_eq!(call("fail")["attributes"]["error.type"], "tool_error");
    let sessions = metric("mcp.client.session.duration")["points"]
        .as_array()
        .unwrap();
    assert_eq!(
        sessions
            .iter()
            .map(|p| p["count"].as_u64().unwrap())
            .sum::<u64>(),
        1
    );

    // Nothing secret in any byte sent.
    for line in traces.iter().chain(&exports) {
        let hex = s(line, "body_hex");
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        for secret in [TOKEN, ARGUMENT, url.as_str()] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} was exported"
            );
        }
    }
    tracer.shutdown().unwrap();
    meter.shutdown().unwrap();
    server.shutdown();
}
