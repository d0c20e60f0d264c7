//! Arbitrary bytes through every reader of what the fleet's store (`mcp-sansio-redis`) holds:
//! the store's reply reader (two replies, within a byte bound), the frame reader (under a key,
//! at a time), and the readers of the payloads behind it: the catalog cache's entry
//! (`Catalog::from_pages` with the session's budgets) and the task handle (`from_bytes`, then
//! `check` against a configuration). None panics; the reply reader never reads past its bound;
//! a frame that reads back writes the very same bytes; a catalog entry that does not read back
//! is removed.
#![no_main]

use std::sync::Arc;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_sansio::task::TaskHandle;
use mcp_sansio::Config;
use mcp_sansio_net::cache::{CatalogCache, MemoryStore, Store};
use mcp_sansio_redis::{conn, frame};

const KEY: &[u8] = b"catalog:0123";
const MAX: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    // The reply reader: what it reads lies within the bound.
    match conn::parse_replies(data, 2, 512) {
        Ok(replies) => assert_eq!(replies.len(), 2),
        Err(_) => {}
    }

    // The frame reader; a frame that reads back is the frame its payload writes.
    if let Ok(payload) = frame::decode(KEY, data, 0, MAX) {
        let expires = u64::from_be_bytes(data[7..15].try_into().unwrap());
        assert_eq!(
            frame::encode(KEY, payload, expires, MAX).as_deref(),
            Some(data)
        );
    }

    // The payload readers, on the raw bytes and on the bytes framed.
    let config = Config::new("https://mcp.example.com/mcp").unwrap();
    let store = Arc::new(MemoryStore::new(1 << 20));
    let cache = CatalogCache::new(store.clone(), Duration::from_secs(300));
    store.put(KEY, data.to_vec());
    if cache.get(KEY, &config).is_none() {
        assert!(store.get(KEY).is_none(), "a bad entry is removed");
    }
    if let Ok(handle) = TaskHandle::from_bytes(data) {
        let _ = handle.check(&config);
    }
});
