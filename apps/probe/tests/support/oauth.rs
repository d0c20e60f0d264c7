//! A protected MCP server and its authorization server on one loopback port, for the
//! `--oauth` tests: the MCP endpoint answers 401 with `resource_metadata` until it sees the
//! token it issued; the protected-resource and authorization-server metadata, dynamic
//! registration, an authorization endpoint that redirects at once (no login page), and a token
//! endpoint that checks the PKCE verifier against the challenge it was shown.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::{json_response, modern, Reply, Req, Server};

/// The access token the token endpoint issues.
pub const ACCESS_TOKEN: &str = "secret-access-token-3f9a";
/// The refresh token the token endpoint issues.
pub const REFRESH_TOKEN: &str = "secret-refresh-token-77c1";
/// The authorization code the authorization endpoint issues.
pub const CODE: &str = "secret-code-12ab";

/// What the authorization server was shown.
#[derive(Default)]
struct Seen {
    challenge: Option<String>,
}

/// Decodes `%XX` and `+` in a query value.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes everything but unreserved characters.
pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
                (c as char).to_string()
            } else {
                format!("%{c:02X}")
            }
        })
        .collect()
}

/// The `name=value` pairs of a query or form body, decoded.
pub fn pairs(q: &str) -> BTreeMap<String, String> {
    q.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (percent_decode(k), percent_decode(v)))
        .collect()
}

/// The method and request target of a request.
fn line(req: &Req) -> (String, String) {
    let first = req.head.lines().next().unwrap_or("");
    let mut parts = first.split(' ');
    (
        parts.next().unwrap_or("").to_owned(),
        parts.next().unwrap_or("").to_owned(),
    )
}

fn header<'a>(req: &'a Req, name: &str) -> Option<&'a str> {
    req.head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn json(status: u16, body: serde_json::Value) -> Reply {
    Reply::Send(json_response(status, &body.to_string()))
}

/// Starts the server. `mcp_answer` answers MCP requests that carry the issued token.
pub fn start(mcp_answer: fn(&Req) -> Reply) -> Server {
    start_with(mcp_answer, true)
}

/// As [`start`], with an authorization server that neither advertises nor sends `iss`
/// (RFC 9207).
pub fn start_without_iss(mcp_answer: fn(&Req) -> Reply) -> Server {
    start_with(mcp_answer, false)
}

fn start_with(mcp_answer: fn(&Req) -> Reply, iss: bool) -> Server {
    let base: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let b = base.clone();
    let server = Server::start(move |req| {
        let base = b.get().cloned().unwrap_or_default();
        let (method, target) = line(req);
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        match (method.as_str(), path) {
            ("POST", "/mcp") | ("GET", "/mcp") | ("DELETE", "/mcp") => {
                if header(req, "authorization") == Some(&format!("Bearer {ACCESS_TOKEN}")) {
                    return mcp_answer(req);
                }
                let challenge = format!(
                    "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                );
                let body = r#"{"error":"invalid_token"}"#;
                Reply::Send(
                    format!(
                        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: {challenge}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .into_bytes(),
                )
            }
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json(
                200,
                serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => json(
                200,
                serde_json::json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "authorization_response_iss_parameter_supported": iss,
                }),
            ),
            ("POST", "/register") => json(
                201,
                serde_json::json!({"client_id": "probe-client", "token_endpoint_auth_method": "none"}),
            ),
            ("GET", "/authorize") => {
                let q = pairs(query);
                seen.lock().unwrap().challenge = q.get("code_challenge").cloned();
                let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
                let state = q.get("state").cloned().unwrap_or_default();
                let mut location =
                    format!("{redirect}?code={CODE}&state={}", percent_encode(&state));
                if iss {
                    location.push_str(&format!("&iss={}", percent_encode(&base)));
                }
                Reply::Send(
                    format!(
                        "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
                    )
                    .into_bytes(),
                )
            }
            ("POST", "/token") => {
                let form = pairs(&String::from_utf8_lossy(&req.body));
                let grant = form.get("grant_type").map(String::as_str);
                let ok = match grant {
                    Some("authorization_code") => {
                        let want = seen.lock().unwrap().challenge.clone();
                        let got = form
                            .get("code_verifier")
                            .map(|v| mcp_sansio::internals::auth::pkce_challenge(v));
                        form.get("code").map(String::as_str) == Some(CODE)
                            && want.is_some()
                            && want == got
                    }
                    Some("refresh_token") => {
                        form.get("refresh_token").map(String::as_str) == Some(REFRESH_TOKEN)
                    }
                    _ => false,
                };
                if !ok {
                    return json(400, serde_json::json!({"error": "invalid_grant"}));
                }
                json(
                    200,
                    serde_json::json!({
                        "access_token": ACCESS_TOKEN,
                        "token_type": "Bearer",
                        "expires_in": 3600,
                        "refresh_token": REFRESH_TOKEN,
                    }),
                )
            }
            _ => json(404, serde_json::json!({"error": "not_found"})),
        }
    });
    let _ = base.set(format!("http://127.0.0.1:{}", server.port()));
    server
}

/// The modern MCP answers of the shared support.
pub fn modern_answer(req: &Req) -> Reply {
    modern(req)
}

/// Starts `mcp-probe` with `args`, its stdout and stderr piped, with no token in its environment
/// and no browser it could open.
pub fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("BROWSER")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// A browser's GET of an `http://127.0.0.1:PORT/...` URL, waiting at most `wait` for each read;
/// returns the status line and the `Location`.
pub fn get(url: &str, wait: Duration) -> (String, Option<String>) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&b[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.lines().next().unwrap_or("").to_owned();
    let location = head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case("location")
            .then(|| v.trim().to_owned())
    });
    (status, location)
}
