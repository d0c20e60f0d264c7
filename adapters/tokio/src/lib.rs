//! The tokio adapter of mcp-sansio: an MCP client for the Streamable HTTP transport, for servers
//! that are hostile until their answers are checked.
//!
//! Connect, list the tools, call one, close (the same program on threads:
//! `mcp-sansio-blocking`; on smol: the `mcp-sansio-smol-example` crate of the repository):
//!
//! ```no_run
//! use mcp_sansio::{Config, Error};
//! use mcp_sansio_tokio::Client;
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Error> {
//!     let client = Client::new();
//!     let url = "https://mcp.example.com/mcp";
//!     let mut session =
//!         client.connect(Config::new(url)?).await?;
//!     let catalog = session.list_tools().await?;
//!     let result = session.call_tool("echo", br#"{"text":"hi"}"#).await?;
//!     println!("{} tools", catalog.tools.len());
//!     println!("tool error: {}", result.is_error);
//!     session.close().await
//! }
//! ```
//!
//! The protocol lives in the sans-IO core ([`mcp_sansio::Connection`]): negotiation, requests,
//! every budget and every deadline; [`mcp_sansio_net`]'s session driver runs it (recording, the
//! clock, era hints, how an operation ends, which socket goes back to the pool), the same for
//! this adapter and the blocking one. This crate moves the bytes. For each request the core emits it
//! takes an idle keep-alive socket of the same origin from the client's pool, or dials a new one
//! through the network guard of [`mcp_sansio_net`]: the host is resolved once (on tokio's blocking
//! pool), every address is judged by the [`AddressPolicy`], and only admitted addresses are
//! dialled, in order, within one dial deadline that covers every address and TLS. A refused address never
//! sees a connection attempt. TLS is rustls with the ring provider, SNI set to the endpoint's host
//! and ALPN `h2` then `http/1.1`. No proxy variable is read and no redirect is followed.
//!
//! HTTP/2 (one shared connection per origin), the errors, era hints and the catalog cache are
//! the same on every runtime: see [`mcp_sansio_net::Client`].
//!
//! # Sockets
//!
//! One tokio task serves one exchange, reading only when the core has taken the previous bytes;
//! a session's only exchange on an idle pooled socket runs inside the session's own future. A
//! reusable socket goes back to the client's pool as soon as the core says so, any other is
//! closed; a [`Session`] that is dropped aborts its tasks, which closes their sockets. The
//! exchanges are written once for every async runtime ([`mcp_sansio_net::runtime::tasks`]).
//!
//! # Tracing
//!
//! With the feature `tracing` (of this crate, forwarded to [`mcp_sansio_net`]), every operation
//! is a `tracing` span (`connect`, `list`, `call`, `close`) with the origin, era, protocol and
//! HTTP versions, bytes read, pages, outcome and the budget that ended it; every HTTP/1.1
//! exchange a span inside it; retries, re-negotiations, resumptions, refusals and authorization
//! steps are events. No token, code, verifier, tool argument or result is ever a field
//! ([`mcp_sansio_net::trace`] lists them all). Route them to any subscriber: the example
//! `examples/tracing.rs` prints them with `tracing-subscriber`'s formatter on stderr, filtered
//! by `RUST_LOG` (`cargo run -p mcp-sansio-tokio --features tracing --example tracing -- URL`).
//!
//! # Metrics
//!
//! With the feature `metrics` (forwarded to [`mcp_sansio_net`]), sessions record
//! OpenTelemetry's `mcp.client.operation.duration` and `mcp.client.session.duration` and the
//! counts of budget hits, errors, bytes read, requests and socket reuse through the global meter
//! provider ([`mcp_sansio_net::metrics`] lists them). The example `examples/otlp` exports them,
//! with the spans, over OTLP/HTTP
//! (`cargo run -p mcp-sansio-tokio --features tracing,metrics --example otlp -- URL`).
//!
//! # Runtime and cancellation
//!
//! Sessions run on the tokio runtime they are used in (any flavour, with I/O and time
//! enabled): exchange tasks are spawned on it and name resolution runs on its blocking pool.
//! Operations take `&mut self` and run one at a time. Every operation is bounded by the core's
//! time budgets, so wrapping one in a timeout is not needed; a future that is dropped before it
//! completes leaves its operation unfinished in the core, and the session can then only be closed
//! (other operations fail as a misuse).
//!
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::TransportError;
use mcp_sansio_net::guard::dial::{server_name, tls_error, DialDeadline};
use mcp_sansio_net::runtime::tasks::{AsyncNet, IoStep};
use mcp_sansio_net::runtime::{Connect, Dialled, Runtime};
pub use mcp_sansio_net::{
    read_ca_certificates, AddressPolicy, CaCertError, CallObserver, PoolLimits, Resolve,
    StaticResolver, SystemResolver,
};
pub use mcp_sansio_transcript::{TranscriptFile, TranscriptSink};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

pub mod auth;
pub use auth::AuthSession;
mod stream;
use stream::Stream;
pub use stream::Tcp;

/// An MCP client on tokio. Cheap to clone: clones share the address policy, resolver, TLS
/// configuration, idle-socket pool, HTTP/2 connections and the era hints learnt per server and
/// authorization context.
pub type Client = mcp_sansio_net::Client<Tokio>;

/// Builds a [`Client`]; the same builder in every adapter.
pub type ClientBuilder = mcp_sansio_net::ClientBuilder<Client>;

/// A negotiated connection to one MCP server on tokio. Operations run one at a time.
pub type Session = mcp_sansio_net::Session<Tokio>;

/// The tokio runtime of the shared network code ([`mcp_sansio_net::runtime`],
/// [`mcp_sansio_net::runtime::tasks`]): name resolution on the blocking pool, tokio sockets and tasks,
/// tokio-rustls.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tokio;

impl Connect for Tokio {
    type Tcp = Tcp;

    async fn connect_tcp(&self, address: SocketAddr, limit: Duration) -> io::Result<Option<Tcp>> {
        match tokio::time::timeout(limit, TcpStream::connect(address)).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                Ok(Some(Tcp::new(s)))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(None),
        }
    }

    fn limit_reads(tcp: &mut Tcp, limit: u64) {
        tcp.count_mut().set(limit);
    }
}

impl Runtime for Tokio {
    type Tls = tokio_rustls::client::TlsStream<Tcp>;

    async fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| e.to_string())
    }

    async fn tls(
        &self,
        tcp: Tcp,
        config: &Arc<rustls::ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> Result<Self::Tls, TransportError> {
        let name = server_name(host)?;
        let connector = tokio_rustls::TlsConnector::from(config.clone());
        match tokio::time::timeout_at(deadline.at().into(), connector.connect(name, tcp)).await {
            Ok(Ok(tls)) => Ok(tls),
            Ok(Err(e)) => Err(tls_error(e.to_string())),
            Err(_) => Err(deadline.expired()),
        }
    }
}

/// A tokio task that is aborted when dropped, unless detached.
#[doc(hidden)]
pub struct TokioTask(Option<JoinHandle<()>>);

impl Drop for TokioTask {
    fn drop(&mut self) {
        if let Some(handle) = &self.0 {
            handle.abort();
        }
    }
}

impl AsyncNet for Tokio {
    type Stream = Stream;
    type Spawner = tokio::runtime::Handle;
    type Task = TokioTask;

    fn stream(dialled: Dialled<Tcp, Self::Tls>) -> Stream {
        match dialled {
            Dialled::Plain(tcp) => Stream::Plain(tcp),
            Dialled::Tls(tls) => Stream::Tls(Box::new(tls)),
        }
    }

    fn is_h2(stream: &Stream) -> bool {
        stream.is_h2()
    }

    fn is_idle(stream: &mut Stream) -> bool {
        stream.is_idle()
    }

    async fn io(stream: &mut Stream, step: IoStep<'_>) -> io::Result<usize> {
        let io = stream.io();
        match step {
            IoStep::Read(buf) => io.read_buf(buf).await,
            IoStep::Write(bytes) => io.write(bytes).await,
            IoStep::Flush => io.flush().await.map(|()| 0),
            IoStep::Shutdown => io.shutdown().await.map(|()| 0),
        }
    }

    fn spawner() -> tokio::runtime::Handle {
        tokio::runtime::Handle::current()
    }

    fn spawn(
        on: &tokio::runtime::Handle,
        future: impl Future<Output = ()> + Send + 'static,
    ) -> TokioTask {
        TokioTask(Some(on.spawn(future)))
    }

    fn detach(mut task: TokioTask) {
        task.0 = None;
    }

    fn sleep_until(at: Instant) -> impl Future<Output = ()> + Send {
        tokio::time::sleep_until(at.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::{Config, ExchangeId, Transmit};
    use mcp_sansio_net::{AsyncIo, Io, Report, Wake};
    use std::io::{Read, Write};
    use std::time::Instant as StdInstant;

    type Tasks = mcp_sansio_net::Tasks<Tokio>;

    fn tasks(client: &Client, url: &str) -> (Tasks, String) {
        let config = Config::new(url).unwrap();
        let origin = config.endpoint.origin();
        let io = Tasks::new(client.shared().clone(), &config.endpoint, &origin);
        (io, origin)
    }

    /// Exchange `id`'s transmit and `bytes` written for it (the test's socket checks bytes, not
    /// the request).
    fn transmit(id: u64, bytes: &[u8], fresh_socket: bool) -> (Transmit, Vec<u8>) {
        let request = mcp_sansio::wire::Request {
            method: mcp_sansio::wire::Method::Post,
            authority: "127.0.0.1".into(),
            path: "/".into(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        let t = Transmit::new(ExchangeId(id), request, fresh_socket);
        (t, bytes.to_vec())
    }

    async fn expect_bytes(io: &mut Tasks, id: u64, want: &[u8]) {
        let until = StdInstant::now() + Duration::from_secs(10);
        match io.next(Some(until)).await {
            Wake::Report(got, Report::Bytes(b)) => {
                assert_eq!(got, ExchangeId(id));
                assert_eq!(b, want);
            }
            other => panic!("expected bytes of exchange {id}, got {other:?}"),
        }
    }

    fn client() -> Client {
        Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .build()
    }

    /// The inline exchange moves to a task when a second one starts, parked where it was: it
    /// reads on when told, and its socket goes back to the pool when it finishes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_inline_exchange_moves_to_a_task_when_another_starts() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = client();
        let (mut io, origin) = tasks(&client, &format!("http://{addr}/mcp"));
        let pooled = std::net::TcpStream::connect(addr).unwrap();
        let (mut first, _) = listener.accept().unwrap();
        pooled.set_nonblocking(true).unwrap();
        let pooled = TcpStream::from_std(pooled).unwrap();
        client
            .shared()
            .park(&origin, addr, Stream::Plain(Tcp::new(pooled)));
        let server = std::thread::spawn(move || {
            let mut req = [0u8; 4];
            first.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"one!");
            first.write_all(b"A").unwrap();
            let (mut second, _) = listener.accept().unwrap();
            second.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"two!");
            second.write_all(b"B").unwrap();
            first.write_all(b"C").unwrap();
            let mut rest = [0u8; 1];
            let _ = second.read(&mut rest);
            first
        });

        let (t, bytes) = transmit(1, b"one!", false);
        io.start(t, bytes).unwrap();
        io.launch().await;
        assert!(
            io.has_inline(),
            "a pooled socket, no other exchange: inline"
        );
        assert!(io.task_count() == 0);
        expect_bytes(&mut io, 1, b"A").await;

        let (t, bytes) = transmit(2, b"two!", true);
        io.start(t, bytes).unwrap();
        io.launch().await;
        assert!(!io.has_inline(), "moved to a task");
        assert_eq!(io.task_count(), 2);
        expect_bytes(&mut io, 2, b"B").await;
        io.read_on(ExchangeId(1));
        expect_bytes(&mut io, 1, b"C").await;

        io.finish(ExchangeId(1), true);
        assert_eq!(
            client.idle_sockets(),
            1,
            "the moved exchange's socket is pooled"
        );
        io.abandon(ExchangeId(2));
        let _first = tokio::task::spawn_blocking(move || server.join().unwrap())
            .await
            .unwrap();
    }

    /// An inline exchange whose server never answers ends its wait at the deadline, and its
    /// socket is not pooled.
    #[tokio::test]
    async fn an_inline_exchange_waits_no_longer_than_asked() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = client();
        let (mut io, origin) = tasks(&client, &format!("http://{addr}/mcp"));
        let pooled = std::net::TcpStream::connect(addr).unwrap();
        let (_silent, _) = listener.accept().unwrap();
        pooled.set_nonblocking(true).unwrap();
        let pooled = TcpStream::from_std(pooled).unwrap();
        client
            .shared()
            .park(&origin, addr, Stream::Plain(Tcp::new(pooled)));
        let (t, bytes) = transmit(1, b"one!", false);
        io.start(t, bytes).unwrap();
        io.launch().await;
        assert!(io.has_inline());
        let start = StdInstant::now();
        let wake = io.next(Some(start + Duration::from_millis(200))).await;
        assert!(matches!(wake, Wake::Timeout), "{wake:?}");
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        io.finish(ExchangeId(1), true);
        assert_eq!(client.idle_sockets(), 0);
    }
}
