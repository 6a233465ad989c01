"""Adapters: the one pluggable seam to systems under test.

`load_adapter` turns an experiment's `adapter = "..."` into an Adapter: a `module:attr`
reference to a `define_adapter(...)` object, or the name of a built-in adapter that reads its
settings from the experiment's `options` table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ..authoring import Adapter

#: Built-in adapters by name: each is a factory taking the experiment's options.
BUILTINS: dict[str, str] = {
    "python": "niceeval_cli.adapters._python:build",
    "command": "niceeval_cli.adapters._command:build",
    "http": "niceeval_cli.adapters._http:build",
    "openai-chat": "niceeval_cli.adapters._openai_chat:build",
}


class AdapterLoadError(Exception):
    """The experiment's adapter cannot be loaded (a configuration error, exit 2)."""


def _import_attr(reference: str) -> Any:
    module_name, _, attr = reference.partition(":")
    module = importlib.import_module(module_name)
    value: Any = module
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def load_adapter(spec: str, options: Mapping[str, Any], experiment_id: str) -> Adapter:
    where = f"[experiments.{experiment_id}] adapter = {spec!r}"
    if spec in BUILTINS:
        try:
            build: Callable[[Mapping[str, Any], str], Adapter] = _import_attr(BUILTINS[spec])
        except (ImportError, AttributeError) as exc:  # pragma: no cover - packaging bug
            raise AdapterLoadError(f"{where}: built-in adapter unavailable ({exc})") from None
        return build(options, experiment_id)
    if ":" not in spec:
        raise AdapterLoadError(
            f"{where}: expected a built-in adapter ({', '.join(BUILTINS)}) or a 'module:attr' reference "
            "to a define_adapter(...) object"
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
