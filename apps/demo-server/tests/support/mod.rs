//! Drives a core `Connection` against a real server over blocking std sockets.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{Config, Connection, Event, ExchangeId, Instant};

pub struct Driver {
    pub conn: Connection,
    /// Decodes each exchange's response.
    pub socket: Http1Socket,
    addr: SocketAddr,
    start: std::time::Instant,
    active: Vec<(ExchangeId, TcpStream)>,
    idle: Vec<TcpStream>,
    /// Every event but exchange bookkeeping, in order.
    pub events: Vec<Event>,
    /// Sockets opened.
    pub sockets_opened: usize,
}

impl Driver {
    pub fn new(config: Config, addr: SocketAddr) -> Driver {
        Driver {
            conn: Connection::new(config).expect("valid config"),
            socket: Http1Socket::new(),
            addr,
            start: std::time::Instant::now(),
            active: Vec::new(),
            idle: Vec::new(),
            events: Vec::new(),
            sockets_opened: 0,
        }
    }

    pub fn for_url(url: &str, addr: SocketAddr) -> Driver {
        Driver::new(Config::new(url).unwrap(), addr)
    }

    fn now(&self) -> Instant {
        Instant::from_duration(self.start.elapsed())
    }

    /// Runs the loop until the operation ends (no exchange is active and nothing is left to send).
    pub fn run(&mut self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            assert!(
                std::time::Instant::now() < deadline,
                "the operation did not end"
            );
            while let Some(t) = self.conn.poll_transmit() {
                let mut s = match (t.fresh_socket, self.idle.pop()) {
                    (false, Some(s)) => s,
                    _ => {
                        self.sockets_opened += 1;
                        TcpStream::connect(self.addr).expect("connect")
                    }
                };
                s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                s.write_all(&Http1Socket::encode(&t).expect("a checked request"))
                    .expect("write");
                self.active.push((t.exchange, s));
            }
            let mut pending_events = false;
            while let Some(e) = self.conn.poll_event() {
                pending_events = true;
                match e {
                    Event::ExchangeFinished { exchange, reusable } => {
                        if let Some(i) = self.active.iter().position(|(x, _)| *x == exchange) {
                            let (_, s) = self.active.remove(i);
                            if reusable {
                                self.idle.push(s);
                            }
                        }
                    }
                    Event::ExchangeAbandoned { exchange } => {
                        self.active.retain(|(x, _)| *x != exchange);
                    }
                    other => self.events.push(other),
                }
            }
            if pending_events {
                continue;
            }
            if self.active.is_empty() {
                match self.conn.poll_timeout() {
                    Some(t) if self.conn.is_busy() => {
                        let wait = t.saturating_since(self.now());
                        std::thread::sleep(wait.min(Duration::from_millis(50)));
                        let now = self.now();
                        self.conn.handle_timeout(now);
                        continue;
                    }
                    _ => return,
                }
            }
            // Read from each active exchange in turn.
            let mut buf = vec![0u8; 64 * 1024];
            let ids: Vec<ExchangeId> = self.active.iter().map(|(x, _)| *x).collect();
            for id in ids {
                let Some(pos) = self.active.iter().position(|(x, _)| *x == id) else {
                    continue;
                };
                let r = self.active[pos].1.read(&mut buf);
                let now = self.now();
                match r {
                    Ok(0) => self.socket.handle_eof(&mut self.conn, now, id),
                    Ok(n) => self.socket.handle_bytes(&mut self.conn, now, id, &buf[..n]),
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        self.conn.handle_timeout(now)
                    }
                    Err(e) => panic!("read: {e}"),
                }
                break;
            }
        }
    }

    pub fn connect(&mut self) -> Event {
        let now = self.now();
        self.conn.connect(now);
        self.run();
        self.take_final()
    }

    pub fn list(&mut self) -> Event {
        let now = self.now();
        self.conn.list_tools(now);
        self.run();
        self.take_final()
    }

    pub fn call(&mut self, name: &str, args: &str) -> Event {
        let now = self.now();
        self.conn.call_tool(now, name, args.as_bytes());
        self.run();
        self.take_final()
    }

    pub fn close(&mut self) -> Event {
        let now = self.now();
        self.conn.close(now);
        self.run();
        self.take_final()
    }

    /// The last event that is not progress; progress events stay in `events`.
    fn take_final(&mut self) -> Event {
        let i = self
            .events
            .iter()
            .rposition(|e| !matches!(e, Event::Progress { .. }))
            .unwrap_or_else(|| panic!("no final event: {:?}", self.events));
        self.events.remove(i)
    }

    pub fn progress(&mut self) -> Vec<(f64, Option<f64>)> {
        let p = self
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Progress {
                    progress, total, ..
                } => Some((*progress, *total)),
                _ => None,
            })
            .collect();
        self.events.retain(|e| !matches!(e, Event::Progress { .. }));
        p
    }
}
