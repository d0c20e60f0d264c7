//! Sessions recorded to a transcript sink, then replayed against the core. The tests and their
//! checks are shared with the other adapters (`checks/support/src/adapter_tests/recording.rs`);
//! this file says only how smol drives a session, against the blocking adapter's in-test server.

mod block;
#[path = "../../blocking/tests/support/mod.rs"]
mod support;

use mcp_sansio_test_support::adapter_tests::recording;
use mcp_sansio_test_support::recording_tests;

use std::sync::Arc;

use block::Block as _;
use mcp_sansio::Config;
use mcp_sansio_smol_example::Client;
use recording::{
    check_dropped, check_legacy, check_modern, recording_client, recording_http1_client, Memory,
};
use support::{legacy, modern, Server};

recording_tests!(
    #[test] [.block()]
    modern: Server::start(modern),
    legacy: Server::start(legacy)
);
