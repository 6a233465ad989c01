"""One attempt's sandbox from creation to teardown (sandbox.md, "Lifecycle and keeping").

create → copy template → `prepare` → snapshot (the baseline of every change assertion) → the
attempt runs → teardown, kept or removed. The runner drives it; this module knows no runner.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._sandbox_spec import Command, SandboxSpec
from ._baked import settle_bakes
from ._starts import shared_baseline
from ._workspace import Cancel, CommandResult, SandboxKind, Snapshot, Workspace

__all__ = ["KEEP_CHOICES", "AttemptSandbox", "PrepareFailed", "output_tail", "sandbox_record", "settle_removals",
           "should_keep"]

#: `--keep-sandbox` values: keep the sandbox of failed / errored attempts, or of every attempt.
KEEP_CHOICES = ("failed", "all")
_KEPT_STATES = frozenset({"failed", "errored"})
TAIL_CHARS = 2_000


def output_tail(result: CommandResult, limit: int = TAIL_CHARS) -> str:
    """The last `limit` characters of a command's stdout and stderr, for an explanation."""
    text = (result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr).strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def _shown(command: Command) -> str:
    import shlex

    return command if isinstance(command, str) else shlex.join(command)


class PrepareFailed(Exception):
    """A `prepare` command exited non-zero or timed out: the attempt is `errored`
    (reason `sandbox-prepare-failed`) and the message carries the command's output tail."""

    reason = "sandbox-prepare-failed"

    def __init__(self, index: int, command: Command, result: CommandResult) -> None:
        how = "timed out" if result.timed_out else f"exited with code {result.exit_code}"
        tail = output_tail(result)
        super().__init__(f"sandbox prepare[{index}] `{_shown(command)}` {how}; output tail: {tail or '(empty)'}")
        self.index = index
        self.command = command
        self.result = result


def should_keep(keep: str | None, state: str | None) -> bool:
    """`--keep-sandbox failed|all` against the attempt's sealed state (None: it never sealed)."""
    if keep == "all":
        return True
    return keep == "failed" and (state is None or state in _KEPT_STATES)


@dataclass
class AttemptSandbox:
    """A live workspace plus its baseline; `close` is safe to call more than once."""

    spec: SandboxSpec
    kind: SandboxKind
    workspace: Workspace
    baseline: Snapshot
    image_id: str | None = None
    kept_at: str | None = None
    _closed: bool = False

    @classmethod
    async def open(cls, spec: SandboxSpec, kind: SandboxKind, *, label: str,
                   about: Mapping[str, str] | None = None, overlap: bool = False) -> AttemptSandbox:
        """Create the workspace and copy the template; `prepare` is a separate step (its failure
        is the attempt's, and a kept sandbox of a failed prepare is worth looking into).
        `overlap`: the caller awaits `settle_removals()` before it ends (a template may be baked)."""
        workspace = await kind.create(spec, label=label, about=about, background=overlap)
        return cls(spec, kind, workspace, {}, kind.identity(spec))

    async def prepare(self) -> None:
        """Run the `prepare` commands in order, then take the baseline snapshot."""
        for index, command in enumerate(self.spec.prepare or ()):
            result = await self.workspace.run(command)
            if result.timed_out or result.exit_code != 0:
                raise PrepareFailed(index, command, result)

        async def take() -> Snapshot:
            cancel = Cancel()
            try:
                return await asyncio.to_thread(self.workspace.snapshot, cancel)
            except BaseException:
                cancel.set()  # a timeout or Ctrl-C stops the read in its thread too
                raise

        # Nothing ran yet and every container of this run and spec starts the same: read once (_starts).
        key = None if self.spec.prepare else self.workspace.start_key
        self.baseline = await shared_baseline(key, take)

    async def close(self, *, keep: bool, overlap: bool = False) -> str | None:
        """Kill what runs in the workspace and remove it, unless `keep`; where a kept one is.

        `overlap`: a container that is not kept is removed in the background (its attempt seals and
        the next one starts meanwhile); `settle_removals()` waits for every such removal, and until
        it is done the container stays registered with the last-line cleanup (`_live`)."""
        if self._closed:
            return self.kept_at
        self._closed = True
        if overlap and not keep and self.workspace.kind == "docker":  # a local removal takes ms
            task = asyncio.ensure_future(self.workspace.teardown(keep=False))
            _removing.add(task)
            task.add_done_callback(_removed)
            return None
        self.kept_at = await asyncio.shield(self.workspace.teardown(keep=keep))
        return self.kept_at

    def record(self) -> str:
        """What `attempts.sandbox` stores (JSON): the kind, the image and, when kept, where it is."""
        return sandbox_record(self.spec, self.image_id, self.kept_at)


_removing: set[asyncio.Future[str | None]] = set()


def _removed(task: asyncio.Future[str | None]) -> None:
    _removing.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved (a docker teardown swallows its own failures)


async def settle_removals() -> None:
    """Wait until every container removed in the background (`close(overlap=True)`) is gone, and
    every template bake started for `open(overlap=True)` is done: a run ends only after its
    sandboxes did (the last-line cleanup then removes the baked images)."""
    while _removing:
        await asyncio.wait(set(_removing))
    await settle_bakes()


def sandbox_record(spec: SandboxSpec, image_id: str | None, kept_at: str | None = None) -> str:
    """`attempts.sandbox`: `{"kind", "image"?, "image_id"?, "kept"?}` as JSON."""
    value: dict[str, Any] = {"kind": spec.kind or "local"}
    if spec.kind == "docker":
        value["image"] = spec.image
        value["image_id"] = image_id
    if kept_at is not None:
        value["kept"] = kept_at
    return json.dumps(value, ensure_ascii=False)
