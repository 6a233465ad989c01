"""The judge factories: what they store in match_config and what they refuse."""

from __future__ import annotations

import json

import pytest

from niceeval_cli.expect import closed_qa, factuality, summarizes
from niceeval_cli.expect._core import ThresholdedScoreMatch
from niceeval_cli.expect._judge import JUDGE_SCALE_VERSION, JudgeMatch


def test_closed_qa_config_holds_question_choices_scale_and_limits() -> None:
    match = closed_qa("Does the answer state the refund window?")
    assert isinstance(match, JudgeMatch) and match.is_judge
    assert match.name == "closed_qa" and match.judge_kind == "closed_qa"
    assert match.config == {
        "question": "Does the answer state the refund window?",
        "choices": {"Y": 1.0, "N": 0.0},
        "scale_version": JUDGE_SCALE_VERSION,
        "max_material_bytes": 256 * 1024,
        "max_audit_bytes": 1024 * 1024,
    }
    json.dumps(match.config)  # JSON-safe


def test_factuality_choices_are_the_fixed_categories() -> None:
    match = factuality("The refund window is 30 days.")
    assert match.config["reference"] == "The refund window is 30 days."
    assert match.config["choices"] == {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}


def test_summarizes_keeps_the_source_and_yes_no_choices() -> None:
    match = summarizes("Long source text.", max_material_bytes=10, max_audit_bytes=20)
    assert match.config["source"] == "Long source text."
    assert match.config["choices"] == {"Y": 1.0, "N": 0.0}
    assert (match.max_material_bytes, match.max_audit_bytes) == (10, 20)
    assert match.config["max_material_bytes"] == 10 and match.config["max_audit_bytes"] == 20


def test_at_least_makes_a_thresholded_judge() -> None:
    thresholded = closed_qa("Clear?").at_least(0.8)
    assert isinstance(thresholded, ThresholdedScoreMatch)
    assert thresholded.is_judge and thresholded.threshold == 0.8
    assert thresholded.config["question"] == "Clear?"


@pytest.mark.parametrize("factory", [closed_qa, factuality, summarizes])
@pytest.mark.parametrize("text", ["", "   ", None, 3])
def test_empty_or_non_text_criterion_is_refused(factory, text) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="non-empty text"):
        factory(text)


@pytest.mark.parametrize("limit", [0, -1, True, 1.5, "10"])
@pytest.mark.parametrize("name", ["max_material_bytes", "max_audit_bytes"])
def test_byte_limits_must_be_positive_whole_numbers(name: str, limit: object) -> None:
    with pytest.raises(ValueError, match=name):
        closed_qa("q", **{name: limit})  # type: ignore[arg-type]


def test_measure_refuses_because_the_runner_grades_judges() -> None:
    with pytest.raises(TypeError, match="graded asynchronously by the runner"):
        closed_qa("q").measure({"input": "a", "output": "b"})
    with pytest.raises(TypeError, match="judge"):
        factuality("r").at_least(0.5).measure("x")


def test_describe_is_short_even_for_a_long_source() -> None:
    text = summarizes("word " * 500).describe()
    assert text.startswith("summarizes('word") and len(text) < 90
