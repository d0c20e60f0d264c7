//! [`Recorder`]: what an adapter holds next to its connection and reports to.

use std::time::Duration;

use mcp_sansio::TransportError;
use mcp_sansio::{Config, Event, ExchangeId, Instant, Transmit};

use crate::h2::Annotator;
use crate::model::{Entry, Record, RecordedOperation, Transcript, TranscriptConfig};
use crate::redact::redact_request;
use crate::summary::event_summary;
use crate::write::write_entry;

/// Records a connection's inputs and outputs. Cheap to hold (a vector), `Send`, never fails.
#[derive(Clone, Debug)]
pub struct Recorder {
    start: Instant,
    last: Duration,
    header_taken: bool,
    annotator: Annotator,
    pub(crate) transcript: Transcript,
}

impl Recorder {
    /// A recorder for a connection made with `config`, whose timeline starts at `start`.
    pub fn new(config: &Config, start: Instant) -> Recorder {
        Recorder {
            start,
            last: Duration::ZERO,
            header_taken: false,
            annotator: Annotator::default(),
            transcript: Transcript {
                config: TranscriptConfig::from_config(config),
                comments: Vec::new(),
                entries: Vec::new(),
            },
        }
    }

    /// Adds a comment line to the transcript (e.g. what was recorded, against which server).
    pub fn comment(&mut self, text: &str) {
        self.transcript
            .comments
            .extend(text.lines().map(str::to_owned));
    }

    pub(crate) fn push(&mut self, now: Option<Instant>, record: Record) {
        if let Some(now) = now {
            self.last = now.saturating_since(self.start).max(self.last);
        }
        self.transcript.entries.push(Entry {
            at: self.last,
            record,
        });
    }

    /// An operation was started at `now`.
    pub fn operation(&mut self, now: Instant, operation: RecordedOperation) {
        self.push(Some(now), Record::Operation(operation));
    }

    /// A request was handed to the network at `now` (recorded redacted).
    pub fn transmit(&mut self, now: Instant, transmit: &Transmit) {
        let record = Record::Send {
            exchange: transmit.exchange.0,
            fresh: transmit.fresh_socket,
            bytes: redact_request(
                &mcp_sansio::socket::Http1Socket::encode(transmit).unwrap_or_default(),
            ),
        };
        self.push(Some(now), record);
    }

    /// The exchange went out on a pooled socket (`reused`) or a newly opened one.
    pub fn socket(&mut self, now: Instant, exchange: ExchangeId, reused: bool) {
        let record = Record::Socket {
            exchange: exchange.0,
            reused,
        };
        self.push(Some(now), record);
    }

    /// `bytes` were fed to the connection for `exchange` at `now`, in one call.
    pub fn bytes(&mut self, now: Instant, exchange: ExchangeId, bytes: &[u8]) {
        let record = Record::Recv {
            exchange: exchange.0,
            bytes: bytes.to_vec(),
        };
        self.push(Some(now), record);
    }

    /// The server closed `exchange`'s socket at `now`.
    pub fn eof(&mut self, now: Instant, exchange: ExchangeId) {
        self.push(
            Some(now),
            Record::Eof {
                exchange: exchange.0,
            },
        );
    }

    /// The transport failed for `exchange` at `now`.
    pub fn transport_error(&mut self, now: Instant, exchange: ExchangeId, error: &TransportError) {
        let record = Record::TransportError {
            exchange: exchange.0,
            kind: error.kind,
            message: error.message.clone(),
        };
        self.push(Some(now), record);
    }

    /// `handle_timeout` was called at `now`.
    pub fn timeout(&mut self, now: Instant) {
        self.push(Some(now), Record::Timeout);
    }

    /// An event was drained (recorded at the latest instant seen).
    pub fn event(&mut self, event: &Event) {
        let summary = event_summary(event).to_string();
        self.push(None, Record::Event(summary));
    }

    /// The transcript so far, without ending the recording.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The text of what was recorded since the last call (with the header on the first call), and
    /// forgets those entries: a sink can write a long recording as it goes, with bounded memory.
    /// The pieces, concatenated, are one transcript; [`finish`](Recorder::finish) then holds only
    /// the entries not yet taken.
    pub fn take_text(&mut self) -> String {
        let mut out = String::new();
        if !self.header_taken {
            self.header_taken = true;
            self.transcript.write_header(&mut out);
        }
        for e in self.transcript.entries.drain(..) {
            write_entry(&mut out, &e, &mut self.annotator);
        }
        out
    }

    /// Ends the recording.
    pub fn finish(self) -> Transcript {
        self.transcript
    }
}
