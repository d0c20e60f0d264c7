//! The catalog cache, its store and the era hints' entries at their edges, through the public
//! API (`mcp_sansio_net::cache`, and a client's sessions over an in-memory [`Io`]): the store's
//! byte cap (an entry of exactly the cap kept, one byte more not; a store filled to exactly its
//! cap keeps everything, one more entry evicts the oldest), the page budget of an entry read back
//! (a listing of as many pages as the budget read back, one page over refused), what a miss, a
//! failed listing and a stale call do to an entry, the keys, and the era hints a shared store
//! carries from one client to another. The oracle is the `cache` module's documentation (quoted
//! at each test) and SEP-2549's `ttlMs`.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::{Catalog, Completion, Config, Error, ExchangeId, Transmit, TransportError};
use mcp_sansio_net::cache::{
    hint_key, CatalogCache, MemoryStore, SessionCache, Store, DEFAULT_MAX_BYTES,
};
use mcp_sansio_net::{ClientBuilder, Io, NoObserver, Report, SessionDriver, Start};
use support::{json, method_and_id, TestClient};

const URL: &str = "http://127.0.0.1:9/mcp";

/// A one-page listing of tool `weather`, fresh for a minute.
const PAGE: &[u8] =
    br#"{"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"ttlMs":60000}"#;

fn catalog(pages: &[&[u8]], config: &Config) -> Catalog {
    Catalog::from_pages(pages.iter().copied(), config.tool_names, &config.budgets).unwrap()
}

/// Page `i` of an `n`-page listing: tool `t<i>`, a cursor to the next page but on the last.
fn page(i: usize, n: usize) -> Vec<u8> {
    let next = if i + 1 < n {
        format!(r#","nextCursor":"c{i}""#)
    } else {
        String::new()
    };
    format!(
        r#"{{"tools":[{{"name":"t{i}","inputSchema":{{"type":"object"}}}}],"ttlMs":60000{next}}}"#
    )
    .into_bytes()
}

/// "[`MemoryStore`] holds at most its byte cap across entries (…) an entry larger than the cap is
/// not kept": an entry (key and value) of exactly the cap is kept, one byte more is not, and does
/// not evict what is there.
#[test]
fn an_entry_of_exactly_the_cap_is_kept_one_byte_more_is_not() {
    let store = MemoryStore::new(100);
    assert!(store.is_empty());
    assert_eq!((store.len(), store.bytes()), (0, 0));
    store.put(b"k", vec![7; 99]);
    assert_eq!(store.get(b"k"), Some(vec![7; 99]));
    assert_eq!((store.len(), store.bytes()), (1, 100));
    assert!(!store.is_empty());
    store.put(b"k2", vec![0; 99]);
    assert_eq!(store.get(b"k2"), None, "101 bytes in a store of 100");
    assert_eq!(
        store.get(b"k"),
        Some(vec![7; 99]),
        "a refused entry evicts nothing"
    );
    assert_eq!((store.len(), store.bytes()), (1, 100));
    store.remove(b"k");
    assert_eq!(store.get(b"k"), None);
    assert_eq!((store.len(), store.bytes()), (0, 0));
    assert!(store.is_empty());
}

/// "Lifetime: a listing lives min(`ttlMs`, the configured cap), counted from when the listing
/// ended (…) on the wall clock": a listing fresh for 2 s is got back at once and is a miss (its
/// entry removed) once 2 s have passed.
#[test]
fn a_listing_lives_its_ttl_on_the_wall_clock() {
    let config = Config::new(URL).unwrap();
    let store = Arc::new(MemoryStore::new(1 << 16));
    let cache = CatalogCache::new(store.clone(), Duration::from_secs(60));
    let key = CatalogCache::key(&config);
    let listing = catalog(
        &[br#"{"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"ttlMs":2000}"#],
        &config,
    );
    cache.put(&key, &listing);
    assert_eq!(cache.get(&key, &config), Some(listing));
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(cache.get(&key, &config), None);
    assert_eq!(store.get(&key), None, "the expired entry is removed");
}

/// A store filled to exactly its cap keeps every entry; one more evicts the oldest, and only as
/// many as make room.
#[test]
fn a_store_filled_to_exactly_its_cap_keeps_every_entry() {
    let store = MemoryStore::new(100);
    for k in [b"a", b"b", b"c", b"d"] {
        store.put(k, vec![0; 24]);
    }
    assert_eq!((store.len(), store.bytes()), (4, 100));
    for k in [b"a", b"b", b"c", b"d"] {
        assert!(store.get(k).is_some(), "{k:?}");
    }
    store.put(b"e", vec![0; 24]);
    assert_eq!((store.len(), store.bytes()), (4, 100));
    assert_eq!(store.get(b"a"), None);
    // Two bytes more than the room one eviction makes: two are evicted, the oldest two.
    store.put(b"f", vec![0; 26]);
    assert_eq!(store.get(b"b"), None);
    assert_eq!(store.get(b"c"), None);
    assert!(store.get(b"d").is_some() && store.get(b"e").is_some() && store.get(b"f").is_some());
    assert_eq!((store.len(), store.bytes()), (3, 77));
}

/// "the oldest entries are evicted to make room": over many insertions, the store holds exactly
/// the newest entries that fit, every time.
#[test]
fn eviction_takes_the_oldest_first_every_time() {
    let store = MemoryStore::new(8 * 10);
    let key = |i: usize| format!("k{i:03}").into_bytes();
    for i in 0..40 {
        store.put(&key(i), vec![0; 6]);
        let first = i.saturating_sub(7);
        for j in 0..=i {
            assert_eq!(
                store.get(&key(j)).is_some(),
                j >= first,
                "after {i}: entry {j}"
            );
        }
        assert_eq!(store.len(), i + 1 - first);
        assert_eq!(store.bytes(), 10 * (i + 1 - first));
    }
    // Removing frees the entry's bytes, key and value.
    store.remove(&key(39));
    assert_eq!((store.len(), store.bytes()), (7, 70));
    store.remove(b"absent");
    assert_eq!((store.len(), store.bytes()), (7, 70));
}

/// "Default byte cap of the in-memory store: 8 MiB": a store of [`DEFAULT_MAX_BYTES`] keeps an
/// entry of 8 MiB, not one byte more.
#[test]
fn the_default_store_holds_eight_mebibytes() {
    let store = MemoryStore::new(DEFAULT_MAX_BYTES);
    store.put(b"k1", vec![0; (8 << 20) - 1]);
    assert_eq!(store.get(b"k1"), None, "8 MiB + 1 byte");
    store.put(b"k2", vec![0; (8 << 20) - 2]);
    assert_eq!(store.bytes(), 8 << 20);
    assert!(store.get(b"k2").is_some(), "8 MiB");
}

/// A listing read back is checked "with the session's budgets": a listing of as many pages as the
/// page budget reads back, one page over the budget is a miss (and the entry removed).
#[test]
fn a_listing_of_the_page_budget_reads_back_one_page_over_is_a_miss() {
    let mut config = Config::new(URL).unwrap();
    let pages: Vec<Vec<u8>> = (0..3).map(|i| page(i, 3)).collect();
    let refs: Vec<&[u8]> = pages.iter().map(Vec::as_slice).collect();
    let listing = catalog(&refs, &config);
    assert_eq!(listing.pages, 3);
    let store = Arc::new(MemoryStore::new(1 << 16));
    let cache = CatalogCache::new(store.clone(), Duration::from_secs(60));
    let key = CatalogCache::key(&config);
    for budget in [3, 4, 100] {
        cache.put(&key, &listing);
        config.budgets.pages = budget;
        assert_eq!(cache.get(&key, &config), Some(listing.clone()), "{budget}");
    }
    config.budgets.pages = 2;
    assert_eq!(cache.get(&key, &config), None);
    assert_eq!(
        store.get(&key),
        None,
        "the entry that does not read back is removed"
    );
    config.budgets.pages = 3;
    assert_eq!(cache.get(&key, &config), None, "removed");
}

/// "A listing a server declared fresh for `ttlMs` is reused" (SEP-2549): what is put is what is
/// got; a miss is `None`; `ttlMs` 0 ("stale immediately") keeps nothing and removes what was
/// there; the cache's `Debug` shows its lifetime cap and no entry.
#[test]
fn a_put_listing_is_got_back_and_a_stale_one_removes_the_entry() {
    let config = Config::new(URL).unwrap();
    let store = Arc::new(MemoryStore::new(1 << 16));
    let cache = CatalogCache::new(store.clone(), Duration::from_secs(30));
    assert!(format!("{cache:?}").contains("max_ttl: 30s"), "{cache:?}");
    let key = CatalogCache::key(&config);
    assert_eq!(cache.get(&key, &config), None);
    assert_eq!(cache.get_or_await(&key, &config), None);
    let listing = catalog(&[PAGE], &config);
    cache.put(&key, &listing);
    assert_eq!(cache.get(&key, &config), Some(listing.clone()));
    assert_eq!(cache.get_or_await(&key, &config), Some(listing.clone()));
    let stale = catalog(
        &[br#"{"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"ttlMs":0}"#],
        &config,
    );
    cache.put(&key, &stale);
    assert_eq!(store.get(&key), None);
    cache.put(&key, &listing);
    cache.invalidate(&key);
    assert_eq!(store.get(&key), None);
}

/// A store that does not coordinate listings, counting what is asked of it.
#[derive(Default)]
struct Plain {
    inner: Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
    removes: Mutex<usize>,
}

impl Store for Plain {
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let inner = self.inner.lock().unwrap();
        inner.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }
    fn put(&self, key: &[u8], value: Vec<u8>) {
        let mut inner = self.inner.lock().unwrap();
        inner.retain(|(k, _)| k != key);
        inner.push((key.to_vec(), value));
    }
    fn remove(&self, key: &[u8]) {
        *self.removes.lock().unwrap() += 1;
        self.inner.lock().unwrap().retain(|(k, _)| k != key);
    }
}

/// A store without `put_for` and `await_fill` of its own gets the entry through `put`, and a
/// miss in it waits for nothing and removes nothing ("`None` to list now"): a listing another
/// process writes meanwhile is not removed.
#[test]
fn a_store_that_does_not_coordinate_gets_puts_and_a_miss_removes_nothing() {
    let config = Config::new(URL).unwrap();
    let store = Arc::new(Plain::default());
    let cache = CatalogCache::new(store.clone(), Duration::from_secs(30));
    let key = CatalogCache::key(&config);
    assert_eq!(cache.get_or_await(&key, &config), None);
    assert_eq!(*store.removes.lock().unwrap(), 0);
    let listing = catalog(&[PAGE], &config);
    cache.put(&key, &listing);
    assert!(store.get(&key).is_some());
    assert_eq!(cache.get_or_await(&key, &config), Some(listing));
    assert_eq!(*store.removes.lock().unwrap(), 0);
}

/// "A listing's entry is removed when a listing of its key fails and when a call of its key
/// meets a `-32020`"; a call that found the catalog fresh keeps it; a call finds its tool by
/// name in a fresh listing, and only that tool.
#[test]
fn a_failed_listing_or_a_stale_call_removes_the_entry_a_fresh_call_keeps_it() {
    let config = Config::new(URL).unwrap();
    let store = Arc::new(MemoryStore::new(1 << 16));
    let cache = Arc::new(CatalogCache::new(store.clone(), Duration::from_secs(30)));
    let session = SessionCache::new(cache, &config);
    let key = CatalogCache::key(&config);
    let listing = catalog(&[PAGE], &config);
    assert!(session.tool(&config, "weather").is_none());
    session.listed(Ok(&listing));
    assert_eq!(session.listing(&config), Some(listing.clone()));
    assert_eq!(
        session
            .tool(&config, "weather")
            .map(|t| t.name().to_owned()),
        Some("weather".to_owned())
    );
    assert!(session.tool(&config, "forecast").is_none());
    session.called(false);
    assert!(store.get(&key).is_some(), "a fresh call keeps the entry");
    session.called(true);
    assert_eq!(store.get(&key), None, "a stale call removes it");
    session.listed(Ok(&listing));
    assert!(store.get(&key).is_some());
    session.listed(Err(()));
    assert_eq!(store.get(&key), None, "a failed listing removes it");
}

/// The era hint's key is [`EraHints::key`](mcp_sansio::EraHints::key): one per server URL (path
/// included) and credential, a digest that names neither.
#[test]
fn an_era_hint_key_is_per_url_and_credential() {
    let a = Config::new("https://gw.example.com/tenant-a").unwrap();
    let b = Config::new("https://gw.example.com/tenant-b").unwrap();
    let token = a.clone().with_bearer_token("secret-token");
    assert_eq!(hint_key(&a), mcp_sansio::EraHints::key(&a));
    assert_eq!(hint_key(&a), hint_key(&a.clone()));
    assert_ne!(hint_key(&a), hint_key(&b));
    assert_ne!(hint_key(&a), hint_key(&token));
    assert!(!hint_key(&token).contains("secret"));
    assert!(!hint_key(&a).contains("gw.example.com"));
}

// A client's sessions over an in-memory I/O that answers like a server.

/// The JSON-RPC methods started, in order; the exchanges waiting for an answer.
#[derive(Default)]
struct Server {
    methods: Vec<String>,
    waiting: Vec<(ExchangeId, String, u64)>,
}

impl Io for Server {
    fn start(&mut self, t: Transmit, request: Vec<u8>) -> Result<(), TransportError> {
        let (method, id) = method_and_id(&request);
        self.methods.push(method.clone());
        self.waiting.push((t.exchange, method, id));
        Ok(())
    }
    fn read_on(&mut self, _: ExchangeId) {}
    fn finish(&mut self, _: ExchangeId, _: bool) {}
    fn abandon(&mut self, _: ExchangeId) {}
}

/// A 2026-07-28 server when `modern` (its `server/discover` and listing fresh for a minute),
/// else a 2025-06-18 one.
fn answer(method: &str, id: u64, modern: bool) -> Vec<u8> {
    let result = |r: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#);
    match (method, modern) {
        ("server/discover", true) => json(
            200,
            "",
            &result(
                r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":60000}"#,
            ),
        ),
        ("server/discover", false) => json(404, "", ""),
        ("initialize", _) => json(
            200,
            "mcp-session-id: s\r\n",
            &result(
                r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"1"}}"#,
            ),
        ),
        ("tools/list", _) => json(200, "", &result(std::str::from_utf8(PAGE).unwrap())),
        _ => json(202, "", ""),
    }
}

/// Runs `op` on `d` to its end, answering like the server of `modern`.
fn run(
    d: &mut SessionDriver,
    io: &mut Server,
    op: Start<'_>,
    modern: bool,
) -> Result<Completion, Error> {
    d.start(op);
    loop {
        if let Some(r) = d.pump(io, &mut NoObserver) {
            return r;
        }
        let (id, method, rpc_id) = io.waiting.remove(0);
        d.feed(id, Report::Bytes(answer(&method, rpc_id, modern)));
    }
}

/// The methods a new session of `client` sends to connect and list the tools.
fn connect_and_list(client: &TestClient, modern: bool) -> Vec<String> {
    let mut io = Server::default();
    let mut d = SessionDriver::new(&client.0, Config::new(URL).unwrap()).unwrap();
    assert!(matches!(
        run(&mut d, &mut io, Start::Connect, modern),
        Ok(Completion::Connected)
    ));
    match run(&mut d, &mut io, Start::ListTools, modern) {
        Ok(Completion::Listed(c)) => assert_eq!(c.tools[0].name(), "weather"),
        other => panic!("{other:?}"),
    }
    io.methods
}

/// "the era a negotiation found is offered to the next connection of the same server and
/// context", through a shared store too: a client that shares another's store and has no hint
/// of its own connects from the hint the other wrote, a legacy era (straight to `initialize`, no
/// `server/discover` probe) as a modern one (no request). Each entry crosses the store "on the
/// wall clock (so that processes sharing a store agree)".
#[test]
fn an_era_hint_crosses_a_shared_store_for_either_era() {
    for (modern, first) in [
        (false, vec!["server/discover", "initialize"]),
        (true, vec!["server/discover"]),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(1 << 16));
        let a = ClientBuilder::<TestClient>::new()
            .shared_store(store.clone())
            .build();
        let methods = connect_and_list(&a, modern);
        assert_eq!(methods[..first.len()], first[..], "{methods:?}");
        assert!(store
            .get(hint_key(&Config::new(URL).unwrap()).as_bytes())
            .is_some());

        let b = ClientBuilder::<TestClient>::new()
            .shared_store(store)
            .build();
        let methods = connect_and_list(&b, modern);
        assert!(
            !methods.iter().any(|m| m == "server/discover"),
            "modern {modern}: {methods:?}"
        );
        if modern {
            // Connected from the hint: no request but the listing's (if the listing is not
            // served from the store too).
            assert!(methods.iter().all(|m| m == "tools/list"), "{methods:?}");
        } else {
            assert_eq!(methods[0], "initialize", "{methods:?}");
        }
    }
}

/// With the catalog cache on and no shared store, a client's sessions share its in-memory store
/// ([`DEFAULT_MAX_BYTES`]): the second session of a server lists from the cache, with no
/// request.
#[test]
fn the_default_store_serves_the_next_sessions_listing() {
    let client = ClientBuilder::<TestClient>::new()
        .catalog_cache(true)
        .build();
    let methods = connect_and_list(&client, true);
    assert_eq!(methods, ["server/discover", "tools/list"]);
    let methods = connect_and_list(&client, true);
    assert!(methods.is_empty(), "{methods:?}");
}
