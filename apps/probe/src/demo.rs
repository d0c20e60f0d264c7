//! `mcp-probe demo`: two embedded loopback servers (one speaking both eras, one legacy only),
//! listed and called through the real tokio adapter. No network beyond 127.0.0.1.

use std::process::ExitCode;

use mcp_sansio::{Config, Error};
use mcp_sansio_demo_server::{DemoServer, Eras, Options, ResponseMode};
use mcp_sansio_tokio::AddressPolicy;
use mcp_sansio_tokio::{CallObserver, Client, Session};

use crate::render;

/// Prints each progress notification, and a task's creation and status reports, as lines of
/// the demo's report; accepts a task's confirmation request.
struct Printer {
    count: usize,
    /// Whether a task handle came already (later ones are updates).
    task: bool,
}

impl CallObserver for Printer {
    fn task_handle(&mut self, handle: &mcp_sansio::task::TaskHandle) {
        let what = if self.task {
            "handle updated"
        } else {
            "created"
        };
        self.task = true;
        println!(
            "      task {what} ({} bytes of handle to persist)",
            handle.to_bytes().len()
        );
    }

    fn task_status(&mut self, status: mcp_sansio::task::TaskStatus, message: Option<&str>) {
        println!(
            "      {}",
            render::task_status_line(status.as_str(), message)
        );
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let requests: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(requests.get()).ok()?;
        let mut answers = serde_json::Map::new();
        for key in requests.keys() {
            println!("      input request {}: accepted", crate::inert::line(key));
            answers.insert(
                key.clone(),
                serde_json::json!({"action": "accept", "content": {}}),
            );
        }
        serde_json::to_vec(&answers).ok()
    }

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
    let mut printer = Printer {
        count: 0,
        task: false,
    };
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
    // With the tasks extension declared (SEP-2663), the server lists `slow_count` and answers
    // its call with a task, which the client polls to its end.
    let mut tasks = Config::new(&modern.url())?.with_tasks(true);
    tasks.input_hook = true;
    // The server asks for 100 ms between polls; the client's floor is 1 s by default.
    tasks.budgets.task_poll_floor = std::time::Duration::from_millis(100);
    let mut session = client.connect(tasks).await?;
    println!("  with the tasks extension declared:");
    show_call(&mut session, "slow_count", r#"{"to":3}"#).await?;
    session.close().await?;
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
