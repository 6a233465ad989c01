"""Agent events overhead: W1 (1000 trivial evals) with and without 10 tool-call events per turn.

    python benchmarks/agent_events.py [--evals 1000] [--repeat 3]

Both projects go through the real `niceeval run` in a subprocess (a fresh store each time). The
events project's adapter returns a `Turn` with 10 `ToolCall`s (input and output dicts) and
declares `observes=("messages", "tool_calls")`, so every attempt also seals 1 turn row and 10
event rows. Two figures, each the median of --repeat interleaved runs: the per-attempt time as W1
is quoted (wall time / evals, for evals + evals/5 evals), and the marginal per-attempt time (the
slope between evals/5 and evals + evals/5 evals, so start-up and imports cancel out). The target
is a ratio within 1.3×.
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


def _walls(sources: dict[str, str], sizes: tuple[int, int], repeat: int) -> dict[tuple[str, int], float]:
    """Median wall time of each (variant, size), the runs interleaved so load noise hits both."""
    walls: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {(name, n): _project(Path(tmp) / f"{name}-{n}", src, n)
                 for name, src in sources.items() for n in sizes}
        for _ in range(repeat):
            for key, root in roots.items():
                wall, _rss, code, out = _run_fresh(root)
                if code != 0:
                    raise SystemExit(f"{key}: run failed with exit {code}:\n{out[-2000:]}")
                walls.setdefault(key, []).append(wall)
    return {key: statistics.median(values) for key, values in walls.items()}


def figures(evals: int = 1000, repeat: int = 3) -> dict[str, float]:
    """Both variants at evals/5 and evals + evals/5 evals, interleaved: wall times, ms per attempt
    (wall / evals) and the marginal ms per attempt (the slope, start-up cancelled) of each."""
    small = max(1, evals // 5)
    sizes = (small, small + evals)
    walls = _walls({"plain": TRIVIAL, "events": WITH_EVENTS}, sizes, repeat)
    n = sizes[1]
    out: dict[str, float] = {"evals": n}
    for name in ("plain", "events"):
        out[f"{name}_wall"] = walls[(name, n)]
        out[f"{name}_ms"] = walls[(name, n)] / n * 1000
        out[f"{name}_marginal_ms"] = (walls[(name, n)] - walls[(name, small)]) / evals * 1000
    out["ratio"] = out["events_wall"] / out["plain_wall"]
    out["marginal_ratio"] = out["events_marginal_ms"] / out["plain_marginal_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evals", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    f = figures(args.evals, args.repeat)
    n = int(f["evals"])
    print(f"W1 without events:              {f['plain_wall']:.2f} s for {n} evals = {f['plain_ms']:.3f} ms per "
          f"attempt (marginal {f['plain_marginal_ms']:.3f} ms)")
    print(f"W1 with 10 tool calls per turn: {f['events_wall']:.2f} s for {n} evals = {f['events_ms']:.3f} ms per "
          f"attempt (marginal {f['events_marginal_ms']:.3f} ms)")
    print(f"per-attempt ratio (wall / evals, as W1 is quoted): {f['ratio']:.2f}x (target ≤ 1.3x)")
    print(f"marginal ratio (start-up excluded):               {f['marginal_ratio']:.2f}x")


if __name__ == "__main__":
    main()
