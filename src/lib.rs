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
//! no random number. Time is an argument ([`Instant`], on a timeline the caller defines),
//! requests come out as data (a [`Transmit`] carries a [`wire::Request`], which a socket type
//! encodes), and response bytes go in, in any split. The same inputs at the same instants give
//! the same outputs, byte for byte, and every budget ([`Budgets`]: bytes, header bytes, pages,
//! responses per request, time) is enforced here, in one place.
//!
//! # The run loop
//!
//! Start an operation, then drain the outputs until they are empty, then feed what the network
//! and the clock bring; after every input, drain again, as `run` does above. An adapter does
//! exactly this with real sockets: a [`Transmit`] with `fresh_socket` set goes on a new socket;
//! the bytes of an exchange and the end of its socket go to the socket type that encoded its
//! request ([`socket::Http1Socket::handle_bytes`] and [`socket::Http1Socket::handle_eof`], or
//! [`mux::H2Socket`]'s), which hands the connection its response as [`Input`]s
//! ([`Connection::handle`]); a socket that fails is
//! reported to the connection as an [`Input::TransportError`]; and [`Connection::poll_timeout`] says
//! when to call [`Connection::handle_timeout`].
//!
//! # What is public, layer by layer
//!
//! **The state machine**, at the root: what an embedder drives and matches on.
//!
//! - [`Connection`], driven with [`Instant`]s; its requests come out as [`Transmit`]s (one per
//!   [`ExchangeId`]); it reports [`Event`]s, tracks [`Operation`]s (and their [`Completion`])
//!   and says where it stands ([`ConnectionState`]).
//! - Its configuration: [`Config`] with its [`Budgets`], [`ClientInfo`], [`EraHint`] (an [`Era`]
//!   and a version among [`MODERN_VERSION`] and [`LEGACY_VERSIONS`]; [`EraHints`] keeps what was
//!   learnt), [`ToolNameRule`] and the parsed [`Endpoint`] ([`Scheme`], and [`parse_ipv4_host`],
//!   the one IPv4 reading the adapters' address policy must share with it).
//! - What is stored, and under which key: [`AuthContext`] (a [`Credential`] and a
//!   [`GrantIdentity`] of a [`GrantKind`]; or the principal, [`AuthContext::principal`], for
//!   what outlives a token) and [`store_key`] for a [`StoreUse`].
//! - Results: a [`Catalog`] of [`Tool`]s (with their [`ToolHints`], [`Icon`]s, [`ToolNote`]s,
//!   [`CacheHint`] and [`CacheScope`], and their [`HeaderParam`]s of a [`ParamKind`], which
//!   [`header_params`] reads from an `inputSchema`) and [`RefusedTool`]s; a [`CallResult`] of
//!   [`ContentBlock`]s and [`ResourceContents`]; the [`ServerInfo`] a server reported; for the
//!   input hook, the [`HOOKED_SERVER_REQUESTS`] it may answer and [`elicitation_defaults`].
//! - Failures: [`Error`] and its [`ErrorKind`]; the causes it carries ([`BudgetExceeded`] naming a
//!   [`Budget`], [`ConfigError`], [`EndpointError`], [`ProtocolError`], [`RpcError`],
//!   [`Http1Error`], [`RequestError`], [`SseError`], [`TransportError`] of a
//!   [`TransportErrorKind`], [`HeaderRefusal`], [`RefusalReason`], [`IconDrop`]), and the
//!   [`ByteLedger`] every byte budget is charged to.
//! - [`limits`]: the fixed bounds that are not budgets (what is kept of a server's answers, and
//!   what is refused beyond them).
//!
//! **Authorization**, [`auth`]: OAuth 2.1 (discovery, registration, tokens), sans-IO, driven like
//! the connection: requests out, responses in, time and randomness passed in.
//!
//! **The sockets**, for adapters: they put a connection's exchanges on sockets without owning a
//! socket themselves, and produce [`Input`]s for connections they do not own (what they need of
//! one, its [`Allowance`], is passed as data).
//!
//! - [`socket`]: [`socket::Http1Socket`] encodes a connection's requests as HTTP/1.1 and decodes
//!   each exchange's bytes into the connection's inputs.
//! - [`mux`]: [`mux::H2Streams`] runs the exchanges of several connections (work items) as the
//!   streams of one HTTP/2 socket, yielding each input with its work item; [`mux::H2Socket`]
//!   owns the work items' connections and hands them their inputs.
//!
//! **Below the sockets**, public for adapters that run an exchange themselves, in the way a TLS
//! library documents its unbuffered API:
//!
//! - [`wire`]: the wire-neutral exchange boundary between the state machine and the sockets
//!   (a [`wire::Request`] down, [`wire::ResponseEvent`]s up, each with its raw cost).
//! - [`http1`]: the HTTP/1.1 codec: the request encoder and the incremental response decoder.
//! - [`h2`]: the HTTP/2 client connection that [`mux::H2Socket`] drives ([`h2::ClientConnection`],
//!   its [`h2::H2Config`] and errors). Its frame codec and HPACK are private; [`h2::trace`]
//!   reads recorded octets (what a transcript needs) and [`h2::goaway`] gives the frame that
//!   closes a socket gracefully.
//!
//! The rest (the frame codec and HPACK, the `text/event-stream` decoder, JSON-RPC
//! classification, the tool-name rule, the authorization parsers and request builders, the
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
pub mod pin;
mod prelude;
pub mod socket;
mod sse;
pub mod task;
mod time;
pub mod trace_context;
pub mod wire;
mod xmcp;

pub use budget::{Budget, BudgetExceeded, Budgets, ByteLedger};
pub use call::{CallResult, ContentBlock, ResourceContents};
pub use config::{ClientInfo, Config, Era, EraHint, LEGACY_VERSIONS, MODERN_VERSION};
pub use connection::{
    Allowance, AnswerError, Answered, Completion, Connection, ConnectionState, EraHints, Event,
    ExchangeId, Input, Operation, ServerInfo, Transmit, HOOKED_SERVER_REQUESTS,
};
pub use context::{store_key, AuthContext, Credential, GrantIdentity, GrantKind, StoreUse};
pub use elicit::elicitation_defaults;
pub use endpoint::{parse_ipv4_host, Endpoint, EndpointError, Scheme};
pub use error::{
    ConfigError, Error, ErrorKind, ProtocolError, RpcError, TransportError, TransportErrorKind,
};
pub use http1::{Http1Error, RequestError};
pub use list::{
    CacheHint, CacheScope, Catalog, Icon, IconDrop, RefusalReason, RefusedTool, Tool, ToolHints,
    ToolNameRule, ToolNote,
};
pub use pin::{PinPolicy, ToolChange, ToolPin, ToolPins};
pub use sse::SseError;
pub use time::Instant;
pub use trace_context::{TraceContext, TraceContextError};
pub use xmcp::{header_params, HeaderParam, HeaderRefusal, ParamKind};

/// The fixed bounds of the core that are not budgets: how much of what a server sends is kept,
/// and what is refused beyond them. The budgets a caller chooses are [`Budgets`]; these are
/// constants, documented where they apply and named here so that an embedder (or a test) can
/// rely on them.
pub mod limits {
    pub use crate::auth::MAX_STEP_UPS;
    pub use crate::budget::CONTENT_BLOCK_BYTES;
    pub use crate::connection::{
        MAX_CAPABILITIES_BYTES, MAX_ERA_HINTS, MAX_ERA_HINT_TTL, MAX_INSTRUCTIONS_BYTES,
        MAX_REFUSALS_PER_REQUEST, MAX_SERVER_ANSWER_BYTES, MAX_SERVER_REQUEST_BYTES,
    };
    pub use crate::error::{
        MAX_CAPABILITY_NAME, MAX_REQUIRED_CAPABILITIES, MAX_REQUIRED_CAPABILITIES_BYTES,
    };
    pub use crate::list::{MAX_NOTES_KEPT, MAX_REFUSALS_KEPT};
    pub use crate::xmcp::{MAX_DEPTH, MAX_HEADER_PARAMS};
}

/// **Not public API, no stability promise.** The internals that the fuzz targets, benchmarks and
/// tests of this repository exercise directly: the `text/event-stream` decoder, the drain and
/// error-data bounds, the tool-name rule, the `x-mcp-header` value encoding, the authorization
/// helpers ([`internals::auth`]) and the HTTP/2 codecs ([`internals::h2`]). It exists only
/// with the `unstable-internals` feature, which no published crate enables; nothing here is
/// covered by semantic versioning and it may change or disappear in any release without notice.
/// Use the items re-exported at the crate root and the documented layers ([`h2`], [`http1`],
/// [`mux`], [`socket`], [`wire`]) instead.
///
/// The modules behind it stay private: none of these paths resolves.
///
/// ```compile_fail,E0603
/// use mcp_sansio::h2::frame::FrameDecoder;
/// ```
/// ```compile_fail,E0603
/// use mcp_sansio::h2::hpack::Encoder;
/// ```
/// ```compile_fail,E0603
/// use mcp_sansio::auth::scope::clean_scopes;
/// ```
///
/// nor do the authorization helpers at `auth`'s top:
///
/// ```compile_fail,E0432
/// use mcp_sansio::auth::clean_scopes;
/// ```
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

    /// The authorization helpers that [`crate::auth::Authorizer`] runs: parsers, decoders,
    /// request builders, the scope rules and the store keys.
    pub mod auth {
        pub use crate::auth::challenge::{bearer_challenge, MAX_CHALLENGES, MAX_PARAMS};
        pub use crate::auth::client::{
            auth_method_for_secret, decode_registration, registration_auth_method,
            MAX_CLIENT_VALUE_LEN,
        };
        pub use crate::auth::dpop::{jwk_thumbprint, usable_nonce, MAX_NONCE_LEN};
        pub use crate::auth::flow::{resource_key, token_key};
        pub use crate::auth::grant::{
            CLIENT_CREDENTIALS, ID_JAG_TOKEN_TYPE, ID_TOKEN_TYPE, JWT_BEARER, TOKEN_EXCHANGE,
        };
        pub use crate::auth::metadata::{
            decode_resource_metadata, decode_server_metadata, decode_server_metadata_for,
            is_loopback, resource_designates, resource_matches, resource_metadata_candidates,
            server_metadata_candidates, MAX_AUTHORIZATION_SERVERS,
        };
        pub use crate::auth::scope::{
            clean_scopes, is_scope_token, join_scopes, select_scopes, split_scopes, step_up_scopes,
            MAX_SCOPE_LEN, OFFLINE_ACCESS,
        };
        pub use crate::auth::token::{
            authorization_url, decode_token_response, decode_token_response_for, is_header_safe,
            parse_callback, pkce_challenge, token_request, MAX_CODE_LEN, MAX_TOKEN_LEN,
        };
    }

    /// The HTTP/2 codecs behind [`crate::h2`]: the frame codec, HPACK and the client
    /// connection's constants.
    pub mod h2 {
        /// The frame codec (RFC 9113 §4, §6).
        pub mod frame {
            pub use crate::h2::frame::*;
        }
        /// HPACK (RFC 7541).
        pub mod hpack {
            pub use crate::h2::hpack::*;
        }
        /// The client connection and its constants.
        pub mod client {
            pub use crate::h2::client::*;
        }
    }
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
