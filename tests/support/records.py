"""Record builders: sealed attempts, assertion results and slots, and a store file to seal them in.

`make_attempt` / `make_result` / `origin_slot` build records with every field set (override any
with keyword arguments); `SealedStore` wraps a real store file and goes through the public Store
API only. Importable from a subprocess too (PYTHONPATH = the checkout): `from tests.support.records
import make_attempt`.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from niceeval_cli._ids import new_id
from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli._states import (
    AssertionState,
    AttemptState,
    EvalKind,
    GateState,
    PlanReason,
    Relation,
    Role,
    RunStatus,
)
from niceeval_cli.store import SlotRecord, Store

_clock = itertools.count(1)


def timestamp() -> str:
    """Strictly increasing ISO timestamps, so 'latest' is unambiguous in tests."""
    n = next(_clock)
    return f"2025-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"


def make_attempt(
    run_id: str, experiment_id: str = "exp", eval_id: str = "evals/a", **changes: Any
) -> AttemptRecord:
    state = changes.pop("state", AttemptState.PASSED)
    kind = EvalKind.SCORE if state in (AttemptState.SCORED, AttemptState.UNRANKABLE) else EvalKind.PASS
    ended = timestamp()
    record = AttemptRecord(
        id=new_id(), run_id=run_id, experiment_id=experiment_id, eval_id=eval_id, ordinal=0,
        kind=kind, state=state, reason=None, score=None, max_score=None, unavailable_weight=None,
        partial_score=None, gate=GateState.NONE if kind is EvalKind.SCORE else None, stop_cause=None,
        error=None, fingerprint="fp-1", fingerprint_parts='{"model": "m"}', started_at=ended,
        ended_at=ended, duration_ms=10.0, input_tokens=None, output_tokens=None, judge_tokens=0,
    )
    return replace(record, **changes)


def make_result(attempt: AttemptRecord, ordinal: int, state: AssertionState = AssertionState.MATCHED,
                **changes: Any) -> AssertionResult:
    record = AssertionResult(
        id=new_id(), attempt_id=attempt.id, ordinal=ordinal, key=f"k{ordinal}", label=f"check {ordinal}",
        group_name=None, role=Role.GATE, weight=None, contribution=None, state=state, measurement=None,
        threshold=None, reason=None, explanation=None, match_name="equals", match_config='{"expected": 1}',
        evidence='{"actual": 1}', source_file="evals/a.py", source_line=3, or_stop=False,
        match_kind="boolean",
    )
    return replace(record, **changes)


def origin_slot(attempt: AttemptRecord, reason: PlanReason = PlanReason.NEW) -> SlotRecord:
    return SlotRecord(attempt.run_id, attempt.experiment_id, attempt.eval_id, attempt.ordinal, attempt.id,
                      Relation.ORIGIN, reason)


@contextmanager
def bulk_rows(store: Path) -> Iterator[sqlite3.Connection]:
    """One transaction of a test's bulk rows (a run "sealed elsewhere") in a store NiceEval made.

    Without a journal or syncs: a failed build fails the test anyway, and the journal was half the
    build's CPU and twice its writes. The store is back in WAL mode, as NiceEval keeps it, once the
    rows are in."""
    con = sqlite3.connect(store)
    try:
        con.execute("PRAGMA journal_mode = OFF")
        con.execute("PRAGMA synchronous = OFF")
        with con:
            yield con
        con.execute("PRAGMA journal_mode = WAL")
    finally:
        con.close()


@dataclass
class SealedStore:
    """A store file plus shortcuts that go through the public Store API only."""

    path: Path
    store: Store
    opened: list[Store] = field(default_factory=list)

    def begin_run(self, experiments: Sequence[str] = ("exp",)) -> str:
        run_id = new_id()
        self.store.begin_run(run_id, started_at=timestamp(), argv=["niceeval", "run"], version="0.1.0",
                             config_file="niceeval.toml", experiments=list(experiments))
        return run_id

    def seal(self, attempt: AttemptRecord, states: Sequence[AssertionState] = (),
             results: Sequence[AssertionResult] | None = None) -> AttemptRecord:
        if results is None:
            results = [make_result(attempt, i, s) for i, s in enumerate(states)]
        self.store.seal_attempt(attempt, results, origin_slot(attempt))
        return attempt

    def finish(self, run_id: str, exit_code: int = 0) -> None:
        self.store.finish_run(run_id, status=RunStatus.FINISHED, ended_at=timestamp(), exit_code=exit_code)

    attempt = staticmethod(make_attempt)
    result = staticmethod(make_result)
    slot = staticmethod(origin_slot)
    timestamp = staticmethod(timestamp)

    def reader(self) -> Store:
        store = Store.open(self.path, readonly=True)
        self.opened.append(store)
        return store
