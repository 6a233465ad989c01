"""How fast `view` and `query` read a large store: 100 000 attempts, 1 000 000 assertion rows.

Run: python benchmarks/view_large.py [ATTEMPTS] [RESULTS_PER_ATTEMPT] [--keep DIR] [--recorded-unavailable]
Target: the default `niceeval view` page and `niceeval query --state failed --limit 50` each
finish in under 1 s (wall clock of the whole CLI process, interpreter start-up included).

The store is built directly with `executemany` in a few big transactions (not through the runner,
which would take minutes): one run holding every attempt (the worst case for a view of the
latest run), 4 experiments, mostly passing with a realistic share of failures, errors and
unavailable evidence, half of them score-style. The run is then finished through
`Store.finish_run`, the runner's own finalisation, so it is stored as a real sealed run is —
its unit folds included (store/unit_folds.py), which `compare` reads. `--recorded-unavailable`:
every attempt's last check is also recorded without deciding and unavailable (a run whose judge
key was unset), the most `view`'s note on them has to count.
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a checkout, uninstalled

from niceeval_cli._ids import new_id
from niceeval_cli._states import RunStatus
from niceeval_cli.store import Store
from niceeval_cli.store.schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, INSERT_ASSERTION, INSERT_ATTEMPT, INSERT_SLOT

EXPERIMENTS = ("models/a", "models/b", "models/c", "models/d")
ATTEMPTS_PER_EVAL = 5
BATCH = 20_000  # attempts per transaction
_PREFIX = new_id()[:10]  # the id's millisecond part; a counter makes the rest (as new_id: increasing)
_counter = itertools.count()


def _fast_id() -> str:
    """A 26-character increasing id, ~10x cheaper than `new_id` (1.1 million of them per store)."""
    return f"{_PREFIX}{next(_counter):016X}"


def _attempt_rows(run_id: str, count: int, per_attempt: int, rng: random.Random, recorded: bool) -> Iterator[
    tuple[tuple[object, ...], list[tuple[object, ...]], tuple[object, ...]]
]:
    evals = max(1, count // (len(EXPERIMENTS) * ATTEMPTS_PER_EVAL))
    made = 0
    for experiment in EXPERIMENTS:
        for e in range(evals):
            score_style = e % 2 == 1
            eval_id = f"suite{e % 20:02d}/case_{e:05d}"
            for ordinal in range(ATTEMPTS_PER_EVAL):
                if made >= count:
                    return
                made += 1
                yield _one(run_id, experiment, eval_id, ordinal, score_style, per_attempt, rng, recorded)


def _one(run_id: str, experiment: str, eval_id: str, ordinal: int, score_style: bool, per_attempt: int,
         rng: random.Random, recorded: bool) -> tuple[tuple[object, ...], list[tuple[object, ...]], tuple[object, ...]]:
    """`recorded`: the attempt's last check records without deciding and could not be measured
    (as every judge check of a run whose judge key is unset): the note `view` counts."""
    attempt_id = _fast_id()
    roll = rng.random()
    states = ["matched"] * per_attempt
    reason = error = None
    if score_style:
        kind, gate = "score", "passed"
        if roll < 0.01:
            state, reason, states[3] = "errored", "assertion-errored", "errored"
        elif roll < 0.03:
            state, reason, states[2] = "unrankable", "judge-timeout", "unavailable"
        elif roll < 0.05:
            state, gate, states[0] = "scored", "failed", "mismatched"
        else:
            state = "scored"
    else:
        kind, gate = "pass", None
        if roll < 0.01:
            state, reason, error = "errored", "exception", "ValueError: boom"
        elif roll < 0.04:
            state, states[1] = "failed", "mismatched"
        else:
            state = "passed"
    results: list[tuple[object, ...]] = []
    earned = weights = unavailable = 0.0
    if recorded:
        states[-1] = "unavailable"
    for i, result_state in enumerate(states):
        record = recorded and i == per_attempt - 1
        scoring = score_style and i >= 2 and not record
        weight = 10.0 if scoring else None
        contribution = None
        if scoring and result_state == "matched":
            contribution = 10.0
        elif scoring and result_state == "mismatched":
            contribution = 0.0
        if scoring:
            weights += 10.0
            earned += contribution or 0.0
            unavailable += 10.0 if result_state == "unavailable" else 0.0
        results.append((
            _fast_id(), attempt_id, i, f"check-{i}", f"check {i}", None,
            "record" if record else "score" if scoring else "gate", weight, contribution, result_state, None, None,
            "judge-key-unresolved" if record else "judge-timeout" if result_state == "unavailable" else None,
            f"expected equals('ok'), got 'nope {i}'" if result_state != "matched" else None,
            # a recorded check is a measurement (a judge's): an ungated Boolean one would decide the verdict
            "equals", '{"value":"ok"}', '"ok"', "evals/bench.py", 10 + i, 0, "score" if record else "boolean",
            None, None, None,
        ) + (None,) * (len(ASSERTION_COLUMNS) - 24))  # the columns added since (agreement, ...)
    score = None if not score_style or state == "errored" else earned
    partial = earned if score_style and state == "errored" else None
    attempt: tuple[object, ...] = (
        attempt_id, run_id, experiment, eval_id, ordinal, kind, state, reason, score,
        weights if score_style else None, unavailable if score_style else None, partial, gate, None,
        error, "f" * 64, '{"model":"m"}', "2025-01-01T00:00:00.000Z", "2025-01-01T00:00:01.000Z",
        1000.0, 100, 50, 0,
    )
    attempt += (None,) * (len(ATTEMPT_COLUMNS) - len(attempt))  # the columns added since (case_id, ...)
    slot = (run_id, experiment, eval_id, ordinal, attempt_id, "origin", "new", "any")
    return attempt, results, slot


def build(path: Path, attempts: int, per_attempt: int, *, finish: bool = True, recorded: bool = False) -> str:
    """Create the schema through Store, then bulk-insert the rows on one raw connection and
    finish the run (`finish_run`; `finish=False` leaves that to the caller, e.g. to time it)."""
    Store.open(path).close()
    import sqlite3

    run_id = new_id()
    rng = random.Random(7)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous = OFF")
    with conn:
        conn.execute(
            "INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code, "
            "config_file, experiments, planned_total) "
            "VALUES (?, ?, NULL, 'running', '[\"run\"]', 'bench', NULL, NULL, ?, ?)",
            (run_id, "2025-01-01T00:00:00.000Z", '["' + '","'.join(EXPERIMENTS) + '"]', attempts),
        )
    rows = _attempt_rows(run_id, attempts, per_attempt, rng, recorded)
    while True:
        batch = list(itertools.islice(rows, BATCH))
        if not batch:
            break
        with conn:
            conn.executemany(INSERT_ATTEMPT, (a for a, _, _ in batch))
            conn.executemany(INSERT_ASSERTION, (r for _, rs, _ in batch for r in rs))
            conn.executemany(INSERT_SLOT, (s for _, _, s in batch))
    conn.close()  # no ANALYZE: a real store has no planner statistics either
    if finish:
        finish_run(path, run_id)
    return run_id


def finish_run(path: Path, run_id: str) -> None:
    """Finish the run as the runner does (`Store.finish_run`: its status, and its unit folds
    stored in the same transaction), last: a finished run's slots are immutable."""
    with Store.open(path) as store:
        store.finish_run(run_id, status=RunStatus.FINISHED, ended_at="2025-01-01T01:00:00.000Z", exit_code=1)


def timed(args: list[str], cwd: Path) -> tuple[float, int, str]:
    """Wall-clock seconds of one CLI invocation in a fresh interpreter (what a user waits for)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "niceeval_cli.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
    return elapsed, len(done.stdout.splitlines()), done.stdout


def main(attempts: int = 100_000, per_attempt: int = 10, keep: Path | None = None,
         recorded: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        store = folder / "results.db"
        if store.exists():
            store.unlink()
        started = time.perf_counter()
        build(store, attempts, per_attempt, recorded=recorded)
        print(f"built {attempts:,} attempts x {per_attempt} results in {time.perf_counter() - started:.1f}s "
              f"({store.stat().st_size / 1e6:.0f} MB)")
        figures: dict[str, float] = {}
        cases = {
            "view (default page)": ["view", "--store", str(store)],
            "query --state failed --limit 50": [
                "query", "--store", str(store), "--state", "failed", "--limit", "50", "--format", "ndjson",
            ],
            "query attempts --state failed --limit 50": [
                "query", "attempts", "--store", str(store), "--state", "failed", "--limit", "50",
                "--format", "ndjson",
            ],
            "python -c pass (interpreter start-up, for reference)": [],
        }
        for name, args in cases.items():
            if not args:
                began = time.perf_counter()
                subprocess.run([sys.executable, "-c", "pass"], check=True)
                figures[name] = time.perf_counter() - began
                print(f"{name:<48} {figures[name]:.3f}s")
                continue
            best = min(timed(args, folder)[0] for _ in range(3))
            _, lines, _ = timed(args, folder)
            figures[name] = best
            verdict = "ok" if best < 1.0 else "OVER 1 s"
            print(f"{name:<48} {best:.3f}s  ({lines} lines)  {verdict}")
        return figures


if __name__ == "__main__":
    argv = sys.argv[1:]
    recorded_unavailable = "--recorded-unavailable" in argv
    argv = [a for a in argv if a != "--recorded-unavailable"]
    keep_dir: Path | None = None
    if "--keep" in argv:
        i = argv.index("--keep")
        keep_dir = Path(argv[i + 1])
        del argv[i:i + 2]
    sizes = [int(a) for a in argv[:2]] + [100_000, 10][len(argv[:2]):]
    main(sizes[0], sizes[1], keep=keep_dir, recorded=recorded_unavailable)
