//! The setup the task tests (`tasks.rs`, `tasks_hostile.rs`) share: a task-enabled
//! configuration, a JSON answer to a sent request, and a modern connection whose `tools/call`
//! was answered with a `CreateTaskResult`.

use mcp_sansio::Config;

use super::{json_response, modern_with, result_msg, Harness, SentRequest, Split};

/// A configuration with tasks and the input hook on.
pub fn tasks_config() -> Config {
    let mut c = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_tasks(true);
    c.input_hook = true;
    c
}

/// Answers `r` with a 200 JSON response whose result is `result`.
pub fn reply(h: &mut Harness, r: &SentRequest, result: &str) {
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), result)),
    );
}

/// A task-enabled modern connection whose call `slow` got `created`.
pub fn started_with(config: Config, split: Split, created: &str) -> Harness {
    let mut h = modern_with(config, split);
    h.call("slow", "{}");
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
    reply(&mut h, &r, created);
    h
}
