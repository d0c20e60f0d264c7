//! The smol runtime of the shared network code ([`runtime`](crate::runtime),
//! [`tasks`](crate::tasks)): smol's reactor, tasks and timers, TLS by `futures-rustls`.
//!
//! The smol adapter (the repository's `mcp-sansio-smol-example`) runs its sessions on it, and
//! the blocking adapter too: each of its operations is a [`block_on`] of the same future on the
//! calling thread, and the tasks of its exchanges and HTTP/2 sockets run on smol's executor.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_rustls::client::TlsStream;
use mcp_sansio::TransportError;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::{Async, Task, Timer};

use crate::dial::{server_name, still_idle, tls_error, DialDeadline, Peek};
use crate::runtime::{Dialled, Runtime};
use crate::tasks::{within, AsyncNet, IoStep};
#[cfg(unix)]
use rustix::buffer::spare_capacity;

pub use smol::block_on;

/// The smol runtime of the shared network code: smol's reactor, tasks and timers.
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolNet;

impl Runtime for SmolNet {
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

impl AsyncNet for SmolNet {
    type Stream = SmolStream;
    type Spawner = ();
    type Task = Task<()>;

    fn stream(dialled: Dialled<Self::Tcp, Self::Tls>) -> SmolStream {
        match dialled {
            Dialled::Plain(tcp) => SmolStream::Plain(tcp),
            Dialled::Tls(tls) => SmolStream::Tls(Box::new(tls)),
        }
    }

    fn is_h2(stream: &SmolStream) -> bool {
        match stream {
            SmolStream::Plain(_) => false,
            SmolStream::Tls(s) => crate::tls::is_h2(s.get_ref().1.alpn_protocol()),
        }
    }

    /// The shared rule ([`still_idle`]); the socket is non-blocking, so a peek with nothing
    /// waiting says so at once.
    fn is_idle(stream: &mut SmolStream) -> bool {
        let mut byte = [0u8; 1];
        let (tcp, tls, buffered) = match stream {
            SmolStream::Plain(s) => (s.get_ref(), false, false),
            SmolStream::Tls(s) => {
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

    async fn io(stream: &mut SmolStream, mut step: IoStep<'_>) -> io::Result<usize> {
        // A plain socket reads straight into the buffer's spare capacity: not zeroed first.
        #[cfg(unix)]
        if let (SmolStream::Plain(tcp), IoStep::Read(buf)) = (&*stream, &mut step) {
            let read = |tcp: &TcpStream| Ok(rustix::io::read(tcp, spare_capacity(&mut **buf))?);
            return tcp.read_with(read).await;
        }
        let io: &mut dyn Io = match stream {
            SmolStream::Plain(s) => s,
            SmolStream::Tls(s) => s.as_mut(),
        };
        match step {
            IoStep::Read(buf) => {
                let start = buf.len();
                buf.resize(buf.capacity().max(start + 1), 0);
                let read = io.read(&mut buf[start..]).await;
                buf.truncate(start + *read.as_ref().unwrap_or(&0));
                read
            }
            IoStep::Write(bytes) => io.write(bytes).await,
            IoStep::Flush => io.flush().await.map(|()| 0),
            IoStep::Shutdown => io.close().await.map(|()| 0),
        }
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
pub enum SmolStream {
    /// `http`.
    Plain(Async<TcpStream>),
    /// `https`.
    Tls(Box<TlsStream<Async<TcpStream>>>),
}

/// What a [`SmolStream`] reads and writes through, plain or TLS.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
