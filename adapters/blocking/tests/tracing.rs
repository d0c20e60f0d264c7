//! The `tracing` spans of a scripted session on the blocking adapter (feature `tracing` of
//! mcp-sansio-net): an authorized legacy session is connected, listed, called and closed, and a
//! connect ended by a budget; the span tree, its fields and the absence of every secret are
//! checked. The test is shared with the other adapter
//! (`checks/support/src/adapter_tests/tracing.rs`); this file says only how this adapter drives
//! it.

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::adapter_tests::tracing as tracing_check;
use mcp_sansio_test_support::auth_server;
use mcp_sansio_test_support::tracing_tests;

use mcp_sansio_blocking::{AuthSession, Client};

tracing_tests!(
    #[test]
    []
);
