//! The redaction policy: which values are secrets, and how they are hidden in logs and
//! transcripts. It is the one policy of the workspace: the authorization's own
//! [`AuthExchange::redacted_text`](crate::auth::AuthExchange::redacted_text) and the transcripts
//! (of MCP sessions and of authorizations) apply these functions and nothing else.
//!
//! What is a secret:
//!
//! - A parameter of a query, a fragment or a form body ([`is_secret_param`]) whose name,
//!   percent-decoded and compared without regard to ASCII case, is one of [`SECRET_NAMES`]
//!   (tokens, codes, verifiers, client secrets, `state`…) or [`DERIVED_NAMES`] (values derived
//!   from a secret), or contains one of [`SECRET_MARKERS`] (`api_key`, `X-Amz-Signature`,
//!   `session_id`…: an MCP server's URL names its parameters as it likes) and is not one of the
//!   public OAuth names [`PUBLIC_NAMES`]. A harmless parameter that happens to match
//!   (`country_code`) loses its value, never the reverse.
//! - A member of a JSON document, at any depth, named in [`SECRET_NAMES`] or [`DERIVED_NAMES`]
//!   ([`is_secret_name`]). Markers do not apply there: the members of the documents exchanged
//!   (`token_endpoint`, `authorization_servers`…) name public values.
//! - The credentials of an `Authorization` (or `Proxy-Authorization`) header value
//!   ([`authorization`]; the scheme `Basic`, `Bearer` or `DPoP` is kept), the values of `Cookie`, `DPoP` and
//!   `Set-Cookie`, and the query of a `Location` or `Content-Location` ([`header`]).
//! - A body that is neither a form nor JSON: only its length is shown ([`body`]).
//!
//! A secret value becomes [`REDACTED`], written as is (not percent-encoded), so that a
//! recording shows where a secret was; every other byte is kept.
use crate::prelude::*;

use crate::auth::form::decode;

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

/// Names whose values are derived from a secret (and differ between a recording and its
/// replay): redacted as the secrets are.
pub const DERIVED_NAMES: &[&str] = &["code_challenge", "nonce"];

/// Parts of a parameter's name that mark its value as a secret, compared without regard to
/// ASCII case.
pub const SECRET_MARKERS: &[&str] = &[
    "token",
    "key",
    "secret",
    "pass",
    "auth",
    "sig",
    "credential",
    "code",
    "session",
];

/// OAuth parameter names that contain a marker but name public values.
pub const PUBLIC_NAMES: &[&str] = &["code_challenge_method", "token_type", "token_type_hint"];

fn listed(list: &[&str], name: &[u8]) -> bool {
    list.iter().any(|s| s.as_bytes().eq_ignore_ascii_case(name))
}

/// Whether a JSON member (or a parameter) of this name holds a secret: one of [`SECRET_NAMES`]
/// or [`DERIVED_NAMES`], ASCII case ignored.
pub fn is_secret_name(name: &str) -> bool {
    listed(SECRET_NAMES, name.as_bytes()) || listed(DERIVED_NAMES, name.as_bytes())
}

/// Whether a query, fragment or form parameter of this (raw) name holds a secret: its name,
/// percent-decoded when it decodes, is a secret name ([`is_secret_name`]) or contains one of
/// [`SECRET_MARKERS`] without being one of [`PUBLIC_NAMES`].
pub fn is_secret_param(name: &[u8]) -> bool {
    let decoded = core::str::from_utf8(name).ok().and_then(|n| decode(n).ok());
    let name = decoded.as_deref().map_or(name, str::as_bytes);
    if listed(SECRET_NAMES, name) || listed(DERIVED_NAMES, name) {
        return true;
    }
    !listed(PUBLIC_NAMES, name)
        && SECRET_MARKERS.iter().any(|m| {
            name.windows(m.len())
                .any(|w| w.eq_ignore_ascii_case(m.as_bytes()))
        })
}

/// A query, fragment or form body (with or without a leading `?`) as bytes, with the value of
/// every secret parameter ([`is_secret_param`]) replaced by [`REDACTED`]. Parameters are
/// separated by `&`; one without `=` has no value and is kept, as is every other byte.
pub fn query(text: &[u8]) -> Vec<u8> {
    let (prefix, rest) = match text.strip_prefix(b"?") {
        Some(r) => (&b"?"[..], r),
        None => (&b""[..], text),
    };
    let mut out = Vec::with_capacity(text.len());
    out.extend_from_slice(prefix);
    for (i, param) in rest.split(|b| *b == b'&').enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        match param.iter().position(|b| *b == b'=') {
            Some(eq) if is_secret_param(&param[..eq]) => {
                out.extend_from_slice(&param[..=eq]);
                out.extend_from_slice(REDACTED.as_bytes());
            }
            _ => out.extend_from_slice(param),
        }
    }
    out
}

/// [`query`] of a text: a form body or query, with or without its leading `?`.
pub fn form(text: &str) -> String {
    // Split at ASCII bytes only and given ASCII: still UTF-8.
    String::from_utf8_lossy(&query(text.as_bytes())).into_owned()
}

/// A URL (or request target) with its query and its fragment redacted as parameters
/// ([`form`]): callback and `Location` URLs carry `code` and `state` there, MCP server URLs
/// their keys. Everything before the `?` is kept.
pub fn url(text: &str) -> String {
    let (before_fragment, fragment) = match text.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (text, None),
    };
    let mut out = match before_fragment.split_once('?') {
        Some((base, q)) => format!("{base}?{}", form(q)),
        None => before_fragment.to_owned(),
    };
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&form(f));
    }
    out
}

/// How deep [`json`] walks a document: a value nested deeper (an array or object inside
/// `MAX_JSON_DEPTH` others) is replaced whole by `<redacted>`, so no secret below it is shown.
pub const MAX_JSON_DEPTH: usize = 64;

/// A JSON document with the value of every member named a secret ([`is_secret_name`], at any
/// depth) replaced by the string `<redacted>`, written compactly; `None` if it is not JSON. A
/// value nested deeper than [`MAX_JSON_DEPTH`] is `<redacted>` whole.
pub fn json(body: &[u8]) -> Option<Vec<u8>> {
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    redact_value(&mut v, 0);
    serde_json::to_vec(&v).ok()
}

fn redact_value(v: &mut serde_json::Value, depth: usize) {
    if depth > MAX_JSON_DEPTH {
        // Not walked any deeper: whatever it holds is hidden, not shown.
        *v = serde_json::Value::String(REDACTED.to_owned());
        return;
    }
    match v {
        serde_json::Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if is_secret_name(k) {
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
/// `Bearer <redacted>`, `DPoP <redacted>` (the scheme as written), or `<redacted>` for anything else.
pub fn authorization(value: &str) -> String {
    match value.split_once(' ') {
        Some((scheme, _))
            if scheme.eq_ignore_ascii_case("basic")
                || scheme.eq_ignore_ascii_case("bearer")
                || scheme.eq_ignore_ascii_case("dpop") =>
        {
            format!("{scheme} {REDACTED}")
        }
        _ => REDACTED.to_owned(),
    }
}

/// [`authorization`] of a header value as bytes; one that is not UTF-8 is `<redacted>` whole.
pub fn authorization_bytes(value: &[u8]) -> Vec<u8> {
    match core::str::from_utf8(value) {
        Ok(text) => authorization(text).into_bytes(),
        Err(_) => REDACTED.as_bytes().to_vec(),
    }
}

/// A header value redacted by its name: `Authorization` and `Proxy-Authorization` keep only
/// their scheme ([`authorization`]), `Location` and `Content-Location` are redacted as URLs
/// ([`url`]), `Cookie`, `Set-Cookie` and `DPoP` (a proof, bound to a token and fresh each
/// time) become `<redacted>`; other values are kept.
pub fn header(name: &str, value: &[u8]) -> Vec<u8> {
    let text = || String::from_utf8_lossy(value).into_owned();
    if name.eq_ignore_ascii_case("authorization")
        || name.eq_ignore_ascii_case("proxy-authorization")
    {
        authorization_bytes(value)
    } else if name.eq_ignore_ascii_case("location") || name.eq_ignore_ascii_case("content-location")
    {
        url(&text()).into_bytes()
    } else if name.eq_ignore_ascii_case("cookie")
        || name.eq_ignore_ascii_case("set-cookie")
        || name.eq_ignore_ascii_case("dpop")
    {
        REDACTED.as_bytes().to_vec()
    } else {
        value.to_vec()
    }
}

/// Header fields as a `Debug` output shows them: each value redacted by its name ([`header`]),
/// as lossy UTF-8. What every hand-written `Debug` of a type holding header fields prints.
pub fn debug_headers<V: AsRef<[u8]>>(headers: &[(String, V)]) -> Vec<(&str, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            let value = header(n, v.as_ref());
            (n.as_str(), String::from_utf8_lossy(&value).into_owned())
        })
        .collect()
}

/// A secret string as a `Debug` output shows it: `""` when empty (nothing is held),
/// [`REDACTED`] otherwise.
pub fn debug_secret(value: &str) -> &'static str {
    if value.is_empty() {
        ""
    } else {
        REDACTED
    }
}

/// A request or response body redacted by its content type: a form body
/// (`application/x-www-form-urlencoded`) as a form ([`form`]), anything else that parses as
/// JSON as JSON ([`json`]); another non-empty body is shown as `<N bytes>`, never verbatim,
/// since it cannot be redacted field by field (a token answer with `1e400` in some field is
/// not JSON that can be rewritten).
pub fn body(content_type: Option<&str>, body: &[u8]) -> Vec<u8> {
    let is_form = content_type.is_some_and(|c| {
        c.trim_start()
            .get(..33)
            .is_some_and(|p| p.eq_ignore_ascii_case("application/x-www-form-urlencoded"))
    });
    if is_form {
        if let Ok(text) = core::str::from_utf8(body) {
            return form(text).into_bytes();
        }
    }
    if body.is_empty() {
        return Vec::new();
    }
    json(body).unwrap_or_else(|| format!("<{} bytes>", body.len()).into_bytes())
}
