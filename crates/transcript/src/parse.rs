//! The text form, read: [`Transcript::parse`] and its typed errors.

use std::time::Duration;

use mcp_sansio::Budgets;
use mcp_sansio::ToolNameRule;
use mcp_sansio::{ClientInfo, Config, Connection, Era, EraHint};
use mcp_sansio::{ConfigError, TransportErrorKind};
use serde_json::Value;

use crate::escape::unescape;
use crate::h2::{H2Setup, H2_FIELDS};
use crate::model::{Entry, Record, RecordedOperation, Transcript, TranscriptConfig};
use crate::write::BUDGET_FIELDS;
use crate::MAGIC;
use mcp_sansio::h2::H2Config;

/// A transcript that cannot be read: the line (1-based) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("transcript line {line}: {kind}")]
pub struct ParseError {
    /// The line number, from 1.
    pub line: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

/// What is wrong with a transcript line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The first line is not [`MAGIC`].
    #[error("not a transcript (the first line must be {MAGIC:?})")]
    NotATranscript,
    /// A line that is not a known record.
    #[error("unknown record {0:?}")]
    UnknownRecord(String),
    /// A record without its required fields, or with malformed ones.
    #[error("malformed {what}")]
    Malformed {
        /// Which record or field.
        what: &'static str,
    },
    /// An invalid `\` escape.
    #[error("invalid escape")]
    BadEscape,
    /// A data line (`> ` or `< `) outside a `send` or `recv` block, or of the wrong direction.
    #[error("data line outside its block")]
    StrayData,
    /// An `event` line that is not JSON.
    #[error("event is not JSON")]
    BadEvent,
    /// A configuration value that the core refuses.
    #[error("configuration: {0}")]
    Config(ConfigError),
    /// The configuration has no `url`.
    #[error("no url configured")]
    NoUrl,
    /// The task handle of an `op resume`, `op resume_cancel` or `op resume_get` is not one
    /// (tampered, truncated, of another format version).
    #[error("the task handle of the resume is unusable: {0}")]
    TaskHandle(mcp_sansio::task::HandleError),
}

pub(crate) fn parse_at(s: &str) -> Option<Duration> {
    let s = s.strip_prefix('@')?;
    let (ms, frac) = s.split_once('.').unwrap_or((s, "0"));
    if frac.len() > 3 || ms.is_empty() {
        return None;
    }
    let ms: u64 = ms.parse().ok()?;
    let frac_us: u64 = format!("{frac:0<3}").parse().ok()?;
    Some(Duration::from_micros(
        ms.checked_mul(1000)?.checked_add(frac_us)?,
    ))
}

pub(crate) fn kind_from_name(s: &str) -> Option<TransportErrorKind> {
    Some(match s {
        "resolve" => TransportErrorKind::Resolve,
        "address-refused" => TransportErrorKind::AddressRefused,
        "connect" => TransportErrorKind::Connect,
        "tls" => TransportErrorKind::Tls,
        "io" => TransportErrorKind::Io,
        _ => return None,
    })
}

/// The budgets by their transcript names: (name, get, set); values too large saturate.
/// At most 64 bytes of `s` (cut at a character boundary), for error messages.
pub(crate) fn truncate(s: &str) -> String {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

fn parse_exchange(s: Option<&str>) -> Result<u64, ParseErrorKind> {
    s.and_then(|s| s.parse().ok())
        .ok_or(ParseErrorKind::Malformed {
            what: "exchange id",
        })
}

fn parse_socket(s: &str) -> Result<u64, ParseErrorKind> {
    s.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or(ParseErrorKind::Malformed {
            what: "socket number",
        })
}

/// `KIND MESSAGE` of a transport failure.
fn parse_failure(s: &str) -> Result<(TransportErrorKind, String), ParseErrorKind> {
    let (kind, message) = s.split_once(' ').unwrap_or((s, ""));
    let kind = kind_from_name(kind).ok_or(ParseErrorKind::Malformed {
        what: "transport-error kind",
    })?;
    let message = unescape(message)?;
    Ok((kind, String::from_utf8_lossy(&message).into_owned()))
}

fn parse_op(args: &str) -> Result<RecordedOperation, ParseErrorKind> {
    let (word, rest) = args.split_once(' ').unwrap_or((args, ""));
    Ok(match word {
        "connect" => RecordedOperation::Connect,
        "list_tools" => RecordedOperation::ListTools,
        "close" => RecordedOperation::Close,
        "abandon" => RecordedOperation::Abandon,
        "decline" => RecordedOperation::ProvideInput(None),
        "input" => RecordedOperation::ProvideInput(Some(unescape(rest)?)),
        "answer" => {
            let (id, after) = leading_string(rest, "server request id")?;
            RecordedOperation::AnswerServerRequest {
                id,
                result: Some(unescape(after)?),
            }
        }
        "refuse" => {
            let (id, _) = leading_string(rest, "server request id")?;
            RecordedOperation::AnswerServerRequest { id, result: None }
        }
        "resume" | "resume_cancel" => RecordedOperation::ResumeTask {
            handle: handle_bytes(rest)?,
            cancel: word == "resume_cancel",
        },
        "resume_get" => RecordedOperation::GetTask {
            handle: handle_bytes(rest)?,
        },
        "call_tool" => {
            let (name, after) = leading_string(rest, "tool name")?;
            RecordedOperation::CallTool {
                name,
                arguments: unescape(after)?,
            }
        }
        "call_known_tool" => {
            let (name, after) = leading_string(rest, "tool name")?;
            let (input_schema, after) = leading_string(after, "input schema")?;
            if serde_json::from_str::<serde::de::IgnoredAny>(&input_schema).is_err() {
                return Err(ParseErrorKind::Malformed {
                    what: "input schema",
                });
            }
            RecordedOperation::CallKnownTool {
                name,
                input_schema,
                arguments: unescape(after)?,
            }
        }
        other => return Err(ParseErrorKind::UnknownRecord(truncate(other))),
    })
}

/// The escaped bytes of a task handle, which must read as one
/// ([`TaskHandle::from_bytes`](mcp_sansio::task::TaskHandle::from_bytes)): a tampered handle
/// is refused when the transcript is read, never replayed as nothing started.
fn handle_bytes(s: &str) -> Result<crate::model::HandleBytes, ParseErrorKind> {
    let bytes = unescape(s)?;
    mcp_sansio::task::TaskHandle::from_bytes(&bytes).map_err(ParseErrorKind::TaskHandle)?;
    Ok(crate::model::HandleBytes(bytes))
}

/// A JSON string at the start of `s`, and the rest after one space.
fn leading_string<'a>(s: &'a str, what: &'static str) -> Result<(String, &'a str), ParseErrorKind> {
    let mut de = serde_json::Deserializer::from_str(s).into_iter::<String>();
    match de.next() {
        Some(Ok(v)) => Ok((v, s[de.byte_offset()..].strip_prefix(' ').unwrap_or(""))),
        _ => Err(ParseErrorKind::Malformed { what }),
    }
}

fn parse_config_line(
    cfg: &mut TranscriptConfig,
    url: &mut Option<String>,
    h2: &mut Vec<(usize, u64)>,
    rest: &str,
) -> Result<(), ParseErrorKind> {
    let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
    let words = || value.split_whitespace().map(str::to_owned).collect();
    match key {
        "url" => *url = Some(value.to_owned()),
        "client" => {
            let mut de = serde_json::Deserializer::from_str(value).into_iter::<String>();
            let name = de.next().and_then(Result::ok);
            let version = de.next().and_then(Result::ok);
            match (name, version) {
                (Some(name), Some(version)) => cfg.client_info = ClientInfo { name, version },
                _ => return Err(ParseErrorKind::Malformed { what: "client" }),
            }
        }
        "bearer-token" => cfg.bearer_token = true,
        "dpop" => cfg.dpop = true,
        "modern-versions" => cfg.modern_versions = words(),
        "legacy-versions" => cfg.legacy_versions = words(),
        "era-hint" => {
            let (era, version) = value
                .split_once(' ')
                .ok_or(ParseErrorKind::Malformed { what: "era-hint" })?;
            let era = match era {
                "modern" => Era::Modern,
                "legacy" => Era::Legacy,
                _ => return Err(ParseErrorKind::Malformed { what: "era-hint" }),
            };
            cfg.era_hint = Some(EraHint {
                era,
                version: version.to_owned(),
            });
        }
        "capabilities" => {
            cfg.client_capabilities =
                String::from_utf8(unescape(value)?).map_err(|_| ParseErrorKind::Malformed {
                    what: "capabilities",
                })?
        }
        "input-hook" => cfg.input_hook = true,
        "tasks" => cfg.tasks = true,
        "unix-at-zero" => {
            let (secs, nanos) = value.split_once('.').ok_or(ParseErrorKind::Malformed {
                what: "unix-at-zero",
            })?;
            let bad = || ParseErrorKind::Malformed {
                what: "unix-at-zero",
            };
            if nanos.len() != 9 || !nanos.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let secs: u64 = secs.parse().map_err(|_| bad())?;
            let nanos: u32 = nanos.parse().map_err(|_| bad())?;
            cfg.unix_at_zero = core::time::Duration::new(secs, nanos);
        }
        "tool-names" => {
            cfg.tool_names = match value {
                "strict" => ToolNameRule::Strict,
                "lenient" => ToolNameRule::Lenient,
                _ => return Err(ParseErrorKind::Malformed { what: "tool-names" }),
            }
        }
        "budget" => {
            let (name, v) = value
                .split_once(' ')
                .ok_or(ParseErrorKind::Malformed { what: "budget" })?;
            let v: u64 = v.parse().map_err(|_| ParseErrorKind::Malformed {
                what: "budget value",
            })?;
            let field = BUDGET_FIELDS.iter().find(|(n, _, _)| *n == name).ok_or(
                ParseErrorKind::Malformed {
                    what: "budget name",
                },
            )?;
            (field.2)(&mut cfg.budgets, v);
        }
        "http" => match value.split_once(' ') {
            Some(("2", scheme @ ("https" | "http"))) => {
                cfg.http2 = Some(H2Setup::new(scheme, &H2Config::default()))
            }
            _ => return Err(ParseErrorKind::Malformed { what: "http" }),
        },
        "h2" => {
            let (name, v) = value
                .split_once(' ')
                .ok_or(ParseErrorKind::Malformed { what: "h2" })?;
            let v: u64 = v
                .parse()
                .map_err(|_| ParseErrorKind::Malformed { what: "h2 value" })?;
            let field = H2_FIELDS
                .iter()
                .position(|(n, _, _)| *n == name)
                .ok_or(ParseErrorKind::Malformed { what: "h2 name" })?;
            h2.push((field, v));
        }
        other => return Err(ParseErrorKind::UnknownRecord(truncate(other))),
    }
    Ok(())
}

impl Transcript {
    /// Reads the text form.
    pub fn parse(text: &str) -> Result<Transcript, ParseError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, l)) if l.trim_end() == MAGIC => {}
            _ => {
                return Err(ParseError {
                    line: 1,
                    kind: ParseErrorKind::NotATranscript,
                })
            }
        }
        let mut url: Option<String> = None;
        // `config h2` lines, applied once the budgets they start from are known.
        let mut h2_lines: Vec<(usize, u64)> = Vec::new();
        let mut cfg = TranscriptConfig {
            url: String::new(),
            client_info: ClientInfo::default(),
            bearer_token: false,
            dpop: false,
            modern_versions: Vec::new(),
            legacy_versions: Vec::new(),
            era_hint: None,
            client_capabilities: "{}".to_owned(),
            input_hook: false,
            tool_names: ToolNameRule::Strict,
            budgets: Budgets::default(),
            http2: None,
            tasks: false,
            unix_at_zero: core::time::Duration::ZERO,
        };
        let defaults = Config::new("http://localhost/").map_err(|e| ParseError {
            line: 1,
            kind: ParseErrorKind::Config(e),
        })?;
        cfg.modern_versions = defaults.modern_versions.clone();
        cfg.legacy_versions = defaults.legacy_versions.clone();
        let mut comments = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        // The open data block: its direction prefix and where its bytes go.
        let mut block: Option<&'static str> = None;
        // Whether the open block is an HTTP/2 `write` or `read` (which may hold annotations).
        let mut h2_block = false;
        let mut last_line = 1;
        for (n, line) in lines {
            last_line = n;
            let err = |kind| ParseError { line: n, kind };
            if let Some(data) = line.strip_prefix("> ").or_else(|| line.strip_prefix("< ")) {
                let prefix = &line[..2];
                if block != Some(if prefix == "> " { "> " } else { "< " }) {
                    return Err(err(ParseErrorKind::StrayData));
                }
                let bytes = unescape(data).map_err(err)?;
                match entries.last_mut().map(|e| &mut e.record) {
                    Some(Record::Send { bytes: b, .. })
                    | Some(Record::Recv { bytes: b, .. })
                    | Some(Record::H2Write { bytes: b, .. })
                    | Some(Record::H2Read { bytes: b, .. }) => b.extend_from_slice(&bytes),
                    _ => return Err(err(ParseErrorKind::StrayData)),
                }
                continue;
            }
            if h2_block && line.starts_with('#') {
                continue; // an annotation of the frames: derived from the bytes, not kept
            }
            block = None;
            h2_block = false;
            if line.trim().is_empty() {
                continue;
            }
            if let Some(c) = line.strip_prefix('#') {
                comments.push(c.strip_prefix(' ').unwrap_or(c).to_owned());
                continue;
            }
            if let Some(rest) = line.strip_prefix("config ") {
                parse_config_line(&mut cfg, &mut url, &mut h2_lines, rest).map_err(err)?;
                continue;
            }
            let (at, rest) = line.split_once(' ').unwrap_or((line, ""));
            let Some(at) = parse_at(at) else {
                return Err(err(ParseErrorKind::UnknownRecord(truncate(line))));
            };
            let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let http2 = cfg.http2.is_some();
            let record = match word {
                "open" if http2 => Record::H2Open {
                    socket: parse_socket(args).map_err(err)?,
                },
                "write" | "read" if http2 => {
                    let socket = parse_socket(args).map_err(err)?;
                    h2_block = true;
                    if word == "write" {
                        block = Some("> ");
                        Record::H2Write {
                            socket,
                            bytes: Vec::new(),
                        }
                    } else {
                        block = Some("< ");
                        Record::H2Read {
                            socket,
                            bytes: Vec::new(),
                        }
                    }
                }
                "eof" if http2 => Record::H2Eof {
                    socket: parse_socket(args).map_err(err)?,
                },
                "transport-error" if http2 => {
                    let (socket, rest) = args.split_once(' ').unwrap_or((args, ""));
                    let socket = parse_socket(socket).map_err(err)?;
                    let (kind, message) = parse_failure(rest).map_err(err)?;
                    Record::H2Failure {
                        socket,
                        kind,
                        message,
                    }
                }
                "dial-error" if http2 => {
                    let (kind, message) = parse_failure(args).map_err(err)?;
                    Record::H2DialError { kind, message }
                }
                "send" | "recv" | "socket" if http2 => {
                    return Err(err(ParseErrorKind::UnknownRecord(truncate(word))))
                }
                "op" => Record::Operation(parse_op(args).map_err(err)?),
                "send" => {
                    let mut it = args.split(' ');
                    let exchange = parse_exchange(it.next()).map_err(err)?;
                    let fresh = match it.next() {
                        None => false,
                        Some("fresh") => true,
                        Some(_) => return Err(err(ParseErrorKind::Malformed { what: "send" })),
                    };
                    block = Some("> ");
                    Record::Send {
                        exchange,
                        fresh,
                        bytes: Vec::new(),
                    }
                }
                "recv" => {
                    block = Some("< ");
                    Record::Recv {
                        exchange: parse_exchange(Some(args)).map_err(err)?,
                        bytes: Vec::new(),
                    }
                }
                "socket" => {
                    let (ex, how) = args.split_once(' ').unwrap_or((args, ""));
                    let reused = match how {
                        "pooled" => true,
                        "new" => false,
                        _ => return Err(err(ParseErrorKind::Malformed { what: "socket" })),
                    };
                    Record::Socket {
                        exchange: parse_exchange(Some(ex)).map_err(err)?,
                        reused,
                    }
                }
                "eof" => Record::Eof {
                    exchange: parse_exchange(Some(args)).map_err(err)?,
                },
                "transport-error" => {
                    let mut it = args.splitn(3, ' ');
                    let exchange = parse_exchange(it.next()).map_err(err)?;
                    let kind = it.next().and_then(kind_from_name).ok_or(err(
                        ParseErrorKind::Malformed {
                            what: "transport-error kind",
                        },
                    ))?;
                    let message = unescape(it.next().unwrap_or("")).map_err(err)?;
                    Record::TransportError {
                        exchange,
                        kind,
                        message: String::from_utf8_lossy(&message).into_owned(),
                    }
                }
                "timeout" => Record::Timeout,
                "event" => {
                    let v: Value =
                        serde_json::from_str(args).map_err(|_| err(ParseErrorKind::BadEvent))?;
                    Record::Event(v.to_string())
                }
                _ => return Err(err(ParseErrorKind::UnknownRecord(truncate(word)))),
            };
            entries.push(Entry { at, record });
        }
        if let Some(setup) = &mut cfg.http2 {
            setup.config = H2Config::from_budgets(&cfg.budgets);
            for (field, v) in h2_lines {
                (H2_FIELDS[field].2)(&mut setup.config, v);
            }
        } else if !h2_lines.is_empty() {
            return Err(ParseError {
                line: last_line,
                kind: ParseErrorKind::Malformed {
                    what: "h2 limits without `config http 2`",
                },
            });
        }
        cfg.url = url.ok_or(ParseError {
            line: last_line,
            kind: ParseErrorKind::NoUrl,
        })?;
        let t = Transcript {
            config: cfg,
            comments,
            entries,
        };
        t.config
            .to_config()
            .and_then(|c| {
                // The same checks as a connection, so a parsed transcript always replays.
                Connection::new(c).map(|_| ())
            })
            .map_err(|e| ParseError {
                line: last_line,
                kind: ParseErrorKind::Config(e),
            })?;
        Ok(t)
    }
}
