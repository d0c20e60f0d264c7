//! Step-up authorizations are bounded per session on the blocking adapter's `AuthSession`: a server that
//! refuses every call once with 403 `insufficient_scope` (a new scope each time) and accepts it
//! after the step-up sends the user to the browser at most `MAX_STEP_UPS` times after the session
//! connected; the next step-up fails with `AuthorizeError::UserAgentLimit` before the user agent
//! opens, for the rest of the session. The test is shared
//! (`checks/support/src/adapter_tests/auth.rs`, `step_up_tests!`).

use mcp_sansio_blocking::{AuthSession, Client};
use mcp_sansio_test_support::step_up_tests;

step_up_tests!(
    #[test]
    []
);
