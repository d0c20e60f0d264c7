//! The bounded link to Redis: every operation under one total deadline and one byte bound,
//! failures answered by a backoff during which operations fail at once.
//!
//! The `redis` crate encodes the commands ([`redis::Cmd::get_packed_command`]), parses the
//! replies ([`redis::Parser`]) and reads the URL ([`redis::IntoConnectionInfo`]); the socket is
//! ours, because the crate's own connections bound each read (a trickling server stretches an
//! operation without end) and not the bytes of a reply (a `$999999999` header is followed for as
//! long as bytes come). Under the parser is a reader that fails once the operation's deadline has
//! passed or its replies exceed their byte bound (the parser buffers in 8 KiB steps, so a
//! header's length is never allocated ahead of its bytes); under that reader, and under rustls,
//! whose handshake and record reads take many socket reads and writes, is a socket that sets its
//! timeout to what is left of the deadline before every read or write, and that fails once twice
//! the reply bound plus 64 KiB were read off it in the operation (under TLS, records that carry
//! no reply count too: a handshake, key updates, tickets). A link that failed
//! in any way (time, bytes, garbage, a closed socket) is dropped: its parser's state is unknown.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redis::{Cmd, IntoConnectionInfo, Value};

/// Where the store is: host, port, TLS, database, credentials (the password is never shown).
#[derive(Clone)]
pub struct Target {
    host: String,
    port: u16,
    tls: bool,
    db: i64,
    username: Option<String>,
    password: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("db", &self.db)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Why a store URL was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not a `redis://`, `rediss://`, `valkey://` or `valkeys://` URL of a host.
    #[error("not a redis://, rediss://, valkey:// or valkeys:// URL of a host: {reason}")]
    Invalid {
        /// What the URL reader said (no credential).
        reason: String,
    },
}

impl Target {
    /// Reads `redis://[user][:password@]host[:port][/db]`, `rediss://…` (TLS), or the
    /// `valkey://`/`valkeys://` spellings. A Unix socket is refused.
    pub fn parse(url: &str) -> Result<Target, UrlError> {
        let (tls, plain) = if let Some(rest) = url.strip_prefix("rediss://") {
            (true, format!("redis://{rest}"))
        } else if let Some(rest) = url.strip_prefix("valkeys://") {
            (true, format!("valkey://{rest}"))
        } else if url.starts_with("redis://") || url.starts_with("valkey://") {
            (false, url.to_owned())
        } else {
            return Err(UrlError::Invalid {
                reason: "the scheme is not redis, rediss, valkey or valkeys".to_owned(),
            });
        };
        let info = plain
            .as_str()
            .into_connection_info()
            .map_err(|e| UrlError::Invalid {
                reason: format!("{:?}", e.kind()),
            })?;
        let (host, port) = match info.addr() {
            redis::ConnectionAddr::Tcp(host, port) => (host.clone(), *port),
            _ => {
                return Err(UrlError::Invalid {
                    reason: "not a TCP address".to_owned(),
                })
            }
        };
        let settings = info.redis_settings();
        Ok(Target {
            host,
            port,
            tls,
            db: settings.db(),
            username: settings.username().map(str::to_owned),
            password: settings.password().map(str::to_owned),
        })
    }

    /// Whether the link is TLS (`rediss://`, `valkeys://`).
    pub fn tls(&self) -> bool {
        self.tls
    }

    /// `host:port`.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// The bounds of the link.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The total deadline of one operation: dial, TLS, handshake, the commands and every byte
    /// of their replies.
    pub op_timeout: Duration,
    /// The first pause after a failure; it doubles with each failure in a row.
    pub backoff_min: Duration,
    /// The longest pause.
    pub backoff_max: Duration,
    /// Idle links kept for reuse.
    pub max_idle: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            op_timeout: Duration::from_millis(250),
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
            max_idle: 8,
        }
    }
}

/// Why an operation failed (each a miss for the caller).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// A failure earlier in a row: the store is not asked again before the backoff ends.
    #[error("the store failed recently; not asked again before {0:?}")]
    Backoff(Duration),
    /// The operation's deadline passed.
    #[error("the store did not answer within {0:?}")]
    Deadline(Duration),
    /// The replies exceeded their byte bound.
    #[error("the store's reply exceeded {0} bytes")]
    TooLarge(usize),
    /// A socket or TLS failure.
    #[error("the store's socket failed: {0}")]
    Io(io::Error),
    /// The reply was not RESP, or not what the command answers.
    #[error("the store answered garbage: {0}")]
    Garbage(String),
}

/// A TCP socket under one operation's deadline: before every read or write of the socket it sets
/// the socket's timeout to what is left of `deadline`, and fails once it has passed. Under
/// rustls it bounds every socket read and write of the TLS layer (the handshake the first write
/// or flush runs, the reads one record takes), not only the first one of a plaintext read. It
/// also fails once `read_left` bytes were read off the socket in the operation: under TLS,
/// records that carry no reply (key updates, tickets, padding) count too.
struct DeadlineTcp {
    tcp: TcpStream,
    deadline: Instant,
    read_left: usize,
    /// Whether `read_left` ran out.
    over: bool,
}

/// The bytes an operation may read off the socket beyond twice its reply bound: the TLS
/// handshake (a certificate chain is one handshake message of at most 64 KiB) and the records'
/// framing.
const WIRE_ALLOWANCE: usize = 64 << 10;

impl DeadlineTcp {
    fn left(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        Ok(left)
    }
}

impl Read for DeadlineTcp {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read_left == 0 && !buf.is_empty() {
            self.over = true;
            return Err(io::Error::other("the socket's byte bound was exceeded"));
        }
        let left = self.left()?;
        self.tcp.set_read_timeout(Some(left))?;
        let max = buf.len().min(self.read_left);
        let n = self.tcp.read(&mut buf[..max])?;
        self.read_left -= n;
        Ok(n)
    }
}

impl Write for DeadlineTcp {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let left = self.left()?;
        self.tcp.set_write_timeout(Some(left))?;
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

enum Stream {
    Plain(DeadlineTcp),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, DeadlineTcp>>),
}

impl Stream {
    /// The socket under the stream, whose deadline is the operation's.
    fn sock(&mut self) -> &mut DeadlineTcp {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &mut s.sock,
        }
    }
}

/// One connection, with the parser's buffer that belongs to it.
struct Link {
    stream: Stream,
    parser: redis::Parser,
}

/// The stream under the parser during one operation: every read and write under what is left
/// of `deadline`; reads fail past `left` bytes.
struct Bounded<'a> {
    stream: &'a mut Stream,
    deadline: Instant,
    left: usize,
    cap: usize,
    timeout: Duration,
    /// The bound that failed the operation, if one did.
    hit: Option<Hit>,
}

#[derive(Clone, Copy, Debug)]
enum Hit {
    Deadline,
    Bytes,
}

impl Bounded<'_> {
    /// Fails once the deadline has passed (the socket under the stream fails then too).
    fn remaining(&mut self) -> io::Result<()> {
        if self.deadline <= Instant::now() {
            self.hit = Some(Hit::Deadline);
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        Ok(())
    }
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            self.hit = Some(Hit::Bytes);
            return Err(io::Error::other("reply byte bound exceeded"));
        }
        self.remaining()?;
        let max = buf.len().min(self.left);
        let n = match self.stream {
            Stream::Plain(s) => s.read(&mut buf[..max]),
            Stream::Tls(s) => s.read(&mut buf[..max]),
        };
        let n = n.map_err(|e| self.classify(e))?;
        self.left -= n;
        Ok(n)
    }
}

impl Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.remaining()?;
        let n = match self.stream {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        };
        n.map_err(|e| self.classify(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.remaining()?;
        match self.stream {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
        .map_err(|e| self.classify(e))
    }
}

impl Bounded<'_> {
    /// A socket timeout is the deadline; the socket's byte bound is the byte bound.
    fn classify(&mut self, e: io::Error) -> io::Error {
        if self.stream.sock().over {
            self.hit = Some(Hit::Bytes);
        } else if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            self.hit = Some(Hit::Deadline);
        }
        e
    }

    /// The operation's error: the bound that failed it, else `other`.
    fn error(&self, other: LinkError) -> LinkError {
        match self.hit {
            Some(Hit::Deadline) => LinkError::Deadline(self.timeout),
            Some(Hit::Bytes) => LinkError::TooLarge(self.cap),
            None => other,
        }
    }
}

/// What the backoff remembers.
#[derive(Debug)]
struct Health {
    down_until: Option<Instant>,
    backoff: Duration,
}

/// The links to one store, their bounds and their backoff.
pub struct Backend {
    target: Target,
    tls: Option<Arc<rustls::ClientConfig>>,
    limits: Limits,
    idle: Mutex<Vec<Link>>,
    health: Mutex<Health>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("target", &self.target)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Backend {
    /// The links to `target` within `limits`; `tls` is the configuration of a TLS target
    /// (default: the webpki roots, no ALPN).
    pub fn new(target: Target, limits: Limits, tls: Option<Arc<rustls::ClientConfig>>) -> Backend {
        let tls = target.tls.then(|| {
            tls.unwrap_or_else(|| {
                let mut config = (*mcp_sansio_net::client_config()).clone();
                config.alpn_protocols.clear();
                Arc::new(config)
            })
        });
        Backend {
            target,
            tls,
            health: Mutex::new(Health {
                down_until: None,
                backoff: limits.backoff_min,
            }),
            limits,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The bounds.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether the link is in a backoff now (an operation would fail at once).
    pub fn backing_off(&self) -> bool {
        lock(&self.health)
            .down_until
            .is_some_and(|until| Instant::now() < until)
    }

    /// Sends `cmds` (pipelined) and reads one reply each, all within the operation deadline and
    /// `max_reply` bytes of replies in all. A server error reply is returned as a value. Fails
    /// at once during a backoff.
    ///
    /// An idle link that fails before any byte of a reply arrives (the store or a balancer
    /// closed it while it was idle) is dropped with the other idle links and the commands are
    /// sent once more on a new link within the same deadline; only that attempt can count as a
    /// failure. So a command may reach the store twice if the store ran it and then closed the
    /// link without answering.
    pub fn call(&self, cmds: &[Cmd], max_reply: usize) -> Result<Vec<Value>, LinkError> {
        let start = Instant::now();
        {
            let health = lock(&self.health);
            if let Some(until) = health.down_until {
                if start < until {
                    return Err(LinkError::Backoff(until - start));
                }
            }
        }
        let deadline = start + self.limits.op_timeout;
        let timeout = self.limits.op_timeout;
        let fresh = || {
            let mut link = self.dial(deadline)?;
            let replies =
                exchange(&mut link, cmds, deadline, max_reply, timeout).map_err(|(e, _)| e)?;
            Ok((link, replies))
        };
        let reused = lock(&self.idle).pop();
        let result = match reused {
            None => fresh(),
            Some(mut link) => match exchange(&mut link, cmds, deadline, max_reply, timeout) {
                Ok(replies) => Ok((link, replies)),
                // Closed while idle (the store's `timeout`, a balancer's idle timeout): it
                // failed before any byte of a reply, within its bounds. The other idle
                // links are older still: drop them, and dial once more within the same
                // deadline; only that attempt counts.
                Err((e, Replied::No))
                    if !matches!(e, LinkError::Deadline(_) | LinkError::TooLarge(_)) =>
                {
                    lock(&self.idle).clear();
                    fresh()
                }
                Err((e, _)) => Err(e),
            },
        };
        match result {
            Ok((link, replies)) => {
                {
                    let mut idle = lock(&self.idle);
                    if idle.len() < self.limits.max_idle {
                        idle.push(link);
                    }
                }
                let mut health = lock(&self.health);
                health.down_until = None;
                health.backoff = self.limits.backoff_min;
                Ok(replies)
            }
            Err(e) => {
                let mut health = lock(&self.health);
                let now = Instant::now();
                health.down_until = Some(now + health.backoff);
                health.backoff = (health.backoff * 2).min(self.limits.backoff_max);
                drop(health);
                // The other idle links may be as dead as this one: dial afresh after the pause.
                lock(&self.idle).clear();
                Err(e)
            }
        }
    }

    fn dial(&self, deadline: Instant) -> Result<Link, LinkError> {
        let timeout = self.limits.op_timeout;
        let addrs = resolve(&self.target.host, self.target.port, deadline, timeout)?;
        let mut last = None;
        let mut tcp = None;
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LinkError::Deadline(timeout));
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let tcp = match tcp {
            Some(t) => t,
            None => {
                return Err(match last {
                    Some(e) if e.kind() == io::ErrorKind::TimedOut => LinkError::Deadline(timeout),
                    Some(e) => LinkError::Io(e),
                    None => LinkError::Io(io::Error::other("the host has no address")),
                })
            }
        };
        let _ = tcp.set_nodelay(true);
        let tcp = DeadlineTcp {
            tcp,
            deadline,
            read_left: 0,
            over: false,
        };
        let stream = match &self.tls {
            None => Stream::Plain(tcp),
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from(self.target.host.clone())
                    .map_err(|e| LinkError::Io(io::Error::other(e)))?;
                let conn = rustls::ClientConnection::new(config.clone(), name)
                    .map_err(|e| LinkError::Io(io::Error::other(e)))?;
                Stream::Tls(Box::new(rustls::StreamOwned::new(conn, tcp)))
            }
        };
        let mut link = Link {
            stream,
            parser: redis::Parser::new(),
        };
        let mut hello = Vec::new();
        if let Some(password) = &self.target.password {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = &self.target.username {
                auth.arg(user);
            }
            auth.arg(password);
            hello.push(auth);
        }
        if self.target.db != 0 {
            hello.push(redis::cmd("SELECT").arg(self.target.db).clone());
        }
        if !hello.is_empty() {
            let replies =
                exchange(&mut link, &hello, deadline, 4096, timeout).map_err(|(e, _)| e)?;
            if replies.iter().any(|r| !matches!(r, Value::Okay)) {
                return Err(LinkError::Garbage(
                    "the store refused AUTH or SELECT".to_owned(),
                ));
            }
        }
        Ok(link)
    }
}

/// Resolves `host` within the deadline: an IP address at once, a name on a thread of its own
/// (the system resolver has no timeout; a late answer is dropped).
fn resolve(
    host: &str,
    port: u16,
    deadline: Instant,
    timeout: Duration,
) -> Result<Vec<SocketAddr>, LinkError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let name = host.to_owned();
    std::thread::Builder::new()
        .name("mcp-sansio-redis-resolve".into())
        .spawn(move || {
            let _ = tx.send((name.as_str(), port).to_socket_addrs().map(|a| a.collect()));
        })
        .map_err(LinkError::Io)?;
    let left = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok(addrs)) => Ok(addrs),
        Ok(Err(e)) => Err(LinkError::Io(e)),
        Err(_) => Err(LinkError::Deadline(timeout)),
    }
}

/// Whether a failed exchange had read any byte of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Replied {
    No,
    Yes,
}

/// Writes `cmds` and reads one reply each on `link`, within `deadline` and `max_reply` bytes;
/// a failure says whether any byte of a reply had arrived.
fn exchange(
    link: &mut Link,
    cmds: &[Cmd],
    deadline: Instant,
    max_reply: usize,
    timeout: Duration,
) -> Result<Vec<Value>, (LinkError, Replied)> {
    let mut packed = Vec::new();
    for c in cmds {
        c.write_packed_command(&mut packed);
    }
    let Link { stream, parser } = link;
    let sock = stream.sock();
    sock.deadline = deadline;
    sock.read_left = max_reply.saturating_mul(2).saturating_add(WIRE_ALLOWANCE);
    sock.over = false;
    let mut io = Bounded {
        stream,
        deadline,
        left: max_reply,
        cap: max_reply,
        timeout,
        hit: None,
    };
    let result = io
        .write_all(&packed)
        .and_then(|()| io.flush())
        .map_err(|e| io.error(LinkError::Io(e)))
        .and_then(|()| read_replies(parser, &mut io, cmds.len()).map_err(|other| io.error(other)));
    let replied = if io.left < io.cap {
        Replied::Yes
    } else {
        Replied::No
    };
    result.map_err(|e| (e, replied))
}

/// Reads `count` replies from `reader` with `parser`.
fn read_replies<R: Read>(
    parser: &mut redis::Parser,
    mut reader: R,
    count: usize,
) -> Result<Vec<Value>, LinkError> {
    let mut replies = Vec::with_capacity(count.min(16));
    for _ in 0..count {
        match parser.parse_value(&mut reader) {
            Ok(v) => replies.push(v),
            Err(e) if e.is_io_error() => {
                return Err(LinkError::Io(io::Error::other(e.to_string())))
            }
            Err(e) => return Err(LinkError::Garbage(e.to_string())),
        }
    }
    Ok(replies)
}

/// Reads `count` replies from `bytes` as a link reads them off its socket, failing once more
/// than `max` bytes are needed: the reply reader without the socket (for fuzzing and tests).
pub fn parse_replies(bytes: &[u8], count: usize, max: usize) -> Result<Vec<Value>, LinkError> {
    /// `bytes`, of which at most `left` may be read.
    struct Capped<'a> {
        bytes: &'a [u8],
        left: usize,
        hit: bool,
    }
    impl Read for Capped<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 && !self.bytes.is_empty() {
                self.hit = true;
                return Err(io::Error::other("reply byte bound exceeded"));
            }
            let n = buf.len().min(self.left).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            self.left -= n;
            Ok(n)
        }
    }
    let mut parser = redis::Parser::new();
    let mut reader = Capped {
        bytes,
        left: max,
        hit: false,
    };
    let replies = read_replies(&mut parser, &mut reader, count);
    match replies {
        Err(_) if reader.hit => Err(LinkError::TooLarge(max)),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RESP 2 (redis.io, "RESP protocol spec"): a bulk string is `$<length>\r\n<data>\r\n`; the
    /// reader takes whole replies and fails past its byte bound, whatever a header declares.
    #[test]
    fn the_reply_reader_reads_whole_replies_within_its_bound() {
        let two = parse_replies(b":5\r\n$3\r\nabc\r\n", 2, 64).unwrap();
        assert_eq!(two, [Value::Int(5), Value::BulkString(b"abc".to_vec())]);
        assert!(matches!(
            parse_replies(b"$999999999\r\nabc", 1, 64),
            Err(LinkError::Io(_))
        ));
        let mut huge = b"$999999999\r\n".to_vec();
        huge.extend_from_slice(&[0; 200]);
        assert!(matches!(
            parse_replies(&huge, 1, 64),
            Err(LinkError::TooLarge(64))
        ));
        assert!(matches!(
            parse_replies(b"HTTP/1.1 200 OK\r\n", 1, 64),
            Err(LinkError::Garbage(_))
        ));
    }
}
