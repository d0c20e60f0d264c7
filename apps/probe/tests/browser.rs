//! `mcp-probe --oauth` with a real browser: headless Chromium is the probe's `$BROWSER`. It
//! opens the authorization URL of the project's test authorization server
//! (`checks/support/src/auth_server.rs`), follows its redirect to the probe's `127.0.0.1`
//! callback and renders the page the probe answers; the test reads the DOM it ends on.
//!
//! Chromium is required: `MCP_SANSIO_CHROMIUM` names its binary, else `chromium` (Debian's
//! package, which `.ci/run` installs) or `chromium-browser` on the `PATH`. Without it the tests
//! fail; they never skip.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_sansio_test_support::auth_server::{pairs, AuthServer, Mode};

/// How long one connection to the probe's callback listener may take (the probe's
/// `CALLBACK_CONNECTION_TIME`): before the listener served connections at once, each idle one
/// delayed the callback by this much.
const CALLBACK_CONNECTION_TIME: Duration = Duration::from_secs(5);

/// The most a run of the probe with the browser may take on a loaded machine.
const RUN_LIMIT: Duration = Duration::from_secs(90);

/// The Chromium binary: `MCP_SANSIO_CHROMIUM`, else `chromium` or `chromium-browser` on the
/// `PATH`. Panics (the test fails) when there is none.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("MCP_SANSIO_CHROMIUM").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "MCP_SANSIO_CHROMIUM={} is not a file",
            p.display()
        );
        return p;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "these tests need headless Chromium: install Debian's `chromium` package or set \
         MCP_SANSIO_CHROMIUM to its binary"
    );
}

/// Quotes `s` for a POSIX shell.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A `$BROWSER` for the probe: a script running headless Chromium on the URL it is given,
/// saving the DOM of the page it ends on (after the redirects) in its directory.
struct HeadlessBrowser {
    dir: PathBuf,
}

impl HeadlessBrowser {
    /// A browser in a fresh directory named after `name`; when `gated`, it waits for
    /// [`HeadlessBrowser::release`] before it opens the URL (at most a minute).
    fn new(name: &str, gated: bool) -> HeadlessBrowser {
        let dir =
            std::env::temp_dir().join(format!("mcp-probe-browser-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let d = sh_quote(dir.to_str().unwrap());
        let chromium = sh_quote(chromium().to_str().unwrap());
        let gate = if gated {
            format!(
                "i=0; while [ ! -e {d}/go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
            )
        } else {
            String::new()
        };
        let script = format!(
            "#!/bin/sh\n\
             {gate}\
             timeout -k 5 60 {chromium} --headless=new --no-sandbox --disable-gpu \
             --disable-dev-shm-usage --no-first-run --no-default-browser-check \
             --user-data-dir={d}/profile --dump-dom \"$1\" > {d}/dom.tmp 2> {d}/chromium.log\n\
             echo $? > {d}/status\n\
             mv {d}/dom.tmp {d}/dom.html\n"
        );
        let path = dir.join("browser.sh");
        std::fs::write(&path, script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        HeadlessBrowser { dir }
    }

    fn script(&self) -> PathBuf {
        self.dir.join("browser.sh")
    }

    /// Lets a gated browser open its URL.
    fn release(&self) {
        std::fs::write(self.dir.join("go"), b"").unwrap();
    }

    /// The DOM the browser ended on, once it has exited (at most `within`).
    fn dom(&self, within: Duration) -> String {
        let start = Instant::now();
        let dom = self.dir.join("dom.html");
        while !dom.exists() {
            if start.elapsed() > within {
                panic!(
                    "the browser did not finish within {within:?}; its log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = std::fs::read_to_string(self.dir.join("status")).unwrap_or_default();
        assert_eq!(status.trim(), "0", "chromium failed: {}", self.log());
        std::fs::read_to_string(dom).unwrap()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("chromium.log")).unwrap_or_default()
    }
}

impl Drop for HeadlessBrowser {
    fn drop(&mut self) {
        // A gated browser still waiting gives up at once. A failed test keeps the DOM and the
        // log, not the profile.
        let _ = std::fs::write(self.dir.join("go"), b"");
        if std::thread::panicking() {
            let _ = std::fs::remove_dir_all(self.dir.join("profile"));
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A run of `mcp-probe --allow-loopback --json --oauth list URL` with `browser` as `$BROWSER`.
struct Run {
    child: Child,
    /// The probe's stderr, line by line.
    lines: mpsc::Receiver<String>,
    stderr: String,
}

impl Run {
    fn start(url: &str, browser: &HeadlessBrowser) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
            .args(["--allow-loopback", "--json", "--oauth", "list", url])
            .env_remove("MCP_BEARER_TOKEN")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("BROWSER", browser.script())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Run {
            child,
            lines,
            stderr: String::new(),
        }
    }

    /// The authorization URL the probe printed.
    fn authorization_url(&mut self) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(RUN_LIMIT)
                .unwrap_or_else(|_| panic!("no authorization URL printed: {}", self.stderr));
            self.stderr.push_str(&line);
            self.stderr.push('\n');
            if let Some(u) = line.trim().strip_prefix("http://") {
                return format!("http://{u}");
            }
        }
    }

    /// Waits for the probe to exit (killed, and the test failed, after [`RUN_LIMIT`]): its
    /// exit code, stdout and stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > RUN_LIMIT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("mcp-probe still ran after {RUN_LIMIT:?}: {}", self.stderr);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stdout = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stderr.push_str(&line);
            self.stderr.push('\n');
        }
        (status.code(), stdout, self.stderr)
    }
}

/// Whether the authorization endpoint was visited by Chromium (its `User-Agent`), not by the
/// probe or the test.
fn chromium_authorized(server: &AuthServer) -> bool {
    server.seen().iter().any(|s| {
        s.target.starts_with("/authorize?")
            && s.header("user-agent")
                .is_some_and(|ua| ua.contains("Chrome/"))
    })
}

/// The text between `<title>` and `</title>` of `dom`.
fn title(dom: &str) -> &str {
    let start = dom.find("<title>").map_or(0, |i| i + "<title>".len());
    let end = dom[start..].find("</title>").map_or(start, |i| start + i);
    &dom[start..end]
}

/// RFC 8252 §7.3: the browser follows the authorization server's redirect to the loopback
/// redirect URI, the probe redeems the code and lists; the page the browser ends on says the
/// authorization was received and holds neither the code nor `state`.
#[test]
fn a_real_browser_completes_the_flow_and_ends_on_the_success_page() {
    let server = AuthServer::start(Mode::Normal);
    let browser = HeadlessBrowser::new("ok", false);
    let mut run = Run::start(&server.url(), &browser);
    let url = run.authorization_url();
    let state = pairs(url.split_once('?').unwrap().1)["state"].clone();
    let (code, stdout, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(doc["tools"][0]["name"], "echo", "{stdout}");
    assert!(chromium_authorized(&server), "{:?}", server.seen());
    assert_eq!(server.count("POST", "/token"), 1);

    let dom = browser.dom(RUN_LIMIT);
    assert_eq!(title(&dom), "mcp-probe: Authorization received", "{dom}");
    assert!(dom.contains("<h1>Authorization received</h1>"), "{dom}");
    assert!(dom.contains("You can close this window."), "{dom}");
    assert!(!dom.contains("the-code"), "the code on the page: {dom}");
    assert!(!dom.contains(&state), "the state on the page: {dom}");
}

/// RFC 6749 §4.1.2.1: the user denies consent and the authorization server redirects with
/// `error` and `error_description`. The probe fails with the authorization error (exit 4,
/// `mcp_authentication_failed_error`) without a token request, and the browser shows the
/// error page with the server's text escaped: its markup is text, not elements, and its script
/// never runs.
#[test]
fn a_denied_consent_ends_on_the_error_page_with_the_servers_text_escaped() {
    let server = AuthServer::start(Mode::Normal);
    server.deny_consent(
        "<em>access_denied</em>",
        "<b>Alice</b> said no & <script>document.title='pwned'</script>",
    );
    let browser = HeadlessBrowser::new("denied", false);
    let mut run = Run::start(&server.url(), &browser);
    run.authorization_url();
    let (code, stdout, stderr) = run.finish();
    assert_eq!(code, Some(4), "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(doc["error"]["type"], "mcp_authentication_failed_error");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("authorization denied"), "{stdout}");
    assert!(message.contains("access_denied"), "{stdout}");
    assert!(chromium_authorized(&server), "{:?}", server.seen());
    assert_eq!(server.count("POST", "/token"), 0);

    let dom = browser.dom(RUN_LIMIT);
    assert_eq!(title(&dom), "mcp-probe: Authorization denied", "{dom}");
    assert!(dom.contains("<h1>Authorization denied</h1>"), "{dom}");
    // The browser's serialization of text nodes: `&`, `<` and `>` as references.
    assert!(
        dom.contains("&lt;em&gt;access_denied&lt;/em&gt;"),
        "the error as text: {dom}"
    );
    assert!(
        dom.contains("&lt;b&gt;Alice&lt;/b&gt; said no &amp; &lt;script&gt;"),
        "the description as text: {dom}"
    );
    assert!(
        !dom.contains("<em>") && !dom.contains("<b>"),
        "markup: {dom}"
    );
    assert!(!dom.contains("<script>"), "a script element: {dom}");
}

/// A browser's speculative connections (idle) and its `/favicon.ico` reach the callback
/// listener before the redirect does: the favicon gets a 404 at once, and the flow completes
/// promptly, well under the time the listener gives one connection.
#[test]
fn idle_connections_and_a_favicon_request_do_not_stall_the_callback() {
    let server = AuthServer::start(Mode::Normal);
    let browser = HeadlessBrowser::new("spec", true);
    let mut run = Run::start(&server.url(), &browser);
    let url = run.authorization_url();
    let redirect = pairs(url.split_once('?').unwrap().1)["redirect_uri"].clone();
    let authority = redirect
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_owned();
    assert!(authority.starts_with("127.0.0.1:"), "{redirect}");

    // Three connections that never send a byte, then a favicon request.
    let idle: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(&authority).unwrap())
        .collect();
    let asked = Instant::now();
    let mut favicon = TcpStream::connect(&authority).unwrap();
    favicon
        .set_read_timeout(Some(CALLBACK_CONNECTION_TIME))
        .unwrap();
    write!(
        favicon,
        "GET /favicon.ico HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = favicon.read_to_string(&mut answer);
    let took = asked.elapsed();
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer:?}");
    assert!(took < CALLBACK_CONNECTION_TIME / 2, "the 404 took {took:?}");

    // Now the browser comes back, the idle connections still open.
    browser.release();
    let start = Instant::now();
    while server.count("GET", "/authorize") == 0 && start.elapsed() < RUN_LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    let redirected = Instant::now();
    let (code, stdout, stderr) = run.finish();
    let after_redirect = redirected.elapsed();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(doc["tools"][0]["name"], "echo", "{stdout}");
    assert!(chromium_authorized(&server), "{:?}", server.seen());
    assert!(
        after_redirect < CALLBACK_CONNECTION_TIME / 2,
        "from the redirect to the listing: {after_redirect:?}"
    );
    let dom = browser.dom(RUN_LIMIT);
    assert!(dom.contains("<h1>Authorization received</h1>"), "{dom}");
    drop(idle);
}
