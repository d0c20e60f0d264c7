//! The sameness table (`checks/support/src/sameness/`) through the smol adapter: the outcome,
//! the requests on the wire and transcripts that replay. The tokio adapter's `tests/sameness.rs`
//! runs the table through every adapter and compares them.

use mcp_sansio_test_support::sameness;
use mcp_sansio_test_support::sameness::run_smol;

#[test]
fn the_smol_adapter_follows_the_table() {
    for s in sameness::table() {
        sameness::run_checked(&run_smol::Smol, &s);
    }
}
