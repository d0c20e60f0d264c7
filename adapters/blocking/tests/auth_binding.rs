//! One credential store, two servers, on the blocking adapter: a token is never sent to a server it
//! was not issued for, nor refreshed for one. The tests are shared with the other adapter
//! (`checks/adapter_tests/auth_binding.rs`); this file says only how blocking drives them.

#[path = "../../net/tests/auth_server/mod.rs"]
mod auth_server;

#[macro_use]
#[path = "../../../checks/adapter_tests/auth.rs"]
#[allow(unused_macros)]
mod auth;

#[macro_use]
#[path = "../../../checks/adapter_tests/auth_binding.rs"]
mod auth_binding;

use auth::{authorization, browser, policy};
use auth_server::{AuthServer, Mode};
use mcp_sansio::auth::CredentialStore;
use mcp_sansio::Config;
use mcp_sansio_blocking::auth::{AuthSessionError, AuthorizeError};
use mcp_sansio_blocking::{AuthSession, Client};

auth_binding_tests!(
    #[test]
    []
);
