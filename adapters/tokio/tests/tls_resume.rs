//! TLS session resumption through the tokio adapter: cold work items to an origin resume the
//! session of the first, per origin and per client, and the HTTP/2 redial after GOAWAY resumes.
//! The tests are shared with the blocking adapter (`checks/support/src/adapter_tests/resume.rs`).

use mcp_sansio_test_support::adapter_tests::resume;
use mcp_sansio_test_support::resume_tests;

use mcp_sansio_tokio::Client;

resume_tests!(#[tokio::test] async [.await]);
