//! The catalog cache shared by work items (2026-07-28, SEP-2549) on the smol example. The tests
//! are shared with the other adapters (`checks/support/src/adapter_tests/cache.rs`); this file
//! says only how smol drives them.

mod block;

use block::Block as _;
use mcp_sansio_smol_example::Client;
use mcp_sansio_test_support::cache_tests;

cache_tests!(#[test] [.block()]);
