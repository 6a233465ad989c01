"""Sandboxes: a fresh workspace per attempt (sandbox.md). `local` and `docker` kinds, one registry."""

from __future__ import annotations

from ._changes import Change, added_lines, changes, diff_text
from ._docker import DockerKind
from ._local import LocalKind
from ._spec import SandboxSpec, SandboxSpecError, docker_sandbox, local_sandbox, spec_from_mapping
from ._workspace import CommandResult, FileState, SandboxKind, SandboxSetupError, Snapshot, Workspace

__all__ = [
    "KINDS",
    "Change",
    "CommandResult",
    "FileState",
    "SandboxKind",
    "SandboxSetupError",
    "SandboxSpec",
    "SandboxSpecError",
    "Snapshot",
    "Workspace",
    "added_lines",
    "changes",
    "diff_text",
    "docker_sandbox",
    "kind_for",
    "local_sandbox",
    "spec_from_mapping",
]

#: The sandbox kinds by name (moves into the shared registry of pluggable kinds when it lands).
KINDS: dict[str, SandboxKind] = {"local": LocalKind(), "docker": DockerKind()}


def kind_for(spec: SandboxSpec) -> SandboxKind:
    try:
        return KINDS[spec.kind or "local"]
    except KeyError:
        raise SandboxSpecError(f"unknown sandbox kind {spec.kind!r}; known: {', '.join(sorted(KINDS))}") from None
