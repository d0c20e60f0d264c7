//! How a new session finds its way, written once for every runtime: a work item of the origin's
//! shared HTTP/2 connection (joined, waited for, or dialled and registered), a recorded HTTP/2
//! socket of its own, or HTTP/1.1 when the client or the server chooses it.
//!
//! The adapter says how to wait, how to dial and how to serve an HTTP/2 socket ([`H2Glue`]);
//! [`session_driver`] does the rest.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use mcp_sansio::{Config, Error, TransportError, TransportErrorKind};

use crate::session::client::{H2Route, Shared};
use crate::session::driver::SessionDriver;
use crate::session::h2share::{H2Io, SharedH2, Waker};

/// What a new session's route to HTTP/2 needs of its adapter.
pub trait H2Glue {
    /// The adapter's socket, as its pool keeps it.
    type Stream: Send + 'static;
    /// A socket that speaks HTTP/2, ready to be served.
    type Socket;
    /// The socket I/O of one shared HTTP/2 connection.
    type Sockets: H2Io + Clone + 'static;

    /// Waits until the session's waker is called (another session's dial of the origin ended),
    /// or the dial timeout passed twice; false when no wake can come any more.
    fn wait(&mut self) -> impl Future<Output = bool> + Send;

    /// Dials the session's endpoint, offering ALPN `h2` first.
    fn dial(
        &mut self,
    ) -> impl Future<Output = Result<(SocketAddr, Self::Stream), TransportError>> + Send;

    /// The socket of `stream` if it speaks HTTP/2 (`h2c`: a plain socket does), else the stream.
    fn h2_socket(stream: Self::Stream, h2c: bool) -> Result<Self::Socket, Self::Stream>;

    /// The socket I/O of a new HTTP/2 connection of the session's endpoint.
    fn sockets(&self) -> Self::Sockets;

    /// Serves `socket` as socket `generation` of `conn`; `before_reading` runs before anything
    /// is read from it.
    fn attach(
        sockets: &Self::Sockets,
        conn: Arc<SharedH2>,
        generation: u64,
        socket: Self::Socket,
        before_reading: impl FnOnce(),
    ) -> Result<(), TransportError>;
}

fn closed(message: &str) -> Error {
    Error::Transport(TransportError {
        kind: TransportErrorKind::Connect,
        message: message.into(),
    })
}

/// The session's driver: a work item of the origin's shared HTTP/2 connection (joined, or dialled
/// and registered when there is none and the server negotiates HTTP/2), or an HTTP/1.1 session
/// ([`Shared::h2_scheme`] decides whether to try HTTP/2). `wake` wakes the session's
/// [`H2Glue::wait`].
pub async fn session_driver<G: H2Glue>(
    shared: &Arc<Shared<G::Stream>>,
    config: Config,
    wake: Waker,
    glue: &mut G,
) -> Result<SessionDriver, Error> {
    let origin = config.endpoint.origin();
    let Some(scheme) = shared.h2_scheme(&config.endpoint, &origin) else {
        return SessionDriver::new(shared, config);
    };
    if shared.records() {
        return recorded_driver(shared, config, scheme, wake, glue).await;
    }
    // A connection shut between the look-up and the join is looked up again (a few times).
    for _ in 0..4 {
        let lead = match shared.h2_route(&origin, wake.clone()) {
            H2Route::Join(conn) => {
                match SessionDriver::join_h2(shared, config.clone(), conn, wake.clone())? {
                    Some(driver) => return Ok(driver),
                    None => continue,
                }
            }
            H2Route::Wait => {
                if !glue.wait().await {
                    break;
                }
                if shared.h2_scheme(&config.endpoint, &origin).is_none() {
                    // The origin chose HTTP/1.1 meanwhile.
                    return SessionDriver::new(shared, config);
                }
                continue;
            }
            H2Route::Dial(lead) => lead,
        };
        let (address, stream) = glue.dial().await?;
        let socket = match G::h2_socket(stream, scheme == "http") {
            Ok(socket) => socket,
            Err(stream) => {
                // The server chose HTTP/1.1: the socket serves the first exchange, and the
                // sessions waiting on this dial speak HTTP/1.1 too.
                shared.park(&origin, address, stream);
                shared.chose_http1(&origin);
                drop(lead);
                return SessionDriver::new(shared, config);
            }
        };
        let io = glue.sockets();
        let fresh = SharedH2::make(
            scheme,
            &config.budgets,
            shared.h2_max_streams,
            Arc::new(io.clone()),
            None,
        );
        G::attach(&io, fresh.clone(), 0, socket, || {})?;
        let conn = shared.h2_register(&origin, fresh.clone());
        drop(lead);
        if !Arc::ptr_eq(&conn, &fresh) {
            io.close(0);
        }
        if let Some(driver) = SessionDriver::join_h2(shared, config.clone(), conn, wake.clone())? {
            return Ok(driver);
        }
    }
    Err(closed(
        "the origin's HTTP/2 connection kept closing before the session joined it",
    ))
}

/// The driver of a session of a client that records: an HTTP/2 socket of its own, recorded
/// ([`Shared::h2_recorded`]), or HTTP/1.1 if the server chooses it. The session joins before the
/// socket's reader starts, so that its transcript holds every byte read.
async fn recorded_driver<G: H2Glue>(
    shared: &Arc<Shared<G::Stream>>,
    config: Config,
    scheme: &'static str,
    wake: Waker,
    glue: &mut G,
) -> Result<SessionDriver, Error> {
    let (address, stream) = glue.dial().await?;
    let socket = match G::h2_socket(stream, scheme == "http") {
        Ok(socket) => socket,
        Err(stream) => {
            // The server chose HTTP/1.1: the socket serves the first exchange.
            shared.park(&config.endpoint.origin(), address, stream);
            return SessionDriver::new(shared, config);
        }
    };
    let io = glue.sockets();
    let Some(conn) = shared.h2_recorded(scheme, &config.budgets, Arc::new(io.clone())) else {
        return SessionDriver::new(shared, config);
    };
    let mut joined = None;
    G::attach(&io, conn.clone(), 0, socket, || {
        joined = Some(SessionDriver::join_h2(shared, config, conn, wake));
    })?;
    match joined {
        Some(Ok(Some(driver))) => Ok(driver),
        Some(Err(e)) => Err(e),
        Some(Ok(None)) | None => Err(closed(
            "the recorded HTTP/2 connection closed before the session joined it",
        )),
    }
}
