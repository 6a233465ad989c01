"""What every built-in adapter shares: validated options, reply shapes, secrets, error text.

A built-in adapter is configured by the experiment's `[experiments.<id>.options]` table. Each
one declares a pydantic model (`extra="forbid"`, no coercion) and `parse_options` turns any
mistake into one `AdapterLoadError` paragraph naming that table and the key, so the CLI can
print it as a configuration error (exit 2) without a traceback.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .._credentials import env_name_problem
from .._redact import redact
from ..authoring import Turn, turn_from_reply
from ..integrations import turn_from_framework
from . import AdapterLoadError

M = TypeVar("M", bound="AdapterOptions")

#: How much of a failing process's stderr (or an HTTP error body) an error message keeps.
TAIL_CHARS = 2000
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class AdapterOptions(BaseModel):
    """Base of every built-in adapter's options: unknown keys and wrong types are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def options_table(experiment_id: str) -> str:
    """`[experiments.<id>.options]` with the id quoted the way TOML needs it."""
    shown = experiment_id if _BARE_KEY.fullmatch(experiment_id) else json.dumps(experiment_id, ensure_ascii=False)
    return f"[experiments.{shown}.options]"


def _key_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(the table)"


def _did_you_mean(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """` (did you mean 'callable'?)` for a misspelt key of the options table (or of a table in it)."""
    fields: Any = model.model_fields
    for part in loc[:-1]:  # down to the table the unknown key sits in
        annotation = getattr(fields.get(part) if isinstance(part, str) else None, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        fields = annotation.model_fields
    word = str(loc[-1])
    folded = {name.lower(): name for name in fields}
    close = [folded[word.lower()]] if word.lower() in folded else difflib.get_close_matches(word, list(fields), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def parse_options(model: type[M], options: Mapping[str, Any], experiment_id: str, adapter: str) -> M:
    """Validate `options` for the built-in `adapter`; any mistake → one AdapterLoadError paragraph."""
    table = options_table(experiment_id)
    options = dict(options)
    if "stream" in options and "stream" not in model.model_fields:
        if options["stream"] is not False:  # `stream = false` says what every built-in does anyway
            raise AdapterLoadError(
                f"{table} for the built-in {adapter!r} adapter: key 'stream': the {adapter} adapter does not "
                "stream; it reads each reply whole (a turn is recorded once its reply is complete, with its "
                "usage and cost), so stream = true cannot be honoured. Remove the key (or set stream = false)."
            )
        del options["stream"]
    try:
        return model.model_validate(options)
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False):
            key = _key_path(tuple(item["loc"]))
            if item["type"] == "extra_forbidden":
                problems.append(f"unknown key {key!r}{_did_you_mean(model, tuple(item['loc']))}")
            elif item["type"] == "missing":
                problems.append(f"key {key!r} is required")
            else:
                message = str(item["msg"]).removeprefix("Value error, ")
                problems.append(f"key {key!r}: {message}")
        allowed = ", ".join(model.model_fields)
        raise AdapterLoadError(
            f"{table} for the built-in {adapter!r} adapter: {'; '.join(problems)}. "
            f"Allowed keys: {allowed}."
        ) from None


def load_error(experiment_id: str, adapter: str, key: str, problem: str) -> AdapterLoadError:
    """A one-paragraph load error about one key of the options table."""
    return AdapterLoadError(
        f"{options_table(experiment_id)} for the built-in {adapter!r} adapter: key {key!r}: {problem}."
    )


def check_env_name(value: str) -> str:
    """An `api_key_env`-style option: a variable's NAME; a pasted key is refused without echoing it."""
    problem = env_name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def check_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return value


def read_env(name: str) -> str | None:
    """The variable's value, or None when it is unset or empty (a missing secret, never '')."""
    return os.environ.get(name) or None


def tail(text: str, secrets: list[str], limit: int = TAIL_CHARS) -> str:
    """The redacted end of `text`, marked when something was cut off."""
    text = redact(text.strip(), secrets)
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit} chars before] {text[-limit:]}"


def reply_to_turn(message: str, reply: object, who: str, observes: tuple[str, ...] = ()) -> Turn:
    """A reply as text, a Turn, or a dict {"message", "events"?, "status"?, "usage"?, "data"?} → a Turn.

    Text observes nothing; a dict that carries `events` observes what the adapter declares.
    """
    if isinstance(reply, str):
        return Turn(input=message, message=reply, observed=frozenset())
    if isinstance(reply, Turn):
        return reply
    framework = turn_from_framework(reply, message)  # a pydantic-ai / Agents SDK / LangGraph result
    if framework is not None:
        return framework
    if isinstance(reply, Mapping):
        try:
            return turn_from_reply(message, reply, observes)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{who} returned a dict with {exc}" if str(exc).startswith("unknown key")
                            else f"{who} returned a dict: {exc}") from None
    raise TypeError(
        f"{who} returned {type(reply).__name__}; expected text, a Turn or a dict "
        '{"message": ..., "events"?: [...], "status"?: ..., "usage"?: {...}, "data"?: ...}, '
        "or a pydantic-ai, Agents SDK or LangGraph result"
    )


__all__ = [
    "AdapterOptions",
    "check_env_name",
    "check_url",
    "load_error",
    "options_table",
    "parse_options",
    "read_env",
    "reply_to_turn",
    "tail",
]
