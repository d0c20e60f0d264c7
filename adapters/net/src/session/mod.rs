//! The session side: the one driver of the core's [`Connection`](mcp_sansio::Connection), the
//! client every session shares, how a session finds its socket, and the shared HTTP/2
//! connection.
//!
//! - `driver`: the one session driver ([`SessionDriver`]): the core's connection (which it owns
//!   whatever the wire, and hands every input in one place), recording, the clock, era hints
//!   and the observer, dispatching through the [`Io`] trait; over HTTP/1.1 one socket per
//!   exchange, over HTTP/2 ([`SessionDriver::join_h2`]) every exchange a stream of the origin's
//!   one socket, shared by every session of the client;
//! - `io`: what the driver asks of an adapter ([`Io`]) and tells it ([`Report`], [`Wait`]),
//!   the [`Start`] of an operation, the [`CallObserver`] of a call, and the read sizes;
//! - `h2share`: that shared HTTP/2 connection ([`SharedH2`]): the core's HTTP/2 socket, its
//!   work items and their inboxes of inputs ([`Routed`]; it owns no connection), moved to a
//!   fresh socket when it goes away;
//! - `route`: how a new session finds its way (join, wait for or dial the origin's shared
//!   HTTP/2 connection, a recorded socket of its own, or HTTP/1.1), written once;
//! - `client`: the state every session of a client shares ([`Shared`]), and the [`Client`]
//!   and [`Session`] of every adapter;
//! - `builder`: the one [`ClientBuilder`] of every adapter's client.

pub(crate) mod builder;
pub(crate) mod client;
pub(crate) mod driver;
pub(crate) mod h2share;
pub(crate) mod io;
pub(crate) mod route;

pub use builder::{BuildClient, ClientBuilder, DEFAULT_WRITE_STALL};
pub use client::{Client, ClientRuntime, H2DialLead, H2Route, Session, SessionRuntime, Shared};
pub use driver::SessionDriver;
pub use h2share::{H2Io, Member, Outbox, Routed, SharedH2, Waker};
pub use io::{
    next_read_size, read_size, CallObserver, Io, NoObserver, Report, Start, Wait, READ_MAX,
    READ_MIN,
};
