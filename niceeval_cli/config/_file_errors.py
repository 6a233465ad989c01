"""A `ValidationError` of the file turned into one paragraph naming file, table, key and what fits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._bounds import MAX_ATTEMPTS, MAX_JUDGE_SAMPLES, MAX_PRICE_PER_MTOK
from ._schema import PASS_RULE_EXPECTED, TABLE_MODELS, ProjectTable, adapter_expected
from ._wording import key_path, looks_like_secret, quoted, show, strip_value_error, suggest, table_name, toml_key

# What each key expects, in the words an error message uses.
_EXPECTED = {
    "attempts": f"an integer from 1 to {MAX_ATTEMPTS}",
    "max_attempts": f"an integer from 1 to {MAX_ATTEMPTS}",
    "max_concurrency": "an integer ≥ 1",
    **dict.fromkeys(("input_per_mtok", "output_per_mtok", "cache_read_per_mtok"),
                    f"a number of US dollars per million tokens from 0 to {MAX_PRICE_PER_MTOK:,}"),
    "timeout_ms": "a positive integer (milliseconds)",
    "max_retries": "an integer ≥ 0",
    "samples": f"an integer from 1 to {MAX_JUDGE_SAMPLES}",
    "min_agreement": "a number in (0, 1], such as 0.8",
    "min_human_kappa": "a number in [-1, 1], such as 0.6",
    "min_labels": "an integer ≥ 1",
    "pass_rule": PASS_RULE_EXPECTED,
    "evals": "a non-empty list of strings",
    "tags": "a list of strings",
    "store": "a path (string)",
    "description": "a string",
    "model": "a non-empty string",
    "api_key_env": "the NAME of an environment variable (letters, digits, _), not a key",
    "base_url": "an http:// or https:// URL",
    "options": "a table",
    "judge": "a table",
    "sandbox": "a table",
    "kind": '"local" or "docker"',
    "template": "a directory path (string), relative to the project root",
    "prepare": "a list of commands, each a shell string or a non-empty list of strings",
    "image": "a local Docker image name or id (non-empty string)",
    "network": 'a Docker network name such as "none" or "bridge"',
    "cpus": "a positive number",
    "memory": 'a Docker memory limit such as "512m" or "2g"',
    "user": 'a user for the container such as "1000" or "1000:1000"',
    "workdir": "an absolute path inside the container",
    "executor": "an executor name (a string: \"inprocess\" or \"ray\")",
    "ray_address": "a Ray cluster address (a string, e.g. \"127.0.0.1:6379\" or \"ray://head:10001\")",
    "inputs": 'a non-empty list of globs relative to the project root, such as ["app/**/*.py", "prompts/*.md"]',
    "version": 'a non-empty string naming the system under test\'s version, such as "v3"',
    "version_command": 'a shell command (non-empty string) printing the version, such as "git rev-parse HEAD"',
}
_ELEMENT_EXPECTED = {"string_type": "a string", "string_too_short": "a non-empty string"}


def file_errors(path: Path, error: ValidationError, raw: Mapping[str, Any]) -> str:
    problems: list[str] = []
    for item in error.errors(include_url=False):
        problem = _file_problem(tuple(item["loc"]), item, raw)
        if problem not in problems:
            problems.append(problem)
    return f"{path}: " + " ".join(problems)


def _file_problem(loc: tuple[Any, ...], item: Any, raw: Mapping[str, Any]) -> str:
    table, kind, key, rest = _split_loc(loc)
    if kind is None:  # the top level of the file
        if key is None:
            return "the file must contain TOML tables."
        return unknown_top_level(str(key), raw.get(str(key)))
    shown_table = f"[{table_name(table)}]"
    if key is None:
        return f"{shown_table} must be a table, got {show(item['input'])}."
    if item["type"] == "extra_forbidden" and not rest:
        allowed = list(TABLE_MODELS[kind].model_fields)
        return f"{shown_table}: unknown key {quoted(key)}{suggest(key, allowed)}; " + (
            f"allowed keys: {', '.join(allowed)}."
        )
    expected = expected_text(key, item, element=bool(rest))
    shown = "" if key == "headers" else given(item["input"])  # a header table may hold a pasted key
    return f"{shown_table} {key_path(key, rest)}: {expected}{shown}."


def given(value: object) -> str:
    """`, got <value>`; a value that looks like a pasted key is never repeated."""
    return " (the value is not shown)" if looks_like_secret(value) else f", got {show(value)}"


def _split_loc(loc: tuple[Any, ...]) -> tuple[tuple[str, ...], str | None, str | None, tuple[Any, ...]]:
    """(table path, table kind, key, index path below the key) of a validation error."""
    if not loc or loc[0] not in ("project", "judge", "sandbox", "run", "stats", "experiments", "prices"):
        return (), None, (str(loc[0]) if loc else None), ()
    head = str(loc[0])
    if head == "prices":  # [prices."MODEL"]
        if len(loc) < 3:
            return ((head, str(loc[1])) if len(loc) > 1 else (head,)), "price", None, ()
        return (head, str(loc[1])), "price", str(loc[2]), tuple(loc[3:])
    if head in ("project", "judge", "sandbox", "run", "stats"):
        return (head,), head, (str(loc[1]) if len(loc) > 1 else None), tuple(loc[2:])
    if len(loc) < 2:
        return ("experiments",), "experiment", None, ()
    experiment = ("experiments", str(loc[1]))
    if len(loc) < 3:
        return experiment, "experiment", None, ()
    if loc[2] in ("judge", "sandbox") and len(loc) > 3:
        return (*experiment, str(loc[2])), str(loc[2]), str(loc[3]), tuple(loc[4:])
    return experiment, "experiment", str(loc[2]), tuple(loc[3:])


def unknown_top_level(key: str, value: object) -> str:
    tables = ["project", "judge", "sandbox", "run", "stats", "experiments", "prices"]
    allowed = "allowed tables: [project], [judge], [sandbox], [run], [stats], [experiments.<id>], [prices.<model>]"
    if isinstance(value, Mapping):
        hint = suggest(key, tables, quote=lambda name: f"[{name}]")
        return f"unknown top-level table [{toml_key(key)}]{hint}; {allowed}."
    if key in ProjectTable.model_fields:
        return f"unknown top-level key {json.dumps(key)} (it belongs in [project]); {allowed}."
    return f"unknown top-level key {quoted(key)}; {allowed}."


def expected_text(key: str, item: Any, *, element: bool = False) -> str:
    """`expected ...` for one validation error; `element` when it is about one array item."""
    if item["type"] == "value_error":
        return strip_value_error(item["msg"])
    if element and item["type"] in _ELEMENT_EXPECTED:
        return f"expected {_ELEMENT_EXPECTED[item['type']]}"
    if key == "adapter":
        return f"expected {adapter_expected()}"
    if key in _EXPECTED:
        return f"expected {_EXPECTED[key]}"
    return f"expected a valid value ({strip_value_error(item['msg']).lower()})"
