"""The default executor: attempts run as asyncio tasks in this process, on the driver's loop."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..sandbox import settle_removals
from ._attempt import execute_attempt
from ._executor import DEFAULT_EXECUTOR, ExecutorContext, SealedAttempt, register_executor
from ._spec import JudgeGrader, SlotSpec, resolve_handles


async def execute_spec(
    spec: SlotSpec, *, secrets: Sequence[str] = (), grader: JudgeGrader | None = None
) -> SealedAttempt:
    """A worker's whole job, from the spec alone: re-import the eval, load the adapter, run the
    attempt, return the records (the driver seals them). What a Ray actor or a subprocess calls."""
    live = resolve_handles(spec, grader)
    return await execute_attempt(spec, live, project_root=Path(spec.project_root), secrets=secrets)


class InProcessExecutor:
    """Uses the driver's live handles when it has them; otherwise rebuilds them from the spec
    (what a remote worker does), so the two paths stay one."""

    def __init__(self, context: ExecutorContext) -> None:
        self.context = context

    async def submit(self, spec: SlotSpec) -> SealedAttempt:
        live = self.context.handles.get(spec.key)
        if live is None:
            live = resolve_handles(spec)
        return await execute_attempt(
            spec, live, project_root=self.context.project_root, secrets=self.context.secrets,
            overlap_teardown=True,
        )

    async def aclose(self) -> None:
        await settle_removals()  # containers removed in the background: the run ends after they are gone


register_executor(DEFAULT_EXECUTOR, InProcessExecutor)
