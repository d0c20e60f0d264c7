//! mcp-sansio: a sans-IO MCP (Model Context Protocol) client core for the Streamable HTTP
//! transport, built for servers that are hostile until their answers are checked.
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
//! and the clock bring; after every input, drain again. An adapter does exactly this with real
//! sockets; here a canned server answers instead.
//!
//! ```
//! use mcp_sansio::{Config, Connection, Event, Instant};
//!
//! // A server that answers `server/discover` like a 2026-07-28 server.
//! fn server(request: &[u8]) -> Vec<u8> {
//!     assert!(request.starts_with(b"POST /mcp HTTP/1.1\r\n"));
//!     let body = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#;
//!     format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len())
//!         .into_bytes()
//! }
//!
//! let config = Config::new("http://127.0.0.1:8080/mcp")?;
//! let mut conn = Connection::new(config)?;
//! let now = Instant::ZERO; // an adapter reads its monotonic clock here
//! conn.connect(now);
//! let mut connected = None;
//! loop {
//!     let mut fed = false;
//!     while let Some(t) = conn.poll_transmit() {
//!         // Send `t.bytes` on a socket for `t.exchange`; feed what comes back, in any split.
//!         for piece in server(&t.bytes).chunks(5) {
//!             conn.handle_bytes(now, t.exchange, piece);
//!         }
//!         fed = true;
//!     }
//!     while let Some(event) = conn.poll_event() {
//!         match event {
//!             Event::Connected { version, .. } => connected = Some(version),
//!             Event::Failed { error, .. } => panic!("{} ({})", error, error.kind()),
//!             _ => {} // ExchangeFinished / ExchangeAbandoned: pool or close the socket
//!         }
//!     }
//!     if !fed {
//!         break; // idle: an adapter would now wait for bytes or `conn.poll_timeout()`
//!     }
//! }
//! assert_eq!(connected.as_deref(), Some("2026-07-28"));
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
//!
//! # What is public
//!
//! Everything a caller names is re-exported here, at the root; the modules behind it are private.
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
//!   [`TransportErrorKind`]).
//! - [`auth`]: OAuth 2.1 authorization (discovery, registration, tokens), sans-IO, driven like
//!   the connection: requests out, responses in, time and randomness passed in.
//!
//! The layers underneath (the wire-neutral exchange boundary, the HTTP/1.1 codec below it:
//! encoder and incremental response decoder, the
//! `text/event-stream` decoder, JSON-RPC classification, `x-mcp-header` extraction, the byte
//! ledger) are internal. The fuzz targets, benchmarks and tests reach them through
//! `mcp_sansio::internals`, a hidden module that is **not** public API and may change in any
//! release without notice.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod auth;
mod budget;
mod call;
mod config;
mod connection;
mod endpoint;
mod error;
mod h2;
mod http1;
mod json;
mod jsonrpc;
mod list;
mod prelude;
mod sse;
mod time;
mod wire;
mod xmcp;

pub use budget::{Budget, BudgetExceeded, Budgets, CONTENT_BLOCK_BYTES};
pub use call::{CallResult, ContentBlock, ResourceContents};
pub use config::{ClientInfo, Config, Era, EraHint, LEGACY_VERSIONS, MODERN_VERSION};
pub use connection::{
    Completion, Connection, ConnectionState, EraHints, Event, ExchangeId, Operation, ServerInfo,
    Transmit, MAX_ERA_HINTS,
};
pub use endpoint::{parse_ipv4_host, Endpoint, EndpointError, Scheme};
pub use error::{
    ConfigError, Error, ErrorKind, ProtocolError, RpcError, TransportError, TransportErrorKind,
};
pub use http1::{Http1Error, RequestError};
pub use list::{Catalog, RefusalReason, RefusedTool, Tool, ToolNameRule, MAX_REFUSALS_KEPT};
pub use sse::SseError;
pub use time::Instant;
pub use xmcp::{HeaderParam, HeaderRefusal, ParamKind, MAX_HEADER_PARAMS};

/// **Not public API.** The internals that the fuzz targets, benchmarks and tests of this
/// repository exercise directly: the decoders, the request encoder, the byte ledger and a few
/// bounds. Nothing here is covered by semantic versioning; it may change or disappear in any
/// release without notice. Use the items re-exported at the crate root instead.
///
/// The modules behind them stay private: none of these paths resolves.
///
/// ```compile_fail,E0603
/// use mcp_sansio::http1::ResponseDecoder;
/// ```
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
/// while the same items are reachable here, and the public ones at the root:
///
/// ```
/// use mcp_sansio::internals::{ByteLedger, ResponseDecoder, ResponseLimits, SseDecoder};
/// use mcp_sansio::{Budget, Http1Error, SseError};
///
/// let mut ledger = ByteLedger::new(4);
/// let mut decoder = ResponseDecoder::new(ResponseLimits::default());
/// let error = decoder.decode(b"HTTP/1.1 200 OK\r\n", &mut ledger).unwrap_err();
/// assert_eq!(error, Http1Error::Budget(ledger.exceeded()));
/// assert_eq!(ledger.exceeded().budget, Budget::ResponseBytes);
/// let mut sse = SseDecoder::new(2);
/// assert!(matches!(sse.decode(b"data: x\n"), Err(SseError::Budget(_))));
/// ```
#[doc(hidden)]
pub mod internals {
    pub use crate::budget::ByteLedger;
    pub use crate::connection::{DRAIN_BYTES, DRAIN_GRACE};
    pub use crate::http1::{
        Decoded, Framing, Method, Request, ResponseDecoder, ResponseEvent, ResponseHead,
        ResponseLimits,
    };
    pub use crate::jsonrpc::{MAX_ERROR_DATA, MAX_ERROR_MESSAGE};
    pub use crate::list::valid_tool_name;
    pub use crate::sse::{SseDecoder, SseEvent, SseItem, SseStep};
    pub use crate::xmcp::{encode_header_value, header_params, header_values, MAX_DEPTH};

    /// The sans-IO HTTP/2 layer: HPACK, the frame codec and the client connection.
    pub mod h2 {
        pub use crate::h2::*;
    }

    /// The wire-neutral exchange boundary: a request down, response events up.
    pub mod wire {
        pub use crate::wire::*;
    }
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
