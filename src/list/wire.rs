//! The serde reading of a page and of its entries: what the one pass (`pass.rs`) leaves to it
//! decides, and gives the reasons, as before the one pass existed.

use crate::prelude::*;

use alloc::borrow::Cow;
use core::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
pub(super) struct PageWire<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
    #[serde(rename = "resultType", default)]
    result_type: Option<&'a str>,
}

#[derive(Deserialize)]
pub(super) struct ToolWire<'a> {
    #[serde(default, borrow)]
    pub(super) name: Option<NameWire<'a>>,
    #[serde(default, borrow)]
    pub(super) description: Option<&'a RawValue>,
    #[serde(rename = "inputSchema", default, borrow)]
    pub(super) input_schema: Option<&'a RawValue>,
}

/// A tool's `name`: its text, borrowed unless escaped, or a mark that it is not a string (the value
/// is still read in full, as any JSON value).
pub(super) enum NameWire<'a> {
    Text(Cow<'a, str>),
    NotText,
}

impl<'de: 'a, 'a> Deserialize<'de> for NameWire<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor<'a>(core::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for NameVisitor<'a> {
            type Value = NameWire<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(NameWire::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NameWire::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(NameWire::Text(Cow::Owned(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                serde_json::Value::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(NameWire::NotText)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                serde_json::Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(NameWire::NotText)
            }
        }
        deserializer.deserialize_any(NameVisitor(core::marker::PhantomData))
    }
}

#[derive(Deserialize)]
pub(super) struct SchemaHead<'a> {
    #[serde(rename = "type", default, borrow)]
    pub(super) ty: Option<&'a RawValue>,
}

/// One page: its entries, and the cursor of the next page if any.
pub(super) struct Page<'a> {
    pub(super) entries: Vec<&'a RawValue>,
    pub(super) next_cursor: Option<String>,
}

/// Parses a `tools/list` result the serde way.
pub(super) fn parse_page(result: &str) -> Result<Page<'_>, String> {
    let wire: PageWire<'_> = serde_json::from_str(result).map_err(|e| e.to_string())?;
    match wire.result_type {
        None | Some("complete") => {}
        Some(other) => {
            return Err(format!(
                "unexpected resultType {:?}",
                crate::error::truncated(other, 64)
            ))
        }
    }
    Ok(Page {
        entries: wire.tools,
        next_cursor: wire.next_cursor,
    })
}
