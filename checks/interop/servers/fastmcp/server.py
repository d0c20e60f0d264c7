"""Third-party MCP peer: FastMCP 4.1.x (PrefectHQ `fastmcp`, built on Python `mcp` 2.3.x),
Streamable HTTP on 127.0.0.1 only.

Serves the 2025 era (initialize handshake) and 2026-07-28 (per-request _meta envelope,
server/discover, input_required) on one URL. Pagination uses FastMCP's own
`list_page_size` option.

Usage (in the venv made by checks/interop/install.sh):
    python server.py --port 8934 [--stateless] [--json] [--page-size 5] [--ttl 600]
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
from importlib.metadata import version as pkg_version

import anyio
import uvicorn
from pydantic import BaseModel

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
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
TEXT_RES = TextResourceContents(uri=README_URI, mime_type="text/plain", text="Hello from the FastMCP peer.")
BLOB_RES = BlobResourceContents(uri="test://static/pixel.png", mime_type="image/png", blob=PNG_B64)
LINK = ResourceLink(uri=README_URI, name="readme", mime_type="text/plain", description="A text resource the client may read with resources/read")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "description": "Your name"}}, "required": ["name"]}


class Sum(BaseModel):
    sum: float


def build_server(page_size: int) -> FastMCP:
    mcp = FastMCP(
        "peer-fastmcp",
        version="4.1.7-peer",
        instructions="Third-party test peer built on FastMCP 4.",
        list_page_size=page_size,
    )

    @mcp.tool(description="Echo back the given text")
    def echo(text: str) -> str:
        return text

    @mcp.tool(description="Add two numbers (text + structuredContent)")
    def add(a: float, b: float) -> Sum:
        return Sum(sum=a + b)

    @mcp.tool(description="Returns one text content block")
    def get_text() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="plain text content")])

    @mcp.tool(description="Returns one image content block (PNG)")
    def get_image() -> CallToolResult:
        return CallToolResult(content=[ImageContent(data=PNG_B64, mime_type="image/png")])

    @mcp.tool(description="Returns one audio content block (WAV)")
    def get_audio() -> CallToolResult:
        return CallToolResult(content=[AudioContent(data=WAV_B64, mime_type="audio/wav")])

    @mcp.tool(description="Returns embedded resources (text and blob)")
    def get_embedded_resource() -> CallToolResult:
        return CallToolResult(content=[EmbeddedResource(resource=TEXT_RES), EmbeddedResource(resource=BLOB_RES)])

    @mcp.tool(description="Returns a resource_link content block")
    def get_resource_link() -> CallToolResult:
        return CallToolResult(content=[LINK])

    @mcp.tool(description="Returns text, image, audio, resource and resource_link together")
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

    @mcp.tool(description="Tool execution error: result with isError=true")
    def fail_tool() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="Something went wrong inside the tool (isError=true)")], is_error=True)

    @mcp.tool(description="Raises fastmcp ToolError: becomes isError=true")
    def raise_exception() -> str:
        raise ToolError("raise_exception tool always raises")

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
        if ctx._is_modern_protocol():
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
        if not (ctx._is_modern_protocol()):
            return "served at once (load shedding is 2026-07-28 only)"
        state = ctx.request_state
        if not state:
            return InputRequiredResult(request_state="busy-1")
        return f"served on retry 1 with state {state}"

    @mcp.tool(description="Returns, as JSON text, the W3C trace context the request carried in params._meta (traceparent, tracestate, baggage)")
    def trace_meta(ctx: Context) -> str:
        rc = ctx.request_context
        meta = (rc.meta if rc is not None else None) or {}
        return json.dumps({k: meta[k] for k in ("traceparent", "tracestate", "baggage") if k in meta})

    for i in range(1, 9):
        n = f"{i:02d}"

        def _noop(n: str = n) -> str:
            return f"noop_{n} ok"

        mcp.tool(_noop, name=f"noop_{n}", description=f"Filler tool {n} (for pagination)")

    @mcp.resource(README_URI, name="readme", mime_type="text/plain")
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
    app = mcp.http_app(path="/mcp", json_response=a.json, stateless_http=a.stateless)
    print(
        f"peer-fastmcp (fastmcp {pkg_version('fastmcp')}, mcp {pkg_version('mcp')}) listening on "
        f"http://127.0.0.1:{a.port}/mcp stateless={a.stateless} json={a.json} pageSize={a.page_size} ttl={a.ttl}s\n"
        f"HANDSHAKE={mcp_version.HANDSHAKE_PROTOCOL_VERSIONS} MODERN={mcp_version.MODERN_PROTOCOL_VERSIONS}",
        file=sys.stderr,
        flush=True,
    )
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
