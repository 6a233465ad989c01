"""Sandboxes: a fresh workspace per attempt (sandbox.md). `local` and `docker` kinds, one registry.

`_spec` (what is declared), `_workspace` (the seam: `SandboxKind` makes a `Workspace`), `_changes`
(pure: what changed, added lines, evidence) over `_linediff` (a linear-time line diff), `_local` /
`_docker` (the kinds), `_lifecycle` (one attempt's create → prepare → teardown), `_live` (the
last-line cleanup of whatever is still alive), `_kept` (list / prune).
"""

from __future__ import annotations

from .._registry import SANDBOXES, UnknownName
from .._sandbox_spec import Command, SandboxSpec, SandboxSpecError, docker_sandbox, local_sandbox, spec_from_mapping
from ._changes import (
    DELETED,
    STATUSES,
    Change,
    added_lines,
    changes,
    diff_lines,
    diff_text,
    hidden,
    is_binary,
    shown_path,
    trimmed,
)
from ._docker import DockerKind
from ._kept import KeptSandbox, Pruned, list_sandboxes, prune_sandboxes
from ._lifecycle import KEEP_CHOICES, AttemptSandbox, PrepareFailed, sandbox_record, settle_removals, should_keep
from ._live import cleanup_all
from ._local import LocalKind
from ._preflight import preflight_sandboxes
from ._sweep import sweep_run
from ._workspace import (
    READ_LIMIT,
    Cancel,
    Cancelled,
    CommandNotRun,
    CommandResult,
    FileState,
    OutsideWorkspace,
    SandboxKind,
    SandboxSetupError,
    Snapshot,
    Workspace,
)

__all__ = [
    "DELETED",
    "KEEP_CHOICES",
    "READ_LIMIT",
    "SANDBOXES",
    "STATUSES",
    "AttemptSandbox",
    "Cancel",
    "Cancelled",
    "Change",
    "Command",
    "CommandNotRun",
    "CommandResult",
    "FileState",
    "KeptSandbox",
    "OutsideWorkspace",
    "PrepareFailed",
    "Pruned",
    "SandboxKind",
    "SandboxSetupError",
    "SandboxSpec",
    "SandboxSpecError",
    "Snapshot",
    "Workspace",
    "added_lines",
    "changes",
    "cleanup_all",
    "diff_lines",
    "diff_text",
    "docker_sandbox",
    "hidden",
    "is_binary",
    "kind_for",
    "list_sandboxes",
    "local_sandbox",
    "preflight_sandboxes",
    "prune_sandboxes",
    "sandbox_record",
    "settle_removals",
    "should_keep",
    "shown_path",
    "spec_from_mapping",
    "sweep_run",
    "trimmed",
]

SANDBOXES.register("local", LocalKind())
SANDBOXES.register("docker", DockerKind())


def kind_for(spec: SandboxSpec) -> SandboxKind:
    """The registered kind of `spec` (`local` when it names none)."""
    try:
        return SANDBOXES.get(spec.kind or "local")
    except UnknownName as error:
        raise SandboxSpecError(str(error)) from None
