"""Datasets at scale (datasets.md, "Scale"), through the real `niceeval` CLI in subprocesses.

    python benchmarks/datasets.py [--cases 10000] [--repeat 3]

1. A 10 000-case JSONL dataset behind one eval: the wall time of `niceeval list`,
   `niceeval list --cases` and `niceeval run --dry` (discovery + plan, nothing executed) —
   target about 1 s each — and, in-process, discovery and planning alone.
2. A full run of the 10 000 cases against a run of 10 000 separate evals doing the same work
   (an adapter whose send echoes, one `includes` check): wall time, per-attempt time and the
   ratio, which should be about 1.

Each project and store lives in its own temp dir. Figures are medians of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NICEEVAL = [sys.executable, "-c", "from niceeval_cli.cli import main; main()"]

ADAPTER = '''
from niceeval_cli import define_adapter, define_eval
from niceeval_cli.expect import includes


async def echo(ctx, message, **options):
    return message

adapter = define_adapter(name="echo", send=echo)
'''

WITH_CASES = ADAPTER + '''
from niceeval_cli.datasets import load_jsonl


@adapter.define_eval(cases=load_jsonl("cases.jsonl"))
async def dataset(t, case):
    turn = await t.send(f"marker-{case['n']} hello")
    t.check(turn.message, includes(f"marker-{case['n']}"))
'''

SEPARATE = ADAPTER + '''

def make(i):
    async def test(t):
        turn = await t.send(f"marker-{i} hello")
        t.check(turn.message, includes(f"marker-{i}"))
    return test


for i in range(N):
    globals()[f"case_{i:05d}"] = adapter.define_eval(test=make(i), name=f"case_{i:05d}")
'''


def dataset_project(root: Path, n: int) -> Path:
    (root / "evals").mkdir(parents=True)
    rows = (json.dumps({"id": f"c-{i:05d}", "n": i, "question": f"question number {i}?"}) for i in range(n))
    (root / "evals" / "cases.jsonl").write_text("\n".join(rows) + "\n")
    (root / "evals" / "dataset.py").write_text(WITH_CASES)
    (root / "niceeval.toml").write_text("[project]\n")
    return root


def separate_project(root: Path, n: int) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "separate.py").write_text(SEPARATE.replace("range(N)", f"range({n})"))
    (root / "niceeval.toml").write_text("[project]\n")
    return root


def timed(args: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run([*NICEEVAL, *args], cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"`niceeval {' '.join(args)}` exited {done.returncode}:\n{done.stderr[-2000:]}")
    return took


def median(values: list[float]) -> float:
    return statistics.median(values)


def in_process(root: Path) -> tuple[float, float, int]:
    """Discovery and planning alone, without interpreter start-up: (discover s, plan s, slots)."""
    code = f'''
import json, sys, time
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from niceeval_cli.app.project import load_project
from niceeval_cli.discovery import discover
from niceeval_cli.runner import RunRequest, plan
project = load_project(None, Path({str(root)!r}))
t0 = time.perf_counter()
evals = discover(project.eval_roots, project.root)
t1 = time.perf_counter()
slots = plan(RunRequest(project=project, evals=evals), None)
t2 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, len(slots)]))
'''
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    discover_s, plan_s, slots = json.loads(done.stdout)
    return discover_s, plan_s, slots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.cases, args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        data = dataset_project(Path(tmp) / "dataset", n)
        version = median([timed(["--version"], data) for _ in range(repeat)])
        listing = median([timed(["list"], data) for _ in range(repeat)])
        listing_cases = median([timed(["list", "--cases"], data) for _ in range(repeat)])
        dry = median([timed(["run", "--dry"], data) for _ in range(repeat)])
        try:
            discover_s, plan_s, slots = in_process(data)
            inside = f"discovery {discover_s:.2f} s + plan {plan_s:.2f} s in-process ({slots} slots)"
        except subprocess.CalledProcessError as exc:
            inside = f"in-process figures unavailable ({exc.stderr.strip().splitlines()[-1]})"
        print(f"{n} cases: niceeval --version {version:.2f} s (interpreter start-up)")
        print(f"  list {listing:.2f} s · list --cases {listing_cases:.2f} s · run --dry {dry:.2f} s (target ≈ 1 s)")
        print(f"  {inside}")

        runs_cases, runs_separate = [], []
        for i in range(repeat):
            runs_cases.append(timed(["run"], dataset_project(Path(tmp) / f"cases-{i}", n)))
            runs_separate.append(timed(["run"], separate_project(Path(tmp) / f"separate-{i}", n)))
        cases_s, separate_s = median(runs_cases), median(runs_separate)
        per_case = (cases_s - version) / n * 1000
        per_eval = (separate_s - version) / n * 1000
        print(f"full run, {n} attempts: one eval with {n} cases {cases_s:.2f} s ({per_case:.3f} ms per attempt); "
              f"{n} separate evals {separate_s:.2f} s ({per_eval:.3f} ms per attempt)")
        print(f"  per-attempt overhead ratio, cases / separate evals: {per_case / per_eval:.2f}")


if __name__ == "__main__":
    main()
