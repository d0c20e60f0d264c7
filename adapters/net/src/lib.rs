//! What the mcp-sansio adapters share: the session driver and the network guard.
//!
//! To connect, list the tools, call one and close, use an adapter built on this crate:
//! `mcp-sansio-tokio` (async), `mcp-sansio-blocking` (threads), or see the repository's
//! `mcp-sansio-smol-example`, a third runtime in a few hundred lines. What they share starts here, at
//! the guard that every dial goes through: a host is resolved once and only the addresses the
//! policy admits are dialled.
//!
//! ```
//! use std::net::IpAddr;
//! use mcp_sansio_net::{vetted_addresses, AddressPolicy, StaticResolver};
//!
//! let public: IpAddr = "93.184.215.14".parse()?;
//! let metadata: IpAddr = "169.254.169.254".parse()?;
//! let resolver = StaticResolver::new()
//!     .with("mcp.example.com", &[metadata, public])
//!     .with("internal.example.com", &[metadata]);
//! let policy = AddressPolicy::strict(); // public addresses only
//! // The metadata address is dropped, the public one kept: only it is dialled.
//! let admitted = vetted_addresses(&resolver, &policy, "mcp.example.com", 443)?;
//! assert_eq!(admitted, [std::net::SocketAddr::new(public, 443)]);
//! // A host with no admitted address is refused before any socket is opened.
//! let refused = vetted_addresses(&resolver, &policy, "internal.example.com", 443).unwrap_err();
//! assert!(refused.to_string().contains("169.254.169.254"), "{refused}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The core makes every protocol decision; an adapter moves bytes, reads the clock and guards the
//! dial. This crate is everything both adapters share, so that the tokio and the blocking adapter
//! behave the same (refuse the same addresses, send the same requests, record the same
//! transcripts); each adapter keeps only how bytes move on its runtime:
//!
//! - [`policy`]: which IP addresses may be dialled ([`AddressPolicy`]), judged on the address
//!   itself, including IPv4 embedded in IPv6 forms and the cloud metadata addresses;
//! - [`resolve`]: name resolution ([`Resolve`]) and [`vetted_addresses`], which resolves a host
//!   once and keeps only the addresses the policy allows — the adapter dials those addresses
//!   themselves and never resolves again between the check and the connect;
//! - [`tls`]: the rustls client configuration (ring provider, webpki roots, ALPN `http/1.1`, or
//!   `h2` first where the adapter speaks HTTP/2), and extra roots read from PEM files
//!   ([`read_ca_certificates`]) for a private certificate authority;
//! - [`pool`]: the bookkeeping of idle keep-alive sockets, per origin and vetted address;
//! - [`dial`]: the dial rule (one deadline across addresses and TLS, the TLS server name, the idle
//!   check of pooled sockets);
//! - [`runtime`]: the [`Connect`] and [`Runtime`] traits (connect; TLS, a blocking step) and the one dial written
//!   against it, which every adapter and every authorization exchange uses;
//! - [`driver`]: the one session driver ([`SessionDriver`]): the core's connection, recording,
//!   the clock, era hints and the observer, dispatching through the [`Io`] trait; over HTTP/1.1
//!   one socket per exchange, over HTTP/2 ([`SessionDriver::join_h2`]) every exchange a stream
//!   of the origin's one socket, shared by every session of the client;
//! - [`h2share`]: that shared HTTP/2 connection ([`SharedH2`]): the core's HTTP/2 socket, its
//!   work items and their inboxes, moved to a fresh socket when it goes away;
//! - [`route`]: how a new session finds its way (join, wait for or dial the origin's shared
//!   HTTP/2 connection, a recorded socket of its own, or HTTP/1.1), written once ([`route::H2Glue`]);
//! - [`async_run`]: the run loop of an async adapter ([`AsyncIo`], [`Wake`], [`SessionDriver::run`]);
//! - [`tasks`]: an async runtime's exchanges, inline exchange and HTTP/2 sockets, written once
//!   against the small [`AsyncNet`] trait (read, write, spawn, sleep);
//! - `smol_rt` (feature `smol`): that trait on smol, which the smol and the blocking adapters
//!   run on;
//! - [`wire`]: one authorization exchange as bytes ([`wire::AuthWire`]: rustls driven by hand,
//!   raw bytes counted, the core's HTTP/1.1 decoder), under a deadline checked around every
//!   socket operation;
//! - [`authsession`]: the session that authorizes when the server asks and retries once
//!   ([`authsession::AuthSession`]), written once for every runtime, and [`async_auth`], its
//!   side on every async runtime;
//! - [`client`]: the state every session of a client shares and the one [`ClientBuilder`].
//! - [`cache`]: the catalog cache a client's sessions may share ([`ClientBuilder::catalog_cache`]),
//!   per server URL and credential, behind a small [`cache::Store`] trait.
//! - [`trace`]: the `tracing` spans of operations, exchanges and authorizations (feature
//!   `tracing`; without it nothing of `tracing` is compiled in).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod async_auth;
pub mod async_run;
pub mod auth;
pub mod authsession;
pub mod cache;
pub mod client;
pub mod dial;
pub mod driver;
pub mod h2share;
mod inbox;
pub mod inline;
pub mod policy;
pub mod pool;
pub mod resolve;
pub mod route;
pub mod runtime;
pub mod signer;
#[cfg(feature = "smol")]
pub mod smol_rt;
pub mod tasks;
pub mod tls;
pub mod trace;
pub mod wire;

pub use async_run::{AsyncIo, Wake};
pub use client::{
    BuildClient, Client, ClientBuilder, ClientRuntime, H2DialLead, H2Route, Session,
    SessionRuntime, Shared,
};
pub use driver::{CallObserver, Io, NoObserver, Report, SessionDriver, Start, Wait};
pub use h2share::{H2Io, Member, SharedH2, Waker};
pub use inline::{HandOver, InlineExchange, InlinePhase, InlineStep, Resume};
pub use policy::{AddressPolicy, Refusal, Rule};
pub use pool::{IdlePool, PoolLimits};
pub use resolve::{vetted_addresses, GuardError, Resolve, StaticResolver, SystemResolver};
pub use runtime::{Connect, Dialled, Runtime, StdNet};
pub use tasks::{AsyncH2, AsyncNet, Tasks};
pub use tls::{
    client_config, client_config_with_extra_roots, client_config_with_roots, read_ca_certificates,
    CaCertError,
};

/// Default deadline of one dial (TCP connect and TLS handshake), as the issue of the adapters and
/// the core's request budget both set it.
pub const DEFAULT_DIAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Default time a write to an HTTP/2 socket may wait on the server (which stopped reading)
/// before the socket fails: a server that stops reading cannot hold the socket forever.
pub const DEFAULT_WRITE_STALL: std::time::Duration = std::time::Duration::from_secs(30);
