//! A tool call that becomes a task (SEP-2663) through the tokio adapter, against the demo
//! server's `slow_count`: `call_tool` returns the task's result, and the call observer gets the
//! task's handle before the first poll and the task's input request through the usual hook. A
//! second client resumes and cancels a task from its persisted handle (the tests shared with the
//! blocking adapter, `checks/support/src/adapter_tests/tasks.rs`).

use mcp_sansio::task::{HandleError, TaskError, TaskHandle, TaskStatus};
use mcp_sansio::{ContentBlock, Error};
use mcp_sansio_demo_server::{DemoServer, Options};
use mcp_sansio_test_support::adapter_tests::tasks::{answer_input, config, Persist};
use mcp_sansio_test_support::task_resume_tests;
use mcp_sansio_tokio::{AddressPolicy, CallObserver, Client};

#[derive(Default)]
struct Observer {
    /// What came, in order: "handle", "status", "input".
    seen: Vec<&'static str>,
    handle: Option<TaskHandle>,
    accept: bool,
}

impl CallObserver for Observer {
    fn task_handle(&mut self, handle: &TaskHandle) {
        self.seen.push("handle");
        self.handle = Some(handle.clone());
    }

    fn task_status(&mut self, status: TaskStatus, _message: Option<&str>) {
        let _ = status;
        self.seen.push("status");
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.seen.push("input");
        answer_input(requests, self.accept)
    }
}

/// "`completed`: … results are available in the `result` field": `call_tool` with tasks on
/// returns the task's `CallToolResult` (a declined count stays a tool error, `isError`); the
/// handle reaches the observer first ("Clients SHOULD persist task IDs to durable storage").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_tool_follows_slow_count_to_its_result() {
    let server = DemoServer::start(Options::default()).unwrap();
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build();
    for accept in [true, false] {
        let mut session = client.connect(config(&server.url())).await.unwrap();
        let mut observer = Observer {
            accept,
            ..Observer::default()
        };
        let result = session
            .call_tool_with("slow_count", br#"{"to":3}"#, &mut observer)
            .await
            .unwrap();
        assert_eq!(result.is_error, !accept);
        if accept {
            assert!(
                matches!(&result.content[..], [ContentBlock::Text { text, .. }] if text == "1 2 3"),
                "{:?}",
                result.content
            );
        }
        assert_eq!(
            observer.seen.first(),
            Some(&"handle"),
            "{:?}",
            observer.seen
        );
        assert!(observer.seen.contains(&"input"));
        let handle = observer.handle.expect("a handle");
        assert!(
            handle.created_unix_ms() > 1_600_000_000_000,
            "on the Unix clock"
        );
        session.close().await.unwrap();
    }
    server.shutdown();
}

task_resume_tests!(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async [.await]);

/// A cancel from a persisted handle in a recording session ("Cancellation is cooperative and
/// eventually consistent") is recorded (`op resume_cancel`): the replay sends `tasks/cancel`
/// again and ends `cancelled`, whole and one byte at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_cancel_replays() {
    use mcp_sansio_test_support::adapter_tests::recording::{recording_client, replays, Memory};
    let server = DemoServer::start(Options::default()).unwrap();
    let bytes = started_task(&server).await;
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let sink = std::sync::Arc::new(Memory::default());
    let client: Client = recording_client(sink.clone());
    let mut session = client.connect(config(&server.url())).await.unwrap();
    let ended = session.cancel_task(&handle).await;
    assert!(
        matches!(ended, Err(Error::Task(TaskError::Cancelled { .. }))),
        "{ended:?}"
    );
    session.close().await.unwrap();
    server.shutdown();
    let (text, t) = replays(&sink);
    assert!(text.contains(" op resume_cancel "), "{text}");
    assert!(
        t.sends()
            .iter()
            .any(|(_, _, b)| String::from_utf8_lossy(b).contains("\"tasks/cancel\"")),
        "{text}"
    );
    let outcome = t.outcome();
    assert!(
        outcome.iter().any(|e| e.get("failed").is_some()),
        "{outcome:?}"
    );
}
