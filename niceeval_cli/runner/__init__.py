"""The runner: planning, reuse, dispatch (through an executor), sealing, the run's decision."""

from ._events import EventRelay, NullEvents, PlanTotals, RunEvents, RunListener, RunOutcome, SetupFailure
from ._executor import (
    DEFAULT_EXECUTOR,
    Executor,
    ExecutorContext,
    ExecutorKind,
    SealedAttempt,
    check_executor,
    create_executor,
    executor_names,
    register_executor,
)
from ._extras import ExtrasSource, register_extras_source
from ._inprocess import InProcessExecutor, execute_spec
from ._plan import PlannedSlot, RerunMode, RunRequest, UntilDecided, plan
from ._regrade import RegradePlan, RegradeRequest, plan_regrade, regrade
from ._run import run, run_async
from ._shard import layout_of
from ._spec import LiveHandles, SlotSpec, resolve_handles

__all__ = [
    "DEFAULT_EXECUTOR",
    "EventRelay",
    "Executor",
    "ExecutorContext",
    "ExecutorKind",
    "ExtrasSource",
    "InProcessExecutor",
    "LiveHandles",
    "NullEvents",
    "PlanTotals",
    "PlannedSlot",
    "RegradePlan",
    "RegradeRequest",
    "RerunMode",
    "RunEvents",
    "RunListener",
    "RunOutcome",
    "RunRequest",
    "SealedAttempt",
    "SetupFailure",
    "SlotSpec",
    "UntilDecided",
    "check_executor",
    "create_executor",
    "execute_spec",
    "executor_names",
    "layout_of",
    "plan",
    "plan_regrade",
    "register_executor",
    "register_extras_source",
    "regrade",
    "resolve_handles",
    "run",
    "run_async",
]
