//! Trace context carried in every request's `params._meta`: W3C Trace Context's `traceparent`
//! and `tracestate`, and W3C Baggage's `baggage`.
//!
//! MCP 2026-07-28 (SEP-414, `basic/index.mdx`) reserves the `_meta` keys `traceparent`,
//! `tracestate` and `baggage` for OpenTelemetry propagation, and their values MUST follow W3C
//! Trace Context and W3C Baggage. OpenTelemetry's conventions for MCP say the same for earlier
//! revisions: "Instrumentations SHOULD propagate trace context inside MCP request
//! `params._meta` property bag". A [`TraceContext`] can only be built from valid values
//! ([`TraceContext::new`] checks them all), so the connection never sends a malformed one.
//!
//! The checks (no allocation beyond the kept strings, no panic, linear in the input):
//!
//! - `traceparent`, version `00`: `00-` 32 lowercase hex digits (the trace id, not all zero)
//!   `-` 16 lowercase hex digits (the parent id, not all zero) `-` 2 lowercase hex digits (the
//!   flags); exactly 55 characters. Other versions are refused: this client writes version
//!   `00`, whose format is exact.
//! - `tracestate`: at most [`MAX_TRACESTATE_MEMBERS`] list members of `key=value`, separated by
//!   commas with optional spaces or tabs, no key twice, at most [`MAX_TRACESTATE_LEN`]
//!   characters; a key is `simple-key` or `tenant-id@system-id` and a value up to 256 printable
//!   ASCII characters other than `,` and `=`, not ending in a space.
//! - `baggage`: at most [`MAX_BAGGAGE_MEMBERS`] list members of `key=value` with optional
//!   `;property` parts, at most [`MAX_BAGGAGE_LEN`] bytes; a key is an HTTP token and a value
//!   baggage octets (printable ASCII other than `"`, `,`, `;`, `\`; other bytes are
//!   percent-encoded).
use crate::prelude::*;

/// The most list members a `tracestate` may have (W3C Trace Context §3.3.1: "There can be a
/// maximum of 32 list-members in a list").
pub const MAX_TRACESTATE_MEMBERS: usize = 32;
/// The longest `tracestate` this client sends, in characters (W3C Trace Context §3.3.1.5:
/// "Vendors SHOULD propagate at least 512 characters of a combined header").
pub const MAX_TRACESTATE_LEN: usize = 512;
/// The most list members a `baggage` may have (W3C Baggage §3.3.1: "a maximum of 64
/// list-members").
pub const MAX_BAGGAGE_MEMBERS: usize = 64;
/// The longest `baggage` this client sends, in bytes (W3C Baggage §3.3.1: "a maximum of 8192
/// bytes").
pub const MAX_BAGGAGE_LEN: usize = 8192;

/// Why a trace context value was refused. The value itself is never printed (baggage may carry
/// what its owner would not log).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceContextError {
    /// `traceparent` is not a version-00 `traceparent`.
    #[error("malformed traceparent: {reason}")]
    Traceparent {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `tracestate` breaks the W3C grammar or a bound.
    #[error("malformed tracestate: {reason}")]
    Tracestate {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `baggage` breaks the W3C grammar or a bound.
    #[error("malformed baggage: {reason}")]
    Baggage {
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// A validated trace context: the parent of every request a connection sends while it is set.
///
/// Written into every request's `params._meta` as `traceparent`, and `tracestate` and `baggage`
/// when present ([`Config::trace_context`](crate::Config::trace_context),
/// [`Connection::set_trace_context`](crate::Connection::set_trace_context)).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
    baggage: Option<String>,
}

/// The `traceparent` and whether the others are present: `tracestate` and `baggage` may carry
/// an embedder's data and are never printed.
impl core::fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent)
            .field("tracestate", &self.tracestate.is_some())
            .field("baggage", &self.baggage.is_some())
            .finish()
    }
}

impl TraceContext {
    /// A trace context from its W3C values, each checked (see the [module](self) docs). An
    /// empty `tracestate` or `baggage` counts as absent.
    pub fn new(
        traceparent: &str,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Result<TraceContext, TraceContextError> {
        check_traceparent(traceparent)?;
        let tracestate = tracestate.filter(|s| !s.is_empty());
        let baggage = baggage.filter(|s| !s.is_empty());
        if let Some(s) = tracestate {
            check_tracestate(s)?;
        }
        if let Some(b) = baggage {
            check_baggage(b)?;
        }
        Ok(TraceContext {
            traceparent: traceparent.to_owned(),
            tracestate: tracestate.map(str::to_owned),
            baggage: baggage.map(str::to_owned),
        })
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The trace id: the 32 hex digits of the `traceparent`.
    pub fn trace_id(&self) -> &str {
        self.traceparent.get(3..35).unwrap_or("")
    }

    /// The parent id: the 16 hex digits of the `traceparent`.
    pub fn parent_id(&self) -> &str {
        self.traceparent.get(36..52).unwrap_or("")
    }

    /// The `tracestate` value, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `baggage` value, if any.
    pub fn baggage(&self) -> Option<&str> {
        self.baggage.as_deref()
    }
}

fn lower_hex(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks a version-00 `traceparent`.
pub fn check_traceparent(s: &str) -> Result<(), TraceContextError> {
    let bad = |reason| Err(TraceContextError::Traceparent { reason });
    let b = s.as_bytes();
    if b.len() != 55 {
        return bad("not 55 characters long");
    }
    if &b[0..3] != b"00-" {
        return bad("not version 00");
    }
    if b[35] != b'-' || b[52] != b'-' {
        return bad("fields not separated by '-'");
    }
    let (trace_id, parent_id, flags) = (&b[3..35], &b[36..52], &b[53..55]);
    if !lower_hex(trace_id) || !lower_hex(parent_id) || !lower_hex(flags) {
        return bad("a field that is not lowercase hex");
    }
    if trace_id.iter().all(|&c| c == b'0') {
        return bad("an all-zero trace id");
    }
    if parent_id.iter().all(|&c| c == b'0') {
        return bad("an all-zero parent id");
    }
    Ok(())
}

/// `OWS` of RFC 7230: spaces and horizontal tabs.
fn trim_ows(s: &str) -> &str {
    s.trim_matches(|c| c == ' ' || c == '\t')
}

fn key_char(c: u8) -> bool {
    matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'*' | b'/')
}

/// `simple-key = lcalpha 0*255( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )`;
/// `multi-tenant-key = tenant-id "@" system-id` with
/// `tenant-id = ( lcalpha / DIGIT ) 0*240( … )` and `system-id = lcalpha 0*13( … )`.
fn tracestate_key(k: &[u8]) -> bool {
    match k.iter().position(|&c| c == b'@') {
        None => {
            k.len() <= 256
                && k.first().is_some_and(u8::is_ascii_lowercase)
                && k.iter().all(|&c| key_char(c))
        }
        Some(at) => {
            let (tenant, system) = (&k[..at], &k[at + 1..]);
            (1..=241).contains(&tenant.len())
                && tenant
                    .first()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && tenant.iter().all(|&c| key_char(c))
                && (1..=14).contains(&system.len())
                && system.first().is_some_and(u8::is_ascii_lowercase)
                && system.iter().all(|&c| key_char(c))
        }
    }
}

/// `value = 0*255(chr) nblk-chr`, `nblk-chr = %x21-2B / %x2D-3C / %x3E-7E`, `chr = %x20 /
/// nblk-chr`.
fn tracestate_value(v: &[u8]) -> bool {
    let nblk = |c: u8| matches!(c, 0x21..=0x2b | 0x2d..=0x3c | 0x3e..=0x7e);
    (1..=256).contains(&v.len())
        && v.last().is_some_and(|&c| nblk(c))
        && v.iter().all(|&c| c == b' ' || nblk(c))
}

/// Checks a `tracestate` (W3C Trace Context §3.3). Empty list members are allowed, as the
/// grammar allows them, and do not count.
pub fn check_tracestate(s: &str) -> Result<(), TraceContextError> {
    let bad = |reason| Err(TraceContextError::Tracestate { reason });
    if s.len() > MAX_TRACESTATE_LEN {
        return bad("longer than 512 characters");
    }
    let mut keys: Vec<&str> = Vec::new();
    for member in s.split(',') {
        let member = trim_ows(member);
        if member.is_empty() {
            continue;
        }
        let Some((k, v)) = member.split_once('=') else {
            return bad("a list member without '='");
        };
        if !tracestate_key(k.as_bytes()) {
            return bad("an invalid key");
        }
        if !tracestate_value(v.as_bytes()) {
            return bad("an invalid value");
        }
        if keys.contains(&k) {
            return bad("a key repeated");
        }
        if keys.len() == MAX_TRACESTATE_MEMBERS {
            return bad("more than 32 list members");
        }
        keys.push(k);
    }
    Ok(())
}

/// An HTTP `token` of at least one character (the HTTP/1.1 codec's own check).
use crate::http1::request::is_token as token;

/// `baggage-octet = %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E`.
fn baggage_value(s: &str) -> bool {
    s.bytes()
        .all(|c| matches!(c, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e))
}

/// Checks a `baggage` (W3C Baggage §3.3): `list-member *( OWS "," OWS list-member )` with
/// `list-member = key OWS "=" OWS value *( OWS ";" OWS property )` and `property = key OWS "="
/// OWS value / key OWS`.
pub fn check_baggage(s: &str) -> Result<(), TraceContextError> {
    let bad = |reason| Err(TraceContextError::Baggage { reason });
    if s.len() > MAX_BAGGAGE_LEN {
        return bad("longer than 8192 bytes");
    }
    for (n, member) in s.split(',').enumerate() {
        if n == MAX_BAGGAGE_MEMBERS {
            return bad("more than 64 list members");
        }
        let mut parts = member.split(';');
        let first = parts.next().unwrap_or("");
        let Some((k, v)) = first.split_once('=') else {
            return bad("a list member without '='");
        };
        if !token(trim_ows(k)) || !baggage_value(trim_ows(v)) {
            return bad("an invalid list member");
        }
        for property in parts {
            let ok = match property.split_once('=') {
                Some((k, v)) => token(trim_ows(k)) && baggage_value(trim_ows(v)),
                None => token(trim_ows(property)),
            };
            if !ok {
                return bad("an invalid property");
            }
        }
    }
    Ok(())
}

/// Writes the members of `trace` into a `_meta` object: the one place requests get them.
/// Returns where the value of `traceparent` is in the buffer written into, if it was written.
pub(crate) fn write_meta(
    trace: Option<&TraceContext>,
    m: &mut crate::jsonrpc::ObjectWriter<'_>,
) -> Option<usize> {
    let t = trace?;
    let at = m.string_at("traceparent", &t.traceparent);
    if let Some(s) = &t.tracestate {
        m.string("tracestate", s);
    }
    if let Some(b) = &t.baggage {
        m.string("baggage", b);
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of W3C Trace Context §3.2.2.1 and OpenTelemetry's MCP page:
    /// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_w3c_example_is_accepted_and_split_into_its_ids() {
        let t = TraceContext::new(
            EXAMPLE,
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
            Some("userId=alice,serverNode=DF%2028,isProduction=false"),
        )
        .unwrap();
        assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_id(), "00f067aa0ba902b7");
        assert_eq!(
            t.tracestate(),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        );
    }

    /// W3C Trace Context §3.2.2: "`trace-id` … All bytes as zero
    /// (`00000000000000000000000000000000`) is considered an invalid value"; the same for
    /// `parent-id`; "`HEXDIGLC = DIGIT / "a" / "b" / "c" / "d" / "e" / "f"` ; lowercase hex
    /// character"; version `ff` is invalid.
    #[test]
    fn malformed_traceparents_are_refused() {
        for bad in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
        ] {
            assert!(
                matches!(
                    TraceContext::new(bad, None, None),
                    Err(TraceContextError::Traceparent { .. })
                ),
                "{bad:?}"
            );
        }
    }

    /// W3C Trace Context §3.3.1: "There can be a maximum of 32 list-members"; keys start with a
    /// lowercase letter (`simple-key = lcalpha …`), a multi-tenant key is `tenant@system`;
    /// values exclude `,` and `=`; "the same key MUST NOT appear more than once" … ("Only one
    /// entry per key is allowed").
    #[test]
    fn tracestate_grammar_and_bounds() {
        for good in [
            "a=1",
            "a=1 , b=2",
            "t61@dd=x",
            "1tenant@sys=v",
            "a=1,,b=2",
            " ",
            "k=a b",
        ] {
            assert_eq!(check_tracestate(good), Ok(()), "{good:?}");
        }
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert_eq!(check_tracestate(&many[..32].join(",")), Ok(()));
        for bad in [
            "A=1".to_owned(),
            "a".to_owned(),
            "a=".to_owned(),
            "a=b=c".to_owned(),
            "a=1,a=2".to_owned(),
            "a=x ".to_owned() + "\u{e9}",
            "a=1\u{7f}".to_owned(),
            "a@B=1".to_owned(),
            "@sys=1".to_owned(),
            many.join(","),
            format!("a={}", "x".repeat(257)),
            format!("a=1,{}", "b".repeat(520)),
        ] {
            assert!(check_tracestate(&bad).is_err(), "{bad:?}");
        }
    }

    /// W3C Baggage §3.3.1: `key = token`, `value = *baggage-octet` (no `"`, `,`, `;`, `\`,
    /// space or control character), "a maximum of 64 list-members" and "a maximum of 8192
    /// bytes".
    #[test]
    fn baggage_grammar_and_bounds() {
        for good in [
            "userId=alice,serverNode=DF%2028,isProduction=false",
            "k = v ; p ; q=1",
            "k=",
        ] {
            assert_eq!(check_baggage(good), Ok(()), "{good:?}");
        }
        let many: Vec<String> = (0..65).map(|i| format!("k{i}=v")).collect();
        assert_eq!(check_baggage(&many[..64].join(",")), Ok(()));
        for bad in [
            "k".to_owned(),
            "=v".to_owned(),
            "k=a b".to_owned(),
            "k=\"v\"".to_owned(),
            "k=v\\".to_owned(),
            "k(=v".to_owned(),
            "k=v;=p".to_owned(),
            "k=v,".to_owned(),
            many.join(","),
            format!("k={}", "v".repeat(8200)),
        ] {
            assert!(check_baggage(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn errors_never_print_the_value() {
        let e = TraceContext::new(EXAMPLE, None, Some("secret=s3cr3t value")).unwrap_err();
        assert!(!e.to_string().contains("s3cr3t"), "{e}");
        assert_eq!(e.to_string(), "malformed baggage: an invalid list member");
    }
}
