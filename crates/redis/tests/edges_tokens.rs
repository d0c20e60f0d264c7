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

/// The bytes of an unsealed entry under `token_key` as the module's docs lay it out: magic
/// `MSTK`, format 1, sealed 0, the version (u64 BE), SHA-256 of the token key, the payload's
/// length (u32 BE), the payload.
fn framed(token_key: &str, version: u64, payload: &[u8]) -> Vec<u8> {
    use sha2::{Digest as _, Sha256};
    let mut out = b"MSTK".to_vec();
    out.push(1);
    out.push(0);
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(&Sha256::digest(token_key.as_bytes()));
    out.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The JSON payload of `c` with the hex digests of `spent` refresh tokens, padded with
/// whitespace (which JSON allows) to `len` bytes when given.
fn payload(c: &ResourceCredentials, spent: usize, len: Option<usize>) -> Vec<u8> {
    let s: Vec<String> = (0..spent)
        .map(|i| {
            mcp_sansio_net::auth::tokens::spent_digest(&format!("r{i}"))
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
        .collect();
    let mut p = serde_json::to_vec(&serde_json::json!({ "c": c, "s": s })).unwrap();
    if let Some(len) = len {
        assert!(p.len() <= len);
        p.resize(len, b' ');
    }
    p
}

/// An entry of exactly `MAX_ENTRY_BYTES` (64 KiB) reads; one byte more is too large, with its
/// length and the limit named.
#[test]
fn an_entry_of_64_kib_reads_one_byte_more_is_too_large() {
    use mcp_sansio_redis::tokens::{read_token_entry, EntryError, MAX_ENTRY_BYTES};
    assert_eq!(MAX_ENTRY_BYTES, 65536);
    let header = framed("K", 1, b"").len();
    assert_eq!(header, 50);
    let c = creds("a1");
    let exact = framed("K", 1, &payload(&c, 0, Some(MAX_ENTRY_BYTES - header)));
    assert_eq!(exact.len(), MAX_ENTRY_BYTES);
    let read = read_token_entry("K", &exact, None).expect("64 KiB reads");
    assert_eq!((read.version, read.credentials), (1, c.clone()));
    let over = framed("K", 1, &payload(&c, 0, Some(MAX_ENTRY_BYTES - header + 1)));
    assert_eq!(
        read_token_entry("K", &over, None),
        Err(EntryError::TooLarge {
            len: MAX_ENTRY_BYTES + 1,
            limit: MAX_ENTRY_BYTES
        })
    );
}

/// A header alone (50 bytes, an empty payload) is framed and its payload refused; 49 bytes are
/// shorter than a header.
#[test]
fn a_header_alone_is_framed_one_byte_less_is_not() {
    use mcp_sansio_redis::tokens::{read_token_entry, EntryError};
    let header = framed("K", 1, b"");
    assert_eq!(
        read_token_entry("K", &header, None),
        Err(EntryError::Payload("not JSON"))
    );
    assert_eq!(
        read_token_entry("K", &header[..49], None),
        Err(EntryError::Frame("shorter than its header"))
    );
}

/// An entry holds at most `MAX_LINEAGE` (16) spent digests: 16 read back, 17 are refused.
#[test]
fn an_entry_of_sixteen_spent_digests_reads_seventeen_are_refused() {
    use mcp_sansio_redis::tokens::{read_token_entry, EntryError};
    let c = creds("a1");
    let sixteen = read_token_entry("K", &framed("K", 3, &payload(&c, 16, None)), None)
        .expect("16 spent digests");
    assert_eq!(sixteen.spent.len(), 16);
    assert_eq!(
        sixteen.spent[15],
        mcp_sansio_net::auth::tokens::spent_digest("r15")
    );
    assert_eq!(
        read_token_entry("K", &framed("K", 3, &payload(&c, 17, None)), None),
        Err(EntryError::Payload("the spent digests"))
    );
}

/// Reads `c` framed as an entry under `K` (written by hand, not by the writer, which checks
/// the same bounds).
fn read_creds(
    c: &ResourceCredentials,
) -> Result<mcp_sansio_net::auth::tokens::TokenEntry, mcp_sansio_redis::tokens::EntryError> {
    mcp_sansio_redis::tokens::read_token_entry("K", &framed("K", 1, &payload(c, 0, None)), None)
}

/// The issuer and the resource: 1 to `MAX_TEXT` (8 KiB) bytes each; empty or one byte more is
/// refused, naming which.
#[test]
fn issuer_and_resource_of_8_kib_read_empty_or_one_byte_more_refused() {
    use mcp_sansio_redis::tokens::{EntryError, MAX_TEXT};
    assert_eq!(MAX_TEXT, 8192);
    let long = |n: usize| format!("https://{}", "x".repeat(n - 8));
    for (n, ok) in [(MAX_TEXT, true), (MAX_TEXT + 1, false)] {
        let mut c = creds("a1");
        c.issuer = long(n);
        assert_eq!(
            read_creds(&c).map(|_| ()),
            if ok {
                Ok(())
            } else {
                Err(EntryError::Payload("the issuer"))
            },
            "issuer of {n}"
        );
        let mut c = creds("a1");
        c.resource = long(n);
        assert_eq!(
            read_creds(&c).map(|_| ()),
            if ok {
                Ok(())
            } else {
                Err(EntryError::Payload("the resource"))
            },
            "resource of {n}"
        );
    }
    let mut c = creds("a1");
    c.issuer = String::new();
    assert_eq!(
        read_creds(&c).map(|_| ()),
        Err(EntryError::Payload("the issuer"))
    );
    let mut c = creds("a1");
    c.resource = String::new();
    assert_eq!(
        read_creds(&c).map(|_| ()),
        Err(EntryError::Payload("the resource"))
    );
}

/// A token is header-safe: 1 to `MAX_TOKEN_BYTES` (16 KiB) visible ASCII bytes (`!` to `~`);
/// empty, one byte more, a space or DEL is refused, for the access and the refresh token.
#[test]
fn tokens_of_16_kib_of_visible_ascii_read_anything_else_is_refused() {
    use mcp_sansio_redis::tokens::{EntryError, MAX_TOKEN_BYTES};
    assert_eq!(MAX_TOKEN_BYTES, 16384);
    let cases = [
        ("!".repeat(MAX_TOKEN_BYTES), true),
        ("~".repeat(MAX_TOKEN_BYTES + 1), false),
        ("!~".to_owned(), true),
        (String::new(), false),
        ("a b".to_owned(), false),
        ("a\u{7f}b".to_owned(), false),
    ];
    for (token, ok) in cases {
        let mut c = creds("a1");
        c.tokens.access_token = token.clone();
        assert_eq!(
            read_creds(&c).map(|_| ()),
            if ok {
                Ok(())
            } else {
                Err(EntryError::Payload("the access token"))
            },
            "access token of {} bytes",
            token.len()
        );
        let mut c = creds("a1");
        c.tokens.refresh_token = Some(token.clone());
        assert_eq!(
            read_creds(&c).map(|_| ()),
            if ok {
                Ok(())
            } else {
                Err(EntryError::Payload("the refresh token"))
            },
            "refresh token of {} bytes",
            token.len()
        );
    }
}

/// Scopes: at most 64, each 1 to 256 bytes; 65, an empty one or one of 257 bytes is refused.
#[test]
fn sixty_four_scopes_of_256_bytes_read_one_more_is_refused() {
    use mcp_sansio_redis::tokens::EntryError;
    let with = |scopes: Vec<String>| {
        let mut c = creds("a1");
        c.tokens.scopes = scopes;
        read_creds(&c).map(|e| e.credentials.tokens.scopes.len())
    };
    let refused = Err(EntryError::Payload("the scopes"));
    assert_eq!(with(vec!["s".repeat(256); 64]), Ok(64));
    assert_eq!(with(vec!["s".to_owned(); 65]), refused);
    assert_eq!(with(vec!["s".repeat(257)]), refused);
    assert_eq!(with(vec![String::new()]), refused);
    assert_eq!(with(Vec::new()), Ok(0));
}

/// How a [`Fake`] answers a command (given its bytes).
type Answer = Box<dyn Fn(&[u8]) -> Vec<u8> + Send>;

/// A fake Redis on 127.0.0.1: answers every `EVAL` as told (switchable while it runs), and
/// counts them.
struct Fake {
    port: u16,
    answer: std::sync::Arc<std::sync::Mutex<Answer>>,
    evals: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Fake {
    /// A fake answering `reply` to every command.
    fn start(reply: &[u8]) -> Fake {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        use std::sync::{Arc, Mutex};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let reply = reply.to_vec();
        let fake = Fake {
            port: listener.local_addr().unwrap().port(),
            answer: Arc::new(Mutex::new(Box::new(move |_: &[u8]| reply.clone()))),
            evals: Arc::default(),
        };
        let (answer, evals) = (fake.answer.clone(), fake.evals.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let (answer, evals) = (answer.clone(), evals.clone());
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut buf = vec![0u8; 256 * 1024];
                    while let Ok(n @ 1..) = conn.read(&mut buf) {
                        let got = &buf[..n];
                        // One answer per command: `EVAL` is each command's first argument.
                        let commands = got.windows(10).filter(|w| w == b"$4\r\nEVAL\r\n").count();
                        for _ in 0..commands {
                            evals.fetch_add(1, Ordering::SeqCst);
                            let reply = (answer.lock().unwrap())(got);
                            if conn.write_all(&reply).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        fake
    }

    /// Answers `answer(command)` from now on.
    fn answer(&self, answer: impl Fn(&[u8]) -> Vec<u8> + Send + 'static) {
        *self.answer.lock().unwrap() = Box::new(answer);
    }

    /// Answers `reply` to every command from now on.
    fn reply(&self, reply: &[u8]) {
        let reply = reply.to_vec();
        self.answer(move |_| reply.clone());
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn evals(&self) -> usize {
        self.evals.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A write whose answer is not the version written (the script answers the new version, or a
/// negative number for a conflict) is not stored: it fails as garbage, and the refresh is kept
/// in the process as the next version of what the process holds (1 after none, 2 after 1),
/// where a read finds it while Redis answers garbage. The lease's release does not wait for
/// the kept refresh's flush when Redis is not in a backoff (`RELEASE_FLUSH_WAIT` is 1 s).
#[test]
fn a_write_answered_with_another_version_is_not_stored_and_is_kept_as_the_next_version() {
    use mcp_sansio_net::auth::tokens::TokenStoreError;
    use std::time::Instant;
    let fake = Fake::start(b":7\r\n");
    let s = RedisTokens::open(&fake.url()).unwrap();
    let lease = s.lease("K1", TTL).unwrap().expect("fence 7");
    assert_eq!(lease.fence(), 7);
    for (access, next) in [("a1", 1), ("a2", 2)] {
        let written = s.write(&lease, 0, &creds(access), &[]);
        assert!(
            matches!(written, Err(TokenStoreError::Garbage(_))),
            "{written:?}"
        );
        let kept = s.read("K1").unwrap().expect("kept in the process");
        assert_eq!(kept.version, next);
        assert_eq!(kept.credentials.tokens.access_token, access);
    }
    assert_eq!(s.pending_writes(), 1);
    let start = Instant::now();
    s.release(&lease);
    let took = start.elapsed();
    assert!(took < Duration::from_millis(900), "{took:?}");
}

/// Redis answering that it has no entry (`READ` answers an empty list) is no entry, even when
/// the process holds one from a failed write: the process's store is read only when Redis
/// fails.
#[test]
fn an_empty_answer_is_no_entry_even_when_the_process_holds_one() {
    let fake = Fake::start(b":7\r\n");
    let s = RedisTokens::open(&fake.url()).unwrap();
    let lease = s.lease("K1", TTL).unwrap().expect("fence 7");
    assert!(s.write(&lease, 0, &creds("a1"), &[]).is_err());
    assert!(s.read("K1").unwrap().is_some(), "kept in the process");
    fake.reply(b"*0\r\n");
    assert_eq!(s.read("K1").unwrap(), None);
}

/// A server's error reply fails the operation as garbage naming the error's code.
#[test]
fn a_server_error_reply_is_garbage_naming_its_code() {
    use mcp_sansio_net::auth::tokens::TokenStoreError;
    let fake = Fake::start(b":7\r\n");
    let s = RedisTokens::open(&fake.url()).unwrap();
    let lease = s.lease("K1", TTL).unwrap().expect("fence 7");
    fake.reply(b"-BUSY Redis is busy running a script\r\n");
    match s.write(&lease, 0, &creds("a1"), &[]) {
        Err(TokenStoreError::Garbage(m)) => assert!(m.contains("BUSY"), "{m}"),
        other => panic!("not garbage: {other:?}"),
    }
}

/// Waiting for another holder's refresh while Redis is usable sleeps the whole pause (the
/// waiting session reads Redis again only after it), not a moment.
#[test]
fn a_wait_on_redis_sleeps_the_whole_pause() {
    use std::time::Instant;
    let s = RedisTokens::open("redis://127.0.0.1:1/").unwrap();
    let start = Instant::now();
    s.wait("K1", Duration::from_millis(300));
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(300), "{took:?}");
}

/// At most `MAX_PENDING` (4096) refreshes are kept for Redis, one per token key: 4096 keys
/// are kept, a 4097th is not; then, Redis answering again, every kept refresh is written and
/// counted.
#[test]
fn at_most_4096_refreshes_are_kept_and_each_is_flushed_and_counted() {
    use mcp_sansio_redis::tokens::MAX_PENDING;
    assert_eq!(MAX_PENDING, 4096);
    let fake = Fake::start(b":7\r\n");
    let s = RedisTokens::open(&fake.url()).unwrap();
    let fail = |key: &str| {
        let lease = s.lease(key, TTL).unwrap().expect("fence 7");
        assert!(s.write(&lease, 0, &creds(key), &[]).is_err());
    };
    for i in 0..MAX_PENDING {
        fail(&format!("K{i}"));
    }
    assert_eq!(s.pending_writes(), MAX_PENDING);
    fail("one-more");
    assert_eq!(s.pending_writes(), MAX_PENDING);
    // Redis has none of them, and stores each write (version 1).
    fake.answer(|cmd| {
        let read = cmd.windows(5).any(|w| w == b"HMGET");
        if read { b"*0\r\n" } else { b":1\r\n" }.to_vec()
    });
    assert_eq!(s.flush_pending(), MAX_PENDING);
    assert_eq!(s.pending_writes(), 0);
}

/// The Redis reply to a read is bounded by an entry's bound and `REPLY_SLACK`: a reply
/// beyond it (70 000 bytes) fails the read, which falls back to the process's store, and
/// leaves Redis aside for the backoff (the next read does not ask it).
#[test]
fn a_reply_past_an_entrys_bound_fails_the_read_and_leaves_redis_aside() {
    let mut big = b"$70000\r\n".to_vec();
    big.resize(big.len() + 70_000, b'x');
    big.extend_from_slice(b"\r\n");
    let fake = Fake::start(&big);
    let s = RedisTokens::open(&fake.url())
        .unwrap()
        .retry_after(Duration::from_secs(60));
    assert_eq!(s.read("K1").unwrap(), None);
    assert_eq!(s.read("K1").unwrap(), None);
    assert_eq!(fake.evals(), 1, "not asked in the backoff");
}

/// An entry of exactly `MAX_ENTRY_BYTES` (64 KiB) in Redis is read back whole through the
/// link (the reply's bound leaves room for its framing).
#[test]
fn an_entry_of_64_kib_in_redis_is_read_back() {
    use mcp_sansio_redis::tokens::MAX_ENTRY_BYTES;
    let redis = RedisServer::start();
    let url = redis.url();
    let c = creds("a1");
    let exact = framed("K1", 1, &payload(&c, 0, Some(MAX_ENTRY_BYTES - 50)));
    assert_eq!(exact.len(), MAX_ENTRY_BYTES);
    let _: () = redis::cmd("HSET")
        .arg("mcp-sansio:tokens:{K1}")
        .arg("v")
        .arg("1")
        .arg("d")
        .arg(exact)
        .query(&mut raw(&url))
        .unwrap();
    let s = RedisTokens::open(&url).unwrap();
    let read = s.read("K1").unwrap().expect("64 KiB read back");
    assert_eq!((read.version, read.credentials), (1, c));
}

/// An entry lives `DEFAULT_ENTRY_TTL` (30 days) in Redis from its last write, or the time to
/// live the store is given.
#[test]
fn an_entry_lives_thirty_days_in_redis_unless_told_otherwise() {
    use mcp_sansio_redis::tokens::DEFAULT_ENTRY_TTL;
    assert_eq!(DEFAULT_ENTRY_TTL, Duration::from_secs(30 * 24 * 3600));
    let redis = RedisServer::start();
    let url = redis.url();
    let pttl = |key: &str| -> i64 { redis::cmd("PTTL").arg(key).query(&mut raw(&url)).unwrap() };
    let s = RedisTokens::open(&url).unwrap();
    let lease = s.lease("K1", TTL).unwrap().expect("free");
    s.write(&lease, 0, &creds("a1"), &[]).unwrap();
    let left = pttl("mcp-sansio:tokens:{K1}");
    assert!(
        left > 30 * 24 * 3600 * 1000 - 60_000 && left <= 30 * 24 * 3600 * 1000,
        "{left} ms"
    );
    let short = RedisTokens::open(&url)
        .unwrap()
        .entry_ttl(Duration::from_secs(90));
    let lease = short.lease("K2", TTL).unwrap().expect("free");
    short.write(&lease, 0, &creds("a2"), &[]).unwrap();
    let left = pttl("mcp-sansio:tokens:{K2}");
    assert!(left > 30_000 && left <= 90_000, "{left} ms");
}

/// A seal's `Debug` names it and hides its key.
#[test]
fn a_seals_debug_hides_its_key() {
    use mcp_sansio_redis::tokens::TokenSeal;
    let seal = TokenSeal::new(&[0xab; 32]).unwrap();
    let shown = format!("{seal:?}");
    assert_eq!(shown, "TokenSeal(<redacted>)");
}

/// A sealed payload shorter than its 12-byte nonce is refused as such (11 bytes); a nonce
/// alone (12 bytes) is read as a nonce and refused by the seal (no tag).
#[test]
fn a_sealed_payload_of_11_bytes_is_shorter_than_its_nonce_12_do_not_open() {
    use mcp_sansio_redis::tokens::{read_token_entry, EntryError, TokenSeal};
    let seal = TokenSeal::new(&[7; 32]).unwrap();
    let sealed = |len: usize| {
        let mut f = framed("K", 1, &vec![0u8; len]);
        f[5] = 1;
        f
    };
    assert_eq!(
        read_token_entry("K", &sealed(11), Some(&seal)),
        Err(EntryError::Seal("shorter than its nonce"))
    );
    assert_eq!(
        read_token_entry("K", &sealed(12), Some(&seal)),
        Err(EntryError::Seal("the seal does not open it"))
    );
}
