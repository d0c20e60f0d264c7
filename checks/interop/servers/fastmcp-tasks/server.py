"""Third-party MCP peer with SEP-2663 tasks: FastMCP 4.1.4 with `fastmcp-tasks` 4.1.4 (the
`io.modelcontextprotocol/tasks` extension on pydocket, its in-memory backend: no Redis server),
Streamable HTTP on 127.0.0.1 only.

`fastmcp-tasks` 4.1.4 pins `fastmcp-slim[server]==4.1.4`, so this peer has a venv of its own
(`venv-fastmcp-tasks`, made by checks/interop/install.sh) beside the fastmcp 4.1.7 one.

Task tools (each runs as a task when the request declares the extension, and inline otherwise,
unless its mode is `required`):
  count_task(n=3, delay=0.3)  counts to n, one step per `delay` seconds; "counted to N"
  ask_task                    asks for a name (one input request, `elicitation/create`) and
                              greets it: "Hello, NAME!"
  fail_task                   raises a JSON-RPC error (-32050): the task ends `failed`
  long_task(seconds=60)       sleeps in 0.1 s steps (for cancellation)
  required_task               mode `required`: only ever a task; "required ran"
Plain tool: echo(text).

What the server observed is written as JSON to the file of `--log-file` (outside MCP, so that
reading it changes nothing; rewritten whole, by rename, on every change): the runs of each task tool (`began`, `finished`, `cancelled`: a worker stopped by
`tasks/cancel`), the name of every `tools/call` (`calls`), and the `Mcp-Method` and `Mcp-Name`
headers of every `tasks/*` request (`task_requests`, in arrival order).

Usage (in the venv made by checks/interop/install.sh):
    python server.py --port 8934 [--log-file PATH] [--stateless] [--json] [--page-size 50] [--ttl 600]
                     [--tls-cert C --tls-key K]
The process exits by itself after --ttl seconds (default 600).
Endpoint: http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import sys
import threading
from datetime import timedelta
from importlib.metadata import version as pkg_version

import anyio
import uvicorn

from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "description": "Your name"}}, "required": ["name"]}
# Every task tool asks to be polled each second (the client's floor): the tests stay quick.
POLL = timedelta(seconds=1)

# What the server observed; the task workers run in this process (Docket's memory:// backend).
LOG: dict[str, object] = {"began": {}, "finished": {}, "cancelled": {}, "calls": [], "task_requests": []}
LOCK = threading.Lock()
LOG_FILE: str | None = None


def flush_log() -> None:
    """Writes the log to `LOG_FILE` whole, by rename (a reader never sees half of it). Under LOCK."""
    if LOG_FILE:
        tmp = f"{LOG_FILE}.tmp"
        with open(tmp, "w") as f:
            json.dump(LOG, f)
        os.replace(tmp, LOG_FILE)


def began(tool: str) -> None:
    with LOCK:
        LOG["began"][tool] = LOG["began"].get(tool, 0) + 1  # type: ignore[union-attr]
        flush_log()


def finished(tool: str, what: str = "finished") -> None:
    with LOCK:
        LOG[what][tool] = LOG[what].get(tool, 0) + 1  # type: ignore[union-attr]
        flush_log()


def build_server(page_size: int) -> FastMCP:
    mcp = FastMCP(
        "peer-fastmcp-tasks",
        version="4.1.4-peer",
        instructions="Third-party test peer: FastMCP 4 with the SEP-2663 tasks extension.",
        list_page_size=page_size,
    )
    mcp.add_extension(TasksExtension(url="memory://"))

    @mcp.tool(description="Echo back the given text")
    def echo(text: str) -> str:
        return text

    @mcp.tool(description="Counts to n, one step per `delay` seconds", task=TaskConfig(mode="optional", poll_interval=POLL))
    async def count_task(n: int = 3, delay: float = 0.3) -> str:
        began("count_task")
        for _ in range(n):
            await anyio.sleep(delay)
        finished("count_task")
        return f"counted to {n}"

    @mcp.tool(description="Asks for a name (input_required) and greets it", task=TaskConfig(mode="optional", poll_interval=POLL))
    async def ask_task(ctx: Context) -> str | InputRequiredResult:
        began("ask_task")
        answer = (ctx.input_responses or {}).get("user_name")
        if answer is None:
            ask = ElicitRequest(params=ElicitRequestFormParams(message="What is your name?", requested_schema=NAME_SCHEMA))
            return InputRequiredResult(input_requests={"user_name": ask})
        finished("ask_task")
        if isinstance(answer, ElicitResult) and answer.action == "accept":
            return f"Hello, {(answer.content or {}).get('name')}!"
        return f"elicitation {getattr(answer, 'action', 'unknown')}"

    @mcp.tool(description="Fails with a JSON-RPC error (-32050)", task=TaskConfig(mode="optional", poll_interval=POLL))
    async def fail_task() -> str:
        began("fail_task")
        await anyio.sleep(0.2)
        raise MCPError(-32050, "fail_task always fails", {"hint": "deliberate"})

    @mcp.tool(description="Sleeps `seconds` in 0.1 s steps (for cancellation)", task=TaskConfig(mode="optional", poll_interval=POLL))
    async def long_task(seconds: float = 60) -> str:
        began("long_task")
        steps = int(seconds * 10)
        try:
            for _ in range(steps):
                await anyio.sleep(0.1)
        except anyio.get_cancelled_exc_class():
            finished("long_task", "cancelled")
            raise
        finished("long_task")
        return f"slept {seconds}s"

    @mcp.tool(description="Runs only as a task (mode required)", task=TaskConfig(mode="required", poll_interval=POLL))
    async def required_task() -> str:
        began("required_task")
        finished("required_task")
        return "required ran"

    return mcp


class Observe:
    """ASGI middleware: records each JSON-RPC request as it arrives: the
    tool name of every `tools/call` (`calls`), and of every `tasks/*` request its method and
    `taskId` from the body beside its `Mcp-Method` and `Mcp-Name` headers (the routing headers
    SEP-2663 asks for; `Mcp-Name` decoded from its Base64 form if so sent)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        record(body, headers)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def record(body: bytes, headers: dict[str, str]) -> None:
    try:
        message = json.loads(body)
    except ValueError:
        return
    if not isinstance(message, dict) or not isinstance(message.get("params"), dict):
        return
    method, params = message.get("method"), message["params"]
    with LOCK:
        if method == "tools/call":
            LOG["calls"].append(params.get("name"))  # type: ignore[union-attr]
        elif isinstance(method, str) and method.startswith("tasks/"):
            name = headers.get("mcp-name")
            if name and name.startswith("=?base64?") and name.endswith("?="):
                name = base64.b64decode(name[len("=?base64?") : -2]).decode("utf-8", "replace")
            LOG["task_requests"].append(  # type: ignore[union-attr]
                {"method": method, "task_id": params.get("taskId"), "mcp_method": headers.get("mcp-method"), "mcp_name": name}
            )
        flush_log()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--stateless", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--page-size", type=int, default=50)
    p.add_argument("--log-file", help="where to write what the server observed (JSON)")
    p.add_argument("--ttl", type=float, default=600)
    p.add_argument("--tls-cert", help="serve with hypercorn over TLS (ALPN h2, http/1.1) with this PEM certificate chain")
    p.add_argument("--tls-key", help="the PEM private key of --tls-cert")
    a = p.parse_args()

    global LOG_FILE
    LOG_FILE = a.log_file
    with LOCK:
        flush_log()
    mcp = build_server(a.page_size)
    app = Observe(mcp.http_app(path="/mcp", json_response=a.json, stateless_http=a.stateless))
    # The lifespan (Docket and its worker) is the inner app's: Observe passes it through.
    print(
        f"peer-fastmcp-tasks (fastmcp {pkg_version('fastmcp')}, fastmcp-tasks {pkg_version('fastmcp-tasks')}, "
        f"pydocket {pkg_version('pydocket')}, mcp {pkg_version('mcp')}) listening on "
        f"http://127.0.0.1:{a.port}/mcp stateless={a.stateless} json={a.json} ttl={a.ttl}s",
        file=sys.stderr,
        flush=True,
    )
    threading.Timer(a.ttl, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    threading.Timer(a.ttl + 10, lambda: os._exit(0)).start()
    if a.tls_cert:
        serve_hypercorn(app, a.port, a.tls_cert, a.tls_key)
    else:
        uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")
    os._exit(0)


def serve_hypercorn(app, port: int, certfile: str, keyfile: str | None) -> None:
    """Serves `app` with hypercorn over TLS, ALPN `h2` first, then `http/1.1`."""
    import asyncio

    from hypercorn.asyncio import serve
    from hypercorn.config import Config as HypercornConfig

    config = HypercornConfig()
    config.bind = [f"127.0.0.1:{port}"]
    config.loglevel = "WARNING"
    config.certfile = certfile
    config.keyfile = keyfile
    config.alpn_protocols = ["h2", "http/1.1"]
    asyncio.run(serve(app, config))


if __name__ == "__main__":
    main()
