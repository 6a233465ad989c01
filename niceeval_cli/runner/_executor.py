"""The executor seam: where an attempt runs (this process, a Ray cluster, ...).

An executor takes a serialisable `SlotSpec` and returns a serialisable `SealedAttempt`. It never
writes the store and never tells the audience: sealing, events, progress and the concurrency
bounds stay in the driver (`_run.py`), as pytest-xdist workers return reports to one driver.

Executors are registered by name as an `ExecutorKind` (its factory and its check, together);
`inprocess` (asyncio, in this process) is the default. A new one registers itself::

    register_executor("ray", RayExecutor, check_ray_installed)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from .._errors import UsageError
from .._records import AssertionResult, AttemptRecord
from .._registry import DEFAULT_GRADER, EXECUTORS, UnknownName
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
    #: The registered grader the run grades judges with; a remote worker makes its own from it.
    grader: str = DEFAULT_GRADER
    #: The calibration gate's figures (judge.Calibration) when a judge turns it on; a remote
    #: worker wraps its own grader with them.
    calibration: Any = None
    #: Slots the run will submit (0: everything was reused or held back; no worker is needed).
    dispatchable: int = 1


class Executor(Protocol):
    """Runs attempts. `submit` must return a SealedAttempt for every spec (an attempt that could
    not run is an `errored` record); raising is allowed but costs the attempt, never the run."""

    async def submit(self, spec: SlotSpec) -> SealedAttempt: ...

    async def aclose(self) -> None: ...


ExecutorFactory = Callable[[ExecutorContext], Executor]
#: Says, before a run is recorded, why an executor cannot be used (raises a NiceEvalError).
ExecutorCheck = Callable[[Mapping[str, Any]], None]

DEFAULT_EXECUTOR = "inprocess"
#: The built-in executors by name, and the module that registers each when first asked for (the
#: Ray one is imported only when a run names another executor than the default: its module is
#: cheap, Ray itself is imported only when it runs).
_BUILTINS = {DEFAULT_EXECUTOR: "._inprocess", "ray": "._ray"}


def _usable(options: Mapping[str, Any]) -> None:
    """The check of an executor that can always be used."""


@dataclass(frozen=True)
class ExecutorKind:
    """One registered executor: how to make it for a run, and why it cannot be used (`check`
    raises a NiceEvalError before the run is recorded: Ray not installed, ...)."""

    factory: ExecutorFactory
    check: ExecutorCheck = _usable


def register_executor(name: str, factory: ExecutorFactory, check: ExecutorCheck | None = None) -> None:
    """Make an executor available by name in the registry of pluggable kinds (`_registry.EXECUTORS`),
    with its check; a later registration of the same name replaces both."""
    EXECUTORS.register(name, ExecutorKind(factory, check or _usable), replace=True)


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
    _kind(name).check(options)


def create_executor(name: str, context: ExecutorContext) -> Executor:
    _load_builtins(name)
    try:
        kind = _kind(name)
    except UnknownName as exc:
        raise LookupError(str(exc)) from None
    return kind.factory(context)


def _kind(name: str) -> ExecutorKind:
    return cast(ExecutorKind, EXECUTORS.get(name))


def _load_builtins(name: str | None = None) -> None:
    """Register the built-in executors a caller may name: the default always, and every other one
    when a run asks for another executor than the default (to run it, or to list the known names
    beside an unknown one)."""
    wanted = [DEFAULT_EXECUTOR] if name == DEFAULT_EXECUTOR else list(_BUILTINS)
    for builtin in wanted:
        if builtin not in EXECUTORS:
            importlib.import_module(_BUILTINS[builtin], __package__)  # registers itself
