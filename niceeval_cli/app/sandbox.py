"""`niceeval sandbox list|prune`: the sandboxes NiceEval left on this machine (sandbox.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..sandbox import KeptSandbox


@dataclass(frozen=True)
class SandboxListing:
    """What `sandbox list` shows (and `prune` removed): local workspaces and containers."""

    sandboxes: list[KeptSandbox]

    def as_json(self) -> list[dict[str, object]]:
        return [{"kind": s.kind, "location": s.location, "status": s.status, "created": s.created,
                 **dict(s.about)} for s in self.sandboxes]


def list_kept() -> SandboxListing:
    from ..sandbox import list_sandboxes

    return SandboxListing(list_sandboxes())


def prune_kept() -> SandboxListing:
    from ..sandbox import prune_sandboxes

    return SandboxListing(prune_sandboxes())
