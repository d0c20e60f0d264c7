//! Deadlines of the smol example whatever the server does with its bytes: `AuthSession` ends
//! within the authorization exchange deadline when the metadata URL a 401 names trickles its TLS
//! handshake or a TLS record of its body, and the MCP dial ends within the dial timeout when the
//! server trickles its TLS handshake: `checks/support/src/adapter_tests/auth_deadline.rs`, each
//! operation run to its end on a thread of its own.

mod on_thread;

use mcp_sansio_smol_example::{AuthSession, Client};
use mcp_sansio_test_support::auth_deadline_tests;
use on_thread::Block as _;

auth_deadline_tests!([.block()]);
