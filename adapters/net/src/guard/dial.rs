//! The dial rule both adapters follow: one deadline across every admitted address and the TLS
//! handshake, a zero timeout meaning the default, the TLS server name of a host, and when a
//! pooled socket still counts as idle.

use std::io;
use std::time::{Duration, Instant};

use mcp_sansio::{TransportError, TransportErrorKind};
use rustls::pki_types::ServerName;

use crate::guard::policy::parse_literal_host;

/// Default deadline of one dial (TCP connect and TLS handshake), as the issue of the adapters and
/// the core's request budget both set it.
pub const DEFAULT_DIAL_TIMEOUT: Duration = Duration::from_secs(30);

/// The dial timeout a builder keeps for `d`: zero means [`DEFAULT_DIAL_TIMEOUT`].
pub fn effective_dial_timeout(d: Duration) -> Duration {
    if d.is_zero() {
        DEFAULT_DIAL_TIMEOUT
    } else {
        d
    }
}

/// The deadline of one dial: TCP connects to the admitted addresses in order, then the TLS
/// handshake, all within one limit counted from the start of the dial.
#[derive(Clone, Copy, Debug)]
pub struct DialDeadline {
    at: Instant,
    limit: Duration,
}

impl DialDeadline {
    /// A dial starting at `now` with `limit`.
    pub fn new(now: Instant, limit: Duration) -> DialDeadline {
        DialDeadline {
            at: now + limit,
            limit,
        }
    }

    /// When the dial must be over.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// The time left at `now`, or `None` once the deadline passed.
    pub fn left(&self, now: Instant) -> Option<Duration> {
        Some(self.at.saturating_duration_since(now)).filter(|d| !d.is_zero())
    }

    /// The time the next TCP connect may take at `now` when `addresses_left` addresses (this one
    /// included) remain: an equal share of the time left, so that one address that never answers
    /// does not use up the whole dial; the last address gets all of it. `None` once the deadline
    /// passed.
    pub fn share(&self, now: Instant, addresses_left: usize) -> Option<Duration> {
        let left = self.left(now)?;
        let n = u32::try_from(addresses_left.max(1)).unwrap_or(u32::MAX);
        Some(left / n).filter(|d| !d.is_zero()).or(Some(left))
    }

    /// The error of a dial that reached no address by `now`: out of time once the deadline
    /// passed, else the failure of each attempt.
    pub fn failed(&self, now: Instant, failures: &[String]) -> TransportError {
        match self.left(now) {
            None => self.expired(),
            Some(_) => connect_failed(failures),
        }
    }

    /// The error of a dial that ran out of time.
    pub fn expired(&self) -> TransportError {
        TransportError {
            kind: TransportErrorKind::Connect,
            message: format!("dial timed out after {} ms", self.limit.as_millis()),
        }
    }
}

/// The error of a dial that reached no admitted address; `failures` names each attempt.
pub fn connect_failed(failures: &[String]) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Connect,
        message: if failures.is_empty() {
            "no address to dial".to_owned()
        } else {
            failures.join("; ")
        },
    }
}

/// A failed read or write, as the core hears of it.
pub fn io_error(e: &io::Error) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        message: e.to_string(),
    }
}

/// A failed TLS handshake, as the core hears of it.
pub fn tls_error(message: impl Into<String>) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Tls,
        message: message.into(),
    }
}

/// The TLS server name of `host`: an IP address for a literal in any spelling the endpoint
/// accepts, else the DNS name without its trailing dot (`example.com.` is verified as
/// `example.com`).
pub fn server_name(host: &str) -> Result<ServerName<'static>, TransportError> {
    if let Some(ip) = parse_literal_host(host) {
        return Ok(ServerName::IpAddress(ip.into()));
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_owned();
    ServerName::try_from(name).map_err(|e| tls_error(format!("server name {host:?}: {e}")))
}

/// What a non-blocking peek at a parked socket found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// Nothing to read: the socket is open and quiet.
    Quiet,
    /// The server closed the socket, or the peek failed.
    Closed,
    /// Bytes are waiting.
    Bytes,
}

/// Whether a parked socket may serve a new request. `plaintext_buffered` says whether TLS
/// already decrypted bytes nobody asked for. Bytes waiting on a plain socket are not a response
/// to anything, so the socket is not idle; on a TLS socket they may be a session ticket, so only
/// the end of the stream (or decrypted bytes) counts.
pub fn still_idle(tls: bool, plaintext_buffered: bool, peek: Peek) -> bool {
    if plaintext_buffered {
        return false;
    }
    match peek {
        Peek::Quiet => true,
        Peek::Closed => false,
        Peek::Bytes => tls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_deadline_is_shared_across_addresses() {
        let t0 = Instant::now();
        let d = DialDeadline::new(t0, Duration::from_secs(3));
        assert_eq!(d.share(t0, 3), Some(Duration::from_secs(1)));
        assert_eq!(
            d.share(t0 + Duration::from_secs(1), 2),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            d.share(t0 + Duration::from_secs(2), 1),
            Some(Duration::from_secs(1))
        );
        assert_eq!(d.share(t0 + Duration::from_secs(3), 1), None);
        assert_eq!(d.left(t0 + Duration::from_secs(4)), None);
        assert!(d.expired().message.contains("3000 ms"));
    }

    #[test]
    fn zero_means_the_default() {
        assert_eq!(effective_dial_timeout(Duration::ZERO), DEFAULT_DIAL_TIMEOUT);
        assert_eq!(
            effective_dial_timeout(Duration::from_millis(5)),
            Duration::from_millis(5)
        );
    }

    #[test]
    fn the_server_name_drops_one_trailing_dot_and_keeps_literals() {
        assert_eq!(
            server_name("example.com.").unwrap(),
            ServerName::try_from("example.com").unwrap()
        );
        assert!(matches!(
            server_name("127.0.0.1").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("[::1]").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert_eq!(
            server_name("bad name").unwrap_err().kind,
            TransportErrorKind::Tls
        );
    }

    #[test]
    fn idle_rule() {
        assert!(still_idle(false, false, Peek::Quiet));
        assert!(!still_idle(false, false, Peek::Bytes));
        assert!(still_idle(true, false, Peek::Bytes), "a TLS ticket");
        assert!(!still_idle(true, false, Peek::Closed));
        assert!(!still_idle(true, true, Peek::Quiet));
    }
}
