//! Arbitrary bytes through the tool-pin readers: the stored pin-set reader and the fingerprint's
//! canonical walk. None panics; a pin set that reads back is within its bound and writes the very
//! same bytes; bytes that are a `tools/list` result give each tool a pin that does not depend on
//! the page being read again, and a tool whose schema is any text (`Tool::new` does not check it)
//! still gets a pin.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::pin::{MAX_PIN_SET_BYTES, MAX_TOOL_PINS};
use mcp_sansio::{Budgets, Catalog, Operation, Tool, ToolNameRule, ToolPin, ToolPins};

fuzz_target!(|data: &[u8]| {
    if let Ok(pins) = ToolPins::from_bytes(data) {
        assert!(pins.len() <= MAX_TOOL_PINS);
        let bytes = pins.to_bytes();
        assert!(bytes.len() <= MAX_PIN_SET_BYTES);
        assert_eq!(bytes, data);
    }

    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let any = Tool::new("t", Some(text), text, Vec::new());
    assert_eq!(ToolPin::of(&any), ToolPin::of(&any.clone()));

    let budgets = Budgets::default();
    if let Ok(catalog) = Catalog::from_pages([data], ToolNameRule::Lenient, &budgets) {
        let again = Catalog::from_pages(catalog.result_pages(), ToolNameRule::Lenient, &budgets)
            .expect("a catalog's own pages read back");
        let mut pins = ToolPins::new();
        assert!(pins.observe(&catalog.tools, Operation::ListTools).is_empty());
        assert!(pins.observe(&again.tools, Operation::ListTools).is_empty());
        for (a, b) in catalog.tools.iter().zip(&again.tools) {
            assert_eq!(ToolPin::of(a), ToolPin::of(b));
        }
        assert_eq!(ToolPins::from_bytes(&pins.to_bytes()), Ok(pins));
    }
});
