//! The socket of an exchange, plain or TLS, and its idle check.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_sansio_net::dial::{still_idle, Peek};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A plain or TLS socket.
pub enum Stream {
    /// `http`.
    Plain(TcpStream),
    /// `https`.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Stream {
    /// Whether the TLS handshake negotiated HTTP/2 (ALPN `h2`); never for a plain socket.
    pub(crate) fn is_h2(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(s) => mcp_sansio_net::tls::is_h2(s.get_ref().1.alpn_protocol()),
        }
    }

    /// Whether a pooled socket may serve a new request ([`still_idle`]).
    pub(crate) fn is_idle(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let (tcp, tls, buffered) = match self {
            Stream::Plain(s) => (&*s, false, false),
            Stream::Tls(s) => {
                let (tcp, conn) = s.get_mut();
                let buffered = !matches!(
                    io::Read::read(&mut conn.reader(), &mut byte),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock
                );
                (&*tcp, true, buffered)
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

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
