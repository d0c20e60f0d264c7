#!/usr/bin/env python3
"""Writes the seed corpus of the `hostile_server` fuzz target from recorded transcripts.

Usage: scripts/fuzz-seeds.py TRANSCRIPTS_DIR [OUT_DIR]
  (in this repository: scripts/fuzz-seeds.py crates/transcript/tests/transcripts/recorded)

TRANSCRIPTS_DIR holds `*.jsonl` transcripts (one exchange per line: request method and body,
response status line, headers and de-chunked body). OUT_DIR defaults to
fuzz/corpus/hostile_server. One seed per transcript, in the target's input layout (see
fuzz/fuzz_targets/hostile_server.rs): hint byte, operations byte, piece-size byte, then the
responses separated by NUL R, with every JSON-RPC response id replaced by `$ID` (the target pads
the id to three bytes, so Content-Length stays right) and chunked bodies re-framed as one chunk.
"""
import json
import pathlib
import re
import sys

ID = re.compile(rb'"id":\s*(\d{1,3})(?=[,}\s])')


def render(resp):
    status = resp["status_line"].encode()
    body = resp.get("body") or ""
    body = ID.sub(b'"id":$ID', body.encode())
    chunked = False
    lines = [status]
    for name, value in resp.get("headers", []):
        low = name.lower()
        if low == "transfer-encoding":
            chunked = True
            continue
        if low in ("content-length", "connection"):
            continue
        lines.append(f"{name}: {value}".encode())
    if chunked:
        lines.append(b"transfer-encoding: chunked")
        framed = (b"%x\r\n" % len(body) + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    else:
        lines.append(b"content-length: %d" % len(body))
        framed = body
    return b"\r\n".join(lines) + b"\r\n\r\n" + framed


def seed(path):
    exchanges = [json.loads(l) for l in path.open() if l.strip()]
    methods = []
    replies = []
    for ex in exchanges:
        req = ex.get("request") or {}
        body = req.get("body")
        methods.append(body.get("method") if isinstance(body, dict) else req.get("method"))
        if ex.get("response"):
            replies.append(render(ex["response"]))
    hint = 0 if "server/discover" in methods else 2
    ops = (1 if "tools/list" in methods else 0) | (2 if "tools/call" in methods else 0)
    return bytes([hint, ops, 6]) + b"\0R".join(replies)


def main():
    src = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "fuzz/corpus/hostile_server")
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for path in sorted(src.glob("*.jsonl")):
        (out / path.stem).write_bytes(seed(path))
        n += 1
    print(f"{n} seeds in {out}")


if __name__ == "__main__":
    main()
