//! Tasks' limits at their edges, through the public API (mutation testing, `docs/mutants.md`):
//! each bound accepted at its value and refused one past it. The bounds are the documented ones
//! (`MAX_HANDLE_BYTES`, the handle's 2048-byte URL, 1024-byte id and 32-byte protocol version,
//! `MAX_INPUT_KEYS`, `MAX_INPUT_KEY_BYTES`, `Budgets::status_message_bytes`); the handle bytes
//! are written here in the documented format (magic `MCPTASK\0`, version, length-prefixed
//! fields, an 8-byte SHA-256 check), independently of the crate's writer, with `ring`'s SHA-256.

use mcp_sansio::task::{
    parse_create_result, HandleError, InputBook, TaskError, TaskHandle, HANDLE_VERSION,
    MAX_HANDLE_BYTES, MAX_INPUT_KEYS, MAX_INPUT_KEY_BYTES,
};
use mcp_sansio::{Budgets, Config, Era};

/// The SEP's own example of a `CreateTaskResult`, its id replaced by `{id}`.
const CREATE: &str = r#"{"resultType":"task","taskId":"{id}","status":"working","statusMessage":"The operation is now in progress.","ttlMs":60000,"pollIntervalMs":5000}"#;

/// The origin of every URL here: 21 bytes.
const ORIGIN: &str = "http://127.0.0.1:8080";

/// A configuration whose server URL (origin, path) is `len` bytes.
fn config_of_url(len: usize) -> Config {
    let url = format!("{ORIGIN}/{}", "p".repeat(len - ORIGIN.len() - 1));
    assert_eq!(url.len(), len);
    Config::new(&url).unwrap()
}

/// A handle made at time 1000 under `config` for the task with id `id`.
fn made(config: &Config, id: &str, version: &str) -> Result<TaskHandle, HandleError> {
    let mut budgets = Budgets::default();
    budgets.task_id_bytes = 4096;
    let task = parse_create_result(&CREATE.replace("{id}", id), &budgets).unwrap();
    TaskHandle::new(config, Era::Modern, version, &task, 1_000)
}

/// Handle bytes in the documented format, with the fields given.
fn handle_bytes(url: &str, id: &str, version: &str, answered: usize) -> Vec<u8> {
    let mut out = b"MCPTASK\0".to_vec();
    out.push(HANDLE_VERSION);
    for s in [url, id] {
        out.extend_from_slice(&(s.len() as u16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&[7; 32]); // the principal's digest
    out.push(0); // the modern era
    out.push(version.len() as u8);
    out.extend_from_slice(version.as_bytes());
    out.extend_from_slice(&1_000u64.to_be_bytes());
    out.extend_from_slice(&3_601_000u64.to_be_bytes());
    out.push(0); // no ttlMs
    out.push(answered as u8);
    for i in 0..answered {
        out.extend_from_slice(&(i as u64).to_be_bytes());
    }
    let check = ring::digest::digest(&ring::digest::SHA256, &out);
    out.extend_from_slice(&check.as_ref()[..8]);
    out
}

fn url_of(len: usize) -> String {
    format!("{ORIGIN}/{}", "p".repeat(len - ORIGIN.len() - 1))
}

/// A handle holds a server URL of 2048 bytes, made, rebound and read back; 2049 bytes are
/// `TooLong` when made or rebound and `Invalid` when read.
#[test]
fn a_server_url_of_2048_bytes_fits_a_handle_2049_do_not() {
    let at = config_of_url(2048);
    let h = made(&at, "t-1", "2026-07-28").unwrap();
    assert_eq!(h.server().len(), 2048);
    assert_eq!(TaskHandle::from_bytes(&h.to_bytes()), Ok(h.clone()));
    let over = config_of_url(2049);
    let too_long = Err(HandleError::TooLong {
        what: "a server URL",
    });
    assert_eq!(made(&over, "t-1", "2026-07-28"), too_long);
    assert_eq!(h.rebound(&at).map(|r| r.server().len()), Ok(2048));
    assert_eq!(h.rebound(&over), too_long);
    assert!(TaskHandle::from_bytes(&handle_bytes(&url_of(2048), "t-1", "v", 0)).is_ok());
    assert_eq!(
        TaskHandle::from_bytes(&handle_bytes(&url_of(2049), "t-1", "v", 0)),
        Err(HandleError::Invalid { what: "server URL" })
    );
}

/// A handle holds a task id of 1024 bytes (when the id budget lets the task have one); 1025
/// bytes are `TooLong` when made and `Invalid` when read.
#[test]
fn a_task_id_of_1024_bytes_fits_a_handle_1025_do_not() {
    let c = config_of_url(30);
    let id = "i".repeat(1024);
    let h = made(&c, &id, "2026-07-28").unwrap();
    assert_eq!(TaskHandle::from_bytes(&h.to_bytes()), Ok(h));
    assert_eq!(
        made(&c, &"i".repeat(1025), "2026-07-28"),
        Err(HandleError::TooLong { what: "a task id" })
    );
    assert_eq!(
        TaskHandle::from_bytes(&handle_bytes(&url_of(30), &"i".repeat(1025), "v", 0)),
        Err(HandleError::Invalid { what: "task id" })
    );
}

/// A handle holds a protocol version of 32 bytes; 33 are `TooLong` when made and `Invalid`
/// when read.
#[test]
fn a_protocol_version_of_32_bytes_fits_a_handle_33_do_not() {
    let c = config_of_url(30);
    let v32 = "v".repeat(32);
    let h = made(&c, "t-1", &v32).unwrap();
    assert_eq!(
        TaskHandle::from_bytes(&h.to_bytes()).unwrap().version(),
        v32
    );
    assert_eq!(
        made(&c, "t-1", &"v".repeat(33)),
        Err(HandleError::TooLong {
            what: "a protocol version"
        })
    );
    assert_eq!(
        TaskHandle::from_bytes(&handle_bytes(&url_of(30), "t-1", &"v".repeat(33), 0)),
        Err(HandleError::Invalid {
            what: "protocol version"
        })
    );
}

/// A handle holds the digests of at most `MAX_INPUT_KEYS` (64) answered keys: 64 read back, 65
/// are `Invalid`.
#[test]
fn a_handle_of_64_answered_keys_reads_65_do_not() {
    assert_eq!(MAX_INPUT_KEYS, 64);
    assert!(TaskHandle::from_bytes(&handle_bytes(&url_of(30), "t-1", "v", 64)).is_ok());
    assert_eq!(
        TaskHandle::from_bytes(&handle_bytes(&url_of(30), "t-1", "v", 65)),
        Err(HandleError::Invalid {
            what: "answered keys"
        })
    );
}

/// `MAX_HANDLE_BYTES` (4096) bytes are read (a handle then trailing bytes: refused for those),
/// 4097 are refused unread (`Oversize`).
#[test]
fn handle_bytes_of_4096_are_read_4097_refused_unread() {
    assert_eq!(MAX_HANDLE_BYTES, 4096);
    let mut at = handle_bytes(&url_of(30), "t-1", "v", 0);
    at.resize(4096, 0);
    assert_eq!(TaskHandle::from_bytes(&at), Err(HandleError::TrailingBytes));
    at.push(0);
    assert_eq!(
        TaskHandle::from_bytes(&at),
        Err(HandleError::Oversize {
            len: 4097,
            max: 4096
        })
    );
}

/// An `inputRequests` key of `MAX_INPUT_KEY_BYTES` (256) bytes is taken, 257 are refused.
#[test]
fn an_input_key_of_256_bytes_is_taken_257_refused() {
    assert_eq!(MAX_INPUT_KEY_BYTES, 256);
    let poll = |key: &str| format!(r#"{{"{key}":{{"method":"elicitation/create"}}}}"#);
    let mut book = InputBook::new();
    let k256 = "k".repeat(256);
    assert_eq!(book.poll(&poll(&k256)).unwrap()[0].key, k256);
    assert_eq!(
        book.poll(&poll(&"k".repeat(257))),
        Err(TaskError::InputRequests {
            reason: "a key too long"
        })
    );
}

/// A task presents at most `MAX_INPUT_KEYS` (64) keys: in one poll or over many, the 64th is
/// presented and the 65th refused.
#[test]
fn a_task_presents_64_input_keys_the_65th_is_refused() {
    let keys = |n: usize| -> String {
        let members: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{{}}"#)).collect();
        format!("{{{}}}", members.join(","))
    };
    assert_eq!(InputBook::new().poll(&keys(64)).unwrap().len(), 64);
    assert_eq!(
        InputBook::new().poll(&keys(65)),
        Err(TaskError::InputRequests {
            reason: "too many keys"
        })
    );
    let mut book = InputBook::new();
    for i in 0..64 {
        let fresh = book.poll(&format!(r#"{{"k{i}":{{}}}}"#)).unwrap();
        assert_eq!(fresh.len(), 1, "key {i}");
    }
    assert_eq!(
        book.poll(r#"{"k64":{}}"#),
        Err(TaskError::InputRequests {
            reason: "more input requests than a task may make"
        })
    );
}

/// `statusMessage` is cut to `Budgets::status_message_bytes`: a message of exactly the budget is
/// kept whole, one byte more is cut to the budget, and a character that would straddle it is
/// dropped whole.
#[test]
fn a_status_message_of_its_budget_is_kept_whole_one_byte_more_is_cut() {
    let mut b = Budgets::default();
    b.status_message_bytes = 10;
    let message = |m: &str| {
        let body = CREATE
            .replace("{id}", "t-1")
            .replace("The operation is now in progress.", m);
        parse_create_result(&body, &b)
            .unwrap()
            .status_message
            .unwrap()
    };
    assert_eq!(message("0123456789"), "0123456789");
    assert_eq!(message("0123456789A"), "0123456789");
    assert_eq!(message("012345678\u{e9}"), "012345678");
}

/// A handle keeps when its task was made on the embedder's clock and when its time budget
/// ends (`Budgets::task_time` later: 1 h by default), and reads both back.
#[test]
fn a_handle_keeps_its_creation_and_deadline() {
    let h = made(&config_of_url(30), "t-1", "2026-07-28").unwrap();
    assert_eq!(h.created_unix_ms(), 1_000);
    assert_eq!(h.deadline_unix_ms(), 1_000 + 3_600_000);
    let back = TaskHandle::from_bytes(&h.to_bytes()).unwrap();
    assert_eq!(
        (back.created_unix_ms(), back.deadline_unix_ms()),
        (1_000, 3_601_000)
    );
}

/// Every status is written on the wire, shown and read back by the name the SEP gives it
/// ("`working` | `input_required` | `completed` | `cancelled` | `failed`"), and the last three
/// are terminal.
#[test]
fn each_status_is_written_and_shown_by_its_wire_name() {
    use mcp_sansio::task::TaskStatus;
    let named = [
        (TaskStatus::Working, "working", false),
        (TaskStatus::InputRequired, "input_required", false),
        (TaskStatus::Completed, "completed", true),
        (TaskStatus::Failed, "failed", true),
        (TaskStatus::Cancelled, "cancelled", true),
    ];
    for (status, name, terminal) in named {
        assert_eq!(status.as_str(), name);
        assert_eq!(status.to_string(), name);
        assert_eq!(TaskStatus::parse(name), Some(status));
        assert_eq!(status.is_terminal(), terminal, "{name}");
    }
    assert_eq!(TaskStatus::parse("Working"), None);
    assert_eq!(TaskStatus::parse(""), None);
}

/// A task id may be a bearer secret ("Servers MAY use task IDs as bearer tokens"): its `Debug`
/// shows its first 8 bytes and nothing after them.
#[test]
fn a_task_ids_debug_shows_its_first_eight_bytes_only() {
    use mcp_sansio::task::TaskId;
    let id = TaskId::parse("abcdefgh-SECRET", 1024).unwrap();
    let shown = format!("{id:?}");
    assert!(shown.contains("abcdefgh"), "{shown}");
    assert!(!shown.contains('-') && !shown.contains("SECRET"), "{shown}");
}

/// `completed` brings its `result`, `failed` its `error` and `input_required` its
/// `inputRequests` as JSON objects: a member of another type is missing, as an absent one is.
#[test]
fn a_payload_member_that_is_not_an_object_is_missing() {
    use mcp_sansio::task::{parse_get_result, TaskPayload};
    let get = |status: &str, member: &str, value: &str| {
        format!(
            r#"{{"resultType":"complete","taskId":"t-1","status":"{status}","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,"{member}":{value}}}"#
        )
    };
    for (status, member) in [
        ("completed", "result"),
        ("failed", "error"),
        ("input_required", "inputRequests"),
    ] {
        for value in ["5", r#""text""#, "[]", "true", " [{}]"] {
            match parse_get_result(&get(status, member, value), &Budgets::default()) {
                Err(TaskError::MissingMember { member: m, .. }) => assert_eq!(m, member),
                other => panic!("{status} with {member} {value}: {other:?}"),
            }
        }
    }
    let done = parse_get_result(
        &get("completed", "result", r#" {"content":[]}"#),
        &Budgets::default(),
    )
    .unwrap();
    assert!(matches!(done.payload, TaskPayload::Result(_)), "{done:?}");
}

/// A guard counts every poll it allows, up to `Budgets::task_polls`, and refuses the next one
/// without counting it.
#[test]
fn a_guard_counts_its_polls_up_to_the_budget_and_refuses_the_next() {
    use mcp_sansio::task::{StatusGuard, TaskId};
    use mcp_sansio::Budget;
    let mut budgets = Budgets::default();
    budgets.task_polls = 3;
    let mut guard = StatusGuard::resumed(TaskId::parse("t-1", 64).unwrap());
    assert_eq!(guard.polls(), 0);
    for n in 1..=3 {
        guard.poll(&budgets).unwrap();
        assert_eq!(guard.polls(), n);
    }
    match guard.poll(&budgets) {
        Err(TaskError::Budget(e)) => assert_eq!(e.budget, Budget::TaskPolls),
        other => panic!("{other:?}"),
    }
    assert_eq!(guard.polls(), 3);
}

/// `Budgets::task_update_rounds` `tasks/update` rounds are recorded and counted by
/// `InputBook::rounds`; the next is `Budget::TaskUpdateRounds` exceeded, nothing recorded.
#[test]
fn a_book_records_its_budget_of_update_rounds_and_refuses_the_next() {
    let mut budgets = Budgets::default();
    budgets.task_update_rounds = 2;
    let mut book = InputBook::new();
    assert_eq!(book.rounds(), 0);
    book.poll(r#"{"a":{},"b":{},"c":{}}"#).unwrap();
    book.respond(&[("a", "1")], &budgets).unwrap();
    assert_eq!(book.rounds(), 1);
    book.respond(&[("b", "2")], &budgets).unwrap();
    assert_eq!(book.rounds(), 2);
    assert_eq!(
        book.respond(&[("c", "3")], &budgets),
        Err(TaskError::Budget(
            budgets.exceeded(mcp_sansio::Budget::TaskUpdateRounds)
        ))
    );
    assert_eq!(book.rounds(), 2);
    assert_eq!(book.outstanding().collect::<Vec<_>>(), ["c"]);
}

/// A handle's `Debug` names the type, the task and the server, and shows neither the server
/// URL's query (MCP server URLs carry keys there) nor the principal's digest.
#[test]
fn a_handles_debug_names_its_task_and_server_not_the_urls_key_or_the_principal() {
    let url = format!("{ORIGIN}/mcp?api_key=sk-live-4711");
    let bytes = handle_bytes(&url, "t-42", "2026-06-30", 0);
    let handle = TaskHandle::from_bytes(&bytes).unwrap();
    let shown = format!("{handle:?}");
    assert!(shown.starts_with("TaskHandle"), "{shown}");
    assert!(shown.contains("t-42"), "{shown}");
    assert!(shown.contains("127.0.0.1:8080/mcp?"), "{shown}");
    assert!(shown.contains("2026-06-30"), "{shown}");
    assert!(!shown.contains("sk-live-4711"), "{shown}");
    assert!(!shown.contains("7, 7, 7"), "{shown}");
}
