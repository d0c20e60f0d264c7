//! Writing an authorization transcript as text.

use std::fmt::Write as _;

use serde_json::Value;

use crate::escape::{escape, write_block};
use crate::write::{format_at, kind_name};

use super::*;

impl AuthTranscript {
    pub(super) fn write_header(&self, out: &mut String) {
        out.push_str(AUTH_MAGIC);
        out.push('\n');
        for c in &self.comments {
            let _ = writeln!(out, "# {c}");
        }
        let c = &self.config;
        let _ = writeln!(out, "config server {}", c.server_url);
        let client = serde_json::to_string(&c.client).unwrap_or_default();
        let _ = writeln!(out, "config client {}", escape(client.as_bytes()));
        if c.allow_loopback_http {
            out.push_str("config loopback-http\n");
        }
        let _ = writeln!(
            out,
            "config limits {} {} {} {}",
            c.limits.max_exchanges,
            c.limits.time.as_millis(),
            c.limits.callback_time.as_millis(),
            c.limits.max_attempts
        );
        if c.stored_credentials {
            out.push_str("config stored-credentials <redacted>\n");
        }
        if c.dpop {
            out.push_str("config dpop <redacted>\n");
        }
    }

    /// The text form (see `docs/transcripts.md`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_header(&mut out);
        for e in &self.entries {
            write_auth_entry(&mut out, e);
        }
        out
    }
}

pub(super) fn write_auth_entry(out: &mut String, e: &AuthEntry) {
    let at = format_at(e.at);
    match &e.record {
        AuthRecord::Challenge {
            status,
            www_authenticate,
        } => {
            let v = match www_authenticate {
                Some(v) => Value::String(v.clone()).to_string(),
                None => "-".to_owned(),
            };
            let _ = writeln!(out, "{at} challenge {status} {v}");
        }
        AuthRecord::Refresh => {
            let _ = writeln!(out, "{at} refresh");
        }
        AuthRecord::Send { id, bytes } => {
            let _ = writeln!(out, "{at} send {id}");
            write_block(out, "> ", bytes);
        }
        AuthRecord::Recv { id, status, bytes } => {
            let _ = writeln!(out, "{at} recv {id} {status}");
            write_block(out, "< ", bytes);
        }
        AuthRecord::TransportError { id, kind, message } => {
            let _ = writeln!(
                out,
                "{at} transport-error {id} {} {}",
                kind_name(*kind),
                escape(message.as_bytes())
            );
        }
        AuthRecord::Callback(q) => {
            let _ = writeln!(out, "{at} callback {}", escape(q.as_bytes()));
        }
        AuthRecord::UserAgentError(m) => {
            let _ = writeln!(out, "{at} user-agent-error {}", escape(m.as_bytes()));
        }
        AuthRecord::Cancel => {
            let _ = writeln!(out, "{at} cancel");
        }
        AuthRecord::Accepted => {
            let _ = writeln!(out, "{at} accepted");
        }
        AuthRecord::Timeout => {
            let _ = writeln!(out, "{at} timeout");
        }
        AuthRecord::Event(s) => {
            let _ = writeln!(out, "{at} event {s}");
        }
    }
}
