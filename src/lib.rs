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
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layers
//!
//! - [`connection`]: the state machine (negotiation, requests, resumption, deadlines, close);
//! - [`http1`]: the HTTP/1.1 request encoder and incremental response decoder;
//! - [`sse`]: the `text/event-stream` decoder;
//! - [`jsonrpc`]: JSON-RPC 2.0 messages, classified without building a value tree;
//! - [`list`] and [`call`]: `tools/list` catalogs and `tools/call` results;
//! - [`budget`], [`error`], [`config`], [`time`], [`endpoint`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod call;
pub mod config;
pub mod connection;
pub mod endpoint;
pub mod error;
pub mod http1;
mod json;
pub mod jsonrpc;
pub mod list;
pub mod sse;
pub mod time;
pub mod transcript;
pub mod xmcp;

pub use budget::{Budget, BudgetExceeded, Budgets};
pub use config::{ClientInfo, Config, Era, EraHint};
pub use connection::{Connection, Event, ExchangeId, Operation, Transmit};
pub use error::{Error, ErrorKind};
pub use time::Instant;

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
