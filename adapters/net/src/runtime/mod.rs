//! The runtime trait and the one dial written against it.
//!
//! A runtime ([`Runtime`]) says how to run a blocking step (name resolution), connect a TCP
//! socket to a vetted address within a limit, and run a TLS client over it until a deadline.
//! Everything else of a dial is written once here ([`dial`], [`connect`]): resolve and vet once,
//! connect to the admitted addresses in order, each within its share of one deadline
//! ([`DialDeadline::share`]), then TLS with ALPN and SNI within what is left of it. The tokio,
//! blocking and smol adapters and the authorization exchanges all dial through it.
//!
//! [`StdNet`] connects `std::net` sockets, blocking inside the call (bounded by its limit), and
//! runs rustls over them; its futures are ready when first polled, and [`block_on`] runs them on
//! the calling thread.
//!
//! Every runtime's TCP socket counts the raw bytes it reads, below TLS, and fails a read past
//! the limit it is given ([`Connect::limit_reads`], [`counted`]).
//!
//! The runtime glue around it, in this folder:
//!
//! - [`tasks`]: an async runtime's exchanges, inline exchange and HTTP/2 sockets, written once
//!   against the small [`AsyncNet`](tasks::AsyncNet) trait (read, write, spawn, sleep);
//! - `inbox`: a session's inbox of what its exchange tasks report, and the wake-ups of its
//!   shared HTTP/2 connection;
//! - `inline`: the bookkeeping of an exchange a session drives itself
//!   ([`InlineExchange`](crate::InlineExchange));
//! - `async_run`: the run loop of an async adapter ([`AsyncIo`](crate::AsyncIo),
//!   [`Wake`](crate::Wake), [`SessionDriver::run`](crate::SessionDriver::run));
//! - `smol` (feature `smol`): [`AsyncNet`](tasks::AsyncNet) on smol, which the smol and the
//!   blocking adapters run on.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_sansio::{Endpoint, Scheme, TransportError, TransportErrorKind};
use rustls::ClientConfig;

use crate::guard::dial::{server_name, tls_error, DialDeadline};
use crate::session::client::Shared;
pub use counted::StdTcp;

pub(crate) mod async_run;
pub mod counted;
pub(crate) mod inbox;
pub(crate) mod inline;
#[cfg(feature = "smol")]
pub mod smol;
pub mod tasks;

/// How a runtime connects a TCP socket: all a dial's TCP part ([`connect`]) asks of it.
pub trait Connect: Send + Sync + 'static {
    /// A connected TCP socket.
    type Tcp: Send + 'static;

    /// Connects to `address` within `limit`: `Ok(None)` when the limit passed first.
    fn connect_tcp(
        &self,
        address: SocketAddr,
        limit: Duration,
    ) -> impl Future<Output = io::Result<Option<Self::Tcp>>> + Send;

    /// Bounds what `tcp` reads: every raw byte it reads (below TLS: handshake, alerts, session
    /// tickets, records) counts, and a read that takes the count past `limit` bytes in all fails
    /// ([`counted::ReadLimitExceeded`]) before its bytes reach TLS. Without it a socket counts
    /// with no limit.
    fn limit_reads(tcp: &mut Self::Tcp, limit: u64);
}

/// What the shared network code asks of a runtime.
pub trait Runtime: Connect {
    /// A TLS client stream over [`Connect::Tcp`].
    type Tls: Send + 'static;

    /// Runs `f`, which may block (name resolution), where blocking is allowed; `Err` names why
    /// it could not run.
    fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> impl Future<Output = Result<T, String>> + Send;

    /// Runs a TLS client with `config` for `host` over `tcp` until `deadline`; a handshake still
    /// going at the deadline fails with [`DialDeadline::expired`].
    fn tls(
        &self,
        tcp: Self::Tcp,
        config: &Arc<ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> impl Future<Output = Result<Self::Tls, TransportError>> + Send;
}

/// A dialled socket: plain for `http`, TLS for `https`.
#[derive(Debug)]
pub enum Dialled<T, S> {
    /// `http`.
    Plain(T),
    /// `https`.
    Tls(S),
}

/// Connects to the first of `addresses` (vetted, in order) that accepts within its share of
/// `deadline` ([`DialDeadline::share`]): the TCP part of every dial, the MCP traffic's and the
/// authorization's, on every runtime.
pub async fn connect<R: Connect>(
    rt: &R,
    addresses: &[SocketAddr],
    deadline: &DialDeadline,
) -> Result<(SocketAddr, R::Tcp), TransportError> {
    let mut failures = Vec::new();
    for (i, &address) in addresses.iter().enumerate() {
        let Some(share) = deadline.share(Instant::now(), addresses.len() - i) else {
            break;
        };
        match rt.connect_tcp(address, share).await {
            Ok(Some(s)) => return Ok((address, s)),
            Ok(None) => failures.push(format!("{address}: timed out")),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                failures.push(format!("{address}: timed out"));
            }
            Err(e) => failures.push(format!("{address}: {e}")),
        }
    }
    Err(deadline.failed(Instant::now(), &failures))
}

/// Resolves and vets `host`:`port` once, on the runtime's blocking side: the first step of every
/// dial. Only the admitted addresses come back.
pub async fn vet<R: Runtime>(
    rt: &R,
    vetted: impl FnOnce() -> Result<Vec<SocketAddr>, TransportError> + Send + 'static,
) -> Result<Vec<SocketAddr>, TransportError> {
    rt.unblock(vetted).await.map_err(|message| TransportError {
        kind: TransportErrorKind::Resolve,
        message,
    })?
}

/// The one dial of the MCP traffic: resolves and vets the endpoint's host once, connects to the
/// admitted addresses in order ([`connect`]), shows the TCP socket to `publish` (false: the dial
/// was cancelled, `Ok(None)`), then for `https` runs TLS (SNI the host, ALPN `h2` first with
/// `h2`, the origin's own session store where the client built its configuration) within what
/// is left of the one dial deadline.
pub async fn dial<R: Runtime, S: Send + 'static>(
    rt: &R,
    shared: &Arc<Shared<S>>,
    endpoint: &Endpoint,
    h2: bool,
    publish: impl FnOnce(&R::Tcp) -> Result<bool, TransportError>,
) -> Result<Option<(SocketAddr, Dialled<R::Tcp, R::Tls>)>, TransportError> {
    let (host, port, guard) = (endpoint.host().to_owned(), endpoint.port(), shared.clone());
    let addresses = vet(rt, move || guard.vetted(&host, port)).await?;
    let deadline = DialDeadline::new(Instant::now(), shared.dial_timeout);
    let (address, tcp) = connect(rt, &addresses, &deadline).await?;
    if !publish(&tcp)? {
        return Ok(None);
    }
    if endpoint.scheme() == Scheme::Http {
        return Ok(Some((address, Dialled::Plain(tcp))));
    }
    deadline
        .left(Instant::now())
        .ok_or_else(|| deadline.expired())?;
    let config = match &shared.origin_tls {
        Some(origins) => origins.config(&endpoint.origin(), h2),
        None if h2 => shared.tls_h2.clone(),
        None => shared.tls.clone(),
    };
    let tls = rt.tls(tcp, &config, endpoint.host(), &deadline).await?;
    Ok(Some((address, Dialled::Tls(tls))))
}

/// [`dial`] of a socket no exchange owns (never cancelled).
pub async fn dial_socket<R: Runtime, S: Send + 'static>(
    rt: &R,
    shared: &Arc<Shared<S>>,
    endpoint: &Endpoint,
    h2: bool,
) -> Result<(SocketAddr, Dialled<R::Tcp, R::Tls>), TransportError> {
    dial(rt, shared, endpoint, h2, |_| Ok(true))
        .await?
        .ok_or_else(|| TransportError {
            kind: TransportErrorKind::Connect,
            message: "the dial was cancelled".into(),
        })
}

/// `std::net` sockets ([`StdTcp`]): every connect, handshake, read and write blocks the calling
/// thread, bounded by its limit or the socket's deadline ([`StdTcp::until`]); its futures are
/// ready when first polled ([`block_on`]). What
/// [`AuthHttp::send`](crate::auth::AuthHttp::send) runs its exchanges on.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdNet;

impl Connect for StdNet {
    type Tcp = StdTcp;

    fn connect_tcp(
        &self,
        address: SocketAddr,
        limit: Duration,
    ) -> impl Future<Output = io::Result<Option<StdTcp>>> + Send {
        let s = TcpStream::connect_timeout(&address, limit).map(|s| {
            let _ = s.set_nodelay(true);
            Some(StdTcp::new(s))
        });
        std::future::ready(s)
    }

    fn limit_reads(tcp: &mut StdTcp, limit: u64) {
        tcp.count_mut().set(limit);
    }
}

impl Runtime for StdNet {
    type Tls = rustls::StreamOwned<rustls::ClientConnection, StdTcp>;

    fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> impl Future<Output = Result<T, String>> + Send {
        std::future::ready(Ok(f()))
    }

    /// The handshake on the calling thread: each of its reads and writes ends by `deadline`
    /// ([`StdTcp::until`]), so the handshake does too, however the server trickles it.
    fn tls(
        &self,
        mut tcp: StdTcp,
        config: &Arc<ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> impl Future<Output = Result<Self::Tls, TransportError>> + Send {
        tcp.until(deadline.at());
        let handshake = || {
            let mut conn = rustls::ClientConnection::new(config.clone(), server_name(host)?)
                .map_err(|e| tls_error(e.to_string()))?;
            while conn.is_handshaking() {
                if let Err(e) = conn.complete_io(&mut tcp) {
                    if e.kind() == io::ErrorKind::TimedOut {
                        return Err(deadline.expired());
                    }
                    return Err(tls_error(e.to_string()));
                }
            }
            Ok(rustls::StreamOwned::new(conn, tcp))
        };
        std::future::ready(handshake())
    }
}

/// Runs `future` to its end on this thread. Meant for the futures of [`StdNet`], which are ready
/// when polled; a future that is pending is polled again after a short pause.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A runtime whose connects never answer: each takes its whole limit, which it records.
    struct Silent(Mutex<Vec<Duration>>);

    impl Connect for Silent {
        type Tcp = ();

        async fn connect_tcp(&self, _: SocketAddr, limit: Duration) -> io::Result<Option<()>> {
            self.0.lock().unwrap().push(limit);
            std::thread::sleep(limit);
            Ok(None)
        }

        fn limit_reads(_: &mut (), _: u64) {}
    }

    /// Three silent addresses share one 300 ms deadline: each is given about a third of what is
    /// left, the dial ends by the deadline and fails as out of time.
    #[test]
    fn silent_addresses_each_get_their_share_and_the_dial_ends_at_its_deadline() {
        let rt = Silent(Mutex::new(Vec::new()));
        let addresses: Vec<SocketAddr> = (1..=3)
            .map(|p| SocketAddr::from(([192, 0, 2, 1], p)))
            .collect();
        let start = Instant::now();
        let deadline = DialDeadline::new(start, Duration::from_millis(300));
        let e = block_on(connect(&rt, &addresses, &deadline)).unwrap_err();
        let took = start.elapsed();
        assert_eq!(e.kind, TransportErrorKind::Connect);
        assert!(
            e.message.contains("timed out after 300 ms"),
            "{}",
            e.message
        );
        assert!(took < Duration::from_millis(450), "{took:?}");
        let limits = rt.0.into_inner().unwrap();
        assert_eq!(limits.len(), 3, "{limits:?}");
        assert!(limits[0] <= Duration::from_millis(100), "{limits:?}");
        assert!(limits[2] >= Duration::from_millis(50), "{limits:?}");
    }
}
