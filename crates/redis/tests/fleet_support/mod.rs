//! What the token tests share: an authorization server that rotates refresh tokens and revokes
//! the whole family when one is spent twice, with its protected resource (`GET /resource`) and
//! an MCP server of the modern era (`POST /mcp`) accepting its tokens ([`RotatingServer`]), a TCP proxy in front of Redis
//! that can be cut, stalled or made to answer garbage ([`Proxy`]), and the client side
//! ([`authorization`]).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_sansio::auth::{
    AuthConfig, ClientCredentials, ClientSettings, CredentialStore, IssuerCredentials,
    ResourceCredentials, TokenAuthMethod, TokenSet, UrlPolicy,
};
use mcp_sansio_net::auth::{AuthHook, AuthHttp, Authorization};
use mcp_sansio_net::AddressPolicy;

/// The answer to `server/discover`: a server of the modern era.
const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rotating","version":"1"}}}"#;

/// How long past its `expires_in` the server still accepts an access token (the client's
/// clock counts from the answer's arrival, the server's from its issuance).
pub const GRACE: Duration = Duration::from_secs(1);

/// One refresh token family: rotated on every refresh, revoked as a whole on a reuse
/// (RFC 9700 §4.14.2: "If a refresh token is compromised and subsequently used by both the
/// attacker and the legitimate client, one of them will present an invalidated refresh token,
/// which will inform the authorization server of the breach ... revoke the active refresh
/// token" — and with it the family).
#[derive(Default)]
struct State {
    /// Refresh token → (family, spent).
    refresh: HashMap<String, (usize, bool)>,
    /// Access token → (family, valid until).
    access: HashMap<String, (usize, Instant)>,
    /// Revoked families.
    revoked: Vec<bool>,
    next: usize,
    /// When each successful refresh was answered.
    refreshed_at: Vec<Instant>,
    /// Refresh requests that spent a token already spent.
    reuses: usize,
    /// Refresh requests refused for another reason (unknown or revoked token).
    refused: usize,
    /// Slow refreshes abandoned because the client went away before the answer.
    abandoned: usize,
    /// Resource requests refused (401).
    auth_failures: usize,
    /// Resource requests accepted.
    accepted: usize,
    /// A reuse is refused without revoking the family.
    lenient: bool,
    /// Refresh requests received (before any delay).
    requests: usize,
}

/// The counters of a [`RotatingServer`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Successful refreshes.
    pub refreshes: usize,
    /// Families revoked for a reuse.
    pub revocations: usize,
    /// Refresh requests refused for a reuse.
    pub reuses: usize,
    /// Refresh requests refused otherwise.
    pub refused: usize,
    /// Slow refreshes abandoned (the client went away).
    pub abandoned: usize,
    /// Resource requests refused.
    pub auth_failures: usize,
    /// Resource requests accepted.
    pub accepted: usize,
}

/// The authorization server and protected resource: `POST /token` (refresh grant),
/// `GET /resource` (Bearer). Tokens live `lifetime` seconds.
pub struct RotatingServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    /// How long the token endpoint takes before it commits a refresh (0: at once).
    slow_ms: Arc<Mutex<u64>>,
    lifetime: u64,
}

impl Drop for RotatingServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

impl RotatingServer {
    /// Starts on 127.0.0.1; access tokens last `lifetime` seconds.
    pub fn start(lifetime: u64) -> RotatingServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = RotatingServer {
            addr,
            state: Arc::new(Mutex::new(State::default())),
            stop: Arc::new(AtomicBool::new(false)),
            slow_ms: Arc::new(Mutex::new(0)),
            lifetime,
        };
        let (state, stop, slow) = (
            server.state.clone(),
            server.stop.clone(),
            server.slow_ms.clone(),
        );
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(tcp) = tcp else { continue };
                let (state, slow) = (state.clone(), slow.clone());
                std::thread::spawn(move || serve(tcp, addr, &state, &slow, lifetime));
            }
        });
        server
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A new family: its first access and refresh tokens.
    pub fn seed(&self) -> (String, String) {
        let mut st = self.state.lock().unwrap();
        let family = st.revoked.len();
        st.revoked.push(false);
        issue(&mut st, family, self.lifetime)
    }

    /// The token endpoint takes `ms` before it commits a refresh, and commits none if the
    /// client went away meanwhile (as a server that cancels a request whose client is gone).
    pub fn slow(&self, ms: u64) {
        *self.slow_ms.lock().unwrap() = ms;
    }

    /// A reuse is refused (`invalid_grant`) without revoking the family.
    pub fn lenient(&self) {
        self.state.lock().unwrap().lenient = true;
    }

    /// Refreshes `refresh_token` as a client elsewhere would: the new access and refresh
    /// tokens, if it was refreshable.
    pub fn refresh_elsewhere(&self, refresh_token: &str) -> Option<(String, String)> {
        let mut st = self.state.lock().unwrap();
        let (family, spent) = st.refresh.get(refresh_token).copied()?;
        if spent || st.revoked[family] {
            return None;
        }
        st.refresh.insert(refresh_token.to_owned(), (family, true));
        let lifetime = self.lifetime;
        let pair = issue(&mut st, family, lifetime);
        st.refreshed_at.push(Instant::now());
        Some(pair)
    }

    /// The counters.
    pub fn counts(&self) -> Counts {
        let st = self.state.lock().unwrap();
        Counts {
            refreshes: st.refreshed_at.len(),
            revocations: st.revoked.iter().filter(|r| **r).count(),
            reuses: st.reuses,
            refused: st.refused,
            abandoned: st.abandoned,
            auth_failures: st.auth_failures,
            accepted: st.accepted,
        }
    }

    /// Refresh requests received so far (counted before any delay).
    pub fn token_requests(&self) -> usize {
        self.state.lock().unwrap().requests
    }

    /// When each refresh was answered, in order.
    pub fn refreshed_at(&self) -> Vec<Instant> {
        self.state.lock().unwrap().refreshed_at.clone()
    }
}

fn issue(st: &mut State, family: usize, lifetime: u64) -> (String, String) {
    st.next += 1;
    let n = st.next;
    let access = format!("at-{family}-{n}");
    let refresh = format!("rt-{family}-{n}");
    let until = Instant::now() + Duration::from_secs(lifetime) + GRACE;
    st.access.insert(access.clone(), (family, until));
    st.refresh.insert(refresh.clone(), (family, false));
    (access, refresh)
}

fn reply(tcp: &mut TcpStream, status: u16, body: &str) {
    let text = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tcp.write_all(text.as_bytes());
    let _ = tcp.flush();
}

fn serve(
    mut tcp: TcpStream,
    addr: SocketAddr,
    state: &Mutex<State>,
    slow: &Mutex<u64>,
    lifetime: u64,
) {
    let base = format!("http://{addr}");
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head, body) = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                break (
                    head,
                    String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned(),
                );
            }
        }
        match tcp.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let first = head.lines().next().unwrap_or("").to_owned();
    if first.starts_with("POST /token") {
        let form: HashMap<String, String> = body
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let Some(rt) = form.get("refresh_token").cloned() else {
            return reply(&mut tcp, 400, r#"{"error":"invalid_request"}"#);
        };
        state.lock().unwrap().requests += 1;
        let delay = *slow.lock().unwrap();
        if delay > 0 {
            // Commit nothing for a client that went away while the endpoint was slow.
            let until = Instant::now() + Duration::from_millis(delay);
            let _ = tcp.set_read_timeout(Some(Duration::from_millis(20)));
            while Instant::now() < until {
                match tcp.read(&mut chunk) {
                    Ok(0) => {
                        state.lock().unwrap().abandoned += 1;
                        return;
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    _ => {
                        state.lock().unwrap().abandoned += 1;
                        return;
                    }
                }
            }
        }
        let mut st = state.lock().unwrap();
        let Some((family, spent)) = st.refresh.get(&rt).copied() else {
            st.refused += 1;
            drop(st);
            return reply(&mut tcp, 400, r#"{"error":"invalid_grant"}"#);
        };
        if st.revoked[family] {
            st.refused += 1;
            drop(st);
            return reply(&mut tcp, 400, r#"{"error":"invalid_grant"}"#);
        }
        if spent {
            st.reuses += 1;
            st.revoked[family] = !st.lenient;
            drop(st);
            return reply(&mut tcp, 400, r#"{"error":"invalid_grant"}"#);
        }
        st.refresh.insert(rt, (family, true));
        let (access, refresh) = issue(&mut st, family, lifetime);
        st.refreshed_at.push(Instant::now());
        drop(st);
        let body = format!(
            r#"{{"access_token":"{access}","token_type":"Bearer","expires_in":{lifetime},"refresh_token":"{refresh}"}}"#
        );
        return reply(&mut tcp, 200, &body);
    }
    if first.starts_with("POST /mcp") {
        let token = head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case("authorization"))
            .and_then(|(_, v)| v.trim().strip_prefix("Bearer ").map(str::to_owned));
        let mut st = state.lock().unwrap();
        let ok = token
            .and_then(|t| st.access.get(&t).copied())
            .is_some_and(|(family, until)| !st.revoked[family] && Instant::now() < until);
        if !ok {
            st.auth_failures += 1;
            drop(st);
            let text = format!("HTTP/1.1 401 X\r\nwww-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
            let _ = tcp.write_all(text.as_bytes());
            return;
        }
        st.accepted += 1;
        drop(st);
        let msg: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let result = match msg["method"].as_str().unwrap_or("") {
            "server/discover" => serde_json::from_str::<serde_json::Value>(DISCOVER).unwrap(),
            "tools/list" => {
                serde_json::json!({"tools":[{"name":"echo","inputSchema":{"type":"object"}}]})
            }
            _ => {
                let text = "HTTP/1.1 202 X\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
                let _ = tcp.write_all(text.as_bytes());
                return;
            }
        };
        let answer = serde_json::json!({"jsonrpc":"2.0","id":msg["id"].clone(),"result":result});
        return reply(&mut tcp, 200, &answer.to_string());
    }
    if first.starts_with("GET /.well-known/oauth-protected-resource/mcp ") {
        let doc =
            serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]});
        return reply(&mut tcp, 200, &doc.to_string());
    }
    if first.starts_with("GET /.well-known/oauth-authorization-server ") {
        let doc = serde_json::json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        });
        return reply(&mut tcp, 200, &doc.to_string());
    }
    if first.starts_with("GET /resource") {
        let token = head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case("authorization"))
            .and_then(|(_, v)| v.trim().strip_prefix("Bearer ").map(str::to_owned));
        let mut st = state.lock().unwrap();
        let ok = token
            .and_then(|t| st.access.get(&t).copied())
            .is_some_and(|(family, until)| !st.revoked[family] && Instant::now() < until);
        if ok {
            st.accepted += 1;
        } else {
            st.auth_failures += 1;
        }
        drop(st);
        return reply(&mut tcp, if ok { 200 } else { 401 }, "{}");
    }
    reply(&mut tcp, 404, "{}");
}

/// A request to the protected resource with `token`: the status.
pub fn use_token(base: &str, token: &str) -> u16 {
    let addr = base.trim_start_matches("http://");
    let Ok(mut tcp) = TcpStream::connect(addr) else {
        return 0;
    };
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!(
        "GET /resource HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {token}\r\nconnection: close\r\n\r\n"
    );
    if tcp.write_all(req.as_bytes()).is_err() {
        return 0;
    }
    let mut out = String::new();
    let _ = tcp.read_to_string(&mut out);
    out.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A hook whose vault holds `store` (and keeps what is saved).
#[derive(Clone)]
pub struct Vault(pub Arc<Mutex<CredentialStore>>);

impl AuthHook for Vault {
    fn open_user_agent(&mut self, _url: &str) -> Result<String, String> {
        Err("no user agent in this test".into())
    }

    fn load(&mut self) -> Option<CredentialStore> {
        Some(self.0.lock().unwrap().clone())
    }

    fn save(&mut self, store: &CredentialStore) {
        *self.0.lock().unwrap() = store.clone();
    }
}

/// Milliseconds since the Unix epoch (the authorization's timeline).
pub fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// The configuration of the fleet's client for the server at `base`.
pub fn config(base: &str) -> AuthConfig {
    let mut c = AuthConfig::new(
        format!("{base}/mcp"),
        ClientSettings::new("fleet client", "http://127.0.0.1:9/callback"),
    );
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    c
}

/// A vault holding the tokens `access`/`refresh` (expiring at `expires_at_ms`) of the server at
/// `base`, under the key of [`config`].
pub fn vault(base: &str, access: &str, refresh: &str, expires_at_ms: u64) -> Vault {
    let key = key(base);
    let mut store = CredentialStore::default();
    store.issuers.insert(
        base.to_owned(),
        IssuerCredentials {
            client: Some(ClientCredentials {
                client_id: "fleet".into(),
                client_secret: None,
                auth_method: TokenAuthMethod::None,
            }),
            token_endpoint: Some(format!("{base}/token")),
            redirect_uri: None,
        },
    );
    store.resources.insert(
        key,
        ResourceCredentials {
            issuer: base.to_owned(),
            resource: format!("{base}/mcp"),
            tokens: TokenSet {
                access_token: access.into(),
                refresh_token: Some(refresh.into()),
                expires_at_ms: Some(expires_at_ms),
                scopes: Vec::new(),
                dpop: false,
            },
        },
    );
    Vault(Arc::new(Mutex::new(store)))
}

/// The token key of [`config`] for `base`.
pub fn key(base: &str) -> String {
    mcp_sansio::auth::Authorizer::new(config(base))
        .unwrap()
        .token_key()
        .to_owned()
}

/// A runner that may reach loopback addresses.
pub fn http() -> AuthHttp {
    AuthHttp::with_policy(AddressPolicy::strict().allow_loopback(true))
}

/// An authorization of the server at `base` through `http`, starting from `vault`.
pub fn authorization(base: &str, http: AuthHttp, vault: Vault) -> Authorization {
    Authorization::new(config(base), http, Box::new(vault)).unwrap()
}

/// One work item: refresh when expired, then use the token. `Ok(status)` or the refresh's error.
pub fn work_item(base: &str, auth: &mut Authorization) -> Result<u16, String> {
    if auth.token_expired() {
        auth.refresh().map_err(|e| e.to_string())?;
    }
    let token = auth.bearer().ok_or("no token")?.to_owned();
    Ok(use_token(base, &token))
}

/// What a [`Proxy`] does with a new connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ProxyMode {
    /// Forwards to Redis.
    Up = 0,
    /// Closes it at once (Redis down).
    Down = 1,
    /// Reads and never answers (Redis stalled).
    Stalled = 2,
    /// Answers garbage to whatever comes.
    Garbage = 3,
}

/// A TCP proxy in front of Redis: see [`ProxyMode`]. Switching mode cuts the connections open.
pub struct Proxy {
    port: u16,
    mode: Arc<AtomicU8>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.cut();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

impl Proxy {
    /// A proxy to Redis on `upstream` (127.0.0.1).
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let proxy = Proxy {
            port,
            mode: Arc::new(AtomicU8::new(ProxyMode::Up as u8)),
            open: Arc::new(Mutex::new(Vec::new())),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (mode, open, stop) = (proxy.mode.clone(), proxy.open.clone(), proxy.stop.clone());
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = tcp else { continue };
                match mode.load(Ordering::SeqCst) {
                    0 => {
                        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                            continue;
                        };
                        let mut o = open.lock().unwrap();
                        o.push(client.try_clone().unwrap());
                        o.push(server.try_clone().unwrap());
                        drop(o);
                        pump(client.try_clone().unwrap(), server.try_clone().unwrap());
                        pump(server, client);
                    }
                    1 => drop(client),
                    2 => {
                        open.lock().unwrap().push(client.try_clone().unwrap());
                        std::thread::spawn(move || {
                            let mut c = client;
                            let mut b = [0u8; 1024];
                            while matches!(c.read(&mut b), Ok(n) if n > 0) {}
                        });
                    }
                    _ => {
                        open.lock().unwrap().push(client.try_clone().unwrap());
                        std::thread::spawn(move || {
                            let mut c = client;
                            let mut b = [0u8; 1024];
                            while matches!(c.read(&mut b), Ok(n) if n > 0) {
                                if c.write_all(b"*2\r\n$1\r\n7\r\n$5\r\nXXXXX\r\n").is_err() {
                                    return;
                                }
                            }
                        });
                    }
                }
            }
        });
        proxy
    }

    /// The URL of the proxy.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Sets the mode and cuts the connections open.
    pub fn set(&self, mode: ProxyMode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
        self.cut();
    }

    fn cut(&self) {
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut b = [0u8; 16 * 1024];
        loop {
            match from.read(&mut b) {
                Ok(0) | Err(_) => {
                    let _ = to.shutdown(Shutdown::Both);
                    return;
                }
                Ok(n) => {
                    if to.write_all(&b[..n]).is_err() {
                        return;
                    }
                }
            }
        }
    });
}
