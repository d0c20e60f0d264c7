//! Live interop tests of the mcp-sansio adapters against real MCP servers.
//!
//! Each test starts one server configuration ([`Target`]) on a free 127.0.0.1 port, drives one
//! scenario through each of its adapters ([`Adapter::run`]) over HTTP/1.1, h2c or TLS
//! ([`Wire`]), stops the server, and checks what was observed against the facts that server is
//! known to answer ([`check()`]):
//!
//! 1. connect in the era the target forces (the other era's version list is emptied);
//! 2. list every page of `tools/list`;
//! 3. call every content type (text, image, audio, embedded resource, resource link, mixed),
//!    `echo` and `add` (structured content), an `isError` tool, the two failing tools;
//! 4. call `slow` and record its progress notifications;
//! 5. call `elicit_name` (and `two_rounds` where the server has it), answering the
//!    multi-round-trip input requests in the modern era;
//! 6. call `busy_once` (load shedding: a first answer with only a request state) where served;
//! 7. close, then connect again with the same client (the era learnt is offered as a hint).
//!
//! The task-capable peer (`fastmcp-tasks`) runs a scenario of its own instead ([`tasks`],
//! `tests/tasks.rs`), as does the TypeScript SDK v1 with its 2025-11-25 task tools.
//!
//! The servers are installed by `checks/interop/install.sh`; `scripts/interop.sh` runs everything.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod scenario;
pub mod server;
pub mod tasks;

use std::time::Duration;

use mcp_sansio::{Config, Era};

pub use check::check;
pub use scenario::{
    run_blocking, run_blocking_over, run_tokio, run_tokio_over, Adapter, Observed, Wire,
};
pub use server::Server;

/// One of the servers the tests run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// TypeScript SDK v1, `@modelcontextprotocol/sdk` 1.32.2: 2025 era only.
    TsV1,
    /// TypeScript SDK v2, `@modelcontextprotocol/server` 2.4.0 + `@modelcontextprotocol/node`
    /// 2.1.2: 2026-07-28 and the 2025 fallback on one URL.
    TsV2,
    /// Python SDK `mcp` 2.3.0 (`MCPServer`): both eras on one URL.
    PyMcp,
    /// `fastmcp` 4.1.7 (on `mcp` 2.3.0): both eras on one URL.
    FastMcp,
    /// `fastmcp` 4.1.4 with `fastmcp-tasks` 4.1.4 (the SEP-2663 tasks extension on pydocket's
    /// in-memory backend): task tools, both eras on one URL. It runs the task scenario
    /// ([`tasks`]), not the common one.
    FastMcpTasks,
}

impl Peer {
    /// The name `checks/interop/run-server.sh` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Peer::TsV1 => "ts-v1",
            Peer::TsV2 => "ts-v2",
            Peer::PyMcp => "py-mcp",
            Peer::FastMcp => "fastmcp",
            Peer::FastMcpTasks => "fastmcp-tasks",
        }
    }

    /// The `serverInfo.name` the server reports.
    pub const fn server_name(self) -> &'static str {
        match self {
            Peer::TsV1 => "peer-ts-v1",
            Peer::TsV2 => "peer-ts-v2",
            Peer::PyMcp => "peer-py-mcp",
            Peer::FastMcp => "peer-fastmcp",
            Peer::FastMcpTasks => "peer-fastmcp-tasks",
        }
    }

    /// The text of the resource `test://static/readme.txt`, as embedded by `get_embedded_resource`
    /// (empty for the tasks peer, which has no resources).
    pub const fn readme_text(self) -> &'static str {
        match self {
            Peer::FastMcpTasks => "",
            Peer::TsV1 => "Hello from the TS v1 peer.",
            Peer::TsV2 => "Hello from the TS v2 peer.",
            Peer::PyMcp => "Hello from the Python mcp peer.",
            Peer::FastMcp => "Hello from the FastMCP peer.",
        }
    }
}

/// How the server sends the answer of a tool call that emits notifications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// `text/event-stream`: progress notifications come before the result.
    Sse,
    /// `application/json`: only the result; notifications are dropped by the server.
    Json,
}

/// One server configuration and the era forced on it.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The server.
    pub peer: Peer,
    /// Its command-line arguments (see `checks/interop/run-server.sh`).
    pub args: &'static [&'static str],
    /// The era the client is configured to speak.
    pub era: Era,
    /// How tool-call answers with notifications arrive in this configuration.
    pub stream: Stream,
    /// Whether the server keeps legacy sessions (`Mcp-Session-Id`) in this configuration.
    pub stateful: bool,
    /// Whether both eras are offered and `era` is what negotiation must find (else the other
    /// era's version list is emptied, forcing `era`).
    pub negotiated: bool,
    /// The only legacy version offered, when not [`LEGACY`] (older revisions).
    pub legacy_version: Option<&'static str>,
}

/// The protocol version negotiated in each era.
pub const MODERN: &str = mcp_sansio::MODERN_VERSION;
/// The legacy version negotiated (the newest both sides speak).
pub const LEGACY: &str = mcp_sansio::LEGACY_VERSIONS[0];
/// The page size every server is started with.
pub const PAGE_SIZE: usize = 5;
/// The per-call time budget in the tests: a call that hangs fails in bounded time.
pub const CALL_TIME: Duration = Duration::from_secs(30);

impl Target {
    /// A readable name: server, arguments and era.
    pub fn label(&self) -> String {
        let era = self.era.as_str();
        let mut parts = vec![self.peer.name()];
        parts.extend(self.args.iter().copied());
        let how = if self.negotiated { ", negotiated" } else { "" };
        let version = self
            .legacy_version
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        format!("{} [{era}{version}{how}]", parts.join(" "))
    }

    /// Starts this target's server.
    pub fn start(&self) -> Server {
        Server::start(self.peer, self.args)
    }

    /// The client configuration for this target against `url`: both eras offered when
    /// negotiated, else only the target's era.
    pub fn config(&self, url: &str) -> Config {
        let mut c = Config::new(url).unwrap_or_else(|e| panic!("config for {url}: {e}"));
        if !self.negotiated {
            match self.era {
                Era::Modern => c.legacy_versions.clear(),
                Era::Legacy => c.modern_versions.clear(),
            }
        }
        // Modern input requests are answered through the call observer (the legacy handshake
        // declares no capabilities whatever this says).
        c.client_capabilities = r#"{"elicitation":{}}"#.to_owned();
        c.input_hook = true;
        if let Some(v) = self.legacy_version {
            c.legacy_versions = vec![v.to_owned()];
        }
        c.budgets.call_time = CALL_TIME;
        c.budgets.request_time = CALL_TIME;
        c
    }

    /// The version the connection must negotiate.
    pub fn version(&self) -> &'static str {
        match self.era {
            Era::Modern => MODERN,
            Era::Legacy => self.legacy_version.unwrap_or(LEGACY),
        }
    }

    /// The tool names the server lists, in any order.
    pub fn tool_names(&self) -> Vec<String> {
        if self.peer == Peer::FastMcpTasks {
            return tasks::FASTMCP_TASKS_TOOLS
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
        }
        let mut names: Vec<String> = [
            "echo",
            "add",
            "get_text",
            "get_image",
            "get_audio",
            "get_embedded_resource",
            "get_resource_link",
            "get_mixed",
            "fail_tool",
            "raise_exception",
            "protocol_error",
            "slow",
            "elicit_name",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        names.extend((1..=8).map(|i| format!("noop_{i:02}")));
        match self.peer {
            Peer::TsV1 => names.push("sample_llm".into()),
            Peer::TsV2 => names.extend(["two_rounds".into(), "busy_once".into()]),
            Peer::PyMcp | Peer::FastMcp => {
                names.extend(["busy_once".into(), "trace_meta".into()]);
            }
            Peer::FastMcpTasks => {}
        }
        names
    }

    /// Whether `protocol_error` answers a JSON-RPC error (else an `isError` result).
    pub fn protocol_error_is_rpc(&self) -> bool {
        matches!(self.peer, Peer::TsV1 | Peer::PyMcp)
    }

    /// Whether `raise_exception` answers a JSON-RPC error (else an `isError` result).
    pub fn exception_is_rpc(&self) -> bool {
        self.peer == Peer::TsV1
    }

    /// Whether the server has the two-round input-required tool in this era.
    pub fn has_two_rounds(&self) -> bool {
        self.peer == Peer::TsV2 && self.era == Era::Modern
    }

    /// Whether the server has the load-shedding tool in this era (it is modern only).
    pub fn has_busy_once(&self) -> bool {
        self.peer != Peer::TsV1 && self.era == Era::Modern
    }
}
