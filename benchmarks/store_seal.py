"""How fast the store seals attempts: 2000 attempts x 10 assertion results, one transaction each.

Run: python benchmarks/store_seal.py [ATTEMPTS] [RESULTS_PER_ATTEMPT]
Target (runner throughput never waits on the store): >= 2000 sealed attempts/s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a checkout, uninstalled

from niceeval_cli._ids import new_id, utc_now_iso
from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli._states import AssertionState, AttemptState, EvalKind, PlanReason, Relation, Role
from niceeval_cli.store import SlotRecord, Store


def _attempt(run_id: str, ordinal: int) -> AttemptRecord:
    now = utc_now_iso()
    return AttemptRecord(
        id=new_id(), run_id=run_id, experiment_id="bench", eval_id=f"evals/case_{ordinal:05d}", ordinal=0,
        kind=EvalKind.PASS, state=AttemptState.PASSED, reason=None, score=None, max_score=None,
        unavailable_weight=None, partial_score=None, gate=None, stop_cause=None, error=None,
        fingerprint="f" * 64, fingerprint_parts='{"model":"m"}', started_at=now, ended_at=now,
        duration_ms=12.5, input_tokens=100, output_tokens=50, judge_tokens=0,
    )


def _results(attempt_id: str, count: int) -> list[AssertionResult]:
    return [
        AssertionResult(
            id=new_id(), attempt_id=attempt_id, ordinal=i, key=f"check-{i}", label=f"check {i}",
            group_name=None, role=Role.GATE, weight=None, contribution=None, state=AssertionState.MATCHED,
            measurement=None, threshold=None, reason=None, explanation=None, match_name="equals",
            match_config='{"expected":"ok"}', evidence='{"actual":"ok"}', source_file="evals/x.py",
            source_line=10 + i, or_stop=False, match_kind="boolean",
        )
        for i in range(count)
    ]


def main(attempts: int = 2000, per_attempt: int = 10) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "results.db")
        run_id = new_id()
        store.begin_run(run_id, started_at=utc_now_iso(), argv=["run"], version="bench",
                        config_file=None, experiments=["bench"])
        work = []
        for n in range(attempts):
            attempt = _attempt(run_id, n)
            slot = SlotRecord(run_id, attempt.experiment_id, attempt.eval_id, 0, attempt.id,
                              Relation.ORIGIN, PlanReason.NEW)
            work.append((attempt, _results(attempt.id, per_attempt), slot))
        started = time.perf_counter()
        for attempt, results, slot in work:
            store.seal_attempt(attempt, results, slot)
        elapsed = time.perf_counter() - started
        store.close()
    rate = attempts / elapsed
    print(f"sealed {attempts} attempts x {per_attempt} results in {elapsed:.3f}s: {rate:,.0f} attempts/s")
    return rate


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
