"""`niceeval judge agreement` over 100 000 labelled judge results (issue 26, item 9).

Run: python benchmarks/judge_agreement.py [--results N] [--identities K] [--repeat R] [--sources S]

Builds one store (directly, in SQL, through the store's own schema and triggers): one run of N
attempts, each with one closed_qa judge result (a thresholded one in every other attempt, a
factuality one in every fifth), one human label on each and a superseded earlier label on every
tenth; K judge identities (criteria). Times the real CLI, `niceeval judge agreement --format
json` (interpreter start-up included), R times: the first invocation after the build, the median
and the best. Target: ≤ 1 s for N = 100 000. `--sources S`: each attempt's fingerprint parts name
S project files (a real project's eval imports tens of modules: its parts are kilobytes);
`--distinct-parts`: each attempt's parts name its own eval id, as in a real store.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # runnable from a checkout, uninstalled

from niceeval_cli._ids import new_id  # noqa: E402
from niceeval_cli.store import Store  # noqa: E402
from niceeval_cli.store.schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, LABEL_COLUMNS  # noqa: E402

CHOICES = {"closed_qa": {"N": 0.0, "Y": 1.0}, "factuality": {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}}
FIELD = {"closed_qa": "question", "factuality": "reference"}


def _fingerprint_parts(model: str, sources: int = 1, eval_id: str = "bench/judged") -> str:
    """As large as a real attempt's (the adapter, options, sources, judge settings)."""
    before, between, after = _parts_template(sources)
    return before + json.dumps(eval_id) + between + json.dumps(model) + after


@functools.cache
def _parts_template(sources: int) -> tuple[str, str, str]:
    """The parts' JSON around its eval id and judge model, written once per source count: the
    build makes one per attempt (tens of thousands), and serialising the whole document each
    time was most of a build's CPU."""
    files = {"evals/bench.py": "61c8a56d01a8a614c7c1637a9eb62b84833f14665e23a24a5117499123a1a515"}
    files.update({f"evals/lib/module_{i:03d}.py": f"{i:064x}" for i in range(1, sources)})
    text = json.dumps({
        "adapter": {"name": "python", "version": None}, "eval_id": _EVAL_MARK, "eval_kind": "pass",
        "eval_options": {"judge": True, "tags": []}, "experiment_id": "default",
        "judge": {"api_key_env": "OPENAI_API_KEY", "base_url": "https://api.openai.com/v1", "max_retries": 3,
                  "model": _MODEL_MARK, "timeout_ms": 180000},
        "judge_version": "prompt-1/scale-1", "model": None, "options": {}, "ordinal": 0,
        "source": files,
        "sut": {},
    }, separators=(",", ":"), sort_keys=True)
    before, _, rest = text.partition(json.dumps(_EVAL_MARK))
    between, _, after = rest.partition(json.dumps(_MODEL_MARK))
    return before, between, after


_EVAL_MARK, _MODEL_MARK = "\x00eval_id\x00", "\x00model\x00"


def build(path: Path, results: int, identities: int, sources: int = 1, distinct_parts: bool = False,
          regrade: bool = False) -> tuple[str, str | None]:
    """The store: N attempts, each one judge result and its labels (see the module docstring).
    `distinct_parts`: each attempt's parts name its own eval, as a real store's do (SQLite's JSON
    functions keep the last few documents parsed, so two shared texts are parsed twice in all).
    `regrade`: also a regrade run of it (judge-r, one attempt per original, `regraded_from` set,
    every fifth decision changed). Returns the run's id and the regrade's (None without)."""
    rng = random.Random(26)
    Store.open(path).close()
    run_id = new_id()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = OFF")  # bulk rows: the journal was 40 % of the build's CPU and half its writes
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code) "
                 "VALUES (?, '2026-01-01T00:00:00.000Z', '2026-01-01T01:00:00.000Z', 'running', '[]', 'bench', 0)",
                 [run_id])
    parts = {m: _fingerprint_parts(m, sources) for m in ("judge-a", "judge-b")}
    attempts, assertions, slots, labels = [], [], [], []
    for i in range(results):
        attempt_id = new_id()
        factory = "factuality" if i % 5 == 0 else "closed_qa"
        criterion = f"Criterion number {i % identities}: does the answer do what the user asked, politely?"
        config = json.dumps({FIELD[factory]: criterion, "choices": CHOICES[factory], "max_audit_bytes": 1048576,
                             "max_material_bytes": 262144, "scale_version": "1"}, sort_keys=True)
        value = rng.choice(sorted(set(CHOICES[factory].values())))
        threshold = 1.0 if (factory == "closed_qa" and i % 2) else None
        row_a = dict.fromkeys(ATTEMPT_COLUMNS)
        row_a.update(id=attempt_id, run_id=run_id, experiment_id="default", eval_id=f"bench/e{i}", ordinal=0,
                     kind="pass", state="passed", fingerprint="f" * 64,
                     fingerprint_parts=(_fingerprint_parts(f"judge-{'ab'[i % 2]}", sources, f"bench/e{i}")
                                        if distinct_parts else parts[f"judge-{'ab'[i % 2]}"]),
                     started_at="2026-01-01T00:00:00.000Z", ended_at="2026-01-01T00:00:01.000Z", duration_ms=1.0,
                     judge_tokens=120)
        attempts.append(tuple(row_a.values()))
        row_r = dict.fromkeys(ASSERTION_COLUMNS)
        row_r.update(id=new_id(), attempt_id=attempt_id, ordinal=0, key="judged", role="gate", state="measured",
                     measurement=value if rng.random() < 0.8 else 1.0 - value, threshold=threshold,
                     match_name=factory, match_config=config, or_stop=0, match_kind="score", judge_tokens=120)
        assertions.append(tuple(row_r.values()))
        slots.append((run_id, "default", f"bench/e{i}", 0, attempt_id, "origin", "new", "any"))
        if i % 10 == 0:  # an earlier label the author corrected
            labels.append((new_id(), attempt_id, "judged", 1.0 - value, "ada", None, "2026-01-02T00:00:00.000Z"))
        labels.append((new_id(), attempt_id, "judged", value, "ada", None, "2026-01-03T00:00:00.000Z"))

    def insert(table: str, columns: object, rows: list[tuple[object, ...]]) -> None:
        names = list(columns)  # type: ignore[call-overload]
        conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", rows)

    regrade_id = _regrade_rows(conn, run_id, attempts, assertions, slots, sources) if regrade else None
    insert("attempts", ATTEMPT_COLUMNS, attempts)
    insert("assertion_results", ASSERTION_COLUMNS, assertions)
    insert("run_slots", ("run_id", "experiment_id", "eval_id", "ordinal", "attempt_id", "relation", "plan_reason",
                         "pass_rule"), slots)
    insert("labels", LABEL_COLUMNS, labels)
    conn.execute("UPDATE runs SET status = 'finished' WHERE id IN (?, ?)", [run_id, regrade_id])
    conn.execute("COMMIT")
    conn.execute("PRAGMA journal_mode = WAL")  # as NiceEval keeps its stores
    conn.close()
    return run_id, regrade_id


def _regrade_rows(conn: sqlite3.Connection, run_id: str, attempts: list[tuple[object, ...]],
                  assertions: list[tuple[object, ...]], slots: list[tuple[object, ...]], sources: int) -> str:
    """A regrade run of `run_id` (its row inserted here), its attempts, results and slots appended
    to the lists: each original's result decided again by judge-r, every fifth one differently."""
    rng = random.Random(27)
    regrade_id = new_id()
    conn.execute("INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code, kind, "
                 "regrade_of) VALUES (?, '2026-01-04T00:00:00.000Z', '2026-01-04T01:00:00.000Z', 'running', '[]', "
                 "'bench', 0, 'regrade', ?)", [regrade_id, run_id])
    a_columns, r_columns = list(ATTEMPT_COLUMNS), list(ASSERTION_COLUMNS)
    originals = {row[0]: row for row in attempts}
    for result in list(assertions):
        original = dict(zip(a_columns, originals[result[1]], strict=True))
        row_a = original | {"id": new_id(), "run_id": regrade_id, "regraded_from": original["id"],
                            "fingerprint_parts": _fingerprint_parts("judge-r", sources, original["eval_id"])}
        attempts.append(tuple(row_a.values()))
        row_r = dict(zip(r_columns, result, strict=True))
        measured = row_r["measurement"]
        row_r.update(id=new_id(), attempt_id=row_a["id"],
                     measurement=(1.0 - measured) if rng.random() < 0.2 else measured)
        assertions.append(tuple(row_r.values()))
        slots.append((regrade_id, "default", original["eval_id"], 0, row_a["id"], "origin", "new", "any"))
    return regrade_id


def timed(store: Path, *extra: str) -> tuple[float, float, str]:
    """Wall time and the command's own CPU time (user + system: what it costs on a busy machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "judge", "agreement", "--store", str(store),
                           "--format", "json", *extra], capture_output=True, text=True, cwd=HERE.parent,
                          env={**os.environ, "NO_COLOR": "1"})  # cwd: `-m` imports this checkout's package
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"judge agreement exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--identities", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sources", type=int, default=1, help="Project files in each attempt's fingerprint parts.")
    parser.add_argument("--distinct-parts", action="store_true",
                        help="Each attempt's fingerprint parts name its own eval (as in a real store).")
    parser.add_argument("--between", action="store_true",
                        help="Also a regrade run of the run; time `judge agreement --between RUN REGRADE`.")
    parser.add_argument("--store", type=Path, help="Reuse (or build once into) this store file.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="niceeval-agreement-") as tmp:
        store = args.store or Path(tmp) / "results.db"
        started = time.perf_counter()
        if not store.exists():
            build(store, args.results, args.identities, args.sources, args.distinct_parts, args.between)
        print(f"store of {args.results} labelled judge results ({args.identities} criteria × 2 models × "
              f"2 factories) in {time.perf_counter() - started:.1f} s")
        extra: list[str] = []
        if args.between:
            with sqlite3.connect(store) as conn:
                regrade = conn.execute("SELECT regrade_of, id FROM runs WHERE kind = 'regrade'").fetchone()
            if regrade is None:
                raise SystemExit(f"{store} has no regrade run: build it with --between")
            extra = ["--between", *regrade]
        # Bytecode first, as an installed package has it (PYTHONDONTWRITEBYTECODE would leave every
        # invocation compiling the modules changed since the last compile).
        compileall.compile_dir(str(HERE.parent / "niceeval_cli"), quiet=1)
        times, cpu, out = [], [], ""
        for _ in range(args.repeat):
            elapsed, used, out = timed(store, *extra)
            times.append(elapsed)
            cpu.append(used)
        rows = json.loads(out)
        counted = sum(r["pairs" if extra else "labels"] for r in rows)
        load = os.getloadavg()[0]
        command = "judge agreement --between" if extra else "judge agreement"
        print(f"{command}: {len(rows)} identities, {counted} pairs; wall first {times[0]:.3f} s, "
              f"median {statistics.median(times):.3f} s, best {min(times):.3f} s; CPU first {cpu[0]:.3f} s, median "
              f"{statistics.median(cpu):.3f} s, best {min(cpu):.3f} s, of {args.repeat} "
              f"(wall: {', '.join(f'{t:.3f}' for t in times)}); target ≤ 1 s; load average {load:.1f} on "
              f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
