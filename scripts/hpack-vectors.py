#!/usr/bin/env python3
"""Generates HPACK blocks with the Python `hpack` package, for the differential test of our decoder.

Usage: scripts/hpack-vectors.py SEED CONNECTIONS

Prints one JSON object per line, one per simulated connection:
  {"blocks": [{"block": HEX, "fields": [[NAME_HEX, VALUE_HEX, NEVER_INDEXED], ...]}, ...]}
Every block of a line comes from the same encoder (so later blocks refer to its dynamic table),
with Huffman coding on or off per block, incremental indexing, never-indexed fields, and
dynamic table size updates (all within 4096). Exits 3 with a message if `hpack` is missing.
"""
import json
import random
import sys

try:
    import hpack
    from hpack import Encoder, HeaderTuple, NeverIndexedHeaderTuple
except ImportError:
    sys.stderr.write("the Python package `hpack` is missing: pip install hpack\n")
    sys.exit(3)

STATIC_NAMES = [
    ":status", "content-type", "content-length", "date", "server", "set-cookie", "cache-control",
    "location", "etag", "vary", "www-authenticate", "accept-ranges", "age",
]


def token(rng, n):
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_.!#$%&'*+^`|~"
    return "".join(rng.choice(alphabet) for _ in range(n))


def value(rng):
    kind = rng.random()
    if kind < 0.5:
        return bytes(rng.choice(range(0x20, 0x7f)) for _ in range(rng.randint(0, 60)))
    if kind < 0.8:
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 40)))
    return bytes(rng.choice(b"mcp-session-id0123456789abcdef") for _ in range(rng.randint(100, 700)))


def field(rng, seen):
    r = rng.random()
    if seen and r < 0.3:
        return rng.choice(seen)  # a repeat: found in the dynamic table
    name = rng.choice(STATIC_NAMES) if r < 0.6 else "x-" + token(rng, rng.randint(1, 20))
    return (name.encode(), value(rng))


def connection(rng):
    enc = Encoder()
    seen = []
    blocks = []
    for _ in range(rng.randint(1, 12)):
        if rng.random() < 0.15:
            enc.header_table_size = rng.choice([0, 64, 256, 1024, 4096])
        fields = []
        for _ in range(rng.randint(0, 20)):
            name, val = field(rng, seen)
            never = rng.random() < 0.1
            fields.append((name, val, never))
            seen.append((name, val))
        huffman = rng.random() < 0.7
        # One field at a time, so the flag expected back is known: `hpack` sends a never-indexed
        # field that the tables already hold whole as an index, which decodes as indexable.
        block = b"" if fields else enc.encode([], huffman=huffman)
        expected = []
        for n, v, nv in fields:
            held = enc.header_table.search(n, v)
            never = nv and not (held is not None and held[2] is not None)
            t = NeverIndexedHeaderTuple(n, v) if nv else HeaderTuple(n, v)
            block += enc.encode([t], huffman=huffman)
            expected.append([n.hex(), v.hex(), never])
        blocks.append({"block": block.hex(), "fields": expected})
    return {"blocks": blocks}


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    for _ in range(count):
        print(json.dumps(connection(rng)))


if __name__ == "__main__":
    main()
