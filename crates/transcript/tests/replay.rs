//! Replays every transcript in `tests/transcripts/` against a fresh `Connection` with the crate's
//! replay driver, on a virtual clock and without sockets: the recorded operations are issued,
//! every request the core sends must equal the recorded one (after redaction of `Authorization`,
//! see docs/transcripts.md), the recorded response bytes are fed at their recorded offsets, and
//! the events must equal the recorded outcome. Each transcript is replayed as recorded, then with
//! its response bytes split differently (one byte at a time, small pieces, adjacent pieces
//! merged).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_sansio_transcript::{
    is_lifecycle, replay, Mismatch, Record, RecordedOperation, Split, Transcript,
};
use serde_json::Value;

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
            let result = replay(t, *split)
                .map_err(|e| e.to_string())
                .and_then(|got| got.check(t).map_err(|e| e.to_string()));
            if let Err(e) = result {
                failures.push(format!("{name} ({split:?}): {e}"));
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
    run_all(&Split::OTHERS);
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
        second
            .check(&again)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
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
    let err = got.check(&t).unwrap_err();
    assert!(
        matches!(err, Mismatch::Request { number: 1, .. }),
        "{name}: {err}"
    );
    assert!(
        err.to_string().starts_with("request 1 differs"),
        "{name}: {err}"
    );

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
    let err = got.check(&t).unwrap_err();
    assert!(matches!(err, Mismatch::Event { .. }), "{err}");
    assert!(err.to_string().starts_with("outcome differs"), "{err}");
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
        t.sends().iter().any(|s| s.2.starts_with(b"DELETE "))
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
        t.sends().iter().any(|s| s.1)
    });
    has("a resumption with Last-Event-ID", &|t| {
        t.sends()
            .iter()
            .any(|s| s.2.starts_with(b"GET ") && s.2.windows(14).any(|w| w == b"Last-Event-ID:"))
    });
    has("a redacted bearer token", &|t| {
        t.config.bearer_token
            && t.sends().iter().all(|s| {
                let needle = b"Authorization: Bearer <redacted>\r\n";
                s.2.windows(needle.len()).any(|w| w == needle)
            })
    });
    // HTTP/2 sessions (recorded by tests/h2_record.rs).
    let http2 = |t: &Transcript| t.config.http2.is_some();
    let opened = |t: &Transcript| {
        t.entries
            .iter()
            .filter(|e| matches!(e.record, Record::H2Open { .. }))
            .count()
    };
    has("an HTTP/2 session", &|t| http2(t));
    has("an HTTP/2 session moved to a fresh socket", &|t| {
        opened(t) > 1
    });
    has("an HTTP/2 session with a redacted bearer token", &|t| {
        http2(t) && t.config.bearer_token
    });
    has("an HTTP/2 legacy session", &|t| {
        http2(t) && outcome_has(t, &connected("legacy"))
    });
    has("an HTTP/2 budget failure", &|t| {
        http2(t)
            && outcome_has(t, &|v| {
                v["failed"]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("budget"))
            })
    });
    has("an HTTP/2 socket closed by the server", &|t| {
        t.entries
            .iter()
            .any(|e| matches!(e.record, Record::H2Eof { .. }))
    });
    has("an HTTP/2 socket that failed", &|t| {
        t.entries
            .iter()
            .any(|e| matches!(e.record, Record::H2Failure { .. }))
    });
    has("an HTTP/2 failed dial", &|t| {
        t.entries
            .iter()
            .any(|e| matches!(e.record, Record::H2DialError { .. }))
    });
    has("a tool call that became a task, completed", &|t| {
        t.config.tasks
            && t.sends()
                .iter()
                .any(|(_, _, b)| String::from_utf8_lossy(b).contains("\"tasks/get\""))
            && outcome_has(t, &|v| v["call_finished"].is_object())
    });
    has("a task resumed from its handle, completed", &|t| {
        t.entries.iter().any(|e| {
            matches!(
                e.record,
                Record::Operation(RecordedOperation::ResumeTask { cancel: false, .. })
            )
        }) && outcome_has(t, &|v| v["call_finished"].is_object())
    });
    has("a task resumed in a session with a bearer token", &|t| {
        t.config.bearer_token
            && t.entries.iter().any(|e| {
                matches!(
                    e.record,
                    Record::Operation(RecordedOperation::ResumeTask { .. })
                )
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
    use mcp_sansio_transcript::{escape, unescape, Entry, Record, Transcript};
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

        /// HTTP/2 blocks: any bytes survive the text form too, annotations and all (frames may be
        /// cut anywhere between entries).
        #[test]
        fn any_bytes_survive_the_http2_text_form(
            pieces in proptest::collection::vec(
                (0u8..4, proptest::collection::vec(any::<u8>(), 0..80), 0u64..10_000),
                0..10,
            )
        ) {
            let mut t = Transcript::parse(
                "mcp-transcript 1\nconfig url https://127.0.0.1:1/mcp\nconfig http 2 https\n",
            )
            .unwrap();
            let mut at = 0;
            let mut socket = 1;
            t.entries.push(Entry { at: Duration::ZERO, record: Record::H2Open { socket } });
            for (what, bytes, step) in pieces {
                at += step;
                let record = match what {
                    0 => Record::H2Write { socket, bytes },
                    1 => Record::H2Read { socket, bytes },
                    2 => {
                        socket += 1;
                        Record::H2Open { socket }
                    }
                    _ => Record::H2Eof { socket },
                };
                t.entries.push(Entry { at: Duration::from_micros(at), record });
            }
            let text = t.to_text();
            let back = Transcript::parse(&text).unwrap();
            prop_assert_eq!(back.to_text(), text);
            prop_assert_eq!(back, t);
        }

        #[test]
        fn parsing_never_panics(text in "mcp-transcript 1\n(config url http://h/\n)?[ -~\n]{0,200}") {
            let _ = Transcript::parse(&text);
        }

        #[test]
        fn parsing_http2_never_panics(
            text in "mcp-transcript 1\nconfig url https://h/\nconfig http 2 https\n(@[0-9]{1,3} (open|write|read|eof|transport-error|dial-error) [0-9] ?(io|connect)? ?\n([<>#] [ -~]{0,20}\n){0,3}){0,6}"
        ) {
            if let Ok(t) = Transcript::parse(&text) {
                // Whatever parses replays without panicking.
                let _ = mcp_sansio_transcript::replay(&t, mcp_sansio_transcript::Split::BYTE_BY_BYTE);
            }
        }
    }
}

/// A transcript's task handle is refused when the transcript is read, with the line and the
/// handle's own error: one byte of it changed (the task id, say) no longer meets its check
/// digest ("the task handle is corrupt"), and a cut one is truncated. Replaying it as nothing
/// started would only show as a difference later, far from its cause.
#[test]
fn a_tampered_task_handle_fails_the_transcript_with_a_clear_error() {
    use mcp_sansio::task::HandleError;
    use mcp_sansio_transcript::ParseErrorKind;
    let name = "demo-server_modern.task-resume-bearer.transcript";
    let text = std::fs::read_to_string(transcript_dir().join(name)).unwrap();
    Transcript::parse(&text).expect("the fixture reads");
    let (index, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with('@') && l.contains(" op resume "))
        .expect("a resume");
    let tamper = |new_line: String| {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines[index] = new_line;
        let mut out = lines.join("\n");
        out.push('\n');
        Transcript::parse(&out).expect_err("a tampered handle is refused")
    };
    let at = line.find("task-").expect("the task id in the handle");
    let mut changed = line.to_owned();
    changed.replace_range(at..at + 5, "TASK-");
    let e = tamper(changed);
    assert_eq!(e.line, index + 1);
    assert_eq!(e.kind, ParseErrorKind::TaskHandle(HandleError::Corrupt));
    let message = e.to_string();
    assert!(
        message.contains(&format!("line {}", index + 1)) && message.contains("corrupt"),
        "{message}"
    );
    let cut = line[..at + 9].to_owned();
    let e = tamper(cut);
    assert_eq!(e.kind, ParseErrorKind::TaskHandle(HandleError::Truncated));
}
