//! HTTP/2 through the blocking adapter, against the in-test HTTP/2 server on 127.0.0.1 (the core's
//! own frame codec and HPACK). The tests are shared with the tokio adapter
//! (`checks/support/src/adapter_tests/h2.rs`, with the recording checks of
//! `checks/support/src/adapter_tests/recording.rs`); this file says only how the blocking adapter
//! drives a session and runs sessions side by side, and holds the tests of the blocking adapter
//! alone.

use mcp_sansio_test_support::adapter_tests::h2;
use mcp_sansio_test_support::h2_tests;

use h2::recording;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use h2::h2_server::{self, config, is_goaway, Behaviour};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::Budget;
use mcp_sansio_blocking::Client;

h2_tests!(
    #[test] #[test] []
    spawn: std::thread::spawn, [move ||], joined: [.join()],
    sleep: std::thread::sleep
);

#[test]
fn a_call_that_times_out_resets_only_its_stream_and_the_socket_serves_on() {
    let (server, client, url) = h2::tls_setup::<Client>(Behaviour::default());
    let mut a = client.connect(config(&url)).unwrap();
    let mut short = config(&url);
    short.budgets.call_time = Duration::from_millis(300);
    let mut doomed = client.connect(short).unwrap();
    let e = doomed.call_tool("hang", b"{}").unwrap_err();
    assert_eq!(
        e.budget().map(|x| x.budget),
        Some(Budget::CallTime),
        "{e:?}"
    );
    let hung_stream = server.requests.lock().unwrap()[0].stream;
    assert!(server.wait_for(|s| !s.frames_on(1, h2_server::is_cancel).is_empty()));
    let resets = server.frames_on(1, h2_server::is_cancel);
    assert!(
        resets
            .iter()
            .all(|f| matches!(f, Frame::RstStream { stream_id, .. } if *stream_id == hung_stream)),
        "{resets:?}"
    );
    drop(doomed);
    assert_eq!(a.list_tools().unwrap().tools.len(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    assert!(
        server.frames_on(1, is_goaway).is_empty(),
        "the socket stays open"
    );
}
