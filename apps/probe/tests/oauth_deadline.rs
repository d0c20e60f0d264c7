//! `mcp-probe --oauth` ends within `--request-timeout` when the metadata URL a 401 names
//! trickles its TLS handshake or a TLS record of its body: exit 4 with the JSON error document,
//! not a process still running long after the deadline.

use mcp_sansio_test_support::trickle;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trickle::{Challenger, Trickle, Trickler};

/// `--request-timeout`, in seconds.
const REQUEST_TIMEOUT: u64 = 2;

/// What a loaded machine may add to it.
const GRACE: Duration = Duration::from_secs(6);

/// Runs `mcp-probe --json --oauth list` against an MCP endpoint whose 401 names `server`'s
/// metadata URL; its exit code, stdout and run time. Killed (and the test failed) if it is
/// still running long after the deadline.
fn probe_against(server: &Trickler, ca_pem: Option<&str>) -> (i32, String, Duration) {
    let challenger = Challenger::start(server.metadata_url());
    let dir = std::env::temp_dir().join(format!(
        "mcp-probe-oauth-deadline-{}-{}",
        std::process::id(),
        server.port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args: Vec<String> = vec![
        "--json".into(),
        "--oauth".into(),
        "--allow-loopback".into(),
        "--request-timeout".into(),
        REQUEST_TIMEOUT.to_string(),
    ];
    if let Some(pem) = ca_pem {
        let path = dir.join("ca.pem");
        std::fs::write(&path, pem).unwrap();
        args.push("--ca-cert".into());
        args.push(path.display().to_string());
    }
    args.push("list".into());
    args.push(challenger.url());
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(&args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("BROWSER")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let limit = Duration::from_secs(REQUEST_TIMEOUT) + GRACE * 2;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&dir);
            panic!("mcp-probe was still running {limit:?} after it started");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = start.elapsed();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (status.code().unwrap_or(-1), stdout, took)
}

fn check((code, stdout, took): (i32, String, Duration)) {
    assert!(code == 4 || code == 3, "exit {code}: {stdout}");
    let doc: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
    let kind = doc["error"]["type"].as_str().unwrap_or("");
    assert!(
        kind == "mcp_authentication_failed_error" || kind == "mcp_connection_failed_error",
        "{stdout}"
    );
    assert!(
        took < Duration::from_secs(REQUEST_TIMEOUT) + GRACE,
        "took {took:?}: {stdout}"
    );
}

#[test]
fn a_metadata_url_trickling_its_tls_handshake_ends_the_probe_within_the_request_timeout() {
    let server = Trickler::start(Trickle::Handshake);
    check(probe_against(&server, None));
    assert!(server.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}

#[test]
fn a_metadata_url_trickling_its_body_ends_the_probe_within_the_request_timeout() {
    let rcgen::CertifiedKey { cert, key_pair } =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let server = Trickler::start(Trickle::TlsBody {
        cert: cert.der().to_vec(),
        key: key_pair.serialize_der(),
    });
    check(probe_against(&server, Some(&cert.pem())));
    assert!(server.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}
