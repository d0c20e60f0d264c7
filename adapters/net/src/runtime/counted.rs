//! Raw bytes a socket reads, counted below TLS ([`ReadLimit`]), and the `std::net` socket of
//! [`StdNet`](crate::runtime::StdNet) ([`StdTcp`]).
//!
//! Every runtime's TCP socket ([`Connect::Tcp`](crate::runtime::Connect::Tcp)) counts what it
//! reads, whatever the wire above it: a plain socket's response bytes, and under TLS every raw
//! byte of the handshake, alerts, session tickets and records, counted before the TLS layer
//! sees it. A socket is unbounded until it is given a limit
//! ([`Connect::limit_reads`](crate::runtime::Connect::limit_reads)); from then on a read that
//! takes the count past the limit fails with [`ReadLimitExceeded`] and its bytes are not handed
//! on.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// The raw bytes one socket read, against the most it may read: see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimit {
    read: u64,
    limit: u64,
}

impl Default for ReadLimit {
    fn default() -> Self {
        ReadLimit {
            read: 0,
            limit: u64::MAX,
        }
    }
}

/// A socket read past its [`ReadLimit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the socket read more than its limit of {limit} bytes (TLS records included)")]
pub struct ReadLimitExceeded {
    /// The limit, in raw bytes read in all.
    pub limit: u64,
}

impl ReadLimit {
    /// Counts every byte; no limit yet.
    pub fn new() -> ReadLimit {
        ReadLimit::default()
    }

    /// The socket may read `limit` raw bytes in all (those read so far included).
    pub fn set(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Raw bytes read so far.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// `n` raw bytes were read: an error ([`ReadLimitExceeded`], as an [`io::Error`]) once the
    /// count passes the limit, and then the bytes are not to be used.
    pub fn count(&mut self, n: usize) -> io::Result<()> {
        self.read = self
            .read
            .saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
        if self.read > self.limit {
            return Err(io::Error::other(ReadLimitExceeded { limit: self.limit }));
        }
        Ok(())
    }
}

/// A connected `std::net` socket that counts what it reads ([`ReadLimit`]) and, once given a
/// deadline ([`StdTcp::until`]), bounds each read and write by what is left of it, checked before
/// every one: a loop of reads (a TLS layer's) cannot outlast the deadline, however the server
/// trickles. An operation past the deadline fails as [`io::ErrorKind::TimedOut`].
#[derive(Debug)]
pub struct StdTcp {
    tcp: TcpStream,
    count: ReadLimit,
    deadline: Option<Instant>,
}

impl StdTcp {
    /// `tcp`, counting, with no deadline.
    pub fn new(tcp: TcpStream) -> StdTcp {
        StdTcp {
            tcp,
            count: ReadLimit::new(),
            deadline: None,
        }
    }

    /// Every read and write from now on ends by `at` (the earlier deadline, if one was set).
    pub fn until(&mut self, at: Instant) {
        self.deadline = Some(self.deadline.map_or(at, |d| d.min(at)));
    }

    /// The read limit, to set it.
    pub fn count_mut(&mut self) -> &mut ReadLimit {
        &mut self.count
    }

    /// What is left before the deadline (`None`: no deadline), or a timeout once it passed.
    fn left(&self) -> io::Result<Option<std::time::Duration>> {
        let Some(at) = self.deadline else {
            return Ok(None);
        };
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        Ok(Some(left))
    }
}

/// A socket timeout is the deadline running out.
fn timed_out(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock => io::ErrorKind::TimedOut.into(),
        _ => e,
    }
}

impl Read for StdTcp {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.left()?;
        self.tcp.set_read_timeout(left)?;
        let n = self.tcp.read(buf).map_err(timed_out)?;
        self.count.count(n)?;
        Ok(n)
    }
}

impl Write for StdTcp {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let left = self.left()?;
        self.tcp.set_write_timeout(left)?;
        self.tcp.write(buf).map_err(timed_out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn a_read_past_the_limit_fails_and_one_at_it_does_not() {
        let mut count = ReadLimit::new();
        count.set(10);
        assert!(count.count(4).is_ok());
        assert!(
            count.count(6).is_ok(),
            "ten bytes are within a limit of ten"
        );
        let e = count.count(1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Other);
        assert!(e.to_string().contains("limit of 10 bytes"), "{e}");
        assert_eq!(count.read(), 11);
    }

    fn pair() -> (StdTcp, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (StdTcp::new(client), server)
    }

    /// A server that sends one byte more than the socket may read: the read that brings it
    /// fails, after exactly the limit was handed on.
    #[test]
    fn a_std_socket_stops_one_byte_past_its_limit() {
        let (mut tcp, mut server) = pair();
        tcp.count_mut().set(100);
        server.write_all(&[7u8; 101]).unwrap();
        drop(server);
        let mut handed = 0;
        let mut buf = [0u8; 8];
        let e = loop {
            match tcp.read(&mut buf) {
                Ok(0) => panic!("the end of the stream, {handed} bytes handed on"),
                Ok(n) => handed += n,
                Err(e) => break e,
            }
        };
        assert!(handed <= 100, "{handed}");
        assert!(e.to_string().contains("limit of 100"), "{e}");
    }

    /// A server that never answers: the read ends at the deadline, not later.
    #[test]
    fn a_std_socket_read_ends_at_its_deadline() {
        let (mut tcp, _server) = pair();
        let start = Instant::now();
        tcp.until(start + Duration::from_millis(200));
        let e = tcp.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        let again = tcp.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(
            again.kind(),
            io::ErrorKind::TimedOut,
            "past the deadline at once"
        );
    }
}
