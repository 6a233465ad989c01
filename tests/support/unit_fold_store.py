"""A seeded store of two runs with every shape of unit `compare` meets, built straight in SQL.

For holding the store's SQL folds (`Store.unit_folds`) to the Python fold of the attempts
(`_unit_folds.unit_fold`): pass- and score-style units, cases, attempts with and without an
identity, pass rules, every attempt state and gate, scores with and without a maximum, units
that score alike in every attempt and units that do not, results whose keys are alike in every
attempt and results that are not (a key missing from an attempt, registered twice, one result
stored twice at its ordinal, an attempt without results), units on
one side only, and slots of the second run that reuse the first run's attempts. `mixed=True`
adds a unit whose attempts differ in identity, which the store does not fold (the caller
compares attempts).

`finish` says how each run ends: "sql" sets its status by hand (a run finished before schema
10: no stored unit folds), "store" through `Store.finish_run` (the runner's finalisation, which
stores them), "running" leaves the second run running (owned by `owner_pid` on this host, when
given: a process that is gone makes it an abandoned run).
"""

from __future__ import annotations

import itertools
import random
import socket
import sqlite3
from pathlib import Path

from niceeval_cli._ids import new_id
from niceeval_cli._states import RunStatus
from niceeval_cli.store import Store
from niceeval_cli.store.schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, INSERT_ASSERTION, INSERT_ATTEMPT, INSERT_SLOT

ASSERTION_STATES = ("matched",) * 6 + ("mismatched", "measured", "met", "below", "unavailable", "errored")
_counter = itertools.count()


def _id(prefix: str) -> str:
    return f"{prefix}{next(_counter):020d}"


def _attempt(run_id: str, experiment: str, eval_id: str, ordinal: int, kind: str, case_id: str | None,
             identity: tuple[str, str] | None, rng: random.Random,
             fixed: tuple[float | None, float | None] | None = None) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(ATTEMPT_COLUMNS)
    if kind == "pass":
        state = rng.choice(("passed", "passed", "passed", "failed", "errored"))
        gate = score = max_score = None
    else:
        state = rng.choice(("scored", "scored", "scored", "unrankable", "errored"))
        gate = rng.choice((None, "passed", "passed", "failed", "unavailable", "none"))
        max_score = rng.choice((None, 0.0, 10.0, 10.0, 3.0))
        score = None if rng.random() < 0.15 else round(rng.uniform(0, 12), rng.choice((0, 1, 3)))
        if fixed is not None:  # the unit scores alike in every attempt that has a score
            score, max_score = (None if score is None else fixed[0]), fixed[1]
        if state == "scored" and score is None:  # NiceEval never stores one (merge refuses it): no score,
            state = "unrankable"  # not ranked — the shape a run writes when a score cannot be had
    row.update(
        id=_id("A"), run_id=run_id, experiment_id=experiment, eval_id=eval_id, ordinal=ordinal, kind=kind,
        state=state, score=score, max_score=max_score, gate=gate, fingerprint="f" * 64, fingerprint_parts="{}",
        started_at="2025-01-01T00:00:00.000Z", ended_at="2025-01-01T00:00:01.000Z", duration_ms=5.0, judge_tokens=0,
        case_id=case_id, eval_module=identity[0] if identity else None, eval_name=identity[1] if identity else None,
    )
    return row


def _results(attempt_id: str, keys: list[str], shape: str, rng: random.Random) -> list[tuple[object, ...]]:
    chosen = list(keys)
    if shape == "ragged" and chosen and rng.random() < 0.5:
        chosen.pop(rng.randrange(len(chosen)))  # a key this attempt did not reach
    if shape == "twice" and chosen and rng.random() < 0.5:
        chosen.insert(rng.randrange(len(chosen) + 1), rng.choice(chosen))  # one key registered twice
    if shape == "none" or (shape == "ragged" and rng.random() < 0.1):
        chosen = []
    numbered = list(enumerate(chosen))
    if shape == "same-ordinal" and len(numbered) > 1 and rng.random() < 0.5:
        numbered[-1] = numbered[0]  # the first result twice, at its ordinal; the last one missing
    rows = []
    for ordinal, key in numbered:
        row = dict.fromkeys(ASSERTION_COLUMNS)
        row.update(id=_id("R"), attempt_id=attempt_id, ordinal=ordinal, key=key, label=key, role="gate",
                   state=rng.choice(ASSERTION_STATES), match_name="equals", match_config="{}", or_stop=0,
                   match_kind="boolean")
        rows.append(tuple(row[c] for c in ASSERTION_COLUMNS))
    return rows


def build(path: Path, *, seed: int, units: int = 40, mixed: bool = False, finish: str = "sql",
          owner_pid: int | None = None) -> tuple[str, str]:
    """Two runs (base, new) in a new store at `path`, finished as `finish` says; their ids."""
    Store.open(path).close()
    rng = random.Random(seed)
    base_id, new_id_ = new_id(), new_id()
    specs = []
    for u in range(units):
        experiment = rng.choice(("exp/a", "exp/b", "exp/c"))
        kind = rng.choice(("pass", "score"))
        name = f"eval_{u:03d}"
        case_id = rng.choice((None, None, f"c{u}", f"c,{u} x"))
        eval_id = f"mod{u % 4}/{name}" + (f"[{case_id}]" if case_id else "")
        identity = None if rng.random() < 0.25 else (f"mod{u % 4}", name)
        rule = rng.choice((None, "any", "all", "0.5", "0.8"))
        keys = [f"k{j}" + rng.choice(("", ",x", " y")) for j in range(rng.randrange(0, 5))]
        shape = rng.choice(("regular", "regular", "regular", "ragged", "twice", "same-ordinal", "none"))
        sides = rng.choice(("both", "both", "both", "both", "base", "new"))
        fixed = rng.choice((None, None, (7.0, 10.0), (0.0, 10.0), (12.5, 10.0), (3.0, 0.0), (4.0, None)))
        specs.append((experiment, eval_id, kind, case_id, identity, rule, keys, shape, sides, fixed))
    conn = sqlite3.connect(path)
    base_attempts: dict[tuple[str, str, int], str] = {}
    for run_id, side in ((base_id, "base"), (new_id_, "new")):
        with conn:
            conn.execute(
                "INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code, config_file, "
                "experiments, owner_pid, owner_host) VALUES (?, ?, NULL, 'running', '[\"run\"]', 'test', NULL, NULL, "
                "'[]', ?, ?)",
                (run_id, "2025-01-01T00:00:00.000Z", owner_pid, socket.gethostname() if owner_pid else None),
            )
            for u, (experiment, eval_id, kind, case_id, identity, rule, keys, shape, sides, fixed) in enumerate(specs):
                if sides not in ("both", side):
                    continue
                for ordinal in range(rng.randrange(1, 6)):
                    reused = side == "new" and (experiment, eval_id, ordinal) in base_attempts and rng.random() < 0.3
                    if reused:
                        conn.execute(INSERT_SLOT, (run_id, experiment, eval_id, ordinal,
                                                   base_attempts[(experiment, eval_id, ordinal)], "reference",
                                                   "reused", rule))
                        continue
                    mine = identity
                    if mixed and u == 0 and ordinal == 1:
                        mine = None if identity else ("elsewhere", "other")  # identities differ within the unit
                    attempt = _attempt(run_id, experiment, eval_id, ordinal, kind, case_id, mine, rng, fixed)
                    conn.execute(INSERT_ATTEMPT, tuple(attempt[c] for c in ATTEMPT_COLUMNS))
                    conn.executemany(INSERT_ASSERTION, _results(str(attempt["id"]), keys, shape, rng))
                    conn.execute(INSERT_SLOT, (run_id, experiment, eval_id, ordinal, attempt["id"], "origin", "new",
                                               rule))
                    if side == "base":
                        base_attempts[(experiment, eval_id, ordinal)] = str(attempt["id"])
        if finish == "sql":
            with conn:
                conn.execute("UPDATE runs SET status = 'finished', ended_at = ?, exit_code = 1 WHERE id = ?",
                             ("2025-01-01T01:00:00.000Z", run_id))
        elif finish == "store" or side == "base":
            with Store.open(path) as store:
                store.finish_run(run_id, status=RunStatus.FINISHED, ended_at="2025-01-01T01:00:00.000Z", exit_code=1)
    conn.close()
    return base_id, new_id_
