//! The catalog cache shared by work items (2026-07-28, SEP-2549) on the tokio adapter. The tests
//! are shared with the other adapter (`checks/support/src/adapter_tests/cache.rs`); this file
//! says only how tokio drives them.

use mcp_sansio_test_support::cache_tests;
use mcp_sansio_tokio::Client;

cache_tests!(#[tokio::test] async [.await]);
