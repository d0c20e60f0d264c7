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
//! The core makes every protocol decision on the MCP exchange; an adapter moves bytes, reads the
//! clock and guards the dial. This crate is everything the adapters share, so that the tokio, the
//! blocking and the smol adapter behave the same (refuse the same addresses, send the same
//! requests, record the same transcripts); each adapter keeps only how bytes move on its
//! runtime. It is arranged by concern (the repository's `docs/architecture.md` draws the whole):
//!
//! - [`guard`]: which addresses may be dialled ([`AddressPolicy`]), vetted resolution
//!   ([`vetted_addresses`]), the dial rule ([`guard::dial`]), the rustls configuration
//!   ([`client_config`]) and the idle keep-alive pool ([`IdlePool`]);
//! - [`session`]: the one session driver ([`SessionDriver`]) over the core's connection, the
//!   state a client's sessions share and the one [`ClientBuilder`], how a new session finds its
//!   socket, and the shared HTTP/2 connection of an origin ([`SharedH2`]);
//! - [`runtime`]: the glue of a runtime: the [`Connect`] and [`Runtime`] traits and the one dial
//!   written against them, an async runtime's exchanges and HTTP/2 sockets written once against
//!   [`AsyncNet`] ([`runtime::tasks`]), the run loop of an async adapter ([`AsyncIo`]), and
//!   `runtime::smol` (feature `smol`), that trait on smol;
//! - [`auth`]: authorization over the guard: the runner of the core's authorization requests
//!   ([`auth::AuthHttp`]), the driver of an authorization ([`auth::Authorization`]), the session
//!   that authorizes when the server asks and retries ([`auth::AuthSession`]), and a
//!   `private_key_jwt` signer ([`auth::KeySigner`]);
//! - [`cache`]: the catalog cache a client's sessions may share ([`ClientBuilder::catalog_cache`]),
//!   per server URL and credential, behind a small [`cache::Store`] trait;
//! - [`pins`]: the tool pins a client's sessions keep in that store
//!   ([`ClientBuilder::tool_pins`]), a defence against a tool that changed since it was pinned;
//! - [`trace`]: the `tracing` spans of operations, exchanges and authorizations (feature
//!   `tracing`; without it nothing of `tracing` is compiled in).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auth;
pub mod cache;
pub mod guard;
mod lock;
pub mod metrics;
pub mod pins;
pub mod runtime;
pub mod session;
pub mod trace;

pub use guard::dial::DEFAULT_DIAL_TIMEOUT;
pub use guard::{
    client_config, client_config_with_extra_roots, client_config_with_roots, read_ca_certificates,
    vetted_addresses, AddressPolicy, CaCertError, GuardError, IdlePool, PoolLimits, Refusal,
    Resolve, Rule, StaticResolver, SystemResolver,
};
pub use runtime::async_run::{AsyncIo, Wake};
pub use runtime::inline::{HandOver, InlineExchange, InlinePhase, InlineStep, Resume};
pub use runtime::tasks::{AsyncH2, AsyncNet, Tasks};
pub use runtime::{Connect, Dialled, Runtime, StdNet};
pub use session::{
    BuildClient, CallObserver, Client, ClientBuilder, ClientRuntime, H2DialLead, H2Io, H2Route, Io,
    Member, NoObserver, Outbox, Report, Routed, Session, SessionDriver, SessionRuntime, Shared,
    SharedH2, Start, Wait, Waker, DEFAULT_WRITE_STALL,
};
