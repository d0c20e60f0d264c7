//! HTTP/2 sockets on `std::net`: the socket I/O ([`H2Io`]) of a client's shared HTTP/2
//! connection to one origin ([`SharedH2`]).
//!
//! Each socket has two threads. The writer takes the connection's bytes from a queue, in order,
//! and writes them; the reader reads and hands every read to [`SharedH2::feed`], which routes
//! the events to the sessions and wakes them. The reader waits while more than
//! [`WRITE_BACKLOG`] bytes are queued for writing: a server that floods us with frames needing
//! an answer (PING, SETTINGS) but does not read is not read either. Over TLS both threads share
//! the rustls connection behind a mutex, and every TLS record is written under it, so that the
//! records leave in order.
//!
//! Closing a socket ([`H2Io::close`]) lets the writer send what is queued (the GOAWAY written when
//! the connection closes) and then shuts the TCP socket down, which ends the reader.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Condvar, Mutex, Weak};

use mcp_sansio::TransportError;
use mcp_sansio_net::client::lock;
use mcp_sansio_net::dial::{io_error, tls_error};
use mcp_sansio_net::{H2Io, Report, Shared, SharedH2};
use rustls::ClientConnection;

use crate::exchange::{dial_socket, Conn, Stream, Target};

/// Bytes queued for writing above which the reader stops reading.
pub(crate) const WRITE_BACKLOG: usize = 64 * 1024;

/// Bytes read at a time.
const READ_SIZE: usize = 16 * 1024;

/// An HTTP/2 socket, shared by its reader and its writer.
pub(crate) enum Wire {
    /// h2c with prior knowledge.
    Plain(TcpStream),
    /// TLS that negotiated `h2`.
    Tls(Box<Mutex<ClientConnection>>, TcpStream),
}

impl Wire {
    /// The HTTP/2 socket of `stream`, if it speaks HTTP/2 (`h2c`: a plain socket).
    pub(crate) fn from_stream(stream: Stream, h2c: bool) -> Result<Wire, Stream> {
        Ok(match stream.into_h2(h2c)? {
            Conn::Plain(tcp) => Wire::Plain(tcp),
            Conn::Tls(s) => {
                let s = *s;
                Wire::Tls(Box::new(Mutex::new(s.conn)), s.sock)
            }
        })
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Wire::Plain(t) | Wire::Tls(_, t) => t,
        }
    }

    fn send(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Wire::Plain(tcp) => (&*tcp).write_all(bytes),
            Wire::Tls(conn, tcp) => {
                let mut conn = lock(conn);
                conn.writer().write_all(bytes)?;
                while conn.wants_write() {
                    conn.write_tls(&mut &*tcp)?;
                }
                Ok(())
            }
        }
    }

    /// The next bytes read (never empty), or `None` at the end of the stream.
    fn recv(&self, buf: &mut [u8]) -> io::Result<Option<Vec<u8>>> {
        loop {
            let mut tcp = self.tcp();
            let n = match tcp.read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let Wire::Tls(conn, tcp) = self else {
                return Ok((n > 0).then(|| buf[..n].to_vec()));
            };
            if n == 0 {
                return Ok(None);
            }
            let mut conn = lock(conn);
            let mut raw = &buf[..n];
            while !raw.is_empty() {
                conn.read_tls(&mut raw)?;
                conn.process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
            let mut plain = Vec::new();
            let mut ended = false;
            let mut chunk = [0u8; 4096];
            loop {
                match conn.reader().read(&mut chunk) {
                    Ok(0) => {
                        ended = true;
                        break;
                    }
                    Ok(k) => plain.extend_from_slice(&chunk[..k]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
            while conn.wants_write() {
                conn.write_tls(&mut &*tcp)?;
            }
            if !plain.is_empty() {
                return Ok(Some(plain));
            }
            if ended {
                return Ok(None);
            }
        }
    }
}

/// The bytes waiting for a socket's writer.
#[derive(Default)]
struct Queue {
    state: Mutex<Pending>,
    changed: Condvar,
}

#[derive(Default)]
struct Pending {
    bufs: VecDeque<Vec<u8>>,
    bytes: usize,
    closed: bool,
}

impl Queue {
    fn push(&self, bytes: Vec<u8>) {
        let mut p = lock(&self.state);
        if !p.closed {
            p.bytes += bytes.len();
            p.bufs.push_back(bytes);
            self.changed.notify_all();
        }
    }

    fn close(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
    }

    /// The next bytes to write; `None` once closed and empty.
    fn pop(&self) -> Option<Vec<u8>> {
        let mut p = lock(&self.state);
        loop {
            if let Some(b) = p.bufs.pop_front() {
                p.bytes -= b.len();
                self.changed.notify_all();
                return Some(b);
            }
            if p.closed {
                return None;
            }
            p = self
                .changed
                .wait(p)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Waits while more than [`WRITE_BACKLOG`] bytes are queued.
    fn wait_backlog(&self) {
        let mut p = lock(&self.state);
        while p.bytes > WRITE_BACKLOG && !p.closed {
            p = self
                .changed
                .wait(p)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// The socket I/O of a client's shared HTTP/2 connection to one origin.
#[derive(Clone)]
pub(crate) struct BlockingH2(Arc<Sockets>);

struct Sockets {
    /// The client (weak: the client holds its connections, which hold this).
    shared: Weak<Shared<Stream>>,
    target: Arc<Target>,
    queues: Mutex<HashMap<u64, Arc<Queue>>>,
}

impl BlockingH2 {
    pub(crate) fn new(shared: &Arc<Shared<Stream>>, target: Arc<Target>) -> BlockingH2 {
        BlockingH2(Arc::new(Sockets {
            shared: Arc::downgrade(shared),
            target,
            queues: Mutex::new(HashMap::new()),
        }))
    }

    /// Serves `wire` as socket `generation` of `conn`: its writer starts now, its reader once
    /// `before_reading` ran.
    pub(crate) fn attach(
        &self,
        conn: Arc<SharedH2>,
        generation: u64,
        wire: Wire,
        before_reading: impl FnOnce(),
    ) -> Result<(), TransportError> {
        // A write that makes no progress for the client's `write_stall` (30 s by default) fails
        // the socket: a server that stops reading cannot hold the writer, and with it the
        // socket, forever.
        let stall = self
            .0
            .shared
            .upgrade()
            .map_or(mcp_sansio_net::DEFAULT_WRITE_STALL, |s| s.write_stall);
        let _ = wire.tcp().set_write_timeout(Some(stall));
        let wire = Arc::new(wire);
        let queue = Arc::new(Queue::default());
        lock(&self.0.queues).insert(generation, queue.clone());
        let (w, q, c) = (wire.clone(), queue.clone(), conn.clone());
        spawn("mcp-h2-writer", move || write_loop(&w, &q, &c, generation))?;
        before_reading();
        spawn("mcp-h2-reader", move || {
            read_loop(&wire, &queue, &conn, generation)
        })?;
        Ok(())
    }

    pub(crate) fn close_socket(&self, generation: u64) {
        if let Some(q) = lock(&self.0.queues).remove(&generation) {
            q.close();
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), TransportError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| io_error(&e))
}

fn write_loop(wire: &Wire, queue: &Queue, conn: &Arc<SharedH2>, generation: u64) {
    while let Some(bytes) = queue.pop() {
        if let Err(e) = wire.send(&bytes) {
            queue.close();
            conn.feed(generation, Report::Failed(io_error(&e)));
            break;
        }
    }
    let _ = wire.tcp().shutdown(Shutdown::Both);
}

fn read_loop(wire: &Wire, queue: &Queue, conn: &Arc<SharedH2>, generation: u64) {
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        let report = match wire.recv(&mut buf) {
            Ok(Some(bytes)) => Report::Bytes(bytes),
            Ok(None) => Report::Eof,
            Err(e) => Report::Failed(io_error(&e)),
        };
        let more = matches!(report, Report::Bytes(_));
        conn.feed(generation, report);
        if !more {
            queue.close();
            return;
        }
        queue.wait_backlog();
    }
}

impl H2Io for BlockingH2 {
    fn write(&self, generation: u64, bytes: Vec<u8>) {
        if let Some(q) = lock(&self.0.queues).get(&generation) {
            q.push(bytes);
        }
    }

    fn close(&self, generation: u64) {
        self.close_socket(generation);
    }

    fn dial(&self, conn: Arc<SharedH2>, generation: u64) {
        let me = self.clone();
        let started = spawn("mcp-h2-dial", move || {
            let target = me.0.target.clone();
            let Some(shared) = me.0.shared.upgrade() else {
                let e = io_error(&io::Error::other("the client is gone"));
                conn.dialled(generation, Err(e));
                return;
            };
            let wire = match dial_socket(&shared, &target, true) {
                Ok((stream, _)) => Wire::from_stream(stream, !target.tls),
                Err(e) => {
                    conn.dialled(generation, Err(e));
                    return;
                }
            };
            let Ok(wire) = wire else {
                let e = tls_error("the server no longer negotiates HTTP/2");
                conn.dialled(generation, Err(e));
                return;
            };
            let c = conn.clone();
            let attached = me.attach(conn.clone(), generation, wire, move || {
                c.dialled(generation, Ok(()));
            });
            if let Err(e) = attached {
                me.close_socket(generation);
                conn.dialled(generation, Err(e));
            }
        });
        // A thread that cannot start leaves the waiting requests to end at their deadlines: the
        // connection's lock is held here, so no failure can be reported from this thread.
        let _ = started;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn the_reader_waits_while_the_write_backlog_is_over_its_cap() {
        let queue = Arc::new(Queue::default());
        queue.push(vec![0; WRITE_BACKLOG]);
        queue.wait_backlog(); // at the cap: no wait
        queue.push(vec![1; 10]);
        let released = Arc::new(AtomicBool::new(false));
        let (q, r) = (queue.clone(), released.clone());
        let reader = std::thread::spawn(move || {
            q.wait_backlog();
            r.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !released.load(Ordering::SeqCst),
            "over the cap: the reader waits"
        );
        assert_eq!(queue.pop().map(|b| b.len()), Some(WRITE_BACKLOG));
        reader.join().unwrap();
        assert!(
            released.load(Ordering::SeqCst),
            "written: the reader reads on"
        );
        // Closing releases a waiting reader and drains what is queued first.
        queue.push(vec![2; WRITE_BACKLOG + 1]);
        let q = queue.clone();
        let reader = std::thread::spawn(move || q.wait_backlog());
        queue.close();
        reader.join().unwrap();
        assert_eq!(queue.pop().map(|b| b.len()), Some(10));
        assert_eq!(queue.pop().map(|b| b.len()), Some(WRITE_BACKLOG + 1));
        assert_eq!(queue.pop(), None);
    }
}
