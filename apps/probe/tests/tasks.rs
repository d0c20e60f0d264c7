//! `mcp-probe` and tasks (SEP-2663, `io.modelcontextprotocol/tasks`) against the demo server's
//! `slow_count`: a call followed to its end, a handle file that survives the process, and a
//! second process that resumes or cancels the task from it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mcp_sansio_demo_server::{DemoServer, Options};
use serde_json::Value;

fn probe(args: &[&str], token: Option<&str>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-probe"));
    c.args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("RUST_LOG");
    if let Some(t) = token {
        c.env("MCP_BEARER_TOKEN", t);
    }
    c
}

fn run(args: &[&str], token: Option<&str>) -> Output {
    probe(args, token).output().expect("the binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("an exit code")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-probe-tasks-{}-{name}", std::process::id()));
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

/// "Clients SHOULD persist task IDs to durable storage so that polling can resume after a crash
/// or restart": the probe writes the handle as soon as the task exists; killed (`SIGKILL`, no
/// chance to clean up) before the task ends, a second process resumes from the file and prints
/// the tool's result, and the tool ran once.
#[test]
fn a_killed_call_is_resumed_from_its_handle_file_and_the_tool_runs_once() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("kill");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    let mut child = probe(
        &[
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            r#"{"to":3}"#,
            "--task-handle",
            h,
        ],
        None,
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    wait_for(&handle);
    // The first poll waits at least the 1 s poll floor: the task is still running.
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "the call was killed, not finished");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&handle).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    let o = run(
        &[
            "--allow-loopback",
            "--json",
            "task",
            "wait",
            "--task-handle",
            h,
        ],
        None,
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The probe declines the task's elicitation: the demo's count ends as a tool error
    // ("`completed`: … a tool error (`isError: true`) when it declined").
    assert_eq!(doc["is_error"], true, "{doc}");
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
    assert!(doc["task"]["polls"].as_u64().unwrap() >= 1, "{doc}");
    assert!(!doc["task"]["id"].as_str().unwrap().is_empty(), "{doc}");
    assert!(doc["content"][0]["text"].is_string(), "{doc}");
    assert_eq!(server.tasks_created(), 1, "the tool ran once");
}

/// A call with `--tasks` follows the task to its end: one status line per report on stderr,
/// the tool's result on stdout.
#[test]
fn a_call_follows_its_task_with_status_lines() {
    let server = DemoServer::start(Options::default()).unwrap();
    let o = run(
        &[
            "--allow-loopback",
            "--tasks",
            "call",
            &server.url(),
            "slow_count",
            r#"{"to":2}"#,
        ],
        None,
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("task ")).collect();
    assert_eq!(lines.first(), Some(&"task working: counting"), "{err}");
    assert!(
        lines.contains(&"task input_required: waiting for confirmation"),
        "{err}"
    );
    assert_eq!(lines.last(), Some(&"task completed"), "{err}");
    assert_eq!(server.tasks_created(), 1);
}

/// "Servers MAY use task IDs as bearer tokens": a handle written under one authorization
/// context is refused under another before any request (exit 5, the message saying why), and
/// the task is not touched: the same context resumes it afterwards.
#[test]
fn a_handle_of_another_authorization_context_is_refused() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("context");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    let o = run(
        &[
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            "--task-handle",
            h,
        ],
        Some("token-a"),
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let o = run(
        &["--allow-loopback", "task", "wait", "--task-handle", h],
        Some("token-b"),
    );
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("authorization"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    // The same context resumes it.
    let o = run(
        &["--allow-loopback", "task", "wait", "--task-handle", h],
        Some("token-a"),
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(!o.stdout.is_empty());
    assert_eq!(server.tasks_created(), 1);
}

/// "`tasks/cancel` … cancellation is cooperative": `task cancel` ends with the error of a
/// cancelled task, exit 5 as a failed call.
#[test]
fn task_cancel_cancels_the_task() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("cancel");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    let mut child = probe(
        &[
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            "--task-handle",
            h,
        ],
        None,
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    wait_for(&handle);
    child.kill().unwrap();
    let _ = child.wait();
    let o = run(
        &["--allow-loopback", "task", "cancel", "--task-handle", h],
        None,
    );
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cancelled"), "{}", text(&o.stderr));
    assert_eq!(server.tasks_created(), 1);
}

/// The handle file is never written through a symbolic link: one at the path is replaced by
/// the file, and its target is untouched.
#[cfg(unix)]
#[test]
fn the_handle_file_replaces_a_symbolic_link_and_leaves_its_target() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("link");
    let target = d.join("target");
    std::fs::write(&target, b"keep").unwrap();
    let handle = d.join("task.handle");
    std::os::unix::fs::symlink(&target, &handle).unwrap();
    let o = run(
        &[
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            "--task-handle",
            handle.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    let meta = std::fs::symlink_metadata(&handle).unwrap();
    assert!(meta.file_type().is_file());
}

/// Ctrl-C (`SIGINT`) during a task gives up the call and sends `tasks/cancel` ("Clients MAY
/// cancel a task … by sending `tasks/cancel`"; `notifications/cancelled` "MUST NOT be used for
/// task cancellation"): the probe exits with 130, and the task, resumed from its handle, ends
/// `cancelled`.
#[cfg(unix)]
#[test]
fn ctrl_c_during_a_task_cancels_it() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("interrupt");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    let child = probe(
        &[
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            "--task-handle",
            h,
        ],
        None,
    )
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
    assert_eq!(code(&o), 130, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the task was cancelled"),
        "{}",
        text(&o.stderr)
    );
    let o = run(
        &["--allow-loopback", "task", "wait", "--task-handle", h],
        None,
    );
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cancelled"), "{}", text(&o.stderr));
    assert_eq!(server.tasks_created(), 1);
}

/// Spawns `call … slow_count --task-handle FILE` under `token`, waits for the handle file and
/// kills the call (`SIGKILL`) before its first poll (which waits at least the 1 s poll floor).
fn killed_call_with_handle(server: &DemoServer, handle: &Path, token: Option<&str>) {
    let mut child = probe(
        &[
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            "--task-handle",
            handle.to_str().unwrap(),
        ],
        token,
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    wait_for(handle);
    child.kill().unwrap();
    let _ = child.wait();
}

/// "`tasks/get`: … the current state of the task": `task get` sends one `tasks/get` and prints
/// the report (status, `statusMessage`, `ttlMs`, `pollIntervalMs`) without waiting for a task
/// still running (exit 6), and the result of a completed one (exit 0, a tool error included)
/// as `task wait` does; the demo task moves one step per poll (`working`, then
/// `input_required`), so each `get` is exactly one poll.
#[test]
fn task_get_reports_one_poll_and_does_not_wait() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("get");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    killed_call_with_handle(&server, &handle, None);

    let o = run(
        &[
            "--allow-loopback",
            "--json",
            "task",
            "get",
            "--task-handle",
            h,
        ],
        None,
    );
    assert_eq!(code(&o), 6, "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let task = &doc["task"];
    assert_eq!(task["status"], "working", "{doc}");
    assert_eq!(task["status_message"], "counting", "{doc}");
    assert_eq!(task["ttl_ms"], 60_000, "{doc}");
    assert_eq!(task["poll_interval_ms"], 100, "{doc}");
    assert_eq!(task["polls"], 1, "{doc}");
    assert!(
        doc.get("content").is_none() && doc.get("error").is_none(),
        "{doc}"
    );

    // Text: the report on stdout, the same exit code.
    let o = run(
        &["--allow-loopback", "task", "get", "--task-handle", h],
        None,
    );
    assert_eq!(code(&o), 6, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("task input_required: waiting for confirmation\n"),
        "{out}"
    );
    assert!(out.contains("ttl 60000 ms\n"), "{out}");
    assert!(out.contains("poll interval 100 ms\n"), "{out}");

    let o = run(
        &["--allow-loopback", "task", "wait", "--task-handle", h],
        None,
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));

    let o = run(
        &[
            "--allow-loopback",
            "--json",
            "task",
            "get",
            "--task-handle",
            h,
        ],
        None,
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
    assert_eq!(doc["is_error"], true, "{doc}");
    assert!(doc["content"][0]["text"].is_string(), "{doc}");
    assert_eq!(server.tasks_created(), 1, "the tool ran once");
}

/// A cancelled task's `get` is exit 5 with the error document, as `task wait` of it is; a
/// handle of another authorization context is refused before any request.
#[test]
fn task_get_of_a_cancelled_task_and_of_another_context() {
    let server = DemoServer::start(Options::default()).unwrap();
    let d = dir("get-cancelled");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    killed_call_with_handle(&server, &handle, Some("token-a"));
    let served = server.stats().requests_served;
    let o = run(
        &[
            "--allow-loopback",
            "--json",
            "task",
            "get",
            "--task-handle",
            h,
        ],
        Some("token-b"),
    );
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("authorization context"), "{doc}");
    // A connection's negotiation, no tasks/get.
    assert!(server.stats().requests_served <= served + 1);
    let o = run(
        &["--allow-loopback", "task", "cancel", "--task-handle", h],
        Some("token-a"),
    );
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    let o = run(
        &[
            "--allow-loopback",
            "--json",
            "task",
            "get",
            "--task-handle",
            h,
        ],
        Some("token-a"),
    );
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["task"]["status"], "cancelled", "{doc}");
    assert_eq!(doc["error"]["type"], "mcp_server_answered_error", "{doc}");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{doc}"
    );
}

/// `task wait --record FILE` under `MCP_BEARER_TOKEN`: the resume is recorded (`op resume`)
/// with the handle rebound to the replay's stand-in token, the token appears nowhere in the
/// transcript, and the transcript replays to the same requests and outcome, whole and one byte
/// at a time (a replay presents a stand-in token, which the recorded real handle's context would
/// not match).
#[test]
fn a_resume_with_a_token_is_recorded_and_replays() {
    use mcp_sansio_transcript::{replay, Split, Transcript};
    const TOKEN: &str = "tok-probe-task-s3cr3t";
    let server = DemoServer::start(Options {
        bearer_token: Some(TOKEN.into()),
        ..Options::default()
    })
    .unwrap();
    let d = dir("record");
    let handle = d.join("task.handle");
    let h = handle.to_str().unwrap();
    killed_call_with_handle(&server, &handle, Some(TOKEN));
    // One poll, recorded (`op resume_get`): it replays to the same report.
    let polled = d.join("get.transcript");
    let o = run(
        &[
            "--allow-loopback",
            "--record",
            polled.to_str().unwrap(),
            "task",
            "get",
            "--task-handle",
            h,
        ],
        Some(TOKEN),
    );
    assert_eq!(code(&o), 6, "{}", text(&o.stderr));
    let recorded = std::fs::read_to_string(&polled).unwrap();
    assert!(!recorded.contains(TOKEN));
    assert!(recorded.contains(" op resume_get "), "{recorded}");
    let t = Transcript::parse(&recorded).unwrap();
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        replay(&t, split).unwrap().check(&t).unwrap();
    }
    let reported = t
        .outcome()
        .into_iter()
        .find_map(|e| e.get("task_reported").cloned())
        .unwrap_or_else(|| panic!("{recorded}"));
    assert_eq!(reported["status"], "working", "{reported}");
    let record = d.join("resume.transcript");
    let o = run(
        &[
            "--allow-loopback",
            "--record",
            record.to_str().unwrap(),
            "task",
            "wait",
            "--task-handle",
            h,
        ],
        Some(TOKEN),
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(!recorded.contains(TOKEN));
    assert!(
        recorded.contains("config bearer-token <redacted>\n"),
        "{recorded}"
    );
    assert!(recorded.contains(" op resume "), "{recorded}");
    let t = Transcript::parse(&recorded).unwrap();
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        let r = replay(&t, split).unwrap();
        assert_eq!(r.sends, t.sends(), "{split:?}");
        r.check(&t).unwrap();
    }
    let finished = t
        .outcome()
        .into_iter()
        .find_map(|e| e.get("call_finished").cloned())
        .unwrap_or_else(|| panic!("{recorded}"));
    assert_eq!(finished["is_error"], true, "{finished}");
    assert_eq!(server.tasks_created(), 1);
}
