"""Configuration mistakes become one ConfigError paragraph naming file, table and key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from niceeval_cli.config import ConfigError, load_config

Write = Callable[[str], Path]


def _error(write_config: Write, text: str) -> str:
    root = write_config(text)
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=root)
    message = str(caught.value)
    assert "\n" not in message
    assert "Traceback" not in message
    return message


@pytest.mark.parametrize(
    ("text", "table", "key", "suggestion"),
    [
        ("[project]\nattemps = 3\n", "[project]", '"attemps"', '"attempts"'),
        ("[judge]\nmodle = 'x'\n", "[judge]", '"modle"', '"model"'),
        ("[experiments.local]\ntimeout = 5\n", "[experiments.local]", '"timeout"', '"timeout_ms"'),
        (
            "[experiments.local.judge]\nmax_retry = 1\n",
            "[experiments.local.judge]",
            '"max_retry"',
            '"max_retries"',
        ),
        (
            '[experiments."models/openai"]\npass-rule = "all"\n',
            '[experiments."models/openai"]',
            '"pass-rule"',
            '"pass_rule"',
        ),
        ("[judge]\napi_key = 'sk-1'\n", "[judge]", '"api_key"', '"api_key_env"'),
    ],
)
def test_a_misspelt_key_names_file_table_key_and_the_closest_allowed_key(
    write_config: Write, text: str, table: str, key: str, suggestion: str
) -> None:
    message = _error(write_config, text)
    assert "niceeval.toml" in message
    assert table in message
    assert f"unknown key {key}" in message
    assert f"did you mean {suggestion}?" in message
    assert "allowed keys:" in message


def test_the_allowed_keys_are_listed_even_without_a_close_match(write_config: Write) -> None:
    message = _error(write_config, "[project]\nzzz = 1\n")
    assert "did you mean" not in message
    assert "allowed keys: evals, store, attempts, max_concurrency, timeout_ms, pass_rule" in message


def test_an_unknown_top_level_table_is_named_with_a_suggestion(write_config: Write) -> None:
    message = _error(write_config, "[projekt]\nattempts = 1\n")
    assert "unknown top-level table [projekt]" in message
    assert "did you mean [project]?" in message
    assert "[experiments.<id>]" in message


def test_a_project_key_at_the_top_level_points_to_the_project_table(
    write_config: Write,
) -> None:
    message = _error(write_config, "attempts = 3\n")
    assert 'unknown top-level key "attempts"' in message
    assert "belongs in [project]" in message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[project]\nattempts = "3"\n', '[project] attempts: expected an integer from 1 to 1000, got "3"'),
        ("[project]\nattempts = 0\n", "[project] attempts: expected an integer from 1 to 1000, got 0"),
        ("[project]\nattempts = 2.5\n", "[project] attempts: expected an integer from 1 to 1000, got 2.5"),
        ("[project]\nattempts = 100000000\n",
         "[project] attempts: expected an integer from 1 to 1000, got 100000000"),
        ("[run]\nmax_attempts = 5000\n", "[run] max_attempts: expected an integer from 1 to 1000, got 5000"),
        ('[judge]\nmodel = "m"\nsamples = 101\n', "[judge] samples: expected an integer from 1 to 100, got 101"),
        (
            "[project]\nmax_concurrency = true\n",
            "[project] max_concurrency: expected an integer ≥ 1, got true",
        ),
        (
            "[project]\ntimeout_ms = 0\n",
            "[project] timeout_ms: expected a positive integer (milliseconds), got 0",
        ),
        (
            '[project]\nevals = "evals"\n',
            '[project] evals: expected a non-empty list of strings, got "evals"',
        ),
        ('[project]\nevals = ["a", 3]\n', "[project] evals[1]: expected a string, got 3"),
        ("[judge]\nmax_retries = -1\n", "[judge] max_retries: expected an integer ≥ 0, got -1"),
        ('[judge]\nbase_url = "api.example.com"\n', "[judge] base_url: expected an http:// or https:// URL"),
        ('[judge]\napi_key_env = "sk-abc-123"\n', "[judge] api_key_env: expected the NAME of an environment"),
        (
            "[experiments.a]\ntags = 'smoke'\n",
            '[experiments.a] tags: expected a list of strings, got "smoke"',
        ),
        ('[experiments.a]\nadapter = "app.adapter"\n', '[experiments.a] adapter: expected "module:attr"'),
        ("[experiments.a]\njudge = 3\n", "[experiments.a] judge: expected a table, got 3"),
        ("project = 3\n", "[project] must be a table, got 3"),
        ("[experiments]\nlocal = 3\n", "[experiments.local] must be a table, got 3"),
    ],
)
def test_a_wrong_type_or_value_names_table_key_expectation_and_the_value_given(
    write_config: Write, text: str, fragment: str
) -> None:
    message = _error(write_config, text)
    assert message.startswith(str(Path(write_config("") / "niceeval.toml").resolve()))
    assert fragment in message


def test_options_must_be_json_values(write_config: Write) -> None:
    message = _error(write_config, "[experiments.a.options]\nwhen = 1979-05-27\n")
    assert "[experiments.a.options] when" in message
    assert "1979-05-27" in message
    assert "not JSON" in message


def test_several_problems_are_all_reported_in_one_paragraph(write_config: Write) -> None:
    message = _error(write_config, "[project]\nattempts = 0\nfoo = 1\n")
    assert "attempts: expected an integer from 1 to 1000" in message
    assert 'unknown key "foo"' in message


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("[project]\nattempts = \n", "at line 2, column 12"),
        ("[project]\n[judge\n", "at line 2, column 7"),
        ("[project]\nattempts = 1\n[project]\n", "at line 3"),
    ],
)
def test_a_toml_syntax_error_names_file_line_and_column(
    write_config: Write, text: str, position: str
) -> None:
    message = _error(write_config, text)
    assert "niceeval.toml: invalid TOML " + position in message


@pytest.mark.parametrize(
    ("rule", "loaded"), [('"any"', "any"), ('"all"', "all"), ("0.8", 0.8), ("1", 1.0), ("0.01", 0.01)]
)
def test_valid_pass_rules_load(write_config: Write, rule: str, loaded: object) -> None:
    project = load_config(cwd=write_config(f"[project]\npass_rule = {rule}\n"))
    assert project.pass_rule == loaded


@pytest.mark.parametrize("rule", ["0", "0.0", "-0.5", "1.01", "2", '"most"', '"ANY"', "true", "nan", "inf"])
def test_invalid_pass_rules_are_config_errors(write_config: Write, rule: str) -> None:
    message = _error(write_config, f"[experiments.a]\npass_rule = {rule}\n")
    assert '[experiments.a] pass_rule: expected "any", "all" or a minimum pass rate in (0, 1]' in message


@pytest.mark.parametrize("experiment_id", ['""', '"a/"', '"/a"', '"a//b"', '" a"'])
def test_malformed_experiment_ids_are_rejected(write_config: Write, experiment_id: str) -> None:
    message = _error(write_config, f"[experiments.{experiment_id}]\n")
    assert "an experiment id must not" in message
