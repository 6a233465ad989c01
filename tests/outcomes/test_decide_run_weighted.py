"""`decide_run(rows, counts=...)`: a row standing for n attempts decides exactly as n copies of it.

The store hands the run decision grouped rows (`OutcomeGroup.total`); expanding them into copies
was the cost of reading a shard group. Exhaustive over the stored states, gates, kinds and pass
rules (valid and not: a row the fold refuses must be refused the same way, weighted or not).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from niceeval_cli._states import AttemptState, EvalKind, GateState
from niceeval_cli.outcomes import OutcomeRow, RunDecision, decide_run


@dataclass(frozen=True)
class Row:
    eval_id: str
    state: str
    kind: str = "pass"
    gate: str | None = None
    pass_rule: str | None = "all"
    experiment_id: str = "default"
    case_id: str | None = None
    score: float | None = 0.5
    max_score: float | None = 1.0
    unavailable_weight: float | None = None
    partial_score: float | None = None


RULES = ("any", "all", "0.5", "0.75", None)
GATES = (None, *(g.value for g in GateState))
STATES = tuple(s.value for s in AttemptState)

# Every kind × state × gate × rule a sealed row can carry, and the ones a fold refuses
# (a pass-style row in a score state, a scored row without a score, ...).
UNIVERSE = [Row("e", s, "pass", None, rule) for s in STATES for rule in RULES] + [
    Row("e", s, "score", gate, None, score=None if s == "errored" else 0.5) for s in STATES for gate in GATES
] + [Row("e", "scored", "score", "none", None, score=None)]
assert {r.kind for r in UNIVERSE} == {k.value for k in EvalKind}

FLAGS: tuple[dict[str, Any], ...] = (
    {"planned": None, "setup_error": False, "interrupted": False},
    {"planned": 4, "setup_error": False, "interrupted": False},
    {"planned": 4, "setup_error": False, "interrupted": False, "budget_exhausted": True},
    {"planned": 1, "setup_error": True, "interrupted": False},
    {"planned": None, "setup_error": False, "interrupted": True},
)


def _outcome(rows: Sequence[Row], counts: Sequence[int] | None, flags: dict[str, Any]) -> RunDecision | str:
    typed: list[OutcomeRow] = list(rows)
    try:
        return decide_run(typed, counts=counts, **flags)
    except ValueError as error:
        return f"ValueError: {error}"


def _expanded(rows: Sequence[Row], counts: Sequence[int]) -> list[Row]:
    return [row for row, n in zip(rows, counts, strict=True) for _ in range(n)]


def _same(weighted: RunDecision | str, expanded: RunDecision | str) -> None:
    assert weighted == expanded
    if isinstance(weighted, RunDecision) and isinstance(expanded, RunDecision):
        assert list(weighted.counts.items()) == list(expanded.counts.items())  # the order output shows


@pytest.mark.parametrize("row", UNIVERSE, ids=lambda r: f"{r.kind}-{r.state}-{r.gate}-{r.pass_rule}-{r.score}")
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_one_row_of_count_n_is_n_copies(row: Row, n: int) -> None:
    for flags in FLAGS:
        _same(_outcome([row], [n], flags), _outcome([row] * n, None, flags))


def test_every_pair_of_rows_of_one_eval_with_every_small_count_is_its_copies() -> None:
    checked = 0
    for a, b in itertools.product(UNIVERSE, repeat=2):
        for counts in itertools.product(range(3), repeat=2):
            for flags in FLAGS[:3]:
                _same(_outcome([a, b], counts, flags), _outcome(_expanded([a, b], counts), None, flags))
                checked += 1
    assert checked == len(UNIVERSE) ** 2 * 9 * 3


def test_rows_of_several_evals_cases_and_experiments_interleaved() -> None:
    rows = [
        Row("a", "passed", pass_rule="any"), Row("b", "scored", "score", "failed", None),
        Row("a", "failed", pass_rule="any"), Row("a", "passed", case_id="c1"),
        Row("b", "unrankable", "score", "unavailable", None), Row("a", "errored", experiment_id="x"),
        Row("c", "errored", "score", "passed", None, score=None), Row("a", "passed", pass_rule="0.5"),
    ]
    counts = [3, 2, 5, 1, 4, 2, 1, 0]
    for flags in FLAGS:
        _same(_outcome(rows, counts, flags), _outcome(_expanded(rows, counts), None, flags))
    decision = decide_run(rows, counts=counts, planned=None, setup_error=False, interrupted=False)
    assert decision.attempts == sum(counts)
    assert decision.counts == {"passed": 4, "scored": 2, "gate-failed": 2, "failed": 5, "unrankable": 4,
                               "errored": 3}
    a = next(e for e in decision.evals if (e.eval_id, e.case_id, e.experiment_id) == ("a", None, "default"))
    assert (a.result, a.attempts, a.passed, a.failed, a.pass_rule) == (AttemptState.PASSED, 8, 3, 5, "any")


def test_counts_must_match_the_rows_and_cannot_be_negative() -> None:
    flags = FLAGS[0]
    with pytest.raises(ValueError):
        decide_run([Row("a", "passed")], counts=[1, 2], **flags)
    with pytest.raises(ValueError, match="cannot stand for -1 attempts"):
        decide_run([Row("a", "passed")], counts=[-1], **flags)


def test_without_per_eval_detail_everything_else_is_decided_the_same() -> None:
    """`per_eval=False` (the runner's): `evals` empty, every other field as with the detail."""
    checked = 0
    for a, b in itertools.product(UNIVERSE, repeat=2):
        for counts in ((1, 2), (0, 3)):
            full, bare = (_outcome_with(a, b, counts, per_eval) for per_eval in (True, False))
            if isinstance(full, RunDecision):
                assert isinstance(bare, RunDecision) and bare.evals == ()
                assert dataclasses.replace(bare, evals=full.evals) == full
                checked += 1
            else:
                assert bare == full  # refused the same way
    assert checked > len(UNIVERSE)


def _outcome_with(a: Row, b: Row, counts: Sequence[int], per_eval: bool) -> RunDecision | str:
    try:
        return decide_run([a, b], counts=counts, per_eval=per_eval, **FLAGS[1])
    except ValueError as error:
        return f"ValueError: {error}"
