//! The tokio adapter with OpenTelemetry: the sessions' `tracing` spans (through
//! `tracing-opentelemetry`) and their metrics (feature `metrics`, through the global meter
//! provider) exported over OTLP/HTTP (protobuf) to a collector.
//!
//! ```text
//! cargo run -p mcp-sansio-tokio --features tracing,metrics --example otlp -- \
//!     https://mcp.example.com/mcp [http://127.0.0.1:4318]
//! ```
//!
//! The collector's base URL defaults to `http://127.0.0.1:4318` (the OTLP/HTTP port); spans go
//! to its `/v1/traces`, metrics to its `/v1/metrics`. One work item runs (connect, list, close)
//! inside a span `work_item`, so that its operations share one trace.

mod http;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The tracer and meter providers exporting to `collector` (`http://host:port`).
pub fn providers(
    collector: &str,
) -> Result<(SdkTracerProvider, SdkMeterProvider), Box<dyn std::error::Error>> {
    let resource = Resource::builder()
        .with_service_name("mcp-sansio-otlp-example")
        .build();
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(http::StdHttpClient)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{collector}/v1/traces"))
        .build()?;
    let tracer = SdkTracerProvider::builder()
        .with_resource(resource.clone())
        .with_batch_exporter(spans)
        .build();
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(http::StdHttpClient)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{collector}/v1/metrics"))
        .build()?;
    let meter = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(PeriodicReader::builder(metrics).build())
        .build();
    Ok((tracer, meter))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or("usage: otlp URL [COLLECTOR] (an MCP server's endpoint, an OTLP/HTTP collector)")?;
    let collector = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:4318".to_owned());
    let (tracer, meter) = providers(&collector)?;
    // The metrics: the sessions made from now on find this provider.
    opentelemetry::global::set_meter_provider(meter.clone());
    // The spans: every `tracing` span of the sessions, as an OpenTelemetry span.
    tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("mcp-sansio")))
        .init();

    let client = mcp_sansio_tokio::Client::new();
    let work = async {
        let mut session = client.connect(mcp_sansio::Config::new(&url)?).await?;
        let catalog = session.list_tools().await?;
        println!("{} tools", catalog.tools.len());
        session.close().await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    };
    let outcome = work.instrument(tracing::info_span!("work_item")).await;
    // Everything recorded is sent before the process ends.
    tracer.shutdown()?;
    meter.shutdown()?;
    outcome
}
