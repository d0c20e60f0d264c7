//! Reading an authorization transcript from its text.

use std::time::Duration;

use mcp_sansio::auth::{AuthLimits, ClientSettings};
use serde_json::Value;

use crate::escape::unescape;
use crate::parse::{kind_from_name, parse_at, truncate, ParseError, ParseErrorKind};

use super::*;

impl AuthTranscript {
    /// Reads the text form.
    pub fn parse(text: &str) -> Result<AuthTranscript, ParseError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, l)) if l.trim_end() == AUTH_MAGIC => {}
            _ => {
                return Err(ParseError {
                    line: 1,
                    kind: ParseErrorKind::NotATranscript,
                })
            }
        }
        let mut server = None;
        let mut client: Option<ClientSettings> = None;
        let mut allow_loopback_http = false;
        let mut limits = AuthLimits::default();
        let mut stored_credentials = false;
        let mut dpop = false;
        let mut comments = Vec::new();
        let mut entries: Vec<AuthEntry> = Vec::new();
        let mut block: Option<&'static str> = None;
        let mut last_line = 1;
        for (n, line) in lines {
            last_line = n;
            let err = |kind| ParseError { line: n, kind };
            let malformed = |what| err(ParseErrorKind::Malformed { what });
            if let Some(data) = line.strip_prefix("> ").or_else(|| line.strip_prefix("< ")) {
                if block != Some(&line[..2]) {
                    return Err(err(ParseErrorKind::StrayData));
                }
                let bytes = unescape(data).map_err(err)?;
                match entries.last_mut().map(|e| &mut e.record) {
                    Some(AuthRecord::Send { bytes: b, .. })
                    | Some(AuthRecord::Recv { bytes: b, .. }) => b.extend_from_slice(&bytes),
                    _ => return Err(err(ParseErrorKind::StrayData)),
                }
                continue;
            }
            block = None;
            if line.trim().is_empty() {
                continue;
            }
            if let Some(c) = line.strip_prefix('#') {
                comments.push(c.strip_prefix(' ').unwrap_or(c).to_owned());
                continue;
            }
            if let Some(rest) = line.strip_prefix("config ") {
                let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
                match key {
                    "server" => server = Some(value.to_owned()),
                    "client" => {
                        let raw = unescape(value).map_err(err)?;
                        client =
                            Some(serde_json::from_slice(&raw).map_err(|_| malformed("client"))?);
                    }
                    "loopback-http" => allow_loopback_http = true,
                    "limits" => {
                        let v: Vec<u64> = value
                            .split(' ')
                            .map(str::parse)
                            .collect::<Result<_, _>>()
                            .map_err(|_| malformed("limits"))?;
                        let [ex, time, cb, att] = v[..] else {
                            return Err(malformed("limits"));
                        };
                        limits = AuthLimits {
                            max_exchanges: u32::try_from(ex).map_err(|_| malformed("limits"))?,
                            time: Duration::from_millis(time),
                            callback_time: Duration::from_millis(cb),
                            max_attempts: u32::try_from(att).map_err(|_| malformed("limits"))?,
                        };
                    }
                    "stored-credentials" => stored_credentials = true,
                    "dpop" => dpop = true,
                    other => return Err(err(ParseErrorKind::UnknownRecord(truncate(other)))),
                }
                continue;
            }
            let (at, rest) = line.split_once(' ').unwrap_or((line, ""));
            let Some(at) = parse_at(at) else {
                return Err(err(ParseErrorKind::UnknownRecord(truncate(line))));
            };
            let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let id = |s: Option<&str>| {
                s.and_then(|s| s.parse::<u64>().ok())
                    .ok_or(malformed("request id"))
            };
            let record = match word {
                "challenge" => {
                    let (status, value) = args.split_once(' ').unwrap_or((args, "-"));
                    let status = status.parse().map_err(|_| malformed("challenge status"))?;
                    let www_authenticate = match value {
                        "-" => None,
                        v => Some(
                            serde_json::from_str::<String>(v)
                                .map_err(|_| malformed("challenge value"))?,
                        ),
                    };
                    AuthRecord::Challenge {
                        status,
                        www_authenticate,
                    }
                }
                "refresh" => AuthRecord::Refresh,
                "send" => {
                    block = Some("> ");
                    AuthRecord::Send {
                        id: id(Some(args))?,
                        bytes: Vec::new(),
                    }
                }
                "recv" => {
                    let mut it = args.split(' ');
                    let rid = id(it.next())?;
                    let status = it
                        .next()
                        .and_then(|s| s.parse().ok())
                        .ok_or(malformed("recv status"))?;
                    block = Some("< ");
                    AuthRecord::Recv {
                        id: rid,
                        status,
                        bytes: Vec::new(),
                    }
                }
                "transport-error" => {
                    let mut it = args.splitn(3, ' ');
                    let rid = id(it.next())?;
                    let kind = it
                        .next()
                        .and_then(kind_from_name)
                        .ok_or(malformed("transport-error kind"))?;
                    let message = unescape(it.next().unwrap_or("")).map_err(err)?;
                    AuthRecord::TransportError {
                        id: rid,
                        kind,
                        message: String::from_utf8_lossy(&message).into_owned(),
                    }
                }
                "callback" => AuthRecord::Callback(
                    String::from_utf8_lossy(&unescape(args).map_err(err)?).into_owned(),
                ),
                "user-agent-error" => AuthRecord::UserAgentError(
                    String::from_utf8_lossy(&unescape(args).map_err(err)?).into_owned(),
                ),
                "cancel" => AuthRecord::Cancel,
                "accepted" => AuthRecord::Accepted,
                "timeout" => AuthRecord::Timeout,
                "event" => {
                    let v: Value =
                        serde_json::from_str(args).map_err(|_| err(ParseErrorKind::BadEvent))?;
                    AuthRecord::Event(v.to_string())
                }
                _ => return Err(err(ParseErrorKind::UnknownRecord(truncate(word)))),
            };
            entries.push(AuthEntry { at, record });
        }
        let no = |kind| ParseError {
            line: last_line,
            kind,
        };
        let server_url = server.ok_or(no(ParseErrorKind::NoUrl))?;
        let client = client.ok_or(no(ParseErrorKind::Malformed { what: "no client" }))?;
        Ok(AuthTranscript {
            config: AuthTranscriptConfig {
                server_url,
                client,
                allow_loopback_http,
                limits,
                stored_credentials,
                dpop,
            },
            comments,
            entries,
        })
    }
}
