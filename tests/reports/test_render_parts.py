"""The pieces every reading surface shares: numbers, score text, measurements, safe text."""

from __future__ import annotations

from dataclasses import replace

import pytest

from niceeval_cli._states import CLEAN_STATES, AttemptState, GateState
from niceeval_cli.outcomes import is_clean
from niceeval_cli.reports._safe import visible
from niceeval_cli.reports._tally import attempt_word
from niceeval_cli.reports.viewmodels.attempt import measurement_text, score_text, scoring_text
from niceeval_cli.reports.viewmodels.text import num
from tests.support.view_builders import Runs, result


@pytest.mark.parametrize(("value", "shown"), [(8.0, "8"), (6.666666, "6.67"), (0.5, "0.5"), (None, "—"),
                                              (0.0, "0")])
def test_numbers_read_as_people_write_them(value: float | None, shown: str) -> None:
    assert num(value) == shown


def test_an_unrankable_score_is_never_a_complete_zero(runs: Runs) -> None:
    attempt = runs.attempt("R", "e", AttemptState.UNRANKABLE, score=45.0, max_score=100.0,
                           unavailable_weight=50.0)
    assert score_text(attempt) == "45 of 100 · 50 unavailable · not rankable"
    errored = replace(attempt, state=AttemptState.ERRORED, score=None, partial_score=12.5)
    assert score_text(errored) == "partial 12.5 of 100 · not rankable"
    gate_failed = replace(attempt, state=AttemptState.SCORED, score=7.0, max_score=10.0, unavailable_weight=0.0,
                          gate=GateState.FAILED)
    assert score_text(gate_failed) == "7 of 10 · points kept"
    assert score_text(runs.attempt("R", "e", AttemptState.PASSED)) == ""


def test_measurements_show_value_and_required_threshold(runs: Runs) -> None:
    attempt = runs.attempt("R", "e")
    below = result(attempt, 0, "below", measurement=0.62, threshold=0.8)
    met = result(attempt, 0, "met", measurement=0.8, threshold=0.8)
    measured = result(attempt, 0, "measured", measurement=0.333)
    missing = result(attempt, 0, "unavailable", threshold=0.8)
    assert measurement_text(below) == "0.62 < 0.80 required"
    assert measurement_text(met) == "0.80 ≥ 0.80 required"
    assert measurement_text(measured) == "0.33"
    assert measurement_text(missing) == "— (0.80 required)"
    assert measurement_text(result(attempt, 0, "matched")) is None


def test_scoring_entries_show_contribution_of_weight_and_records_show_none(runs: Runs) -> None:
    attempt = runs.attempt("R", "e")
    assert scoring_text(result(attempt, 0, "matched", role="score", weight=5.0, contribution=5.0)) == "5 / 5"
    assert scoring_text(result(attempt, 0, "unavailable", role="gate+score", weight=50.0)) == "— / 50"
    assert scoring_text(result(attempt, 0, "matched")) is None


@pytest.mark.parametrize(("state", "gate", "word", "ok"), [
    ("passed", None, "passed", True), ("failed", None, "failed", False), ("errored", None, "errored", False),
    ("scored", "none", "scored", True), ("scored", "passed", "scored", True),
    ("scored", "failed", "gate failed", False), ("scored", "unavailable", "gate unavailable", False),
    ("unrankable", "none", "unrankable", False),
])
def test_each_attempt_outcome_has_one_word(state: str, gate: str | None, word: str, ok: bool) -> None:
    assert attempt_word(state, gate) == word
    assert is_clean(AttemptState(state), GateState(gate) if gate else None) is ok
    assert (word in CLEAN_STATES) is ok  # the report's word and the rule agree


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x1b[31mb", "a\\x1b[31mb"), ("line\rover", "line\\rover"), ("bell\x07", "bell\\x07"),
    ("\x9b31m", "\\x9b31m"), ("rtl\u202eexe", "rtl\\u202eexe"), ("iso\u2066x\u2069", "iso\\u2066x\\u2069"),
    ("zero\u200bwidth", "zero\\u200bwidth"), ("sep\u2028x", "sep\\u2028x"), ("bom\ufeff", "bom\\ufeff"),
    ("tag\U000e0041", "tag\\U000e0041"), ("lone\udc80", "lone\\udc80"), ("中文 ok", "中文 ok"),
])
def test_control_and_invisible_characters_are_made_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_trimming_says_how_much_was_left_out_and_none_keeps_everything() -> None:
    assert visible("a" * 10, 4) == "aaaa… [+6 chars]"
    assert visible("a" * 10, None) == "a" * 10
    assert visible("two\nlines", single_line=True) == "two\\nlines"
    assert visible("two\nlines") == "two\nlines"


def test_the_judge_match_names_the_renderer_knows_are_the_judge_factories() -> None:
    from niceeval_cli.expect._judge import JUDGE_CHOICES
    from niceeval_cli.reports.viewmodels.attempt import JUDGE_MATCHES as _JUDGE_MATCHES

    assert frozenset(JUDGE_CHOICES) == _JUDGE_MATCHES
