//! Edge tests of the `x-mcp-header` schema limits: each limit's last accepted value and the first
//! refused one, through [`header_params`], on schemas that the tree walk reads (the one that
//! names the reason).

use mcp_sansio::limits::MAX_DEPTH;
use mcp_sansio::{header_params, HeaderRefusal};

/// `inner` as the schema of the property `a`, `levels` `properties` levels below the root: it
/// sits at depth `2 * levels` (each level is the `properties` map, then the property).
fn under_properties(levels: usize, inner: &str) -> String {
    let mut schema = inner.to_owned();
    for _ in 0..levels {
        schema = format!(r#"{{"properties":{{"a":{schema}}}}}"#);
    }
    schema
}

/// A schema whose member `a` holds an empty array `levels` deep (at depth `levels`), and whose
/// property `p` carries an annotation that is not a token: the tree walk reads the array first.
fn deep_array_then_bad_annotation(levels: usize) -> String {
    format!(
        r#"{{"a":{}{},"properties":{{"p":{{"type":"string","x-mcp-header":"a b"}}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

#[test]
fn an_empty_properties_map_one_level_past_the_limit_is_too_deep() {
    // A schema at depth MAX_DEPTH - 2 may have `properties` (the map at MAX_DEPTH - 1) …
    let at_limit = under_properties(MAX_DEPTH / 2 - 1, r#"{"properties":{}}"#);
    assert_eq!(header_params(&at_limit), Ok(vec![]));
    // … and one at depth MAX_DEPTH may not, even empty (the map would sit at MAX_DEPTH + 1).
    let past = under_properties(MAX_DEPTH / 2, r#"{"properties":{}}"#);
    assert_eq!(header_params(&past), Err(HeaderRefusal::TooDeep));
}

#[test]
fn a_value_at_exactly_the_depth_limit_does_not_change_the_reason() {
    // The array at depth MAX_DEPTH is allowed: the reason is the annotation's.
    assert_eq!(
        header_params(&deep_array_then_bad_annotation(MAX_DEPTH)),
        Err(HeaderRefusal::NotAToken {
            name: "a b".into(),
            at: "p".into()
        })
    );
    // One level more is too deep, whatever comes after it.
    assert_eq!(
        header_params(&deep_array_then_bad_annotation(MAX_DEPTH + 1)),
        Err(HeaderRefusal::TooDeep)
    );
}

#[test]
fn annotation_rules_hold_when_a_key_is_written_with_escapes() {
    // A key written with an escape leaves the schema to the streaming scan; its rules are the
    // same. A token on a property is accepted …
    assert_eq!(
        header_params(r#"{"properties":{"\u0070":{"type":"string","x-mcp-header":"A"}}}"#)
            .map(|p| p.len()),
        Ok(1)
    );
    // … one that is not a token is refused …
    assert_eq!(
        header_params(r#"{"properties":{"\u0070":{"type":"string","x-mcp-header":"a b"}}}"#),
        Err(HeaderRefusal::NotAToken {
            name: "a b".into(),
            at: "p".into()
        })
    );
    // … and a token on the root is refused too.
    assert_eq!(
        header_params(r#"{"type":"string","x-mcp-header":"A","\u0061":1}"#),
        Err(HeaderRefusal::OnRoot { name: "A".into() })
    );
}

/// An argument of the wrong JSON type is refused naming the type it has, for every type a JSON
/// value can have but `null` (which sends no header): the message tells the caller what to fix.
#[test]
fn an_argument_of_the_wrong_type_is_refused_naming_its_json_type() {
    use mcp_sansio::internals::header_values;
    use mcp_sansio::{HeaderParam, ParamKind};

    let param = |kind| HeaderParam {
        path: vec!["a".to_owned()],
        name: "A".to_owned(),
        kind,
    };
    let cases = [
        (ParamKind::String, "true", "boolean"),
        (ParamKind::String, "7", "number"),
        (ParamKind::Boolean, r#""x""#, "string"),
        (ParamKind::Integer, "[1]", "array"),
        (ParamKind::String, r#"{"b":1}"#, "object"),
    ];
    for (kind, value, name) in cases {
        let args = format!(r#"{{"a":{value}}}"#);
        let e = header_values(&[param(kind)], args.as_bytes()).unwrap_err();
        assert!(
            e.contains(&format!("{name} is not a")),
            "{value} against {kind:?}: {e}"
        );
    }
    // `null` sends no header, of any kind.
    assert_eq!(
        header_values(&[param(ParamKind::Integer)], br#"{"a":null}"#),
        Ok(Vec::new())
    );
}

/// A container closed by the other kind of bracket is not JSON: the schema is refused as
/// invalid, whether the wrong bracket closes an array, an inner object or the root.
#[test]
fn a_schema_closed_by_the_wrong_bracket_is_invalid_json() {
    for schema in [
        r#"{"a":[1}}"#,
        r#"{"a":[{"b":1}}}"#,
        r#"{"a":{"b":1]}"#,
        r#"{"a":1]"#,
        r#"{"properties":{"p":{"type":"string","x-mcp-header":"A"]}}"#,
    ] {
        assert!(
            matches!(
                header_params(schema),
                Err(HeaderRefusal::InvalidJson { .. })
            ),
            "{schema}: {:?}",
            header_params(schema)
        );
    }
    // The same schemas with the right brackets are read.
    assert_eq!(header_params(r#"{"a":[1]}"#), Ok(vec![]));
    assert_eq!(header_params(r#"{"a":{"b":1}}"#), Ok(vec![]));
}

/// A key as long as `x-mcp-header` and starting with the same eight bytes is an ordinary key:
/// it adds no parameter, on the `properties` path or off it.
#[test]
fn a_key_that_only_starts_like_the_annotation_is_not_one() {
    for key in ["x-mcp-heaper", "x-mcp-he@der", "x-mcp-headeR"] {
        let on_path =
            format!(r#"{{"type":"object","properties":{{"p":{{"type":"string","{key}":"A"}}}}}}"#);
        assert_eq!(header_params(&on_path), Ok(vec![]), "{on_path}");
        let off_path = format!(r#"{{"items":{{"type":"string","{key}":"A"}}}}"#);
        assert_eq!(header_params(&off_path), Ok(vec![]), "{off_path}");
    }
    // The keyword itself is an annotation there.
    let on_path = r#"{"type":"object","properties":{"p":{"type":"string","x-mcp-header":"A"}}}"#;
    assert_eq!(header_params(on_path).map(|p| p.len()), Ok(1));
}
