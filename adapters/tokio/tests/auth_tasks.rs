//! A task outlives its access token: through tokio's `AuthSession`, against the project's test
//! authorization server (`checks/support/src/auth_server.rs`) with a token that expires while
//! the task runs. The session gets a new token of the same grant and goes on with the same task:
//! a task handle is bound to the principal (the grant, `AuthContext::principal`), not to the
//! token.
//!
//! SEP-2663: "Clients SHOULD persist task IDs to durable storage so that polling can resume after
//! a crash or restart"; a task may run for an hour (`task_time`) and an access token commonly
//! lives an hour or less (RFC 6749 §4.2.2 `expires_in`).

use std::time::Duration;

use mcp_sansio::task::{TaskHandle, TaskStatus};
use mcp_sansio::{CallResult, ContentBlock};
use mcp_sansio_test_support::adapter_tests::m2m as support;
use mcp_sansio_test_support::auth_server::{AuthServer, Mode, TASK_TOOL};
use mcp_sansio_tokio::{AuthSession, CallObserver, Client};

/// Keeps the task's handles and statuses.
#[derive(Default)]
struct Keep {
    handles: Vec<TaskHandle>,
    statuses: Vec<TaskStatus>,
}

impl CallObserver for Keep {
    fn task_handle(&mut self, handle: &TaskHandle) {
        self.handles.push(handle.clone());
    }
    fn task_status(&mut self, status: TaskStatus, _: Option<&str>) {
        self.statuses.push(status);
    }
}

fn text(r: &CallResult) -> &str {
    match r.content.first() {
        Some(ContentBlock::Text { text }) => text,
        other => panic!("not text: {other:?}"),
    }
}

/// How many `tasks/get` requests reached the MCP endpoint (refused ones included).
fn task_gets(server: &AuthServer) -> usize {
    server
        .seen()
        .iter()
        .filter(|s| s.target.starts_with("/mcp") && s.body.contains(r#""method":"tasks/get""#))
        .count()
}

/// A session with tasks on whose token can call tools (the first call steps up to `write`),
/// the token it calls with living 2 s; polls at least `floor` apart.
async fn session(server: &AuthServer, floor: Duration) -> AuthSession {
    let client = Client::builder().policy(support::policy()).build();
    let auth = support::authorization(server, support::basic(server), support::refusing_browser());
    let mut config = mcp_sansio::Config::new(&server.url())
        .unwrap()
        .with_tasks(true);
    config.budgets.task_poll_floor = floor;
    let mut s = AuthSession::connect(&client, config, auth).await.unwrap();
    // The step-up's token (scope `read write`) lives 2 s; the ones after it an hour.
    server.short_lived_tokens(1, 2);
    assert!(!s.call_tool("echo", b"{}").await.unwrap().is_error);
    s
}

/// A task call whose access token expires while the task runs: a poll is refused 401, the
/// session gets a new token of the same grant, and polling goes on with the same task (no
/// second `tools/call`, no second task) until the call returns the task's result.
#[tokio::test]
async fn a_task_call_goes_on_after_its_token_expires() {
    let server = AuthServer::start(Mode::Normal);
    let mut s = session(&server, Duration::from_secs(1)).await;
    let grants = server.grants("/token", "client_credentials").len();
    let mut keep = Keep::default();
    let result = s.call_tool_with(TASK_TOOL, b"{}", &mut keep).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(text(&result), "done");
    assert_eq!(keep.statuses.last(), Some(&TaskStatus::Completed));
    assert_eq!(keep.handles.len(), 1, "one task, one handle");
    let polls = server.task_polls();
    assert_eq!(
        polls.keys().collect::<Vec<_>>(),
        ["t-1"],
        "one task created"
    );
    assert!(
        task_gets(&server) > usize::try_from(polls["t-1"]).unwrap(),
        "a poll was refused (the token expired while the task ran)"
    );
    let after = server.grants("/token", "client_credentials").len() + server.refresh_grants();
    assert!(after > grants, "a new token was obtained");
    s.close().await.unwrap();
}

/// A handle saved before a refresh resumes after it: the call (polls 100 ms apart) ends with
/// the task's result while its token is valid; once that token has expired, `run(resume_task)`
/// from the saved bytes is refused 401, the session gets a new token of the same grant, and the
/// resume under that token is accepted (before, a handle of the old token was refused:
/// `TaskError::Handle`) and gives the completed task's result again.
#[tokio::test]
async fn a_handle_saved_before_a_refresh_resumes_after_it() {
    let server = AuthServer::start(Mode::Normal);
    let mut s = session(&server, Duration::from_millis(100)).await;
    let mut keep = Keep::default();
    let first = s.call_tool_with(TASK_TOOL, b"{}", &mut keep).await.unwrap();
    assert_eq!(text(&first), "done");
    let saved = keep.handles.last().expect("a handle").to_bytes();
    // The token the task was created under expires (2 s after it was issued).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let grants = server.grants("/token", "client_credentials").len() + server.refresh_grants();
    let gets = task_gets(&server);
    let handle = TaskHandle::from_bytes(&saved).unwrap();
    let result = s
        .run(async |session| session.resume_task(&handle).await)
        .await
        .unwrap();
    assert_eq!(text(&result), "done");
    let after = server.grants("/token", "client_credentials").len() + server.refresh_grants();
    assert!(after > grants, "a new token was obtained");
    assert_eq!(
        task_gets(&server),
        gets + 2,
        "one poll refused 401, one under the new token"
    );
    assert_eq!(server.task_polls().len(), 1, "one task");
    s.close().await.unwrap();
}
