"""`niceeval run --dry`: the plan, nothing run, no store created."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runner import PlannedSlot, RunRequest


def plan_run(request: RunRequest) -> list[PlannedSlot]:
    """Each slot with its decision (execute: why / reuse: which attempt). An executor the run
    could not use (`--executor` / `[run] executor` unknown, Ray not installed) is the same error
    here as in the run: a plan that passes --dry must not fail at the start of the run."""
    from ..runner import DEFAULT_EXECUTOR, check_executor, layout_of, plan
    from ..store import Store

    check_executor(request.executor or DEFAULT_EXECUTOR, request.executor_options)
    path = request.store_path or request.project.store
    if not path.exists():  # nothing sealed yet: every slot is new, and --dry creates no store
        slots = plan(request, None)
    else:
        with Store.open(path, readonly=True) as store:
            slots = plan(request, store)
    return list(layout_of(slots, request.shard, request.group_id).slots)  # --shard K/N: this shard's part
