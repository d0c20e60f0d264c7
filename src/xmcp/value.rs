//! The header values of a call: the arguments named by the [`HeaderParam`]s read from a call's
//! arguments, type-checked, and encoded with the SEP-2243 header value encoding.
use crate::prelude::*;

use base64::Engine as _;
use serde_json::Value;

use super::{HeaderParam, ParamKind, MAX_SAFE_INTEGER, PREFIX};

/// The SEP-2243 header value encoding (also used for Mcp-Name).
///
/// The value is sent as-is if it is non-empty, every byte is visible ASCII (0x21–0x7E) or space,
/// it neither starts nor ends with a space, and it does not look like the encoded form
/// (`=?base64?...?=`). Otherwise it is sent as `=?base64?<base64 of its UTF-8>?=`. A tab is a
/// control character: the specification asks for the encoded form for a value that "contains
/// non-ASCII characters, control characters, or has leading/trailing whitespace", so a value
/// with a tab anywhere is encoded although a header field could carry it.
pub fn encode_header_value(value: &str) -> String {
    let bytes = value.as_bytes();
    let allowed = bytes
        .iter()
        .all(|&b| (0x21..=0x7E).contains(&b) || b == b' ');
    let padded = bytes.first() == Some(&b' ') || bytes.last() == Some(&b' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = !bytes.is_empty() && allowed && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }
}

/// The `(header name, value)` pairs to send for a call: header name is `Mcp-Param-<name>`; value
/// encoded as above. Err(reason) if an argument has the wrong type / integer out of range /
/// arguments is not a JSON object.
///
/// An argument that is absent or `null` (or under an absent or `null` parent object) sends no
/// header.
pub fn header_values(
    params: &[HeaderParam],
    arguments: &[u8],
) -> Result<Vec<(String, String)>, String> {
    if params.is_empty() {
        return Ok(Vec::new());
    }
    let args: Value =
        serde_json::from_slice(arguments).map_err(|e| format!("arguments are not JSON: {e}"))?;
    if !args.is_object() {
        return Err("arguments are not a JSON object".to_owned());
    }
    let mut out = Vec::new();
    'params: for param in params {
        let at = param.path.join(".");
        let mut current = &args;
        for key in &param.path {
            current = match current {
                Value::Object(map) => match map.get(key) {
                    Some(v) => v,
                    None => continue 'params,
                },
                Value::Null => continue 'params,
                _ => return Err(format!("argument {at:?}: a parent is not an object")),
            };
        }
        let text = match (param.kind, current) {
            (_, Value::Null) => continue,
            (ParamKind::String, Value::String(s)) => s.clone(),
            (ParamKind::Boolean, Value::Bool(b)) => b.to_string(),
            (ParamKind::Integer, Value::Number(n)) => integer(n)
                .ok_or_else(|| format!("argument {at:?}: {n} is not an integer within ±(2^53−1)"))?
                .to_string(),
            (kind, other) => {
                return Err(format!(
                    "argument {at:?}: {} is not a {kind:?}",
                    type_name(other)
                ))
            }
        };
        out.push((
            format!("{PREFIX}{}", param.name),
            encode_header_value(&text),
        ));
    }
    Ok(out)
}

/// `n` as an integer within ±(2^53 − 1), if it is one (`3.0` counts as `3`).
fn integer(n: &serde_json::Number) -> Option<i64> {
    let v = if let Some(v) = n.as_i64() {
        v
    } else if n.is_u64() {
        return None;
    } else {
        let f = n.as_f64()?;
        let bound = MAX_SAFE_INTEGER as f64;
        // Integral test without `f64::fract` (a `std` method): within ±2^53 the cast to `i64`
        // truncates exactly, so it round-trips only for integers.
        if !(-bound..=bound).contains(&f) || f as i64 as f64 != f {
            return None;
        }
        // Exact: `f` is integral and within ±2^53.
        f as i64
    };
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER)
        .contains(&v)
        .then_some(v)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
