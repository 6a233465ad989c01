"""`Registry[T]`: implementations of one pluggable kind, by name (low module: anything may import it).

Each seam (adapters, sandboxes, executors, graders, output formats) owns one registry instance; an
implementation registers itself under a name, and configuration asks the registry which names
exist instead of keeping its own list.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from .authoring import AdapterFactory
    from .judge import GraderFactory
    from .runner import ExecutorKind
    from .sandbox import SandboxKind

__all__ = [
    "ADAPTERS", "DEFAULT_GRADER", "EXECUTORS", "GRADERS", "OUTPUT_FORMATS", "SANDBOXES", "Registry", "UnknownName",
]

T = TypeVar("T")


class UnknownName(LookupError):
    """No implementation is registered under a name; `str(e)` names the known ones."""


class Registry(Generic[T]):
    """Named implementations of one kind, kept in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, value: T, *, replace: bool = False) -> T:
        """Add `value` under `name`; registering a taken name twice is a bug unless `replace`."""
        if not name:
            raise ValueError(f"a {self.kind} needs a non-empty name")
        if name in self._entries and not replace and self._entries[name] is not value:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._entries[name] = value
        return value

    def decorator(self, name: str) -> Callable[[T], T]:
        """`@registry.decorator("name")` registers the decorated object."""

        def add(value: T) -> T:
            return self.register(name, value)

        return add

    def get(self, name: str) -> T:
        """The implementation named `name`; `UnknownName` lists the known names otherwise."""
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownName(self.unknown(name)) from None

    def unknown(self, name: str) -> str:
        """The sentence saying that `name` is not a known one, with the closest known name."""
        close = difflib.get_close_matches(name, list(self._entries), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown {self.kind} {name!r}{hint}; known: {', '.join(self._entries) or 'none'}"

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry {self.kind}: {', '.join(self._entries)}>"


# --- the registries of the pluggable kinds -----------------------------------------------------
# Implementations register themselves where they are defined (the built-in adapters in
# `adapters/`). The kinds still to come are typed by plain factories; narrow `T` to the kind's
# protocol when it lands.

#: `adapter = "<name>"` in niceeval.toml: factories taking (the experiment's options, its id).
ADAPTERS: Registry[AdapterFactory] = Registry("adapter")
#: Where an attempt runs (`sandbox = "<name>"`).
SANDBOXES: Registry[SandboxKind] = Registry("sandbox")
#: How slots are dispatched, each kind with its check (the in-process asyncio executor is the default).
EXECUTORS: Registry[ExecutorKind] = Registry("executor")
#: What grades judge assertions. The default, the OpenAI-compatible HTTP judge, is named here so
#: the runner can name it without importing the judge package (httpx) for a run with no judge.
GRADERS: Registry[GraderFactory] = Registry("grader")
DEFAULT_GRADER = "openai-compatible"
#: `--format` values of the readers (query, report).
OUTPUT_FORMATS: Registry[Callable[..., object]] = Registry("output format")
