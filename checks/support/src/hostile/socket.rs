//! A socket server for the scenario catalogue: plays a [`Server`]'s scripts on a real stream.
//!
//! Only `std`. To run the catalogue against a blocking adapter: bind a `TcpListener` on
//! `127.0.0.1:0`, accept in a thread and call [`serve`] for every accepted stream with the
//! scenario's shared [`Server`], point the client at `http://127.0.0.1:<port>/mcp` with an address
//! policy that allows loopback, and stop the listener thread when the scenario ends.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::sync::Mutex;
use std::time::Duration;

use super::script::{head_end, parse_head, read_rpc, render, Request, Server, Step};

/// Longest request head the server reads.
const MAX_HEAD: usize = 64 * 1024;
/// How long a hanging script waits between checks that the client is still there.
const HANG_POLL: Duration = Duration::from_millis(50);

/// Serves requests on `stream` until the client closes it or a script closes or hangs it.
///
/// Requests may arrive one after another on the same stream (keep-alive): each is answered by
/// the next matching rule of `server`, which is shared by every stream of a scenario.
pub fn serve<S: Read + Write>(server: &Mutex<Server>, mut stream: S) {
    let mut buf = Vec::new();
    loop {
        let Some(req) = read_request(&mut stream, &mut buf) else {
            return;
        };
        let steps = server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answer(&req);
        match play(&steps, &mut stream) {
            Played::Continue => continue,
            Played::Ended => return,
            Played::Hang => {
                hang(&mut stream);
                return;
            }
        }
    }
}

enum Played {
    /// The script finished with the stream still usable for another request.
    Continue,
    /// The script closed the stream, or the client went away.
    Ended,
    /// The script wants the stream kept open and silent.
    Hang,
}

fn read_request<S: Read>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Request> {
    let mut tmp = [0u8; 4096];
    let end = loop {
        if let Some(end) = head_end(buf) {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut tmp).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let (mut req, len) = parse_head(&buf[..end])?;
    while buf.len() < end + len {
        let n = stream.read(&mut tmp).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    req.body = buf[end..end + len].to_vec();
    buf.drain(..end + len);
    read_rpc(&mut req);
    Some(req)
}

fn play<S: Write>(steps: &[Step], stream: &mut S) -> Played {
    for step in steps {
        let ok = match step {
            Step::Send(_) | Step::Respond { .. } | Step::Chunk(_) => {
                let bytes = render(step).unwrap_or_default();
                stream
                    .write_all(&bytes)
                    .and_then(|_| stream.flush())
                    .is_ok()
            }
            Step::Repeat { bytes, times } => {
                let mut ok = true;
                for _ in 0..*times {
                    if stream.write_all(bytes).is_err() {
                        ok = false;
                        break;
                    }
                }
                ok && stream.flush().is_ok()
            }
            Step::Trickle {
                bytes,
                piece,
                every,
            } => {
                let mut ok = true;
                for p in bytes.chunks((*piece).max(1)) {
                    std::thread::sleep(*every);
                    if stream.write_all(p).and_then(|_| stream.flush()).is_err() {
                        ok = false;
                        break;
                    }
                }
                ok
            }
            Step::Wait(d) => {
                std::thread::sleep(*d);
                true
            }
            Step::Close => return Played::Ended,
            Step::Hang => return Played::Hang,
        };
        if !ok {
            return Played::Ended;
        }
    }
    Played::Continue
}

/// Keeps the stream open without writing until the client closes it (a read returns 0 or
/// fails). With a blocking stream a read blocks until then; a stream with a read timeout is
/// polled every [`HANG_POLL`].
fn hang<S: Read>(stream: &mut S) {
    let mut tmp = [0u8; 1024];
    loop {
        match stream.read(&mut tmp) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                std::thread::sleep(HANG_POLL)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
