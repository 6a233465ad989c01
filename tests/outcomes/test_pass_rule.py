"""Folding several attempts of one eval under `pass_rule` (outcomes.md, "Several attempts")."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from niceeval_cli._states import AttemptState
from niceeval_cli.outcomes import EvalFold, PassRule, fold_pass_eval, parse_pass_rule, stored_pass_rule

P, F, E = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED


# ── parse_pass_rule ──────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("value", "rule"), [("any", "any"), ("all", "all"), (0.8, 0.8), (1, 1.0), (1.0, 1.0), (1e-9, 1e-9)]
)
def test_accepted_pass_rules(value: object, rule: PassRule) -> None:
    assert parse_pass_rule(value) == rule


def test_a_numeric_rule_is_a_float() -> None:
    assert type(parse_pass_rule(1)) is float


@pytest.mark.parametrize("value", [0, 0.0, -0.5, 1.0000001, 2, math.nan, math.inf, -math.inf])
def test_rates_outside_zero_to_one_are_rejected(value: float) -> None:
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        parse_pass_rule(value)


@pytest.mark.parametrize("value", ["ANY", "All", "pass@3", "", None, True, False, [0.8], {"rate": 0.8}])
def test_other_values_are_rejected_naming_the_allowed_ones(value: object) -> None:
    with pytest.raises(ValueError, match='"any", "all" or a number'):
        parse_pass_rule(value)


def test_a_quoted_number_gets_a_hint() -> None:
    with pytest.raises(ValueError, match="without quotes"):
        parse_pass_rule("0.8")


# ── fold_pass_eval ───────────────────────────────────────────────────────────────────────

FOLDS: list[tuple[list[AttemptState], PassRule, AttemptState]] = [
    # pass@N: one pass is enough
    ([P], "any", P),
    ([F, F, P], "any", P),
    ([E, P], "any", P),
    ([F, E], "any", F),
    ([E, E], "any", E),
    ([F], "any", F),
    # all: every attempt must pass; a failure outranks an error
    ([P, P, P], "all", P),
    ([P, P, F], "all", F),
    ([P, E], "all", E),
    ([P, E, F], "all", F),
    ([E], "all", E),
    # a minimum pass rate over decided attempts: errored ones are evidence neither way
    # (statistics.md's amendment to outcomes.md)
    ([P, P, P, P, F], 0.8, P),
    ([P, P, P, F, F], 0.8, F),
    ([P, P, P, E, E], 0.8, P),
    ([P, P, P, E, F], 0.8, F),
    ([P, P, P, E, F], 0.75, P),
    ([P, P, E, F, F], 0.5, P),
    ([P, E, F, F], 0.5, F),
    ([P, E], 0.5, P),
    ([P], 1.0, P),
    ([P, P, E], 1.0, P),
    ([P, F, E], 1.0, F),
    ([E, E], 0.5, E),
    ([E], 1.0, E),
]


@pytest.mark.parametrize(("states", "rule", "result"), FOLDS)
def test_fold_result(states: list[AttemptState], rule: PassRule, result: AttemptState) -> None:
    assert fold_pass_eval(states, rule).result is result


def test_fold_reports_counts_and_the_attempt_level_pass_rate() -> None:
    assert fold_pass_eval([P, F, E, P], "any") == EvalFold(
        result=P, passed=2, failed=1, errored=1, pass_rate=2 / 3
    )


def test_errored_attempts_are_not_counted_in_the_pass_rate() -> None:
    assert fold_pass_eval([P, E, E], "any").pass_rate == 1.0
    assert fold_pass_eval([P, F, E, E], 0.5).pass_rate == 0.5
    assert fold_pass_eval([E, E], 0.5).pass_rate is None


@pytest.mark.parametrize("rule", ["any", "all", 0.5, 1.0])
def test_no_attempts_decides_nothing(rule: PassRule) -> None:
    assert fold_pass_eval([], rule) == EvalFold(result=E, passed=0, failed=0, errored=0, pass_rate=None)


def _boundary_cases() -> list[tuple[int, int]]:
    return [(p, n) for n in range(1, 21) for p in range(1, n + 1)]


@pytest.mark.parametrize(("p", "n"), _boundary_cases())
def test_a_rate_exactly_at_the_rule_passes_and_one_fewer_pass_does_not(p: int, n: int) -> None:
    rule = p / n  # the float a user gets writing this rate as a decimal or a fraction
    exactly = [P] * p + [F] * (n - p)
    one_short = [P] * (p - 1) + [F] * (n - p + 1)
    assert fold_pass_eval(exactly, rule).result is P
    assert fold_pass_eval(one_short, rule).result is F


@pytest.mark.parametrize(
    ("rule", "p", "n"), [(0.8, 4, 5), (0.7, 7, 10), (0.3, 3, 10), (0.35, 7, 20), (0.9, 9, 10), (0.95, 19, 20)]
)
def test_decimal_rules_from_config_hit_their_boundary(rule: float, p: int, n: int) -> None:
    assert Fraction(p, n) == Fraction(str(rule))  # the case really sits on the boundary
    assert fold_pass_eval([P] * p + [F] * (n - p) + [E] * 2, rule).result is P
    assert fold_pass_eval([P] * (p - 1) + [F] * (n - p + 1) + [E] * 2, rule).result is F


def test_fold_accepts_stored_strings_and_validates_the_rule() -> None:
    assert fold_pass_eval(["passed", "failed"], "all").result is F
    with pytest.raises(ValueError):
        fold_pass_eval([P], 0)


@pytest.mark.parametrize("state", [AttemptState.SCORED, AttemptState.UNRANKABLE])
def test_score_style_states_cannot_be_folded_as_verdicts(state: AttemptState) -> None:
    with pytest.raises(ValueError, match="not a pass-style"):
        fold_pass_eval([P, state], "any")


# ── stored_pass_rule: a rule as run_slots hold it ───────────────────────────────────────


@pytest.mark.parametrize(("stored", "rule"), [("any", "any"), ("all", "all"), ("0.5", 0.5), ("1", 1.0), (0.8, 0.8)])
def test_a_stored_rule_reads_back_as_it_was_set(stored: str | float, rule: PassRule) -> None:
    assert stored_pass_rule(stored) == rule


def test_a_slot_without_a_stored_rule_folds_under_the_default_or_what_the_caller_says() -> None:
    assert stored_pass_rule(None) == "any"
    assert stored_pass_rule(None, "all") == "all"


@pytest.mark.parametrize("stored", ["some", "0", "1.5", "nan"])
def test_a_stored_rule_that_is_no_rule_is_refused(stored: str) -> None:
    with pytest.raises(ValueError, match="pass_rule"):
        stored_pass_rule(stored)
