"""Issue 25, item 8, from the outside: `compare A B` folds each run's units in the store.

Comparing two runs of 100 000 attempts must take ≤ 1.5 s (benchmarks/stats.py measures it), so
`compare BASE NEW` no longer reads every attempt and assertion result: the store adds each
unit's attempts up in SQL. What a user sees must not change. On seeded stores holding every
shape of unit (tests/support/unit_fold_store.py: pass and score styles, cases, units without an
identity, ragged and repeated assertion keys, reused attempts, units on one side only), the
real `niceeval compare` prints, in every format and with both gates, exactly what comparing the
attempts themselves gives.
"""

from __future__ import annotations

import io
import json

import pytest

from niceeval_cli.app.compare import FailOn, attempt_facts, gate
from niceeval_cli.comparison import PairClass, compare
from niceeval_cli.reports.compare_output import write_comparison
from niceeval_cli.reports.data import CompareResult
from niceeval_cli.store import Store
from tests.support import unit_fold_store
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project



def _from_attempts(proj: Project, base: str, new: str) -> CompareResult:
    with Store.open(proj.store, readonly=True) as store:
        base_run, new_run = store.resolve_run(base), store.resolve_run(new)
        return CompareResult(base_run, new_run, compare(attempt_facts(store, base_run), attempt_facts(store, new_run)))


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_compare_prints_what_comparing_the_attempts_gives(proj: Project, seed: int) -> None:
    proj.store.parent.mkdir(parents=True)
    base, new = unit_fold_store.build(proj.store, seed=seed, units=60)
    expected = _from_attempts(proj, base, new)
    assert any(p.changed_keys for p in expected.comparison.pairs)
    for fmt in ("json", "ndjson", "csv"):
        shown = proj.cli("compare", base, new, "--format", fmt)
        assert shown.returncode == 0, shown.stderr
        out = io.StringIO()
        write_comparison(out, expected, fmt)
        assert shown.stdout == out.getvalue(), fmt
    rows = json.loads(proj.cli("compare", base, new, "--format", "json").stdout)
    assert len(rows["pairs"]) == len(expected.comparison.pairs) > 40
    for fail_on in (FailOn(significant_regression=True), FailOn((PairClass.REGRESSED,))):
        flag = "significant-regression" if fail_on.significant_regression else "regressed"
        gated = proj.cli("compare", base, new, "--fail-on", flag)
        assert gated.returncode == gate(expected, fail_on).code, (flag, gated.stdout, gated.stderr)


def test_a_unit_the_store_cannot_fold_is_compared_from_its_attempts(proj: Project) -> None:
    """A unit whose attempts differ in identity is not told by counts: the attempts are read."""
    proj.store.parent.mkdir(parents=True)
    base, new = unit_fold_store.build(proj.store, seed=3, mixed=True)
    expected = _from_attempts(proj, base, new)
    shown = proj.cli("compare", base, new, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    out = io.StringIO()
    write_comparison(out, expected, "json")
    assert shown.stdout == out.getvalue()
