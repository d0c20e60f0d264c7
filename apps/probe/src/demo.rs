//! `mcp-probe demo`: two embedded loopback servers (one speaking both eras, one legacy only),
//! listed and called through the real tokio adapter. No network beyond 127.0.0.1.

use std::process::ExitCode;

use mcp_sansio::{Config, Error};
use mcp_sansio_demo_server::{DemoServer, Eras, Options, ResponseMode};
use mcp_sansio_tokio::AddressPolicy;
use mcp_sansio_tokio::{CallObserver, Client, Session};

use crate::render;

/// Prints each progress notification as a line of the demo's report.
struct Printer {
    count: usize,
}

impl CallObserver for Printer {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.count += 1;
        println!(
            "      progress {}",
            render::progress_line(progress, total, message)
        );
    }
}

/// Runs the demonstration; exit code 0 when every step worked.
pub async fn run() -> ExitCode {
    match steps().await {
        Ok(()) => {
            println!("\ndemo finished: every step succeeded");
            ExitCode::SUCCESS
        }
        Err(DemoError::Mcp(e)) => {
            eprintln!("mcp-probe demo: {e} ({})", e.kind().code());
            ExitCode::from(render::exit_code(&e))
        }
        Err(DemoError::Start(e)) => {
            eprintln!("mcp-probe demo: the embedded server did not start: {e}");
            ExitCode::from(3)
        }
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("      {l}\n")).collect()
}

async fn show_call(session: &mut Session, tool: &str, arguments: &str) -> Result<(), Error> {
    println!("  call {tool} {arguments}");
    let mut printer = Printer { count: 0 };
    let result = session
        .call_tool_with(tool, arguments.as_bytes(), &mut printer)
        .await?;
    print!("{}", indent(&render::call_text(&result)));
    if printer.count > 0 {
        println!("      ({} progress notifications)", printer.count);
    }
    Ok(())
}

/// Why the demonstration stopped.
enum DemoError {
    /// An embedded server did not start.
    Start(std::io::Error),
    /// A step failed.
    Mcp(Error),
}

impl From<Error> for DemoError {
    fn from(e: Error) -> Self {
        DemoError::Mcp(e)
    }
}

impl From<mcp_sansio::ConfigError> for DemoError {
    fn from(e: mcp_sansio::ConfigError) -> Self {
        DemoError::Mcp(Error::Config(e))
    }
}

fn start(options: Options) -> Result<DemoServer, DemoError> {
    DemoServer::start(options).map_err(DemoError::Start)
}

async fn steps() -> Result<(), DemoError> {
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build();

    let modern = start(
        Options::default()
            .eras(Eras::Both)
            .page_size(4)
            .response_mode(ResponseMode::Json),
    )?;
    println!("modern + legacy server at {}", modern.url());
    let mut session = client.connect(Config::new(&modern.url())?).await?;
    println!(
        "  connected: era {}, version {}, server {}",
        session.era(),
        session.version(),
        session
            .server_info()
            .map(|s| format!("{} {}", s.name, s.version))
            .unwrap_or_else(|| "(unnamed)".into())
    );
    let catalog = session.list_tools().await?;
    print!(
        "{}",
        indent(&render::catalog_text(
            session.version(),
            session.era().as_str(),
            None,
            &catalog
        ))
    );
    show_call(&mut session, "echo", r#"{"text":"hello from mcp-probe"}"#).await?;
    show_call(&mut session, "add", r#"{"a":19,"b":23}"#).await?;
    show_call(&mut session, "image", "{}").await?;
    show_call(&mut session, "resource", "{}").await?;
    show_call(&mut session, "fail", "{}").await?;
    show_call(&mut session, "slow", r#"{"steps":5,"delay_ms":60}"#).await?;
    session.close().await?;
    let before = modern.stats().requests_served;
    let again = client.connect(Config::new(&modern.url())?).await?;
    println!(
        "  reconnected with the learnt era hint: version {}, {} request(s) to connect",
        again.version(),
        modern.stats().requests_served - before
    );
    again.close().await?;
    let s = modern.stats();
    println!(
        "  server counted {} requests on {}",
        s.requests_served,
        connections(s.connections_accepted)
    );

    let legacy = start(
        Options::default()
            .eras(Eras::LegacyOnly)
            .response_mode(ResponseMode::Sse)
            .page_size(5),
    )?;
    println!("\nlegacy-only server (SSE answers) at {}", legacy.url());
    let mut session = client.connect(Config::new(&legacy.url())?).await?;
    println!(
        "  connected: era {}, version {} (after the modern probe was refused)",
        session.era(),
        session.version()
    );
    let catalog = session.list_tools().await?;
    println!(
        "  listed {} tools in {} pages",
        catalog.tools.len(),
        catalog.pages
    );
    show_call(&mut session, "echo", r#"{"text":"hello, legacy"}"#).await?;
    show_call(&mut session, "slow", r#"{"steps":3,"delay_ms":60}"#).await?;
    session.close().await?;
    let s = legacy.stats();
    println!(
        "  server counted {} requests on {}; {} sessions left open",
        s.requests_served,
        connections(s.connections_accepted),
        s.sessions
    );
    modern.shutdown();
    legacy.shutdown();
    Ok(())
}

/// "1 connection", "2 connections".
fn connections(n: u64) -> String {
    format!("{n} connection{}", if n == 1 { "" } else { "s" })
}
