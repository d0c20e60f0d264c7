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
