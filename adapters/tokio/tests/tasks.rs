//! A tool call that becomes a task (SEP-2663) through the tokio adapter, against the demo
//! server's `slow_count`: `call_tool` returns the task's result, and the call observer gets the
//! task's handle before the first poll and the task's input request through the usual hook.

use std::time::Duration;

use mcp_sansio::task::{HandleError, TaskError, TaskHandle, TaskStatus};
use mcp_sansio::{Config, ContentBlock, Error};
use mcp_sansio_demo_server::{DemoServer, Options};
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
        let v: serde_json::Value = serde_json::from_str(requests.get()).ok()?;
        let key = v.as_object()?.keys().next()?.clone();
        let action = if self.accept { "accept" } else { "decline" };
        Some(format!(r#"{{"{key}":{{"action":"{action}","content":{{}}}}}}"#).into_bytes())
    }
}

fn config(url: &str) -> Config {
    let mut config = Config::new(url).unwrap().with_tasks(true);
    config.input_hook = true;
    // The demo server asks for 100 ms between polls; the floor is ours.
    config.budgets.task_poll_floor = Duration::from_millis(50);
    config
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

/// Persists the task's handle bytes (`TaskHandle::to_bytes`) as a durable store would, and
/// answers the task's input request with `accept` (`None`: declines, which ends the call and
/// leaves the task running on the server).
#[derive(Default)]
struct Persist {
    bytes: Option<Vec<u8>>,
    accept: Option<bool>,
}

impl CallObserver for Persist {
    fn task_handle(&mut self, handle: &TaskHandle) {
        self.bytes = Some(handle.to_bytes());
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let accept = self.accept?;
        let v: serde_json::Value = serde_json::from_str(requests.get()).ok()?;
        let key = v.as_object()?.keys().next()?.clone();
        let action = if accept { "accept" } else { "decline" };
        Some(format!(r#"{{"{key}":{{"action":"{action}","content":{{}}}}}}"#).into_bytes())
    }
}

fn loopback_client() -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build()
}

/// Starts `slow_count` through a first client whose work item then ends (it declines the
/// task's input request, so its call fails, and the client is dropped): the persisted handle
/// bytes. "Clients SHOULD persist task IDs to durable storage so that polling can resume after
/// a crash or restart."
async fn started_task(server: &DemoServer) -> Vec<u8> {
    let client = loopback_client();
    let mut session = client.connect(config(&server.url())).await.unwrap();
    let mut persist = Persist::default();
    let failed = session
        .call_tool_with("slow_count", br#"{"to":4}"#, &mut persist)
        .await;
    assert!(
        failed.is_err(),
        "a declined input ends the call: {failed:?}"
    );
    drop(session);
    drop(client);
    persist.bytes.expect("the handle reached the observer")
}

/// A second `Client` (its own pool and session) resumes the task from the persisted bytes and
/// gets the tool's result; the server made one task: the tool ran once ("Clients SHOULD persist
/// task IDs to durable storage so that polling can resume after a crash or restart").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_client_resumes_the_task_from_its_persisted_handle() {
    let server = DemoServer::start(Options::default()).unwrap();
    let bytes = started_task(&server).await;
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let client = loopback_client();
    let mut session = client.connect(config(&server.url())).await.unwrap();
    let mut persist = Persist {
        accept: Some(true),
        ..Persist::default()
    };
    let result = session
        .resume_task_with(&handle, &mut persist)
        .await
        .unwrap();
    assert!(!result.is_error);
    assert!(
        matches!(&result.content[..], [ContentBlock::Text { text, .. }] if text == "1 2 3 4"),
        "{:?}",
        result.content
    );
    assert_eq!(server.tasks_created(), 1, "the tool ran once");
    session.close().await.unwrap();
    server.shutdown();
}

/// `Session::cancel_task` from a second client: "Cancellation is cooperative and eventually
/// consistent", so the client polls after `tasks/cancel` until the task reports `cancelled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_client_cancels_the_task_to_cancelled() {
    let server = DemoServer::start(Options::default()).unwrap();
    let bytes = started_task(&server).await;
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let client = loopback_client();
    let mut session = client.connect(config(&server.url())).await.unwrap();
    let ended = session.cancel_task(&handle).await;
    assert!(
        matches!(ended, Err(Error::Task(TaskError::Cancelled { .. }))),
        "{ended:?}"
    );
    // The server agrees: a later resume finds the task cancelled.
    let again = session.resume_task(&handle).await;
    assert!(
        matches!(again, Err(Error::Task(TaskError::Cancelled { .. }))),
        "{again:?}"
    );
    assert_eq!(server.tasks_created(), 1);
    session.close().await.unwrap();
    server.shutdown();
}

/// A handle made under one credential is refused under another, before any request about the
/// task ("Servers MUST perform authentication and authorization checks on each task-related
/// request"; the client does not present one context's task under another's credential).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handle_of_another_authorization_context_is_refused() {
    let server = DemoServer::start(Options::default()).unwrap();
    let bytes = started_task(&server).await;
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let client = loopback_client();
    let mut other = config(&server.url());
    other.bearer_token = "another-credential".to_owned();
    let mut session = client.connect(other).await.unwrap();
    let served = server.stats().requests_served;
    for cancel in [false, true] {
        let refused = if cancel {
            session.cancel_task(&handle).await
        } else {
            session.resume_task(&handle).await
        };
        assert!(
            matches!(
                refused,
                Err(Error::Task(TaskError::Handle(HandleError::OtherContext)))
            ),
            "{refused:?}"
        );
    }
    assert_eq!(server.stats().requests_served, served, "nothing was sent");
    session.close().await.unwrap();
    server.shutdown();
}

/// A resume from a persisted handle ("Clients SHOULD persist task IDs to durable storage so
/// that polling can resume after a crash or restart") in a recording session is recorded
/// (`op resume`) and replays whole and one byte at a time with the same requests, events and
/// result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_resume_replays() {
    use mcp_sansio_test_support::adapter_tests::recording::{recording_client, replays, Memory};
    let server = DemoServer::start(Options::default()).unwrap();
    let bytes = started_task(&server).await;
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let sink = std::sync::Arc::new(Memory::default());
    let client: Client = recording_client(sink.clone());
    let mut session = client.connect(config(&server.url())).await.unwrap();
    let mut persist = Persist {
        accept: Some(true),
        ..Persist::default()
    };
    let result = session
        .resume_task_with(&handle, &mut persist)
        .await
        .unwrap();
    assert!(!result.is_error);
    session.close().await.unwrap();
    server.shutdown();
    let (text, t) = replays(&sink);
    assert!(text.contains(" op resume "), "{text}");
    let outcome = t.outcome();
    let finished = outcome
        .iter()
        .find_map(|e| e.get("call_finished"))
        .unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!(finished["content"][0]["text"], "1 2 3 4");
}

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

/// A resume in a recording session with a bearer token is refused with a typed error: the
/// handle names its authorization context, which a replay's stand-in token would not match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_session_with_a_token_refuses_a_resume() {
    struct Discard;
    impl mcp_sansio_tokio::TranscriptSink for Discard {
        fn write(&self, _session: u64, _text: &str) {}
    }
    let server = DemoServer::start(Options::default()).unwrap();
    let bytes = started_task(&server).await;
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .record_to(std::sync::Arc::new(Discard))
        .build();
    let mut config = config(&server.url());
    config.bearer_token = "tok".into();
    let mut session = client.connect(config).await.unwrap();
    let refused = session.resume_task(&handle).await;
    assert!(matches!(refused, Err(Error::Misuse { .. })), "{refused:?}");
    session.close().await.unwrap();
    server.shutdown();
}
