//! Connects to an MCP server, lists its tools and optionally calls one.
//!
//! ```text
//! cargo run -p mcp-sansio-tokio --example list_tools -- URL [--loopback] [--legacy] [TOOL [ARGS_JSON]]
//! ```
//!
//! `--loopback` allows loopback addresses (a server on this machine); the default policy admits
//! public addresses only. `--legacy` offers the 2024-11-05 … 2025-11-25 revisions only. A bearer token is read from `MCP_TOKEN` if set.

use mcp_sansio::Config;
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_tokio::{CallObserver, Client};

/// Prints the progress a tool call reports.
struct Printer;

impl CallObserver for Printer {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        println!("progress {progress}/{total:?} {}", message.unwrap_or(""));
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let loopback = args.iter().any(|a| a == "--loopback");
    let legacy = args.iter().any(|a| a == "--legacy");
    args.retain(|a| a != "--loopback" && a != "--legacy");
    let Some(url) = args.first() else {
        eprintln!("usage: list_tools URL [--loopback] [--legacy] [TOOL [ARGS_JSON]]");
        std::process::exit(2);
    };
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(loopback))
        .build();
    let token = std::env::var("MCP_TOKEN").unwrap_or_default();
    let mut config = Config::new(url)?.with_bearer_token(token);
    if legacy {
        config.modern_versions.clear();
    }
    let mut session = match client.connect(config).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("connect: {e} ({})", e.kind());
            std::process::exit(1);
        }
    };
    println!(
        "connected: {} {} server {:?}",
        session.era(),
        session.version(),
        session.server_info()
    );
    let catalog = session.list_tools().await?;
    for tool in &catalog.tools {
        println!("tool {}: {}", tool.name(), tool.description().unwrap_or(""));
    }
    for refused in &catalog.refused {
        println!("refused entry {}: {}", refused.index, refused.reason);
    }
    if let Some(name) = args.get(1) {
        let arguments = args.get(2).map_or("{}", String::as_str);
        let result = session
            .call_tool_with(name, arguments.as_bytes(), &mut Printer)
            .await?;
        println!(
            "call {name}: is_error={} {:?}",
            result.is_error, result.content
        );
    }
    session.close().await?;
    Ok(())
}
