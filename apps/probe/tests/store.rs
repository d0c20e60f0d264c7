//! `mcp-probe --store redis://…`: two runs (two processes) share the catalog cache and the era
//! hints through a real `redis-server`; a store that is down is a miss, never a failure.

#[path = "../../../crates/redis/tests/support/mod.rs"]
mod redis_support;

use std::process::{Command, Output};

use mcp_sansio_test_support::adapter_tests::cache::{CacheServer, Script};
use redis_support::{free_port, RedisServer};

fn list(store: &str, url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args([
            "--allow-loopback",
            "--http1",
            "--json",
            "--store",
            store,
            "list",
            url,
        ])
        .env_remove("MCP_BEARER_TOKEN")
        .output()
        .expect("run mcp-probe")
}

fn tools(o: &Output) -> Vec<String> {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// spec.md §3 (SEP-2549): a listing is fresh for `ttlMs`; the era a negotiation found is offered
/// to the next connection of the same server and context. A second run of the probe with the
/// same store sends neither `server/discover` nor `tools/list`.
#[test]
fn a_second_run_with_the_store_makes_no_request() {
    let redis = RedisServer::start();
    let server = CacheServer::start(Script::default());
    assert_eq!(
        tools(&list(&redis.url(), &server.url())),
        ["weather", "echo"]
    );
    assert_eq!(server.count("tools/list"), 1);
    let discovers = server.count("server/discover");
    assert!(discovers >= 1);
    assert_eq!(
        tools(&list(&redis.url(), &server.url())),
        ["weather", "echo"]
    );
    assert_eq!(
        server.count("tools/list"),
        1,
        "the listing came from the store"
    );
    assert_eq!(
        server.count("server/discover"),
        discovers,
        "the era came from the store"
    );
}

/// A store that is down: the run succeeds (listing for itself); a URL that is no store URL is a
/// usage error (exit 2).
#[test]
fn a_store_that_is_down_is_a_miss_and_a_bad_url_a_usage_error() {
    let server = CacheServer::start(Script::default());
    let down = format!("redis://127.0.0.1:{}/", free_port());
    assert_eq!(tools(&list(&down, &server.url())), ["weather", "echo"]);
    assert_eq!(server.count("tools/list"), 1);
    let bad = list("http://127.0.0.1/", &server.url());
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// "Clients SHOULD persist task IDs to durable storage so that polling can resume after a crash
/// or restart": with `--store` and `--task-name`, a call killed mid-task (`SIGKILL`) leaves its
/// handle in the store; a second process resumes it from there by name and prints the result;
/// the tool ran once. Another name finds nothing (exit 2).
#[test]
fn a_killed_call_is_resumed_from_the_store_by_name() {
    use mcp_sansio_demo_server::{DemoServer, Options};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let redis = RedisServer::start();
    let server = DemoServer::start(Options::default()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args([
            "--allow-loopback",
            "call",
            &server.url(),
            "slow_count",
            r#"{"to":3}"#,
        ])
        .args(["--store", &redis.url(), "--task-name", "job-1"])
        .env_remove("MCP_BEARER_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while redis.command("KEYS mcp-sansio:task:*") != "*1" {
        assert!(Instant::now() < end, "the handle never reached the store");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    assert!(
        !child.wait().unwrap().success(),
        "the call was killed, not finished"
    );

    let wait = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
            .args(["--allow-loopback", "--json", "task", "wait", &server.url()])
            .args(["--store", &redis.url(), "--task-name", name])
            .env_remove("MCP_BEARER_TOKEN")
            .output()
            .unwrap()
    };
    let o = wait("job-1");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The probe declines the task's elicitation: the demo's count ends as a tool error.
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
    assert_eq!(doc["is_error"], true, "{doc}");
    assert_eq!(server.tasks_created(), 1, "the tool ran once");
    let other = wait("job-2");
    assert_eq!(other.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("no task handle"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
}

/// RFC 9700 §4.14.2: a refresh token spent twice may revoke the whole family, so a fleet
/// refreshes a grant once. With `--oauth` and `--store`, token refreshes go through the store:
/// two probe runs at once (two processes, each with its own copy of a token file holding the
/// same expired token of a client-credentials grant) renew it once between them, the other
/// taking its tokens; both list.
#[test]
fn two_runs_sharing_a_grant_through_the_store_renew_it_once() {
    use mcp_sansio_test_support::auth_server::{m2m, AuthServer, Mode};
    use std::os::unix::fs::PermissionsExt as _;

    let redis = RedisServer::start();
    let server = AuthServer::start(Mode::Normal);
    let (issuer, url) = (server.base(), server.url());
    let dir = std::env::temp_dir().join(format!("mcp-probe-store-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("secret");
    std::fs::write(&secret, m2m::SECRET).unwrap();
    let run = |tokens: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
            .args(["--allow-loopback", "--json", "--oauth"])
            .args(["--grant", "client-credentials", "--issuer", &issuer])
            .args(["--client-id", m2m::CLIENT_ID, "--client-secret-file"])
            .arg(&secret)
            .arg("--token-file")
            .arg(tokens)
            .args(["--store", &redis.url(), "list", &url])
            .env_remove("MCP_BEARER_TOKEN")
            .env_remove("MCP_CLIENT_SECRET")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run mcp-probe")
    };
    let listed = |o: Output| {
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
        assert!(out.contains("\"echo\""), "{out}");
    };
    // A first run gets the grant's token and saves it.
    let first = dir.join("first.json");
    listed(run(&first).wait_with_output().unwrap());
    assert_eq!(server.grants("/token", "client_credentials").len(), 1);
    // Expired, in two copies.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    for bound in doc["resources"].as_object_mut().unwrap().values_mut() {
        bound["tokens"]["expires_at_ms"] = 1.into();
    }
    let copies = [dir.join("a.json"), dir.join("b.json")];
    for c in &copies {
        std::fs::write(c, doc.to_string()).unwrap();
        std::fs::set_permissions(c, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let children: Vec<_> = copies.iter().map(|c| run(c)).collect();
    for child in children {
        listed(child.wait_with_output().unwrap());
    }
    assert_eq!(
        server.grants("/token", "client_credentials").len(),
        2,
        "one renewal between the two runs"
    );
    let saved: Vec<String> = copies
        .iter()
        .map(|c| std::fs::read_to_string(c).unwrap())
        .collect();
    assert_eq!(saved[0], saved[1], "both runs ended with the same tokens");
    std::fs::remove_dir_all(&dir).unwrap();
}
