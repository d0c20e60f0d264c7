//! Sessions that authorize on the smol example: the tests the other adapters declare
//! (`checks/support/src/adapter_tests/auth.rs`), each operation run to its end on the test's
//! thread.

mod on_thread;

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::auth_server;
use mcp_sansio_test_support::auth_tests;

use std::sync::atomic::Ordering;

use auth::{authorization, browser, policy, Bearer};
use auth_server::{AuthServer, Mode};
use mcp_sansio::{Config, Error, ErrorKind};
use mcp_sansio_net::auth::{AuthSessionError, AuthorizeError};
use mcp_sansio_smol_example::{AuthSession, Client};
use on_thread::Block as _;

auth_tests!(#[test] [.block()]);
