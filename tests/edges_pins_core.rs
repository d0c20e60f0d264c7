//! The core's tool pins (`mcp_sansio::pin`) at their edges, through the public API (mutation
//! testing, `docs/mutants.md`): how a pin, a change and a pin set show themselves, and the depth
//! to which the canonical form follows a schema. The oracles are the module docs' definitions
//! and values built here.

use mcp_sansio::{Operation, Tool, ToolChange, ToolPin, ToolPins};

/// The bytes 0, 1, …, 31: a pin whose hex form is known by construction.
fn counting_pin() -> ToolPin {
    let mut b = [0u8; 32];
    for (i, x) in b.iter_mut().enumerate() {
        *x = i as u8;
    }
    ToolPin::from_bytes(b)
}

/// A pin is shown as lowercase hex, two digits a byte in order: all 64 digits by `Display`,
/// the first 12 (6 bytes) by `short` and by `Debug` (a log line needs no more).
#[test]
fn a_pin_shows_its_hex_whole_or_its_first_twelve_digits() {
    let p = counting_pin();
    let whole: String = (0u8..32).map(|i| format!("{i:02x}")).collect();
    assert_eq!(p.to_string(), whole);
    assert_eq!(p.short(), "000102030405");
    assert_eq!(format!("{p:?}"), r#"ToolPin("000102030405")"#);
}

/// A change names its tool (quoted) and both pins, short; a pin set shows how many pins it
/// holds and none of them (a stored set holds no server text and a log line no digest).
#[test]
fn a_change_names_its_tool_and_both_short_pins_a_set_only_its_size() {
    let change = ToolChange {
        name: "get_weather".into(),
        pinned: counting_pin(),
        now: ToolPin::from_bytes([0xab; 32]),
        operation: Operation::CallTool,
    };
    assert_eq!(
        change.to_string(),
        r#"tool "get_weather" changed since it was pinned (pinned 000102030405, now abababababab)"#
    );
    let mut pins = ToolPins::new();
    assert!(pins.is_empty());
    assert_eq!(format!("{pins:?}"), "ToolPins { len: 0 }");
    assert!(pins.pin("get_weather", ToolPin::from_bytes([0xab; 32])));
    assert!(pins.pin("get_time", counting_pin()));
    assert!(!pins.is_empty());
    let d = format!("{pins:?}");
    assert_eq!(d, "ToolPins { len: 2 }");
}

/// `n` arrays nested in one another, the innermost empty, with `sep` after every `[`.
fn nested(n: usize, sep: &str) -> String {
    format!("{}{}", format!("[{sep}").repeat(n), "]".repeat(n))
}

/// The tool whose input schema holds `n` nested arrays as the value of `x` (the schema is at
/// depth 0 of the canonical walk, `x`'s value at depth 1, the innermost array at depth `n`).
/// Built with `Tool::new` (a tool recorded earlier): a listing's reader (serde_json) refuses
/// JSON nested this deep before any pin is taken.
fn deep_tool(n: usize, sep: &str) -> Tool {
    let schema = format!(r#"{{"type":"object","x":{}}}"#, nested(n, sep));
    Tool::new("t", None, &schema, Vec::new())
}

/// The same with `n` objects nested in one another (`{"a":{"a":…{}}}`), the innermost empty.
fn deep_object_tool(n: usize, sep: &str) -> Tool {
    let nested = format!(
        "{}{{}}{}",
        format!(r#"{{{sep}"a":"#).repeat(n - 1),
        "}".repeat(n - 1)
    );
    let schema = format!(r#"{{"type":"object","x":{nested}}}"#);
    Tool::new("t", None, &schema, Vec::new())
}

/// The canonical form follows nested JSON, arrays and objects, to depth 256 (whitespace does
/// not change the pin of a schema whose innermost value is at depth 256) and no deeper (at
/// depth 257 the schema is digested as written: the same whitespace changes the pin).
#[test]
fn the_canonical_form_follows_a_schema_to_depth_256_and_no_deeper() {
    assert_eq!(
        ToolPin::of(&deep_tool(256, "")),
        ToolPin::of(&deep_tool(256, " ")),
        "depth 256 is canonical"
    );
    assert_ne!(
        ToolPin::of(&deep_tool(257, "")),
        ToolPin::of(&deep_tool(257, " ")),
        "depth 257 is as written"
    );
    assert_eq!(
        ToolPin::of(&deep_object_tool(256, "")),
        ToolPin::of(&deep_object_tool(256, " ")),
        "objects to depth 256 are canonical"
    );
    assert_ne!(
        ToolPin::of(&deep_object_tool(257, "")),
        ToolPin::of(&deep_object_tool(257, " ")),
        "objects to depth 257 are as written"
    );
}

/// SHA-256 by `ring` (not the crate's `sha2`).
fn sha256(bytes: &[u8]) -> [u8; 32] {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .try_into()
        .unwrap()
}

/// `F(x)` of the module docs: the length as 8 bytes big-endian, then `x`.
fn f(x: &[u8]) -> Vec<u8> {
    let mut v = (x.len() as u64).to_be_bytes().to_vec();
    v.extend_from_slice(x);
    v
}

/// The documented pin of a tool named `name` with no description, output schema or
/// annotations, whose input schema's canonical form is `canonical_input` (written by hand).
fn documented_pin(name: &str, canonical_input: &str) -> [u8; 32] {
    let mut all = f(b"mcp-sansio tool pin 1");
    all.extend(f(name.as_bytes()));
    all.push(0);
    all.extend(sha256(canonical_input.as_bytes()));
    all.extend([0, 0]);
    sha256(&all)
}

/// Empty arrays and objects (`"required": []`, `"properties": {}`: common in schemas) are
/// canonical values like any other, at the top and nested: the pin is the documented digest of
/// the canonical form written by hand, whatever the whitespace inside them.
#[test]
fn empty_arrays_and_objects_are_canonical() {
    let canonical = r#"{"properties":{},"required":[],"x":[[],{},[[]]]}"#;
    for schema in [
        canonical,
        r#"{ "x" : [ [ ] , { } , [ [ ] ] ] , "required" : [ ] , "properties" : { } }"#,
    ] {
        let t = Tool::new("t", None, schema, Vec::new());
        assert_eq!(
            ToolPin::of(&t).as_bytes(),
            &documented_pin("t", canonical),
            "{schema}"
        );
    }
}
