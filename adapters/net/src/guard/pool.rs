//! Idle keep-alive sockets, per origin and vetted address.
//!
//! The pool holds transport state only: a socket the core declared reusable
//! ([`Event::ExchangeFinished`](mcp_sansio::Event::ExchangeFinished) with `reusable`), keyed by
//! the origin it was opened for and the address it was dialled to. Nothing of the protocol (session
//! ids, negotiated versions) crosses from one work item to the next through it. Time is passed
//! in, so the bookkeeping is the same for both adapters and testable without sleeping.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Limits of an [`IdlePool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolLimits {
    /// A socket idle longer than this is closed instead of reused. Default 30 s.
    pub idle_timeout: Duration,
    /// Idle sockets kept per origin. Default 8.
    pub max_idle_per_origin: usize,
    /// Idle sockets kept in all. Default 64.
    pub max_idle: usize,
}

impl Default for PoolLimits {
    fn default() -> Self {
        PoolLimits {
            idle_timeout: Duration::from_secs(30),
            max_idle_per_origin: 8,
            max_idle: 64,
        }
    }
}

struct Idle<S> {
    origin: String,
    address: SocketAddr,
    since: Instant,
    socket: S,
}

/// Idle sockets of type `S`, newest last. Dropping a socket closes it.
pub struct IdlePool<S> {
    limits: PoolLimits,
    idle: VecDeque<Idle<S>>,
}

impl<S> IdlePool<S> {
    /// An empty pool.
    pub fn new(limits: PoolLimits) -> IdlePool<S> {
        IdlePool {
            limits,
            idle: VecDeque::new(),
        }
    }

    /// The limits.
    pub fn limits(&self) -> PoolLimits {
        self.limits
    }

    /// Idle sockets held now.
    pub fn len(&self) -> usize {
        self.idle.len()
    }

    /// Whether no socket is idle.
    pub fn is_empty(&self) -> bool {
        self.idle.is_empty()
    }

    /// Whether a live socket of `origin` is parked.
    pub fn contains(&mut self, origin: &str, now: Instant) -> bool {
        self.expire(now);
        self.idle.iter().any(|i| i.origin == origin)
    }

    /// Takes the most recently parked live socket for `origin`, with the address it was dialled
    /// to. Sockets past the idle timeout are dropped on the way.
    pub fn take(&mut self, origin: &str, now: Instant) -> Option<(SocketAddr, S)> {
        self.expire(now);
        let pos = self.idle.iter().rposition(|i| i.origin == origin)?;
        self.idle.remove(pos).map(|i| (i.address, i.socket))
    }

    /// Parks a socket the core declared reusable. The oldest sockets are dropped beyond the caps.
    pub fn put(&mut self, origin: &str, address: SocketAddr, socket: S, now: Instant) {
        self.expire(now);
        if self.limits.max_idle == 0 || self.limits.max_idle_per_origin == 0 {
            return;
        }
        let same = self.idle.iter().filter(|i| i.origin == origin).count();
        if same >= self.limits.max_idle_per_origin {
            if let Some(pos) = self.idle.iter().position(|i| i.origin == origin) {
                self.idle.remove(pos);
            }
        }
        while self.idle.len() >= self.limits.max_idle {
            self.idle.pop_front();
        }
        self.idle.push_back(Idle {
            origin: origin.to_owned(),
            address,
            since: now,
            socket,
        });
    }

    /// Drops every socket idle for longer than the idle timeout.
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.limits.idle_timeout;
        self.idle
            .retain(|i| now.saturating_duration_since(i.since) <= timeout);
    }

    /// Drops every idle socket.
    pub fn clear(&mut self) {
        self.idle.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn reuses_per_origin_newest_first() {
        let t0 = Instant::now();
        let mut pool = IdlePool::new(PoolLimits::default());
        pool.put("http://a", addr(1), "a1", t0);
        pool.put("http://b", addr(2), "b1", t0);
        pool.put("http://a", addr(1), "a2", t0);
        assert!(pool.contains("http://a", t0));
        assert!(!pool.contains("http://c", t0));
        assert_eq!(pool.take("http://a", t0), Some((addr(1), "a2")));
        assert_eq!(pool.take("http://a", t0), Some((addr(1), "a1")));
        assert_eq!(pool.take("http://a", t0), None);
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn idle_timeout_and_caps() {
        let t0 = Instant::now();
        let limits = PoolLimits {
            idle_timeout: Duration::from_secs(5),
            max_idle_per_origin: 2,
            max_idle: 3,
        };
        let mut pool = IdlePool::new(limits);
        pool.put("o", addr(1), 1, t0);
        pool.put("o", addr(1), 2, t0);
        pool.put("o", addr(1), 3, t0);
        assert_eq!(pool.len(), 2, "per-origin cap drops the oldest");
        pool.put("p", addr(2), 4, t0);
        pool.put("q", addr(3), 5, t0);
        assert_eq!(pool.len(), 3, "total cap");
        assert_eq!(pool.take("o", t0 + Duration::from_secs(6)), None);
        assert!(pool.is_empty(), "expired sockets are dropped");
    }
}
