//! `mcp-probe --pin-tools` with `--pin-file`: a tool changed between two runs is noted under
//! `warn` and refused under `refuse` (exit 5, the call never sent).

use std::process::{Command, Output};

use mcp_sansio_test_support::adapter_tests::cache::{CacheServer, Script};

fn probe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_tool_changed_between_runs_is_noted_or_refused() {
    let server = CacheServer::start(Script::default());
    let dir = std::env::temp_dir().join(format!("mcp-probe-pin-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pins");
    let _ = std::fs::remove_file(&file);
    let file = file.to_str().unwrap();
    let url = server.url();
    let common = ["--allow-loopback", "--http1", "--pin-file", file];
    let run = |policy: &str, args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&common);
        all.extend_from_slice(&["--pin-tools", policy]);
        probe(&all)
    };
    let weather = ["call", &url, "weather", r#"{"region":"eu"}"#];

    let first = run("refuse", &["list", &url]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(!stderr(&first).contains("note"), "{}", stderr(&first));
    assert!(
        std::fs::metadata(file).is_ok(),
        "the pins are kept in the file"
    );

    server.script(|s| s.header = "Area");
    let warned = run("warn", &weather);
    assert_eq!(warned.status.code(), Some(0), "{}", stderr(&warned));
    assert!(
        stderr(&warned).contains(r#"note: tool "weather" changed since it was pinned"#),
        "{}",
        stderr(&warned)
    );
    assert_eq!(server.count("tools/call"), 1);

    let refused = run("refuse", &weather);
    assert_eq!(refused.status.code(), Some(5), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("changed since it was pinned")
            && stderr(&refused).contains("mcp_server_answered_error"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        server.count("tools/call"),
        1,
        "the refused call was not sent"
    );

    // Without the file, a run starts with no pins: the changed tool is first seen.
    let fresh = probe(&[
        "list",
        &url,
        "--allow-loopback",
        "--http1",
        "--pin-tools",
        "refuse",
    ]);
    assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));

    let misuse = probe(&["list", &url, "--allow-loopback", "--pin-file", file]);
    assert_eq!(misuse.status.code(), Some(2), "{}", stderr(&misuse));
    let bad = probe(&["list", &url, "--pin-tools", "maybe"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    let _ = std::fs::remove_dir_all(&dir);
}
