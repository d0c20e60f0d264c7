//! The manual (`apps/probe/README.md`) and the real `--help` of every command agree: the same
//! options, commands, exit codes, environment variable and JSON members, in both directions.
//! Also: the completion scripts are generated for every shell clap knows.

mod support;

use std::collections::BTreeSet;

use support::probe;

/// The help printed by `args`, which must exit with 0.
fn help(args: &[&str]) -> String {
    let o = probe(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    assert!(o.stderr.is_empty(), "{args:?}");
    String::from_utf8(o.stdout).expect("UTF-8 help")
}

fn manual() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("the manual")
}

/// The lines of the section of `text` that starts with the line `heading` and ends at the next
/// blank line.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// The option names (`--json`, `-h`) that start an entry of a help's `Options:` section.
fn help_options(help: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in section(help, "Options:") {
        let line = line.trim_start();
        if !line.starts_with('-') {
            continue; // the continuation of a wrapped description
        }
        for word in line.split(|c: char| c.is_whitespace() || c == ',') {
            if word.is_empty() {
                continue;
            }
            if !word.starts_with('-') {
                break; // <VALUE>, then the description
            }
            names.insert(word.to_owned());
        }
    }
    names
}

/// The command names of the top-level help's `Commands:` section.
fn help_commands(help: &str) -> BTreeSet<String> {
    section(help, "Commands:")
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The option names in the first cell of the manual's option table (rows starting "| `-").
fn manual_options(manual: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for row in manual.lines().filter(|l| l.starts_with("| `-")) {
        let cell = row.split('|').nth(1).expect("a first cell");
        for quoted in cell.split('`').skip(1).step_by(2) {
            let name = quoted.split_whitespace().next().expect("an option name");
            names.insert(name.to_owned());
        }
    }
    names
}

/// The command names of the manual's usage block (its first code block): the first word after
/// `mcp-probe` and its `[OPTIONS]`.
fn manual_commands(manual: &str) -> BTreeSet<String> {
    let block = manual
        .split("```")
        .nth(1)
        .expect("a usage block at the top of the manual");
    block
        .lines()
        .filter_map(|l| {
            let mut words = l
                .split_whitespace()
                .skip_while(|w| *w == "mcp-probe" || *w == "[OPTIONS]");
            l.starts_with("mcp-probe").then(|| words.next()).flatten()
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_manual_names_every_option_of_the_help_and_no_other() {
    let top = help(&["--help"]);
    let commands = help_commands(&top);
    assert_eq!(
        commands,
        ["call", "completions", "demo", "list", "task"]
            .map(str::to_owned)
            .into(),
        "{top}"
    );
    let mut in_help = help_options(&top);
    for command in &commands {
        let sub = help(&[command, "--help"]);
        assert!(
            sub.contains(&format!("Usage: mcp-probe {command}")),
            "{sub}"
        );
        in_help.extend(help_options(&sub));
    }
    for action in ["wait", "cancel"] {
        in_help.extend(help_options(&help(&["task", action, "--help"])));
    }
    // The parser of the extraction finds the options it should (it could find none).
    for known in [
        "--json",
        "--http1",
        "--h2c",
        "--ca-cert",
        "-h",
        "--help",
        "-V",
    ] {
        assert!(in_help.contains(known), "{known} in {in_help:?}");
    }
    let man = manual();
    let in_manual = manual_options(&man);
    let missing: Vec<_> = in_help.difference(&in_manual).collect();
    assert!(
        missing.is_empty(),
        "options in --help missing from the manual: {missing:?}"
    );
    let stale: Vec<_> = in_manual.difference(&in_help).collect();
    assert!(
        stale.is_empty(),
        "options in the manual that --help does not know: {stale:?}"
    );
    assert_eq!(manual_commands(&man), commands, "the manual's usage block");
}

#[test]
fn the_manual_names_the_exit_codes_environment_and_json_members_of_the_help() {
    let top = help(&["--help"]);
    let man = manual();
    let codes: Vec<&str> = section(&top, "Exit codes:")
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(codes, ["0", "2", "3", "4", "5", "6", "130"], "{top}");
    for code in &codes {
        assert!(man.contains(&format!("\n| {code} |")), "exit code {code}");
    }
    // And the manual's exit-code table has no code the help lacks.
    let manual_codes: Vec<&str> = man
        .lines()
        .skip_while(|l| *l != "## Exit codes")
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(' ').next())
        .filter(|c| c.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(manual_codes, codes);
    for variable in section(&top, "Environment:")
        .iter()
        .filter_map(|l| l.split_whitespace().next())
    {
        assert!(man.contains(&format!("`{variable}`")), "{variable}");
    }
    let json = section(&top, "JSON output (--json):").join("\n");
    let members: BTreeSet<&str> = json.split('"').skip(1).step_by(2).collect();
    for member in [
        "http_version",
        "protocol_version",
        "structured_content",
        "HTTP/2",
    ] {
        assert!(members.contains(member), "{member} in {members:?}");
    }
    for member in &members {
        assert!(
            man.contains(&format!("\"{member}\"")),
            "JSON member or value {member:?} is not in the manual"
        );
    }
}

#[test]
fn completions_are_generated_for_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef mcp-probe"),
        ("fish", "complete -c mcp-probe"),
        ("elvish", "mcp-probe"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = probe(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(o.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        // The options of the subcommands are completed.
        assert!(script.contains("allow-loopback"), "{shell}");
        assert!(script.contains("token-file"), "{shell}");
    }
    let o = probe(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn each_command_has_its_own_help() {
    let call = help(&["call", "--help"]);
    assert!(call.contains("Usage: mcp-probe call [OPTIONS] <URL> <TOOL> [ARGUMENTS_JSON]"));
    assert!(call.contains("[default: {}]"), "{call}");
    let demo = help(&["demo", "--help"]);
    assert!(!demo.contains("--json"), "demo takes no options: {demo}");
    // -h is --help.
    assert_eq!(help(&["list", "-h"]), help(&["list", "--help"]));
    assert_eq!(help(&["-h"]), help(&["--help"]));
}
