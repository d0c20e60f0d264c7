//! One credential store, two servers, on the tokio adapter: a token is never sent to a server it
//! was not issued for, nor refreshed for one. The tests are shared with the other adapter
//! (`checks/support/src/adapter_tests/auth_binding.rs`); this file says only how tokio drives them.

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::auth_binding_tests;
use mcp_sansio_test_support::auth_server;

use auth::{authorization, browser, policy};
use auth_server::{AuthServer, Mode};
use mcp_sansio::auth::CredentialStore;
use mcp_sansio::Config;
use mcp_sansio_tokio::auth::{AuthSessionError, AuthorizeError};
use mcp_sansio_tokio::{AuthSession, Client};

auth_binding_tests!(#[tokio::test] async [.await]);
