//! The recording tests of both adapters: sessions recorded to a transcript sink, then replayed
//! against the core. An adapter's `tests/recording.rs` brings this module (as `recording`) into
//! scope and declares the tests with [`crate::recording_tests!`], giving only how its runtime
//! drives a session.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcp_sansio_net::{AddressPolicy, BuildClient, ClientBuilder};
use mcp_sansio_transcript::{replay, Split, Transcript, TranscriptSink};

/// Keeps each session's text and whether it was finished.
#[derive(Default)]
pub struct Memory {
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

impl Memory {
    /// The text of every session, finished, in session order.
    pub fn texts(&self) -> Vec<String> {
        let texts = self.texts.lock().unwrap();
        assert!(texts.values().all(|(_, finished)| *finished));
        texts.values().map(|(t, _)| t.clone()).collect()
    }
}

/// A client of either adapter that allows loopback and records to `sink`.
pub fn recording_client<C: BuildClient>(sink: Arc<Memory>) -> C {
    ClientBuilder::<C>::new()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .record_to(sink)
        .build()
}

/// [`recording_client`] forced to HTTP/1.1 ([`ClientBuilder::http1_only`]) and offered HTTP/2
/// with prior knowledge, which forcing HTTP/1.1 overrides.
pub fn recording_http1_client<C: BuildClient>(sink: Arc<Memory>) -> C {
    ClientBuilder::<C>::new()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .http1_only(true)
        .h2_prior_knowledge(true)
        .record_to(sink)
        .build()
}

/// The one finished transcript of `sink`, parsed, checked to replay as recorded and one byte at
/// a time.
pub fn replays(sink: &Memory) -> (String, Transcript) {
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

/// A modern session with a bearer token (connect, list, call `echo`, close): the secret is
/// redacted and the outcome is the session's.
pub fn check_modern(sink: &Memory) {
    let (text, t) = replays(sink);
    assert!(text.contains("config bearer-token <redacted>"));
    assert!(text.contains("Authorization: Bearer <redacted>"));
    assert!(!text.contains("tok-s3cr3t"));
    let outcome = t.outcome();
    assert!(outcome[0].get("connected").is_some(), "{outcome:?}");
    assert_eq!(
        outcome[1]["tools_listed"]["tools"],
        serde_json::json!(["echo", "add"])
    );
    assert_eq!(outcome[2]["call_finished"]["content"][0]["text"], "hi");
    assert_eq!(outcome.last().unwrap(), "closed");
    assert_eq!(t.sends().len(), 3);
}

/// A legacy session (connect, list, close) ends with its `DELETE`.
pub fn check_legacy(sink: &Memory) {
    let (_, t) = replays(sink);
    assert_eq!(
        t.sends().len(),
        5,
        "discover, initialize, initialized, list, DELETE"
    );
    assert_eq!(t.outcome()[0]["connected"]["era"], "legacy");
    assert!(t.sends().last().unwrap().2.starts_with(b"DELETE "));
}

/// A session dropped after connecting still finishes its transcript.
pub fn check_dropped(sink: &Memory) {
    let (_, t) = replays(sink);
    assert_eq!(t.outcome().len(), 1);
}

/// A client of either adapter that allows loopback, trusts `roots`, speaks HTTP/2 with prior
/// knowledge to `http` endpoints when `h2c`, and records to `sink`.
pub fn recording_h2_client<C: BuildClient>(
    sink: Arc<Memory>,
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    h2c: bool,
) -> C {
    ClientBuilder::<C>::new()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .add_root_certificates(roots)
        .h2_prior_knowledge(h2c)
        .record_to(sink)
        .build()
}

/// The transcript of an HTTP/2 session with a bearer token (list, call `echo`, close) against
/// the in-test HTTP/2 server (`checks/support/src/h2_server.rs`), whose requests had `:scheme`
/// `scheme`: it carries `config http 2`, replays as recorded, byte by byte, in 3-byte pieces
/// and merged, with the same outcome and the same written frames (after redaction), and the
/// token never appears in it.
pub fn check_h2(sink: &Memory, scheme: &str) -> Transcript {
    let (text, t) = replays(sink);
    assert!(
        text.contains(&format!("config http 2 {scheme}\n")),
        "{text}"
    );
    let setup = t.config.http2.as_ref().expect("an HTTP/2 transcript");
    assert_eq!(setup.scheme, scheme);
    assert!(text.contains("config bearer-token <redacted>"));
    assert!(text.contains("Bearer <redacted>"), "the redacted header");
    assert!(!text.contains("tok-s3cr3t"));
    assert!(t.sends().is_empty(), "no HTTP/1.1 request");
    let writes = t.h2_writes();
    assert!(!writes.is_empty());
    assert!(writes.iter().all(|(socket, _)| *socket == 1), "one socket");
    let outcome = t.outcome();
    assert!(outcome[0].get("connected").is_some(), "{outcome:?}");
    assert_eq!(
        outcome[1]["tools_listed"]["tools"],
        serde_json::json!(["echo"])
    );
    assert_eq!(outcome[2]["call_finished"]["content"][0]["text"], "hi");
    assert_eq!(outcome.last().unwrap(), "closed");
    for split in [Split::Pieces(3), Split::Merged] {
        let r = replay(&t, split).unwrap();
        assert_eq!(r.events, t.events(), "events, {split:?}");
        assert_eq!(r.recording.outcome(), outcome, "outcome, {split:?}");
        r.check(&t).unwrap();
    }
    t
}

/// The transcript of an HTTP/2 session (two listings) whose first socket the server sent GOAWAY
/// on after the first answer: the second listing ran on a fresh socket, so the transcript opens
/// two sockets, and it replays (as recorded, byte by byte, merged) with the same outcome and
/// writes.
pub fn check_h2_fresh_socket(sink: &Memory) {
    let (text, t) = replays(sink);
    check_two_sockets(&text, &t);
    let r = replay(&t, Split::Merged).unwrap();
    assert_eq!(r.recording.outcome(), t.outcome());
    r.check(&t).unwrap();
}

/// The transcript `t` (whose text is `text`) of an HTTP/2 session of two listings moved to a
/// fresh socket after the first: it opens two sockets, writes on both, and its outcome has the
/// two listings.
pub fn check_two_sockets(text: &str, t: &Transcript) {
    assert_eq!(text.matches(" open ").count(), 2, "two sockets: {text}");
    let writes = t.h2_writes();
    for socket in [1, 2] {
        assert!(
            writes.iter().any(|(s, _)| *s == socket),
            "writes on {socket}"
        );
    }
    let outcome = t.outcome();
    let lists = outcome
        .iter()
        .filter(|e| e.get("tools_listed").is_some())
        .count();
    assert_eq!(lists, 2, "{outcome:?}");
}

/// Declares the recording tests of an adapter whose `Client` and `Config` are in scope:
/// `#[$test]` is its test attribute, `async` is present when its operations are futures,
/// `[$($wait)*]` is what waits for an operation (`.await`, or nothing), and `$modern` /
/// `$legacy` start a modern and a legacy in-test server.
#[macro_export]
macro_rules! recording_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*] modern: $modern:expr, legacy: $legacy:expr) => {
        #[$test]
        $($async)? fn a_modern_session_replays_as_recorded() {
            let server = $modern;
            let sink = Arc::new(Memory::default());
            let client: Client = recording_client(sink.clone());
            let config = Config::new(&server.url()).unwrap().with_bearer_token("tok-s3cr3t");
            let mut s = client.connect(config)$($wait)*.unwrap();
            s.list_tools()$($wait)*.unwrap();
            s.call_tool("echo", br#"{"text":"hi"}"#)$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            check_modern(&sink);
        }

        #[$test]
        $($async)? fn a_session_forced_to_http1_is_recorded_as_http1() {
            let server = $modern;
            let sink = Arc::new(Memory::default());
            let client: Client = recording_http1_client(sink.clone());
            let config = Config::new(&server.url()).unwrap().with_bearer_token("tok-s3cr3t");
            let mut s = client.connect(config)$($wait)*.unwrap();
            assert_eq!(s.http_version(), "HTTP/1.1");
            s.list_tools()$($wait)*.unwrap();
            s.call_tool("echo", br#"{"text":"hi"}"#)$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            check_modern(&sink);
            assert!(sink.texts()[0].lines().all(|l| !l.starts_with("config http 2")));
        }

        #[$test]
        $($async)? fn a_legacy_session_replays_as_recorded() {
            let server = $legacy;
            let sink = Arc::new(Memory::default());
            let client: Client = recording_client(sink.clone());
            let mut s = client.connect(Config::new(&server.url()).unwrap())$($wait)*.unwrap();
            s.list_tools()$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            check_legacy(&sink);
        }

        #[$test]
        $($async)? fn a_dropped_session_finishes_its_transcript() {
            let server = $modern;
            let sink = Arc::new(Memory::default());
            let client: Client = recording_client(sink.clone());
            let s = client.connect(Config::new(&server.url()).unwrap())$($wait)*.unwrap();
            drop(s);
            check_dropped(&sink);
        }
    };
}
