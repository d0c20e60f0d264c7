//! The socket of an exchange, plain or TLS, its idle check, and the TCP socket below both,
//! which counts what it reads ([`Tcp`]).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use mcp_sansio_net::guard::dial::{still_idle, Peek};
use mcp_sansio_net::runtime::counted::ReadLimit;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A plain or TLS socket.
pub enum Stream {
    /// `http`.
    Plain(Tcp),
    /// `https`.
    Tls(Box<tokio_rustls::client::TlsStream<Tcp>>),
}

/// A tokio TCP socket that counts every raw byte it reads against its [`ReadLimit`], below TLS:
/// a read past the limit fails before its bytes go on
/// ([`Connect::limit_reads`](mcp_sansio_net::runtime::Connect::limit_reads)).
#[derive(Debug)]
pub struct Tcp {
    inner: TcpStream,
    count: ReadLimit,
}

impl Tcp {
    /// `inner`, counting with no limit.
    pub fn new(inner: TcpStream) -> Tcp {
        Tcp {
            inner,
            count: ReadLimit::new(),
        }
    }

    /// The read limit, to set it.
    pub fn count_mut(&mut self) -> &mut ReadLimit {
        &mut self.count
    }
}

impl AsyncRead for Tcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if let Err(e) = this.count.count(buf.filled().len() - before) {
            // Past the limit: the read's bytes are not handed on (as on smol).
            buf.set_filled(before);
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Tcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// What a [`Stream`] reads and writes through, plain or TLS.
pub(crate) trait Io: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

impl Stream {
    /// The socket to read and write.
    pub(crate) fn io(&mut self) -> &mut dyn Io {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.as_mut(),
        }
    }

    /// Whether the TLS handshake negotiated HTTP/2 (ALPN `h2`); never for a plain socket.
    pub(crate) fn is_h2(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(s) => mcp_sansio_net::guard::is_h2(s.get_ref().1.alpn_protocol()),
        }
    }

    /// Whether a pooled socket may serve a new request ([`still_idle`]).
    pub(crate) fn is_idle(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let (tcp, tls, buffered) = match self {
            Stream::Plain(s) => (&s.inner, false, false),
            Stream::Tls(s) => {
                let (tcp, conn) = s.get_mut();
                let buffered = !matches!(
                    io::Read::read(&mut conn.reader(), &mut byte),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock
                );
                (&tcp.inner, true, buffered)
            }
        };
        let mut buf = ReadBuf::new(&mut byte);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let peek = match tcp.poll_peek(&mut cx, &mut buf) {
            Poll::Pending => Peek::Quiet,
            Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => Peek::Closed,
            Poll::Ready(Ok(_)) => Peek::Bytes,
        };
        still_idle(tls, buffered, peek)
    }
}
