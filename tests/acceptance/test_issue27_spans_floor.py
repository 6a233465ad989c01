"""Issue 27, item 8 (session 5): the spans path got cheaper, and what a user finds stored did not move.

`benchmarks/agent_events.py --spans` runs an agent making 10 `execute_tool` spans per turn through
`traces = "otel"`. Whatever was made faster (reading the spans, building the turn's records, the
redaction check), the rows sealed for that agent are exactly what they were: ten tool calls, the
trace event, then the ten spans, byte for byte but for ids and clock times. (The benchmark's line
quoting the spans run against W1 plus the SDK's own cost is checked with its other lines, in
test_issue27_span_cost.py: the benchmark runs once.)
"""

from __future__ import annotations

import importlib.util
import re
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
