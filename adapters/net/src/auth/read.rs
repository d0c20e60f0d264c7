//! The response of one authorization exchange, decoded by the core's HTTP/1.1 socket
//! ([`AuthRead`]).
//!
//! The plaintext of the exchange's socket goes through [`Http1Socket`], the socket type that
//! reads the MCP traffic's HTTP/1.1 responses, as the [`Input`]s of one exchange; this module
//! turns them into the [`AuthResponse`] the authorizer takes. The exchange's [`Allowance`] is
//! its own: a byte ledger of the body limit, one byte more and [`HEAD_ALLOWANCE`], charged with
//! each input's raw cost as a connection charges it, and the default HTTP/1.1 response limits.

use mcp_sansio::auth::AuthResponse;
use mcp_sansio::http1::ResponseLimits;
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::wire::ResponseEvent;
use mcp_sansio::{Allowance, ByteLedger, ExchangeId, Input, TransportError, TransportErrorKind};

/// Bytes of response head and framing allowed on top of an authorization response's body limit.
pub const HEAD_ALLOWANCE: usize = 64 * 1024;

/// Raw bytes allowed on top of the plaintext limit of an `https` exchange: the server's handshake
/// (certificate chain included), session tickets and record framing.
pub const TLS_ALLOWANCE: usize = 64 * 1024;

/// Bytes read from an exchange's socket at a time.
pub const EXCHANGE_READ: usize = 16 * 1024;

/// The one exchange an [`AuthRead`]'s socket reads.
const EXCHANGE: ExchangeId = ExchangeId(0);

/// The response of one authorization exchange, read from its plaintext: see the
/// [module docs](self).
#[derive(Debug)]
pub struct AuthRead {
    socket: Http1Socket,
    /// What the response cost so far, against the exchange's plaintext limit.
    ledger: ByteLedger,
    limits: ResponseLimits,
    response: AuthResponse,
    max_body: usize,
}

impl AuthRead {
    /// A reader of a response whose body may hold `max_body` bytes (one more is kept, so that
    /// the core sees the excess and refuses it).
    pub fn new(max_body: usize) -> AuthRead {
        AuthRead {
            socket: Http1Socket::new(),
            ledger: ByteLedger::new(plaintext_limit(max_body)),
            limits: ResponseLimits::default(),
            response: AuthResponse::default(),
            max_body,
        }
    }

    /// `bytes` of plaintext were read, in any split: the response once it ended or its body
    /// passed the limit by one byte, else `None` (read on).
    pub fn read(&mut self, bytes: &[u8]) -> Result<Option<AuthResponse>, TransportError> {
        let allowance = Allowance {
            ledger: self.ledger.clone(),
            limits: self.limits,
        };
        let mut done = false;
        for input in self.socket.read(EXCHANGE, bytes, allowance) {
            if take(&mut self.ledger, &mut self.response, self.max_body, input)? {
                done = true;
                break;
            }
        }
        Ok(self.finished(done))
    }

    /// The server closed the socket: the response if it is complete, or ends at the close (a
    /// body without length).
    pub fn eof(&mut self) -> Result<AuthResponse, TransportError> {
        let input = self.socket.eof(EXCHANGE);
        if take(&mut self.ledger, &mut self.response, self.max_body, input)? {
            return Ok(std::mem::take(&mut self.response));
        }
        Err(io_text(
            "the server closed the socket before the response ended".into(),
        ))
    }

    /// What one read of the exchange's socket into `buf` (`got`: its result) means: the
    /// response or an error, or `None` (read on). `Ok(0)` is the server's close ([`eof`]); an
    /// interrupted read is retried; a TLS close without close_notify (`UnexpectedEof`) lets the
    /// response's framing judge the end; any other error is `failed(e)`.
    ///
    /// [`eof`]: AuthRead::eof
    pub fn after_read(
        &mut self,
        got: std::io::Result<usize>,
        buf: &[u8],
        failed: impl FnOnce(std::io::Error) -> TransportError,
    ) -> Option<Result<AuthResponse, TransportError>> {
        match got {
            Ok(0) => Some(self.eof()),
            Ok(n) => self.read(&buf[..n]).transpose(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => None,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Some(self.eof()),
            Err(e) => Some(Err(failed(e))),
        }
    }

    /// The response, once `done`; the socket forgets the exchange.
    fn finished(&mut self, done: bool) -> Option<AuthResponse> {
        done.then(|| {
            self.socket.forget(EXCHANGE);
            std::mem::take(&mut self.response)
        })
    }
}

/// The most plaintext bytes an exchange whose body may hold `max_body` bytes reads.
pub fn plaintext_limit(max_body: usize) -> u64 {
    let n = max_body.saturating_add(1).saturating_add(HEAD_ALLOWANCE);
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The most raw bytes an exchange whose body may hold `max_body` bytes reads from its socket:
/// its [`plaintext_limit`], and over TLS a sixteenth more for record framing and
/// [`TLS_ALLOWANCE`].
pub fn raw_limit(max_body: usize, tls: bool) -> u64 {
    let plaintext = plaintext_limit(max_body);
    if !tls {
        return plaintext;
    }
    plaintext
        .saturating_add(plaintext / 16)
        .saturating_add(TLS_ALLOWANCE as u64)
}

/// Takes one input into `response`, charging its raw cost to `ledger`: whether the response is
/// done (ended, or its body passed `max_body` by one byte).
fn take(
    ledger: &mut ByteLedger,
    response: &mut AuthResponse,
    max_body: usize,
    input: Input<'_>,
) -> Result<bool, TransportError> {
    let event = match input {
        Input::ResponseBegun { .. } => return Ok(false),
        Input::Response { event, .. } => event,
        Input::WireError { error, .. } => return Err(io_text(format!("response: {error}"))),
        Input::Eof { .. } => {
            return Err(io_text(
                "the server closed the socket before the response ended".into(),
            ))
        }
        Input::TransportError { error, .. } => return Err(error),
    };
    let raw = match &event {
        ResponseEvent::Head { raw, .. }
        | ResponseEvent::Body { raw, .. }
        | ResponseEvent::End { raw, .. } => *raw,
    };
    // The socket decoded the event against a copy of this ledger: the charge fits.
    let _ = ledger.charge(usize::try_from(raw).unwrap_or(usize::MAX));
    match event {
        ResponseEvent::Head { head, .. } => {
            response.status = head.status;
            response.headers = head.headers;
            Ok(false)
        }
        ResponseEvent::Body { bytes, .. } => {
            let room = max_body
                .saturating_add(1)
                .saturating_sub(response.body.len());
            response
                .body
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
            Ok(response.body.len() > max_body)
        }
        ResponseEvent::End { .. } => Ok(true),
    }
}

fn io_text(message: String) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_split_anywhere_decodes_the_same() {
        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
        for split in 0..answer.len() {
            let mut r = AuthRead::new(100);
            let response = match r.read(&answer[..split]).unwrap() {
                Some(response) => response,
                None => r.read(&answer[split..]).unwrap().unwrap(),
            };
            assert_eq!(response.status, 200, "split {split}");
            assert_eq!(response.body, b"hello", "split {split}");
        }
    }

    /// The head and framing may take [`HEAD_ALLOWANCE`] bytes on top of the body's limit and
    /// one byte: a chunked body of one-byte chunks (six raw bytes each) spends the plaintext
    /// limit long before its body reaches the body limit, and is refused there.
    #[test]
    fn plaintext_past_the_limit_is_refused() {
        let max_body = 100_000;
        assert_eq!(
            plaintext_limit(max_body),
            (max_body + 1 + HEAD_ALLOWANCE) as u64
        );
        let mut r = AuthRead::new(max_body);
        let head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        assert!(r.read(head).unwrap().is_none());
        let mut sent = head.len();
        let chunks = b"1\r\na\r\n".repeat(1000);
        let refused = loop {
            match r.read(&chunks) {
                Ok(None) => sent += chunks.len(),
                Ok(Some(response)) => panic!("a response of {} bytes", response.body.len()),
                Err(e) => break e,
            }
        };
        assert!(
            (sent as u64) < plaintext_limit(max_body),
            "refused at the limit, not before: {sent}"
        );
        assert!(
            sent as u64 + chunks.len() as u64 >= plaintext_limit(max_body),
            "refused at the limit, not after: {sent}"
        );
        assert_eq!(refused.kind, TransportErrorKind::Io, "{refused:?}");
    }

    #[test]
    fn a_body_past_its_limit_is_cut_one_byte_past_it() {
        let mut r = AuthRead::new(3);
        let response = r
            .read(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789")
            .unwrap()
            .unwrap();
        assert_eq!(response.body, b"0123");
    }

    #[test]
    fn a_close_ends_a_body_without_length() {
        let mut r = AuthRead::new(100);
        let read = r
            .read(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nab")
            .unwrap();
        assert!(read.is_none(), "a body without length runs until the close");
        let response = r.eof().unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.body, b"ab");
    }

    #[test]
    fn a_close_before_the_end_of_a_sized_body_fails() {
        let mut r = AuthRead::new(100);
        assert!(r
            .read(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab")
            .unwrap()
            .is_none());
        assert!(r.eof().is_err());
    }
}
