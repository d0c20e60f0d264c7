"""Benchmark contender: the Python SDK client (`mcp` on PyPI), Streamable HTTP.

python client.py URL WORK N PAR REPS ERA: one warm-up work item, then REPS timed rounds of N work
items, PAR at a time. A work item: connect, list every page or call the tool WORK, close (which
terminates a legacy session). ERA: legacy (initialize), modern (mode "auto": server/discover) or
hint (mode pinned to 2026-07-28: no discover). Response caching is off.
Prints {"ms":[per round],"check":tool count or text length}.
"""

import asyncio
import json
import sys
import time

from mcp import Client

url, work, n, par, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
era = sys.argv[6] if len(sys.argv) > 6 else "legacy"
mode = {"legacy": "legacy", "modern": "auto", "hint": "2026-07-28"}[era]


async def item():
    async with Client(url, mode=mode, cache=None) as client:
        check = 0
        if work == "list":
            cursor = None
            while True:
                r = await client.list_tools(cursor=cursor)
                check += len(r.tools)
                cursor = r.next_cursor
                if not cursor:
                    break
        else:
            r = await client.call_tool(work, {"text": "hello"})
            check = sum(len(c.text) for c in r.content if getattr(c, "type", "") == "text")
        return check


async def round_():
    check, done = 0, 0
    while done < n:
        batch = min(par, n - done)
        results = await asyncio.gather(*(item() for _ in range(batch)))
        check = results[-1]
        done += batch
    return check


async def main():
    check = await item()
    ms = []
    for _ in range(reps):
        t = time.perf_counter()
        check = await round_()
        ms.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({"ms": ms, "check": check}))


asyncio.run(main())
