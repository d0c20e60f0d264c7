//! The bookkeeping of an exchange a session drives itself ("inline"), without a task or thread
//! of its own: both adapters start the only live exchange of a session on an idle pooled socket
//! this way, so that a response costs no hand-off per read. [`InlineExchange`] holds everything
//! but the socket: how much of the request is written, whether it still needs a flush, where
//! the exchange is ([`InlinePhase`]) and the read sizes. The adapter asks
//! [`next`](InlineExchange::next) what to do, does it on its socket (async or blocking), and
//! reports what happened; when another exchange starts, [`hand_over`](InlineExchange::hand_over)
//! says where a task or thread takes over.

use std::io;
use std::net::SocketAddr;

use mcp_sansio::ExchangeId;

use crate::session::io::next_read_size;

/// Where an inline exchange is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InlinePhase {
    /// Writing the request, or reading: the session moves its bytes while it waits.
    Go,
    /// Bytes reported: waiting for [`Io::read_on`](crate::Io::read_on) or
    /// [`Io::finish`](crate::Io::finish).
    Parked,
    /// Its end (EOF or a failure) reported.
    Ended,
}

/// What the socket of an inline exchange must do next.
#[derive(Debug, PartialEq, Eq)]
pub enum InlineStep<'a> {
    /// Write these bytes of the request (then report with [`InlineExchange::wrote`]).
    Write(&'a [u8]),
    /// Flush the written request (then [`InlineExchange::flushed`]).
    Flush,
    /// Read at most this many bytes (then [`InlineExchange::read`]).
    Read(usize),
}

/// Where a task or thread takes over an inline exchange: the socket (`S`) and address of the
/// exchange, and what it must do first ([`HandOver`]).
#[derive(Debug)]
pub struct Resume<S> {
    /// The exchange's socket.
    pub stream: S,
    /// Where it is connected.
    pub address: SocketAddr,
    /// Bytes were reported: wait for a command before reading.
    pub parked: bool,
    /// What the last read got.
    pub got: usize,
    /// Write what is left of the request (possibly nothing) and flush first.
    pub flush: bool,
}

impl<S> Resume<S> {
    /// The exchange `over` hands over, on `stream` connected to `address`.
    pub fn new(stream: S, address: SocketAddr, over: &HandOver) -> Self {
        Resume {
            stream,
            address,
            parked: over.parked,
            got: over.got,
            flush: over.flush,
        }
    }
}

/// Where a task or thread takes over an inline exchange ([`InlineExchange::hand_over`]).
#[derive(Debug)]
pub struct HandOver {
    /// The exchange.
    pub exchange: ExchangeId,
    /// What is left of the request to write (possibly nothing).
    pub request: Vec<u8>,
    /// Write `request` and flush before reading.
    pub flush: bool,
    /// Bytes were reported: wait for a command before reading.
    pub parked: bool,
    /// What the last read got.
    pub got: usize,
    /// The next read's size.
    pub size: usize,
    /// Bytes reported so far.
    pub read: usize,
}

/// An exchange a session drives itself, without its socket (see the module docs).
#[derive(Debug)]
pub struct InlineExchange {
    exchange: ExchangeId,
    request: Vec<u8>,
    /// Bytes of `request` written.
    written: usize,
    /// The request is written but not yet flushed.
    flush: bool,
    phase: InlinePhase,
    /// The next read's size.
    size: usize,
    /// What the last read got.
    got: usize,
    /// Bytes reported so far.
    read: usize,
}

impl InlineExchange {
    /// `exchange`, whose `request` is still to be written, reading `size` bytes first.
    pub fn new(exchange: ExchangeId, request: Vec<u8>, size: usize) -> InlineExchange {
        InlineExchange {
            exchange,
            request,
            written: 0,
            flush: true,
            phase: InlinePhase::Go,
            size,
            got: 0,
            read: 0,
        }
    }

    /// The exchange.
    pub fn exchange(&self) -> ExchangeId {
        self.exchange
    }

    /// Where it is.
    pub fn phase(&self) -> InlinePhase {
        self.phase
    }

    /// Bytes reported so far.
    pub fn bytes_read(&self) -> usize {
        self.read
    }

    /// What the socket must do next (only meaningful in [`InlinePhase::Go`]).
    pub fn next(&self) -> InlineStep<'_> {
        if self.written < self.request.len() {
            InlineStep::Write(&self.request[self.written..])
        } else if self.flush {
            InlineStep::Flush
        } else {
            InlineStep::Read(self.size)
        }
    }

    /// `n` bytes of [`InlineStep::Write`] were written; none is an error (`WriteZero`).
    pub fn wrote(&mut self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.written = (self.written + n).min(self.request.len());
        self.flush = true;
        Ok(())
    }

    /// The request was flushed.
    pub fn flushed(&mut self) {
        self.flush = false;
    }

    /// A read got `n` bytes: `true` if that is the end of stream (`n` = 0). Either way there is
    /// something to report, and the exchange waits for the driver.
    pub fn read(&mut self, n: usize) -> bool {
        if n == 0 {
            self.phase = InlinePhase::Ended;
            return true;
        }
        self.got = n;
        self.read = self.read.saturating_add(n);
        self.phase = InlinePhase::Parked;
        false
    }

    /// The socket failed: the failure is reported, the exchange is over.
    pub fn failed(&mut self) {
        self.phase = InlinePhase::Ended;
    }

    /// The driver took the bytes reported: read on, the next read sized by what the last one
    /// got ([`next_read_size`], at most `read_cap`).
    pub fn read_on(&mut self, read_cap: usize) {
        if self.phase == InlinePhase::Parked {
            self.size = next_read_size(self.size, self.got, read_cap);
            self.phase = InlinePhase::Go;
        }
    }

    /// Where a task or thread takes over, if the exchange is not over.
    pub fn hand_over(mut self) -> Option<HandOver> {
        if self.phase == InlinePhase::Ended {
            return None;
        }
        let request = self.request.split_off(self.written.min(self.request.len()));
        Some(HandOver {
            exchange: self.exchange,
            flush: !request.is_empty() || self.flush,
            request,
            parked: self.phase == InlinePhase::Parked,
            got: self.got,
            size: self.size,
            read: self.read,
        })
    }
}

/// An adapter's inline exchange: whatever holds the [`InlineExchange`] with its socket.
pub trait HoldsInline {
    /// The exchange's state.
    fn state(&self) -> &InlineExchange;
    /// The exchange's state, to move it on.
    fn state_mut(&mut self) -> &mut InlineExchange;
}

/// [`Io::read_on`](crate::Io::read_on) of the inline exchange in `slot` if it is `exchange`'s:
/// it may read again, at most `read_cap` bytes; false when `exchange` is not inline.
pub fn read_on_inline<T: HoldsInline>(
    slot: &mut Option<T>,
    exchange: ExchangeId,
    read_cap: usize,
) -> bool {
    match inline_of(slot, exchange) {
        Some(i) => {
            i.state_mut().read_on(read_cap);
            true
        }
        None => false,
    }
}

/// The inline exchange in `slot` if it is `exchange`'s.
pub fn inline_of<T: HoldsInline>(slot: &mut Option<T>, exchange: ExchangeId) -> Option<&mut T> {
    slot.as_mut().filter(|i| i.state().exchange() == exchange)
}

/// Takes the inline exchange out of `slot` if it is `exchange`'s.
pub fn take_inline<T: HoldsInline>(slot: &mut Option<T>, exchange: ExchangeId) -> Option<T> {
    inline_of(slot, exchange)?;
    slot.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_request_in_pieces_flushes_once_then_reads_and_hands_over_the_rest() {
        let x = ExchangeId(3);
        let mut e = InlineExchange::new(x, b"abcdef".to_vec(), 16);
        assert_eq!(e.next(), InlineStep::Write(b"abcdef"));
        e.wrote(4).unwrap();
        assert_eq!(e.next(), InlineStep::Write(b"ef"));
        let h = InlineExchange {
            request: e.request.clone(),
            ..e
        };
        let over = h.hand_over().unwrap();
        assert_eq!(over.request, b"ef");
        assert!(over.flush && !over.parked);
        assert!(e.wrote(0).is_err(), "a write of nothing is an error");
        e.wrote(2).unwrap();
        assert_eq!(e.next(), InlineStep::Flush);
        e.flushed();
        assert_eq!(e.next(), InlineStep::Read(16));
        assert!(!e.read(16));
        assert_eq!(e.phase(), InlinePhase::Parked);
        assert_eq!(e.bytes_read(), 16);
        e.read_on(1 << 20);
        assert_eq!(e.phase(), InlinePhase::Go);
        assert!(
            matches!(e.next(), InlineStep::Read(n) if n > 16),
            "a full read grows the next"
        );
        assert!(e.read(0), "no byte is the end of stream");
        assert_eq!(e.phase(), InlinePhase::Ended);
        assert!(
            e.hand_over().is_none(),
            "an exchange that ended is not handed over"
        );
    }
}
