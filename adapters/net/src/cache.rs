//! What a client's sessions share between work items (2026-07-28, SEP-2549): the catalog cache
//! and the era hints. A listing a server declared fresh for `ttlMs` is reused by the next work
//! items of the same server in the same authorization context, which then list with no request
//! and call its tools with their `x-mcp-header` parameters without a `-32020` round trip; the
//! era a negotiation found is offered to the next connection of the same server and context.
//!
//! - **Keys**: every entry's key comes from [`store_key`](mcp_sansio::store_key), the one
//!   builder, of (the use, the resource, the [`AuthContext`](mcp_sansio::AuthContext)):
//!   - the resource is the server's URL normalised, path and query kept: two paths of one
//!     gateway origin never share an entry;
//!   - the context is a digest of the credential presented (none, the bearer token, or the
//!     DPoP-bound token with its key's thumbprint) and of the grant that obtained it
//!     ([`Config::grant`](mcp_sansio::Config::grant)): an anonymous work item, two DPoP
//!     tenants, a changed token or key each have entries of their own;
//!   - a catalog's key also digests the protocol versions offered and the client capabilities
//!     declared (a listing answers what its request declared).
//!
//!   A key is a digest: it holds neither a credential nor the URL.
//! - **`cacheScope`**: every context has its own entries, whatever the server declares.
//!   `private` asks for exactly that; `public` is the server's view of who may see its answer,
//!   and the server is not trusted to decide who else sees it, so a `public` listing or
//!   `server/discover` answer is kept per context too.
//! - **Lifetime**: a listing lives min(`ttlMs`, the configured cap), counted from when the
//!   listing ended; an era hint lives min(the `ttlMs` of the `server/discover` answer it was
//!   learnt from, [`MAX_ERA_HINT_TTL`](mcp_sansio::limits::MAX_ERA_HINT_TTL)), or that cap when there
//!   was no such answer (a legacy server found by `initialize`): see
//!   [`EraHints`](mcp_sansio::EraHints). `ttlMs` absent, negative or 0 ("stale immediately"):
//!   nothing is kept. Both on the wall clock (so that processes sharing a store agree).
//! - **Bounds**: [`MemoryStore`] holds at most its byte cap across entries, evicting the oldest;
//!   a client holds at most [`MAX_ERA_HINTS`](mcp_sansio::limits::MAX_ERA_HINTS) era hints in memory,
//!   evicting the expired, then the one expiring first.
//! - **Invalidation**: a listing's entry is removed when a listing of its key fails and when a
//!   call of its key meets a `-32020` (header mismatch: the server's tools changed). A hint that
//!   proves wrong is replaced by what the re-negotiation found.
//! - **Store**: [`Store`] is a small trait (get, put, remove of bytes; a put with the entry's
//!   lifetime and a wait for another process's listing, both optional), so that a platform running
//!   many executor processes can back the cache and the hints with a store they share. An entry
//!   crosses it as bytes and is checked again when read back: its framing, its expiry, then
//!   every page goes through the same reader as the wire with the session's budgets
//!   ([`Catalog::from_pages`]); a hint must name a version the session offers. A malformed entry
//!   is a miss (and a listing's is removed), never an error.
//!
//! The catalog cache is **off by default**
//! ([`ClientBuilder::catalog_cache`](crate::ClientBuilder::catalog_cache) turns it on): a cached
//! listing hides a server's changes to its tools for up to the lifetime, an effect a client
//! should opt into, and a client that keeps one session lists once anyway. Era hints are on by
//! default ([`ClientBuilder::era_hints`](crate::ClientBuilder::era_hints)): a wrong one costs one
//! re-negotiation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_sansio::{Budgets, Catalog, Config, EraHint, Tool};

use crate::lock::lock;

/// Where cached entries live: bytes under bytes. Implementations bound what they hold; every
/// entry read back is checked again, so a store may lose, corrupt or return stale bytes without
/// harm beyond a miss.
pub trait Store: Send + Sync {
    /// The entry under `key`, if any.
    fn get(&self, key: &[u8]) -> Option<Vec<u8>>;
    /// Stores `value` under `key` (replacing an entry), or drops it if it does not fit.
    fn put(&self, key: &[u8], value: Vec<u8>);
    /// Removes the entry under `key`.
    fn remove(&self, key: &[u8]);

    /// Stores `value` under `key` for at most `ttl` (the entry's lifetime, which its bytes also
    /// carry), so that a store with expiry drops it then. Default: [`put`](Self::put) (the
    /// entry's own expiry makes it a miss once read back).
    fn put_for(&self, key: &[u8], value: Vec<u8>, ttl: Duration) {
        let _ = ttl;
        self.put(key, value);
    }

    /// A listing's entry under `key` missed and this process is about to list: a store shared
    /// by many processes may coordinate their listings (no stampede), returning the entry
    /// another process's listing wrote while this one waited (within the store's own bound),
    /// or `None` to list now (the store may then hold a lease for this process, released by the
    /// [`put_for`](Self::put_for) or [`remove`](Self::remove) the listing's end makes, else when
    /// it lapses). What it returns is checked as any entry read back. It blocks its thread for
    /// at most the store's bound. Default: `None` (no coordination: list now).
    fn await_fill(&self, key: &[u8]) -> Option<Vec<u8>> {
        let _ = key;
        None
    }
}

/// The default [`Store`]: in memory, at most `max_bytes` of keys and values in all; the oldest
/// entries are evicted to make room, and an entry larger than the cap is not kept.
#[derive(Debug)]
pub struct MemoryStore {
    max_bytes: usize,
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// Key → (insertion number, value).
    map: HashMap<Vec<u8>, (u64, Vec<u8>)>,
    bytes: usize,
    next: u64,
}

impl Entries {
    fn remove(&mut self, key: &[u8]) {
        if let Some((_, v)) = self.map.remove(key) {
            self.bytes -= key.len() + v.len();
        }
    }
}

impl MemoryStore {
    /// A store of at most `max_bytes` (keys and values).
    pub fn new(max_bytes: usize) -> MemoryStore {
        MemoryStore {
            max_bytes,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// Bytes held now (keys and values).
    pub fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        lock(&self.inner).map.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        lock(&self.inner).map.get(key).map(|(_, v)| v.clone())
    }

    fn put(&self, key: &[u8], value: Vec<u8>) {
        let mut e = lock(&self.inner);
        e.remove(key);
        let size = key.len() + value.len();
        if size > self.max_bytes {
            return;
        }
        while e.bytes + size > self.max_bytes {
            let Some(oldest) = e
                .map
                .iter()
                .min_by_key(|(_, (n, _))| *n)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            e.remove(&oldest);
        }
        let n = e.next;
        e.next += 1;
        e.bytes += size;
        e.map.insert(key.to_vec(), (n, value));
    }

    fn remove(&self, key: &[u8]) {
        lock(&self.inner).remove(key);
    }
}

/// Default cap of an entry's lifetime, whatever `ttlMs` says: 5 minutes.
pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(300);

/// Default byte cap of the in-memory store: 8 MiB.
pub const DEFAULT_MAX_BYTES: usize = 8 << 20;

/// The catalog cache of a client (see the [module](self) docs).
pub struct CatalogCache {
    store: Arc<dyn Store>,
    max_ttl: Duration,
}

impl std::fmt::Debug for CatalogCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogCache")
            .field("max_ttl", &self.max_ttl)
            .finish_non_exhaustive()
    }
}

/// What starts every entry.
const MAGIC: &[u8; 8] = b"mcpcat\x00\x01";

impl CatalogCache {
    /// A cache over `store` whose entries live at most `max_ttl`.
    pub fn new(store: Arc<dyn Store>, max_ttl: Duration) -> CatalogCache {
        CatalogCache { store, max_ttl }
    }

    /// The key of `config`'s listings: [`store_key`](mcp_sansio::store_key) of the catalog
    /// use (with a digest of the versions `config` offers and the capabilities it declares),
    /// its server's URL and its [`AuthContext`](mcp_sansio::AuthContext).
    pub fn key(config: &Config) -> Vec<u8> {
        mcp_sansio::store_key(
            mcp_sansio::StoreUse::catalog(config),
            &config.endpoint,
            &mcp_sansio::AuthContext::of(config),
        )
        .into_bytes()
    }

    /// Stores `catalog` under `key` for min(its `ttlMs`, the cap); a lifetime of 0 stores
    /// nothing (and removes what was there).
    pub fn put(&self, key: &[u8], catalog: &Catalog) {
        let cap = u64::try_from(self.max_ttl.as_millis()).unwrap_or(u64::MAX);
        let ttl = catalog.cache.ttl_ms.min(cap);
        if ttl == 0 {
            return self.store.remove(key);
        }
        let Ok(pages) = u32::try_from(catalog.result_pages().count()) else {
            return;
        };
        let mut entry = MAGIC.to_vec();
        entry.extend_from_slice(&now_ms().saturating_add(ttl).to_be_bytes());
        entry.extend_from_slice(&pages.to_be_bytes());
        for page in catalog.result_pages() {
            let Ok(len) = u32::try_from(page.len()) else {
                return;
            };
            entry.extend_from_slice(&len.to_be_bytes());
            entry.extend_from_slice(page);
        }
        self.store.put_for(key, entry, Duration::from_millis(ttl));
    }

    /// The catalog under `key`, if a fresh entry reads back as a listing within `budgets` and
    /// `config`'s name rule. Anything else is a miss; an entry that does not read back (expired,
    /// malformed, refused by the reader) is removed.
    pub fn get(&self, key: &[u8], config: &Config) -> Option<Catalog> {
        let entry = self.store.get(key)?;
        let catalog = Self::read(&entry, config.tool_names, &config.budgets);
        if catalog.is_none() {
            self.store.remove(key);
        }
        catalog
    }

    /// As [`get`](Self::get), and on a miss the store's [`Store::await_fill`]: the entry another
    /// process's listing wrote meanwhile, if the store coordinates listings and one came within
    /// its bound (checked and removed as [`get`](Self::get) does); `None`: list now.
    pub fn get_or_await(&self, key: &[u8], config: &Config) -> Option<Catalog> {
        if let Some(catalog) = self.get(key, config) {
            return Some(catalog);
        }
        let entry = self.store.await_fill(key)?;
        let catalog = Self::read(&entry, config.tool_names, &config.budgets);
        if catalog.is_none() {
            self.store.remove(key);
        }
        catalog
    }

    fn read(entry: &[u8], rule: mcp_sansio::ToolNameRule, budgets: &Budgets) -> Option<Catalog> {
        let rest = entry.strip_prefix(MAGIC)?;
        let (expires, rest) = rest.split_first_chunk::<8>()?;
        if u64::from_be_bytes(*expires) <= now_ms() {
            return None;
        }
        let (count, mut rest) = rest.split_first_chunk::<4>()?;
        let count = u32::from_be_bytes(*count);
        if count == 0 || count > budgets.pages {
            return None;
        }
        let mut pages = Vec::new();
        for _ in 0..count {
            let (len, after) = rest.split_first_chunk::<4>()?;
            let len = u32::from_be_bytes(*len) as usize;
            let page = after.get(..len)?;
            pages.push(page);
            rest = after.get(len..)?;
        }
        if !rest.is_empty() {
            return None;
        }
        Catalog::from_pages(pages, rule, budgets).ok()
    }

    /// Removes the entry under `key`.
    pub fn invalidate(&self, key: &[u8]) {
        self.store.remove(key);
    }
}

/// Milliseconds since the Unix epoch on the wall clock (which processes sharing a store agree
/// on).
pub(crate) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The key of the era hint of `config`'s server (URL with path) and authorization context
/// ([`EraHints::key`](mcp_sansio::EraHints::key)).
pub fn hint_key(config: &Config) -> String {
    mcp_sansio::EraHints::key(config)
}

/// Now on the wall clock as the core's [`Instant`](mcp_sansio::Instant) (since the Unix epoch),
/// the timeline of a client's era hints.
pub(crate) fn wall_instant() -> mcp_sansio::Instant {
    mcp_sansio::Instant::from_duration(Duration::from_millis(now_ms()))
}

/// Writes `hint` under `key` to `store`, fresh until `expires` (ms since the Unix epoch): `m`
/// or `l`, a newline, the expiry (8 bytes, big-endian), the version.
pub(crate) fn store_hint(
    store: &dyn Store,
    key: &str,
    hint: &EraHint,
    expires: mcp_sansio::Instant,
) {
    let expires = u64::try_from(expires.as_duration().as_millis()).unwrap_or(u64::MAX);
    let ttl = Duration::from_millis(expires.saturating_sub(now_ms()));
    let era = match hint.era {
        mcp_sansio::Era::Modern => b'm',
        mcp_sansio::Era::Legacy => b'l',
    };
    let mut value = vec![era, b'\n'];
    value.extend_from_slice(&expires.to_be_bytes());
    value.extend_from_slice(hint.version.as_bytes());
    store.put_for(key.as_bytes(), value, ttl);
}

/// Sets `config.era_hint` from the hint `store` holds under `key`, if it reads back (an era, an
/// expiry not reached, a version `config` offers for that era) and `config` has none; a
/// malformed or expired entry is a miss.
pub(crate) fn offer_stored_hint(store: &dyn Store, key: &str, config: &mut Config) {
    if config.era_hint.is_some() {
        return;
    }
    let Some(value) = store.get(key.as_bytes()) else {
        return;
    };
    let era = match value.get(..2) {
        Some(b"m\n") => mcp_sansio::Era::Modern,
        Some(b"l\n") => mcp_sansio::Era::Legacy,
        _ => return,
    };
    let Some((expires, version)) = value.get(2..).and_then(|v| v.split_first_chunk::<8>()) else {
        return;
    };
    if u64::from_be_bytes(*expires) <= now_ms() {
        return;
    }
    let Ok(version) = std::str::from_utf8(version) else {
        return;
    };
    let hint = EraHint {
        era,
        version: version.to_owned(),
    };
    if hint.offered_by(config) {
        config.era_hint = Some(hint);
    }
}

/// A session's handle on its client's cache: the cache and the session's key.
#[derive(Debug)]
pub struct SessionCache {
    cache: Arc<CatalogCache>,
    key: Vec<u8>,
}

impl SessionCache {
    /// The handle of a session with `config` on `cache`.
    pub fn new(cache: Arc<CatalogCache>, config: &Config) -> SessionCache {
        SessionCache {
            key: CatalogCache::key(config),
            cache,
        }
    }

    /// A fresh cached listing, if any (on a miss, what the store's [`Store::await_fill`] gives:
    /// another process's listing, within the store's bound).
    pub fn listing(&self, config: &Config) -> Option<Catalog> {
        self.cache.get_or_await(&self.key, config)
    }

    /// Tool `name` of a fresh cached listing, if any (a call does not wait for another
    /// process's listing).
    pub fn tool(&self, config: &Config, name: &str) -> Option<Tool> {
        let catalog = self.cache.get(&self.key, config)?;
        catalog.tools.into_iter().find(|t| t.name() == name)
    }

    /// A listing ended: stored if it succeeded, the entry removed if it failed.
    pub fn listed(&self, result: Result<&Catalog, ()>) {
        match result {
            Ok(catalog) => self.cache.put(&self.key, catalog),
            Err(()) => self.cache.invalidate(&self.key),
        }
    }

    /// A call ended; `stale` is what the connection decided of the catalog the call took its
    /// tool from ([`Connection::catalog_stale`](mcp_sansio::Connection::catalog_stale)): if
    /// stale, the entry is removed.
    pub fn called(&self, stale: bool) {
        if stale {
            self.cache.invalidate(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store never holds more than its cap: the oldest entries make room, an entry larger
    /// than the cap is not kept.
    #[test]
    fn the_memory_store_holds_at_most_its_cap_evicting_the_oldest() {
        let store = MemoryStore::new(100);
        store.put(b"a", vec![0; 39]);
        store.put(b"b", vec![0; 39]);
        assert_eq!(store.bytes(), 80);
        store.put(b"c", vec![0; 39]);
        assert!(store.bytes() <= 100);
        assert_eq!(store.get(b"a"), None, "the oldest is evicted first");
        assert!(store.get(b"b").is_some() && store.get(b"c").is_some());
        store.put(b"b", vec![1; 9]);
        assert_eq!(store.bytes(), 50);
        store.put(b"huge", vec![0; 200]);
        assert_eq!(store.get(b"huge"), None);
        assert!(store.bytes() <= 100);
        store.remove(b"c");
        assert_eq!(store.bytes(), 10);
        assert_eq!(store.len(), 1);
    }

    /// The key is a digest: it holds neither the credential nor the URL (whose path may be a
    /// secret); two credentials, or two paths, never share a key.
    #[test]
    fn the_key_holds_a_digest_of_the_credential_never_the_credential() {
        let config = |token: &str| {
            Config::new("https://mcp.example.com/a")
                .unwrap()
                .with_bearer_token(token)
        };
        let a = CatalogCache::key(&config("secret-token-a"));
        let b = CatalogCache::key(&config("secret-token-b"));
        let none = CatalogCache::key(&config(""));
        assert_ne!(a, b);
        assert_ne!(a, none);
        let text = String::from_utf8(a.clone()).unwrap();
        assert!(!text.contains("secret"), "{text}");
        assert!(!text.contains("mcp.example.com"), "{text}");
        assert!(text.starts_with("catalog:"), "{text}");
        let other = Config::new("https://mcp.example.com/b")
            .unwrap()
            .with_bearer_token("secret-token-a");
        assert_ne!(CatalogCache::key(&other), a);
    }

    /// SEP-2549: "the key is the method and its parameters" — a listing answers what the
    /// request declared (its `_meta` protocol version and client capabilities), so a change of
    /// either is another entry.
    #[test]
    fn the_key_depends_on_the_versions_offered_and_the_capabilities_declared() {
        let base = Config::new("https://mcp.example.com/a").unwrap();
        let key = CatalogCache::key(&base);
        let mut caps = base.clone();
        caps.client_capabilities = r#"{"elicitation":{}}"#.to_owned();
        assert_ne!(CatalogCache::key(&caps), key);
        let mut modern = base.clone();
        modern.modern_versions = vec!["2027-01-01".to_owned(), "2026-07-28".to_owned()];
        assert_ne!(CatalogCache::key(&modern), key);
        let mut legacy = base.clone();
        legacy.legacy_versions = vec!["2025-06-18".to_owned()];
        assert_ne!(CatalogCache::key(&legacy), key);
        assert_eq!(CatalogCache::key(&base.clone()), key);
    }

    /// A store that coordinates listings: `await_fill` hands over what `fill` holds (as if
    /// another process had written it meanwhile), counting the calls; `put_for` records the
    /// lifetimes it was given.
    struct Waits {
        inner: MemoryStore,
        fill: Mutex<Option<Vec<u8>>>,
        asked: Mutex<usize>,
        ttls: Mutex<Vec<Duration>>,
    }

    impl Store for Waits {
        fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
            self.inner.get(key)
        }
        fn put(&self, key: &[u8], value: Vec<u8>) {
            self.inner.put(key, value);
        }
        fn put_for(&self, key: &[u8], value: Vec<u8>, ttl: Duration) {
            lock(&self.ttls).push(ttl);
            self.inner.put(key, value);
        }
        fn remove(&self, key: &[u8]) {
            self.inner.remove(key);
        }
        /// What another process wrote meanwhile: `fill`, now also in the store.
        fn await_fill(&self, key: &[u8]) -> Option<Vec<u8>> {
            *lock(&self.asked) += 1;
            let fill = lock(&self.fill).take()?;
            self.inner.put(key, fill.clone());
            Some(fill)
        }
    }

    /// The no-stampede seam: a listing's miss asks the store's `await_fill`, and what it hands
    /// over is read as any entry (`Catalog::from_pages`): a listing written by another process
    /// is the listing, bytes that do not read back are a miss and removed. A call's lookup of a
    /// tool never waits. A put carries the entry's lifetime: min(`ttlMs`, the cap).
    #[test]
    fn a_listing_miss_takes_what_the_store_waited_for() {
        let config = Config::new("https://mcp.example.com/a").unwrap();
        let key = CatalogCache::key(&config);
        let page = br#"{"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"ttlMs":60000,"cacheScope":"private"}"#;
        let catalog = Catalog::from_pages([&page[..]], config.tool_names, &config.budgets).unwrap();
        let other = Arc::new(MemoryStore::new(1 << 16));
        CatalogCache::new(other.clone(), Duration::from_secs(30)).put(&key, &catalog);
        let written = other.get(&key).unwrap();

        let store = Arc::new(Waits {
            inner: MemoryStore::new(1 << 16),
            fill: Mutex::new(Some(written)),
            asked: Mutex::new(0),
            ttls: Mutex::new(Vec::new()),
        });
        let cache = Arc::new(CatalogCache::new(store.clone(), Duration::from_secs(30)));
        let session = SessionCache::new(cache.clone(), &config);
        assert!(
            session.tool(&config, "weather").is_none(),
            "a call does not wait"
        );
        assert_eq!(*lock(&store.asked), 0);
        assert_eq!(session.listing(&config), Some(catalog.clone()));
        assert_eq!(*lock(&store.asked), 1);

        store.inner.put(&key, b"mcpcat\x00\x01garbage".to_vec());
        *lock(&store.fill) = Some(b"garbage".to_vec());
        assert_eq!(session.listing(&config), None);
        assert_eq!(store.inner.get(&key), None, "the bad entry is removed");

        session.listed(Ok(&catalog));
        assert_eq!(*lock(&store.ttls), [Duration::from_secs(30)]);
    }

    /// A hint in a shared store carries its expiry: an expired or malformed one is a miss.
    #[test]
    fn a_stored_hint_expires() {
        let store = MemoryStore::new(1 << 16);
        let config = Config::new("https://gw.example.com/tenant-a").unwrap();
        let key = hint_key(&config);
        let hint = EraHint {
            era: mcp_sansio::Era::Modern,
            version: "2026-07-28".to_owned(),
        };
        let at = |ms: u64| mcp_sansio::Instant::from_duration(Duration::from_millis(ms));
        store_hint(&store, &key, &hint, at(now_ms() + 60_000));
        let mut fresh = config.clone();
        offer_stored_hint(&store, &key, &mut fresh);
        assert_eq!(fresh.era_hint, Some(hint.clone()));
        store_hint(&store, &key, &hint, at(now_ms().saturating_sub(1)));
        let mut stale = config.clone();
        offer_stored_hint(&store, &key, &mut stale);
        assert_eq!(stale.era_hint, None);
        store.put(key.as_bytes(), b"m\n2026-07-28".to_vec());
        let mut malformed = config.clone();
        offer_stored_hint(&store, &key, &mut malformed);
        assert_eq!(malformed.era_hint, None);
    }
}
