//! A task session (SEP-2663) recorded to a transcript through the tokio adapter, against the
//! demo server's `slow_count`, then written, parsed back and replayed against the core whole
//! and one byte at a time.

use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::task::TaskHandle;
use mcp_sansio::{Config, ContentBlock};
use mcp_sansio_demo_server::{DemoServer, Options};
use mcp_sansio_test_support::adapter_tests::recording::{recording_client, replays, Memory};
use mcp_sansio_tokio::{CallObserver, Client};

/// Accepts the task's input request and keeps its handle.
#[derive(Default)]
struct Accept {
    handle: Option<TaskHandle>,
}

impl CallObserver for Accept {
    fn task_handle(&mut self, handle: &TaskHandle) {
        self.handle = Some(handle.clone());
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let v: serde_json::Value = serde_json::from_str(requests.get()).ok()?;
        let key = v.as_object()?.keys().next()?.clone();
        Some(format!(r#"{{"{key}":{{"action":"accept","content":{{}}}}}}"#).into_bytes())
    }
}

fn config(url: &str) -> Config {
    let mut config = Config::new(url).unwrap().with_tasks(true);
    config.input_hook = true;
    // The demo server asks for 100 ms between polls; the floor is ours.
    config.budgets.task_poll_floor = Duration::from_millis(50);
    config
}

/// SEP-2663: "Clients declare support for tasks by including `io.modelcontextprotocol/tasks`
/// in the `extensions` field of their client capabilities", in every request; the recorded
/// session (a `tools/call` answered with a task, polled with `tasks/get`, its input request
/// answered with `tasks/update`, completed) replays with the same requests, events and result,
/// which it could not if the transcript lost `Config::tasks`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_session_is_recorded_and_replays_whole_and_split() {
    let server = DemoServer::start(Options::default()).unwrap();
    let sink = Arc::new(Memory::default());
    let client: Client = recording_client(sink.clone());
    let mut session = client.connect(config(&server.url())).await.unwrap();
    let mut observer = Accept::default();
    let result = session
        .call_tool_with("slow_count", br#"{"to":3}"#, &mut observer)
        .await
        .unwrap();
    assert!(!result.is_error);
    assert!(
        matches!(&result.content[..], [ContentBlock::Text { text, .. }] if text == "1 2 3"),
        "{result:?}"
    );
    assert!(observer.handle.is_some(), "the task's handle came");
    session.close().await.unwrap();
    server.shutdown();

    let (text, t) = replays(&sink);
    assert!(text.contains("config tasks\n"), "{text}");
    assert!(text.contains("config unix-at-zero "), "{text}");
    assert!(
        text.contains("config budget task_poll_floor_ms 50\n"),
        "{text}"
    );
    let sends = t.sends();
    let bodies: Vec<String> = sends
        .iter()
        .map(|(_, _, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .collect();
    assert!(
        bodies
            .iter()
            .filter(|b| b.contains("\"method\":"))
            .all(|b| b.contains("\"io.modelcontextprotocol/tasks\"")),
        "every request declares the extension"
    );
    assert!(bodies.iter().any(|b| b.contains("\"tasks/get\"")), "polled");
    assert!(
        bodies.iter().any(|b| b.contains("\"tasks/update\"")),
        "input answered"
    );
    let outcome = t.outcome();
    let finished = outcome
        .iter()
        .find_map(|e| e.get("call_finished"))
        .unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!(finished["content"][0]["text"], "1 2 3");
    assert_eq!(outcome.last().unwrap(), "closed");
}
