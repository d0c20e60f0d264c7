//! `mcp-probe task wait|get|cancel --oauth` against the project's test authorization server
//! (`checks/support/src/auth_server.rs`), whose MCP endpoint turns a call of `slow` that
//! declares the tasks extension into a task (`working` at the first poll, `completed` after).
//! A call authorized with the client-credentials grant and `--token-file` writes its task's
//! handle and is killed; `task … --oauth --token-file` with the same file resumes the task
//! with the stored token, or with the token that replaced it once it expired (a handle is bound
//! to the principal, the grant, not to one token), and a token of another grant (another
//! principal) is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mcp_sansio_test_support::auth_server::{m2m, AuthServer, Mode, TASK_TOOL};
use serde_json::Value;

fn probe(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-probe"));
    c.args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("MCP_CLIENT_SECRET")
        .env_remove("RUST_LOG");
    c
}

fn run(args: &[&str]) -> Output {
    probe(args).output().expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "mcp-probe-oauth-tasks-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The credential options: `--oauth`, the client-credentials grant pinned to `issuer` with the
/// secret in `secret`, the tokens kept in `tokens`.
fn credentials<'a>(issuer: &'a str, secret: &'a str, tokens: &'a str) -> Vec<&'a str> {
    vec![
        "--allow-loopback",
        "--oauth",
        "--grant",
        "client-credentials",
        "--issuer",
        issuer,
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        secret,
        "--token-file",
        tokens,
    ]
}

/// SEP-2663: "Clients SHOULD persist task IDs to durable storage so that polling can resume
/// after a crash or restart", and a handle is bound to the principal it was made for (the
/// grant): a call under `--oauth --token-file` killed before its first poll is resumed by
/// `task get` and `task wait` under `--oauth` with the same token file (the stored token, no new
/// grant), and refused under a token of another grant (the JWT bearer grant with a workload
/// token, a token file of its own: another principal) before any request about the task.
#[test]
fn a_task_created_under_oauth_is_resumed_with_the_stored_token_and_refused_under_another() {
    let server = AuthServer::start(Mode::Normal);
    let issuer = server.base();
    let url = server.url();
    let dir = tmp("resume");
    let secret = dir.join("secret");
    std::fs::write(&secret, m2m::SECRET).unwrap();
    let secret = secret.to_str().unwrap().to_owned();
    let tokens = dir.join("tokens.json").to_str().unwrap().to_owned();
    let handle = dir.join("task.handle");
    let h = handle.to_str().unwrap();

    let mut args = credentials(&issuer, &secret, &tokens);
    args.extend(["call", &url, TASK_TOOL, "--task-handle", h]);
    let mut child = probe(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&handle);
    // The first poll waits at least the 1 s poll floor: the task has not been polled.
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let grants = server.grants("/token", "client_credentials").len();
    assert!(grants >= 1, "the call was authorized");

    // Same token file: one poll, the task still working (exit 6).
    let mut args = credentials(&issuer, &secret, &tokens);
    args.extend(["--json", "task", "get", "--task-handle", h]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["task"]["status"], "working", "{doc}");
    assert_eq!(server.task_polls().get("t-1"), Some(&1));

    // Another grant (JWT bearer, a token file of its own): another principal; refused, no
    // poll.
    let workload = dir.join("workload");
    let assertion = m2m::unsigned_jwt(&serde_json::json!({"sub": "w", "aud": issuer}));
    std::fs::write(&workload, assertion).unwrap();
    let workload = workload.to_str().unwrap().to_owned();
    let other = dir.join("other.json").to_str().unwrap().to_owned();
    for action in ["get", "wait", "cancel"] {
        let mut args = vec![
            "--allow-loopback",
            "--oauth",
            "--grant",
            "jwt-bearer",
            "--issuer",
            &issuer,
            "--client-id",
            m2m::CLIENT_ID,
            "--workload-token-file",
            &workload,
            "--token-file",
            &other,
        ];
        args.extend(["--json", "task", action, "--task-handle", h]);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(5), "{action}: {}", text(&o.stderr));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["error"]["type"], "mcp_server_answered_error", "{doc}");
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(message.contains("authorization context"), "{doc}");
    }
    assert_eq!(server.task_polls().get("t-1"), Some(&1), "never polled");
    let jwt_bearer = mcp_sansio::internals::auth::JWT_BEARER;
    assert!(
        !server.grants("/token", jwt_bearer).is_empty(),
        "the other grant got a token of its own"
    );
    let after_other = server.grants("/token", "client_credentials").len();

    // Same token file: waits to the end with the stored token, no new grant.
    let mut args = credentials(&issuer, &secret, &tokens);
    args.extend(["--json", "task", "wait", "--task-handle", h]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["content"][0]["text"], "done", "{doc}");
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
    assert_eq!(
        server.grants("/token", "client_credentials").len(),
        after_other,
        "the stored token was presented"
    );
    assert!(!text(&o.stdout).contains(m2m::SECRET) && !text(&o.stderr).contains(m2m::SECRET));
}

/// A handle outlives the token it was made under: the call's tokens live 1 s; once the stored
/// token has expired, `task wait --oauth --token-file` with the same file gets a new token of
/// the same grant (the file holds it afterwards) and resumes the task under it to its result.
/// Before handles were bound to the principal, this resume was refused ("another authorization
/// context").
#[test]
fn task_wait_resumes_after_the_stored_token_was_refreshed() {
    let server = AuthServer::start(Mode::Normal);
    let issuer = server.base();
    let url = server.url();
    let dir = tmp("refreshed");
    let secret = dir.join("secret");
    std::fs::write(&secret, m2m::SECRET).unwrap();
    let secret = secret.to_str().unwrap().to_owned();
    let tokens = dir.join("tokens.json");
    let token_file = tokens.to_str().unwrap().to_owned();
    let handle = dir.join("task.handle");
    let h = handle.to_str().unwrap();
    // The call's tokens (the first grant and its step-up to `write`) live 1 s.
    server.short_lived_tokens(2, 1);
    let mut args = credentials(&issuer, &secret, &token_file);
    args.extend(["call", &url, TASK_TOOL, "--task-handle", h]);
    let mut child = probe(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&handle);
    child.kill().unwrap(); // SIGKILL, before the first poll
    let _ = child.wait();
    let stored = std::fs::read_to_string(&tokens).unwrap();
    let grants = server.grants("/token", "client_credentials").len() + server.refresh_grants();
    std::thread::sleep(Duration::from_millis(1_500));

    let mut args = credentials(&issuer, &secret, &token_file);
    args.extend(["--json", "task", "wait", "--task-handle", h]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["content"][0]["text"], "done", "{doc}");
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
    let after = server.grants("/token", "client_credentials").len() + server.refresh_grants();
    assert!(after > grants, "a new token was obtained");
    assert_ne!(
        std::fs::read_to_string(&tokens).unwrap(),
        stored,
        "the token file holds the new token"
    );
    assert_eq!(server.task_polls().len(), 1, "one task");
}

/// Ctrl-C (`SIGINT`) during a task under `--oauth` cancels the task (`tasks/cancel`, "Clients
/// MAY cancel a task") in a new session with the same stored credentials, as it does without
/// authorization: exit 130, and the task, resumed from its handle, ends `cancelled`.
#[cfg(unix)]
#[test]
fn ctrl_c_under_oauth_cancels_the_task_with_the_stored_token() {
    let server = AuthServer::start(Mode::Normal);
    let issuer = server.base();
    let url = server.url();
    let dir = tmp("interrupt");
    let secret = dir.join("secret");
    std::fs::write(&secret, m2m::SECRET).unwrap();
    let secret = secret.to_str().unwrap().to_owned();
    let tokens = dir.join("tokens.json").to_str().unwrap().to_owned();
    let handle = dir.join("task.handle");
    let h = handle.to_str().unwrap();
    let mut args = credentials(&issuer, &secret, &tokens);
    args.extend(["call", &url, TASK_TOOL, "--task-handle", h]);
    let child = probe(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&handle);
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the task was cancelled"),
        "{}",
        text(&o.stderr)
    );
    let cancels = server
        .seen()
        .iter()
        .filter(|s| s.rpc_method().as_deref() == Some("tasks/cancel"))
        .count();
    assert_eq!(cancels, 1);
    let mut args = credentials(&issuer, &secret, &tokens);
    args.extend(["--json", "task", "get", "--task-handle", h]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["task"]["status"], "cancelled", "{doc}");
}
