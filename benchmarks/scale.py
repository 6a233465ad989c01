"""Scale benchmarks (scale.md): merging shards, reading a merged group, and the Ray executor.

    python benchmarks/scale.py                 # everything
    python benchmarks/scale.py merge           # 4 shards x 2000 attempts: merge time; view/query group vs one run
    python benchmarks/scale.py ray-overhead    # per-attempt overhead of --executor ray on trivial attempts
    python benchmarks/scale.py ray-sleep       # 200 attempts sleeping 1 s at concurrency 50: in-process vs Ray

Each builds its project in a temp dir; the Ray ones start a two-node cluster on this machine
(127.0.0.1) and stop every process of it by pid at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workloads import TRIVIAL, _project  # noqa: E402

SLEEPY = '''
import time

from niceeval_cli import define_adapter
from niceeval_cli.expect import includes


def nap(ctx, message, **options):
    time.sleep(1.0)  # a system under test that takes a second to answer
    return message

adapter = define_adapter(name="nap", send=nap)


def make(i):
    async def test(t):
        turn = await t.send(f"marker-{i} hello")
        t.check(turn.message, includes(f"marker-{i}"))
    return test


for i in range(N):
    globals()[f"nap_{i:05d}"] = adapter.define_eval(test=make(i), name=f"nap_{i:05d}")
'''


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra or {})
    return env


def _cli(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "niceeval_cli", *args], cwd=root, env=env or _env(),
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1, 5):
        raise SystemExit(f"niceeval {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, done


def _interleaved(fns: dict[str, Callable[[], Any]], repeat: int = 5) -> dict[str, float]:
    """Median seconds of each call, the calls taken in turn so that load changes hit all alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def merge_figures(evals: int = 8000, shards: int = 4, repeat: int = 5) -> dict[str, float]:
    """4 shards of ~2 000 trivial attempts each (4 000 evals x 2 attempts = 8 000 slots): shard and
    one-machine runs, `niceeval merge` (twice: the second a no-op) through the CLI, then the group
    and one-machine reads as library calls (no start-up), interleaved, medians of `repeat`."""
    from niceeval_cli.app.query import query_rows
    from niceeval_cli.app.view import load_view
    from niceeval_cli.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), TRIVIAL, evals // 2, "[project]\nattempts = 2\nmax_concurrency = 16\n")
        one_wall, _ = _cli(root, "run", "--store", "one.db")
        walls = [_cli(root, "run", "--shard", f"{k}/{shards}", "--group", "bench", "--store", f"s{k}.db")[0]
                 for k in range(1, shards + 1)]
        sources = [f"s{k}.db" for k in range(1, shards + 1)]
        merge_wall, _ = _cli(root, "merge", *sources, "--into", "merged.db")
        again_wall, _ = _cli(root, "merge", *sources, "--into", "merged.db")
        with Store.open(root / "merged.db", readonly=True) as store:
            attempts = sum(g.total for g in store.outcome_rows("bench"))
        merged, one = root / "merged.db", root / "one.db"
        reads = _interleaved({
            "query attempts group": lambda: query_rows(merged, "attempts", run="bench"),
            "query attempts one": lambda: query_rows(one, "attempts"),
            "query assertions group": lambda: query_rows(merged, "assertions", run="bench", states=["failed"],
                                                         limit=50),
            "query assertions one": lambda: query_rows(one, "assertions", states=["failed"], limit=50),
            "view group": lambda: load_view(merged, "bench"),
            "view one": lambda: load_view(one, None),
            "query runs group": lambda: query_rows(merged, "runs"),
            "query runs one": lambda: query_rows(one, "runs"),
        }, repeat)
    return {"attempts": attempts, "one_run": one_wall, "shard_runs": max(walls), "merge": merge_wall,
            "merge_again": again_wall, **reads}


def merge_bench(evals: int = 8000, shards: int = 4) -> None:
    f = merge_figures(evals, shards)
    print(f"merge  {shards} shards, {f['attempts']:.0f} attempts in all (slowest shard run {f['shard_runs']:.1f} s; "
          f"one-machine run {f['one_run']:.1f} s)")
    print(f"merge  niceeval merge of {shards} stores: {f['merge']:.2f} s wall (CLI, incl. start-up); "
          f"again (a no-op): {f['merge_again']:.2f} s")
    for what, label in (("query attempts", "query attempts:           "),
                        ("query assertions", "query assertions failed/50:"),
                        ("view", "view (header + first page):"), ("query runs", "query runs:               ")):
        group, one = f[f"{what} group"], f[f"{what} one"]
        print(f"read   {label} group {group * 1000:7.1f} ms · one run {one * 1000:7.1f} ms · "
              f"ratio {group / one:.2f}")


def _cluster() -> Any:
    from tests.support.ray_cluster import start_cluster

    return start_cluster(nodes=2)


def ray_overhead(n: int = 1000) -> None:
    """Trivial attempts: the per-attempt slope of a Ray run minus that of an in-process run
    ((wall at n - wall at 1) / (n - 1) each), so connecting and starting workers cancel out."""
    cluster = _cluster()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = _project(Path(tmp), TRIVIAL, n, "[project]\nmax_concurrency = 32\n")
            ray_args = ("--executor", "ray", "--ray-address", cluster.address)
            local_1, _ = _cli(root, "run", "cases/case_00000", "--store", "l1.db", env=cluster.env)
            local_n, _ = _cli(root, "run", "--store", "ln.db", env=cluster.env)
            ray_1, _ = _cli(root, "run", "cases/case_00000", "--store", "r1.db", *ray_args, env=cluster.env)
            ray_n, _ = _cli(root, "run", "--store", "rn.db", *ray_args, env=cluster.env)
    finally:
        cluster.stop()
    local_slope, ray_slope = (local_n - local_1) / (n - 1), (ray_n - ray_1) / (n - 1)
    print(f"ray    {n} trivial attempts at concurrency 32: in-process {local_n:.2f} s (1 attempt: {local_1:.2f} s) · "
          f"Ray on 2 local nodes {ray_n:.2f} s (1 attempt: {ray_1:.2f} s: connect + one worker per node)")
    print(f"ray    per attempt: in-process {local_slope * 1000:.2f} ms · Ray {ray_slope * 1000:.2f} ms · "
          f"Ray overhead {(ray_slope - local_slope) * 1000:.2f} ms per attempt")


def ray_sleep(n: int = 200, concurrency: int = 50) -> None:
    """200 attempts whose adapter sleeps 1 s, max_concurrency 50: ideal n / concurrency = 4 s."""
    cluster = _cluster()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = _project(Path(tmp), SLEEPY, n, f"[project]\nmax_concurrency = {concurrency}\n")
            local, _ = _cli(root, "run", "--store", "local.db", env=cluster.env)
            ray, _ = _cli(root, "run", "--store", "ray.db", "--executor", "ray", "--ray-address", cluster.address,
                          env=cluster.env)
    finally:
        cluster.stop()
    ideal = n / concurrency
    print(f"sleep  {n} attempts x 1 s at concurrency {concurrency} (ideal {ideal:.1f} s): in-process {local:.2f} s "
          f"({local / ideal:.2f} x ideal) · Ray on 2 local nodes {ray:.2f} s ({ray / ideal:.2f} x ideal) · "
          f"Ray / in-process {ray / local:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="?", default="all", choices=["all", "merge", "ray-overhead", "ray-sleep"])
    which = parser.parse_args().which
    if which in ("all", "merge"):
        merge_bench()
    if which in ("all", "ray-overhead"):
        ray_overhead()
    if which in ("all", "ray-sleep"):
        ray_sleep()


if __name__ == "__main__":
    main()
