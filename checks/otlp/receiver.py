#!/usr/bin/env python3
"""An OTLP/HTTP receiver for tests: decodes what an exporter POSTs, with the protobuf classes of
PyPI's `opentelemetry-proto` (pinned in .ci/run), independently of the Rust exporter.

It listens on 127.0.0.1 (an ephemeral port), prints `port N` on its first line, then one JSON
line per request it answered 200:

    {"path": "/v1/traces", "body_hex": "...", "spans": [...]}
    {"path": "/v1/metrics", "body_hex": "...", "metrics": [...]}

A span: name, trace_id, span_id, parent_span_id (hex, "" for a root), kind, scope, attributes
(a flat object of strings). A metric: name, unit, scope, type (`histogram` or `sum`), and its
points (attributes; count, sum and explicit_bounds of a histogram; value of a sum). A body it
cannot decode is answered 400 and printed as {"path": ..., "error": ...}.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

MAX_BODY = 16 * 1024 * 1024


def value(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return ""
    if kind in ("array_value", "kvlist_value"):
        return str(getattr(v, kind))
    return str(getattr(v, kind))


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def spans(body):
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    out = []
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(
                    {
                        "name": s.name,
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "kind": s.kind,
                        "scope": ss.scope.name,
                        "attributes": attributes(s.attributes),
                    }
                )
    return out


def metrics(body):
    req = ExportMetricsServiceRequest()
    req.ParseFromString(body)
    out = []
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                points = []
                if kind == "histogram":
                    for p in m.histogram.data_points:
                        points.append(
                            {
                                "attributes": attributes(p.attributes),
                                "count": p.count,
                                "sum": p.sum,
                                "explicit_bounds": list(p.explicit_bounds),
                            }
                        )
                elif kind == "sum":
                    for p in m.sum.data_points:
                        v = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
                        points.append({"attributes": attributes(p.attributes), "value": v})
                out.append(
                    {
                        "name": m.name,
                        "unit": m.unit,
                        "scope": sm.scope.name,
                        "type": kind,
                        "monotonic": kind == "sum" and m.sum.is_monotonic,
                        "points": points,
                    }
                )
    return out


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        if length > MAX_BODY:
            self.send_response(413)
            self.end_headers()
            return
        body = self.rfile.read(length)
        line = {"path": self.path, "body_hex": body.hex()}
        try:
            if self.headers.get("content-type") != "application/x-protobuf":
                raise ValueError("content-type " + str(self.headers.get("content-type")))
            if self.path == "/v1/traces":
                line["spans"] = spans(body)
            elif self.path == "/v1/metrics":
                line["metrics"] = metrics(body)
            else:
                raise ValueError("unknown path")
        except Exception as e:  # noqa: BLE001: any failure is the test's to see
            print(json.dumps({"path": self.path, "error": str(e)}), flush=True)
            self.send_response(400)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        print(json.dumps(line), flush=True)
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = HTTPServer(("127.0.0.1", 0), Handler)
    print("port", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
