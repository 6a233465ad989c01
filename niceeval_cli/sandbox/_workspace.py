"""The seam: a `SandboxKind` makes a live `Workspace` for one attempt (sandbox.md, "Lifecycle")."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._errors import SetupError
from ..expect._facts import NumericMaterial
from ._spec import Command, SandboxSpec

__all__ = ["CommandResult", "FileState", "SandboxKind", "SandboxSetupError", "Snapshot", "Workspace"]

#: Files up to this size keep their bytes in a snapshot (to be diffed); larger ones keep a digest only.
DIFFABLE_BYTES = 1 << 20


@dataclass(frozen=True)
class CommandResult:
    """What `t.sandbox.run` returns: a non-zero exit is a result, not an exception."""

    # None when killed by the timeout; through `t.sandbox.run`, an unavailable NumericMaterial
    # when the command could not run at all (authoring/_commands.py)
    exit_code: int | NumericMaterial | None
    stdout: str
    stderr: str
    duration_ms: float
    timed_out: bool = False
    returncode: int | None = None  # the process's own exit status (None: killed, or never started)

    def __post_init__(self) -> None:
        if self.returncode is None and isinstance(self.exit_code, int):
            object.__setattr__(self, "returncode", self.exit_code)


@dataclass(frozen=True)
class FileState:
    digest: str  # sha256 of the bytes (or of the link target, for a symlink)
    data: bytes | None  # kept when small enough to diff
    size: int

    @staticmethod
    def of(data: bytes) -> FileState:
        """The state of a regular file holding `data`."""
        return FileState(hashlib.sha256(data).hexdigest(), data if len(data) <= DIFFABLE_BYTES else None, len(data))

    @staticmethod
    def of_stream(read: Callable[[int], bytes], size: int) -> FileState:
        """A regular file read in chunks: its bytes kept only when small enough to diff."""
        if size <= DIFFABLE_BYTES:
            return FileState.of(read(size + 1))
        h = hashlib.sha256()
        total = 0
        while chunk := read(1 << 20):
            h.update(chunk)
            total += len(chunk)
        return FileState(h.hexdigest(), None, total)

    @staticmethod
    def link(target: bytes) -> FileState:
        """The state of a symlink: its target, never followed, never diffed."""
        return FileState(hashlib.sha256(b"L" + target).hexdigest(), None, len(target))


Snapshot = Mapping[str, FileState]  # workspace-relative POSIX path → state


class SandboxSetupError(SetupError):
    """A kind cannot work on this machine (daemon unreachable, image missing): found before dispatch
    (exit 3), naming the image or socket and the fix."""


class Workspace(Protocol):
    """One attempt's live workspace. Every path is relative to `workdir`."""

    kind: str
    workdir: str  # the workspace path (inside the container for docker)

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult: ...

    async def read_bytes(self, path: str) -> bytes: ...

    async def write_bytes(self, path: str, data: bytes) -> None: ...

    def snapshot(self) -> Snapshot:
        """The workspace now (synchronous: assertions read it at the call)."""
        ...

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        """The host argv that runs `argv` inside the workspace (for adapters that spawn it themselves;
        `run` is simpler and kills what it started)."""
        ...

    def exec_cwd(self, cwd: str | None = None) -> str | None:
        """The host directory to spawn `exec_argv` in (None: anywhere)."""
        ...

    async def teardown(self, *, keep: bool) -> str | None:
        """Kill what runs in it; remove it unless `keep`. Returns where a kept one is."""
        ...

    def info(self) -> dict[str, object]:
        """What `attempts.sandbox` stores: kind, image, location when kept."""
        ...


class SandboxKind(Protocol):
    """A registered implementation: `local`, `docker`."""

    name: str

    async def check(self, spec: SandboxSpec) -> str | None:
        """A setup problem (exit 3, naming the image or socket and the fix), or None."""
        ...

    def identity(self, spec: SandboxSpec) -> str | None:
        """What enters the fingerprint besides the spec (docker: the image id)."""
        ...

    async def create(self, spec: SandboxSpec, *, label: str, about: Mapping[str, str] | None = None) -> Workspace:
        """A fresh workspace with the template copied in; `about` (run, attempt, eval) is shown by
        `niceeval sandbox list`. Registered for cleanup before anything that can leave a trace."""
        ...
