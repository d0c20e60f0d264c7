//! The `tracing` spans of a scripted session on the smol example (feature `tracing` of
//! mcp-sansio-net): the test the other adapters declare
//! (`checks/support/src/adapter_tests/tracing.rs`), each operation run to its end on the test's
//! thread.

mod on_thread;

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::adapter_tests::tracing as tracing_check;
use mcp_sansio_test_support::auth_server;
use mcp_sansio_test_support::tracing_tests;

use mcp_sansio_smol_example::{AuthSession, Client};
use on_thread::Block as _;

tracing_tests!(#[test] [.block()]);
