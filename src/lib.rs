//! mcp-sansio: a sans-IO MCP (Model Context Protocol) client core for the Streamable HTTP
//! transport, built for servers that are hostile until their answers are checked.
//!
//! Connect, list the tools, call one, close: the [`Connection`] says what to send and is told
//! what came back. Here a canned server stands in for the network; an adapter
//! (`mcp-sansio-tokio`, `mcp-sansio-blocking`) does the same with sockets and a clock.
//!
//! ```
//! use mcp_sansio::socket::Http1Socket;
//! use mcp_sansio::{Config, Connection, Event, Instant};
//!
//! // A server of the 2026-07-28 revision: answers each JSON-RPC request by its method.
//! fn server(request: &[u8]) -> Vec<u8> {
//!     let start = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
//!     let request: serde_json::Value = serde_json::from_slice(&request[start..]).unwrap();
//!     let result = match request["method"].as_str().unwrap() {
//!         "server/discover" => r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#,
//!         "tools/list" => r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#,
//!         "tools/call" => r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
//!         other => panic!("unexpected {other}"),
//!     };
//!     let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, request["id"]);
//!     format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len())
//!         .into_bytes()
//! }
//!
//! // The run loop: send what the connection asks, feed back what arrives (in any split),
//! // collect its events, until it has nothing more to send.
//! fn run(conn: &mut Connection, socket: &mut Http1Socket, now: Instant) -> Vec<Event> {
//!     let mut events = Vec::new();
//!     loop {
//!         let mut sent = false;
//!         while let Some(t) = conn.poll_transmit() {
//!             // An adapter writes the request's HTTP/1.1 bytes on a socket for `t.exchange`
//!             // and reads the answer.
//!             let request = Http1Socket::encode(&t).unwrap();
//!             for piece in server(&request).chunks(5) {
//!                 socket.handle_bytes(conn, now, t.exchange, piece);
//!             }
//!             sent = true;
//!         }
//!         events.extend(core::iter::from_fn(|| conn.poll_event()));
//!         if !sent {
//!             // Idle: an adapter now waits for bytes or until `conn.poll_timeout()`.
//!             return events;
//!         }
//!     }
//! }
//!
//! let mut conn = Connection::new(Config::new("http://127.0.0.1:8080/mcp")?)?;
//! let mut socket = Http1Socket::new();
//! let now = Instant::ZERO; // an adapter reads its monotonic clock here
//!
//! conn.connect(now);
//! let connected = run(&mut conn, &mut socket, now).into_iter().find_map(|e| match e {
//!     Event::Connected { version, .. } => Some(version),
//!     Event::Failed { error, .. } => panic!("{error} ({})", error.kind()),
//!     _ => None, // ExchangeFinished / ExchangeAbandoned: pool or close the socket
//! });
//! assert_eq!(connected.as_deref(), Some("2026-07-28"));
//!
//! conn.list_tools(now);
//! let catalog = run(&mut conn, &mut socket, now).into_iter().find_map(|e| match e {
//!     Event::ToolsListed(catalog) => Some(catalog),
//!     _ => None,
//! });
//! assert_eq!(catalog.unwrap().tools[0].name(), "echo");
//!
//! conn.call_tool(now, "echo", br#"{"text":"hi"}"#);
//! let result = run(&mut conn, &mut socket, now).into_iter().find_map(|e| match e {
//!     Event::CallFinished(result) => Some(result),
//!     _ => None,
//! });
//! assert!(!result.unwrap().is_error);
//!
//! conn.close(now);
//! assert!(run(&mut conn, &mut socket, now).iter().any(|e| matches!(e, Event::Closed)));
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
//!
//! The core is **deterministic**: it reads no clock, opens no socket, spawns no thread and draws
//! no random number. Time is an argument ([`Instant`], on a timeline the caller defines), requests
//! come out as bytes ([`Transmit`]), and response bytes go in, in any split. The same inputs at
//! the same instants give the same outputs, byte for byte, and every budget ([`Budgets`]: bytes,
//! header bytes, pages, responses per request, time) is enforced here, in one place.
//!
//! # The run loop
//!
//! Start an operation, then drain the outputs until they are empty, then feed what the network
//! and the clock bring; after every input, drain again, as `run` does above. An adapter does
//! exactly this with real sockets: a [`Transmit`] with `fresh_socket` set goes on a new socket,
//! the end of a response is [`Connection::handle_eof`], a failed socket
//! [`Connection::handle_transport_error`], and [`Connection::poll_timeout`] says when to call
//! [`Connection::handle_timeout`].
//!
//! # What is public
//!
//! Everything a caller of the state machine names is re-exported here, at the root.
//!
//! - The state machine: [`Connection`], driven with [`Instant`]s and fed the bytes of each
//!   [`Transmit`] (one per [`ExchangeId`]); it reports [`Event`]s and tracks [`Operation`]s.
//! - Its configuration: [`Config`] with its [`Budgets`], [`ClientInfo`], [`EraHint`] (an [`Era`]
//!   and a version among [`MODERN_VERSION`] and [`LEGACY_VERSIONS`]), [`ToolNameRule`] and the
//!   parsed [`Endpoint`] ([`Scheme`], and [`parse_ipv4_host`], the one IPv4 reading the adapters'
//!   address policy must share with it).
//! - Results: a [`Catalog`] of [`Tool`]s (with their [`HeaderParam`]s of a [`ParamKind`]) and
//!   [`RefusedTool`]s; a [`CallResult`] of [`ContentBlock`]s and [`ResourceContents`]; the
//!   [`ServerInfo`] a server reported.
//! - Failures: [`Error`] and its [`ErrorKind`]; the causes it carries ([`BudgetExceeded`] naming a
//!   [`Budget`], [`ConfigError`], [`EndpointError`], [`ProtocolError`], [`RpcError`],
//!   [`Http1Error`], [`RequestError`], [`SseError`], [`TransportError`] of a
//!   [`TransportErrorKind`]), and the [`ByteLedger`] every byte budget is charged to.
//! - [`header_params`]: the `x-mcp-header` parameters of an `inputSchema`, as a listing reads them.
//! - [`auth`]: OAuth 2.1 authorization (discovery, registration, tokens), sans-IO, driven like
//!   the connection: requests out, responses in, time and randomness passed in.
//!
//!
//! Three lower layers are public too, for adapters that run the exchanges themselves (as
//! `mcp-sansio-net` does), in the way a TLS library documents its unbuffered API:
//!
//! - [`wire`]: the wire-neutral exchange boundary between the state machine and the sockets
//!   (a [`wire::Request`] down, [`wire::ResponseEvent`]s up, each with its raw cost).
//! - [`http1`]: the HTTP/1.1 codec below it: the request encoder and the incremental response
//!   decoder.
//! - [`h2`]: HTTP/2, sans-IO: HPACK, the frame codec and the client connection.
//! - [`socket`]: [`socket::Http1Socket`], above both the state machine and the HTTP/1.1 codec,
//!   encodes a connection's requests and decodes each exchange's bytes into response events.
//! - [`mux`]: [`mux::H2Socket`], above both the state machine and the HTTP/2 codec, runs the
//!   exchanges of several connections as the streams of one HTTP/2 socket.
//!
//! The rest (the `text/event-stream` decoder, JSON-RPC classification, the tool-name rule, the
//! bounds the fuzz targets check) is private. The repository's fuzz targets, benchmarks and
//! tests reach some of it through `mcp_sansio::internals`, a module that exists only with the
//! `unstable-internals` feature: it is **not** public API, carries no stability promise, and no
//! published crate enables it.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod auth;
mod budget;
mod call;
mod config;
mod connection;
mod context;
mod elicit;
mod endpoint;
mod error;
pub mod h2;
pub mod http1;
mod json;
mod jsonrpc;
mod list;
pub mod mux;
mod prelude;
pub mod socket;
mod sse;
mod time;
pub mod wire;
mod xmcp;

pub use budget::{Budget, BudgetExceeded, Budgets, ByteLedger, CONTENT_BLOCK_BYTES};
pub use call::{CallResult, ContentBlock, ResourceContents};
pub use config::{ClientInfo, Config, Era, EraHint, LEGACY_VERSIONS, MODERN_VERSION};
pub use connection::{
    Completion, Connection, ConnectionState, EraHints, Event, ExchangeId, Operation, ServerInfo,
    Transmit, HOOKED_SERVER_REQUESTS, MAX_CAPABILITIES_BYTES, MAX_ERA_HINTS, MAX_ERA_HINT_TTL,
    MAX_INSTRUCTIONS_BYTES, MAX_REFUSALS_PER_REQUEST, MAX_SERVER_ANSWER_BYTES,
    MAX_SERVER_REQUEST_BYTES,
};
pub use context::{store_key, AuthContext, Credential, GrantIdentity, GrantKind, StoreUse};
pub use elicit::elicitation_defaults;
pub use endpoint::{parse_ipv4_host, Endpoint, EndpointError, Scheme};
pub use error::{
    ConfigError, Error, ErrorKind, ProtocolError, RpcError, TransportError, TransportErrorKind,
    MAX_CAPABILITY_NAME, MAX_REQUIRED_CAPABILITIES, MAX_REQUIRED_CAPABILITIES_BYTES,
};
pub use http1::{Http1Error, RequestError};
pub use list::{
    CacheHint, CacheScope, Catalog, Icon, IconDrop, RefusalReason, RefusedTool, Tool, ToolHints,
    ToolNameRule, ToolNote, MAX_NOTES_KEPT, MAX_REFUSALS_KEPT,
};
pub use sse::SseError;
pub use time::Instant;
pub use xmcp::{
    header_params, HeaderParam, HeaderRefusal, ParamKind, MAX_DEPTH, MAX_HEADER_PARAMS,
};

/// **Not public API, no stability promise.** The internals that the fuzz targets, benchmarks and
/// tests of this repository exercise directly: the `text/event-stream` decoder, the drain and
/// error-data bounds, the tool-name rule and the `x-mcp-header` value encoding. It exists only
/// with the `unstable-internals` feature, which no published crate enables; nothing here is
/// covered by semantic versioning and it may change or disappear in any release without notice.
/// Use the items re-exported at the crate root and the documented layers ([`h2`], [`http1`],
/// [`mux`], [`wire`]) instead.
///
/// The modules behind it stay private: none of these paths resolves.
///
/// ```compile_fail,E0603
/// use mcp_sansio::sse::SseDecoder;
/// ```
/// ```compile_fail,E0603
/// use mcp_sansio::budget::ByteLedger;
/// ```
/// ```compile_fail,E0603
/// use mcp_sansio::jsonrpc::MAX_ERROR_DATA;
/// ```
/// ```compile_fail,E0603
/// use mcp_sansio::xmcp::header_params;
/// ```
/// ```compile_fail,E0603
/// use mcp_sansio::connection::Connection;
/// ```
///
/// while the same items are reachable here, and the public ones at the root and in the layers:
///
/// ```
/// use mcp_sansio::internals::SseDecoder;
/// use mcp_sansio::http1::{ResponseDecoder, ResponseLimits};
/// use mcp_sansio::{Budget, ByteLedger, Http1Error, SseError};
///
/// let mut ledger = ByteLedger::new(4);
/// let mut decoder = ResponseDecoder::new(ResponseLimits::default());
/// let error = decoder.decode(b"HTTP/1.1 200 OK\r\n", &mut ledger).unwrap_err();
/// assert_eq!(error, Http1Error::Budget(ledger.exceeded()));
/// assert_eq!(ledger.exceeded().budget, Budget::ResponseBytes);
/// let mut sse = SseDecoder::new(2);
/// assert!(matches!(sse.decode(b"data: x\n"), Err(SseError::Budget(_))));
/// ```
#[cfg(feature = "unstable-internals")]
pub mod internals {
    pub use crate::connection::{DRAIN_BYTES, DRAIN_GRACE, TRANSITIONS};
    pub use crate::jsonrpc::{MAX_ERROR_DATA, MAX_ERROR_MESSAGE};
    pub use crate::list::valid_tool_name;
    pub use crate::sse::{SseDecoder, SseEvent, SseItem, SseStep};
    pub use crate::xmcp::{encode_header_value, header_values};
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
