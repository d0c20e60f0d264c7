//! Arbitrary bytes through the fleet's token entry reader (`mcp-sansio-redis`'s
//! `read_token_entry`), plain and sealed, and entries written by `write_token_entry` then changed
//! in one byte. The first byte picks the mode:
//!
//! - `0 mod 3`: the rest is a plain entry's bytes, read without a seal;
//! - `1 mod 3`: the rest is a sealed entry's bytes, read with the seal;
//! - `2 mod 3`: the rest is `flags, at (2 bytes), xor, token…`: an entry holding `token` as its
//!   tokens is written (sealed when `flags & 1`), read back, then changed at `at` by `xor`.
//!
//! None panics; an entry read back is within every bound (at most `MAX_ENTRY_BYTES` read, tokens
//! header-safe and at most `MAX_TOKEN_BYTES`, at most `MAX_LINEAGE` spent digests), is refused
//! under another key and across the seal (plain with a seal, sealed without one or with another
//! key), and writes bytes that read back as the same entry; a written entry reads back as itself;
//! a sealed entry changed in any byte is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::auth::{ResourceCredentials, TokenSet};
use mcp_sansio_net::auth::tokens::{spent_digest, TokenEntry, MAX_LINEAGE};
use mcp_sansio_redis::tokens::{
    read_token_entry, write_token_entry, TokenSeal, MAX_ENTRY_BYTES, MAX_TOKEN_BYTES,
};

const KEY: &str = "tokens:0123";
const OTHER_KEY: &str = "tokens:4567";

fn header_safe(t: &str) -> bool {
    !t.is_empty() && t.len() <= MAX_TOKEN_BYTES && t.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// The bounds every entry read back keeps, and its refusals elsewhere.
fn check(entry: &TokenEntry, bytes: &[u8], seal: Option<&TokenSeal>, other: &TokenSeal) {
    assert!(bytes.len() <= MAX_ENTRY_BYTES);
    assert!(entry.version > 0);
    assert!(entry.spent.len() <= MAX_LINEAGE);
    let tokens = &entry.credentials.tokens;
    assert!(header_safe(&tokens.access_token));
    assert!(tokens.refresh_token.as_deref().is_none_or(header_safe));
    assert!(
        read_token_entry(OTHER_KEY, bytes, seal).is_err(),
        "another key"
    );
    match seal {
        Some(_) => {
            assert!(
                read_token_entry(KEY, bytes, None).is_err(),
                "sealed, read plain"
            );
            assert!(
                read_token_entry(KEY, bytes, Some(other)).is_err(),
                "another seal"
            );
        }
        None => assert!(
            read_token_entry(KEY, bytes, Some(other)).is_err(),
            "plain, read sealed"
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let seal = TokenSeal::new(&[7; 32]).unwrap();
    let other = TokenSeal::new(&[8; 32]).unwrap();
    match mode % 3 {
        m @ (0 | 1) => {
            let seal = (m == 1).then_some(&seal);
            if let Ok(entry) = read_token_entry(KEY, rest, seal) {
                check(&entry, rest, seal, &other);
                let bytes = write_token_entry(KEY, &entry, seal).expect("an entry read is written");
                assert_eq!(read_token_entry(KEY, &bytes, seal).as_ref(), Ok(&entry));
            }
        }
        _ => {
            let [flags, hi, lo, xor, token @ ..] = rest else {
                return;
            };
            let token = String::from_utf8_lossy(token).into_owned();
            let entry = TokenEntry {
                version: u64::from(*flags >> 1) + 1,
                credentials: ResourceCredentials {
                    issuer: "https://as.example".into(),
                    resource: "https://mcp.example/mcp".into(),
                    tokens: TokenSet {
                        access_token: token.clone(),
                        refresh_token: (flags & 2 != 0).then(|| token.clone()),
                        expires_at_ms: Some(1_800_000_000_000),
                        scopes: vec![token.clone()],
                        dpop: flags & 4 != 0,
                    },
                },
                spent: (0..usize::from(*flags >> 3))
                    .map(|i| spent_digest(&format!("{token}{i}")))
                    .collect(),
            };
            let seal = (flags & 1 != 0).then_some(&seal);
            let Some(mut bytes) = write_token_entry(KEY, &entry, seal) else {
                // Refused only for a value the reader would refuse.
                assert!(!header_safe(&token) || token.len() > 256);
                return;
            };
            let mut expected = entry.clone();
            expected.spent.truncate(MAX_LINEAGE);
            assert_eq!(read_token_entry(KEY, &bytes, seal), Ok(expected));
            check(
                &read_token_entry(KEY, &bytes, seal).unwrap(),
                &bytes,
                seal,
                &other,
            );
            let at = usize::from(u16::from_be_bytes([*hi, *lo])) % bytes.len();
            if *xor == 0 {
                return;
            }
            bytes[at] ^= xor;
            match read_token_entry(KEY, &bytes, seal) {
                Ok(changed) => {
                    assert!(seal.is_none(), "a sealed entry changed at {at} was read");
                    check(&changed, &bytes, seal, &other);
                }
                Err(_) => {}
            }
        }
    }
});
