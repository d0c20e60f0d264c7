//! The sameness table's acts through the tokio adapter, on a current-thread runtime.

use std::sync::Arc;

use crate::sameness::{run_async, Memory, Runner, Scenario};

/// Runs scenarios through `mcp_sansio_tokio`.
pub struct Tokio;

impl Runner for Tokio {
    fn name(&self) -> &'static str {
        "tokio"
    }

    fn run(&self, s: &Scenario, url: &str, port: u16, sink: Arc<Memory>) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(run_async::acts::<mcp_sansio_tokio::Tokio>(
            s, url, port, sink,
        ))
    }
}
