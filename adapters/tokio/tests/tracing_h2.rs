//! The `tracing` exchange spans of a session over HTTP/2 (h2c) on the tokio adapter (feature
//! `tracing` of mcp-sansio-net): a listing and a call, each with the span of its stream, and no
//! argument or query in what was captured. The test is shared with the other adapter
//! (`checks/support/src/adapter_tests/tracing.rs`); this file says only how this adapter drives
//! it.

use mcp_sansio_test_support::adapter_tests::tracing as tracing_check;
use mcp_sansio_test_support::h2_server;
use mcp_sansio_test_support::tracing_h2_tests;

use mcp_sansio_tokio::Client;

tracing_h2_tests!(
    #[tokio::test(flavor = "current_thread")] async
    [.await]
);
