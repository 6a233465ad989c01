"""Statistics at scale (issue 25, item 8): 10 000 units / 100 000 attempts per run.

Run: python benchmarks/stats.py [stats] [w1] [--units N] [--attempts-per-unit K] [--before REV]

`stats` builds one store holding two runs of N units × K attempts each (built directly, as
`view_large.py` does; mostly passing, a share failing and errored, half of the evals
score-style; each run then finished through `Store.finish_run`, the runner's finalisation,
which stores its unit folds as for any sealed run: its time is printed) and times, through the
CLI, the statistics a user asks for:
`query units` and `query experiments` on one run, and `compare RUN_A RUN_B --format json`
(per-unit Fisher / Welch tests, Benjamini–Hochberg, paired experiment differences).
Target: each ≤ 1.5 s (best of 3, interpreter start-up included). Each figure also gives the
command's own CPU time, and the comparison its ratio to its floor measured in the same run: the
same `compare` of two runs of 4 units (start-up, the CLI's imports, scipy's tests).

`w1` times W1 (1000 trivial evals, its summary now carrying intervals) against the same
workload on the code from before the intervals (`--before REV`, default the parent of the
commit that added them), interleaved in one run. Target: within 5 %. Needs a git checkout.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # runnable from a checkout, uninstalled
sys.path.insert(0, str(HERE))

import view_large  # noqa: E402  (the store builder shared with the view benchmark)
import workloads  # noqa: E402

#: The parent of a489a0b, the commit that put intervals into the run summary.
BEFORE_INTERVALS = "a489a0b^"


def _cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    return _cli_cpu(args, cwd, env)[0]


def _cli_cpu(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system, the child's) seconds of one CLI invocation."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "niceeval_cli.cli", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # compare exits 1 when something regressed
        raise SystemExit(f"niceeval {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stats_figures(units: int, per_unit: int) -> dict[str, float]:
    view_large.ATTEMPTS_PER_EVAL = per_unit
    attempts = units * per_unit
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = folder / "results.db"
        started = time.perf_counter()
        runs, finishing = [], []
        for _ in range(2):
            runs.append(view_large.build(store, attempts, 4, finish=False))
            began = time.perf_counter()
            view_large.finish_run(store, runs[-1])  # the runner's finalisation: its unit folds stored
            finishing.append(time.perf_counter() - began)
        run_a, run_b = runs
        print(f"built 2 runs × {units:,} units × {per_unit} attempts in {time.perf_counter() - started:.1f} s "
              f"({store.stat().st_size / 1e6:.0f} MB); finishing each run (`finish_run`, its unit folds "
              f"stored): {', '.join(f'{s:.2f}' for s in finishing)} s")
        cases = {
            "query units (one run)": ["query", "units", "--run", run_a, "--store", str(store), "--format", "ndjson"],
            "query experiments (one run)": [
                "query", "experiments", "--run", run_a, "--store", str(store), "--format", "ndjson",
            ],
            "compare A B --format json": ["compare", run_a, run_b, "--store", str(store), "--format", "json"],
        }
        # The floor of a comparison: the same command on two runs of one unit each (start-up,
        # the CLI's imports and scipy's tests, which load in about a second on their own).
        tiny = folder / "tiny.db"
        view_large.ATTEMPTS_PER_EVAL = 1
        tiny_a, tiny_b = view_large.build(tiny, 4, 4), view_large.build(tiny, 4, 4)
        cases["compare floor (two runs of 4 units)"] = [
            "compare", tiny_a, tiny_b, "--store", str(tiny), "--format", "json"]
        start_up = min(_timed_python() for _ in range(3))
        figures: dict[str, float] = {"python start-up": start_up}
        print(f"{'python -c pass (start-up, for reference)':<38} {start_up:.3f} s")
        for name, args in cases.items():
            runs = [_cli_cpu(args, folder) for _ in range(3)]
            best, cpu = min(w for w, _ in runs), min(c for _, c in runs)
            figures[name], figures[f"{name} cpu"] = best, cpu
            print(f"{name:<38} {best:.3f} s (CPU {cpu:.3f} s)  target ≤ 1.5 s  {'met' if best <= 1.5 else 'MISSED'}")
        floor = figures["compare floor (two runs of 4 units)"]
        ratio = figures["compare A B --format json"] / floor
        print(f"{'compare A B / its floor':<38} {ratio:.2f} × (wall, best of 3 each; CPU "
              f"{figures['compare A B --format json cpu'] / figures['compare floor (two runs of 4 units) cpu']:.2f} ×)")
        return figures


def _timed_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def w1_before_after(before: str, repeat: int) -> tuple[float, float]:
    """W1 on this checkout and on `before`, interleaved, medians of `repeat`."""
    repo = HERE.parent
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-q", str(old), before], check=True)
        try:
            root = workloads._project(Path(tmp) / "w1", workloads.TRIVIAL, 1000)
            now_env = {"PYTHONPATH": str(repo)}
            old_env = {"PYTHONPATH": str(old)}
            workloads._run_fresh(root, now_env)  # warm both trees' bytecode
            workloads._run_fresh(root, old_env)
            now, then = [], []
            for _ in range(repeat):
                now.append(workloads._run_fresh(root, now_env)[0])
                then.append(workloads._run_fresh(root, old_env)[0])
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(old)], check=False)
            shutil.rmtree(old, ignore_errors=True)
    after_s, before_s = statistics.median(now), statistics.median(then)
    ratio = after_s / before_s
    print(f"W1 with intervals {after_s:.3f} s, before ({before}) {before_s:.3f} s: {ratio:.3f} × "
          f"(target ≤ 1.05 ×, {'met' if ratio <= 1.05 else 'MISSED'}; medians of {repeat}, interleaved)")
    return after_s, before_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", default=["stats", "w1"], choices=["stats", "w1"])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--attempts-per-unit", type=int, default=10)
    parser.add_argument("--before", default=BEFORE_INTERVALS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # bytecode first, as an installed package has it (PYTHONDONTWRITEBYTECODE would leave every run compiling)
    compileall.compile_dir(str(HERE.parent / "niceeval_cli"), quiet=1)
    if "stats" in args.sections:
        stats_figures(args.units, args.attempts_per_unit)
    if "w1" in args.sections:
        w1_before_after(args.before, args.repeat)


if __name__ == "__main__":
    main()
