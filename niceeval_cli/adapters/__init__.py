"""Adapters: the one pluggable seam to systems under test.

`load_adapter` turns an experiment's `adapter = "..."` into an Adapter: a `module:attr`
reference to a `define_adapter(...)` object, or the name of an adapter in the `ADAPTERS`
registry (the built-ins register below; each reads its settings from the experiment's `options`
table). `preflight_adapters` checks each distinct adapter's endpoint once before dispatch.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._errors import ExitCode, NiceEvalError
from .._registry import ADAPTERS
from ..authoring import Adapter, AdapterFactory
from ._preflight import preflight_adapters

__all__ = ["ADAPTERS", "AdapterLoadError", "check_experiment", "load_adapter", "preflight_adapters"]


_BARE = re.compile(r"[A-Za-z0-9_-]+")  # a TOML bare key needs no quotes


class AdapterLoadError(NiceEvalError):
    """The experiment's adapter cannot be loaded (a configuration error, exit 2)."""

    exit_code = ExitCode.USAGE


def _builtin(module: str) -> AdapterFactory:
    """A factory importing its module on first use, so loading a config does not import httpx."""

    def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> Adapter:
        factory: AdapterFactory = importlib.import_module(f"{__name__}.{module}").build
        return factory(options, experiment_id, root)

    build.__qualname__ = f"{module}.build"
    return build


for _name, _module in (("python", "_python"), ("command", "_command"), ("http", "_http"),
                       ("openai-chat", "_openai_chat"), ("claude-code", "_claude_code"), ("codex", "_codex")):
    ADAPTERS.register(_name, _builtin(_module))


def _import_attr(reference: str) -> Any:
    module_name, _, attr = reference.partition(":")
    module = importlib.import_module(module_name)
    value: Any = module
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def check_experiment(adapter: Adapter, experiment_id: str, model: str | None) -> None:
    """What the adapter needs from its experiment, checked once while planning (exit 2 when missing)."""
    if adapter.requires_model and not model:
        shown = experiment_id if _BARE.fullmatch(experiment_id) else f'"{experiment_id}"'
        raise AdapterLoadError(
            f"[experiments.{shown}]: the {adapter.name!r} adapter calls the experiment's model, and this "
            f'experiment names none; set model = "..." in [experiments.{shown}] (e.g. model = "gpt-4o-mini")'
        )
    if adapter.requires_model:  # its preflight checks that the endpoint serves this model
        adapter.preflight_model = model


def load_adapter(spec: str, options: Mapping[str, Any], experiment_id: str, *, root: Path) -> Adapter:
    """The experiment's adapter. `root` is the project root: a built-in adapter's relative paths
    (a command's argv and `cwd`, a coding agent's `binary`) start there, never at the directory
    `niceeval` was typed in, so the program that runs is the one the fingerprint hashed."""
    where = f"[experiments.{experiment_id}] adapter = {spec!r}"
    if spec in ADAPTERS:
        return ADAPTERS.get(spec)(options, experiment_id, root)
    if ":" not in spec:
        raise AdapterLoadError(
            f"{where}: expected a built-in adapter ({', '.join(ADAPTERS.names())}) or a 'module:attr' "
            "reference to a define_adapter(...) object"
        )
    try:
        value = _import_attr(spec)
    except Exception as exc:
        raise AdapterLoadError(f"{where}: cannot import it: {type(exc).__name__}: {exc}") from None
    if isinstance(value, Adapter):
        return value
    adapter = getattr(value, "adapter", None)  # e.g. an object holding `adapter` and `evaluation`
    if isinstance(adapter, Adapter):
        return adapter
    raise AdapterLoadError(
        f"{where}: {spec} is a {type(value).__name__}, not an adapter made with define_adapter(...)"
    )
