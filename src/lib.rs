//! mcp-sansio: a sans-IO MCP client core for the Streamable HTTP transport.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod call;
pub mod config;
pub mod connection;
pub mod endpoint;
pub mod error;
pub mod http1;
pub mod jsonrpc;
pub mod list;
pub mod sse;
pub mod time;

pub use budget::{Budget, BudgetExceeded, Budgets};
pub use config::{ClientInfo, Config, Era, EraHint};
pub use connection::{Connection, Event, ExchangeId, Operation, Transmit};
pub use error::{Error, ErrorKind};
pub use time::Instant;
