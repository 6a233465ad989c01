"""Value matches: comparisons, intervals, text, schema, user-defined value and score matches."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from niceeval_cli._states import AssertionState, UnavailableReason
from niceeval_cli.expect import (
    BooleanMatch,
    Fact,
    Interval,
    MatchError,
    ScoreMatch,
    at_least,
    at_most,
    between,
    define_score_match,
    define_value_match,
    equals,
    excludes,
    greater_than,
    includes,
    is_defined,
    is_false,
    is_true,
    less_than,
    matches,
    pattern,
    satisfies,
    similarity,
)

M, X, U = AssertionState.MATCHED, AssertionState.MISMATCHED, AssertionState.UNAVAILABLE
INF = math.inf


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("match", "value", "state"),
    [
        (equals(3), 3, M),
        (equals(3), 3.0, M),
        (equals(3), 2, X),
        (equals(0.5), 0.5, M),
        (greater_than(3), 4, M),
        (greater_than(3), 3, X),
        (greater_than(3), 2.5, X),
        (less_than(3), 2, M),
        (less_than(3), 3, X),
        (less_than(3), 4, X),
        (at_least(3), 3, M),
        (at_least(3), 4, M),
        (at_least(3), 2.99, X),
        (at_most(3), 3, M),
        (at_most(3), 2, M),
        (at_most(3), 3.01, X),
        (between(2, 4), 2, M),
        (between(2, 4), 4, M),
        (between(2, 4), 3, M),
        (between(2, 4), 1.9, X),
        (between(2, 4), 4.1, X),
        (at_least(1), Decimal("1.5"), M),
        (at_most(10_000), 12_000, X),
    ],
)
def test_numeric_match_on_a_number(match: BooleanMatch, value: object, state: AssertionState) -> None:
    assert match.evaluate(value).state == state


# The interval table: matched if every value in [lo, hi] matches, mismatched if none does.
INTERVAL_TABLE = [
    (equals(3), Interval(3, 3), M),
    (equals(3), Interval(3, 4), U),
    (equals(3), Interval(2, 3), U),
    (equals(3), Interval(4, 5), X),
    (equals(3), Interval(0, 2), X),
    (equals(3), Interval(3, INF), U),
    (equals(3), Interval(4, INF), X),
    (greater_than(3), Interval(4, 5), M),
    (greater_than(3), Interval(4, INF), M),
    (greater_than(3), Interval(3, 5), U),
    (greater_than(3), Interval(3, INF), U),
    (greater_than(3), Interval(0, 3), X),
    (greater_than(3), Interval(3, 3), X),
    (less_than(3), Interval(0, 2), M),
    (less_than(3), Interval(0, 3), U),
    (less_than(3), Interval(0, INF), U),
    (less_than(3), Interval(3, 9), X),
    (less_than(3), Interval(3, INF), X),
    (at_least(3), Interval(3, 5), M),
    (at_least(3), Interval(3, INF), M),
    (at_least(3), Interval(2, 4), U),
    (at_least(3), Interval(2, INF), U),
    (at_least(3), Interval(0, 2), X),
    (at_least(0), Interval(0, INF), M),
    (at_most(3), Interval(0, 3), M),
    (at_most(3), Interval(2, 4), U),
    (at_most(3), Interval(0, INF), U),
    (at_most(3), Interval(4, 9), X),
    (at_most(3), Interval(4, INF), X),
    (between(2, 4), Interval(2, 4), M),
    (between(2, 4), Interval(3, 3), M),
    (between(2, 4), Interval(1, 3), U),
    (between(2, 4), Interval(3, 5), U),
    (between(2, 4), Interval(0, INF), U),
    (between(2, 4), Interval(0, 1), X),
    (between(2, 4), Interval(5, INF), X),
]


@pytest.mark.parametrize(("match", "interval", "state"), INTERVAL_TABLE)
def test_numeric_match_answers_for_an_interval(
    match: BooleanMatch, interval: Interval, state: AssertionState
) -> None:
    assert match.accepts_interval
    result = match.evaluate(interval)
    assert result.state == state
    if state == U:
        assert result.reason == UnavailableReason.COUNT_UNCERTAIN
        assert str(interval) in result.explanation


def test_uncertain_interval_explanation_names_the_interval_and_the_match() -> None:
    result = equals(3).evaluate(Interval(3, INF))
    assert "[3, ∞)" in result.explanation and "equals(3)" in result.explanation


@pytest.mark.parametrize("value", [True, False, "3", None, [3], {"n": 3}])
@pytest.mark.parametrize(
    "match", [equals(3), greater_than(0), less_than(9), at_least(0), at_most(9), between(0, 9)]
)
def test_numeric_match_on_a_non_number_is_mismatched_with_an_explanation(
    match: BooleanMatch, value: object
) -> None:
    result = match.evaluate(value)
    assert result.state == X
    assert "not a number" in result.explanation


def test_numeric_explanation_says_what_was_expected_and_got() -> None:
    assert equals(3).evaluate(2).explanation == "expected equals(3), got 2"


@pytest.mark.parametrize("threshold", ["3", True, None, math.nan])
@pytest.mark.parametrize("factory", [greater_than, less_than, at_least, at_most])
def test_numeric_factories_reject_a_non_number_threshold(factory: Any, threshold: object) -> None:
    with pytest.raises(TypeError):
        factory(threshold)


def test_equals_rejects_nan_which_would_never_match() -> None:
    with pytest.raises(TypeError):
        equals(math.nan)


def test_between_rejects_reversed_bounds() -> None:
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        between(4, 2)


# ---------------------------------------------------------------- equals on other values


@pytest.mark.parametrize(
    ("expected", "value", "state"),
    [
        ("agent", "agent", M),
        ("agent", "Agent", X),
        (True, True, M),
        (True, 1, X),
        (1, True, X),
        (False, 0, X),
        (None, None, M),
        ([1, 2], [1, 2], M),
        ({"a": 1}, {"a": 1}, M),
        ("代理", "代理", M),
    ],
)
def test_equals_compares_values_and_never_confuses_bool_with_number(
    expected: object,
    value: object,
    state: AssertionState,
) -> None:
    assert equals(expected).evaluate(value).state == state


def test_equals_on_a_non_number_does_not_decide_an_uncertain_interval() -> None:
    result = equals("x").evaluate(Interval(1, 2))
    assert result.state == U and result.reason == UnavailableReason.COUNT_UNCERTAIN


# ---------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("match", "value", "state"),
    [
        (includes("30 days"), "Refunds within 30 days.", M),
        (includes("30 days"), "Refunds within 30 Days.", X),
        (includes("30 days", case_sensitive=False), "Refunds within 30 DAYS.", M),
        (includes("退款"), "三十天内可以退款。", M),
        (includes("退款"), "三十天内。", X),
        (excludes("sorry"), "Here you go.", M),
        (excludes("sorry"), "I am sorry.", X),
        (excludes("SORRY", case_sensitive=False), "I am sorry.", X),
        (excludes("SORRY"), "I am sorry.", M),
        (includes(""), "", M),
    ],
)
def test_text_matches(match: BooleanMatch, value: str, state: AssertionState) -> None:
    assert match.evaluate(value).state == state


@pytest.mark.parametrize("match", [includes("a"), excludes("a"), pattern("a")])
@pytest.mark.parametrize("value", [None, 3, ["a"]])
def test_text_matches_on_non_text_are_mismatched(match: BooleanMatch, value: object) -> None:
    result = match.evaluate(value)
    assert result.state == X and "not text" in result.explanation


def test_pattern_searches_anywhere_in_the_text() -> None:
    assert pattern(r"\d+ days").evaluate("within 30 days please").state == M
    assert pattern(r"^\d+ days$").evaluate("within 30 days").state == X
    assert pattern(re.compile("DAYS", re.IGNORECASE)).evaluate("30 days").state == M


def test_pattern_config_keeps_the_regex_and_non_default_flags() -> None:
    assert pattern(r"\d+").config == {"value": r"\d+"}
    assert pattern(re.compile("x", re.IGNORECASE)).config["flags"] & re.IGNORECASE


def test_invalid_regex_is_rejected_when_the_match_is_built() -> None:
    with pytest.raises(re.error):
        pattern("(")


# ---------------------------------------------------------------- defined / true / false


@pytest.mark.parametrize(
    ("match", "value", "state"),
    [
        (is_defined(), 0, M),
        (is_defined(), "", M),
        (is_defined(), None, X),
        (is_true(), True, M),
        (is_true(), 1, X),
        (is_true(), "yes", X),
        (is_true(), False, X),
        (is_false(), False, M),
        (is_false(), 0, X),
        (is_false(), None, X),
        (is_false(), True, X),
    ],
)
def test_defined_true_false(match: BooleanMatch, value: object, state: AssertionState) -> None:
    assert match.evaluate(value).state == state


def test_is_defined_on_an_available_none_is_mismatched_but_unavailable_stays_unavailable() -> None:
    assert is_defined().evaluate(Fact.available(None)).state == X
    result = is_defined().evaluate(Fact.unavailable("not-observed"))
    assert (result.state, result.reason) == (U, "not-observed")


# ---------------------------------------------------------------- matches(schema)


class Person(BaseModel):
    name: str
    age: int


def test_matches_validates_against_a_pydantic_model() -> None:
    assert matches(Person).evaluate({"name": "Ann", "age": 3}).state == M
    assert matches(Person).evaluate(Person(name="Ann", age=3)).state == M
    result = matches(Person).evaluate({"name": "Ann", "age": "old"})
    assert result.state == X
    assert "age" in result.explanation


def test_matches_validates_against_any_type() -> None:
    assert matches(list[int]).evaluate([1, 2]).state == M
    assert matches(list[int]).evaluate(["a"]).state == X
    assert matches(int).evaluate(3).state == M


def test_matches_config_names_the_schema_not_the_class_object() -> None:
    m = matches(Person)
    assert (m.name, m.config) == ("matches", {"value": "Person"})
    assert m.describe() == "matches(Person)"
    json.dumps(m.config)


def test_importing_expect_does_not_import_pydantic() -> None:
    code = "import sys, niceeval_cli.expect; sys.exit('pydantic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---------------------------------------------------------------- satisfies / define_value_match


def test_satisfies_uses_the_predicate_verdict() -> None:
    positive = satisfies("positive", lambda v: v > 0)
    assert positive.evaluate(2).state == M
    assert positive.evaluate(-2).state == X
    assert positive.describe() == "satisfies('positive')"


def test_satisfies_predicate_returning_an_unavailable_fact_is_unavailable() -> None:
    result = satisfies("known", lambda v: Fact.unavailable("sensor-offline")).evaluate(1)
    assert (result.state, result.reason) == (U, "sensor-offline")


def test_satisfies_predicate_reading_an_unavailable_fact_is_unavailable_with_its_reason() -> None:
    result = satisfies("alive", lambda p: p["hp"].value > 0).evaluate(
        {"hp": Fact.unavailable("hp-unobserved")}
    )
    assert (result.state, result.reason) == (U, "hp-unobserved")


def test_satisfies_predicate_exception_propagates() -> None:
    with pytest.raises(ZeroDivisionError):
        satisfies("bad", lambda v: 1 / 0).evaluate(1)


@pytest.mark.parametrize("out", [None, 1, "yes", Fact.available(True)])
def test_satisfies_predicate_must_return_a_bool(out: object) -> None:
    with pytest.raises(MatchError):
        satisfies("odd", lambda v: out).evaluate(1)


def test_satisfies_config_stores_label_and_predicate_name_never_the_function() -> None:
    def is_even(v: int) -> bool:
        return v % 2 == 0

    m = satisfies("偶数", is_even)
    assert m.config == {"label": "偶数", "predicate": is_even.__qualname__}
    json.dumps(m.config, ensure_ascii=False)
    assert m.evaluate(4).state == M


def test_define_value_match_with_unicode_name() -> None:
    alive = define_value_match(name="存活", evaluate=lambda hp: hp > 0)
    assert alive.name == "存活"
    assert alive.describe() == "存活()"
    assert alive.evaluate(1).state == M
    assert alive.evaluate(0).state == X
    assert alive.evaluate(Fact.unavailable("未观测")).reason == "未观测"


def test_define_value_match_evaluate_returning_unavailable_fact_or_invalid_value() -> None:
    m = define_value_match(name="m", evaluate=lambda v: v)
    assert m.evaluate(True).state == M
    assert m.evaluate(False).state == X
    assert m.evaluate(Fact.available(Fact.unavailable("later"))).state == U  # evaluate got the inner Fact
    with pytest.raises(MatchError, match="expected True, False or an unavailable Fact"):
        m.evaluate("maybe")


def test_define_value_match_exception_propagates_and_fact_unavailable_is_unknown() -> None:
    def lookup(v: object) -> bool:
        raise KeyError("missing")

    boom = define_value_match(name="boom", evaluate=lookup)
    with pytest.raises(KeyError):
        boom.evaluate(1)
    reads = define_value_match(name="reads", evaluate=lambda f: f.value)
    result = reads.evaluate(Fact.available(Fact.unavailable("late")))
    assert (result.state, result.reason) == (U, "late")


@pytest.mark.parametrize("name", ["", "   ", None])
def test_user_defined_matches_need_a_name(name: object) -> None:
    with pytest.raises(ValueError):
        define_value_match(name=name, evaluate=bool)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        define_score_match(name=name, score=float)  # type: ignore[arg-type]


# ---------------------------------------------------------------- similarity


@pytest.mark.parametrize(
    ("expected", "value", "m"),
    [
        ("kitten", "kitten", 1.0),
        ("", "", 1.0),
        ("kitten", "sitting", 1 - 3 / 7),
        ("abc", "xyz", 0.0),
        ("abc", "", 0.0),
        ("", "abc", 0.0),
        ("你好世界", "你好", 0.5),
    ],
)
def test_similarity_is_normalised_levenshtein(expected: str, value: str, m: float) -> None:
    result = similarity(expected).measure(value)
    assert result.state == AssertionState.MEASURED
    assert result.measurement == pytest.approx(m)


def test_similarity_of_non_text_is_an_error_not_a_zero() -> None:
    with pytest.raises(MatchError):
        similarity("a").measure(3)


def test_similarity_of_an_unavailable_fact_is_unavailable() -> None:
    result = similarity("a").measure(Fact.unavailable("no-reply"))
    assert (result.state, result.reason) == (U, "no-reply")


def test_score_match_at_least_met_below_and_at_the_threshold() -> None:
    s = similarity("kitten")
    met = s.at_least(0.5).measure("sitting")
    assert (met.state, met.threshold) == (AssertionState.MET, 0.5)
    below = s.at_least(0.8).measure("sitting")
    assert below.state == AssertionState.BELOW
    assert "0.57 < 0.80 required" in below.explanation
    assert s.at_least(1.0).measure("kitten").state == AssertionState.MET


@pytest.mark.parametrize("threshold", [1.5, -0.1, math.nan, math.inf, True, "0.5"])
def test_score_match_threshold_must_be_in_unit_interval(threshold: object) -> None:
    with pytest.raises(ValueError):
        similarity("a").at_least(threshold)  # type: ignore[arg-type]


# ---------------------------------------------------------------- define_score_match


def test_define_score_match_measures() -> None:
    s = define_score_match(name="长度", score=lambda text: min(len(text) / 10, 1))
    assert isinstance(s, ScoreMatch)
    assert s.measure("abcde").measurement == 0.5
    assert s.measure("x" * 20).measurement == 1.0
    assert s.at_least(0.6).measure("abcde").state == AssertionState.BELOW
    assert s.name == "长度"


@pytest.mark.parametrize("out", [1.5, -0.5, math.nan, math.inf, "x", None, True, Fact.available(0.5)])
def test_define_score_match_invalid_score_is_a_match_error(out: object) -> None:
    with pytest.raises(MatchError):
        define_score_match(name="bad", score=lambda v: out).measure(1)


def test_define_score_match_unknown_score() -> None:
    s = define_score_match(name="s", score=lambda v: Fact.unavailable("judge-less"))
    result = s.measure("x")
    assert (result.state, result.reason) == (U, "judge-less")
    reads = define_score_match(name="r", score=lambda f: f.value)
    assert reads.measure(Fact.available(Fact.unavailable("late"))).reason == "late"
    with pytest.raises(RuntimeError):
        define_score_match(name="e", score=lambda v: (_ for _ in ()).throw(RuntimeError("x"))).measure(1)


# ---------------------------------------------------------------- identity


@dataclass(frozen=True)
class Point:
    x: int
    y: int


@pytest.mark.parametrize(
    ("match", "name", "config", "shown"),
    [
        (equals(3), "equals", {"value": 3}, "equals(3)"),
        (equals("a"), "equals", {"value": "a"}, "equals('a')"),
        (equals(Point(1, 2)), "equals", {"value": {"x": 1, "y": 2}}, "equals(Point(x=1, y=2))"),
        (greater_than(0), "greater_than", {"value": 0}, "greater_than(0)"),
        (less_than(1.5), "less_than", {"value": 1.5}, "less_than(1.5)"),
        (at_least(1), "at_least", {"value": 1}, "at_least(1)"),
        (at_most(10_000), "at_most", {"value": 10_000}, "at_most(10000)"),
        (between(1, 3), "between", {"lo": 1, "hi": 3}, "between(lo=1, hi=3)"),
        (includes("x"), "includes", {"value": "x", "case_sensitive": True}, "includes('x')"),
        (
            excludes("x", case_sensitive=False),
            "excludes",
            {"value": "x", "case_sensitive": False},
            "excludes('x', case_sensitive=False)",
        ),
        (is_defined(), "is_defined", {}, "is_defined()"),
        (is_true(), "is_true", {}, "is_true()"),
        (is_false(), "is_false", {}, "is_false()"),
        (similarity("hi"), "similarity", {"value": "hi"}, "similarity('hi')"),
    ],
)
def test_every_match_has_a_name_and_a_json_safe_config(match, name, config, shown) -> None:  # type: ignore[no-untyped-def]
    assert match.name == name
    assert match.config == config
    assert match.describe() == shown
    json.dumps(match.config)
