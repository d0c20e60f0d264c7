//! Budgets: the limits that bound everything a hostile server could make grow.
//!
//! Every limit is a plain number in a [`Budgets`] value, and every exceeded limit is reported as a
//! [`BudgetExceeded`] naming the [`Budget`] and its limit. The cumulative byte count of a
//! connection lives in one [`ByteLedger`], charged by the HTTP/1.1 decoder for every raw byte it
//! consumes (status lines, header blocks, 1xx blocks, chunk framing, trailers and bodies).

use core::fmt;
use core::time::Duration;

/// Which budget an operation exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Budget {
    /// Cumulative raw bytes read on one connection (every exchange, every byte).
    ResponseBytes,
    /// Raw bytes of one header block (status line and headers, a 1xx block, or trailers).
    HeaderBlock,
    /// Number of header fields in one header block.
    HeaderCount,
    /// Length of one chunk-size line of a chunked body (size, extensions and line end).
    ChunkLine,
    /// Number of 1xx informational responses before the final response of one exchange.
    InformationalResponses,
    /// Bytes of one server-sent event (its lines and data, before dispatch).
    SseEvent,
    /// `tools/list` pages in one listing.
    Pages,
    /// HTTP responses spent on one logical request (re-sends, resumptions, retries).
    ResponsesPerRequest,
    /// Resumption attempts of one request that brought no new event id.
    StalledResumptions,
    /// The deadline of one exchange that has no longer aggregate budget (handshake, listing page,
    /// close).
    RequestTime,
    /// The aggregate deadline of a whole tools listing.
    ListTime,
    /// The aggregate deadline of a whole tool call.
    CallTime,
    /// The deadline of closing a connection.
    CloseTime,
    /// Raw bytes an HTTP/2 socket receives that no stream owns (stream-0 frames, frames for
    /// streams already closed or reset), across every work item sharing the socket: an allowance
    /// of this many bytes that each completed stream refills by 1/256 of it (plus the
    /// WINDOW_UPDATE bytes it paid for: at most 32 per DATA frame of the request body, never
    /// more than the WINDOW_UPDATE bytes charged), never above the limit.
    H2SocketBytes,
    /// Content blocks one call result keeps. Not configured on its own: one block per
    /// [`CONTENT_BLOCK_BYTES`] of the byte budget (see [`Budgets::content_blocks`]).
    ContentBlocks,
    /// The aggregate deadline of one task (SEP-2663): from its `CreateTaskResult` to a terminal
    /// status, across every poll, update and resumption. Separate from [`Budget::CallTime`]:
    /// tasks run long.
    TaskTime,
    /// `tasks/get` polls of one task.
    TaskPolls,
    /// Bytes of one task id: a longer `taskId` is refused.
    TaskIdBytes,
    /// `tasks/update` rounds of one task (each answers the input requests of one poll).
    TaskUpdateRounds,
    /// The deadline of a task's cancellation: from `tasks/cancel` to a terminal status.
    TaskCancelTime,
}

/// Bytes of the byte budget that pay for one kept content block of a call result: a block
/// holds about a hundred bytes however few it took on the wire (26 for
/// `{"type":"text","text":""},`), so a result may keep at most one block per this many bytes of
/// [`Budgets::response_bytes`] (32 768 with the default 8 MiB). Its blocks then hold less than
/// half the byte budget, and a result of any shape stays within the memory bound of
/// docs/guarantees.md.
pub const CONTENT_BLOCK_BYTES: u64 = 256;

/// The fewest content blocks a result may keep, however small the byte budget.
const MIN_CONTENT_BLOCKS: u64 = 16;

impl Budget {
    /// A stable, snake_case name for logs and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            Budget::ResponseBytes => "response_bytes",
            Budget::HeaderBlock => "header_block_bytes",
            Budget::HeaderCount => "header_count",
            Budget::ChunkLine => "chunk_line_bytes",
            Budget::InformationalResponses => "informational_responses",
            Budget::SseEvent => "sse_event_bytes",
            Budget::Pages => "pages",
            Budget::ResponsesPerRequest => "responses_per_request",
            Budget::StalledResumptions => "stalled_resumptions",
            Budget::RequestTime => "request_time_ms",
            Budget::ListTime => "list_time_ms",
            Budget::CallTime => "call_time_ms",
            Budget::CloseTime => "close_time_ms",
            Budget::H2SocketBytes => "h2_socket_bytes",
            Budget::ContentBlocks => "content_blocks",
            Budget::TaskTime => "task_time_ms",
            Budget::TaskPolls => "task_polls",
            Budget::TaskIdBytes => "task_id_bytes",
            Budget::TaskUpdateRounds => "task_update_rounds",
            Budget::TaskCancelTime => "task_cancel_time_ms",
        }
    }

    /// Whether this budget bounds time (its limit is in milliseconds) rather than bytes or a
    /// count.
    pub const fn is_time(self) -> bool {
        matches!(
            self,
            Budget::RequestTime
                | Budget::ListTime
                | Budget::CallTime
                | Budget::CloseTime
                | Budget::TaskTime
                | Budget::TaskCancelTime
        )
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A budget was exceeded: which one, and its limit (bytes, a count, or milliseconds for the time
/// budgets, as [`Budget::name`] says).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("budget exceeded: {budget} (limit {limit})")]
pub struct BudgetExceeded {
    /// The budget that was exceeded.
    pub budget: Budget,
    /// Its configured limit.
    pub limit: u64,
}

impl BudgetExceeded {
    /// A new report for `budget` with its `limit`.
    pub const fn new(budget: Budget, limit: u64) -> Self {
        BudgetExceeded { budget, limit }
    }
}

/// The cumulative count of raw bytes read on one connection, against its limit.
///
/// Charging never lets the count pass the limit: a charge that would cross it fails and leaves the
/// ledger exhausted (`used == limit`), so every later charge fails too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteLedger {
    limit: u64,
    used: u64,
}

impl ByteLedger {
    /// A ledger allowing `limit` bytes in all.
    pub const fn new(limit: u64) -> Self {
        ByteLedger { limit, used: 0 }
    }

    /// Count `n` bytes read; fails with [`Budget::ResponseBytes`] if that crosses the limit.
    pub fn charge(&mut self, n: usize) -> Result<(), BudgetExceeded> {
        let n = n as u64;
        if n > self.limit - self.used {
            self.used = self.limit;
            return Err(self.exceeded());
        }
        self.used += n;
        Ok(())
    }

    /// Bytes that may still be read.
    pub const fn remaining(&self) -> u64 {
        self.limit - self.used
    }

    /// Bytes counted so far.
    pub const fn used(&self) -> u64 {
        self.used
    }

    /// The error this ledger reports when exhausted.
    pub const fn exceeded(&self) -> BudgetExceeded {
        BudgetExceeded::new(Budget::ResponseBytes, self.limit)
    }
}

/// Every budget of a connection, with the defaults of the design.
///
/// No budget can be switched off: each is a finite number. Time budgets are [`Duration`]s measured
/// on the caller's clock (see the crate docs on time).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Budgets {
    /// Cumulative raw bytes read per connection. Default 8 MiB.
    pub response_bytes: u64,
    /// Raw bytes of one header block. Default 64 KiB.
    pub header_block_bytes: usize,
    /// Header fields in one header block. Default 128.
    pub header_count: usize,
    /// Bytes of one chunk-size line (with extensions). Default 4 KiB.
    pub chunk_line_bytes: usize,
    /// 1xx responses allowed before the final one, per exchange. Default 16.
    pub informational_responses: u32,
    /// Bytes of one server-sent event before it is dispatched. Default: the byte budget.
    pub sse_event_bytes: u64,
    /// `tools/list` pages per listing. Default 100.
    pub pages: u32,
    /// HTTP responses per logical request (re-sends, resumptions, retries). Default 8.
    pub responses_per_request: u32,
    /// Resumptions without a new event id, per request. Default 2.
    pub stalled_resumptions: u32,
    /// Deadline of one handshake, listing-page or other non-call exchange, and of one dial. Default 30 s.
    pub request_time: Duration,
    /// Aggregate deadline of a listing. Default 120 s.
    pub list_time: Duration,
    /// Aggregate deadline of a tool call. Default 120 s.
    pub call_time: Duration,
    /// Deadline of closing (legacy DELETE) and grace of a legacy cancellation. Default 5 s.
    pub close_time: Duration,
    /// Longest wait a server's SSE `retry:` may ask for before a resumption. Default 10 s.
    pub max_retry_wait: Duration,
    /// Raw bytes per HTTP/2 socket that no stream owns, refilled as streams complete (see
    /// [`Budget::H2SocketBytes`]). Default 1 MiB.
    pub h2_socket_bytes: u64,
    /// Aggregate deadline of one task, from its creation to a terminal status (SEP-2663).
    /// Default 1 h.
    pub task_time: Duration,
    /// `tasks/get` polls per task. Default 4096 (over an hour at the default floor).
    pub task_polls: u32,
    /// The shortest wait between two polls of a task, whatever `pollIntervalMs` says (a
    /// `pollIntervalMs: 0` is a flood otherwise). Default 1 s.
    pub task_poll_floor: Duration,
    /// The longest wait between two polls of a task, whatever `pollIntervalMs` says. Default
    /// 30 s.
    pub task_poll_ceiling: Duration,
    /// Bytes of a task id; a longer one is refused. Default 256.
    pub task_id_bytes: usize,
    /// Bytes kept of a task's `statusMessage` (cut on a character boundary). Default 1 KiB.
    pub status_message_bytes: usize,
    /// `tasks/update` rounds per task. Default 16.
    pub task_update_rounds: u32,
    /// Deadline from `tasks/cancel` to a terminal status. Default 30 s.
    pub task_cancel_time: Duration,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            response_bytes: 8 * 1024 * 1024,
            header_block_bytes: 64 * 1024,
            header_count: 128,
            chunk_line_bytes: 4 * 1024,
            informational_responses: 16,
            sse_event_bytes: 8 * 1024 * 1024,
            pages: 100,
            responses_per_request: 8,
            stalled_resumptions: 2,
            request_time: Duration::from_secs(30),
            list_time: Duration::from_secs(120),
            call_time: Duration::from_secs(120),
            close_time: Duration::from_secs(5),
            max_retry_wait: Duration::from_secs(10),
            h2_socket_bytes: 1024 * 1024,
            task_time: Duration::from_secs(60 * 60),
            task_polls: 4096,
            task_poll_floor: Duration::from_secs(1),
            task_poll_ceiling: Duration::from_secs(30),
            task_id_bytes: 256,
            status_message_bytes: 1024,
            task_update_rounds: 16,
            task_cancel_time: Duration::from_secs(30),
        }
    }
}

impl Budgets {
    /// The configured limit of `budget`, in the unit a [`BudgetExceeded`] reports it: bytes or a
    /// count, or whole milliseconds for the time budgets (saturating at `u64::MAX`).
    ///
    /// ```
    /// use core::time::Duration;
    /// use mcp_sansio::{Budget, Budgets};
    ///
    /// let budgets = Budgets::default();
    /// assert_eq!(budgets.limit(Budget::Pages), 100);
    /// assert_eq!(budgets.limit(Budget::CallTime), 120_000);
    /// ```
    pub fn limit(&self, budget: Budget) -> u64 {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        match budget {
            Budget::ResponseBytes => self.response_bytes,
            Budget::HeaderBlock => as_u64(self.header_block_bytes),
            Budget::HeaderCount => as_u64(self.header_count),
            Budget::ChunkLine => as_u64(self.chunk_line_bytes),
            Budget::InformationalResponses => u64::from(self.informational_responses),
            Budget::SseEvent => self.sse_event_bytes,
            Budget::Pages => u64::from(self.pages),
            Budget::ResponsesPerRequest => u64::from(self.responses_per_request),
            Budget::StalledResumptions => u64::from(self.stalled_resumptions),
            Budget::RequestTime => ms(self.request_time),
            Budget::ListTime => ms(self.list_time),
            Budget::CallTime => ms(self.call_time),
            Budget::CloseTime => ms(self.close_time),
            Budget::H2SocketBytes => self.h2_socket_bytes,
            Budget::ContentBlocks => self.content_blocks(),
            Budget::TaskTime => ms(self.task_time),
            Budget::TaskPolls => u64::from(self.task_polls),
            Budget::TaskIdBytes => as_u64(self.task_id_bytes),
            Budget::TaskUpdateRounds => u64::from(self.task_update_rounds),
            Budget::TaskCancelTime => ms(self.task_cancel_time),
        }
    }

    /// The report that `budget` ran out under these budgets: the one way the connection names a
    /// spent budget, so that the limit it reports is always the one it enforced
    /// ([`limit`](Self::limit), in the budget's unit).
    ///
    /// ```
    /// use mcp_sansio::{Budget, Budgets};
    ///
    /// let e = Budgets::default().exceeded(Budget::Pages);
    /// assert_eq!((e.budget, e.limit), (Budget::Pages, 100));
    /// ```
    pub fn exceeded(&self, budget: Budget) -> BudgetExceeded {
        BudgetExceeded::new(budget, self.limit(budget))
    }

    /// How many content blocks one call result may keep ([`Budget::ContentBlocks`]): one per
    /// [`CONTENT_BLOCK_BYTES`] of [`Budgets::response_bytes`], at least 16. Blocks dropped as of
    /// unknown type or malformed are counted, not kept, and do not count here.
    ///
    /// ```
    /// use mcp_sansio::Budgets;
    ///
    /// assert_eq!(Budgets::default().content_blocks(), 32_768);
    /// ```
    pub fn content_blocks(&self) -> u64 {
        (self.response_bytes / CONTENT_BLOCK_BYTES).max(MIN_CONTENT_BLOCKS)
    }
}

/// A `usize` limit as a `u64`, saturating (never truncating) on a hypothetical wider `usize`.
fn as_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn ledger_stops_at_limit() {
        let mut l = ByteLedger::new(10);
        assert!(l.charge(4).is_ok());
        assert!(l.charge(6).is_ok());
        assert_eq!(l.remaining(), 0);
        let e = l.charge(1).unwrap_err();
        assert_eq!(e, BudgetExceeded::new(Budget::ResponseBytes, 10));
        assert_eq!(l.used(), 10);
    }

    #[test]
    fn crossing_charge_exhausts() {
        let mut l = ByteLedger::new(10);
        assert!(l.charge(11).is_err());
        assert_eq!(l.used(), 10);
        assert!(l.charge(0).is_ok());
        assert!(l.charge(1).is_err());
    }

    #[test]
    fn error_names_budget_and_limit() {
        let e = BudgetExceeded::new(Budget::Pages, 100);
        assert_eq!(e.to_string(), "budget exceeded: pages (limit 100)");
    }

    #[test]
    fn limit_reads_each_budget_in_its_reported_unit() {
        let b = Budgets {
            response_bytes: 1,
            header_block_bytes: 2,
            header_count: 3,
            chunk_line_bytes: 4,
            informational_responses: 5,
            sse_event_bytes: 6,
            pages: 7,
            responses_per_request: 8,
            stalled_resumptions: 9,
            request_time: Duration::from_millis(10),
            list_time: Duration::from_secs(11),
            call_time: Duration::from_micros(12_999),
            close_time: Duration::from_millis(13),
            max_retry_wait: Duration::from_millis(14),
            h2_socket_bytes: 15,
            task_time: Duration::from_millis(16),
            task_polls: 17,
            task_poll_floor: Duration::from_millis(18),
            task_poll_ceiling: Duration::from_millis(19),
            task_id_bytes: 20,
            status_message_bytes: 21,
            task_update_rounds: 22,
            task_cancel_time: Duration::from_millis(23),
        };
        let expected = [
            (Budget::ResponseBytes, 1),
            (Budget::HeaderBlock, 2),
            (Budget::HeaderCount, 3),
            (Budget::ChunkLine, 4),
            (Budget::InformationalResponses, 5),
            (Budget::SseEvent, 6),
            (Budget::Pages, 7),
            (Budget::ResponsesPerRequest, 8),
            (Budget::StalledResumptions, 9),
            (Budget::RequestTime, 10),
            (Budget::ListTime, 11_000),
            // Whole milliseconds, rounded down, as the deadline errors report them.
            (Budget::CallTime, 12),
            (Budget::CloseTime, 13),
            (Budget::H2SocketBytes, 15),
            // Derived from the byte budget, at least 16.
            (Budget::ContentBlocks, 16),
            (Budget::TaskTime, 16),
            (Budget::TaskPolls, 17),
            (Budget::TaskIdBytes, 20),
            (Budget::TaskUpdateRounds, 22),
            (Budget::TaskCancelTime, 23),
        ];
        for (budget, limit) in expected {
            assert_eq!(b.limit(budget), limit, "{budget}");
            assert_eq!(budget.is_time(), budget.name().ends_with("_ms"), "{budget}");
        }
    }

    #[test]
    fn time_limit_saturates() {
        let b = Budgets {
            call_time: Duration::MAX,
            ..Budgets::default()
        };
        assert_eq!(b.limit(Budget::CallTime), u64::MAX);
    }
}
