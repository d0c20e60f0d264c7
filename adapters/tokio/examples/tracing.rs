//! The spans and events of a session, printed by `tracing-subscriber`'s formatter on stderr and
//! filtered by `RUST_LOG` (`RUST_LOG=mcp_sansio=debug` shows the exchanges too; INFO the
//! operations):
//!
//! ```text
//! RUST_LOG=mcp_sansio=info cargo run -p mcp-sansio-tokio --features tracing --example tracing -- https://mcp.example.com/mcp
//! ```
//!
//! One line per span as it closes, with every field it recorded, for example:
//!
//! ```text
//! INFO list{origin=https://mcp.example.com:443 http_version="HTTP/2" era="modern"
//!     protocol_version="2026-07-28" pages=1 tools=3 bytes_read=2140 outcome="ok"}:
//!     mcp_sansio: close time.busy=… time.idle=…
//! ```

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::from_default_env())
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(std::io::stderr)
        .init();
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: tracing URL (an MCP server's endpoint)")?;
    let client = mcp_sansio_tokio::Client::new();
    let mut session = client.connect(mcp_sansio::Config::new(&url)?).await?;
    let catalog = session.list_tools().await?;
    println!("{} tools", catalog.tools.len());
    session.close().await?;
    Ok(())
}
