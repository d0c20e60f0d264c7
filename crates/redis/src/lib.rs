//! State a fleet of mcp-sansio executors shares through Redis 7 (or Valkey).
//!
//! - [`store`]: the catalog cache and era hints ([`mcp_sansio_net::cache::Store`]), task
//!   handles and tool pins, keyed by [`mcp_sansio::store_key`]; every value framed, versioned,
//!   size-bounded and checked again when read back.
//! - [`tokens`]: the token store, with one refresh per grant across the fleet (a lease with a
//!   fencing token and a compare-and-set write of the new token set).
//!
//! Redis is trusted for integrity, not for liveness: every operation runs under a deadline and
//! a byte bound, and a store that is down, slow or answering garbage is a miss, never an
//! outage.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod store;
pub mod tokens;
