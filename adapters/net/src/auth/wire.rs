//! One authorization exchange as bytes on a socket, without the socket ([`AuthWire`]).
//!
//! rustls is driven by hand (`read_tls`, `process_new_packets`, `write_tls`), never through
//! `complete_io` or a `Stream`, which loop inside one call for as long as the server keeps a
//! record incomplete or sends records without plaintext: every socket operation is the caller's,
//! so the caller checks its deadline around each one, and every raw byte read — handshake, alerts,
//! tickets and records alike — is counted against the exchange's byte limit before it reaches
//! rustls. The plaintext is decoded by the core's HTTP/1.1 socket ([`AuthRead`]) under the
//! exchange's own byte ledger.
//!
//! [`AuthHttp::send`](crate::auth::AuthHttp::send) runs an [`AuthWire`] on a `std::net` socket
//! with [`run_blocking`]; the adapters run the same [`AuthWire`] on their runtime's sockets
//! ([`crate::auth::async_auth::send`]).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use mcp_sansio::auth::AuthResponse;
use mcp_sansio::{TransportError, TransportErrorKind};
use rustls::{ClientConfig, ClientConnection};

use crate::auth::read::{plaintext_limit, AuthRead};
use crate::guard::dial::{io_error, server_name, tls_error};

/// Raw bytes allowed on top of the plaintext limit of an `https` exchange: the server's handshake
/// (certificate chain included), session tickets and record framing.
pub const TLS_ALLOWANCE: usize = 64 * 1024;

/// Bytes read from a socket at a time.
pub const WIRE_READ: usize = 16 * 1024;

/// One HTTP/1.1 exchange of an authorization as bytes in and out: see the [module docs](self).
pub struct AuthWire {
    tls: Option<Box<ClientConnection>>,
    /// Raw bytes to write (the request, or TLS records).
    out: Vec<u8>,
    read: AuthRead,
    /// Raw bytes read so far and the most allowed.
    raw_read: u64,
    raw_limit: u64,
    /// Plaintext read, not yet decoded.
    plain: Vec<u8>,
}

impl std::fmt::Debug for AuthWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthWire")
            .field("tls", &self.tls.is_some())
            .field("raw_read", &self.raw_read)
            .field("raw_limit", &self.raw_limit)
            .finish_non_exhaustive()
    }
}

impl AuthWire {
    /// An exchange sending `request` (an encoded HTTP/1.1 request) in the clear.
    pub fn plain(request: Vec<u8>, max_body: usize) -> AuthWire {
        AuthWire::with(None, request, max_body)
    }

    /// An exchange sending `request` over TLS to `host` with `config`: the handshake's records
    /// come first, the request follows once it is done.
    pub fn tls(
        config: &Arc<ClientConfig>,
        host: &str,
        request: Vec<u8>,
        max_body: usize,
    ) -> Result<AuthWire, TransportError> {
        let mut conn = ClientConnection::new(config.clone(), server_name(host)?)
            .map_err(|e| tls_error(e.to_string()))?;
        // Buffered by rustls until the handshake is done.
        conn.writer()
            .write_all(&request)
            .map_err(|e| tls_error(e.to_string()))?;
        let mut wire = AuthWire::with(Some(Box::new(conn)), Vec::new(), max_body);
        wire.fill_out()?;
        Ok(wire)
    }

    fn with(tls: Option<Box<ClientConnection>>, out: Vec<u8>, max_body: usize) -> AuthWire {
        let plaintext = plaintext_limit(max_body);
        let raw = if tls.is_some() {
            plaintext
                .saturating_add(plaintext / 16)
                .saturating_add(TLS_ALLOWANCE as u64)
        } else {
            plaintext
        };
        AuthWire {
            tls,
            out,
            read: AuthRead::new(max_body),
            raw_read: 0,
            raw_limit: raw,
            plain: Vec::new(),
        }
    }

    /// The most raw bytes this exchange reads.
    pub fn raw_limit(&self) -> u64 {
        self.raw_limit
    }

    /// Raw bytes waiting to be written (empty: read).
    pub fn outgoing(&self) -> &[u8] {
        &self.out
    }

    /// `n` bytes of [`outgoing`](Self::outgoing) were written.
    pub fn sent(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
    }

    /// Whether the TLS handshake is still going on (never for a plain exchange).
    pub fn handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|c| c.is_handshaking())
    }

    /// `raw` bytes were read from the socket: the response once it is complete (or its body
    /// passed the limit by one byte: the core refuses the excess), else `None` (read on).
    pub fn incoming(&mut self, raw: &[u8]) -> Result<Option<AuthResponse>, TransportError> {
        self.raw_read = self.raw_read.saturating_add(raw.len() as u64);
        if self.raw_read > self.raw_limit {
            return Err(TransportError {
                kind: TransportErrorKind::Io,
                message: format!(
                    "the authorization response passed its limit of {} bytes read from the \
                     socket (TLS records included)",
                    self.raw_limit
                ),
            });
        }
        match &mut self.tls {
            None => self.plain.extend_from_slice(raw),
            Some(conn) => {
                let mut rest = raw;
                while !rest.is_empty() {
                    let n = conn
                        .read_tls(&mut rest)
                        .map_err(|e| tls_error(e.to_string()))?;
                    Self::process(conn, &mut self.plain)?;
                    if n == 0 {
                        break;
                    }
                }
                self.fill_out()?;
            }
        }
        self.decode()
    }

    /// The server closed the socket: the response if it is complete (or ends at the close).
    pub fn closed(&mut self) -> Result<AuthResponse, TransportError> {
        if let Some(conn) = &mut self.tls {
            let _ = conn.read_tls(&mut &[][..]);
            Self::process(conn, &mut self.plain)?;
            if conn.is_handshaking() {
                return Err(tls_error(
                    "the server closed the socket during the handshake",
                ));
            }
        }
        if let Some(r) = self.decode()? {
            return Ok(r);
        }
        self.read.eof()
    }

    /// Hands the records read to rustls and moves the plaintext they hold to `plain`.
    fn process(conn: &mut ClientConnection, plain: &mut Vec<u8>) -> Result<(), TransportError> {
        conn.process_new_packets()
            .map_err(|e| tls_error(e.to_string()))?;
        let mut buf = [0u8; 4096];
        loop {
            match conn.reader().read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => plain.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                // The server closed without close_notify: the decoder judges the end.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(io_error(&e)),
            }
        }
    }

    /// Moves what rustls has to send to [`outgoing`](Self::outgoing).
    fn fill_out(&mut self) -> Result<(), TransportError> {
        if let Some(conn) = &mut self.tls {
            while conn.wants_write() {
                conn.write_tls(&mut self.out)
                    .map_err(|e| tls_error(e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Decodes the plaintext read so far.
    fn decode(&mut self) -> Result<Option<AuthResponse>, TransportError> {
        let plain = std::mem::take(&mut self.plain);
        self.read.read(&plain)
    }
}

/// Whether an I/O error is a socket timeout (the deadline ran out during the operation).
fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Runs `wire` on a connected blocking socket until its response, each write and read bounded by
/// what is left before `deadline` (checked before every one); `expired` is the error once it
/// passed.
pub fn run_blocking(
    wire: &mut AuthWire,
    tcp: &mut TcpStream,
    deadline: Instant,
    expired: impl Fn() -> TransportError,
) -> Result<AuthResponse, TransportError> {
    let left = || {
        Some(deadline.saturating_duration_since(Instant::now()))
            .filter(|d| !d.is_zero())
            .ok_or_else(&expired)
    };
    let mut buf = vec![0u8; WIRE_READ];
    loop {
        while !wire.outgoing().is_empty() {
            tcp.set_write_timeout(Some(left()?))
                .map_err(|e| io_error(&e))?;
            match tcp.write(wire.outgoing()) {
                Ok(0) => return Err(io_error(&io::ErrorKind::WriteZero.into())),
                Ok(n) => wire.sent(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(expired()),
                Err(e) => return Err(io_error(&e)),
            }
        }
        tcp.set_read_timeout(Some(left()?))
            .map_err(|e| io_error(&e))?;
        match tcp.read(&mut buf) {
            Ok(0) => return wire.closed(),
            Ok(n) => {
                if let Some(r) = wire.incoming(&buf[..n])? {
                    return Ok(r);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) => return Err(expired()),
            Err(e) => return Err(io_error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_response_split_anywhere_decodes_the_same() {
        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
        for split in 0..answer.len() {
            let mut w = AuthWire::plain(b"GET / HTTP/1.1\r\n\r\n".to_vec(), 100);
            let first = w.incoming(&answer[..split]).unwrap();
            let r = match first {
                Some(r) => r,
                None => w.incoming(&answer[split..]).unwrap().unwrap(),
            };
            assert_eq!(r.status, 200);
            assert_eq!(r.body, b"hello");
        }
    }

    #[test]
    fn raw_bytes_past_the_limit_are_refused() {
        let mut w = AuthWire::plain(Vec::new(), 10);
        let limit = w.raw_limit() as usize;
        assert_eq!(limit, 11 + crate::auth::read::HEAD_ALLOWANCE);
        let junk = vec![b'x'; limit + 1];
        assert!(w.incoming(&junk).is_err());
    }

    #[test]
    fn a_body_past_its_limit_is_cut_one_byte_past_it() {
        let mut w = AuthWire::plain(Vec::new(), 3);
        let r = w
            .incoming(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789")
            .unwrap()
            .unwrap();
        assert_eq!(r.body, b"0123");
    }

    #[test]
    fn a_close_ends_a_body_without_length() {
        let mut w = AuthWire::plain(Vec::new(), 100);
        assert!(w
            .incoming(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nab")
            .unwrap()
            .is_none());
        let r = w.closed().unwrap();
        assert_eq!(r.body, b"ab");
    }
}
