"""The OTLP receiver of `traces = "otlp"` under load while a run is going (issue 27 item 8).

    python benchmarks/otlp.py [--attempts 8] [--spans 5000] [--concurrency 4]

A real `niceeval run` (a fresh project and store in a temp dir) with `traces = "otlp"`: each of
--attempts attempts runs a command-adapter agent (a subprocess) that exports --spans spans of its
turn's trace (`TRACEPARENT`) to the receiver over OTLP/HTTP protobuf, in batches of 512 as the
SDK's BatchSpanProcessor sends them, over one keep-alive connection; --concurrency agents export
at once while the runner seals the other attempts. The requests are encoded before the clock
starts (the agent's encoding is not the receiver's work), so the time from each request sent to
its answer is what the receiver needs to read, decode and attribute them (a protobuf span's
attributes are read once, when its turn finishes, in a worker thread: that cost is in the whole
run's time, not in the ingest window); the rate is the spans over the time at least one agent was sending (the gaps
between, while the runner starts agents and seals turns, are printed too). Every span must be
stored with its turn, and every trace complete.
Target: ≥ 20 000 spans/s.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 20_000

AGENT = r'''
import http.client, json, os, sys, time
from urllib.parse import urlparse

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

SPANS, BATCH = int(os.environ["BENCH_SPANS"]), 512
_, trace_id, parent, _ = os.environ["TRACEPARENT"].split("-")
sys.stdin.read()
root_id = os.urandom(8)
spans = []
for k in range(SPANS - 1):
    tool = k % 500 == 0  # a few tool calls among plain spans, as an agent's trace has
    attrs = [KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="execute_tool" if tool else "step")),
             KeyValue(key="gen_ai.tool.name", value=AnyValue(string_value=f"tool_{k}")),
             KeyValue(key="gen_ai.tool.call.arguments", value=AnyValue(string_value=json.dumps({"k": k}))),
             KeyValue(key="step.index", value=AnyValue(int_value=k))]
    spans.append(Span(trace_id=bytes.fromhex(trace_id), span_id=os.urandom(8), parent_span_id=root_id,
                      name=f"step {k}", start_time_unix_nano=1_000 + k, end_time_unix_nano=2_000 + k, attributes=attrs))
spans.append(Span(trace_id=bytes.fromhex(trace_id), span_id=root_id, parent_span_id=bytes.fromhex(parent),
                  name="invoke_agent", start_time_unix_nano=1_000, end_time_unix_nano=10_000_000,
                  attributes=[KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="invoke_agent"))]))
bodies = [ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans[i:i + BATCH])])]
                                    ).SerializeToString() for i in range(0, len(spans), BATCH)]
where = urlparse(os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"])
connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
started = time.time()
for body in bodies:
    connection.request("POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"})
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 200, answer.status
ended = time.time()
with open(os.environ["BENCH_LOG"], "a") as out:
    figures = {"started": started, "ended": ended, "spans": len(spans), "bytes": sum(map(len, bodies))}
    out.write(json.dumps(figures) + "\n")
print("exported")
'''

EVAL = '''
from niceeval_cli import define_eval


@define_eval(attempts={attempts})
async def export(t):
    turn = await t.send("go")
    turn.not_called_tool("delete")
'''


def _union(intervals: list[tuple[float, float]]) -> float:
    """Seconds during which at least one agent was exporting (the receiver had work)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def run(attempts: int, spans: int, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="niceeval-otlp-bench-") as tmp:
        root = Path(tmp)
        (root / "evals").mkdir()
        (root / "agent.py").write_text(AGENT)
        (root / "evals" / "export.py").write_text(EVAL.format(attempts=attempts))
        (root / "niceeval.toml").write_text(
            f'[experiments.bench]\nadapter = "command"\ntraces = "otlp"\nmax_concurrency = {concurrency}\n'
            f'[experiments.bench.options]\nargv = {json.dumps([sys.executable, "agent.py"])}\n')
        log = root / "exports.ndjson"
        env = {**os.environ, "BENCH_SPANS": str(spans), "BENCH_LOG": str(log)}
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "niceeval_cli", "run"], cwd=root, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"the run exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        exports = [json.loads(line) for line in log.read_text().splitlines()]
        db = sqlite3.connect(root / ".niceeval" / "results.db")
        stored = db.execute("SELECT count(*) FROM events WHERE kind = 'span'").fetchone()[0]
        complete = [json.loads(r[0])["complete"] for r in db.execute("SELECT input FROM events WHERE kind = 'trace'")]
        db.close()
    sent = sum(e["spans"] for e in exports)
    window = max(e["ended"] for e in exports) - min(e["started"] for e in exports)
    busiest = max(e["spans"] / (e["ended"] - e["started"]) for e in exports)
    busy = _union([(e["started"], e["ended"]) for e in exports])
    assert stored == sent == attempts * spans, (stored, sent)
    assert len(complete) == attempts and all(complete), complete
    return {"spans": sent, "window_s": window, "busy_s": busy, "rate": sent / busy, "window_rate": sent / window,
            "one_agent_rate": busiest, "run_wall_s": wall,
            "mib": sum(e["bytes"] for e in exports) / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=8)
    parser.add_argument("--spans", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    figures = run(args.attempts, args.spans, args.concurrency)
    print(f"OTLP receiver during a run: {figures['spans']:,} spans ({figures['mib']:.1f} MiB protobuf) from "
          f"{args.attempts} agents, {args.concurrency} at once, all stored and every trace complete")
    print(f"  exporting          {figures['busy_s']:.2f} s  (time at least one agent was sending: the "
          "receiver's busy time)")
    print(f"  ingest rate        {figures['rate']:,.0f} spans/s   (target ≥ {TARGET:,}: ratio "
          f"{figures['rate'] / TARGET:.2f}×)")
    print(f"  first → last       {figures['window_s']:.2f} s  ({figures['window_rate']:,.0f} spans/s, counting the "
          "gaps while the runner starts and seals attempts)")
    print(f"  one agent's rate   {figures['one_agent_rate']:,.0f} spans/s (its own connection)")
    print(f"  whole run          {figures['run_wall_s']:.2f} s  (start-up, {figures['spans']:,} span events sealed)")


if __name__ == "__main__":
    main()
