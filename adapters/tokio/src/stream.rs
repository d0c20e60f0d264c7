//! The socket of an exchange, plain or TLS, and its idle check.

use std::io;
use std::task::{Context, Poll};

use mcp_sansio_net::guard::dial::{still_idle, Peek};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A plain or TLS socket.
pub enum Stream {
    /// `http`.
    Plain(TcpStream),
    /// `https`.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
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
