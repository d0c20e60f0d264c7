//! Command-line parsing, by clap's derive: the help of every subcommand and the completion
//! scripts are generated from the definitions below.
//!
//! The options of `list` and `call` may stand before the subcommand or after it (`mcp-probe
//! --json list URL` and `mcp-probe list URL --json` are the same); given on both sides they are
//! read in the order written. Every usage error exits with 2.

use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};

/// The usage lines of the top-level help.
const USAGE: &str = "\
mcp-probe [OPTIONS] list <URL>
       mcp-probe [OPTIONS] call <URL> <TOOL> [ARGUMENTS_JSON]  (arguments default to {})
       mcp-probe [OPTIONS] task wait|get|cancel --task-handle <FILE>
       mcp-probe [OPTIONS] task wait|get|cancel <URL> --store <STORE> --task-name <NAME>
       mcp-probe demo                                          (loopback servers, no network)
       mcp-probe completions <SHELL>";

/// What the top-level help says after the options.
const AFTER_HELP: &str = "\
Environment:
  MCP_BEARER_TOKEN   sent as `Authorization: Bearer ...` when set (never taken from argv)
  MCP_CLIENT_SECRET  the client secret of --grant when --client-secret-file is not given
  TRACEPARENT        the parent trace context every request carries in params._meta (W3C)
  TRACESTATE         its trace state, with TRACEPARENT
  BAGGAGE            its baggage (W3C Baggage), with TRACEPARENT; malformed values: a warning

Exit codes:
  0  success (a tool result with is_error true is a success)
  2  usage or configuration error
  3  connection failed (unreachable, refused address, timeout, budget exceeded, bad HTTP)
  4  authentication failed (HTTP 401 or 403)
  5  the server answered and refused (JSON-RPC error, unusable answer, a failed or cancelled task)
  6  task get: the task is still running (working or input_required)
  130  interrupted (Ctrl-C); a task the call created is cancelled first

JSON output (--json):
  list:  {\"protocol_version\", \"http_version\", \"tools\": [{\"name\", \"description\",
          \"input_schema\"}], \"refused\": [{\"index\", \"name\", \"reason\"}]}
  call:  {\"content\": [...], \"is_error\": bool, \"http_version\", \"structured_content\"?,
          \"task\"?: {\"id\", \"polls\", \"status\"}}  (task: when the call became a task)
  task wait: as call; task cancel: the error document of the cancelled task (exit 5)
  task get: {\"http_version\", \"task\": {\"id\", \"polls\", \"status\", \"status_message\",
          \"ttl_ms\", \"poll_interval_ms\"}} (null: none, unlimited, not given), with the
          fields of call when completed, \"error\" when failed
  http_version is \"HTTP/2\" or \"HTTP/1.1\": what the session's exchanges ran on.
  error: {\"error\": {\"type\", \"message\"}}, type one of mcp_connection_failed_error,
         mcp_authentication_failed_error, mcp_server_answered_error.
  Usage and configuration errors (exit 2) are written to stderr as text; with --json they are
  also printed on stdout as an error document of type mcp_connection_failed_error.

`mcp-probe <COMMAND> --help` shows the options of one command.";

/// What `list` and `call` say after their options.
const COMMAND_AFTER_HELP: &str = "\
Environment:
  MCP_BEARER_TOKEN   sent as `Authorization: Bearer ...` when set (never taken from argv)
  MCP_CLIENT_SECRET  the client secret of --grant when --client-secret-file is not given
  TRACEPARENT        the parent trace context every request carries in params._meta (W3C)
  TRACESTATE         its trace state, with TRACEPARENT
  BAGGAGE            its baggage (W3C Baggage), with TRACEPARENT; malformed values: a warning

`mcp-probe --help` lists the exit codes and the JSON documents.";

/// The whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-probe",
    version,
    about = "mcp-probe: list and call the tools of an MCP server (Streamable HTTP, every era)",
    override_usage = USAGE,
    after_help = AFTER_HELP,
    subcommand_required = true,
    arg_required_else_help = false,
    disable_help_subcommand = true,
    args_override_self = true
)]
struct Cli {
    /// The options written before the subcommand.
    #[command(flatten)]
    options: Options,
    /// The subcommand.
    #[command(subcommand)]
    command: Sub,
}

/// The subcommands, as clap reads them.
#[derive(Debug, Subcommand)]
enum Sub {
    /// List the tools of a server, every page
    #[command(after_help = COMMAND_AFTER_HELP, args_override_self = true)]
    List {
        /// The MCP endpoint (http:// or https://)
        url: String,
        /// The options written after the subcommand.
        #[command(flatten)]
        options: Options,
    },
    /// Call one tool of a server
    #[command(after_help = COMMAND_AFTER_HELP, args_override_self = true)]
    Call {
        /// The MCP endpoint (http:// or https://)
        url: String,
        /// The name of the tool
        tool: String,
        /// The arguments, one JSON object, sent byte for byte
        #[arg(value_name = "ARGUMENTS_JSON", default_value = "{}")]
        arguments: String,
        /// The options written after the subcommand.
        #[command(flatten)]
        options: Options,
    },
    /// Follow or cancel a task (SEP-2663) from its handle file
    ///
    /// The handle file is the one `call --task-handle FILE` wrote, in this
    /// or another process (one killed mid-task included).
    #[command(after_help = COMMAND_AFTER_HELP, args_override_self = true)]
    Task {
        /// What to do with the task
        #[command(subcommand)]
        action: TaskAction,
    },
    /// Run the embedded demonstration: loopback servers, no network, no options
    Demo,
    /// Print the completion script of a shell on stdout
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

/// What `mcp-probe task` does with the task of a handle file.
#[derive(Clone, Debug, Subcommand)]
pub enum TaskAction {
    /// Poll the task to its end and print the tool's result as `call` does
    #[command(args_override_self = true)]
    Wait {
        /// With --task-name: the MCP endpoint the task runs on
        url: Option<String>,
        /// The options written after the action.
        #[command(flatten)]
        options: Options,
    },
    /// One tasks/get: print the task's status, statusMessage, ttl and
    /// poll interval, and its result if completed or its error if
    /// failed; a task still running is not waited for (exit 6)
    #[command(verbatim_doc_comment, args_override_self = true)]
    Get {
        /// With --task-name: the MCP endpoint the task runs on
        url: Option<String>,
        /// The options written after the action.
        #[command(flatten)]
        options: Options,
    },
    /// Send tasks/cancel and poll to the task's end: a cancelled task is
    /// an error (exit 5, the message says cancelled); one that completed
    /// first prints its result
    #[command(verbatim_doc_comment, args_override_self = true)]
    Cancel {
        /// With --task-name: the MCP endpoint the task runs on
        url: Option<String>,
        /// The options written after the action.
        #[command(flatten)]
        options: Options,
    },
}

/// What to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// List the tools of a server.
    List {
        /// The endpoint.
        url: String,
    },
    /// Call a tool.
    Call {
        /// The endpoint.
        url: String,
        /// The tool.
        tool: String,
        /// The arguments, a JSON object.
        arguments: String,
    },
    /// Follow, poll once or cancel the task of the `--task-handle` file, or of the handle kept
    /// in the `--store` under `--task-name` for the server at `url`.
    Task {
        /// What to do.
        op: TaskOp,
        /// The endpoint, with `--task-name`.
        url: Option<String>,
    },
    /// Run the embedded demonstration.
    Demo,
    /// Print the completion script of a shell.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// What `mcp-probe task` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskOp {
    /// Poll to the task's end and print its result.
    Wait,
    /// One `tasks/get`: print the task's report.
    Get,
    /// Send `tasks/cancel` and poll to the task's end.
    Cancel,
}

/// The grant of `--grant`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantName {
    /// The authorization code grant with PKCE, through a browser.
    AuthorizationCode,
    /// The client credentials grant: the client on its own behalf.
    ClientCredentials,
    /// The JWT bearer grant with a workload identity token.
    JwtBearer,
    /// Enterprise-managed authorization: token exchange, then the JWT bearer grant.
    Enterprise,
}

/// The options common to `list` and `call`.
#[derive(Args, Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// Print one JSON document on stdout
    #[arg(long)]
    pub json: bool,
    /// Allow loopback addresses (127.0.0.0/8, ::1), refused by default;
    /// private and other non-public ranges are always refused
    #[arg(verbatim_doc_comment, long)]
    pub allow_loopback: bool,
    /// Seconds to open one connection: TCP connect and TLS handshake
    /// (decimals ok; default 30)
    #[arg(verbatim_doc_comment, long, value_name = "S", value_parser = seconds)]
    pub dial_timeout: Option<Duration>,
    /// Seconds for each exchange but a tool call: the handshake
    /// (server/discover, initialize), each tools/list page, the closing
    /// DELETE (default 30)
    #[arg(verbatim_doc_comment, long, value_name = "S", value_parser = seconds)]
    pub request_timeout: Option<Duration>,
    /// Seconds for a whole listing, every page together (default 120)
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub list_timeout: Option<Duration>,
    /// Seconds for a whole tool call, re-sends included (default 120);
    /// the only limit of a tools/call request, however long the tool runs
    #[arg(verbatim_doc_comment, long, value_name = "S", value_parser = seconds)]
    pub call_timeout: Option<Duration>,
    /// Bytes read per connection at most
    #[arg(long, value_name = "N", value_parser = count::<u64>)]
    pub max_response_bytes: Option<u64>,
    /// Bytes of one response header block at most
    #[arg(long, value_name = "N", value_parser = count::<usize>)]
    pub max_header_bytes: Option<usize>,
    /// tools/list pages at most
    #[arg(long, value_name = "N", value_parser = count::<u32>)]
    pub max_pages: Option<u32>,
    /// Write a transcript of the session to FILE (secrets redacted), over
    /// HTTP/1.1 or HTTP/2 alike (an HTTP/2 session on a socket of its
    /// own); with --oauth the authorization goes to FILE.auth
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub record: Option<PathBuf>,
    /// Also trust the PEM certificate(s) in FILE as roots, for a server
    /// behind a private certificate authority (repeatable)
    #[arg(verbatim_doc_comment, long = "ca-cert", value_name = "FILE", value_parser = file)]
    pub ca_certs: Vec<PathBuf>,
    /// When the server asks (401, or 403 insufficient_scope), authorize
    /// with OAuth 2.1: print the authorization URL, receive the redirect
    /// on a 127.0.0.1 port of its own, then list or call
    #[arg(verbatim_doc_comment, long)]
    pub oauth: bool,
    /// With --oauth: keep the credentials in FILE between runs (created
    /// with mode 0600; it holds secrets)
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub token_file: Option<PathBuf>,
    /// With --oauth: the grant, chosen here and never by the server:
    /// authorization-code (default: a person at a browser),
    /// client-credentials, jwt-bearer (a workload token),
    /// enterprise (token exchange at an identity provider)
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "GRANT",
        value_enum,
        hide_possible_values = true
    )]
    pub grant: Option<GrantName>,
    /// With --grant: the client ID at the authorization server
    #[arg(verbatim_doc_comment, long, value_name = "ID")]
    pub client_id: Option<String>,
    /// With --grant: the client secret, read from FILE (else from
    /// MCP_CLIENT_SECRET), sent with HTTP Basic (client_secret_basic)
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub client_secret_file: Option<PathBuf>,
    /// With a client secret: send it in the form body
    /// (client_secret_post) instead of HTTP Basic
    #[arg(verbatim_doc_comment, long)]
    pub client_secret_post: bool,
    /// With --grant: authenticate with a JWT signed by the private key
    /// in FILE (private_key_jwt; PKCS#8 PEM or JWK; ES256, ES384,
    /// RS256)
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub private_key_file: Option<PathBuf>,
    /// With --oauth: bind the tokens to the DPoP key in FILE (RFC 9449;
    /// PKCS#8 PEM or JWK; ES256, ES384, RS256, PS256): every token
    /// request and every MCP request carries a proof signed with it
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub dpop: Option<PathBuf>,
    /// With --grant (required there): present the credentials only to
    /// this authorization server (its issuer identifier). The MCP server
    /// names its authorization server itself, so without this a hostile
    /// server could name its own and receive the secret; one naming
    /// another gets nothing, and stored tokens from another are not renewed
    #[arg(verbatim_doc_comment, long, value_name = "URL")]
    pub issuer: Option<String>,
    /// With --grant jwt-bearer: the workload identity JWT, read from
    /// FILE each time a token is needed (so the platform can renew it)
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub workload_token_file: Option<PathBuf>,
    /// With --grant enterprise: the identity provider's token endpoint
    #[arg(verbatim_doc_comment, long, value_name = "URL")]
    pub idp_token_endpoint: Option<String>,
    /// With --grant enterprise: the client ID at the identity provider
    #[arg(verbatim_doc_comment, long, value_name = "ID")]
    pub idp_client_id: Option<String>,
    /// With --grant enterprise: the user's ID token from the identity
    /// provider, read from FILE each time a token is needed
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub id_token_file: Option<PathBuf>,
    /// Speak HTTP/1.1 only (TLS offers ALPN http/1.1 alone); by default
    /// HTTP/2 is spoken to an https server that chooses it (ALPN h2)
    #[arg(verbatim_doc_comment, long)]
    pub http1: bool,
    /// Speak HTTP/2 with prior knowledge (clear text) to an http:// URL,
    /// for testing
    #[arg(verbatim_doc_comment, long)]
    pub h2c: bool,
    /// Print the session's tracing spans and events on stderr (origin,
    /// era, versions, exchanges, bytes, outcome; never a secret);
    /// RUST_LOG, when set, chooses what is printed instead
    #[arg(verbatim_doc_comment, short, long)]
    pub verbose: bool,
    /// Declare the tasks extension (SEP-2663) on every request: a tool
    /// call the server turns into a task is followed to its end, one
    /// status line per report on stderr; input requests of the task
    /// (elicitations) are declined. Off by default: a server then never
    /// answers with a task
    #[arg(verbatim_doc_comment, long)]
    pub tasks: bool,
    /// With call (implies --tasks): write the task's handle to FILE as
    /// soon as the task exists, replaced as it is updated (mode 0600,
    /// never through a symbolic link), so that `mcp-probe task wait`
    /// resumes it after a crash; with task: the handle to read
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub task_handle: Option<PathBuf>,
    /// What to do with a tool that changed since it was pinned (its
    /// name, description, schemas or annotations): off (default), warn
    /// (a note on stderr) or refuse (exit 5, a call is not sent); with
    /// it, call lists the tools first. Pins last one run unless
    /// --pin-file keeps them
    #[arg(verbatim_doc_comment, long, value_name = "POLICY", value_parser = pin_policy)]
    pub pin_tools: Option<mcp_sansio::PinPolicy>,
    /// With --pin-tools: keep the tool pins in FILE between runs
    /// (created with mode 0600)
    #[arg(verbatim_doc_comment, long, value_name = "FILE", value_parser = file)]
    pub pin_file: Option<PathBuf>,
    /// Share the catalog cache and the era hints through the Redis (or
    /// Valkey) at URL (redis://user:password@host:port/db, all but the
    /// host optional; rediss:// for TLS), as a fleet of executors does: a
    /// listing or an era another run stored is used until it expires, per
    /// server and credential; a store that is down, slow or answering
    /// garbage is a miss. With --oauth, token refreshes go through it too:
    /// one per grant among the runs sharing it (the token file still keeps
    /// this run's tokens)
    #[arg(verbatim_doc_comment, long, value_name = "URL")]
    pub store: Option<String>,
    /// With --store: with call (implies --tasks), also keep the task's
    /// handle in the store under NAME (for the server and credential,
    /// replaced as it is updated, expiring with the task); with task: read
    /// the handle from there (the server's URL after the action) instead of
    /// --task-handle
    #[arg(verbatim_doc_comment, long, value_name = "NAME")]
    pub task_name: Option<String>,
    /// A bearer token on the command line: always refused (MCP_BEARER_TOKEN carries it).
    #[arg(long = "bearer-token", alias = "token", hide = true, num_args = 0..=1)]
    pub bearer_token: Option<Option<String>>,
}

impl Options {
    /// These options, then `later` (written after them): a flag given on either side is set, a
    /// value given later replaces an earlier one, certificates add up in order.
    fn then(mut self, later: Options) -> Options {
        self.json |= later.json;
        self.allow_loopback |= later.allow_loopback;
        self.oauth |= later.oauth;
        self.http1 |= later.http1;
        self.h2c |= later.h2c;
        self.verbose |= later.verbose;
        self.tasks |= later.tasks;
        self.task_handle = later.task_handle.or(self.task_handle);
        self.store = later.store.or(self.store);
        self.task_name = later.task_name.or(self.task_name);
        self.dial_timeout = later.dial_timeout.or(self.dial_timeout);
        self.request_timeout = later.request_timeout.or(self.request_timeout);
        self.list_timeout = later.list_timeout.or(self.list_timeout);
        self.call_timeout = later.call_timeout.or(self.call_timeout);
        self.max_response_bytes = later.max_response_bytes.or(self.max_response_bytes);
        self.max_header_bytes = later.max_header_bytes.or(self.max_header_bytes);
        self.max_pages = later.max_pages.or(self.max_pages);
        self.record = later.record.or(self.record);
        self.token_file = later.token_file.or(self.token_file);
        self.grant = later.grant.or(self.grant);
        self.client_id = later.client_id.or(self.client_id);
        self.issuer = later.issuer.or(self.issuer);
        self.client_secret_file = later.client_secret_file.or(self.client_secret_file);
        self.client_secret_post |= later.client_secret_post;
        self.private_key_file = later.private_key_file.or(self.private_key_file);
        self.dpop = later.dpop.or(self.dpop);
        self.workload_token_file = later.workload_token_file.or(self.workload_token_file);
        self.idp_token_endpoint = later.idp_token_endpoint.or(self.idp_token_endpoint);
        self.idp_client_id = later.idp_client_id.or(self.idp_client_id);
        self.id_token_file = later.id_token_file.or(self.id_token_file);
        self.pin_tools = later.pin_tools.or(self.pin_tools);
        self.pin_file = later.pin_file.or(self.pin_file);
        self.ca_certs.extend(later.ca_certs);
        self.bearer_token = later.bearer_token.or(self.bearer_token);
        self
    }
}

fn seconds(v: &str) -> Result<Duration, String> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err("expects a number of seconds above 0 and at most 86400".into()),
    }
}

fn count<T: std::str::FromStr + PartialOrd + Default>(v: &str) -> Result<T, String> {
    match v.parse::<T>() {
        Ok(n) if n > T::default() => Ok(n),
        _ => Err("expects a positive integer".into()),
    }
}

fn pin_policy(v: &str) -> Result<mcp_sansio::PinPolicy, String> {
    mcp_sansio::PinPolicy::from_name(v).ok_or_else(|| "expects off, warn or refuse".into())
}

fn file(v: &str) -> Result<PathBuf, String> {
    if v.is_empty() {
        return Err("expects a file name".into());
    }
    Ok(v.into())
}

/// The clap definition of the command line (for the help and the completion scripts).
pub fn command() -> clap::Command {
    Cli::command()
}

/// A usage error found after clap read the arguments.
fn usage(message: &str) -> clap::Error {
    Cli::command().error(ErrorKind::ArgumentConflict, message)
}

/// Parses the arguments after the program name. The error is clap's: a request for the help
/// or the version (exit 0), or a usage error (exit 2).
pub fn parse(args: &[String]) -> Result<(Options, Command), clap::Error> {
    let cli =
        Cli::try_parse_from(std::iter::once("mcp-probe".to_owned()).chain(args.iter().cloned()))?;
    let before = cli.options;
    let (o, command) = match cli.command {
        Sub::List { url, options } => (before.then(options), Command::List { url }),
        Sub::Call {
            url,
            tool,
            arguments,
            options,
        } => (
            before.then(options),
            Command::Call {
                url,
                tool,
                arguments,
            },
        ),
        Sub::Task { action } => match action {
            TaskAction::Wait { url, options } => (
                before.then(options),
                Command::Task {
                    op: TaskOp::Wait,
                    url,
                },
            ),
            TaskAction::Get { url, options } => (
                before.then(options),
                Command::Task {
                    op: TaskOp::Get,
                    url,
                },
            ),
            TaskAction::Cancel { url, options } => (
                before.then(options),
                Command::Task {
                    op: TaskOp::Cancel,
                    url,
                },
            ),
        },
        Sub::Demo => (before, Command::Demo),
        Sub::Completions { shell } => (before, Command::Completions { shell }),
    };
    if o.bearer_token.is_some() {
        return Err(usage(
            "the bearer token is read from MCP_BEARER_TOKEN, never from the command line",
        ));
    }
    match &command {
        Command::Demo if o != Options::default() => return Err(usage("demo takes no options")),
        Command::Completions { .. } if o != Options::default() => {
            return Err(usage("completions takes no options"))
        }
        _ => {}
    }
    if o.http1 && o.h2c {
        return Err(usage("--http1 and --h2c exclude each other"));
    }
    if o.h2c {
        if let Command::List { url } | Command::Call { url, .. } = &command {
            if !url.starts_with("http://") {
                return Err(usage(
                    "--h2c speaks clear-text HTTP/2 to an http:// URL only",
                ));
            }
        }
    }
    if o.task_name.is_some() && o.store.is_none() {
        return Err(usage("--task-name needs --store"));
    }
    if let Command::Task { url, .. } = &command {
        match (&o.task_handle, &o.task_name, url) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => {}
            (Some(_), _, _) => {
                return Err(usage(
                    "task reads --task-handle FILE, or --task-name NAME with the server's URL, not both",
                ))
            }
            (None, Some(_), None) => {
                return Err(usage("task --task-name NAME needs the server's URL"))
            }
            (None, None, _) => {
                return Err(usage(
                    "task needs --task-handle FILE, or --store, --task-name NAME and the server's URL",
                ))
            }
        }
    }
    if o.task_handle.is_some() && matches!(command, Command::List { .. }) {
        return Err(usage("--task-handle goes with call or task"));
    }
    if o.task_name.is_some() && matches!(command, Command::List { .. }) {
        return Err(usage("--task-name goes with call or task"));
    }
    if o.token_file.is_some() && !o.oauth {
        return Err(usage("--token-file needs --oauth"));
    }
    if o.dpop.is_some() && !o.oauth {
        return Err(usage("--dpop needs --oauth"));
    }
    check_grant(&o)?;
    Ok((o, command))
}

/// The options of `--grant` hang together: each grant has what it needs and nothing it would
/// ignore.
fn check_grant(o: &Options) -> Result<(), clap::Error> {
    let grant = o.grant.unwrap_or(GrantName::AuthorizationCode);
    if o.grant.is_some() && !o.oauth {
        return Err(usage("--grant needs --oauth"));
    }
    let credentials = o.client_id.is_some()
        || o.issuer.is_some()
        || o.client_secret_file.is_some()
        || o.client_secret_post
        || o.private_key_file.is_some();
    let enterprise =
        o.idp_token_endpoint.is_some() || o.idp_client_id.is_some() || o.id_token_file.is_some();
    match grant {
        GrantName::AuthorizationCode => {
            if credentials || enterprise || o.workload_token_file.is_some() {
                return Err(usage(
                    "client credentials, workload and identity provider options need --grant",
                ));
            }
        }
        GrantName::ClientCredentials | GrantName::JwtBearer | GrantName::Enterprise => {
            if o.client_id.is_none() {
                return Err(usage("--grant needs --client-id"));
            }
            if o.issuer.is_none() {
                return Err(usage(
                    "--grant needs --issuer, the authorization server the credentials may go to \
                     (the MCP server names its own, and a hostile one would receive them)",
                ));
            }
            if let Some(issuer) = &o.issuer {
                let policy = mcp_sansio::auth::UrlPolicy {
                    allow_loopback_http: o.allow_loopback,
                };
                if let Err(e) = mcp_sansio::auth::check_issuer(policy, issuer) {
                    return Err(usage(&format!("--issuer: {e}")));
                }
            }
            if o.client_secret_file.is_some() && o.private_key_file.is_some() {
                return Err(usage(
                    "--client-secret-file and --private-key-file exclude each other",
                ));
            }
            if o.client_secret_post && o.private_key_file.is_some() {
                return Err(usage("--client-secret-post goes with a client secret"));
            }
            if (grant == GrantName::JwtBearer) != o.workload_token_file.is_some() {
                return Err(usage(
                    "--workload-token-file goes with --grant jwt-bearer, and it needs one",
                ));
            }
            let complete = o.idp_token_endpoint.is_some()
                && o.idp_client_id.is_some()
                && o.id_token_file.is_some();
            if grant == GrantName::Enterprise && !complete {
                return Err(usage(
                    "--grant enterprise needs --idp-token-endpoint, --idp-client-id and --id-token-file",
                ));
            }
            if grant != GrantName::Enterprise && enterprise {
                return Err(usage(
                    "the identity provider options go with --grant enterprise",
                ));
            }
        }
    }
    Ok(())
}

/// The message of a usage error on one line, without clap's `error: ` prefix, usage and hint.
pub fn message(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered.split("\n\n").next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<(Options, Command), clap::Error> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn options_and_commands_parse() {
        let (o, c) = p(&[
            "--json",
            "--list-timeout",
            "1.5",
            "--request-timeout=2",
            "--ca-cert",
            "a.pem",
            "--ca-cert=b.pem",
            "list",
            "http://h/mcp",
        ])
        .unwrap();
        assert!(o.json);
        assert_eq!(o.list_timeout, Some(Duration::from_millis(1500)));
        assert_eq!(o.request_timeout, Some(Duration::from_secs(2)));
        assert_eq!(o.ca_certs, [PathBuf::from("a.pem"), PathBuf::from("b.pem")]);
        assert_eq!(
            c,
            Command::List {
                url: "http://h/mcp".into()
            }
        );
        let (o, c) = p(&[
            "call",
            "http://h/mcp",
            "echo",
            "--max-pages=3",
            r#"{"a":1}"#,
        ])
        .unwrap();
        assert_eq!(o.max_pages, Some(3));
        assert_eq!(
            c,
            Command::Call {
                url: "http://h/mcp".into(),
                tool: "echo".into(),
                arguments: r#"{"a":1}"#.into()
            }
        );
        assert!(
            matches!(p(&["call", "u", "t"]).unwrap().1, Command::Call { arguments, .. } if arguments == "{}")
        );
        assert_eq!(p(&["--help"]).unwrap_err().kind(), ErrorKind::DisplayHelp);
        assert_eq!(p(&["-V"]).unwrap_err().kind(), ErrorKind::DisplayVersion);
        let (o, _) = p(&["--oauth", "--token-file", "t.json", "list", "u"]).unwrap();
        assert!(o.oauth);
        assert_eq!(o.token_file, Some(PathBuf::from("t.json")));
        assert_eq!(
            p(&["completions", "bash"]).unwrap().1,
            Command::Completions {
                shell: clap_complete::Shell::Bash
            }
        );
    }

    #[test]
    fn each_grant_takes_its_options_and_refuses_the_others() {
        let (o, _) = p(&[
            "--oauth",
            "--grant",
            "client-credentials",
            "--client-id",
            "c",
            "--client-secret-file",
            "s",
            "--issuer",
            "https://as.example",
            "list",
            "u",
        ])
        .unwrap();
        assert_eq!(o.grant, Some(GrantName::ClientCredentials));
        assert_eq!(o.issuer.as_deref(), Some("https://as.example"));
        assert_eq!(o.client_secret_file, Some(PathBuf::from("s")));
        for bad in [
            &[
                "--grant",
                "client-credentials",
                "--client-id",
                "c",
                "list",
                "u",
            ][..],
            &["--oauth", "--grant", "client-credentials", "list", "u"],
            &["--oauth", "--client-id", "c", "list", "u"],
            &[
                "--oauth",
                "--grant",
                "jwt-bearer",
                "--client-id",
                "c",
                "list",
                "u",
            ],
            &[
                "--oauth",
                "--grant",
                "enterprise",
                "--client-id",
                "c",
                "list",
                "u",
            ],
            &[
                "--oauth",
                "--grant",
                "client-credentials",
                "--client-id",
                "c",
                "--client-secret-file",
                "s",
                "--private-key-file",
                "k",
                "list",
                "u",
            ],
            &[
                "--oauth",
                "--grant",
                "client-credentials",
                "--client-id",
                "c",
                "--client-secret",
                "x",
                "list",
                "u",
            ],
            // An issuer that is not an https URL (plain http only to loopback, with
            // --allow-loopback) is refused before anything is sent.
            &[
                "--oauth",
                "--grant",
                "client-credentials",
                "--client-id",
                "c",
                "--issuer",
                "as.example",
                "list",
                "u",
            ],
            &[
                "--oauth",
                "--grant",
                "client-credentials",
                "--client-id",
                "c",
                "--issuer",
                "http://127.0.0.1:9",
                "list",
                "u",
            ],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
        let (o, _) = p(&[
            "--oauth",
            "--grant",
            "enterprise",
            "--client-id",
            "c",
            "--client-secret-file",
            "s",
            "--idp-token-endpoint",
            "https://idp/token",
            "--idp-client-id",
            "i",
            "--id-token-file",
            "t",
            "--issuer",
            "https://as.example",
            "list",
            "u",
        ])
        .unwrap();
        assert_eq!(o.grant, Some(GrantName::Enterprise));
    }

    #[test]
    fn task_options_and_actions_parse() {
        let (o, c) = p(&["--tasks", "call", "u", "t"]).unwrap();
        assert!(o.tasks && o.task_handle.is_none());
        assert!(matches!(c, Command::Call { .. }));
        let (o, _) = p(&["call", "u", "t", "--task-handle", "h"]).unwrap();
        assert_eq!(o.task_handle, Some(PathBuf::from("h")));
        let (o, c) = p(&["--allow-loopback", "task", "wait", "--task-handle", "h"]).unwrap();
        assert_eq!(
            c,
            Command::Task {
                op: TaskOp::Wait,
                url: None
            }
        );
        assert!(o.allow_loopback);
        assert_eq!(o.task_handle, Some(PathBuf::from("h")));
        let (_, c) = p(&["task", "cancel", "--task-handle=h", "--json"]).unwrap();
        assert_eq!(
            c,
            Command::Task {
                op: TaskOp::Cancel,
                url: None
            }
        );
        let (_, c) = p(&["task", "get", "--task-handle=h"]).unwrap();
        assert_eq!(
            c,
            Command::Task {
                op: TaskOp::Get,
                url: None
            }
        );
        // The credential options of call go with task too.
        let (o, _) = p(&[
            "task",
            "wait",
            "--task-handle",
            "h",
            "--oauth",
            "--token-file",
            "t.json",
        ])
        .unwrap();
        assert!(o.oauth && o.token_file.is_some());
    }

    /// `--task-name` goes with `--store`; `task` reads the handle file or the store's entry
    /// (with the server's URL), never both or neither.
    #[test]
    fn task_name_goes_with_the_store_and_a_url() {
        let (o, c) = p(&[
            "task",
            "wait",
            "u",
            "--store",
            "redis://r",
            "--task-name",
            "n",
        ])
        .unwrap();
        assert_eq!(o.task_name.as_deref(), Some("n"));
        assert_eq!(
            c,
            Command::Task {
                op: TaskOp::Wait,
                url: Some("u".into())
            }
        );
        let (o, _) = p(&["call", "u", "t", "--store", "redis://r", "--task-name", "n"]).unwrap();
        assert_eq!(o.task_name.as_deref(), Some("n"));
        for bad in [
            &["call", "u", "t", "--task-name", "n"][..],
            &["task", "wait", "u", "--task-name", "n"],
            &["task", "wait", "--store", "redis://r", "--task-name", "n"],
            &["task", "wait", "u", "--store", "redis://r"],
            &["task", "cancel", "u", "--task-handle", "h"],
            &[
                "task",
                "wait",
                "u",
                "--store",
                "r",
                "--task-name",
                "n",
                "--task-handle",
                "h",
            ],
            &["list", "u", "--store", "redis://r", "--task-name", "n"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn verbose_is_read_on_either_side_short_or_long() {
        assert!(!p(&["list", "u"]).unwrap().0.verbose);
        assert!(p(&["-v", "list", "u"]).unwrap().0.verbose);
        assert!(p(&["list", "u", "--verbose"]).unwrap().0.verbose);
        assert!(p(&["call", "u", "t", "-v"]).unwrap().0.verbose);
    }

    #[test]
    fn options_on_both_sides_are_read_in_order() {
        let (o, _) = p(&[
            "--ca-cert",
            "a.pem",
            "--max-pages",
            "2",
            "--oauth",
            "list",
            "u",
            "--ca-cert",
            "b.pem",
            "--max-pages",
            "5",
            "--json",
        ])
        .unwrap();
        assert_eq!(o.ca_certs, [PathBuf::from("a.pem"), PathBuf::from("b.pem")]);
        assert_eq!(o.max_pages, Some(5));
        assert!(o.oauth && o.json);
        // Given twice on one side, the last value stands.
        let (o, _) = p(&[
            "--max-pages",
            "2",
            "--max-pages",
            "7",
            "--json",
            "--json",
            "list",
            "u",
        ])
        .unwrap();
        assert_eq!(o.max_pages, Some(7));
    }

    #[test]
    fn http_version_switches() {
        let (o, _) = p(&["--http1", "list", "https://x/mcp"]).unwrap();
        assert!(o.http1 && !o.h2c);
        let (o, _) = p(&["--h2c", "call", "http://x/mcp", "t"]).unwrap();
        assert!(o.h2c && !o.http1);
        for bad in [
            &["--http1", "--h2c", "list", "http://x/mcp"][..],
            &["--http1", "list", "http://x/mcp", "--h2c"],
            &["--h2c", "list", "https://x/mcp"],
            &["--http1=yes", "list", "https://x/mcp"],
            &["--h2c", "demo"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_usage_is_an_error() {
        for bad in [
            &["list"][..],
            &["list", "a", "b"],
            &["call", "u"],
            &["call", "u", "t", "{}", "extra"],
            &["frobnicate"],
            &["--dial-timeout", "-1", "list", "u"],
            &["--dial-timeout", "nan", "list", "u"],
            &["--max-pages", "0", "list", "u"],
            &["--max-pages"],
            &["--request-timeout", "0", "list", "u"],
            &["--ca-cert", "", "list", "u"],
            &["--ca-cert"],
            &["--nope", "list", "u"],
            &["--token", "x", "list", "u"],
            &["list", "u", "--bearer-token"],
            &["--json=1", "list", "u"],
            &["--json", "demo"],
            &["demo", "x"],
            &["--json", "completions", "bash"],
            &["completions", "tcsh"],
            &["--token-file", "t.json", "list", "u"],
            &["--oauth", "--token-file", "", "list", "u"],
            &["--oauth=1", "list", "u"],
            &["task", "wait"],
            &["task", "--task-handle", "h"],
            &["task", "peek", "--task-handle", "h"],
            &["task", "get"],
            &[
                "task",
                "wait",
                "--task-handle",
                "h",
                "--token-file",
                "t.json",
            ],
            &["--task-handle", "h", "list", "u"],
            &["--task-handle", "h", "demo"],
            &[],
        ] {
            let e = p(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
            assert!(!message(&e).is_empty(), "{bad:?}");
        }
        let e = p(&["--token", "x", "list", "u"]).unwrap_err();
        assert!(message(&e).contains("MCP_BEARER_TOKEN"), "{}", message(&e));
    }
}
