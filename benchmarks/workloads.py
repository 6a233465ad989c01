"""The performance workloads (issue 6), each through the real `niceeval` CLI in a subprocess.

    python benchmarks/workloads.py [startup w1 w2 scale determinism] [--repeat 5]

Every workload generates its own project and store in a temp dir; W2 starts its own loopback
judge server (tests/support/loopback.py) with 50 ms latency. Figures are medians of --repeat runs.

- startup: `niceeval --version`, `niceeval --help`, `niceeval run` on one trivial eval.
- w1: 1000 trivial evals (an adapter whose send echoes; one `includes` check each), default
  concurrency: wall time and peak RSS.
- w2: 300 pass-style evals, each gated by one `closed_qa` against the judge server (50 ms),
  judge and project max_concurrency 32: wall time, average requests in flight while grading,
  grading requests and preflights.
- scale: 10 000 trivial attempts (the W1 project with 10 000 evals) against W1: time ratio and
  peak RSS difference.
- determinism: W2 with N = 20 at concurrency 32, 20 times: identical exit codes and rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' loopback judge: tests.support.loopback

NICEEVAL = [sys.executable, "-c", "from niceeval_cli.cli import main; main()"]

TRIVIAL = '''
from niceeval_cli import define_adapter, define_eval
from niceeval_cli.expect import includes


async def echo(ctx, message, **options):
    return message

adapter = define_adapter(name="echo", send=echo)


def make(i):
    async def test(t):
        turn = await t.send(f"marker-{i} hello")
        t.check(turn.message, includes(f"marker-{i}"))
    return test


for i in range(N):
    globals()[f"case_{i:05d}"] = adapter.define_eval(test=make(i), name=f"case_{i:05d}")
'''

JUDGED = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa


def make(i):
    def test(t):
        t.check({"input": f"question {i}", "output": f"answer-{i:04d}"},
                closed_qa("Is the answer clear?").at_least(1)).gate().label("clear")
    return test


for i in range(N):
    globals()[f"judged_{i:04d}"] = define_eval(test=make(i), name=f"judged_{i:04d}", judge=True)
'''


def _project(root: Path, source: str, n: int, toml: str = "[project]\n") -> Path:
    (root / "evals").mkdir(parents=True, exist_ok=True)
    (root / "evals" / "cases.py").write_text(source.replace("range(N)", f"range({n})"))
    (root / "niceeval.toml").write_text(toml)
    return root


def _run_fresh(root: Path, env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    store = root / ".niceeval"
    if store.exists():
        for p in store.iterdir():
            p.unlink()
    return _rss_run(["run"], root, env)


def _rss_run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """Run the CLI under a tiny wrapper that reports its own peak RSS exactly (not a running max).

    The peak is the process's VmHWM, not `ru_maxrss`: Linux carries a forked child's pre-exec
    size into `ru_maxrss`, so every CLI started by a benchmark that had grown (a judge server
    in-process, say) reported at least the benchmark's own size."""
    wrapper = (
        "import sys, runpy\n"
        "sys.argv = ['niceeval', *sys.argv[1:]]\n"
        "from niceeval_cli.cli import main  # the console script's entry point\n"
        "try:\n    main()\n"
        "except SystemExit as e:\n    code = e.code\n"
        "else:\n    code = 0\n"
        "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')).split()[1]\n"
        "sys.stderr.write(f'\\n__RSS__ {hwm}\\n')\n"
        "sys.exit(code)\n"
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, *args], cwd=cwd, env={**os.environ, **(env or {})},
        capture_output=True, text=True,
    )
    wall = time.perf_counter() - started
    rss = 0.0
    for line in proc.stderr.splitlines():
        if line.startswith("__RSS__ "):
            rss = int(line.split()[1]) / 1024
    return wall, rss, proc.returncode, proc.stdout


def _median(values: list[float]) -> float:
    return statistics.median(values)


def startup(repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), TRIVIAL, 1)
        figures = {}
        for name, args in (("--version", ["--version"]), ("--help", ["--help"])):
            figures[name] = _median([_rss_run(args, root)[0] for _ in range(repeat)])
        figures["run (1 trivial eval)"] = _median([_run_fresh(root)[0] for _ in range(repeat)])
    for name, wall in figures.items():
        print(f"startup  niceeval {name:<22} {wall:.3f} s (median of {repeat})")
    return figures


def w1(repeat: int, n: int = 1000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), TRIVIAL, n)
        runs = [_run_fresh(root) for _ in range(repeat)]
    walls, rsss, codes = [r[0] for r in runs], [r[1] for r in runs], {r[2] for r in runs}
    print(f"w1{'' if n == 1000 else f' (n={n})'}  {n} trivial evals: wall {_median(walls):.3f} s "
          f"(min {min(walls):.3f}, max {max(walls):.3f}), peak RSS {_median(rsss):.1f} MiB, exit {codes}")
    return {"wall": _median(walls), "rss": _median(rsss)}


def _judge_toml(base_url: str, concurrency: int) -> str:
    return (
        f"[project]\nmax_concurrency = {concurrency}\n\n"
        f"[judge]\nmodel = \"judge-bench\"\nbase_url = \"{base_url}\"\napi_key_env = \"BENCH_JUDGE_KEY\"\n"
        f"max_concurrency = {concurrency}\n"
    )


def _in_flight(requests: list[Any]) -> tuple[float, float]:
    """Average and max requests in flight over the grading span."""
    if not requests:
        return 0.0, 0.0
    start = min(r.started for r in requests)
    end = max(r.ended for r in requests)
    busy = sum(r.ended - r.started for r in requests)
    events = sorted([(r.started, 1) for r in requests] + [(r.ended, -1) for r in requests])
    level = peak = 0
    for _t, d in events:
        level += d
        peak = max(peak, level)
    return busy / (end - start), float(peak)


def w2(repeat: int, n: int = 300, concurrency: int = 32, latency: float = 0.05) -> dict[str, Any]:
    from tests.support.loopback import JudgeServer, Reply

    env = {"BENCH_JUDGE_KEY": "bench-key-not-secret"}
    results = []
    with tempfile.TemporaryDirectory() as tmp, JudgeServer(latency_s=latency) as server:
        server.default = Reply.tool("Y", "clear")
        root = _project(Path(tmp), JUDGED, n, _judge_toml(server.base_url, concurrency))
        for _ in range(repeat):
            server.clear_log()
            wall, rss, code, _out = _run_fresh(root, env)
            grading = server.grading_requests
            avg, peak = _in_flight(grading)
            preflights = len(server.requests) - len(grading)
            results.append((wall, rss, code, len(grading), preflights, avg, peak, server.connections))
    wall = _median([r[0] for r in results])
    ideal = n * latency / concurrency
    print(f"w2  {n} judged evals @ {latency * 1000:.0f} ms, concurrency {concurrency}: wall {wall:.3f} s "
          f"(ideal grading {ideal:.3f} s), avg in flight {_median([r[5] for r in results]):.1f}, "
          f"max {max(r[6] for r in results):.0f}, grading requests {sorted({r[3] for r in results})}, "
          f"preflights {sorted({r[4] for r in results})}, connections {max(r[7] for r in results)}, "
          f"exit {sorted({r[2] for r in results})}, peak RSS {_median([r[1] for r in results]):.1f} MiB")
    return {"wall": wall}


def scale(repeat: int) -> None:
    base = w1(repeat)
    big = w1(max(1, repeat // 2 or 1), n=10_000)
    print(f"scale  10x work: {big['wall'] / base['wall']:.2f}x time (target ≤ 11x), "
          f"RSS +{big['rss'] - base['rss']:.1f} MiB (target ≤ +30 MiB)")


def determinism(runs: int = 20, n: int = 20, concurrency: int = 32) -> None:
    from tests.support.loopback import JudgeServer, Reply

    env = {"BENCH_JUDGE_KEY": "bench-key-not-secret"}
    seen = set()
    with tempfile.TemporaryDirectory() as tmp, JudgeServer(latency_s=0.05) as server:
        server.default = Reply.tool("Y", "clear")
        server.when("answer-0007", Reply.tool("N", "unclear"))  # one eval fails, deterministically
        root = _project(Path(tmp), JUDGED, n, _judge_toml(server.base_url, concurrency))
        for _ in range(runs):
            _wall, _rss, code, _out = _run_fresh(root, env)
            q = subprocess.run([*NICEEVAL, "query", "assertions", "--format", "json"], cwd=root,
                               capture_output=True, text=True, check=True)
            rows = tuple(sorted((r["eval_id"], r["state"], r["measurement"]) for r in json.loads(q.stdout)))
            seen.add((code, rows))
    print(f"determinism  W2 n={n} x{runs}: {len(seen)} distinct outcome(s) "
          f"(exit codes {sorted({s[0] for s in seen})}) — expected exactly 1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", default=["startup", "w1", "w2", "scale", "determinism"])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name in args.workloads:
        if name == "startup":
            startup(args.repeat)
        elif name == "w1":
            w1(args.repeat)
        elif name == "w2":
            w2(args.repeat)
        elif name == "scale":
            scale(args.repeat)
        elif name == "determinism":
            determinism()
        else:
            parser.error(f"unknown workload {name!r}")


if __name__ == "__main__":
    main()
