//! `RedisTokens` against a real `redis-server`: the lease (one holder, a fencing number, a
//! holder whose lease expired cannot write), the compare-and-set write, damaged entries (a miss,
//! and removed), what Redis sees when sealed; and failure is not an outage: Redis down, stalled
//! or answering garbage falls back to the process's store, and a refresh written during the
//! outage reaches Redis once it is back.

mod fleet_support;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_support::{Proxy, ProxyMode};
use mcp_sansio::auth::{ResourceCredentials, TokenSet};
use mcp_sansio_net::auth::tokens::{spent_digest, TokenStore, Written};
use mcp_sansio_redis::tokens::{write_token_entry, RedisTokens, TokenSeal};
use support::RedisServer;

const KEY: &str = "tokens:k1";

fn creds(access: &str, refresh: &str) -> ResourceCredentials {
    ResourceCredentials {
        issuer: "https://as.example".into(),
        resource: "https://mcp.example/mcp".into(),
        tokens: TokenSet {
            access_token: access.into(),
            refresh_token: Some(refresh.into()),
            expires_at_ms: Some(1_800_000_000_000),
            scopes: Vec::new(),
            dpop: false,
        },
    }
}

fn store(url: &str) -> RedisTokens {
    RedisTokens::open(url)
        .unwrap()
        .op_timeout(Duration::from_millis(300))
        .retry_after(Duration::from_millis(100))
        // A fixed pause: these tests bring Redis back and expect the next operation to reach it.
        .backoff_max(Duration::from_millis(100))
}

/// One lease at a time, with growing fencing numbers; a write needs the lease and the version
/// read (compare-and-set); a released lease can be taken again.
#[test]
fn one_lease_a_time_and_a_compare_and_set_write() {
    let redis = RedisServer::start();
    let s = store(&redis.url());
    let ttl = Duration::from_secs(5);
    let a = s.lease(KEY, ttl).unwrap().expect("the first lease");
    assert_eq!(s.lease(KEY, ttl).unwrap(), None, "a second holder");
    assert_eq!(
        s.write(&a, 0, &creds("a1", "r1"), &[]).unwrap(),
        Written::Stored { version: 1 }
    );
    // The version read is no longer the entry's: refused.
    assert_eq!(
        s.write(&a, 0, &creds("a2", "r2"), &[]).unwrap(),
        Written::Conflict
    );
    let read = s.read(KEY).unwrap().unwrap();
    assert_eq!(
        (read.version, read.credentials.tokens.access_token.as_str()),
        (1, "a1")
    );
    s.release(&a);
    let b = s
        .lease(KEY, ttl)
        .unwrap()
        .expect("taken again once released");
    assert!(b.fence() > a.fence());
    // The old holder's write is refused even with the right version.
    assert_eq!(
        s.write(&a, 1, &creds("a3", "r3"), &[]).unwrap(),
        Written::Conflict
    );
    assert_eq!(
        s.write(&b, 1, &creds("a3", "r3"), &[spent_digest("r1")])
            .unwrap(),
        Written::Stored { version: 2 }
    );
    assert_eq!(
        s.read(KEY).unwrap().unwrap().spent,
        vec![spent_digest("r1")]
    );
}

/// A lease whose holder stopped renewing it expires: another takes it, and the first holder's
/// write (its fencing number is older) is refused.
#[test]
fn an_expired_lease_is_taken_over_and_its_holder_fenced_off() {
    let redis = RedisServer::start();
    let s = store(&redis.url());
    let a = s.lease(KEY, Duration::from_millis(100)).unwrap().unwrap();
    assert!(s.renew(&a, Duration::from_millis(100)).unwrap());
    std::thread::sleep(Duration::from_millis(250));
    let b = s
        .lease(KEY, Duration::from_secs(5))
        .unwrap()
        .expect("taken over");
    assert!(!s.renew(&a, Duration::from_secs(5)).unwrap());
    assert_eq!(
        s.write(&a, 0, &creds("a1", "r1"), &[]).unwrap(),
        Written::Conflict
    );
    assert_eq!(
        s.write(&b, 0, &creds("b1", "r1b"), &[]).unwrap(),
        Written::Stored { version: 1 }
    );
}

/// A damaged entry (garbage bytes, a value of another key, a version that is not the frame's,
/// a key of another type, a value over the bound) is a miss, and removed.
#[test]
fn a_damaged_entry_is_a_miss_and_removed() {
    let redis = RedisServer::start();
    let s = store(&redis.url());
    let entry_key = format!("mcp-sansio:tokens:{{{KEY}}}");
    let other = mcp_sansio_net::auth::tokens::TokenEntry {
        version: 1,
        credentials: creds("a", "r"),
        spent: Vec::new(),
    };
    let of_another_key = write_token_entry("tokens:other", &other, None).unwrap();
    let poisons: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"not an entry".to_vec()),
        ("another key's", of_another_key.clone()),
    ];
    let mut client = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    for (what, bytes) in poisons {
        redis::cmd("HSET")
            .arg(&entry_key)
            .arg("v")
            .arg("1")
            .arg("d")
            .arg(bytes)
            .exec(&mut client)
            .unwrap();
        assert_eq!(s.read(KEY).unwrap(), None, "{what}");
        assert_eq!(
            redis.command(&format!("EXISTS {entry_key}")),
            ":0",
            "{what}"
        );
    }
    // The version field is not the frame's.
    let own = write_token_entry(KEY, &other, None).unwrap();
    redis::cmd("HSET")
        .arg(&entry_key)
        .arg("v")
        .arg("2")
        .arg("d")
        .arg(own)
        .exec(&mut client)
        .unwrap();
    assert_eq!(s.read(KEY).unwrap(), None);
    assert_eq!(redis.command(&format!("EXISTS {entry_key}")), ":0");
    // Another type, and too large.
    redis.command(&format!("SET {entry_key} x"));
    assert_eq!(s.read(KEY).unwrap(), None);
    assert_eq!(redis.command(&format!("EXISTS {entry_key}")), ":0");
    redis::cmd("HSET")
        .arg(&entry_key)
        .arg("v")
        .arg("1")
        .arg("d")
        .arg(vec![b'x'; 70_000])
        .exec(&mut client)
        .unwrap();
    assert_eq!(s.read(KEY).unwrap(), None);
    assert_eq!(redis.command(&format!("EXISTS {entry_key}")), ":0");
}

/// Sealed, what Redis holds has no token in it; another process with the same seal reads it.
#[test]
fn sealed_entries_show_redis_no_token() {
    let redis = RedisServer::start();
    let s = store(&redis.url()).seal(TokenSeal::new(&[9; 32]).unwrap());
    let lease = s.lease(KEY, Duration::from_secs(5)).unwrap().unwrap();
    s.write(
        &lease,
        0,
        &creds("secret-access-1", "secret-refresh-1"),
        &[],
    )
    .unwrap();
    let mut client = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let bytes: Vec<u8> = redis::cmd("HGET")
        .arg(format!("mcp-sansio:tokens:{{{KEY}}}"))
        .arg("d")
        .query(&mut client)
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("secret-access-1") && !text.contains("secret-refresh-1"));
    assert!(!text.contains("as.example") && !text.contains("mcp.example"));
    let other = store(&redis.url()).seal(TokenSeal::new(&[9; 32]).unwrap());
    let read = other.read(KEY).unwrap().unwrap();
    assert_eq!(read.credentials.tokens.access_token, "secret-access-1");
}

/// Redis down, stalled or answering garbage: every operation returns within its deadline (a
/// few times `op_timeout`), falls back to the process's store (one lease at a time in the
/// process), and a refresh written meanwhile is kept and written to Redis once it is back.
#[test]
fn failure_is_not_an_outage_and_a_kept_refresh_reaches_redis() {
    let redis = RedisServer::start();
    let proxy = Proxy::start(redis.port());
    let s = Arc::new(store(&proxy.url()));
    // The fleet's tokens before the outage.
    let l = s.lease(KEY, Duration::from_secs(5)).unwrap().unwrap();
    assert_eq!(
        s.write(&l, 0, &creds("a1", "r1"), &[]).unwrap(),
        Written::Stored { version: 1 }
    );
    s.release(&l);
    for mode in [ProxyMode::Down, ProxyMode::Stalled, ProxyMode::Garbage] {
        proxy.set(mode);
        std::thread::sleep(Duration::from_millis(150));
        let start = Instant::now();
        let lease = s
            .lease(KEY, Duration::from_secs(5))
            .unwrap()
            .unwrap_or_else(|| panic!("{mode:?}: a lease in the process"));
        assert_eq!(
            s.lease(KEY, Duration::from_secs(5)).unwrap(),
            None,
            "{mode:?}: one holder in the process"
        );
        s.release(&lease);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{mode:?}: {:?}",
            start.elapsed()
        );
    }
    // A refresh during the outage: the process's store has it at once.
    proxy.set(ProxyMode::Down);
    std::thread::sleep(Duration::from_millis(150));
    let lease = s.lease(KEY, Duration::from_secs(5)).unwrap().unwrap();
    let version = s.read(KEY).unwrap().map_or(0, |e| e.version);
    let written = s
        .write(&lease, version, &creds("a2", "r2"), &[spent_digest("r1")])
        .unwrap();
    assert!(matches!(written, Written::Stored { .. }));
    s.release(&lease);
    assert_eq!(
        s.read(KEY)
            .unwrap()
            .unwrap()
            .credentials
            .tokens
            .access_token,
        "a2"
    );
    assert_eq!(s.pending_writes(), 1);
    // Redis is back: the next read writes it there.
    proxy.set(ProxyMode::Up);
    std::thread::sleep(Duration::from_millis(150));
    let read = s.read(KEY).unwrap().unwrap();
    assert_eq!(read.credentials.tokens.access_token, "a2");
    assert_eq!(read.version, 2);
    assert_eq!(s.pending_writes(), 0);
    let direct = store(&redis.url()).read(KEY).unwrap().unwrap();
    assert_eq!(direct.credentials.tokens.access_token, "a2");
}

/// A blip: Redis answers the lease but not the write of the refresh. The release writes the
/// kept refresh as soon as Redis answers again, before the lease goes, so that another process
/// reads the new tokens, never the refresh token they spent (its reuse would revoke the family),
/// without this process reading the key again.
#[test]
fn a_refresh_kept_in_a_blip_reaches_redis_before_its_lease_is_released() {
    let redis = RedisServer::start();
    let proxy = Proxy::start(redis.port());
    let s = store(&proxy.url());
    let l = s.lease(KEY, Duration::from_secs(5)).unwrap().unwrap();
    assert_eq!(
        s.write(&l, 0, &creds("a1", "r1"), &[]).unwrap(),
        Written::Stored { version: 1 }
    );
    s.release(&l);
    let lease = s.lease(KEY, Duration::from_secs(5)).unwrap().unwrap();
    assert!(!lease.holder().starts_with("local:"), "a Redis lease");
    proxy.set(ProxyMode::Down);
    std::thread::sleep(Duration::from_millis(150));
    let written = s.write(&lease, 1, &creds("a2", "r2"), &[spent_digest("r1")]);
    assert!(written.is_err(), "{written:?}");
    assert_eq!(s.pending_writes(), 1);
    proxy.set(ProxyMode::Up);
    std::thread::sleep(Duration::from_millis(50));
    s.release(&lease);
    let other = store(&redis.url());
    let read = other.read(KEY).unwrap().unwrap();
    assert_eq!(read.credentials.tokens.access_token, "a2");
    assert_eq!(s.pending_writes(), 0);
}
