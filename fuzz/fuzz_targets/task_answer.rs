//! Arbitrary bytes through every task (SEP-2663) reader: the `CreateTaskResult` classifier, the
//! `tasks/get` reader and the acknowledgement reader, the input-request book over two polls, and
//! the task-handle reader. None panics; what is read keeps its bounds (the id within its budget
//! and free of control characters, `statusMessage` within its cut and inert, a terminal status
//! never changing), and a handle that reads back writes the very same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::task::{
    classify_result, parse_ack, parse_get_result, InputBook, ResultShape, StatusGuard, TaskHandle,
    TaskMethod, TaskPayload, MAX_HANDLE_BYTES,
};
use mcp_sansio::Budgets;

fn check_task(task: &mcp_sansio::task::Task, budgets: &Budgets) {
    let id = task.id.as_str();
    assert!(!id.is_empty() && id.len() <= budgets.task_id_bytes);
    assert!(!id.chars().any(char::is_control));
    if let Some(m) = &task.status_message {
        assert!(m.len() <= budgets.status_message_bytes);
        assert!(!m.chars().any(char::is_control));
    }
}

fuzz_target!(|data: &[u8]| {
    let mut budgets = Budgets::default();
    budgets.task_id_bytes = 64;
    budgets.status_message_bytes = 32;

    // The task-handle reader takes raw bytes.
    if let Ok(h) = TaskHandle::from_bytes(data) {
        let bytes = h.to_bytes();
        assert!(bytes.len() <= MAX_HANDLE_BYTES);
        assert_eq!(bytes, data);
    }

    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let created = match classify_result("tools/call", text, true, &budgets) {
        Ok(ResultShape::Task(t)) => {
            check_task(&t, &budgets);
            Some(t)
        }
        _ => None,
    };
    // To any other request, or undeclared, a task is never accepted.
    assert!(!matches!(
        classify_result("tools/list", text, true, &budgets),
        Ok(ResultShape::Task(_))
    ));
    assert!(!matches!(
        classify_result("tools/call", text, false, &budgets),
        Ok(ResultShape::Task(_))
    ));
    let _ = parse_ack(TaskMethod::Update, text);

    if let Ok(d) = parse_get_result(text, &budgets) {
        check_task(&d.task, &budgets);
        let mut guard = StatusGuard::new(created.as_ref().unwrap_or(&d.task));
        let _ = guard.observe(&d.task);
        let _ = guard.observe(&d.task);
        if let TaskPayload::InputRequests(raw) = &d.payload {
            let mut book = InputBook::new();
            if let Ok(first) = book.poll(raw) {
                // A second identical poll presents nothing again.
                assert!(book.poll(raw).map(|again| again.is_empty()).unwrap_or(false));
                let keys: Vec<(&str, &str)> = first.iter().map(|r| (r.key.as_str(), "{}")).collect();
                if book.respond(&keys, &budgets).is_ok() {
                    // Never a key twice.
                    for (k, _) in &keys {
                        assert!(book.respond(&[(k, "{}")], &budgets).is_err());
                    }
                }
            }
        }
    }
    // The input-request book also takes the whole input as an `inputRequests` object.
    let _ = InputBook::new().poll(text);
});
