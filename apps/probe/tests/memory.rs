//! The memory `mcp-probe` holds while it reads and prints a hostile call answer: answers of many
//! tiny pieces (content blocks, structured content) near the byte budget, read through the
//! whole binary (core, tokio adapter, rendering), must stay within the memory rule of
//! docs/guarantees.md: at most 3 × `--max-response-bytes` + 256 KiB more than the probe holds
//! for a one-block answer, measured as the child's peak resident size (`ru_maxrss` of `wait4`).

#![cfg(target_os = "linux")]
#![allow(unsafe_code)]

mod support;

use std::io::Read;
use std::process::{Command, Stdio};

use support::{json_response, result_msg, Reply, Req, Server, DISCOVER_OK};

/// The byte budget every run is given.
const BUDGET: u64 = 1024 * 1024;

/// A modern server whose every call answers `result`.
fn answering(result: String) -> Server {
    listing(
        r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#.to_owned(),
        result,
    )
}

/// A modern server whose listing answers `page` and every call `result`.
fn listing(page: String, result: String) -> Server {
    Server::start(move |req: &Req| {
        let id = req.id();
        let body = match req.rpc_method().as_str() {
            "server/discover" => DISCOVER_OK.to_owned(),
            "tools/list" => page.clone(),
            "tools/call" => result.clone(),
            _ => {
                return Reply::Send(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_vec())
            }
        };
        Reply::Send(json_response(200, &result_msg(id, &body)))
    })
}

/// The variable that makes [`runner`] run the probe: its arguments, one a line.
const RUNNER: &str = "MCP_PROBE_MEMORY_RUNNER";

/// Runs `mcp-probe [--json] call URL t` (`list URL` when `list`) with the byte budget; returns
/// its exit code, the bytes it printed and its peak resident size in bytes.
///
/// A process's peak (`ru_maxrss`) also counts the memory of the process it was cloned from, up
/// to its `exec`: this test process, which holds every answer. So the probe is started by a
/// fresh copy of this test binary, running only [`runner`], which is small.
fn probe_peak(server: &Server, json: bool, list: bool) -> (i32, usize, u64) {
    let mut args = vec!["--allow-loopback", "--max-response-bytes", "1048576"];
    if json {
        args.push("--json");
    }
    let url = server.url();
    if list {
        args.extend(["list", url.as_str()]);
    } else {
        args.extend(["call", url.as_str(), "t"]);
    }
    let out = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "runner", "--nocapture", "--test-threads", "1"])
        .env(RUNNER, args.join("\n"))
        .stdin(Stdio::null())
        .output()
        .expect("the runner runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("probe-run ").map(|(_, r)| r))
        .unwrap_or_else(|| {
            panic!(
                "no report: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let mut fields = line.split(' ').map(|f| f.parse::<u64>().expect("a number"));
    let mut next = || fields.next().expect("three numbers");
    let (code, printed, peak) = (next(), next(), next());
    (code as i32, printed as usize, peak)
}

/// Not a test on its own: run with [`RUNNER`] set, starts the probe with those arguments, waits
/// for it with `wait4` and prints `probe-run CODE PRINTED PEAK` (peak in bytes).
#[test]
// Waited for through `wait4`, which std's `Child` cannot give the resource usage of.
#[allow(clippy::zombie_processes)]
fn runner() {
    let Ok(args) = std::env::var(RUNNER) else {
        return;
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(args.split('\n'))
        .env_remove("MCP_BEARER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut n = 0usize;
        let mut buf = [0u8; 64 * 1024];
        while let Ok(read @ 1..) = stdout.read(&mut buf) {
            n += read;
        }
        n
    });
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills; `pid` is our child, which nothing else
    // waits for (the `Child` is not waited on through std).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let printed = reader.join().expect("the reader");
    assert!(libc::WIFEXITED(status), "the probe did not exit: {status}");
    // Linux reports kilobytes.
    let peak = u64::try_from(usage.ru_maxrss).expect("a size") * 1024;
    println!("probe-run {} {printed} {peak}", libc::WEXITSTATUS(status));
}

fn blocks(block: &str, count: usize) -> String {
    format!(
        r#"{{"content":[{}],"isError":false}}"#,
        vec![block; count].join(",")
    )
}

#[test]
fn answers_of_tiny_pieces_stay_within_the_memory_rule() {
    const EMPTY_TEXT: &str = r#"{"type":"text","text":""}"#;
    let bound = 3 * BUDGET + 256 * 1024;
    // The probe's own size (runtime, binary, buffers) for a one-block answer, the least of a few
    // runs of each output.
    let small = answering(blocks(r#"{"type":"text","text":"ok"}"#, 1));
    let baseline = |json: bool| {
        (0..3)
            .map(|_| {
                let (code, _, peak) = probe_peak(&small, json, false);
                assert_eq!(code, 0);
                peak
            })
            .min()
            .expect("runs")
    };
    let base = [baseline(false), baseline(true)];
    let cases: Vec<(&str, String, i32)> = vec![
        // Past the content-block budget: refused (exit 3), nothing kept past the limit.
        (
            "forty_thousand_empty_text_blocks",
            blocks(EMPTY_TEXT, 40_000),
            3,
        ),
        (
            "twenty_five_thousand_empty_image_blocks",
            blocks(r#"{"type":"image","data":"","mimeType":""}"#, 25_000),
            3,
        ),
        // As many as the budget allows: read and printed.
        (
            "empty_text_blocks_up_to_the_cap",
            blocks(EMPTY_TEXT, 4096),
            0,
        ),
        (
            "resource_links_up_to_the_cap",
            blocks(
                r#"{"type":"resource_link","uri":"u","name":"n","mimeType":"m"}"#,
                4096,
            ),
            0,
        ),
        // Structured content is kept as written and printed without building it.
        (
            "half_a_million_numbers_of_structured_content",
            format!(
                r#"{{"content":[{{"type":"text","text":"ok"}}],"structuredContent":[{}]}}"#,
                vec!["0"; 500_000].join(",")
            ),
            0,
        ),
        // A catalog is retained: its bound is the catalog's (6 x the budget).
        (
            "list_twenty_thousand_tiny_tools",
            format!(
                r#"{{"tools":[{}]}}"#,
                (0..20_000)
                    .map(|i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}}}}"#))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            0,
        ),
        // A tool with more header parameters than a tool may have is refused, none kept.
        (
            "list_a_tool_with_twenty_thousand_header_parameters",
            format!(
                r#"{{"tools":[{{"name":"many","inputSchema":{{"type":"object","properties":{{{}}}}}}},{{"name":"t","inputSchema":{{"type":"object"}}}}]}}"#,
                (0..20_000)
                    .map(|i| format!(r#""p{i}":{{"type":"string","x-mcp-header":"P{i}"}}"#))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            0,
        ),
    ];
    let mut over = Vec::new();
    for (name, result, expected) in &cases {
        assert!(result.len() < 1_042_000, "{name}: {} bytes", result.len());
        let list = name.starts_with("list_");
        let server = if list {
            listing(result.clone(), String::new())
        } else {
            answering(result.clone())
        };
        for json in [false, true] {
            let (code, printed, peak) = probe_peak(&server, json, list);
            assert_eq!(code, *expected, "{name} (json {json})");
            let above = peak.saturating_sub(base[usize::from(json)]);
            eprintln!(
                "{name:<45} json {json:<5} printed {printed:>8} peak {peak:>10} above {above:>9} ({:.2}x)",
                above as f64 / BUDGET as f64
            );
            // The catalog a listing retains has its own factor (docs/guarantees.md).
            let bound = if name.contains("tiny_tools") {
                6 * BUDGET + 256 * 1024
            } else {
                bound
            };
            if above > bound {
                over.push(format!("{name} (json {json}): {above} > {bound}"));
            }
        }
    }
    assert!(
        over.is_empty(),
        "over the memory rule:\n{}",
        over.join("\n")
    );
}
