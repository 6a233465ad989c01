"""`niceeval sandbox list|prune`: the sandboxes NiceEval left on this machine (sandbox.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..reports.data import SandboxListing

if TYPE_CHECKING:
    pass


def list_kept() -> SandboxListing:
    from ..sandbox import list_sandboxes

    return SandboxListing(list_sandboxes())


def prune_kept() -> SandboxListing:
    from ..sandbox import prune_sandboxes

    pruned = prune_sandboxes()
    return SandboxListing(pruned.removed, pruned.left)
