//! The token entry's reader (`read_token_entry`), a pure function: what is written reads back;
//! every prefix, any garbage and a value of another key are refused, never a panic; sealed, any
//! one-byte change is refused (AES-GCM's tag); the bounds hold.

use mcp_sansio::auth::{ResourceCredentials, TokenSet};
use mcp_sansio_net::auth::tokens::{spent_digest, TokenEntry};
use mcp_sansio_redis::tokens::{
    read_token_entry, write_token_entry, EntryError, TokenSeal, MAX_ENTRY_BYTES,
};
use proptest::prelude::*;

const KEY: &str = "tokens:abc";

fn entry(access: &str, refresh: Option<&str>, version: u64, spent: usize) -> TokenEntry {
    TokenEntry {
        version,
        credentials: ResourceCredentials {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
            tokens: TokenSet {
                access_token: access.into(),
                refresh_token: refresh.map(str::to_owned),
                expires_at_ms: Some(1_800_000_000_000),
                scopes: vec!["read".into()],
                dpop: false,
            },
        },
        spent: (0..spent)
            .map(|i| spent_digest(&format!("rt-{i}")))
            .collect(),
    }
}

fn seal() -> TokenSeal {
    TokenSeal::new(&[7u8; 32]).unwrap()
}

fn token() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[!-~]{1,64}").unwrap()
}

proptest! {
    /// Written, then read back as it was, sealed or not.
    #[test]
    fn an_entry_reads_back(access in token(), refresh in proptest::option::of(token()),
                           version in 1u64.., spent in 0usize..=16, sealed: bool) {
        let e = entry(&access, refresh.as_deref(), version, spent);
        let s = seal();
        let seal = sealed.then_some(&s);
        let bytes = write_token_entry(KEY, &e, seal).unwrap();
        prop_assert_eq!(read_token_entry(KEY, &bytes, seal), Ok(e));
    }

    /// Every strict prefix of an entry (a value cut anywhere) is refused.
    #[test]
    fn every_prefix_is_refused(access in token(), sealed: bool) {
        let s = seal();
        let seal = sealed.then_some(&s);
        let bytes = write_token_entry(KEY, &entry(&access, Some("r"), 3, 2), seal).unwrap();
        for cut in 0..bytes.len() {
            prop_assert!(read_token_entry(KEY, &bytes[..cut], seal).is_err(), "cut at {}", cut);
        }
    }

    /// A sealed entry with any one byte changed is refused: the tag covers the header and the
    /// payload (NIST SP 800-38D: GCM's authentication of the ciphertext and the additional data).
    #[test]
    fn a_sealed_entry_changed_in_one_byte_is_refused(access in token(), at in any::<prop::sample::Index>(), xor in 1u8..) {
        let s = seal();
        let mut bytes = write_token_entry(KEY, &entry(&access, Some("r"), 3, 2), Some(&s)).unwrap();
        let i = at.index(bytes.len());
        bytes[i] ^= xor;
        prop_assert!(read_token_entry(KEY, &bytes, Some(&s)).is_err());
    }

    /// Any bytes: an entry within the bounds, or a refusal; never a panic.
    #[test]
    fn garbage_is_refused_or_within_bounds(bytes in proptest::collection::vec(any::<u8>(), 0..512), sealed: bool) {
        let s = seal();
        let seal = sealed.then_some(&s);
        if let Ok(e) = read_token_entry(KEY, &bytes, seal) {
            prop_assert!(e.version >= 1 && e.spent.len() <= 16);
        }
    }

    /// An unsealed entry with one byte changed: refused, or an entry within the bounds.
    #[test]
    fn a_plain_entry_changed_in_one_byte_stays_within_bounds(at in any::<prop::sample::Index>(), byte: u8) {
        let mut bytes = write_token_entry(KEY, &entry("at-1", Some("rt-1"), 3, 2), None).unwrap();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        if let Ok(e) = read_token_entry(KEY, &bytes, None) {
            let t = &e.credentials.tokens;
            prop_assert!(t.access_token.bytes().all(|b| (0x21..=0x7e).contains(&b)));
            prop_assert!(e.version >= 1);
        }
    }
}

/// A value written under one token key is not read under another: "nothing of one context
/// readable under another's".
#[test]
fn an_entry_of_another_key_is_refused() {
    let bytes = write_token_entry(KEY, &entry("a", Some("r"), 1, 0), None).unwrap();
    assert_eq!(
        read_token_entry("tokens:other", &bytes, None),
        Err(EntryError::OtherKey)
    );
}

/// A sealed entry needs the seal, and the right one; a plain entry is refused by a store that
/// seals (so a value planted in clear by whoever writes to Redis is not taken).
#[test]
fn seals_must_match() {
    let s = seal();
    let sealed = write_token_entry(KEY, &entry("a", Some("r"), 1, 0), Some(&s)).unwrap();
    let plain = write_token_entry(KEY, &entry("a", Some("r"), 1, 0), None).unwrap();
    assert!(matches!(
        read_token_entry(KEY, &sealed, None),
        Err(EntryError::Seal(_))
    ));
    let other = TokenSeal::new(&[8u8; 32]).unwrap();
    assert!(matches!(
        read_token_entry(KEY, &sealed, Some(&other)),
        Err(EntryError::Seal(_))
    ));
    assert!(matches!(
        read_token_entry(KEY, &plain, Some(&s)),
        Err(EntryError::Seal(_))
    ));
    // Sealed, the token is nowhere in the bytes.
    assert!(!sealed.windows(3).any(|w| w == b"\"a\""));
}

/// Over the byte bound: refused before anything is parsed; a token that breaks a header (a
/// space) or is longer than the core accepts is refused.
#[test]
fn bounds_are_checked_again() {
    let big = vec![b'M'; MAX_ENTRY_BYTES + 1];
    assert!(matches!(
        read_token_entry(KEY, &big, None),
        Err(EntryError::TooLarge { .. })
    ));
    assert_eq!(
        write_token_entry(KEY, &entry("has space", Some("r"), 1, 0), None),
        None
    );
    let long = "x".repeat(16 * 1024 + 1);
    assert_eq!(
        write_token_entry(KEY, &entry(&long, Some("r"), 1, 0), None),
        None
    );
    assert_eq!(
        write_token_entry(KEY, &entry("a", Some("r"), 0, 0), None),
        None
    );
}

/// An MCP server's URL with a long query (beyond 2 KiB) is a resource an entry holds, up to
/// `MAX_TEXT` (8 KiB); one byte more is refused, never written.
#[test]
fn a_resource_with_a_long_query_fits_up_to_its_bound() {
    for sealed in [false, true] {
        let s = seal();
        let seal = sealed.then_some(&s);
        let mut e = entry("at", Some("rt"), 2, 1);
        let base = "https://mcp.example/mcp?q=";
        e.credentials.resource = format!("{base}{}", "a".repeat(8 * 1024 - base.len()));
        let bytes = write_token_entry(KEY, &e, seal).expect("a resource of 8 KiB");
        assert_eq!(read_token_entry(KEY, &bytes, seal), Ok(e.clone()));
        e.credentials.resource.push('a');
        assert!(write_token_entry(KEY, &e, seal).is_none());
    }
}
