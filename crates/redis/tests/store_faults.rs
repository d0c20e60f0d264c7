//! "Failure is not an outage": Redis killed mid-run, paused, or a fake Redis that answers
//! garbage, trickles, sends a huge bulk or array header or says nothing. Every store operation
//! ends within its one deadline (not a per-read timeout a trickle stretches) and byte bound,
//! and every work item succeeds (a miss) within its budget.

mod store_support;
mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio_net::auth::tokens::{Lease, TokenStore, TokenStoreError};
use mcp_sansio_net::cache::Store;
use mcp_sansio_redis::conn::LinkError;
use mcp_sansio_redis::tokens::RedisTokens;
use mcp_sansio_redis::{RedisStore, StoreError};
use mcp_sansio_test_support::adapter_tests::cache::{CacheServer, Script};
use store_support::*;
use support::RedisServer;

/// The deadline of one store operation in these tests (the default).
const OP: Duration = Duration::from_millis(250);
/// Scheduling slack on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(400);
/// The budget of one work item against a failing store (a handful of store operations, most
/// answered by the backoff at once, and the listing itself).
const ITEM: Duration = Duration::from_millis(2000);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fake {
    /// Answers a line that is no RESP.
    Garbage,
    /// Answers `+PONG\r\n…` one byte every 100 ms, forever.
    Trickle,
    /// Answers `$999999999\r\n` then bytes as fast as it can.
    HugeBulk,
    /// Answers `*999999999\r\n` then `:1\r\n` as fast as it can.
    HugeArray,
    /// Reads, never answers.
    Silent,
}

/// A fake Redis on 127.0.0.1 behaving as `fake` on every connection; counts connections;
/// stops when dropped.
struct FakeRedis {
    port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl FakeRedis {
    fn start(fake: Fake) -> FakeRedis {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, st) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                a.fetch_add(1, Ordering::SeqCst);
                let st = st.clone();
                std::thread::spawn(move || serve(fake, conn, &st));
            }
        });
        FakeRedis {
            port,
            accepted,
            stop,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for FakeRedis {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(fake: Fake, mut conn: TcpStream, stop: &AtomicBool) {
    let mut buf = [0u8; 4096];
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    if conn.read(&mut buf).unwrap_or(0) == 0 {
        return;
    }
    let end = Instant::now() + Duration::from_secs(20);
    let mut go = |bytes: &[u8]| {
        !stop.load(Ordering::SeqCst) && Instant::now() < end && conn.write_all(bytes).is_ok()
    };
    match fake {
        Fake::Garbage => {
            go(b"HTTP/1.1 200 OK\r\n\r\n");
            std::thread::sleep(Duration::from_secs(2));
        }
        Fake::Trickle => {
            for b in b"+PONG\r\n".iter().cycle() {
                if !go(&[*b]) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Fake::HugeBulk => {
            if go(b"$999999999\r\n") {
                let zeros = vec![0u8; 64 << 10];
                while go(&zeros) {}
            }
        }
        Fake::HugeArray => {
            if go(b"*999999999\r\n") {
                let ones = b":1\r\n".repeat(16 << 10);
                while go(&ones) {}
            }
        }
        Fake::Silent => std::thread::sleep(Duration::from_secs(5)),
    }
}

/// One deadline per operation, and a byte bound: against each fake, `PING` fails within the
/// deadline, with the bound that ended it named. A trickle of one byte per 100 ms would pass a
/// per-read timeout of 250 ms for ever; a `$999999999` header would have the reader follow a
/// gigabyte.
#[test]
fn each_operation_ends_within_its_deadline_and_byte_bound() {
    for fake in [
        Fake::Garbage,
        Fake::Trickle,
        Fake::HugeBulk,
        Fake::HugeArray,
        Fake::Silent,
    ] {
        let server = FakeRedis::start(fake);
        let s = store(&server.url());
        let start = Instant::now();
        let err = s.ping().expect_err("a fake is no store");
        let took = start.elapsed();
        assert!(took < OP + SLACK, "{fake:?}: {took:?}");
        let ok = match fake {
            Fake::Garbage => matches!(err, StoreError::Unavailable(LinkError::Garbage(_))),
            Fake::Trickle | Fake::Silent => {
                matches!(err, StoreError::Unavailable(LinkError::Deadline(_)))
            }
            Fake::HugeBulk | Fake::HugeArray => {
                matches!(err, StoreError::Unavailable(LinkError::TooLarge(_)))
            }
        };
        assert!(ok, "{fake:?}: {err:?}");
        // A store read is a miss within the deadline too (after the backoff).
        std::thread::sleep(Duration::from_millis(150));
        let start = Instant::now();
        assert_eq!(s.get(b"catalog:x"), None);
        assert!(
            start.elapsed() < OP + SLACK,
            "{fake:?}: {:?}",
            start.elapsed()
        );
    }
}

/// The token store on the same link: against each fake, a token operation that must reach
/// Redis (`renew` of a Redis lease) fails within the one deadline with the bound that ended it
/// named (a trickle would pass a per-read timeout for ever; a `$999999999` header would have the
/// reader follow a gigabyte), and after the backoff a read and a lease fall back to the
/// process's store within the deadline too.
#[test]
fn each_token_operation_ends_within_its_deadline_and_byte_bound() {
    for fake in [
        Fake::Garbage,
        Fake::Trickle,
        Fake::HugeBulk,
        Fake::HugeArray,
        Fake::Silent,
    ] {
        let server = FakeRedis::start(fake);
        let s = RedisTokens::open(&server.url())
            .unwrap()
            .op_timeout(OP)
            .retry_after(Duration::from_millis(100))
            .backoff_max(Duration::from_millis(100));
        let start = Instant::now();
        let err = s
            .renew(&Lease::new("tokens:k", 1, "holder"), Duration::from_secs(5))
            .expect_err("a fake is no store");
        let took = start.elapsed();
        assert!(took < OP + SLACK, "{fake:?}: {took:?}");
        let ok = match fake {
            Fake::Garbage => matches!(err, TokenStoreError::Garbage(_)),
            Fake::Trickle | Fake::Silent => {
                err == TokenStoreError::Timeout {
                    ms: u64::try_from(OP.as_millis()).unwrap(),
                }
            }
            Fake::HugeBulk | Fake::HugeArray => {
                matches!(&err, TokenStoreError::Unavailable(m) if m.contains("exceeded"))
            }
        };
        assert!(ok, "{fake:?}: {err:?}");
        std::thread::sleep(Duration::from_millis(150));
        let start = Instant::now();
        assert_eq!(s.read("tokens:k").unwrap(), None, "{fake:?}");
        let lease = s.lease("tokens:k", Duration::from_secs(5)).unwrap();
        assert!(lease.is_some(), "{fake:?}: the process's lease");
        assert!(
            start.elapsed() < OP + SLACK,
            "{fake:?}: {:?}",
            start.elapsed()
        );
    }
}

/// After a failure the store is not asked again before the backoff ends (every operation a
/// miss at once, no dial), then it dials again.
#[test]
fn after_a_failure_the_store_backs_off_then_reconnects() {
    let server = FakeRedis::start(Fake::Silent);
    let s = store(&server.url());
    assert!(s.ping().is_err());
    assert_eq!(server.accepted(), 1);
    let start = Instant::now();
    for _ in 0..20 {
        assert_eq!(s.get(b"catalog:x"), None);
        s.put(b"catalog:x", b"v".to_vec());
    }
    assert!(
        start.elapsed() < Duration::from_millis(50),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(server.accepted(), 1, "no dial during the backoff");
    std::thread::sleep(Duration::from_millis(120));
    assert!(s.ping().is_err());
    assert_eq!(server.accepted(), 2, "a dial once the backoff ended");
}

/// Work items go on against every fake store: each succeeds (the cache and the hints miss) and
/// ends within its budget.
#[test]
fn work_items_succeed_within_their_budget_against_a_hostile_store() {
    for fake in [
        Fake::Garbage,
        Fake::Trickle,
        Fake::HugeBulk,
        Fake::HugeArray,
        Fake::Silent,
    ] {
        let redis = FakeRedis::start(fake);
        let server = CacheServer::start(Script::default());
        let c = client(store(&redis.url()));
        for i in 0..3 {
            let start = Instant::now();
            assert_eq!(work_item(&c, config(&server, "tok")), ["weather", "echo"]);
            assert!(
                start.elapsed() < ITEM,
                "{fake:?} item {i}: {:?}",
                start.elapsed()
            );
        }
        assert!(server.count("tools/list") >= 1, "{fake:?}");
    }
}

/// Redis killed mid-run: the next work items succeed within their budget, listing for
/// themselves (a store that refuses connections is a miss).
#[test]
fn work_items_go_on_when_redis_is_killed_mid_run() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    let c = client(store(&redis.url()));
    work_item(&c, config(&server, "tok"));
    work_item(&c, config(&server, "tok"));
    assert_eq!(
        server.count("tools/list"),
        1,
        "the second item hit the cache"
    );
    drop(redis);
    for i in 0..3 {
        let start = Instant::now();
        assert_eq!(work_item(&c, config(&server, "tok")), ["weather", "echo"]);
        assert!(start.elapsed() < ITEM, "item {i}: {:?}", start.elapsed());
    }
    assert_eq!(server.count("tools/list"), 4, "each listed for itself");
}

/// Redis paused (`CLIENT PAUSE 3000`: every command waits 3 s): a work item during the pause
/// succeeds in far less than the pause; once the pause and the backoff are over, the store
/// reconnects and the next work item hits the entry again.
#[test]
fn work_items_go_on_while_redis_is_paused_and_the_store_comes_back() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    let s = store(&redis.url());
    let c = client(s.clone());
    work_item(&c, config(&server, "tok"));
    assert_eq!(server.count("tools/list"), 1);
    assert_eq!(redis.command("CLIENT PAUSE 3000"), "+OK");
    let paused = Instant::now();
    let start = Instant::now();
    assert_eq!(work_item(&c, config(&server, "tok")), ["weather", "echo"]);
    let took = start.elapsed();
    assert!(took < Duration::from_millis(1500), "{took:?}");
    assert_eq!(server.count("tools/list"), 2, "the paused store was a miss");
    // After the pause: the store answers again.
    std::thread::sleep(Duration::from_millis(3200).saturating_sub(paused.elapsed()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.ping().is_err() {
        assert!(Instant::now() < deadline, "the store never came back");
        std::thread::sleep(Duration::from_millis(100));
    }
    let lists = server.count("tools/list");
    work_item(&c, config(&server, "tok"));
    assert_eq!(
        server.count("tools/list"),
        lists,
        "a hit again after reconnecting"
    );
}

/// A store URL that is no Redis URL is refused when the store is made; a store that is down is
/// no error when made (a miss later).
#[test]
fn a_bad_url_is_refused_and_a_down_store_is_made() {
    for bad in ["http://127.0.0.1/", "redis+unix:///tmp/x.sock", "redis://"] {
        assert!(
            matches!(RedisStore::open(bad), Err(StoreError::Url(_))),
            "{bad}"
        );
    }
    let port = support::free_port();
    let s = RedisStore::open(&format!("redis://127.0.0.1:{port}/")).unwrap();
    assert_eq!(s.get(b"catalog:x"), None);
    assert!(RedisStore::open("rediss://user:secret@redis.example.com:6380/2").is_ok());
    let debug = format!(
        "{:?}",
        RedisStore::open("redis://u:secret-pw@h:1/").unwrap()
    );
    assert!(!debug.contains("secret-pw"), "{debug}");
}

/// A link the store closed while it was idle (Redis's `timeout`, a balancer's idle timeout;
/// here `CLIENT KILL TYPE normal`) is dialled again within the operation, not counted as a
/// failure: the operation succeeds, and the next is not in a backoff.
#[test]
fn a_link_closed_while_idle_is_dialled_again_not_a_failure() {
    let redis = RedisServer::start();
    let s = store(&redis.url());
    s.put_for(b"era:k", b"m\nv".to_vec(), Duration::from_secs(30));
    assert_eq!(s.get(b"era:k").as_deref(), Some(&b"m\nv"[..]));
    for round in 0..2 {
        let killed = redis.command("CLIENT KILL TYPE normal");
        assert!(
            killed.starts_with(':') && killed != ":0",
            "round {round}: the store's idle link was killed: {killed}"
        );
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            s.get(b"era:k").as_deref(),
            Some(&b"m\nv"[..]),
            "round {round}"
        );
        s.ping().expect("no backoff");
    }
}

/// The redial of a link closed while idle is inside the operation's one deadline: a store that
/// closes the idle link late in the deadline and then says nothing fails the operation within
/// the deadline, not one deadline per attempt.
#[test]
fn the_redial_of_a_closed_idle_link_is_within_the_one_deadline() {
    let op = Duration::from_millis(1000);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let a = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let first = a.fetch_add(1, Ordering::SeqCst) == 0;
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                conn.set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                if first {
                    // Answers the first PING; closes without a byte 900 ms into the second.
                    if conn.read(&mut buf).unwrap_or(0) == 0 {
                        return;
                    }
                    conn.write_all(b"+PONG\r\n").unwrap();
                    if conn.read(&mut buf).unwrap_or(0) == 0 {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(900));
                } else {
                    // Reads, never answers.
                    let _ = conn.read(&mut buf);
                    std::thread::sleep(Duration::from_secs(5));
                }
            });
        }
    });
    let mut o = options();
    o.op_timeout = op;
    let s = RedisStore::with_options(&format!("redis://127.0.0.1:{port}/"), o).unwrap();
    s.ping().expect("the first PING");
    let start = Instant::now();
    let err = s.ping().expect_err("closed, then silent");
    let took = start.elapsed();
    assert!(
        matches!(err, StoreError::Unavailable(LinkError::Deadline(_))),
        "{err:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 2, "dialled once more");
    assert!(took < op + SLACK, "{took:?}");
}

/// The commands of RESP arrays of bulk strings complete in `buf` (drained), each as its
/// upper-cased words.
fn take_commands(buf: &mut Vec<u8>) -> Vec<Vec<String>> {
    fn line(b: &[u8], at: usize) -> Option<(&[u8], usize)> {
        let end = b[at..].windows(2).position(|w| w == b"\r\n")? + at;
        Some((&b[at..end], end + 2))
    }
    fn number(b: &[u8]) -> usize {
        std::str::from_utf8(b).unwrap().parse().unwrap()
    }
    let mut commands = Vec::new();
    let mut at = 0;
    'next: while let Some((head, mut i)) = line(buf, at) {
        assert_eq!(head[0], b'*', "a command is an array");
        let mut words = Vec::new();
        for _ in 0..number(&head[1..]) {
            let Some((len, j)) = line(buf, i) else {
                break 'next;
            };
            let len = number(&len[1..]);
            if buf.len() < j + len + 2 {
                break 'next;
            }
            words.push(String::from_utf8_lossy(&buf[j..j + len]).to_uppercase());
            i = j + len + 2;
        }
        commands.push(words);
        at = i;
    }
    buf.drain(..at);
    commands
}

/// `await_fill` ends within `lease_wait` plus three operation deadlines: a lease taken once
/// the wait is over is listed at once, with no more lookup of the entry (before, the lookup and
/// the lease's deletion could add three more deadlines, six in all). The fake store answers
/// every round trip 200 ms late: the lease is another's until the wait (600 ms) is over, then
/// free; the entry is always a bad value (so each lookup also deletes it).
#[test]
fn a_lease_taken_after_the_wait_is_listed_at_once() {
    let wait = Duration::from_millis(600);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let l = log.clone();
    std::thread::spawn(move || {
        let first_lease: Arc<std::sync::Mutex<Option<Instant>>> = Arc::default();
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (log, first_lease) = (l.clone(), first_lease.clone());
            std::thread::spawn(move || {
                conn.set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = conn.read(&mut chunk).unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let commands = take_commands(&mut buf);
                    if commands.is_empty() {
                        continue;
                    }
                    let mut out = Vec::new();
                    for words in commands {
                        let reply: &[u8] = match words[0].as_str() {
                            "SET" if words.iter().any(|w| w == "NX") => {
                                let first =
                                    *first_lease.lock().unwrap().get_or_insert_with(Instant::now);
                                if first.elapsed() < wait {
                                    b"$7\r\nanother\r\n"
                                } else {
                                    log.lock().unwrap().push("taken".to_owned());
                                    b"$-1\r\n"
                                }
                            }
                            "STRLEN" => b":5\r\n",
                            "GETRANGE" => b"$5\r\nxxxxx\r\n",
                            "DEL" | "EVAL" => b":1\r\n",
                            _ => b"+OK\r\n",
                        };
                        log.lock().unwrap().push(words[0].clone());
                        out.extend_from_slice(reply);
                    }
                    std::thread::sleep(Duration::from_millis(200));
                    if conn.write_all(&out).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let mut o = options();
    o.op_timeout = Duration::from_millis(1000);
    o.lease_wait = wait;
    let s = RedisStore::with_options(&format!("redis://127.0.0.1:{port}/"), o).unwrap();
    let start = Instant::now();
    assert_eq!(s.await_fill(b"catalog:k"), None);
    let took = start.elapsed();
    let log = log.lock().unwrap().clone();
    let taken = log
        .iter()
        .position(|c| c == "taken")
        .unwrap_or_else(|| panic!("the lease was never free: {log:?}"));
    assert!(
        log[..taken].iter().any(|c| c == "STRLEN"),
        "it looked for the entry while waiting: {log:?}"
    );
    assert_eq!(
        log[taken + 1..],
        ["SET"],
        "nothing after the lease taken past the wait: {log:?}"
    );
    assert!(took < wait + 3 * Duration::from_millis(1000), "{took:?}");
}
