//! How an operation completes, and the era hints a client keeps per server and authorization
//! context: the two decisions an adapter would otherwise make on its own.

use alloc::collections::BTreeMap;

use super::*;

/// What an operation came to when it succeeded.
#[derive(Clone, Debug)]
pub enum Completion {
    /// [`Connection::connect`] negotiated the protocol.
    Connected,
    /// [`Connection::list_tools`] listed every tool.
    Listed(Catalog),
    /// [`Connection::call_tool`] got the call's result.
    Called(CallResult),
    /// [`Connection::close`] closed the connection.
    Closed,
    /// [`Connection::get_task`] got the task's report.
    TaskReported(Box<crate::task::TaskReport>),
}

impl Event {
    /// Whether this event completes `running`, the operation the caller started last.
    ///
    /// Every operation the caller starts ends with exactly one such event: `Connected` for
    /// [`Operation::Connect`], `ToolsListed` for [`Operation::ListTools`], `CallFinished` (or
    /// `TaskReported`, for [`Connection::get_task`]) for [`Operation::CallTool`], `Closed` for [`Operation::Close`], or a `Failed` naming the
    /// operation. Other events do not end it: a `Connected` after a re-negotiation comes in the
    /// middle of a listing or call, and the `Failed` of an operation that
    /// [`close`](Connection::close) interrupted belongs to that operation, not to the close.
    pub fn completes(&self, running: Operation) -> bool {
        match self {
            Event::Connected { .. } => running == Operation::Connect,
            Event::ToolsListed(_) => running == Operation::ListTools,
            Event::CallFinished(_) | Event::TaskReported(_) => running == Operation::CallTool,
            Event::Closed => running == Operation::Close,
            Event::Failed { operation, .. } => *operation == running,
            _ => false,
        }
    }

    /// What `running` came to, if this event [completes](Event::completes) it; otherwise the
    /// event itself, unchanged.
    pub fn completion(self, running: Operation) -> Result<Result<Completion, Error>, Event> {
        if !self.completes(running) {
            return Err(self);
        }
        Ok(match self {
            Event::Connected { .. } => Ok(Completion::Connected),
            Event::ToolsListed(c) => Ok(Completion::Listed(c)),
            Event::CallFinished(r) => Ok(Completion::Called(r)),
            Event::TaskReported(r) => Ok(Completion::TaskReported(r)),
            Event::Failed { error, .. } => Err(error),
            _ => Ok(Completion::Closed),
        })
    }
}

/// Era hints held at most; beyond, the expired are forgotten, then the one expiring first.
pub const MAX_ERA_HINTS: usize = 1024;

/// The longest an era hint lives, whatever `ttlMs` says: 1 hour. A hint learnt without a
/// `server/discover` answer (a legacy server's, found by `initialize`) lives this long.
pub const MAX_ERA_HINT_TTL: Duration = Duration::from_secs(3600);

/// The era and version a negotiation found, offered to the next connection of the same server
/// and authorization context (see [`Config::era_hint`]): a client keeps one, learns from every
/// connection it drives and offers before every connect.
///
/// - **Key**: [`EraHints::key`], [`store_key`](crate::store_key) of the server's URL (path
///   included: two paths of one gateway origin are two servers) and the
///   [`AuthContext`](crate::AuthContext) (what one credential learnt is not offered to another).
/// - **Lifetime** (2026-07-28, SEP-2549): min(the `ttlMs` of the `server/discover` answer the
///   hint was learnt from, [`MAX_ERA_HINT_TTL`]); an answer of `ttlMs` 0 (or none readable:
///   "stale immediately") teaches nothing and forgets the hint; without such an answer (the
///   legacy era), [`MAX_ERA_HINT_TTL`]. Time is the caller's [`Instant`], as everywhere.
/// - **Bound**: at most [`MAX_ERA_HINTS`].
///
/// Only a negotiation that a request proved teaches a hint; a hint that proved wrong is
/// replaced by what the re-negotiation found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EraHints {
    /// Key → (hint, expiry).
    by_key: BTreeMap<String, (EraHint, Instant)>,
}

impl EraHints {
    /// No hint yet.
    pub fn new() -> EraHints {
        EraHints::default()
    }

    /// The key of the hints of connections with `config`: its server's URL and its
    /// authorization context.
    pub fn key(config: &Config) -> String {
        crate::store_key(
            crate::StoreUse::EraHint,
            &config.endpoint,
            &crate::AuthContext::of(config),
        )
    }

    /// The hint under `key` ([`EraHints::key`]), if it is still fresh at `now`.
    pub fn get(&self, key: &str, now: Instant) -> Option<&EraHint> {
        self.by_key
            .get(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(hint, _)| hint)
    }

    /// Hints held (fresh or not yet forgotten).
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no hint is held.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Sets `config.era_hint` to the fresh hint of its server and authorization context, unless
    /// it has a hint of its own or no longer offers the hint's version. Returns whether a hint
    /// was offered.
    pub fn offer(&self, config: &mut Config, now: Instant) -> bool {
        if config.era_hint.is_some() {
            return false;
        }
        let Some(hint) = self.get(&Self::key(config), now) else {
            return false;
        };
        if !hint.offered_by(config) {
            return false;
        }
        config.era_hint = Some(hint.clone());
        true
    }

    /// Learns from `event`, reported at `now` by a connection whose hints live under `key`
    /// ([`EraHints::key`] of its configuration); `discover` is what the connection's
    /// `server/discover` answer declared of its caching ([`Connection::discover_cache`]). A
    /// `Connected` that a request proved (not taken from a hint) becomes the hint, for its
    /// lifetime; one of lifetime 0 forgets the hint. Other events teach nothing. Returns the
    /// hint learnt and when it expires.
    pub fn learn(
        &mut self,
        key: &str,
        event: &Event,
        discover: Option<crate::CacheHint>,
        now: Instant,
    ) -> Option<(EraHint, Instant)> {
        let Event::Connected {
            era,
            version,
            from_hint: false,
            ..
        } = event
        else {
            return None;
        };
        let ttl = match discover {
            Some(d) => Duration::from_millis(d.ttl_ms).min(MAX_ERA_HINT_TTL),
            None => MAX_ERA_HINT_TTL,
        };
        if ttl.is_zero() {
            self.by_key.remove(key);
            return None;
        }
        if !self.by_key.contains_key(key) && self.by_key.len() >= MAX_ERA_HINTS {
            self.by_key.retain(|_, (_, expires)| *expires > now);
            if self.by_key.len() >= MAX_ERA_HINTS {
                let first = self
                    .by_key
                    .iter()
                    .min_by_key(|(_, (_, expires))| *expires)
                    .map(|(k, _)| k.clone());
                if let Some(first) = first {
                    self.by_key.remove(&first);
                }
            }
        }
        let hint = EraHint {
            era: *era,
            version: version.clone(),
        };
        let expires = Instant::from_duration(now.as_duration().saturating_add(ttl));
        self.by_key.insert(key.to_owned(), (hint.clone(), expires));
        Some((hint, expires))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MODERN_VERSION;

    fn connected(era: Era, version: &str, from_hint: bool) -> Event {
        Event::Connected {
            era,
            version: version.to_owned(),
            server_info: None,
            from_hint,
            capabilities: None,
            instructions: None,
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::from_duration(Duration::from_millis(ms))
    }

    fn discover(ttl_ms: u64) -> Option<crate::CacheHint> {
        Some(crate::CacheHint {
            ttl_ms,
            scope: crate::CacheScope::Public,
        })
    }

    #[test]
    fn only_a_proven_negotiation_teaches_and_only_offered_versions_are_offered() {
        let mut hints = EraHints::new();
        let mut config = Config::new("http://127.0.0.1:1/mcp").unwrap();
        let key = EraHints::key(&config);
        let now = at(0);
        let modern = connected(Era::Modern, MODERN_VERSION, true);
        hints.learn(&key, &modern, discover(60_000), now);
        assert!(hints.is_empty(), "a hint taken from a hint teaches nothing");
        hints.learn(&key, &Event::Closed, None, now);
        assert!(hints.is_empty());
        hints.learn(
            &key,
            &connected(Era::Legacy, "2025-06-18", false),
            None,
            now,
        );
        assert_eq!(hints.get(&key, now).map(|h| h.era), Some(Era::Legacy));

        assert!(hints.offer(&mut config, now));
        assert_eq!(config.era_hint.as_ref().unwrap().version, "2025-06-18");
        // A configuration with its own hint keeps it.
        assert!(!hints.offer(&mut config, now));
        // A configuration that no longer offers the version gets no hint.
        let mut narrow = Config::new("http://127.0.0.1:1/mcp").unwrap();
        narrow.legacy_versions = vec!["2025-03-26".to_owned()];
        assert!(!hints.offer(&mut narrow, now));
        assert!(narrow.era_hint.is_none());
        // Another origin gets nothing.
        let mut other = Config::new("http://127.0.0.1:2/mcp").unwrap();
        assert!(!hints.offer(&mut other, now));
    }

    /// One path of a shared gateway origin, or one authorization context, never sets the era of
    /// another: the hint is keyed by the URL with its path and by the context.
    #[test]
    fn a_hint_belongs_to_one_path_and_one_context() {
        let a = Config::new("https://gw.example.com/tenant-a").unwrap();
        let b = Config::new("https://gw.example.com/tenant-b").unwrap();
        let a_token = a.clone().with_bearer_token("tok");
        let mut hints = EraHints::new();
        let now = at(1_000);
        let modern = connected(Era::Modern, MODERN_VERSION, false);
        hints.learn(&EraHints::key(&a), &modern, discover(60_000), now);
        for other in [&b, &a_token] {
            let mut other = other.clone();
            assert!(!hints.offer(&mut other, now));
            assert!(other.era_hint.is_none());
        }
        let mut same = a.clone();
        assert!(hints.offer(&mut same, now));
        assert_eq!(same.era_hint.unwrap().version, MODERN_VERSION);
    }

    /// SEP-2549: freshness is `now < t_received + ttlMs`, and "`0` or absent → stale
    /// immediately": an era hint learnt from a `server/discover` answer lives its `ttlMs`
    /// (capped), none at all when it declared 0; without such an answer, the cap.
    #[test]
    fn a_hint_lives_the_discover_answers_ttl() {
        let mut config = Config::new("https://gw.example.com/tenant-a").unwrap();
        let key = EraHints::key(&config);
        let mut hints = EraHints::new();
        let t0 = 1_000_000;
        let modern = connected(Era::Modern, MODERN_VERSION, false);
        hints.learn(&key, &modern, discover(5_000), at(t0));
        assert!(hints.get(&key, at(t0 + 4_999)).is_some());
        assert!(
            hints.get(&key, at(t0 + 5_000)).is_none(),
            "expired at t + ttlMs"
        );
        assert!(!hints.offer(&mut config, at(t0 + 5_000)));
        assert!(config.era_hint.is_none());

        // `ttlMs: 0` keeps nothing, and forgets what was there.
        hints.learn(&key, &modern, discover(60_000), at(t0));
        hints.learn(&key, &modern, discover(0), at(t0));
        assert!(hints.get(&key, at(t0)).is_none());
        assert!(hints.is_empty());

        // A huge `ttlMs` is capped; no discover answer (legacy) lives the cap.
        let cap = u64::try_from(MAX_ERA_HINT_TTL.as_millis()).unwrap();
        for d in [discover(u64::MAX), None] {
            hints.learn(&key, &modern, d, at(t0));
            assert!(hints.get(&key, at(t0 + cap - 1)).is_some());
            assert!(hints.get(&key, at(t0 + cap)).is_none());
        }
    }

    /// At most `MAX_ERA_HINTS` are held; the expired go first, then the one expiring first.
    #[test]
    fn hints_are_bounded() {
        let mut hints = EraHints::new();
        let now = at(1_000);
        let modern = connected(Era::Modern, MODERN_VERSION, false);
        for i in 0..MAX_ERA_HINTS + 5 {
            let ttl = 10_000 + u64::try_from(i).unwrap();
            hints.learn(&format!("k{i}"), &modern, discover(ttl), now);
        }
        assert_eq!(hints.len(), MAX_ERA_HINTS);
        assert!(hints.get("k0", now).is_none(), "the first to expire went");
        assert!(hints.get(&format!("k{}", MAX_ERA_HINTS + 4), now).is_some());
        // Expired hints make room before fresh ones are evicted.
        hints.learn("late", &modern, discover(60_000), at(1_000 + 10_100));
        assert!(hints.get("late", at(1_000 + 10_100)).is_some());
        assert!(hints.len() < MAX_ERA_HINTS);
    }

    #[test]
    fn one_event_completes_each_operation() {
        let failed = |operation| Event::Failed {
            operation,
            error: Error::Closed,
        };
        // The failure of an interrupted call is not the close's completion.
        assert!(!failed(Operation::CallTool).completes(Operation::Close));
        assert!(Event::Closed.completes(Operation::Close));
        assert!(failed(Operation::CallTool).completes(Operation::CallTool));
        // A re-negotiation's `Connected` does not end a listing.
        let c = connected(Era::Modern, MODERN_VERSION, false);
        assert!(!c.completes(Operation::ListTools));
        assert!(c.completes(Operation::Connect));
        assert!(matches!(
            c.completion(Operation::ListTools),
            Err(Event::Connected { .. })
        ));
        assert!(matches!(
            failed(Operation::ListTools).completion(Operation::ListTools),
            Ok(Err(Error::Closed))
        ));
        assert!(matches!(
            Event::Closed.completion(Operation::Close),
            Ok(Ok(Completion::Closed))
        ));
        let progress = Event::Progress {
            progress: 1.0,
            total: None,
            message: None,
        };
        for op in [
            Operation::Connect,
            Operation::ListTools,
            Operation::CallTool,
            Operation::Close,
        ] {
            assert!(!progress.completes(op));
        }
    }
}
