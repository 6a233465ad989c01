"""Agent events overhead: W1 (1000 trivial evals) with and without 10 tool-call events per turn.

    python benchmarks/agent_events.py [--evals 1000] [--repeat 3]

Both projects go through the real `niceeval run` in a subprocess (a fresh store each time). The
events project's adapter returns a `Turn` with 10 `ToolCall`s (input and output dicts) and
declares `observes=("messages", "tool_calls")`, so every attempt also seals 1 turn row and 10
event rows. Two figures, each the median of --repeat interleaved runs: the per-attempt time as W1
is quoted (wall time / evals, for evals + evals/5 evals), and the marginal per-attempt time (the
slope between evals/5 and evals + evals/5 evals, so start-up and imports cancel out). The target
is a ratio within 1.3×.

`--spans` adds a third variant (issue 27, item 8): the same 10 tool calls per turn arriving as
in-process OpenTelemetry spans (`traces = "otel"`, a python-adapter callable that starts 10
`execute_tool` spans per send), against W1 without events; target within 1.5×. Needs the
`[otel]` extra. Beside it, in the same interleaved runs, the part of that cost that is not
NiceEval's: the same callable making the same spans with the SDK's `TracerProvider` while
`traces` is unset (spans made, nobody reads them), so "spans − SDK alone" is what reading the
spans into stored tool calls costs, and "spans / SDK alone" the spans run against the floor of
W1 plus the SDK's own cost (both ratios printed, from the same interleaved runs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import TRIVIAL, _project, _run_fresh

WITH_EVENTS = '''
from niceeval_cli import ToolCall, Turn, define_adapter
from niceeval_cli.expect import includes


async def echo(ctx, message, **options):
    calls = [ToolCall(f"tool_{k}", input={"q": message, "k": k}, output={"hits": [k, k + 1]})
             for k in range(10)]
    return Turn(input=message, message=message, events=calls)

adapter = define_adapter(name="echo", send=echo, observes=("messages", "tool_calls"))


def make(i):
    async def test(t):
        turn = await t.send(f"marker-{i} hello")
        t.check(turn.message, includes(f"marker-{i}"))
    return test


for i in range(N):
    globals()[f"case_{i:05d}"] = adapter.define_eval(test=make(i), name=f"case_{i:05d}")
'''


SPANS_APP = '''
from opentelemetry import trace

tracer = trace.get_tracer("bench")


def agent(message):
    for k in range(10):
        with tracer.start_as_current_span("execute_tool") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.tool.name", f"tool_{k}")
            span.set_attribute("gen_ai.tool.call.id", f"call_{k}")
            span.set_attribute("gen_ai.tool.call.arguments", '{"q": "x", "k": %d}' % k)
            span.set_attribute("gen_ai.tool.call.result", '{"hits": [%d, %d]}' % (k, k + 1))
    return message
'''

SPANS_EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


def make(i):
    async def test(t):
        turn = await t.send(f"marker-{i} hello")
        t.check(turn.message, includes(f"marker-{i}"))
    return test


for i in range(N):
    globals()[f"case_{i:05d}"] = define_eval(test=make(i), name=f"case_{i:05d}")
'''

SPANS_TOML = """
[experiments.agent]
adapter = "python"
traces = "otel"
[experiments.agent.options]
callable = "app:agent"
"""


SDK_ONLY_APP = SPANS_APP + """
from opentelemetry.sdk.trace import TracerProvider

# The SDK makes the spans (its provider set after the tracer was taken, as NiceEval's is for the
# spans variant: the same proxy tracer); no `traces`, so NiceEval never reads them.
trace.set_tracer_provider(TracerProvider())
"""

SDK_ONLY_TOML = SPANS_TOML.replace('traces = "otel"\n', "")


def _walls(sources: dict[str, str], sizes: tuple[int, int], repeat: int) -> dict[tuple[str, int], float]:
    """Median wall time of each (variant, size), the runs interleaved so load noise hits both."""
    walls: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {(name, n): _make(Path(tmp) / f"{name}-{n}", name, src, n)
                 for name, src in sources.items() for n in sizes}
        for _ in range(repeat):
            for key, root in roots.items():
                wall, _rss, code, out = _run_fresh(root)
                if code != 0:
                    raise SystemExit(f"{key}: run failed with exit {code}:\n{out[-2000:]}")
                walls.setdefault(key, []).append(wall)
    return {key: statistics.median(values) for key, values in walls.items()}


def _make(root: Path, name: str, source: str, n: int) -> Path:
    if name not in ("spans", "sdk"):
        return _project(root, source, n)
    _project(root, source, n, SPANS_TOML if name == "spans" else SDK_ONLY_TOML)
    (root / "app.py").write_text(SPANS_APP if name == "spans" else SDK_ONLY_APP)
    return root


def figures(evals: int = 1000, repeat: int = 3, spans: bool = False) -> dict[str, float]:
    """Both variants at evals/5 and evals + evals/5 evals, interleaved: wall times, ms per attempt
    (wall / evals) and the marginal ms per attempt (the slope, start-up cancelled) of each."""
    small = max(1, evals // 5)
    sizes = (small, small + evals)
    sources = {"plain": TRIVIAL, "events": WITH_EVENTS} | ({"spans": SPANS_EVALS, "sdk": SPANS_EVALS} if spans else {})
    walls = _walls(sources, sizes, repeat)
    n = sizes[1]
    out: dict[str, float] = {"evals": n}
    for name in sources:
        out[f"{name}_wall"] = walls[(name, n)]
        out[f"{name}_ms"] = walls[(name, n)] / n * 1000
        out[f"{name}_marginal_ms"] = (walls[(name, n)] - walls[(name, small)]) / evals * 1000
    out["ratio"] = out["events_wall"] / out["plain_wall"]
    out["marginal_ratio"] = out["events_marginal_ms"] / out["plain_marginal_ms"]
    if spans:
        out["spans_ratio"] = out["spans_wall"] / out["plain_wall"]
        out["sdk_ratio"] = out["sdk_wall"] / out["plain_wall"]
        out["spans_sdk_ratio"] = out["spans_wall"] / out["sdk_wall"]  # against W1 + the SDK's own cost
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evals", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spans", action="store_true", help="also: the tool calls as in-process OTel spans")
    args = parser.parse_args()
    f = figures(args.evals, args.repeat, args.spans)
    n = int(f["evals"])
    print(f"W1 without events:              {f['plain_wall']:.2f} s for {n} evals = {f['plain_ms']:.3f} ms per "
          f"attempt (marginal {f['plain_marginal_ms']:.3f} ms)")
    print(f"W1 with 10 tool calls per turn: {f['events_wall']:.2f} s for {n} evals = {f['events_ms']:.3f} ms per "
          f"attempt (marginal {f['events_marginal_ms']:.3f} ms)")
    print(f"per-attempt ratio (wall / evals, as W1 is quoted): {f['ratio']:.2f}x (target ≤ 1.3x)")
    print(f"marginal ratio (start-up excluded):               {f['marginal_ratio']:.2f}x")
    if args.spans:
        print(f"W1 with 10 tool calls as OTel spans: {f['spans_wall']:.2f} s for {n} evals = {f['spans_ms']:.3f} ms "
              f"per attempt; ratio to W1 {f['spans_ratio']:.2f}x (target ≤ 1.5x)")
        print(f"the same spans made by the SDK, not read: {f['sdk_wall']:.2f} s for {n} evals = {f['sdk_ms']:.3f} ms "
              f"per attempt; ratio to W1 {f['sdk_ratio']:.2f}x")
        print(f"ratio of the spans run to that floor (W1 + the SDK's own cost): {f['spans_sdk_ratio']:.2f}x")
        print(f"NiceEval reading them (spans − SDK alone): {f['spans_ms'] - f['sdk_ms']:.3f} ms per attempt "
              f"(storing 10 tool calls an adapter returns: {f['events_ms'] - f['plain_ms']:.3f} ms)")


if __name__ == "__main__":
    main()
