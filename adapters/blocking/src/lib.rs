//! A blocking adapter for the [`mcp_sansio`] MCP client core, on `std::net` sockets and threads
//! (no async runtime).
//!
//! Connect, list the tools, call one, close (the same program on tokio: `mcp-sansio-tokio`; on
//! smol: the `mcp-sansio-smol-example` crate of the repository):
//!
//! ```no_run
//! use mcp_sansio::{Config, Error};
//! use mcp_sansio_blocking::Client;
//!
//! fn main() -> Result<(), Error> {
//!     let client = Client::new();
//!     let url = "https://mcp.example.com/mcp";
//!     let mut session =
//!         client.connect(Config::new(url)?)?;
//!     let catalog = session.list_tools()?;
//!     let result = session.call_tool("echo", br#"{"text":"hi"}"#)?;
//!     println!("{} tools", catalog.tools.len());
//!     println!("tool error: {}", result.is_error);
//!     session.close()
//! }
//! ```
//!
//! The core decides everything about the protocol and [`mcp_sansio_net`]'s session driver runs
//! it (recording, the clock, era hints, how an operation ends, which socket goes back to the
//! pool). The bytes move as on every async runtime ([`mcp_sansio_net::runtime::tasks`]), on smol's
//! reactor ([`mcp_sansio_net::runtime::smol`]): each operation is a `block_on` ([`OwnThread::block_on`]) of the same future the
//! async adapters await, on the calling thread, so it ends within the same budgets and the same
//! deadlines. What that code does:
//!
//! - every host is resolved once and every address judged by the [`AddressPolicy`] before a
//!   socket is opened ([`mcp_sansio_net::vetted_addresses`]); only the admitted addresses are
//!   dialled, in order, within one dial deadline that covers every address and the TLS handshake;
//! - `https` endpoints speak TLS with rustls (ring provider, ALPN `h2` then `http/1.1`, SNI = the
//!   endpoint host without a trailing dot);
//! - when the server chooses `h2` (or with
//!   [`ClientBuilder::h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge)
//!   for `http`), every session of the [`Client`] to that origin is a work item of one shared
//!   HTTP/2 socket ([`mcp_sansio_net::SharedH2`]), served by a task of its own; the socket stays
//!   idle for the next session when the last one leaves, and dropping the client writes
//!   GOAWAY(NO_ERROR) and closes it;
//!   [`ClientBuilder::http1_only`](mcp_sansio_net::ClientBuilder::http1_only) turns HTTP/2 off;
//! - sockets the core declares reusable go back to a per-client idle pool, keyed by origin;
//! - the era negotiated with an origin is offered as a hint to the next connect to it
//!   (HTTP/2, the errors, era hints and the catalog cache are the same on every runtime: see
//!   [`mcp_sansio_net::Client`]).
//!
//! A session's only open exchange on an idle pooled socket (the pages of a listing, the calls of
//! a warm session) is moved by the calling thread itself; other exchanges each run in a task with
//! a thread of its own ([`SmolThreads`]), reading only when the core has taken the previous
//! bytes. Dropping a [`Session`] cancels its tasks, which closes their sockets, without ending a
//! legacy session on the server: call [`Session::close`](mcp_sansio_net::Session::close) for
//! that.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auth;

pub use auth::AuthSession;
use mcp_sansio::{Completion, Config, Error};
use mcp_sansio_net::runtime::smol::{OwnThread, SmolStream, SmolThreads};
use mcp_sansio_net::runtime::tasks;
pub use mcp_sansio_net::{
    read_ca_certificates, AddressPolicy, CaCertError, CallObserver, PoolLimits, Resolve,
    StaticResolver, SystemResolver,
};
use mcp_sansio_net::{ClientRuntime, SessionRuntime, Start, Tasks};
pub use mcp_sansio_transcript::{TranscriptFile, TranscriptSink};

/// An MCP client on threads. Cheap to clone: clones share the address policy, resolver, TLS
/// configuration, idle-socket pool, HTTP/2 connections and the era hints learnt per server and
/// authorization context.
pub type Client = mcp_sansio_net::Client<Threads>;

/// Builds a [`Client`]; the same builder in every adapter.
pub type ClientBuilder = mcp_sansio_net::ClientBuilder<Client>;

/// A connected MCP session. Every method blocks until its operation ends, within the budgets of
/// the configuration.
pub type Session = mcp_sansio_net::Session<Threads>;

/// The runtime of this crate: every operation blocks the calling thread until it ends; the
/// exchanges run on [`SmolThreads`], a thread each.
#[derive(Clone, Copy, Debug)]
pub struct Threads;

impl ClientRuntime for Threads {
    type Socket = SmolStream;
    type Connect<'a> = Result<Session, Error>;

    fn connect(client: &Client, config: Config) -> Result<Session, Error> {
        let (driver, io) =
            OwnThread::block_on(tasks::connect::<SmolThreads>(client.shared(), config))?;
        Ok(Session::from_parts(driver, io))
    }
}

impl SessionRuntime for Threads {
    type Io = Tasks<SmolThreads>;
    type Op<'a, T: Send + 'a> = Result<T, Error>;

    fn run<'a, T: Send + 'a>(
        session: &'a mut Session,
        op: Start<'a>,
        observer: &'a mut dyn CallObserver,
        then: fn(Completion) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (driver, io) = session.parts();
        OwnThread::block_on(driver.run(io, op, observer)).and_then(then)
    }

    fn close(mut session: Session) -> Result<(), Error> {
        let (driver, io) = session.parts();
        OwnThread::block_on(tasks::close(driver, io))
    }
}
