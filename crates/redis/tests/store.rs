//! The shared store against a real `redis-server`: what one executor process stores another
//! finds, per kind (catalog, era hint, task handle); what does not read back is a miss and is
//! deleted; contexts never share; N cold executors make one listing.

mod store_support;
mod support;

use std::sync::{Arc, Barrier};

use mcp_sansio_net::cache::{CatalogCache, Store};
use mcp_sansio_redis::frame;
use mcp_sansio_test_support::adapter_tests::cache::{dpop_key, CacheServer, Script};
use store_support::*;
use support::RedisServer;

/// spec.md §3 (SEP-2549): a listing is fresh for `ttlMs`, and the era a negotiation found is
/// offered to the next connection of the same server and context. A second process (its own
/// `Client` and its own `RedisStore` connection) whose cold work item goes to a server the first
/// knows sends 0 `server/discover` and, within the listing's lifetime, 0 `tools/list`: both came
/// from Redis, where they expire with their lifetime (`PX`).
#[test]
fn a_second_process_finds_the_listing_and_the_era_with_no_request() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    let first = client(store(&redis.url()));
    assert_eq!(
        work_item(&first, config(&server, "tok")),
        ["weather", "echo"]
    );
    assert_eq!(server.count("tools/list"), 1);
    let discovers = server.count("server/discover");
    assert!(discovers >= 1, "the first negotiated");

    let second = client(store(&redis.url()));
    assert_eq!(
        work_item(&second, config(&server, "tok")),
        ["weather", "echo"]
    );
    assert_eq!(
        server.count("server/discover"),
        discovers,
        "the era came from Redis"
    );
    assert_eq!(server.count("tools/list"), 1, "the listing came from Redis");

    // Both entries expire in Redis with their lifetime: the listing's `ttlMs` (60 s), the
    // hint's (the `server/discover` answer's `ttlMs`, capped).
    let catalog = CatalogCache::key(&config(&server, "tok"));
    let ttl = pttl(&redis.url(), &catalog);
    assert!(ttl > 50_000 && ttl <= 60_000, "catalog PTTL {ttl}");
    let era = mcp_sansio_net::cache::hint_key(&config(&server, "tok"));
    let ttl = pttl(&redis.url(), era.as_bytes());
    assert!(ttl > 0, "era PTTL {ttl}");
}

/// A value round-trips through `put_for`/`get` framed (not as given), with `PX` from its
/// lifetime; a lifetime of 0 deletes.
#[test]
fn a_value_round_trips_framed_with_its_lifetime() {
    let redis = RedisServer::start();
    let s = store(&redis.url());
    s.put_for(
        b"era:abc",
        b"m\nvalue".to_vec(),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(s.get(b"era:abc").as_deref(), Some(&b"m\nvalue"[..]));
    let stored = get_raw(&redis.url(), b"era:abc").unwrap();
    assert_eq!(stored.len(), frame::FRAME_OVERHEAD + 7, "framed");
    let ttl = pttl(&redis.url(), b"era:abc");
    assert!(ttl > 25_000 && ttl <= 30_000, "PTTL {ttl}");
    s.put_for(b"era:abc", b"x".to_vec(), std::time::Duration::ZERO);
    assert_eq!(get_raw(&redis.url(), b"era:abc"), None);
}

/// Every tampered value is a miss and is deleted, never trusted: not a frame, a foreign
/// format version, truncated, corrupt, written under another key, expired, or larger than the
/// bound (deleted unread).
#[test]
fn poisoned_foreign_truncated_and_oversized_values_are_misses_and_deleted() {
    let redis = RedisServer::start();
    let url = redis.url();
    let mut small = options();
    small.max_value_bytes = 1024;
    let s = mcp_sansio_redis::RedisStore::with_options(&url, small).unwrap();
    s.put_for(
        b"k",
        b"payload".to_vec(),
        std::time::Duration::from_secs(60),
    );
    let good = get_raw(&url, b"k").unwrap();
    let mut foreign = good.clone();
    foreign[6] = 2;
    let mut corrupt = good.clone();
    corrupt[30] ^= 1;
    s.put_for(
        b"other",
        b"payload".to_vec(),
        std::time::Duration::from_secs(60),
    );
    let other_key = get_raw(&url, b"other").unwrap();
    let expired = frame::encode(b"k", b"payload", 1, 1024).unwrap();
    let cases: [(&str, Vec<u8>); 7] = [
        ("not a frame", b"garbage".to_vec()),
        ("foreign version", foreign),
        ("truncated", good[..good.len() - 3].to_vec()),
        ("corrupt", corrupt),
        ("another key's", other_key),
        ("expired", expired),
        // A whole, fresh frame under the right key, only larger than the bound.
        (
            "oversized",
            frame::encode(b"k", &[b'x'; 1000], u64::MAX, 1 << 20).unwrap(),
        ),
    ];
    for (what, value) in cases {
        set_raw(&url, b"k", &value);
        assert_eq!(s.get(b"k"), None, "{what} is a miss");
        assert_eq!(get_raw(&url, b"k"), None, "{what} is deleted");
    }
    // A value of another Redis type under the key: a miss, deleted.
    let () = redis::cmd("LPUSH")
        .arg(namespaced(b"k"))
        .arg("x")
        .query(&mut raw(&url))
        .unwrap();
    assert_eq!(s.get(b"k"), None);
    assert!(keys(&url).iter().all(|k| k != "test-ns:k"));
}

/// A listing whose frame is whole but whose pages do not read as a listing (poisoned) is a miss
/// to the catalog cache's reader (`Catalog::from_pages`): the work item lists on the wire and
/// the entry is replaced by the good one.
#[test]
fn a_poisoned_listing_is_listed_again_and_replaced() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    let s = store(&redis.url());
    let c = client(s.clone());
    work_item(&c, config(&server, "tok"));
    let key = CatalogCache::key(&config(&server, "tok"));
    s.put_for(
        &key,
        b"mcpcat\x00\x01not pages".to_vec(),
        std::time::Duration::from_secs(60),
    );
    let other = client(store(&redis.url()));
    assert_eq!(
        work_item(&other, config(&server, "tok")),
        ["weather", "echo"]
    );
    assert_eq!(
        server.count("tools/list"),
        2,
        "the poisoned entry was not used"
    );
    let replaced = s.get(&key).expect("the good listing replaced it");
    assert!(replaced.starts_with(b"mcpcat"));
    assert!(replaced.len() > 30);
}

/// spec.md §3: caches "MUST NOT be shared across authorization contexts". A DPoP tenant and a
/// bearer tenant of one server, in two processes, each list on the wire and each have an entry
/// of its own in Redis; the bearer tenant's entry copied under the DPoP tenant's key does not
/// read back there.
#[test]
fn a_dpop_tenant_and_a_bearer_tenant_never_share() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    let key = dpop_key();
    let a = client(store(&redis.url()));
    let b = client(store(&redis.url()));
    work_item(&a, dpop(&server, "shared-token", &key));
    assert_eq!(server.count("tools/list"), 1);
    work_item(&b, config(&server, "shared-token"));
    assert_eq!(
        server.count("tools/list"),
        2,
        "the bearer tenant got the DPoP tenant's entry"
    );
    let lists: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.method == "tools/list")
        .map(|s| s.authorization)
        .collect();
    assert_eq!(
        lists,
        [
            Some("DPoP shared-token".to_owned()),
            Some("Bearer shared-token".to_owned())
        ]
    );
    let catalogs = keys(&redis.url())
        .into_iter()
        .filter(|k| k.starts_with("test-ns:catalog:"))
        .count();
    assert_eq!(catalogs, 2);
    // Each finds its own entry again.
    work_item(&a, dpop(&server, "shared-token", &key));
    work_item(&b, config(&server, "shared-token"));
    assert_eq!(server.count("tools/list"), 2);
    // The bearer tenant's bytes under the DPoP tenant's key: a miss, deleted.
    let dpop_key_bytes = CatalogCache::key(&dpop(&server, "shared-token", &key));
    let bearer = get_raw(
        &redis.url(),
        &CatalogCache::key(&config(&server, "shared-token")),
    );
    set_raw(&redis.url(), &dpop_key_bytes, &bearer.unwrap());
    let c = client(store(&redis.url()));
    work_item(&c, dpop(&server, "shared-token", &key));
    assert_eq!(
        server.count("tools/list"),
        3,
        "another key's entry was used"
    );
}

/// "N executors cold on one origin give one listing fleet-wide while a short lease holds":
/// 8 processes (each its own `Client` and `RedisStore`), cold, list at once: the server sees
/// one `tools/list`, and every work item gets the listing.
#[test]
fn eight_cold_executors_make_one_listing() {
    let redis = RedisServer::start();
    let server = Arc::new(CacheServer::start(Script::default()));
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (url, server, barrier) = (redis.url(), server.clone(), barrier.clone());
            std::thread::spawn(move || {
                let c = client(store(&url));
                let cfg = config(&server, "tok");
                barrier.wait();
                work_item(&c, cfg)
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), ["weather", "echo"]);
    }
    assert_eq!(server.count("tools/list"), 1, "one listing fleet-wide");
}

/// "The others wait within a bound, then list for themselves": a lease whose holder never
/// writes (it died mid-listing) holds a cold work item at most `lease_wait` (1 s) before it
/// lists on its own.
#[test]
fn a_lease_whose_holder_never_writes_holds_others_only_within_the_wait() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    let cfg = config(&server, "tok");
    let mut lease = b"lease:".to_vec();
    lease.extend_from_slice(&CatalogCache::key(&cfg));
    let () = redis::cmd("SET")
        .arg(namespaced(&lease))
        .arg("a dead holder")
        .arg("PX")
        .arg(30_000)
        .query(&mut raw(&redis.url()))
        .unwrap();
    let c = client(store(&redis.url()));
    let start = std::time::Instant::now();
    assert_eq!(work_item(&c, cfg), ["weather", "echo"]);
    let took = start.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(1000),
        "it waited: {took:?}"
    );
    assert!(
        took < std::time::Duration::from_millis(2500),
        "within the bound: {took:?}"
    );
    assert_eq!(server.count("tools/list"), 1, "then listed for itself");
}

/// A listing that may not be kept (no `ttlMs`: "stale immediately") releases the lease, and the
/// executors waiting on it list at once instead of one after another: with a poll of 300 ms,
/// 6 cold executors each end within about one poll, not one poll per executor before it.
#[test]
fn a_listing_that_may_not_be_kept_releases_the_waiters_at_once() {
    let redis = RedisServer::start();
    let script = Script {
        ttl: None,
        ..Script::default()
    };
    let server = Arc::new(CacheServer::start(script));
    let barrier = Arc::new(Barrier::new(6));
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let (url, server, barrier) = (redis.url(), server.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut o = options();
                o.lease_poll = std::time::Duration::from_millis(300);
                o.lease_wait = std::time::Duration::from_secs(5);
                let c = client(Arc::new(
                    mcp_sansio_redis::RedisStore::with_options(&url, o).unwrap(),
                ));
                let cfg = config(&server, "tok");
                barrier.wait();
                let start = std::time::Instant::now();
                assert_eq!(work_item(&c, cfg), ["weather", "echo"]);
                start.elapsed()
            })
        })
        .collect();
    for t in threads {
        let took = t.join().unwrap();
        assert!(took < std::time::Duration::from_millis(1200), "{took:?}");
    }
    assert_eq!(
        server.count("tools/list"),
        6,
        "nothing may be kept: each listed"
    );
}

/// Only listings are leased: removing an era hint or a task handle leaves no lease behind.
#[test]
fn only_listings_leave_a_released_lease() {
    let redis = RedisServer::start();
    let s = store(&redis.url());
    s.put_for(
        b"era:k",
        b"m\nv".to_vec(),
        std::time::Duration::from_secs(30),
    );
    s.remove(b"era:k");
    s.put_for(
        b"catalog:k",
        b"x".to_vec(),
        std::time::Duration::from_secs(30),
    );
    s.remove(b"catalog:k");
    assert_eq!(keys(&redis.url()), ["test-ns:lease:catalog:k"]);
}

/// The lease of `key` (namespaced), if any.
fn lease_of(url: &str, key: &[u8]) -> Option<Vec<u8>> {
    let mut lease = b"lease:".to_vec();
    lease.extend_from_slice(key);
    get_raw(url, &lease)
}

/// A `put` or `remove` of a process that does not hold the lease (a waiter that gave up and
/// listed for itself) leaves another process's live lease as it is: the cold executors still
/// wait on the holder rather than list in parallel.
#[test]
fn a_put_or_remove_of_a_non_holder_leaves_the_live_lease() {
    let redis = RedisServer::start();
    let url = redis.url();
    let () = redis::cmd("SET")
        .arg(namespaced(b"lease:catalog:k"))
        .arg("a live holder")
        .arg("PX")
        .arg(30_000)
        .query(&mut raw(&url))
        .unwrap();
    let s = store(&url);
    s.put_for(
        b"catalog:k",
        b"x".to_vec(),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(s.get(b"catalog:k").as_deref(), Some(&b"x"[..]));
    assert_eq!(
        lease_of(&url, b"catalog:k").as_deref(),
        Some(&b"a live holder"[..]),
        "a put"
    );
    s.remove(b"catalog:k");
    assert_eq!(s.get(b"catalog:k"), None);
    assert_eq!(
        lease_of(&url, b"catalog:k").as_deref(),
        Some(&b"a live holder"[..]),
        "a remove"
    );
}

/// A holder whose lease lapsed and was taken by another process: its late `put` and `remove`
/// leave the new holder's lease; the new holder's own `remove` marks it released, and its own
/// `put` frees it.
#[test]
fn a_lapsed_holder_leaves_the_next_holders_lease() {
    let redis = RedisServer::start();
    let url = redis.url();
    let mut short = options();
    short.lease_hold = std::time::Duration::from_millis(400);
    let a = mcp_sansio_redis::RedisStore::with_options(&url, short).unwrap();
    let b = store(&url);
    assert_eq!(
        a.await_fill(b"catalog:k"),
        None,
        "a takes the lease and lists"
    );
    let a_token = lease_of(&url, b"catalog:k").expect("a's lease");
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(lease_of(&url, b"catalog:k"), None, "a's lease lapsed");
    assert_eq!(
        b.await_fill(b"catalog:k"),
        None,
        "b takes the lease and lists"
    );
    let b_token = lease_of(&url, b"catalog:k").expect("b's lease");
    assert_ne!(a_token, b_token);
    a.put_for(
        b"catalog:k",
        b"late".to_vec(),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(lease_of(&url, b"catalog:k"), Some(b_token.clone()), "a put");
    a.remove(b"catalog:k");
    assert_eq!(lease_of(&url, b"catalog:k"), Some(b_token), "a remove");
    b.remove(b"catalog:k");
    assert_eq!(
        lease_of(&url, b"catalog:k").as_deref(),
        Some(&b"released"[..]),
        "the holder's remove"
    );
    assert_eq!(b.await_fill(b"catalog:k"), None, "released: list at once");
    b.put_for(
        b"catalog:k",
        b"x".to_vec(),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(
        lease_of(&url, b"catalog:k"),
        None,
        "a put frees a released lease"
    );
    // A holder's own put frees its lease.
    assert_eq!(b.await_fill(b"catalog:j"), None, "b takes j's lease");
    assert!(lease_of(&url, b"catalog:j").is_some());
    b.put_for(
        b"catalog:j",
        b"x".to_vec(),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(lease_of(&url, b"catalog:j"), None, "the holder's put");
}
