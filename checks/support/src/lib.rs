//! Code the workspace's tests share, as one crate (a dev-dependency only, never published).
//!
//! - Always (the core alone, so that the core's and the transcript crate's runs without `std`
//!   keep it): [`hostile`], the hostile-server catalogue and the pieces of its runners;
//!   [`h2server`], the scripted HTTP/2 peer of the core's tests; [`adapter_tests::canned`], the
//!   bytes a well-behaved server sends; [`json_tree`], the plain JSON reader of the core's
//!   reference readings.
//! - Feature `net`: the in-test servers (`auth_server`, `h2_server`, `tls`, `trickle`), the tests
//!   both adapters declare (`adapter_tests`, `hostile::operate`) and the sameness table
//!   (`sameness`); features `blocking` and `tokio`: the sameness table's runners; feature
//!   `tracing`: the tracing test both adapters declare (`adapter_tests::tracing`).
//!
//! The tests both adapters declare are macros (`auth_tests!`, `auth_binding_tests!`, `h2_tests!`,
//! `recording_tests!`, `hostile_socket_test!`, `tracing_tests!`, `task_resume_tests!`, and
//! `cancel_tests!` for the async runtimes): each adapter's test file brings the adapter's
//! `Client` and the modules named in the macro's documentation into scope and invokes it, giving
//! only how its runtime drives a session.

pub mod adapter_tests;
#[cfg(feature = "net")]
pub mod auth_server;
#[cfg(feature = "net")]
pub mod h2_server;
pub mod h2server;
pub mod hostile;
pub mod json_tree;
#[cfg(feature = "net")]
pub mod sameness;
#[cfg(feature = "net")]
pub mod tls;
#[cfg(feature = "net")]
pub mod trickle;
