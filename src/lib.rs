//! mcp-sansio: a sans-IO MCP client core for the Streamable HTTP transport.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod endpoint;
pub mod http1;
pub mod sse;
