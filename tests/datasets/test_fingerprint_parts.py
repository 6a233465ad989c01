"""A case's fingerprint (datasets.md, "Reuse"): the eval's parts plus `case`, the SHA-256 of the
case value's canonical JSON; and the shared-parts template gives exactly the canonical JSON of
the parts, so fingerprints sealed before datasets existed stay valid."""

from __future__ import annotations

import hashlib

import pytest

from niceeval_cli._fingerprint import PartsTemplate, canonical_json, changed_parts, fingerprint_parts


def parts(**overrides: object) -> dict[str, object]:
    given: dict[str, object] = {
        "eval_id": "refunds", "eval_kind": "pass", "sources": {"evals/refunds.py": "ab" * 32},
        "eval_options": {"tags": ["b", "a"], "judge": {"model": "m", "timeout_ms": 5}},
        "experiment_id": "默认", "adapter_identity": {"name": "http", "version": None}, "model": "gpt",
        "options": {"url": "http://x", "nested": [1, 2.5, None, True, "é"]},
        "judge": {"model": "m", "api_key_env": "K"}, "judge_version": "prompt-1/scale-1", "ordinal": 0,
    }
    given.update(overrides)
    return fingerprint_parts(**given)  # type: ignore[arg-type]


@pytest.mark.parametrize("eval_id", ["refunds", "refunds[r-01]", "退款[\"q\" \\ 1]", "a\nb"])
@pytest.mark.parametrize("ordinal", [0, 3])
@pytest.mark.parametrize("case_json", [None, '{"q":"a"}', '"é"'])
def test_the_template_renders_exactly_the_canonical_json_of_the_parts(eval_id, ordinal, case_json):
    expected = canonical_json(parts(eval_id=eval_id, ordinal=ordinal, case_json=case_json))
    template = PartsTemplate(parts())
    assert template.render(eval_id=eval_id, ordinal=ordinal, case_json=case_json) == expected


def test_an_eval_without_cases_has_no_case_part():
    assert "case" not in parts()


def test_the_case_part_is_the_sha256_of_the_canonical_value():
    found = parts(case_json='{"a":1}')
    assert found["case"] == hashlib.sha256(b'{"a":1}').hexdigest()


def test_a_changed_case_value_is_reported_as_the_case_part():
    assert changed_parts(parts(case_json='{"a":1}'), parts(case_json='{"a":2}')) == ["case"]
