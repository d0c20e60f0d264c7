//! The server process (`soak serve`): every kind of [`crate::kinds::all`] on its own port of
//! 127.0.0.1, in a process of its own so that the client's memory and descriptors are measured
//! alone. It prints one `port <label> <port>` line per kind, `cert <hex DER>` (the self-signed
//! certificate of 127.0.0.1 every TLS server presents), then `ready`, and serves until its
//! standard input ends (the client closes it, or exits), then exits.

use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use mcp_sansio_demo_server::{DemoServer, Eras, Options};
use rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};

use crate::h2_catalogue::H2Scenario;
use crate::h2_server;
use crate::h2server::H2Peer;
use crate::hostile::script::Server;
use crate::hostile::Scenario;
use crate::kinds::{self, Behaviour, Kind, Wire};

/// The TLS configurations of the servers: ALPN `http/1.1` only, and `h2` then `http/1.1`.
struct Tls {
    cert: CertificateDer<'static>,
    h1: Arc<rustls::ServerConfig>,
    h2: Arc<rustls::ServerConfig>,
}

fn tls() -> Tls {
    let rcgen::CertifiedKey { cert, key_pair } =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()])
            .expect("a self-signed certificate");
    let der = cert.der().clone();
    let config = |alpn: &[&[u8]]| {
        let key = PrivatePkcs8KeyDer::from(key_pair.serialize_der());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut c = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(vec![der.clone()], key.into())
            .expect("the certificate and its key");
        c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(c)
    };
    Tls {
        h1: config(&[b"http/1.1"]),
        h2: config(&[b"h2", b"http/1.1"]),
        cert: der,
    }
}

/// Runs the server process; returns when standard input ends.
pub fn main() {
    let tls = tls();
    // The TLS front of the demo servers (which speak clear-text HTTP/1.1 only) runs here.
    let relay = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut demos = Vec::new();
    let mut out = String::new();
    let h1 = kinds::h1_scenarios();
    for kind in kinds::all() {
        let port = match kind.behaviour {
            Behaviour::Demo | Behaviour::DemoLegacy => {
                let eras = if kind.behaviour == Behaviour::Demo {
                    Eras::Both
                } else {
                    Eras::LegacyOnly
                };
                let demo = DemoServer::start(Options::default().eras(eras).worker_threads(1))
                    .expect("the demo server starts");
                let port = match kind.wire {
                    Wire::H1 => demo.addr().port(),
                    _ => tls_relay(&relay, tls.h1.clone(), demo.addr()),
                };
                demos.push(demo);
                port
            }
            Behaviour::H2Good => {
                let config = (kind.wire == Wire::H2Tls).then(|| tls.h2.clone());
                // The server's threads live as long as the process.
                h2_server::Server::start(config).port
            }
            Behaviour::H1Hostile(name) => {
                let scenario = h1
                    .iter()
                    .find(|s| s.name == name)
                    .expect("a chosen scenario");
                h1_hostile(&kind, scenario, &tls)
            }
            Behaviour::H2Hostile(name) => {
                let config = (kind.wire == Wire::H2Tls).then(|| tls.h2.clone());
                h2_hostile(kinds::h2_scenario(name), config)
            }
        };
        out.push_str(&format!("port {} {port}\n", kind.label()));
    }
    let hex: String = tls.cert.iter().map(|b| format!("{b:02x}")).collect();
    out.push_str(&format!("cert {hex}\nready\n"));
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes()).expect("write the ports");
    stdout.flush().expect("flush the ports");
    drop(stdout);
    // Serve until the client closes our standard input.
    let mut line = String::new();
    let mut stdin = std::io::stdin().lock();
    while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
    }
    for demo in demos {
        demo.shutdown();
    }
    drop(relay);
}

/// Accepts on a new port of 127.0.0.1 and hands each connection to `serve` on a thread of its
/// own, for the life of the process.
fn accept_loop(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local address").port();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { continue };
            let _ = tcp.set_nodelay(true);
            let serve = serve.clone();
            std::thread::spawn(move || serve(tcp));
        }
    });
    port
}

/// A hostile HTTP/1.1 server playing the catalogue's `scenario` on every connection (clear
/// text or TLS as `kind` says); every connection shares the scenario's server state, whose rules
/// all apply to every request.
fn h1_hostile(kind: &Kind, scenario: &Scenario, tls: &Tls) -> u16 {
    let server = Arc::new(Mutex::new(Server::new(scenario.rules.clone())));
    let config = kind.wire.tls().then(|| tls.h1.clone());
    accept_loop(move |tcp| match &config {
        Some(config) => {
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                return;
            };
            crate::hostile::socket::serve(&server, rustls::StreamOwned::new(conn, tcp));
        }
        None => crate::hostile::socket::serve(&server, tcp),
    })
}

/// A hostile HTTP/2 server playing `sc` on every connection: its prelude, then its answer to
/// every complete request (as `checks/support/src/hostile/h2_sockets.rs` does, over TLS too).
fn h2_hostile(sc: H2Scenario, config: Option<Arc<rustls::ServerConfig>>) -> u16 {
    accept_loop(move |tcp| match &config {
        Some(config) => {
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                return;
            };
            h2_play(&sc, rustls::StreamOwned::new(conn, tcp));
        }
        None => h2_play(&sc, tcp),
    })
}

fn h2_play(sc: &H2Scenario, mut stream: impl Read + Write) {
    let mut peer = H2Peer::default();
    if stream
        .write_all(&(sc.prelude)(&mut peer))
        .and_then(|()| stream.flush())
        .is_err()
    {
        return;
    }
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        // The peer panics on input it cannot decode: the connection ends then.
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| peer.read(&buf[..n])));
        let Ok(done) = read else { return };
        for req in done {
            let answer = (sc.respond)(&mut peer, &req);
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

/// A TLS front (ALPN `http/1.1`) on a new port of 127.0.0.1 for the clear-text server at
/// `upstream`: each connection is relayed to a connection of its own.
fn tls_relay(
    rt: &tokio::runtime::Runtime,
    config: Arc<rustls::ServerConfig>,
    upstream: std::net::SocketAddr,
) -> u16 {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local address").port();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    rt.spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = tcp.set_nodelay(true);
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut up) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = up.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
            });
        }
    });
    port
}
