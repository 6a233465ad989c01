"""`run --until-decided` rounds: how a run's cost grows with `--max-attempts`.

Run: python benchmarks/until_decided.py [--max-attempts 100 300 1000] [--evals 1] [--repeat 3]
     [--tree PATH ...]

Each eval's app passes four calls of every five, so with `pass_rule = 0.8` its Wilson interval
always contains 0.8: every unit stays undecided and gets one attempt a round until its cap M.
A run is `niceeval run --until-decided --max-attempts M` through the CLI on a fresh store;
printed: its wall and CPU (user + system of the CLI process) seconds, best of `--repeat`.
`--tree` runs each given checkout (PYTHONPATH) in turn, alternating, so that trees measured in
one run share the machine's load: say the load average with the figures. The floor, run with
the first tree in the same alternation: `niceeval run --attempts M`, the same M attempts an
eval configured up front (one plan, no rounds; up to 4 at once where the rounds run one).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

APP = """
import threading
from collections import Counter

_seen = Counter()
_lock = threading.Lock()


def reply(message):
    with _lock:
        n = _seen[message]
        _seen[message] += 1
    return "yes" if n % 5 != 4 else "no"
"""

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def e{i}(t):
    turn = await t.send("e{i}")
    t.check(turn.message, equals("yes")).label("Says yes")
"""

CONFIG = """[project]
attempts = 5
pass_rule = 0.8
max_concurrency = 4

[experiments.local]
adapter = "python"
[experiments.local.options]
callable = "app:reply"
"""


def build(root: Path, evals: int) -> None:
    (root / "evals").mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "niceeval.toml").write_text(CONFIG)
    (root / "evals" / "noisy.py").write_text("".join(EVAL.format(i=i) for i in range(evals)))


def one_run(root: Path, tree: Path, cap: int, evals: int, floor: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of one until-decided run on a fresh store (`floor`: the same attempts
    configured); checks that each eval got `cap` attempts."""
    shutil.rmtree(root / ".niceeval", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    args = ["--attempts", str(cap)] if floor else ["--until-decided", "--max-attempts", str(cap)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "run", *args], cwd=root, capture_output=True,
                          text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != (0 if floor else 5):  # until decided: every unit still undecided at its cap
        raise SystemExit(f"{tree}: exit {done.returncode}: {done.stdout[-1500:]}{done.stderr[-1500:]}")
    with sqlite3.connect(root / ".niceeval" / "results.db") as conn:
        sealed = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
    if sealed != evals * cap:
        raise SystemExit(f"{tree}: {sealed} attempts sealed, not {evals} × {cap}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-attempts", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--evals", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, nargs="+", default=[HERE.parent])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        build(root, args.evals)
        print(f"load average at the start: {os.getloadavg()[0]:.1f}")
        for cap in args.max_attempts:
            best: dict[str, tuple[float, float]] = {}
            for _ in range(args.repeat):
                # alternating: trees share the load
                for name, tree, floor in [*((str(t), t, False) for t in args.tree), ("floor", args.tree[0], True)]:
                    wall, cpu = one_run(root, tree, cap, args.evals, floor)
                    old = best.get(name)
                    best[name] = (min(wall, old[0]), min(cpu, old[1])) if old else (wall, cpu)
            for name, (wall, cpu) in best.items():
                print(f"M={cap:>5}  evals={args.evals}  {name}: wall {wall:.2f} s, CPU {cpu:.2f} s "
                      f"(best of {args.repeat})")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
