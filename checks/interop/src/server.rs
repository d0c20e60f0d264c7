//! Starting and stopping one interop server: a free loopback port, `checks/interop/run-server.sh`,
//! a wait until the server answers HTTP, and a kill by PID when the handle is dropped (also when
//! the test panics).

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Peer;

/// How long a server may take from spawn to its first HTTP answer.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The servers' own time limit, in seconds: they exit by themselves after it, should a test
/// process be killed before it can stop them.
pub const SERVER_TTL_SECS: u32 = 300;
/// Attempts to start a server (a port taken between probing and binding is retried).
const ATTEMPTS: usize = 3;

/// The folder `checks/interop/install.sh` installs into: `$MCP_INTEROP_DIR`, else
/// `${TMPDIR:-/tmp}/mcp-sansio-interop`.
pub fn install_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MCP_INTEROP_DIR") {
        return PathBuf::from(d);
    }
    let tmp = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    tmp.join("mcp-sansio-interop")
}

/// A running server. Dropping it kills the process by its PID and reaps it.
#[derive(Debug)]
pub struct Server {
    child: Child,
    port: u16,
    /// Whether the server speaks TLS (its URL is `https`).
    tls: bool,
    log: PathBuf,
    label: String,
}

impl Server {
    /// Starts `peer` with `args` on a free 127.0.0.1 port and waits until it answers HTTP.
    ///
    /// # Panics
    ///
    /// When the server is not installed, exits, or does not answer within [`START_TIMEOUT`]:
    /// a server that cannot start fails the test, it is never skipped.
    pub fn start(peer: Peer, args: &[&str]) -> Server {
        Server::start_with(peer, args, false)
    }

    /// Starts `peer` with `args`, which make it serve TLS (`--tls-cert`, `--tls-key`, or
    /// `--nghttpx CERT KEY` in front of a TypeScript server); it is ready once it accepts TCP
    /// connections, and its URL is `https`. It runs in a process group of its own, killed whole
    /// when the handle is dropped (nghttpx and the server behind it).
    pub fn start_tls(peer: Peer, args: &[&str]) -> Server {
        Server::start_with(peer, args, true)
    }

    fn start_with(peer: Peer, args: &[&str], tls: bool) -> Server {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("run-server.sh");
        let logs = install_dir().join("logs");
        std::fs::create_dir_all(&logs)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", logs.display()));
        let label = std::iter::once(peer.name())
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        let mut failures = Vec::new();
        for _ in 0..ATTEMPTS {
            let port = free_port();
            let log = logs.join(format!("{}-{port}.log", peer.name()));
            let out = File::create(&log)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
            let err = out.try_clone().expect("clone log file handle");
            let ttl = SERVER_TTL_SECS.to_string();
            let mut command = Command::new("bash");
            if tls {
                std::os::unix::process::CommandExt::process_group(&mut command, 0);
            }
            let child = command
                .arg(&script)
                .arg(peer.name())
                .arg(port.to_string())
                .args(args)
                .args(["--ttl", &ttl])
                .env("MCP_INTEROP_DIR", install_dir())
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", script.display()));
            let mut server = Server {
                child,
                port,
                tls,
                log,
                label: label.clone(),
            };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(why) => failures.push(format!(
                    "port {port}: {why}\n--- server log ---\n{}",
                    server.log_text()
                )),
            }
            // `server` is dropped here: killed and reaped before the next attempt.
        }
        panic!(
            "server {label} did not start ({ATTEMPTS} attempts):\n{}",
            failures.join("\n")
        );
    }

    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp` (`https` for a TLS server).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/mcp", self.port)
    }

    /// The server's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stdout and stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Which server this is, with its arguments.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited with {status} before answering"));
            }
            let ready = if self.tls {
                accepts_tcp(self.port)
            } else {
                answers_http(self.port)
            };
            if ready {
                // The port was free when chosen, but another process may have taken it before the
                // server bound it: then what answered is that process, and the server fails to
                // bind. Ready only if the server itself still runs and did not say so.
                std::thread::sleep(Duration::from_millis(100));
                if self
                    .log_text()
                    .to_ascii_lowercase()
                    .contains("address already in use")
                {
                    return Err("its port was taken by another process".to_owned());
                }
                if let Ok(Some(status)) = self.child.try_wait() {
                    return Err(format!("exited with {status} once something answered"));
                }
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!("no HTTP answer within {START_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // `Child::kill` signals this PID only (the script `exec`s the server, so it is the
        // server's own PID); waiting reaps it so no zombie outlives the test. A TLS server's
        // process group goes first (the server behind nghttpx).
        if self.tls {
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill")
                .args(["-KILL", "--", &group])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port the OS reports free on 127.0.0.1.
fn free_port() -> u16 {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address").port()
}

/// Whether something on `port` accepts a TCP connection.
fn accepts_tcp(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(250)).is_ok()
}

/// Whether something on `port` answers a `GET /mcp` with an HTTP status line.
fn answers_http(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(250)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 8];
    let mut got = 0;
    while got < head.len() {
        match s.read(&mut head[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    head.starts_with(b"HTTP/1.")
}
