//! `mcp-probe` over HTTP/2: a scripted HTTP/2 server on 127.0.0.1 (the core's frame codec and
//! HPACK, from the core's test support), over TLS with ALPN `h2` and in clear text with prior
//! knowledge; `http_version` in the JSON documents; `--http1`.

use mcp_sansio_test_support::h2server;
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use h2server::{hello, result, H2Peer, SeenRequest};
use serde_json::Value;
use support::{probe, PrivateCa, DISCOVER_OK};

const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;
const CALLED: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

/// A modern MCP server over HTTP/2, plain or TLS; it records the requests it answered.
struct H2Server {
    port: u16,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
}

impl H2Server {
    fn start(tls: Option<Arc<rustls::ServerConfig>>) -> H2Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { return };
                let (tls, seen) = (tls.clone(), seen.clone());
                std::thread::spawn(move || match tls {
                    Some(config) => {
                        if let Ok(conn) = rustls::ServerConnection::new(config) {
                            serve(rustls::StreamOwned::new(conn, tcp), &seen);
                        }
                    }
                    None => serve(tcp, &seen),
                });
            }
        });
        H2Server { port, requests }
    }

    fn methods(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        requests.iter().map(SeenRequest::rpc_method).collect()
    }
}

fn serve(mut stream: impl Read + Write, seen: &Mutex<Vec<SeenRequest>>) {
    let mut peer = H2Peer::default();
    if stream.write_all(&hello()).is_err() {
        return;
    }
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        // Bytes that are not HTTP/2 end the connection.
        let Ok(done) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| peer.read(&buf[..n])))
        else {
            return;
        };
        for req in done {
            let body = match req.rpc_method().as_str() {
                "server/discover" => result(req.rpc_id(), DISCOVER_OK),
                "tools/list" => result(req.rpc_id(), TOOLS),
                "tools/call" => result(req.rpc_id(), CALLED),
                _ => result(req.rpc_id(), "{}"),
            };
            let answer = peer.json(req.stream, &body);
            seen.lock().unwrap().push(req);
            if stream
                .write_all(&answer)
                .and_then(|()| stream.flush())
                .is_err()
            {
                return;
            }
        }
    }
}

/// Checks that the probe exited with `code`, showing its stderr when it did not.
fn exits(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The CA file and an HTTPS server choosing among `alpn`.
fn tls(alpn: &[&[u8]], test: &str) -> (std::path::PathBuf, H2Server) {
    let ca = PrivateCa::new();
    let mut config = (*ca.server).clone();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let dir = std::env::temp_dir().join(format!("mcp-probe-h2-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ca.pem");
    std::fs::write(&path, &ca.ca_pem).unwrap();
    (path, H2Server::start(Some(Arc::new(config))))
}

#[test]
fn list_and_call_over_alpn_h2_report_http2() {
    let (ca, server) = tls(&[b"h2", b"http/1.1"], "alpn");
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let ca = ca.to_str().unwrap();
    let common = ["--json", "--allow-loopback", "--ca-cert", ca];
    let o = probe(&[&common[..], &["list", &url]].concat());
    exits(&o, 0);
    let doc = json(&o);
    assert_eq!(doc["http_version"], "HTTP/2");
    assert_eq!(doc["tools"][0]["name"], "echo");
    let o = probe(&[&common[..], &["call", &url, "echo", "{}"]].concat());
    exits(&o, 0);
    let doc = json(&o);
    assert_eq!(doc["http_version"], "HTTP/2");
    assert_eq!(doc["content"][0]["text"], "hi");
    assert_eq!(
        server.methods(),
        [
            "server/discover",
            "tools/list",
            "server/discover",
            "tools/call"
        ]
    );
}

#[test]
fn http1_offers_no_h2_and_h2c_speaks_http2_in_clear_text() {
    // An h2-only server refuses the handshake of --http1: a connection failure (exit 3).
    let (ca, server) = tls(&[b"h2"], "http1");
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let ca = ca.to_str().unwrap();
    let args = ["--json", "--http1", "--allow-loopback", "--ca-cert", ca];
    let o = probe(&[&args[..], &["list", &url]].concat());
    exits(&o, 3);
    assert_eq!(json(&o)["error"]["type"], "mcp_connection_failed_error");
    assert!(server.methods().is_empty());

    let plain = H2Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", plain.port);
    let o = probe(&["--json", "--h2c", "--allow-loopback", "list", &url]);
    exits(&o, 0);
    assert_eq!(json(&o)["http_version"], "HTTP/2");
    let seen = plain.requests.lock().unwrap();
    assert_eq!(seen[0].header(":scheme"), Some("http"));
    drop(seen);
    // Without --h2c the HTTP/2 server cannot read the HTTP/1.1 request.
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--request-timeout",
        "2",
        "list",
        &url,
    ]);
    exits(&o, 3);
}

#[test]
fn record_over_h2c_writes_an_http2_transcript_that_replays() {
    use mcp_sansio_transcript::{replay, Split, Transcript};
    let server = H2Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let dir = std::env::temp_dir().join(format!("mcp-probe-h2-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("h2c.transcript");
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(["--json", "--h2c", "--allow-loopback", "--record"])
        .arg(&file)
        .args(["call", &url, "echo", "{}"])
        .env("MCP_BEARER_TOKEN", "h2-s3cret-token")
        .output()
        .expect("the binary runs");
    exits(&o, 0);
    let doc = json(&o);
    assert_eq!(doc["http_version"], "HTTP/2");
    assert_eq!(doc["content"][0]["text"], "hi");
    assert_eq!(server.methods(), ["server/discover", "tools/call"]);
    assert_eq!(
        server.requests.lock().unwrap()[0].header("authorization"),
        Some("Bearer h2-s3cret-token"),
        "the token was sent"
    );

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("config http 2 http\n"), "{text}");
    assert!(!text.contains("h2-s3cret-token"), "the token is redacted");
    assert!(text.contains("Bearer <redacted>"));
    let transcript = Transcript::parse(&text).unwrap();
    let outcome = transcript.outcome();
    assert!(
        outcome
            .iter()
            .any(|e| e["call_finished"]["content"][0]["text"] == "hi"),
        "{outcome:?}"
    );
    // The recorded HTTP/2 session replays against the core with the same outcome and the same
    // frames written, whole and one byte at a time.
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        let r = replay(&transcript, split).unwrap();
        assert!(r.sends.is_empty(), "no HTTP/1.1 request");
        assert_eq!(r.recording.outcome(), outcome, "{split:?}");
        r.check(&transcript).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
