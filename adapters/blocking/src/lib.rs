//! A blocking adapter for the [`mcp_sansio`] MCP client core, on `std::net` sockets and threads
//! (no async runtime).
//!
//! The core decides everything about the protocol; this crate moves its bytes, reads the clock
//! and guards the dial:
//!
//! - every host is resolved once and every address judged by the [`AddressPolicy`] before a
//!   socket is opened ([`mcp_sansio_net::vetted_addresses`]); only the admitted addresses are
//!   dialled, in order, each within the dial timeout;
//! - `https` endpoints speak TLS with rustls (ring provider, ALPN `http/1.1`, SNI = the endpoint
//!   host);
//! - sockets the core declares reusable go back to a per-client idle pool, keyed by origin;
//! - the era negotiated with an origin is offered as a hint to the next connect to it.
//!
//! Each exchange runs on its own worker thread that owns the socket and reads only when the
//! session asks, so that a socket handed back to the pool never has a stale reader (the source of
//! the private `exchange` module explains the design). The session waits on the workers' reports
//! with a timeout at the core's next deadline, so every operation ends within its budgets plus
//! thread wake-up latency; a worker stuck in a TCP connect is left to end within the dial timeout.
//!
//! # Example
//!
//! ```no_run
//! use mcp_sansio::Config;
//! use mcp_sansio_blocking::Client;
//!
//! let client = Client::new(); // public addresses only, system resolver, webpki roots
//! let mut session = client.connect(Config::new("https://mcp.example.com/mcp")?)?;
//! println!("{} ({:?})", session.version(), session.era());
//! let catalog = session.list_tools()?;
//! for tool in &catalog.tools {
//!     println!("{}", tool.name());
//! }
//! let result = session.call_tool("echo", br#"{"text":"hi"}"#)?;
//! println!("error: {}, {} blocks", result.is_error, result.content.len());
//! session.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod exchange;
mod session;

pub use client::{Client, ClientBuilder};
pub use mcp_sansio::transcript::TranscriptSink;
pub use mcp_sansio_net::TranscriptFile;
pub use mcp_sansio_net::{AddressPolicy, PoolLimits, Resolve, StaticResolver, SystemResolver};
pub use session::Session;

/// Receives what a running tool call reports besides its result. Every method has a default
/// that does nothing (and declines input requests).
pub trait CallObserver: Send {
    /// The server reported progress.
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let _ = (progress, total, message);
    }

    /// Input requests of a multi-round-trip call (only when `Config::input_hook` is set); return
    /// the JSON object of responses keyed like the requests, or `None` to decline.
    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let _ = requests;
        None
    }
}
