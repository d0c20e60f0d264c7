//! A real `redis-server` for the tests: started on a free 127.0.0.1 port with a data directory
//! of its own and no persistence, stopped (and its directory removed) when dropped.
//!
//! The binary is `redis-server` on the `PATH`, or `$MCP_SANSIO_REDIS_SERVER`; `.ci/run`
//! installs Debian's. A test that asks for the server fails when it cannot start: nothing is
//! skipped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`, stopped on drop.
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts a server and waits (at most 10 s) until it answers `PING`.
    pub fn start() -> RedisServer {
        let program =
            std::env::var("MCP_SANSIO_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        for _ in 0..5 {
            let port = free_port();
            let dir = std::env::temp_dir()
                .join(format!("mcp-sansio-redis-{}-{port}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("the server's data directory");
            let child = Command::new(&program)
                .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
                .args([
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--protected-mode",
                    "yes",
                ])
                .arg("--dir")
                .arg(&dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {program}: {e} (install redis-server)"));
            let mut server = RedisServer { child, port, dir };
            if server.wait_ready(Duration::from_secs(10)) {
                return server;
            }
            // The port was taken between choosing it and the server binding it: try another.
        }
        panic!("{program} did not start on a free port in 5 tries");
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of the server: `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Sends one command (inline form) and returns the first line of the reply.
    pub fn command(&self, line: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(format!("{line}\r\n").as_bytes()).unwrap();
        let mut reply = String::new();
        BufReader::new(&mut s).read_line(&mut reply).unwrap();
        let _ = s.shutdown(Shutdown::Both);
        reply.trim_end().to_owned()
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                if s.write_all(b"PING\r\n").is_ok() {
                    let mut buf = [0u8; 7];
                    if s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n" {
                        return true;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port free on 127.0.0.1 now (the listener is closed before returning).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
