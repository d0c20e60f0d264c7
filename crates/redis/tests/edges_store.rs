//! The shared store at the edges of its limits and keys (`scripts/mutants.sh redis-store`):
//! a value of exactly `max_value_bytes` (its frame included) is written and read back, one byte
//! more is not written and one found is deleted unread; a lifetime of 0 deletes; the key of a
//! value, of its lease and of a task handle; the store's backoff is the one its options give;
//! `PING` answered otherwise than `PONG` is a failure.

mod store_support;
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio_net::cache::Store;
use mcp_sansio_redis::frame::FRAME_OVERHEAD;
use mcp_sansio_redis::{Options, RedisStore};
use store_support::*;
use support::RedisServer;

const LONG: Duration = Duration::from_secs(60);

fn store_with(url: &str, edit: impl FnOnce(&mut Options)) -> RedisStore {
    let mut o = options();
    edit(&mut o);
    RedisStore::with_options(url, o).unwrap()
}

/// A value whose frame is exactly `max_value_bytes` is written and read back; a payload one
/// byte longer is not written (and removes what was there); a value of `max_value_bytes + 1`
/// bytes found in Redis is deleted unread, one of exactly `max_value_bytes` that is no frame is
/// deleted as well.
#[test]
fn a_value_of_exactly_the_bound_is_kept_one_byte_more_is_not() {
    let redis = RedisServer::start();
    let url = redis.url();
    let max = 1000;
    let s = store_with(&url, |o| o.max_value_bytes = max);
    let fits = vec![b'f'; max - FRAME_OVERHEAD];
    s.put_for(b"era:fits", fits.clone(), LONG);
    assert_eq!(get_raw(&url, b"era:fits").map(|v| v.len()), Some(max));
    assert_eq!(s.get(b"era:fits"), Some(fits.clone()));
    // One byte more: not written, and the value that was there is gone.
    s.put_for(b"era:fits", vec![b'f'; max - FRAME_OVERHEAD + 1], LONG);
    assert_eq!(get_raw(&url, b"era:fits"), None);
    assert_eq!(s.get(b"era:fits"), None);

    // What another writer left: a frame of max + 1 bytes (written under a larger bound) is
    // deleted unread; a frame of exactly max bytes reads.
    let big = store_with(&url, |o| o.max_value_bytes = max + 1);
    big.put_for(b"era:big", vec![b'b'; max + 1 - FRAME_OVERHEAD], LONG);
    assert_eq!(get_raw(&url, b"era:big").map(|v| v.len()), Some(max + 1));
    assert_eq!(s.get(b"era:big"), None);
    assert_eq!(get_raw(&url, b"era:big"), None, "deleted");
    big.put_for(b"era:edge", fits.clone(), LONG);
    assert_eq!(s.get(b"era:edge"), Some(fits));
}

/// A lifetime of 0 writes nothing and removes the value that was there; 1 ms writes it with
/// that lifetime.
#[test]
fn a_lifetime_of_zero_deletes_one_millisecond_writes() {
    let redis = RedisServer::start();
    let url = redis.url();
    let s = store(&url);
    s.put_for(b"era:k", b"v".to_vec(), LONG);
    assert_eq!(s.get(b"era:k").as_deref(), Some(&b"v"[..]));
    s.put_for(b"era:k", b"w".to_vec(), Duration::ZERO);
    assert_eq!(get_raw(&url, b"era:k"), None);
    s.put_for(b"era:k", b"w".to_vec(), Duration::from_millis(1000));
    let left = pttl(&url, b"era:k");
    assert!(0 < left && left <= 1000, "{left}");
}

/// The key of a value is the namespace and the store key, byte for byte; its lease's is the
/// namespace, `lease:` and the store key; nothing else is written.
#[test]
fn values_and_leases_are_under_the_namespace_and_their_key() {
    let redis = RedisServer::start();
    let url = redis.url();
    let s = store(&url);
    assert_eq!(s.await_fill(b"catalog:abc"), None, "the lease taken");
    assert_eq!(keys(&url), ["test-ns:lease:catalog:abc"]);
    s.put_for(b"catalog:abc", b"v".to_vec(), LONG);
    assert_eq!(keys(&url), ["test-ns:catalog:abc"], "the lease freed");
    let other = store_with(&url, |o| o.namespace = "other-fleet:".to_owned());
    assert_eq!(other.get(b"catalog:abc"), None, "another namespace");
    other.put_for(b"catalog:abc", b"w".to_vec(), LONG);
    assert_eq!(s.get(b"catalog:abc").as_deref(), Some(&b"v"[..]));
    assert_eq!(other.get(b"catalog:abc").as_deref(), Some(&b"w"[..]));
}

/// A store that took the leases of several listings frees each with its own put: it remembers
/// every token it holds (up to 1024), not only the last.
#[test]
fn every_lease_a_store_holds_is_freed_by_its_put() {
    let redis = RedisServer::start();
    let url = redis.url();
    let s = store_with(&url, |o| o.lease_hold = LONG);
    let names: Vec<Vec<u8>> = (0..3)
        .map(|i| format!("catalog:{i}").into_bytes())
        .collect();
    for n in &names {
        assert_eq!(s.await_fill(n), None, "the lease of a cold listing");
    }
    assert_eq!(keys(&url).len(), 3);
    for n in &names {
        s.put_for(n, b"x".to_vec(), LONG);
    }
    assert_eq!(
        keys(&url),
        [
            "test-ns:catalog:0",
            "test-ns:catalog:1",
            "test-ns:catalog:2"
        ],
        "no lease left"
    );
}

/// A listener that takes each connection and closes it at once (every operation of a store on
/// it fails); it counts the connections.
fn closing_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            seen.fetch_add(1, Ordering::SeqCst);
            drop(conn);
        }
    });
    (port, count)
}

/// Waits (at most 10 s) until `count` reaches `n`: the listener's thread counts each
/// connection once it accepts it.
fn wait_count(count: &AtomicUsize, n: usize) -> usize {
    let end = std::time::Instant::now() + Duration::from_secs(10);
    while count.load(Ordering::SeqCst) < n && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    count.load(Ordering::SeqCst)
}

/// The backoff is the options': with `backoff_min` 0 every operation after a failure dials
/// again at once (the default, 100 ms, would answer the next ones from the backoff).
#[test]
fn a_backoff_of_zero_dials_again_at_once() {
    let (port, count) = closing_listener();
    let s = store_with(&format!("redis://127.0.0.1:{port}/"), |o| {
        o.backoff_min = Duration::ZERO;
        o.backoff_max = Duration::ZERO;
    });
    for i in 1..=5 {
        assert!(s.ping().is_err());
        assert_eq!(wait_count(&count, i), i, "dial {i}");
    }
}

/// `backoff_max` caps the doubling: with 1 ms at most, every operation 3 ms after the last
/// failure dials again (the default cap, 5 s, would leave the store in a growing backoff).
#[test]
fn the_backoff_never_passes_its_cap() {
    let (port, count) = closing_listener();
    let s = store_with(&format!("redis://127.0.0.1:{port}/"), |o| {
        o.backoff_min = Duration::from_millis(1);
        o.backoff_max = Duration::from_millis(1);
    });
    for i in 1..=12 {
        std::thread::sleep(Duration::from_millis(3));
        assert!(s.ping().is_err());
        assert_eq!(wait_count(&count, i), i, "dial {i}");
    }
}

/// `PING` answered with anything but `+PONG` is a failure; `+PONG` is not.
#[test]
fn ping_wants_pong() {
    for (reply, ok) in [
        (&b"+PONG\r\n"[..], true),
        (b"+PANG\r\n", false),
        (b"+OK\r\n", false),
        (b"$4\r\nPONG\r\n", false),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 64];
            let _ = conn.read(&mut buf);
            conn.write_all(reply).unwrap();
        });
        let s = store_with(&format!("redis://127.0.0.1:{port}/"), |_| {});
        assert_eq!(s.ping().is_ok(), ok, "{:?}", String::from_utf8_lossy(reply));
        server.join().unwrap();
    }
}

/// One `get` of a store (`max_value_bytes` 1000) against a fake Redis that answers the
/// `STRLEN` and `GETRANGE 0 999` with `reply`: what the `get` gave, and every byte the client
/// sent after the reply on that link until it closed it (the store is dropped).
fn get_from_fake(reply: Vec<u8>) -> (Option<Vec<u8>>, Vec<u8>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        // A store that never connects fails the test within 10 s, not by hanging.
        listener.set_nonblocking(true).unwrap();
        let end = std::time::Instant::now() + Duration::from_secs(10);
        let mut conn = loop {
            match listener.accept() {
                Ok((conn, _)) => break conn,
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        && std::time::Instant::now() < end =>
                {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => panic!("the store never connected: {e}"),
            }
        };
        conn.set_nonblocking(false).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // The pipelined request ends with GETRANGE's last argument, max - 1 = 999.
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.ends_with(b"$3\r\n999\r\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&buf[..n]);
        }
        conn.write_all(&reply).unwrap();
        let mut after = Vec::new();
        loop {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => after.extend_from_slice(&buf[..n]),
            }
        }
        after
    });
    let s = store_with(&format!("redis://127.0.0.1:{port}/"), |o| {
        o.max_value_bytes = 1000;
        o.backoff_min = Duration::from_secs(3600);
        o.backoff_max = Duration::from_secs(3600);
    });
    let got = s.get(b"era:k");
    drop(s);
    (got, server.join().unwrap())
}

/// A hostile Redis answers with a bulk larger than the reply bound (`max_value_bytes` + 256
/// bytes of RESP): the client stops reading at the bound, the read is a miss and the link is
/// dropped, so nothing more is sent on it (a `DEL` would be, had the reply been read whole).
#[test]
fn a_reply_past_the_value_bound_fails_the_read_and_drops_the_link() {
    let len = 1000 + 300;
    let mut reply = format!(":{len}\r\n${len}\r\n").into_bytes();
    reply.resize(reply.len() + len, b'x');
    reply.extend_from_slice(b"\r\n");
    let (got, after) = get_from_fake(reply);
    assert_eq!(got, None);
    assert!(after.is_empty(), "{:?}", String::from_utf8_lossy(&after));
}

/// A store that answers a missing key's `GETRANGE` with nil (`:0`, `$-1`): a miss, and nothing
/// deleted (there is nothing); a reply of another shape is a miss and its key is deleted.
#[test]
fn a_missing_key_answered_nil_is_a_miss_with_nothing_deleted() {
    let (got, after) = get_from_fake(b":0\r\n$-1\r\n".to_vec());
    assert_eq!(got, None);
    assert!(after.is_empty(), "{:?}", String::from_utf8_lossy(&after));
    let (got, after) = get_from_fake(b":3\r\n:7\r\n".to_vec());
    assert_eq!(got, None);
    assert!(
        String::from_utf8_lossy(&after).contains("DEL"),
        "{:?}",
        String::from_utf8_lossy(&after)
    );
}

/// A value is read only before the expiry its frame carries (the wall clock), whatever Redis
/// does with the key's own lifetime: a value written for 1 s, then kept by Redis with no
/// lifetime at all (a copy, a restore), reads before that second and is a miss after it.
#[test]
fn a_value_past_its_frames_expiry_is_a_miss_though_redis_still_holds_it() {
    let redis = RedisServer::start();
    let url = redis.url();
    let s = store_with(&url, |_| {});
    s.put_for(b"era:short", b"v".to_vec(), Duration::from_secs(1));
    let framed = get_raw(&url, b"era:short").expect("written");
    set_raw(&url, b"era:short", &framed);
    assert_eq!(
        s.get(b"era:short"),
        Some(b"v".to_vec()),
        "within its second"
    );
    std::thread::sleep(Duration::from_millis(1300));
    assert_eq!(s.get(b"era:short"), None, "past its frame's expiry");
}

/// `put` writes with the store's default lifetime (`Options::default_ttl`).
#[test]
fn a_put_writes_with_the_default_lifetime() {
    let redis = RedisServer::start();
    let url = redis.url();
    let s = store_with(&url, |o| o.default_ttl = Duration::from_secs(90));
    s.put(b"era:p", b"v".to_vec());
    assert_eq!(s.get(b"era:p"), Some(b"v".to_vec()));
    let left = pttl(&url, b"era:p");
    assert!(left > 30_000 && left <= 90_000, "{left} ms");
}

/// `SaveHandles` hands a call's progress, input requests, task statuses and server requests to
/// the observer it wraps, and gives back that observer's answers.
#[test]
fn save_handles_hands_everything_else_to_its_observer() {
    use mcp_sansio::task::TaskStatus;
    use mcp_sansio_net::CallObserver;
    use mcp_sansio_redis::SaveHandles;
    use serde_json::value::RawValue;

    #[derive(Default)]
    struct Record(Vec<String>);
    impl CallObserver for Record {
        fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
            self.0
                .push(format!("progress {progress} {total:?} {message:?}"));
        }
        fn input_required(&mut self, requests: &RawValue) -> Option<Vec<u8>> {
            self.0.push(format!("input {}", requests.get()));
            Some(b"answer".to_vec())
        }
        fn task_status(&mut self, status: TaskStatus, message: Option<&str>) {
            self.0.push(format!("status {status:?} {message:?}"));
        }
        fn server_request(&mut self, method: &str, params: Option<&RawValue>) -> Option<Vec<u8>> {
            self.0
                .push(format!("request {method} {:?}", params.map(RawValue::get)));
            Some(b"reply".to_vec())
        }
    }

    let store = RedisStore::open("redis://127.0.0.1:1/").unwrap();
    let config = mcp_sansio::Config::new("https://mcp.example/mcp").unwrap();
    let mut o = SaveHandles::new(&store, &config, "w", Record::default());
    let raw = RawValue::from_string(r#"{"a":1}"#.to_owned()).unwrap();
    o.progress(1.0, Some(4.0), Some("one"));
    assert_eq!(o.input_required(&raw), Some(b"answer".to_vec()));
    o.task_status(TaskStatus::Working, Some("busy"));
    assert_eq!(
        o.server_request("ping", Some(&raw)),
        Some(b"reply".to_vec())
    );
    assert_eq!(
        o.inner.0,
        [
            "progress 1 Some(4.0) Some(\"one\")",
            "input {\"a\":1}",
            "status Working Some(\"busy\")",
            "request ping Some(\"{\\\"a\\\":1}\")",
        ]
    );
}
