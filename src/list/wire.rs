//! The serde reading of a page and of its entries: what the one pass (`pass.rs`) leaves to it
//! decides, and gives the reasons, as before the one pass existed.

use crate::prelude::*;

use alloc::borrow::Cow;
use core::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
pub(super) struct ToolWire<'a> {
    #[serde(default, borrow)]
    pub(super) name: Option<NameWire<'a>>,
    #[serde(default, borrow)]
    pub(super) description: Option<&'a RawValue>,
    #[serde(rename = "inputSchema", default, borrow)]
    pub(super) input_schema: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) title: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) annotations: Option<&'a RawValue>,
    #[serde(rename = "outputSchema", default, borrow)]
    pub(super) output_schema: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) icons: Option<&'a RawValue>,
    #[serde(rename = "_meta", default, borrow)]
    pub(super) meta: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) execution: Option<&'a RawValue>,
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

/// The members of a page the serde reading knows (any other is read and ignored).
#[derive(Deserialize)]
#[serde(field_identifier)]
enum PageField {
    #[serde(rename = "tools")]
    Tools,
    #[serde(rename = "nextCursor")]
    NextCursor,
    #[serde(rename = "resultType")]
    ResultType,
    #[serde(rename = "ttlMs")]
    TtlMs,
    #[serde(rename = "cacheScope")]
    CacheScope,
    #[serde(other)]
    Other,
}

/// What a page's struct is called in serde's messages (as a derived reader would name it).
const PAGE: &str = "PageWire";

/// Reads a page object, handing each entry of its `tools` to `entry` as the entry is read: no
/// list of the entries is built, so that a page of tiny entries costs no memory per entry here.
/// Reads what a derived `Deserialize` of `{tools: Vec<&RawValue>, nextCursor: Option<String>,
/// resultType: Option<&str>}` (the last two defaulted) reads, and refuses what it refuses with the
/// same messages; an error may come after some entries were handed on.
struct PageSeed<F>(F);

/// The `tools` array of [`PageSeed`].
struct EntriesSeed<'f, F>(&'f mut F);

impl<'de, F: FnMut(&'de RawValue)> DeserializeSeed<'de> for EntriesSeed<'_, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(&'de RawValue)> Visitor<'de> for EntriesSeed<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(entry) = seq.next_element::<&'de RawValue>()? {
            (self.0)(entry);
        }
        Ok(())
    }
}

/// A page's cursor, `resultType` and caching members, as [`PageSeed`] read them.
type PageEnd<'de> = (
    Option<String>,
    Option<Cow<'de, str>>,
    super::cache::PageHint,
);

impl<'de, F: FnMut(&'de RawValue)> DeserializeSeed<'de> for PageSeed<F> {
    type Value = PageEnd<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_struct(PAGE, &["tools", "nextCursor", "resultType"], self)
    }
}

impl<'de, F: FnMut(&'de RawValue)> Visitor<'de> for PageSeed<F> {
    type Value = PageEnd<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {PAGE}")
    }
    // A page written as an array is refused: a page is a JSON object (the MCP schema), which
    // serde's derived reading would also take by position from an array.
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut tools, mut next, mut result_type) = (false, None, None);
        let mut hint = super::cache::PageHint::default();
        while let Some(field) = map.next_key::<PageField>()? {
            match field {
                PageField::Tools => {
                    if tools {
                        return Err(serde::de::Error::duplicate_field("tools"));
                    }
                    map.next_value_seed(EntriesSeed(&mut self.0))?;
                    tools = true;
                }
                PageField::NextCursor => {
                    if next.is_some() {
                        return Err(serde::de::Error::duplicate_field("nextCursor"));
                    }
                    next = Some(map.next_value::<Option<String>>()?);
                }
                PageField::ResultType => {
                    if result_type.is_some() {
                        return Err(serde::de::Error::duplicate_field("resultType"));
                    }
                    result_type = Some(map.next_value::<Option<Cow<'de, str>>>()?);
                }
                // Given twice, a caching member is void (no caching), not an error.
                PageField::TtlMs => hint.ttl(map.next_value::<&'de RawValue>()?.get().as_bytes()),
                PageField::CacheScope => {
                    hint.scope(map.next_value::<&'de RawValue>()?.get().as_bytes());
                }
                PageField::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        if !tools {
            return Err(serde::de::Error::missing_field("tools"));
        }
        Ok((next.flatten(), result_type.flatten(), hint))
    }
}

/// Reads a `tools/list` result the serde way, handing each of its entries to `entry` as it is
/// read, and returns the cursor of the next page and the page's caching members. After an
/// error, some entries may have been handed on already.
pub(super) fn read_page<'a>(
    result: &'a str,
    entry: impl FnMut(&'a RawValue),
) -> Result<(Option<String>, super::cache::PageHint), String> {
    let mut de = serde_json::Deserializer::from_str(result);
    let (next_cursor, result_type, hint) = PageSeed(entry)
        .deserialize(&mut de)
        .and_then(|end| de.end().map(|()| end))
        .map_err(|e| e.to_string())?;
    // Borrowed unless written with escapes (`"compl\u0065te"` is `complete` too).
    match result_type.as_deref() {
        None | Some("complete") => Ok((next_cursor, hint)),
        Some(other) => Err(format!(
            "unexpected resultType {:?}",
            crate::error::truncated(other, 64)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page as a derived reader reads it: what [`read_page`] must agree with.
    #[derive(Deserialize)]
    struct PageWire<'a> {
        #[serde(borrow)]
        tools: Vec<&'a RawValue>,
        #[serde(rename = "nextCursor", default)]
        next_cursor: Option<String>,
        #[serde(rename = "resultType", default)]
        result_type: Option<&'a str>,
    }

    fn derived(text: &str) -> Result<(Vec<String>, Option<String>), String> {
        let wire: PageWire<'_> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        match wire.result_type {
            None | Some("complete") => {}
            Some(other) => {
                return Err(format!(
                    "unexpected resultType {:?}",
                    crate::error::truncated(other, 64)
                ))
            }
        }
        let entries = wire.tools.iter().map(|e| e.get().to_owned()).collect();
        Ok((entries, wire.next_cursor))
    }

    fn streamed(text: &str) -> Result<(Vec<String>, Option<String>), String> {
        let mut entries = Vec::new();
        let (next, _) = read_page(text, |e| entries.push(e.get().to_owned()))?;
        Ok((entries, next))
    }

    #[test]
    fn reads_and_refuses_pages_as_a_derived_reader_does() {
        let pages = [
            r#"{"tools":[]}"#,
            r#"{"tools":[{},1,"x",null,[2]],"nextCursor":"c"}"#,
            r#"{"nextCursor":"c","resultType":"complete","tools":[{"a":1}]}"#,
            r#"{"tools":[],"nextCursor":null,"resultType":null}"#,
            r#"{"t\u006fols":[{}],"next\u0043ursor":"c\u0032"}"#,
            r#"{"tools":[{}],"extra":{"deep":[[[]]]},"ttlMs":5}"#,
            r#"{"tools":[{}],"tools":[]}"#,
            r#"{"tools":[],"t\u006fols":[]}"#,
            r#"{"tools":[],"nextCursor":"a","nextCursor":"b"}"#,
            r#"{"tools":[],"resultType":"a","resultType":"b"}"#,
            r#"{"tools":[],"resultType":"other"}"#,
            r#"{"nextCursor":"c"}"#,
            r#"{}"#,
            r#"{"tools":null}"#,
            r#"{"tools":{}}"#,
            r#"{"tools":[],"nextCursor":5}"#,
            r#"{"tools":[1,]}"#,
            r#"{"tools":[]} x"#,
            r#"{"tools":[]}  "#,
            r#"17"#,
            r#""page""#,
            r#"null"#,
            "",
            r#"{"tools":[{"name":"a"}"#,
        ];
        for page in pages {
            assert_eq!(streamed(page), derived(page), "{page}");
        }
    }

    #[test]
    fn refuses_pages_written_as_arrays_and_reads_an_escaped_result_type() {
        for page in [r#"[[{}]]"#, r#"[[{}],"c","complete"]"#] {
            assert!(derived(page).is_ok(), "{page}");
        }
        for page in [r#"[[{}]]"#, r#"[[{}],"c","complete"]"#, "[]", "[null]"] {
            assert!(streamed(page).is_err(), "{page}");
        }
        let page = r#"{"tools":[{}],"resultType":"compl\u0065te","nextCursor":"c"}"#;
        assert_eq!(
            streamed(page),
            Ok((vec!["{}".to_owned()], Some("c".to_owned())))
        );
    }

    #[test]
    fn hands_on_each_entry_as_it_is_read() {
        // The entries before a duplicate `tools` are handed on, then the page is refused.
        let mut seen = 0;
        let r = read_page(r#"{"tools":[{},{}],"tools":[]}"#, |_| seen += 1);
        assert_eq!(seen, 2);
        assert!(r.unwrap_err().contains("duplicate field `tools`"));
    }
}
