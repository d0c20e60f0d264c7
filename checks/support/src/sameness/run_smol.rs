//! The sameness table's acts through the smol adapter.

use std::sync::Arc;

use crate::sameness::{run_async, Memory, Runner, Scenario};

/// Runs scenarios through `mcp_sansio_smol_example`.
pub struct Smol;

impl Runner for Smol {
    fn name(&self) -> &'static str {
        "smol"
    }

    fn run(&self, s: &Scenario, url: &str, port: u16, sink: Arc<Memory>) -> Vec<String> {
        let acts = run_async::acts::<mcp_sansio_smol_example::SmolNet>(s, url, port, sink);
        mcp_sansio_net::runtime::smol::block_on(acts)
    }
}
