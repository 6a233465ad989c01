"""`niceeval run --dry`: the plan, nothing run, no store created."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runner import PlannedSlot, RunRequest


def plan_run(request: RunRequest) -> list[PlannedSlot]:
    """Each slot with its decision (execute: why / reuse: which attempt)."""
    from ..runner import plan
    from ..store import Store

    path = request.store_path or request.project.store
    if not path.exists():  # nothing sealed yet: every slot is new, and --dry creates no store
        return plan(request, None)
    with Store.open(path, readonly=True) as store:
        return plan(request, store)
