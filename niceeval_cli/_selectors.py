"""Eval selectors: an id prefix (`refunds`), or a glob over the whole eval id (`'refunds[r-01*]'`).

A selector holding `*` or `?` is a glob (fnmatch's `*` and `?`, matched against the whole id);
any other is a prefix. Brackets are literal in both — case eval ids are `<eval id>[<case id>]`,
so fnmatch's `[...]` character classes would make the one pattern users write mean something
else. Pure: the CLI's positional selectors, an experiment's `evals` and `list` all use this.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["is_glob", "matches", "matches_any", "sqlite_glob"]


def is_glob(selector: str) -> bool:
    return "*" in selector or "?" in selector


@lru_cache(maxsize=256)
def _pattern(selector: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in selector)
    return re.compile("".join(parts), re.DOTALL)


def matches(selector: str, eval_id: str) -> bool:
    """Whether `selector` selects the eval (or case eval) `eval_id`."""
    if is_glob(selector):
        return _pattern(selector).fullmatch(eval_id) is not None
    return eval_id.startswith(selector)


def matches_any(selectors: Iterable[str], eval_id: str) -> bool:
    return any(matches(selector, eval_id) for selector in selectors)


def sqlite_glob(selector: str) -> str:
    """The SQLite GLOB pattern of a glob selector (for the store's `--eval` filters): `*` and `?`
    as they are, every `[` made literal as `[[]`. GLOB, unlike LIKE, is case-sensitive."""
    return selector.replace("[", "[[]")
