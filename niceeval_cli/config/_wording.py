"""How configuration errors are worded: one paragraph naming file, table and key, never a secret."""

from __future__ import annotations

import datetime
import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence

from .._credentials import LOOKS_LIKE_A_KEY, env_name_problem, looks_like_secret
from .._errors import ExitCode, NiceEvalError

__all__ = ["LOOKS_LIKE_A_KEY", "NOT_SHOWN", "ConfigError", "env_name_problem", "looks_like_secret", "quoted", "show"]


class ConfigError(NiceEvalError):
    """A user's configuration mistake; `str(e)` is the whole one-paragraph message (exit code 2)."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


NOT_SHOWN = "a value that looks like a key (not shown)"


def show(value: object) -> str:
    """A short rendering of a value the user wrote (a key-like string is never rendered)."""
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (datetime.date, datetime.time)):
        return f"the TOML date/time {value.isoformat()}"
    if looks_like_secret(value):
        return NOT_SHOWN
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def quoted(name: str) -> str:
    """A key or entry the user wrote, quoted (or withheld when it looks like a key)."""
    return "(a name that looks like a key, not shown)" if looks_like_secret(name) else json.dumps(name)


def suggest(key: str, allowed: Sequence[str], quote: Callable[[str], str] = json.dumps) -> str:
    """` (did you mean "x"?)` for the closest allowed name, or ""."""
    folded = {name.lower(): name for name in allowed}
    close = [folded[key.lower()]] if key.lower() in folded else difflib.get_close_matches(key, allowed, n=1)
    return f" (did you mean {quote(close[0])}?)" if close else ""


def strip_value_error(message: str) -> str:
    return message.removeprefix("Value error, ")


def key_path(key: str, rest: Sequence[object]) -> str:
    return key + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest)


def toml_key(part: str) -> str:
    return part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part, ensure_ascii=False)


def table_name(parts: Sequence[str]) -> str:
    return ".".join(toml_key(part) for part in parts)
