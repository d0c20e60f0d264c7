//! `AuthSession` on tokio: a 401 authorizes once and the operation is retried; a 403
//! `insufficient_scope` steps up; a plain 403 never authorizes. The tests are shared with the other
//! adapter (`checks/support/src/adapter_tests/auth.rs`); this file says only how tokio drives them.

use mcp_sansio_test_support::adapter_tests::auth;
use mcp_sansio_test_support::auth_server;
use mcp_sansio_test_support::auth_tests;

use std::sync::atomic::Ordering;

use auth::{authorization, browser, policy, Bearer};
use auth_server::{AuthServer, Mode};
use mcp_sansio::{Config, Error, ErrorKind};
use mcp_sansio_tokio::auth::{AuthSessionError, AuthorizeError};
use mcp_sansio_tokio::{AuthSession, Client};

auth_tests!(#[tokio::test] async [.await]);
