//! A dropped operation cancels its request on the tokio adapter: the tests are shared with the
//! smol example (`checks/support/src/adapter_tests/cancel.rs`); this file says only how tokio
//! drives them.

use mcp_sansio_test_support::cancel_tests;
use mcp_sansio_tokio::Client;

cancel_tests!(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async [.await]);
