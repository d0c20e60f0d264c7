//! `mcp-probe --oauth --token-file`: one token file, two servers. A token obtained for server A
//! is never sent to server B, nor refreshed for B when B names A's authorization server; and
//! the callback listener drops a connection that trickles its request, so the browser's
//! redirect still gets through.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use support::oauth::{self, get, pairs, spawn, ACCESS_TOKEN};
use support::{json_response, Reply, Req, Server};

/// Reads the probe's stderr until it prints an authorization URL (returned) or ends (`None`);
/// the rest of stderr is drained by a thread that ends with the probe.
fn authorization_url(child: &mut Child) -> Option<String> {
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    loop {
        let mut l = String::new();
        if lines.read_line(&mut l).unwrap_or(0) == 0 {
            return None;
        }
        if let Some(u) = l.trim().strip_prefix("http://") {
            std::thread::spawn(move || {
                let mut rest = Vec::new();
                let _ = lines.read_to_end(&mut rest);
            });
            return Some(format!("http://{u}"));
        }
    }
}

/// Authorizes `mcp-probe` against `a` into `token_file` (the test plays the browser).
fn authorize_at(a: &Server, token_file: &str) {
    let mut child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        token_file,
        "list",
        &a.url(),
    ]);
    let url = authorization_url(&mut child).expect("an authorization URL");
    let (_, location) = get(&url, Duration::from_secs(10));
    let (status, _) = get(&location.expect("a redirect"), Duration::from_secs(10));
    assert!(status.contains(" 200 "), "{status}");
    assert!(child.wait().unwrap().success());
    assert!(std::fs::read_to_string(token_file)
        .unwrap()
        .contains(ACCESS_TOKEN));
}

fn bearer_seen(s: &Server) -> bool {
    s.requests().iter().any(|r| {
        r.head
            .to_ascii_lowercase()
            .contains("authorization: bearer")
    })
}

fn refresh_grants(s: &Server) -> usize {
    s.requests()
        .iter()
        .filter(|r| {
            r.head.starts_with("POST /token")
                && pairs(&String::from_utf8_lossy(&r.body)).get("grant_type")
                    == Some(&"refresh_token".to_owned())
        })
        .count()
}

/// A hostile server B: every MCP request is answered 401; its protected-resource metadata, when
/// `issuer` is given, names that authorization server (server A's).
fn hostile(issuer: Option<String>) -> Server {
    let base: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let b = base.clone();
    let server = Server::start(move |req: &Req| {
        let base = b.get().cloned().unwrap_or_default();
        let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
        if req
            .head
            .starts_with("GET /.well-known/oauth-protected-resource/mcp ")
        {
            if let Some(issuer) = &issuer {
                let body = serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [issuer]});
                return Reply::Send(json_response(200, &body.to_string()));
            }
        }
        if req.head.contains(" /mcp ") {
            let challenge = match issuer {
                Some(_) => format!("Bearer resource_metadata=\"{prm}\""),
                None => "Bearer".to_owned(),
            };
            return Reply::Send(
                format!("HTTP/1.1 401 Unauthorized\r\nwww-authenticate: {challenge}\r\ncontent-length: 0\r\n\r\n")
                    .into_bytes(),
            );
        }
        Reply::Send(json_response(404, "{}"))
    });
    let _ = base.set(format!("http://127.0.0.1:{}", server.port()));
    server
}

fn temp_file(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "mcp-probe-oauth-binding-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens.json");
    let _ = std::fs::remove_file(&file);
    (dir, file)
}

#[test]
fn a_token_for_server_a_is_never_sent_to_server_b() {
    let a = oauth::start(oauth::modern_answer);
    let (dir, file) = temp_file("passive");
    let tf = file.to_str().unwrap();
    authorize_at(&a, tf);
    let b = hostile(None);
    let out = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "list",
        &b.url(),
    ])
    .wait_with_output()
    .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(!bearer_seen(&b), "server A's token reached server B");
    // Server A's token is still in the file for server A.
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains(ACCESS_TOKEN));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn server_b_naming_server_as_authorization_server_gets_no_refresh() {
    let a = oauth::start(oauth::modern_answer);
    let (dir, file) = temp_file("refresh");
    let tf = file.to_str().unwrap();
    authorize_at(&a, tf);
    let b = hostile(Some(format!("http://127.0.0.1:{}", a.port())));
    let mut child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "list",
        &b.url(),
    ]);
    // The probe asks for server B's own authorization (or, on failure, ends): either way, no
    // browser is played here.
    let url = authorization_url(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        refresh_grants(&a),
        0,
        "server A's token was refreshed for server B"
    );
    assert!(!bearer_seen(&b), "a token of server A reached server B");
    let url = url.expect("an authorization URL for server B");
    let q = pairs(url.split_once('?').unwrap().1);
    assert_eq!(q.get("resource"), Some(&b.url()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_connection_that_trickles_does_not_hold_the_callback_listener() {
    let a = oauth::start(oauth::modern_answer);
    let (dir, file) = temp_file("trickle");
    let tf = file.to_str().unwrap();
    let mut child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "list",
        &a.url(),
    ]);
    let url = authorization_url(&mut child).expect("an authorization URL");
    let q = pairs(url.split_once('?').unwrap().1);
    let redirect = q.get("redirect_uri").unwrap().clone();
    let callback = redirect
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    // A local process connects to the callback and sends one byte a second, for a minute.
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let trickler = std::thread::spawn(move || {
        let mut t = TcpStream::connect(&callback).unwrap();
        for _ in 0..60 {
            if s.load(Ordering::SeqCst) || t.write_all(b"G").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let (_, location) = get(&url, Duration::from_secs(10));
    let (status, _) = get(&location.expect("a redirect"), Duration::from_secs(40));
    let elapsed = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    trickler.join().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(status.contains(" 200 "), "{status}");
    assert!(
        elapsed < Duration::from_secs(25),
        "the browser's redirect waited {elapsed:?} behind a trickling connection"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_answer_on_another_authorization_servers_callback_path_stops_the_authorization() {
    // The authorization server does not send `iss`: its redirect URI has a path of its own.
    // An answer with the right state arriving on the plain callback path (where an honest
    // server's answer would come back after a mix-up) is refused, and no code is redeemed.
    let h = oauth::start_without_iss(oauth::modern_answer);
    let (dir, file) = temp_file("mixup");
    let tf = file.to_str().unwrap();
    let mut child = spawn(&[
        "--allow-loopback",
        "--oauth",
        "--token-file",
        tf,
        "list",
        &h.url(),
    ]);
    let url = authorization_url(&mut child).expect("an authorization URL");
    let (_, location) = get(&url, Duration::from_secs(10));
    let location = location.expect("a redirect");
    let (own, query) = location.split_once('?').unwrap();
    assert!(
        own.contains("/callback/"),
        "a redirect URI of its own: {own}"
    );
    let elsewhere = format!("{}?{query}", own.rsplit_once('/').unwrap().0);
    let (status, _) = get(&elsewhere, Duration::from_secs(10));
    let code = child.wait().unwrap().code();
    assert!(!status.contains(" 200 "), "{status}");
    assert_eq!(code, Some(4));
    assert_eq!(
        h.requests()
            .iter()
            .filter(|r| r.head.starts_with("POST /token"))
            .count(),
        0,
        "the code was redeemed"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
