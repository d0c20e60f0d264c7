//! Redaction of authorization secrets for logs and transcripts: tokens, codes, client secrets,
//! PKCE verifiers and `state` values are replaced by `<redacted>` in form bodies, queries and
//! JSON documents, and in `Authorization` header values.
use crate::prelude::*;

use crate::auth::form::{decode, encode_into};

/// The text that replaces a secret.
pub const REDACTED: &str = "<redacted>";

/// Parameter and member names whose values are secrets.
pub const SECRET_NAMES: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "code",
    "code_verifier",
    "client_secret",
    "registration_access_token",
    "state",
    "assertion",
    "client_assertion",
    "subject_token",
    "actor_token",
    "password",
];

fn is_secret(name: &str) -> bool {
    SECRET_NAMES.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// A form body or query (with or without its leading `?`) with every secret value replaced. The
/// other pairs are kept byte for byte; the structure (order, `&`, `=`) is kept.
pub fn form(text: &str) -> String {
    let (prefix, rest) = match text.strip_prefix('?') {
        Some(r) => ("?", r),
        None => ("", text),
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(prefix);
    for (i, part) in rest.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match part.split_once('=') {
            Some((name, _)) if decode(name).is_ok_and(|n| is_secret(&n)) => {
                out.push_str(name);
                out.push('=');
                encode_into(&mut out, REDACTED);
            }
            _ => out.push_str(part),
        }
    }
    out
}

/// A URL with the secrets of its query redacted ([`form`]); the rest is kept.
pub fn url(text: &str) -> String {
    match text.split_once('?') {
        Some((base, query)) => format!("{base}?{}", form(query)),
        None => text.to_owned(),
    }
}

/// A JSON document with the value of every member named in [`SECRET_NAMES`] (at any depth)
/// replaced by the string `<redacted>`; `None` if it is not JSON.
pub fn json(body: &[u8]) -> Option<Vec<u8>> {
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    redact_value(&mut v, 0);
    serde_json::to_vec(&v).ok()
}

fn redact_value(v: &mut serde_json::Value, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        serde_json::Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if is_secret(k) {
                    *val = serde_json::Value::String(REDACTED.to_owned());
                } else {
                    redact_value(val, depth + 1);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                redact_value(item, depth + 1);
            }
        }
        _ => {}
    }
}

/// An `Authorization` header value with its credentials replaced: `Basic <redacted>`,
/// `Bearer <redacted>`, or `<redacted>` for anything else.
pub fn authorization(value: &str) -> String {
    match value.split_once(' ') {
        Some((scheme, _))
            if scheme.eq_ignore_ascii_case("basic") || scheme.eq_ignore_ascii_case("bearer") =>
        {
            format!("{scheme} {REDACTED}")
        }
        _ => REDACTED.to_owned(),
    }
}
