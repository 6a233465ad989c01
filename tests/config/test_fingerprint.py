"""Fingerprints: stable for equal inputs, sensitive to what can change a result, blind to the rest."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli._fingerprint import (
    canonical_json,
    changed_parts,
    eval_options_view,
    fingerprint,
    fingerprint_parts,
)
from niceeval_cli._states import EvalKind
from niceeval_cli.config import (
    ExperimentConfig,
    ProjectConfig,
    RunOverrides,
    load_config,
    resolve_slot_settings,
)

Write = Callable[[str], Path]

SECRET = "sk-test-secret-value-0123456789abcdef"

CONFIG = """
[judge]
model = "judge-small"
api_key_env = "NICEEVAL_TEST_JUDGE_KEY"
[experiments.local]
description = "first wording"
model = "gpt-4o-mini"
max_concurrency = 2
[experiments.local.options]
speed = 2
nested = {b = 1, a = [1, 2]}
"""


@dataclass(frozen=True)
class Opts:
    id: str = "support/refund"
    attempts: int | None = None
    timeout_ms: int | None = None
    pass_rule: object | None = None
    judge: bool | Mapping[str, object] | None = True


def _parts(
    project: ProjectConfig,
    experiment: ExperimentConfig,
    opts: Opts | None = None,
    *,
    ordinal: int = 0,
    source: str = "a" * 64,
    tags: tuple[str, ...] = ("smoke",),
) -> dict[str, Any]:
    """The parts the runner builds for one slot, from the frozen slot settings."""
    opts = opts or Opts()
    settings = resolve_slot_settings(project, experiment, opts, RunOverrides())
    return fingerprint_parts(
        eval_id=opts.id,
        eval_kind=EvalKind.PASS,
        sources={"evals/support.py": source},
        eval_options=eval_options_view(tags=tags, judge=opts.judge),
        experiment_id=experiment.id,
        adapter_identity={"name": "support-review", "version": "1"},
        model=experiment.model,
        options=experiment.options,
        judge=None if settings.judge is None else settings.judge.fingerprint_view(),
        judge_version="judge-v1",
        ordinal=ordinal,
    )


@pytest.fixture
def project(write_config: Write) -> ProjectConfig:
    return load_config(cwd=write_config(CONFIG))


def test_the_same_inputs_give_the_same_fingerprint(project: ProjectConfig) -> None:
    local = project.experiments["local"]
    first, second = fingerprint(_parts(project, local)), fingerprint(_parts(project, local))
    assert first == second
    assert len(first) == 64 and int(first, 16) >= 0


def test_the_fingerprint_is_sha256_of_sorted_compact_json() -> None:
    import hashlib

    parts = {"b": 1, "a": {"d": "é", "c": [1, 2]}}
    text = '{"a":{"c":[1,2],"d":"é"},"b":1}'
    assert canonical_json(parts) == text
    assert fingerprint(parts) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_key_order_does_not_matter(project: ProjectConfig) -> None:
    parts = _parts(project, project.experiments["local"])
    reordered = dict(reversed(list(parts.items())))
    reordered["options"] = dict(reversed(list(parts["options"].items())))
    assert fingerprint(reordered) == fingerprint(parts)


def test_a_stored_and_reloaded_set_of_parts_hashes_the_same(project: ProjectConfig) -> None:
    parts = _parts(project, project.experiments["local"])
    reloaded = json.loads(canonical_json(parts))
    assert fingerprint(reloaded) == fingerprint(parts)
    assert changed_parts(reloaded, parts) == []


def test_a_different_judge_model_changes_the_fingerprint_and_names_the_judge_part(
    project: ProjectConfig,
) -> None:
    local = project.experiments["local"]
    before = _parts(project, local)
    after = _parts(project, local, Opts(judge={"model": "judge-large"}))
    assert fingerprint(before) != fingerprint(after)
    assert changed_parts(before, after) == ["eval_options", "judge"]


def test_the_ordinal_changes_the_fingerprint(project: ProjectConfig) -> None:
    local = project.experiments["local"]
    before, after = _parts(project, local, ordinal=0), _parts(project, local, ordinal=1)
    assert fingerprint(before) != fingerprint(after)
    assert changed_parts(before, after) == ["ordinal"]


def test_the_source_hash_changes_the_fingerprint(project: ProjectConfig) -> None:
    local = project.experiments["local"]
    before, after = _parts(project, local, source="a" * 64), _parts(project, local, source="b" * 64)
    assert fingerprint(before) != fingerprint(after)
    assert changed_parts(before, after) == ["source:evals/support.py"]


def test_experiment_model_and_options_change_the_fingerprint(project: ProjectConfig) -> None:
    local = project.experiments["local"]
    other = local.model_copy(update={"model": "gpt-4o", "options": {"speed": 3}})
    other = ExperimentConfig.model_validate(other.model_dump())
    assert changed_parts(_parts(project, local), _parts(project, other)) == ["model", "options"]


def test_description_and_concurrency_never_change_the_fingerprint(write_config: Write) -> None:
    first = load_config(cwd=write_config(CONFIG))
    edited = (
        CONFIG.replace('"first wording"', '"reworded"')
        .replace("max_concurrency = 2", "max_concurrency = 9")
        .replace("[judge]\n", "[judge]\nmax_concurrency = 1\n")
    )
    second = load_config(cwd=write_config(edited))
    assert first.experiments["local"].description != second.experiments["local"].description
    assert first.judge.max_concurrency != second.judge.max_concurrency
    before = _parts(first, first.experiments["local"])
    after = _parts(second, second.experiments["local"])
    assert fingerprint(before) == fingerprint(after)


def test_attempt_timeout_and_pass_rule_do_not_enter_the_fingerprint(project: ProjectConfig) -> None:
    local = project.experiments["local"]
    before = _parts(project, local, Opts(timeout_ms=1000, pass_rule="any", attempts=1))
    after = _parts(project, local, Opts(timeout_ms=9000, pass_rule="all", attempts=5))
    assert fingerprint(before) == fingerprint(after)


def test_the_api_key_value_never_enters_the_parts_but_its_name_does(
    project: ProjectConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NICEEVAL_TEST_JUDGE_KEY", SECRET)
    text = canonical_json(_parts(project, project.experiments["local"]))
    assert SECRET not in text
    assert "NICEEVAL_TEST_JUDGE_KEY" in text


def test_eval_options_view_is_tags_and_the_judge_declaration() -> None:
    assert eval_options_view(tags=["b", "a", "b"], judge=None) == {"tags": ["a", "b"], "judge": None}
    assert eval_options_view(tags=[], judge=False) == {"tags": [], "judge": None}
    assert eval_options_view(tags=[], judge={}) == eval_options_view(tags=[], judge=True)
    assert eval_options_view(tags=[], judge={"model": "m"}) == {"tags": [], "judge": {"model": "m"}}


def test_values_without_a_stable_json_text_are_refused() -> None:
    with pytest.raises(TypeError):
        canonical_json({"x": object()})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_changed_parts_names_added_and_removed_parts_too() -> None:
    assert changed_parts({"eval_id": "a", "extra": 1}, {"eval_id": "a", "judge": None}) == ["judge", "extra"]
