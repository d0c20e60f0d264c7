//! HTTP/1.1 beneath the MCP layer: request encoding and incremental response decoding.

pub mod request;

pub use request::{Method, Request, RequestError};
