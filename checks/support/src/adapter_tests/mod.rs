//! The tests both adapters declare, each as a macro an adapter's test file invokes, and the
//! canned answers of the adapters' in-test servers.

#[cfg(feature = "net")]
pub mod auth;
#[cfg(feature = "net")]
pub mod auth_binding;
#[cfg(feature = "net")]
pub mod auth_deadline;
#[cfg(feature = "net")]
pub mod cache;
#[cfg(feature = "net")]
pub mod cancel;
pub mod canned;
#[cfg(feature = "net")]
pub mod elicitation;
#[cfg(feature = "net")]
pub mod h2;
#[cfg(feature = "net")]
pub mod m2m;
#[cfg(feature = "net")]
pub mod recording;
#[cfg(feature = "net")]
pub mod resume;
#[cfg(feature = "net")]
pub mod tasks;
#[cfg(feature = "tracing")]
pub mod tracing;
