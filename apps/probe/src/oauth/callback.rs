//! The loopback listener that receives the authorization response (RFC 8252 §7.3).
//!
//! A real browser does more than send the one redirect: it opens speculative connections that
//! may never carry a request, and asks for `/favicon.ico`. So the listener serves every
//! connection at once, without blocking on any: the listener and each connection are
//! non-blocking, and one loop accepts, reads and writes whatever is ready (only the callback's
//! own page, which ends the wait, is written blocking, until its connection's deadline at
//! most). It is bounded whatever local processes do:
//!
//! - at most [`Limits::connections`] connections are held at once; one more makes the oldest
//!   held one close (a browser's real request arrives on its newest connections);
//! - a request head is read up to [`Limits::head`] bytes; a longer one is answered
//!   `431` and closed;
//! - every connection has [`Limits::connection_time`] to send its head and take its answer,
//!   and is closed at that deadline whatever it sends or withholds (a trickle, silence);
//! - the whole wait ends at the authorization's deadline.
//!
//! A `GET` of the redirect URI's path with a query is the callback: it gets an HTML page (the
//! authorization received, or the authorization server's `error` and `error_description`,
//! escaped, never the code or `state`) and ends the wait. Any other request (`/favicon.ico`…)
//! gets a small `404` and the wait goes on.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// How long one connection to the callback listener may take to send its request head and
/// receive the answer: a local process that connects and trickles (or sends nothing) is closed
/// after this, while the listener goes on serving the other connections.
pub const CALLBACK_CONNECTION_TIME: Duration = Duration::from_secs(5);

/// How long the loop sleeps when no connection is ready.
const POLL: Duration = Duration::from_millis(10);

/// The longest `error` shown on the error page, in characters (as the core keeps it).
const MAX_SHOWN_ERROR: usize = 128;

/// The longest `error_description` shown on the error page, in characters (as the core keeps
/// it).
const MAX_SHOWN_DESCRIPTION: usize = 256;

/// The bounds of the callback listener.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most connections held at once.
    pub connections: usize,
    /// The most bytes of a request head.
    pub head: usize,
    /// How long one connection may take to send its head and receive its answer.
    pub connection_time: Duration,
}

/// The bounds of the probe's listener.
pub const LIMITS: Limits = Limits {
    connections: 16,
    head: 8 * 1024,
    connection_time: CALLBACK_CONNECTION_TIME,
};

/// What a connection to the callback listener brought. Its `Debug` output redacts the
/// query's secrets (the code, `state`…).
#[derive(PartialEq, Eq)]
pub enum Callback {
    /// The redirect to the expected path, with this query.
    Query(String),
    /// A redirect to the callback of another authorization server: refused (mix-up).
    OtherServer,
    /// Anything else (answered 404).
    Other,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Callback::Query(q) => f
                .debug_tuple("Query")
                .field(&mcp_sansio::auth::redact::form(q))
                .finish(),
            Callback::OtherServer => f.write_str("OtherServer"),
            Callback::Other => f.write_str("Other"),
        }
    }
}

/// What the request head `head` is, for a callback expected at path `expected`: its query when
/// it is a `GET` of `expected` with one; [`Callback::OtherServer`] for a `GET` with a query of
/// another path under the same first segment (another authorization server's callback).
pub fn classify_callback(head: &str, expected: &str) -> Callback {
    let Some(line) = head.lines().next() else {
        return Callback::Other;
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Callback::Other;
    };
    if method != "GET" {
        return Callback::Other;
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if query.is_empty() {
        return Callback::Other;
    }
    if path == expected {
        return Callback::Query(query.to_owned());
    }
    let first = |p: &str| p.split('/').nth(1).map(str::to_owned);
    if first(path).is_some() && first(path) == first(expected) {
        return Callback::OtherServer;
    }
    Callback::Other
}

/// Serves the connections of `listener`, all at once and within `limits`, until one is a `GET`
/// of `expected` (the redirect URI's path) with a query; returns that query once its page is
/// written (at most until its connection's deadline). A redirect to the callback path of another
/// authorization server fails the wait; other requests are answered 404. Fails at `deadline`.
pub fn receive_callback(
    listener: &TcpListener,
    deadline: Instant,
    expected: &str,
    limits: &Limits,
) -> Result<String, String> {
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("callback listener: {e}"))?;
    let mut held: Vec<Connection> = Vec::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err("the browser did not come back to the callback in time".into());
        }
        let mut busy = false;
        // At most `limits.connections` accepts a round, so that a flood of connections cannot
        // starve the ones held.
        for _ in 0..limits.connections.max(1) {
            match listener.accept() {
                Ok((stream, _)) => {
                    busy = true;
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    if held.len() >= limits.connections.max(1) {
                        // The oldest makes room: dropped, so closed.
                        held.remove(0);
                    }
                    let until = deadline.min(now + limits.connection_time);
                    held.push(Connection::new(stream, until));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConnectionAborted
                            | ErrorKind::ConnectionReset
                            | ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(format!("callback listener: {e}")),
            }
        }
        let mut i = 0;
        while i < held.len() {
            match held[i].step(Instant::now(), expected, limits) {
                Step::Waiting => i += 1,
                Step::Progressed => {
                    busy = true;
                    i += 1;
                }
                Step::Closed(got) => {
                    busy = true;
                    held.remove(i);
                    match got {
                        Callback::Query(q) => return Ok(q),
                        Callback::OtherServer => {
                            return Err("the authorization response came back to the redirect \
                                URI of another authorization server"
                                .into())
                        }
                        Callback::Other => {}
                    }
                }
            }
        }
        if !busy {
            std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
        }
    }
}

/// One connection to the callback listener.
struct Connection {
    stream: TcpStream,
    /// Its deadline.
    until: Instant,
    /// The request head read so far (at most [`Limits::head`] bytes).
    head: Vec<u8>,
    /// Once the head is read and found not to be the callback: the answer (a 404, a 431) and
    /// how much of it is written.
    answer: Option<(Vec<u8>, usize)>,
}

/// What one step of a connection did.
enum Step {
    /// Nothing was ready.
    Waiting,
    /// Bytes moved; more to do.
    Progressed,
    /// The connection is done (answered, closed by its peer, failed or past its deadline),
    /// with what it brought: the callback (or another server's) is answered at once, so that
    /// nothing else the listener does can lose it.
    Closed(Callback),
}

impl Connection {
    fn new(stream: TcpStream, until: Instant) -> Connection {
        Connection {
            stream,
            until,
            head: Vec::new(),
            answer: None,
        }
    }

    /// Reads what is ready of the head, or writes what the socket takes of the answer.
    fn step(&mut self, now: Instant, expected: &str, limits: &Limits) -> Step {
        if now >= self.until {
            let _ = self.stream.shutdown(Shutdown::Both);
            return Step::Closed(Callback::Other);
        }
        if self.answer.is_none() {
            return self.read(expected, limits);
        }
        self.write()
    }

    fn read(&mut self, expected: &str, limits: &Limits) -> Step {
        let mut buf = [0u8; 1024];
        let room = limits.head.saturating_sub(self.head.len()).min(buf.len());
        let n = match self.stream.read(&mut buf[..room]) {
            Ok(0) => return Step::Closed(Callback::Other),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                return Step::Waiting
            }
            Err(_) => return Step::Closed(Callback::Other),
        };
        let scan_from = self.head.len().saturating_sub(3);
        self.head.extend_from_slice(&buf[..n]);
        let complete = self.head[scan_from..].windows(4).any(|w| w == b"\r\n\r\n");
        if complete {
            let got = classify_callback(&String::from_utf8_lossy(&self.head), expected);
            if got != Callback::Other {
                return self.answer_at_once(got);
            }
            self.answer = Some((answer(&got), 0));
        } else if self.head.len() >= limits.head {
            self.answer = Some((too_large(), 0));
        }
        Step::Progressed
    }

    /// Writes the page of the callback `got` (a few KiB at most, which a fresh socket's buffer
    /// takes whole) until the connection's deadline at the latest, and ends the connection.
    fn answer_at_once(&mut self, got: Callback) -> Step {
        let bytes = answer(&got);
        let _ = self.stream.set_nonblocking(false);
        let mut sent = 0;
        while sent < bytes.len() {
            let left = self.until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.stream.set_write_timeout(Some(left)).is_err() {
                break;
            }
            match self.stream.write(&bytes[sent..]) {
                Ok(0) => break,
                Ok(n) => sent += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = self.stream.shutdown(Shutdown::Write);
        Step::Closed(got)
    }

    fn write(&mut self) -> Step {
        let Some((bytes, sent)) = &mut self.answer else {
            return Step::Waiting;
        };
        match self.stream.write(&bytes[*sent..]) {
            Ok(0) => {}
            Ok(n) => {
                *sent += n;
                if *sent < bytes.len() {
                    return Step::Progressed;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                return Step::Waiting
            }
            Err(_) => {}
        }
        // Written (or failed): the answer ends the connection.
        let _ = self.stream.shutdown(Shutdown::Write);
        Step::Closed(Callback::Other)
    }
}

/// The HTTP response to a request that was `got`.
fn answer(got: &Callback) -> Vec<u8> {
    match got {
        Callback::Query(query) => html("200 OK", &page_for(query)),
        Callback::OtherServer => html(
            "400 Bad Request",
            &page(
                "Authorization stopped",
                "<p>This answer came back to the callback of another authorization server, so \
                 mcp-probe stopped the authorization (a mix-up defence). You can close this \
                 window.</p>",
            ),
        ),
        Callback::Other => plain("404 Not Found", "not found\n"),
    }
}

/// The answer to a request head longer than the limit.
fn too_large() -> Vec<u8> {
    plain(
        "431 Request Header Fields Too Large",
        "request head too large\n",
    )
}

/// The page for the callback with `query`: the authorization server's error when it sent
/// one, else the authorization received. It never shows the code or `state`.
pub fn page_for(query: &str) -> String {
    let pairs =
        match mcp_sansio::auth::form::parse_query(query) {
            Ok(p) => p,
            Err(_) => return page(
                "Authorization failed",
                "<p>mcp-probe could not read the authorization server's answer and stopped the \
                 authorization; the terminal says why. You can close this window.</p>",
            ),
        };
    let get = |n: &str| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    let Some(error) = get("error") else {
        return page(
            "Authorization received",
            "<p>mcp-probe received the authorization and finishes in the terminal. You can close \
             this window.</p>",
        );
    };
    let mut body = format!(
        "<p>The authorization server refused the authorization, so mcp-probe stopped it.</p>\
         <p>Error: <code id=\"error\">{}</code></p>",
        shown(error, MAX_SHOWN_ERROR)
    );
    if let Some(d) = get("error_description") {
        body.push_str(&format!(
            "<p>Description: <span id=\"error-description\">{}</span></p>",
            shown(d, MAX_SHOWN_DESCRIPTION)
        ));
    }
    body.push_str("<p>You can close this window.</p>");
    page("Authorization denied", &body)
}

/// Server-chosen text as inert HTML: at most `max` characters (then `…`), control and
/// bidirectional characters made visible escapes, and `& < > " '` character references.
fn shown(text: &str, max: usize) -> String {
    let cut: String = text.chars().take(max).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    let mut out = String::with_capacity(cut.len() + 16);
    for c in crate::inert::line(&cut).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out.push_str(more);
    out
}

/// A page titled `heading` with `body` (HTML the probe wrote, server text already escaped).
fn page(heading: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>mcp-probe: {heading}</title></head>\n<body><h1>{heading}</h1>{body}</body></html>\n"
    )
}

/// An HTML response that runs nothing, loads nothing and is not kept.
fn html(status: &str, body: &str) -> Vec<u8> {
    response(
        status,
        "text/html; charset=utf-8\r\ncontent-security-policy: default-src 'none'\r\n\
         referrer-policy: no-referrer\r\nx-content-type-options: nosniff",
        body,
    )
}

fn plain(status: &str, body: &str) -> Vec<u8> {
    response(status, "text/plain; charset=utf-8", body)
}

fn response(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncache-control: no-store\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// The callback path of the tests.
    const PATH: &str = "/callback";

    /// What [`receive_callback`] returned, and how long it took.
    type Outcome = (Result<String, String>, Duration);

    /// A listener on a free loopback port, served by [`receive_callback`] on a thread within
    /// `limits` until `wait` has passed; the port, and the outcome.
    fn serve(limits: Limits, wait: Duration) -> (u16, mpsc::Receiver<Outcome>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let start = Instant::now();
            let r = receive_callback(&listener, start + wait, PATH, &limits);
            let _ = tx.send((r, start.elapsed()));
        });
        (port, rx)
    }

    fn connect(port: u16) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// Sends a `GET` of `target` on a new connection; the whole response.
    fn get(port: u16, target: &str) -> String {
        let mut s = connect(port);
        write!(s, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    /// Whether the listener closed `s` within `within` (end of stream, a reset, or a response
    /// followed by the end of stream); `false` when it is still open and silent.
    fn closed(s: &mut TcpStream, within: Duration) -> bool {
        s.set_read_timeout(Some(within)).unwrap();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return false
                }
                Err(_) => return true,
            }
        }
    }

    const LONG: Duration = Duration::from_secs(30);

    fn limits(connections: usize, head: usize, connection_time: Duration) -> Limits {
        Limits {
            connections,
            head,
            connection_time,
        }
    }

    /// RFC 6749 §4.1.2: the callback's query carries the authorization code and `state`; its
    /// `Debug` output shows neither.
    #[test]
    fn a_callback_query_prints_without_its_code_and_state() {
        let c =
            Callback::Query("code=CODE-SECRET-1&state=STATE-SECRET-2&iss=https%3A%2F%2Fa".into());
        for text in [format!("{c:?}"), format!("{c:#?}")] {
            assert!(text.contains("Query") && text.contains("iss="), "{text}");
            assert!(!text.contains("CODE-SECRET-1"), "{text}");
            assert!(!text.contains("STATE-SECRET-2"), "{text}");
        }
    }

    /// Idle connections (a browser's speculative ones) are held while the favicon is answered
    /// 404 and the callback completes at once, long before their deadline.
    #[test]
    fn idle_connections_delay_neither_the_favicon_nor_the_callback() {
        let (port, rx) = serve(limits(16, 8192, LONG), LONG);
        let mut idle: Vec<TcpStream> = (0..3).map(|_| connect(port)).collect();
        let start = Instant::now();
        let favicon = get(port, "/favicon.ico");
        assert!(favicon.starts_with("HTTP/1.1 404 "), "{favicon}");
        let page = get(port, "/callback?code=c-1&state=s-1");
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        assert!(page.contains("Authorization received"), "{page}");
        let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(r.as_deref(), Ok("code=c-1&state=s-1"));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        // The idle ones were held, not answered: closed only when the wait ended.
        for s in &mut idle {
            assert!(closed(s, Duration::from_secs(5)));
        }
    }

    /// At most `connections` are held at once: one more closes the oldest held, and the
    /// callback arriving after them still completes.
    #[test]
    fn too_many_connections_close_the_oldest_held() {
        let (port, rx) = serve(limits(3, 8192, LONG), LONG);
        let mut first: Vec<TcpStream> = (0..3).map(|_| connect(port)).collect();
        std::thread::sleep(Duration::from_millis(300));
        let mut more: Vec<TcpStream> = (0..2).map(|_| connect(port)).collect();
        assert!(closed(&mut first[0], Duration::from_secs(5)), "the oldest");
        assert!(
            closed(&mut first[1], Duration::from_secs(5)),
            "the second oldest"
        );
        assert!(!closed(&mut first[2], Duration::from_millis(300)), "held");
        for s in &mut more {
            assert!(!closed(s, Duration::from_millis(100)), "held");
        }
        let page = get(port, "/callback?code=c&state=s");
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(r.as_deref(), Ok("code=c&state=s"));
    }

    /// A request head longer than `head` bytes is answered 431 and closed; the wait goes on.
    /// (The limit's worth of bytes without the head's end is already too long; the client sends
    /// exactly that, so that the listener's close leaves nothing unread to turn it into a reset.)
    #[test]
    fn a_huge_head_is_answered_431_and_the_wait_goes_on() {
        let (port, rx) = serve(limits(16, 1024, LONG), LONG);
        let mut s = connect(port);
        let mut huge = b"GET /callback?code=c HTTP/1.1\r\nx-filler: ".to_vec();
        huge.resize(1024, b'a');
        s.write_all(&huge).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 431 "), "a 431, got {answer:?}");
        assert!(rx.try_recv().is_err(), "the wait goes on");
        let page = get(port, "/callback?code=c&state=s");
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(r.as_deref(), Ok("code=c&state=s"));
    }

    /// A connection that trickles its head one byte at a time is closed at its own deadline;
    /// meanwhile the callback on another connection completes.
    #[test]
    fn a_slowloris_is_closed_at_its_deadline_and_does_not_delay_the_callback() {
        let time = Duration::from_millis(1500);
        let (port, rx) = serve(limits(16, 8192, time), LONG);
        let mut slow = connect(port);
        let opened = Instant::now();
        let trickle = slow.try_clone().unwrap();
        let trickler = std::thread::spawn(move || {
            let mut t = trickle;
            for b in b"GET /callback?code=slow HTTP/1.1\r\nHost: x\r\n"
                .iter()
                .cycle()
            {
                if t.write_all(&[*b]).is_err() || opened.elapsed() > Duration::from_secs(20) {
                    return opened.elapsed();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            opened.elapsed()
        });
        // The slowloris is closed at its deadline (its trickle then fails), not before.
        assert!(closed(&mut slow, Duration::from_secs(10)));
        let at = opened.elapsed();
        assert!(
            at >= time - Duration::from_millis(100),
            "closed after {at:?}"
        );
        assert!(at < time + Duration::from_secs(3), "closed after {at:?}");
        let ended = trickler.join().unwrap();
        assert!(ended < Duration::from_secs(15), "{ended:?}");
        assert!(rx.try_recv().is_err(), "the wait goes on");

        // A second slowloris, and the callback beside it completes at once.
        let mut slow = connect(port);
        write!(slow, "GET /callback?code=slow HTTP/1.1\r\n").unwrap();
        let start = Instant::now();
        let page = get(port, "/callback?code=c&state=s");
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(r.as_deref(), Ok("code=c&state=s"));
        assert!(start.elapsed() < time, "{:?}", start.elapsed());
    }

    /// The whole wait ends at the authorization's deadline, connections held or not.
    #[test]
    fn the_wait_ends_at_its_deadline_whatever_is_held() {
        let (port, rx) = serve(limits(16, 8192, LONG), Duration::from_millis(800));
        let _idle = connect(port);
        let mut slow = connect(port);
        write!(slow, "GET /call").unwrap();
        let (r, took) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(r.unwrap_err().contains("did not come back"));
        assert!(took >= Duration::from_millis(800), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    /// RFC 8252 §7.3: the answer for another authorization server's callback path ends the
    /// wait with the mix-up error, and its page says so.
    #[test]
    fn another_servers_callback_ends_the_wait_with_a_page() {
        let (port, rx) = serve(LIMITS, LONG);
        let page = get(port, "/callback/other?code=c&state=s");
        assert!(page.starts_with("HTTP/1.1 400 "), "{page}");
        assert!(page.contains("another authorization server"), "{page}");
        let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(r.unwrap_err().contains("another authorization server"));
    }

    /// RFC 6749 §4.1.2.1: a denied authorization comes back with `error` and
    /// `error_description`; the page shows both as text (HTML-escaped, control characters
    /// made visible, bounded), never the code or `state`, and runs nothing.
    #[test]
    fn the_error_page_shows_the_servers_error_as_inert_text() {
        let q = "error=%3Cb%3Eaccess_denied%3C%2Fb%3E&error_description=%3Cscript%3Ealert(1)\
                 %3C%2Fscript%3E+%26+%22q%22+%27a%27%1B%5B2J&state=STATE-SECRET";
        let page = page_for(q);
        assert!(page.contains("Authorization denied"), "{page}");
        assert!(page.contains("&lt;b&gt;access_denied&lt;/b&gt;"), "{page}");
        assert!(
            page.contains(
                "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#39;a&#39;\\u{1b}[2J"
            ),
            "{page}"
        );
        assert!(
            !page.contains("<b>") && !page.contains("<script>"),
            "{page}"
        );
        assert!(!page.contains('\u{1b}'), "{page}");
        assert!(!page.contains("STATE-SECRET"), "{page}");
        let long = format!("error=e&error_description={}", "x".repeat(5000));
        let page = page_for(&long);
        assert!(page.contains(&format!("{}…", "x".repeat(256))), "bounded");
        assert!(!page.contains(&"x".repeat(257)), "bounded");
        let response = String::from_utf8(answer(&Callback::Query(q.into()))).unwrap();
        assert!(
            response.contains("content-security-policy: default-src 'none'"),
            "{response}"
        );
    }

    #[test]
    fn the_success_page_holds_no_code_or_state() {
        let page = page_for("code=CODE-SECRET&state=STATE-SECRET&iss=https%3A%2F%2Fa");
        assert!(page.contains("Authorization received"), "{page}");
        assert!(!page.contains("CODE-SECRET") && !page.contains("STATE-SECRET"));
    }
}
