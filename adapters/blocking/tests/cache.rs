//! The catalog cache shared by work items (2026-07-28, SEP-2549) on the blocking adapter. The
//! tests are shared with the other adapter (`checks/support/src/adapter_tests/cache.rs`); this
//! file says only how blocking drives them.

use mcp_sansio_blocking::Client;
use mcp_sansio_test_support::cache_tests;

cache_tests!(
    #[test]
    []
);
