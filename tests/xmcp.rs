//! SEP-2243 `x-mcp-header` annotations: schema validation, argument extraction, value encoding.

use mcp_sansio::internals::{encode_header_value, header_params, header_values};
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
        Err(reason) => reason,
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
    assert_eq!(encode_header_value("a b\tc"), "a b\tc");
    assert_eq!(encode_header_value("=?base64?x"), "=?base64?x");
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

/// The tree-walk check `header_params` used before the streaming scan, kept as the oracle the
/// scan must agree with: same schemas accepted (same parameters, same order), same refused (same
/// reasons).
mod oracle {
    use std::collections::HashSet;
    use std::fmt;

    use mcp_sansio::internals::MAX_DEPTH;
    use mcp_sansio::{HeaderParam, ParamKind};
    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Value};

    const KEYWORD: &str = "x-mcp-header";

    struct Strict(Value);

    impl<'de> Deserialize<'de> for Strict {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(StrictVisitor).map(Strict)
        }
    }

    struct StrictVisitor;

    impl<'de> Visitor<'de> for StrictVisitor {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(Strict(v)) = seq.next_element()? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let Strict(v) = map.next_value()?;
                if out.contains_key(&key) {
                    return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
                }
                out.insert(key, v);
            }
            Ok(Value::Object(out))
        }
    }

    fn is_token(s: &str) -> bool {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    }

    struct Walk {
        found: Vec<HeaderParam>,
        seen: HashSet<String>,
    }

    impl Walk {
        fn node(
            &mut self,
            node: &Value,
            depth: usize,
            path: Option<&[String]>,
        ) -> Result<(), String> {
            if depth > MAX_DEPTH {
                return Err(format!("inputSchema nests deeper than {MAX_DEPTH} levels"));
            }
            match node {
                Value::Array(items) => {
                    for item in items {
                        self.node(item, depth + 1, None)?;
                    }
                    Ok(())
                }
                Value::Object(map) => self.object(map, depth, path),
                _ => Ok(()),
            }
        }

        fn object(
            &mut self,
            map: &Map<String, Value>,
            depth: usize,
            path: Option<&[String]>,
        ) -> Result<(), String> {
            if let Some(annotation) = map.get(KEYWORD) {
                self.annotation(map, annotation, path)?;
            }
            for (key, value) in map {
                match (key.as_str(), path, value) {
                    ("properties", Some(path), Value::Object(props)) => {
                        if depth + 1 > MAX_DEPTH {
                            return Err(format!(
                                "inputSchema nests deeper than {MAX_DEPTH} levels"
                            ));
                        }
                        for (name, sub) in props {
                            let mut sub_path = path.to_vec();
                            sub_path.push(name.clone());
                            self.node(sub, depth + 2, Some(&sub_path))?;
                        }
                    }
                    _ => self.node(value, depth + 1, None)?,
                }
            }
            Ok(())
        }

        fn annotation(
            &mut self,
            map: &Map<String, Value>,
            annotation: &Value,
            path: Option<&[String]>,
        ) -> Result<(), String> {
            let name = match annotation {
                Value::String(s) => s,
                other => return Err(format!("{KEYWORD} value {other} is not a string")),
            };
            let path = match path {
                Some(p) if !p.is_empty() => p,
                Some(_) => return Err(format!("{KEYWORD} {name:?} is on the schema root")),
                None => {
                    return Err(format!(
                        "{KEYWORD} {name:?} is not reached only through `properties`"
                    ))
                }
            };
            let at = path.join(".");
            if name.is_empty() {
                return Err(format!("{KEYWORD} on property {at:?} is empty"));
            }
            if !is_token(name) {
                return Err(format!(
                    "{KEYWORD} {name:?} on property {at:?} is not an RFC 9110 token"
                ));
            }
            let kind = match map.get("type") {
                Some(Value::String(t)) if t == "string" => ParamKind::String,
                Some(Value::String(t)) if t == "integer" => ParamKind::Integer,
                Some(Value::String(t)) if t == "boolean" => ParamKind::Boolean,
                Some(t) => {
                    return Err(format!(
                        "{KEYWORD} {name:?} on property {at:?} has type {t}, not string, integer or boolean"
                    ))
                }
                None => return Err(format!("{KEYWORD} {name:?} on property {at:?} has no type")),
            };
            if !self.seen.insert(name.to_ascii_lowercase()) {
                return Err(format!(
                    "{KEYWORD} {name:?} on property {at:?} duplicates another (case-insensitively)"
                ));
            }
            self.found.push(HeaderParam {
                path: path.to_vec(),
                name: name.clone(),
                kind,
            });
            Ok(())
        }
    }

    pub fn header_params(input_schema: &str) -> Result<Vec<HeaderParam>, String> {
        let Strict(schema) = serde_json::from_str(input_schema)
            .map_err(|e| format!("inputSchema is not valid JSON: {e}"))?;
        let mut walk = Walk {
            found: Vec::new(),
            seen: HashSet::new(),
        };
        walk.node(&schema, 0, Some(&[]))?;
        Ok(walk.found)
    }
}

mod generated {
    use proptest::prelude::*;

    /// Keys that matter to the check, with escaped spellings of some and near misses.
    const KEYS: &[&str] = &[
        r#""properties""#,
        r#""type""#,
        r#""x-mcp-header""#,
        r#""x-mcp-h\u0065ader""#,
        r#""items""#,
        r#""anyOf""#,
        r#""a""#,
        r#""\u0061""#,
        r#""b""#,
        r#""B""#,
        r#""prop\u0065rties""#,
    ];

    /// Leaf values: the `type` names, header names good and bad, other scalars, broken JSON.
    const LEAVES: &[&str] = &[
        r#""string""#,
        r#""integer""#,
        r#""boolean""#,
        r#""object""#,
        r#""obj\u0065ct""#,
        r#""number""#,
        r#""Region""#,
        r#""region""#,
        r#""R\u0065gion""#,
        r#""Dry-Run""#,
        r#""Re gion""#,
        r#""""#,
        r#""\ud800""#,
        "1",
        "-3",
        "1.5",
        "1e400",
        "true",
        "null",
        "[]",
        "{}",
        "01",
    ];

    fn value() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(LEAVES).prop_map(str::to_owned);
        leaf.prop_recursive(6, 48, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((prop::sample::select(KEYS), inner.clone()), 0..5).prop_map(
                    |entries| {
                        let body: Vec<String> =
                            entries.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                        format!("{{{}}}", body.join(","))
                    }
                ),
                // A property map with distinct names, so annotations are reached; some
                // properties annotated with (mostly) distinct header names.
                prop::collection::vec(
                    prop_oneof![
                        inner,
                        (prop::sample::select(&["H", "h"][..]), 0u32..40).prop_map(|(p, h)| {
                            format!(r#"{{"type":"string","x-mcp-header":"{p}{h}"}}"#)
                        }),
                    ],
                    0..4
                )
                .prop_map(|subs| {
                    let body: Vec<String> = subs
                        .iter()
                        .enumerate()
                        .map(|(i, v)| format!(r#""p{i}":{v}"#))
                        .collect();
                    format!(r#"{{"type":"object","properties":{{{}}}}}"#, body.join(","))
                }),
                // A well-formed annotated property.
                (
                    prop::sample::select(&["string", "integer", "boolean", "number"][..]),
                    prop::sample::select(&["A", "a", "Region", "X-Y", "b c"][..])
                )
                    .prop_map(|(t, h)| format!(r#"{{"type":"{t}","x-mcp-header":"{h}"}}"#)),
            ]
        })
    }

    /// `schema` wrapped `levels` deep in property maps or arrays.
    fn wrapped() -> impl Strategy<Value = String> {
        (value(), 0usize..70, any::<bool>()).prop_map(|(mut schema, levels, arrays)| {
            for _ in 0..levels {
                schema = if arrays {
                    format!("[{schema}]")
                } else {
                    format!(r#"{{"properties":{{"w":{schema}}}}}"#)
                };
            }
            schema
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn streaming_check_agrees_with_tree_walk(schema in prop_oneof![value(), wrapped()]) {
            prop_assert_eq!(
                mcp_sansio::internals::header_params(&schema),
                super::oracle::header_params(&schema),
                "schema {}", schema
            );
        }
    }
}

#[test]
fn streaming_check_agrees_at_the_depth_limit() {
    use mcp_sansio::internals::MAX_DEPTH;
    for levels in [
        MAX_DEPTH / 2 - 1,
        MAX_DEPTH / 2,
        MAX_DEPTH / 2 + 1,
        MAX_DEPTH,
        70,
    ] {
        for leaf in [
            r#"{"type":"string","x-mcp-header":"A"}"#,
            "{}",
            "1",
            "[]",
            "[1]",
        ] {
            let mut schema = leaf.to_owned();
            for _ in 0..levels {
                schema = format!(r#"{{"properties":{{"a":{schema}}}}}"#);
            }
            assert_eq!(
                header_params(&schema),
                oracle::header_params(&schema),
                "{schema}"
            );
        }
    }
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 127, 128, 129, 200] {
        let schema = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(
            header_params(&schema),
            oracle::header_params(&schema),
            "{depth}"
        );
        let schema = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(
            header_params(&schema),
            oracle::header_params(&schema),
            "{depth}"
        );
    }
}

#[test]
fn streaming_check_keeps_the_tree_walk_order() {
    // Parameters come in the order of the tree walk, an object's own before those below it.
    let schema = r#"{"type":"object","properties":{
        "z":{"properties":{"b":{"type":"string","x-mcp-header":"ZB"},
                                           "a":{"type":"string","x-mcp-header":"ZA"}},
             "x-mcp-header":"Z","type":"boolean"},
        "m":{"type":"integer","x-mcp-header":"M"}}}"#;
    let got = header_params(schema).unwrap();
    assert_eq!(got, oracle::header_params(schema).unwrap());
    assert_eq!(got.len(), 4);
}

#[test]
fn many_keys_and_many_annotations_agree() {
    // Wide objects take the hashed duplicate search; a duplicate far apart is still found.
    let props: Vec<String> = (0..200)
        .map(|i| format!(r#""p{i}":{{"type":"string","x-mcp-header":"H{i}"}}"#))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        props.join(",")
    );
    let got = header_params(&schema).unwrap();
    assert_eq!(got.len(), 200);
    assert_eq!(got, oracle::header_params(&schema).unwrap());
    let dup = format!(
        r#"{{"type":"object","properties":{{{},"p3":{{}}}}}}"#,
        props.join(",")
    );
    assert_eq!(header_params(&dup), oracle::header_params(&dup));
    assert!(header_params(&dup).unwrap_err().contains("duplicate key"));
    let same = format!(
        r#"{{"type":"object","properties":{{{},"q":{{"type":"string","x-mcp-header":"h150"}}}}}}"#,
        props.join(",")
    );
    assert_eq!(header_params(&same), oracle::header_params(&same));
    assert!(header_params(&same)
        .unwrap_err()
        .contains("case-insensitively"));
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
