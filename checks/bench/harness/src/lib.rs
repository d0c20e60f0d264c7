//! Shared pieces of the benchmark harness: the synthetic catalog and tool results that the local
//! server serves and that the core-only measurements parse.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod catalog;
pub mod fixture;
