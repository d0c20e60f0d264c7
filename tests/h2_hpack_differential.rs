//! Differential test: blocks encoded by the Python `hpack` package (Huffman, incremental
//! indexing, never-indexed fields, table size updates) decode here to the lists it encoded.
//!
//! Needs `python3` with `hpack` (`pip install hpack`); without them this test fails, saying so.

use std::process::Command;

use mcp_sansio::internals::h2::hpack::{DecodeLimits, Decoder};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn blocks_from_python_hpack_decode_to_what_it_encoded() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/hpack-vectors.py");
    let mut blocks_checked = 0;
    let mut fields_checked = 0;
    for seed in 0..4 {
        let out = Command::new("python3")
            .args([script, &seed.to_string(), "50"])
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run python3 ({e}): install Python 3 and `pip install hpack`")
            });
        assert!(
            out.status.success(),
            "scripts/hpack-vectors.py failed (is the Python package missing? `pip install hpack`): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        for (line_no, line) in text.lines().enumerate() {
            let conn: serde_json::Value = serde_json::from_str(line).unwrap();
            let mut d = Decoder::new(DecodeLimits {
                max_list_bytes: 1 << 20,
                max_fields: 1000,
            });
            for (i, b) in conn["blocks"].as_array().unwrap().iter().enumerate() {
                let block = unhex(b["block"].as_str().unwrap());
                let want: Vec<(Vec<u8>, Vec<u8>, bool)> = b["fields"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        (
                            unhex(f[0].as_str().unwrap()),
                            unhex(f[1].as_str().unwrap()),
                            f[2].as_bool().unwrap(),
                        )
                    })
                    .collect();
                // Whole, and one octet at a time on a copy: the same list.
                let mut split = d.clone();
                let got = d
                    .decode_block(&block)
                    .unwrap_or_else(|e| panic!("seed {seed} line {line_no} block {i}: {e}"));
                for o in &block {
                    split.feed(std::slice::from_ref(o)).unwrap();
                }
                assert_eq!(
                    split.finish().unwrap(),
                    got,
                    "seed {seed} line {line_no} block {i}"
                );
                let got: Vec<(Vec<u8>, Vec<u8>, bool)> = got
                    .into_iter()
                    .map(|h| (h.name, h.value, h.never_indexed))
                    .collect();
                assert_eq!(got, want, "seed {seed} line {line_no} block {i}");
                blocks_checked += 1;
                fields_checked += want.len();
            }
        }
    }
    assert!(blocks_checked > 500, "{blocks_checked} blocks");
    assert!(fields_checked > 3000, "{fields_checked} fields");
}
