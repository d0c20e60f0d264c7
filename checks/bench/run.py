#!/usr/bin/env python3
"""Runs every contender against the same local servers in one run and writes docs/benchmarks.md.

Called by scripts/bench-all.sh, which builds the Rust binaries and installs the TypeScript and
Python clients first. Standard library only.

Every contender is a separate process that runs one warm-up work item, then timed rounds, and
prints {"ms": [...], "check": n}. Wall time is the median over all rounds of all repetitions of
the process; peak RSS is the child's maximum resident set from GNU time (the median over repetitions);
requests and TCP connections per work item come from the server's counters.
"""

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("BENCH_TARGET", os.path.join(ROOT, "checks", "bench", "target", "release"))
TOOLS = os.environ.get("BENCH_TOOLS", os.path.join(os.environ.get("TMPDIR", "/tmp"), "mcp-sansio-bench"))


def binary(name):
    return os.path.join(TARGET, name)


# Why the floor ratio is also measured on one CPU.
ONE_CPU_NOTE = (
    "The floor and this crate's adapters again, in alternating rounds, with the server and every client "
    "process confined to one CPU (`sched_setaffinity`). With free placement a round trip's wall time depends on "
    "where the scheduler puts the two processes: on a virtual machine, waking a process on the other, idle "
    "CPU costs tens of microseconds (the floor confined across the two CPUs of this machine takes about 5× as "
    "long as on one; see performance.md), so the free rows measure placement as much as work. On one CPU a "
    "work item's wall time is the server's CPU plus the client's, and the ratio to the floor is what the "
    "client itself costs, in wall time. A diagnostic: the target's verdict is taken on client CPU time with free "
    "placement (Targets). On one CPU tokio also sizes its worker pool to one.")


# This round's targets, written before they were measured (docs/benchmarks.md keeps them above the verdicts).
ROUND_TARGETS = """## Targets of this round (set before measuring)

Set on 2026-12-07, before any figure below was re-measured, with the catalogue, the contenders'
setups and the measuring method they are judged on (they replace the round of 2026-12-04, whose
≤ 2.5× client CPU and ≤ 0.2× instructions were missed at 3.26× and 0.277×, and whose ≤ 2× wall
for the 4 MiB call was missed at 2.49×):

- **Client CPU per warm list-all work item ≤ 2× the raw floor's.** Client CPU is the user + system
  time of the client process alone (all its threads), free placement, the floor and this crate's
  adapters in alternating rounds, as in the round before.
- **Whole-process list-all instructions ≤ 0.15× the `serde_json::Value` parse of the same bodies.**
  Callgrind over the whole client process (every thread, runtime included) for one warm list-all work
  item, against `serde_json::from_slice::<Value>` of the 100 JSON-RPC bodies that item receives
  (serde_json's validate-only `IgnoredAny` pass is about 0.20×: every check kept, the annotated
  catalogue's `x-mcp-header` walk included).
- **The 4 MiB call ≤ 2× the raw floor's wall** (alternating rounds, free placement) **and ≤ 0.5× the
  `Value` parse's instructions** (the core alone, callgrind, as in its table below).

"""


UNPOOLED_NOTE = (
    "Both Rust clients with nothing carried from one work item to the next: each dials its own TCP "
    "connection and runs `server/discover` (this crate's fresh `Client` has no era hint). The dial and the "
    "handshake request are in every work item here, so this table shows them; the pooled tables above do not.")


CONTENDERS = {
    "raw": ("floor: raw socket, no parsing", [binary("bench-raw")]),
    # The unpooled setup: a client of its own per work item (the last argument `fresh`).
    "tokio-fresh": ("mcp-sansio (tokio adapter), unpooled", [binary("bench-sansio-tokio")]),
    "rmcp-fresh": ("rmcp 3.11.0, unpooled", [binary("bench-rmcp")]),
    # key: (label, argv prefix, eras it can run)
    "tokio": ("mcp-sansio (tokio adapter)", [binary("bench-sansio-tokio")]),
    "blocking": ("mcp-sansio (blocking adapter)", [binary("bench-sansio-blocking")]),
    "rmcp": ("rmcp 3.11.0", [binary("bench-rmcp")]),
    "ts": ("TypeScript SDK 1.32.2", ["node", os.path.join(TOOLS, "ts", "client.mjs")]),
    "py": ("Python mcp 2.3.0", [os.path.join(TOOLS, "py", "bin", "python"), os.path.join(TOOLS, "py", "client.py")]),
}


# Arguments after ERA.
SUFFIX = {"tokio-fresh": ["fresh"], "rmcp-fresh": ["fresh"]}

# How each contender is set up for repeated work items: stated in every table.
SETUP = {
    "raw": "one TCP connection per work item, kept alive across its requests; no JSON parsing",
    "tokio": "one `Client` per process (pool, era hint learnt on the warm-up item)",
    "blocking": "one `Client` per process (pool, era hint learnt on the warm-up item)",
    "rmcp": "one pooled `reqwest::Client` per process, shared by every work item (`with_client`)",
    "ts": "Node's global `fetch` (undici's pool), shared by every work item",
    "py": "an `httpx` client per `ClientSession`, so per work item (its API has no shared one)",
    "tokio-fresh": "a new `Client` per work item (no pool, no era hint)",
    "rmcp-fresh": "`from_uri` per work item (its default client: pooling off)",
}


def argv_of(key, url, work, n, par, reps, era):
    """The command line of one contender process."""
    return CONTENDERS[key][1] + [url, work, str(n), str(par), str(reps), era] + SUFFIX.get(key, [])


# The contenders of the side-by-side tables (the unpooled ones have their own).
MAIN = [k for k in CONTENDERS if not k.endswith("-fresh")]


def one_cpu():
    """The CPU that the one-CPU rows run on: the last one this process may use."""
    return {max(os.sched_getaffinity(0))}


def on_cpus(cpus):
    """A `preexec_fn` that confines the child (and what it starts) to `cpus`; none if `cpus` is None."""
    if cpus is None:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


class Server:
    def __init__(self, mode, eras, cpus=None, extra=()):
        self.mode = mode
        self.cpus = cpus
        self.proc = subprocess.Popen(
            [binary("bench-server"), "--mode", mode, "--eras", eras, "--ttl", "3600", *extra],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=on_cpus(cpus),
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening "):
            raise SystemExit(f"bench-server did not start: {line!r}")
        self.addr = line.split()[1]
        self.url = f"http://{self.addr}/mcp"

    def stats(self):
        with urllib.request.urlopen(f"http://{self.addr}/stats", timeout=10) as r:
            return json.load(r)

    def reset(self):
        req = urllib.request.Request(f"http://{self.addr}/reset", method="POST", data=b"")
        urllib.request.urlopen(req, timeout=10).read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


class TlsServer:
    """`bench-tls-server`: HTTP/2 and HTTP/1.1 over TLS (chosen by ALPN), its counters on a plain control port."""

    def __init__(self):
        self.mode = "tls"
        self.proc = subprocess.Popen([binary("bench-tls-server"), "--ttl", "3600"], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        parts = line.split()
        if len(parts) != 6 or parts[0] != "listening" or parts[2] != "control" or parts[4] != "ca":
            raise SystemExit(f"bench-tls-server did not start: {line!r}")
        self.addr, self.control, self.ca = parts[1], parts[3], parts[5]
        self.url = f"https://{self.addr}/mcp"

    def stats(self):
        with urllib.request.urlopen(f"http://{self.control}/stats", timeout=10) as r:
            return json.load(r)

    def reset(self):
        req = urllib.request.Request(f"http://{self.control}/reset", method="POST", data=b"")
        urllib.request.urlopen(req, timeout=10).read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        try:
            os.remove(self.ca)
        except OSError:
            pass


# The HTTP/2 vs HTTP/1.1 benchmark: protocol argument of bench-sansio-h2 -> (label, HTTP version asked).
H2_PROTOCOLS = {
    "h2": ("mcp-sansio (tokio adapter), HTTP/2 negotiated", "HTTP/2"),
    "http1": ("mcp-sansio (tokio adapter), `http1_only(true)`", "HTTP/1.1"),
}
H2_TITLE = "100 concurrent work items over TLS: HTTP/2 vs HTTP/1.1"
H2_TARGET = "HTTP/2: one TLS handshake per origin for 100 concurrent work items"


def h2_process(server, protocol, n, reps, timeout=600):
    """One run of `bench-sansio-h2` against the TLS server: its output, its peak RSS (KiB) and the
    server's counters of that run alone. Fails if the work items did not run over the HTTP version
    asked for, by the client's account or by the server's."""
    version = H2_PROTOCOLS[protocol][1]
    server.reset()
    out, maxrss, _ = run_once([binary("bench-sansio-h2"), server.url, server.ca, protocol, str(n), str(reps)],
                              timeout)
    stats = server.stats()
    if out.get("http_version") != version:
        raise RuntimeError(f"the work items ran over {out.get('http_version')}, not {version}")
    other = stats["requests_h1" if version == "HTTP/2" else "requests_h2"]
    if other:
        raise RuntimeError(f"the server saw {other} requests over the other HTTP version")
    return out, maxrss, {k: v for k, v in stats.items() if k != "open"}


def h2_figures(quick):
    """Both rows of the HTTP/2 vs HTTP/1.1 table, measured against one server in one run.

    Each process runs one warm-up work item, then timed rounds of 100 work items started at once.
    The two protocols alternate process by process, so that load from elsewhere weighs on both
    alike. The server's counters are those of the timed rounds alone (a warm-up-only run of the
    same process is subtracted), per round."""
    n, reps, procs = 100, 5 if quick else 20, 1 if quick else 5
    rows = []
    srv = TlsServer()
    try:
        acc, failed = {}, {}
        for protocol in H2_PROTOCOLS:
            try:
                _, _, warm = h2_process(srv, protocol, n, 0)
                acc[protocol] = {"ms": [], "rss": [], "check": set(), "warm": warm,
                                 "stats": {k: 0 for k in warm}}
            except Exception as e:  # reported in the table, not fatal
                failed[protocol] = e
        for _ in range(procs):
            for protocol in list(acc):
                a = acc[protocol]
                try:
                    out, maxrss, stats = h2_process(srv, protocol, n, reps)
                except Exception as e:
                    failed[protocol] = e
                    del acc[protocol]
                    continue
                a["ms"] += out["ms"]
                a["rss"].append(maxrss)
                a["check"].add(out["check"])
                for k, v in stats.items():
                    a["stats"][k] += v - a["warm"][k]
        for protocol, (label, version) in H2_PROTOCOLS.items():
            if protocol in failed:
                e = failed[protocol]
                print(f"  FAILED bench-sansio-h2 {protocol}: {e}", flush=True)
                rows.append({"failed": True, "h2bench": True, "contender": "h2", "protocol": protocol,
                             "label": label, "work": "small", "n": n, "par": n, "era": "hint", "mode": srv.mode,
                             "error": str(e)[-300:]})
                continue
            a = acc[protocol]
            rounds = procs * reps
            per = {k: v / rounds for k, v in a["stats"].items()}
            r = {
                "contender": "h2", "h2bench": True, "protocol": protocol, "label": label, "http_version": version,
                "work": "small", "n": n, "par": n, "era": "hint", "mode": srv.mode,
                "ms": statistics.median(a["ms"]), "ms_all": a["ms"],
                "rss_kib": statistics.median(a["rss"]), "rss_all": a["rss"], "check": sorted(a["check"]),
                "requests": per["requests"], "connections": per["connections"], "handshakes": per["tls_handshakes"],
                "requests_h2": per["requests_h2"], "requests_h1": per["requests_h1"], "calls": per["call"],
                "stats": a["stats"], "warm": a["warm"], "rounds": rounds, "procs": procs,
            }
            rows.append(r)
            print(f"  {r['label']:<48} {r['ms']:9.2f} ms  rss {r['rss_kib'] / 1024:7.1f} MiB  "
                  f"conns/round {r['connections']:.2f}  tls/round {r['handshakes']:.2f}  "
                  f"req/round {r['requests']:.2f} (h2 {r['requests_h2']:.2f}, h1 {r['requests_h1']:.2f})  "
                  f"check {r['check']}", flush=True)
    finally:
        srv.stop()
    return rows


# The cold-TLS benchmark: handshake argument of bench-sansio-cold-tls -> label.
COLD_TLS_MODES = {
    "resumed": "mcp-sansio (tokio adapter), its own configuration: session resumed",
    "full": "mcp-sansio (tokio adapter), resumption off: full handshake",
}
COLD_TLS_TITLE = "A cold work item over TLS: resumed vs full handshake"


def cold_tls_process(server, mode, n, timeout=600):
    """One run of `bench-sansio-cold-tls` against the TLS server: its output, its CPU seconds (user +
    system) and the server's counters of that run."""
    server.reset()
    out, _, _, cpu = run_once([binary("bench-sansio-cold-tls"), server.url, server.ca, mode, str(n)], timeout,
                              with_cpu=True)
    if out.get("handshake") != mode:
        raise RuntimeError(f"the process ran {out.get('handshake')} handshakes, not {mode}")
    return out, cpu, server.stats()


def cold_tls_instructions(server, mode, n):
    """Callgrind over the whole client process: the instructions of a process that runs the warm-up
    item and `n` cold items, less those of a process that runs the warm-up item alone, per item."""
    ir = []
    for k in (0, n):
        cg = os.path.join(ROOT, "checks", "bench", "target", f"callgrind.cold-tls.{mode}.{k}.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}",
                            binary("bench-sansio-cold-tls"), server.url, server.ca, mode, str(k)],
                           capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"callgrind of bench-sansio-cold-tls {mode} failed: {p.stderr[-500:]}")
        ir.append(int([l for l in p.stderr.splitlines() if "Collected :" in l][-1].split(":")[-1].strip()))
    return (ir[1] - ir[0]) / n


def cold_tls_figures(quick):
    """Both rows of the cold-TLS table, against one `bench-tls-server` in one run.

    Each process runs one warm-up work item, then `n` cold work items one after another (the
    client keeps no idle socket, so each dials: TCP connect, TLS handshake, one request). The two
    modes alternate process by process. Client CPU and the server's counters are those of the
    timed items alone (a warm-up-only process of the same mode is subtracted); instructions come
    from callgrind the same way."""
    n, procs, cg_n = (50, 2, 10) if quick else (200, 5, 20)
    srv = TlsServer()
    rows = []
    try:
        acc, failed = {}, {}
        for mode in COLD_TLS_MODES:
            try:
                _, cpu0, warm = cold_tls_process(srv, mode, 0)
                acc[mode] = {"ms": [], "cpu": [], "check": set(), "cpu0": cpu0, "warm": warm,
                             "stats": {k: 0 for k in warm}}
            except Exception as e:  # reported in the table, not fatal
                failed[mode] = e
        for _ in range(procs):
            for mode in list(acc):
                a = acc[mode]
                try:
                    out, cpu, stats = cold_tls_process(srv, mode, n)
                except Exception as e:
                    failed[mode] = e
                    del acc[mode]
                    continue
                a["ms"] += out["ms"]
                a["cpu"].append((cpu - a["cpu0"]) * 1e3 / n)
                a["check"].add(out["check"])
                for k, v in stats.items():
                    a["stats"][k] += v - a["warm"][k]
        for mode, label in COLD_TLS_MODES.items():
            if mode in failed:
                print(f"  FAILED bench-sansio-cold-tls {mode}: {failed[mode]}", flush=True)
                rows.append({"failed": True, "mode": mode, "label": label, "error": str(failed[mode])[-300:]})
                continue
            a = acc[mode]
            items = procs * n
            per = {k: v / items for k, v in a["stats"].items() if k != "open"}
            try:
                instructions = cold_tls_instructions(srv, mode, cg_n)
            except Exception as e:  # reported, not fatal
                print(f"  callgrind of {mode} failed: {e}", flush=True)
                instructions = None
            r = {"mode": mode, "label": label, "ms": statistics.median(a["ms"]), "ms_all": a["ms"],
                 "p90_ms": sorted(a["ms"])[int(0.9 * (len(a["ms"]) - 1))],
                 "cpu_ms": statistics.median(a["cpu"]), "cpu_all": a["cpu"], "instructions": instructions,
                 "connections": per["connections"], "handshakes": per["tls_handshakes"],
                 "resumed": per.get("tls_resumed"), "requests": per["requests"], "check": sorted(a["check"]),
                 "items": items, "procs": procs, "n": n, "callgrind_items": cg_n}
            rows.append(r)
            ir = f"{instructions:,.0f}" if instructions is not None else "-"
            print(f"  {label:<66} wall {r['ms']:.3f} ms  cpu {r['cpu_ms']:.3f} ms  instructions {ir}  "
                  f"conns/item {r['connections']:.2f}  tls/item {r['handshakes']:.2f}  "
                  f"resumed/item {r['resumed'] if r['resumed'] is not None else '-'}", flush=True)
    finally:
        srv.stop()
    return {"rows": rows, "when": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}", "quick": quick,
            "machine": machine()}


def cold_tls_table(w, cold):
    """The cold-TLS section, if measured."""
    if not cold or not cold.get("rows"):
        return
    rows = cold["rows"]
    ok = [r for r in rows if not r.get("failed")]
    full = next((r for r in ok if r["mode"] == "full"), None)
    w(f"## {COLD_TLS_TITLE}")
    w("")
    any_ok = ok[0] if ok else {}
    w(f"Measured {cold['when']} UTC{' (quick run)' if cold.get('quick') else ''} by `checks/bench/run.py --cold-tls-only` "
      f"(also part of a full run), on {cold.get('machine', 'the machine above')}"
      f"{load_words(cold, '; a loaded machine (other builds shared its 2 CPUs)')}, so read the wall and CPU figures "
      "as this run's and the instructions as the steady ones. "
      "Server: `bench-tls-server` (checks/bench/harness) on 127.0.0.1 over TLS 1.3 with ALPN `http/1.1`, rustls's "
      "default session cache (two TLS 1.3 tickets per handshake); it counts its handshakes and those that resumed a "
      "session (`ServerConnection::handshake_kind`). Contender: `bench-sansio-cold-tls` (checks/bench/sansio), one "
      "tokio `Client` per process (current-thread runtime, `http1_only(true)`, a pool that keeps no idle socket: "
      "`PoolLimits::max_idle` 0), one warm-up work item, then "
      f"{any_ok.get('n', '?')} cold work items one after another, each its own `Session`: connect (era hint, no "
      "request), call `small`, close: one dial each (TCP connect, TLS handshake, one request). `resumed`: the "
      "client's own configuration (`add_root_certificates`), which keeps the origin's TLS session; `full`: the same "
      "roots in a configuration given whole (`tls_config`) with `Resumption::disabled()`. The two rows' processes "
      f"alternate ({any_ok.get('procs', '?')} of each). **Wall**: the median cold item (and its 90th percentile), "
      "client and server on one loopback; **client CPU**: user + system time of the client process less that of a "
      "warm-up-only process, per timed item, median over processes; **instructions**: callgrind over the whole "
      f"client process, {any_ok.get('callgrind_items', '?')} cold items less the warm-up-only process, per item "
      "(the client alone: the server's side of the handshake is not counted). Connections, handshakes and resumed "
      "handshakes are the server's counts per timed item.")
    w("")
    if ok:
        w("| client | wall / item (median) | p90 | × full | client CPU / item | × full | instructions / item | × full | "
          "TCP conns / item | TLS handshakes / item | resumed / item | requests / item | check |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in ok:
            rt = f"{r['ms'] / full['ms']:.2f}" if full else "-"
            cr = f"{r['cpu_ms'] / full['cpu_ms']:.2f}" if full and full["cpu_ms"] > 0 else "-"
            ir = f"{r['instructions']:,.0f}" if r["instructions"] is not None else "-"
            irr = (f"{r['instructions'] / full['instructions']:.2f}"
                   if full and r["instructions"] is not None and full["instructions"] else "-")
            res = f"{r['resumed']:.2f}" if r["resumed"] is not None else "-"
            w(f"| {r['label']} | {r['ms']:.3f} ms | {r['p90_ms']:.3f} ms | {rt} | {r['cpu_ms'] * 1e3:.0f} µs | {cr} | "
              f"{ir} | {irr} | {r['connections']:.2f} | {r['handshakes']:.2f} | {res} | {r['requests']:.2f} | "
              f"{'/'.join(map(str, r['check']))} |")
        w("")
    for f in rows:
        if f.get("failed"):
            err = " ".join(f["error"].split())[-200:].replace("|", "/")
            w(f"- FAILED: {f['label']}: {err}")
    if any(f.get("failed") for f in rows):
        w("")
    res = next((r for r in ok if r["mode"] == "resumed"), None)
    if res and full:
        ir = ""
        if res["instructions"] is not None and full["instructions"]:
            ir = (f", {res['instructions']:,.0f} client instructions against {full['instructions']:,.0f} "
                  f"({res['instructions'] / full['instructions']:.2f}×)")
        w(f"What the figures show: with the session kept, {res['resumed'] or 0:.2f} of the "
          f"{res['handshakes']:.2f} handshakes per cold item resumed (full: {full['resumed'] or 0:.2f}), and a cold item "
          f"took {res['ms']:.3f} ms of wall against {full['ms']:.3f} ms ({res['ms'] / full['ms']:.2f}×), "
          f"{res['cpu_ms'] * 1e3:.0f} µs of client CPU against {full['cpu_ms'] * 1e3:.0f} µs"
          f"{' (' + format(res['cpu_ms'] / full['cpu_ms'], '.2f') + '×)' if full['cpu_ms'] > 0 else ''}{ir}. "
          "A resumed TLS 1.3 handshake skips the server's certificate and its verification by the client; it "
          "keeps the key exchange (rustls resumes with PSK and a fresh ECDHE share).")
        w("")


def cold_tls_only(a):
    """Measures the cold-TLS rows alone and writes their section into --out (replacing it, or after
    the HTTP/2 vs HTTP/1.1 section), and the figures into --json, leaving the rest as it is."""
    cold = cold_tls_figures(a.quick)
    store_figures(a.json, "cold_tls", cold, create=False)
    lines = []
    cold_tls_table(lines.append, cold)
    put_section(a.out, lines, [f"## {COLD_TLS_TITLE}"], after=(f"## {H2_TITLE}",))


# The concurrency scaling rows: work items in flight at once on one `Client`.
SCALE_SIZES = (1, 100, 1000, 10000)
SCALE_TITLE = "How cost grows: concurrent work items on one `Client` (HTTP/1.1 pooled, HTTP/2 on one socket)"
# The section's former titles, replaced by a run of --scale-only.
SCALE_OLD_TITLES = ("How cost grows: concurrent work items on one `Client` (HTTP/1.1, pooled)",)
# Milliseconds of client CPU a size's timed items must take in all for its CPU per item to enter
# the exponent (below it, the warm-up subtraction is noise).
SCALE_CPU_FLOOR_MS = 5.0
# The row sets: key -> (contender key, label, wire, work item). The first is the one the targets
# are judged on.
SCALE_SETS = {
    "tokio-h1": ("tokio", "mcp-sansio (tokio adapter)", "HTTP/1.1, pooled", "list+slow"),
    "rmcp-h1": ("rmcp", "rmcp 3.11.0", "HTTP/1.1, pooled", "list+slow"),
    "tokio-h2": ("tokio", "mcp-sansio (tokio adapter)", "HTTP/2, one TLS socket", "list+small"),
}


def slope(points):
    """Least-squares slope of log(y) against log(x) over `points` [(x, y)] with y > 0: the growth
    exponent (1: linear)."""
    import math
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def raise_nofile(want):
    """Raises this process's soft limit on descriptors (its children inherit it) towards `want`;
    returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < min(hard, want):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, want), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def scale_argv(key, url, par, mode, origins, work, ca=None):
    """The command line of a scaling contender: `bench-sansio-scale` or `bench-rmcp scale`."""
    tail = [url, str(par), mode, str(origins), work] + ([ca] if ca else [])
    if key == "rmcp":
        return [binary("bench-rmcp"), "scale"] + tail
    return [binary("bench-sansio-scale")] + tail


def rpc_bytes(url, method):
    """Bytes of the body a plain-HTTP server answers to one JSON-RPC request `method` (modern era)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return len(r.read())


def scale_sets(keys):
    """The row sets whose contender's binary is built and, if `keys` is given, asked for."""
    return [s for s, (k, *_rest) in SCALE_SETS.items()
            if os.path.exists(binary("bench-rmcp" if k == "rmcp" else "bench-sansio-scale"))
            and (not keys or k in keys)
            and (k != "tokio" or not s.endswith("h2") or os.path.exists(binary("bench-tls-server")))]


def scale_figures(quick, keys=None):
    """Every row set of SCALE_SETS at each of SCALE_SIZES, the sets alternating process by process
    within a size: client CPU per item (a `nosample` process's CPU less a warm-up-only process's,
    over the items), memory per in-flight item (peak VmRSS during the round less VmRSS before it,
    over the items), descriptors in flight (peak less before), the 99th-percentile latency; the
    growth exponents of the totals against the size. HTTP/1.1 sets run against `bench-server
    --tiny-catalog`, the HTTP/2 set against `bench-tls-server` (whose listing is the same tiny
    catalog); every HTTP/2 process must open one HTTP/2 connection and send no HTTP/1.1 request."""
    limit = raise_nofile(2 * max(SCALE_SIZES) + 1024)
    procs = 1 if quick else 3
    sets = scale_sets(keys)
    srv = Server("json", "both", extra=("--tiny-catalog",))
    tls = TlsServer() if any(s.endswith("h2") for s in sets) else None
    rows = []
    try:
        page_bytes = rpc_bytes(srv.url, "tools/list")
        def argv(s, par, mode):
            key, _, _, work = SCALE_SETS[s]
            if s.endswith("h2"):
                return scale_argv(key, tls.url, par, mode, 1, work, tls.ca)
            return scale_argv(key, srv.url, par, mode, 1, work)
        cpu0 = {s: run_once(argv(s, 0, "nosample"), 600, with_cpu=True)[3] for s in sets}
        for par in SCALE_SIZES:
            acc = {s: {"cpu": [], "mem": [], "fds": [], "ms": [], "check": set(), "tools": set(), "error": None}
                   for s in sets}
            for _ in range(procs):
                for s in sets:
                    a = acc[s]
                    if a["error"]:
                        continue
                    if par + 512 > limit:
                        a["error"] = f"ulimit -n {limit} is below {par} + 512"
                        continue
                    try:
                        srv.reset()
                        if tls:
                            tls.reset()
                        out, _, _ = run_once(argv(s, par, "sample"), 900)
                        if s.endswith("h2"):
                            st = tls.stats()
                            if st["h2_connections"] != 1 or st["requests_h1"]:
                                raise RuntimeError(f"{st['h2_connections']} HTTP/2 connections and "
                                                   f"{st['requests_h1']} HTTP/1.1 requests, not 1 and 0")
                        quiet, _, _, c = run_once(argv(s, par, "nosample"), 900, with_cpu=True)
                        if len(out["ms"]) != par or len(quiet["ms"]) != par:
                            raise RuntimeError(f"{len(out['ms'])} and {len(quiet['ms'])} of {par} work items reported")
                        a["cpu"].append((c - cpu0[s]) * 1e3)
                        a["mem"].append(out["rss_peak_kib"] - out["rss_before_kib"])
                        a["fds"].append(out["fds_peak"] - out["fds_before"])
                        a["ms"] += out["ms"]
                        a["check"].add(out["check"])
                        a["tools"].add(out.get("tools", 0))
                    except Exception as e:  # reported in the table, not fatal
                        a["error"] = str(e)[-300:]
            for s in sets:
                a = acc[s]
                if a["error"]:
                    r = {"set": s, "par": par, "failed": True, "error": a["error"]}
                else:
                    ms = sorted(a["ms"])
                    cpu, mem = statistics.median(a["cpu"]), statistics.median(a["mem"])
                    r = {"set": s, "par": par, "procs": procs, "cpu_total_ms": cpu, "cpu_item_ms": cpu / par,
                         "mem_total_kib": mem, "mem_item_kib": mem / par, "fds": statistics.median(a["fds"]),
                         "p99_ms": ms[int(0.99 * (len(ms) - 1))], "p50_ms": ms[len(ms) // 2],
                         "check": sorted(a["check"]), "tools": sorted(a["tools"])}
                rows.append(r)
                print(f"  {r}", flush=True)
    finally:
        srv.stop()
        if tls:
            tls.stop()
    exps = {}
    for s in sets:
        ok = [r for r in rows if r["set"] == s and not r.get("failed")]
        cpu_pts = [(r["par"], r["cpu_total_ms"]) for r in ok if r["cpu_total_ms"] >= SCALE_CPU_FLOOR_MS]
        exps[s] = {
            "cpu": slope(cpu_pts), "cpu_sizes": [p for p, _ in cpu_pts],
            "mem": slope([(r["par"], r["mem_total_kib"]) for r in ok]),
            "fds": slope([(r["par"], r["fds"]) for r in ok if r["fds"] > 0]),
            "p99": slope([(r["par"], r["p99_ms"]) for r in ok]),
        }
    return {"rows": rows, "sets": sets, "exponents": exps, "nofile": limit, "quick": quick, "machine": machine(),
            "page_bytes": page_bytes, "when": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"}


def scale_table(w, sc):
    """The concurrency scaling section, if measured."""
    if not sc or not sc.get("rows"):
        return
    if "sets" not in sc:  # figures of the former layout: one set, this crate over HTTP/1.1, calls only
        sc = dict(sc, sets=["tokio-h1"], exponents={"tokio-h1": sc["exponents"]},
                  rows=[dict(r, set="tokio-h1") for r in sc["rows"]])
    page = sc.get("page_bytes")
    w(f"## {SCALE_TITLE}")
    w("")
    w(f"Measured {sc['when']} UTC{' (quick run)' if sc.get('quick') else ''} by `checks/bench/run.py --scale-only` "
      f"(also part of a full run), on {sc.get('machine', 'the machine above')}"
      f"{load_words(sc, '; **a loaded machine** (other builds shared its 2 CPUs)')}: read the figures as this "
      "run's. A **work item** lists as well as calls: connect, list all "
      "(the tiny catalog: one page of three tools"
      f"{f', a {page:,}-byte JSON-RPC body' if page else ''}; `bench-server --tiny-catalog`, and the listing of "
      "`bench-tls-server`), call a tool, close; each item its own session, N items started at once after one "
      "warm-up item. Row sets, in one run, alternating process by process within a size:")
    w("")
    w("- **mcp-sansio, HTTP/1.1 pooled**: `bench-sansio-scale` (checks/bench/sansio), one tokio `Client` per "
      "process (loopback allowed, a pool that may keep as many idle sockets as items), connect from the era hint "
      "(no request), list, call `slow`, close. The server (`bench-server`, JSON responses, 127.0.0.1) answers "
      "`slow` after 3 s, so every item of a round is in flight at the same time, each on a socket of its own.")
    w("- **rmcp, HTTP/1.1 pooled**: `bench-rmcp scale` (checks/bench/rmcp), one pooled `reqwest::Client` per process "
      "(its defaults), each item its own rmcp session over it: connect (`server/discover`; rmcp keeps no era per "
      "origin, so one request more than ours), list, call `slow`, close; the same server.")
    w("- **mcp-sansio, HTTP/2 on one socket**: `bench-sansio-scale … CA_PEM` against `bench-tls-server` (TLS, ALPN "
      "`h2`; hyper's HTTP/2 server), one tokio `Client` per process (its defaults, HTTP/2 where ALPN chooses it): "
      "every item's session shares the origin's one HTTP/2 socket (the server counts one HTTP/2 connection and no "
      "HTTP/1.1 request per process, checked). The core opens at most min(100, the server's "
      "SETTINGS_MAX_CONCURRENT_STREAMS) streams of a socket at once (`ClientBuilder::h2_max_streams`, its default; "
      "hyper's server allows 200, so 100 here) and the other items wait for a stream, their wait counted against "
      "their request's time budget; so these items call `small`, which the server answers at once, instead of "
      "`slow` (10,000 items of 3 s, 100 at a time, would take five minutes). Here **in flight** means started and "
      "not finished: all N items' sessions exist at once, at most 100 of them with a stream open. rmcp's bench "
      "build has no TLS (its `reqwest` is built without it), so it has no row here.")
    w("")
    w("Each size runs two processes per set: one that samples memory and descriptors, one that does not "
      "(`nosample`), whose CPU is the items' alone. **Client CPU / item**: user + system time of the `nosample` "
      "process less that of a warm-up-only process of the same set, over N; **memory / in-flight item**: the "
      "process's peak `VmRSS` during the round (sampled every 50 ms) less its `VmRSS` before the round, over N "
      "(user memory: kernel socket buffers not included); **descriptors**: the peak count of `/proc/self/fd` during "
      "the round less the count before it; **p99**: the 99th-percentile latency of an item (the server's 3 s "
      f"included for `slow`). Median over {next((r.get('procs', 1) for r in sc['rows'] if not r.get('failed')), 1)} "
      f"process(es) per size; `ulimit -n` {sc.get('nofile')}. **Exponent**: the least-squares slope of log(total) "
      "against log(N) (1: linear; CPU only over the sizes whose timed items took at least "
      f"{SCALE_CPU_FLOOR_MS:.0f} ms of CPU in all, since below that the subtraction is noise: such a size is marked "
      "_below the floor_ and has no ratio to rmcp; descriptors over the "
      "sizes that opened any).")
    w("")
    w("| client | wire, work item | concurrent items | client CPU / item | × rmcp | memory / in-flight item | × rmcp | "
      "descriptors in flight | p50 latency | p99 latency | check (text/tools) |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    fx = lambda v: f"{v:.3f}" if v is not None else "-"
    ok = {(r["set"], r["par"]): r for r in sc["rows"] if not r.get("failed")}
    for s in sc["sets"]:
        _, label, wire, work = SCALE_SETS[s]
        what = f"{wire}, {work.replace('+', ' + ')}"
        for r in [r for r in sc["rows"] if r["set"] == s]:
            if r.get("failed"):
                err = " ".join(r["error"].split())[-200:].replace("|", "/")
                w(f"| {label} | {what} | {r['par']:,} | FAILED: {err} | | | | | | | |")
                continue
            other = ok.get(("rmcp-h1", r["par"])) if s == "tokio-h1" else None
            floor = min(r["cpu_total_ms"], other["cpu_total_ms"] if other else r["cpu_total_ms"])
            rc = f"{r['cpu_total_ms'] / other['cpu_total_ms']:.2f}" if other and floor >= SCALE_CPU_FLOOR_MS else "-"
            noise = " (below the floor)" if r["cpu_total_ms"] < SCALE_CPU_FLOOR_MS else ""
            rm = (f"{r['mem_total_kib'] / other['mem_total_kib']:.2f}"
                  if other and other["mem_total_kib"] > 0 and r["mem_total_kib"] > 0 else "-")
            tools = "/".join(map(str, r.get("tools", [])))
            # Below the floor the subtraction is noise (it can even come out negative): no figure.
            cpu = "below the floor" if noise else f"{r['cpu_item_ms'] * 1e3:.0f} µs"
            w(f"| {label} | {what} | {r['par']:,} | {cpu} | {rc} | {r['mem_item_kib']:.1f} KiB | "
              f"{rm} | {r['fds']:.0f} | {fmt_ms(r['p50_ms'])} | {fmt_ms(r['p99_ms'])} | "
              f"{'/'.join(map(str, r['check']))}{' / ' + tools + ' tools' if tools and tools != '0' else ''} |")
        e = sc["exponents"].get(s, {})
        sizes = ", ".join(f"{p:,}" for p in e.get("cpu_sizes", []))
        w(f"| {label} | {what}: **exponent** | | {fx(e.get('cpu'))} (sizes {sizes or 'none'}) | | {fx(e.get('mem'))} | | "
          f"{fx(e.get('fds'))} | | {fx(e.get('p99'))} | |")
    w("")
    first = sc["sets"][0] if sc["sets"] else None
    mine = [r for r in sc["rows"] if r["set"] == first and not r.get("failed")]
    big = max(mine, key=lambda r: r["par"]) if mine else None
    if big:
        e = sc["exponents"][first]
        resp_kib = ((page or 0) + max(big["check"])) / 1024
        beyond = big["mem_item_kib"] - resp_kib
        cpu_ok = e["cpu"] is not None and e["cpu"] <= 1.05
        mem_ok = beyond <= 16
        over = [f"{r['mem_item_kib'] - resp_kib:.1f} KiB at {r['par']:,}" for r in mine
                if r["mem_item_kib"] - resp_kib > 16]
        w(f"Targets (set before measuring), judged on the first row set ({SCALE_SETS[first][1]}, "
          f"{SCALE_SETS[first][2]}): client CPU per work item flat from 1 to 10,000 concurrent items, exponent "
          f"≤ 1.05: {fx(e['cpu'])}, **{'met' if cpu_ok else 'missed'}**; memory per in-flight work item ≤ 16 KiB "
          f"beyond its response data ({resp_kib:.1f} KiB here: the listing's body and the call's text): "
          f"{big['mem_item_kib']:.1f} KiB at {big['par']:,} items, {beyond:.1f} KiB beyond, "
          f"**{'met' if mem_ok else 'missed'}**"
          f"{' (above it at the smaller sizes, where what the round costs once is shared by fewer items: ' + '; '.join(over) + ')' if over else ''}. "
          "Over HTTP/1.1 the descriptors in flight are one fewer than the items because the first item takes the "
          "warm-up's pooled socket; over HTTP/2 the items open none (the warm-up's socket carries them all). A "
          "FAILED row gives the error its process ended with; the set's other sizes stand, and its exponents are "
          "taken over them alone. The "
          "list-all rows against catalogs of 1, 10 and 100 pages (beside rmcp) and the rows over 1 to 1,000 origins "
          "have sections of their own.")
        w("")


# The list-all scaling rows: catalogs of these many pages (the default page budget is 100).
PAGE_SIZES = (1, 10, 100)
PAGES_TITLE = "How cost grows: list-all against catalogs of 1, 10 and 100 pages"


def pages_figures(quick):
    """For each catalog size in PAGE_SIZES (a `bench-server --pages N`), this crate's tokio
    adapter and rmcp (where its binary is built): callgrind instructions of one warm list-all work
    item over the whole client process (a process with the warm-up item and one timed item, less
    one with the warm-up item alone), and the process's peak RSS (GNU time, median of runs of the
    warm-up item and 2 timed ones); the growth exponents of both against the pages."""
    keys = [k for k in ("tokio", "rmcp") if os.path.exists(CONTENDERS[k][1][0])]
    runs = 1 if quick else 3
    rows = []
    for pages in PAGE_SIZES:
        srv = Server("json", "both", extra=("--pages", str(pages)))
        try:
            for key in keys:
                era = "hint" if key == "tokio" else "modern"
                try:
                    ir = []
                    for reps in (0, 1):
                        cg = os.path.join(ROOT, "checks", "bench", "target", f"callgrind.pages.{key}.{pages}.{reps}.out")
                        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"]
                                           + argv_of(key, srv.url, "list", 1, 1, reps, era),
                                           capture_output=True, text=True, timeout=900)
                        if p.returncode != 0:
                            raise RuntimeError(f"callgrind failed: {p.stderr[-300:]}")
                        ir.append(int([l for l in p.stderr.splitlines() if "Collected :" in l][-1].split(":")[-1].strip()))
                    rss, checks = [], set()
                    for _ in range(runs):
                        out, maxrss, _ = run_once(argv_of(key, srv.url, "list", 1, 1, 2, era), 600)
                        rss.append(maxrss)
                        checks.add(out["check"])
                    r = {"key": key, "label": CONTENDERS[key][0], "pages": pages, "instructions": ir[1] - ir[0],
                         "rss_kib": statistics.median(rss), "check": sorted(checks), "runs": runs}
                except Exception as e:  # reported in the table, not fatal
                    r = {"key": key, "label": CONTENDERS[key][0], "pages": pages, "failed": True,
                         "error": str(e)[-300:]}
                rows.append(r)
                print(f"  {r}", flush=True)
        finally:
            srv.stop()
    exps = {}
    for key in keys:
        ok = [r for r in rows if r["key"] == key and not r.get("failed")]
        exps[key] = {"instructions": slope([(r["pages"], r["instructions"]) for r in ok]),
                     "rss": slope([(r["pages"], r["rss_kib"]) for r in ok])}
    return {"rows": rows, "exponents": exps, "quick": quick, "machine": machine(),
            "when": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"}


def pages_table(w, pg):
    """The list-all scaling section, if measured."""
    if not pg or not pg.get("rows"):
        return
    w(f"## {PAGES_TITLE}")
    w("")
    w(f"Measured {pg['when']} UTC{' (quick run)' if pg.get('quick') else ''} by `checks/bench/run.py --pages-only`, on "
      f"{pg.get('machine', 'the machine above')}{load_words(pg, '; a loaded machine (other builds shared its 2 CPUs)')}"
      ": the instructions "
      "repeat whatever the load, the peak RSS is this run's. Server: `bench-server --pages N` (checks/bench/harness, "
      "JSON responses), the first N pages of the usual catalog (about 80 KiB each), the last naming no next cursor; "
      "N = 1, 10 and 100, the default page budget (`Budgets::pages`), so the page cap is the last size. A work item: "
      "connect, list all pages, close (this crate: era hint, one `Client`; rmcp: `server/discover`, a pooled "
      "`reqwest::Client`, as in the side-by-side tables). **Instructions**: callgrind over the whole client process "
      "(every thread), a process with the warm-up item and one timed item less one with the warm-up item alone. "
      "**Peak RSS**: GNU `time -f %M` of a process running the warm-up item and 2 timed ones (the catalog of the "
      f"last retained), median of {pg['rows'][0].get('runs', 1)} process(es). **Exponent**: the least-squares slope "
      "of log(figure) against log(pages) (1: linear).")
    w("")
    w("| client | pages | instructions / list-all item | × rmcp | peak RSS | × rmcp | check (tools) |")
    w("|---|---:|---:|---:|---:|---:|---|")
    ok = {(r["key"], r["pages"]): r for r in pg["rows"] if not r.get("failed")}
    for r in pg["rows"]:
        if r.get("failed"):
            err = " ".join(r["error"].split())[-200:].replace("|", "/")
            w(f"| {r['label']} | {r['pages']} | FAILED: {err} | | | | |")
            continue
        other = ok.get(("rmcp", r["pages"])) if r["key"] != "rmcp" else None
        ri = f"{r['instructions'] / other['instructions']:.2f}" if other else "-"
        rr = f"{r['rss_kib'] / other['rss_kib']:.2f}" if other else "-"
        w(f"| {r['label']} | {r['pages']} | {r['instructions']:,} | {ri} | {r['rss_kib'] / 1024:.1f} MiB | {rr} | "
          f"{'/'.join(map(str, r['check']))} |")
    fx = lambda v: f"{v:.3f}" if v is not None else "-"
    for key, e in pg["exponents"].items():
        w(f"| {CONTENDERS[key][0]}: **exponent** | 1 → 100 | {fx(e['instructions'])} | | {fx(e['rss'])} | | |")
    w("")


# The origins scaling rows: this many work items in flight at once, spread over these many origins.
ORIGIN_SIZES = (1, 10, 100, 1000)
ORIGIN_ITEMS = 1000
ORIGINS_TITLE = "How cost grows: 1,000 concurrent work items over 1, 10, 100 and 1,000 origins"


def origins_figures(quick, keys=None):
    """`bench-sansio-scale URL 1000 … ORIGINS` and, where its binary is built (and asked for with
    `keys`), `bench-rmcp scale URL 1000 … ORIGINS`, alternating, at each of ORIGIN_SIZES against one
    `bench-server` (every origin `o<i>.test` on its port, resolved to 127.0.0.1 by the client):
    memory after the warm-up (one item per origin), client CPU per timed item (a `nosample` process
    less a warm-up-only one of the same origins), memory per in-flight item, descriptors in flight,
    p99."""
    raise_nofile(2 * (ORIGIN_ITEMS + max(ORIGIN_SIZES)) + 1024)
    procs = 1 if quick else 3
    contenders = [k for k in ("tokio", "rmcp")
                  if os.path.exists(scale_argv(k, "", 0, "", 1, "")[0]) and (not keys or k in keys)]
    srv = Server("json", "both")
    rows = []
    try:
        for origins in ORIGIN_SIZES:
            o = str(origins)
            acc = {k: {"cpu": [], "mem": [], "warm": [], "fds": [], "ms": [], "check": set(), "error": None}
                   for k in contenders}
            for _ in range(procs):
                for key in contenders:
                    a = acc[key]
                    if a["error"]:
                        continue
                    try:
                        base, _, _, c0 = run_once(scale_argv(key, srv.url, 0, "nosample", o, "slow"), 600,
                                                  with_cpu=True)
                        out, _, _ = run_once(scale_argv(key, srv.url, ORIGIN_ITEMS, "sample", o, "slow"), 900)
                        quiet, _, _, c = run_once(scale_argv(key, srv.url, ORIGIN_ITEMS, "nosample", o, "slow"),
                                                  900, with_cpu=True)
                        if len(out["ms"]) != ORIGIN_ITEMS or len(quiet["ms"]) != ORIGIN_ITEMS:
                            raise RuntimeError(f"{len(out['ms'])} and {len(quiet['ms'])} of {ORIGIN_ITEMS} items reported")
                        a["cpu"].append((c - c0) * 1e3)
                        a["warm"].append(out["rss_before_kib"])
                        a["mem"].append(out["rss_peak_kib"] - out["rss_before_kib"])
                        a["fds"].append(out["fds_peak"] - out["fds_before"])
                        a["ms"] += out["ms"]
                        a["check"].add(out["check"])
                    except Exception as e:  # reported in the table, not fatal
                        a["error"] = str(e)[-300:]
            for key in contenders:
                a = acc[key]
                if a["error"]:
                    r = {"key": key, "origins": origins, "failed": True, "error": a["error"]}
                else:
                    ms = sorted(a["ms"])
                    r = {"key": key, "origins": origins, "procs": procs, "rss_warm_kib": statistics.median(a["warm"]),
                         "cpu_total_ms": statistics.median(a["cpu"]),
                         "cpu_item_ms": statistics.median(a["cpu"]) / ORIGIN_ITEMS,
                         "mem_item_kib": statistics.median(a["mem"]) / ORIGIN_ITEMS, "fds": statistics.median(a["fds"]),
                         "p99_ms": ms[int(0.99 * (len(ms) - 1))], "check": sorted(a["check"])}
                rows.append(r)
                print(f"  {r}", flush=True)
    finally:
        srv.stop()
    exps = {}
    for key in contenders:
        ok = [r for r in rows if r["key"] == key and not r.get("failed")]
        exps[key] = {"rss_warm": slope([(r["origins"], r["rss_warm_kib"]) for r in ok]),
                     "cpu": slope([(r["origins"], r["cpu_total_ms"]) for r in ok]),
                     "mem": slope([(r["origins"], r["mem_item_kib"]) for r in ok]),
                     "p99": slope([(r["origins"], r["p99_ms"]) for r in ok])}
    return {"rows": rows, "contenders": contenders, "exponents": exps, "quick": quick, "machine": machine(),
            "when": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"}


def origins_table(w, og):
    """The origins scaling section, if measured."""
    if not og or not og.get("rows"):
        return
    if "contenders" not in og:  # figures of the former layout: this crate alone
        og = dict(og, contenders=["tokio"], exponents={"tokio": og["exponents"]},
                  rows=[dict(r, key="tokio") for r in og["rows"]])
    w(f"## {ORIGINS_TITLE}")
    w("")
    w(f"Measured {og['when']} UTC{' (quick run)' if og.get('quick') else ''} by `checks/bench/run.py --origins-only`, on "
      f"{og.get('machine', 'the machine above')}"
      f"{load_words(og, '; **a loaded machine** (other builds shared its 2 CPUs)')}: read the "
      "figures as this run's. Server: one `bench-server` (JSON responses) on 127.0.0.1; origins `o0.test` … on its "
      "port, which the client resolves to 127.0.0.1, so each is an origin of its own to the client (pool, era hint) "
      "while the server is the same. Contenders, alternating process by process within a size: "
      "`bench-sansio-scale URL 1000 … ORIGINS` (checks/bench/sansio), one tokio `Client` per process with the "
      "defaults of the concurrency rows (`StaticResolver` for the origins); and `bench-rmcp scale URL 1000 … "
      "ORIGINS` (checks/bench/rmcp), one pooled `reqwest::Client` per process (its defaults, "
      "`ClientBuilder::resolve` for the origins), each item its own rmcp session. A warm-up item per origin (ours "
      "learns each origin's era; rmcp keeps none, so each of its items sends `server/discover`), then 1,000 work "
      "items at once, item k to origin k mod ORIGINS: connect, call `slow` (3 s), close, HTTP/1.1, each item on a "
      "socket of its own. **Memory after warm-up**: `VmRSS` before the round, what the client keeps per origin (era "
      "hints, and the warm-up's idle socket of each origin: both pools may keep 1,000 sockets here, so the round's "
      "first item of each origin may take it, and **descriptors in flight** count the new ones); **client CPU / "
      "item**: a `nosample` process less a warm-up-only process of the same origins, over 1,000; memory per "
      "in-flight item, descriptors in flight and p99 as in the concurrency rows. Median over "
      f"{next((r.get('procs', 1) for r in og['rows'] if not r.get('failed')), 1)} process(es) per size. "
      "**Exponent**: least-squares slope of log(figure) against log(origins) (0: flat, 1: linear).")
    w("")
    w("| client | origins | memory after warm-up | client CPU / item | × rmcp | memory / in-flight item | "
      "descriptors in flight | p99 latency | check |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    ok = {(r["key"], r["origins"]): r for r in og["rows"] if not r.get("failed")}
    fx = lambda v: f"{v:.3f}" if v is not None else "-"
    for key in og["contenders"]:
        label = CONTENDERS[key][0]
        for r in [r for r in og["rows"] if r["key"] == key]:
            if r.get("failed"):
                err = " ".join(r["error"].split())[-200:].replace("|", "/")
                w(f"| {label} | {r['origins']:,} | FAILED: {err} | | | | | | |")
                continue
            other = ok.get(("rmcp", r["origins"])) if key != "rmcp" else None
            rc = f"{r['cpu_total_ms'] / other['cpu_total_ms']:.2f}" if other and other["cpu_total_ms"] > 0 else "-"
            w(f"| {label} | {r['origins']:,} | {r['rss_warm_kib'] / 1024:.1f} MiB | {r['cpu_item_ms'] * 1e3:.0f} µs | "
              f"{rc} | {r['mem_item_kib']:.1f} KiB | {r['fds']:.0f} | {fmt_ms(r['p99_ms'])} | "
              f"{'/'.join(map(str, r['check']))} |")
        e = og["exponents"].get(key, {})
        w(f"| {label}: **exponent** | | {fx(e.get('rss_warm'))} | {fx(e.get('cpu'))} (of the total) | | "
          f"{fx(e.get('mem'))} | | {fx(e.get('p99'))} | |")
    w("")



def section_span(doc, heading):
    """The lines of the section `heading` in `doc` (a list of lines): (its heading's index, the
    index of the next `## ` heading or the end), or None if it has no such section."""
    if heading not in doc:
        return None
    start = doc.index(heading)
    return start, next((i for i in range(start + 1, len(doc)) if doc[i].startswith("## ")), len(doc))


def put_section(path, lines, headings, after=(), before=None):
    """Writes the section `lines` into the Markdown document `path`, leaving the rest as it is: in
    place of the first of `headings` (its title, then former titles) the document has, else at the
    end of the first section of `after` it has, else before the first line starting with
    `before`, else at its end."""
    with open(path) as f:
        doc = f.read().split("\n")
    span = next((section_span(doc, h) for h in headings if h in doc), None)
    if span:
        doc[span[0]:span[1]] = lines
    else:
        prev = next((section_span(doc, h) for h in after if h in doc), None)
        at = prev[1] if prev else next((i for i, l in enumerate(doc) if before and l.startswith(before)), len(doc))
        doc[at:at] = lines
    with open(path, "w") as f:
        f.write("\n".join(doc))
    print(f"wrote {path}")


def store_figures(path, key, figures, create=True):
    """Puts `figures` under `key` of the JSON file `path`, keeping its other figures; a missing
    file is created if `create`, else left missing."""
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
    elif not create:
        return
    d[key] = figures
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(d, f, indent=1)


def pages_only(a):
    """Measures the list-all scaling rows alone and writes their section into --out (replacing it,
    or after the concurrency scaling section), and the figures into --json if it exists."""
    pg = pages_figures(a.quick)
    store_figures(a.json, "pages", pg, create=False)
    lines = []
    pages_table(lines.append, pg)
    put_section(a.out, lines, [f"## {PAGES_TITLE}"], after=(f"## {SCALE_TITLE}", f"## {COLD_TLS_TITLE}", f"## {H2_TITLE}"))


def origins_only(a):
    """Measures the origins scaling rows alone and writes their section into --out (replacing it,
    or after the list-all or concurrency scaling section), and the figures into --json (created if
    missing)."""
    og = origins_figures(a.quick, set(a.only.split(",")) if a.only else None)
    store_figures(a.json, "origins", og)
    lines = []
    origins_table(lines.append, og)
    put_section(a.out, lines, [f"## {ORIGINS_TITLE}"],
                after=(f"## {PAGES_TITLE}", f"## {SCALE_TITLE}", f"## {COLD_TLS_TITLE}"))


def scale_only(a):
    """Measures the concurrency scaling rows alone and writes their section into --out (replacing
    it, or after the cold-TLS or HTTP/2 section), leaving the rest of the document as it is, and the
    figures into --json (created if missing)."""
    sc = scale_figures(a.quick, set(a.only.split(",")) if a.only else None)
    store_figures(a.json, "scale", sc)
    lines = []
    scale_table(lines.append, sc)
    put_section(a.out, lines, [f"## {SCALE_TITLE}"] + [f"## {t}" for t in SCALE_OLD_TITLES],
                after=(f"## {COLD_TLS_TITLE}", f"## {H2_TITLE}"))


def run_once(argv, timeout, cpus=None, with_cpu=False):
    """Runs argv under GNU time, confined to `cpus` if given; returns (parsed output, peak RSS KiB,
    wall seconds of the process), and with `with_cpu` also the CPU seconds (user + system) of the
    process and of GNU time around it, from `getrusage(RUSAGE_CHILDREN)` before and after (this
    script reaps no other child meanwhile; the servers run until the end).

    GNU time reports the child's own peak RSS; ru_maxrss of a child forked from this Python
    process would count the interpreter's pages it held before exec.
    """
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["/usr/bin/time", "-f", "BENCH-MAXRSS %M"] + argv, capture_output=True, timeout=timeout,
                       preexec_fn=on_cpus(cpus))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out, err = p.stdout.decode(), p.stderr.decode()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {err[-2000:]}")
    maxrss = int([l for l in err.splitlines() if l.startswith("BENCH-MAXRSS ")][-1].split()[1])
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    if with_cpu:
        return json.loads(line), maxrss, time.monotonic() - start, cpu
    return json.loads(line), maxrss, time.monotonic() - start


def measure(server, key, work, n, par, reps, era, procs, timeout=900, exclude_warmup=False):
    """Runs a contender `procs` times; with `exclude_warmup`, the server counters are those of the
    timed rounds alone (a warm-up-only run of the same process is subtracted)."""
    label = CONTENDERS[key][0]
    argv = argv_of(key, server.url, work, n, par, reps, era)
    ms, rss, checks = [], [], set()
    # Client CPU of the timed work items: the process's CPU less that of a warm-up-only process.
    server.reset()
    _, _, _, cpu0 = run_once(argv_of(key, server.url, work, n, par, 0, era), timeout, server.cpus, with_cpu=True)
    warm = server.stats() if exclude_warmup else None
    server.reset()
    cpu = 0.0
    for _ in range(procs):
        out, maxrss, _, c = run_once(argv, timeout, server.cpus, with_cpu=True)
        cpu += c - cpu0
        ms += out["ms"]
        rss.append(maxrss)
        checks.add(out["check"])
    stats = server.stats()
    items = procs * (1 + reps * n)
    if warm is not None:
        stats = {k: v - procs * warm[k] for k, v in stats.items()}
        items = procs * reps * n
    return {
        "contender": key,
        "label": label,
        "work": work,
        "n": n,
        "par": par,
        "era": era,
        "mode": server.mode,
        "ms": statistics.median(ms),
        "ms_all": ms,
        "rss_kib": statistics.median(rss),
        "check": sorted(checks),
        "requests": stats["requests"] / items,
        "connections": stats["connections"] / items,
        "stats": stats,
        "items": items,
        "cpu_ms": cpu * 1e3 / (procs * reps * n) if reps else None,
        "one_cpu": server.cpus is not None,
    }


# The catalog cache row: pages declaring this lifetime, work items in a round well within it.
CACHE_TTL_MS = 600000
CACHE_ITEMS = 20
CACHE_TITLE = "Catalog cache: repeated list-all work items within the lifetime"


def cache_figures(quick):
    """Repeated list-all work items (connect, list all 100 pages, close) against a server whose
    2026-07-28 pages declare `ttlMs`, through each adapter with the era hint alone (`hint`) and with
    the catalog cache on (`cache`). Server counters of the timed rounds only (warm-up subtracted)."""
    srv = Server("json", "both", extra=("--list-ttl-ms", str(CACHE_TTL_MS)))
    rows = []
    try:
        for key in ("tokio", "blocking"):
            for era in ("hint", "cache"):
                r = measure(srv, key, "list", CACHE_ITEMS, 1, 2 if quick else 5, era, 1, exclude_warmup=True)
                rows.append({"label": r["label"], "era": era, "requests": r["requests"],
                             "list": r["stats"]["list"] / r["items"] if "list" in r["stats"] else None,
                             "connections": r["connections"], "item_ms": r["ms"] / CACHE_ITEMS,
                             "rss_kib": r["rss_kib"], "check": r["check"]})
    finally:
        srv.stop()
    return {"rows": rows, "when": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}", "quick": quick}


def cache_table(w, cache):
    """The catalog cache section, if measured."""
    if not cache or not cache.get("rows"):
        return
    w(f"## {CACHE_TITLE}")
    w("")
    w(f"Measured {cache['when']} UTC{' (quick run)' if cache.get('quick') else ''} by `checks/bench/run.py --cache-only` "
      f"(also part of a full run). Server: `bench-server --list-ttl-ms {CACHE_TTL_MS}`, the same 100 pages declaring "
      f"`ttlMs: {CACHE_TTL_MS}`, `cacheScope: private`. A work item: connect, list all pages, close; one warm-up item, "
      f"then rounds of {CACHE_ITEMS} items one after another (the median round ÷ {CACHE_ITEMS}); requests counted on the "
      "server for the timed items only. `hint`: the adapters' defaults (era hint, no catalog cache); `cache`: "
      "`ClientBuilder::catalog_cache(true)`, whose lifetime (min(`ttlMs`, 5 minutes)) covers the run: each item's catalog "
      "is rebuilt from the stored pages, read again by the listing reader, with no request.")
    w("")
    w("What the rows show: the cache removes every request of a list-all work item (100 round trips here), not its "
      "reading: a cached item still reads the 8 MB of stored pages with the same reader and budgets as the wire "
      "(an entry is checked again when read back), and copies them out of the store, so on loopback, where a round "
      "trip costs tens of microseconds, its time is of the same order as an uncached item's; over a network each "
      "request saved is a round trip. Peak RSS adds the store's copy of the pages (at most its 8 MiB cap).")
    w("")
    w("| client | mode | requests / item | TCP conns / item | time / item | peak RSS |")
    w("|---|---|---:|---:|---:|---:|")
    for r in cache["rows"]:
        w(f"| {r['label']} | {r['era']} | {r['requests']:.2f} | {r['connections']:.3f} | {fmt_ms(r['item_ms'])} | "
          f"{r['rss_kib'] / 1024:.1f} MiB |")
    w("")


def cache_only(a):
    """Measures the catalog cache rows alone and writes their section into --out (replacing it, or
    before the core-alone section), leaving the rest of the document as it is."""
    lines = []
    cache_table(lines.append, cache_figures(a.quick))
    put_section(a.out, lines, [f"## {CACHE_TITLE}"], before="## Core alone")


def profile_table(w, title, prof, total):
    """Writes a callgrind profile (function, inclusive instructions) as a table, with each
    function's share of `total`."""
    w(f"{title} (inclusive counts from the same callgrind run):")
    w("")
    w("| core function | instructions | share |")
    w("|---|---:|---:|")
    for fn, ir in prof:
        w(f"| `{fn}` | {ir:,} | {ir / total * 100:.0f}% |")
    w("")


def measure_alternating(server, keys, work, reps, eras, procs, timeout=900):
    """Like `measure` for several contenders at once: `procs` rounds, each running one process of
    every contender in turn, so that load from elsewhere during the run weighs on them alike. The
    server's counters are taken around each process and summed per contender. A server confined
    to some CPUs has its clients confined to the same ones (the rows are marked `one_cpu`)."""
    acc = {k: {"ms": [], "rss": [], "check": set(), "stats": {}, "cpu": [], "cpu0": []} for k in keys}
    for _ in range(procs):
        for key in keys:
            a = acc[key]
            # A warm-up-only process, whose CPU is subtracted: what is left is the timed items'.
            _, _, _, c0 = run_once(argv_of(key, server.url, work, 1, 1, 0, eras[key]), timeout, server.cpus,
                                   with_cpu=True)
            a["cpu0"].append(c0)
            server.reset()
            out, maxrss, _, c = run_once(argv_of(key, server.url, work, 1, 1, reps, eras[key]), timeout,
                                         server.cpus, with_cpu=True)
            a["cpu"].append(c)
            for k, v in server.stats().items():
                a["stats"][k] = a["stats"].get(k, 0) + v
            a["ms"] += out["ms"]
            a["rss"].append(maxrss)
            a["check"].add(out["check"])
    rows = []
    items = procs * (1 + reps)
    for key in keys:
        a = acc[key]
        rows.append({
            "contender": key, "label": CONTENDERS[key][0], "work": work, "n": 1, "par": 1,
            "era": eras[key], "mode": server.mode,
            "ms": statistics.median(a["ms"]), "ms_all": a["ms"], "rss_kib": statistics.median(a["rss"]),
            "check": sorted(a["check"]), "requests": a["stats"]["requests"] / items,
            "connections": a["stats"]["connections"] / items, "stats": a["stats"], "items": items,
            "alternating": procs, "one_cpu": server.cpus is not None,
            "cpu_ms": (sum(a["cpu"]) - sum(a["cpu0"])) * 1e3 / (procs * reps),
            "cpu_per_proc_ms": [(c - c0) * 1e3 / reps for c, c0 in zip(a["cpu"], a["cpu0"])],
        })
    return rows


def try_measure_alternating(results, server, keys, work, reps, eras, procs):
    """`measure_alternating`, falling back to one contender at a time (`try_measure`) if a process
    fails, so that the failure is reported for that contender alone."""
    try:
        rows = measure_alternating(server, keys, work, reps, eras, procs)
    except Exception as e:  # retried contender by contender, failures reported there
        print(f"  alternating rounds failed ({str(e)[-200:]}); one contender at a time", flush=True)
        for key in keys:
            try_measure(results, server, key, work, 1, 1, reps, eras[key], procs)
        return
    for r in rows:
        results.append(r)
        print(f"  {r['label']:<32} {r['work']:<6} n=1     par=1    era={r['era']:<7} "
              f"{r['ms']:9.2f} ms  rss {r['rss_kib'] / 1024:7.1f} MiB  req/item {r['requests']:.2f}  "
              f"conn/item {r['connections']:.3f}  cpu/item {r['cpu_ms']:.2f} ms  check {r['check']}  ({r['alternating']} alternating rounds"
              f"{', server and client on one CPU' if r['one_cpu'] else ''})",
              flush=True)


def try_measure(results, *a, **kw):
    try:
        r = measure(*a, **kw)
        results.append(r)
        print(f"  {r['label']:<32} {r['work']:<6} n={r['n']:<5} par={r['par']:<4} era={r['era']:<7} "
              f"{r['ms']:9.2f} ms  rss {r['rss_kib'] / 1024:7.1f} MiB  req/item {r['requests']:.2f}  "
              f"conn/item {r['connections']:.3f}  cpu/item {(r['cpu_ms'] or 0):.2f} ms  check {r['check']}", flush=True)
        return r
    except Exception as e:  # a contender that fails is reported, not fatal
        print(f"  FAILED {args_str(a)}: {e}", flush=True)
        results.append({"failed": True, "contender": a[1], "work": a[2], "n": a[3], "par": a[4],
                        "era": a[6], "mode": a[0].mode, "error": str(e)[-300:]})
        return None


def args_str(a):
    return " ".join(str(x) for x in a[1:])


def callgrind(program, mode):
    """Instructions of `program mode` between its `measure_MODE` calls, and what it printed."""
    cg = os.path.join(ROOT, "checks", "bench", "target", f"callgrind.{program}.{mode}.out")
    p = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", f"--toggle-collect=*measure_{mode}*",
         binary(program), mode],
        capture_output=True, text=True, check=True,
    )
    ir = None
    for line in p.stderr.splitlines():
        if "Collected :" in line:
            ir = int(line.split(":")[-1].strip())
    info = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    return {"instructions": ir, **info, "callgrind_file": cg}


def whole_process(server):
    """Callgrind over the whole client process (every thread, runtime included) for one warm list-all
    work item: the instructions of a process that runs the warm-up item and one timed item, less those
    of a process that runs the warm-up item alone. Against `from_slice::<Value>` of the same 100
    bodies (`core-page value_all`)."""
    out = {}
    for key in ("tokio", "blocking"):
        ir = []
        for reps in (0, 1):
            cg = os.path.join(ROOT, "checks", "bench", "target", f"callgrind.whole.{key}.{reps}.out")
            p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"]
                               + argv_of(key, server.url, "list", 1, 1, reps, "hint"),
                               capture_output=True, text=True, timeout=900)
            if p.returncode != 0:
                raise RuntimeError(f"callgrind of {key} failed: {p.stderr[-500:]}")
            ir.append(int([l for l in p.stderr.splitlines() if "Collected :" in l][-1].split(":")[-1].strip()))
        out[key] = {"warm_up_only": ir[0], "with_one_item": ir[1], "instructions": ir[1] - ir[0]}
    out["value"] = callgrind("core-page", "value_all")
    return out


def core_figures():
    """Instruction counts of one page and of the 4 MiB call answer under callgrind, and retained
    catalog bytes."""
    out = {}
    for mode in ("sansio", "value"):
        out[mode] = callgrind("core-page", mode)
    out["profile"] = core_profile(out["sansio"]["callgrind_file"])
    r = subprocess.run([binary("core-page"), "retained"], capture_output=True, text=True, check=True)
    out["retained"] = json.loads(r.stdout.strip().splitlines()[-1])
    call = {mode: callgrind("core-call", mode) for mode in ("sansio", "value")}
    call["profile"] = core_profile(call["sansio"]["callgrind_file"], below=0.98)
    out["call"] = call
    return out


def core_profile(cg, below=0.85):
    """Inclusive instruction counts of the core's own functions in a callgrind file."""
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", cg], capture_output=True, text=True)
    best = {}
    for line in p.stdout.splitlines():
        parts = line.strip().split(None, 2)
        if len(parts) < 3 or not parts[0].replace(",", "").isdigit():
            continue
        fn = parts[2].split(":", 1)[-1].split(" [")[0].split(" (")[0]
        if not fn.startswith("mcp_sansio::") or "'" in fn:
            continue
        best[fn] = max(best.get(fn, 0), int(parts[0].replace(",", "")))
    top = max(best.values(), default=0)
    # The entry points and dispatchers include everything; list what lies below them.
    rows = [kv for kv in best.items() if kv[1] < below * top]
    return sorted(rows, key=lambda kv: -kv[1])[:8]


# Where the core's page cost goes, and what would remove it (see docs/benchmarks.md).
FIXES = {
    "mcp_sansio::list::pass::add_page":
        "src/list/pass.rs `add_page`: the one pass over the page that records each tool as spans of "
        "the shared page buffer and checks each schema on the way (`SchemaCheck::run`).",
    "mcp_sansio::list::pass::read_entry":
        "src/list/pass.rs `read_entry`: one entry of the page pass (name, description, schema spans).",
    "mcp_sansio::xmcp::check::SchemaCheck::run":
        "src/xmcp/check.rs `SchemaCheck::run`: validates each `inputSchema` (grammar, duplicate keys, "
        "depth, lone surrogates) and finds its `x-mcp-header` parameters in the same reading, "
        "without evaluating numbers.",
    "mcp_sansio::xmcp::check::SchemaCheck::annotation":
        "src/xmcp/check.rs `SchemaCheck::annotation`: one `x-mcp-header` parameter checked and kept "
        "(token, case-insensitive duplicate, kind, path).",
    "mcp_sansio::jsonrpc::parse_message_for_page":
        "src/jsonrpc.rs `parse_message_for_page`: the envelope of a listing's answer; the `result` is "
        "only delimited, and checked by the page pass.",
    "mcp_sansio::json::skip":
        "src/json.rs `skip`: the grammar check of members nobody reads.",
}


def idle_figures(server, count):
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = min(hard, count + 1024)
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        count = min(count, limit - 512)
        server.reset()
        out, maxrss, _ = run_once([binary("idle-conns"), server.url, str(count)], 600)
        if out.get("server_open") is None:
            out["server_open"] = -1
        out["nofile"] = limit
        out["peak_rss_kib"] = maxrss
        return out
    except Exception as e:
        return {"failed": str(e)[:300]}


def floor_only(a):
    """`--floor-only`: this round's targets alone. Re-measures the raw floor and this crate's two
    adapters in alternating rounds (list-all with free placement and on one CPU, and the 4 MiB
    call), the core's callgrind figures and the whole-process list-all item under callgrind, then
    writes into --out, in place, the sections these figures make (this round's targets, the
    Targets table, the core's and the whole process's callgrind tables, the retained catalog),
    leaving every other section of the document as it is; the Targets table keeps the earlier
    targets it cannot judge from these figures, with their figure from the run they came from.
    The figures go into --json (created if missing)."""
    q = a.quick
    rounds = 2 if q else 7
    keys = ["raw", "tokio", "blocking"]
    eras = {"raw": "modern", "tokio": "hint", "blocking": "hint"}
    json_srv = Server("json", "both")
    pinned_srv = Server("json", "both", one_cpu())
    rows = []
    started = time.time()
    try:
        print("== list all pages, JSON responses (floor and adapters, alternating)", flush=True)
        try_measure_alternating(rows, json_srv, keys, "list", 2 if q else 5, eras, rounds)
        print("== the same, server and clients on one CPU", flush=True)
        try_measure_alternating(rows, pinned_srv, keys, "list", 2 if q else 5, eras, rounds)
        print("== call big (4 MiB)", flush=True)
        try_measure_alternating(rows, json_srv, keys, "big", 2 if q else 5, eras, rounds)
        print("== whole process under callgrind: one warm list-all work item", flush=True)
        try:
            whole = whole_process(json_srv)
        except Exception as e:  # reported, not fatal
            whole = {"failed": str(e)[-300:]}
        print(f"  {whole}", flush=True)
    finally:
        json_srv.stop()
        pinned_srv.stop()
    core = core_figures()
    core["whole"] = whole
    when = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"
    floor = {"results": rows, "core": core, "when": when, "quick": q, "elapsed": time.time() - started}
    store_figures(a.json, "floor", floor)
    floor_render(a.out, floor)


# Targets of earlier rounds that this round's replace (dropped from the Targets table when the
# floor's figures are written in place).
SUPERSEDED = ("a 4 MiB text result: ≤ 2× the raw-socket floor's wall |",
              "the 4 MiB call answer in the core: one pass, ≤ 1× the instructions of",
              "warm list-all work item (era hint, pooled): client CPU (user + sys) ≤ 2.5×",
              "one warm list-all work item, whole client process: ≤ 0.2× the instructions")


def floor_render(out, fl):
    """Writes the sections the figures of `--floor-only` make into the document `out`, in place."""
    rows, core, when, q = fl["results"], fl["core"], fl["when"], fl["quick"]
    a = argparse.Namespace(out=out)
    # The sections these figures make, rendered alone, then put in place of the document's own.
    tmp = a.out + ".floor.tmp"
    write_markdown(tmp, rows, core, {"failed": "not run"}, 0, q)
    with open(tmp) as f:
        fresh = f.read().split("\n")
    os.remove(tmp)
    with open(a.out) as f:
        doc = f.read().split("\n")

    section = section_span

    old_run = next((l[len("- Run: "):].split(" UTC")[0] for l in doc if l.startswith("- Run: ")), "the full run")
    # The Targets table: this run's rows, then the earlier rows it cannot judge, as they were.
    ft, dt = section(fresh, "## Targets"), section(doc, "## Targets")
    if ft and dt:
        new_rows = [l for l in fresh[ft[0]:ft[1]] if l.startswith("| ") and not l.startswith("| target ")]
        judged = {l.split(" | ")[0].replace("**this round:** ", "") for l in new_rows}
        kept = []
        for l in doc[dt[0]:dt[1]]:
            if not l.startswith("| ") or l.startswith("| target ") or "**this round:**" in l:
                continue
            cells = l.split(" | ")
            if cells[0] in judged or any(t in l for t in SUPERSEDED):
                continue
            if "(figure of the run of" not in cells[1]:
                cells[1] += f" (figure of the run of {old_run} UTC)"
            kept.append(" | ".join(cells))
        block = fresh[ft[0]:ft[1]]
        last = max(i for i, l in enumerate(block) if l.startswith("| "))
        block[last + 1:last + 1] = kept
        doc[dt[0]:dt[1]] = block
    for heading in ("## Targets of this round (set before measuring)", "## Core alone: one page under callgrind",
                    "## Whole client process: one warm list-all work item under callgrind", "## Retained catalog",
                    "## Core alone: the 4 MiB call answer under callgrind"):
        fs, ds = section(fresh, heading), section(doc, heading)
        if fs and ds:
            doc[ds[0]:ds[1]] = fresh[fs[0]:fs[1]]
    note = (f"- This round's targets re-measured on {when} UTC by `checks/bench/run.py --floor-only`"
            f"{' (quick: fewer repetitions)' if q else ''}: the Targets section, and every callgrind figure of the "
            "core and of the whole process; the floor's and the adapters' rows of the side-by-side tables, and "
            "every other table, are of the run above.")
    doc = [l for l in doc if not l.startswith("- This round's targets re-measured on ")]
    at = next((i for i, l in enumerate(doc) if l.startswith("- Run: ")), None)
    if at is not None:
        doc.insert(at + 1, note)
    with open(a.out, "w") as f:
        f.write("\n".join(doc))
    print(f"wrote {a.out}")



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    ap.add_argument("--only", default="",
                    help="comma-separated contenders to run (" + ",".join(CONTENDERS) + "), and `h2` for the "
                    "HTTP/2 vs HTTP/1.1 benchmark over TLS; `--only h2` alone re-measures that table into --json "
                    "and keeps the other figures there")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json", default=os.path.join(ROOT, "checks", "bench", "results", "latest.json"))
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--from-json", action="store_true", help="only re-render the Markdown from --json")
    ap.add_argument("--idle-only", action="store_true", help="re-measure idle connections into --json, re-render")
    ap.add_argument("--cache-only", action="store_true",
                    help="measure the catalog cache rows alone and write their section into --out")
    ap.add_argument("--cold-tls-only", action="store_true",
                    help="measure the cold-TLS rows (resumed vs full handshake) alone and write their section into "
                    "--out and their figures into --json")
    ap.add_argument("--scale-only", action="store_true",
                    help="measure the concurrency scaling rows alone and write their section into --out")
    ap.add_argument("--origins-only", action="store_true",
                    help="measure the origins scaling rows (1,000 items over 1 to 1,000 origins) alone and write "
                    "their section into --out")
    ap.add_argument("--floor-only", action="store_true",
                    help="re-measure this round's targets alone (the floor and the adapters in alternating rounds, "
                    "the core's and the whole process's callgrind figures) into --json, keeping the other figures, "
                    "and re-render")
    ap.add_argument("--floor-from-json", action="store_true",
                    help="write the sections of the last --floor-only figures (from --json) into --out again, "
                    "measuring nothing")
    ap.add_argument("--pages-only", action="store_true",
                    help="measure the list-all scaling rows (catalogs of 1, 10 and 100 pages) alone and write "
                    "their section into --out")
    a = ap.parse_args()
    if a.floor_only:
        floor_only(a)
        return
    if a.floor_from_json:
        with open(a.json) as f:
            floor_render(a.out, json.load(f)["floor"])
        return
    if a.origins_only:
        origins_only(a)
        return
    if a.pages_only:
        pages_only(a)
        return
    if a.scale_only:
        scale_only(a)
        return
    if a.cache_only:
        cache_only(a)
        return
    if a.cold_tls_only:
        cold_tls_only(a)
        return
    if a.idle_only:
        with open(a.json) as f:
            d = json.load(f)
        srv = Server("json", "both")
        try:
            d["idle"] = idle_figures(srv, a.idle)
        finally:
            srv.stop()
        with open(a.json, "w") as f:
            json.dump(d, f, indent=1)
        a.from_json = True
    if a.from_json:
        with open(a.json) as f:
            d = json.load(f)
        if d.get("core") and "profile" not in d["core"]:
            d["core"]["profile"] = core_profile(d["core"]["sansio"]["callgrind_file"])
        write_markdown(a.out, d["results"], d["core"], d["idle"], d.get("elapsed", 0), d.get("quick", False),
                       d.get("when"), d.get("machine"), h2_when=d.get("h2_when"), h2_quick=d.get("h2_quick"),
                       cache=d.get("cache"), cold_tls=d.get("cold_tls"), scale=d.get("scale"),
                       pages=d.get("pages"), origins=d.get("origins"))
        print(f"wrote {a.out}")
        return
    q = a.quick
    only = set(a.only.split(",")) if a.only else set(CONTENDERS) | {"h2"}
    only |= {f"{k}-fresh" for k in ("tokio", "rmcp") if k in only}
    procs = 1
    if only == {"h2"}:
        h2_only(a)
        return

    json_srv = Server("json", "both")
    sse_srv = Server("sse", "both")
    legacy_srv = Server("json", "legacy")
    # The floor comparison again with the server and the clients on one CPU: see ONE_CPU_NOTE.
    pinned_srv = Server("json", "both", one_cpu()) if {"raw", "tokio"} <= only else None
    results = []
    started = time.time()
    try:
        # Which era each contender runs in the side-by-side tables: its default.
        # rmcp runs `server/discover` (one request, its fewest against a server of both eras); the
        # TypeScript SDK 1.x speaks only the 2025 era.
        default_era = {"raw": "modern", "tokio": "hint", "blocking": "hint", "rmcp": "modern", "ts": "legacy",
                       "py": "modern", "tokio-fresh": "modern", "rmcp-fresh": "modern"}
        # The raw floor and this crate's adapters, whose ratios are targets, run in alternating
        # rounds; the other contenders one after another.
        floor_keys = [k for k in ("raw", "tokio", "blocking") if k in only]
        rounds = 2 if q else 7
        print("== list all pages, JSON responses", flush=True)
        if floor_keys:
            try_measure_alternating(results, json_srv, floor_keys, "list", 2 if q else 5, default_era, rounds)
        for key in MAIN:
            if key in only and key not in floor_keys:
                try_measure(results, json_srv, key, "list", 1, 1, 2 if q else 4, default_era[key], procs)
        if pinned_srv:
            print("== list all pages, JSON responses, server and clients on one CPU", flush=True)
            try_measure_alternating(results, pinned_srv, floor_keys, "list", 2 if q else 5, default_era, rounds)
        print("== list all pages, SSE responses", flush=True)
        for key in MAIN:
            if key in only and key != "raw":
                try_measure(results, sse_srv, key, "list", 1, 1, 2 if q else 3, default_era[key], procs)
        print("== call small", flush=True)
        for key in MAIN:
            if key in only:
                try_measure(results, json_srv, key, "small", 1, 1, 5 if q else 30, default_era[key], procs)
        print("== call big (4 MiB)", flush=True)
        if floor_keys:
            try_measure_alternating(results, json_srv, floor_keys, "big", 2 if q else 5, default_era, rounds)
        for key in MAIN:
            if key in only and key not in floor_keys:
                try_measure(results, json_srv, key, "big", 1, 1, 2 if q else 5, default_era[key], procs)
        print("== unpooled: a new client per work item", flush=True)
        for key in ("tokio-fresh", "rmcp-fresh"):
            if key in only:
                try_measure(results, json_srv, key, "small", 1, 1, 5 if q else 30, default_era[key], procs)
                try_measure(results, json_srv, key, "list", 1, 1, 2 if q else 4, default_era[key], procs)
        print("== sequential work items (connect + call small + close)", flush=True)
        seq_n = 100 if q else 1000
        for key in MAIN:
            if key in only and key != "raw":
                try_measure(results, json_srv, key, "small", seq_n, 1, 1, default_era[key], 1)
        print("== concurrent work items", flush=True)
        conc_n = 100
        for key in MAIN:
            if key in only and key != "raw":
                try_measure(results, json_srv, key, "small", conc_n, conc_n, 2 if q else 5, default_era[key], 1)
        print("== handshake cost (requests per list-all work item)", flush=True)
        hs = [("tokio", "modern", json_srv), ("tokio", "hint", json_srv), ("tokio", "legacy", json_srv),
              ("tokio", "hint", legacy_srv), ("blocking", "modern", json_srv), ("blocking", "hint", json_srv),
              ("rmcp", "modern", json_srv), ("rmcp", "legacy", json_srv),
              ("py", "modern", json_srv), ("py", "hint", json_srv), ("py", "legacy", json_srv)]
        for key, era, srv in hs:
            if key in only:
                r = try_measure(results, srv, key, "list", 1, 1, 2, era, 1, exclude_warmup=True)
                if r is not None:
                    r["handshake"] = True
                    r["server"] = "legacy-only" if srv is legacy_srv else "both eras"
        cache = None
        if {"tokio", "blocking"} <= only:
            print(f"== {CACHE_TITLE}", flush=True)
            cache = cache_figures(q)
        if "h2" in only:
            print(f"== {H2_TITLE}", flush=True)
            results += h2_figures(q)
            print(f"== {COLD_TLS_TITLE}", flush=True)
            cold_tls = cold_tls_figures(q)
        else:
            cold_tls = None
        if "tokio" in only:
            print(f"== {SCALE_TITLE}", flush=True)
            scale = scale_figures(q, only)
            print(f"== {PAGES_TITLE}", flush=True)
            pages = pages_figures(q)
            print(f"== {ORIGINS_TITLE}", flush=True)
            origins = origins_figures(q, only)
        else:
            scale = pages = origins = None
        if {"tokio", "blocking"} <= only:
            print("== whole process under callgrind: one warm list-all work item", flush=True)
            try:
                whole = whole_process(json_srv)
            except Exception as e:  # reported, not fatal
                whole = {"failed": str(e)[-300:]}
            print(f"  {whole}", flush=True)
        else:
            whole = None
        core = core_figures()
        if whole:
            core["whole"] = whole
        idle = idle_figures(json_srv, a.idle) if "tokio" in only else {"failed": "not run"}
    finally:
        for s in (json_srv, sse_srv, legacy_srv, pinned_srv):
            if s:
                s.stop()
    elapsed = time.time() - started
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"results": results, "core": core, "idle": idle, "elapsed": elapsed, "quick": q, "cache": cache,
                   "cold_tls": cold_tls, "scale": scale, "pages": pages, "origins": origins, "when": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}", "machine": machine()},
                  f, indent=1)
    write_markdown(a.out, results, core, idle, elapsed, q, cache=cache, cold_tls=cold_tls, scale=scale, pages=pages,
                   origins=origins)
    print(f"wrote {a.out} ({elapsed:.0f} s)")


def h2_only(a):
    """`--only h2`: measures the HTTP/2 vs HTTP/1.1 table and puts it into --json in place of the
    previous one, keeping every other figure there, then re-renders the Markdown."""
    d = {"results": [], "core": None, "idle": {"failed": "not run"}, "elapsed": 0, "quick": a.quick}
    if os.path.exists(a.json):
        with open(a.json) as f:
            d = json.load(f)
    print(f"== {H2_TITLE}", flush=True)
    rows = h2_figures(a.quick)
    d["results"] = [r for r in d["results"] if not r.get("h2bench")] + rows
    d["h2_when"] = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"
    d["h2_quick"] = a.quick
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(d, f, indent=1)
    write_markdown(a.out, d["results"], d["core"], d["idle"], d.get("elapsed", 0), d.get("quick", False),
                   d.get("when"), d.get("machine"), h2_when=d["h2_when"], h2_quick=a.quick,
                   cache=d.get("cache"), cold_tls=d.get("cold_tls"), scale=d.get("scale"),
                   pages=d.get("pages"), origins=d.get("origins"))
    print(f"wrote {a.out}")


# Every run of this round's targets before the one rendered, as measured: a verdict depends on the
# machine's load, so the runs that gave another one stay on the page.
EARLIER_RUNS_OF_THIS_ROUND = (
    "Earlier runs of this round's targets, by the same method: 2026-12-07 15:27 UTC (`run.py --floor-only`, on "
    "a machine loaded by other builds): client CPU 8.05× the floor's (missed), whole process 0.256× the `Value` "
    "parse (missed), the 4 MiB call 2.17× the floor's wall (missed) and 0.48× the `Value` parse's instructions "
    "(met); 2026-12-07 20:43 UTC (a full run, quiet machine, before the shared header parameters and the "
    "bounded idle pool): client CPU 4.34× (missed), whole process 0.247× (missed), the 4 MiB call 1.40× the "
    "floor's wall (met) and 0.47× (met). The verdicts in the table are of the latest run; the instruction "
    "figures do not depend on the load, the CPU and wall ones do (their spread over the rounds is above).")


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(open("/proc/meminfo").readline().split()[1])
        mem = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    def ver(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    try:
        load = f"; 1-minute load average {os.getloadavg()[0]:.2f} as the figures were taken"
    except OSError:
        load = ""
    return (f"{platform.system()} {platform.release()}, {os.cpu_count()} × {cpu}{mem}; "
            f"{ver(['rustc', '--version'])}; node {ver(['node', '--version'])}; Python {platform.python_version()}"
            f"{load}")


def load_words(sec, loaded_text):
    """How loaded the machine was for a section: its machine line names the load average when it
    was recorded (it is read at the end of the measuring); figures of older runs, which did not
    record it, were taken on a machine shared with other builds, and say so."""
    return "" if "load average" in sec.get("machine", "") else loaded_text


def write_markdown(path, results, core, idle, elapsed, quick, when=None, mach=None, h2_when=None, h2_quick=None,
                   cache=None, cold_tls=None, scale=None, pages=None,
                   origins=None):
    ok = [r for r in results if not r.get("failed")]
    h2_rows = [r for r in results if r.get("h2bench")]
    results = [r for r in results if not r.get("h2bench")]
    ok_all, ok = ok, [r for r in ok if not r.get("h2bench")]
    when = when or f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"
    mach = mach or machine()
    L = []
    w = L.append
    w("# Benchmarks")
    w("")
    w("Written by `scripts/bench-all.sh` (harness: `checks/bench/run.py`); do not edit by hand.")
    w("")
    w(f"- Run: {when} UTC, {elapsed:.0f} s{' (quick run: fewer repetitions)' if quick else ''}.")
    w(f"- Machine: {mach}. Other processes may share the cores; every ratio comes from one run, the same servers and the same moment.")
    w("- Server: `bench-server` (checks/bench/harness) on 127.0.0.1, one process per response mode, serving 100 "
      "`tools/list` pages of about 80 KiB of realistic schemas (8 MB in all), `small` (echoes 5 bytes) "
      "and `big` (4 MiB of text). It answers both eras unless noted.")
    w("- Catalogue: one tool in four carries `x-mcp-header` annotations (SEP-2243): its `workspace` parameter "
      "(`Mcp-Param-Workspace`), and every other annotated tool also the nested `options.mode` (`Mcp-Param-Mode`). "
      "The annotation marks a parameter that gateways route on (a tenant, workspace or region), so a server that "
      "uses it marks the tools acting on a routed resource and leaves its search, export and utility tools plain; "
      "a quarter is a deliberate share for a gateway-fronted server of the 2026-07-28 era, above what servers "
      "publish today, so that the annotated path of the page pass weighs in the figures "
      "(`ANNOTATED_EVERY` in checks/bench/harness/src/catalog.rs; `core-page` checks that every annotated tool is "
      "listed with its headers).")
    w("- Each contender runs as its own process: one warm-up work item, then timed rounds. A work item is "
      "connect, the work, close. Wall time is the median round. For the list-all (JSON) and `big` rows, the raw floor "
      "and this crate's two adapters run in alternating rounds (7 rounds, one process of each per round; 2 in a quick run), "
      "so that load from elsewhere weighs on the floor and on this crate alike; the list-all ones run a second time "
      "with the server and the clients on one CPU, a diagnostic (see that table); peak RSS is the process's own maximum resident set as GNU "
      "`time -f %M` reports it (runtime included: a Node or Python interpreter costs tens of MiB before any work).")
    w("- How each figure was taken, on a machine of 2 CPUs that other work shares: **client CPU / item** is the user + "
      "system time of the client process (all its threads; `getrusage(RUSAGE_CHILDREN)` around it) less that of a "
      "process of the same contender that runs the warm-up item alone, divided by the timed work items. CPU time "
      "does not depend on where the scheduler places the server and the client, and the warm list-all target is "
      "judged on it; it is not immune to load from elsewhere, which slows a process's instructions too (shared "
      "caches, the host's other guests): the Targets section gives its spread over the rounds. Below about 20 µs a "
      "work item (the `small` rows) it is within the noise of the subtraction, and no ratio is given. **Instructions** come from callgrind and repeat exactly "
      "whatever the load. **Wall** times and their ratios depend on the load and on placement (a wake-up across "
      "the two CPUs costs tens of microseconds here): read them as this run's, not as constants.")
    w("- Setups: every table states each contender's. Where this crate reuses one `Client` (pool and era hint), "
      "rmcp reuses one pooled `reqwest::Client` (`with_client`; its `from_uri` default disables pooling) and runs "
      "`server/discover`, its fewest requests against this server; the TypeScript SDK pools through Node's global "
      "`fetch` and speaks only the 2025 era (`initialize`); Python `mcp` builds an HTTP client per session, so per "
      "work item, in its default `auto` mode (`server/discover`). The unpooled table gives both Rust clients a new "
      "client per work item. The handshake table compares every era mode.")
    w("- Ratios: contender ÷ mcp-sansio (tokio); above 1 means the contender is slower or larger.")
    w("")

    w(ROUND_TARGETS.rstrip("\n"))
    w("")
    targets(w, ok, core, [r for r in ok_all if r.get("h2bench")])

    def table(title, pred, note="", pinned=False, fresh=False):
        rows = [r for r in ok if pred(r) and not r.get("handshake") and bool(r.get("one_cpu")) == pinned
                and r["contender"].endswith("-fresh") == fresh]
        if not rows:
            return
        base = next((r for r in rows if r["contender"] in ("tokio", "tokio-fresh")), None)
        w(f"## {title}")
        w("")
        if note:
            w(note)
            w("")
        w("| client | setup | era | wall (median) | × tokio | client CPU / item | × tokio | peak RSS | × tokio | "
          "requests / item | TCP conns / item | check |")
        w("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in rows:
            rt = f"{r['ms'] / base['ms']:.2f}" if base else "-"
            rr = f"{r['rss_kib'] / base['rss_kib']:.2f}" if base else "-"
            cpu = r.get("cpu_ms")
            cs = fmt_cpu(cpu)
            bc = base.get("cpu_ms") if base else None
            cr = f"{cpu / bc:.2f}" if cpu is not None and bc and min(cpu, bc) >= CPU_NOISE_MS else "-"
            w(f"| {r['label']} | {SETUP.get(r['contender'], '')} | {r['era']} | {fmt_ms(r['ms'])} | {rt} | {cs} | {cr} | "
              f"{r['rss_kib'] / 1024:.1f} MiB | {rr} | "
              f"{r['requests']:.2f} | {r['connections']:.3f} | {'/'.join(map(str, r['check']))} |")
        w("")

    table("Connect + list all 100 pages (JSON responses)", lambda r: r["work"] == "list" and r_in(r, "json"))
    table("Connect + list all 100 pages (JSON responses), server and clients on one CPU",
          lambda r: r["work"] == "list" and r_in(r, "json"), ONE_CPU_NOTE, pinned=True)
    table("Connect + list all 100 pages (SSE responses)", lambda r: r["work"] == "list" and r_in(r, "sse"))
    table("Connect + call `small`", lambda r: r["work"] == "small" and r["n"] == 1)
    table("Connect + call `big` (4 MiB of text)", lambda r: r["work"] == "big")
    table("Unpooled: connect + call `small`, a new client per work item",
          lambda r: r["work"] == "small" and r["n"] == 1, UNPOOLED_NOTE, fresh=True)
    table("Unpooled: connect + list all 100 pages (JSON responses), a new client per work item",
          lambda r: r["work"] == "list", fresh=True)
    table("1,000 sequential work items (connect + call `small` + close each), total", lambda r: r["work"] == "small" and r["n"] > 1 and r["par"] == 1)
    table("100 concurrent work items (connect + call `small` + close each), total", lambda r: r["work"] == "small" and r["par"] > 1)

    h2_table(w, h2_rows, when, h2_when, quick if h2_quick is None else h2_quick)
    cold_tls_table(w, cold_tls)
    scale_table(w, scale)
    pages_table(w, pages)
    origins_table(w, origins)

    failed = [r for r in results if r.get("failed")]
    if failed:
        w("## Failures")
        w("")
        w("| client | work | n | era | response mode | error |")
        w("|---|---|---:|---|---|---|")
        for f in failed:
            err = " ".join(f["error"].split())[-200:].replace("|", "/")
            w(f"| {CONTENDERS[f['contender']][0]} | {f['work']} | {f['n']} | {f['era']} | {f['mode']} | {err} |")
        w("")

    hs = [r for r in ok if r.get("handshake")]
    if hs:
        w("## Handshake cost: requests per list-all work item")
        w("")
        w("Counted on the server for the timed work items only (a warm-up-only run of the same process is "
          "subtracted). 100 pages need 100 `tools/list` requests; everything above that is handshake and session overhead. "
          "Requests are sequential here, so each is one round trip. `hint`: this crate's adapters remember the "
          "era per origin and connect with no request; Python's mode pinned to 2026-07-28 is the same idea.")
        w("")
        w("| client | era mode | server | requests / item | beyond the 100 pages | discover | initialize | notifications | GET | DELETE | TCP conns / item |")
        w("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in hs:
            s, i = r["stats"], r["items"]
            w(f"| {r['label']} | {r['era']} | {r.get('server', '')} | {r['requests']:.2f} | {r['requests'] - 100:.2f} | "
              f"{s['discover'] / i:.2f} | {s['initialize'] / i:.2f} | {s['notifications'] / i:.2f} | {s['get'] / i:.2f} | "
              f"{s['delete'] / i:.2f} | {r['connections']:.3f} |")
        w("")

    cache_table(w, cache)
    if core:
        s, v, ret = core["sansio"], core["value"], core["retained"]
        w("## Core alone: one page under callgrind")
        w("")
        w(f"The last catalog page ({v['bytes']:,} bytes of JSON-RPC body, {v['tools']} tools), counted with "
          "`valgrind --tool=callgrind --toggle-collect='*measure_*'` (checks/bench/harness/src/bin/core-page.rs).")
        w("")
        w("| what | instructions | × serde_json Value |")
        w("|---|---:|---:|")
        w(f"| `serde_json::from_slice::<Value>` of the body | {v['instructions']:,} | 1.00 |")
        w(f"| `Connection::handle_bytes` of the whole HTTP response ({s['bytes']:,} bytes): HTTP decoding, JSON-RPC, page and tool validation, catalog | {s['instructions']:,} | {s['instructions'] / v['instructions']:.2f} |")
        w("")
        prof = core.get("profile") or []
        if prof:
            profile_table(w, "Where the core's instructions go on that page", prof, s["instructions"])
            for fn, ir in prof:
                if fn in FIXES:
                    w(f"- `{fn}`: {FIXES[fn]}")
            w("")
        whole = core.get("whole")
        if whole and not whole.get("failed"):
            v = whole["value"]
            w("## Whole client process: one warm list-all work item under callgrind")
            w("")
            w("`valgrind --tool=callgrind` over the whole client process (every thread, runtime, adapter and core), "
              "against the JSON server above: a process that runs the warm-up item and one timed list-all item, less a "
              f"process that runs the warm-up item alone. The yardstick: `serde_json::from_slice::<Value>` of the same "
              f"{catalog_pages} JSON-RPC bodies ({v['bytes']:,} bytes, {v['tools']:,} tools; `core-page value_all`, "
              "`--toggle-collect='*measure_value_all*'`).")
            w("")
            w("| what | instructions | × serde_json Value |")
            w("|---|---:|---:|")
            w(f"| `serde_json::from_slice::<Value>` of the 100 bodies | {v['instructions']:,} | 1.00 |")
            for key, label in (("tokio", "mcp-sansio (tokio adapter)"), ("blocking", "mcp-sansio (blocking adapter)")):
                x = whole[key]
                w(f"| {label}: whole process, one warm list-all item ({x['with_one_item']:,} − {x['warm_up_only']:,}) | "
                  f"{x['instructions']:,} | {x['instructions'] / v['instructions']:.3f} |")
            w("")
        w("## Retained catalog")
        w("")
        w(f"All 100 pages listed through a `Connection` from canned responses: {ret['tools']:,} tools, "
          f"{ret['page_bytes']:,} bytes of page bodies, {ret['schema_bytes']:,} bytes of input schemas held "
          f"verbatim. The catalog retains {ret['retained_bytes']:,} heap bytes (a counting allocator: "
          f"what stays allocated once the connection is dropped) "
          f"({ret['retained_bytes'] / ret['schema_bytes']:.2f} × the schema bytes, "
          f"{ret['retained_bytes'] / ret['page_bytes']:.2f} × the page bytes).")
        w("")
    sse = next((r for r in ok if r["contender"] == "tokio" and r["work"] == "list" and r.get("mode") == "sse"
                and not r.get("handshake")), None)
    if sse and sse["connections"] > 2:
        w("## Finding: no socket reuse after an SSE response")
        w("")
        w(f"With SSE responses this crate opened {sse['connections']:.1f} TCP connections per list-all work item "
          "(one per page) where JSON responses reuse one. Cause: `Connection::complete_main` (src/connection.rs) "
          "abandons the exchange (`Event::ExchangeAbandoned`, so the adapter closes the socket) as soon as the "
          "response message arrives in the stream, before `handle_bytes` decodes the rest of the same input, "
          "which here holds the chunked terminator. Fix: on the response message, finish decoding the bytes "
          "already given; if the framing ends there (or within a small byte and time bound), report "
          "`ExchangeFinished { reusable: true }`, and abandon only a stream that stays open.")
        w("")
    call = (core or {}).get("call")
    if call:
        s, v = call["sansio"], call["value"]
        w("## Core alone: the 4 MiB call answer under callgrind")
        w("")
        w(f"The `big` tool's answer ({s['bytes']:,} bytes of HTTP response, {s['text_bytes']:,} bytes of decoded "
          "text with an escape every ~13 bytes), fed whole to a `Connection` whose call is in flight, counted with "
          "`valgrind --tool=callgrind --toggle-collect='*measure_*'` (checks/bench/harness/src/bin/core-call.rs). "
          "The answer is read in one pass (src/jsonrpc.rs `parse_message_for_call`, src/call/pass.rs): the "
          "envelope's scanner hands the `result` to the call reader where it starts, and each text is decoded "
          "straight into its final `String`, written once: 32 bytes at a time, each step copied whole, its first "
          "quote, backslash or control byte found a word at a time and a one-letter escape decoded in place "
          "(a long run of plain bytes is found with `memchr` and copied at once), the output zeroed 2 KiB at a "
          "time just ahead of the writes, and the result checked as UTF-8 once. Hand-measured notes on where the rest of the "
          "`big` work item's wall time goes (reads, hand-offs, fresh pages) are in "
          "[performance.md](performance.md).")
        w("")
        w("| what | instructions | × serde_json Value |")
        w("|---|---:|---:|")
        w(f"| `serde_json::from_slice::<Value>` of the body | {v['instructions']:,} | 1.00 |")
        w(f"| `Connection::handle_bytes` of the whole HTTP response: HTTP decoding, JSON-RPC, the result, its blocks, the text decoded | {s['instructions']:,} | {s['instructions'] / v['instructions']:.2f} |")
        w("")
        prof = call.get("profile") or []
        if prof:
            profile_table(w, "Where the core's instructions go", prof, s["instructions"])
    w("## Idle connections")
    w("")
    if idle.get("failed"):
        w(f"Not measured: {idle['failed']}")
    else:
        w(f"{idle['count']:,} sessions opened at once in one tokio process through one `Client` (each connected and "
          f"called `slow`, which answers after 3 s, so all were in flight together on their own sockets), all kept alive with their sockets idle in the pool "
          f"(the pool held {idle.get('idle_sockets', '?'):,} idle sockets and the server counted {idle['server_open']:,} open connections at that moment; `ulimit -n` {idle['nofile']:,}). Resident memory "
          f"grew from {idle['rss_before_kib'] / 1024:.1f} MiB to {idle['rss_after_kib'] / 1024:.1f} MiB: "
          f"**{idle['bytes_per_connection'] / 1024:.1f} KiB per idle connection** (session + pooled socket, "
          f"kernel socket buffers not included). Opening them took {idle['open_ms']} ms (3 s of it the server's delay). Only this crate was measured this way.")
    w("")
    # Sections written by other scripts (the soak's, by scripts/soak.sh --write) are kept as they are.
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        old = ""
    for heading in KEPT_SECTIONS:
        at = old.find(f"\n{heading}\n")
        if at >= 0:
            rest = old[at + 1:]
            end = rest.find("\n## ", len(heading))
            kept = rest if end < 0 else rest[:end + 1]
            L.append(kept.rstrip("\n"))
            L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def targets(w, ok, core, h2=()):
    """The targets, met or missed, from this run's figures."""
    def find(key, work, mode="json", n=1, era=None, hs=False, pinned=False):
        for r in ok:
            if (r["contender"] == key and r["work"] == work and r.get("mode") == mode and r["n"] == n
                    and bool(r.get("handshake")) == hs and (era is None or r["era"] == era)
                    and bool(r.get("one_cpu")) == pinned):
                return r
        return None
    rows = []
    t, rm = find("tokio", "list"), find("rmcp", "list")
    if t and rm:
        x = rm["ms"] / t["ms"]
        rows.append(("connect + list all: ≥ 3× faster than rmcp", f"{x:.2f}×", "met" if x >= 3 else "missed"))
        y = t["rss_kib"] / rm["rss_kib"]
        rows.append(("connect + list all: ≤ 1/3 of rmcp's peak RSS", f"{y:.3f} of rmcp's", "met" if y <= 1 / 3 else "missed"))
    if core:
        z = core["sansio"]["instructions"] / core["value"]["instructions"]
        rows.append(("one page: ≤ 0.5× the instructions of `from_slice::<Value>`", f"{z:.2f}×", "met" if z <= 0.5 else "missed"))
    raw = find("raw", "list")
    if t and raw and t.get("cpu_ms") and raw.get("cpu_ms"):
        x = t["cpu_ms"] / raw["cpu_ms"]
        b = find("blocking", "list")
        also = f"{t['cpu_ms']:.2f} ms against the floor's {raw['cpu_ms']:.2f} ms"
        if b and b.get("cpu_ms"):
            also += f"; blocking adapter {b['cpu_ms'] / raw['cpu_ms']:.2f}× ({b['cpu_ms']:.2f} ms)"
        rows.append(("**this round:** warm list-all work item (era hint, pooled): client CPU (user + sys) ≤ 2× "
                     "the raw-socket floor's, free placement", f"{x:.2f}× ({also})", "met" if x <= 2 else "missed"))
    whole = (core or {}).get("whole")
    if whole and not whole.get("failed"):
        v = whole["value"]["instructions"]
        x = whole["tokio"]["instructions"] / v
        rows.append(("**this round:** one warm list-all work item, whole client process: ≤ 0.15× the instructions of "
                     "`from_slice::<Value>` of the same 100 bodies",
                     f"{x:.3f}× (blocking adapter {whole['blocking']['instructions'] / v:.3f}×)",
                     "met" if x <= 0.15 else "missed"))
    tp, rawp = find("tokio", "list", pinned=True), find("raw", "list", pinned=True)
    if t and raw:
        x = t["ms"] / raw["ms"]
        also = []
        if tp and rawp:
            also.append(f"{tp['ms'] / rawp['ms']:.2f}× with server and clients on one CPU, a diagnostic")
        shown = f"{x:.2f}×" + (f" ({'; '.join(also)})" if also else "")
        rows.append(("warm list-all work item (era hint, pooled): ≤ 3× the raw-socket floor's wall, free placement",
                     shown, "met" if x <= 3 else "missed"))
    if t:
        mib = t["rss_kib"] / 1024
        rows.append(("list-all peak RSS, whole catalog retained: ≤ 16 MiB", f"{mib:.1f} MiB",
                     "met" if mib <= 16 else "missed"))
    tb, rawb = find("tokio", "big"), find("raw", "big")
    if tb and rawb:
        x = tb["ms"] / rawb["ms"]
        rows.append(("**this round:** a 4 MiB text result: ≤ 2× the raw-socket floor's wall, free placement",
                     f"{x:.2f}×", "met" if x <= 2 else "missed"))
    call = (core or {}).get("call")
    if call:
        z = call["sansio"]["instructions"] / call["value"]["instructions"]
        rows.append(("**this round:** the 4 MiB call answer in the core: one pass, ≤ 0.5× the instructions of "
                     "`from_slice::<Value>`", f"{z:.2f}×", "met" if z <= 0.5 else "missed"))
    retained = (core or {}).get("retained")
    if retained and retained.get("page_bytes"):
        x = retained["retained_bytes"] / retained["page_bytes"]
        rows.append(("retained catalog: ≤ 2× its raw page bytes", f"{x:.2f}×", "met" if x <= 2 else "missed"))
    h = find("tokio", "list", era="hint", hs=True)
    if h:
        extra = h["requests"] - 100
        rows.append(("zero extra round trips to a known-modern server (era hint)",
                     f"{extra:.2f} requests beyond the pages per item", "met" if extra < 0.5 else "missed"))
    h2r = next((r for r in h2 if r.get("http_version") == "HTTP/2"), None)
    if h2r:
        rows.append((H2_TARGET, f"{h2r['handshakes']:.2f} TLS handshakes and {h2r['connections']:.2f} TCP "
                     f"connections per 100 work items", "met" if h2r["handshakes"] <= 1 else "missed"))
    if not rows:
        return
    w("## Targets")
    w("")
    w("The ones marked **this round** were set before this run was measured; their verdict stands as measured. "
      "Earlier targets follow, with this run's figures.")
    w("")
    w("| target | this run | verdict |")
    w("|---|---|---|")
    for r in rows:
        w(f"| {r[0]} | {r[1]} | {r[2]} |")
    w("")
    spread = []
    for pinned in (False, True):
        parts = []
        for key, name in (("raw", "floor"), ("tokio", "tokio"), ("blocking", "blocking")):
            r = find(key, "list", pinned=pinned)
            if r and r.get("cpu_per_proc_ms"):
                v = r["cpu_per_proc_ms"]
                parts.append(f"{name} {min(v):.2f} to {max(v):.2f} ms (overall {r['cpu_ms']:.2f})")
        t_, f_ = find("tokio", "list", pinned=pinned), find("raw", "list", pinned=pinned)
        if parts and t_ and f_ and t_.get("cpu_ms") and f_.get("cpu_ms"):
            where = "server and clients on one CPU" if pinned else "free placement (the verdict)"
            spread.append(f"{where}: {'; '.join(parts)}; tokio ÷ floor {t_['cpu_ms'] / f_['cpu_ms']:.2f}×")
    if spread:
        w("Client CPU per warm list-all work item, per process of the alternating rounds (each process "
          "less a warm-up-only one): " + ". ".join(spread) + ". The verdict is the ratio of the overall "
          "figures with free placement, as set; the spread shows how much load from elsewhere moved each "
          "process's CPU in this run.")
        w("")
    w(EARLIER_RUNS_OF_THIS_ROUND)
    w("")
    w("In the side-by-side tables, requests per item include each process's warm-up item (where this "
      "crate's adapters probe once to learn the era); the handshake table counts the timed work items only.")
    w("")


def h2_table(w, rows, when, h2_when, quick):
    """The HTTP/2 vs HTTP/1.1 table over TLS, with its failures."""
    if not rows:
        return
    ok = [r for r in rows if not r.get("failed")]
    base = next((r for r in ok if r["http_version"] == "HTTP/1.1"), None)
    w(f"## {H2_TITLE}")
    w("")
    measured = "" if not h2_when or h2_when == when else f"Measured {h2_when} UTC{' (quick run)' if quick else ''}, on the machine above. "
    w(measured + "Server: `bench-tls-server` (checks/bench/harness) on 127.0.0.1 over TLS 1.3, ALPN `h2` and "
      "`http/1.1` (hyper, HTTP/2 with its default settings), a certificate made at start that the client "
      "trusts, serving `small` in the 2026 era. Contender: `bench-sansio-h2` (checks/bench/sansio), one "
      "tokio `Client` per process (its defaults: HTTP/2 where ALPN gives it; or `http1_only(true)`), one "
      "warm-up work item, then timed rounds of 100 work items started at once, each its own `Session`: "
      "connect (era hint), call `small`, close. Every session checks that it ran over the HTTP version "
      "asked for (`Session::http_version`) and every call checks its echo; a mismatch fails the process. "
      "Wall: the median round (100 work items); peak RSS: GNU `time -f %M`, median over processes. "
      "TCP connections, TLS handshakes and requests are the server's counts per round of 100 work items, "
      "timed rounds only (a warm-up-only run of the same process is subtracted); the server also checks that "
      "every request came over the HTTP version asked for. The two rows' processes alternate.")
    w("")
    if ok:
        w("| client | HTTP version | wall (median, 100 items) | × HTTP/1.1 | peak RSS | × HTTP/1.1 | TCP conns / round | "
          "TLS handshakes / round | requests / round | over HTTP/2 | over HTTP/1.1 | rounds | check |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in ok:
            rt = f"{r['ms'] / base['ms']:.2f}" if base else "-"
            rr = f"{r['rss_kib'] / base['rss_kib']:.2f}" if base else "-"
            w(f"| {r['label']} | {r['http_version']} | {fmt_ms(r['ms'])} | {rt} | {r['rss_kib'] / 1024:.1f} MiB | {rr} | "
              f"{r['connections']:.2f} | {r['handshakes']:.2f} | {r['requests']:.2f} | {r['requests_h2']:.2f} | "
              f"{r['requests_h1']:.2f} | {r['rounds']} | {'/'.join(map(str, r['check']))} |")
        w("")
    for f in rows:
        if f.get("failed"):
            err = " ".join(f["error"].split())[-200:].replace("|", "/")
            w(f"- FAILED: {f['label']}: {err}")
    if any(f.get("failed") for f in rows):
        w("")
    h2r = next((r for r in ok if r["http_version"] == "HTTP/2"), None)
    if h2r and base:
        n, conns = h2r["n"], h2r["connections"]
        if conns <= 1:
            sharing = (f"the {n} concurrent HTTP/2 work items of a round shared one socket "
                       f"({conns:.2f} new TCP connections per round: the socket outlived the round)")
        elif conns >= 0.9 * n:
            sharing = (f"each HTTP/2 work item dialled its own socket and paid its own TLS handshake "
                       f"({conns:.2f} per {n} work items), so HTTP/2's multiplexing saved nothing here and its "
                       f"connection preface and SETTINGS exchange came on top of every handshake")
        else:
            sharing = f"on average {n / conns:.1f} concurrent HTTP/2 work items shared a socket"
        w(f"What the figures show: {sharing}. Over HTTP/2 a round of {n} work items took {fmt_ms(h2r['ms'])} against "
          f"{fmt_ms(base['ms'])} over HTTP/1.1 ({h2r['ms'] / base['ms']:.2f}×) and the process peaked at "
          f"{h2r['rss_kib'] / 1024:.1f} MiB against {base['rss_kib'] / 1024:.1f} MiB. Over HTTP/1.1 the server counted "
          f"{base['connections']:.2f} TCP connections and {base['handshakes']:.2f} TLS handshakes per round: fewer "
          f"than {n} because the client's pool keeps idle sockets between rounds (by default at most 8 per origin) "
          f"and work items that finish early hand theirs to later ones.")
        w("")


catalog_pages = 100

# Sections of docs/benchmarks.md that other scripts write, kept whole when this one rewrites the page.
KEPT_SECTIONS = ("## Soak", "## Fleet: a shared store against none")


# Client CPU per work item below this is within the noise of the warm-up subtraction.
CPU_NOISE_MS = 0.02


def fmt_cpu(ms):
    """Client CPU per work item: µs below a millisecond, `< 20 µs` within the noise."""
    if ms is None:
        return "-"
    if ms < CPU_NOISE_MS:
        return "< 20 µs"
    return f"{ms * 1e3:.0f} µs" if ms < 1 else fmt_ms(ms)


def fmt_ms(ms):
    return f"{ms:.0f} ms" if ms >= 100 else f"{ms:.2f} ms"


def r_in(r, mode):
    return r.get("mode", "json") == mode


if __name__ == "__main__":
    main()
