//! Deadlines the blocking adapter keeps whatever the server does with its bytes: `AuthSession`
//! ends within the authorization exchange deadline when the metadata URL a 401 names trickles
//! its TLS handshake or a TLS record of its body, and the MCP dial ends within the dial timeout
//! when the server trickles its TLS handshake (the authorization's requests take the MCP
//! traffic's path: the async exchange on smol, under one deadline). The tests are shared with
//! the smol example (`checks/support/src/adapter_tests/auth_deadline.rs`).

use mcp_sansio_blocking::{AuthSession, Client};
use mcp_sansio_test_support::auth_deadline_tests;

auth_deadline_tests!([]);
