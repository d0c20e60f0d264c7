//! The catalog-cache tests of both adapters (2026-07-28, SEP-2549), and their server: a
//! 2026-07-28 server on 127.0.0.1 (plain HTTP/1.1, keep-alive) that counts what it is asked,
//! declares the `ttlMs` and `cacheScope` it is told to, and answers a call whose `Mcp-Param-*`
//! header does not match its tool's current `x-mcp-header` with `-32020`. An adapter's
//! `tests/cache.rs` brings its `Client` and [`mcp_sansio::Config`] into scope and declares the
//! tests with [`crate::cache_tests!`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use mcp_sansio_net::cache::{MemoryStore, Store};

use super::canned::{json_response, result_msg, CALL_OK};

/// A request the server received: JSON-RPC method, `Authorization` header and `Mcp-Param-*`
/// headers.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The JSON-RPC method.
    pub method: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The `Mcp-Param-*` headers (name in lowercase, value).
    pub params: Vec<(String, String)>,
}

/// What the server declares and how it behaves; tests change it between work items.
#[derive(Clone, Debug)]
pub struct Script {
    /// The raw JSON of `ttlMs`, or `None` to leave it out.
    pub ttl: Option<String>,
    /// `cacheScope`.
    pub scope: &'static str,
    /// The `x-mcp-header` name of the tool `weather`'s `region` property.
    pub header: &'static str,
    /// Whether `tools/list` answers HTTP 500.
    pub fail_list: bool,
    /// The raw JSON of the `server/discover` answer's `ttlMs`.
    pub discover_ttl: &'static str,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            ttl: Some("60000".into()),
            scope: "public",
            header: "Region",
            fail_list: false,
            discover_ttl: "3600000",
        }
    }
}

struct State {
    script: Mutex<Script>,
    seen: Mutex<Vec<Seen>>,
    stop: AtomicBool,
    sockets: Mutex<Vec<TcpStream>>,
}

/// The cache tests' server; stops (closing its sockets, joining its threads) on drop.
pub struct CacheServer {
    addr: std::net::SocketAddr,
    state: Arc<State>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl CacheServer {
    /// Starts a server with `script`.
    pub fn start(script: Script) -> CacheServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(State {
            script: Mutex::new(script),
            seen: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            sockets: Mutex::new(Vec::new()),
        });
        let threads = Arc::new(Mutex::new(Vec::new()));
        let (st, th) = (state.clone(), threads.clone());
        let acceptor = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if st.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                if let Ok(s) = stream.try_clone() {
                    st.sockets.lock().unwrap().push(s);
                }
                let st = st.clone();
                th.lock()
                    .unwrap()
                    .push(std::thread::spawn(move || serve(&st, stream)));
            }
        });
        CacheServer {
            addr,
            state,
            threads,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:port/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Changes the script.
    pub fn script(&self, f: impl FnOnce(&mut Script)) {
        f(&mut self.state.script.lock().unwrap());
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// How many requests so far.
    pub fn requests(&self) -> usize {
        self.state.seen.lock().unwrap().len()
    }

    /// How many requests of `method` so far.
    pub fn count(&self, method: &str) -> usize {
        self.seen().iter().filter(|s| s.method == method).count()
    }
}

impl Drop for CacheServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for s in self.state.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        for t in self.threads.lock().unwrap().drain(..) {
            let _ = t.join();
        }
    }
}

fn serve(state: &State, stream: TcpStream) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let len = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply = answer(state, &headers, &body);
        if out.write_all(&reply).is_err() {
            return;
        }
    }
}

fn answer(state: &State, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let method = v["method"].as_str().unwrap_or_default().to_owned();
    let id = v["id"].as_u64().unwrap_or(0);
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let params: Vec<(String, String)> = headers
        .iter()
        .filter(|(k, _)| k.starts_with("mcp-param-"))
        .cloned()
        .collect();
    state.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        authorization: header("authorization"),
        params: params.clone(),
    });
    let script = state.script.lock().unwrap().clone();
    let caching = match &script.ttl {
        Some(t) => format!(r#","ttlMs":{t},"cacheScope":"{}""#, script.scope),
        None => format!(r#","cacheScope":"{}""#, script.scope),
    };
    match method.as_str() {
        "server/discover" => {
            let discover = super::canned::DISCOVER_OK.replace(
                r#""ttlMs":3600000"#,
                &format!(r#""ttlMs":{}"#, script.discover_ttl),
            );
            json_response(200, &result_msg(id, &discover))
        }
        "tools/list" if script.fail_list => json_response(500, "{}"),
        "tools/list" => {
            let page = format!(
                r#"{{"resultType":"complete","tools":[{{"name":"weather","inputSchema":{{"type":"object","properties":{{"region":{{"type":"string","x-mcp-header":"{}"}}}}}}}},{{"name":"echo","inputSchema":{{"type":"object"}}}}]{caching}}}"#,
                script.header
            );
            json_response(200, &result_msg(id, &page))
        }
        "tools/call" => {
            let name = v["params"]["name"].as_str().unwrap_or_default();
            let want = format!("mcp-param-{}", script.header.to_ascii_lowercase());
            let region = v["params"]["arguments"]["region"].as_str();
            let ok = name != "weather"
                || params.len() == 1
                    && params
                        .iter()
                        .any(|(k, v)| *k == want && Some(v.as_str()) == region);
            if ok {
                json_response(200, &result_msg(id, CALL_OK))
            } else {
                let e = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32020,"message":"Header mismatch"}}}}"#
                );
                json_response(400, &e)
            }
        }
        _ => json_response(
            200,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#),
        ),
    }
}

/// The address policy of the tests: public addresses and the loopback.
pub fn loopback() -> mcp_sansio_net::AddressPolicy {
    mcp_sansio_net::AddressPolicy::strict().allow_loopback(true)
}

/// A fresh ES256 DPoP key.
pub fn dpop_key() -> mcp_sansio::auth::DpopKey {
    let key = mcp_sansio_net::auth::KeySigner::generate_es256().expect("a key");
    mcp_sansio::auth::DpopKey(Arc::new(key))
}

/// A [`Store`] over a [`MemoryStore`] that a test can see into and tamper with: it counts
/// removals, can hide its entries (as if another process had not stored them yet) and can
/// rewrite them.
pub struct TestStore {
    /// The store underneath.
    pub inner: MemoryStore,
    /// Whether `get` finds nothing.
    pub blind: AtomicBool,
    /// Removals so far.
    pub removed: Mutex<usize>,
    /// Keys put so far, in order.
    pub keys: Mutex<Vec<Vec<u8>>>,
}

impl TestStore {
    /// A store of at most `max_bytes`.
    pub fn new(max_bytes: usize) -> Arc<TestStore> {
        Arc::new(TestStore {
            inner: MemoryStore::new(max_bytes),
            blind: AtomicBool::new(false),
            removed: Mutex::new(0),
            keys: Mutex::new(Vec::new()),
        })
    }

    /// Listing entries held now.
    pub fn listings(&self) -> usize {
        let keys = self.keys.lock().unwrap();
        keys.iter()
            .filter(|k| k.starts_with(b"catalog:") && self.inner.get(k).is_some())
            .count()
    }

    /// Era hint entries held now.
    pub fn eras(&self) -> usize {
        let keys = self.keys.lock().unwrap();
        keys.iter()
            .filter(|k| k.starts_with(b"era:") && self.inner.get(k).is_some())
            .count()
    }

    /// Rewrites every listing entry with `f`.
    pub fn tamper(&self, f: impl Fn(Vec<u8>) -> Vec<u8>) {
        self.tamper_all(|k| k.starts_with(b"catalog:"), f);
    }

    /// Rewrites every entry whose key passes `which` with `f`.
    pub fn tamper_all(&self, which: impl Fn(&[u8]) -> bool, f: impl Fn(Vec<u8>) -> Vec<u8>) {
        for key in self.keys.lock().unwrap().iter().filter(|k| which(k)) {
            if let Some(v) = self.inner.get(key) {
                self.inner.put(key, f(v));
            }
        }
    }
}

impl Store for TestStore {
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        if self.blind.load(Ordering::SeqCst) {
            return None;
        }
        self.inner.get(key)
    }
    fn put(&self, key: &[u8], value: Vec<u8>) {
        let mut keys = self.keys.lock().unwrap();
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_vec());
        }
        drop(keys);
        self.inner.put(key, value);
    }
    fn remove(&self, key: &[u8]) {
        *self.removed.lock().unwrap() += 1;
        self.inner.remove(key);
    }
}

/// Declares the catalog-cache tests of an adapter whose `Client` is in scope: `#[$test]` is its
/// test attribute, `async` is present when its operations are futures and `[$($wait)*]` is what
/// waits for an operation (`.await`, or nothing).
#[macro_export]
macro_rules! cache_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        use std::sync::Arc;
        use std::time::Duration;
        use $crate::adapter_tests::cache::{CacheServer, Script, TestStore};

        fn cached_client() -> Client {
            Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .catalog_cache(true)
                .build()
        }

        fn config(server: &CacheServer, token: &str) -> mcp_sansio::Config {
            mcp_sansio::Config::new(&server.url()).unwrap().with_bearer_token(token)
        }

        /// One work item: connect, list, close; the names listed.
        $($async)? fn list_item(client: &Client, server: &CacheServer, token: &str) -> Vec<String> {
            let mut s = client.connect(config(server, token))$($wait)*.unwrap();
            let c = s.list_tools()$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            c.tools.iter().map(|t| t.name().to_owned()).collect()
        }

        /// One work item with `config`: connect, list, close; the names listed.
        $($async)? fn list_with(client: &Client, config: mcp_sansio::Config) -> Vec<String> {
            let mut s = client.connect(config)$($wait)*.unwrap();
            let c = s.list_tools()$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            c.tools.iter().map(|t| t.name().to_owned()).collect()
        }

        /// A configuration for `server` with the DPoP-bound `token` and `key` (no bearer token).
        fn dpop(server: &CacheServer, token: &str, key: &mcp_sansio::auth::DpopKey) -> mcp_sansio::Config {
            let binding = mcp_sansio::auth::DpopBinding::new(token, key.clone(), "cache-test-seed");
            mcp_sansio::Config::new(&server.url()).unwrap().with_dpop(binding)
        }

        /// spec.md §3, caching: caches "MUST NOT be shared across authorization contexts". A
        /// DPoP-bound session presents no bearer token: its context is its DPoP token and key.
        /// An anonymous work item, two DPoP tenants, a tenant whose token changed and one whose
        /// key changed each list on the wire (the server sees each one's own `Authorization`);
        /// each then finds its own entry.
        #[$test]
        $($async)? fn dpop_tenants_and_anonymous_work_items_never_share_an_entry() {
            let server = CacheServer::start(Script::default());
            let client = cached_client();
            let key_a = $crate::adapter_tests::cache::dpop_key();
            let key_b = $crate::adapter_tests::cache::dpop_key();
            let items = [
                config(&server, ""),
                dpop(&server, "dpop-a", &key_a),
                dpop(&server, "dpop-b", &key_b),
                dpop(&server, "dpop-a", &key_b),
                dpop(&server, "dpop-a2", &key_a),
            ];
            for (i, item) in items.iter().enumerate() {
                let lists = server.count("tools/list");
                assert_eq!(list_with(&client, item.clone())$($wait)*, ["weather", "echo"]);
                assert_eq!(server.count("tools/list"), lists + 1, "item {i} got another's entry");
            }
            let lists: Vec<_> = server
                .seen()
                .into_iter()
                .filter(|s| s.method == "tools/list")
                .map(|s| s.authorization)
                .collect();
            let dpop = |t: &str| Some(format!("DPoP {t}"));
            assert_eq!(lists, [None, dpop("dpop-a"), dpop("dpop-b"), dpop("dpop-a"), dpop("dpop-a2")]);
            // Each now hits its own entry.
            let before = server.requests();
            for item in items.iter().rev() {
                list_with(&client, item.clone())$($wait)*;
            }
            assert_eq!(server.requests(), before, "{:?}", server.seen());
        }

        /// The era hint of one path of a shared gateway origin, or of one authorization
        /// context, is not offered to another path or context: each negotiates
        /// (`server/discover`) once, then connects from its own hint.
        #[$test]
        $($async)? fn era_hints_are_per_path_and_per_context() {
            let server = CacheServer::start(Script::default());
            let client = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .build();
            let at = |path: &str, token: &str| {
                let url = server.url().replacen("/mcp", path, 1);
                mcp_sansio::Config::new(&url).unwrap().with_bearer_token(token)
            };
            let items = [at("/tenant-a", "t"), at("/tenant-b", "t"), at("/tenant-a", "u")];
            for (i, item) in items.iter().enumerate() {
                let mut s = client.connect(item.clone())$($wait)*.unwrap();
                s.close()$($wait)*.unwrap();
                assert_eq!(server.count("server/discover"), i + 1, "item {i} took another's hint");
            }
            for item in &items {
                let mut s = client.connect(item.clone())$($wait)*.unwrap();
                s.close()$($wait)*.unwrap();
                assert!(client.hint(item).is_some());
            }
            assert_eq!(server.count("server/discover"), items.len(), "{:?}", server.seen());
        }

        /// spec.md §3, caching: `server/discover` carries `ttlMs` like a listing, and "`0` or
        /// absent → stale immediately": the era learnt from an answer of `ttlMs: 0` is not
        /// offered to the next work item, which negotiates again; a positive `ttlMs` is.
        #[$test]
        $($async)? fn an_era_hint_honours_the_discover_ttl() {
            let server = CacheServer::start(Script { discover_ttl: "0", ..Script::default() });
            let client = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .build();
            for i in 1..=2 {
                let mut s = client.connect(config(&server, "t"))$($wait)*.unwrap();
                s.close()$($wait)*.unwrap();
                assert_eq!(server.count("server/discover"), i);
            }
            assert!(client.hint(&config(&server, "t")).is_none());
            server.script(|s| s.discover_ttl = "60000");
            for _ in 0..2 {
                let mut s = client.connect(config(&server, "t"))$($wait)*.unwrap();
                s.close()$($wait)*.unwrap();
            }
            assert_eq!(server.count("server/discover"), 3);

            // In a shared store too: a negotiation answered `ttlMs: 0` removes the hint there.
            let store = TestStore::new(1 << 20);
            let with_store = || {
                Client::builder()
                    .policy($crate::adapter_tests::cache::loopback())
                    .http1_only(true)
                    .shared_store(store.clone())
                    .build()
            };
            let mut s = with_store().connect(config(&server, "t"))$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            assert_eq!(store.eras(), 1);
            store.blind.store(true, std::sync::atomic::Ordering::SeqCst);
            server.script(|s| s.discover_ttl = "0");
            let mut s = with_store().connect(config(&server, "t"))$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            assert_eq!(store.eras(), 0, "the stale hint stayed in the store");
        }

        /// One call-only work item: connect, call `weather`, close.
        $($async)? fn call_item(client: &Client, server: &CacheServer, token: &str) {
            let mut s = client.connect(config(server, token))$($wait)*.unwrap();
            let r = s.call_tool("weather", br#"{"region":"eu"}"#)$($wait)*.unwrap();
            assert!(!r.is_error);
            s.close()$($wait)*.unwrap();
        }

        /// spec.md §3, caching: "a result is fresh while `now < t_received + ttlMs`". A work
        /// item within the lifetime lists with no request at all; without the cache (the
        /// default) it asks again.
        #[$test]
        $($async)? fn a_work_item_within_the_lifetime_lists_with_zero_requests() {
            let server = CacheServer::start(Script::default());
            let client = cached_client();
            let first = list_item(&client, &server, "tok-a")$($wait)*;
            assert_eq!(first, ["weather", "echo"]);
            let before = server.requests();
            for _ in 0..3 {
                assert_eq!(list_item(&client, &server, "tok-a")$($wait)*, first);
            }
            assert_eq!(server.requests(), before, "{:?}", server.seen());
            // The default client does not cache.
            let plain = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .build();
            list_item(&plain, &server, "tok-a")$($wait)*;
            list_item(&plain, &server, "tok-a")$($wait)*;
            assert_eq!(server.count("tools/list"), 3);
        }

        /// spec.md §3, caching: fresh "while `now < t_received + ttlMs`"; the client's cap
        /// bounds the lifetime whatever `ttlMs` says.
        #[$test]
        $($async)? fn an_entry_expires_after_its_ttl_or_the_cap() {
            let server = CacheServer::start(Script { ttl: Some("300".into()), ..Script::default() });
            let client = cached_client();
            list_item(&client, &server, "t")$($wait)*;
            list_item(&client, &server, "t")$($wait)*;
            assert_eq!(server.count("tools/list"), 1);
            std::thread::sleep(Duration::from_millis(450));
            list_item(&client, &server, "t")$($wait)*;
            assert_eq!(server.count("tools/list"), 2, "an expired entry was used");

            let server = CacheServer::start(Script { ttl: Some("3600000".into()), ..Script::default() });
            let client = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .catalog_cache(true)
                .catalog_cache_max_ttl(Duration::from_millis(300))
                .build();
            list_item(&client, &server, "t")$($wait)*;
            list_item(&client, &server, "t")$($wait)*;
            assert_eq!(server.count("tools/list"), 1);
            std::thread::sleep(Duration::from_millis(450));
            list_item(&client, &server, "t")$($wait)*;
            assert_eq!(server.count("tools/list"), 2, "the cap was not applied");
        }

        /// spec.md §3, caching: "`private` means the cache is per authorization context". The
        /// client keeps every credential apart even when the server says `public`: the server
        /// does not decide who else sees its answer.
        #[$test]
        $($async)? fn each_credential_has_its_own_entry_even_when_the_server_says_public() {
            let server = CacheServer::start(Script::default());
            let client = cached_client();
            list_item(&client, &server, "tok-a")$($wait)*;
            list_item(&client, &server, "tok-b")$($wait)*;
            list_item(&client, &server, "")$($wait)*;
            let lists: Vec<_> = server
                .seen()
                .into_iter()
                .filter(|s| s.method == "tools/list")
                .map(|s| s.authorization)
                .collect();
            assert_eq!(
                lists,
                [Some("Bearer tok-a".to_owned()), Some("Bearer tok-b".to_owned()), None]
            );
            // Each now hits its own entry.
            let before = server.requests();
            list_item(&client, &server, "tok-b")$($wait)*;
            list_item(&client, &server, "tok-a")$($wait)*;
            assert_eq!(server.requests(), before);
        }

        /// spec.md §3, caching: "`0` or absent (older servers) → stale immediately";
        /// "negative → treat as 0".
        #[$test]
        $($async)? fn an_absent_zero_or_negative_ttl_is_not_cached() {
            for ttl in [None, Some("0"), Some("-5"), Some("1.5")] {
                let server = CacheServer::start(Script { ttl: ttl.map(str::to_owned), ..Script::default() });
                let client = cached_client();
                list_item(&client, &server, "t")$($wait)*;
                list_item(&client, &server, "t")$($wait)*;
                assert_eq!(server.count("tools/list"), 2, "{ttl:?}");
            }
        }

        /// spec.md §6 (`x-mcp-header`): a server answers a call whose `Mcp-Param-*` headers do
        /// not match with `-32020`. A call-only work item takes the tool from the cache and
        /// sends its header at once: one request, no `-32020` round trip. Without a cached
        /// tool, the same work item costs a `-32020`, a listing and the call again.
        #[$test]
        $($async)? fn a_call_only_work_item_uses_the_cached_tool() {
            let server = CacheServer::start(Script::default());
            let client = cached_client();
            list_item(&client, &server, "t")$($wait)*;
            let before = server.seen().len();
            call_item(&client, &server, "t")$($wait)*;
            let after: Vec<_> = server.seen().into_iter().skip(before).collect();
            assert_eq!(after.len(), 1, "{after:?}");
            assert_eq!(after[0].method, "tools/call");
            assert_eq!(after[0].params, [("mcp-param-region".to_owned(), "eu".to_owned())]);

            // Another credential has no cached tool, nor an era hint (both are per
            // authorization context): it negotiates, then the round trip.
            let before = server.seen().len();
            call_item(&client, &server, "other")$($wait)*;
            let methods: Vec<_> = server.seen().into_iter().skip(before).map(|s| s.method).collect();
            assert_eq!(methods, ["server/discover", "tools/call", "tools/list", "tools/call"]);
        }

        /// The cache is invalidated when a call meets `-32020` (the server's tools changed: the
        /// cached header is stale): the next work item lists on the wire.
        #[$test]
        $($async)? fn a_header_mismatch_invalidates_the_entry() {
            let server = CacheServer::start(Script::default());
            let client = cached_client();
            list_item(&client, &server, "t")$($wait)*;
            server.script(|s| s.header = "Zone");
            call_item(&client, &server, "t")$($wait)*;
            let lists = server.count("tools/list");
            let names = list_item(&client, &server, "t")$($wait)*;
            assert_eq!(names, ["weather", "echo"]);
            assert_eq!(server.count("tools/list"), lists + 1, "a stale entry was used");
            // The fresh entry carries the new header: a call-only item needs one request.
            let before = server.seen().len();
            call_item(&client, &server, "t")$($wait)*;
            assert_eq!(server.seen().len(), before + 1);
        }

        /// A failed listing removes the entry of its key (a store shared with other processes
        /// may hold one this session did not see).
        #[$test]
        $($async)? fn a_failed_listing_invalidates_the_entry() {
            let server = CacheServer::start(Script::default());
            let store = TestStore::new(1 << 20);
            let client = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .catalog_cache(true)
                .shared_store(store.clone())
                .build();
            list_item(&client, &server, "t")$($wait)*;
            assert_eq!(store.listings(), 1);
            store.blind.store(true, std::sync::atomic::Ordering::SeqCst);
            server.script(|s| s.fail_list = true);
            let mut s = client.connect(config(&server, "t"))$($wait)*.unwrap();
            assert!(s.list_tools()$($wait)*.is_err());
            drop(s);
            assert_eq!(store.listings(), 0, "the failed listing left the entry");
            store.blind.store(false, std::sync::atomic::Ordering::SeqCst);
            server.script(|s| s.fail_list = false);
            let lists = server.count("tools/list");
            list_item(&client, &server, "t")$($wait)*;
            assert_eq!(server.count("tools/list"), lists + 1);
        }

        /// The same over HTTP/2 (h2c with prior knowledge): the sessions of the origin's shared
        /// socket take the listing from the cache with no stream opened.
        #[$test]
        $($async)? fn a_work_item_within_the_lifetime_lists_with_zero_requests_over_http2() {
            let server = $crate::h2_server::Server::start_with(
                None,
                $crate::h2_server::Behaviour { list_ttl_ms: 60000, ..Default::default() },
            );
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let client = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .h2_prior_knowledge(true)
                .catalog_cache(true)
                .build();
            for _ in 0..3 {
                let mut s = client.connect($crate::h2_server::config(&url))$($wait)*.unwrap();
                assert_eq!(s.http_version(), "HTTP/2");
                let c = s.list_tools()$($wait)*.unwrap();
                assert_eq!(c.tools.len(), 1);
                s.close()$($wait)*.unwrap();
            }
            assert_eq!(server.methods(), ["tools/list"]);
        }

        /// A platform running many executor processes backs the cache and the era hints with
        /// one store: a second client (another process) sharing it runs a work item with no
        /// request at all, no `server/discover` and no `tools/list`.
        #[$test]
        $($async)? fn clients_sharing_a_store_share_listings_and_era_hints() {
            let server = CacheServer::start(Script::default());
            let store = TestStore::new(1 << 20);
            let build = || {
                Client::builder()
                    .policy($crate::adapter_tests::cache::loopback())
                    .http1_only(true)
                    .catalog_cache(true)
                    .shared_store(store.clone())
                    .build()
            };
            list_item(&build(), &server, "t")$($wait)*;
            assert_eq!(server.count("server/discover"), 1);
            let before = server.requests();
            assert_eq!(list_item(&build(), &server, "t")$($wait)*, ["weather", "echo"]);
            assert_eq!(server.requests(), before, "{:?}", server.seen());
            // A malformed hint is a miss: the next client negotiates.
            store.tamper_all(|k| k.starts_with(b"era:"), |_| b"m\n1900-01-01".to_vec());
            list_item(&build(), &server, "t")$($wait)*;
            assert_eq!(server.count("server/discover"), 2);
        }

        /// Entries cross the store as bytes and are checked again when read back: a corrupted
        /// or tampered entry is a miss (the listing goes to the server), never an error, and
        /// bytes that read back as a page bring nothing the wire could not.
        #[$test]
        $($async)? fn a_corrupted_store_entry_is_a_miss() {
            let server = CacheServer::start(Script::default());
            let store = TestStore::new(1 << 20);
            let client = Client::builder()
                .policy($crate::adapter_tests::cache::loopback())
                .http1_only(true)
                .catalog_cache(true)
                .shared_store(store.clone())
                .build();
            list_item(&client, &server, "t")$($wait)*;
            let corruptions: [fn(Vec<u8>) -> Vec<u8>; 5] = [
                |mut v| { v.truncate(v.len() - 3); v },
                |mut v| { v[0] ^= 1; v },
                |mut v| { v.push(b' '); v },
                |_| Vec::new(),
                |mut v| { let n = v.len(); v[n - 1] = b'['; v },
            ];
            for (i, corrupt) in corruptions.iter().enumerate() {
                store.tamper(corrupt);
                let lists = server.count("tools/list");
                assert_eq!(list_item(&client, &server, "t")$($wait)*, ["weather", "echo"]);
                assert_eq!(server.count("tools/list"), lists + 1, "corruption {i} was used");
            }
            // A tampered page with a tool the wire would refuse: read back, it is refused too.
            store.tamper(|mut v| {
                let at = v.windows(6).position(|w| w == b"\"echo\"").expect("the tool");
                v[at + 3] = b' ';
                v
            });
            let lists = server.count("tools/list");
            assert_eq!(list_item(&client, &server, "t")$($wait)*, ["weather"]);
            assert_eq!(server.count("tools/list"), lists);
        }
    };
}
