//! A token entry's bytes in Redis: written by [`write_token_entry`], read back and checked again
//! by [`read_token_entry`], a pure function (any bytes in, an entry or a typed refusal out).
//!
//! ```text
//! magic "MSTK" | format 1 | sealed 0/1 | version u64 BE | SHA-256 of the token key (32)
//!   | payload length u32 BE | payload
//! ```
//!
//! The payload is JSON `{"c": ResourceCredentials, "s": [hex SHA-256 of spent refresh tokens]}`;
//! sealed, it is a 12-byte nonce and the AES-256-GCM ciphertext of that JSON with its tag, the
//! header (everything before the payload) as associated data. The key's digest binds the value
//! to its key: a value copied under another token key is refused.

use mcp_sansio::auth::ResourceCredentials;
use mcp_sansio_net::auth::tokens::{Spent, TokenEntry, MAX_LINEAGE};
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};

/// The most bytes an entry may have (both tokens at the core's longest, and room for the rest).
pub const MAX_ENTRY_BYTES: usize = 64 * 1024;

/// The longest access or refresh token an entry may hold (the core's limit).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

const MAGIC: &[u8; 4] = b"MSTK";
const FORMAT: u8 = 1;
const HEADER: usize = 4 + 1 + 1 + 8 + 32 + 4;
/// The longest issuer or resource an entry holds: an MCP server's URL may carry a long query
/// (an entry that cannot hold its resource would leave its grant without the fleet's single
/// flight).
pub const MAX_TEXT: usize = 8 * 1024;
const MAX_SCOPES: usize = 64;
const MAX_SCOPE: usize = 256;

/// An AES-256-GCM key the embedder supplies to seal token entries: Redis then sees neither the
/// tokens nor the issuer and resource they belong to. `Debug` hides it.
pub struct TokenSeal(LessSafeKey);

impl std::fmt::Debug for TokenSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenSeal(<redacted>)")
    }
}

impl TokenSeal {
    /// A seal with this 256-bit key (from the embedder's key management: the same key in every
    /// process of the fleet). `None` only if the cryptography library refuses the key, which it
    /// does not for 32 bytes.
    pub fn new(key: &[u8; 32]) -> Option<TokenSeal> {
        let key = UnboundKey::new(&AES_256_GCM, key).ok()?;
        Some(TokenSeal(LessSafeKey::new(key)))
    }
}

/// Why bytes read from Redis are not a token entry (the entry is then a miss, and removed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// Longer than [`MAX_ENTRY_BYTES`].
    #[error("the token entry has {len} bytes, more than the {limit} allowed")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Not this format (magic, format number, length, version 0).
    #[error("the token entry is not framed as written: {0}")]
    Frame(&'static str),
    /// Written under another token key.
    #[error("the token entry was written under another token key")]
    OtherKey,
    /// Sealed and this store has no seal, or the other way round, or the seal does not open it.
    #[error("the token entry does not open: {0}")]
    Seal(&'static str),
    /// The payload is not the credentials as written, or a value in it is out of bounds.
    #[error("the token entry's payload is refused: {0}")]
    Payload(&'static str),
}

fn key_digest(token_key: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token_key.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Spent> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in s.as_bytes().chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

/// The bytes of `entry` under `token_key`, sealed with `seal` when given. `None` when the
/// entry would not be read back ([`read_token_entry`]: too large, out-of-bounds values) or no
/// random nonce could be drawn.
pub fn write_token_entry(
    token_key: &str,
    entry: &TokenEntry,
    seal: Option<&TokenSeal>,
) -> Option<Vec<u8>> {
    let spent: Vec<String> = entry
        .spent
        .iter()
        .take(MAX_LINEAGE)
        .map(|s| hex(s))
        .collect();
    let json = serde_json::json!({ "c": entry.credentials, "s": spent });
    let mut payload = serde_json::to_vec(&json).ok()?;
    let mut out = Vec::with_capacity(HEADER + payload.len() + NONCE_LEN + 16);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.push(u8::from(seal.is_some()));
    out.extend_from_slice(&entry.version.to_be_bytes());
    out.extend_from_slice(&key_digest(token_key));
    let sealed_len = payload.len() + if seal.is_some() { NONCE_LEN + 16 } else { 0 };
    out.extend_from_slice(&u32::try_from(sealed_len).ok()?.to_be_bytes());
    if let Some(seal) = seal {
        use ring::rand::SecureRandom;
        let mut nonce = [0u8; NONCE_LEN];
        ring::rand::SystemRandom::new().fill(&mut nonce).ok()?;
        seal.0
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&out[..HEADER]),
                &mut payload,
            )
            .ok()?;
        out.extend_from_slice(&nonce);
    }
    out.extend_from_slice(&payload);
    // What is written is what would be read back.
    read_token_entry(token_key, &out, seal).ok()?;
    Some(out)
}

/// Reads the bytes of a token entry stored under `token_key` (opened with `seal` when the
/// store seals): the frame, the key it was written under, the seal, then every value again (the
/// tokens header-safe and at most [`MAX_TOKEN_BYTES`], the issuer and resource at most 2 KiB,
/// at most 64 scopes of 256 bytes, at most [`MAX_LINEAGE`] spent digests). Pure: any bytes
/// give an entry or an [`EntryError`], never a panic.
pub fn read_token_entry(
    token_key: &str,
    bytes: &[u8],
    seal: Option<&TokenSeal>,
) -> Result<TokenEntry, EntryError> {
    if bytes.len() > MAX_ENTRY_BYTES {
        return Err(EntryError::TooLarge {
            len: bytes.len(),
            limit: MAX_ENTRY_BYTES,
        });
    }
    if bytes.len() < HEADER {
        return Err(EntryError::Frame("shorter than its header"));
    }
    let (header, rest) = bytes.split_at(HEADER);
    if &header[..4] != MAGIC {
        return Err(EntryError::Frame("not its magic"));
    }
    if header[4] != FORMAT {
        return Err(EntryError::Frame("another format"));
    }
    let sealed = match header[5] {
        0 => false,
        1 => true,
        _ => return Err(EntryError::Frame("neither sealed nor plain")),
    };
    let mut version = [0u8; 8];
    version.copy_from_slice(&header[6..14]);
    let version = u64::from_be_bytes(version);
    if version == 0 {
        return Err(EntryError::Frame("version 0"));
    }
    if header[14..46] != key_digest(token_key) {
        return Err(EntryError::OtherKey);
    }
    let mut len = [0u8; 4];
    len.copy_from_slice(&header[46..50]);
    if usize::try_from(u32::from_be_bytes(len)).ok() != Some(rest.len()) {
        return Err(EntryError::Frame("its length is not the payload's"));
    }
    let plain = match (sealed, seal) {
        (false, None) => rest.to_vec(),
        (true, Some(seal)) => {
            if rest.len() < NONCE_LEN {
                return Err(EntryError::Seal("shorter than its nonce"));
            }
            let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
            let nonce = Nonce::try_assume_unique_for_key(nonce)
                .map_err(|_| EntryError::Seal("its nonce"))?;
            let mut buf = ciphertext.to_vec();
            let opened = seal
                .0
                .open_in_place(nonce, Aad::from(header), &mut buf)
                .map_err(|_| EntryError::Seal("the seal does not open it"))?;
            opened.to_vec()
        }
        (true, None) => return Err(EntryError::Seal("sealed, and this store has no seal")),
        (false, Some(_)) => return Err(EntryError::Seal("plain, and this store seals")),
    };
    let mut json: serde_json::Value =
        serde_json::from_slice(&plain).map_err(|_| EntryError::Payload("not JSON"))?;
    let credentials: ResourceCredentials = serde_json::from_value(json["c"].take())
        .map_err(|_| EntryError::Payload("not the credentials"))?;
    check_credentials(&credentials)?;
    let spent = match &json["s"] {
        serde_json::Value::Array(items) if items.len() <= MAX_LINEAGE => items
            .iter()
            .map(|v| v.as_str().and_then(unhex))
            .collect::<Option<Vec<Spent>>>()
            .ok_or(EntryError::Payload("a spent digest"))?,
        _ => return Err(EntryError::Payload("the spent digests")),
    };
    Ok(TokenEntry {
        version,
        credentials,
        spent,
    })
}

fn header_safe(t: &str) -> bool {
    !t.is_empty() && t.len() <= MAX_TOKEN_BYTES && t.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

fn check_credentials(c: &ResourceCredentials) -> Result<(), EntryError> {
    if c.issuer.is_empty() || c.issuer.len() > MAX_TEXT {
        return Err(EntryError::Payload("the issuer"));
    }
    if c.resource.is_empty() || c.resource.len() > MAX_TEXT {
        return Err(EntryError::Payload("the resource"));
    }
    if !header_safe(&c.tokens.access_token) {
        return Err(EntryError::Payload("the access token"));
    }
    if c.tokens
        .refresh_token
        .as_deref()
        .is_some_and(|r| !header_safe(r))
    {
        return Err(EntryError::Payload("the refresh token"));
    }
    if c.tokens.scopes.len() > MAX_SCOPES
        || c.tokens
            .scopes
            .iter()
            .any(|s| s.is_empty() || s.len() > MAX_SCOPE)
    {
        return Err(EntryError::Payload("the scopes"));
    }
    Ok(())
}
