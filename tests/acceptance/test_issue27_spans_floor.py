"""Issue 27, item 8 (session 5): the spans path got cheaper, and what a user finds stored did not move.

`benchmarks/agent_events.py --spans` runs an agent making 10 `execute_tool` spans per turn through
`traces = "otel"`. Whatever was made faster (reading the spans, building the turn's records, the
redaction check), the rows sealed for that agent are exactly what they were: ten tool calls, the
trace event, then the ten spans, byte for byte but for ids and clock times. The benchmark also
quotes, from the same runs, the spans run against its floor — W1 plus the SDK's own cost.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.project import Project

ROOT = Path(__file__).resolve().parents[2]


def _benchmark() -> ModuleType:
    """`benchmarks/agent_events.py` itself: the test pins the project the benchmark measures."""
    spec = importlib.util.spec_from_file_location("bench_agent_events", ROOT / "benchmarks" / "agent_events.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _span(k: int) -> str:
    return ('{"name":"execute_tool","trace_id":"T","span_id":"S","parent_span_id":null,"started_ms":N,'
            '"ended_ms":N,"status":"ok","attributes":{"gen_ai.operation.name":"execute_tool",'
            f'"gen_ai.tool.name":"tool_{k}","gen_ai.tool.call.id":"call_{k}",'
            f'"gen_ai.tool.call.arguments":"{{\\"q\\": \\"x\\", \\"k\\": {k}}}",'
            f'"gen_ai.tool.call.result":"{{\\"hits\\": [{k}, {k + 1}]}}"}}}}')


EXPECTED = (
    [(k, "tool_call", f"tool_{k}", None, f'{{"q":"x","k":{k}}}', f'{{"hits":[{k},{k + 1}]}}', "completed", None)
     for k in range(10)]
    + [(10, "trace", None, None, '{"trace_id":"T","complete":true,"spans":10}', None, None, None)]
    + [(11 + k, "span", None, None, _span(k), None, None, None) for k in range(10)]
)


def _normal(text: str | None) -> str | None:
    """Ids and clock times vary per run; everything else is compared byte for byte."""
    if text is None:
        return None
    text = re.sub(r'"trace_id":"[0-9a-f]{32}"', '"trace_id":"T"', text)
    text = re.sub(r'"span_id":"[0-9a-f]{16}"', '"span_id":"S"', text)
    return re.sub(r'"(started_ms|ended_ms)":\d+(\.\d+)?', r'"\1":N', text)


@pytest.mark.slow
def test_the_benchmark_agents_spans_are_stored_exactly_as_before(proj: Project) -> None:
    pytest.importorskip("opentelemetry.sdk")
    bench = _benchmark()
    bench._make(proj.root, "spans", bench.SPANS_EVALS, 3)

    result = proj.run()

    assert result.returncode == 0, result.stdout + result.stderr
    turns = proj.sql("SELECT input, message, status, observed, input_tokens, output_tokens, cost_usd, data "
                     "FROM turns ORDER BY input")
    assert [tuple(t.values()) for t in turns] == [
        (f"marker-{i} hello", f"marker-{i} hello", "completed", '["tool_calls"]', None, None, None, None)
        for i in range(3)]
    for (attempt,) in [tuple(r.values()) for r in proj.sql("SELECT id FROM attempts")]:
        rows = proj.sql("SELECT seq, kind, name, role, input, output, status, text FROM events "
                        "WHERE attempt_id = ? AND turn_ordinal = 0 ORDER BY seq", (attempt,))
        got = [(r["seq"], r["kind"], r["name"], r["role"], _normal(r["input"]), r["output"], r["status"], r["text"])
               for r in rows]
        assert got == EXPECTED
        times = proj.sql("SELECT input FROM events WHERE attempt_id = ? AND kind = 'span'", (attempt,))
        for row in times:  # a span's times are its nanoseconds / 1e6, printed as Python prints a float
            started = re.search(r'"started_ms":([\d.]+)', row["input"])
            assert started is not None and repr(float(started.group(1))) == started.group(1)


@pytest.mark.slow
def test_the_spans_benchmark_quotes_the_run_against_w1_plus_the_sdks_own_cost() -> None:
    pytest.importorskip("opentelemetry.sdk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "agent_events.py"), "--spans", "--evals", "20",
                          "--repeat", "1"], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    spans = re.search(r"^W1 with 10 tool calls as OTel spans: ([\d.]+) s ", text, re.M)
    sdk = re.search(r"^the same spans made by the SDK, not read: ([\d.]+) s ", text, re.M)
    floor = re.search(r"^ratio of the spans run to that floor \(W1 \+ the SDK's own cost\): ([\d.]+)x$", text, re.M)
    assert spans and sdk and floor, text
    # the printed ratio is the two printed walls' (each rounded to 10 ms), from the same runs
    assert float(floor.group(1)) == pytest.approx(float(spans.group(1)) / float(sdk.group(1)), abs=0.06)
