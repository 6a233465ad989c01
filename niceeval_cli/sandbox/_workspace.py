"""The seam: a `SandboxKind` makes a live `Workspace` for one attempt (sandbox.md, "Lifecycle")."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._errors import SetupError
from .._sandbox_spec import Command, SandboxSpec
from ..expect import NumericMaterial

__all__ = [
    "DIFFABLE_BYTES",
    "READ_LIMIT",
    "SNAPSHOT_TEXT_BYTES",
    "Cancel",
    "Cancelled",
    "CommandNotRun",
    "CommandResult",
    "FileState",
    "FileTooLarge",
    "OutsideWorkspace",
    "SandboxKind",
    "SandboxSetupError",
    "Snapshot",
    "TextBudget",
    "Workspace",
]

#: Files up to this size are read whole into a snapshot (and diffed when text); larger ones are
#: never held: a local one is compared by size and timestamps, a docker one by a streamed digest.
DIFFABLE_BYTES = 16 << 20
#: Text bytes one snapshot keeps in all (see TextBudget).
SNAPSHOT_TEXT_BYTES = 256 << 20


#: What `read_text` / `read_bytes` return at most unless the call asks for more (`max_bytes=`).
READ_LIMIT = 64 << 20


class FileTooLarge(OSError):
    """A workspace file over the read limit: an error naming it, never a silent truncation."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(f"{path}: {size} bytes is over the {limit} bytes t.sandbox reads at once; pass "
                         f"max_bytes= to read more, or run a command over it (t.sandbox.run)")
        self.path, self.size, self.limit = path, size, limit


class OutsideWorkspace(PermissionError):
    """A sandbox path that leads out of the workspace (through a symlink): refused, never followed."""


class CommandNotRun(OSError):
    """A workspace command that never started: the daemon refused it (the container is not running,
    or gone). Not an exit code of the command: `t.sandbox.run` makes it an unavailable one."""


class Cancelled(Exception):
    """A workspace read in a worker thread whose result is no longer wanted (timeout, Ctrl-C)."""


class Cancel:
    """Tells work running off the event loop to stop: checked between chunks and files, and it
    kills what was registered with `on_cancel` (a `docker cp` client) so a blocked read ends."""

    def __init__(self) -> None:
        self._set = threading.Event()
        self._hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def set(self) -> None:
        with self._lock:
            self._set.set()
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook()

    def check(self) -> None:
        if self._set.is_set():
            raise Cancelled("the workspace read was cancelled")

    def on_cancel(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if not self._set.is_set():
                self._hooks.append(hook)
                return
        hook()


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


@dataclass(frozen=True, slots=True)
class FileState:
    """One path of a snapshot. Two states are the same file content when their digests are equal."""

    digest: str  # sha256 of the bytes / link target / node type, or a size-and-timestamps stamp
    data: bytes | None  # the bytes, when read and small enough to diff
    size: int
    node: str | None = None  # not a regular file: "symlink", "fifo", "socket", "character device", ...
    unread: str | None = None  # why the content was not read or kept (too large, unreadable): no diff of it
    binary: bool = False  # read, not text (a NUL byte, or not UTF-8): compared by digest, never kept
    hides: bool = False  # a folder that could not be listed: whatever is under it is unknown

    @staticmethod
    def of(data: bytes, budget: TextBudget | None = None) -> FileState:
        """The state of a regular file holding `data`: its bytes kept only when it is text, small enough
        to diff, and within the snapshot's `budget`."""
        digest = hashlib.sha256(data).hexdigest()
        if len(data) > DIFFABLE_BYTES:
            return FileState(digest, None, len(data), unread=_too_large(len(data)))
        if not _is_text(data):
            return FileState(digest, None, len(data), binary=True)
        if budget is not None and not budget.take(len(data)):
            return FileState(digest, None, len(data), unread=f"over the {budget.limit >> 20} MiB of text a "
                             "snapshot keeps")
        return FileState(digest, data, len(data))

    @staticmethod
    def of_stream(read: Callable[[int], bytes], size: int, cancel: Cancel | None = None,
                  budget: TextBudget | None = None) -> FileState:
        """A regular file read in chunks: its bytes kept only when small enough to diff."""
        if size <= DIFFABLE_BYTES:
            data = read(size + 1)
            if len(data) <= DIFFABLE_BYTES:
                return FileState.of(data, budget)
            h, total = hashlib.sha256(data), len(data)  # it grew while being read
        else:
            h, total = hashlib.sha256(), 0
        while chunk := read(1 << 20):
            if cancel is not None:
                cancel.check()
            h.update(chunk)
            total += len(chunk)
        return FileState(h.hexdigest(), None, total, unread=_too_large(total))

    @staticmethod
    def stamped(size: int, stamp: str, unread: str) -> FileState:
        """A file not read (too large, unreadable): the same file while size and timestamps are."""
        return FileState(f"stat:{size}:{stamp}", None, size, unread=unread)

    @staticmethod
    def unlisted(errno: int | None, why: str) -> FileState:
        """A folder the read could not list (the agent's `chmod 000`, a path past PATH_MAX): a change
        whose content was not read, and nothing under it is known to be there or gone."""
        return FileState(f"stat:0:unlisted:{errno}", None, 0, unread=f"a folder that could not be listed: {why}",
                         hides=True)

    @staticmethod
    def link(target: bytes) -> FileState:
        """The state of a symlink: its target, never followed, never diffed."""
        return FileState(hashlib.sha256(b"L" + target).hexdigest(), None, len(target), node="symlink")

    @staticmethod
    def special(node: str) -> FileState:
        """A device, FIFO or socket: never opened (a device can be endless, a FIFO blocks)."""
        return FileState(hashlib.sha256(b"S" + node.encode()).hexdigest(), None, 0, node=node)


class TextBudget:
    """How much text one snapshot keeps for diffing (a template of many large text files must not
    hold gigabytes per attempt); past it, files are compared by digest and their diff is unavailable."""

    def __init__(self, limit: int = SNAPSHOT_TEXT_BYTES) -> None:
        self.limit = self.left = limit

    def take(self, size: int) -> bool:
        if size > self.left:
            return False
        self.left -= size
        return True


def _is_text(data: bytes) -> bool:
    if b"\0" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _too_large(size: int) -> str:
    return f"{size} bytes, over the {DIFFABLE_BYTES >> 20} MiB a sandbox diff reads"


Snapshot = Mapping[str, FileState]  # workspace-relative POSIX path → state


class SandboxSetupError(SetupError):
    """A kind cannot work on this machine (daemon unreachable, image missing): found before dispatch
    (exit 3), naming the image or socket and the fix."""


class Workspace(Protocol):
    """One attempt's live workspace. Every path is relative to `workdir`."""

    kind: str
    workdir: str  # the workspace path (inside the container for docker)

    @property
    def start_key(self) -> Hashable | None:
        """Equal for workspaces that start with the same files before anything runs (one run's
        containers of one spec): their baseline is read once (`_starts`). None: each reads its own."""
        ...

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult: ...

    async def read_bytes(self, path: str, max_bytes: int = READ_LIMIT) -> bytes:
        """A file's bytes; `FileTooLarge` over `max_bytes` (never read past it)."""
        ...

    async def write_bytes(self, path: str, data: bytes) -> None: ...

    def snapshot(self, cancel: Cancel | None = None) -> Snapshot:
        """The workspace now. Blocking: called in a worker thread; stops when `cancel` is set."""
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
    #: Its commands run on this host (local) rather than somewhere else (a container): an adapter
    #: that runs its own binary in the sandbox is checked on this host only when this is true.
    runs_on_host: bool

    async def check(self, spec: SandboxSpec) -> str | None:
        """A setup problem (exit 3, naming the image or socket and the fix), or None."""
        ...

    def identity(self, spec: SandboxSpec) -> str | None:
        """What enters the fingerprint besides the spec (docker: the image id)."""
        ...

    async def probe(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_ms: int) -> CommandResult:
        """`argv` run once where this kind's attempts run their commands, with no workspace (docker: a
        throwaway container of the image): how an adapter that runs its own binary in the sandbox is
        checked before dispatch. A binary that cannot be found is exit 127, as a shell says it."""
        ...

    async def create(self, spec: SandboxSpec, *, label: str, about: Mapping[str, str] | None = None,
                     background: bool = False) -> Workspace:
        """A fresh workspace with the template copied in; `about` (run, attempt, eval) is shown by
        `niceeval sandbox list`. Registered for cleanup before anything that can leave a trace.
        `background`: the caller awaits `settle_removals()` before it ends, so work for later
        workspaces may go on in the background (docker: baking the run's template into an image)."""
        ...
