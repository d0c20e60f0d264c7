//! What a listing says of its own caching (2026-07-28, SEP-2549: `ttlMs` and `cacheScope` of
//! every `tools/list` page), and a catalog rebuilt from the pages it kept, read again by the
//! same reader under the same budgets.

use crate::prelude::*;

use bytes::Bytes;

use super::{add_page, Catalog, Names, PageError, ToolNameRule};
use crate::budget::{Budget, BudgetExceeded, Budgets};
use crate::error::Error;

/// Who may be given a cached listing, as the server declares it (`cacheScope`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CacheScope {
    /// Only the authorization context that fetched it (`"private"`, and the reading of anything
    /// else: absent, another value, a member given twice).
    #[default]
    Private,
    /// Any client, in the server's view (`"public"`). A client still keeps its cache per
    /// authorization context ([`AuthContext`](crate::AuthContext)): the server does not decide
    /// who else may see its answer.
    Public,
}

/// How long a listing may be reused, and for whom: what its pages declared, the most
/// restrictive of them (the least `ttlMs`, `private` if any page is).
///
/// `ttlMs` counts only as a JSON integer ≥ 0 (digits only: no sign, fraction or exponent),
/// given once; absent, negative or anything else is 0, which the specification reads as
/// "stale immediately": no caching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CacheHint {
    /// How long the listing stays fresh after it was received, in milliseconds (0: not at all).
    pub ttl_ms: u64,
    /// For whom.
    pub scope: CacheScope,
}

/// The caching members of one page, as either reading meets them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PageHint {
    ttl: Option<u64>,
    scope: Option<CacheScope>,
    ttl_twice: bool,
    scope_twice: bool,
}

impl PageHint {
    /// The raw JSON value of a `ttlMs` member.
    pub(crate) fn ttl(&mut self, raw: &[u8]) {
        self.ttl_twice |= self.ttl.is_some();
        self.ttl = Some(ttl_of(raw));
    }

    /// The raw JSON value of a `cacheScope` member.
    pub(crate) fn scope(&mut self, raw: &[u8]) {
        self.scope_twice |= self.scope.is_some();
        self.scope = Some(scope_of(raw));
    }

    /// What one result declared: the members read so far, a member given twice read as its
    /// most restrictive value (0, `private`).
    pub(crate) fn hint(self) -> CacheHint {
        CacheHint {
            ttl_ms: if self.ttl_twice {
                0
            } else {
                self.ttl.unwrap_or(0)
            },
            scope: if self.scope_twice {
                CacheScope::Private
            } else {
                self.scope.unwrap_or_default()
            },
        }
    }

    /// The caching members of a JSON object `result` (already checked to be JSON): its own
    /// `ttlMs` and `cacheScope`, not those of nested objects. A member name with escapes is
    /// compared decoded.
    pub(crate) fn of_object(result: &[u8]) -> PageHint {
        let mut hint = PageHint::default();
        let json = crate::json::ws(result, 0);
        if result.get(json) != Some(&b'{') {
            return hint;
        }
        let mut i = json + 1;
        loop {
            i = crate::json::ws(result, i);
            if result.get(i) != Some(&b'"') {
                return hint;
            }
            let Some((end, escaped)) = crate::json::string(result, i, false) else {
                return hint;
            };
            let quoted = result.get(i..end).unwrap_or_default();
            let decoded;
            let name: &[u8] = if escaped {
                decoded = crate::json::unescape(quoted).unwrap_or_default();
                decoded.as_bytes()
            } else {
                quoted
                    .get(1..quoted.len().saturating_sub(1))
                    .unwrap_or_default()
            };
            i = crate::json::ws(result, end);
            if result.get(i) != Some(&b':') {
                return hint;
            }
            let start = crate::json::ws(result, i + 1);
            let Some(value_end) = crate::json::skip(result, start) else {
                return hint;
            };
            let value = result.get(start..value_end).unwrap_or_default();
            match name {
                b"ttlMs" => hint.ttl(value),
                b"cacheScope" => hint.scope(value),
                _ => {}
            }
            i = crate::json::ws(result, value_end);
            match result.get(i) {
                Some(b',') => i += 1,
                _ => return hint,
            }
        }
    }

    /// Adds this page's hint to `catalog` (whose `pages` does not count this page yet).
    pub(crate) fn merge_into(self, catalog: &mut Catalog) {
        let page = self.hint();
        catalog.cache = if catalog.pages == 0 {
            page
        } else {
            CacheHint {
                ttl_ms: catalog.cache.ttl_ms.min(page.ttl_ms),
                scope: match (catalog.cache.scope, page.scope) {
                    (CacheScope::Public, CacheScope::Public) => CacheScope::Public,
                    _ => CacheScope::Private,
                },
            }
        };
    }
}

fn trim(raw: &[u8]) -> &[u8] {
    let start = crate::json::ws(raw, 0);
    let mut end = raw.len();
    while end > start && matches!(raw.get(end - 1), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        end -= 1;
    }
    raw.get(start..end).unwrap_or_default()
}

/// A `ttlMs` value: its integer if written with digits only and within `u64`, else 0.
fn ttl_of(raw: &[u8]) -> u64 {
    let digits = trim(raw);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    digits
        .iter()
        .try_fold(0u64, |n, d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(0)
}

/// A `cacheScope` value: public only if it is the string `public` (escapes decoded).
fn scope_of(raw: &[u8]) -> CacheScope {
    let text = trim(raw);
    let public = text == b"\"public\""
        || (text.first() == Some(&b'"')
            && text.contains(&b'\\')
            && crate::json::unescape(text).as_deref() == Some("public"));
    if public {
        CacheScope::Public
    } else {
        CacheScope::Private
    }
}

impl Catalog {
    /// The `result` of each page this catalog was listed from, byte for byte, in order: what a
    /// cache stores, to rebuild the catalog with [`Catalog::from_pages`].
    pub fn result_pages(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.kept.0.iter().map(|p| &p[..])
    }

    /// Rebuilds a catalog from stored `tools/list` results (as [`Catalog::result_pages`] gave
    /// them), without a request: each page is read by the same reader as from the wire, under
    /// the same `budgets` (`pages`, `response_bytes` per page) and name `rule`, and the pages
    /// must chain as a listing does (every page but the last names a next cursor, never one
    /// seen before). Stored bytes can therefore bring nothing that an answer on the wire could
    /// not; any defect is an error, and the caller treats it as a miss.
    pub fn from_pages<'p>(
        pages: impl IntoIterator<Item = &'p [u8]>,
        rule: ToolNameRule,
        budgets: &Budgets,
    ) -> Result<Catalog, Error> {
        let invalid = |reason: &str| Error::InvalidAnswer {
            method: "tools/list".to_owned(),
            reason: reason.to_owned(),
        };
        let mut catalog = Catalog::default();
        let mut names = Names::default();
        let mut entries = 0;
        let mut seen = BTreeSet::new();
        let mut more = true;
        for page in pages {
            if !more {
                return Err(invalid("a stored page after the last"));
            }
            if catalog.pages >= budgets.pages {
                let limit = u64::from(budgets.pages);
                return Err(Error::Budget(BudgetExceeded::new(Budget::Pages, limit)));
            }
            if page.len() as u64 > budgets.response_bytes {
                let limit = budgets.response_bytes;
                return Err(Error::Budget(BudgetExceeded::new(
                    Budget::ResponseBytes,
                    limit,
                )));
            }
            let text = core::str::from_utf8(page).map_err(|_| invalid("not UTF-8"))?;
            let raw: &serde_json::value::RawValue =
                serde_json::from_str(text).map_err(|_| invalid("not JSON"))?;
            let cursor = add_page(
                &mut catalog,
                &mut names,
                &mut entries,
                rule,
                None,
                raw.into(),
            )
            .map_err(|e| match e {
                PageError::Invalid(reason) => invalid(&reason),
                PageError::Malformed(e) => Error::Protocol(e),
            })?;
            catalog.pages += 1;
            match cursor {
                Some(c) => {
                    if !seen.insert(c) {
                        return Err(invalid("a cursor seen before"));
                    }
                }
                None => more = false,
            }
        }
        if more {
            return Err(invalid("the stored listing does not end"));
        }
        Ok(catalog)
    }
}

/// The page `result` as kept by a catalog: a slice of `page` without a copy if it lies in it.
pub(crate) fn kept_page(page: &Bytes, result: &[u8]) -> Bytes {
    let (w, p) = (page.as_ptr() as usize, result.as_ptr() as usize);
    match p.checked_sub(w) {
        Some(at) if at + result.len() <= page.len() => page.slice(at..at + result.len()),
        _ => Bytes::copy_from_slice(result),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_and_scope_values() {
        for (raw, want) in [
            ("300000", 300_000),
            (" 5 ", 5),
            ("0", 0),
            ("-1", 0),
            ("-0", 0),
            ("1.5", 0),
            ("1e3", 0),
            ("\"5\"", 0),
            ("null", 0),
            ("18446744073709551615", u64::MAX),
            ("18446744073709551616", 0),
        ] {
            assert_eq!(ttl_of(raw.as_bytes()), want, "{raw}");
        }
        for (raw, want) in [
            ("\"public\"", CacheScope::Public),
            ("\"pub\\u006cic\"", CacheScope::Public),
            ("\"private\"", CacheScope::Private),
            ("\"Public\"", CacheScope::Private),
            ("true", CacheScope::Private),
        ] {
            assert_eq!(scope_of(raw.as_bytes()), want, "{raw}");
        }
    }

    #[test]
    fn a_kept_page_shares_the_buffer_it_lies_in_and_copies_what_lies_outside() {
        let whole = Bytes::from_static(b"0123456789abcdefghij");
        let page = whole.slice(0..10);
        // Inside the page (at its start, within, at its end): a slice of it, no copy.
        for (s, e) in [(0, 4), (3, 7), (6, 10), (0, 10)] {
            let kept = kept_page(&page, &page[s..e]);
            assert_eq!(&kept[..], &page[s..e], "{s}..{e}");
            assert_eq!(kept.as_ptr(), page[s..].as_ptr(), "{s}..{e}");
        }
        // Past the page's end (though in the same allocation), or elsewhere: a copy.
        for result in [&whole[8..14], &whole[10..12], b"elsewhere".as_slice()] {
            let kept = kept_page(&page, result);
            assert_eq!(&kept[..], result);
            assert_ne!(kept.as_ptr(), result.as_ptr());
        }
    }
}
