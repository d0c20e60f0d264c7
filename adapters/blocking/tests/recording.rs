//! Sessions recorded to a transcript sink, then replayed against the core.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcp_sansio::Config;
use mcp_sansio_blocking::{AddressPolicy, Client, TranscriptSink};
use mcp_sansio_transcript::{replay, Split, Transcript};
use support::Server;

/// Keeps each session's text and whether it was finished.
#[derive(Default)]
struct Memory {
    texts: Mutex<BTreeMap<u64, (String, bool)>>,
}

impl TranscriptSink for Memory {
    fn write(&self, session: u64, text: &str) {
        let mut t = self.texts.lock().unwrap();
        let entry = t.entry(session).or_default();
        assert!(!entry.1, "text after finish");
        entry.0.push_str(text);
    }
    fn finish(&self, session: u64) {
        self.texts.lock().unwrap().entry(session).or_default().1 = true;
    }
}

fn recording_client(sink: Arc<Memory>) -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .record_to(sink)
        .build()
}

/// The one finished transcript of `sink`, parsed, checked to replay as recorded and one byte at
/// a time.
fn replays(sink: &Memory) -> (String, Transcript) {
    let texts = sink.texts.lock().unwrap();
    assert_eq!(texts.len(), 1);
    let (text, finished) = texts.values().next().unwrap().clone();
    assert!(finished);
    let t = Transcript::parse(&text).unwrap();
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        let r = replay(&t, split).unwrap();
        assert_eq!(r.sends, t.sends(), "requests, {split:?}");
        assert_eq!(r.events, t.events(), "events, {split:?}");
        r.check(&t).unwrap();
    }
    (text, t)
}

#[test]
fn a_modern_session_replays_as_recorded() {
    let server = Server::start(support::modern);
    let sink = Arc::new(Memory::default());
    let client = recording_client(sink.clone());
    let mut s = client
        .connect(
            Config::new(&server.url())
                .unwrap()
                .with_bearer_token("tok-s3cr3t"),
        )
        .unwrap();
    s.list_tools().unwrap();
    s.call_tool("echo", br#"{"text":"hi"}"#).unwrap();
    s.close().unwrap();
    let (text, t) = replays(&sink);
    assert!(text.contains("config bearer-token <redacted>"));
    assert!(text.contains("Authorization: Bearer <redacted>"));
    assert!(!text.contains("tok-s3cr3t"));
    let outcome = t.outcome();
    assert!(outcome[0].get("connected").is_some(), "{outcome:?}");
    assert_eq!(
        outcome[1]["tools_listed"]["tools"],
        serde_json::json!(["echo", "add"])
    );
    assert_eq!(outcome.last().unwrap(), "closed");
    assert_eq!(t.sends().len(), 3);
}

#[test]
fn a_legacy_session_replays_as_recorded() {
    let server = Server::start(support::legacy);
    let sink = Arc::new(Memory::default());
    let client = recording_client(sink.clone());
    let mut s = client.connect(Config::new(&server.url()).unwrap()).unwrap();
    s.list_tools().unwrap();
    s.close().unwrap();
    let (_, t) = replays(&sink);
    assert_eq!(t.outcome()[0]["connected"]["era"], "legacy");
    assert!(t.sends().last().unwrap().2.starts_with(b"DELETE "));
}

#[test]
fn a_dropped_session_finishes_its_transcript() {
    let server = Server::start(support::modern);
    let sink = Arc::new(Memory::default());
    let client = recording_client(sink.clone());
    let s = client.connect(Config::new(&server.url()).unwrap()).unwrap();
    drop(s);
    let (_, t) = replays(&sink);
    assert_eq!(t.outcome().len(), 1);
}
