//! The name table against a plain list of names (the oracle: a name is a duplicate when an equal
//! string was accepted and not rolled back).

use super::*;

use alloc::sync::Arc;
use bytes::Bytes;

use crate::list::Span;

/// Tools named `names`, sharing one page.
fn tools(names: &[String]) -> Vec<Tool> {
    let page = Arc::new(Bytes::from(names.concat()));
    let mut at = 0u32;
    names
        .iter()
        .map(|n| {
            let name = Span {
                start: at,
                len: n.len() as u32,
            };
            at += n.len() as u32;
            Tool {
                page: Arc::clone(&page),
                name,
                description: Span::NONE,
                schema: Span::NONE,
                title: Span::NONE,
                annotations: Span::NONE,
                extra: None,
            }
        })
        .collect()
}

/// The longest chain of any bucket.
fn longest_chain(names: &Names) -> usize {
    names
        .heads
        .iter()
        .map(|&head| {
            let mut n = 0;
            let mut at = head;
            while let Some(&(_, prev)) = names.tools.get(at as usize) {
                n += 1;
                at = prev;
            }
            n
        })
        .max()
        .unwrap_or(0)
}

/// A name per number, of many lengths (so that every tail length of the hash is taken).
fn name(n: usize) -> String {
    format!("t{n}_{}", "x".repeat(n % 40))
}

/// Inserts `names` one by one as a listing does (skipping a name already in), checking each
/// answer against the plain list; returns the table and the names kept, in order.
fn fill(mut table: Names, names: &[String]) -> (Names, Vec<String>) {
    let mut kept: Vec<String> = Vec::new();
    for n in names {
        let catalog = tools(&kept);
        let expected = kept.contains(n);
        assert_eq!(table.contains(&catalog, n), expected, "{n}");
        if !expected {
            let h = table.hash(n);
            kept.push(n.clone());
            table.insert(&tools(&kept), h);
        }
    }
    (table, kept)
}

#[test]
fn duplicates_found_across_growth_and_rollback() {
    // Each name twice, the second time later, across several doublings of the table.
    let mut names: Vec<String> = (0..600).map(name).collect();
    names.extend((0..600).step_by(7).map(name));
    names.extend((0..600).rev().step_by(13).map(name));
    let (mut table, kept) = fill(Names::default(), &names);
    assert_eq!(kept.len(), 600);
    let catalog = tools(&kept);
    assert!(longest_chain(&table) <= MAX_CHAIN);
    // Rolled back to 250 tools: the first 250 names are in, the others not.
    table.truncate(&catalog, 250);
    let catalog = tools(&kept[..250]);
    for (i, n) in kept.iter().enumerate() {
        assert_eq!(table.contains(&catalog, n), i < 250, "{n}");
    }
    // And they can be added again.
    let again: Vec<String> = kept.iter().skip(250).cloned().collect();
    let mut all = kept[..250].to_vec();
    for n in &again {
        let catalog = tools(&all);
        assert!(!table.contains(&catalog, n), "{n}");
        let h = table.hash(n);
        all.push(n.clone());
        table.insert(&tools(&all), h);
    }
    let catalog = tools(&all);
    assert!(kept.iter().all(|n| table.contains(&catalog, n)));
    assert!(!table.contains(&catalog, "t600_"));
}

#[test]
fn a_crowded_bucket_spills_and_stays_searchable() {
    // Under a known key, names that all fall in one bucket of the first table (fewer tools than
    // its buckets, so that it does not grow): the chain stops at MAX_CHAIN, the rest spill.
    let key = 0x0123_4567_89ab_cdef;
    let probe = Names::with_key(key);
    let bucket = |n: &str| probe.hash(n) as usize % MIN_BUCKETS;
    let crowd: Vec<String> = (0..100_000)
        .map(|n| format!("n{n}"))
        .filter(|n| bucket(n) == 5)
        .take(MIN_BUCKETS - 4)
        .collect();
    assert_eq!(crowd.len(), MIN_BUCKETS - 4);
    let mut names = crowd.clone();
    names.extend(crowd.iter().rev().cloned());
    let (mut table, kept) = fill(Names::with_key(key), &names);
    assert_eq!(kept, crowd);
    assert_eq!(table.heads.len(), MIN_BUCKETS);
    assert_eq!(longest_chain(&table), MAX_CHAIN);
    assert_eq!(table.spilled.len(), crowd.len() - MAX_CHAIN);
    // Rolled back into the spilled ones, then before the chain filled.
    let catalog = tools(&kept);
    table.truncate(&catalog, MAX_CHAIN + 3);
    assert_eq!(table.spilled.len(), 3);
    let catalog = tools(&kept[..MAX_CHAIN + 3]);
    for (i, n) in kept.iter().enumerate() {
        assert_eq!(table.contains(&catalog, n), i < MAX_CHAIN + 3, "{n}");
    }
    table.truncate(&catalog, 2);
    assert!(table.spilled.is_empty());
    assert_eq!(longest_chain(&table), 2);
    let catalog = tools(&kept[..2]);
    for (i, n) in kept.iter().enumerate() {
        assert_eq!(table.contains(&catalog, n), i < 2, "{n}");
    }
}

#[test]
fn the_hash_reads_every_byte() {
    // One byte changed anywhere (a word or the tail), or one byte more: another hash, for a
    // fixed key, on these names (the oracle: they differ; a hash that skips a byte or the length
    // maps some pair together).
    let table = Names::with_key(7);
    for len in 1..=24 {
        let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let h = table.hash(core::str::from_utf8(&base).unwrap());
        for at in 0..len {
            let mut other = base.clone();
            other[at] = b'Z';
            assert_ne!(
                table.hash(core::str::from_utf8(&other).unwrap()),
                h,
                "{len} {at}"
            );
        }
        let mut longer = base.clone();
        longer.push(0);
        assert_ne!(
            table.hash(core::str::from_utf8(&longer).unwrap()),
            h,
            "{len}"
        );
    }
}

#[test]
fn the_table_doubles_to_the_next_power_of_two_as_tools_come() {
    // 64 buckets for the first tool, and never fewer buckets than tools: 65 tools take 128,
    // 600 take 1024 (a table that did not double would chain, or spill, far more).
    let names: Vec<String> = (0..600).map(name).collect();
    for (n, buckets) in [
        (1, 64),
        (64, 64),
        (65, 128),
        (128, 128),
        (129, 256),
        (600, 1024),
    ] {
        let (table, kept) = fill(Names::default(), &names[..n]);
        assert_eq!(kept.len(), n);
        assert_eq!(table.heads.len(), buckets, "{n}");
    }
}

#[test]
#[cfg(feature = "std")]
fn each_listing_has_its_own_key() {
    // Keyed per listing: two tables hash the same name apart (a fixed key would let a server
    // that learns it crowd every listing's buckets alike).
    let (a, b) = (Names::default(), Names::default());
    assert_ne!(a.key, b.key);
    let same = (0..64).all(|n| a.hash(&name(n)) == b.hash(&name(n)));
    assert!(!same);
}

#[test]
fn names_of_one_hash_are_told_apart_by_their_text() {
    // Two names whose hashes are equal (found by search under a known key, so in one bucket):
    // the second is not a duplicate of the first; the first given again is.
    let key = 0x0123_4567_89ab_cdef;
    let probe = Names::with_key(key);
    let mut seen = alloc::collections::BTreeMap::new();
    let (first, second) = (0..1_000_000u32)
        .map(|n| format!("n{n}"))
        .find_map(|n| {
            seen.insert(probe.hash(&n), n.clone())
                .map(|first| (first, n))
        })
        .unwrap();
    assert_ne!(first, second);
    let (_, kept) = fill(
        Names::with_key(key),
        &[first.clone(), second.clone(), first.clone()],
    );
    assert_eq!(kept, [first, second]);
}

#[test]
fn names_spread_over_the_buckets() {
    // Under a fixed key, 1,000 names of four shapes (differing at the start or the end of the
    // first 8-byte word, in a later word, or in the tail) in a table of 1,024 buckets: none spills, no chain is
    // long, and the buckets used are about as many as for random hashes (1,024 × (1 − e^−1000/1024)
    // ≈ 639). A hash that maps names to few buckets (a constant, one that drops a word or the
    // key) fails here, though the table still finds every duplicate (by the chain cap and the
    // spill set): only the cost of a listing grows.
    let shapes: [fn(usize) -> String; 4] = [
        |n| format!("{n}_tool"),
        |n| format!("{n:08}"),
        |n| format!("a_common_prefix_{n:06}"),
        |n| format!("{}{n}", "y".repeat(n % 13)),
    ];
    // An odd key and an even one (the last multiply takes the key with its low bit set).
    for (k, shape) in shapes.iter().enumerate() {
        for key in [0x0123_4567_89ab_cdef, 0x0123_4567_89ab_cdee] {
            let names: Vec<String> = (0..1000).map(shape).collect();
            let (table, kept) = fill(Names::with_key(key), &names);
            assert_eq!(kept.len(), 1000, "shape {k}");
            assert_eq!(table.heads.len(), 1024, "shape {k}");
            let used = table.heads.iter().filter(|&&h| h != NO_TOOL).count();
            assert!(
                table.spilled.is_empty(),
                "shape {k}: {} spilled",
                table.spilled.len()
            );
            assert!(
                longest_chain(&table) <= 6,
                "shape {k}: {}",
                longest_chain(&table)
            );
            assert!(
                (590..=690).contains(&used),
                "shape {k}: {used} buckets used"
            );
        }
    }
}
