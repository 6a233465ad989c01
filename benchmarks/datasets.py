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


def listing_figures(root: Path, repeat: int = 3) -> dict[str, float]:
    """`--version`, `list`, `list --cases`, `run --dry` on a dataset project, taken in turn
    (medians of `repeat`), then discovery and planning in-process."""
    commands = {"version": ["--version"], "list": ["list"], "list_cases": ["list", "--cases"], "dry": ["run", "--dry"]}
    walls: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, args in commands.items():
            walls[name].append(timed(args, root))
    out = {name: median(values) for name, values in walls.items()}
    try:
        out["discover"], out["plan"], out["slots"] = in_process(root)
    except subprocess.CalledProcessError:
        pass
    return out


def run_figures(tmp: Path, n: int, repeat: int = 3, startup: float = 0.0) -> dict[str, float]:
    """A full run of the n cases and of n separate evals, alternately (a fresh project each time):
    wall times and the per-attempt times with `startup` (interpreter start-up) taken off."""
    runs_cases, runs_separate = [], []
    for i in range(repeat):
        runs_cases.append(timed(["run"], dataset_project(tmp / f"cases-{i}", n)))
        runs_separate.append(timed(["run"], separate_project(tmp / f"separate-{i}", n)))
    cases_s, separate_s = median(runs_cases), median(runs_separate)
    per_case = (cases_s - startup) / n * 1000
    per_eval = (separate_s - startup) / n * 1000
    return {"cases": cases_s, "separate": separate_s, "per_case_ms": per_case, "per_eval_ms": per_eval,
            "ratio": per_case / per_eval}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.cases, args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        f = listing_figures(dataset_project(Path(tmp) / "dataset", n), repeat)
        if "slots" in f:
            inside = f"discovery {f['discover']:.2f} s + plan {f['plan']:.2f} s in-process ({f['slots']:.0f} slots)"
        else:
            inside = "in-process figures unavailable"
        print(f"{n} cases: niceeval --version {f['version']:.2f} s (interpreter start-up)")
        print(f"  list {f['list']:.2f} s · list --cases {f['list_cases']:.2f} s · run --dry {f['dry']:.2f} s "
              "(target ≈ 1 s)")
        print(f"  {inside}")
        r = run_figures(Path(tmp), n, repeat, f["version"])
        print(f"full run, {n} attempts: one eval with {n} cases {r['cases']:.2f} s ({r['per_case_ms']:.3f} ms per "
              f"attempt); {n} separate evals {r['separate']:.2f} s ({r['per_eval_ms']:.3f} ms per attempt)")
        print(f"  per-attempt overhead ratio, cases / separate evals: {r['ratio']:.2f}")


if __name__ == "__main__":
    main()
