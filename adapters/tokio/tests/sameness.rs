//! The sameness table (`checks/support/src/sameness/`) through every adapter: each run is checked
//! against the table (outcome, requests on the wire, transcripts that replay), then the runs of
//! the blocking and the smol adapters against the tokio one (the same outcome, the same requests
//! on the same connections, the same transcripts, timing aside).

use mcp_sansio_test_support::sameness;
use mcp_sansio_test_support::sameness::{run_blocking, run_smol, run_tokio};

#[test]
fn every_adapter_behaves_the_same() {
    for s in sameness::table() {
        let t = sameness::run_checked(&run_tokio::Tokio, &s);
        let b = sameness::run_checked(&run_blocking::Blocking, &s);
        let m = sameness::run_checked(&run_smol::Smol, &s);
        sameness::assert_same(&s, &t, &b);
        sameness::assert_same(&s, &t, &m);
    }
}
