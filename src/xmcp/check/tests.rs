//! The schema check's unit tests.
use super::*;

/// What the check makes of `s`: the end and whether the root's `type` is `"object"`.
fn check(s: &str) -> Option<(usize, bool)> {
    let mut c = SchemaCheck::default();
    c.run(s.as_bytes(), 0).map(|f| (f.end, f.root_object))
}

/// `count` distinct keys `len` bytes long (at least 3), alike but for their last bytes.
fn keys(len: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|n| format!("{}{n:03}", "k".repeat(len - 3)))
        .collect()
}

fn object(keys: &[String]) -> String {
    let members: Vec<String> = keys.iter().map(|k| format!(r#""{k}":1"#)).collect();
    format!(r#"{{"type":"object",{}}}"#, members.join(","))
}

#[test]
fn duplicate_keys_are_found_at_every_length_and_count() {
    for len in [3, 7, 8, 9, 15, 16, 17, 40] {
        for count in [1, 2, 4, 15, 16, 17, 30, 65, 300] {
            let mut ks = keys(len, count);
            let fine = object(&ks);
            assert_eq!(check(&fine), Some((fine.len(), true)), "{fine}");
            assert_eq!(super::super::scan(&fine).map(|(_, r)| r), Some(true));
            // The same keys nested, after a key of the parent that has the same name.
            let nested = format!(r#"{{"{}":{fine},"x":[{fine},{fine}]}}"#, ks[0]);
            assert_eq!(check(&nested), Some((nested.len(), false)), "{nested}");
            for at in [0, count / 2, count - 1] {
                ks.push(ks[at].clone());
                let twice = object(&ks);
                assert_eq!(check(&twice), None, "{twice}");
                assert_eq!(super::super::scan(&twice).map(|(_, r)| r), None);
                let deep = format!(r#"{{"a":[1,{twice}]}}"#);
                assert_eq!(check(&deep), None, "{deep}");
                ks.pop();
            }
        }
    }
}

/// The Bloom bit of a short key, as [`SchemaCheck::plain_key`] finds it.
fn bloom_bit(key: &str) -> u32 {
    (short_print(key.as_bytes()).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as u32
}

#[test]
fn sixty_four_keys_that_set_every_bloom_bit() {
    // One key per bit: the object's Bloom bits end up all set with no collision.
    let mut by_bit: Vec<Option<String>> = vec![None; 64];
    for n in 0.. {
        let key = format!("k{n}");
        let bit = bloom_bit(&key) as usize;
        if by_bit[bit].is_none() {
            by_bit[bit] = Some(key);
        }
        if by_bit.iter().all(Option::is_some) {
            break;
        }
    }
    let full: Vec<String> = by_bit.into_iter().flatten().collect();
    let members = |ks: &[String]| -> String {
        let m: Vec<String> = ks.iter().map(|k| format!(r#""{k}":1"#)).collect();
        m.join(",")
    };
    let many: Vec<String> = (0..70).map(|n| format!("parent{n}")).collect();
    for extra in [full[0].clone(), full[63].clone(), "fresh".to_owned()] {
        let dup = extra != "fresh";
        let mut ks = full.clone();
        ks.push(extra.clone());
        let alone = format!("{{{}}}", members(&ks));
        assert_eq!(check(&alone).is_none(), dup, "{extra} alone");
        // Inside an object whose keys moved to an ordered set, then more of its keys.
        for after in ["parent3", "other"] {
            let nested = format!(
                r#"{{{},"child":{{{}}},"{after}":2}}"#,
                members(&many),
                members(&ks)
            );
            let refused = dup || after == "parent3";
            assert_eq!(check(&nested).is_none(), refused, "{extra} then {after}");
            assert_eq!(super::super::scan(&nested).is_none(), refused);
        }
    }
}

#[test]
fn whitespace_anywhere_between_tokens() {
    let compact = r#"{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]},"bbbbbbbbbbbb":{"type":"integer","minimum":-1.5e3},"c":[true,false,null,{},[],{"d":[1]}]},"required":["a"]}"#;
    assert_eq!(check(compact), Some((compact.len(), true)));
    for space in [" ", "\n", "\r\n\t ", "\t\t\t\t\t\t\t\t\t"] {
        // Around every structural byte outside strings.
        let mut spaced = String::new();
        let mut in_string = false;
        for c in compact.chars() {
            if c == '"' {
                in_string = !in_string;
            }
            if !in_string && matches!(c, '{' | '}' | '[' | ']' | ':' | ',') {
                spaced.push_str(space);
                spaced.push(c);
                spaced.push_str(space);
            } else {
                spaced.push(c);
            }
        }
        let spaced = spaced.trim_start();
        let end = spaced.trim_end().len();
        assert_eq!(check(spaced), Some((end, true)), "{spaced:?}");
        let twice = spaced.replacen(r#""a""#, r#""c""#, 1);
        assert_eq!(check(&twice), None, "{twice:?}");
    }
}

#[test]
fn nesting_up_to_the_depth_limit() {
    // The root and `n` arrays around a number, or around an empty array (which opens no
    // container to read a value in).
    for n in MAX_DEPTH - 4..MAX_DEPTH + 4 {
        let full = format!(r#"{{"a":{}1{}}}"#, "[".repeat(n), "]".repeat(n));
        let fits = n < MAX_DEPTH;
        assert_eq!(check(&full).is_some(), fits, "{n} around a number");
        assert_eq!(
            super::super::scan(&full).is_some(),
            fits,
            "{n} around a number"
        );
        let empty = format!(r#"{{"a":{}{}}}"#, "[".repeat(n), "]".repeat(n));
        let fits = n <= MAX_DEPTH;
        assert_eq!(check(&empty).is_some(), fits, "{n} around nothing");
        let objects = format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert_eq!(check(&objects).is_some(), n <= MAX_DEPTH, "{n} objects");
    }
}

#[test]
fn word_reads_agree_with_the_scanner() {
    // Strings of every length around the word sizes, plain or with one escape or control
    // byte anywhere, followed by little or much input.
    let specials = [
        "",
        "\\n",
        "\\\"",
        "\x01",
        "\\ud800",
        "\\ud83d\\ude00",
        "\\x",
    ];
    for len in 0..40 {
        for special in specials {
            for at in 0..=len {
                let body: String = (0..len)
                    .map(|n| char::from(b'a' + (n % 26) as u8))
                    .collect();
                let (head, tail) = body.split_at(at);
                for after in [":1}", ":1,\"kkkkkkkkkkkkkkkkkkkkkkk\":2}"] {
                    let text = format!("\"{head}{special}{tail}\"{after}");
                    let b = text.as_bytes();
                    assert_eq!(value_string(b, 0), string(b, 0, true), "{text:?}");
                    let theirs = string(b, 0, true).and_then(|(end, escaped)| {
                        let key = b.get(1..end - 1)?;
                        (!escaped).then(|| (fingerprint(b, 1, key.len()), key, end))
                    });
                    assert_eq!(read_key(b, 0), theirs, "{text:?}");
                }
            }
        }
    }
}

#[test]
fn keys_read_with_their_opening_quote() {
    // Keys of every length around the word sizes after `{` and after `,`, with or without
    // whitespace before them, plain or with an escape or control byte anywhere, the input
    // ending right after the schema or a while later.
    for len in 0..24 {
        for special in ["", "\\n", "\x01"] {
            for at in 0..=len {
                let body: String = (0..len)
                    .map(|n| char::from(b'b' + (n % 24) as u8))
                    .collect();
                let (head, tail) = body.split_at(at);
                let key = format!("{head}{special}{tail}");
                for space in ["", " ", "\n\t "] {
                    for (s, repeated) in [
                        (format!("{{{space}\"{key}\":1}}"), false),
                        (
                            format!("{{\"a\":[{{{space}\"{key}\":2}}],{space}\"{key}\":1}}"),
                            false,
                        ),
                        (format!("{{{space}\"{key}\":1,{space}\"{key}\":2}}"), true),
                    ] {
                        let fine = special.is_empty() && !repeated;
                        for pad in ["", "                    "] {
                            let text = format!("{s}{pad}");
                            let want = fine.then_some((s.len(), false));
                            assert_eq!(check(&text), want, "{text:?}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn keys_and_strings_at_the_end_of_the_input() {
    // No eight bytes after the opening quote: the word reads fall back to the scanner.
    for s in [
        r#"{"a":1}"#,
        r#"{"type":"object"}"#,
        r#"{"abcdefghij":"x"}"#,
    ] {
        assert_eq!(check(s).map(|(end, _)| end), Some(s.len()), "{s}");
    }
    assert_eq!(check(r#"{"type":"object"}"#), Some((17, true)));
    for s in [r#"{"a":1,"a":2}"#, r#"{"a"#, r#"{"a":"x"#, r#"{"a\n":1}"#] {
        assert_eq!(check(s), None, "{s:?}");
    }
}

#[test]
fn escapes_and_control_bytes_in_short_words() {
    // A key with an escape gives up; a value with one is read on.
    assert_eq!(check(r#"{"t\u0079pe":"object"}"#), None);
    let s = r#"{"type":"obj\u0065ct","d":"a\"b"}"#;
    assert_eq!(check(s), Some((s.len(), false)));
    // The `type` of a schema on the `properties` path is left to the serde reading; elsewhere
    // it is a string like any other.
    assert_eq!(
        check(r#"{"properties":{"p":{"type":"str\u0069ng"}}}"#),
        None
    );
    let s = r#"{"p":{"type":"str\u0069ng"}}"#;
    assert_eq!(check(s), Some((s.len(), false)));
    assert_eq!(check("{\"a\":\"x\x01y\",\"b\":1}"), None);
    assert_eq!(check("{\"a\x01\":1,\"bbbbbbbbbbbb\":1}"), None);
    assert_eq!(check(r#"{"a":"\ud800"}"#), None);
    let s = r#"{"a":"\ud83d\ude00","bbbbbbbbbbb":1e400}"#;
    assert_eq!(check(s), Some((s.len(), false)));
}

/// The check against the serde readings, on generated schemas: JSON text built from a small
/// vocabulary of keywords, names and annotation values, with whitespace anywhere, escapes,
/// repeated keys, deep nesting, and sometimes one byte inserted or removed.
mod differential {
    use super::*;
    use proptest::prelude::*;

    /// A generated JSON value.
    #[derive(Clone, Debug)]
    enum Tree {
        Object(Vec<(&'static str, Tree)>),
        Array(Vec<Tree>),
        /// A string, written as is between quotes (it may hold escapes).
        Text(&'static str),
        /// A number or literal, written as is.
        Bare(&'static str),
    }

    const KEYS: &[&str] = &[
        "type",
        "properties",
        "x-mcp-header",
        "items",
        "anyOf",
        "enum",
        "default",
        "$defs",
        "patternProperties",
        "region",
        "a",
        "a_rather_long_property_name",
        "t\\u0079pe",
        "p\\n",
    ];
    /// Strings that make a valid schema text (some with escapes).
    const TEXTS: &[&str] = &[
        "string",
        "integer",
        "boolean",
        "object",
        "Region",
        "REGION",
        "Mode",
        "",
        "not a token",
        "str\\u0069ng",
        "obj\\u0065ct",
        "\\ud83d\\ude00",
        "a\\\"b",
        "\u{e9}t\u{e9}",
    ];
    /// Strings JSON refuses.
    const BAD_TEXTS: &[&str] = &["\\ud800", "\\x", "tab\there"];
    const BARES: &[&str] = &["0", "-1", "1.5", "2e10", "-0.5E-3", "true", "false", "null"];
    /// Numbers and literals JSON refuses.
    const BAD_BARES: &[&str] = &["01", "1.", "-", "tru", "1e"];
    /// Property names.
    const NAMES: &[&str] = &["a", "b", "region", "type", "properties", "x-mcp-header"];
    /// Annotation values.
    const HEADERS: &[&str] = &[
        "Region",
        "region",
        "Mode",
        "Tenant-Id",
        "",
        "a b",
        "R\\u0065gion",
    ];
    /// Property types.
    const KINDS: &[&str] = &["string", "integer", "boolean", "object", "str\\u0069ng"];

    fn tree() -> impl Strategy<Value = Tree> {
        let leaf = prop_oneof![
            8 => proptest::sample::select(TEXTS).prop_map(Tree::Text),
            8 => proptest::sample::select(BARES).prop_map(Tree::Bare),
            1 => proptest::sample::select(BAD_TEXTS).prop_map(Tree::Text),
            1 => proptest::sample::select(BAD_BARES).prop_map(Tree::Bare),
        ];
        leaf.prop_recursive(6, 48, 5, |inner| {
            let member = (proptest::sample::select(KEYS), inner.clone());
            prop_oneof![
                3 => proptest::collection::vec(member.clone(), 0..5).prop_map(Tree::Object),
                1 => proptest::collection::vec(inner.clone(), 0..4).prop_map(Tree::Array),
                // A property schema, often annotated.
                3 => (
                    proptest::option::of(proptest::sample::select(KINDS)),
                    proptest::option::weighted(0.7, proptest::sample::select(HEADERS)),
                    proptest::collection::vec(member, 0..3),
                )
                    .prop_map(|(kind, header, mut rest)| {
                        if let Some(k) = kind {
                            rest.push(("type", Tree::Text(k)));
                        }
                        if let Some(h) = header {
                            rest.push(("x-mcp-header", Tree::Text(h)));
                        }
                        Tree::Object(rest)
                    }),
                // Properties of a schema.
                3 => proptest::collection::vec((proptest::sample::select(NAMES), inner), 0..4)
                    .prop_map(|props| Tree::Object(vec![
                        ("type", Tree::Text("object")),
                        ("properties", Tree::Object(props)),
                    ])),
            ]
        })
    }

    /// Writes `t` with the whitespace `space` picks at each place (by a counter).
    fn write(t: &Tree, space: &[&str], n: &mut usize, out: &mut String) {
        fn gap(space: &[&str], n: &mut usize, out: &mut String) {
            *n += 1;
            out.push_str(space[*n % space.len()]);
        }
        match t {
            Tree::Object(members) => {
                out.push('{');
                for (k, (key, value)) in members.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    gap(space, n, out);
                    out.push('"');
                    out.push_str(key);
                    out.push('"');
                    gap(space, n, out);
                    out.push(':');
                    gap(space, n, out);
                    write(value, space, n, out);
                    gap(space, n, out);
                }
                out.push('}');
            }
            Tree::Array(items) => {
                out.push('[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    gap(space, n, out);
                    write(item, space, n, out);
                }
                out.push(']');
            }
            Tree::Text(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Tree::Bare(s) => out.push_str(s),
        }
    }

    /// A schema: the root is an object whose `properties` hold the generated members, `wrap`
    /// more objects deep (to reach the depth limit).
    fn schema() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec((proptest::sample::select(NAMES), tree()), 0..6),
            prop_oneof![Just(0usize), Just(0usize), 28usize..34],
            proptest::sample::select(vec![
                vec![""],
                vec![""],
                vec![" "],
                vec!["", "\n\t ", "", " "],
            ]),
            proptest::option::weighted(0.2, (any::<proptest::sample::Index>(), any::<u8>())),
            proptest::bool::ANY,
        )
            .prop_map(|(members, wrap, space, edit, root_object)| {
                let mut props = Tree::Object(members);
                for _ in 0..wrap {
                    props = Tree::Object(vec![("properties", Tree::Object(vec![("a", props)]))]);
                }
                let mut root = vec![("properties", props)];
                if root_object {
                    root.push(("type", Tree::Text("object")));
                }
                let mut out = String::new();
                write(&Tree::Object(root), &space, &mut 0, &mut out);
                if let Some((at, byte)) = edit {
                    // One ASCII byte inserted, or one removed (on a character boundary).
                    let at = at.index(out.len() + 1);
                    if out.is_char_boundary(at) {
                        match byte {
                            0..=127 => out.insert(at, char::from(byte)),
                            _ if at < out.len() && out.is_char_boundary(at + 1) => {
                                out.remove(at);
                            }
                            _ => {}
                        }
                    }
                }
                out
            })
    }

    /// Whether the root of `s` (read by serde) has `"type": "object"` written without escapes.
    fn root_object(s: &str) -> bool {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(borrow, rename = "type")]
            ty: Option<&'a serde_json::value::RawValue>,
        }
        serde_json::from_str::<Head<'_>>(s)
            .is_ok_and(|h| h.ty.is_some_and(|t| t.get() == "\"object\""))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// What the check accepts, the serde tree reading accepts with the same parameters
        /// and the same root `type`; what the tree reading accepts and has no escape, the check
        /// accepts too (escapes it may leave to serde).
        #[test]
        fn agrees_with_the_serde_readings(s in schema()) {
            let mut c = SchemaCheck::default();
            let ours = c
                .run(s.as_bytes(), ws(s.as_bytes(), 0))
                .filter(|f| ws(s.as_bytes(), f.end) == s.len())
                .map(|f| (c.take_params(), f.root_object));
            let theirs = super::super::super::walk(&s);
            // The check never evaluates numbers (the module's docs): a number past f64's
            // range, which the tree reading refuses, is the one way an accepted schema may
            // differ.
            let out_of_range = theirs
                .as_ref()
                .err()
                .is_some_and(|e| format!("{e:?}").contains("number out of range"));
            match &ours {
                Some(_) if out_of_range => {}
                Some((params, root)) => {
                    prop_assert_eq!(Ok(params), theirs.as_ref(), "{}", s);
                    prop_assert_eq!(*root, root_object(&s), "{}", s);
                }
                None => prop_assert!(
                    theirs.is_err() || s.contains('\\'),
                    "given up on {:?}, which the tree reading accepts: {:?}", s, theirs
                ),
            }
        }
    }
}

#[test]
fn member_places_of_the_keywords_and_their_lookalikes() {
    use super::super::member_place;
    // The keywords as the module documentation lists them.
    let data = ["default", "const", "enum", "examples"];
    let names = [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    for (words, place) in [(&data[..], Place::Data), (&names[..], Place::Names)] {
        for w in words {
            assert!(member_place(w.as_bytes()) == place, "{w}");
            // The same length with one byte changed, one byte more, one byte less: not it.
            for at in 0..w.len() {
                let mut changed = w.as_bytes().to_vec();
                changed[at] ^= 0x20;
                assert!(member_place(&changed) == Place::Other, "{changed:?}");
            }
            let longer = format!("{w}s");
            assert!(member_place(longer.as_bytes()) == Place::Other, "{longer}");
            assert!(member_place(&w.as_bytes()[1..]) == Place::Other, "{w}");
        }
    }
    for other in ["", "type", "items", "anyOf", "x-mcp-header", "required"] {
        assert!(member_place(other.as_bytes()) == Place::Other, "{other}");
    }
}

#[test]
fn an_empty_root_ends_after_its_closing_brace() {
    for s in ["{}", "{ }", "{\n\t }"] {
        assert_eq!(check(s), Some((s.len(), false)), "{s:?}");
        // With more input after it.
        let more = format!("{s} ,");
        assert_eq!(check(&more), Some((s.len(), false)), "{more:?}");
    }
}

#[test]
fn objects_in_data_arrays_are_data() {
    // An `x-mcp-header` key in an object inside `enum`, `default`, `const` or `examples`
    // arrays is data: the check settles the schema (the key is neither an annotation nor
    // refused), at the root and on the `properties` path.
    for data in ["enum", "default", "const", "examples"] {
        for s in [
            format!(r#"{{"type":"object","{data}":[1,{{"x-mcp-header":"A"}}]}}"#),
            format!(
                r#"{{"type":"object","properties":{{"p":{{"{data}":[[{{"x-mcp-header":1}}]]}}}}}}"#
            ),
        ] {
            assert_eq!(check(&s).map(|(end, _)| end), Some(s.len()), "{s}");
            assert_eq!(super::super::scan(&s).map(|(p, _)| p), Some(vec![]), "{s}");
        }
    }
    // Elsewhere the key in an array's object is refused.
    assert_eq!(check(r#"{"items":[{"x-mcp-header":"A"}]}"#), None);
}
