"""Third-party MCP peer: Python SDK `mcp` 2.3.x (MCPServer), Streamable HTTP on 127.0.0.1 only.

Serves the 2025 era (initialize handshake; 2024-11-05 .. 2025-11-25) and 2026-07-28
(stateless per-request _meta envelope, server/discover, input_required) on one URL.

Usage (in the venv made by checks/interop/install.sh):
    python server.py --port 8933 [--stateless] [--json] [--page-size 5] [--ttl 600]
  --stateless  stateless_http=True for 2025-era traffic (no Mcp-Session-Id)
  --json       json_response=True (plain JSON bodies instead of SSE)
The process exits by itself after --ttl seconds (default 600).
Endpoint: http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import struct
import sys
import threading

import anyio
import uvicorn
from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ListToolsResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp.types import version as mcp_version

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def tiny_wav() -> str:
    samples = bytes([128, 160, 192, 160, 128, 96, 64, 96])
    header = b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 8000, 1, 8)
    header += b"data" + struct.pack("<I", len(samples))
    return base64.b64encode(header + samples).decode()


WAV_B64 = tiny_wav()
README_URI = "test://static/readme.txt"
TEXT_RES = TextResourceContents(uri=README_URI, mime_type="text/plain", text="Hello from the Python mcp peer.")
BLOB_RES = BlobResourceContents(uri="test://static/pixel.png", mime_type="image/png", blob=PNG_B64)
LINK = ResourceLink(uri=README_URI, name="readme", mime_type="text/plain", description="A text resource the client may read with resources/read")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "description": "Your name"}}, "required": ["name"]}


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        pad = "=" * (-len(cursor) % 4)
        offset = json.loads(base64.urlsafe_b64decode(cursor + pad))["offset"]
        if isinstance(offset, int) and offset >= 0:
            return offset
    except Exception:
        pass
    raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor}")


TRACE_KEYS = ("traceparent", "tracestate", "baggage")


def trace_context_of(params, meta) -> dict:
    """The trace context keys of a request's `_meta` as the server received them: from the raw
    params when the SDK kept them, else from the parsed `RequestParamsMeta`."""
    raw = (params or {}).get("_meta") if isinstance(params, dict) else None
    if not isinstance(raw, dict):
        raw = meta if isinstance(meta, dict) else (meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else {})
    return {k: raw[k] for k in TRACE_KEYS if k in raw}


class PagedMCPServer(MCPServer):
    """MCPServer returns every tool in one page; this subclass adds cursor pagination."""

    page_size = 5

    async def _handle_list_tools(self, ctx, params):  # type: ignore[override]
        tools = await self.list_tools()
        offset = decode_cursor(params.cursor) if params is not None and params.cursor else 0
        page = tools[offset : offset + self.page_size]
        nxt = encode_cursor(offset + self.page_size) if offset + self.page_size < len(tools) else None
        return ListToolsResult(tools=page, next_cursor=nxt)


class Sum(BaseModel):
    sum: float


def build_server(page_size: int) -> MCPServer:
    PagedMCPServer.page_size = page_size
    mcp = PagedMCPServer(
        "peer-py-mcp",
        version="2.3.0-peer",
        instructions="Third-party test peer built on the Python mcp SDK v2 (MCPServer).",
    )

    @mcp.tool(description="Echo back the given text")
    def echo(text: str) -> str:
        return text

    @mcp.tool(description="Add two numbers (text + structuredContent)")
    def add(a: float, b: float) -> Sum:
        return Sum(sum=a + b)

    @mcp.tool(description="Returns one text content block", structured_output=False)
    def get_text() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="plain text content")])

    @mcp.tool(description="Returns one image content block (PNG)", structured_output=False)
    def get_image() -> CallToolResult:
        return CallToolResult(content=[ImageContent(data=PNG_B64, mime_type="image/png")])

    @mcp.tool(description="Returns one audio content block (WAV)", structured_output=False)
    def get_audio() -> CallToolResult:
        return CallToolResult(content=[AudioContent(data=WAV_B64, mime_type="audio/wav")])

    @mcp.tool(description="Returns embedded resources (text and blob)", structured_output=False)
    def get_embedded_resource() -> CallToolResult:
        return CallToolResult(content=[EmbeddedResource(resource=TEXT_RES), EmbeddedResource(resource=BLOB_RES)])

    @mcp.tool(description="Returns a resource_link content block", structured_output=False)
    def get_resource_link() -> CallToolResult:
        return CallToolResult(content=[LINK])

    @mcp.tool(description="Returns text, image, audio, resource and resource_link together", structured_output=False)
    def get_mixed() -> CallToolResult:
        return CallToolResult(
            content=[
                TextContent(text="mixed content follows"),
                ImageContent(data=PNG_B64, mime_type="image/png"),
                AudioContent(data=WAV_B64, mime_type="audio/wav"),
                EmbeddedResource(resource=TEXT_RES),
                LINK,
            ]
        )

    @mcp.tool(description="Tool execution error: result with isError=true", structured_output=False)
    def fail_tool() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="Something went wrong inside the tool (isError=true)")], is_error=True)

    @mcp.tool(description="Raises an exception: MCPServer turns it into isError=true (not a JSON-RPC error)")
    def raise_exception() -> str:
        raise ValueError("raise_exception tool always raises")

    @mcp.tool(description="Throws a JSON-RPC error (-32602) instead of returning a result")
    def protocol_error() -> str:
        raise MCPError(INVALID_PARAMS, "protocol_error tool always fails with -32602", {"hint": "deliberate"})

    @mcp.tool(description="Sleeps `seconds` (default 3) in `steps` steps, emitting progress notifications")
    async def slow(ctx: Context, seconds: float = 3, steps: int = 3) -> str:
        for i in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(i, steps, f"step {i}/{steps}")
        return f"slept {seconds}s in {steps} steps"

    @mcp.tool(description="Asks for a name: input_required (2026-07-28) or elicitation/create push (2025, stateful+SSE)")
    async def elicit_name(ctx: Context) -> str | InputRequiredResult:
        if ctx.protocol_version in mcp_version.MODERN_PROTOCOL_VERSIONS:
            responses = ctx.input_responses
            if not responses or "user_name" not in responses:
                ask = ElicitRequest(params=ElicitRequestFormParams(message="What is your name?", requested_schema=NAME_SCHEMA))
                return InputRequiredResult(input_requests={"user_name": ask}, request_state="round-1")
            answer = responses["user_name"]
            if isinstance(answer, ElicitResult) and answer.action == "accept":
                return f"Hello, {(answer.content or {}).get('name')}!"
            return f"elicitation {getattr(answer, 'action', 'unknown')}"

        class Name(BaseModel):
            name: str

        result = await ctx.elicit("What is your name?", Name)
        if result.action == "accept":
            return f"Hello, {result.data.name}!"
        return f"elicitation {result.action}"

    @mcp.tool(description="Load shedding (2026-07-28): the first call answers input_required with only a requestState; the retry echoing it is served")
    async def busy_once(ctx: Context) -> str | InputRequiredResult:
        if not (ctx.protocol_version in mcp_version.MODERN_PROTOCOL_VERSIONS):
            return "served at once (load shedding is 2026-07-28 only)"
        state = ctx.request_state
        if not state:
            return InputRequiredResult(request_state="busy-1")
        return f"served on retry 1 with state {state}"

    @mcp.tool(
        description="Returns, as JSON text, the W3C trace context the request carried in params._meta (traceparent, tracestate, baggage)",
        structured_output=False,
    )
    def trace_meta(ctx: Context) -> str:
        return json.dumps(trace_context_of(ctx.request_context.params, ctx.request_context.meta))

    for i in range(1, 9):
        n = f"{i:02d}"
        mcp.add_tool(lambda n=n: f"noop_{n} ok", name=f"noop_{n}", description=f"Filler tool {n} (for pagination)")

    @mcp.resource(README_URI, name="readme", title="Readme", mime_type="text/plain")
    def readme() -> str:
        return TEXT_RES.text

    @mcp.prompt(description="Greets someone")
    def greeting(who: str) -> str:
        return f"Say hello to {who}"

    return mcp


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--stateless", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--page-size", type=int, default=5)
    p.add_argument("--ttl", type=float, default=600)
    p.add_argument("--h2c", action="store_true", help="serve with hypercorn: HTTP/2 with prior knowledge, and HTTP/1.1")
    p.add_argument("--tls-cert", help="serve with hypercorn over TLS (ALPN h2, http/1.1) with this PEM certificate chain")
    p.add_argument("--tls-key", help="the PEM private key of --tls-cert")
    a = p.parse_args()

    mcp = build_server(a.page_size)
    app = mcp.streamable_http_app(json_response=a.json, stateless_http=a.stateless, host="127.0.0.1")
    print(
        f"peer-py-mcp listening on http://127.0.0.1:{a.port}/mcp stateless={a.stateless} json={a.json} "
        f"pageSize={a.page_size} ttl={a.ttl}s\nLATEST_PROTOCOL_VERSION={mcp_version.LATEST_PROTOCOL_VERSION} "
        f"HANDSHAKE={mcp_version.HANDSHAKE_PROTOCOL_VERSIONS} MODERN={mcp_version.MODERN_PROTOCOL_VERSIONS}",
        file=sys.stderr,
        flush=True,
    )
    # Bounded lifetime: hard exit after the TTL no matter what uvicorn is doing.
    threading.Timer(a.ttl, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    threading.Timer(a.ttl + 10, lambda: os._exit(0)).start()
    if a.h2c or a.tls_cert:
        serve_hypercorn(app, a.port, a.tls_cert, a.tls_key)
    else:
        uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")
    os._exit(0)


def serve_hypercorn(app, port: int, certfile: str | None = None, keyfile: str | None = None) -> None:
    """Serves `app` with hypercorn. In clear text it speaks HTTP/2 to a client that opens with
    the HTTP/2 preface (prior knowledge) and HTTP/1.1 otherwise; over TLS (`certfile`) ALPN
    chooses, `h2` first."""
    import asyncio

    from hypercorn.asyncio import serve
    from hypercorn.config import Config as HypercornConfig

    config = HypercornConfig()
    config.bind = [f"127.0.0.1:{port}"]
    config.loglevel = "WARNING"
    if certfile:
        config.certfile = certfile
        config.keyfile = keyfile
        config.alpn_protocols = ["h2", "http/1.1"]
    asyncio.run(serve(app, config))


if __name__ == "__main__":
    main()
