//! State a fleet of mcp-sansio executors shares through Redis 7 (or Valkey).
//!
//! - [`store`]: the catalog cache and era hints ([`mcp_sansio_net::cache::Store`]), task
//!   handles and tool pins, keyed by [`mcp_sansio::store_key`]; every value framed, versioned,
//!   size-bounded and checked again when read back.
//! - [`tokens`]: the token store, with one refresh per grant across the fleet (a lease with a
//!   fencing token and a compare-and-set write of the new token set).
//! - [`frame`]: the frame of every stored value; [`conn`]: the bounded link to Redis (one total
//!   deadline and one byte bound per operation, a backoff after failures).
//!
//! Redis is trusted for integrity, not for liveness: every operation runs under a deadline and
//! a byte bound, and a store that is down, slow or answering garbage is a miss, never an
//! outage.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conn;
pub mod frame;
pub mod store;
pub mod tokens;

pub use store::{Options, RedisStore, SaveHandles, StoreError};
