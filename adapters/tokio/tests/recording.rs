//! Sessions recorded to a transcript sink, then replayed against the core. The tests and their
//! checks are shared with the blocking adapter (`checks/support/src/adapter_tests/recording.rs`);
//! this file says only how tokio drives a session.

mod support;

use mcp_sansio_test_support::adapter_tests::recording;
use mcp_sansio_test_support::recording_tests;

use std::sync::Arc;

use mcp_sansio::Config;
use mcp_sansio_tokio::Client;
use recording::{
    check_dropped, check_legacy, check_modern, recording_client, recording_http1_client, Memory,
};
use support::{legacy, mcp, Server};

recording_tests!(
    #[tokio::test] async [.await]
    modern: Server::start(mcp).await,
    legacy: Server::start(legacy).await
);
