//! The token-store seam at the edges of its limits and decisions (`scripts/mutants.sh
//! net-tokens`): the process's store ([`MemoryTokens`]) holds at most `MEMORY_MAX_KEYS` keys;
//! a lease is one holder's, with a fencing number larger each time; a write is a compare-and-set
//! on the version and the lease and keeps at most `MAX_LINEAGE` spent digests; a session adopts
//! only a successor of its own tokens; nothing of a token shows in `Debug`.

use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::auth::{ResourceCredentials, TokenSet};
use mcp_sansio_net::auth::tokens::{
    random_holder, relation, spent_digest, Lease, Relation, Written, DEFAULT_LEASE_TTL,
    DEFAULT_POLL, MAX_LINEAGE, MEMORY_MAX_KEYS,
};
use mcp_sansio_net::auth::{MemoryTokens, SharedTokens, TokenEntry, TokenStore};

const TTL: Duration = Duration::from_secs(600);

fn creds(access: &str, refresh: Option<&str>, expires: Option<u64>) -> ResourceCredentials {
    ResourceCredentials {
        issuer: "https://as.example".into(),
        resource: "https://mcp.example/mcp".into(),
        tokens: TokenSet {
            access_token: access.into(),
            refresh_token: refresh.map(str::to_owned),
            expires_at_ms: expires,
            scopes: Vec::new(),
            dpop: false,
        },
    }
}

fn entry(version: u64, c: ResourceCredentials) -> TokenEntry {
    TokenEntry {
        version,
        credentials: c,
        spent: Vec::new(),
    }
}

fn keys(store: &MemoryTokens) -> usize {
    let shown = format!("{store:?}");
    let n = shown
        .split("keys: ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no key count in {shown}"));
    n.parse().unwrap()
}

/// SHA-256 (FIPS 180-4, test vector "abc"): the digest of a spent refresh token.
#[test]
fn a_spent_digest_is_the_sha256_of_the_refresh_token() {
    let d = spent_digest("abc");
    let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

/// A holder is 16 random bytes in hex: 32 hex digits, a new one each time.
#[test]
fn a_holder_is_32_random_hex_digits() {
    let a = random_holder();
    let b = random_holder();
    assert_eq!(a.len(), 32);
    assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
    assert_ne!(a, b);
}

/// An entry's `Debug` shows its version, issuer and how many refresh tokens were spent, never a
/// token.
#[test]
fn an_entrys_debug_shows_its_version_and_no_token() {
    let mut e = entry(7, creds("access-SECRET", Some("refresh-SECRET"), Some(1)));
    e.spent = vec![spent_digest("a"), spent_digest("b")];
    let shown = format!("{e:?}");
    assert!(shown.contains("version: 7"), "{shown}");
    assert!(shown.contains("https://as.example"), "{shown}");
    assert!(shown.contains("spent: 2"), "{shown}");
    assert!(!shown.contains("SECRET"), "{shown}");
}

/// A lease gives back its key, fencing number and holder.
#[test]
fn a_lease_keeps_its_key_fence_and_holder() {
    let l = Lease::new("key-1", 42, "holder-9");
    assert_eq!(l.key(), "key-1");
    assert_eq!(l.fence(), 42);
    assert_eq!(l.holder(), "holder-9");
}

/// One holder at a time; the fencing number grows with every lease taken (on any key); a
/// released lease can be taken again, with a larger number, and the old one is no longer held.
#[test]
fn a_lease_is_one_holders_and_each_fence_is_larger() {
    let store = MemoryTokens::new();
    let a = store.lease("k", TTL).unwrap().expect("free");
    assert_eq!(a.key(), "k");
    assert_eq!(a.holder().len(), 32);
    assert_eq!(store.lease("k", TTL).unwrap(), None);
    let other = store
        .lease("other", TTL)
        .unwrap()
        .expect("another key is free");
    assert!(other.fence() > a.fence());
    assert!(store.renew(&a, TTL).unwrap());
    store.release(&a);
    assert!(!store.renew(&a, TTL).unwrap());
    let b = store.lease("k", TTL).unwrap().expect("free again");
    assert!(b.fence() > other.fence());
    // The old lease, released, cannot release or renew the new one.
    store.release(&a);
    assert!(store.renew(&b, TTL).unwrap());
    assert_eq!(store.lease("k", TTL).unwrap(), None);
    // A lease of another holder, or of another fencing number, is not the one held.
    let forged = Lease::new("k", b.fence(), "someone-else");
    assert!(!store.renew(&forged, TTL).unwrap());
    let stale = Lease::new("k", a.fence(), b.holder());
    assert!(!store.renew(&stale, TTL).unwrap());
    store.release(&forged);
    store.release(&stale);
    assert_eq!(store.lease("k", TTL).unwrap(), None);
}

/// A write stores only under the lease held and on the version read (0: none): one more each
/// time; any other write is a conflict and changes nothing.
#[test]
fn a_write_is_a_compare_and_set_on_the_version_and_the_lease() {
    let store = MemoryTokens::new();
    let never = Lease::new("k", 1, "nobody");
    assert_eq!(
        store.write(&never, 0, &creds("a0", None, None), &[]),
        Ok(Written::Conflict)
    );
    let l = store.lease("k", TTL).unwrap().unwrap();
    assert_eq!(
        store.write(&l, 0, &creds("a1", None, None), &[]),
        Ok(Written::Stored { version: 1 })
    );
    assert_eq!(
        store.write(&l, 0, &creds("x", None, None), &[]),
        Ok(Written::Conflict)
    );
    assert_eq!(
        store.write(&l, 2, &creds("x", None, None), &[]),
        Ok(Written::Conflict)
    );
    assert_eq!(
        store.write(&l, 1, &creds("a2", None, None), &[]),
        Ok(Written::Stored { version: 2 })
    );
    let forged = Lease::new("k", l.fence(), "someone-else");
    assert_eq!(
        store.write(&forged, 2, &creds("x", None, None), &[]),
        Ok(Written::Conflict)
    );
    store.release(&l);
    assert_eq!(
        store.write(&l, 2, &creds("x", None, None), &[]),
        Ok(Written::Conflict)
    );
    let read = store.read("k").unwrap().expect("the entry");
    assert_eq!(read.version, 2);
    assert_eq!(read.credentials.tokens.access_token, "a2");
    assert_eq!(store.read("absent").unwrap(), None);
}

/// A write keeps the first `MAX_LINEAGE` (16) spent digests, newest first: 16 kept whole, 17
/// cut to the first 16.
#[test]
fn a_write_keeps_sixteen_spent_digests() {
    assert_eq!(MAX_LINEAGE, 16);
    let store = MemoryTokens::new();
    let spent: Vec<[u8; 32]> = (0..17).map(|i| spent_digest(&format!("r{i}"))).collect();
    let l = store.lease("k", TTL).unwrap().unwrap();
    store
        .write(&l, 0, &creds("a", None, None), &spent[..16])
        .unwrap();
    assert_eq!(store.read("k").unwrap().unwrap().spent, spent[..16]);
    store.write(&l, 1, &creds("b", None, None), &spent).unwrap();
    assert_eq!(store.read("k").unwrap().unwrap().spent, spent[..16]);
}

/// The process's store holds `MEMORY_MAX_KEYS` (4096) keys: the last one fits; past it a new
/// key takes the place of an entry without a live lease, is refused when every key is leased,
/// and a key already held is always written.
#[test]
fn the_memory_store_holds_4096_keys_and_makes_room_only_from_unleased_ones() {
    assert_eq!(MEMORY_MAX_KEYS, 4096);
    let store = MemoryTokens::new();
    let c = creds("a", None, None);
    for i in 0..MEMORY_MAX_KEYS - 1 {
        assert!(store.put(&format!("k{i}"), entry(1, c.clone())));
    }
    assert_eq!(keys(&store), MEMORY_MAX_KEYS - 1);
    // The last key fits: nothing is dropped for it.
    assert!(store.put("last", entry(1, c.clone())));
    assert_eq!(keys(&store), MEMORY_MAX_KEYS);
    for i in 0..MEMORY_MAX_KEYS - 1 {
        assert!(store.read(&format!("k{i}")).unwrap().is_some(), "k{i}");
    }
    // Full of unleased entries: a new key takes one's place.
    assert!(store.put("new", entry(1, c.clone())));
    assert_eq!(keys(&store), MEMORY_MAX_KEYS);
    assert!(store.read("new").unwrap().is_some());
    assert!(store.lease("leased-new", TTL).unwrap().is_some());
    assert_eq!(keys(&store), MEMORY_MAX_KEYS);

    // Every key leased: a new key is refused (put: false; lease: an error), a known one is not.
    let full = MemoryTokens::new();
    let leases: Vec<Lease> = (0..MEMORY_MAX_KEYS)
        .map(|i| full.lease(&format!("k{i}"), TTL).unwrap().unwrap())
        .collect();
    assert!(!full.put("new", entry(1, c.clone())));
    assert_eq!(full.read("new").unwrap(), None);
    assert!(full.lease("new", TTL).is_err());
    assert_eq!(keys(&full), MEMORY_MAX_KEYS);
    assert!(full.put("k5", entry(3, c.clone())));
    assert_eq!(full.read("k5").unwrap().unwrap().version, 3);
    // One lease released: its key makes room for exactly one new key.
    full.release(&leases[9]);
    assert!(full.put("new", entry(1, c.clone())));
    assert_eq!(full.read("k9").unwrap(), None);
    assert_eq!(keys(&full), MEMORY_MAX_KEYS);
    // "new" has no lease: the next new key takes its place, the leased ones stay.
    assert!(full.put("newer", entry(1, c)));
    assert_eq!(full.read("new").unwrap(), None);
    assert!(full.read("k5").unwrap().is_some());
    assert_eq!(keys(&full), MEMORY_MAX_KEYS);
}

/// A put keeps the entry as given (its version too: no compare-and-set).
#[test]
fn a_put_keeps_the_entry_as_given() {
    let store = MemoryTokens::new();
    assert!(store.put("k", entry(9, creds("a", Some("r"), Some(5)))));
    let read = store.read("k").unwrap().unwrap();
    assert_eq!(read, entry(9, creds("a", Some("r"), Some(5))));
}

/// The seam's timing: a lease of 10 s and a read every 25 ms by default; a lease never shorter
/// than 10 ms, a poll never shorter than 1 ms; the store given is the store used.
#[test]
fn shared_tokens_keep_their_store_and_their_floors() {
    assert_eq!(DEFAULT_LEASE_TTL, Duration::from_secs(10));
    assert_eq!(DEFAULT_POLL, Duration::from_millis(25));
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokens::new());
    let shared = SharedTokens::new(store.clone());
    assert!(Arc::ptr_eq(shared.store(), &store));
    assert_eq!(shared.ttl(), DEFAULT_LEASE_TTL);
    assert_eq!(shared.poll_interval(), DEFAULT_POLL);
    let shared = shared
        .lease_ttl(Duration::from_millis(9))
        .poll(Duration::ZERO);
    assert_eq!(shared.ttl(), Duration::from_millis(10));
    assert_eq!(shared.poll_interval(), Duration::from_millis(1));
    let shared = shared
        .lease_ttl(Duration::from_millis(11))
        .poll(Duration::from_millis(2));
    assert_eq!(shared.ttl(), Duration::from_millis(11));
    assert_eq!(shared.poll_interval(), Duration::from_millis(2));
    let default = SharedTokens::default();
    assert_eq!(default.ttl(), DEFAULT_LEASE_TTL);
    assert!(default.store().read("k").unwrap().is_none());
}

/// Without a refresh token, a successor is a later access token of the same issuer and
/// resource and no refresh token: a strictly later expiry, or none where mine has one. An equal
/// or earlier expiry, an entry with a refresh token, or mine without an expiry is unrelated.
#[test]
fn without_a_refresh_token_only_a_strictly_later_token_is_a_successor() {
    let mine = creds("a1", None, Some(1000));
    let at = |access: &str, refresh: Option<&str>, expires: Option<u64>| {
        relation(&mine, &entry(2, creds(access, refresh, expires)))
    };
    assert_eq!(at("a2", None, Some(1001)), Relation::Successor);
    assert_eq!(at("a2", None, Some(1000)), Relation::Unrelated);
    assert_eq!(at("a2", None, Some(999)), Relation::Unrelated);
    assert_eq!(at("a2", None, None), Relation::Successor);
    assert_eq!(at("a2", Some("r"), Some(1001)), Relation::Unrelated);
    assert_eq!(at("a1", None, Some(1000)), Relation::Same);
    let none = creds("a1", None, None);
    assert_eq!(
        relation(&none, &entry(2, creds("a2", None, Some(5)))),
        Relation::Unrelated
    );
    assert_eq!(
        relation(&none, &entry(2, creds("a2", None, None))),
        Relation::Unrelated
    );
}

/// With a refresh token, a successor names it among the spent digests, at any place of the
/// lineage; the same issuer is not enough, nor the same resource.
#[test]
fn with_a_refresh_token_a_successor_names_it_among_the_spent() {
    let mine = creds("a1", Some("r1"), Some(1000));
    let mut next = entry(5, creds("a5", Some("r5"), Some(1)));
    next.spent = (2..5)
        .map(|i| spent_digest(&format!("r{i}")))
        .chain([spent_digest("r1")])
        .collect();
    assert_eq!(relation(&mine, &next), Relation::Successor);
    next.spent.pop();
    assert_eq!(relation(&mine, &next), Relation::Unrelated);
    let mut other_issuer = entry(2, creds("a2", Some("r2"), None));
    other_issuer.spent = vec![spent_digest("r1")];
    other_issuer.credentials.issuer = "https://other.example".into();
    assert_eq!(relation(&mine, &other_issuer), Relation::Unrelated);
    let mut other_resource = entry(2, creds("a2", Some("r2"), None));
    other_resource.spent = vec![spent_digest("r1")];
    other_resource.credentials.resource = "https://mcp.example/other".into();
    assert_eq!(relation(&mine, &other_resource), Relation::Unrelated);
}

/// A store that keeps the trait's own `wait`.
#[derive(Debug, Default)]
struct Plain(MemoryTokens);

impl TokenStore for Plain {
    fn read(
        &self,
        key: &str,
    ) -> Result<Option<TokenEntry>, mcp_sansio_net::auth::tokens::TokenStoreError> {
        self.0.read(key)
    }
    fn lease(
        &self,
        key: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, mcp_sansio_net::auth::tokens::TokenStoreError> {
        self.0.lease(key, ttl)
    }
    fn renew(
        &self,
        lease: &Lease,
        ttl: Duration,
    ) -> Result<bool, mcp_sansio_net::auth::tokens::TokenStoreError> {
        self.0.renew(lease, ttl)
    }
    fn write(
        &self,
        lease: &Lease,
        expected: u64,
        credentials: &ResourceCredentials,
        spent: &[[u8; 32]],
    ) -> Result<Written, mcp_sansio_net::auth::tokens::TokenStoreError> {
        self.0.write(lease, expected, credentials, spent)
    }
    fn release(&self, lease: &Lease) {
        self.0.release(lease);
    }
}

/// A store without a way to be woken waits the whole pause it is given (a waiting session
/// then reads again): never less, so waiting sessions do not spin on the store.
#[test]
fn the_default_wait_sleeps_the_whole_pause() {
    let store = Plain::default();
    let start = std::time::Instant::now();
    store.wait("k", Duration::from_millis(40));
    assert!(
        start.elapsed() >= Duration::from_millis(40),
        "{:?}",
        start.elapsed()
    );
}
