//! What the store tests share: clients of a test server with a Redis store, work items, and raw
//! access to Redis (the `redis` crate's own connection) to look at and tamper with what is
//! stored.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::Config;
use mcp_sansio_blocking::Client;
use mcp_sansio_redis::{Options, RedisStore};
use mcp_sansio_test_support::adapter_tests::cache::{loopback, CacheServer};

/// The namespace the tests write under.
pub const NS: &str = "test-ns:";

/// Options of the tests' stores: the test namespace, everything else default.
pub fn options() -> Options {
    let mut o = Options::default();
    o.namespace = NS.to_owned();
    o
}

/// A store at `url` with [`options`].
pub fn store(url: &str) -> Arc<RedisStore> {
    Arc::new(RedisStore::with_options(url, options()).expect("a store URL"))
}

/// A client (one executor process's) with the catalog cache on over `store`.
pub fn client(store: Arc<RedisStore>) -> Client {
    Client::builder()
        .policy(loopback())
        .http1_only(true)
        .catalog_cache(true)
        .shared_store(store)
        .build()
}

/// A configuration for `server` with `token` (empty: anonymous).
pub fn config(server: &CacheServer, token: &str) -> Config {
    Config::new(&server.url()).unwrap().with_bearer_token(token)
}

/// A configuration for `server` with the DPoP-bound `token` and `key`.
pub fn dpop(server: &CacheServer, token: &str, key: &mcp_sansio::auth::DpopKey) -> Config {
    let binding = mcp_sansio::auth::DpopBinding::new(token, key.clone(), "store-test-seed");
    Config::new(&server.url()).unwrap().with_dpop(binding)
}

/// One work item: connect, list, close; the names listed.
pub fn work_item(client: &Client, config: Config) -> Vec<String> {
    let mut s = client.connect(config).expect("connect");
    let c = s.list_tools().expect("list");
    s.close().expect("close");
    c.tools.iter().map(|t| t.name().to_owned()).collect()
}

/// A raw connection to the Redis at `url`.
pub fn raw(url: &str) -> redis::Connection {
    let client = redis::Client::open(url).expect("a redis URL");
    let con = client.get_connection().expect("connect to redis");
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    con
}

/// The bytes under the store key `key` (namespaced), if any.
pub fn get_raw(url: &str, key: &[u8]) -> Option<Vec<u8>> {
    redis::cmd("GET")
        .arg(namespaced(key))
        .query(&mut raw(url))
        .expect("GET")
}

/// Writes `value` under the store key `key` (namespaced), with no expiry.
pub fn set_raw(url: &str, key: &[u8], value: &[u8]) {
    let () = redis::cmd("SET")
        .arg(namespaced(key))
        .arg(value)
        .query(&mut raw(url))
        .expect("SET");
}

/// The remaining lifetime of the store key `key` in ms (`PTTL`: -2 none, -1 no expiry).
pub fn pttl(url: &str, key: &[u8]) -> i64 {
    redis::cmd("PTTL")
        .arg(namespaced(key))
        .query(&mut raw(url))
        .expect("PTTL")
}

/// The keys under the test namespace.
pub fn keys(url: &str) -> Vec<String> {
    let mut k: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{NS}*"))
        .query(&mut raw(url))
        .expect("KEYS");
    k.sort();
    k
}

/// `key` under the test namespace.
pub fn namespaced(key: &[u8]) -> Vec<u8> {
    let mut n = NS.as_bytes().to_vec();
    n.extend_from_slice(key);
    n
}
