//! TLS session resumption through the blocking adapter: cold work items to an origin resume the
//! session of the first, per origin and per client, and the HTTP/2 redial after GOAWAY resumes.
//! The tests are shared with the tokio adapter (`checks/support/src/adapter_tests/resume.rs`).

use mcp_sansio_test_support::adapter_tests::resume;
use mcp_sansio_test_support::resume_tests;

use mcp_sansio_blocking::Client;

resume_tests!(
    #[test]
    []
);
