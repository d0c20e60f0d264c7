//! `--oauth`: authorization the way a person expects it from a command line (RFC 8252).
//!
//! When the server answers 401 (or 403 `insufficient_scope`), the probe prints the
//! authorization URL on stderr (and opens a browser when one is obviously available: `$BROWSER`
//! is set, or a desktop session with `xdg-open`, or macOS), receives the redirect on
//! `http://127.0.0.1:PORT/callback`, a port of its own bound before the flow starts, finishes
//! the exchange and retries the operation. The listener serves a browser's speculative
//! connections and its `/favicon.ico` alongside the callback, within bounds, and answers the
//! browser with a page saying how it went (the `callback` module). `--token-file FILE` keeps the credentials between
//! runs; the file is created with mode 0600. Tokens never appear in output or errors.
//!
//! With `--record FILE`, the authorization's exchanges are recorded too, secrets redacted, in
//! `FILE.auth` (an authorization transcript, see `docs/transcripts.md`), next to the MCP
//! sessions in `FILE`.

mod callback;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::auth::{
    AuthConfig, ClientAuth, ClientSettings, CredentialStore, Grant, IdentityProvider, IssuerPin,
    UrlPolicy,
};
use mcp_sansio::task::{TaskHandle, TaskReport};
use mcp_sansio::{CallResult, Catalog, Config, ErrorKind};
use mcp_sansio_net::auth::KeySigner;
use mcp_sansio_net::auth::{AuthHook, AuthHttp, AuthSessionError, Authorization};
use mcp_sansio_net::{client_config, client_config_with_extra_roots, SystemResolver};
use mcp_sansio_tokio::Session;
use mcp_sansio_tokio::{
    read_ca_certificates, AddressPolicy, AuthSession, CallObserver, Client, TranscriptFile,
};

use crate::args::{GrantName, Options};
#[cfg(test)]
use callback::{classify_callback, Callback};

/// How long the probe waits for the browser to come back.
const CALLBACK_TIME: Duration = Duration::from_secs(600);

/// The most bytes read of a token file.
const MAX_TOKEN_FILE: u64 = 1024 * 1024;

/// A session, with or without authorization.
pub enum Probe {
    /// Without `--oauth`: exactly the adapter's session.
    Plain(Box<Session>),
    /// With `--oauth`.
    Auth(Box<AuthSession>),
}

impl Probe {
    /// Connects, through an [`AuthSession`] when `o.oauth`.
    pub async fn connect(
        client: &Client,
        config: Config,
        o: &Options,
    ) -> Result<Probe, AuthSessionError> {
        if !o.oauth {
            return Ok(Probe::Plain(Box::new(client.connect(config).await?)));
        }
        let auth = authorization(&config, o).map_err(|e| {
            AuthSessionError::Authorization(mcp_sansio_net::auth::AuthorizeError::Setup(e))
        })?;
        Ok(Probe::Auth(Box::new(
            AuthSession::connect(client, config, auth).await?,
        )))
    }

    /// The session.
    pub fn session(&self) -> &Session {
        match self {
            Probe::Plain(s) => s,
            Probe::Auth(s) => s.session(),
        }
    }

    /// Lists the tools.
    pub async fn list_tools(&mut self) -> Result<Catalog, AuthSessionError> {
        match self {
            Probe::Plain(s) => Ok(s.list_tools().await?),
            Probe::Auth(s) => s.list_tools().await,
        }
    }

    /// Calls a tool.
    pub async fn call_tool_with(
        &mut self,
        name: &str,
        arguments: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        match self {
            Probe::Plain(s) => Ok(s.call_tool_with(name, arguments, observer).await?),
            Probe::Auth(s) => s.call_tool_with(name, arguments, observer).await,
        }
    }

    /// Resumes the task of `handle`, reporting to `observer`.
    pub async fn resume_task_with(
        &mut self,
        handle: &TaskHandle,
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, AuthSessionError> {
        match self {
            Probe::Plain(s) => Ok(s.resume_task_with(handle, observer).await?),
            Probe::Auth(s) => {
                s.run(async |s| s.resume_task_with(handle, &mut *observer).await)
                    .await
            }
        }
    }

    /// One `tasks/get` of the task of `handle`.
    pub async fn get_task(&mut self, handle: &TaskHandle) -> Result<TaskReport, AuthSessionError> {
        match self {
            Probe::Plain(s) => Ok(s.get_task(handle).await?),
            Probe::Auth(s) => s.run(async |s| s.get_task(handle).await).await,
        }
    }

    /// Cancels the task of `handle` and polls it to its end.
    pub async fn cancel_task(
        &mut self,
        handle: &TaskHandle,
    ) -> Result<CallResult, AuthSessionError> {
        match self {
            Probe::Plain(s) => Ok(s.cancel_task(handle).await?),
            Probe::Auth(s) => s.run(async |s| s.cancel_task(handle).await).await,
        }
    }

    /// Closes the session.
    pub async fn close(self) -> Result<(), AuthSessionError> {
        match self {
            Probe::Plain(s) => Ok((*s).close().await?),
            Probe::Auth(s) => s.close().await,
        }
    }
}

/// The exit code and error kind of a failure.
pub fn classify(e: &AuthSessionError) -> (u8, ErrorKind) {
    match e {
        AuthSessionError::Mcp(e) => (crate::render::exit_code(e), e.kind()),
        _ => (4, ErrorKind::AuthenticationFailed),
    }
}

fn authorization(config: &Config, o: &Options) -> Result<Authorization, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the authorization callback: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let server_url = format!("{}{}", config.endpoint.origin(), config.endpoint.target());
    let mut auth_config =
        AuthConfig::new(server_url, ClientSettings::new("mcp-probe", redirect_uri));
    auth_config.policy = UrlPolicy {
        allow_loopback_http: o.allow_loopback,
    };
    auth_config.grant = grant(o)?;
    if let Some(path) = &o.dpop {
        let key = KeySigner::from_file(path)
            .map_err(|e| format!("the DPoP key file {}: {e}", path.display()))?;
        auth_config.dpop = Some(mcp_sansio::auth::DpopKey(Arc::new(key)));
    }
    let policy = AddressPolicy::strict().allow_loopback(o.allow_loopback);
    let mut roots = Vec::new();
    for path in &o.ca_certs {
        roots.extend(read_ca_certificates(path).map_err(|e| e.to_string())?);
    }
    let tls = if roots.is_empty() {
        client_config()
    } else {
        client_config_with_extra_roots(&roots)
    };
    let mut http = AuthHttp::new(policy, Arc::new(SystemResolver), tls);
    // Each authorization exchange is bounded like any other exchange but a tool call.
    if let Some(d) = o.request_timeout {
        http = http.timeout(d);
    }
    if let Some(url) = &o.store {
        // The fleet's token store on the same Redis: one refresh per grant across every process
        // sharing it (the token file stays where this process loads and saves its tokens).
        let tokens = mcp_sansio_redis::tokens::RedisTokens::open(url)
            .map_err(|e| format!("--store: {e}"))?;
        http = http.token_store(mcp_sansio_net::auth::SharedTokens::new(Arc::new(tokens)));
    }
    let hook = LoopbackAgent {
        listener,
        token_file: o.token_file.clone(),
    };
    let auth = Authorization::new(auth_config, http, Box::new(hook)).map_err(|e| e.to_string())?;
    match &o.record {
        Some(path) => {
            let path = auth_transcript_path(path);
            let file = TranscriptFile::create(&path).map_err(|e| {
                format!(
                    "cannot write the authorization transcript {}: {e}",
                    path.display()
                )
            })?;
            let comment = format!("mcp-probe --oauth against {}", config.endpoint.origin());
            Ok(auth.record_to(Arc::new(file), 1, &comment))
        }
        None => Ok(auth),
    }
}

/// The most bytes read of a secret, key or token file.
const MAX_SECRET_FILE: u64 = 64 * 1024;

/// The content of a secret file, without its trailing line end. Errors name the file, never
/// its content.
fn read_secret(path: &Path, what: &str) -> Result<String, String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SECRET_FILE).read_to_string(&mut text))
        .map_err(|e| format!("cannot read the {what} file {}: {e}", path.display()))?;
    Ok(text.trim_end_matches(['\r', '\n']).to_owned())
}

/// A token source that reads `path` each time a token is needed.
fn token_file(path: &Path, what: &'static str) -> Arc<dyn mcp_sansio::auth::AssertionSource> {
    let path = path.to_owned();
    Arc::new(move || read_secret(&path, what).map(|t| t.trim().to_owned()))
}

/// How the client authenticates, from `--client-id`, `--client-secret-file` (or
/// `MCP_CLIENT_SECRET`), `--client-secret-post` and `--private-key-file`; without a secret or
/// a key, a public client (`client_id` only).
fn client_auth(o: &Options) -> Result<ClientAuth, String> {
    let client_id = o.client_id.clone().unwrap_or_default();
    if let Some(path) = &o.private_key_file {
        let signer = KeySigner::from_file(path)
            .map_err(|e| format!("the private key file {}: {e}", path.display()))?;
        return Ok(ClientAuth::PrivateKeyJwt {
            client_id,
            signer: Arc::new(signer),
        });
    }
    let secret = match &o.client_secret_file {
        Some(path) => Some(read_secret(path, "client secret")?),
        None => std::env::var("MCP_CLIENT_SECRET")
            .ok()
            .filter(|s| !s.is_empty()),
    };
    Ok(match secret {
        Some(secret) if o.client_secret_post => ClientAuth::SecretPost { client_id, secret },
        Some(secret) => ClientAuth::SecretBasic { client_id, secret },
        None => ClientAuth::None { client_id },
    })
}

/// The grant of `--grant` with its credentials, pinned to `--issuer` (the argument check
/// makes it required with a grant; the probe never uses [`IssuerPin::AnyIssuerUnsafe`]).
fn grant(o: &Options) -> Result<Grant, String> {
    let name = o.grant.unwrap_or(GrantName::AuthorizationCode);
    if name == GrantName::AuthorizationCode {
        return Ok(Grant::AuthorizationCode);
    }
    let issuer = IssuerPin::Exactly(
        o.issuer
            .clone()
            .ok_or("--grant needs --issuer, the authorization server the credentials may go to")?,
    );
    Ok(match name {
        GrantName::AuthorizationCode => Grant::AuthorizationCode,
        GrantName::ClientCredentials => Grant::ClientCredentials {
            client: client_auth(o)?,
            issuer,
        },
        GrantName::JwtBearer => Grant::JwtBearer {
            client: client_auth(o)?,
            assertion: token_file(
                o.workload_token_file.as_deref().unwrap_or(Path::new("")),
                "workload token",
            ),
            issuer,
        },
        GrantName::Enterprise => {
            let endpoint = o.idp_token_endpoint.clone().unwrap_or_default();
            Grant::EnterpriseManaged {
                idp: IdentityProvider {
                    issuer: endpoint.clone(),
                    token_endpoint: endpoint,
                    client: ClientAuth::None {
                        client_id: o.idp_client_id.clone().unwrap_or_default(),
                    },
                    id_token: token_file(
                        o.id_token_file.as_deref().unwrap_or(Path::new("")),
                        "ID token",
                    ),
                },
                client: client_auth(o)?,
                issuer,
            }
        }
    })
}

/// Where `--record FILE` writes the authorization's transcript: `FILE.auth`.
pub fn auth_transcript_path(record: &Path) -> PathBuf {
    let mut name = record.as_os_str().to_owned();
    name.push(".auth");
    PathBuf::from(name)
}

/// The user agent of a command line: prints the URL, maybe opens a browser, and receives the
/// redirect on its loopback listener. Also the token file.
struct LoopbackAgent {
    listener: TcpListener,
    token_file: Option<PathBuf>,
}

impl AuthHook for LoopbackAgent {
    fn open_user_agent(&mut self, url: &str) -> Result<String, String> {
        eprintln!("mcp-probe: the server requires authorization; open this URL in a browser:");
        eprintln!("  {}", crate::inert::line(url));
        if open_browser(url) {
            eprintln!("mcp-probe: (a browser was asked to open it)");
        }
        eprintln!("mcp-probe: waiting for the browser to come back to the callback…");
        let expected = redirect_path(url).unwrap_or_else(|| "/callback".to_owned());
        callback::receive_callback(
            &self.listener,
            Instant::now() + CALLBACK_TIME,
            &expected,
            &callback::LIMITS,
        )
    }

    fn load(&mut self) -> Option<CredentialStore> {
        let path = self.token_file.as_ref()?;
        match load_store(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mcp-probe: ignoring the token file {}: {e}", path.display());
                None
            }
        }
    }

    fn save(&mut self, store: &CredentialStore) {
        if let Some(path) = &self.token_file {
            if let Err(e) = save_store(path, store) {
                eprintln!(
                    "mcp-probe: cannot write the token file {}: {e}",
                    path.display()
                );
            }
        }
    }
}

/// Opens `url` in a browser when one is obviously available; never required.
fn open_browser(url: &str) -> bool {
    use std::process::{Command, Stdio};
    let program = if let Some(b) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        b.into_string().ok()
    } else if cfg!(target_os = "macos") {
        Some("open".to_owned())
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some("xdg-open".to_owned())
    } else {
        None
    };
    let Some(program) = program else {
        return false;
    };
    match Command::new(&program)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}

/// The path of the `redirect_uri` of the authorization URL `url`: where the answer of that
/// authorization server must come back (the core gives each authorization server that does not
/// send `iss` its own, RFC 9700 §4.4.2).
fn redirect_path(url: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let pairs = mcp_sansio::auth::form::parse_query(query).ok()?;
    let uri = pairs.into_iter().find(|(k, _)| k == "redirect_uri")?.1;
    let e = mcp_sansio::Endpoint::parse(&uri).ok()?;
    Some(e.target().split('?').next().unwrap_or("/").to_owned())
}

fn load_store(path: &Path) -> Result<Option<CredentialStore>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut text = Vec::new();
    file.take(MAX_TOKEN_FILE + 1)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_TOKEN_FILE {
        return Err("it is larger than 1 MiB".into());
    }
    // The serde error names a position, never the content.
    let store: CredentialStore = serde_json::from_slice(&text).map_err(|e| {
        format!(
            "not a credential file (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    // An earlier format (no version) loads with its registrations and without its tokens,
    // which were not bound to a server; a later one is not understood.
    if store.version > CredentialStore::FORMAT_VERSION {
        return Err(format!(
            "it has format {}; this mcp-probe reads format {} and earlier",
            store.version,
            CredentialStore::FORMAT_VERSION
        ));
    }
    Ok(Some(store))
}

/// Writes `store` to `path` through a temporary file created with mode 0600, then renamed.
pub fn save_store(path: &Path, store: &CredentialStore) -> std::io::Result<()> {
    write_private(path, &serde_json::to_vec_pretty(store)?)
}

/// Writes `bytes` to `path` readable by its owner only (mode 0600): to a new temporary file
/// beside it, then renamed over `path`, so a symbolic link at `path` is replaced, never written
/// through, and a reader never sees half a file.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorization_transcript_goes_next_to_the_session_transcript() {
        assert_eq!(
            auth_transcript_path(Path::new("/tmp/s.transcript")),
            Path::new("/tmp/s.transcript.auth")
        );
    }

    #[test]
    fn the_answer_of_another_authorization_server_is_told_apart() {
        let head = |t: &str| format!("GET {t} HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(
            classify_callback(&head("/callback/abc?code=c&state=s"), "/callback/abc"),
            Callback::Query("code=c&state=s".into())
        );
        assert_eq!(
            classify_callback(&head("/callback/xyz?code=c&state=s"), "/callback/abc"),
            Callback::OtherServer
        );
        assert_eq!(
            classify_callback(&head("/callback?code=c&state=s"), "/callback/abc"),
            Callback::OtherServer
        );
        assert_eq!(
            classify_callback(&head("/favicon.ico?x=1"), "/callback/abc"),
            Callback::Other
        );
        assert_eq!(
            redirect_path("https://as/authorize?client_id=a&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcallback%2Fabc&state=s")
                .as_deref(),
            Some("/callback/abc")
        );
    }

    fn callback_query(head: &str) -> Option<String> {
        match classify_callback(head, "/callback") {
            Callback::Query(q) => Some(q),
            _ => None,
        }
    }

    #[test]
    fn only_a_get_of_the_callback_path_with_a_query_is_the_callback() {
        assert_eq!(
            callback_query("GET /callback?code=c&state=s HTTP/1.1\r\nHost: x\r\n\r\n").as_deref(),
            Some("code=c&state=s")
        );
        assert_eq!(callback_query("GET /favicon.ico HTTP/1.1\r\n\r\n"), None);
        assert_eq!(callback_query("GET /callback HTTP/1.1\r\n\r\n"), None);
        assert_eq!(
            callback_query("POST /callback?code=c HTTP/1.1\r\n\r\n"),
            None
        );
        assert_eq!(callback_query(""), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_token_file_is_private_and_round_trips() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mcp-probe-oauth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        let mut store = CredentialStore::default();
        store
            .issuers
            .insert("https://as.example".into(), Default::default());
        save_store(&path, &store).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(load_store(&path).unwrap(), Some(store));
        std::fs::write(&path, b"{not json").unwrap();
        let e = load_store(&path).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(!e.contains("not json"), "{e}");
        assert_eq!(load_store(&dir.join("absent.json")).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
