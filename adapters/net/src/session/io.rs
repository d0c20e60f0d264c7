//! What the session driver asks of an adapter and tells it: the [`Io`] it dispatches through,
//! the [`Report`] of a socket, the [`Wait`] of an operation, the [`Start`] of one, the
//! [`CallObserver`] of a call's progress, and how much to read at once ([`read_size`]).

use mcp_sansio::{ExchangeId, Transmit, TransportError};

/// Receives what a running tool call reports before it finishes. Every method does nothing by
/// default (and declines input requests).
pub trait CallObserver: Send {
    /// Progress the server reported.
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let _ = (progress, total, message);
    }

    /// Input requests of a multi-round-trip call (only when `Config::input_hook` is set); return
    /// the JSON object of responses keyed like the requests, or `None` to decline.
    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let _ = requests;
        None
    }

    /// The handle of the task the call's answer created (SEP-2663, with `Config::tasks` on),
    /// before the first `tasks/get` is sent, and again after each `tasks/update` (it records the
    /// answered keys): persist it so that another process can resume the task
    /// (`Connection::resume_task`). The call goes on; `call_tool` returns the task's result.
    fn task_handle(&mut self, handle: &mcp_sansio::task::TaskHandle) {
        let _ = handle;
    }

    /// A `tasks/get` report of the call's task: its status and `statusMessage` (cut and made
    /// inert, but the server's text).
    fn task_status(&mut self, status: mcp_sansio::task::TaskStatus, message: Option<&str>) {
        let _ = (status, message);
    }

    /// A legacy server's own request on the stream of the running operation or on the
    /// session's standalone `GET` stream (`elicitation/create`, `sampling/createMessage` or
    /// `roots/list`; only when `Config::input_hook` is set): return its result, a JSON object
    /// (at most `MAX_SERVER_ANSWER_BYTES`), or `None` to refuse it. `mcp_sansio::elicitation_defaults`
    /// gives the content of an elicitation that takes every default.
    fn server_request(
        &mut self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Option<Vec<u8>> {
        let _ = (method, params);
        None
    }
}

/// An observer that ignores everything and declines input requests.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl CallObserver for NoObserver {}

/// What a socket reports to the driver.
#[derive(Debug)]
pub enum Report {
    /// Bytes read; the socket reads again only after [`Io::read_on`].
    Bytes(Vec<u8>),
    /// The server closed the socket.
    Eof,
    /// The socket could not be opened, written or read.
    Failed(TransportError),
}

/// How an adapter moves bytes: the driver's only way to the network.
pub trait Io {
    /// Sends `request`, the HTTP/1.1 bytes of `transmit.request` (encoded by the driver through
    /// [`Http1Socket`](mcp_sansio::socket::Http1Socket)), for its exchange: on a newly dialled
    /// socket if `transmit.fresh_socket`, otherwise on an idle pooled socket of the origin or a
    /// new one; then reads once and reports. An error means no socket could even be set up for
    /// it.
    fn start(&mut self, transmit: Transmit, request: Vec<u8>) -> Result<(), TransportError>;
    /// The bytes last reported for `exchange` were fed to the core and its outputs drained: read
    /// once more.
    fn read_on(&mut self, exchange: ExchangeId);
    /// The core finished `exchange`: park its socket in the pool if `reusable` (the core decides,
    /// the `DELETE` included), otherwise close it.
    fn finish(&mut self, exchange: ExchangeId, reusable: bool);
    /// The core abandoned `exchange`: close its socket at once.
    fn abandon(&mut self, exchange: ExchangeId);
    /// Called before the [`read_on`](Io::read_on) calls of a pump with how many bytes the
    /// session may still read (its byte budget's remainder); an adapter sizes its next reads by
    /// it ([`read_size`]). Does nothing by default.
    fn read_allowance(&mut self, bytes_left: u64) {
        let _ = bytes_left;
    }
}

/// The smallest read an adapter asks of a socket: the first read of an exchange, and every read
/// while the previous one did not fill its buffer.
pub const READ_MIN: usize = 16 * 1024;

/// The largest read an adapter asks of a socket.
pub const READ_MAX: usize = 256 * 1024;

/// The largest read worth asking when the session may still read `bytes_left` bytes: a quarter of
/// that, within [`READ_MIN`] and [`READ_MAX`]. A read buffer (and the copy of what it read) so
/// stays a small part of the byte budget, while a large response moves in a few large reads
/// rather than hundreds of small ones, each a hand-off between the socket and the session.
pub fn read_size(bytes_left: u64) -> usize {
    let quarter = usize::try_from(bytes_left / 4).unwrap_or(usize::MAX);
    quarter.clamp(READ_MIN, READ_MAX)
}

/// The next read's size for a socket whose previous read asked `size` bytes and got `got`: four
/// times larger when it filled its buffer (more is waiting), within `cap` ([`read_size`]) and
/// never under [`READ_MIN`].
pub fn next_read_size(size: usize, got: usize, cap: usize) -> usize {
    let want = if got >= size {
        size.saturating_mul(4)
    } else {
        size
    };
    want.min(cap).max(READ_MIN)
}

/// The first read of an exchange: as much as the session's last exchange whose socket went back
/// to the pool read in all, `expect` (a page of a listing is usually followed by a page of about
/// the same size, read then in one read rather than several), within [`READ_MIN`] and the
/// session's read allowance `cap` ([`read_size`]).
pub fn read_first(expect: usize, cap: usize) -> usize {
    expect.min(cap).max(READ_MIN)
}

/// What the adapter waits for before pumping again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A report, or this instant of the adapter's clock, whichever comes first (then
    /// [`SessionDriver::timeout`](crate::SessionDriver::timeout)).
    Until(std::time::Instant),
    /// A report: nothing waits on time.
    Report,
    /// Nothing: no socket is open and nothing waits on time. The operation cannot end; the
    /// adapter returns [`SessionDriver::stuck`](crate::SessionDriver::stuck).
    Nothing,
}

/// The operation an adapter starts.
#[derive(Clone, Copy, Debug)]
pub enum Start<'a> {
    /// Negotiate.
    Connect,
    /// List every tool.
    ListTools,
    /// Call tool `name` with the JSON object `arguments` (sent verbatim).
    CallTool {
        /// The tool.
        name: &'a str,
        /// Its arguments.
        arguments: &'a [u8],
    },
    /// Resume the task of `handle` (SEP-2663): poll it to a terminal status as the call that
    /// created it would have, and, if `cancel`, send `tasks/cancel` first and poll to a terminal
    /// status within `task_cancel_time`. It ends as a tool call does.
    ResumeTask {
        /// The task's handle (`TaskHandle::from_bytes` of what the call observer persisted).
        handle: &'a mcp_sansio::task::TaskHandle,
        /// Cancel the task.
        cancel: bool,
    },
    /// One `tasks/get` of the task of `handle` (SEP-2663): the operation ends with the task's
    /// report, whatever its status (`Connection::get_task`).
    GetTask {
        /// The task's handle.
        handle: &'a mcp_sansio::task::TaskHandle,
    },
    /// Close.
    Close,
}

impl<'a> Start<'a> {
    /// [`Start::CallTool`] of tool `name` with `arguments`.
    pub fn call(name: &'a str, arguments: &'a [u8]) -> Start<'a> {
        Start::CallTool { name, arguments }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_read_asks_what_the_last_exchange_read_within_the_allowance() {
        // Nothing read yet, or little: the smallest read.
        assert_eq!(read_first(0, READ_MAX), READ_MIN);
        assert_eq!(read_first(100, READ_MAX), READ_MIN);
        // After a page of 80 KiB, the next first read asks 80 KiB.
        assert_eq!(read_first(80 * 1024, READ_MAX), 80 * 1024);
        // Never beyond the allowance, however much was read.
        assert_eq!(read_first(10 << 20, READ_MAX), READ_MAX);
        assert_eq!(read_first(80 * 1024, 32 * 1024), 32 * 1024);
        // An allowance under the smallest read still reads READ_MIN (as every first read did).
        assert_eq!(read_first(80 * 1024, 1), READ_MIN);
        // The allowance follows the byte budget: a quarter of what is left.
        assert_eq!(read_first(80 * 1024, read_size(200 * 1024)), 50 * 1024);
    }
}
