"""Each configuration rule has one home: the pass-rule check, the judge field list, adapter names."""

from __future__ import annotations

from pathlib import Path

import pytest

from niceeval_cli import outcomes
from niceeval_cli.authoring import AuthoringError, define_eval
from niceeval_cli.config import EVAL_JUDGE_FIELDS, ConfigError, JudgeOverrides, check_pass_rule, load_config

RULES = ["any", "all", 0.5, 1, 1.0, "0.5", 0, -1, 1.5, float("nan"), float("inf"), True, None, [0.5], "some"]


def _accepts(check: object, value: object) -> bool:
    try:
        check(value)  # type: ignore[operator]
    except (ValueError, AuthoringError):
        return False
    return True


@pytest.mark.parametrize("rule", RULES)
def test_the_file_the_eval_options_and_the_fold_accept_the_same_pass_rules(rule: object) -> None:
    def defined(value: object) -> object:
        return define_eval(lambda t: None, pass_rule=value)

    folded = _accepts(outcomes.parse_pass_rule, rule)
    assert _accepts(check_pass_rule, rule) == folded
    if rule is not None:
        assert _accepts(defined, rule) == folded


def test_the_eval_judge_fields_are_the_judge_table_without_max_concurrency() -> None:
    assert set(EVAL_JUDGE_FIELDS) == set(JudgeOverrides.model_fields) - {"max_concurrency"}


def test_an_unknown_adapter_name_lists_the_registered_adapters(tmp_path: Path) -> None:
    (tmp_path / "niceeval.toml").write_text('[experiments.a]\nadapter = "htp"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path)
    assert 'built-in adapter (python, command, http, openai-chat, claude-code, codex), got "htp"' in str(caught.value)
