//! The scenario, written once and driven through each adapter: it records what happened
//! ([`Observed`]) and asserts nothing; [`check`](crate::check::check) does.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mcp_sansio::CallResult;
use mcp_sansio::Catalog;
use mcp_sansio::ServerInfo;
use mcp_sansio::{Era, Error};
use mcp_sansio_net::{AddressPolicy, BuildClient, ClientBuilder};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::Target;

/// The plain calls of the scenario: tool name and JSON arguments.
pub const CALLS: &[(&str, &str)] = &[
    ("echo", r#"{"text":"interop \u2713 echo"}"#),
    ("add", r#"{"a":2,"b":40}"#),
    ("get_text", "{}"),
    ("get_image", "{}"),
    ("get_audio", "{}"),
    ("get_embedded_resource", "{}"),
    ("get_resource_link", "{}"),
    ("get_mixed", "{}"),
    ("fail_tool", "{}"),
    ("protocol_error", "{}"),
    ("raise_exception", "{}"),
    ("noop_08", "{}"),
];

/// The arguments of the `slow` call: three progress steps, 0.3 s apart.
pub const SLOW_ARGS: &str = r#"{"seconds":0.9,"steps":3}"#;

/// One progress notification as the observer saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// Total, if given.
    pub total: Option<f64>,
    /// Message, if given.
    pub message: Option<String>,
}

/// What one observed call produced: its outcome, the progress seen and the input requests
/// answered (per round: request key and method).
#[derive(Debug)]
pub struct ObservedCall {
    /// The outcome.
    pub result: Result<CallResult, Error>,
    /// Progress notifications, in arrival order.
    pub progress: Vec<Progress>,
    /// The input-request rounds answered: `(key, method)` pairs per round.
    pub input_rounds: Vec<Vec<(String, String)>>,
}

/// A second connection with the same client, after the first was closed.
#[derive(Debug)]
pub struct Reconnect {
    /// The era.
    pub era: Era,
    /// The version.
    pub version: String,
    /// The number of tools listed.
    pub tools: usize,
}

/// Everything the scenario observed through one adapter.
#[derive(Debug)]
pub struct Observed {
    /// `tokio` or `blocking`.
    pub adapter: &'static str,
    /// The era negotiated.
    pub era: Era,
    /// The version negotiated.
    pub version: String,
    /// The server's name and version.
    pub server_info: Option<ServerInfo>,
    /// The catalog of all pages.
    pub catalog: Result<Catalog, Error>,
    /// The plain calls of [`CALLS`], by tool name.
    pub calls: BTreeMap<&'static str, Result<CallResult, Error>>,
    /// The `slow` call.
    pub slow: ObservedCall,
    /// The `elicit_name` call, where the target's configuration can answer it.
    pub elicit: Option<ObservedCall>,
    /// The `two_rounds` call, where the server has it.
    pub two_rounds: Option<ObservedCall>,
    /// The `busy_once` call, where the server has it.
    pub busy_once: Option<ObservedCall>,
    /// Closing the first session.
    pub close: Result<(), Error>,
    /// Connecting, listing and closing again with the same client.
    pub reconnect: Result<Reconnect, Error>,
    /// The HTTP version the first session ran on: `HTTP/2` or `HTTP/1.1`.
    pub http_version: &'static str,
}

/// The call observer of the scenario: records progress and answers input requests.
#[derive(Debug, Default)]
pub struct Recorder {
    progress: Vec<Progress>,
    input_rounds: Vec<Vec<(String, String)>>,
}

impl Recorder {
    fn on_progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.progress.push(Progress {
            progress,
            total,
            message: message.map(str::to_owned),
        });
    }

    /// Answers `user_name` with the name Ada, `confirm` with ok and `number` with 7, each an
    /// accepted elicitation; anything else is declined.
    fn on_input(&mut self, requests: &RawValue) -> Option<Vec<u8>> {
        let map: BTreeMap<String, Value> = serde_json::from_str(requests.get()).ok()?;
        let mut round = Vec::new();
        let mut answers = serde_json::Map::new();
        for (key, request) in map {
            let method = request["method"].as_str().unwrap_or_default().to_owned();
            let content = match key.as_str() {
                "user_name" => json!({"name": "Ada"}),
                "confirm" => json!({"ok": true}),
                "number" => json!({"n": 7}),
                _ => return None,
            };
            answers.insert(key.clone(), json!({"action": "accept", "content": content}));
            round.push((key, method));
        }
        self.input_rounds.push(round);
        serde_json::to_vec(&Value::Object(answers)).ok()
    }

    fn finish(self, result: Result<CallResult, Error>) -> ObservedCall {
        ObservedCall {
            result,
            progress: self.progress,
            input_rounds: self.input_rounds,
        }
    }
}

/// One observer trait serves both adapters (`mcp_sansio_net::CallObserver`, re-exported by each).
impl mcp_sansio_tokio::CallObserver for Recorder {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.on_progress(progress, total, message);
    }
    fn input_required(&mut self, requests: &RawValue) -> Option<Vec<u8>> {
        self.on_input(requests)
    }
}

/// The address policy of the tests: strict, except that the loopback servers are allowed.
pub fn policy() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

/// The scenario, once for both adapters: `$client` is the adapter's client and `$($wait)*` is
/// `.await` for the async adapter and nothing for the blocking one.
macro_rules! scenario {
    ($adapter:expr, $target:expr, $url:expr, $client:expr, $($wait:tt)*) => {{
        let target: &Target = $target;
        let client = $client;
        let who = format!("{} via {}", target.label(), $adapter);
        let mut session = client
            .connect(target.config($url))
            $($wait)*
            .unwrap_or_else(|e| panic!("{who}: connect failed: {e} ({})", e.kind()));
        let era = session.era();
        let version = session.version().to_owned();
        let server_info = session.server_info().cloned();
        let http_version = session.http_version();
        let catalog = session.list_tools() $($wait)*;
        let mut calls = BTreeMap::new();
        for (name, args) in CALLS {
            let r = session.call_tool(name, args.as_bytes()) $($wait)*;
            calls.insert(*name, r);
        }
        let mut rec = Recorder::default();
        let r = session.call_tool_with("slow", SLOW_ARGS.as_bytes(), &mut rec) $($wait)*;
        let slow = rec.finish(r);
        let mut elicit = None;
        if crate::check::elicit_expectation(target).is_some() {
            let mut rec = Recorder::default();
            let r = session.call_tool_with("elicit_name", b"{}", &mut rec) $($wait)*;
            elicit = Some(rec.finish(r));
        }
        let mut two_rounds = None;
        if target.has_two_rounds() {
            let mut rec = Recorder::default();
            let r = session.call_tool_with("two_rounds", b"{}", &mut rec) $($wait)*;
            two_rounds = Some(rec.finish(r));
        }
        let mut busy_once = None;
        if target.has_busy_once() {
            let mut rec = Recorder::default();
            let r = session.call_tool_with("busy_once", b"{}", &mut rec) $($wait)*;
            busy_once = Some(rec.finish(r));
        }
        let close = session.close() $($wait)*;
        let reconnect = async_or_not!($($wait)*; {
            let mut again = client.connect(target.config($url)) $($wait)* ?;
            let tools = again.list_tools() $($wait)* ?.tools.len();
            let r = Reconnect { era: again.era(), version: again.version().to_owned(), tools };
            again.close() $($wait)* ?;
            Ok::<Reconnect, Error>(r)
        });
        Observed {
            adapter: $adapter,
            era,
            version,
            server_info,
            catalog,
            calls,
            slow,
            elicit,
            two_rounds,
            busy_once,
            close,
            reconnect,
            http_version,
        }
    }};
}

/// Runs a block that uses `?`: as an awaited async block, or as an immediately called closure.
macro_rules! async_or_not {
    (.await; $body:block) => {
        async { $body }.await
    };
    (; $body:block) => {
        (|| $body)()
    };
}

/// How the client reaches the server.
#[derive(Clone, Copy, Debug)]
pub enum Wire<'a> {
    /// An `http://` URL with the adapter's defaults: HTTP/1.1.
    Plain,
    /// An `http://` URL spoken HTTP/2 with prior knowledge (h2c, no upgrade).
    H2c,
    /// An `https://` URL, trusting the PEM certificates of this file besides the webpki roots;
    /// ALPN (`h2`, then `http/1.1`) decides the HTTP version.
    Tls(&'a Path),
}

/// The adapters the scenario runs through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adapter {
    /// `mcp-sansio-tokio`, on a current-thread runtime.
    Tokio,
    /// `mcp-sansio-blocking`.
    Blocking,
}

impl Adapter {
    /// How [`Observed::adapter`] names a run of this adapter over `wire`.
    pub const fn label(self, wire: Wire<'_>) -> &'static str {
        match (self, wire) {
            (Adapter::Tokio, Wire::Plain) => "tokio",
            (Adapter::Tokio, Wire::H2c) => "tokio over h2c",
            (Adapter::Tokio, Wire::Tls(_)) => "tokio over TLS",
            (Adapter::Blocking, Wire::Plain) => "blocking",
            (Adapter::Blocking, Wire::H2c) => "blocking over h2c",
            (Adapter::Blocking, Wire::Tls(_)) => "blocking over TLS",
        }
    }

    /// Runs the scenario against `url` through this adapter over `wire`.
    ///
    /// # Panics
    ///
    /// When the tokio run takes longer than `limit` (the blocking one is bounded by the core's
    /// time budgets), when the session cannot be opened, or when the CA file of [`Wire::Tls`]
    /// cannot be read.
    pub fn run(self, target: &Target, url: &str, wire: Wire<'_>, limit: Duration) -> Observed {
        match self {
            Adapter::Tokio => {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async {
                    tokio::time::timeout(limit, run_tokio_over(target, url, wire)).await
                })
                .unwrap_or_else(|_| {
                    panic!(
                        "{} via {}: scenario exceeded {limit:?}",
                        target.label(),
                        self.label(wire)
                    )
                })
            }
            Adapter::Blocking => run_blocking_over(target, url, wire),
        }
    }
}

/// The client builder of either adapter, set up for `wire` with the tests' address policy.
fn builder<C: BuildClient>(wire: Wire<'_>) -> ClientBuilder<C> {
    let b = ClientBuilder::<C>::new().policy(policy());
    match wire {
        Wire::Plain => b,
        Wire::H2c => b.h2_prior_knowledge(true),
        Wire::Tls(ca_file) => {
            let roots = mcp_sansio_net::read_ca_certificates(ca_file)
                .unwrap_or_else(|e| panic!("the test CA {}: {e}", ca_file.display()));
            b.add_root_certificates(roots)
        }
    }
}

/// Runs the scenario against the `http` `url` through `mcp-sansio-tokio`, over HTTP/1.1.
pub async fn run_tokio(target: &Target, url: &str) -> Observed {
    run_tokio_over(target, url, Wire::Plain).await
}

/// Runs the scenario against `url` through `mcp-sansio-tokio` over `wire`.
pub async fn run_tokio_over(target: &Target, url: &str, wire: Wire<'_>) -> Observed {
    let client: mcp_sansio_tokio::Client = builder(wire).build();
    scenario!(Adapter::Tokio.label(wire), target, url, &client, .await)
}

/// Runs the scenario against the `http` `url` through `mcp-sansio-blocking`, over HTTP/1.1.
pub fn run_blocking(target: &Target, url: &str) -> Observed {
    run_blocking_over(target, url, Wire::Plain)
}

/// Runs the scenario against `url` through `mcp-sansio-blocking` over `wire`.
pub fn run_blocking_over(target: &Target, url: &str, wire: Wire<'_>) -> Observed {
    let client: mcp_sansio_blocking::Client = builder(wire).build();
    scenario!(Adapter::Blocking.label(wire), target, url, &client,)
}
