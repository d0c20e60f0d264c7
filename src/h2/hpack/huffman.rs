//! Huffman decoding of HPACK string literals (RFC 7541 §5.2, Appendix B).
//!
//! The code is canonical: within one length, codes rise with the symbol. Decoding walks the input
//! bit by bit against a per-length table of first codes, so it needs no tree and no allocation
//! beyond the output, which the caller bounds.
use crate::prelude::*;

use super::tables::HUFFMAN_CODES;
use super::HpackError;

/// The longest code, in bits (EOS).
const MAX_LEN: usize = 30;

/// Per code length: the first code of that length, how many codes have it, and where their
/// symbols start in [`SYMBOLS`].
struct Canonical {
    first: [u32; MAX_LEN + 1],
    count: [u32; MAX_LEN + 1],
    offset: [u16; MAX_LEN + 1],
    symbols: [u16; 257],
}

const fn build() -> Canonical {
    let mut c = Canonical {
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        offset: [0; MAX_LEN + 1],
        symbols: [0; 257],
    };
    let mut next = 0usize;
    let mut len = 1usize;
    while len <= MAX_LEN {
        c.offset[len] = next as u16;
        let mut sym = 0usize;
        let mut seen = false;
        while sym < 257 {
            let (code, l) = HUFFMAN_CODES[sym];
            if l as usize == len {
                if !seen {
                    c.first[len] = code;
                    seen = true;
                }
                c.symbols[next] = sym as u16;
                next += 1;
                c.count[len] += 1;
            }
            sym += 1;
        }
        len += 1;
    }
    c
}

static CANONICAL: Canonical = build();

/// Decodes `input` into `out`, failing with [`HpackError::StringTooLong`] before `out` would pass
/// `limit` bytes in all (the bound is checked per symbol, before it is pushed).
pub(crate) fn decode(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), HpackError> {
    let t = &CANONICAL;
    let mut code: u32 = 0;
    let mut len: usize = 0;
    for &byte in input {
        for shift in (0..8).rev() {
            code = (code << 1) | u32::from((byte >> shift) & 1);
            len += 1;
            let n = t.count[len];
            if n > 0 && code >= t.first[len] && code - t.first[len] < n {
                let sym = t.symbols[usize::from(t.offset[len]) + (code - t.first[len]) as usize];
                if sym == 256 {
                    return Err(HpackError::HuffmanEos);
                }
                if out.len() >= limit {
                    return Err(HpackError::StringTooLong {
                        limit: limit as u64,
                    });
                }
                out.push(sym as u8);
                code = 0;
                len = 0;
            } else if len >= MAX_LEN {
                // Unreachable with a complete code; kept so no input can index past the tables.
                return Err(HpackError::HuffmanPadding);
            }
        }
    }
    // What is left must be a prefix of EOS (all ones) shorter than one octet.
    if len >= 8 || code != (1u32 << len) - 1 {
        return Err(HpackError::HuffmanPadding);
    }
    Ok(())
}

/// The Huffman-coded length of `input` in octets (used by tests and to size buffers).
pub fn encoded_len(input: &[u8]) -> usize {
    let bits: usize = input
        .iter()
        .map(|&b| usize::from(HUFFMAN_CODES[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// Huffman-codes `input` onto `out`. The client's encoder never uses this (no Huffman on the
/// wire, see the module docs); it exists so tests can build coded blocks.
pub fn encode(input: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    for &b in input {
        let (code, len) = HUFFMAN_CODES[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
        acc &= (1u64 << bits) - 1;
    }
    if bits > 0 {
        let pad = 8 - bits;
        out.push(((acc << pad) as u8) | ((1u8 << pad) - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_canonical() {
        // Within each length, codes are consecutive in symbol order, and each length's first code
        // follows from the previous one: the assumption the decoder's tables rest on.
        let mut prev: Option<(u32, u8)> = None;
        let mut by_len: Vec<(u8, u32)> = HUFFMAN_CODES.iter().map(|&(c, l)| (l, c)).collect();
        by_len.sort();
        for &(l, c) in &by_len {
            if let Some((pc, pl)) = prev {
                assert_eq!(c, (pc + 1) << (l - pl), "length {l}");
            }
            prev = Some((c, l));
        }
        for len in 1..=MAX_LEN {
            let syms: Vec<usize> = (0..257)
                .filter(|&s| HUFFMAN_CODES[s].1 as usize == len)
                .collect();
            for w in syms.windows(2) {
                assert_eq!(HUFFMAN_CODES[w[1]].0, HUFFMAN_CODES[w[0]].0 + 1);
            }
        }
    }

    #[test]
    fn every_octet_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let mut coded = Vec::new();
        encode(&all, &mut coded);
        assert_eq!(coded.len(), encoded_len(&all));
        let mut out = Vec::new();
        decode(&coded, &mut out, 256).unwrap();
        assert_eq!(out, all);
        let mut short = Vec::new();
        assert_eq!(
            decode(&coded, &mut short, 255),
            Err(HpackError::StringTooLong { limit: 255 })
        );
    }

    #[test]
    fn eos_and_bad_padding_are_refused() {
        let mut out = Vec::new();
        // EOS coded explicitly: 30 one bits, padded with ones.
        assert_eq!(
            decode(&[0xff, 0xff, 0xff, 0xff], &mut out, 10),
            Err(HpackError::HuffmanEos)
        );
        // 'a' is 00011 (5 bits); padding with zeros is refused.
        assert_eq!(
            decode(&[0b0001_1000], &mut out, 10),
            Err(HpackError::HuffmanPadding)
        );
        // A whole octet of padding is refused.
        out.clear();
        assert_eq!(
            decode(&[0b0001_1111, 0xff], &mut out, 10),
            Err(HpackError::HuffmanPadding)
        );
        out.clear();
        decode(&[0b0001_1111], &mut out, 10).unwrap();
        assert_eq!(out, b"a");
    }
}
