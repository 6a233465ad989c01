"""The executor seam: where an attempt runs (this process, a Ray cluster, ...).

An executor takes a serialisable `SlotSpec` and returns a serialisable `SealedAttempt`. It never
writes the store and never tells the audience: sealing, events, progress and the concurrency
bounds stay in the driver (`_run.py`), as pytest-xdist workers return reports to one driver.

Executors are registered by name; `inprocess` (asyncio, in this process) is the default. A new
one registers a factory::

    register_executor("ray", lambda context: RayExecutor(context))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from .._errors import UsageError
from .._records import AssertionResult, AttemptRecord
from .._registry import EXECUTORS, UnknownName
from ._spec import LiveHandles, SlotSpec


@dataclass(frozen=True)
class SealedAttempt:
    """What one attempt produced, ready for the driver to seal (plain data, picklable).

    `notes` are said into `AttemptRecord.notes` when the driver cleans the records for storing;
    `usage_unreported` counts usage values dropped because they were out of range.
    """

    attempt: AttemptRecord
    results: tuple[AssertionResult, ...]
    notes: tuple[str, ...] = ()
    usage_unreported: int = 0


@dataclass(frozen=True)
class ExecutorContext:
    """What the driver gives an executor when it makes one for a run."""

    project_root: Path
    secrets: Sequence[str] = ()
    #: The driver's live objects by slot key (in-process only; a remote worker resolves its own).
    handles: Mapping[tuple[str, str, int], LiveHandles] = field(default_factory=dict)
    #: The executor's own settings (`RunRequest.executor_options`: ray_address, retry_lost, ...).
    options: Mapping[str, Any] = field(default_factory=dict)
    #: Attempts the driver keeps in flight at most (across a cluster too).
    max_concurrency: int = 1


class Executor(Protocol):
    """Runs attempts. `submit` must return a SealedAttempt for every spec (an attempt that could
    not run is an `errored` record); raising is allowed but costs the attempt, never the run."""

    async def submit(self, spec: SlotSpec) -> SealedAttempt: ...

    async def aclose(self) -> None: ...


ExecutorFactory = Callable[[ExecutorContext], Executor]
#: Says, before a run is recorded, why an executor cannot be used (raises a NiceEvalError).
ExecutorCheck = Callable[[Mapping[str, Any]], None]

DEFAULT_EXECUTOR = "inprocess"
_CHECKS: dict[str, ExecutorCheck] = {}


def register_executor(name: str, factory: ExecutorFactory, check: ExecutorCheck | None = None) -> None:
    """Make an executor available by name in the registry of pluggable kinds (`_registry.EXECUTORS`);
    a later registration of the same name replaces it. `check(options)` runs before the run is
    recorded and raises when the executor cannot be used (Ray not installed, ...)."""
    EXECUTORS.register(name, factory, replace=True)
    if check is not None:
        _CHECKS[name] = check


def executor_names() -> tuple[str, ...]:
    _load_builtins()
    return tuple(sorted(EXECUTORS.names()))


def check_executor(name: str, options: Mapping[str, Any]) -> None:
    """Raise a UsageError for an unknown executor, or the executor's own reason it cannot run."""
    _load_builtins(name)
    if name not in EXECUTORS:
        raise UsageError(
            f"--executor {name!r}: {EXECUTORS.unknown(name)} (or set [run] executor in niceeval.toml)"
        )
    check = _CHECKS.get(name)
    if check is not None:
        check(options)


def create_executor(name: str, context: ExecutorContext) -> Executor:
    _load_builtins(name)
    try:
        factory = cast(ExecutorFactory, EXECUTORS.get(name))
    except UnknownName as exc:
        raise LookupError(str(exc)) from None
    return factory(context)


def _load_builtins(name: str | None = None) -> None:
    """Register the built-in executors: the Ray one only when a run asks for another executor
    than the default (to run it, or to name it beside an unknown name)."""
    if DEFAULT_EXECUTOR not in EXECUTORS:
        from . import _inprocess  # noqa: F401 - registers itself
    if name != DEFAULT_EXECUTOR and "ray" not in EXECUTORS:
        from . import _ray  # noqa: F401 - registers itself (imports Ray only when used)
