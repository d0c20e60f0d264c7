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

/// `tools/call` requests the server has read in full.
fn calls(server: &h2_server::Server) -> usize {
    server
        .methods()
        .iter()
        .filter(|m| *m == "tools/call")
        .count()
}

/// A server behaving as `b` (TLS, ALPN `h2`) and a client trusting it whose HTTP/2 sockets open
/// at most `max_streams` streams at once (`None`: the default).
fn limited(b: Behaviour, max_streams: Option<u32>) -> (h2_server::Server, Client, String) {
    let (ca, server_config) = h2::tls_server(&[b"h2", b"http/1.1"]);
    let server = h2_server::Server::start_with(Some(server_config), b);
    let mut builder = h2::loopback::<Client>().add_root_certificates([ca]);
    if let Some(n) = max_streams {
        builder = builder.h2_max_streams(n);
    }
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    (server, builder.build(), url)
}

/// The streams one socket opens at once are the client's `h2_max_streams`, capped by the
/// server's SETTINGS_MAX_CONCURRENT_STREAMS; by default as many as the server allows, up to 100.
/// With one session more than that calling a tool the server never answers, exactly that many
/// calls reach the server (and stay so), all on one socket; once a session is dropped (its
/// stream reset), the waiting one takes the slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_at_once_are_the_clients_setting_capped_by_the_servers_limit() {
    for (ours, theirs, want) in [
        (Some(2), None, 2),
        (Some(5), Some(3), 3),
        (None, Some(150), 100),
        (None, Some(4), 4),
    ] {
        let b = Behaviour {
            max_concurrent_streams: theirs,
            ..Behaviour::default()
        };
        let (server, client, url) = limited(b, ours);
        let mut hung = Vec::new();
        let case = format!("ours {ours:?}, the server's {theirs:?}");
        for k in 0..=want {
            let mut s = client.connect(config(&url)).await.unwrap();
            hung.push(tokio::spawn(async move {
                let _ = s.call_tool("hang", b"{}").await;
                unreachable!("the server never answers");
            }));
            if k + 1 == want {
                // Every slot taken before the last session calls.
                assert!(
                    server.wait_for(|s| calls(s) == want),
                    "{case}: {}",
                    calls(&server)
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(calls(&server), want, "{case}: the last one waits");
        assert_eq!(
            server.accepted.load(Ordering::SeqCst),
            1,
            "{case}: one socket"
        );
        hung.remove(0).abort();
        assert!(
            server.wait_for(|s| calls(s) == want + 1),
            "{case}: a slot freed serves the one waiting"
        );
        for t in hung {
            t.abort();
        }
    }
}

/// A request's time budget counts from when its operation made it, the time it waits for a
/// stream slot included: with one stream, held by a call the server never answers, a listing
/// whose `request_time` is 300 ms fails with `request_time_ms` after about that long, and its
/// request never reaches the server, even once the slot is free; a listing that waits less
/// than its budget (5 s) is served once the slot frees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_for_a_stream_slot_spends_its_time_budget_waiting() {
    let (server, client, url) = limited(Behaviour::default(), Some(1));
    let mut holder = client.connect(config(&url)).await.unwrap();
    let held = tokio::spawn(async move {
        let _ = holder.call_tool("hang", b"{}").await;
        unreachable!("the server never answers");
    });
    assert!(server.wait_for(|s| calls(s) == 1));

    let mut short = config(&url);
    short.budgets.request_time = Duration::from_millis(300);
    let mut waiter = client.connect(short).await.unwrap();
    let start = std::time::Instant::now();
    let r = waiter.list_tools().await;
    let took = start.elapsed();
    assert!(
        matches!(&r, Err(mcp_sansio::Error::Budget(e))
            if e.budget == mcp_sansio::Budget::RequestTime && e.limit == 300),
        "{r:?}"
    );
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");

    let mut patient = config(&url);
    patient.budgets.request_time = Duration::from_secs(5);
    let mut later = client.connect(patient).await.unwrap();
    let listing = tokio::spawn(async move { later.list_tools().await.map(|c| c.tools.len()) });
    tokio::time::sleep(Duration::from_millis(200)).await;
    held.abort();
    assert_eq!(listing.await.unwrap().unwrap(), 1);
    assert_eq!(
        server.methods(),
        ["tools/call", "tools/list"],
        "the listing that ran out of time never opened a stream"
    );
    drop(waiter);
}
