//! Command-line parsing (hand-written: a few options, strict errors, exit code 2).

use std::time::Duration;

/// The help text.
pub const HELP: &str = "\
mcp-probe: list and call the tools of an MCP server (Streamable HTTP, every era)

USAGE:
    mcp-probe [OPTIONS] list <URL>
    mcp-probe [OPTIONS] call <URL> <TOOL> [ARGUMENTS_JSON]    (arguments default to {})
    mcp-probe demo                                            (embedded loopback server, no network)

OPTIONS:
    --json                    print one JSON document on stdout
    --allow-loopback          allow loopback addresses (127.0.0.0/8, ::1); refused by default
                              (private and other non-public ranges are always refused)
    --dial-timeout S          seconds to open one connection: TCP connect and TLS handshake
                              (decimals ok; default 30)
    --request-timeout S       seconds for each exchange but a tool call: the handshake
                              (server/discover, initialize), each tools/list page, the closing
                              DELETE (default 30)
    --list-timeout S          seconds for a whole listing, every page together (default 120)
    --call-timeout S          seconds for a whole tool call, re-sends included (default 120);
                              the only limit of a tools/call request, however long the tool runs
    --ca-cert FILE            also trust the PEM certificate(s) in FILE as roots, for a server
                              behind a private certificate authority (repeatable)
    --http1                   speak HTTP/1.1 only (TLS offers ALPN http/1.1 alone); by default
                              HTTP/2 is spoken to an https server that chooses it (ALPN h2)
    --h2c                     speak HTTP/2 with prior knowledge (clear text) to an http:// URL,
                              for testing
    --max-response-bytes N    bytes read per connection at most
    --max-header-bytes N      bytes of one response header block at most
    --max-pages N             tools/list pages at most
    --oauth                   when the server asks (401, or 403 insufficient_scope), authorize
                              with OAuth 2.1: print the authorization URL (a browser is opened
                              only when one is obviously available), receive the redirect on a
                              127.0.0.1 port of its own, then list or call
    --token-file FILE         with --oauth: keep the credentials in FILE between runs (created
                              with mode 0600; it holds secrets)
    --record FILE             write a transcript of the session to FILE (secrets redacted),
                              over HTTP/1.1 or HTTP/2 alike (an HTTP/2 session on a socket of
                              its own); `cargo test`'s replay reads it back (see
                              docs/transcripts.md); with --oauth the authorization goes to
                              FILE.auth
    -h, --help                print this help
    -V, --version             print the version

ENVIRONMENT:
    MCP_BEARER_TOKEN          sent as `Authorization: Bearer ...` when set (never taken from argv)

EXIT CODES:
    0  success (a tool result with is_error true is a success)
    2  usage or configuration error
    3  connection failed (unreachable, refused address, timeout, budget exceeded, bad HTTP)
    4  authentication failed (HTTP 401 or 403)
    5  the server answered and refused (JSON-RPC error, unusable answer)

JSON OUTPUT (--json):
    list:  {\"protocol_version\", \"http_version\", \"tools\": [{\"name\", \"description\",
            \"input_schema\"}], \"refused\": [{\"index\", \"name\", \"reason\"}]}
    call:  {\"content\": [...], \"is_error\": bool, \"http_version\", \"structured_content\"?}
    http_version is \"HTTP/2\" or \"HTTP/1.1\": what the session's exchanges ran on.
    error: {\"error\": {\"type\", \"message\"}}, type one of mcp_connection_failed_error,
           mcp_authentication_failed_error, mcp_server_answered_error.
    Usage and configuration errors (exit 2) are written to stderr as text; with --json they are
    also printed on stdout as an error document of type mcp_connection_failed_error.
";

/// What to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Print the help.
    Help,
    /// Print the version.
    Version,
    /// List the tools of a server.
    List {
        /// The endpoint.
        url: String,
    },
    /// Call a tool.
    Call {
        /// The endpoint.
        url: String,
        /// The tool.
        tool: String,
        /// The arguments, a JSON object.
        arguments: String,
    },
    /// Run the embedded demonstration.
    Demo,
}

/// The options common to `list` and `call`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `--json`.
    pub json: bool,
    /// `--allow-loopback`.
    pub allow_loopback: bool,
    /// `--dial-timeout`.
    pub dial_timeout: Option<Duration>,
    /// `--request-timeout`.
    pub request_timeout: Option<Duration>,
    /// `--list-timeout`.
    pub list_timeout: Option<Duration>,
    /// `--call-timeout`.
    pub call_timeout: Option<Duration>,
    /// `--max-response-bytes`.
    pub max_response_bytes: Option<u64>,
    /// `--max-header-bytes`.
    pub max_header_bytes: Option<usize>,
    /// `--max-pages`.
    pub max_pages: Option<u32>,
    /// `--record`.
    pub record: Option<std::path::PathBuf>,
    /// `--ca-cert`, in the order given.
    pub ca_certs: Vec<std::path::PathBuf>,
    /// `--oauth`.
    pub oauth: bool,
    /// `--token-file`.
    pub token_file: Option<std::path::PathBuf>,
    /// `--http1`.
    pub http1: bool,
    /// `--h2c`.
    pub h2c: bool,
}

fn seconds(flag: &str, v: &str) -> Result<Duration, String> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "{flag} expects a number of seconds above 0 and at most 86400, got {v:?}"
        )),
    }
}

fn count<T: std::str::FromStr + PartialOrd + Default>(flag: &str, v: &str) -> Result<T, String> {
    match v.parse::<T>() {
        Ok(n) if n > T::default() => Ok(n),
        _ => Err(format!("{flag} expects a positive integer, got {v:?}")),
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<(Options, Command), String> {
    let mut o = Options::default();
    let mut positional: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut only_positional = false;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if only_positional || !a.starts_with("--") && a != "-h" && a != "-V" {
            positional.push(a);
            continue;
        }
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (a, None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            let v = args
                .get(i)
                .ok_or_else(|| format!("{flag} expects a value"))?;
            i += 1;
            Ok(v.clone())
        };
        match flag {
            "--" => only_positional = true,
            "-h" | "--help" => return Ok((o, Command::Help)),
            "-V" | "--version" => return Ok((o, Command::Version)),
            "--json" => o.json = true,
            "--allow-loopback" => o.allow_loopback = true,
            "--oauth" => o.oauth = true,
            "--http1" => o.http1 = true,
            "--h2c" => o.h2c = true,
            "--token-file" => {
                let v = value()?;
                if v.is_empty() {
                    return Err("--token-file expects a file name".into());
                }
                o.token_file = Some(v.into());
            }
            "--dial-timeout" => o.dial_timeout = Some(seconds(flag, &value()?)?),
            "--request-timeout" => o.request_timeout = Some(seconds(flag, &value()?)?),
            "--list-timeout" => o.list_timeout = Some(seconds(flag, &value()?)?),
            "--call-timeout" => o.call_timeout = Some(seconds(flag, &value()?)?),
            "--max-response-bytes" => o.max_response_bytes = Some(count(flag, &value()?)?),
            "--max-header-bytes" => o.max_header_bytes = Some(count(flag, &value()?)?),
            "--max-pages" => o.max_pages = Some(count(flag, &value()?)?),
            "--record" => {
                let v = value()?;
                if v.is_empty() {
                    return Err("--record expects a file name".into());
                }
                o.record = Some(v.into());
            }
            "--ca-cert" => {
                let v = value()?;
                if v.is_empty() {
                    return Err("--ca-cert expects a file name".into());
                }
                o.ca_certs.push(v.into());
            }
            "--bearer-token" | "--token" => {
                return Err(
                    "the bearer token is read from MCP_BEARER_TOKEN, never from the command line"
                        .into(),
                )
            }
            _ => return Err(format!("unknown option {flag}")),
        }
        if inline.is_some()
            && matches!(
                flag,
                "--json" | "--allow-loopback" | "--oauth" | "--http1" | "--h2c"
            )
        {
            return Err(format!("{flag} takes no value"));
        }
    }
    let command = match positional.as_slice() {
        ["list", url] => Command::List {
            url: (*url).to_owned(),
        },
        ["call", url, tool] => Command::Call {
            url: (*url).to_owned(),
            tool: (*tool).to_owned(),
            arguments: "{}".to_owned(),
        },
        ["call", url, tool, arguments] => Command::Call {
            url: (*url).to_owned(),
            tool: (*tool).to_owned(),
            arguments: (*arguments).to_owned(),
        },
        ["demo"] => Command::Demo,
        [] => return Err("a command is required: list, call or demo".into()),
        ["list", ..] => return Err("list expects exactly one URL".into()),
        ["call", ..] => {
            return Err("call expects a URL, a tool name and optional JSON arguments".into())
        }
        ["demo", ..] => return Err("demo takes no arguments".into()),
        [other, ..] => return Err(format!("unknown command {other:?}")),
    };
    if o.http1 && o.h2c {
        return Err("--http1 and --h2c exclude each other".into());
    }
    if o.h2c {
        if let Command::List { url } | Command::Call { url, .. } = &command {
            if !url.starts_with("http://") {
                return Err("--h2c speaks clear-text HTTP/2 to an http:// URL only".into());
            }
        }
    }
    if o.token_file.is_some() && !o.oauth {
        return Err("--token-file needs --oauth".into());
    }
    if command == Command::Demo && o != Options::default() {
        return Err("demo takes no options".into());
    }
    Ok((o, command))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<(Options, Command), String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_and_commands_parse() {
        let (o, c) = p(&[
            "--json",
            "--list-timeout",
            "1.5",
            "--request-timeout=2",
            "--ca-cert",
            "a.pem",
            "--ca-cert=b.pem",
            "list",
            "http://h/mcp",
        ])
        .unwrap();
        assert!(o.json);
        assert_eq!(o.list_timeout, Some(Duration::from_millis(1500)));
        assert_eq!(o.request_timeout, Some(Duration::from_secs(2)));
        assert_eq!(
            o.ca_certs,
            [
                std::path::PathBuf::from("a.pem"),
                std::path::PathBuf::from("b.pem")
            ]
        );
        assert_eq!(
            c,
            Command::List {
                url: "http://h/mcp".into()
            }
        );
        let (o, c) = p(&[
            "call",
            "http://h/mcp",
            "echo",
            "--max-pages=3",
            r#"{"a":1}"#,
        ])
        .unwrap();
        assert_eq!(o.max_pages, Some(3));
        assert_eq!(
            c,
            Command::Call {
                url: "http://h/mcp".into(),
                tool: "echo".into(),
                arguments: r#"{"a":1}"#.into()
            }
        );
        assert!(
            matches!(p(&["call", "u", "t"]).unwrap().1, Command::Call { arguments, .. } if arguments == "{}")
        );
        assert_eq!(p(&["--help"]).unwrap().1, Command::Help);
        let (o, _) = p(&["--oauth", "--token-file", "t.json", "list", "u"]).unwrap();
        assert!(o.oauth);
        assert_eq!(o.token_file, Some(std::path::PathBuf::from("t.json")));
    }

    #[test]
    fn http_version_switches() {
        let (o, _) = p(&["--http1", "list", "https://x/mcp"]).unwrap();
        assert!(o.http1 && !o.h2c);
        let (o, _) = p(&["--h2c", "call", "http://x/mcp", "t"]).unwrap();
        assert!(o.h2c && !o.http1);
        for bad in [
            &["--http1", "--h2c", "list", "http://x/mcp"][..],
            &["--h2c", "list", "https://x/mcp"],
            &["--http1=yes", "list", "https://x/mcp"],
            &["--h2c", "demo"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_usage_is_an_error() {
        for bad in [
            &["list"][..],
            &["list", "a", "b"],
            &["frobnicate"],
            &["--dial-timeout", "-1", "list", "u"],
            &["--dial-timeout", "nan", "list", "u"],
            &["--max-pages", "0", "list", "u"],
            &["--max-pages"],
            &["--request-timeout", "0", "list", "u"],
            &["--ca-cert", "", "list", "u"],
            &["--ca-cert"],
            &["--nope", "list", "u"],
            &["--token", "x", "list", "u"],
            &["--json=1", "list", "u"],
            &["--json", "demo"],
            &["--token-file", "t.json", "list", "u"],
            &["--oauth", "--token-file", "", "list", "u"],
            &["--oauth=1", "list", "u"],
            &[],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }
}
