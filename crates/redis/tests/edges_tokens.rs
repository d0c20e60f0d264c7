//! The token store's keys (`scripts/mutants.sh redis-tokens`): for a token key `K` under prefix
//! `P`, the entry is `P:tokens:{K}`, the lease `P:lease:{K}` (`fence:holder`) and the fencing
//! counter `P:fence:{K}` (the module's docs); so two token keys (two grants, two tenants) never
//! share an entry, a lease or a fencing counter, and two prefixes never meet.

mod support;

use std::time::Duration;

use mcp_sansio::auth::{ResourceCredentials, TokenSet};
use mcp_sansio_net::auth::tokens::{TokenStore, Written};
use mcp_sansio_redis::tokens::RedisTokens;
use support::RedisServer;

const TTL: Duration = Duration::from_secs(30);

fn creds(access: &str) -> ResourceCredentials {
    ResourceCredentials {
        issuer: "https://as.example".into(),
        resource: "https://mcp.example/mcp".into(),
        tokens: TokenSet {
            access_token: access.into(),
            refresh_token: Some(format!("r-{access}")),
            expires_at_ms: Some(1_800_000_000_000),
            scopes: Vec::new(),
            dpop: false,
        },
    }
}

fn raw(url: &str) -> redis::Connection {
    let con = redis::Client::open(url).unwrap().get_connection().unwrap();
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    con
}

fn keys(url: &str) -> Vec<String> {
    let mut k: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut raw(url)).unwrap();
    k.sort();
    k
}

fn get(url: &str, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(&mut raw(url)).unwrap()
}

/// A lease and a write under `K` leave exactly `P:fence:{K}` (1), `P:lease:{K}`
/// (`1:holder`) and `P:tokens:{K}` (a hash at version 1); released, the lease key is gone.
#[test]
fn a_token_keys_entry_lease_and_fence_are_named_after_it() {
    let redis = RedisServer::start();
    let url = redis.url();
    let s = RedisTokens::open(&url).unwrap().prefix("fleet-a");
    let lease = s.lease("K1", TTL).unwrap().expect("free");
    assert_eq!(lease.fence(), 1);
    assert_eq!(keys(&url), ["fleet-a:fence:{K1}", "fleet-a:lease:{K1}"]);
    assert_eq!(get(&url, "fleet-a:fence:{K1}").as_deref(), Some("1"));
    assert_eq!(
        get(&url, "fleet-a:lease:{K1}"),
        Some(format!("1:{}", lease.holder()))
    );
    assert_eq!(
        s.write(&lease, 0, &creds("a1"), &[]).unwrap(),
        Written::Stored { version: 1 }
    );
    let v: Option<String> = redis::cmd("HGET")
        .arg("fleet-a:tokens:{K1}")
        .arg("v")
        .query(&mut raw(&url))
        .unwrap();
    assert_eq!(v.as_deref(), Some("1"));
    assert!(s.renew(&lease, TTL).unwrap());
    s.release(&lease);
    assert_eq!(
        keys(&url),
        ["fleet-a:fence:{K1}", "fleet-a:tokens:{K1}"],
        "the lease released"
    );
}

/// Two token keys have their own leases, entries and fencing numbers (each starts at 1); two
/// prefixes over one Redis never see each other's.
#[test]
fn two_token_keys_and_two_prefixes_never_share() {
    let redis = RedisServer::start();
    let url = redis.url();
    let a = RedisTokens::open(&url).unwrap().prefix("fleet-a");
    let b = RedisTokens::open(&url).unwrap().prefix("fleet-b");
    let l1 = a.lease("K1", TTL).unwrap().expect("K1 free");
    let l2 = a
        .lease("K2", TTL)
        .unwrap()
        .expect("K2 free while K1 is held");
    assert_eq!((l1.fence(), l2.fence()), (1, 1));
    let lb = b
        .lease("K1", TTL)
        .unwrap()
        .expect("K1 of another prefix free");
    assert_eq!(lb.fence(), 1);
    a.write(&l1, 0, &creds("one"), &[]).unwrap();
    a.write(&l2, 0, &creds("two"), &[]).unwrap();
    let read = |s: &RedisTokens, k: &str| {
        s.read(k)
            .unwrap()
            .map(|e| e.credentials.tokens.access_token)
    };
    assert_eq!(read(&a, "K1").as_deref(), Some("one"));
    assert_eq!(read(&a, "K2").as_deref(), Some("two"));
    assert_eq!(read(&b, "K1"), None);
    assert!(a.renew(&l1, TTL).unwrap());
    assert!(b.renew(&lb, TTL).unwrap());
    a.release(&l1);
    assert_eq!(a.lease("K2", TTL).unwrap(), None, "K2 still held");
    assert_eq!(b.lease("K1", TTL).unwrap(), None, "fleet-b's K1 still held");
    let again = a.lease("K1", TTL).unwrap().expect("K1 released");
    assert_eq!(again.fence(), 2);
}

/// `RedisTokens::open`'s bounds are the documented defaults (`DEFAULT_OP_TIMEOUT` 500 ms,
/// `DEFAULT_RETRY_AFTER` 500 ms, `DEFAULT_BACKOFF_MAX` 5 s), not the fleet store's (250 ms,
/// 100 ms): its `Debug` shows them, and the prefix, and no password.
#[test]
fn open_takes_the_documented_bounds() {
    use mcp_sansio_redis::tokens::{DEFAULT_BACKOFF_MAX, DEFAULT_OP_TIMEOUT, DEFAULT_RETRY_AFTER};
    assert_eq!(DEFAULT_OP_TIMEOUT, Duration::from_millis(500));
    assert_eq!(DEFAULT_RETRY_AFTER, Duration::from_millis(500));
    assert_eq!(DEFAULT_BACKOFF_MAX, Duration::from_secs(5));
    let s = RedisTokens::open("redis://:hunter2-secret@127.0.0.1:1/").unwrap();
    let shown = format!("{s:?}");
    assert!(shown.contains("op_timeout: 500ms"), "{shown}");
    assert!(shown.contains("backoff_min: 500ms"), "{shown}");
    assert!(shown.contains("backoff_max: 5s"), "{shown}");
    assert!(shown.contains("prefix: \"mcp-sansio\""), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
}
