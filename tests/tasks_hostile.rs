//! Hostile task servers (SEP-2663): every scenario of the catalogue is run whole, one byte at a
//! time and in 7-byte chunks, and must end the same way, bounded.
//!
//! The same servers are scenarios of the hostile catalogue's `task` category
//! (`checks/support/src/hostile/catalogue.rs`), which `tests/hostile.rs` runs against the core
//! and both adapters run over 127.0.0.1 sockets, HTTP/1.1 and HTTP/2, whole and in pieces
//! (`hostile_task_scenarios_over_sockets`); the checks here that need the connection's events
//! (the clock at the ceiling, the input requests presented) stay here.

mod support;

use std::time::Duration;

use mcp_sansio::task::TaskError;
use mcp_sansio::{Budget, ConnectionState, Error, Event};
use support::tasks::{reply, started_with, tasks_config};
use support::*;

fn created(poll_ms: &str, ttl: &str) -> String {
    format!(
        r#"{{"resultType":"task","taskId":"t1","status":"working","ttlMs":{ttl},"pollIntervalMs":{poll_ms}}}"#
    )
}

/// The first failure reported, if any.
fn failure(h: &mut Harness) -> Option<Error> {
    h.take_events().into_iter().find_map(|e| match e {
        Event::Failed { error, .. } => Some(error),
        _ => None,
    })
}

/// Serves every request with `answer` (given the request and how many `tasks/get` came so far)
/// until the call ends or `limit` requests were served; returns the failure, the polls and the
/// time taken.
fn serve(
    h: &mut Harness,
    limit: usize,
    mut answer: impl FnMut(&SentRequest, usize) -> String,
) -> (Option<Error>, usize, Duration) {
    let t0 = h.now;
    let mut polls = 0;
    let mut error = None;
    for _ in 0..limit {
        if let Some(e) = failure(h) {
            error = Some(e);
            break;
        }
        if matches!(
            h.conn.state(),
            ConnectionState::Ready | ConnectionState::Dead
        ) {
            break;
        }
        if !h.has_outstanding() {
            if !h.advance_to_timeout() {
                break;
            }
            continue;
        }
        let r = h.next();
        if r.rpc_method() == "tasks/get" {
            polls += 1;
        }
        let body = answer(&r, polls);
        reply(h, &r, &body);
    }
    if error.is_none() {
        error = failure(h);
    }
    (error, polls, h.now.saturating_since(t0))
}

/// Runs the connection for at most 50 rounds: a request it sent goes to `on_request` (with the
/// round's number), an input request it presents to `on_input`, and the clock moves to the next
/// deadline when nothing is outstanding; the first failure reported ends it and is returned.
fn drive_inputs(
    h: &mut Harness,
    mut on_request: impl FnMut(&mut Harness, SentRequest, usize),
    mut on_input: impl FnMut(&mut Harness, &serde_json::value::RawValue),
) -> Option<Error> {
    let mut error = None;
    for n in 0..50 {
        if h.has_outstanding() {
            let r = h.next();
            on_request(h, r, n);
        }
        for e in h.take_events() {
            match e {
                Event::InputRequired { requests } => on_input(h, &requests),
                Event::Failed { error: e, .. } => error = Some(e),
                _ => {}
            }
        }
        if error.is_some() {
            break;
        }
        if !h.has_outstanding() {
            h.advance_to_timeout();
        }
    }
    error
}

fn working(poll_ms: u64) -> String {
    format!(r#"{{"taskId":"t1","status":"working","ttlMs":null,"pollIntervalMs":{poll_ms}}}"#)
}

/// `pollIntervalMs: 0` floods are held at the floor (1 s by default), and the polls are bounded
/// by `task_polls`.
#[test]
fn a_zero_poll_interval_is_held_at_the_floor_and_polls_are_bounded() {
    for split in SPLITS {
        let mut config = tasks_config();
        config.budgets.task_polls = 20;
        let mut h = started_with(config, split, &created("0", "null"));
        let (error, polls, took) = serve(&mut h, 1000, |_, _| working(0));
        assert_eq!(polls, 20, "{split:?}");
        assert!(took >= Duration::from_secs(20), "{took:?}: the floor holds");
        assert_eq!(
            error.and_then(|e| e.budget()).map(|b| b.budget),
            Some(Budget::TaskPolls)
        );
    }
}

/// A huge `pollIntervalMs` is held at the ceiling (30 s by default).
#[test]
fn a_huge_poll_interval_is_held_at_the_ceiling() {
    for split in SPLITS {
        let mut h = started_with(
            tasks_config(),
            split,
            &created("18446744073709551615", "null"),
        );
        let t0 = h.now;
        h.advance_to(t0 + Duration::from_millis(29_999));
        assert!(!h.has_outstanding());
        h.advance_to(t0 + Duration::from_secs(30));
        assert_eq!(h.next().rpc_method(), "tasks/get");
    }
}

/// A task that never ends runs out of `task_time`.
#[test]
fn a_task_that_never_ends_runs_out_of_its_time() {
    for split in SPLITS {
        let mut config = tasks_config();
        config.budgets.task_time = Duration::from_secs(10);
        let mut h = started_with(config, split, &created("1000", "null"));
        let (error, polls, _) = serve(&mut h, 1000, |_, _| working(1000));
        assert!(polls <= 10, "{polls}");
        assert_eq!(
            error.and_then(|e| e.budget()).map(|b| b.budget),
            Some(Budget::TaskTime)
        );
        assert_eq!(h.conn.state(), ConnectionState::Dead);
    }
}

/// A huge `ttlMs` does not overflow; a `ttlMs` that shrinks ("This value MAY change") is the
/// backstop: past it the task is no longer usable.
#[test]
fn a_huge_or_changing_ttl_is_a_backstop() {
    for split in SPLITS {
        let mut h = started_with(
            tasks_config(),
            split,
            &created("1000", "18446744073709551615"),
        );
        let (error, polls, _) = serve(&mut h, 5, |_, _| {
            r#"{"taskId":"t1","status":"working","ttlMs":18446744073709551615}"#.to_owned()
        });
        assert!(error.is_none() && polls >= 2, "{error:?}");

        let mut h = started_with(tasks_config(), split, &created("1000", "60000"));
        let (error, _, took) = serve(&mut h, 100, |_, n| {
            let ttl = if n < 3 { 60_000 } else { 2_500 };
            format!(r#"{{"taskId":"t1","status":"working","ttlMs":{ttl}}}"#)
        });
        assert!(
            matches!(
                error,
                Some(Error::Task(TaskError::Expired { ttl_ms: 2500 }))
            ),
            "{error:?}"
        );
        assert!(took < Duration::from_secs(10));
    }
}

/// "`completed`, `failed`, or `cancelled`" are terminal: a terminal status that flips back is a
/// typed protocol error.
#[test]
fn a_terminal_status_that_flips_back_is_refused() {
    for split in SPLITS {
        let created = r#"{"resultType":"task","taskId":"t1","status":"cancelled","ttlMs":null}"#;
        let mut h = started_with(tasks_config(), split, created);
        let (error, polls, _) = serve(&mut h, 10, |_, _| working(1000));
        assert_eq!(polls, 1);
        assert!(
            matches!(error, Some(Error::Task(TaskError::TerminalChanged { .. }))),
            "{error:?}"
        );
    }
}

/// A report about another task than the one polled is refused.
#[test]
fn a_report_of_another_task_is_refused() {
    for split in SPLITS {
        let mut h = started_with(tasks_config(), split, &created("1000", "null"));
        let (error, _, _) = serve(&mut h, 10, |_, _| {
            r#"{"taskId":"t2","status":"working","ttlMs":null}"#.to_owned()
        });
        assert!(
            matches!(error, Some(Error::Task(TaskError::OtherTask))),
            "{error:?}"
        );
    }
}

/// A 1 MiB task id is refused at `task_id_bytes`, before it is copied; one with control
/// characters is refused.
#[test]
fn a_huge_or_control_task_id_is_refused() {
    let long = "a".repeat(1 << 20);
    for split in [Split::Whole, Split::Chunks(4096)] {
        let created =
            format!(r#"{{"resultType":"task","taskId":"{long}","status":"working","ttlMs":null}}"#);
        let mut h = started_with(tasks_config(), split, &created);
        let error = failure(&mut h);
        assert_eq!(
            error.and_then(|e| e.budget()).map(|b| b.budget),
            Some(Budget::TaskIdBytes)
        );
        assert!(!h.has_outstanding());
    }
    for split in SPLITS {
        let created =
            r#"{"resultType":"task","taskId":"t\u0000\u001b[2J","status":"working","ttlMs":null}"#;
        let mut h = started_with(tasks_config(), split, created);
        assert!(matches!(
            failure(&mut h),
            Some(Error::Task(TaskError::InvalidId { .. }))
        ));
    }
}

/// A huge result is bounded by the connection's byte budget, across every poll.
#[test]
fn a_huge_result_runs_out_of_the_byte_budget() {
    for split in SPLITS {
        let mut config = tasks_config();
        config.budgets.response_bytes = 64 * 1024;
        let mut h = started_with(config, split, &created("1000", "null"));
        let big = "x".repeat(128 * 1024);
        let (error, _, _) = serve(&mut h, 10, |_, _| {
            format!(
                r#"{{"taskId":"t1","status":"completed","ttlMs":null,"result":{{"content":[{{"type":"text","text":"{big}"}}]}}}}"#
            )
        });
        assert_eq!(
            error.and_then(|e| e.budget()).map(|b| b.budget),
            Some(Budget::ResponseBytes)
        );
    }
}

/// `input_required` forever with new keys: the embedder answers each, and the rounds of
/// `tasks/update` are bounded by `task_update_rounds`.
#[test]
fn input_required_forever_is_bounded_by_the_rounds() {
    for split in SPLITS {
        let mut config = tasks_config();
        config.budgets.task_update_rounds = 3;
        let mut h = started_with(config, split, &created("1000", "null"));
        let mut updates = 0;
        let error = drive_inputs(
            &mut h,
            |h, r, n| {
                let body = match r.rpc_method().as_str() {
                    "tasks/get" => format!(
                        r#"{{"taskId":"t1","status":"input_required","ttlMs":null,"inputRequests":{{"k{n}":{{"method":"elicitation/create","params":{{}}}}}}}}"#
                    ),
                    "tasks/update" => {
                        updates += 1;
                        r#"{"resultType":"complete"}"#.to_owned()
                    }
                    other => panic!("{other}"),
                };
                reply(h, &r, &body);
            },
            |h, requests| {
                let v: serde_json::Value = serde_json::from_str(requests.get()).unwrap();
                let key = v.as_object().unwrap().keys().next().unwrap().clone();
                let answer = format!(r#"{{"{key}":{{"action":"decline"}}}}"#);
                h.conn.provide_input(h.now, Some(answer.as_bytes()));
                h.drain();
            },
        );
        assert_eq!(updates, 3);
        assert_eq!(
            error.and_then(|e| e.budget()).map(|b| b.budget),
            Some(Budget::TaskUpdateRounds)
        );
    }
}

/// The same key asked forever is presented once ("Clients SHOULD deduplicate `inputRequests`
/// keys across consecutive polls"), and the polls stay bounded.
#[test]
fn a_key_asked_forever_is_presented_once() {
    for split in SPLITS {
        let mut config = tasks_config();
        config.budgets.task_polls = 8;
        let mut h = started_with(config, split, &created("1000", "null"));
        let mut presented = 0;
        let mut polls = 0;
        let error = drive_inputs(
            &mut h,
            |h, r, _| {
                polls += 1;
                reply(
                    h,
                    &r,
                    r#"{"taskId":"t1","status":"input_required","ttlMs":null,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}"#,
                );
            },
            |h, _| {
                presented += 1;
                h.conn
                    .provide_input(h.now, Some(br#"{"k":{"action":"decline"}}"#));
                h.drain();
                let u = h.next();
                assert_eq!(u.rpc_method(), "tasks/update");
                reply(h, &u, r#"{}"#);
            },
        );
        assert_eq!(presented, 1);
        assert_eq!(polls, 8);
        assert_eq!(
            error.and_then(|e| e.budget()).map(|b| b.budget),
            Some(Budget::TaskPolls)
        );
    }
}

/// "Each key MUST correspond to a currently-outstanding inputRequest key": a key never asked,
/// or named twice, is refused and nothing is sent.
#[test]
fn answers_to_keys_not_outstanding_are_refused() {
    let bad: [&[u8]; 2] = [
        br#"{"other":{"action":"accept"}}"#,
        br#"{"k":{"action":"accept"},"k":{"action":"decline"}}"#,
    ];
    for (bad, split) in bad.into_iter().flat_map(|b| SPLITS.map(|s| (b, s))) {
        let mut h = started_with(tasks_config(), split, &created("1000", "null"));
        h.advance_to_timeout();
        let r = h.next();
        reply(
            &mut h,
            &r,
            r#"{"taskId":"t1","status":"input_required","ttlMs":null,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}"#,
        );
        h.take_events();
        let sent = h.sent.len();
        h.conn.provide_input(h.now, Some(bad));
        h.drain();
        assert!(matches!(
            failure(&mut h),
            Some(Error::Task(TaskError::NotOutstanding { .. }))
        ));
        assert_eq!(h.sent.len(), sent, "no tasks/update");
    }
}

/// An unknown status is a typed protocol error.
#[test]
fn an_unknown_status_is_refused() {
    for split in SPLITS {
        let mut h = started_with(tasks_config(), split, &created("1000", "null"));
        let (error, _, _) = serve(&mut h, 10, |_, _| {
            r#"{"taskId":"t1","status":"paused","ttlMs":null}"#.to_owned()
        });
        assert!(matches!(
            error,
            Some(Error::Task(TaskError::UnknownStatus { status })) if status == "paused"
        ));
    }
}

/// "A client that receives `CreateTaskResult` in response to an unsupported request type MUST
/// interpret this as an invalid response": one to `tools/list` is refused, typed.
#[test]
fn a_task_in_answer_to_tools_list_is_invalid() {
    for split in SPLITS {
        let mut h = modern_with(tasks_config(), split);
        h.list();
        let r = h.next();
        reply(&mut h, &r, &created("1000", "null"));
        assert!(matches!(
            failure(&mut h),
            Some(Error::Task(TaskError::UnsupportedRequest { method })) if method == "tools/list"
        ));
        assert!(!h.has_outstanding());
    }
}

/// "A server MUST NOT return `CreateTaskResult` to a client that did not include the extension
/// capability on its request": without tasks on, one is refused and nothing is polled.
#[test]
fn a_task_without_the_extension_declared_is_invalid() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("slow", "{}");
        let r = h.next();
        reply(&mut h, &r, &created("1000", "null"));
        assert!(matches!(
            failure(&mut h),
            Some(Error::Task(TaskError::NotDeclared))
        ));
        h.advance(Duration::from_secs(60));
        assert!(!h.has_outstanding());
    }
}
