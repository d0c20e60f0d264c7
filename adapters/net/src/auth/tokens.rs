//! The token-store seam: one refresh per grant, in one process and across a fleet.
//!
//! With rotating refresh tokens (OAuth 2.1 for public clients; RFC 9700 §4.14.2) two sessions
//! that refresh the same grant at once spend the same refresh token twice, and the
//! authorization server revokes the whole token family. So every refresh an [`Authorization`]
//! runs goes through a [`TokenStore`], per token key ([`Authorizer::token_key`]):
//!
//! 1. read the current entry ([`TokenEntry`]: the credentials and a version); if it holds a
//!    successor of this session's tokens (its [`TokenEntry::spent`] names this session's refresh
//!    token), take those tokens and refresh nothing;
//! 2. otherwise take the key's lease ([`TokenStore::lease`], with a fencing number); a session
//!    that does not get it waits (polling, at most the authorization's deadline,
//!    [`AuthLimits::time`](mcp_sansio::auth::AuthLimits::time)) and reads again;
//! 3. the holder reads once more, refreshes, and writes the new tokens with a compare-and-set on
//!    the version it read ([`TokenStore::write`]), while a thread renews the lease (never past
//!    the authorization's deadline); then it releases the lease;
//! 4. a refresh refused (`invalid_grant`, or any error) reads the entry once more before it is
//!    reported: a successor written meanwhile is taken instead.
//!
//! A session adopts only a *successor* of its own tokens (same issuer and resource, and its
//! refresh token among the ones spent to reach the entry, or, without a refresh token, a later
//! access token of a grant without a user agent): an entry written under the same key by
//! another lineage is never sent. Sessions that share a store and a token key are one grant;
//! give people that share a client configuration stores of their own.
//!
//! By default every [`AuthHttp`] carries its own [`MemoryTokens`], shared by its clones: the
//! sessions of one client (threads, tasks) make one refresh per grant. A store shared by a fleet
//! (`mcp-sansio-redis`'s `RedisTokens`) plugs in with [`AuthHttp::token_store`]. The embedder's
//! [`AuthHook`](crate::auth::AuthHook) keeps working as before: it is consulted first when an
//! authorization is made, and every new or adopted token set is saved through it.

use std::collections::HashMap;
use std::fmt;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::auth::ResourceCredentials;

#[cfg(doc)]
use crate::auth::{AuthHttp, Authorization};
#[cfg(doc)]
use mcp_sansio::auth::Authorizer;

/// The SHA-256 digest of a refresh token (never the token itself).
pub type Spent = [u8; 32];

/// The most digests a [`TokenEntry`] keeps in [`TokenEntry::spent`]: a session at most this many
/// generations behind still recognises the entry as a successor of its tokens.
pub const MAX_LINEAGE: usize = 16;

/// How long a lease lasts unless renewed ([`SharedTokens::lease_ttl`]).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);

/// How often a session waiting for another's refresh reads again ([`SharedTokens::poll`]).
pub const DEFAULT_POLL: Duration = Duration::from_millis(25);

/// The most token keys a [`MemoryTokens`] holds; past it, an entry without a live lease is
/// dropped for a new one.
pub const MEMORY_MAX_KEYS: usize = 4096;

/// The SHA-256 digest of `refresh_token`.
pub fn spent_digest(refresh_token: &str) -> Spent {
    let d = ring::digest::digest(&ring::digest::SHA256, refresh_token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// A token set as a store holds it: see the [module docs](self).
#[derive(Clone, PartialEq, Eq)]
pub struct TokenEntry {
    /// Its version: 1 for the first write, one more for each.
    pub version: u64,
    /// The tokens, with the issuer and resource they belong to.
    pub credentials: ResourceCredentials,
    /// Digests of the refresh tokens spent to reach these tokens, newest first (at most
    /// [`MAX_LINEAGE`]).
    pub spent: Vec<Spent>,
}

impl fmt::Debug for TokenEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenEntry")
            .field("version", &self.version)
            .field("issuer", &self.credentials.issuer)
            .field("tokens", &self.credentials.tokens)
            .field("spent", &self.spent.len())
            .finish()
    }
}

/// A lease on one token key ([`TokenStore::lease`]): who holds it and its fencing number.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Lease {
    key: String,
    fence: u64,
    holder: String,
}

impl Lease {
    /// A lease on `key` with fencing number `fence`, held by `holder` (a random value of the
    /// taker).
    pub fn new(key: impl Into<String>, fence: u64, holder: impl Into<String>) -> Lease {
        Lease {
            key: key.into(),
            fence,
            holder: holder.into(),
        }
    }

    /// The token key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The fencing number: larger for every lease taken on the key.
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// The holder's random value.
    pub fn holder(&self) -> &str {
        &self.holder
    }
}

/// What a compare-and-set write did ([`TokenStore::write`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// Stored, as this version.
    Stored {
        /// The new version.
        version: u64,
    },
    /// Not stored: the entry is no longer the version read, or the lease is no longer held.
    Conflict,
}

/// Why a token store could not do an operation. A session whose store fails refreshes on its
/// own (the store is a coordination, not a dependency).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenStoreError {
    /// The store is unreachable or failed.
    #[error("the token store is unavailable: {0}")]
    Unavailable(String),
    /// The operation ran out of its deadline.
    #[error("the token store did not answer within {ms} ms")]
    Timeout {
        /// The deadline, in milliseconds.
        ms: u64,
    },
    /// The store answered something that is not what was asked for.
    #[error("the token store answered garbage: {0}")]
    Garbage(String),
}

/// Where the token sets of a fleet (or of one process) live: see the [module docs](self). Every
/// method returns within the store's own deadline.
pub trait TokenStore: Send + Sync + fmt::Debug {
    /// The entry under `key`, if any (a damaged entry is none, and removed).
    fn read(&self, key: &str) -> Result<Option<TokenEntry>, TokenStoreError>;

    /// Takes the lease on `key` for `ttl` if nobody holds it (`None`: somebody does).
    fn lease(&self, key: &str, ttl: Duration) -> Result<Option<Lease>, TokenStoreError>;

    /// Extends `lease` by `ttl` from now; `false` when it is no longer held.
    fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, TokenStoreError>;

    /// Writes `credentials` (reached by spending `spent`, newest first) under the lease's key if
    /// the lease is still held and the entry is still version `expected` (0: no entry).
    fn write(
        &self,
        lease: &Lease,
        expected: u64,
        credentials: &ResourceCredentials,
        spent: &[Spent],
    ) -> Result<Written, TokenStoreError>;

    /// Releases `lease` if it is still held (best effort).
    fn release(&self, lease: &Lease);

    /// Waits at most `max` for a change under `key` (a release or a write); by default sleeps
    /// `max`.
    fn wait(&self, key: &str, max: Duration) {
        let _ = key;
        std::thread::sleep(max);
    }
}

/// A random holder value for a lease: 16 bytes from the system's generator, hex.
pub fn random_holder() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        // No randomness: a value unique in this process is still a correct holder locally;
        // the fencing number orders it across processes.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_be_bytes());
        bytes[8..12].copy_from_slice(&std::process::id().to_be_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Default)]
struct Slot {
    entry: Option<TokenEntry>,
    lease: Option<(u64, String, Instant)>,
}

impl Slot {
    fn leased(&self, now: Instant) -> bool {
        self.lease
            .as_ref()
            .is_some_and(|(_, _, until)| *until > now)
    }

    fn held_by(&self, lease: &Lease, now: Instant) -> bool {
        self.lease
            .as_ref()
            .is_some_and(|(f, h, until)| *f == lease.fence && *h == lease.holder && *until > now)
    }
}

#[derive(Default)]
struct Memory {
    slots: HashMap<String, Slot>,
    fence: u64,
}

/// The token store of one process: a map behind a lock, bounded ([`MEMORY_MAX_KEYS`]); waiting
/// sessions are woken when a lease is released or an entry written.
#[derive(Default)]
pub struct MemoryTokens {
    inner: Mutex<Memory>,
    changed: Condvar,
}

impl fmt::Debug for MemoryTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = self.lock().slots.len();
        f.debug_struct("MemoryTokens").field("keys", &keys).finish()
    }
}

impl MemoryTokens {
    /// An empty store.
    pub fn new() -> MemoryTokens {
        MemoryTokens::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `entry` under `key` as it is (no lease, no version check): what a store that
    /// fell back on this one had written, or a test's setup. `false` when the store is full of
    /// leased keys and `key` is new (nothing kept).
    pub fn put(&self, key: &str, entry: TokenEntry) -> bool {
        let mut m = self.lock();
        make_room(&mut m, key);
        if m.slots.len() >= MEMORY_MAX_KEYS && !m.slots.contains_key(key) {
            return false;
        }
        m.slots.entry(key.to_owned()).or_default().entry = Some(entry);
        self.changed.notify_all();
        true
    }
}

/// Drops an entry without a live lease when the map is full and `key` is new.
fn make_room(m: &mut Memory, key: &str) {
    if m.slots.len() < MEMORY_MAX_KEYS || m.slots.contains_key(key) {
        return;
    }
    let now = Instant::now();
    let victim = m
        .slots
        .iter()
        .find(|(_, s)| !s.leased(now))
        .map(|(k, _)| k.clone());
    if let Some(k) = victim {
        m.slots.remove(&k);
    }
}

impl TokenStore for MemoryTokens {
    fn read(&self, key: &str) -> Result<Option<TokenEntry>, TokenStoreError> {
        Ok(self.lock().slots.get(key).and_then(|s| s.entry.clone()))
    }

    fn lease(&self, key: &str, ttl: Duration) -> Result<Option<Lease>, TokenStoreError> {
        let now = Instant::now();
        let mut m = self.lock();
        if m.slots.get(key).is_some_and(|s| s.leased(now)) {
            return Ok(None);
        }
        if m.slots.len() >= MEMORY_MAX_KEYS && !m.slots.contains_key(key) {
            make_room(&mut m, key);
            if m.slots.len() >= MEMORY_MAX_KEYS {
                return Err(TokenStoreError::Unavailable(format!(
                    "every one of its {MEMORY_MAX_KEYS} keys is leased"
                )));
            }
        }
        m.fence += 1;
        let fence = m.fence;
        let holder = random_holder();
        m.slots.entry(key.to_owned()).or_default().lease = Some((fence, holder.clone(), now + ttl));
        Ok(Some(Lease::new(key, fence, holder)))
    }

    fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, TokenStoreError> {
        let now = Instant::now();
        let mut m = self.lock();
        match m.slots.get_mut(&lease.key) {
            Some(s) if s.held_by(lease, now) => {
                s.lease = Some((lease.fence, lease.holder.clone(), now + ttl));
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn write(
        &self,
        lease: &Lease,
        expected: u64,
        credentials: &ResourceCredentials,
        spent: &[Spent],
    ) -> Result<Written, TokenStoreError> {
        let now = Instant::now();
        let mut m = self.lock();
        let Some(s) = m.slots.get_mut(&lease.key) else {
            return Ok(Written::Conflict);
        };
        let current = s.entry.as_ref().map_or(0, |e| e.version);
        if !s.held_by(lease, now) || current != expected {
            return Ok(Written::Conflict);
        }
        let version = current + 1;
        s.entry = Some(TokenEntry {
            version,
            credentials: credentials.clone(),
            spent: spent.iter().take(MAX_LINEAGE).copied().collect(),
        });
        self.changed.notify_all();
        Ok(Written::Stored { version })
    }

    fn release(&self, lease: &Lease) {
        let now = Instant::now();
        let mut m = self.lock();
        if let Some(s) = m.slots.get_mut(&lease.key) {
            if s.held_by(lease, now) {
                s.lease = None;
            }
        }
        self.changed.notify_all();
    }

    fn wait(&self, key: &str, max: Duration) {
        let m = self.lock();
        let _ = key;
        let _ = self
            .changed
            .wait_timeout(m, max)
            .unwrap_or_else(|p| p.into_inner());
    }
}

/// The token store an [`AuthHttp`] gives its authorizations, with the lease's timing.
#[derive(Clone, Debug)]
pub struct SharedTokens {
    store: Arc<dyn TokenStore>,
    lease_ttl: Duration,
    poll: Duration,
}

impl Default for SharedTokens {
    fn default() -> Self {
        SharedTokens::new(Arc::new(MemoryTokens::new()))
    }
}

impl SharedTokens {
    /// `store`, with a lease of [`DEFAULT_LEASE_TTL`] and reads every [`DEFAULT_POLL`] while
    /// another session refreshes.
    pub fn new(store: Arc<dyn TokenStore>) -> SharedTokens {
        SharedTokens {
            store,
            lease_ttl: DEFAULT_LEASE_TTL,
            poll: DEFAULT_POLL,
        }
    }

    /// Sets how long a lease lasts unless renewed (renewed every third of it while the refresh
    /// runs): how long the others wait when its holder dies.
    #[must_use]
    pub fn lease_ttl(mut self, ttl: Duration) -> SharedTokens {
        self.lease_ttl = ttl.max(Duration::from_millis(10));
        self
    }

    /// Sets how often a session waiting for another's refresh reads again.
    #[must_use]
    pub fn poll(mut self, every: Duration) -> SharedTokens {
        self.poll = every.max(Duration::from_millis(1));
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TokenStore> {
        &self.store
    }

    /// The lease's lifetime.
    pub fn ttl(&self) -> Duration {
        self.lease_ttl
    }

    /// The interval of reads while waiting.
    pub fn poll_interval(&self) -> Duration {
        self.poll
    }
}

/// How an entry of the store stands to a session's own tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// The same tokens.
    Same,
    /// A successor of them: take it.
    Successor,
    /// Anything else (another lineage, an older set, another issuer or resource): never taken.
    Unrelated,
}

/// How `entry` stands to `mine` (see the [module docs](self)).
pub fn relation(mine: &ResourceCredentials, entry: &TokenEntry) -> Relation {
    let theirs = &entry.credentials;
    if theirs.issuer != mine.issuer || theirs.resource != mine.resource {
        return Relation::Unrelated;
    }
    if theirs.tokens == mine.tokens {
        return Relation::Same;
    }
    match &mine.tokens.refresh_token {
        Some(r) => {
            if entry.spent.contains(&spent_digest(r)) {
                Relation::Successor
            } else {
                Relation::Unrelated
            }
        }
        // A grant without a refresh token runs again: a later token of the same key is a
        // successor.
        None => {
            let later = match (theirs.tokens.expires_at_ms, mine.tokens.expires_at_ms) {
                (Some(t), Some(m)) => t > m,
                (None, Some(_)) => true,
                _ => false,
            };
            if later && theirs.tokens.refresh_token.is_none() {
                Relation::Successor
            } else {
                Relation::Unrelated
            }
        }
    }
}

/// A lease held while a refresh runs, renewed by a thread until dropped (and never past its
/// deadline).
pub(crate) struct Held {
    pub(crate) lease: Lease,
    /// The version read under the lease (0: none).
    pub(crate) version: u64,
    /// The lineage of the version read, to extend.
    pub(crate) spent: Vec<Spent>,
    /// The tokens the refresh spends.
    pub(crate) before: ResourceCredentials,
    stop: Option<mpsc::Sender<()>>,
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Held")
            .field("lease", &self.lease)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Held {
    pub(crate) fn new(
        shared: &SharedTokens,
        lease: Lease,
        version: u64,
        spent: Vec<Spent>,
        before: ResourceCredentials,
        deadline: Instant,
    ) -> Held {
        let (tx, rx) = mpsc::channel::<()>();
        let store = shared.store.clone();
        let ttl = shared.lease_ttl;
        let renewed = lease.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp-sansio-lease".into())
            .spawn(move || loop {
                match rx.recv_timeout(ttl / 3) {
                    Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                        // Lost: stop; unreachable: try again (the write's fencing decides).
                        if let Ok(false) = store.renew(&renewed, ttl) {
                            return;
                        }
                    }
                    _ => return,
                }
            });
        Held {
            lease,
            version,
            spent,
            before,
            stop: spawned.is_ok().then_some(tx),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::auth::TokenSet;

    fn creds(access: &str) -> ResourceCredentials {
        ResourceCredentials {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
            tokens: TokenSet {
                access_token: access.into(),
                refresh_token: Some(format!("r-{access}")),
                expires_at_ms: Some(1),
                scopes: Vec::new(),
                dpop: false,
            },
        }
    }

    /// The process's store holds at most `MEMORY_MAX_KEYS` keys: a new key takes the place of
    /// one without a live lease, and is refused when every key is leased.
    #[test]
    fn the_memory_store_is_bounded() {
        let store = MemoryTokens::new();
        let ttl = Duration::from_secs(60);
        let leases: Vec<Lease> = (0..MEMORY_MAX_KEYS)
            .map(|i| store.lease(&format!("k{i}"), ttl).unwrap().unwrap())
            .collect();
        assert!(store.lease("one-more", ttl).is_err());
        assert_eq!(store.lock().slots.len(), MEMORY_MAX_KEYS);
        store.release(&leases[7]);
        assert!(store.lease("one-more", ttl).unwrap().is_some());
        assert_eq!(store.lock().slots.len(), MEMORY_MAX_KEYS);
        store.put(
            "another",
            TokenEntry {
                version: 1,
                credentials: creds("a"),
                spent: vec![],
            },
        );
        assert!(store.lock().slots.len() <= MEMORY_MAX_KEYS);
    }

    /// A refresh ticket's `Debug` shows its lease (key, fence, holder) and the version read
    /// under it, and not the tokens the refresh spends.
    #[test]
    fn a_tickets_debug_shows_its_lease_and_version_and_no_token() {
        let store = Arc::new(MemoryTokens::new());
        let shared = SharedTokens::new(store.clone());
        let ttl = Duration::from_secs(60);
        let lease = store.lease("tokens:k", ttl).unwrap().unwrap();
        let fence = lease.fence();
        let deadline = Instant::now() + ttl;
        let held = Held::new(&shared, lease, 7, vec![], creds("s3cret"), deadline);
        let shown = format!("{:?}", crate::auth::RefreshTicket(Some(held)));
        assert!(shown.contains("Held"), "{shown}");
        assert!(shown.contains("tokens:k"), "{shown}");
        assert!(shown.contains(&format!("fence: {fence}")), "{shown}");
        assert!(shown.contains("version: 7"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    /// Dropping a ticket stops the renewing of its lease: while the ticket is held the lease
    /// outlives its TTL (renewed every third of it) and no other holder takes the key; dropped
    /// without ending the refresh (a session that gave up), the lease lapses after its TTL and
    /// another holder takes the key, long before the authorization's deadline.
    #[test]
    fn a_dropped_ticket_stops_renewing_and_its_lease_lapses_after_its_ttl() {
        let ttl = Duration::from_millis(1200);
        let store = Arc::new(MemoryTokens::new());
        let shared = SharedTokens::new(store.clone()).lease_ttl(ttl);
        let lease = store.lease("tokens:k", ttl).unwrap().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let held = Held::new(&shared, lease, 0, vec![], creds("a"), deadline);
        let ticket = crate::auth::RefreshTicket(Some(held));
        std::thread::sleep(ttl + ttl / 2);
        assert_eq!(
            store.lease("tokens:k", ttl).unwrap(),
            None,
            "renewed while held"
        );
        drop(ticket);
        std::thread::sleep(ttl + ttl / 2);
        assert!(
            store.lease("tokens:k", ttl).unwrap().is_some(),
            "lapsed after its TTL once dropped"
        );
    }

    /// A successor names the spent refresh token; the same tokens are the same; another issuer,
    /// another resource or another lineage is unrelated.
    #[test]
    fn relations() {
        let mine = creds("a1");
        let next = TokenEntry {
            version: 2,
            credentials: creds("a2"),
            spent: vec![spent_digest("r-a1")],
        };
        assert_eq!(relation(&mine, &next), Relation::Successor);
        let same = TokenEntry {
            version: 1,
            credentials: creds("a1"),
            spent: vec![],
        };
        assert_eq!(relation(&mine, &same), Relation::Same);
        let mut other_issuer = next.clone();
        other_issuer.credentials.issuer = "https://evil.example".into();
        assert_eq!(relation(&mine, &other_issuer), Relation::Unrelated);
        let mut other_resource = next.clone();
        other_resource.credentials.resource = "https://mcp.example/other".into();
        assert_eq!(relation(&mine, &other_resource), Relation::Unrelated);
        let other_lineage = TokenEntry {
            spent: vec![spent_digest("r-zz")],
            ..next
        };
        assert_eq!(relation(&mine, &other_lineage), Relation::Unrelated);
    }
}
