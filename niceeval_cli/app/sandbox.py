"""`niceeval sandbox list|prune`: the sandboxes NiceEval left on this machine (sandbox.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..sandbox import KeptSandbox


@dataclass(frozen=True)
class SandboxListing:
    """What `sandbox list` shows (and `prune` removed): local workspaces and containers."""

    sandboxes: list[KeptSandbox]
    #: `prune` only: workspaces left because a process NiceEval did not start works inside (pids)
    left: list[tuple[KeptSandbox, list[int]]] = field(default_factory=list)

    def as_json(self) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = [
            {"kind": s.kind, "location": s.location, "status": s.status, "created": s.created, **dict(s.about)}
            for s in self.sandboxes
        ]
        rows += [{"kind": s.kind, "location": s.location, "status": "left-in-use", "created": s.created,
                  "pids": pids, **dict(s.about)} for s, pids in self.left]
        return rows


def list_kept() -> SandboxListing:
    from ..sandbox import list_sandboxes

    return SandboxListing(list_sandboxes())


def prune_kept() -> SandboxListing:
    from ..sandbox import prune_sandboxes

    pruned = prune_sandboxes()
    return SandboxListing(pruned.removed, pruned.left)
