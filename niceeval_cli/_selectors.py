"""Selectors: which evals and which experiments a flag names. Pure; the one home of both rules.

Eval selectors: an id prefix (`refunds`), or a glob over the whole eval id (`'refunds[r-01*]'`).
A selector holding `*` or `?` is a glob (fnmatch's `*` and `?`, matched against the whole id);
any other is a prefix. Brackets are literal in both — case eval ids are `<eval id>[<case id>]`,
so fnmatch's `[...]` character classes would make the one pattern users write mean something
else. The CLI's positional selectors, an experiment's `evals`, `list` and the store's `--eval`
filters all use this.

Experiment selectors (`run -e`, `--experiment` of `view`, `query`, the run listing): an exact
experiment id selects that experiment alone; a selector ending in `/` is a group prefix and
selects every experiment whose id starts with it (`models/` → `models/a`, `models/b/x`; not
`modelsz`, not `models`). A selector without `/` at its end never selects a longer id, so
every experiment stays addressable on its own even when another id extends it (`support` and
`support/offline`). `run`, the readers and the store's SQL all decide by this one rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ._errors import UsageError

__all__ = [
    "check_not_empty",
    "experiment_sql",
    "is_experiment_group",
    "is_glob",
    "matches",
    "matches_any",
    "selects_any_experiment",
    "selects_experiment",
    "sqlite_glob",
]


def check_not_empty(selectors: Iterable[str], flag: str) -> None:
    """An empty eval selector is a prefix of every id: `niceeval run "$EVAL"` with the variable
    unset ran every eval. Refused, as an empty experiment selector is."""
    if any(not selector.strip() for selector in selectors):
        raise UsageError(f"{flag} '': an empty eval selector would select every eval; give an eval id prefix "
                         "or glob, or leave it out to select them all")


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


def is_experiment_group(selector: str) -> bool:
    """Whether an experiment selector names a group (ends in `/`) rather than one experiment."""
    return selector.endswith("/")


def selects_experiment(selector: str, experiment_id: str) -> bool:
    """Whether `selector` selects the experiment `experiment_id` (the module docstring's rule)."""
    if is_experiment_group(selector):
        return experiment_id.startswith(selector)
    return experiment_id == selector


def selects_any_experiment(selectors: Iterable[str], experiment_id: str) -> bool:
    return any(selects_experiment(selector, experiment_id) for selector in selectors)


def experiment_sql(selector: str, column: str, param: str) -> str:
    """`selects_experiment` as an SQLite condition on `column`, the selector bound as `param`
    (a placeholder such as `:p0`; the value never enters the SQL text). A group compares the
    id's first characters (`substr`, not LIKE: `_` and `%` are ordinary in ids); SQLite's `=`
    and `substr` compare code points, as Python's `==` and `startswith` do."""
    if is_experiment_group(selector):
        return f"substr({column}, 1, length({param})) = {param}"
    return f"{column} = {param}"
