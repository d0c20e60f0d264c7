//! A third runtime for the [`mcp_sansio`] core: the shared session driver and network guard of
//! [`mcp_sansio_net`] on [`smol`].
//!
//! Everything that is not "how bytes move" is shared with the tokio and the blocking adapters:
//! the [`SessionDriver`](mcp_sansio_net::SessionDriver) runs the core (recording, the clock, era hints, how an operation ends,
//! which socket goes back to the pool), the [`ClientBuilder`](mcp_sansio_net::ClientBuilder) and the address policy decide which
//! addresses may be dialled, and [`mcp_sansio_net::dial`] is the dial rule (one deadline across
//! every admitted address and the TLS handshake, the TLS server name, the idle check of a pooled
//! socket), and [`mcp_sansio_net::tasks`] moves the bytes of every async runtime (one task per
//! exchange, reading once each time the session asks; the inline exchange; the HTTP/2 sockets).
//! This crate only says how smol reads, writes, spawns and sleeps ([`AsyncNet`]), on smol's
//! [`Async<TcpStream>`](smol::Async) with TLS by `futures-rustls`.
//!
//! HTTP/2 takes the shared route ([`mcp_sansio_net::route::session_driver`]): when TLS negotiates
//! `h2` by ALPN, or for an `http` endpoint with
//! [`h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge), every session of a
//! [`Client`] to the origin is a work item of its one shared connection
//! ([`SharedH2`](mcp_sansio_net::SharedH2)), whose socket one smol task serves (writes in
//! order, each read fed to the connection). [`Session::http_version`](mcp_sansio_net::Session::http_version) says which.
//!
//! ```no_run
//! use mcp_sansio::Config;
//! use mcp_sansio_smol_example::{AddressPolicy, Client};
//!
//! smol::block_on(async {
//!     let client = Client::builder()
//!         .policy(AddressPolicy::strict().allow_loopback(true))
//!         .build();
//!     let mut session = client.connect(Config::new("http://127.0.0.1:8080/mcp")?).await?;
//!     for tool in &session.list_tools().await?.tools {
//!         println!("{}", tool.name());
//!     }
//!     let result = session.call_tool("echo", br#"{"text":"hi"}"#).await?;
//!     println!("error: {}", result.is_error);
//!     session.close().await
//! })?;
//! # Ok::<(), mcp_sansio::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_rustls::client::TlsStream;
use mcp_sansio::TransportError;
use mcp_sansio_net::dial::{server_name, still_idle, tls_error, DialDeadline, Peek};
use mcp_sansio_net::runtime::{Dialled, Runtime};
use mcp_sansio_net::tasks::within;
use mcp_sansio_net::AsyncNet;
pub use mcp_sansio_net::{AddressPolicy, CallObserver, Resolve, StaticResolver, SystemResolver};
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::{Async, Task, Timer};

/// An MCP client on smol.
pub type Client = mcp_sansio_net::Client<SmolRuntime>;

/// A connected MCP session on smol. Dropping it cancels its exchange tasks, which closes their
/// sockets; [`Session::close`](mcp_sansio_net::Session::close) also ends a legacy session on the
/// server.
pub type Session = mcp_sansio_net::Session<SmolRuntime>;

/// The smol runtime of the shared network code: smol's reactor, tasks and timers.
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolRuntime;

impl Runtime for SmolRuntime {
    type Tcp = Async<TcpStream>;
    type Tls = TlsStream<Async<TcpStream>>;

    async fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        Ok(smol::unblock(f).await)
    }

    async fn connect_tcp(
        &self,
        address: SocketAddr,
        limit: Duration,
    ) -> io::Result<Option<Self::Tcp>> {
        let connect = Async::<TcpStream>::connect(address);
        let tcp = within::<Self, _>(limit, connect).await.transpose()?;
        if let Some(tcp) = &tcp {
            let _ = tcp.get_ref().set_nodelay(true);
        }
        Ok(tcp)
    }

    async fn tls(
        &self,
        tcp: Self::Tcp,
        config: &Arc<rustls::ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> Result<Self::Tls, TransportError> {
        let name = server_name(host)?;
        let left = deadline
            .left(Instant::now())
            .ok_or_else(|| deadline.expired())?;
        let connector = futures_rustls::TlsConnector::from(config.clone());
        match within::<Self, _>(left, connector.connect(name, tcp)).await {
            Some(Ok(tls)) => Ok(tls),
            Some(Err(e)) => Err(tls_error(e.to_string())),
            None => Err(deadline.expired()),
        }
    }
}

impl AsyncNet for SmolRuntime {
    type Stream = Stream;
    type Spawner = ();
    type Task = Task<()>;

    fn stream(dialled: Dialled<Self::Tcp, Self::Tls>) -> Stream {
        match dialled {
            Dialled::Plain(tcp) => Stream::Plain(tcp),
            Dialled::Tls(tls) => Stream::Tls(Box::new(tls)),
        }
    }

    fn is_h2(stream: &Stream) -> bool {
        match stream {
            Stream::Plain(_) => false,
            Stream::Tls(s) => mcp_sansio_net::tls::is_h2(s.get_ref().1.alpn_protocol()),
        }
    }

    /// The shared rule ([`still_idle`]); the socket is non-blocking, so a peek with nothing
    /// waiting says so at once.
    fn is_idle(stream: &mut Stream) -> bool {
        let mut byte = [0u8; 1];
        let (tcp, tls, buffered) = match stream {
            Stream::Plain(s) => (s.get_ref(), false, false),
            Stream::Tls(s) => {
                let (tcp, conn) = s.get_mut();
                let read = io::Read::read(&mut conn.reader(), &mut byte);
                let buffered = !matches!(read, Err(e) if e.kind() == io::ErrorKind::WouldBlock);
                (tcp.get_ref(), true, buffered)
            }
        };
        let peek = match tcp.peek(&mut byte) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Peek::Quiet,
            Ok(0) | Err(_) => Peek::Closed,
            Ok(_) => Peek::Bytes,
        };
        still_idle(tls, buffered, peek)
    }

    async fn read(stream: &mut Stream, buf: &mut Vec<u8>) -> io::Result<usize> {
        let start = buf.len();
        buf.resize(buf.capacity().max(start + 1), 0);
        let read = stream.read(&mut buf[start..]).await;
        buf.truncate(start + *read.as_ref().unwrap_or(&0));
        read
    }

    fn write<'a>(
        stream: &'a mut Stream,
        bytes: &'a [u8],
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a {
        stream.write(bytes)
    }

    fn flush(stream: &mut Stream) -> impl Future<Output = io::Result<()>> + Send + '_ {
        stream.flush()
    }

    async fn shutdown(stream: &mut Stream) {
        let _ = stream.close().await;
    }

    fn spawner() {}

    fn spawn((): &(), future: impl Future<Output = ()> + Send + 'static) -> Task<()> {
        smol::spawn(future)
    }

    fn detach(task: Task<()>) {
        task.detach();
    }

    async fn sleep_until(at: Instant) {
        Timer::at(at).await;
    }
}

/// A plain or TLS socket on smol's reactor.
pub enum Stream {
    /// `http`.
    Plain(Async<TcpStream>),
    /// `https`.
    Tls(Box<TlsStream<Async<TcpStream>>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, b),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, b),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, b),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, b),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_close(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_close(cx),
        }
    }
}
