"""The pure cleaning step before sealing: surrogates → U+FFFD, out-of-range usage → None, notes."""

from __future__ import annotations

import dataclasses
import json

from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli.runner._sanitize import clean_sealed, clean_value, replace_surrogates


def _attempt(**changes: object) -> AttemptRecord:
    base = AttemptRecord(
        id="A", run_id="R", experiment_id="x", eval_id="e", ordinal=0, kind="pass", state="passed",  # type: ignore[arg-type]
        reason=None, score=None, max_score=None, unavailable_weight=None, partial_score=None, gate=None,
        stop_cause=None, error=None, fingerprint="f", fingerprint_parts="{}", started_at="t", ended_at="t",
        duration_ms=1.0, input_tokens=3, output_tokens=4, judge_tokens=0,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def _result(**changes: object) -> AssertionResult:
    base = AssertionResult(
        id="X", attempt_id="A", ordinal=0, key="k", label=None, group_name=None, role="record",  # type: ignore[arg-type]
        weight=None, contribution=None, state="matched", measurement=None, threshold=None,  # type: ignore[arg-type]
        reason=None, explanation=None, match_name="equals", match_config="{}", evidence=None,
        source_file=None, source_line=None, or_stop=False, match_kind="boolean",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_clean_records_are_returned_unchanged_with_no_notes() -> None:
    attempt, result = _attempt(), _result()
    cleaned = clean_sealed(attempt, [result])
    assert cleaned.attempt is attempt and cleaned.results == (result,)
    assert (cleaned.replaced_code_points, cleaned.usage_unreported) == (0, 0)


def test_surrogates_are_replaced_everywhere_and_said_once_per_field() -> None:
    cleaned = clean_sealed(_attempt(error="bad \ud800"), [_result(key="k\udfff", explanation="why \ud800\udc00")])
    assert cleaned.attempt.error == "bad \ufffd"
    assert cleaned.results[0].key == "k\ufffd" and cleaned.results[0].explanation == "why \ufffd\ufffd"
    assert cleaned.replaced_code_points == 4
    notes = json.loads(cleaned.attempt.notes or "[]")
    assert len(notes) == 3 and all("U+FFFD" in n for n in notes)
    assert "\ud800" not in (cleaned.attempt.notes or "") and "\udfff" not in (cleaned.attempt.notes or "")


def test_usage_beyond_int64_is_unreported_and_judge_tokens_are_resummed() -> None:
    cleaned = clean_sealed(
        _attempt(input_tokens=10**30, judge_tokens=10**30 + 5),
        [_result(judge_tokens=10**30), _result(id="Y", key="k2", judge_tokens=5)],
    )
    assert cleaned.attempt.input_tokens is None and cleaned.attempt.output_tokens == 4
    assert [r.judge_tokens for r in cleaned.results] == [None, 5]
    assert cleaned.attempt.judge_tokens == 5
    assert cleaned.usage_unreported == 2
    assert len(json.loads(cleaned.attempt.notes or "[]")) == 2


def test_earlier_notes_are_kept_first() -> None:
    cleaned = clean_sealed(_attempt(error="\ud800"), [], notes=["from the attempt"])
    assert json.loads(cleaned.attempt.notes or "[]")[0] == "from the attempt"


def test_clean_value_reaches_keys_and_nested_values() -> None:
    value, n = clean_value({"k\ud800": ["a\udfff", ("b", {"c": "\ud801"})], "n": 1})
    assert value == {"k\ufffd": ["a\ufffd", ("b", {"c": "\ufffd"})], "n": 1} and n == 3
    assert replace_surrogates("plain") == ("plain", 0)
