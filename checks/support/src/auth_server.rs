//! A protected MCP server and its authorization server on one loopback port, shared by the
//! authorization tests of mcp-sansio-net, mcp-sansio-tokio and mcp-sansio-blocking (through the
//! test-support crate). The MCP endpoint answers 401 with `resource_metadata` until it sees a token
//! the token endpoint issued; `tools/call` needs the `write` scope (403 `insufficient_scope`
//! otherwise). The authorization endpoint redirects at once; the token endpoint checks PKCE.
//! In the legacy modes the MCP endpoint speaks the legacy era instead: `server/discover` is an
//! unknown method, `initialize` gives a new `Mcp-Session-Id` (`sess-1`, `sess-2`…), every other
//! request must carry a live one, and `DELETE` ends it.
//! [`Browser`] plays the user agent: it GETs the authorization URL through an [`AuthHttp`] and
//! returns the query of the redirect.
//!
//! The token endpoint also serves the grants without a user agent ([`m2m`] names the
//! credentials): `client_credentials` for client `m2m-client` authenticated with
//! `client_secret_basic` or `client_secret_post` (secret `m2m-secret`) or `private_key_jwt`
//! (an ES256 assertion verified with the public key given to [`AuthServer::trust_client_key`]:
//! `iss` and `sub` the client ID, `aud` this issuer, `exp` after `iat`, each `jti` once); the
//! JWT bearer grant with an assertion whose `aud` is this issuer (`sub` `denied` is answered
//! `invalid_grant`); and at `/idp/token` an identity provider's token exchange of the ID token
//! [`m2m::ID_TOKEN`] for an identity assertion grant for this issuer and resource.
//!
//! In the modern modes, a `tools/call` of [`TASK_TOOL`] that declares the tasks extension
//! (SEP-2663) creates a task (`t-1`, `t-2`…): its first `tasks/get` reports `working`, the next
//! ones `completed` with the text `done`; `tasks/cancel` acknowledges and the next poll reports
//! `cancelled`; an unknown task id is `-32602`.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::auth::CredentialStore;
use mcp_sansio::Endpoint;
use mcp_sansio_net::auth::{AuthHook, AuthHttp};

/// How the server misbehaves, if at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// As described in the module docs.
    #[default]
    Normal,
    /// The MCP endpoint answers a plain 403 (`invalid_token`) to everything.
    Forbidden,
    /// The token endpoint answers 307 to another path.
    TokenRedirect,
    /// The authorization-server metadata is 70 000 bytes long.
    HugeMetadata,
    /// The MCP endpoint is a legacy-era server with sessions.
    Legacy,
    /// As [`Mode::Legacy`], and every token issued by an authorization revokes the tokens
    /// issued before it (a request bearing one is answered 401).
    LegacyRevoking,
    /// As [`Mode::Legacy`], but only the first `initialize` succeeds: the others are answered
    /// 500.
    LegacyOneSession,
    /// Every `tools/call` needs one more scope than the last accepted one had (`c1`, then `c2`…):
    /// each call is refused 403 `insufficient_scope` once, then accepted after a step-up.
    EscalatingScope,
    /// A hostile resource ([`AuthServer::start_naming`]): its protected-resource metadata names
    /// another server's authorization server, so it never accepts a token (it issues none).
    NamesAnotherAuthorizationServer,
    /// DPoP (RFC 9449): a token request with a valid proof gets a `DPoP` token bound to the
    /// proof's key; the MCP endpoint accepts only `Authorization: DPoP` with a valid proof for
    /// that key (`htm`, `htu`, `ath`, a `jti` never seen before), and challenges with the `DPoP`
    /// scheme. A refused proof is recorded ([`AuthServer::refusal`]).
    Dpop,
    /// As [`Mode::Dpop`], and the MCP endpoint wants its nonce [`DPOP_NONCE`] in every proof:
    /// without it, `401` `use_dpop_nonce` with the nonce.
    DpopNonce,
    /// As [`Mode::Dpop`], and the MCP endpoint answers every request `401` `use_dpop_nonce`
    /// with a new nonce each time.
    DpopNonceForever,
}

/// The nonce of [`Mode::DpopNonce`].
pub const DPOP_NONCE: &str = "rs-nonce-7";

impl Mode {
    fn dpop(self) -> bool {
        matches!(self, Mode::Dpop | Mode::DpopNonce | Mode::DpopNonceForever)
    }

    fn legacy(self) -> bool {
        matches!(
            self,
            Mode::Legacy | Mode::LegacyRevoking | Mode::LegacyOneSession
        )
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `GET`, `POST`…
    pub method: String,
    /// The request target.
    pub target: String,
    /// The header block.
    pub head: String,
    /// The body.
    pub body: String,
}

impl Seen {
    /// The value of header `name`, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(self, name)
    }

    /// The JSON-RPC method of the body, if it is a JSON-RPC message.
    pub fn rpc_method(&self) -> Option<String> {
        let msg: serde_json::Value = serde_json::from_str(&self.body).ok()?;
        msg["method"].as_str().map(str::to_owned)
    }
}

#[derive(Default)]
struct State {
    /// The authorization server the protected-resource metadata names, when not this one.
    foreign_issuer: Option<String>,
    challenge: Option<String>,
    /// The `error` and `error_description` the authorization endpoint answers instead of a
    /// code ([`AuthServer::deny_consent`]).
    denial: Option<(String, String)>,
    /// Scope asked for by the last authorization request.
    scope: String,
    /// Issued tokens and their scopes.
    tokens: BTreeMap<String, String>,
    /// Tokens no longer accepted ([`Mode::LegacyRevoking`]).
    revoked: BTreeSet<String>,
    /// Legacy sessions issued so far.
    sessions_issued: usize,
    /// Calls accepted so far ([`Mode::EscalatingScope`]).
    calls_accepted: usize,
    /// Legacy sessions not ended.
    live: BTreeSet<String>,
    seen: Vec<Seen>,
    /// The token endpoint the metadata names, when not this server's own.
    token_endpoint: Option<String>,
    /// The public key (uncompressed P-256 point) client assertions are verified with.
    client_key: Option<Vec<u8>>,
    /// The `jti` of the client assertions accepted.
    jtis: BTreeSet<String>,
    /// Why the last grant without a user agent was refused.
    refusal: Option<String>,
    /// The JWK thumbprint of the key of the token request being answered ([`Mode::Dpop`]).
    dpop_jkt: Option<String>,
    /// The DPoP-bound tokens and the thumbprints of their keys.
    bound: BTreeMap<String, String>,
    /// The `jti`s of the proofs the MCP endpoint accepted.
    dpop_jtis: BTreeSet<String>,
    /// The tasks created ([`TASK_TOOL`]): their `tasks/get` polls so far, and whether a
    /// `tasks/cancel` came.
    tasks: BTreeMap<String, (u32, bool)>,
    /// Nonces handed out ([`Mode::DpopNonceForever`]).
    nonces: usize,
    /// How many of the next tokens issued are short-lived, and their lifetime in seconds
    /// ([`AuthServer::short_lived_tokens`]).
    short_lived: (usize, u64),
    /// When each short-lived token stops being accepted.
    expiry: BTreeMap<String, std::time::Instant>,
}

impl State {
    /// The `expires_in` of `token`, just issued: the short lifetime while short-lived tokens
    /// remain (the MCP endpoint refuses the token once it has passed), else an hour.
    fn lifetime(&mut self, token: &str) -> u64 {
        let (left, secs) = self.short_lived;
        if left == 0 {
            return 3600;
        }
        self.short_lived.0 = left - 1;
        self.expiry.insert(
            token.to_owned(),
            std::time::Instant::now() + Duration::from_secs(secs),
        );
        secs
    }
}

/// The credentials of the grants without a user agent the token endpoint accepts.
pub mod m2m {
    /// The client ID.
    pub const CLIENT_ID: &str = "m2m-client";
    /// Its secret.
    pub const SECRET: &str = "m2m-secret";
    /// The ID token the identity provider exchanges.
    pub const ID_TOKEN: &str = "id-token-of-alice";
    /// An unsigned JWT (`alg` none) with these claims: what the server reads of an assertion.
    pub fn unsigned_jwt(claims: &serde_json::Value) -> String {
        use base64::Engine as _;
        let b = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.{}",
            b.encode(br#"{"alg":"ES256","typ":"JWT"}"#),
            b.encode(claims.to_string()),
            b.encode(b"not-a-signature")
        )
    }
}

/// The running server.
pub struct AuthServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    /// TCP connections accepted.
    pub accepted: Arc<AtomicUsize>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or(""), 16)
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(s: &str) -> String {
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

/// The decoded `name=value` pairs of a query or form body.
pub fn pairs(q: &str) -> BTreeMap<String, String> {
    q.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

fn response(status: u16, headers: &[(&str, String)], body: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\n");
    for (n, v) in headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    out.into_bytes()
}

fn json(status: u16, body: serde_json::Value) -> Vec<u8> {
    response(
        status,
        &[("content-type", "application/json".into())],
        &body.to_string(),
    )
}

/// The tool whose call creates a task when the request declares the tasks extension.
pub const TASK_TOOL: &str = "slow";

/// The tasks extension's identifier.
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether `msg` declares the tasks extension in its client capabilities.
fn declares_tasks(msg: &serde_json::Value) -> bool {
    msg.pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities/extensions")
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(serde_json::Value::is_object)
}

/// The answer to a task request (`tasks/get`, `tasks/cancel`): the result, or the JSON-RPC
/// error object.
fn task_answer(
    msg: &serde_json::Value,
    state: &Mutex<State>,
) -> Result<serde_json::Value, serde_json::Value> {
    let id = msg["params"]["taskId"].as_str().unwrap_or("");
    let mut st = state.lock().unwrap();
    let Some((polls, cancelled)) = st.tasks.get_mut(id) else {
        return Err(serde_json::json!({"code": -32602, "message": "unknown task"}));
    };
    let task = |status: &str| {
        serde_json::json!({"resultType": "complete", "taskId": id, "status": status,
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttlMs": 60000, "pollIntervalMs": 100})
    };
    if msg["method"] == "tasks/cancel" {
        *cancelled = true;
        return Ok(serde_json::json!({"resultType": "complete"}));
    }
    *polls += 1;
    Ok(match (*polls, *cancelled) {
        (_, true) => task("cancelled"),
        (1, false) => task("working"),
        _ => {
            let mut t = task("completed");
            t["result"] =
                serde_json::json!({"content":[{"type":"text","text":"done"}],"isError":false});
            t
        }
    })
}

const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"protected","version":"1"}}}"#;

impl AuthServer {
    /// Starts the server on 127.0.0.1.
    pub fn start(mode: Mode) -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (st, sp, acc) = (state.clone(), stop.clone(), accepted.clone());
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(tcp) = tcp else { continue };
                acc.fetch_add(1, Ordering::SeqCst);
                let (st, sp) = (st.clone(), sp.clone());
                std::thread::spawn(move || serve(tcp, addr, mode, st, sp));
            }
        });
        AuthServer {
            addr,
            state,
            stop,
            accepted,
        }
    }

    /// A hostile resource whose protected-resource metadata names `issuer` (another server's
    /// authorization server) as its own ([`Mode::NamesAnotherAuthorizationServer`]).
    pub fn start_naming(issuer: &str) -> AuthServer {
        let s = AuthServer::start(Mode::NamesAnotherAuthorizationServer);
        s.state.lock().unwrap().foreign_issuer = Some(issuer.to_owned());
        s
    }

    /// The user denies consent: the authorization endpoint redirects at once with this `error`
    /// and `error_description` (and `state`, `iss`) instead of a code (RFC 6749 §4.1.2.1).
    pub fn deny_consent(&self, error: &str, description: &str) {
        self.state.lock().unwrap().denial = Some((error.to_owned(), description.to_owned()));
    }

    /// The next `count` tokens issued (by any grant, a refresh included) live `secs` seconds:
    /// their `expires_in` says so, and the MCP endpoint answers 401 to a request bearing one
    /// once that time has passed since it was issued. The tokens after them live an hour.
    pub fn short_lived_tokens(&self, count: usize, secs: u64) {
        self.state.lock().unwrap().short_lived = (count, secs);
    }

    /// The metadata names `url` as the token endpoint.
    pub fn set_token_endpoint(&self, url: &str) {
        self.state.lock().unwrap().token_endpoint = Some(url.to_owned());
    }

    /// Client assertions (`private_key_jwt`) are verified with this ES256 public key (an
    /// uncompressed P-256 point).
    pub fn trust_client_key(&self, public_key: &[u8]) {
        self.state.lock().unwrap().client_key = Some(public_key.to_vec());
    }

    /// Why the last grant without a user agent was refused, if it was.
    pub fn refusal(&self) -> Option<String> {
        self.state.lock().unwrap().refusal.clone()
    }

    /// The decoded form bodies of the token requests with this `grant_type` (at `path`).
    pub fn grants(&self, path: &str, grant_type: &str) -> Vec<BTreeMap<String, String>> {
        self.seen()
            .iter()
            .filter(|s| s.method == "POST" && s.target == path)
            .map(|s| pairs(&s.body))
            .filter(|f| f.get("grant_type").map(String::as_str) == Some(grant_type))
            .collect()
    }

    /// How many refresh grants the token endpoint received.
    pub fn refresh_grants(&self) -> usize {
        self.seen()
            .iter()
            .filter(|s| s.target == "/token" && s.body.contains("grant_type=refresh_token"))
            .count()
    }

    /// The `nonce` claims of the DPoP proofs the MCP endpoint received, in order (`""` for a
    /// proof without one, `None` for a request without a proof).
    pub fn mcp_proof_nonces(&self) -> Vec<Option<String>> {
        self.seen()
            .iter()
            .filter(|s| s.target.starts_with("/mcp"))
            .map(|s| {
                let proof = header(s, "dpop")?;
                let c = jwt_claims(proof)?;
                Some(c["nonce"].as_str().unwrap_or_default().to_owned())
            })
            .collect()
    }

    /// Whether any request to the MCP endpoint carried a Bearer token.
    pub fn saw_a_bearer(&self) -> bool {
        self.seen().iter().any(|s| {
            s.target.starts_with("/mcp")
                && s.head
                    .to_ascii_lowercase()
                    .contains("authorization: bearer")
        })
    }

    /// The `tasks/get` polls each task got so far, by task id.
    pub fn task_polls(&self) -> BTreeMap<String, u32> {
        let st = self.state.lock().unwrap();
        st.tasks.iter().map(|(k, (p, _))| (k.clone(), *p)).collect()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// How many requests had this method and path.
    pub fn count(&self, method: &str, path: &str) -> usize {
        self.seen()
            .iter()
            .filter(|s| s.method == method && s.target.split('?').next() == Some(path))
            .count()
    }

    /// The scopes of the authorization requests, in order.
    pub fn authorization_scopes(&self) -> Vec<String> {
        self.seen()
            .iter()
            .filter(|s| s.target.starts_with("/authorize"))
            .map(|s| {
                pairs(s.target.split_once('?').map(|x| x.1).unwrap_or(""))
                    .get("scope")
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The legacy sessions given and not ended with `DELETE`, in order.
    pub fn live_sessions(&self) -> Vec<String> {
        self.state.lock().unwrap().live.iter().cloned().collect()
    }

    /// Whether any request outside `/mcp` carried a Bearer token.
    pub fn bearer_leaked_to_authorization_server(&self) -> bool {
        self.seen().iter().any(|s| {
            !s.target.starts_with("/mcp")
                && s.head
                    .to_ascii_lowercase()
                    .contains("authorization: bearer")
        })
    }
}

fn serve(
    mut tcp: TcpStream,
    addr: SocketAddr,
    mode: Mode,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
) {
    let _ = tcp.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned();
                buf.drain(..end + 4 + len);
                let first = head.lines().next().unwrap_or("").to_owned();
                let mut parts = first.split(' ');
                let seen = Seen {
                    method: parts.next().unwrap_or("").into(),
                    target: parts.next().unwrap_or("").into(),
                    head: head.clone(),
                    body,
                };
                state.lock().unwrap().seen.push(seen.clone());
                let answer = handle(&seen, &format!("http://{addr}"), mode, &state);
                if tcp.write_all(&answer).and_then(|()| tcp.flush()).is_err() {
                    return;
                }
                continue;
            }
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        match tcp.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

fn header<'a>(s: &'a Seen, name: &str) -> Option<&'a str> {
    s.head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn handle(s: &Seen, base: &str, mode: Mode, state: &Mutex<State>) -> Vec<u8> {
    let (path, query) = s.target.split_once('?').unwrap_or((&s.target, ""));
    let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
    match (s.method.as_str(), path) {
        (_, "/mcp") => {
            if mode == Mode::Forbidden {
                return response(
                    403,
                    &[("www-authenticate", "Bearer error=\"invalid_token\"".into())],
                    "",
                );
            }
            if mode.dpop() {
                if let Err(answer) = dpop_resource(s, base, mode, state) {
                    return answer;
                }
            }
            let token = if mode.dpop() {
                header(s, "authorization").and_then(|v| v.strip_prefix("DPoP "))
            } else {
                header(s, "authorization").and_then(|v| v.strip_prefix("Bearer "))
            };
            let scope = token.and_then(|t| {
                let st = state.lock().unwrap();
                if st.revoked.contains(t) {
                    return None;
                }
                if st
                    .expiry
                    .get(t)
                    .is_some_and(|at| std::time::Instant::now() >= *at)
                {
                    return None;
                }
                st.tokens.get(t).cloned()
            });
            let scheme = if mode.dpop() { "DPoP" } else { "Bearer" };
            let Some(scope) = scope else {
                return response(
                    401,
                    &[(
                        "www-authenticate",
                        format!("{scheme} resource_metadata=\"{prm}\", scope=\"read\""),
                    )],
                    "",
                );
            };
            let msg: serde_json::Value = serde_json::from_str(&s.body).unwrap_or_default();
            let id = msg["id"].clone();
            if mode.legacy() {
                if let Some(answer) = legacy_session(s, &msg, mode, state) {
                    return answer;
                }
            }
            let result = match msg["method"].as_str().unwrap_or("") {
                "server/discover" => serde_json::from_str::<serde_json::Value>(DISCOVER).unwrap(),
                "tasks/get" | "tasks/cancel" if !mode.legacy() => match task_answer(&msg, state) {
                    Ok(result) => result,
                    Err(error) => {
                        return json(
                            200,
                            serde_json::json!({"jsonrpc":"2.0","id":id,"error":error}),
                        )
                    }
                },
                "tools/list" => {
                    serde_json::json!({"tools":[{"name":"echo","inputSchema":{"type":"object"}}]})
                }
                "tools/call" if mode == Mode::EscalatingScope => {
                    let mut st = state.lock().unwrap();
                    let want = format!("c{}", st.calls_accepted + 1);
                    if !scope.split(' ').any(|x| x == want) {
                        return response(
                            403,
                            &[(
                                "www-authenticate",
                                format!("Bearer error=\"insufficient_scope\", scope=\"read {want}\", resource_metadata=\"{prm}\""),
                            )],
                            "",
                        );
                    }
                    st.calls_accepted += 1;
                    serde_json::json!({"content":[{"type":"text","text":"ok"}],"isError":false})
                }
                "tools/call" => {
                    if !scope.split(' ').any(|x| x == "write") {
                        return response(
                            403,
                            &[(
                                "www-authenticate",
                                format!("{scheme} error=\"insufficient_scope\", scope=\"read write\", resource_metadata=\"{prm}\""),
                            )],
                            "",
                        );
                    }
                    if msg["params"]["name"] == TASK_TOOL && declares_tasks(&msg) && !mode.legacy()
                    {
                        let mut st = state.lock().unwrap();
                        let task = format!("t-{}", st.tasks.len() + 1);
                        st.tasks.insert(task.clone(), (0, false));
                        serde_json::json!({"resultType": "task", "taskId": task,
                            "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60000,
                            "pollIntervalMs": 100})
                    } else {
                        serde_json::json!({"content":[{"type":"text","text":"ok"}],"isError":false})
                    }
                }
                _ => return response(202, &[], ""),
            };
            json(
                200,
                serde_json::json!({"jsonrpc":"2.0","id":id,"result":result}),
            )
        }
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            let issuer = state
                .lock()
                .unwrap()
                .foreign_issuer
                .clone()
                .unwrap_or_else(|| base.to_owned());
            json(
                200,
                serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [issuer], "scopes_supported": ["read", "write"]}),
            )
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut doc = serde_json::json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": state.lock().unwrap().token_endpoint.clone().unwrap_or_else(|| format!("{base}/token")),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            });
            if mode == Mode::HugeMetadata {
                doc["padding"] = "x".repeat(70_000).into();
            }
            json(200, doc)
        }
        ("POST", "/register") => json(
            201,
            serde_json::json!({"client_id": "cid", "token_endpoint_auth_method": "none"}),
        ),
        ("GET", "/authorize") => {
            let q = pairs(query);
            let mut st = state.lock().unwrap();
            st.challenge = q.get("code_challenge").cloned();
            st.scope = q.get("scope").cloned().unwrap_or_default();
            if let Some((error, description)) = &st.denial {
                let location = format!(
                    "{}?error={}&error_description={}&state={}&iss={}",
                    q.get("redirect_uri").cloned().unwrap_or_default(),
                    encode(error),
                    encode(description),
                    encode(q.get("state").map(String::as_str).unwrap_or("")),
                    encode(base)
                );
                return response(302, &[("location", location)], "");
            }
            let location = format!(
                "{}?code=the-code&state={}&iss={}",
                q.get("redirect_uri").cloned().unwrap_or_default(),
                encode(q.get("state").map(String::as_str).unwrap_or("")),
                encode(base)
            );
            response(302, &[("location", location)], "")
        }
        ("POST", "/token") => {
            if mode == Mode::TokenRedirect {
                return response(307, &[("location", format!("{base}/elsewhere"))], "");
            }
            let form = pairs(&s.body);
            let mut st = state.lock().unwrap();
            if mode.dpop() {
                let Some(proof) = header(s, "dpop") else {
                    st.refusal = Some("no DPoP proof at the token endpoint".into());
                    return json(400, serde_json::json!({"error": "invalid_dpop_proof"}));
                };
                match check_proof(proof, "POST", &format!("{base}/token"), None) {
                    Ok((jkt, _)) => st.dpop_jkt = Some(jkt),
                    Err(why) => {
                        st.refusal = Some(format!("token request proof: {why}"));
                        return json(400, serde_json::json!({"error": "invalid_dpop_proof"}));
                    }
                }
            }
            if let Some(answer) = machine_grant(s, &form, base, &mut st) {
                return answer;
            }
            if form.get("grant_type").map(String::as_str) == Some("refresh_token") {
                let Some(scope) = form
                    .get("refresh_token")
                    .and_then(|r| r.strip_prefix("rt-for-"))
                    .and_then(|t| st.tokens.get(t).cloned())
                else {
                    return json(400, serde_json::json!({"error": "invalid_grant"}));
                };
                let token = format!("tok-{}", st.tokens.len() + 1);
                st.tokens.insert(token.clone(), scope.clone());
                let expires_in = st.lifetime(&token);
                return json(
                    200,
                    serde_json::json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in, "refresh_token": format!("rt-for-{token}")}),
                );
            }
            let pkce_ok = form
                .get("code_verifier")
                .map(|v| mcp_sansio::internals::auth::pkce_challenge(v))
                == st.challenge;
            if form.get("grant_type").map(String::as_str) != Some("authorization_code")
                || form.get("code").map(String::as_str) != Some("the-code")
                || !pkce_ok
            {
                return json(400, serde_json::json!({"error": "invalid_grant"}));
            }
            let token = format!("tok-{}", st.tokens.len() + 1);
            if mode == Mode::LegacyRevoking {
                let earlier: Vec<String> = st.tokens.keys().cloned().collect();
                st.revoked.extend(earlier);
            }
            let scope = st.scope.clone();
            st.tokens.insert(token.clone(), scope.clone());
            let expires_in = st.lifetime(&token);
            json(
                200,
                serde_json::json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in, "scope": scope, "refresh_token": format!("rt-for-{token}")}),
            )
        }
        ("POST", "/idp/token") => {
            let form = pairs(&s.body);
            let get = |n: &str| form.get(n).map(String::as_str);
            let ok = get("grant_type") == Some(mcp_sansio::internals::auth::TOKEN_EXCHANGE)
                && get("requested_token_type")
                    == Some(mcp_sansio::internals::auth::ID_JAG_TOKEN_TYPE)
                && get("subject_token_type") == Some(mcp_sansio::internals::auth::ID_TOKEN_TYPE)
                && get("subject_token") == Some(m2m::ID_TOKEN)
                && get("audience") == Some(base)
                && get("resource") == Some(&format!("{base}/mcp"));
            if !ok {
                state.lock().unwrap().refusal = Some("token exchange parameters".into());
                return json(400, serde_json::json!({"error": "invalid_request"}));
            }
            let jag = m2m::unsigned_jwt(&serde_json::json!({
                "iss": format!("{base}/idp"), "sub": "alice", "aud": base,
                "client_id": m2m::CLIENT_ID, "resource": format!("{base}/mcp"),
            }));
            json(
                200,
                serde_json::json!({"access_token": jag, "issued_token_type": mcp_sansio::internals::auth::ID_JAG_TOKEN_TYPE, "token_type": "N_A"}),
            )
        }
        _ => json(404, serde_json::json!({"error": "not_found"})),
    }
}

fn b64url(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()
}

fn jwt_claims(token: &str) -> Option<serde_json::Value> {
    let claims = token.split('.').nth(1)?;
    serde_json::from_slice(&b64url(claims)?).ok()
}

/// Who the client is, by `client_secret_basic`, `client_secret_post` or `private_key_jwt`, or
/// why not.
fn client_of(
    s: &Seen,
    form: &BTreeMap<String, String>,
    base: &str,
    st: &mut State,
) -> Result<(), String> {
    use base64::Engine as _;
    if let Some(basic) = header(s, "authorization").and_then(|v| v.strip_prefix("Basic ")) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .map_err(|_| "basic not base64")?;
        let text = String::from_utf8_lossy(&decoded).into_owned();
        let (id, secret) = text.split_once(':').ok_or("basic without a colon")?;
        return if decode(id) == m2m::CLIENT_ID && decode(secret) == m2m::SECRET {
            Ok(())
        } else {
            Err("wrong basic credentials".into())
        };
    }
    if let Some(assertion) = form.get("client_assertion") {
        if form.get("client_assertion_type").map(String::as_str)
            != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        {
            return Err("client_assertion_type".into());
        }
        let key = st.client_key.clone().ok_or("no client key trusted")?;
        let (input, sig) = assertion.rsplit_once('.').ok_or("assertion shape")?;
        let sig = b64url(sig).ok_or("signature not base64url")?;
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &key)
            .verify(input.as_bytes(), &sig)
            .map_err(|_| "signature does not verify")?;
        let c = jwt_claims(assertion).ok_or("claims")?;
        let (iat, exp) = (
            c["iat"].as_u64().unwrap_or(0),
            c["exp"].as_u64().unwrap_or(0),
        );
        if c["iss"] != m2m::CLIENT_ID || c["sub"] != m2m::CLIENT_ID {
            return Err("iss/sub".into());
        }
        if c["aud"] != base {
            return Err("aud".into());
        }
        if exp <= iat {
            return Err("exp".into());
        }
        let jti = c["jti"].as_str().ok_or("no jti")?.to_owned();
        if !st.jtis.insert(jti) {
            return Err("jti replayed".into());
        }
        return Ok(());
    }
    if form.get("client_id").map(String::as_str) == Some(m2m::CLIENT_ID)
        && form.get("client_secret").map(String::as_str) == Some(m2m::SECRET)
    {
        return Ok(());
    }
    Err("no client authentication".into())
}

/// The answer to a grant without a user agent, `None` for the other grants.
fn machine_grant(
    s: &Seen,
    form: &BTreeMap<String, String>,
    base: &str,
    st: &mut State,
) -> Option<Vec<u8>> {
    let grant = form.get("grant_type").map(String::as_str)?;
    let refuse = |st: &mut State, why: String, error: &str| {
        st.refusal = Some(why);
        Some(json(400, serde_json::json!({"error": error})))
    };
    match grant {
        "client_credentials" => {
            if let Err(why) = client_of(s, form, base, st) {
                st.refusal = Some(why);
                return Some(json(401, serde_json::json!({"error": "invalid_client"})));
            }
        }
        mcp_sansio::internals::auth::JWT_BEARER => {
            let Some(c) = form.get("assertion").and_then(|a| jwt_claims(a)) else {
                return refuse(st, "assertion".into(), "invalid_grant");
            };
            if c["aud"] != base {
                return refuse(st, "assertion aud".into(), "invalid_grant");
            }
            if c["sub"] == "denied" {
                return refuse(st, "denied".into(), "invalid_grant");
            }
            if c.get("client_id").is_some() {
                // An identity assertion grant: the client authenticates too.
                if let Err(why) = client_of(s, form, base, st) {
                    st.refusal = Some(why);
                    return Some(json(401, serde_json::json!({"error": "invalid_client"})));
                }
            }
        }
        _ => return None,
    }
    if form.get("resource").map(String::as_str) != Some(&format!("{base}/mcp")) {
        return refuse(st, "resource".into(), "invalid_target");
    }
    st.refusal = None;
    let scope = form.get("scope").cloned().unwrap_or_default();
    let token = format!("tok-{}", st.tokens.len() + 1);
    st.tokens.insert(token.clone(), scope.clone());
    let token_type = match st.dpop_jkt.take() {
        Some(jkt) => {
            st.bound.insert(token.clone(), jkt);
            "DPoP"
        }
        None => "Bearer",
    };
    let expires_in = st.lifetime(&token);
    Some(json(
        200,
        serde_json::json!({"access_token": token, "token_type": token_type, "expires_in": expires_in, "scope": scope}),
    ))
}

/// The RFC 9449 §4.3 checks of a DPoP proof of a `method` request to `url` (for a resource
/// request, with the `ath` of `token`): the thumbprint (RFC 7638) of its key and its claims, or
/// why it is refused.
fn check_proof(
    proof: &str,
    method: &str,
    url: &str,
    token: Option<&str>,
) -> Result<(String, serde_json::Value), String> {
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let mut parts = proof.split('.');
    let (Some(h), Some(c), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not a compact JWS".into());
    };
    let header: serde_json::Value =
        serde_json::from_slice(&b64url(h).ok_or("header")?).map_err(|_| "header JSON")?;
    let claims: serde_json::Value =
        serde_json::from_slice(&b64url(c).ok_or("claims")?).map_err(|_| "claims JSON")?;
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
        return Err("typ or alg".into());
    }
    let jwk = &header["jwk"];
    if jwk.get("d").is_some() || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
        return Err("jwk".into());
    }
    let (x, y) = (jwk["x"].as_str().ok_or("x")?, jwk["y"].as_str().ok_or("y")?);
    let mut point = vec![4u8];
    point.extend(b64url(x).ok_or("x")?);
    point.extend(b64url(y).ok_or("y")?);
    let sig = b64url(sig).ok_or("signature not base64url")?;
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &point)
        .verify(format!("{h}.{c}").as_bytes(), &sig)
        .map_err(|_| "signature does not verify")?;
    if claims["htm"] != method {
        return Err("htm".into());
    }
    if claims["htu"] != url {
        return Err(format!("htu {}", claims["htu"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let iat = claims["iat"].as_u64().ok_or("iat")?;
    if iat.abs_diff(now) > 60 {
        return Err(format!("iat {iat} is not now ({now})"));
    }
    if claims["jti"].as_str().is_none_or(|j| j.len() < 16) {
        return Err("jti".into());
    }
    let ath =
        token.map(|t| b64(ring::digest::digest(&ring::digest::SHA256, t.as_bytes()).as_ref()));
    if claims["ath"].as_str() != ath.as_deref() {
        return Err("ath".into());
    }
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    let jkt = b64(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref());
    Ok((jkt, claims))
}

/// [`Mode::Dpop`] at the MCP endpoint: `Ok` for a request without credentials (answered with a
/// challenge) or with a DPoP-bound token and a valid proof for its key; otherwise the `401` to
/// answer.
fn dpop_resource(s: &Seen, base: &str, mode: Mode, state: &Mutex<State>) -> Result<(), Vec<u8>> {
    let Some(auth) = header(s, "authorization") else {
        return Ok(());
    };
    let mut st = state.lock().unwrap();
    let challenge = |st: &mut State, why: String, error: &str| {
        st.refusal = Some(why);
        response(
            401,
            &[("www-authenticate", format!("DPoP error=\"{error}\""))],
            "",
        )
    };
    let Some(token) = auth.strip_prefix("DPoP ") else {
        return Err(challenge(
            &mut st,
            "not the DPoP scheme".into(),
            "invalid_token",
        ));
    };
    let Some(proof) = header(s, "dpop") else {
        return Err(challenge(&mut st, "no proof".into(), "invalid_dpop_proof"));
    };
    let (jkt, claims) = match check_proof(proof, &s.method, &format!("{base}/mcp"), Some(token)) {
        Ok(x) => x,
        Err(why) => {
            return Err(challenge(
                &mut st,
                format!("proof: {why}"),
                "invalid_dpop_proof",
            ))
        }
    };
    if st.bound.get(token) != Some(&jkt) {
        return Err(challenge(
            &mut st,
            "key not the token's".into(),
            "invalid_token",
        ));
    }
    let jti = claims["jti"].as_str().unwrap_or_default().to_owned();
    if !st.dpop_jtis.insert(jti) {
        return Err(challenge(
            &mut st,
            "jti replayed".into(),
            "invalid_dpop_proof",
        ));
    }
    let nonce = claims["nonce"].as_str();
    let wanted = match mode {
        Mode::DpopNonce if nonce != Some(DPOP_NONCE) => Some(DPOP_NONCE.to_owned()),
        Mode::DpopNonceForever => {
            st.nonces += 1;
            Some(format!("rs-nonce-{}", st.nonces))
        }
        _ => None,
    };
    if let Some(n) = wanted {
        return Err(response(
            401,
            &[
                ("www-authenticate", "DPoP error=\"use_dpop_nonce\"".into()),
                ("dpop-nonce", n),
            ],
            "",
        ));
    }
    Ok(())
}

/// The legacy era's session handling of an authorized request: the answer to `server/discover`
/// (an unknown method), `initialize` (a new session) and `DELETE` (the session ends), or to a
/// request without a live session (404); `None` for a request of a live session, answered as in
/// the modern era.
fn legacy_session(
    s: &Seen,
    msg: &serde_json::Value,
    mode: Mode,
    state: &Mutex<State>,
) -> Option<Vec<u8>> {
    let mut st = state.lock().unwrap();
    let method = msg["method"].as_str().unwrap_or("");
    if s.method == "POST" && method == "server/discover" {
        let error = serde_json::json!({"code": -32601, "message": "Method not found"});
        return Some(json(
            400,
            serde_json::json!({"jsonrpc":"2.0","id":msg["id"],"error":error}),
        ));
    }
    if s.method == "POST" && method == "initialize" {
        if mode == Mode::LegacyOneSession && st.sessions_issued > 0 {
            return Some(response(500, &[], ""));
        }
        st.sessions_issued += 1;
        let sid = format!("sess-{}", st.sessions_issued);
        st.live.insert(sid.clone());
        let result = serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected", "version": "1"},
        });
        let body = serde_json::json!({"jsonrpc":"2.0","id":msg["id"],"result":result}).to_string();
        return Some(response(
            200,
            &[
                ("content-type", "application/json".into()),
                ("mcp-session-id", sid),
            ],
            &body,
        ));
    }
    let live = header(s, "mcp-session-id").filter(|sid| st.live.contains(*sid));
    let Some(sid) = live else {
        return Some(response(404, &[], ""));
    };
    if s.method == "DELETE" {
        let sid = sid.to_owned();
        st.live.remove(&sid);
        return Some(response(200, &[], ""));
    }
    None
}

/// The user agent of the tests: GETs the authorization URL through `http` (no redirect
/// followed) and returns the query of its `Location`. Counts its uses; keeps saved stores.
pub struct Browser {
    /// The runner it dials with.
    pub http: AuthHttp,
    /// Authorization URLs opened.
    pub opened: Arc<AtomicUsize>,
    /// The last store saved.
    pub saved: Arc<Mutex<Option<CredentialStore>>>,
    /// The store to load.
    pub stored: Option<CredentialStore>,
    /// Fail instead of opening.
    pub refuse: bool,
}

impl Browser {
    /// A browser dialling through `http`.
    pub fn new(http: AuthHttp) -> Browser {
        Browser {
            http,
            opened: Arc::default(),
            saved: Arc::default(),
            stored: None,
            refuse: false,
        }
    }
}

impl AuthHook for Browser {
    fn open_user_agent(&mut self, url: &str) -> Result<String, String> {
        self.opened.fetch_add(1, Ordering::SeqCst);
        if self.refuse {
            return Err("the user closed the window".into());
        }
        let e = Endpoint::parse(url).map_err(|e| e.to_string())?;
        let r = self.http.get(&e, &[], 65536).map_err(|e| e.to_string())?;
        let location = r
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("location"))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .ok_or("no Location")?;
        Ok(location
            .split_once('?')
            .map(|x| x.1)
            .unwrap_or("")
            .to_owned())
    }

    fn load(&mut self) -> Option<CredentialStore> {
        self.stored.clone()
    }

    fn save(&mut self, store: &CredentialStore) {
        *self.saved.lock().unwrap() = Some(store.clone());
    }
}
