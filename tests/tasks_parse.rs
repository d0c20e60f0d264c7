//! Tasks (SEP-2663, `seps/2663-tasks-extension.md`, Final): the core's building blocks, each
//! rule checked against the SEP's words, with hostile values.
use core::time::Duration;

use mcp_sansio::task::{
    check_legacy_task_support, classify_result, client_capabilities, mcp_name, parse_ack,
    parse_create_result, parse_get_result, poll_interval, request_body, routing_headers, rpc_error,
    HandleError, InputBook, ResultShape, StatusGuard, TaskError, TaskHandle, TaskId, TaskMethod,
    TaskPayload, TaskStatus, MAX_HANDLE_BYTES, MAX_INPUT_KEYS,
};
use mcp_sansio::{
    store_key, AuthContext, Budget, Budgets, Config, ConfigError, Connection, Credential, Era,
    Error, ErrorKind, RpcError, StoreUse,
};

/// The SEP's own example of a `CreateTaskResult`.
const CREATE: &str = r#"{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","statusMessage":"The operation is now in progress.","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":60000,"pollIntervalMs":5000}"#;

fn get(status: &str, extra: &str) -> String {
    format!(
        r#"{{"resultType":"complete","taskId":"t-1","status":"{status}","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000{extra}}}"#
    )
}

fn budgets() -> Budgets {
    Budgets::default()
}

fn config() -> Config {
    Config::new("http://127.0.0.1:8080/mcp").unwrap()
}

/// "Example Response (CreateTaskResult)": every field of the SEP's example is read as written.
#[test]
fn the_seps_create_task_result_is_read_field_by_field() {
    let t = parse_create_result(CREATE, &budgets()).unwrap();
    assert_eq!(t.id.as_str(), "786512e2-9e0d-44bd-8f29-789f320fe840");
    assert_eq!(t.status, TaskStatus::Working);
    assert_eq!(
        t.status_message.as_deref(),
        Some("The operation is now in progress.")
    );
    assert_eq!(t.created_at, "2025-11-25T10:30:00Z");
    assert_eq!(t.last_updated_at, "2025-11-25T10:40:00Z");
    assert_eq!(t.ttl_ms, Some(60_000));
    assert_eq!(t.poll_interval_ms, Some(5000));
}

/// "`ttlMs`: Time-to-live duration from creation in integer milliseconds, null for unlimited."
/// A huge value is kept as a number (the task's own budget bounds the wait, not the TTL); a
/// value that is not a non-negative integer is a malformed task.
#[test]
fn ttl_is_null_or_an_integer_of_any_size() {
    let with = |ttl: &str| CREATE.replace(r#""ttlMs":60000"#, &format!(r#""ttlMs":{ttl}"#));
    assert_eq!(
        parse_create_result(&with("null"), &budgets())
            .unwrap()
            .ttl_ms,
        None
    );
    assert_eq!(
        parse_create_result(&with("18446744073709551615"), &budgets())
            .unwrap()
            .ttl_ms,
        Some(u64::MAX)
    );
    for bad in ["-1", "1.5", "\"60000\"", "18446744073709551616", "1e400"] {
        assert!(
            matches!(
                parse_create_result(&with(bad), &budgets()),
                Err(TaskError::Malformed { .. })
            ),
            "{bad}"
        );
    }
}

/// "Servers MUST set `resultType` to `"task"` when returning a `CreateTaskResult`."
#[test]
fn a_create_task_result_must_say_task() {
    let plain = CREATE.replace(r#""resultType":"task","#, "");
    assert!(matches!(
        parse_create_result(&plain, &budgets()),
        Err(TaskError::WrongResultType { .. })
    ));
}

/// `status: "working" | "input_required" | "completed" | "cancelled" | "failed"`: another is a
/// typed protocol error (quoted inert and cut).
#[test]
fn an_unknown_status_is_a_typed_error() {
    let odd = CREATE.replace(r#""status":"working""#, r#""status":"paused\u001b[2J""#);
    match parse_create_result(&odd, &budgets()) {
        Err(TaskError::UnknownStatus { status }) => {
            assert!(!status.contains('\u{1b}'), "{status:?}");
            assert!(status.starts_with("paused"));
        }
        other => panic!("{other:?}"),
    }
    let e = Error::from(TaskError::UnknownStatus { status: "x".into() });
    assert_eq!(e.kind(), ErrorKind::ServerAnswered);
    for s in ["Working", "done", "", "input-required"] {
        assert_eq!(TaskStatus::parse(s), None, "{s}");
    }
}

/// A 1 MiB task id is refused as the id budget exceeded, before it is copied.
#[test]
fn an_oversize_task_id_exceeds_its_budget() {
    let huge = "a".repeat(1 << 20);
    let body = CREATE.replace("786512e2-9e0d-44bd-8f29-789f320fe840", &huge);
    let e = parse_create_result(&body, &budgets()).unwrap_err();
    assert_eq!(
        e,
        TaskError::Budget(mcp_sansio::BudgetExceeded::new(Budget::TaskIdBytes, 256))
    );
    assert_eq!(Error::from(e).budget().unwrap().budget, Budget::TaskIdBytes);
    // However it is wrapped, the error names its budget and fails the connection.
    let wrapped = Error::Task(TaskError::Budget(mcp_sansio::BudgetExceeded::new(
        Budget::TaskIdBytes,
        256,
    )));
    assert_eq!(wrapped.budget().unwrap().budget, Budget::TaskIdBytes);
    assert_eq!(wrapped.kind(), ErrorKind::ConnectionFailed);
    // At the limit it is accepted.
    let body = CREATE.replace("786512e2-9e0d-44bd-8f29-789f320fe840", &"b".repeat(256));
    assert!(parse_create_result(&body, &budgets()).is_ok());
}

/// Control characters (C0, DEL, C1) in an id are refused: it is echoed in a header and in logs.
#[test]
fn control_characters_in_an_id_are_refused() {
    for id in [
        r"a\u0000b",
        r"a\r\nX-Evil: 1",
        r"a\u007f",
        r"a\u0085",
        r"\t",
        "",
    ] {
        let body = CREATE.replace("786512e2-9e0d-44bd-8f29-789f320fe840", id);
        assert!(
            matches!(
                parse_create_result(&body, &budgets()),
                Err(TaskError::InvalidId { .. })
            ),
            "{id:?}"
        );
    }
    // Non-ASCII is an id like any other, sent in the Base64 form of Mcp-Name.
    let id = TaskId::parse("tâche 1", 256).unwrap();
    assert_eq!(mcp_name(&id), "=?base64?dMOiY2hlIDE=?=");
}

/// "`statusMessage` … This MAY be exposed to the end-user or model": it is cut to its budget on
/// a character boundary, and escape sequences and bidirectional overrides are made inert.
#[test]
fn a_status_message_is_cut_and_made_inert() {
    let mut b = Budgets::default();
    b.status_message_bytes = 10;

    let body = CREATE.replace(
        "The operation is now in progress.",
        r"\u001b]52;c;aGk=\u0007é\u202eok and more",
    );
    let m = parse_create_result(&body, &b)
        .unwrap()
        .status_message
        .unwrap();
    assert!(m.len() <= 10, "{m:?}");
    assert!(
        !m.chars()
            .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
        "{m:?}"
    );
    assert!(m.contains("52;c"), "{m:?}");
}

/// "A client that receives `CreateTaskResult` in response to an unsupported request type MUST
/// interpret this as an invalid response to the request." Only `tools/call` supports tasks.
#[test]
fn a_task_to_another_request_is_an_invalid_answer() {
    let e = classify_result("tools/list", CREATE, true, &budgets()).unwrap_err();
    assert!(matches!(e, TaskError::UnsupportedRequest { ref method } if method == "tools/list"));
    assert_eq!(Error::from(e).kind(), ErrorKind::ServerAnswered);
    assert!(matches!(
        classify_result("tools/call", CREATE, true, &budgets()),
        Ok(ResultShape::Task(_))
    ));
}

/// "A server MUST NOT return `CreateTaskResult` to a client that did not include the extension
/// capability on its request".
#[test]
fn a_task_without_the_extension_declared_is_refused() {
    assert_eq!(
        classify_result("tools/call", CREATE, false, &budgets()),
        Err(TaskError::NotDeclared)
    );
    // "A client that has negotiated this extension MUST be prepared to handle either
    // `CallToolResult` or `CreateTaskResult`": a plain result is not a task.
    let plain = r#"{"content":[],"isError":false,"resultType":"complete"}"#;
    assert_eq!(
        classify_result("tools/call", plain, true, &budgets()),
        Ok(ResultShape::NotTask)
    );
    assert_eq!(
        classify_result("tools/list", r#"{"tools":[]}"#, false, &budgets()),
        Ok(ResultShape::NotTask)
    );
}

/// "If the status is `completed`, the server MUST return a `Task` object with status `completed`
/// and a `result` field"; `failed` "MUST include the `error` field"; `input_required` "an
/// `inputRequests` field".
#[test]
fn each_status_brings_its_payload() {
    let done = get(
        "completed",
        r#","result":{"content":[{"type":"text","text":"Hello"}],"isError":true}"#,
    );
    let d = parse_get_result(&done, &budgets()).unwrap();
    // "This includes tool calls that returned results with `isError: true`."
    assert!(matches!(d.payload, TaskPayload::Result(ref r) if r.contains("\"isError\":true")));
    let failed = get(
        "failed",
        r#","error":{"code":-32603,"message":"API rate limit exceeded"}"#,
    );
    match parse_get_result(&failed, &budgets()).unwrap().payload {
        TaskPayload::Error(rpc) => {
            assert_eq!(
                (rpc.code, rpc.message.as_str()),
                (-32603, "API rate limit exceeded")
            )
        }
        other => panic!("{other:?}"),
    }
    for (status, member) in [
        ("completed", "result"),
        ("failed", "error"),
        ("input_required", "inputRequests"),
    ] {
        match parse_get_result(&get(status, ""), &budgets()) {
            Err(TaskError::MissingMember { member: m, .. }) => assert_eq!(m, member),
            other => panic!("{status}: {other:?}"),
        }
    }
    // `working` and `cancelled` need nothing.
    for status in ["working", "cancelled"] {
        assert_eq!(
            parse_get_result(&get(status, ""), &budgets())
                .unwrap()
                .payload,
            TaskPayload::None
        );
    }
}

/// "The `resultType` field MUST be set to `"complete"` on this object" (tasks/get, and the
/// acknowledgements of tasks/update and tasks/cancel).
#[test]
fn task_requests_are_answered_complete() {
    let wrong = get("working", "").replace("\"complete\"", "\"task\"");
    assert!(matches!(
        parse_get_result(&wrong, &budgets()),
        Err(TaskError::WrongResultType {
            method: "tasks/get",
            ..
        })
    ));
    assert_eq!(
        parse_ack(TaskMethod::Cancel, r#"{"resultType":"complete"}"#),
        Ok(())
    );
    assert_eq!(parse_ack(TaskMethod::Update, "{}"), Ok(()));
    assert!(parse_ack(TaskMethod::Update, r#"{"resultType":"input_required"}"#).is_err());
}

/// "working and input_required are not terminal; completed, failed and cancelled are", and a
/// terminal status never changes: a poll that flips it back is a typed error.
#[test]
fn a_terminal_status_never_changes() {
    let at = |status: &str| {
        let extra = match status {
            "completed" => r#","result":{"content":[]}"#,
            "failed" => r#","error":{"code":1,"message":"m"}"#,
            "input_required" => r#","inputRequests":{}"#,
            _ => "",
        };
        parse_get_result(&get(status, extra), &budgets())
            .unwrap()
            .task
    };
    assert!(!TaskStatus::Working.is_terminal() && !TaskStatus::InputRequired.is_terminal());
    for terminal in ["completed", "failed", "cancelled"] {
        let mut g = StatusGuard::new(&at("working"));
        g.observe(&at("input_required")).unwrap();
        g.observe(&at(terminal)).unwrap();
        // The same terminal status again is a re-issued poll, not a change.
        g.observe(&at(terminal)).unwrap();
        for other in [
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
        ] {
            if other == terminal {
                continue;
            }
            assert!(
                matches!(
                    g.clone().observe(&at(other)),
                    Err(TaskError::TerminalChanged { .. })
                ),
                "{terminal} -> {other}"
            );
        }
    }
    // A report of another task is refused.
    let mut g = StatusGuard::new(&at("working"));
    let other = parse_create_result(CREATE, &budgets()).unwrap();
    assert_eq!(g.observe(&other), Err(TaskError::OtherTask));
}

/// Polls are counted against their budget.
#[test]
fn polls_are_bounded() {
    let mut b = Budgets::default();
    b.task_polls = 3;

    let mut g = StatusGuard::new(&parse_create_result(CREATE, &b).unwrap());
    for _ in 0..3 {
        g.poll(&b).unwrap();
    }
    assert_eq!(
        g.poll(&b),
        Err(TaskError::Budget(mcp_sansio::BudgetExceeded::new(
            Budget::TaskPolls,
            3
        )))
    );
}

/// "Clients SHOULD respect the `pollIntervalMs`", held between our floor and ceiling: a
/// `pollIntervalMs: 0` is not a flood, a huge one is not a hang.
#[test]
fn the_poll_interval_is_clamped() {
    let b = budgets();
    assert_eq!(poll_interval(Some(0), &b), Duration::from_secs(1));
    assert_eq!(poll_interval(Some(5000), &b), Duration::from_millis(5000));
    assert_eq!(poll_interval(Some(u64::MAX), &b), Duration::from_secs(30));
    assert_eq!(poll_interval(None, &b), Duration::from_secs(1));
    // A floor above the ceiling wins, and nothing panics.
    let mut odd = Budgets::default();
    odd.task_poll_floor = Duration::from_secs(9);
    odd.task_poll_ceiling = Duration::from_secs(2);

    assert_eq!(poll_interval(Some(5000), &odd), Duration::from_secs(9));
}

/// "Clients SHOULD deduplicate `inputRequests` keys across consecutive polls to avoid presenting
/// the same request to the user or model more than once."
#[test]
fn input_requests_are_presented_once() {
    let mut book = InputBook::new();
    let poll = r#"{"name":{"method":"elicitation/create","params":{"message":"Name?"}}}"#;
    let first = book.poll(poll).unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].key, "name");
    assert!(first[0].request.contains("elicitation/create"));
    assert!(book.poll(poll).unwrap().is_empty());
    let two = r#"{"name":{"method":"m"},"age":{"method":"m"}}"#;
    let fresh = book.poll(two).unwrap();
    assert_eq!(
        fresh.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
        ["age"]
    );
}

/// "Each key MUST correspond to a currently-outstanding inputRequest key" and "Clients SHOULD
/// track `inputRequests` keys to avoid responding to requests more than once."
#[test]
fn input_responses_answer_outstanding_keys_once() {
    let b = budgets();
    let mut book = InputBook::new();
    book.poll(r#"{"a":{"method":"m"},"b":{"method":"m"}}"#)
        .unwrap();
    // A key never asked, and a key twice in one round, are refused; nothing is recorded.
    assert!(matches!(
        book.respond(&[("zz", "{}")], &b),
        Err(TaskError::NotOutstanding { .. })
    ));
    assert!(matches!(
        book.respond(&[("a", "{}"), ("a", "{}")], &b),
        Err(TaskError::NotOutstanding { .. })
    ));
    let body = book
        .respond(&[("a", r#"{"action":"decline"}"#)], &b)
        .unwrap();
    assert_eq!(body, br#"{"a":{"action":"decline"}}"#);
    // Answered: never again, even when the next poll (eventually consistent) lists it again.
    assert!(book.respond(&[("a", "{}")], &b).is_err());
    assert!(book
        .poll(r#"{"a":{"method":"m"},"b":{"method":"m"}}"#)
        .unwrap()
        .is_empty());
    assert!(book.respond(&[("a", "{}")], &b).is_err());
    assert_eq!(book.outstanding().collect::<Vec<_>>(), ["b"]);
    // A key the latest poll no longer lists is superseded, no longer outstanding.
    book.poll(r#"{"c":{"method":"m"}}"#).unwrap();
    assert!(book.respond(&[("b", "{}")], &b).is_err());
    assert!(book.respond(&[("c", "{}")], &b).is_ok());
}

/// A hostile `inputRequests`: a key twice, too many keys, a request that is not an object,
/// `input_required` forever with new keys, and more update rounds than the budget.
#[test]
fn hostile_input_requests_are_bounded() {
    let mut book = InputBook::new();
    for bad in [
        r#"{"a":{},"a":{}}"#,
        r#"{"a":"text"}"#,
        r#"[]"#,
        r#"{"a":{}"#,
    ] {
        assert!(
            matches!(book.poll(bad), Err(TaskError::InputRequests { .. })),
            "{bad}"
        );
    }
    let many: Vec<String> = (0..=MAX_INPUT_KEYS)
        .map(|i| format!(r#""k{i}":{{}}"#))
        .collect();
    assert!(book.poll(&format!("{{{}}}", many.join(","))).is_err());
    // New keys every poll: refused past MAX_INPUT_KEYS in all.
    let mut book = InputBook::new();
    let mut refused = false;
    for i in 0..=MAX_INPUT_KEYS {
        if book.poll(&format!(r#"{{"k{i}":{{}}}}"#)).is_err() {
            refused = true;
            break;
        }
    }
    assert!(refused);
    // Update rounds.
    let mut b = Budgets::default();
    b.task_update_rounds = 2;

    let mut book = InputBook::new();
    for i in 0..2 {
        book.poll(&format!(r#"{{"k{i}":{{}}}}"#)).unwrap();
        book.respond(&[(&format!("k{i}"), "{}")], &b).unwrap();
    }
    book.poll(r#"{"k9":{}}"#).unwrap();
    assert_eq!(
        book.respond(&[("k9", "{}")], &b),
        Err(TaskError::Budget(mcp_sansio::BudgetExceeded::new(
            Budget::TaskUpdateRounds,
            2
        )))
    );
}

/// "the client MUST set the `Mcp-Name` header … to the value of `params.taskId`"; "The
/// `Mcp-Method` header is set to the JSON-RPC method name"; every modern request carries the
/// full `_meta`.
#[test]
fn task_requests_carry_routing_headers_and_the_full_meta() {
    let id = TaskId::parse("786512e2-9e0d-44bd-8f29-789f320fe840", 256).unwrap();
    assert_eq!(
        routing_headers(TaskMethod::Get, &id),
        [
            ("Mcp-Method".to_owned(), "tasks/get".to_owned()),
            (
                "Mcp-Name".to_owned(),
                "786512e2-9e0d-44bd-8f29-789f320fe840".to_owned()
            )
        ]
    );
    // An id with a leading space or a sentinel look is sent in the Base64 form.
    let spaced = TaskId::parse(" x", 256).unwrap();
    assert_eq!(mcp_name(&spaced), "=?base64?IHg=?=");
    let c = config().with_tasks(true);
    for method in [TaskMethod::Get, TaskMethod::Update, TaskMethod::Cancel] {
        let body = request_body(&c, "2026-07-28", method, 7, &id, Some(br#"{"a":{}}"#));
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["method"], method.as_str());
        assert_eq!(v["id"], 7);
        assert_eq!(v["params"]["taskId"], id.as_str());
        let meta = &v["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-sansio"
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]
                ["io.modelcontextprotocol/tasks"]
                .is_object()
        );
        assert_eq!(
            v["params"].get("inputResponses").is_some(),
            method == TaskMethod::Update,
            "{method:?}"
        );
    }
}

/// "Invalid or nonexistent `taskId`: `-32602`": a typed terminal error; `-32603` stays a
/// JSON-RPC error; both are server answers.
#[test]
fn an_unknown_task_is_a_typed_terminal_error() {
    let rpc = |code| RpcError {
        status: 200,
        code,
        message: "Failed to retrieve task: Task not found".into(),
        data: None,
    };
    let e = rpc_error(rpc(-32602));
    assert!(matches!(e, Error::Task(TaskError::UnknownTask(_))), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::ServerAnswered);
    let e = rpc_error(rpc(-32603));
    assert!(matches!(e, Error::Rpc(_)), "{e:?}");
}

/// The client declares `extensions["io.modelcontextprotocol/tasks"]` "in per-request
/// capabilities" when tasks are on, in the modern era only ("This extension is not defined under
/// the `2025-11-25` protocol version"); it is off by default.
#[test]
fn the_extension_is_declared_when_tasks_are_on() {
    let off = config();
    assert!(!off.tasks);
    assert_eq!(client_capabilities(&off, Era::Modern), "{}");
    let on = config().with_tasks(true);
    let caps: serde_json::Value =
        serde_json::from_str(&client_capabilities(&on, Era::Modern)).unwrap();
    assert_eq!(
        caps,
        serde_json::json!({"extensions":{"io.modelcontextprotocol/tasks":{}}})
    );
    assert_eq!(client_capabilities(&on, Era::Legacy), "{}");
    // Other capabilities and extensions are kept.
    let mut rich = config().with_tasks(true);
    rich.client_capabilities =
        r#"{"elicitation":{"form":{}},"extensions":{"x.example/y":{"a":1}}}"#.into();
    let caps: serde_json::Value =
        serde_json::from_str(&client_capabilities(&rich, Era::Modern)).unwrap();
    assert_eq!(
        caps,
        serde_json::json!({"elicitation":{"form":{}},"extensions":{"x.example/y":{"a":1},"io.modelcontextprotocol/tasks":{}}})
    );
    // An `extensions` that is not an object, or repeated, leaves one object holding the
    // extension: no reader sees a declaration without it.
    for raw in [
        r#"{"extensions":5}"#,
        r#"{"extensions":{},"extensions":{"a/b":{}}}"#,
    ] {
        let mut odd = config().with_tasks(true);
        odd.client_capabilities = raw.into();
        let caps = client_capabilities(&odd, Era::Modern);
        assert_eq!(caps.matches("\"extensions\"").count(), 1, "{caps}");
        assert!(
            caps.contains(r#""io.modelcontextprotocol/tasks":{}"#),
            "{caps}"
        );
    }
}

/// A raw declaration of the extension while tasks are off is a configuration error (a server
/// could answer with a task this client would not follow).
#[test]
fn a_raw_declaration_needs_tasks_enabled() {
    for raw in [
        r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#,
        r#"{"extensions":{"io.modelcontextprotocol\/tasks":{}}}"#,
        r#"{"extensions":{"io.modelcontextprotocol/tasks":{}},"extensions":{}}"#,
    ] {
        let mut c = config();
        c.client_capabilities = raw.into();
        assert_eq!(
            Connection::new(c.clone()).err(),
            Some(ConfigError::TasksNotEnabled),
            "{raw}"
        );
        assert!(Connection::new(c.with_tasks(true)).is_ok(), "{raw}");
    }
    let mut other = config();
    other.client_capabilities = r#"{"extensions":{"x.example/tasks":{}}}"#.into();
    assert!(Connection::new(other).is_ok());
}

fn handle() -> (Config, TaskHandle) {
    let c = config().with_bearer_token("tok-1").with_tasks(true);
    let t = parse_create_result(CREATE, &c.budgets).unwrap();
    let h = TaskHandle::new(&c, Era::Modern, "2026-07-28", &t, 1_000).unwrap();
    (c, h)
}

/// A handle survives the bytes: what a crashed executor persisted, a fresh one reads back.
#[test]
fn a_handle_round_trips() {
    let (c, h) = handle();
    let bytes = h.to_bytes();
    assert!(bytes.len() <= MAX_HANDLE_BYTES);
    let back = TaskHandle::from_bytes(&bytes).unwrap();
    assert_eq!(back, h);
    assert_eq!(back.id().as_str(), "786512e2-9e0d-44bd-8f29-789f320fe840");
    assert_eq!(back.server(), "http://127.0.0.1:8080/mcp");
    assert_eq!((back.era(), back.version()), (Era::Modern, "2026-07-28"));
    assert_eq!(back.ttl_ms(), Some(60_000));
    assert_eq!(back.deadline_unix_ms(), 1_000 + 3_600_000);
    assert_eq!(back.check(&c), Ok(()));
    // It holds no credential.
    assert!(!bytes.windows(5).any(|w| w == b"tok-1"));
}

/// A handle from another authorization context, or for another server, is refused.
#[test]
fn a_handle_of_another_context_is_refused() {
    let (c, h) = handle();
    let other = c.clone().with_bearer_token("tok-2");
    assert_eq!(h.check(&other), Err(HandleError::OtherContext));
    assert_eq!(
        h.check_context(&AuthContext::new(Credential::None, None)),
        Err(HandleError::OtherContext)
    );
    assert_eq!(h.check_context(&AuthContext::of(&c)), Ok(()));
    let elsewhere = Config::new("http://127.0.0.1:8080/other")
        .unwrap()
        .with_bearer_token("tok-1");
    assert_eq!(h.check(&elsewhere), Err(HandleError::OtherServer));
}

/// The reader is strict: every strict prefix is truncated (the one-byte split of a reader that
/// takes whole bytes), trailing bytes, a foreign version, a flipped byte, oversize input and
/// garbage are typed errors.
#[test]
fn the_handle_reader_is_strict() {
    let (_, h) = handle();
    let bytes = h.to_bytes();
    for n in 0..bytes.len() {
        let e = TaskHandle::from_bytes(&bytes[..n]).unwrap_err();
        assert_eq!(e, HandleError::Truncated, "prefix of {n}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        TaskHandle::from_bytes(&longer),
        Err(HandleError::TrailingBytes)
    );
    let mut foreign = bytes.clone();
    foreign[8] = 3;
    assert_eq!(
        TaskHandle::from_bytes(&foreign),
        Err(HandleError::ForeignVersion { found: 3 })
    );
    // Every single flipped bit past the version is refused (never a silently different handle).
    for i in 9..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x01;
        assert!(TaskHandle::from_bytes(&bad).is_err(), "byte {i}");
    }
    assert_eq!(
        TaskHandle::from_bytes(&vec![0; MAX_HANDLE_BYTES + 1]),
        Err(HandleError::Oversize {
            len: MAX_HANDLE_BYTES + 1,
            max: MAX_HANDLE_BYTES
        })
    );
    assert_eq!(
        TaskHandle::from_bytes(b"{\"taskId\":\"x\"}"),
        Err(HandleError::NotAHandle)
    );
}

/// The TTL as a backstop ("if the task's observable status has not reflected the update after
/// `createdAt` plus `ttlMs` has elapsed, the client MAY consider the task to no longer be
/// usable"), and the task's own time budget; a `ttlMs` that changes is recorded.
#[test]
fn a_handle_knows_its_deadlines() {
    let (c, mut h) = handle();
    assert_eq!(h.check_time(1_000 + 59_999, &c), Ok(()));
    assert_eq!(
        h.check_time(1_000 + 60_000, &c),
        Err(TaskError::Expired { ttl_ms: 60_000 })
    );
    h.set_ttl_ms(None);
    assert_eq!(h.check_time(1_000 + 60_000, &c), Ok(()));
    assert!(matches!(
        h.check_time(1_000 + 3_600_000, &c),
        Err(TaskError::Budget(b)) if b.budget == Budget::TaskTime
    ));
}

/// Each task's handle has its own store key, which does not show the id.
#[test]
fn task_handles_have_their_own_store_keys() {
    let (c, h) = handle();
    let ctx = AuthContext::of(&c);
    let k1 = store_key(StoreUse::task_handle(h.id().as_str()), &c.endpoint, &ctx);
    let k2 = store_key(StoreUse::task_handle("another"), &c.endpoint, &ctx);
    assert!(k1.starts_with("task:"));
    assert_ne!(k1, k2);
    assert!(!k1.contains("786512e2"));
}

/// 2025-11-25: "If `execution.taskSupport` is `"required"`, clients MUST invoke the tool as a
/// task. Servers MUST return a `-32601` (Method not found) error if a client does not attempt to
/// do so." This client does not speak that flavour, so it refuses such a call with a typed error
/// that says why; other values are plain calls.
#[test]
fn a_legacy_tool_requiring_tasks_is_refused_before_sending() {
    let e = check_legacy_task_support("long_job", Some("required")).unwrap_err();
    assert_eq!(
        e,
        TaskError::LegacyTaskRequired {
            tool: "long_job".into()
        }
    );
    assert!(e.to_string().contains("2025-11-25"), "{e}");
    assert_eq!(Error::from(e).kind(), ErrorKind::ServerAnswered);
    for ok in [None, Some("optional"), Some("forbidden")] {
        assert_eq!(check_legacy_task_support("t", ok), Ok(()), "{ok:?}");
    }
}

proptest::proptest! {
    /// Any handle this client makes reads back as itself, and every strict prefix of its bytes
    /// is refused as truncated.
    #[test]
    fn any_handle_round_trips(
        id in "[a-zA-Z0-9 é_=?-]{1,64}",
        path in "[a-z/]{0,40}",
        now in proptest::prelude::any::<u64>(),
        ttl in proptest::option::of(proptest::prelude::any::<u64>()),
        legacy in proptest::prelude::any::<bool>(),
    ) {
        let c = Config::new(&format!("https://h.example/{path}")).unwrap();
        let mut body: serde_json::Value = serde_json::from_str(CREATE).unwrap();
        body["taskId"] = id.clone().into();
        body["ttlMs"] = ttl.map_or(serde_json::Value::Null, Into::into);
        let t = parse_create_result(&body.to_string(), &c.budgets).unwrap();
        let era = if legacy { Era::Legacy } else { Era::Modern };
        let h = TaskHandle::new(&c, era, "2026-07-28", &t, now).unwrap();
        let bytes = h.to_bytes();
        proptest::prop_assert_eq!(TaskHandle::from_bytes(&bytes), Ok(h.clone()));
        proptest::prop_assert_eq!(h.id().as_str(), id.as_str());
        proptest::prop_assert_eq!(h.ttl_ms(), ttl);
        for n in [0, 1, bytes.len() / 2, bytes.len() - 1] {
            proptest::prop_assert_eq!(TaskHandle::from_bytes(&bytes[..n]), Err(HandleError::Truncated));
        }
    }

    /// The reader takes any bytes without panicking, and accepts only what it would write.
    #[test]
    fn the_handle_reader_takes_any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        if let Ok(h) = TaskHandle::from_bytes(&bytes) {
            proptest::prop_assert_eq!(h.to_bytes(), bytes);
        }
    }
}

/// "Clients SHOULD track `inputRequests` keys to avoid responding to requests more than once":
/// across a crash too. A handle re-persisted after a `tasks/update` makes the resumed book skip
/// the keys answered before, even when the next poll (eventually consistent) lists them again.
#[test]
fn answered_keys_survive_a_resumption() {
    let (c, mut h) = handle();
    let mut book = InputBook::new();
    book.poll(r#"{"a":{"method":"m"},"b":{"method":"m"}}"#)
        .unwrap();
    book.respond(&[("a", "{}")], &c.budgets).unwrap();
    h.record_answers(&book);
    let back = TaskHandle::from_bytes(&h.to_bytes()).unwrap();
    assert_eq!(back, h);
    let mut resumed = InputBook::resumed(&back);
    let fresh = resumed
        .poll(r#"{"a":{"method":"m"},"b":{"method":"m"}}"#)
        .unwrap();
    assert_eq!(
        fresh.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
        ["b"]
    );
    assert!(matches!(
        resumed.respond(&[("a", "{}")], &c.budgets),
        Err(TaskError::NotOutstanding { .. })
    ));
    // A fresh handle knows no answer.
    let mut fresh_book = InputBook::resumed(&handle().1);
    assert_eq!(fresh_book.poll(r#"{"a":{}}"#).unwrap().len(), 1);
}

/// The task budgets' defaults are those docs/guarantees.md states: 4096 polls, a 1 KiB
/// `statusMessage`, 16 `tasks/update` rounds, one hour for a task, 30 s for its cancellation,
/// 256 bytes of task id, and polls between 1 s and 30 s apart.
#[test]
fn the_task_budgets_defaults_are_the_documented_ones() {
    let b = mcp_sansio::Budgets::default();
    assert_eq!(b.task_polls, 4096);
    assert_eq!(b.status_message_bytes, 1024);
    assert_eq!(b.task_update_rounds, 16);
    assert_eq!(b.task_time, std::time::Duration::from_secs(3600));
    assert_eq!(b.task_cancel_time, std::time::Duration::from_secs(30));
    assert_eq!(b.task_id_bytes, 256);
    assert_eq!(b.task_poll_floor, std::time::Duration::from_secs(1));
    assert_eq!(b.task_poll_ceiling, std::time::Duration::from_secs(30));
}
