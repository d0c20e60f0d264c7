//! One credential store, two servers, on the smol example: a token is never sent to a server it
//! was not issued for, nor refreshed for one. The tests are shared with the other adapters
//! (`checks/support/src/adapter_tests/auth_binding.rs`); each operation is run to its end on the
//! test's thread.

mod on_thread;

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::auth_binding_tests;
use mcp_sansio_test_support::auth_server;

use auth::{authorization, browser, policy};
use auth_server::{AuthServer, Mode};
use mcp_sansio::auth::CredentialStore;
use mcp_sansio::Config;
use mcp_sansio_net::auth::{AuthSessionError, AuthorizeError};
use mcp_sansio_smol_example::{AuthSession, Client};
use on_thread::Block as _;

auth_binding_tests!(#[test] [.block()] []);
