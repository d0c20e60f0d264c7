//! `mcp-probe`: lists and calls the tools of an MCP server over Streamable HTTP, through the
//! tokio adapter of mcp-sansio. Run `mcp-probe --help` for the usage, the exit codes and the
//! JSON output.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod args;
mod demo;
mod inert;
mod oauth;
mod render;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use args::{Command, Options};
use mcp_sansio::{Config, ErrorKind};
use mcp_sansio_net::auth::AuthSessionError;
use mcp_sansio_tokio::{read_ca_certificates, AddressPolicy, CallObserver, Client, TranscriptFile};

/// The environment variable holding the bearer token.
const TOKEN_VAR: &str = "MCP_BEARER_TOKEN";

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let json_wanted = argv.iter().any(|a| a == "--json");
    let (options, command) = match args::parse(&argv) {
        Ok(p) => p,
        Err(e) => return clap_error(json_wanted, &e),
    };
    match command {
        Command::Demo => runtime().block_on(demo::run()),
        Command::Completions { shell } => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(shell, &mut args::command(), "mcp-probe", &mut out);
            ExitCode::SUCCESS
        }
        Command::List { url } => {
            init_tracing(options.verbose);
            let config = match config(&url, &options) {
                Ok(c) => c,
                Err(m) => return usage_error(options.json, &m),
            };
            let (client, recording) = match client(&options) {
                Ok(c) => c,
                Err(m) => return usage_error(options.json, &m),
            };
            let code = runtime().block_on(list(client, config, &options));
            recorded(recording.as_deref(), code)
        }
        Command::Call {
            url,
            tool,
            arguments,
        } => {
            init_tracing(options.verbose);
            if let Err(m) = check_arguments(&arguments) {
                return usage_error(options.json, &m);
            }
            let config = match config(&url, &options) {
                Ok(c) => c,
                Err(m) => return usage_error(options.json, &m),
            };
            let (client, recording) = match client(&options) {
                Ok(c) => c,
                Err(m) => return usage_error(options.json, &m),
            };
            let code = runtime().block_on(call(client, config, &options, &tool, &arguments));
            recorded(recording.as_deref(), code)
        }
    }
}

/// With `-v`, or when `RUST_LOG` is set, prints the session's spans (when they close, with
/// every field) and events on stderr: `RUST_LOG` chooses what (tracing-subscriber's env filter),
/// `-v` alone everything of the library (`mcp_sansio=debug`). Otherwise nothing is installed and
/// stderr is unchanged.
fn init_tracing(verbose: bool) {
    use tracing_subscriber::fmt::format::FmtSpan;
    use tracing_subscriber::EnvFilter;
    let env = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = match env {
        Some(directives) => EnvFilter::builder().parse_lossy(directives),
        None if verbose => EnvFilter::new(format!("{}=debug", mcp_sansio_net::trace::TARGET)),
        None => return,
    };
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Prints what clap says: the help or the version on stdout (exit 0), or a usage error on
/// stderr, and then also as the JSON document with `--json` (exit 2).
fn clap_error(json: bool, e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
    if matches!(e.kind(), DisplayHelp | DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let _ = e.print();
    if json {
        println!(
            "{}",
            inert::json(&render::error_json(
                ErrorKind::ConnectionFailed,
                &args::message(e)
            ))
        );
    }
    ExitCode::from(2)
}

/// Reports a usage or configuration error: text on stderr, and the JSON document with `--json`.
fn usage_error(json: bool, message: &str) -> ExitCode {
    eprintln!("mcp-probe: {message}\nTry `mcp-probe --help`.");
    if json {
        println!(
            "{}",
            inert::json(&render::error_json(ErrorKind::ConnectionFailed, message))
        );
    }
    ExitCode::from(2)
}

/// Refuses, before anything is sent, arguments the core would refuse: anything but one JSON
/// object. The check only validates (numbers are not converted, escapes not decoded): the core
/// sends the arguments byte for byte, so `1e400`, `1.0` and `\u00e9` reach the server as written.
fn check_arguments(arguments: &str) -> Result<(), String> {
    let trimmed = arguments.trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.is_empty() {
        return Ok(()); // the core sends {}
    }
    if let Err(e) = serde_json::from_str::<Box<serde_json::value::RawValue>>(trimmed) {
        return Err(format!("the arguments are not valid JSON: {e}"));
    }
    if !trimmed.starts_with('{') {
        return Err("the arguments must be a JSON object".into());
    }
    Ok(())
}

fn config(url: &str, o: &Options) -> Result<Config, String> {
    let mut c = Config::new(url).map_err(|e| format!("{e} (given {url:?})"))?;
    if let Ok(token) = std::env::var(TOKEN_VAR) {
        c = c.with_bearer_token(token);
    }
    if let Some(d) = o.request_timeout {
        c.budgets.request_time = d;
    }
    if let Some(d) = o.list_timeout {
        c.budgets.list_time = d;
    }
    if let Some(d) = o.call_timeout {
        c.budgets.call_time = d;
    }
    if let Some(n) = o.max_response_bytes {
        c.budgets.response_bytes = n;
        c.budgets.sse_event_bytes = c.budgets.sse_event_bytes.min(n);
    }
    if let Some(n) = o.max_header_bytes {
        c.budgets.header_block_bytes = n;
    }
    if let Some(n) = o.max_pages {
        c.budgets.pages = n;
    }
    Ok(c)
}

/// The client, and the transcript file it records to with `--record`.
fn client(o: &Options) -> Result<(Client, Option<Arc<TranscriptFile>>), String> {
    let mut b = Client::builder().policy(AddressPolicy::strict().allow_loopback(o.allow_loopback));
    if let Some(d) = o.dial_timeout {
        b = b.dial_timeout(d);
    }
    b = b.http1_only(o.http1).h2_prior_knowledge(o.h2c);
    for path in &o.ca_certs {
        b = b.add_root_certificates(read_ca_certificates(path).map_err(|e| e.to_string())?);
    }
    let mut recording = None;
    if let Some(path) = &o.record {
        let file = TranscriptFile::create(path)
            .map_err(|e| format!("cannot write the transcript {}: {e}", path.display()))?;
        let file = Arc::new(file);
        b = b.record_to(file.clone());
        recording = Some(file);
    }
    Ok((b.build(), recording))
}

/// After a recorded run: a transcript that could not be written fails the run (exit 2), since
/// the user asked for it; otherwise the run's own exit code stands.
fn recorded(recording: Option<&TranscriptFile>, code: ExitCode) -> ExitCode {
    match recording.and_then(TranscriptFile::error) {
        Some(e) => {
            eprintln!("mcp-probe: the transcript was not written completely: {e}");
            ExitCode::from(2)
        }
        None => code,
    }
}

/// Reports a failure and returns its exit code.
fn failed(json: bool, error: &AuthSessionError) -> ExitCode {
    let message = error.to_string();
    let (code, kind) = oauth::classify(error);
    if json {
        println!("{}", inert::json(&render::error_json(kind, &message)));
    } else {
        eprintln!("mcp-probe: {} ({})", inert::line(&message), kind.code());
    }
    ExitCode::from(code)
}

async fn list(client: Client, config: Config, o: &Options) -> ExitCode {
    let mut session = match oauth::Probe::connect(&client, config, o).await {
        Ok(s) => s,
        Err(e) => return failed(o.json, &e),
    };
    let catalog = match session.list_tools().await {
        Ok(c) => c,
        Err(e) => return failed(o.json, &e),
    };
    if o.json {
        // Written as it is rendered: a catalog of many small tools is never built twice; every
        // string a server chose is written inert.
        let mut out = inert::JsonWriter::new(std::io::BufWriter::new(std::io::stdout().lock()));
        let s = session.session();
        let _ = render::write_catalog_json(&mut out, s.version(), s.http_version(), &catalog)
            .and_then(|()| out.flush());
    } else {
        let s = session.session();
        let server = s.server_info().map(|s| format!("{} {}", s.name, s.version));
        print!(
            "{}",
            render::catalog_text(s.version(), s.era().as_str(), server, &catalog)
        );
    }
    // Ending a legacy session is a courtesy; its failure changes nothing printed.
    let _ = session.close().await;
    ExitCode::SUCCESS
}

async fn call(
    client: Client,
    config: Config,
    o: &Options,
    tool: &str,
    arguments: &str,
) -> ExitCode {
    let mut session = match oauth::Probe::connect(&client, config, o).await {
        Ok(s) => s,
        Err(e) => return failed(o.json, &e),
    };
    let mut progress = ProgressBar::new(!o.json);
    let result = session
        .call_tool_with(tool, arguments.as_bytes(), &mut progress)
        .await;
    progress.finish();
    let result = match result {
        Ok(r) => r,
        Err(e) => return failed(o.json, &e),
    };
    // Written as it is rendered, through one buffer: a result of many small pieces is never
    // built whole a second time. Every string a server chose is written inert.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = if o.json {
        let mut json = inert::JsonWriter::new(&mut out);
        render::write_call_json(&mut json, session.session().http_version(), &result)
            .and_then(|()| json.flush())
    } else {
        render::write_call_text(&mut out, &result)
    };
    let _ = out.flush();
    drop(out);
    let _ = session.close().await;
    ExitCode::SUCCESS
}

/// Shows progress notifications on stderr: one rewritten line on a terminal, one line each
/// otherwise.
pub struct ProgressBar {
    enabled: bool,
    terminal: bool,
    shown: bool,
}

impl ProgressBar {
    /// A bar that shows nothing unless `enabled`.
    pub fn new(enabled: bool) -> ProgressBar {
        ProgressBar {
            enabled,
            terminal: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    /// Ends the rewritten line, if any.
    pub fn finish(&mut self) {
        if self.shown && self.terminal {
            eprintln!();
        }
        self.shown = false;
    }
}

impl CallObserver for ProgressBar {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if !self.enabled {
            return;
        }
        let line = render::progress_line(progress, total, message);
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("progress {line}");
        }
        let _ = std::io::stderr().flush();
        self.shown = true;
    }
}
