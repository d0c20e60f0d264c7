//! Step-up authorizations are bounded per session on the smol example's `AuthSession`: a server that
//! refuses every call once with 403 `insufficient_scope` (a new scope each time) and accepts it
//! after the step-up sends the user to the browser at most `MAX_STEP_UPS` times after the session
//! connected; the next step-up fails with `AuthorizeError::UserAgentLimit` before the user agent
//! opens, for the rest of the session. The test is shared
//! (`checks/support/src/adapter_tests/auth.rs`, `step_up_tests!`).

mod on_thread;

use mcp_sansio_smol_example::{AuthSession, Client};
use mcp_sansio_test_support::step_up_tests;
use on_thread::Block as _;

step_up_tests!(#[test] [.block()]);
