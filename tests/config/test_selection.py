"""Which experiments `-e` selects and which evals an experiment covers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from niceeval_cli.config import (
    ConfigError,
    ProjectConfig,
    experiment_selects_eval,
    load_config,
    select_experiments,
)

Write = Callable[[str], Path]

EXPERIMENTS = """
[experiments.local]
evals = ["support/", "directions/"]
[experiments."models/openai"]
tags = ["smoke", "nightly"]
[experiments."models/anthropic"]
"""


@pytest.fixture
def project(write_config: Write) -> ProjectConfig:
    return load_config(cwd=write_config(EXPERIMENTS))


def _ids(project: ProjectConfig, patterns: list[str]) -> list[str]:
    return [experiment.id for experiment in select_experiments(project, patterns)]


def test_no_pattern_selects_every_experiment_in_file_order(project: ProjectConfig) -> None:
    assert _ids(project, []) == ["local", "models/openai", "models/anthropic"]


def test_an_exact_id_selects_one_experiment(project: ProjectConfig) -> None:
    assert _ids(project, ["models/openai"]) == ["models/openai"]


def test_an_id_prefix_selects_a_group_in_file_order(project: ProjectConfig) -> None:
    assert _ids(project, ["models/", "local"]) == ["local", "models/openai", "models/anthropic"]


def test_an_id_without_its_slash_selects_no_group(project: ProjectConfig) -> None:
    with pytest.raises(ConfigError) as caught:
        _ids(project, ["models"])
    assert str(caught.value) == (
        'no experiment matches "models" (an id selects that one experiment; "models/" selects the group of ids '
        'starting with it); known experiments: local, models/openai, models/anthropic.'
    )
    with pytest.raises(ConfigError):
        _ids(project, ["loc"])  # a shorter id is no prefix of a longer one


def test_an_unknown_pattern_is_a_config_error_listing_known_ids(project: ProjectConfig) -> None:
    with pytest.raises(ConfigError) as caught:
        _ids(project, ["remote"])
    assert str(caught.value) == (
        'no experiment matches "remote"; known experiments: local, models/openai, models/anthropic.'
    )


@pytest.mark.parametrize(
    ("eval_id", "selected"),
    [("support/refund", True), ("directions/ask", True), ("billing/refund", False), ("support", False)],
)
def test_eval_prefixes_limit_the_evals_of_an_experiment(
    project: ProjectConfig, eval_id: str, selected: bool
) -> None:
    assert experiment_selects_eval(project.experiments["local"], eval_id, []) is selected


@pytest.mark.parametrize(
    ("tags", "selected"), [(["smoke"], True), (["slow", "nightly"], True), (["slow"], False), ([], False)]
)
def test_an_experiment_tag_filter_needs_one_matching_tag(
    project: ProjectConfig, tags: list[str], selected: bool
) -> None:
    assert experiment_selects_eval(project.experiments["models/openai"], "any/eval", tags) is selected


def test_an_experiment_without_filters_covers_every_eval(project: ProjectConfig) -> None:
    assert experiment_selects_eval(project.experiments["models/anthropic"], "x/y", [])
