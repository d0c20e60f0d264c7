//! A dropped operation cancels its request on the smol example: the tests are shared with the
//! tokio adapter (`checks/support/src/adapter_tests/cancel.rs`); this file says only how smol
//! drives them.

mod block;

use block::Block as _;
use mcp_sansio_smol_example::Client;
use mcp_sansio_test_support::cancel_tests;

cancel_tests!(#[test] [.block()]);
