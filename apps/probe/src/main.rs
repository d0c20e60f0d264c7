//! `mcp-probe`: lists and calls the tools of an MCP server over Streamable HTTP, through the
//! tokio adapter of mcp-sansio. Run `mcp-probe --help` for the usage, the exit codes and the
//! JSON output.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod args;
mod demo;
mod inert;
mod oauth;
mod pins;
mod render;
mod trace_env;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use args::{Command, Options, TaskOp};
use mcp_sansio::task::{TaskHandle, TaskStatus};
use mcp_sansio::{CallResult, Config, ErrorKind};
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
        Command::Task { op, url } => {
            init_tracing(options.verbose);
            let (handle, config) = match task_handle(&options, url.as_deref()) {
                Ok(found) => found,
                Err(m) => return usage_error(options.json, &m),
            };
            let (client, recording) = match client(&options) {
                Ok(c) => c,
                Err(m) => return usage_error(options.json, &m),
            };
            let code = runtime().block_on(task(client, config, &options, handle, op));
            recorded(recording.as_deref(), code)
        }
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
    let (trace, warnings) = trace_env::from_env(|k| std::env::var(k).ok());
    for w in warnings {
        eprintln!("mcp-probe: warning: {w}");
    }
    c = c.with_trace_context(trace);
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
    if o.tasks || o.task_handle.is_some() || o.task_name.is_some() {
        c = c.with_tasks(true);
        // A task's input requests reach the observer, which declines elicitations
        // (`TaskObserver::input_required`).
        c.input_hook = true;
    }
    Ok(c)
}

/// The task handle `task` resumes and the configuration of its server: from the
/// `--task-handle` file, or from the `--store` under `--task-name` for the server at `url`.
fn task_handle(o: &Options, url: Option<&str>) -> Result<(TaskHandle, Config), String> {
    if let Some(path) = &o.task_handle {
        let handle = read_handle(path)?;
        let config = config(handle.server(), o)?;
        return Ok((handle, config));
    }
    let (Some(store), Some(name), Some(url)) = (task_store(o)?, &o.task_name, url) else {
        return Err(
            "task needs --task-handle FILE, or --store, --task-name NAME and the server's URL"
                .into(),
        );
    };
    let config = config(url, o)?;
    match store.load_task_handle(&config, name) {
        Some(handle) => Ok((handle, config)),
        None => Err(format!(
            "no task handle under --task-name {} for this server and credential in the store (none saved, expired, or the store did not answer)",
            inert::line(name)
        )),
    }
}

/// The store of `--store`, when `--task-name` keeps task handles there.
fn task_store(o: &Options) -> Result<Option<Arc<mcp_sansio_redis::RedisStore>>, String> {
    match (&o.store, &o.task_name) {
        (Some(url), Some(_)) => mcp_sansio_redis::RedisStore::open(url)
            .map(|s| Some(Arc::new(s)))
            .map_err(|e| format!("--store: {e}")),
        _ => Ok(None),
    }
}

/// The client, and the transcript file it records to with `--record`.
fn client(o: &Options) -> Result<(Client, Option<Arc<TranscriptFile>>), String> {
    let mut b = Client::builder().policy(AddressPolicy::strict().allow_loopback(o.allow_loopback));
    if let Some(d) = o.dial_timeout {
        b = b.dial_timeout(d);
    }
    b = b.http1_only(o.http1).h2_prior_knowledge(o.h2c);
    if let Some(policy) = o.pin_tools {
        b = b.tool_pins(policy);
    }
    if let Some(path) = &o.pin_file {
        if o.pin_tools.is_none() {
            return Err("--pin-file needs --pin-tools warn or refuse".into());
        }
        if o.store.is_some() {
            return Err("--pin-file and --store both keep the tool pins: give one".into());
        }
        b = b.shared_store(Arc::new(pins::FileStore::open(path)?));
    }
    for path in &o.ca_certs {
        b = b.add_root_certificates(read_ca_certificates(path).map_err(|e| e.to_string())?);
    }
    if let Some(url) = &o.store {
        // The fleet's store: catalog cache and era hints (with `--oauth`, the token store on
        // the same URL plugs in with the authorization: `oauth::authorization`).
        let store = mcp_sansio_redis::RedisStore::open(url).map_err(|e| format!("--store: {e}"))?;
        b = b.shared_store(Arc::new(store)).catalog_cache(true);
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
    pins::print_notes(session.session());
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
    let mut session = match oauth::Probe::connect(&client, config.clone(), o).await {
        Ok(s) => s,
        Err(e) => return failed(o.json, &e),
    };
    // With pins, the tools are listed first: the call is checked against the definition listed
    // (and refused before it is sent if it changed, under refuse).
    if o.pin_tools.is_some_and(|p| p != mcp_sansio::PinPolicy::Off) {
        if let Err(e) = session.list_tools().await {
            return failed(o.json, &e);
        }
        pins::print_notes(session.session());
    }
    let mut observer = TaskObserver::new(o);
    match task_store(o) {
        Ok(store) => observer.keep_in(store, &config, o),
        Err(m) => return usage_error(o.json, &m),
    }
    let result = {
        let call = session.call_tool_with(tool, arguments.as_bytes(), &mut observer);
        tokio::select! {
            r = call => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        }
    };
    observer.progress.finish();
    let Some(result) = result else {
        return observer.outcome(interrupted(&client, config, o, observer.handle.as_ref()).await);
    };
    pins::print_notes(session.session());
    let result = match result {
        Ok(r) => r,
        Err(e) => return observer.outcome(failed(o.json, &e)),
    };
    print_result(o, session.session().http_version(), &result, &observer);
    let _ = session.close().await;
    observer.outcome(ExitCode::SUCCESS)
}

/// After Ctrl-C during a call: the call is given up, and a task it created is cancelled
/// (`tasks/cancel`, then polled to its end within `task_cancel_time`) in a new session, since a
/// task otherwise goes on on the server. Exits with 130 (interrupted), saying what became of the
/// task.
async fn interrupted(
    client: &Client,
    config: Config,
    o: &Options,
    handle: Option<&TaskHandle>,
) -> ExitCode {
    const INTERRUPTED: u8 = 130;
    let Some(handle) = handle else {
        eprintln!("mcp-probe: interrupted");
        return ExitCode::from(INTERRUPTED);
    };
    eprintln!("mcp-probe: interrupted; cancelling the task (tasks/cancel)");
    // The same credentials (with --oauth: the stored tokens); the authorization is not
    // recorded a second time over the call's.
    let o = Options {
        record: None,
        ..o.clone()
    };
    let outcome = match oauth::Probe::connect(client, config, &o).await {
        Ok(mut session) => {
            let r = session.cancel_task(handle).await;
            let _ = session.close().await;
            r
        }
        Err(e) => Err(e),
    };
    match outcome {
        Err(AuthSessionError::Mcp(mcp_sansio::Error::Task(
            mcp_sansio::task::TaskError::Cancelled { .. },
        ))) => {
            eprintln!("mcp-probe: the task was cancelled");
        }
        Ok(_) => eprintln!("mcp-probe: the task had completed before the cancel"),
        Err(e) => eprintln!(
            "mcp-probe: the task was not cancelled: {}",
            inert::line(&e.to_string())
        ),
    }
    ExitCode::from(INTERRUPTED)
}

/// `mcp-probe task wait|get|cancel`: resumes the task of `handle` in a new session (with the
/// credentials `call` would present: `MCP_BEARER_TOKEN`, or `--oauth` and its stored tokens)
/// and prints its result as `call` does (a cancelled task is an error naming the
/// cancellation), or for `get` its one report.
async fn task(
    client: Client,
    config: Config,
    o: &Options,
    handle: mcp_sansio::task::TaskHandle,
    op: TaskOp,
) -> ExitCode {
    let mut session = match oauth::Probe::connect(&client, config.clone(), o).await {
        Ok(s) => s,
        Err(e) => return failed(o.json, &e),
    };
    if op == TaskOp::Get {
        let code = task_get(&mut session, o, &handle).await;
        let _ = session.close().await;
        return code;
    }
    let mut observer = TaskObserver::new(o);
    if let Ok(store) = task_store(o) {
        observer.keep_in(store, &config, o);
    }
    observer.summary = Some(render::TaskSummary {
        id: handle.id().as_str().to_owned(),
        polls: 0,
        status: "working".into(),
        detail: None,
    });
    let result = if op == TaskOp::Cancel {
        session.cancel_task(&handle).await
    } else {
        session.resume_task_with(&handle, &mut observer).await
    };
    observer.progress.finish();
    let result = match result {
        Ok(r) => r,
        Err(e) => return observer.outcome(failed(o.json, &e)),
    };
    print_result(o, session.session().http_version(), &result, &observer);
    let _ = session.close().await;
    observer.outcome(ExitCode::SUCCESS)
}

/// The exit code of `task get` for a task still running (`working`, `input_required`).
const STILL_RUNNING: u8 = 6;

/// `mcp-probe task get`: one `tasks/get`; prints the task's report (text on stdout, or the
/// `--json` document with its `task` object). Exits as `task wait` would have for a terminal
/// task (0 completed, a tool error included; 5 failed or cancelled), with [`STILL_RUNNING`]
/// for a task still running; a poll that fails exits as any failure does.
async fn task_get(session: &mut oauth::Probe, o: &Options, handle: &TaskHandle) -> ExitCode {
    let report = match session.get_task(handle).await {
        Ok(r) => r,
        Err(e) => return failed(o.json, &e),
    };
    let summary = render::TaskSummary::of_report(&report.task);
    let http_version = session.session().http_version();
    let error = match (report.task.status, &report.error) {
        (TaskStatus::Failed, Some(rpc)) => Some(mcp_sansio::Error::Rpc(rpc.clone())),
        (TaskStatus::Cancelled, _) => Some(mcp_sansio::Error::Task(
            mcp_sansio::task::TaskError::Cancelled {
                message: report.task.status_message.clone(),
            },
        )),
        _ => None,
    };
    let code = match (&error, report.task.status) {
        (Some(e), _) => render::exit_code(e),
        (None, TaskStatus::Completed) => 0,
        (None, _) => STILL_RUNNING,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let message = error.as_ref().map(|e| (e.kind(), e.to_string()));
    let _ = match (&report.result, o.json) {
        (Some(result), true) => {
            let mut json = inert::JsonWriter::new(&mut out);
            render::write_call_json(&mut json, http_version, result, Some(&summary))
                .and_then(|()| json.flush())
        }
        (None, true) => {
            let mut json = inert::JsonWriter::new(&mut out);
            let error = message.as_ref().map(|(k, m)| (*k, m.as_str()));
            render::write_task_json(&mut json, http_version, &summary, error)
                .and_then(|()| json.flush())
        }
        (result, false) => out
            .write_all(render::task_report_text(&summary).as_bytes())
            .and_then(|()| match result {
                Some(r) => render::write_call_text(&mut out, r),
                None => Ok(()),
            })
            .and_then(|()| match &message {
                Some((kind, m)) => {
                    writeln!(out, "error: {} ({})", inert::line(m), kind.code())
                }
                None => Ok(()),
            }),
    };
    let _ = out.flush();
    ExitCode::from(code)
}

/// Prints a tool's result on stdout: text, or the `--json` document (with its `task` object
/// when the call became a task). Written as it is rendered, through one buffer: a result of many
/// small pieces is never built whole a second time. Every string a server chose is written
/// inert.
fn print_result(o: &Options, http_version: &str, result: &CallResult, observer: &TaskObserver) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = if o.json {
        let mut json = inert::JsonWriter::new(&mut out);
        render::write_call_json(&mut json, http_version, result, observer.summary.as_ref())
            .and_then(|()| json.flush())
    } else {
        render::write_call_text(&mut out, result)
    };
    let _ = out.flush();
}

/// The most bytes read of a handle file (a handle is at most 4096).
const MAX_HANDLE_FILE: u64 = 8 * 1024;

/// Reads the task handle in `path`.
fn read_handle(path: &Path) -> Result<TaskHandle, String> {
    let file = std::fs::File::open(path)
        .map_err(|e| format!("cannot read the task handle {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    std::io::Read::take(file, MAX_HANDLE_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the task handle {}: {e}", path.display()))?;
    TaskHandle::from_bytes(&bytes)
        .map_err(|e| format!("{} is not a usable task handle: {e}", path.display()))
}

/// Writes `bytes` to `path` the way the credential file of `--token-file` is written: through
/// a temporary file created anew with mode 0600 (never opened through a symbolic link), then
/// renamed over `path` (a link at `path` is replaced, not followed).
fn write_handle(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    oauth::write_private(path, bytes)
}

/// Follows a call: its progress, and when it becomes a task its statuses (one line each on
/// stderr), its handle (written to `--task-handle`) and its input requests (elicitations
/// declined).
struct TaskObserver {
    progress: ProgressBar,
    show: bool,
    handle_path: Option<PathBuf>,
    /// Set when the call became a task.
    summary: Option<render::TaskSummary>,
    /// The task's latest handle.
    handle: Option<TaskHandle>,
    /// The first failure to write the handle file.
    write_error: Option<String>,
    /// With `--store` and `--task-name`: where each handle is also kept, for which server and
    /// credential, under which name.
    keep: Option<(Arc<mcp_sansio_redis::RedisStore>, Config, String)>,
}

impl TaskObserver {
    fn new(o: &Options) -> TaskObserver {
        TaskObserver {
            progress: ProgressBar::new(!o.json),
            show: !o.json,
            handle_path: o.task_handle.clone(),
            summary: None,
            handle: None,
            write_error: None,
            keep: None,
        }
    }

    /// Also keeps each handle in `store` under `--task-name`, for `config`'s server and
    /// credential.
    fn keep_in(
        &mut self,
        store: Option<Arc<mcp_sansio_redis::RedisStore>>,
        config: &Config,
        o: &Options,
    ) {
        if let (Some(store), Some(name)) = (store, &o.task_name) {
            self.keep = Some((store, config.clone(), name.clone()));
        }
    }

    /// `code`, unless the handle file could not be written: the user asked for it (exit 2).
    fn outcome(&self, code: ExitCode) -> ExitCode {
        match &self.write_error {
            Some(e) => {
                eprintln!(
                    "mcp-probe: the task handle was not written: {}",
                    inert::line(e)
                );
                ExitCode::from(2)
            }
            None => code,
        }
    }
}

impl CallObserver for TaskObserver {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.progress.progress(progress, total, message);
    }

    fn task_handle(&mut self, handle: &TaskHandle) {
        self.handle = Some(handle.clone());
        if self.summary.is_none() {
            self.summary = Some(render::TaskSummary {
                id: handle.id().as_str().to_owned(),
                polls: 0,
                status: "working".into(),
                detail: None,
            });
        }
        if let Some((store, config, name)) = &self.keep {
            // A store that does not answer drops it: `task` then finds nothing.
            store.save_task_handle(config, name, handle);
        }
        if let Some(path) = &self.handle_path {
            if let Err(e) = write_handle(path, &handle.to_bytes()) {
                self.write_error
                    .get_or_insert(format!("{}: {e}", path.display()));
            }
        }
    }

    fn task_status(&mut self, status: TaskStatus, message: Option<&str>) {
        let summary = self.summary.get_or_insert_with(Default::default);
        summary.polls += 1;
        summary.status = status.as_str().to_owned();
        if self.show {
            self.progress.finish();
            eprintln!("{}", render::task_status_line(status.as_str(), message));
        }
    }

    /// Declines every elicitation of a task (the probe asks nobody); any other input request is
    /// refused, which fails the call.
    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let requests: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(requests.get()).ok()?;
        let mut answers = serde_json::Map::new();
        for (key, request) in requests {
            if request.get("method")?.as_str()? != "elicitation/create" {
                return None;
            }
            answers.insert(key, serde_json::json!({"action": "decline"}));
        }
        serde_json::to_vec(&answers).ok()
    }
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
