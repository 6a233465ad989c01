"""The runner: planning, reuse, dispatch, timeouts and sealing."""

from ._events import NullEvents, RunEvents, RunOutcome, SetupFailure
from ._plan import PlannedSlot, RerunMode, RunRequest, plan
from ._run import run, run_async

__all__ = [
    "NullEvents",
    "PlannedSlot",
    "RerunMode",
    "RunEvents",
    "RunOutcome",
    "RunRequest",
    "SetupFailure",
    "plan",
    "run",
    "run_async",
]
