//! SEP-2243 `x-mcp-header` annotations: schema validation, argument extraction, value encoding.

use mcp_sansio::header_params;
use mcp_sansio::internals::{encode_header_value, header_values};
use mcp_sansio::{HeaderParam, ParamKind};

fn param(path: &[&str], name: &str, kind: ParamKind) -> HeaderParam {
    HeaderParam {
        path: path.iter().map(|s| (*s).to_owned()).collect(),
        name: name.to_owned(),
        kind,
    }
}

fn refused(schema: &str) -> String {
    match header_params(schema) {
        Ok(params) => panic!("accepted {schema}: {params:?}"),
        Err(reason) => reason.to_string(),
    }
}

#[test]
fn valid_nested_annotations() {
    let schema = r#"{
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "x-mcp-header": "Count"},
                    "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}
                }
            }
        }
    }"#;
    let mut params = header_params(schema).unwrap();
    params.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        params,
        vec![
            param(&["opts", "count"], "Count", ParamKind::Integer),
            param(&["opts", "dry"], "Dry-Run", ParamKind::Boolean),
            param(&["region"], "Region", ParamKind::String),
        ]
    );
}

#[test]
fn no_annotations_is_empty() {
    let schema =
        r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"items":{"type":"number"}}}}"#;
    assert_eq!(header_params(schema).unwrap(), vec![]);
}

#[test]
fn non_token_value_refused() {
    for bad in [
        "Re gion",
        "Region:",
        "Reg\\r\\nX: y",
        "Région",
        "a\\u0000b",
        "(x)",
    ] {
        let schema =
            format!(r#"{{"properties":{{"a":{{"type":"string","x-mcp-header":"{bad}"}}}}}}"#);
        let reason = refused(&schema);
        assert!(reason.contains("token"), "{bad}: {reason}");
    }
    // Every tchar is accepted.
    let ok = r#"{"properties":{"a":{"type":"string","x-mcp-header":"aZ09!#$%&'*+-.^_`|~"}}}"#;
    assert_eq!(header_params(ok).unwrap().len(), 1);
}

#[test]
fn empty_value_refused() {
    let reason = refused(r#"{"properties":{"a":{"type":"string","x-mcp-header":""}}}"#);
    assert!(reason.contains("empty"), "{reason}");
}

#[test]
fn non_string_value_refused() {
    for bad in ["1", "true", "null", r#"["A"]"#, r#"{"n":"A"}"#] {
        let schema =
            format!(r#"{{"properties":{{"a":{{"type":"string","x-mcp-header":{bad}}}}}}}"#);
        let reason = refused(&schema);
        assert!(reason.contains("not a string"), "{bad}: {reason}");
    }
}

#[test]
fn duplicate_case_insensitive_refused() {
    let reason = refused(
        r#"{"properties":{
            "a":{"type":"string","x-mcp-header":"Region"},
            "b":{"type":"object","properties":{"c":{"type":"integer","x-mcp-header":"REGION"}}}
        }}"#,
    );
    assert!(reason.contains("duplicates"), "{reason}");
}

#[test]
fn wrong_types_refused() {
    for ty in [
        r#""number""#,
        r#""object""#,
        r#""array""#,
        r#"["string","null"]"#,
        "null",
    ] {
        let schema = format!(r#"{{"properties":{{"a":{{"type":{ty},"x-mcp-header":"A"}}}}}}"#);
        let reason = refused(&schema);
        assert!(reason.contains("has type"), "{ty}: {reason}");
    }
}

#[test]
fn missing_type_refused() {
    let reason = refused(r#"{"properties":{"a":{"x-mcp-header":"A"}}}"#);
    assert!(reason.contains("no type"), "{reason}");
}

fn assert_unreachable(schema: &str) {
    let reason = refused(schema);
    assert!(
        reason.contains("only through `properties`"),
        "{schema}: {reason}"
    );
}

#[test]
fn under_items_refused() {
    assert_unreachable(
        r#"{"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}"#,
    );
    assert_unreachable(
        r#"{"properties":{"a":{"type":"array","items":{"properties":{"b":{"type":"string","x-mcp-header":"A"}}}}}}"#,
    );
}

#[test]
fn under_any_of_refused() {
    assert_unreachable(r#"{"anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#);
    assert_unreachable(r#"{"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}"#);
}

#[test]
fn under_defs_and_other_keywords_refused() {
    assert_unreachable(
        r##"{"properties":{"a":{"$ref":"#/$defs/r"}},"$defs":{"r":{"type":"string","x-mcp-header":"A"}}}"##,
    );
    for kw in ["not", "if", "then", "else", "additionalProperties"] {
        assert_unreachable(&format!(
            r#"{{"properties":{{"a":{{"{kw}":{{"type":"string","x-mcp-header":"A"}}}}}}}}"#
        ));
    }
    assert_unreachable(r#"{"oneOf":[{"type":"string","x-mcp-header":"A"}]}"#);
    assert_unreachable(r#"{"allOf":[{"type":"string","x-mcp-header":"A"}]}"#);
    assert_unreachable(r#"{"patternProperties":{"^a":{"type":"string","x-mcp-header":"A"}}}"#);
}

#[test]
fn root_annotation_refused() {
    let reason = refused(r#"{"type":"string","x-mcp-header":"A"}"#);
    assert!(reason.contains("root"), "{reason}");
}

#[test]
fn deep_nesting_refused() {
    let mut schema = String::from(r#"{"type":"string"}"#);
    for _ in 0..40 {
        schema = format!(r#"{{"properties":{{"a":{schema}}}}}"#);
    }
    let reason = refused(&schema);
    assert!(reason.contains("deeper"), "{reason}");
    // Deep but within the bound is fine.
    let mut schema = String::from(r#"{"type":"string","x-mcp-header":"A"}"#);
    for _ in 0..20 {
        schema = format!(r#"{{"properties":{{"a":{schema}}}}}"#);
    }
    assert_eq!(header_params(&schema).unwrap().len(), 1);
}

#[test]
fn duplicate_keys_and_bad_json_refused() {
    refused(r#"{"properties":{"a":{"type":"string","x-mcp-header":"A","x-mcp-header":"B"}}}"#);
    refused(r#"{"properties":{"a":{"type":"string"},"a":{"type":"string","x-mcp-header":"A"}}}"#);
    refused(r#"{"properties":"#);
    refused("");
}

/// A schema of `n` annotated string properties, the keys of the first written with an escape when
/// `escaped` (which leaves the schema to the tree walk).
fn many_params(n: usize, escaped: bool) -> String {
    let props: Vec<String> = (0..n)
        .map(|i| {
            let key = if escaped && i == 0 { r"p\u0030" } else { "p" };
            format!(r#""{key}{i}":{{"type":"string","x-mcp-header":"P{i}"}}"#)
        })
        .collect();
    format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        props.join(",")
    )
}

#[test]
fn more_header_parameters_than_the_cap_refused() {
    use mcp_sansio::limits::MAX_HEADER_PARAMS;
    use mcp_sansio::HeaderRefusal;
    for escaped in [false, true] {
        let at_cap = header_params(&many_params(MAX_HEADER_PARAMS, escaped)).unwrap();
        assert_eq!(at_cap.len(), MAX_HEADER_PARAMS);
        for n in [MAX_HEADER_PARAMS + 1, 20_000] {
            assert_eq!(
                header_params(&many_params(n, escaped)),
                Err(HeaderRefusal::TooMany),
                "{n} escaped {escaped}"
            );
        }
    }
    assert_eq!(
        refused(&many_params(MAX_HEADER_PARAMS + 1, false)),
        "inputSchema has more than 64 x-mcp-header parameters"
    );
}

fn params() -> Vec<HeaderParam> {
    vec![
        param(&["region"], "Region", ParamKind::String),
        param(&["opts", "count"], "Count", ParamKind::Integer),
        param(&["opts", "dry"], "Dry", ParamKind::Boolean),
    ]
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn extraction_string_integer_boolean() {
    let args = br#"{"region":"us-west1","opts":{"count":-42,"dry":true}}"#;
    assert_eq!(
        header_values(&params(), args).unwrap(),
        pairs(&[
            ("Mcp-Param-Region", "us-west1"),
            ("Mcp-Param-Count", "-42"),
            ("Mcp-Param-Dry", "true"),
        ])
    );
    let args = br#"{"region":" x","opts":{"count":9007199254740991,"dry":false}}"#;
    assert_eq!(
        header_values(&params(), args).unwrap(),
        pairs(&[
            ("Mcp-Param-Region", "=?base64?IHg=?="),
            ("Mcp-Param-Count", "9007199254740991"),
            ("Mcp-Param-Dry", "false"),
        ])
    );
    let args = br#"{"opts":{"count":-9007199254740991}}"#;
    assert_eq!(
        header_values(&params(), args).unwrap(),
        pairs(&[("Mcp-Param-Count", "-9007199254740991")])
    );
}

#[test]
fn extraction_absent_and_null_omitted() {
    assert_eq!(header_values(&params(), b"{}").unwrap(), vec![]);
    let args = br#"{"region":null,"opts":{"count":null}}"#;
    assert_eq!(header_values(&params(), args).unwrap(), vec![]);
    let args = br#"{"region":"r","opts":null}"#;
    assert_eq!(
        header_values(&params(), args).unwrap(),
        pairs(&[("Mcp-Param-Region", "r")])
    );
}

#[test]
fn extraction_wrong_type_refused() {
    for args in [
        r#"{"region":1}"#,
        r#"{"region":{"a":"b"}}"#,
        r#"{"region":["x"]}"#,
        r#"{"opts":{"count":"5"}}"#,
        r#"{"opts":{"count":1.5}}"#,
        r#"{"opts":{"dry":"true"}}"#,
        r#"{"opts":{"dry":0}}"#,
        r#"{"opts":"x"}"#,
    ] {
        assert!(
            header_values(&params(), args.as_bytes()).is_err(),
            "accepted {args}"
        );
    }
    for args in ["[]", "\"x\"", "null", "", "{"] {
        assert!(
            header_values(&params(), args.as_bytes()).is_err(),
            "accepted {args}"
        );
    }
}

#[test]
fn extraction_integer_out_of_range_refused() {
    for n in [
        "9007199254740992",
        "-9007199254740992",
        "18446744073709551615",
        "1e300",
    ] {
        let args = format!(r#"{{"opts":{{"count":{n}}}}}"#);
        let err = header_values(&params(), args.as_bytes()).unwrap_err();
        assert!(err.contains("integer"), "{n}: {err}");
    }
}

#[test]
fn extraction_integer_written_as_float() {
    // Integral floats count as integers (the check runs without `f64::fract`, so also without
    // `std`); anything with a fraction, or beyond ±(2^53 − 1), is refused.
    for (n, want) in [
        ("3.0", "3"),
        ("-0.0", "0"),
        ("2.5e1", "25"),
        ("-1e2", "-100"),
        ("1048576.0", "1048576"),
        ("-65536.0", "-65536"),
    ] {
        let args = format!(r#"{{"opts":{{"count":{n}}}}}"#);
        assert_eq!(
            header_values(&params(), args.as_bytes()).unwrap(),
            pairs(&[("Mcp-Param-Count", want)]),
            "{n}"
        );
    }
    for n in ["0.5", "-2.25", "1e-300", "1e16", "-1e16"] {
        let args = format!(r#"{{"opts":{{"count":{n}}}}}"#);
        let err = header_values(&params(), args.as_bytes()).unwrap_err();
        assert!(err.contains("integer"), "{n}: {err}");
    }
}

#[test]
fn encoding_plain() {
    assert_eq!(encode_header_value("us-west1"), "us-west1");
    assert_eq!(encode_header_value("a b c"), "a b c");
    assert_eq!(encode_header_value("=?base64?x"), "=?base64?x");
}

/// The 2026-07-28 transport (Request Metadata, value encoding): "When a value cannot be safely
/// represented as a plain ASCII header value (e.g., it contains non-ASCII characters, control
/// characters, or has leading/trailing whitespace), clients MUST use Base64 encoding". A tab is
/// a control character (0x09), inside a value too; a space inside is not.
#[test]
fn a_control_character_anywhere_is_sent_in_the_base64_form() {
    assert_eq!(encode_header_value("a\tb"), "=?base64?YQli?=");
    assert_eq!(encode_header_value("a b\tc"), "=?base64?YSBiCWM=?=");
    for c in (0u8..0x20).chain([0x7f]) {
        let value = format!("x{}y", c as char);
        let sent = encode_header_value(&value);
        let inner = sent
            .strip_prefix("=?base64?")
            .and_then(|s| s.strip_suffix("?="))
            .unwrap_or_else(|| panic!("{c:#x} sent plain: {sent:?}"));
        assert_eq!(
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, inner).unwrap(),
            value.as_bytes(),
            "{c:#x}"
        );
    }
    // The opposite case: visible ASCII with inner spaces stays plain.
    assert_eq!(encode_header_value("New York 1"), "New York 1");
}

#[test]
fn encoding_base64() {
    assert_eq!(encode_header_value(" lead"), "=?base64?IGxlYWQ=?=");
    assert_eq!(encode_header_value("trail\t"), "=?base64?dHJhaWwJ?=");
    assert_eq!(encode_header_value("日本"), "=?base64?5pel5pys?=");
    assert_eq!(encode_header_value("a\r\nb"), "=?base64?YQ0KYg==?=");
    assert_eq!(encode_header_value(""), "=?base64??=");
    assert_eq!(
        encode_header_value("=?base64?SGk=?="),
        "=?base64?PT9iYXNlNjQ/U0drPT89?="
    );
}

/// What a schema of [`REFUSALS`] gives: its parameters, or the refusal's text.
enum Want {
    Params(&'static [(&'static [&'static str], &'static str, ParamKind)]),
    Refused(&'static str),
}

/// Schemas and what `header_params` gives for each, written by hand from the rules in
/// `src/xmcp/mod.rs` (not computed by another implementation of them).
const REFUSALS: &[(&str, Want)] = &[
    (r#"{"type":"object"}"#, Want::Params(&[])),
    // Numbers are kept as written, whatever their size.
    (
        r#"{"type":"object","default":1e400,"minimum":-1e-400}"#,
        Want::Params(&[]),
    ),
    (
        r#"{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}"#,
        Want::Params(&[(&["a"], "A", ParamKind::String)]),
    ),
    // An annotated schema keeps its numbers as written too.
    (
        r#"{"properties":{"n":{"type":"integer","x-mcp-header":"N","maximum":1e400}}}"#,
        Want::Params(&[(&["n"], "N", ParamKind::Integer)]),
    ),
    // An escaped key is the same key.
    (
        r#"{"properties":{"a":{"type":"boolean","x-mcp-h\u0065ader":"A"}}}"#,
        Want::Params(&[(&["a"], "A", ParamKind::Boolean)]),
    ),
    // Parameters come sorted by path, an object's own before those below it.
    (
        r#"{"properties":{"b":{"type":"integer","x-mcp-header":"B"},"a":{"type":"string","x-mcp-header":"A"}}}"#,
        Want::Params(&[
            (&["a"], "A", ParamKind::String),
            (&["b"], "B", ParamKind::Integer),
        ]),
    ),
    (
        r#"{"type":"string","x-mcp-header":"A"}"#,
        Want::Refused(r#"x-mcp-header "A" is on the schema root"#),
    ),
    (
        r#"{"properties":{"a":{"type":"string","x-mcp-header":1}}}"#,
        Want::Refused("x-mcp-header value 1 is not a string"),
    ),
    (
        r#"{"properties":{"a":{"type":"string","x-mcp-header":{"n":"A"}}}}"#,
        Want::Refused(r#"x-mcp-header value {"n":"A"} is not a string"#),
    ),
    (
        r#"{"items":{"type":"string","x-mcp-header":"A"}}"#,
        Want::Refused(r#"x-mcp-header "A" is not reached only through `properties`"#),
    ),
    (
        r#"{"properties":{"a":{"type":"string","x-mcp-header":""}}}"#,
        Want::Refused(r#"x-mcp-header on property "a" is empty"#),
    ),
    (
        r#"{"properties":{"o":{"properties":{"b":{"type":"string","x-mcp-header":"Re gion"}}}}}"#,
        Want::Refused(r#"x-mcp-header "Re gion" on property "o.b" is not an RFC 9110 token"#),
    ),
    (
        r#"{"properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}"#,
        Want::Refused(
            r#"x-mcp-header "A" on property "a" has type ["string","null"], not string, integer or boolean"#,
        ),
    ),
    (
        r#"{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}"#,
        Want::Refused(
            r#"x-mcp-header "A" on property "a" has type "number", not string, integer or boolean"#,
        ),
    ),
    (
        r#"{"properties":{"a":{"x-mcp-header":"A"}}}"#,
        Want::Refused(r#"x-mcp-header "A" on property "a" has no type"#),
    ),
    (
        r#"{"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"integer","x-mcp-header":"x"}}}"#,
        Want::Refused(
            r#"x-mcp-header "x" on property "b" duplicates another (case-insensitively)"#,
        ),
    ),
    (
        r#"{"type":"object","properties":{"a":{},"a":{}}}"#,
        Want::Refused(r#"inputSchema is not valid JSON: duplicate key "a" at line 1 column 45"#),
    ),
    (
        r#"{"properties":"#,
        Want::Refused(
            "inputSchema is not valid JSON: EOF while parsing a value at line 1 column 14",
        ),
    ),
    (
        "",
        Want::Refused(
            "inputSchema is not valid JSON: EOF while parsing a value at line 1 column 0",
        ),
    ),
    (
        r#"{"type":"object","description":"\ud800"}"#,
        Want::Refused(
            "inputSchema is not valid JSON: unexpected end of hex escape at line 1 column 39",
        ),
    ),
];

#[test]
fn refusal_reasons_from_a_table() {
    for (schema, want) in REFUSALS {
        match (header_params(schema), want) {
            (Ok(got), Want::Params(expected)) => {
                let expected: Vec<HeaderParam> = expected
                    .iter()
                    .map(|(path, name, kind)| param(path, name, *kind))
                    .collect();
                assert_eq!(got, expected, "{schema}");
            }
            (Err(got), Want::Refused(expected)) => {
                assert_eq!(got.to_string(), *expected, "{schema}")
            }
            (Ok(got), Want::Refused(expected)) => {
                panic!("{schema}: accepted {got:?}, expected refused: {expected}")
            }
            (Err(got), Want::Params(_)) => panic!("{schema}: refused: {got}"),
        }
    }
}

/// `leaf` as the value of `levels` nested arrays under the root's key `a`: the innermost array
/// sits at depth `levels`.
fn in_arrays(levels: usize, leaf: &str) -> String {
    format!(
        r#"{{"a":{}{leaf}{}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

#[test]
fn the_depth_limit_from_a_table() {
    use mcp_sansio::limits::MAX_DEPTH;
    use mcp_sansio::HeaderRefusal;
    // A value may sit at depth MAX_DEPTH (the root is at 0), not deeper.
    assert_eq!(header_params(&in_arrays(MAX_DEPTH, "")), Ok(vec![]));
    assert_eq!(header_params(&in_arrays(MAX_DEPTH - 1, "1")), Ok(vec![]));
    assert_eq!(
        header_params(&in_arrays(MAX_DEPTH, "1")),
        Err(HeaderRefusal::TooDeep)
    );
    assert_eq!(
        header_params(&in_arrays(MAX_DEPTH + 1, "")),
        Err(HeaderRefusal::TooDeep)
    );
    // Through `properties`, each level is two deep (the map, then the property): the property
    // at depth 62 has its members at 63; one level more puts its members at 65.
    let mut schema = String::from(r#"{"type":"string","x-mcp-header":"A"}"#);
    for _ in 0..MAX_DEPTH / 2 - 1 {
        schema = format!(r#"{{"properties":{{"a":{schema}}}}}"#);
    }
    assert_eq!(header_params(&schema).map(|p| p.len()), Ok(1));
    let schema = format!(r#"{{"properties":{{"a":{schema}}}}}"#);
    assert_eq!(header_params(&schema), Err(HeaderRefusal::TooDeep));
    // Past the JSON parser's own limit of 128, its message is the reason.
    assert_eq!(
        header_params(&in_arrays(200, "")).map_err(|e| e.to_string()),
        Err("inputSchema is not valid JSON: recursion limit exceeded at line 1 column 132".into())
    );
}

#[test]
fn many_keys_and_many_annotations() {
    use mcp_sansio::HeaderRefusal;
    // Wide objects take the hashed duplicate search; a duplicate far apart is still found. As
    // many annotations as a tool may have, among 200 properties.
    let props: Vec<String> = (0..200)
        .map(|i| match i % 3 {
            0 if i < 192 => format!(r#""p{i}":{{"type":"string","x-mcp-header":"H{i}"}}"#),
            _ => format!(r#""p{i}":{{"type":"string"}}"#),
        })
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        props.join(",")
    );
    let got = header_params(&schema).unwrap();
    assert_eq!(got.len(), mcp_sansio::limits::MAX_HEADER_PARAMS);
    let mut names: Vec<&str> = got.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), mcp_sansio::limits::MAX_HEADER_PARAMS);
    let dup = format!(
        r#"{{"type":"object","properties":{{{},"p3":{{}}}}}}"#,
        props.join(",")
    );
    assert!(matches!(
        header_params(&dup),
        Err(HeaderRefusal::InvalidJson { detail }) if detail.starts_with("duplicate key \"p3\"")
    ));
    let same = format!(
        r#"{{"type":"object","properties":{{{},"q":{{"type":"string","x-mcp-header":"h150"}}}}}}"#,
        props.join(",")
    );
    assert_eq!(
        header_params(&same),
        Err(HeaderRefusal::Duplicate {
            name: "h150".into(),
            at: "q".into()
        })
    );
    // Without annotations, a wide schema with a duplicate far apart is refused too.
    let plain: Vec<String> = (0..200).map(|i| format!(r#""p{i}":{{}}"#)).collect();
    let dup = format!(
        r#"{{"type":"object","properties":{{{},"p7":1}}}}"#,
        plain.join(",")
    );
    assert!(matches!(
        header_params(&dup),
        Err(HeaderRefusal::InvalidJson { .. })
    ));
}

/// The integral test of a JSON float, checked against `std`'s `f64::fract` (the core's own test
/// avoids it so that it also builds without `std`).
mod float_integers {
    use super::{header_values, pairs, params};
    use proptest::prelude::*;

    /// An integer header value read from `f`: integral and within ±(2^53 − 1).
    fn oracle(f: f64) -> Option<i64> {
        const MAX: f64 = 9_007_199_254_740_991.0;
        (f.fract() == 0.0 && (-MAX..=MAX).contains(&f)).then_some(f as i64)
    }

    fn float() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (-1_000_000i64..1_000_000).prop_map(|n| n as f64),
            (-(1i64 << 54)..(1i64 << 54)).prop_map(|n| n as f64),
            -1e17f64..1e17,
            (-1_000_000i64..1_000_000).prop_map(|n| n as f64 + 0.5),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn integral_test_agrees_with_fract(f in float()) {
            prop_assume!(f.is_finite());
            // `{:?}` always writes a `.` or an exponent, so the JSON number is a float; the
            // oracle reads it with the same parser the core uses.
            let text = format!("{f:?}");
            let parsed: f64 = serde_json::from_str(&text).unwrap();
            let args = format!(r#"{{"opts":{{"count":{text}}}}}"#);
            let got = header_values(&params(), args.as_bytes());
            match oracle(parsed) {
                Some(n) => prop_assert_eq!(got, Ok(pairs(&[("Mcp-Param-Count", &n.to_string())]))),
                None => prop_assert!(got.unwrap_err().contains("integer"), "{}", text),
            }
        }
    }
}

/// `schema` as written, and with a root member whose key has an escape, which the in-place check
/// leaves to the serde reading: both readings must give `want`.
fn both_readings(schema: &str) -> [(String, Result<Vec<HeaderParam>, String>); 2] {
    let escaped = schema.replacen('{', r#"{"\u0024comment":"read by serde","#, 1);
    [schema.to_owned(), escaped].map(|s| {
        let got = header_params(&s).map_err(|e| e.to_string());
        (s, got)
    })
}

/// The 2026-07-28 tools page (x-mcp-header): servers designate parameters "using an
/// `x-mcp-header` extension property in the parameter's schema within the tool's
/// `inputSchema`". The values of `default`, `const`, `enum` and `examples` are instance data,
/// not schemas: an `x-mcp-header` key there is a value the property may take, neither an
/// annotation nor a reason to refuse the tool.
#[test]
fn an_x_mcp_header_key_inside_instance_data_is_data() {
    for (schema, want) in [
        (
            r#"{"type":"object","default":{"x-mcp-header":"X"},"properties":{"a":{"type":"object","default":{"x-mcp-header":"Y"}}}}"#,
            vec![],
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A","examples":[{"x-mcp-header":"A"}],"const":{"x-mcp-header":7}}}}"#,
            vec![param(&["a"], "A", ParamKind::String)],
        ),
        (
            r#"{"type":"object","properties":{"o":{"type":"object","enum":[[{"x-mcp-header":"E","properties":{"b":{"x-mcp-header":"B"}}}]]}}}"#,
            vec![],
        ),
        // Data below a schema that is off the `properties` path is still data.
        (
            r#"{"type":"object","items":{"default":{"x-mcp-header":"I"}},"anyOf":[{"examples":[{"x-mcp-header":"J"}]}]}"#,
            vec![],
        ),
    ] {
        for (s, got) in both_readings(schema) {
            assert_eq!(got, Ok(want.clone()), "{s}");
        }
    }
}

/// The opposite cases: a property *named* `default` (or `enum`) is a schema, and so is every
/// schema of a map of names such as `$defs`; an annotation there follows the rules as before.
/// A definition named `x-mcp-header` is a name, not an annotation.
#[test]
fn schemas_named_like_data_keywords_are_still_schemas() {
    for (schema, want) in [
        (
            r#"{"type":"object","properties":{"default":{"type":"string","x-mcp-header":"D"},"enum":{"type":"integer","x-mcp-header":"E"}}}"#,
            Ok(vec![
                param(&["default"], "D", ParamKind::String),
                param(&["enum"], "E", ParamKind::Integer),
            ]),
        ),
        (
            r#"{"type":"object","$defs":{"x-mcp-header":{"type":"string"}},"properties":{"a":{"type":"string","x-mcp-header":"A"}}}"#,
            Ok(vec![param(&["a"], "A", ParamKind::String)]),
        ),
        (
            r#"{"type":"object","$defs":{"default":{"type":"string","x-mcp-header":"D"}}}"#,
            Err(r#"x-mcp-header "D" is not reached only through `properties`"#.to_owned()),
        ),
        (
            r#"{"type":"object","items":{"properties":{"default":{"type":"string","x-mcp-header":"D"}}}}"#,
            Err(r#"x-mcp-header "D" is not reached only through `properties`"#.to_owned()),
        ),
    ] {
        for (s, got) in both_readings(schema) {
            let got = got.map(|mut p| {
                p.sort_by(|a, b| a.path.cmp(&b.path));
                p
            });
            assert_eq!(got, want, "{s}");
        }
    }
}
