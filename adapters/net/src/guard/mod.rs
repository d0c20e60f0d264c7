//! The network guard: what may be dialled and how.
//!
//! Every server address comes from a party the client does not trust, so every dial (an MCP
//! exchange's or an authorization exchange's) goes through here: the host is resolved once
//! ([`Resolve`], [`vetted_addresses`]), only the addresses the [`AddressPolicy`] admits are kept,
//! and those addresses are dialled themselves under one deadline ([`dial`]), with the rustls
//! configuration of [`client_config`]; an idle keep-alive socket is reused only for the same
//! origin and vetted address ([`IdlePool`]).
//!
//! - `policy`: which IP addresses may be dialled ([`AddressPolicy`]), judged on the address
//!   itself, including IPv4 embedded in IPv6 forms and the cloud metadata addresses;
//! - `resolve`: name resolution ([`Resolve`]) and [`vetted_addresses`], which resolves a host
//!   once and keeps only the addresses the policy allows;
//! - `tls`: the rustls client configuration (ring provider, webpki roots, ALPN `http/1.1`, or
//!   `h2` first where the adapter speaks HTTP/2), the TLS sessions a client keeps per origin for
//!   resumption, and extra roots read from PEM files ([`read_ca_certificates`]);
//! - [`dial`]: the dial rule (one deadline across addresses and TLS, the TLS server name, the
//!   idle check of pooled sockets), which every runtime follows;
//! - `pool`: the bookkeeping of idle keep-alive sockets, per origin and vetted address.

pub mod dial;
pub(crate) mod policy;
pub(crate) mod pool;
pub(crate) mod resolve;
pub(crate) mod tls;

pub use policy::{AddressPolicy, Refusal, Rule};
pub use pool::{IdlePool, PoolLimits};
pub use resolve::{vetted_addresses, GuardError, Resolve, StaticResolver, SystemResolver};
pub use tls::{
    client_config, client_config_with_extra_roots, client_config_with_roots, is_h2,
    read_ca_certificates, CaCertError,
};
