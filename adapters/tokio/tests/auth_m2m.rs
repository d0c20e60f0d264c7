//! `AuthSession` on tokio with the grants without a user agent (client credentials, JWT bearer,
//! enterprise-managed). The tests are shared with the other adapter
//! (`checks/support/src/adapter_tests/m2m.rs`); this file says only how tokio drives them.

use mcp_sansio_test_support::m2m_auth_tests;
use mcp_sansio_tokio::auth::AuthSessionError;
use mcp_sansio_tokio::{AuthSession, Client};

m2m_auth_tests!(#[tokio::test] async [.await]);
