//! `AuthSession` on the blocking adapter with the grants without a user agent (client
//! credentials, JWT bearer, enterprise-managed). The tests are shared with the other adapter
//! (`checks/support/src/adapter_tests/m2m.rs`); this file says only how the blocking adapter
//! drives them.

use mcp_sansio_blocking::auth::AuthSessionError;
use mcp_sansio_blocking::{AuthSession, Client};
use mcp_sansio_test_support::m2m_auth_tests;

m2m_auth_tests!(
    #[test]
    []
);
