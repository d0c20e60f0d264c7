//! The demo server's task tool (SEP-2663), driven by the core's task building blocks over plain
//! sockets: `slow_count` becomes a task only for requests that declare the extension, polls see
//! `working`, `input_required` once, then `completed`; cancellation, unknown ids, undeclared
//! requests and a wrong `Mcp-Name` get the SEP's errors.

use std::io::{Read, Write};
use std::net::TcpStream;

use mcp_sansio::task::{
    classify_result, client_capabilities, parse_ack, parse_get_result, request_body,
    routing_headers, InputBook, ResultShape, StatusGuard, Task, TaskMethod, TaskPayload,
    TaskStatus,
};
use mcp_sansio::{Budgets, Config, Era};
use mcp_sansio_demo_server::{DemoServer, Options};
use serde_json::Value;

const V: &str = "2026-07-28";

fn config(server: &DemoServer, tasks: bool) -> Config {
    Config::new(&server.url()).unwrap().with_tasks(tasks)
}

/// One request on a fresh connection: the status and the JSON body.
fn exchange(server: &DemoServer, headers: &[(String, String)], body: &[u8]) -> (u16, Value) {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nMCP-Protocol-Version: {V}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").expect("a complete response");
    (
        head[9..12].parse().unwrap(),
        serde_json::from_str(body).unwrap(),
    )
}

fn meta(c: &Config) -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities":
            serde_json::from_str::<Value>(&client_capabilities(c, Era::Modern)).unwrap(),
    })
}

fn list_names(server: &DemoServer, c: &Config) -> Vec<String> {
    let body = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta(c)}});
    let (status, v) = exchange(
        server,
        &[("Mcp-Method".into(), "tools/list".into())],
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 200);
    v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn call_slow_count(server: &DemoServer, c: &Config, to: u64) -> String {
    let body = serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"slow_count","arguments":{"to":to},"_meta":meta(c)}});
    let (status, v) = exchange(
        server,
        &[
            ("Mcp-Method".into(), "tools/call".into()),
            ("Mcp-Name".into(), "slow_count".into()),
        ],
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{v}");
    v["result"].to_string()
}

fn task_request(
    server: &DemoServer,
    c: &Config,
    method: TaskMethod,
    task: &Task,
    responses: Option<&[u8]>,
) -> (u16, Value) {
    let body = request_body(c, V, method, 9, &task.id, responses);
    exchange(server, &routing_headers(method, &task.id), &body)
}

#[test]
fn slow_count_is_listed_and_a_task_only_with_the_extension() {
    let server = DemoServer::start(Options::default()).unwrap();
    let (plain, tasks) = (config(&server, false), config(&server, true));
    assert!(!list_names(&server, &plain).contains(&"slow_count".to_owned()));
    assert_eq!(list_names(&server, &tasks).last().unwrap(), "slow_count");
    // Without the extension: the plain result at once ("A server MUST NOT return
    // `CreateTaskResult` to a client that did not include the extension capability").
    let r = call_slow_count(&server, &plain, 3);
    assert_eq!(
        classify_result("tools/call", &r, false, &Budgets::default()),
        Ok(ResultShape::NotTask)
    );
    assert!(r.contains(r#""text":"1 2 3""#), "{r}");
}

#[test]
fn a_task_is_polled_through_input_required_to_completed() {
    let server = DemoServer::start(Options::default()).unwrap();
    let c = config(&server, true);
    let b = &c.budgets;
    let r = call_slow_count(&server, &c, 4);
    let ResultShape::Task(task) = classify_result("tools/call", &r, true, b).unwrap() else {
        panic!("not a task: {r}");
    };
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.poll_interval_ms, Some(100));
    let mut guard = StatusGuard::new(&task);
    let mut book = InputBook::new();
    let mut asked = 0;
    let result = loop {
        guard.poll(b).unwrap();
        let (status, v) = task_request(&server, &c, TaskMethod::Get, &task, None);
        assert_eq!(status, 200, "{v}");
        let d = parse_get_result(&v["result"].to_string(), b).unwrap();
        guard.observe(&d.task).unwrap();
        match d.payload {
            TaskPayload::InputRequests(raw) => {
                let fresh = book.poll(&raw).unwrap();
                if fresh.is_empty() {
                    continue;
                }
                asked += fresh.len();
                assert_eq!(fresh[0].key, "confirm");
                let answer = book
                    .respond(&[("confirm", r#"{"action":"accept","content":{}}"#)], b)
                    .unwrap();
                let (status, ack) =
                    task_request(&server, &c, TaskMethod::Update, &task, Some(&answer));
                assert_eq!(status, 200);
                parse_ack(TaskMethod::Update, &ack["result"].to_string()).unwrap();
            }
            TaskPayload::Result(r) => break r,
            other => assert_eq!(other, TaskPayload::None),
        }
        assert!(guard.polls() < 20, "no end");
    };
    assert_eq!(asked, 1, "input_required once");
    assert!(result.contains(r#""text":"1 2 3 4""#), "{result}");
    assert_eq!(guard.status(), TaskStatus::Completed);
    // A poll after the end reports the same terminal status.
    let (_, v) = task_request(&server, &c, TaskMethod::Get, &task, None);
    let d = parse_get_result(&v["result"].to_string(), b).unwrap();
    guard.observe(&d.task).unwrap();
}

#[test]
fn a_cancelled_task_reports_cancelled() {
    let server = DemoServer::start(Options::default()).unwrap();
    let c = config(&server, true);
    let r = call_slow_count(&server, &c, 2);
    let ResultShape::Task(task) = classify_result("tools/call", &r, true, &c.budgets).unwrap()
    else {
        panic!("{r}")
    };
    let (status, ack) = task_request(&server, &c, TaskMethod::Cancel, &task, None);
    assert_eq!(status, 200);
    parse_ack(TaskMethod::Cancel, &ack["result"].to_string()).unwrap();
    let (_, v) = task_request(&server, &c, TaskMethod::Get, &task, None);
    let d = parse_get_result(&v["result"].to_string(), &c.budgets).unwrap();
    assert_eq!(d.task.status, TaskStatus::Cancelled);
}

/// "Invalid or nonexistent `taskId`: `-32602`"; "Servers MUST return this error [-32021] for
/// non-declaring clients issuing `tasks/get`, `tasks/update`, and `tasks/cancel` requests";
/// `Mcp-Name` must be `params.taskId`.
#[test]
fn task_requests_get_the_seps_errors() {
    let server = DemoServer::start(Options::default()).unwrap();
    let c = config(&server, true);
    let r = call_slow_count(&server, &c, 2);
    let ResultShape::Task(task) = classify_result("tools/call", &r, true, &c.budgets).unwrap()
    else {
        panic!("{r}")
    };
    let unknown = mcp_sansio::task::TaskId::parse("no-such-task", 256).unwrap();
    let body = request_body(&c, V, TaskMethod::Get, 3, &unknown, None);
    let (_, v) = exchange(&server, &routing_headers(TaskMethod::Get, &unknown), &body);
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let undeclared = config(&server, false);
    let body = request_body(&undeclared, V, TaskMethod::Get, 3, &task.id, None);
    let (status, v) = exchange(&server, &routing_headers(TaskMethod::Get, &task.id), &body);
    assert_eq!(
        (status, v["error"]["code"].as_i64()),
        (400, Some(-32021)),
        "{v}"
    );
    let body = request_body(&c, V, TaskMethod::Get, 3, &task.id, None);
    let wrong = routing_headers(TaskMethod::Get, &unknown);
    let (status, v) = exchange(&server, &wrong, &body);
    assert_eq!(
        (status, v["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{v}"
    );
}
