//! `rediss://` against a real `redis-server` listening with TLS only and a password: the link's
//! TLS (rustls, the roots given in `Options::tls`), `AUTH` and `SELECT` under the deadline. A
//! wrong password or an untrusted certificate is a miss, never an error of a work item.

mod store_support;
mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio_net::cache::Store;
use mcp_sansio_redis::conn::LinkError;
use mcp_sansio_redis::{RedisStore, StoreError};
use store_support::options;

/// A `redis-server` with TLS only on a free port, a self-signed certificate for 127.0.0.1 and
/// `requirepass`; stopped (and its directory removed) on drop.
struct TlsRedis {
    child: Child,
    port: u16,
    dir: PathBuf,
    /// A client configuration trusting the server's certificate.
    trust: Arc<rustls::ClientConfig>,
}

impl TlsRedis {
    fn start(password: &str) -> TlsRedis {
        let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ck.cert.der().clone()).unwrap();
        let mut trust = (*mcp_sansio_net::client_config_with_roots(roots)).clone();
        trust.alpn_protocols.clear();
        let port = support::free_port();
        let dir = std::env::temp_dir().join(format!(
            "mcp-sansio-redis-tls-{}-{port}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cert.pem"), ck.cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), ck.key_pair.serialize_pem()).unwrap();
        let program =
            std::env::var("MCP_SANSIO_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(program)
            .args(["--bind", "127.0.0.1", "--port", "0"])
            .args(["--tls-port", &port.to_string()])
            .arg("--tls-cert-file")
            .arg(dir.join("cert.pem"))
            .arg("--tls-key-file")
            .arg(dir.join("key.pem"))
            .arg("--tls-ca-cert-file")
            .arg(dir.join("cert.pem"))
            .args(["--tls-auth-clients", "no", "--requirepass", password])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        TlsRedis {
            child,
            port,
            dir,
            trust: Arc::new(trust),
        }
    }

    fn url(&self, password: &str, db: u8) -> String {
        format!("rediss://:{password}@127.0.0.1:{}/{db}", self.port)
    }

    /// A store of `url` trusting the server's certificate, once the server answers (10 s).
    fn store(&self, url: &str) -> RedisStore {
        let mut o = options();
        o.tls = Some(self.trust.clone());
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            let s = RedisStore::with_options(url, o.clone()).unwrap();
            match s.ping() {
                Ok(()) => return RedisStore::with_options(url, o).unwrap(),
                Err(e) if Instant::now() > end => panic!("the TLS server never answered: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A value round-trips over TLS with the password and database of the URL; the database is
/// the URL's (another database does not see it).
#[test]
fn a_rediss_store_round_trips_with_auth_and_its_database() {
    let server = TlsRedis::start("sekrit-pw");
    let db3 = server.store(&server.url("sekrit-pw", 3));
    db3.put_for(b"era:k", b"m\nv".to_vec(), Duration::from_secs(30));
    assert_eq!(db3.get(b"era:k").as_deref(), Some(&b"m\nv"[..]));
    let db4 = server.store(&server.url("sekrit-pw", 4));
    assert_eq!(db4.get(b"era:k"), None, "another database");
}

/// A wrong password is refused by the server (a miss, the cause named); a certificate the
/// store does not trust fails the TLS handshake (a miss).
#[test]
fn a_wrong_password_or_an_untrusted_certificate_is_a_miss() {
    let server = TlsRedis::start("sekrit-pw");
    let good = server.store(&server.url("sekrit-pw", 0));
    good.put_for(b"era:k", b"m\nv".to_vec(), Duration::from_secs(30));

    let mut o = options();
    o.tls = Some(server.trust.clone());
    let wrong = RedisStore::with_options(&server.url("wrong-pw", 0), o).unwrap();
    let err = wrong.ping().expect_err("a wrong password");
    assert!(
        matches!(&err, StoreError::Unavailable(LinkError::Garbage(m)) if m.contains("AUTH")),
        "{err:?}"
    );
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(wrong.get(b"era:k"), None);

    let untrusted = RedisStore::with_options(&server.url("sekrit-pw", 0), options()).unwrap();
    let err = untrusted.ping().expect_err("an untrusted certificate");
    assert!(
        matches!(err, StoreError::Unavailable(LinkError::Io(_))),
        "{err:?}"
    );
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(untrusted.get(b"era:k"), None);
}

/// The token store over the same TLS link: a lease, a compare-and-set write and a read round
/// trip over `rediss://` with the password and database of the URL (another database does not
/// see the entry); a wrong password is refused by the server, and the store falls back to the
/// process's own (no entry, a lease in the process).
#[test]
fn a_rediss_token_store_round_trips_with_auth_and_its_database() {
    use mcp_sansio::auth::{ResourceCredentials, TokenSet};
    use mcp_sansio_net::auth::tokens::{TokenStore, TokenStoreError, Written};
    use mcp_sansio_redis::tokens::RedisTokens;

    let server = TlsRedis::start("sekrit-pw");
    // Waits until the server answers.
    drop(server.store(&server.url("sekrit-pw", 0)));
    let tokens = |password: &str, db: u8| {
        RedisTokens::open(&server.url(password, db))
            .unwrap()
            .tls(server.trust.clone())
            .op_timeout(Duration::from_millis(500))
    };
    let creds = ResourceCredentials {
        issuer: "https://as.example".into(),
        resource: "https://mcp.example/mcp".into(),
        tokens: TokenSet {
            access_token: "tls-access".into(),
            refresh_token: Some("tls-refresh".into()),
            expires_at_ms: Some(1_800_000_000_000),
            scopes: Vec::new(),
            dpop: false,
        },
    };
    let db5 = tokens("sekrit-pw", 5);
    let lease = db5
        .lease("tokens:k", Duration::from_secs(5))
        .unwrap()
        .expect("a lease");
    assert!(
        !lease.holder().starts_with("local:"),
        "a lease in Redis, not the process's"
    );
    assert_eq!(
        db5.write(&lease, 0, &creds, &[]).unwrap(),
        Written::Stored { version: 1 }
    );
    db5.release(&lease);
    let read = tokens("sekrit-pw", 5).read("tokens:k").unwrap().unwrap();
    assert_eq!(read.credentials, creds);
    assert_eq!(tokens("sekrit-pw", 6).read("tokens:k").unwrap(), None);

    let wrong = tokens("wrong-pw", 5);
    let err = wrong
        .renew(&lease, Duration::from_secs(5))
        .expect_err("a wrong password");
    assert!(
        matches!(&err, TokenStoreError::Garbage(m) if m.contains("AUTH")),
        "{err:?}"
    );
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(wrong.read("tokens:k").unwrap(), None);
}
