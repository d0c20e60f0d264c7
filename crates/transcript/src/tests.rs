//! Unit tests of the recorder, the text format and redaction.

use std::time::Duration;

use mcp_sansio::socket::Http1Socket;
use mcp_sansio::Tool;
use mcp_sansio::{Config, Connection, Era, EraHint, Event, Instant};
use mcp_sansio::{TransportError, TransportErrorKind};

use crate::*;
use mcp_sansio::auth::redact;

fn sample() -> Transcript {
    let config = Config::new("http://127.0.0.1:8080/mcp")
        .unwrap()
        .with_bearer_token("s3cret-token");
    let mut rec = Recorder::new(&config, Instant::ZERO);
    rec.comment("a sample");
    let mut conn = Connection::new(config).unwrap();
    let t0 = Instant::ZERO + Duration::from_micros(1500);
    rec.operation(t0, RecordedOperation::Connect);
    conn.connect(t0);
    let t = conn.poll_transmit().unwrap();
    rec.transmit(t0, &t);
    rec.socket(t0, t.exchange, false);
    let t1 = Instant::ZERO + Duration::from_millis(3);
    rec.bytes(t1, t.exchange, b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n");
    rec.bytes(t1, t.exchange, b"\r\n\xff\x00\\");
    rec.eof(t1, t.exchange);
    let e = TransportError {
        kind: TransportErrorKind::Io,
        message: "reset by peer\nagain".into(),
    };
    rec.transport_error(t1, t.exchange, &e);
    rec.timeout(t1 + Duration::from_secs(1));
    rec.event(&Event::Closed);
    rec.operation(
        t1,
        RecordedOperation::CallTool {
            name: "a \"b\"".into(),
            arguments: b"{\"x\":\"\\u0041\xc3\xa9\"}".to_vec(),
        },
    );
    rec.operation(
        t1,
        RecordedOperation::CallKnownTool {
            name: "t".into(),
            input_schema: "{\"type\": \"object\"}".into(),
            arguments: b"{}".to_vec(),
        },
    );
    rec.operation(t1, RecordedOperation::Abandon);
    rec.operation(t1, RecordedOperation::ProvideInput(None));
    rec.operation(t1, RecordedOperation::ProvideInput(Some(b"{}".to_vec())));
    rec.operation(
        t1,
        RecordedOperation::AnswerServerRequest {
            id: "\"srv-1\"".into(),
            result: Some(br#"{"action":"accept"}"#.to_vec()),
        },
    );
    rec.operation(
        t1,
        RecordedOperation::AnswerServerRequest {
            id: "7".into(),
            result: None,
        },
    );
    rec.finish()
}

#[test]
fn text_round_trips() {
    let t = sample();
    let text = t.to_text();
    let back = Transcript::parse(&text).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.to_text(), text);
    assert!(text.contains("@1.500 op connect"), "{text}");
    assert!(text.contains("< \\r\\n\n< \\xff\\x00\\\\\n"), "{text}");
    // Time never goes back: the event after a timeout keeps the timeout's instant.
    assert_eq!(t.entries[8].at, Duration::from_millis(1003));
}

#[test]
fn secrets_are_redacted() {
    let t = sample();
    let text = t.to_text();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        text.contains("> Authorization: Bearer <redacted>\\r\\n"),
        "{text}"
    );
    assert!(text.contains("config bearer-token <redacted>"));
    let r = redact_request(
        b"GET / HTTP/1.1\r\nauthorization:Basic abc\r\nX: y\r\n\r\nAuthorization: body",
    );
    assert_eq!(
        r,
        b"GET / HTTP/1.1\r\nauthorization: Basic <redacted>\r\nX: y\r\n\r\nAuthorization: body"
            .to_vec()
    );
}

#[test]
fn replay_config_reproduces_requests() {
    let t = sample();
    let mut conn = Connection::new(t.config.to_config().unwrap()).unwrap();
    conn.connect(Instant::ZERO);
    let sent = redact_request(&Http1Socket::encode(&conn.poll_transmit().unwrap()).unwrap());
    let Record::Send { bytes, .. } = &t.entries[1].record else {
        panic!("second entry is the send");
    };
    assert_eq!(&sent, bytes);
}

#[test]
fn escapes_round_trip() {
    let all: Vec<u8> = (0..=255u8).chain("é€\u{7f}".bytes()).collect();
    assert_eq!(unescape(&escape(&all)).unwrap(), all);
    assert!(!escape(&all).contains('\n'));
    assert_eq!(unescape("\\q"), Err(ParseErrorKind::BadEscape));
    assert_eq!(unescape("\\x4"), Err(ParseErrorKind::BadEscape));
}

#[test]
fn parse_errors_are_typed() {
    let bad = |text: &str| Transcript::parse(text).unwrap_err();
    assert_eq!(bad("hello").kind, ParseErrorKind::NotATranscript);
    let head = format!("{MAGIC}\nconfig url http://h/mcp\n");
    let e = bad(&format!("{head}@1.000 frobnicate\n"));
    assert_eq!(
        (e.line, e.kind),
        (3, ParseErrorKind::UnknownRecord("frobnicate".into()))
    );
    assert_eq!(
        bad(&format!("{head}< HTTP/1.1\n")).kind,
        ParseErrorKind::StrayData
    );
    assert_eq!(
        bad(&format!("{head}@0 send 1\n< x\n")).kind,
        ParseErrorKind::StrayData
    );
    assert_eq!(
        bad(&format!("{head}@0 recv 1\n< \\z\n")).kind,
        ParseErrorKind::BadEscape
    );
    assert_eq!(
        bad(&format!("{head}@0 event {{nope\n")).kind,
        ParseErrorKind::BadEvent
    );
    assert_eq!(
        bad(&format!("{head}@0 recv x\n")).kind,
        ParseErrorKind::Malformed {
            what: "exchange id"
        }
    );
    assert_eq!(
        bad(&format!("{MAGIC}\n@0 op connect\n")).kind,
        ParseErrorKind::NoUrl
    );
    assert!(matches!(
        bad(&format!("{head}config legacy-versions 1999-01-01\n")).kind,
        ParseErrorKind::Config(_)
    ));
    let e = bad(&format!("{head}config budget pages x\n"));
    assert_eq!(e.to_string(), "transcript line 3: malformed budget value");
}

#[test]
fn budgets_and_hints_round_trip() {
    let mut config = Config::new("https://example.com/mcp?x=1").unwrap();
    config.budgets.pages = 3;
    config.budgets.call_time = Duration::from_millis(2500);
    config.era_hint = Some(EraHint {
        era: Era::Legacy,
        version: "2025-06-18".into(),
    });
    config.input_hook = true;
    config.client_capabilities = "{\"elicitation\":{}}".into();
    let t = Recorder::new(&config, Instant::ZERO).finish();
    let text = t.to_text();
    assert!(text.contains("config budget pages 3\n"), "{text}");
    assert!(text.contains("config budget call_time_ms 2500\n"), "{text}");
    assert!(!text.contains("config budget list_time_ms"), "{text}");
    let back = Transcript::parse(&text).unwrap();
    assert_eq!(back.config, t.config);
    let c = back.config.to_config().unwrap();
    assert_eq!(c.budgets, config.budgets);
    assert_eq!(c.endpoint, config.endpoint);
}

#[test]
fn known_tool_calls_replay_their_header_parameters() {
    let schema =
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#;
    let tool = Tool::new(
        "where",
        None,
        schema,
        mcp_sansio::header_params(schema).unwrap(),
    );
    let args = br#"{"region":"eu-1"}"#;
    let hint = EraHint {
        era: Era::Modern,
        version: mcp_sansio::MODERN_VERSION.into(),
    };
    let config = Config::new("http://h/mcp")
        .unwrap()
        .with_era_hint(Some(hint));
    let mut rec = Recorder::new(&config, Instant::ZERO);
    let send = |op: &RecordedOperation| {
        let mut conn = Connection::new(config.clone()).unwrap();
        conn.connect(Instant::ZERO);
        op.apply(&mut conn, Instant::ZERO);
        Http1Socket::encode(&conn.poll_transmit().expect("the call")).unwrap()
    };
    let op = RecordedOperation::known_tool(&tool, args);
    rec.operation(Instant::ZERO, op.clone());
    let original = send(&op);
    let text = rec.finish().to_text();
    let back = Transcript::parse(&text).unwrap();
    let Record::Operation(parsed) = &back.entries[0].record else {
        panic!("an operation: {text}");
    };
    assert_eq!(parsed, &op);
    let replayed = send(parsed);
    assert_eq!(replayed, original);
    let needle = b"Mcp-Param-Region: eu-1\r\n";
    assert!(replayed.windows(needle.len()).any(|w| w == needle));
    let bad = text.replace(r#"{\"type\""#, r#"{\"type"#);
    assert_eq!(
        Transcript::parse(&bad).unwrap_err().kind,
        ParseErrorKind::Malformed {
            what: "input schema"
        }
    );
}

#[test]
fn recordings_can_be_written_as_they_go() {
    let whole = sample();
    let mut rec = Recorder::new(&Config::new("http://h/mcp").unwrap(), Instant::ZERO);
    rec.transcript.config = whole.config.clone();
    rec.comment("a sample");
    let mut text = String::new();
    for (i, e) in whole.entries.iter().enumerate() {
        rec.transcript.entries.push(e.clone());
        if i % 3 == 0 {
            text.push_str(&rec.take_text());
        }
    }
    text.push_str(&rec.take_text());
    assert!(rec.transcript().entries.is_empty());
    assert_eq!(text, whole.to_text());
    assert_eq!(rec.take_text(), "");
}

#[test]
fn recorder_is_send_and_cheap_to_move() {
    fn is_send<T: Send + Sync + Clone>() {}
    is_send::<Recorder>();
    is_send::<Transcript>();
}

#[test]
fn secret_query_values_are_redacted_in_urls_and_request_lines() {
    let r = redact_request(
        b"GET /mcp?api_key=k1&region=eu&Access_Token=t2&flag&x=1 HTTP/1.1\r\nHost: h\r\n\r\n?key=body",
    );
    assert_eq!(
        String::from_utf8(r).unwrap(),
        "GET /mcp?api_key=<redacted>&region=eu&Access_Token=<redacted>&flag&x=1 HTTP/1.1\r\n\
         Host: h\r\n\r\n?key=body"
    );
    // A request line without a version, or without a query, keeps its line ending and bytes.
    assert_eq!(
        redact_request(b"GET /?sig=abc\r\n"),
        b"GET /?sig=<redacted>\r\n"
    );
    assert_eq!(
        redact_request(b"GET /mcp HTTP/1.1\r\n"),
        b"GET /mcp HTTP/1.1\r\n"
    );
    // The fragment is redacted like the query (the core's policy, as for callback URLs).
    assert_eq!(
        redact::url("https://h/mcp?client_secret=s&page=2#apikey=frag"),
        "https://h/mcp?client_secret=<redacted>&page=2#apikey=<redacted>"
    );
    assert_eq!(redact::url("https://h/mcp"), "https://h/mcp");
    assert!(redact::is_secret_param(b"X-Amz-Signature") && redact::is_secret_param(b"PASSWORD"));
    assert!(!redact::is_secret_param(b"region") && !redact::is_secret_param(b"page"));
}

#[test]
fn a_url_with_a_secret_query_is_recorded_redacted_and_replays() {
    let config = Config::new("http://127.0.0.1:8080/mcp?api_key=s3cret-key&region=eu").unwrap();
    let now = Instant::ZERO;
    let mut rec = Recorder::new(&config, now);
    let mut conn = Connection::new(config).unwrap();
    rec.operation(now, RecordedOperation::Connect);
    conn.connect(now);
    let t = conn.poll_transmit().unwrap();
    assert!(Http1Socket::encode(&t)
        .unwrap()
        .starts_with(b"POST /mcp?api_key=s3cret-key&region=eu HTTP/1.1\r\n"));
    rec.transmit(now, &t);
    let answer = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n";
    rec.bytes(now, t.exchange, answer);
    Http1Socket::new().handle_bytes(&mut conn, now, t.exchange, answer);
    while let Some(event) = conn.poll_event() {
        rec.event(&event);
    }
    let text = rec.finish().to_text();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        text.contains("config url http://127.0.0.1:8080/mcp?api_key=<redacted>&region=eu\n"),
        "{text}"
    );
    assert!(
        text.contains("> POST /mcp?api_key=<redacted>&region=eu HTTP/1.1\\r\\n"),
        "{text}"
    );
    let back = Transcript::parse(&text).unwrap();
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        let r = replay(&back, split).unwrap();
        r.check(&back).unwrap();
        assert_eq!(r.sends.len(), 1);
        assert_eq!(r.outcome().len(), 1);
    }
}

#[test]
fn http2_lines_parse_and_their_errors_are_typed() {
    use crate::h2::H2Setup;
    use mcp_sansio::h2::H2Config;

    let bad = |text: &str| Transcript::parse(text).unwrap_err();
    let head = format!("{MAGIC}\nconfig url https://h/mcp\nconfig http 2 https\n");
    // The limits start from the budgets, whatever the order of the lines.
    let t = Transcript::parse(&format!(
        "{head}config h2 max_streams 2\nconfig budget header_count 50\n\
         @0 open 1\n@0 write 1\n# an annotation, skipped\n> PRI\n@1 read 1\n< \\x00\n\
         @2 eof 1\n@3 transport-error 1 io reset\n@4 dial-error connect refused\n@5 timeout\n"
    ))
    .unwrap();
    let mut budgets = mcp_sansio::Budgets::default();
    budgets.header_count = 50;
    let mut want = H2Config::from_budgets(&budgets);
    want.max_streams = 2;
    assert_eq!(t.config.http2, Some(H2Setup::new("https", &want)));
    assert_eq!(t.entries.len(), 7);
    assert_eq!(t.h2_writes(), vec![(1, b"PRI".to_vec())]);
    assert!(matches!(t.entries[3].record, Record::H2Eof { socket: 1 }));
    assert!(matches!(
        &t.entries[4].record,
        Record::H2Failure { socket: 1, kind: TransportErrorKind::Io, message } if message == "reset"
    ));
    assert!(matches!(
        &t.entries[5].record,
        Record::H2DialError {
            kind: TransportErrorKind::Connect,
            ..
        }
    ));
    // The text form writes what differs from the budgets' limits only, and reads it back.
    let text = t.to_text();
    assert!(text.contains("config h2 max_streams 2\n"), "{text}");
    assert!(!text.contains("config h2 header_list_fields"), "{text}");
    assert_eq!(Transcript::parse(&text).unwrap(), t);

    assert_eq!(
        bad(&format!(
            "{MAGIC}\nconfig url https://h/mcp\nconfig http 3 https\n"
        ))
        .kind,
        ParseErrorKind::Malformed { what: "http" }
    );
    assert_eq!(
        bad(&format!("{head}config h2 nonsense 1\n")).kind,
        ParseErrorKind::Malformed { what: "h2 name" }
    );
    assert_eq!(
        bad(&format!(
            "{MAGIC}\nconfig url https://h/mcp\nconfig h2 max_streams 1\n"
        ))
        .kind,
        ParseErrorKind::Malformed {
            what: "h2 limits without `config http 2`"
        }
    );
    assert_eq!(
        bad(&format!("{head}@0 open 0\n")).kind,
        ParseErrorKind::Malformed {
            what: "socket number"
        }
    );
    // HTTP/1.1 records do not belong in an HTTP/2 session, nor HTTP/2 records in HTTP/1.1.
    assert_eq!(
        bad(&format!("{head}@0 send 1\n")).kind,
        ParseErrorKind::UnknownRecord("send".into())
    );
    let h1 = format!("{MAGIC}\nconfig url https://h/mcp\n");
    assert_eq!(
        bad(&format!("{h1}@0 open 1\n")).kind,
        ParseErrorKind::UnknownRecord("open".into())
    );
    // Data of the wrong direction in an HTTP/2 block.
    assert_eq!(
        bad(&format!("{head}@0 read 1\n> x\n")).kind,
        ParseErrorKind::StrayData
    );
}

/// A signer whose signatures are not real (a transcript never holds them): for redaction tests.
struct FakeSigner;

impl mcp_sansio::auth::JwtSigner for FakeSigner {
    fn algorithm(&self) -> mcp_sansio::auth::JwsAlgorithm {
        mcp_sansio::auth::JwsAlgorithm::ES256
    }

    fn sign(&self, _: &[u8]) -> Result<Vec<u8>, mcp_sansio::auth::SignError> {
        Ok(vec![7; 64])
    }

    fn public_jwk(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "BBBB"}))
    }
}

#[test]
fn a_dpop_token_and_its_proofs_are_redacted_in_http1_and_http2_records() {
    use mcp_sansio::auth::{DpopBinding, DpopKey};
    let binding = DpopBinding::new(
        "dpop-s3cret-token",
        DpopKey(std::sync::Arc::new(FakeSigner)),
        "seed",
    );
    let config = Config::new("http://127.0.0.1:8080/mcp")
        .unwrap()
        .with_dpop(binding);
    let mut rec = Recorder::new(&config, Instant::ZERO);
    let mut conn = Connection::new(config).unwrap();
    rec.operation(Instant::ZERO, RecordedOperation::Connect);
    conn.connect(Instant::ZERO);
    let t = conn.poll_transmit().unwrap();
    let proof = String::from_utf8_lossy(&Http1Socket::encode(&t).unwrap())
        .lines()
        .find_map(|l| l.strip_prefix("DPoP: ").map(str::to_owned))
        .expect("the request has a proof");
    rec.transmit(Instant::ZERO, &t);
    let text = rec.finish().to_text();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(!text.contains(&proof[..20]), "{text}");
    assert!(
        text.contains("> Authorization: DPoP <redacted>\\r\\n"),
        "{text}"
    );
    assert!(text.contains("> DPoP: <redacted>\\r\\n"), "{text}");
    // The same fields in an HTTP/2 header block, literal and not indexed.
    let mut block = Vec::new();
    for (name, value) in [
        ("authorization", "DPoP dpop-s3cret-token"),
        ("dpop", &*proof),
    ] {
        block.push(0x00);
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
        // An HPACK string length (RFC 7541 §5.1, 7-bit prefix, no Huffman).
        if value.len() < 127 {
            block.push(value.len() as u8);
        } else {
            block.push(0x7f);
            let mut n = value.len() - 127;
            while n >= 128 {
                block.push((n % 128 + 128) as u8);
                n /= 128;
            }
            block.push(n as u8);
        }
        block.extend_from_slice(value.as_bytes());
    }
    let r = crate::redact_header_block(&block);
    assert!(!r.windows(6).any(|w| w == b"s3cret"));
    assert!(!r.windows(20).any(|w| w == &proof.as_bytes()[..20]));
}

#[test]
fn a_dpop_session_with_a_nonce_retry_is_recorded_redacted_and_replays() {
    use mcp_sansio::auth::{DpopBinding, DpopKey};
    let binding = DpopBinding::new(
        "dpop-s3cret-token",
        DpopKey(std::sync::Arc::new(FakeSigner)),
        "seed",
    );
    let config = Config::new("http://127.0.0.1:8080/mcp")
        .unwrap()
        .with_dpop(binding);
    let now = Instant::ZERO;
    let mut rec = Recorder::new(&config, now);
    let mut conn = Connection::new(config).unwrap();
    rec.operation(now, RecordedOperation::Connect);
    conn.connect(now);
    // The re-send after the nonce challenge carries a new id (2).
    let discover = r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}"#;
    let answers = [
        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: DPoP error=\"use_dpop_nonce\"\r\ndpop-nonce: n-1\r\ncontent-length: 0\r\n\r\n".to_owned(),
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{discover}",
            discover.len()
        ),
    ];
    let mut socket = Http1Socket::new();
    for answer in &answers {
        let t = conn.poll_transmit().expect("a request");
        rec.transmit(now, &t);
        rec.bytes(now, t.exchange, answer.as_bytes());
        socket.handle_bytes(&mut conn, now, t.exchange, answer.as_bytes());
        while let Some(event) = conn.poll_event() {
            rec.event(&event);
        }
    }
    let text = rec.finish().to_text();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("config dpop <redacted>\n"), "{text}");
    assert!(text.contains("{\"connected\":"), "{text}");
    let back = Transcript::parse(&text).unwrap();
    assert!(back.config.dpop);
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        let r = replay(&back, split).unwrap();
        r.check(&back).unwrap();
        assert_eq!(r.sends.len(), 2);
    }
}

/// SEP-2663: "Clients declare support for tasks by including
/// `io.modelcontextprotocol/tasks` in the `extensions` field of their client capabilities" — a
/// transcript of a session with `Config::tasks` records it (with the timeline's Unix zero and
/// the task budgets), and the configuration a replay builds declares the extension again.
#[test]
fn tasks_and_the_unix_zero_round_trip_and_replay_declares_the_extension() {
    let mut config = Config::new("http://example.com/mcp")
        .unwrap()
        .with_tasks(true);
    config.unix_at_zero = Duration::new(1_765_000_000, 5_000);
    config.budgets.task_poll_floor = Duration::from_millis(50);
    config.budgets.task_polls = 7;
    let t = Recorder::new(&config, Instant::ZERO).finish();
    let text = t.to_text();
    assert!(text.contains("config tasks\n"), "{text}");
    assert!(
        text.contains("config unix-at-zero 1765000000.000005000\n"),
        "{text}"
    );
    assert!(
        text.contains("config budget task_poll_floor_ms 50\n"),
        "{text}"
    );
    assert!(text.contains("config budget task_polls 7\n"), "{text}");
    let back = Transcript::parse(&text).unwrap();
    assert_eq!(back.config, t.config);
    let c = back.config.to_config().unwrap();
    assert!(c.tasks);
    assert_eq!(c.unix_at_zero, config.unix_at_zero);
    assert_eq!(c.budgets, config.budgets);
    let declares = |c: Config| {
        let mut conn = Connection::new(c).unwrap();
        conn.connect(Instant::ZERO);
        let sent = Http1Socket::encode(&conn.poll_transmit().unwrap()).unwrap();
        String::from_utf8_lossy(&sent).contains("\"io.modelcontextprotocol/tasks\"")
    };
    assert!(declares(c));
    // A transcript written before these lines existed replays with tasks off.
    let old = Transcript::parse(&format!("{MAGIC}\nconfig url http://example.com/mcp\n")).unwrap();
    assert!(!old.config.tasks);
    assert_eq!(old.config.unix_at_zero, Duration::ZERO);
    assert!(!declares(old.config.to_config().unwrap()));
}

#[test]
fn a_malformed_unix_zero_is_a_typed_error() {
    let head = format!("{MAGIC}\nconfig url http://h/mcp\n");
    for bad in ["1", "1.5", "x.000000000", "1.00000000x", "1.0000000000"] {
        let e = Transcript::parse(&format!("{head}config unix-at-zero {bad}\n")).unwrap_err();
        assert_eq!(
            (e.line, e.kind),
            (
                3,
                ParseErrorKind::Malformed {
                    what: "unix-at-zero"
                }
            ),
            "{bad}"
        );
    }
}

/// A resume's handle as a transcript records it (`HandleBytes::for_recording`), for a session
/// with a bearer token, a DPoP binding or a grant, and a secret query value: the recorded handle
/// meets the replay's stand-in configuration (so the replay resumes as the session did), the
/// original does not, and the recorded bytes hold neither the secret query value nor the
/// real context's digest. A handle of another context is not rebound.
#[test]
fn a_resume_handle_is_recorded_for_the_replays_stand_ins() {
    use mcp_sansio::task::{parse_create_result, TaskHandle};
    use mcp_sansio::{GrantIdentity, GrantKind};
    let base = || {
        Config::new("http://127.0.0.1:9/mcp?api_key=s3cr3t-q")
            .unwrap()
            .with_tasks(true)
    };
    let mut configs = Vec::new();
    configs.push(base().with_bearer_token("real-token"));
    let mut dpop = base();
    dpop.dpop = Some(mcp_sansio::auth::DpopBinding::new(
        "real-dpop-token",
        crate::model::replay_dpop_key(),
        "seed",
    ));
    configs.push(dpop);
    let mut granted = base().with_bearer_token("granted-token");
    granted.grant = Some(GrantIdentity {
        kind: GrantKind::ClientCredentials,
        issuer: "https://as.example".into(),
        client_id: "c".into(),
    });
    configs.push(granted);
    let created = r#"{"resultType":"task","taskId":"t1","status":"working","ttlMs":null}"#;
    for config in &configs {
        let task = parse_create_result(created, &config.budgets).unwrap();
        let handle = TaskHandle::new(config, Era::Modern, "2026-07-28", &task, 7).unwrap();
        let stand_in = TranscriptConfig::from_config(config).to_config().unwrap();
        assert!(
            handle.check(&stand_in).is_err(),
            "the real handle would not replay"
        );
        let bytes = HandleBytes::for_recording(&handle, config).expect("rebound");
        let recorded = TaskHandle::from_bytes(&bytes.0).unwrap();
        assert!(recorded.check(&stand_in).is_ok());
        assert!(recorded.check(config).is_err());
        assert_eq!(recorded.id(), handle.id());
        assert_eq!(recorded.created_unix_ms(), 7);
        let needle = b"s3cr3t-q";
        assert!(!bytes.0.windows(needle.len()).any(|w| w == needle));
        // A handle of another context is refused by the core, and not rebound.
        let other = base().with_bearer_token("someone-else");
        assert!(HandleBytes::for_recording(&handle, &other).is_none());
    }
}
