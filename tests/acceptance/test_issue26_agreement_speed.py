"""Issue 26 item 9: `judge agreement --between RUN REGRADE` costs about what counting as many
labels does, whatever an attempt's fingerprint parts weigh.

The other half of item 9 (counting labels costs about one read of its pairs: the pairs' subquery
stays a co-routine so SQLite's GROUP BY sorter does not carry fingerprint parts) is measured by
`benchmarks/judge_agreement.py`, not here: on SQLite 3.40 the two query shapes differ by less than
a shared box's noise (1.45 × against 1.85 × the floor, old against new, measured alone), so a CPU
ceiling here could not tell them apart and failed CI once at 2.23 × (benchmarks/README.md).
Measured in the same process (CPU time, the best of five: the machine is shared), on a store
built as `benchmarks/judge_agreement.py` builds its own, with real-sized parts that differ per
attempt as a real store's do."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from niceeval_cli.app.agreement import judge_agreement


def _benchmark() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "judge_agreement.py"
    spec = importlib.util.spec_from_file_location("bench_judge_agreement", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cpu_best(work: Callable[[], object], times: int = 5) -> float:
    """The least CPU time of `times` runs: what the work itself costs. A median of three still
    carried the whole suite's load beside it (CI: 2.36 × once, against ≈ 1.5 × alone)."""
    spent = []
    for _ in range(times):
        started = time.process_time()
        work()
        spent.append(time.process_time() - started)
    return min(spent)


@pytest.mark.slow
def test_between_a_run_and_its_regrade_costs_about_what_counting_labels_does(tmp_path: Path) -> None:
    """`--between RUN REGRADE` pairs each regraded attempt with its original by index; it compared
    every attempt of one run with every attempt of the other (5 000 × 5 000: ≈ 20 s of CPU)."""
    store = tmp_path / "results.db"
    attempts = 5_000
    run_id, regrade_id = _benchmark().build(store, attempts, 10, sources=40, distinct_parts=True, regrade=True)
    assert regrade_id is not None

    figures = judge_agreement(store, between=(run_id, regrade_id))
    assert sum(f.figures.n + f.unmeasured for f in figures) == attempts  # each regraded result with its original
    assert {(f.judge.model, f.reference.model) for f in figures if f.reference} == {("judge-r", "judge-a"),
                                                                                   ("judge-r", "judge-b")}

    labels = _cpu_best(lambda: judge_agreement(store))  # the same number of pairs, against people
    between = _cpu_best(lambda: judge_agreement(store, between=(run_id, regrade_id)))
    assert between <= 4 * labels, (
        f"--between took {between:.3f} s CPU for {attempts} pairs, {between / labels:.1f} × counting as many "
        f"labels ({labels:.3f} s)")
