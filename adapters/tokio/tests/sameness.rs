//! The sameness table (`checks/support/src/sameness/`) through both adapters: each run is checked
//! against the table (outcome, requests on the wire, transcripts that replay), then the two runs
//! against each other (the same outcome, the same requests on the same connections, the same
//! transcripts, timing aside).

use mcp_sansio_test_support::sameness;
use mcp_sansio_test_support::sameness::run_blocking;
use mcp_sansio_test_support::sameness::run_tokio;

#[test]
fn both_adapters_behave_the_same() {
    for s in sameness::table() {
        let t = sameness::run_checked(&run_tokio::Tokio, &s);
        let b = sameness::run_checked(&run_blocking::Blocking, &s);
        sameness::assert_same(&s, &t, &b);
    }
}
