"""Finding and loading niceeval.toml: walking up, defaults, experiments, frozen results."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from niceeval_cli.config import (
    ConfigError,
    RunOverrides,
    find_config,
    load_config,
    resolve_slot_settings,
)

SPEC_EXAMPLE = """
[project]
evals = ["evals"]
store = ".niceeval/results.db"
attempts = 1
max_concurrency = 4
timeout_ms = 120000

[judge]
model = "gpt-4o-mini"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
timeout_ms = 180000
max_concurrency = 8
max_retries = 3

[experiments.local]
description = "Simulated support app"
adapter = "examples.support.app:adapter"
model = "gpt-4o-mini"
evals = ["support/", "directions/"]
tags = ["smoke"]
attempts = 3
pass_rule = "any"
timeout_ms = 60000
[experiments.local.options]
speed = 2
[experiments.local.judge]
model = "gpt-4o"
"""

Write = Callable[[str], Path]


def test_find_config_walks_up_from_a_nested_folder(tmp_path: Path) -> None:
    (tmp_path / "niceeval.toml").write_text("", encoding="utf-8")
    nested = tmp_path / "evals" / "support" / "deep"
    nested.mkdir(parents=True)
    assert find_config(nested) == (tmp_path / "niceeval.toml").resolve()


def test_find_config_prefers_the_nearest_file(tmp_path: Path) -> None:
    (tmp_path / "niceeval.toml").write_text("", encoding="utf-8")
    inner = tmp_path / "sub"
    inner.mkdir()
    (inner / "niceeval.toml").write_text("", encoding="utf-8")
    assert find_config(inner) == (inner / "niceeval.toml").resolve()
    assert find_config(tmp_path) == (tmp_path / "niceeval.toml").resolve()


def test_load_config_finds_the_file_above_the_working_directory(write_config: Write) -> None:
    root = write_config("[project]\nattempts = 2\n")
    nested = root / "evals" / "support"
    nested.mkdir(parents=True)
    project = load_config(cwd=nested)
    assert project.file == (root / "niceeval.toml").resolve()
    assert project.root == root.resolve()
    assert project.attempts == 2


def test_without_any_file_the_defaults_apply_at_the_working_directory(tmp_path: Path) -> None:
    project = load_config(cwd=tmp_path)
    assert project.file is None
    assert project.root == tmp_path.resolve()
    assert project.eval_roots == (tmp_path.resolve() / "evals",)
    assert project.store == tmp_path.resolve() / ".niceeval" / "results.db"
    assert (project.attempts, project.max_concurrency, project.timeout_ms, project.pass_rule) == (
        1,
        4,
        None,
        "any",
    )
    assert list(project.experiments) == ["default"]


def test_no_experiment_tables_make_one_implicit_default_experiment(
    write_config: Write,
) -> None:
    project = load_config(cwd=write_config("[project]\nattempts = 5\ntimeout_ms = 1000\n"))
    assert list(project.experiments) == ["default"]
    default = project.experiments["default"]
    settings = resolve_slot_settings(project, default, _Opts("e"), RunOverrides())
    assert (settings.attempts, settings.timeout_ms) == (5, 1000)


def test_paths_resolve_relative_to_the_config_file(write_config: Write) -> None:
    root = write_config('[project]\nevals = ["evals", "more/evals"]\nstore = "data/r.db"\n')
    project = load_config(cwd=root)
    assert project.eval_roots == (root.resolve() / "evals", root.resolve() / "more" / "evals")
    assert project.store == root.resolve() / "data" / "r.db"


def test_the_spec_example_loads_completely(write_config: Write) -> None:
    project = load_config(cwd=write_config(SPEC_EXAMPLE))
    local = project.experiments["local"]
    assert local.description == "Simulated support app"
    assert local.adapter == "examples.support.app:adapter"
    assert local.evals == ("support/", "directions/")
    assert local.tags == ("smoke",)
    assert (local.attempts, local.pass_rule, local.timeout_ms) == (3, "any", 60000)
    assert dict(local.options) == {"speed": 2}
    assert local.judge.model == "gpt-4o"
    assert project.judge.max_concurrency == 8


def test_experiment_ids_with_a_slash_are_quoted_keys_and_keep_file_order(
    write_config: Write,
) -> None:
    root = write_config(
        '[experiments."models/openai"]\nmodel = "gpt-4o"\n'
        "[experiments.local]\n"
        '[experiments."models/anthropic"]\nmodel = "claude"\n'
    )
    project = load_config(cwd=root)
    assert list(project.experiments) == ["models/openai", "local", "models/anthropic"]
    assert project.experiments["models/openai"].id == "models/openai"
    assert project.experiments["models/anthropic"].model == "claude"


def test_an_explicit_config_path_is_used_as_given(tmp_path: Path) -> None:
    other = tmp_path / "conf" / "alt.toml"
    other.parent.mkdir()
    other.write_text("[project]\nattempts = 7\n", encoding="utf-8")
    project = load_config(Path("conf/alt.toml"), cwd=tmp_path)
    assert project.attempts == 7
    assert project.root == other.parent.resolve()


def test_a_missing_explicit_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: configuration file not found"):
        load_config(tmp_path / "missing.toml")


def test_run_settings_are_not_read_from_environment_variables(
    write_config: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROJECT", '{"attempts": 9}')
    monkeypatch.setenv("ATTEMPTS", "9")
    monkeypatch.setenv("NICEEVAL_ATTEMPTS", "9")
    project = load_config(cwd=write_config(""))
    assert project.attempts == 1


def test_loaded_models_are_frozen(write_config: Write) -> None:
    project = load_config(cwd=write_config(SPEC_EXAMPLE))
    local = project.experiments["local"]
    with pytest.raises(ValidationError):
        project.attempts = 2  # type: ignore[misc]
    with pytest.raises(ValidationError):
        local.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        project.experiments["new"] = local  # type: ignore[index]
    with pytest.raises(TypeError):
        local.options["speed"] = 3  # type: ignore[index]
    settings = resolve_slot_settings(project, local, _Opts("e", judge=True), RunOverrides())
    with pytest.raises(ValidationError):
        settings.attempts = 9  # type: ignore[misc]
    assert settings.judge is not None
    with pytest.raises(ValidationError):
        settings.judge.model = "x"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        RunOverrides().attempts = 3  # type: ignore[misc]


def test_nested_options_are_read_only_but_a_plain_copy_is_available(
    write_config: Write,
) -> None:
    root = write_config("[experiments.a.options]\nheaders = {x = 1}\nlist = [1, 2]\n")
    experiment = load_config(cwd=root).experiments["a"]
    with pytest.raises(TypeError):
        experiment.options["headers"]["x"] = 2  # type: ignore[index]
    plain = experiment.options_dict()
    assert plain == {"headers": {"x": 1}, "list": [1, 2]}
    plain["headers"]["x"] = 2
    assert experiment.options["headers"]["x"] == 1


@dataclass(frozen=True)
class _Opts:
    id: str
    attempts: int | None = None
    timeout_ms: int | None = None
    pass_rule: object | None = None
    judge: bool | Mapping[str, object] | None = None
