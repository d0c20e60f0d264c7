//! The `tracing` spans of HTTP/2 sessions through the smol example (the shared test:
//! `checks/support/src/adapter_tests/tracing.rs`), each operation run to its end on the test's
//! thread.

mod block;

use mcp_sansio_test_support::adapter_tests::tracing as tracing_check;
use mcp_sansio_test_support::h2_server;
use mcp_sansio_test_support::tracing_h2_tests;

use block::Block as _;
use mcp_sansio_smol_example::Client;

tracing_h2_tests!(
    #[test]
    [.block()]
);
