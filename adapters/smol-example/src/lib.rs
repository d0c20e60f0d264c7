//! A third runtime for the [`mcp_sansio`] core: the shared session driver and network guard of
//! [`mcp_sansio_net`] on [`smol`].
//!
//! Everything that is not "how bytes move" is shared with the tokio and the blocking adapters:
//! the [`SessionDriver`](mcp_sansio_net::SessionDriver) runs the core (recording, the clock, era hints, how an operation ends,
//! which socket goes back to the pool), the [`ClientBuilder`](mcp_sansio_net::ClientBuilder) and the address policy decide which
//! addresses may be dialled, and [`mcp_sansio_net::guard::dial`] is the dial rule (one deadline across
//! every admitted address and the TLS handshake, the TLS server name, the idle check of a pooled
//! socket), and [`mcp_sansio_net::runtime::tasks`] moves the bytes of every async runtime (one task per
//! exchange, reading once each time the session asks; the inline exchange; the HTTP/2 sockets).
//! How smol reads, writes, spawns and sleeps ([`AsyncNet`](mcp_sansio_net::AsyncNet)), on smol's
//! [`Async<TcpStream>`](smol::Async) with TLS by `futures-rustls`, is [`SmolNet`], which the
//! blocking adapter runs on too; this crate names the types.
//!
//! HTTP/2 takes the shared route of [`mcp_sansio_net::runtime::tasks`]: when TLS negotiates
//! `h2` by ALPN, or for an `http` endpoint with
//! [`h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge), every session of a
//! [`Client`] to the origin is a work item of its one shared connection
//! ([`SharedH2`](mcp_sansio_net::SharedH2)), whose socket one smol task serves (writes in
//! order, each read fed to the connection).
//! [`Session::http_version`](mcp_sansio_net::Session::http_version) says which.
//!
//! ```no_run
//! use mcp_sansio::{Config, Error};
//! use mcp_sansio_smol_example::Client;
//!
//! fn main() -> Result<(), Error> {
//!     smol::block_on(async {
//!         let client = Client::new();
//!         let url = "https://mcp.example.com/mcp";
//!         let mut session =
//!             client.connect(Config::new(url)?).await?;
//!         let catalog = session.list_tools().await?;
//!         let result = session.call_tool("echo", br#"{"text":"hi"}"#).await?;
//!         println!("{} tools", catalog.tools.len());
//!         println!("tool error: {}", result.is_error);
//!         session.close().await
//!     })
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use mcp_sansio_net::runtime::smol::{SmolNet, SmolStream};
pub use mcp_sansio_net::{AddressPolicy, CallObserver, Resolve, StaticResolver, SystemResolver};

/// An MCP client on smol.
pub type Client = mcp_sansio_net::Client<SmolNet>;

/// A connected MCP session on smol. Dropping it cancels its exchange tasks, which closes their
/// sockets; [`Session::close`](mcp_sansio_net::Session::close) also ends a legacy session on the
/// server.
pub type Session = mcp_sansio_net::Session<SmolNet>;

/// A [`Session`] that authorizes when the server asks (a 401, or a 403 `insufficient_scope`)
/// and retries once: the shared [`AuthSession`](mcp_sansio_net::auth::AuthSession) on
/// smol ([`AsyncAuth`](mcp_sansio_net::auth::AsyncAuth)).
pub type AuthSession = mcp_sansio_net::auth::AuthSession<mcp_sansio_net::auth::AsyncAuth<SmolNet>>;
