#!/usr/bin/env python3
"""Converts recorded MCP exchanges into replay transcripts for mcp-sansio's core.

Input: `.jsonl` recordings of real servers, one line per exchange (a scripted client's request,
the server's status line, headers and whole body; for event streams, the events with the time
they arrived). The recordings used their own request sequence, so this script builds what
mcp-sansio's core sends for a scenario (connect, list every page, call tools, close) and answers
each of those requests with the recorded response to the matching request (same JSON-RPC method,
same tool name, same cursor). The answer's JSON-RPC id and progress token are rewritten to the
core's, and bodies are re-framed: chunked when the server sent chunked (one chunk per event for
event streams), `Content-Length` when it sent one, close-delimited otherwise.

The expected outcome written into each transcript (`event` lines) is derived from the recorded
server data: versions and server info from the recorded handshake, tool names from the recorded
pages, content blocks from the recorded results, error codes and messages from the recorded
errors. See docs/transcripts.md for the format.

Usage: scripts/convert-transcripts.py RECORDINGS_DIR OUT_DIR
  (in this repository: scripts/convert-transcripts.py crates/transcript/tests/transcripts/recorded \
  crates/transcript/tests/transcripts)
"""

import base64
import binascii
import json
import os
import re
import sys

CLIENT = ("mcp-sansio", "0.1.0")
MODERN = "2026-07-28"
LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
MAX_ERROR_MESSAGE = 1024
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def jstr(s):
    return json.dumps(s, ensure_ascii=False)


def compact(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def escape(data: bytes) -> str:
    out = []
    text = data.decode("utf-8", errors="surrogateescape")
    for ch in text:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # an undecodable byte
            out.append("\\x%02x" % (o - 0xDC00))
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or 0x7F <= o < 0xA0:
            out.append("".join("\\x%02x" % b for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def block(prefix: str, data: bytes) -> list:
    lines = []
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        lines.append(prefix + escape(data[start:end]))
        start = end
    return lines


def at(us: int) -> str:
    return "@%d.%03d" % (us // 1000, us % 1000)


def rewrite_message(text: str, old_id, new_id, tokens):
    """Rewrites the top-level JSON-RPC id (and progress tokens) in one message's JSON text,
    keeping every other byte."""
    try:
        msg = json.loads(text)
    except ValueError:
        return text
    if isinstance(msg, dict) and "progressToken" in text:
        for old, new in tokens:
            pat = r'("progressToken"\s*:\s*)' + re.escape(json.dumps(old))
            text = re.sub(pat, lambda m: m.group(1) + str(new), text)
    if not isinstance(msg, dict) or msg.get("id") != old_id or old_id is None:
        return text
    pat = re.compile(r'"id"\s*:\s*' + re.escape(json.dumps(old_id)) + r"(?=\s*[,}])")
    for m in pat.finditer(text):
        candidate = text[: m.start()] + '"id":' + str(new_id) + text[m.end():]
        try:
            c = json.loads(candidate)
        except ValueError:
            continue
        expected = dict(json.loads(text))
        expected["id"] = new_id
        if c == expected:
            return candidate
    raise SystemExit("cannot rewrite the id of %r" % text[:200])


def split_events(body: str):
    """Splits an event-stream body after each blank line, keeping the bytes."""
    parts = re.split(r"(\r\n\r\n|\n\n|\r\r)", body)
    blocks = []
    for i in range(0, len(parts), 2):
        sep = parts[i + 1] if i + 1 < len(parts) else ""
        if parts[i] or sep:
            blocks.append(parts[i] + sep)
    return blocks


def header(headers, name):
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


class Fixture:
    """Builds one transcript: the core's requests, the recorded answers, the expected events."""

    def __init__(self, rec, comments, *, legacy_versions=None, era_hint=None, input_hook=False,
                 modern_versions=None, bearer=False, budgets=()):
        host = header(rec[0]["request"]["headers"], "host")
        self.authority = host
        self.url = "http://%s/mcp" % host
        self.legacy_versions = legacy_versions or list(LEGACY)
        self.modern_versions = modern_versions or [MODERN]
        self.era_hint = era_hint
        self.input_hook = input_hook
        self.bearer = bearer
        self.budgets = list(budgets)
        self.rec = rec
        self.comments = comments
        self.lines = []
        self.t = 0  # µs
        self.next_id = 0
        self.next_ex = 0
        self.session = None  # ("modern", v) | ("legacy", v, sid)
        self.pending_sid = None

    # ---- what the core sends

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def base_headers(self, mcp_method, with_body):
        h = []
        if with_body:
            h.append(("Content-Type", "application/json"))
        h.append(("Accept", "application/json, text/event-stream"))
        if self.bearer:
            h.append(("Authorization", "Bearer <redacted>"))
        if self.session and self.session[0] == "modern":
            h.append(("MCP-Protocol-Version", self.session[1]))
            if mcp_method:
                h.append(("Mcp-Method", mcp_method))
        elif self.session and self.session[0] == "legacy":
            if self.session[1] >= "2025-06-18":
                h.append(("MCP-Protocol-Version", self.session[1]))
            if self.session[2]:
                h.append(("Mcp-Session-Id", self.session[2]))
        return h

    def meta(self, version, token=None):
        m = ('"_meta":{"io.modelcontextprotocol/protocolVersion":%s,'
             '"io.modelcontextprotocol/clientCapabilities":{},'
             '"io.modelcontextprotocol/clientInfo":{"name":%s,"version":%s}'
             % (jstr(version), jstr(CLIENT[0]), jstr(CLIENT[1])))
        if token is not None:
            m += ',"progressToken":%d' % token
        return m + "}"

    def encode(self, method, headers, body: bytes):
        out = "%s /mcp HTTP/1.1\r\nHost: %s\r\n" % (method, self.authority)
        for k, v in headers:
            out += "%s: %s\r\n" % (k, v)
        if body or method == "POST":
            out += "Content-Length: %d\r\n" % len(body)
        return out.encode() + b"\r\n" + body

    def rpc(self, rid, method, params):
        return ('{"jsonrpc":"2.0","id":%d,"method":%s,"params":{%s}}'
                % (rid, jstr(method), params)).encode()

    # ---- the transcript

    def op(self, text):
        self.t += 1000
        self.lines.append("%s op %s" % (at(self.t), text))

    def event(self, value):
        self.lines.append("%s event %s" % (at(self.t), compact(value)))

    def send(self, request: bytes, fresh=False):
        self.next_ex += 1
        self.lines.append("%s send %d%s" % (at(self.t), self.next_ex, " fresh" if fresh else ""))
        self.lines.extend(block("> ", request))
        return self.next_ex

    def stale(self, request: bytes):
        """Sends `request` on a pooled socket the server had closed: EOF before any byte."""
        ex = self.send(request)
        self.t += 1000
        self.lines.append("%s eof %d" % (at(self.t), ex))

    def exchange(self, request: bytes, recorded, new_id, tokens=(), *, fresh=False,
                 deadline_ms=None, events_then_eof=None, events_then_reset=None):
        """Sends `request`, answers it with `recorded` (its id rewritten to `new_id`); returns the
        answer's messages (parsed, only those delivered), its status and headers.

        `deadline_ms`: the client's deadline runs out that long after the request; nothing
        recorded after it is delivered. `events_then_eof` / `events_then_reset`: the server closes
        the connection, or the connection is reset, after that many events of an event stream."""
        ex = self.send(request, fresh)
        start = self.t
        resp = recorded["response"]
        if not resp["status_line"]:
            raise SystemExit("no recorded response for %r" % recorded["title"])
        old_id = recorded.get("answers_id")
        if old_id is None and isinstance(recorded["request"]["body"], dict):
            old_id = recorded["request"]["body"].get("id")
        elapsed = max(1, recorded["elapsed_ms"]) * 1000
        headers = resp["headers"]
        chunked = (header(headers, "transfer-encoding") or "").lower() == "chunked"
        has_length = header(headers, "content-length") is not None
        ctype = (header(headers, "content-type") or "").lower()
        body = resp["body"]
        events = resp["sse_events"]
        messages = []
        if events is not None:
            pieces = split_events(body)
            rewritten = []
            for p in pieces:
                lines = re.split(r"(\r\n|\n|\r)", p)
                out = []
                for i in range(0, len(lines), 2):
                    line = lines[i]
                    sep = lines[i + 1] if i + 1 < len(lines) else ""
                    if line.startswith("data:"):
                        payload = line[5:]
                        lead = " " if payload.startswith(" ") else ""
                        payload = payload[len(lead):]
                        payload = rewrite_message(payload, old_id, new_id, tokens)
                        try:
                            messages.append(json.loads(payload))
                        except ValueError:
                            pass
                        line = "data:" + lead + payload
                    out.append(line + sep)
                rewritten.append("".join(out))
            times = [e["t_ms"] * 1000 for e in events]
            pieces = [(times[i] if i < len(times) else elapsed, p.encode())
                      for i, p in enumerate(rewritten)]
            length = sum(len(p) for _, p in pieces)
            if events_then_eof is not None:
                pieces = pieces[:events_then_eof]
            if events_then_reset is not None:
                pieces = pieces[:events_then_reset]
        else:
            if body and "json" in ctype:
                body = rewrite_message(body, old_id, new_id, tokens)
                try:
                    messages.append(json.loads(body))
                except ValueError:
                    pass
            pieces = [(elapsed, body.encode())] if body else []
            length = len(body.encode())
        kept = [(k, v) for k, v in headers
                if k.lower() not in ("transfer-encoding", "content-length")]
        if chunked:
            kept.append(("Transfer-Encoding", "chunked"))
        elif has_length:
            kept.append(("Content-Length", str(length)))
        head = resp["status_line"] + "\r\n" + "".join("%s: %s\r\n" % kv for kv in kept) + "\r\n"
        first = pieces[0][0] if pieces else elapsed
        chunks = [(min(first, elapsed), head.encode())]
        for t, p in pieces:
            if chunked:
                p = b"%x\r\n" % len(p) + p + b"\r\n"
            chunks.append((t, p))
        cut_short = events_then_eof is not None or events_then_reset is not None
        if chunked and not cut_short:
            chunks.append((elapsed, b"0\r\n\r\n"))
        last = 0
        delivered = []
        cut = None if deadline_ms is None else deadline_ms * 1000
        for t, data in chunks:
            if cut is not None and t >= cut:
                break
            last = max(last, t)
            if not data:
                continue
            self.lines.append("%s recv %d" % (at(start + last), ex))
            self.lines.extend(block("< ", data))
            delivered.append(data)
        if cut is not None:
            self.t = start + cut
            self.lines.append("%s timeout" % at(self.t))
        elif events_then_reset is not None:
            self.t = start + last
            self.lines.append("%s transport-error %d io connection reset by peer"
                              % (at(self.t), ex))
        else:
            self.t = start + (last if events_then_eof is not None else max(last, elapsed))
            self.lines.append("%s eof %d" % (at(self.t), ex))
        status = int(resp["status_line"].split()[1])
        if cut is not None or cut_short:
            text = b"".join(delivered[1:]).decode("utf-8", errors="replace")
            messages = [m for m in messages if compact_contains(text, m)]
        return status, headers, messages

    def text(self):
        out = ["mcp-transcript 1"]
        out += ["# " + c for c in self.comments]
        out.append("config url " + self.url)
        out.append("config client %s %s" % (jstr(CLIENT[0]), jstr(CLIENT[1])))
        if self.bearer:
            out.append("config bearer-token <redacted>")
        out.append("config modern-versions " + " ".join(self.modern_versions))
        out.append("config legacy-versions " + " ".join(self.legacy_versions))
        if self.era_hint:
            out.append("config era-hint %s %s" % self.era_hint)
        if self.input_hook:
            out.append("config input-hook")
        for name, value in self.budgets:
            out.append("config budget %s %d" % (name, value))
        return "\n".join(out + self.lines) + "\n"

    # ---- finding the recorded answer

    def find(self, pred, what):
        for r in self.rec:
            if pred(r):
                return r
        raise SystemExit("%s: no recorded exchange for %s" % (self.comments[0], what))

    def by_title(self, prefix):
        return self.find(lambda r: r["title"].startswith(prefix), prefix)

    # ---- operations

    def connect_modern(self, discover_title="server/discover", versions=None, stale=False):
        self.op("connect")
        for version in versions or [MODERN]:
            rid = self.new_id()
            h = self.base_headers(None, True) + [("MCP-Protocol-Version", version),
                                                 ("Mcp-Method", "server/discover")]
            body = self.rpc(rid, "server/discover", self.meta(version))
            title = discover_title if version == MODERN else "ERROR: unsupported protocol version"
            request = self.encode("POST", h, body)
            if stale:
                # Sent again on a fresh socket under a new id: no request goes twice with one id.
                self.stale(request)
                rid = self.new_id()
                body = self.rpc(rid, "server/discover", self.meta(version))
                request = self.encode("POST", h, body)
            status, _, msgs = self.exchange(request, self.by_title(title), rid, fresh=stale)
        result = msgs[0]["result"]
        assert MODERN in result["supportedVersions"]
        self.session = ("modern", MODERN)
        self.event({"connected": {"era": "modern", "version": MODERN,
                                  "server": discover_server_info(result), "from_hint": False}})

    def probe_discover(self, title):
        """Sends the modern probe; returns the recorded result if the server is modern."""
        self.op("connect")
        rid = self.new_id()
        h = [("Content-Type", "application/json"),
             ("Accept", "application/json, text/event-stream"),
             ("MCP-Protocol-Version", MODERN), ("Mcp-Method", "server/discover")]
        body = self.rpc(rid, "server/discover", self.meta(MODERN))
        status, _, msgs = self.exchange(self.encode("POST", h, body), self.by_title(title), rid)
        msg = msgs[0] if msgs else {}
        if "result" in msg and MODERN in msg["result"].get("supportedVersions", []):
            self.session = ("modern", MODERN)
            self.event({"connected": {"era": "modern", "version": MODERN,
                                      "server": discover_server_info(msg["result"]),
                                      "from_hint": False}})
            return True
        code = msg.get("error", {}).get("code")
        assert 400 <= status < 500 or status == 200, status
        assert code not in (-32020, -32021, -32022), code
        return False

    def connect_legacy(self, init_title, op=True):
        if op:
            self.op("connect")
        rid = self.new_id()
        h = self.base_headers(None, True)
        params = ('"protocolVersion":%s,"capabilities":{},"clientInfo":{"name":%s,"version":%s}'
                  % (jstr(self.legacy_versions[0]), jstr(CLIENT[0]), jstr(CLIENT[1])))
        rec = self.by_title(init_title)
        request = self.encode("POST", h, self.rpc(rid, "initialize", params))
        status, headers, msgs = self.exchange(request, rec, rid)
        result = [m for m in msgs if "result" in m][0]["result"]
        version = result["protocolVersion"]
        assert version in self.legacy_versions
        self.session = ("legacy", version, header(headers, "mcp-session-id"))
        self.new_id()  # the notification takes an id too
        h = self.base_headers(None, True)
        body = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        status, _, _ = self.exchange(self.encode("POST", h, body),
                                     self.by_title("notifications/initialized"), None)
        assert 200 <= status < 300, status
        info = result.get("serverInfo")
        server = None if info is None else {"name": info.get("name", ""),
                                            "version": info.get("version", "")}
        self.event({"connected": {"era": "legacy", "version": version, "server": server,
                                  "from_hint": False}})

    def list_tools(self, max_pages=None):
        self.op("list_tools")
        cursor = None
        names, pages = [], 0
        while True:
            rid = self.new_id()
            h = self.base_headers("tools/list", True)
            params = []
            if cursor is not None:
                params.append('"cursor":%s' % jstr(cursor))
            if self.session[0] == "modern":
                params.append(self.meta(self.session[1]))
            body = self.rpc(rid, "tools/list", ",".join(params))

            def match(r, cursor=cursor):
                b = r["request"]["body"]
                return (isinstance(b, dict) and b.get("method") == "tools/list"
                        and r["title"].startswith("tools/list")
                        and "after DELETE" not in r["title"]
                        and "without" not in r["title"] and "unknown" not in r["title"]
                        and b.get("params", {}).get("cursor") == cursor)

            status, _, msgs = self.exchange(self.encode("POST", h, body),
                                            self.find(match, "page %r" % cursor), rid)
            result = [m for m in msgs if "result" in m][0]["result"]
            pages += 1
            for t in result["tools"]:
                assert TOOL_NAME.match(t["name"]) and t["name"] not in names, t["name"]
                names.append(t["name"])
            cursor = result.get("nextCursor")
            if not cursor:
                break
            if max_pages is not None and pages >= max_pages:
                self.failed("list_tools", "mcp_connection_failed_error",
                            "budget exceeded: pages (limit %d)" % max_pages)
                return
        self.event({"tools_listed": {"pages": pages, "tools": names, "refused": []}})

    def call(self, recorded, *, expect_input=False, deadline_ms=None, resume=None,
             reissue=False):
        b = recorded["request"]["body"]
        name = b["params"]["name"]
        args = compact(b["params"].get("arguments", {})).encode()
        self.op("call_tool %s %s" % (jstr(name), escape(args)))
        rid = self.new_id()
        token = rid
        tokens = []
        old_token = b["params"].get("_meta", {}).get("progressToken")
        if old_token is not None:
            tokens.append((old_token, token))
        status, msgs = self.send_call(rid, token, name, args, recorded, tokens,
                                      deadline_ms=deadline_ms, events_then_eof=resume and 1,
                                      events_then_reset=2 if reissue else None)
        if reissue:
            # A broken modern stream loses the request: the same call goes again with a new id
            # (and the same progress token).
            status, more = self.send_call(self.new_id(), token, name, args, recorded, tokens)
            self.outcome(status, msgs + more, token)
            return
        if deadline_ms is not None:
            self.outcome(status, msgs, token, timed_out=deadline_ms)
            if self.session[0] == "legacy":
                # A legacy server is told the request is cancelled; its answer is not awaited
                # by the operation (the server's recorded answer to a notification is used).
                h = self.base_headers(None, True)
                body = ('{"jsonrpc":"2.0","method":"notifications/cancelled","params":'
                        '{"requestId":%d,"reason":"timeout"}}' % rid).encode()
                self.exchange(self.encode("POST", h, body),
                              self.by_title("notifications/initialized"), None)
            return
        if resume is not None:
            # The stream dropped after its first event; the client resumes with GET.
            retry = int(recorded["response"]["sse_events"][0].get("retry", "1000"))
            last_id = recorded["response"]["sse_events"][0]["id"]
            self.t += retry * 1000
            self.lines.append("%s timeout" % at(self.t))
            h = [(k, v) for k, v in self.base_headers(None, False) if k != "Accept"]
            h += [("Accept", "text/event-stream"), ("Last-Event-ID", last_id)]
            status, _, more = self.exchange(self.encode("GET", h, b""), resume,
                                            rid, tokens)
            self.outcome(status, msgs + more, token)
            return
        while expect_input:
            response = [m for m in msgs if "id" in m and ("result" in m or "error" in m)][0]
            result = response["result"]
            assert result.get("resultType") == "input_required"
            self.event({"input_required": {"requests": result["inputRequests"]}})
            nxt = [r for r in self.rec if r["request"]["body"] is not None
                   and isinstance(r["request"]["body"], dict)
                   and r["request"]["body"].get("params", {}).get("requestState")
                   == result.get("requestState")
                   and "tampered" not in r["title"]][0]
            answers = compact(nxt["request"]["body"]["params"]["inputResponses"]).encode()
            self.op("input " + escape(answers))
            rid = self.new_id()
            token = rid  # every round is a new request with its own progress token
            state = jstr(result["requestState"]) if "requestState" in result else None
            status, msgs = self.send_call(rid, token, name, args, nxt, tokens,
                                          answers=answers, state=state)
            response = [m for m in msgs if "id" in m and ("result" in m or "error" in m)][0]
            expect_input = response.get("result", {}).get("resultType") == "input_required"
        self.outcome(status, msgs, token)

    def send_call(self, rid, token, name, args, recorded, tokens, answers=None, state=None,
                  **cut):
        h = self.base_headers("tools/call", True)
        if self.session[0] == "modern":
            h.append(("Mcp-Name", name))
        params = '"name":%s,"arguments":%s' % (jstr(name), args.decode())
        if answers is not None:
            params += ',"inputResponses":' + answers.decode()
        if state is not None:
            params += ',"requestState":' + state
        if self.session[0] == "modern":
            params += "," + self.meta(self.session[1], token)
        else:
            params += ',"_meta":{"progressToken":%d}' % token
        body = self.rpc(rid, "tools/call", params)
        status, _, msgs = self.exchange(self.encode("POST", h, body), recorded, rid, tokens, **cut)
        return status, msgs

    def outcome(self, status, msgs, token, timed_out=None):
        for m in msgs:
            if m.get("method") == "notifications/progress":
                p = m["params"]
                if p.get("progressToken") != token:
                    continue
                total = p.get("total")
                self.event({"progress": {"progress": float(p["progress"]),
                                         "total": None if total is None else float(total),
                                         "message": p.get("message")}})
        response = [m for m in msgs if "id" in m and ("result" in m or "error" in m)]
        if timed_out is not None:
            assert not response
            self.failed("call_tool", "mcp_connection_failed_error",
                        "budget exceeded: call_time_ms (limit %d)" % timed_out)
            return
        if not response:
            self.failed("call_tool", "mcp_connection_failed_error",
                        "unexpected HTTP status %d" % status)
            return
        m = response[0]
        if "error" in m:
            e = m["error"]
            if status == 404 and self.session[0] == "legacy" and self.session[2]:
                self.failed("call_tool", "mcp_connection_failed_error",
                            "the server ended the session (HTTP 404)")
                return
            msg = e.get("message", "")
            msg = msg.encode()[:MAX_ERROR_MESSAGE].decode("utf-8", errors="ignore")
            self.failed("call_tool", "mcp_server_answered_error",
                        "JSON-RPC error %d (HTTP %d): %s" % (e["code"], status, msg))
            return
        self.event({"call_finished": call_summary(m["result"])})

    def failed(self, op, kind, error):
        self.event({"failed": {"operation": op, "kind": kind, "error": error}})

    def close(self):
        self.op("close")
        if self.session and self.session[0] == "legacy" and self.session[2]:
            self.new_id()
            h = self.base_headers(None, False)
            self.exchange(self.encode("DELETE", h, b""), self.by_title("DELETE session"), None)
        self.event("closed")


def compact_contains(text, message):
    """Whether `message` (parsed) is in the delivered event-stream text."""
    for line in re.split(r"\r\n|\n|\r", text):
        if line.startswith("data:"):
            try:
                if json.loads(line[5:]) == message:
                    return True
            except ValueError:
                pass
    return False


def discover_server_info(result):
    info = result.get("_meta", {}).get("io.modelcontextprotocol/serverInfo") or result.get(
        "serverInfo")
    if info is None:
        return None
    return {"name": info.get("name", ""), "version": info.get("version", "")}


def b64len(s):
    try:
        return len(base64.b64decode(s + "=" * (-len(s) % 4), validate=True))
    except (binascii.Error, ValueError):
        return None


def call_summary(result):
    content, unknown, invalid = [], 0, 0
    for b in result.get("content", []):
        t = b.get("type")
        s = None
        if t == "text" and isinstance(b.get("text"), str):
            s = {"text": b["text"]}
        elif (t in ("image", "audio") and b.get("mimeType")
              and b64len(b.get("data", "")) is not None):
            s = {t: {"mime_type": b["mimeType"], "bytes": b64len(b["data"])}}
        elif t == "resource_link" and "uri" in b and "name" in b:
            s = {"resource_link": {"uri": b["uri"], "name": b["name"],
                                   "mime_type": b.get("mimeType")}}
        elif t == "resource" and isinstance(b.get("resource"), dict):
            r = b["resource"]
            if "text" in r and "blob" not in r:
                c = {"text": r["text"]}
            elif "blob" in r and "text" not in r and b64len(r["blob"]) is not None:
                c = {"blob_bytes": b64len(r["blob"])}
            else:
                c = None
            if c is not None:
                s = {"resource": {"uri": r["uri"], "mime_type": r.get("mimeType"), "contents": c}}
        elif t not in ("text", "image", "audio", "resource_link", "resource"):
            unknown += 1
            continue
        if s is None:
            invalid += 1
        else:
            content.append(s)
    return {"is_error": bool(result.get("isError", False)), "content": content,
            "dropped_unknown": unknown, "dropped_invalid": invalid,
            "structured_content": result.get("structuredContent")}


# Calls replayed in session fixtures (recorded titles), in order.
SESSION_CALLS = ["echo", "add", "get_text", "get_image", "get_audio", "get_embedded_resource",
                 "get_resource_link", "get_mixed", "fail_tool", "protocol_error",
                 "raise_exception", "unknown tool", "add with wrong argument types",
                 "slow with progressToken", "add_numbers"]


# Recordings that also give a session fixture with a bearer token.
TOKEN_SESSIONS = ["ts-v2_legacy-stateless.modern-auto_modern",
                  "py-mcp_stateful-json_legacy-2025-11-25"]


def session_calls(rec):
    titles = {r["title"]: r for r in rec}
    return [titles["tools/call " + t] for t in SESSION_CALLS if "tools/call " + t in titles]


def convert(path, out_dir):
    stem = os.path.basename(path)[: -len(".jsonl")]
    parts = stem.split("_")
    peer, config, flow = parts[0], "_".join(parts[1:-1]), parts[-1]
    rec = [json.loads(line) for line in open(path, encoding="utf-8")]
    label = "%s (%s), %s flow" % (peer, config, flow)
    source = (
        "converted from crates/transcript/tests/transcripts/recorded/%s.jsonl"
        " by scripts/convert-transcripts.py" % stem
    )
    written = []

    def write(name, fx):
        with open(os.path.join(out_dir, name + ".transcript"), "w", encoding="utf-8") as f:
            f.write(fx.text())
        written.append(name)

    token = stem in TOKEN_SESSIONS
    if flow == "modern":
        fx = Fixture(rec, ["%s: connect, list every page, call tools, close" % label, source])
        fx.connect_modern(discover_title=rec[0]["title"])
        fx.list_tools()
        for r in session_calls(rec):
            fx.call(r)
        fx.close()
        write(stem + ".session", fx)
        if token:
            fx = Fixture(rec, ["%s: a listing longer than the 2-page budget" % label, source],
                         budgets=[("pages", 2)])
            fx.connect_modern(discover_title=rec[0]["title"])
            fx.list_tools(max_pages=2)
            fx.close()
            write(stem + ".page-budget", fx)
            fx = Fixture(rec, ["%s: connect, list every page, close, with a bearer token "
                               "(redacted)" % label, source], bearer=True)
            fx.connect_modern(discover_title=rec[0]["title"])
            fx.list_tools()
            fx.close()
            write(stem + ".token", fx)
        fx = Fixture(rec, ["%s: the first request goes out on a pooled socket the server had "
                           "closed; it is sent again on a fresh one" % label, source])
        fx.connect_modern(discover_title=rec[0]["title"], stale=True)
        fx.close()
        write(stem + ".stale-socket", fx)
        slow = [r for r in rec if r["title"] == "tools/call slow with progressToken"]
        if slow and slow[0]["response"]["sse_events"]:
            fx = Fixture(rec, ["%s: a slow call with progress runs out of its 1 s call budget"
                               % label, source], budgets=[("call_time_ms", 1000)])
            fx.connect_modern(discover_title=rec[0]["title"])
            fx.call(slow[0], deadline_ms=1000)
            fx.close()
            write(stem + ".deadline", fx)
            fx = Fixture(rec, ["%s: the event stream of a slow call is reset after its first "
                               "progress notification; the call is sent again with a new id"
                               % label, source])
            fx.connect_modern(discover_title=rec[0]["title"])
            fx.call(slow[0], reissue=True)
            fx.close()
            write(stem + ".reissue", fx)
        if any(r["title"].startswith("tools/call elicit_name round 1") for r in rec):
            fx = Fixture(rec, ["%s: a multi round-trip call answered by the embedder" % label,
                               source], input_hook=True)
            fx.connect_modern()
            fx.call(fx.by_title("tools/call elicit_name round 1"), expect_input=True)
            if any(r["title"].startswith("tools/call two_rounds round 3") for r in rec):
                fx.call(fx.by_title("tools/call two_rounds round 1"), expect_input=True)
            fx.close()
            write(stem + ".input", fx)
        if any(r["title"].startswith("ERROR: unsupported protocol version") for r in rec):
            fx = Fixture(rec, ["%s: a newer version offered first is refused with -32022, the "
                               "client retries discovery with the version the server names" % label,
                               source], modern_versions=["2099-01-01", MODERN])
            fx.connect_modern(discover_title=rec[0]["title"], versions=["2099-01-01", MODERN])
            fx.close()
            write(stem + ".version-retry", fx)
    elif flow.startswith("legacy-"):
        version = flow[len("legacy-"):]
        versions = [version] + [v for v in LEGACY if v != version]
        fx = Fixture(rec, ["%s: connect with a legacy era hint (initialize, initialized), list "
                           "every page, call tools, close" % label, source],
                     legacy_versions=versions, era_hint=("legacy", version))
        fx.connect_legacy("initialize (protocolVersion %s)" % version)
        fx.list_tools()
        for r in session_calls(rec):
            fx.call(r)
        fx.close()
        write(stem + ".session", fx)
        if token:
            fx = Fixture(rec, ["%s: a listing longer than the 2-page budget" % label, source],
                         legacy_versions=versions, era_hint=("legacy", version),
                         budgets=[("pages", 2)])
            fx.connect_legacy("initialize (protocolVersion %s)" % version)
            fx.list_tools(max_pages=2)
            fx.close()
            write(stem + ".page-budget", fx)
            fx = Fixture(rec, ["%s: connect, list every page, close, with a bearer token "
                               "(redacted)" % label, source], bearer=True,
                         legacy_versions=versions, era_hint=("legacy", version))
            fx.connect_legacy("initialize (protocolVersion %s)" % version)
            fx.list_tools()
            fx.close()
            write(stem + ".token", fx)
        slow = [r for r in rec if r["title"] == "tools/call slow with progressToken"]
        if slow and slow[0]["response"]["sse_events"]:
            fx = Fixture(rec, ["%s: a slow call with progress runs out of its 1 s call budget; "
                               "the server is told the request is cancelled" % label, source],
                         legacy_versions=versions, era_hint=("legacy", version),
                         budgets=[("call_time_ms", 1000)])
            fx.connect_legacy("initialize (protocolVersion %s)" % version)
            fx.call(slow[0], deadline_ms=1000)
            fx.close()
            write(stem + ".deadline", fx)
        get = [r for r in rec if r["title"].startswith("GET with Last-Event-ID")]
        if get:
            slow = fx.by_title("tools/call slow with progressToken")
            resume = dict(get[0], answers_id=slow["request"]["body"]["id"])
            fx = Fixture(rec, ["%s: the stream of a slow call drops after its priming event; "
                               "the client resumes it with GET and Last-Event-ID" % label, source],
                         legacy_versions=versions, era_hint=("legacy", version))
            fx.connect_legacy("initialize (protocolVersion %s)" % version)
            fx.call(slow, resume=resume)
            fx.close()
            write(stem + ".resume", fx)
    elif flow == "probe":
        fx = Fixture(rec, ["%s: connect without a hint (server/discover, then initialize if "
                           "the server is not modern), close" % label, source])
        if not fx.probe_discover(rec[0]["title"]):
            fx.connect_legacy("fallback: initialize", op=False)
        fx.close()
        write(stem + ".connect", fx)
    return written


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    n = 0
    for name in sorted(os.listdir(src)):
        if name.endswith(".jsonl"):
            n += len(convert(os.path.join(src, name), out))
    print("%d transcripts written to %s" % (n, out))


if __name__ == "__main__":
    main()
