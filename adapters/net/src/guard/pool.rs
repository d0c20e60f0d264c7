//! Idle keep-alive sockets, per origin and vetted address.
//!
//! The pool holds transport state only: a socket the core declared reusable
//! ([`Event::ExchangeFinished`](mcp_sansio::Event::ExchangeFinished) with `reusable`), keyed by
//! the origin it was opened for and the address it was dialled to. Nothing of the protocol (session
//! ids, negotiated versions) crosses from one work item to the next through it. Time is passed
//! in, so the bookkeeping is the same for both adapters and testable without sleeping.
//!
//! Every operation costs O(log n) amortised in the sockets held, whatever their number and
//! origins (a client may keep thousands: [`PoolLimits::max_idle`]): the sockets are kept in the
//! order they were parked, so the expired ones are always the oldest, and each origin's in the
//! same order, so its newest is at hand ([`IdlePool::steps`] counts what was looked at).

use std::collections::{BTreeMap, HashMap, VecDeque};
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

/// Idle sockets of type `S`, in the order they were parked. Dropping a socket closes it.
pub struct IdlePool<S> {
    limits: PoolLimits,
    /// Every idle socket by its parking number: the oldest first.
    idle: BTreeMap<u64, Idle<S>>,
    /// The parking numbers of each origin's idle sockets, the oldest first (no empty entry).
    by_origin: HashMap<String, VecDeque<u64>>,
    /// The parking number of the next socket parked.
    next: u64,
    /// Sockets looked at so far, in all.
    steps: u64,
}

impl<S> IdlePool<S> {
    /// An empty pool.
    pub fn new(limits: PoolLimits) -> IdlePool<S> {
        IdlePool {
            limits,
            idle: BTreeMap::new(),
            by_origin: HashMap::new(),
            next: 0,
            steps: 0,
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

    /// Sockets looked at by every operation so far, in all: a measure of what the pool costs,
    /// which grows by a bounded amount per socket parked, taken, expired or dropped, however
    /// many sockets are held (for tests and benchmarks).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Whether a live socket of `origin` is parked.
    pub fn contains(&mut self, origin: &str, now: Instant) -> bool {
        self.expire(now);
        self.by_origin.contains_key(origin)
    }

    /// Takes the most recently parked live socket for `origin`, with the address it was dialled
    /// to. Sockets past the idle timeout are dropped on the way.
    pub fn take(&mut self, origin: &str, now: Instant) -> Option<(SocketAddr, S)> {
        self.expire(now);
        let seqs = self.by_origin.get_mut(origin)?;
        let seq = seqs.pop_back()?;
        if seqs.is_empty() {
            self.by_origin.remove(origin);
        }
        self.steps += 1;
        self.idle.remove(&seq).map(|i| (i.address, i.socket))
    }

    /// Parks a socket the core declared reusable. The oldest sockets are dropped beyond the caps.
    /// `now` is taken as no earlier than the instant of the socket parked before (a socket is
    /// never parked before one already held).
    pub fn put(&mut self, origin: &str, address: SocketAddr, socket: S, now: Instant) {
        self.expire(now);
        if self.limits.max_idle == 0 || self.limits.max_idle_per_origin == 0 {
            return;
        }
        let same = self.by_origin.get(origin).map_or(0, VecDeque::len);
        if same >= self.limits.max_idle_per_origin {
            self.drop_oldest_of(origin);
        }
        while self.idle.len() >= self.limits.max_idle {
            self.drop_oldest();
        }
        let since = match self.idle.last_key_value() {
            Some((_, newest)) if newest.since > now => newest.since,
            _ => now,
        };
        let seq = self.next;
        self.next += 1;
        self.steps += 1;
        self.by_origin
            .entry(origin.to_owned())
            .or_default()
            .push_back(seq);
        self.idle.insert(
            seq,
            Idle {
                origin: origin.to_owned(),
                address,
                since,
                socket,
            },
        );
    }

    /// Drops every socket idle for longer than the idle timeout: the oldest ones, as far as the
    /// first that is not.
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.limits.idle_timeout;
        while let Some((_, oldest)) = self.idle.first_key_value() {
            self.steps += 1;
            if now.saturating_duration_since(oldest.since) <= timeout {
                break;
            }
            self.drop_oldest();
        }
    }

    /// Drops the socket parked first.
    fn drop_oldest(&mut self) {
        let Some((seq, idle)) = self.idle.pop_first() else {
            return;
        };
        self.steps += 1;
        // The oldest socket of all is the oldest of its origin.
        if let Some(seqs) = self.by_origin.get_mut(&idle.origin) {
            if seqs.front() == Some(&seq) {
                seqs.pop_front();
            }
            if seqs.is_empty() {
                self.by_origin.remove(&idle.origin);
            }
        }
    }

    /// Drops the socket of `origin` parked first.
    fn drop_oldest_of(&mut self, origin: &str) {
        let Some(seqs) = self.by_origin.get_mut(origin) else {
            return;
        };
        let seq = seqs.pop_front();
        if seqs.is_empty() {
            self.by_origin.remove(origin);
        }
        if let Some(seq) = seq {
            self.steps += 1;
            self.idle.remove(&seq);
        }
    }

    /// Drops every idle socket.
    pub fn clear(&mut self) {
        self.idle.clear();
        self.by_origin.clear();
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

    /// 10,000 sockets over 7 origins, parked, taken newest first per origin and expired oldest
    /// first: every answer is the one a scan of them all would give, and the pool looks at a
    /// bounded number of sockets per operation (not at the 10,000 each time).
    #[test]
    fn ten_thousand_sockets_cost_a_bounded_amount_per_operation() {
        let t0 = Instant::now();
        let n = 10_000u16;
        let limits = PoolLimits {
            idle_timeout: Duration::from_secs(100),
            max_idle_per_origin: usize::from(n),
            max_idle: usize::from(n),
        };
        let mut pool = IdlePool::new(limits);
        let origin = |i: u16| format!("http://o{}", i % 7);
        for i in 0..n {
            // One millisecond apart: socket i is parked at t0 + i ms.
            let at = t0 + Duration::from_millis(u64::from(i));
            assert!(i == 0 || pool.contains(&origin(i - 1), at));
            pool.put(&origin(i), addr(i), i, at);
        }
        assert_eq!(pool.len(), usize::from(n));
        let after_put = pool.steps();
        assert!(
            after_put <= 4 * u64::from(n),
            "{after_put} steps for {n} puts"
        );
        let end = t0 + Duration::from_millis(u64::from(n));
        // The newest of origin 3 first, then the one before it.
        let newest3 = (0..n).rev().find(|i| i % 7 == 3).unwrap();
        assert_eq!(pool.take("http://o3", end), Some((addr(newest3), newest3)));
        assert_eq!(
            pool.take("http://o3", end),
            Some((addr(newest3 - 7), newest3 - 7))
        );
        // 100 s after socket 5,000 was parked, sockets 0..=4,999 are past the timeout, 5,000 is
        // not: the oldest go, in their order, and nothing else.
        let late = t0 + Duration::from_millis(5_000) + Duration::from_secs(100);
        let before = pool.steps();
        assert!(pool.contains("http://o0", late));
        assert_eq!(pool.len(), usize::from(n) - 5_000 - 2);
        assert!(pool.steps() - before <= 2 * 5_000 + 2);
        let oldest0 = (5_000..n).find(|i| i % 7 == 0).unwrap();
        let mut taken = Vec::new();
        while let Some((_, s)) = pool.take("http://o0", late) {
            taken.push(s);
        }
        assert_eq!(taken.last(), Some(&oldest0));
        assert_eq!(taken.len(), (5_000..n).filter(|i| i % 7 == 0).count());
        // Each take looked at a bounded number of sockets, however many are held.
        let per_take = (pool.steps() - before - 2 * 5_000) / (taken.len() as u64 + 1);
        assert!(per_take <= 4, "{per_take} steps per take");
    }
}
