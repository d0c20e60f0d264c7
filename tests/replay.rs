//! Replays every transcript in `tests/transcripts/` against a fresh `Connection`, on a virtual
//! clock and without sockets: the recorded operations are issued, every request the core sends
//! must equal the recorded one (after redaction of `Authorization`, see docs/transcripts.md), the
//! recorded response bytes are fed at their recorded offsets, and the events must equal the
//! recorded outcome. Each transcript is replayed as recorded, then with its response bytes split
//! differently (one byte at a time, small pieces, adjacent pieces merged).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_sansio::transcript::{
    escape, event_summary, is_lifecycle, redact_request, Record, Recorder, Transcript,
};
use mcp_sansio::TransportError;
use mcp_sansio::{Connection, Event, ExchangeId, Instant};
use serde_json::Value;

/// How recorded response bytes are fed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// Each recorded piece as one `handle_bytes` call, as recorded.
    Recorded,
    /// Each recorded piece cut into pieces of at most this many bytes.
    Pieces(usize),
    /// Adjacent recorded pieces of the same exchange merged, fed at the last one's offset.
    Merged,
}

const SPLITS: [Split; 6] = [
    Split::Pieces(1),
    Split::Pieces(2),
    Split::Pieces(3),
    Split::Pieces(7),
    Split::Pieces(64),
    Split::Merged,
];

/// What a replay produced.
struct Replayed {
    sends: Vec<(u64, bool, Vec<u8>)>,
    events: Vec<Value>,
    /// The same run, recorded with a `Recorder` the way an adapter would.
    recording: Transcript,
}

struct Driver {
    conn: Connection,
    now: Instant,
    ended: HashSet<u64>,
    out: Replayed,
    recorder: Recorder,
}

impl Driver {
    fn drain(&mut self) {
        loop {
            let mut any = false;
            while let Some(t) = self.conn.poll_transmit() {
                self.recorder.transmit(self.now, &t);
                self.out
                    .sends
                    .push((t.exchange.0, t.fresh_socket, redact_request(&t.bytes)));
                any = true;
            }
            while let Some(e) = self.conn.poll_event() {
                self.recorder.event(&e);
                match &e {
                    Event::ExchangeFinished { exchange, .. }
                    | Event::ExchangeAbandoned { exchange } => {
                        self.ended.insert(exchange.0);
                    }
                    _ => {}
                }
                self.out.events.push(event_summary(&e));
                any = true;
            }
            if !any {
                return;
            }
        }
    }

    /// Moves the virtual clock to `at`, firing every deadline on the way as an adapter would.
    fn advance(&mut self, at: Instant) {
        for _ in 0..10_000 {
            match self.conn.poll_timeout() {
                Some(d) if d <= at => {
                    self.now = self.now.max(d);
                    self.recorder.timeout(self.now);
                    self.conn.handle_timeout(self.now);
                    self.drain();
                    if self.conn.poll_timeout() == Some(d) {
                        break; // nothing more is due at this instant
                    }
                }
                _ => break,
            }
        }
        self.now = self.now.max(at);
    }

    fn feed(&mut self, exchange: u64, bytes: &[u8], split: Split) {
        if self.ended.contains(&exchange) {
            return; // the socket was closed or pooled: nothing more is read from it
        }
        let size = match split {
            Split::Pieces(n) => n,
            Split::Recorded | Split::Merged => bytes.len().max(1),
        };
        for piece in bytes.chunks(size) {
            if self.ended.contains(&exchange) {
                return;
            }
            self.recorder.bytes(self.now, ExchangeId(exchange), piece);
            self.conn
                .handle_bytes(self.now, ExchangeId(exchange), piece);
            self.drain();
        }
    }
}

fn replay(t: &Transcript, split: Split) -> Result<Replayed, String> {
    let config = t.config.to_config().map_err(|e| e.to_string())?;
    let recorder = Recorder::new(&config, Instant::ZERO);
    let conn = Connection::new(config).map_err(|e| e.to_string())?;
    let mut d = Driver {
        conn,
        now: Instant::ZERO,
        ended: HashSet::new(),
        out: Replayed {
            sends: Vec::new(),
            events: Vec::new(),
            recording: recorder.transcript().clone(),
        },
        recorder,
    };
    let entries = &t.entries;
    let mut i = 0;
    while i < entries.len() {
        let entry = &entries[i];
        let mut at = Instant::ZERO + entry.at;
        let mut record = entry.record.clone();
        if let (Split::Merged, Record::Recv { exchange, bytes }) = (split, &mut record) {
            while let Some(next) = entries.get(i + 1) {
                match &next.record {
                    Record::Recv {
                        exchange: e,
                        bytes: b,
                    } if e == exchange => {
                        bytes.extend_from_slice(b);
                        at = Instant::ZERO + next.at;
                        i += 1;
                    }
                    _ => break,
                }
            }
        }
        i += 1;
        d.advance(at);
        let now = d.now;
        match record {
            Record::Operation(op) => {
                d.recorder.operation(now, op.clone());
                op.apply(&mut d.conn, now);
                d.drain();
            }
            Record::Recv { exchange, bytes } => d.feed(exchange, &bytes, split),
            Record::Eof { exchange } => {
                if !d.ended.contains(&exchange) {
                    d.recorder.eof(now, ExchangeId(exchange));
                    d.conn.handle_eof(now, ExchangeId(exchange));
                    d.drain();
                }
            }
            Record::TransportError {
                exchange,
                kind,
                message,
            } => {
                if !d.ended.contains(&exchange) {
                    let error = TransportError { kind, message };
                    d.recorder
                        .transport_error(now, ExchangeId(exchange), &error);
                    d.conn
                        .handle_transport_error(now, ExchangeId(exchange), error);
                    d.drain();
                }
            }
            Record::Timeout => {
                d.recorder.timeout(now);
                d.conn.handle_timeout(now);
                d.drain();
            }
            Record::Send { .. } | Record::Socket { .. } | Record::Event(_) => {}
        }
    }
    d.drain();
    d.out.recording = d.recorder.finish();
    Ok(d.out)
}

fn recorded_sends(t: &Transcript) -> Vec<(u64, bool, Vec<u8>)> {
    t.entries
        .iter()
        .filter_map(|e| match &e.record {
            Record::Send {
                exchange,
                fresh,
                bytes,
            } => Some((*exchange, *fresh, bytes.clone())),
            _ => None,
        })
        .collect()
}

/// Checks a replay against the transcript; describes the first difference.
fn check(t: &Transcript, got: &Replayed) -> Result<(), String> {
    let want = recorded_sends(t);
    for (n, (w, g)) in want.iter().zip(&got.sends).enumerate() {
        if w != g {
            let at = w.2.iter().zip(&g.2).position(|(a, b)| a != b);
            let at = at.unwrap_or(w.2.len().min(g.2.len()));
            let from = at.saturating_sub(60);
            let around = |b: &[u8]| escape(&b[from.min(b.len())..(at + 60).min(b.len())]);
            return Err(format!(
                "request {} differs at byte {at}:\n  recorded: exchange {} fresh {}: ...{}...\n  sent:     exchange {} fresh {}: ...{}...",
                n + 1,
                w.0,
                w.1,
                around(&w.2),
                g.0,
                g.1,
                around(&g.2)
            ));
        }
    }
    if want.len() != got.sends.len() {
        return Err(format!(
            "{} requests recorded, {} sent (first extra: {})",
            want.len(),
            got.sends.len(),
            got.sends
                .get(want.len())
                .map_or(String::from("-"), |s| escape(&s.2))
        ));
    }
    let with_lifecycle = t.events().iter().any(is_lifecycle);
    let (want, got): (Vec<Value>, Vec<Value>) = if with_lifecycle {
        (t.events(), got.events.clone())
    } else {
        (
            t.outcome(),
            got.events
                .iter()
                .filter(|v| !is_lifecycle(v))
                .cloned()
                .collect(),
        )
    };
    if want != got {
        let pos = want.iter().zip(&got).position(|(a, b)| a != b);
        let pos = pos.unwrap_or(want.len().min(got.len()));
        return Err(format!(
            "outcome differs at event {}:\n  recorded: {}\n  got:      {}\n  ({} events recorded, {} got)",
            pos + 1,
            want.get(pos).map_or("-".into(), Value::to_string),
            got.get(pos).map_or("-".into(), Value::to_string),
            want.len(),
            got.len()
        ));
    }
    Ok(())
}

fn transcript_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts")
}

fn transcripts() -> Vec<(String, Transcript)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(transcript_dir())
        .expect("tests/transcripts exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "transcript"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).expect("readable transcript");
            let t = Transcript::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, t)
        })
        .collect()
}

fn run_all(splits: &[Split]) {
    let mut failures = Vec::new();
    let all = transcripts();
    assert!(!all.is_empty());
    for (name, t) in &all {
        for split in splits {
            match replay(t, *split).and_then(|got| check(t, &got)) {
                Ok(()) => {}
                Err(e) => failures.push(format!("{name} ({split:?}): {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} replays failed:\n{}",
        failures.len(),
        all.len() * splits.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_transcript_replays_as_recorded() {
    run_all(&[Split::Recorded]);
}

#[test]
fn every_transcript_replays_in_other_splits() {
    run_all(&SPLITS);
}

/// A replay recorded with `Recorder` (as an adapter records a live run) is itself a transcript
/// that replays to the same requests and outcome, through its text form.
#[test]
fn recordings_of_replays_replay_the_same() {
    for (name, t) in transcripts() {
        let first = replay(&t, Split::Pieces(5)).unwrap();
        let text = first.recording.to_text();
        let again = Transcript::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(again, first.recording, "{name}: text round trip");
        // The recording holds the lifecycle events too, so they are compared as well.
        assert!(again.events().iter().any(is_lifecycle), "{name}");
        let second = replay(&again, Split::Recorded).unwrap();
        check(&again, &second).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(second.sends, first.sends, "{name}");
        assert_eq!(second.events, first.events, "{name}");
    }
}

#[test]
fn transcript_files_round_trip_through_text() {
    for (name, t) in transcripts() {
        let back = Transcript::parse(&t.to_text()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back, t, "{name}");
    }
}

/// A replay notices a request that differs from the recorded one, and an outcome that differs.
#[test]
fn replay_detects_differences() {
    let (name, mut t) = transcripts()
        .into_iter()
        .find(|(n, _)| n.contains("modern.session"))
        .expect("a modern session transcript");
    // A different client version changes every request.
    t.config.client_info.version = "9.9.9".into();
    let got = replay(&t, Split::Recorded).unwrap();
    let err = check(&t, &got).unwrap_err();
    assert!(err.starts_with("request 1 differs"), "{name}: {err}");

    let (_, mut t) = transcripts()
        .into_iter()
        .find(|(n, _)| n.contains("modern.session"))
        .unwrap();
    let last_event = t
        .entries
        .iter()
        .rposition(|e| matches!(e.record, Record::Event(_)))
        .unwrap();
    t.entries[last_event].record = Record::Event("\"something else\"".into());
    let got = replay(&t, Split::Recorded).unwrap();
    let err = check(&t, &got).unwrap_err();
    assert!(err.starts_with("outcome differs"), "{err}");
}

/// Lists of what the fixtures cover; each must be present.
#[test]
fn fixtures_cover_the_promised_ground() {
    let all = transcripts();
    assert!(all.len() >= 25, "{} fixtures", all.len());
    let has = |what: &str, pred: &dyn Fn(&Transcript) -> bool| {
        let n = all.iter().filter(|(_, t)| pred(t)).count();
        assert!(n > 0, "no fixture covers {what}");
        n
    };
    let outcome_has = |t: &Transcript, f: &dyn Fn(&Value) -> bool| t.outcome().iter().any(f);
    let connected = |era: &'static str| move |v: &Value| v["connected"]["era"] == era;
    has("a modern connection", &|t| {
        outcome_has(t, &connected("modern"))
    });
    has("a legacy connection", &|t| {
        outcome_has(t, &connected("legacy"))
    });
    has("the probe falling back to initialize", &|t| {
        t.config.era_hint.is_none() && outcome_has(t, &connected("legacy"))
    });
    has("a multi-page listing", &|t| {
        outcome_has(t, &|v| v["tools_listed"]["pages"].as_u64() > Some(1))
    });
    for kind in ["text", "image", "audio", "resource", "resource_link"] {
        has(kind, &|t| {
            outcome_has(t, &|v| {
                v["call_finished"]["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|b| b.get(kind).is_some()))
            })
        });
    }
    has("structured content", &|t| {
        outcome_has(t, &|v| v["call_finished"]["structured_content"].is_object())
    });
    has("a tool error", &|t| {
        outcome_has(t, &|v| v["call_finished"]["is_error"] == true)
    });
    has("a JSON-RPC error", &|t| {
        outcome_has(t, &|v| v["failed"]["kind"] == "mcp_server_answered_error")
    });
    has("progress", &|t| {
        outcome_has(t, &|v| v.get("progress").is_some())
    });
    has("input requests", &|t| {
        outcome_has(t, &|v| v.get("input_required").is_some())
    });
    has("a legacy close with DELETE", &|t| {
        recorded_sends(t)
            .iter()
            .any(|s| s.2.starts_with(b"DELETE "))
    });
    has("an event-stream response", &|t| {
        t.entries.iter().any(|e| match &e.record {
            Record::Recv { bytes, .. } => {
                let needle = b"content-type: text/event-stream";
                bytes
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle))
            }
            _ => false,
        })
    });
    has("a chunked response", &|t| {
        t.entries.iter().any(|e| match &e.record {
            Record::Recv { bytes, .. } => {
                let needle = b"transfer-encoding: chunked";
                bytes
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle))
            }
            _ => false,
        })
    });
    has("a transport error", &|t| {
        t.entries
            .iter()
            .any(|e| matches!(e.record, Record::TransportError { .. }))
    });
    has("a recorded timeout", &|t| {
        t.entries
            .iter()
            .any(|e| matches!(e.record, Record::Timeout))
    });
    has("a request on a fresh socket", &|t| {
        recorded_sends(t).iter().any(|s| s.1)
    });
    has("a resumption with Last-Event-ID", &|t| {
        recorded_sends(t)
            .iter()
            .any(|s| s.2.starts_with(b"GET ") && s.2.windows(14).any(|w| w == b"Last-Event-ID:"))
    });
    has("a redacted bearer token", &|t| {
        t.config.bearer_token
            && recorded_sends(t).iter().all(|s| {
                let needle = b"Authorization: Bearer <redacted>\r\n";
                s.2.windows(needle.len()).any(|w| w == needle)
            })
    });
    let spread = all
        .iter()
        .filter(|(_, t)| {
            t.entries.iter().any(|e| {
                e.at > Duration::from_millis(500) && matches!(e.record, Record::Recv { .. })
            })
        })
        .count();
    assert!(spread > 0, "no fixture feeds bytes over time");
}

mod properties {
    use mcp_sansio::transcript::{escape, unescape, Entry, Record, Transcript};
    use proptest::prelude::*;
    use std::time::Duration;

    fn base() -> Transcript {
        Transcript::parse("mcp-transcript 1\nconfig url http://127.0.0.1:1/mcp\n").unwrap()
    }

    proptest! {
        #[test]
        fn escapes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let text = escape(&bytes);
            prop_assert!(!text.contains('\n') && !text.contains('\r'));
            prop_assert_eq!(unescape(&text).unwrap(), bytes);
        }

        #[test]
        fn any_bytes_survive_the_text_form(
            pieces in proptest::collection::vec(
                (0u64..5, proptest::collection::vec(any::<u8>(), 0..64), 0u64..10_000_000),
                0..8,
            )
        ) {
            let mut t = base();
            let mut at = 0;
            for (exchange, bytes, step) in pieces {
                at += step;
                let record = if exchange == 0 {
                    Record::Send { exchange: 1, fresh: step % 2 == 0, bytes }
                } else {
                    Record::Recv { exchange, bytes }
                };
                t.entries.push(Entry { at: Duration::from_micros(at), record });
            }
            let back = Transcript::parse(&t.to_text()).unwrap();
            prop_assert_eq!(back, t);
        }

        #[test]
        fn parsing_never_panics(text in "mcp-transcript 1\n(config url http://h/\n)?[ -~\n]{0,200}") {
            let _ = Transcript::parse(&text);
        }
    }
}
