//! `AuthSession` on the smol example with the grants without a user agent (client credentials,
//! JWT bearer, enterprise-managed): `checks/support/src/adapter_tests/m2m.rs`.

mod on_thread;

use mcp_sansio_net::auth::AuthSessionError;
use mcp_sansio_smol_example::{AuthSession, Client};
use mcp_sansio_test_support::m2m_auth_tests;
use on_thread::Block as _;

m2m_auth_tests!(#[test] [.block()]);
