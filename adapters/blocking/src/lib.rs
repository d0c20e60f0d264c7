//! A blocking adapter for the [`mcp_sansio`] MCP client core, on `std::net` sockets and threads
//! (no async runtime).
//!
//! Connect, list the tools, call one, close (the same program on tokio: `mcp-sansio-tokio`; on
//! smol: the `mcp-sansio-smol-example` crate of the repository):
//!
//! ```no_run
//! use mcp_sansio::Config;
//! use mcp_sansio_blocking::Client;
//!
//! fn main() -> Result<(), mcp_sansio::Error> {
//!     let client = Client::new(); // strict address policy, system resolver, webpki roots, pool
//!     let config = Config::new("https://mcp.example.com/mcp")?.with_bearer_token("secret");
//!     let mut session = client.connect(config)?;
//!     println!("{} ({})", session.version(), session.era());
//!     let catalog = session.list_tools()?;
//!     for tool in &catalog.tools {
//!         println!("{}", tool.name());
//!     }
//!     let result = session.call_tool("echo", br#"{"text":"hi"}"#)?;
//!     println!("error: {}, {} blocks", result.is_error, result.content.len());
//!     session.close()
//! }
//! ```
//!
//! The core decides everything about the protocol and [`mcp_sansio_net`]'s session driver runs
//! it (recording, the clock, era hints, how an operation ends, which socket goes back to the
//! pool); this crate only moves the bytes on `std::net` sockets:
//!
//! - every host is resolved once and every address judged by the [`AddressPolicy`] before a
//!   socket is opened ([`mcp_sansio_net::vetted_addresses`]); only the admitted addresses are
//!   dialled, in order, within one dial deadline that covers every address and the TLS handshake;
//! - `https` endpoints speak TLS with rustls (ring provider, ALPN `h2` then `http/1.1`, SNI = the
//!   endpoint host without a trailing dot);
//! - when the server chooses `h2` (or with
//!   [`ClientBuilder::h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge)
//!   for `http`), every session of the [`Client`] to that origin is a work item of one shared
//!   HTTP/2 socket ([`mcp_sansio_net::SharedH2`]), served by a writer and a reader thread; the
//!   socket stays idle for the next session when the last one leaves, and dropping the client
//!   writes GOAWAY(NO_ERROR) and closes it;
//!   [`ClientBuilder::http1_only`](mcp_sansio_net::ClientBuilder::http1_only) turns HTTP/2 off;
//! - sockets the core declares reusable go back to a per-client idle pool, keyed by origin;
//! - the era negotiated with an origin is offered as a hint to the next connect to it.
//!
//! Each exchange runs on a worker thread that owns the socket and reads only when the session
//! asks, so that a socket handed back to the pool never has a stale reader (the source of the
//! private `exchange` module explains the design); worker threads are reused for the session's
//! next exchanges. The session waits on the workers' reports with a timeout at the core's next
//! deadline, so every operation ends within its budgets plus thread wake-up latency; a worker
//! stuck in a TCP connect is left to end within the dial timeout. The only open exchange of a
//! session, on an idle pooled socket, is moved by the session's own thread (its socket timeouts
//! set to the core's next deadline), and handed to a worker if another exchange starts.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auth;
mod exchange;
mod h2;
mod session;

pub use auth::AuthSession;
use mcp_sansio::{Config, Error};

pub use mcp_sansio_net::{
    read_ca_certificates, AddressPolicy, CaCertError, CallObserver, PoolLimits, Resolve,
    StaticResolver, SystemResolver,
};
pub use mcp_sansio_transcript::{TranscriptFile, TranscriptSink};
pub use session::Session;

use crate::exchange::Stream;

/// An MCP client on threads. Cheap to clone: clones share the address policy, resolver, TLS
/// configuration, idle-socket pool, HTTP/2 connections and the era hints learnt per origin.
pub type Client = mcp_sansio_net::Client<Threads>;

/// Builds a [`Client`]; the same builder in every adapter.
pub type ClientBuilder = mcp_sansio_net::ClientBuilder<Client>;

/// The runtime of this crate: `std::net` sockets and threads; connecting blocks and gives the
/// session.
#[derive(Clone, Copy, Debug)]
pub struct Threads;

impl mcp_sansio_net::ClientRuntime for Threads {
    type Socket = Stream;
    type Connect<'a> = Result<Session, Error>;

    fn connect(client: &Client, config: Config) -> Result<Session, Error> {
        session::connect(client.shared().clone(), config)
    }
}
