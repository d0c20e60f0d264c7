//! [`H2Config`]: the limits of one HTTP/2 connection.
use super::*;

/// Limits of one HTTP/2 connection. Every field is a finite number; see the module docs of
/// the `h2` module docs for what each bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct H2Config {
    /// Raw octets no stream owns, per socket: the capacity of an allowance that refills as
    /// streams complete (see [`socket_refill`](Self::socket_refill)). Default 1 MiB.
    pub socket_bytes: u64,
    /// Octets a stream gives back to the socket's allowance when its response completes
    /// (END_STREAM received). On top of it the stream gives back the WINDOW_UPDATE frames the
    /// allowance paid for: at most 32 octets (`WINDOW_UPDATE_CREDIT`) per DATA frame of its request body,
    /// and at most the octets of WINDOW_UPDATE frames charged to the allowance (stream 0, or a
    /// stream no longer open) and not yet given back, so that in all the socket never gets
    /// back more than the server spent on WINDOW_UPDATEs (a server granting 1-octet windows
    /// earns nothing beyond them). The allowance never holds more than `socket_bytes`. Default
    /// `socket_bytes` / 256 (4 KiB).
    pub socket_refill: u64,
    /// Control output queued and not yet taken. Default 64 KiB.
    pub control_output_bytes: usize,
    /// Streams at once, at most, further capped by the server's SETTINGS_MAX_CONCURRENT_STREAMS
    /// (one stream until its SETTINGS arrive). Default 100: as many as the server allows, up to
    /// the least RFC 9113 §6.5.2 recommends a server allow, so that the work items sharing a
    /// socket wait for a stream slot only when the server says so or a hundred are open.
    pub max_streams: u32,
    /// The connection's receive window. Default 2 MiB.
    pub connection_window: u32,
    /// A stream's receive window, at most. Default 256 KiB. Below it, a stream's window is what
    /// its allowance has left plus one octet, never less than one 16 KiB frame (the least a
    /// server writing whole frames needs to reach the frame that crosses the allowance).
    pub max_stream_window: u32,
    /// Raw octets of one header block (HEADERS + CONTINUATIONs). Default 64 KiB.
    pub header_block_bytes: usize,
    /// CONTINUATION frames in one header block. Default 8.
    pub max_continuations: u32,
    /// Limits of one decoded header list. Default 65536 octets, 128 fields.
    pub header_list: DecodeLimits,
    /// Empty DATA frames (no payload, no END_STREAM) per socket: the capacity of an allowance
    /// that gets one frame back per completed stream. Default 100.
    pub empty_data_frames: u32,
    /// PRIORITY frames per socket, an allowance refilled like `empty_data_frames`. Default 100.
    pub priority_frames: u32,
    /// Frames of unknown type per socket, an allowance refilled like `empty_data_frames`.
    /// Default 100.
    pub unknown_frames: u32,
    /// 1xx responses per stream before the final one. Default 16.
    pub informational_responses: u32,
    /// How long the server has to acknowledge our SETTINGS. Default 10 s.
    pub settings_timeout: Duration,
}

impl H2Config {
    /// The report that `budget`, one of those this configuration holds (the per-socket bytes,
    /// one header block's raw octets, informational responses, the decoded header fields), ran
    /// out: the one way the HTTP/2 layer names a spent budget, with the limit it enforced. Any
    /// other budget reports its limit as 0.
    pub fn exceeded(&self, budget: Budget) -> BudgetExceeded {
        let limit = match budget {
            Budget::H2SocketBytes => self.socket_bytes,
            Budget::HeaderBlock => self.header_block_bytes as u64,
            Budget::InformationalResponses => u64::from(self.informational_responses),
            Budget::HeaderCount => self.header_list.max_fields as u64,
            _ => 0,
        };
        BudgetExceeded::new(budget, limit)
    }
}

impl Default for H2Config {
    fn default() -> Self {
        H2Config {
            socket_bytes: 1024 * 1024,
            socket_refill: 1024 * 1024 / SOCKET_REFILL_SHARE,
            control_output_bytes: 64 * 1024,
            max_streams: 100,
            connection_window: 2 * 1024 * 1024,
            max_stream_window: 256 * 1024,
            header_block_bytes: 64 * 1024,
            max_continuations: 8,
            header_list: DecodeLimits::default(),
            empty_data_frames: 100,
            priority_frames: 100,
            unknown_frames: 100,
            informational_responses: 16,
            settings_timeout: Duration::from_secs(10),
        }
    }
}

impl H2Config {
    /// The connection limits that follow from a work item's [`Budgets`]: the per-socket ledger
    /// (`h2_socket_bytes`, refilled by 1/256 of it per completed stream), the raw header block (`header_block_bytes`), the header count
    /// (`header_count`) and the 1xx count (`informational_responses`); the rest are defaults.
    pub fn from_budgets(b: &Budgets) -> Self {
        let d = H2Config::default();
        H2Config {
            socket_bytes: b.h2_socket_bytes,
            socket_refill: b.h2_socket_bytes / SOCKET_REFILL_SHARE,
            header_block_bytes: b.header_block_bytes,
            header_list: DecodeLimits {
                max_fields: b.header_count,
                ..d.header_list
            },
            informational_responses: b.informational_responses,
            ..d
        }
    }
}
