"""Precedence: CLI flag > eval > experiment > project > default; judge fields one by one."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.config import (
    ConfigError,
    JudgeSettings,
    ProjectConfig,
    RunOverrides,
    SlotSettings,
    load_config,
    resolve_max_concurrency,
    resolve_slot_settings,
)

Write = Callable[[str], Path]


@dataclass(frozen=True)
class Opts:
    """What `define_eval(...)` hands over (config.EvalOptionsLike)."""

    id: str = "support/refund"
    attempts: int | None = None
    timeout_ms: int | None = None
    pass_rule: object | None = None
    judge: bool | Mapping[str, object] | None = None


LEVELS = ("default", "project", "experiment", "eval", "flag")


def _resolve(write_config: Write, level: str, setting: str, values: Mapping[str, Any]) -> SlotSettings:
    """Set `setting` at every level up to `level` (each with its own value) and resolve."""
    upto = LEVELS[: LEVELS.index(level) + 1]
    project_line = f"{setting} = {json.dumps(values['project'])}\n" if "project" in upto else ""
    experiment_line = f"{setting} = {json.dumps(values['experiment'])}\n" if "experiment" in upto else ""
    project = load_config(cwd=write_config(f"[project]\n{project_line}[experiments.x]\n{experiment_line}"))
    opts = Opts(**{setting: values["eval"]}) if "eval" in upto else Opts()
    flags = RunOverrides(**{setting: values["flag"]}) if "flag" in upto else RunOverrides()
    return resolve_slot_settings(project, project.experiments["x"], opts, flags)


@pytest.mark.parametrize(
    ("level", "expected"), [("default", 1), ("project", 2), ("experiment", 3), ("eval", 4), ("flag", 5)]
)
def test_attempts_take_the_highest_level_that_sets_them(
    write_config: Write, level: str, expected: int
) -> None:
    values = {"project": 2, "experiment": 3, "eval": 4, "flag": 5}
    assert _resolve(write_config, level, "attempts", values).attempts == expected


@pytest.mark.parametrize(
    ("level", "expected"),
    [("default", None), ("project", 2000), ("experiment", 3000), ("eval", 4000), ("flag", 5000)],
)
def test_timeout_takes_the_highest_level_that_sets_it(
    write_config: Write, level: str, expected: int | None
) -> None:
    values = {"project": 2000, "experiment": 3000, "eval": 4000, "flag": 5000}
    assert _resolve(write_config, level, "timeout_ms", values).timeout_ms == expected


@pytest.mark.parametrize(
    ("level", "expected"), [("default", "any"), ("project", "all"), ("experiment", 0.5), ("eval", "any")]
)
def test_pass_rule_takes_the_highest_level_that_sets_it(
    write_config: Write, level: str, expected: object
) -> None:
    values = {"project": "all", "experiment": 0.5, "eval": "any"}
    assert _resolve(write_config, level, "pass_rule", values).pass_rule == expected


def test_a_lower_level_still_applies_when_a_higher_one_is_silent(write_config: Write) -> None:
    project = load_config(cwd=write_config("[project]\nattempts = 2\n[experiments.x]\ntimeout_ms = 50\n"))
    settings = resolve_slot_settings(project, project.experiments["x"], Opts(pass_rule="all"), RunOverrides())
    assert (settings.attempts, settings.timeout_ms, settings.pass_rule) == (2, 50, "all")
    assert settings.attempts >= 1  # the pair's settings resolved (ids live on the slot, not here)


JUDGE_VALUES: dict[str, dict[str, object]] = {
    "model": {"project": "p-model", "experiment": "x-model", "eval": "e-model"},
    "base_url": {
        "project": "https://p.example/v1",
        "experiment": "https://x.example/v1",
        "eval": "https://e.example/v1",
    },
    "api_key_env": {"project": "P_KEY", "experiment": "X_KEY", "eval": "E_KEY"},
    "timeout_ms": {"project": 1000, "experiment": 2000, "eval": 3000},
    "max_retries": {"project": 0, "experiment": 1, "eval": 5},
}
JUDGE_DEFAULTS = {
    "model": None,
    "base_url": "https://api.openai.com/v1",
    "api_key_env": "OPENAI_API_KEY",
    "timeout_ms": 180000,
    "max_retries": 3,
}


def _judge(write_config: Write, field: str, level: str) -> JudgeSettings:
    values = JUDGE_VALUES[field]
    upto = LEVELS[: LEVELS.index(level) + 1]
    text = "[judge]\n"
    if "project" in upto:
        text += f"{field} = {json.dumps(values['project'])}\n"
    text += "[experiments.x.judge]\n"
    if "experiment" in upto:
        text += f"{field} = {json.dumps(values['experiment'])}\n"
    project = load_config(cwd=write_config(text))
    declared: bool | dict[str, object] = {field: values["eval"]} if "eval" in upto else True
    settings = resolve_slot_settings(project, project.experiments["x"], Opts(judge=declared), RunOverrides())
    assert settings.judge is not None
    return settings.judge


@pytest.mark.parametrize("field", sorted(JUDGE_VALUES))
@pytest.mark.parametrize("level", ["default", "project", "experiment", "eval"])
def test_each_judge_field_takes_the_highest_level_that_sets_it(
    write_config: Write, field: str, level: str
) -> None:
    expected = JUDGE_DEFAULTS[field] if level == "default" else JUDGE_VALUES[field][level]
    assert getattr(_judge(write_config, field, level), field) == expected


def test_an_eval_judge_mapping_overrides_only_the_fields_it_names(write_config: Write) -> None:
    project = load_config(
        cwd=write_config(
            '[judge]\nmodel = "p-model"\napi_key_env = "P_KEY"\ntimeout_ms = 1000\n'
            '[experiments.x.judge]\nbase_url = "https://x.example/v1"\nmodel = "x-model"\n'
        )
    )
    opts = Opts(judge={"model": "e-model"})
    judge = resolve_slot_settings(project, project.experiments["x"], opts, RunOverrides()).judge
    assert judge == JudgeSettings(
        model="e-model",
        base_url="https://x.example/v1",
        api_key_env="P_KEY",
        timeout_ms=1000,
        max_concurrency=8,
        max_retries=3,
    )


def test_judge_max_concurrency_comes_from_the_experiment_then_the_project(
    write_config: Write,
) -> None:
    project = load_config(
        cwd=write_config(
            "[judge]\nmax_concurrency = 2\n[experiments.x.judge]\nmax_concurrency = 3\n[experiments.y]\n"
        )
    )
    on_x = resolve_slot_settings(project, project.experiments["x"], Opts(judge=True), RunOverrides())
    on_y = resolve_slot_settings(project, project.experiments["y"], Opts(judge=True), RunOverrides())
    assert on_x.judge is not None and on_x.judge.max_concurrency == 3
    assert on_y.judge is not None and on_y.judge.max_concurrency == 2


def test_judge_max_concurrency_on_an_eval_is_a_config_error_naming_the_eval(
    write_config: Write,
) -> None:
    project = load_config(cwd=write_config(""))
    with pytest.raises(
        ConfigError, match=r'eval "support/refund": judge max_concurrency cannot be set on an eval'
    ):
        resolve_slot_settings(
            project, project.experiments["default"], Opts(judge={"max_concurrency": 2}), RunOverrides()
        )


def test_an_unknown_judge_field_on_an_eval_names_the_eval_and_suggests(
    write_config: Write,
) -> None:
    project = load_config(cwd=write_config(""))
    with pytest.raises(ConfigError) as caught:
        resolve_slot_settings(
            project, project.experiments["default"], Opts(judge={"modle": "m"}), RunOverrides()
        )
    message = str(caught.value)
    assert 'eval "support/refund"' in message
    assert 'unknown judge field "modle" (did you mean "model"?)' in message


def test_a_bad_judge_value_on_an_eval_names_the_eval_and_the_field(write_config: Write) -> None:
    project = load_config(cwd=write_config(""))
    with pytest.raises(
        ConfigError, match=r'eval "support/refund": judge timeout_ms: expected a positive integer'
    ):
        resolve_slot_settings(
            project, project.experiments["default"], Opts(judge={"timeout_ms": -5}), RunOverrides()
        )


@pytest.mark.parametrize("declared", [None, False])
def test_an_eval_without_a_judge_declaration_gets_no_judge(
    write_config: Write, declared: bool | None
) -> None:
    project = load_config(cwd=write_config('[judge]\nmodel = "m"\n'))
    settings = resolve_slot_settings(
        project, project.experiments["default"], Opts(judge=declared), RunOverrides()
    )
    assert settings.judge is None


def test_judge_true_inherits_everything(write_config: Write) -> None:
    project = load_config(cwd=write_config('[judge]\nmodel = "m"\nmax_retries = 0\n'))
    judge = resolve_slot_settings(
        project, project.experiments["default"], Opts(judge=True), RunOverrides()
    ).judge
    assert judge == JudgeSettings(model="m", max_retries=0)


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("attempts", 0, "attempts: expected an integer from 1 to 1000, got 0"),
        ("attempts", 1001, "attempts: expected an integer from 1 to 1000, got 1001"),
        ("timeout_ms", -1, "timeout_ms: expected a positive integer (milliseconds), got -1"),
        ("pass_rule", 1.5, 'pass_rule: expected "any", "all" or a minimum pass rate'),
    ],
)
def test_invalid_eval_options_are_config_errors_naming_the_eval(
    write_config: Write, field: str, value: Any, fragment: str
) -> None:
    project = load_config(cwd=write_config(""))
    with pytest.raises(ConfigError) as caught:
        resolve_slot_settings(project, project.experiments["default"], Opts(**{field: value}), RunOverrides())
    assert 'eval "support/refund"' in str(caught.value)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("flags", "flag"),
    [
        ({"attempts": 0}, "--attempts"),
        ({"max_concurrency": 0}, "--max-concurrency"),
        ({"timeout_ms": 0}, "--timeout"),
    ],
)
def test_invalid_cli_overrides_name_the_flag(flags: dict[str, int], flag: str) -> None:
    fits = "an integer from 1 to 1000" if flag == "--attempts" else "an integer ≥ 1"
    with pytest.raises(ConfigError, match=f"^{flag}: expected {fits}, got 0"):
        RunOverrides(**flags)


def test_attempts_over_the_bound_are_refused_by_name_and_the_bound_itself_is_taken() -> None:
    with pytest.raises(ConfigError, match=r"^--attempts: expected an integer from 1 to 1000, got 100000000"):
        RunOverrides(attempts=100_000_000)
    assert RunOverrides(attempts=1000).attempts == 1000


def _project(write_config: Write, text: str) -> ProjectConfig:
    return load_config(cwd=write_config(text))


def test_max_concurrency_resolves_flag_then_experiment_then_project(write_config: Write) -> None:
    project = _project(
        write_config,
        "[project]\nmax_concurrency = 6\n[experiments.x]\nmax_concurrency = 2\n[experiments.y]\n",
    )
    x, y = project.experiments["x"], project.experiments["y"]
    assert resolve_max_concurrency(project, x, RunOverrides()) == 2
    assert resolve_max_concurrency(project, y, RunOverrides()) == 6
    assert resolve_max_concurrency(project, x, RunOverrides(max_concurrency=9)) == 9
    assert resolve_max_concurrency(_project(write_config, ""), y, None) == 4
