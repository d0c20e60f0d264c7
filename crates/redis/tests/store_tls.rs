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

/// The deadline of one store operation in these tests (the default).
const OP: Duration = Duration::from_millis(250);
/// Scheduling slack on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(400);

/// How a fake TLS peer behaves once it has accepted a connection.
#[derive(Clone, Copy, Debug)]
enum TlsFake {
    /// Accepts TCP, reads the ClientHello, never answers (a paused Redis, a balancer that never
    /// forwards).
    Silent,
    /// Completes the TLS handshake at once, then sends the records of its answer (`+PONG`) one
    /// byte every 50 ms.
    Trickle,
    /// Completes the TLS handshake at once, then answers a bulk string of 200 bytes, each byte
    /// followed by 31 TLS 1.3 key updates (records that carry no reply; rustls refuses a 32nd
    /// in a row), as fast as it can.
    KeyUpdates,
}

/// A fake TLS Redis on 127.0.0.1 (a self-signed certificate for 127.0.0.1) behaving as `fake`
/// on every connection for at most 10 s; the client configuration that trusts it.
fn fake_tls_peer(fake: TlsFake) -> (u16, Arc<rustls::ClientConfig>) {
    use std::io::{Read, Write};
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ck.cert.der().clone()).unwrap();
    let mut trust = (*mcp_sansio_net::client_config_with_roots(roots)).clone();
    trust.alpn_protocols.clear();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        ck.key_pair.serialize_der(),
    ));
    let server = Arc::new(
        rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![ck.cert.der().clone()], key)
        .unwrap(),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut tcp) = conn else { continue };
            let server = server.clone();
            std::thread::spawn(move || {
                let end = Instant::now() + Duration::from_secs(10);
                tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                match fake {
                    TlsFake::Silent => {
                        let mut buf = [0u8; 4096];
                        let _ = tcp.read(&mut buf);
                        std::thread::sleep(end.saturating_duration_since(Instant::now()));
                    }
                    TlsFake::Trickle | TlsFake::KeyUpdates => {
                        let mut tls = rustls::ServerConnection::new(server).unwrap();
                        while tls.is_handshaking() {
                            if tls.complete_io(&mut tcp).is_err() {
                                return;
                            }
                        }
                        // The command, whatever it is.
                        let mut buf = [0u8; 4096];
                        loop {
                            match tls.reader().read(&mut buf) {
                                Ok(n) if n > 0 => break,
                                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                                    if tls.read_tls(&mut tcp).unwrap_or(0) == 0
                                        || tls.process_new_packets().is_err()
                                    {
                                        return;
                                    }
                                }
                                _ => return,
                            }
                        }
                        if let TlsFake::KeyUpdates = fake {
                            let mut out = Vec::new();
                            tls.writer().write_all(b"$200\r\n").unwrap();
                            for _ in 0..200 {
                                tls.writer().write_all(b"x").unwrap();
                                for _ in 0..31 {
                                    tls.refresh_traffic_keys().unwrap();
                                }
                                while tls.wants_write() {
                                    tls.write_tls(&mut out).unwrap();
                                }
                                if Instant::now() > end || tcp.write_all(&out).is_err() {
                                    return;
                                }
                                out.clear();
                            }
                            std::thread::sleep(end.saturating_duration_since(Instant::now()));
                            return;
                        }
                        tls.writer().write_all(b"+PONG\r\n").unwrap();
                        let mut out = Vec::new();
                        while tls.wants_write() {
                            tls.write_tls(&mut out).unwrap();
                        }
                        for b in out {
                            if Instant::now() > end || tcp.write_all(&[b]).is_err() {
                                return;
                            }
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                }
            });
        }
    });
    (port, Arc::new(trust))
}

/// One total deadline per operation under TLS too: a TLS peer that never answers the
/// ClientHello (the handshake's reads), and one that trickles its records a byte at a time (one
/// TLS record takes many socket reads), each fail `PING` within the deadline, as a deadline; and
/// a read is a miss within it too.
#[test]
fn a_silent_or_trickling_tls_peer_fails_each_operation_within_its_deadline() {
    for fake in [TlsFake::Silent, TlsFake::Trickle] {
        let (port, trust) = fake_tls_peer(fake);
        let mut o = options();
        o.tls = Some(trust);
        let s = RedisStore::with_options(&format!("rediss://127.0.0.1:{port}/"), o).unwrap();
        let start = Instant::now();
        let err = s.ping().expect_err("a fake is no store");
        let took = start.elapsed();
        assert!(took < OP + SLACK, "{fake:?}: {took:?}");
        assert!(
            matches!(err, StoreError::Unavailable(LinkError::Deadline(_))),
            "{fake:?}: {err:?}"
        );
        std::thread::sleep(Duration::from_millis(150));
        let start = Instant::now();
        assert_eq!(s.get(b"catalog:x"), None);
        let took = start.elapsed();
        assert!(took < OP + SLACK, "{fake:?}: {took:?}");
    }
}

/// One byte bound per operation under TLS too, whatever the records carry: a TLS peer that
/// pads a small reply with TLS 1.3 key updates (records with no reply in them, about 200 KB
/// of them) fails the operation on its byte bound (twice the reply's bound plus 64 KiB read
/// off the socket), not on its deadline (here 5 s, so that the bound is reached first) nor
/// with the reply.
#[test]
fn a_tls_peer_sending_records_without_a_reply_fails_on_the_byte_bound() {
    let (port, trust) = fake_tls_peer(TlsFake::KeyUpdates);
    let mut o = options();
    o.tls = Some(trust);
    o.op_timeout = Duration::from_secs(5);
    let s = RedisStore::with_options(&format!("rediss://127.0.0.1:{port}/"), o).unwrap();
    let start = Instant::now();
    let err = s.ping().expect_err("a fake is no store");
    let took = start.elapsed();
    assert!(
        matches!(err, StoreError::Unavailable(LinkError::TooLarge(_))),
        "{err:?} after {took:?}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
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
