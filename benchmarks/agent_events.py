"""Agent events overhead: W1 (1000 trivial evals) with and without 10 tool-call events per turn.

    python benchmarks/agent_events.py [--evals 1000] [--repeat 3]

Both projects go through the real `niceeval run` in a subprocess (a fresh store each time). The
events project's adapter returns a `Turn` with 10 `ToolCall`s (input and output dicts) and
declares `observes=("messages", "tool_calls")`, so every attempt also seals 1 turn row and 10
event rows. Per-attempt overhead is (wall time − the wall time of a 1-eval run) / evals, the
median of --repeat runs; the target is a ratio within 1.3×.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import TRIVIAL, _project, _run_fresh  # noqa: E402

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


def _wall(source: str, n: int, repeat: int) -> float:
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), source, n)
        for _ in range(repeat):
            wall, _rss, code, out = _run_fresh(root)
            if code != 0:
                raise SystemExit(f"run failed with exit {code}:\n{out[-2000:]}")
            walls.append(wall)
    return statistics.median(walls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evals", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = _wall(TRIVIAL, 1, args.repeat)
    plain = _wall(TRIVIAL, args.evals, args.repeat)
    events = _wall(WITH_EVENTS, args.evals, args.repeat)
    per_plain = (plain - base) / args.evals * 1000
    per_events = (events - base) / args.evals * 1000
    print(f"1-eval run (startup):           {base:.2f} s")
    print(f"W1 without events:              {plain:.2f} s  ({per_plain:.3f} ms per attempt)")
    print(f"W1 with 10 tool calls per turn: {events:.2f} s  ({per_events:.3f} ms per attempt)")
    print(f"per-attempt overhead ratio:     {per_events / per_plain:.2f}x (target ≤ 1.3x)")


if __name__ == "__main__":
    main()
