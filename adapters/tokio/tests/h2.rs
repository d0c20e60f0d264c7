//! HTTP/2 through the tokio adapter, against the in-test HTTP/2 server on 127.0.0.1 (the core's own
//! frame codec and HPACK). The tests are shared with the blocking adapter
//! (`checks/support/src/adapter_tests/h2.rs`, with the recording checks of
//! `checks/support/src/adapter_tests/recording.rs`); this file says only how tokio drives a session
//! and runs sessions side by side, and holds the tests of the tokio adapter alone.

use mcp_sansio_test_support::adapter_tests::h2;
use mcp_sansio_test_support::h2_tests;

use h2::recording;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use h2::h2_server::{self, config, is_cancel, is_goaway, Behaviour};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio_tokio::Client;

h2_tests!(
    #[tokio::test] #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async [.await]
    spawn: tokio::spawn, [async move], joined: [.await],
    sleep: tokio::time::sleep
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_dropped_mid_call_resets_only_its_stream() {
    let (server, client, url) = h2::tls_setup::<Client>(Behaviour::default());
    let mut a = client.connect(config(&url)).await.unwrap();
    let mut b = client.connect(config(&url)).await.unwrap();
    let hung = tokio::spawn(async move {
        let mut doomed = client.connect(config(&url)).await.unwrap();
        let _ = doomed.call_tool("hang", b"{}").await;
        unreachable!("the server never answers");
    });
    assert!(server.wait_for(|s| s.methods().contains(&"tools/call".to_owned())));
    let hung_stream = server.requests.lock().unwrap()[0].stream;
    hung.abort();
    let _ = hung.await;
    assert!(
        server.wait_for(|s| !s.frames_on(1, is_cancel).is_empty()),
        "the dropped session's stream is reset"
    );
    let resets = server.frames_on(1, is_cancel);
    assert!(
        resets
            .iter()
            .all(|f| matches!(f, Frame::RstStream { stream_id, .. } if *stream_id == hung_stream)),
        "{resets:?}"
    );
    assert_eq!(a.list_tools().await.unwrap().tools.len(), 1);
    assert_eq!(b.call_tool("echo", b"{}").await.unwrap().content.len(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    assert!(
        server.frames_on(1, is_goaway).is_empty(),
        "the socket stays open"
    );
}
