//! `mcp-probe --oauth` against a protected loopback server and its authorization server: the
//! test plays the browser (GETs the printed URL, follows the redirect to the probe's callback),
//! then checks the listing, the token file and that no token reaches the output.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Output};
use std::time::Duration;

use support::oauth::{self, get, spawn, ACCESS_TOKEN, CODE, REFRESH_TOKEN};
use support::{Reply, Req};

/// Plays the browser: reads stderr until the authorization URL, GETs it, follows its redirect
/// to the callback. Returns the stderr read so far.
fn play_browser(child: &mut Child) -> String {
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr);
    let mut seen = String::new();
    let url = loop {
        let mut l = String::new();
        if lines.read_line(&mut l).unwrap() == 0 {
            panic!("the probe ended without printing an authorization URL: {seen}");
        }
        seen.push_str(&l);
        if let Some(u) = l.trim().strip_prefix("http://") {
            break format!("http://{u}");
        }
    };
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    assert!(url.contains("resource="), "{url}");
    let (status, location) = get(&url, Duration::from_secs(10));
    assert!(status.contains(" 302 "), "{status}");
    let callback = location.expect("a Location");
    assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
    assert!(callback.contains(CODE));
    let (status, _) = get(&callback, Duration::from_secs(10));
    assert!(status.contains(" 200 "), "{status}");
    lines.read_to_string(&mut seen).unwrap();
    seen
}

fn finish(mut child: Child) -> Output {
    let status = child.wait().unwrap();
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let mut stderr = Vec::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_end(&mut stderr).unwrap();
    }
    Output {
        status,
        stdout,
        stderr,
    }
}

fn no_secret(text: &str) {
    for secret in [ACCESS_TOKEN, REFRESH_TOKEN, CODE] {
        assert!(!text.contains(secret), "a secret in the output: {text}");
    }
}

fn authorize_requests(s: &support::Server) -> usize {
    s.requests()
        .iter()
        .filter(|r| r.head.starts_with("GET /authorize"))
        .count()
}

fn token_requests(s: &support::Server) -> usize {
    s.requests()
        .iter()
        .filter(|r| r.head.starts_with("POST /token"))
        .count()
}

#[test]
fn oauth_authorizes_lists_and_keeps_the_tokens_in_a_private_file() {
    let server = oauth::start(oauth::modern_answer);
    let dir = scratch_dir("cli");
    let token_file = dir.join("tokens.json");
    let _ = std::fs::remove_file(&token_file);
    let tf = token_file.to_str().unwrap();
    let url = server.url();

    let mut child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "--json",
        "list",
        &url,
    ]);
    let stderr = play_browser(&mut child);
    let out = finish(child);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "add"]);
    no_secret(&stdout);
    no_secret(&stderr);
    assert_eq!(authorize_requests(&server), 1);
    // The MCP server saw the token on the retried request; the authorization server never did.
    let bearer = format!("Bearer {ACCESS_TOKEN}");
    let requests = server.requests();
    assert!(requests
        .iter()
        .any(|r| r.head.starts_with("POST /mcp") && r.head.contains(&bearer)));
    for r in requests.iter().filter(|r| !r.head.contains(" /mcp")) {
        assert!(!r.head.contains(&bearer), "{}", r.head);
    }

    // The token file: private, and holding what the next run needs.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let saved = std::fs::read_to_string(&token_file).unwrap();
    assert!(saved.contains(ACCESS_TOKEN));

    // A second run uses the stored token: no browser, no new authorization request.
    let child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "call",
        &url,
        "echo",
        r#"{"text":"hi"}"#,
    ]);
    let out = finish(child);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
    assert!(!stderr.contains("http://"), "{stderr}");
    no_secret(&stdout);
    no_secret(&stderr);
    assert_eq!(authorize_requests(&server), 1);

    // An expired token in the file is refreshed first, still without a browser.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&token_file).unwrap()).unwrap();
    for bound in doc["resources"].as_object_mut().unwrap().values_mut() {
        bound["tokens"]["expires_at_ms"] = 1.into();
    }
    std::fs::write(&token_file, doc.to_string()).unwrap();
    let tokens_before = token_requests(&server);
    let out = finish(spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "list",
        &url,
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("http://"), "{stderr}");
    assert_eq!(token_requests(&server), tokens_before + 1);
    assert_eq!(authorize_requests(&server), 1);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&token_file).unwrap()).unwrap();
    let expiry = saved["resources"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["tokens"]["expires_at_ms"]
        .as_u64()
        .unwrap();
    assert!(expiry > 1, "the refreshed tokens were saved");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn forbidden(_: &Req) -> Reply {
    Reply::Send(
        b"HTTP/1.1 403 Forbidden\r\nwww-authenticate: Bearer error=\"invalid_token\"\r\ncontent-length: 0\r\n\r\n"
            .to_vec(),
    )
}

#[test]
fn a_plain_403_never_starts_an_authorization() {
    let server = support::Server::start(forbidden);
    let child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--json",
        "list",
        &server.url(),
    ]);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(4));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["type"], "mcp_authentication_failed_error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("open this URL"), "{stderr}");
    assert!(server
        .requests()
        .iter()
        .all(|r| !r.head.contains("/.well-known/")));
}

#[test]
fn without_oauth_a_401_is_the_authentication_error_it_always_was() {
    let server = oauth::start(oauth::modern_answer);
    let child = spawn(&["--allow-loopback", "--json", "list", &server.url()]);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(4));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["type"], "mcp_authentication_failed_error");
    assert!(server
        .requests()
        .iter()
        .all(|r| r.head.starts_with("POST /mcp")));
}

/// The directory `mcp-probe-oauth-{name}-{pid}` in the temporary one, created.
fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-probe-oauth-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Spawns the probe listing `url` with `--oauth`, recording into `record`.
fn spawn_recording(record: &std::path::Path, url: &str) -> Child {
    spawn(&[
        "--allow-loopback",
        "--oauth",
        "--record",
        record.to_str().unwrap(),
        "list",
        url,
    ])
}

#[test]
fn record_with_oauth_records_the_authorization_too_without_a_secret() {
    use mcp_sansio_transcript::{replay_auth, AuthTranscript, Transcript};
    let server = oauth::start(oauth::modern_answer);
    let dir = scratch_dir("rec");
    let record = dir.join("s.transcript");
    let url = server.url();
    let mut child = spawn_recording(&record, &url);
    let stderr = play_browser(&mut child);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let auth_text = std::fs::read_to_string(dir.join("s.transcript.auth")).unwrap();
    no_secret(&auth_text);
    let t = AuthTranscript::parse(&auth_text).unwrap();
    assert!(
        t.comments[0].starts_with("mcp-probe --oauth"),
        "{auth_text}"
    );
    let r = replay_auth(&t).unwrap();
    r.check(&t).unwrap();
    assert!(r.has_bearer);
    assert!(r.events.iter().any(|e| e.get("authorized").is_some()));
    // The MCP sessions are still recorded in the file given, also without a secret.
    let session = std::fs::read_to_string(&record).unwrap();
    no_secret(&session);
    Transcript::parse(&session).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--record FILE` with `--oauth` writes the authorization's transcript to `FILE.auth`, never
/// through a symbolic link: a link planted there is refused with an error naming it, the run
/// fails before any authorization, and the file the link points to is left as it was.
#[cfg(unix)]
#[test]
fn record_refuses_a_symlink_at_file_auth_and_leaves_its_target_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let server = oauth::start(oauth::modern_answer);
    let dir = scratch_dir("link");
    let target = dir.join("precious");
    std::fs::write(&target, "do not overwrite").unwrap();
    let record = dir.join("s.transcript");
    std::os::unix::fs::symlink(&target, dir.join("s.transcript.auth")).unwrap();
    let url = server.url();
    let mut child = spawn_recording(&record, &url);
    // It fails at once; a probe that went on to authorize waits for a browser: stop it.
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = finish(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("symbolic link") && stderr.contains("s.transcript.auth"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "do not overwrite"
    );
    assert_eq!(authorize_requests(&server), 0);
    assert_eq!(token_requests(&server), 0);
    // The session transcript it did create is its owner's only.
    let mode = std::fs::metadata(&record).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    std::fs::remove_dir_all(&dir).unwrap();
}
