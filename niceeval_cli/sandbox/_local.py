"""`local`: a fresh temporary directory per attempt. No isolation: commands run as the user, on the host.

Layout: `<tmp>/niceeval-sandbox-XXXX/` holds `owner.json` (who made it, for `niceeval sandbox
list`), `kept.json` once kept, and `workspace/` — the workdir, so those files never show in the
workspace's diff.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from .._sandbox_spec import Command, SandboxSpec, node_kind, template_problem
from . import _live
from ._proc import kill_group, run_host
from ._workspace import (
    DIFFABLE_BYTES,
    READ_LIMIT,
    Cancel,
    CommandResult,
    FileState,
    FileTooLarge,
    OutsideWorkspace,
    Snapshot,
    TextBudget,
)

__all__ = [
    "KEPT_FILE", "MARKER", "OWNER_FILE", "PREFIX", "WORK_DIR", "LocalKind", "LocalWorkspace", "OutsideWorkspace",
    "argv_of", "inside", "kill_everything_in", "kill_started_in", "remove_tree", "visitors_of",
]

PREFIX = "niceeval-sandbox-"
OWNER_FILE = "owner.json"
KEPT_FILE = "kept.json"
WORK_DIR = "workspace"
#: Every process NiceEval starts in a local workspace carries this variable, set to its sandbox's
#: folder name, and its children inherit it: teardown and `sandbox prune` find what NiceEval
#: started by it — wherever it went (`setsid`, `cd /`) — and a user's own shell sitting in a kept
#: workspace, which lacks it, is never killed.
MARKER = "NICEEVAL_SANDBOX"


def inside(root: Path, path: str) -> Path:
    """`path` relative to the workspace root, with every symlink resolved; refuses what leaves it.

    A link from the template or one an agent planted (`notes -> /etc/passwd`) is followed only while
    it stays inside the workspace: t.sandbox reads, writes and runs there and nowhere else.
    """
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"{path!r}: sandbox paths are relative to the workspace and stay inside it")
    if os.path.islink(root):  # the agent put a link where its workspace was: what it leads to is not it
        raise OutsideWorkspace(f"sandbox path {path!r}: the workspace itself was replaced by a symlink (to "
                               f"{os.readlink(root)}); t.sandbox reads, writes and runs only inside the workspace")
    home = Path(os.path.realpath(root))
    real = Path(os.path.realpath(root / rel))
    if real != home and home not in real.parents:
        raise OutsideWorkspace(f"sandbox path {path!r} leads outside the workspace (through a symlink, to {real}); "
                               "t.sandbox reads, writes and runs only inside the workspace")
    return real


def argv_of(command: Command | Sequence[str]) -> list[str]:
    return ["sh", "-c", command] if isinstance(command, str) else list(command)


def _processes() -> list[Path]:
    proc = Path("/proc")
    return list(proc.glob("[0-9]*")) if proc.is_dir() else []  # Linux; elsewhere none are found


def _cwd_inside(entry: Path, root: Path) -> bool:
    try:
        cwd = os.readlink(entry / "cwd")
    except OSError:
        return False
    prefix = str(root)
    return cwd == prefix or cwd.startswith(prefix + os.sep)


def _marked(entry: Path, mark: bytes) -> bool:
    try:
        return mark in (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _started_in(root: Path) -> list[int]:
    """Pids NiceEval started in the workspace under `root` (they carry its MARKER)."""
    mark = f"{MARKER}={root.name}".encode()
    own = os.getpid()
    return [int(entry.name) for entry in _processes() if int(entry.name) != own and _marked(entry, mark)]


def visitors_of(root: Path) -> list[int]:
    """Pids working inside `root` that NiceEval did not start (a user's shell in a kept workspace)."""
    mark = f"{MARKER}={root.name}".encode()
    own = os.getpid()
    return [int(entry.name) for entry in _processes()
            if int(entry.name) != own and _cwd_inside(entry, root) and not _marked(entry, mark)]


def _kill(pids: Sequence[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_started_in(root: Path) -> None:
    """Kill every process NiceEval started in the workspace under `root`, and nothing else."""
    _kill(_started_in(root))


def kill_everything_in(root: Path, groups: set[int]) -> None:
    """An attempt's own teardown: kill the groups it started, every process carrying its marker
    (a daemonised one that left its group and the workspace), and any process still working
    inside the workspace it made (one that cleared its environment)."""
    for pid in list(groups):
        kill_group(pid)
    groups.clear()
    _kill(sorted(set(_started_in(root)) | {int(e.name) for e in _processes()
                                           if int(e.name) != os.getpid() and _cwd_inside(e, root)}))


_NO_FOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _read_file(target: Path, shown: str, max_bytes: int) -> bytes:
    """A regular file's bytes up to `max_bytes` (a device or FIFO is never read: refused by kind)."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | _NO_FOLLOW)
    except FileNotFoundError:
        raise FileNotFoundError(f"{shown}: no such file in the sandbox workspace") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{shown}: a directory of the sandbox workspace, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise FileNotFoundError(f"{shown}: a {node_kind(info.st_mode) or 'special file'} in the sandbox "
                                    "workspace, not a regular file")
        if info.st_size > max_bytes:
            raise FileTooLarge(shown, info.st_size, max_bytes)
        data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise FileTooLarge(shown, max(info.st_size, len(data)), max_bytes)
        return data


def _write_file(target: Path, data: bytes, shown: str) -> None:
    """A FIFO, socket or device the agent left at the path is replaced, as a container's write
    replaces it, never opened: a FIFO's open waited for a reader forever."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if node_kind(os.lstat(target).st_mode) is not None:
            os.unlink(target)
    except FileNotFoundError:
        pass
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | _NO_FOLLOW, 0o644)
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # made there again between the check and the open
            raise OSError(f"{shown}: not a regular file in the sandbox workspace, so it was not written")
        handle.write(data)


def _state(full: Path, cancel: Cancel | None, budget: TextBudget) -> FileState | None:
    """One entry of a snapshot: never follows a link, never opens a device, a FIFO or a socket, and
    never reads more than DIFFABLE_BYTES of a file (a sparse 40 GB file is compared by its stamp)."""
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return None  # vanished between the walk and now
    except OSError as exc:  # in a folder the agent left listable but not searchable (`chmod a-x`): unknown
        return FileState.stamped(0, f"unstated:{exc.errno}", f"unreadable: {exc.strerror or exc}")
    if stat.S_ISLNK(info.st_mode):
        try:
            return FileState.link(os.readlink(full).encode("utf-8", "surrogateescape"))
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode):
        node = node_kind(info.st_mode)
        return FileState.special(node) if node is not None else None
    stamp = f"{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"
    if info.st_size > DIFFABLE_BYTES:
        return FileState.stamped(info.st_size, stamp, f"{info.st_size} bytes, over the "
                                 f"{DIFFABLE_BYTES >> 20} MiB a sandbox diff reads")
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | _NO_FOLLOW)
    except OSError as exc:
        return FileState.stamped(info.st_size, stamp, f"unreadable: {exc.strerror or exc}")
    with os.fdopen(fd, "rb") as handle:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):  # swapped since the lstat
            node = node_kind(now.st_mode)
            return FileState.special(node) if node is not None else None
        if cancel is not None:
            cancel.check()
        data = handle.read(DIFFABLE_BYTES + 1)
    if len(data) > DIFFABLE_BYTES:  # it grew while being read
        return FileState.stamped(len(data), f"grown:{stamp}", f"over the {DIFFABLE_BYTES >> 20} MiB a sandbox "
                                 "diff reads")
    return FileState.of(data, budget)


def _is_link(path: Path) -> bool:
    try:
        return path.is_symlink()
    except OSError:  # past PATH_MAX: the walk's `onerror` names that folder
        return False


def _copy_template(template: str, dest: Path) -> None:
    problem = template_problem(template)
    if problem is not None:
        raise OSError(problem)
    shutil.copytree(template, dest, symlinks=True)


def remove_tree(root: Path) -> None:
    """Remove a sandbox folder whatever modes the agent left in it. A folder without write or search
    permission (`chmod 555`, as Go's module cache makes its folders) kept what was in it, and the
    workspace outlived the run; such folders are given back to their owner (`u+rwx`) and removed."""
    shutil.rmtree(root, ignore_errors=True)
    if not os.path.lexists(root):
        return
    folders = [str(root)]
    while folders:  # top-down: a folder must be searchable before what is in it can be reached
        folder = folders.pop()
        try:
            os.chmod(folder, stat.S_IRWXU)  # the processes working here are dead: nothing swaps it for a link
            with os.scandir(folder) as entries:
                folders.extend(entry.path for entry in entries if entry.is_dir(follow_symlinks=False))
        except OSError:
            continue
    shutil.rmtree(root, ignore_errors=True)


def _remove(root: Path, groups: set[int]) -> None:
    kill_everything_in(root, groups)
    remove_tree(root)


class LocalWorkspace:
    kind = "local"
    start_key = None  # a local baseline is a directory walk: cheap enough to take per attempt

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / WORK_DIR
        self.workdir = str(self.path)
        self.groups: set[int] = set()

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult:
        where = inside(self.path, cwd or ".")
        full_env = {**os.environ, **(env or {}), MARKER: self.root.name}
        return await run_host(argv_of(command), cwd=str(where), env=full_env, input=input,
                              timeout_ms=timeout_ms, groups=self.groups)

    async def read_bytes(self, path: str, max_bytes: int = READ_LIMIT) -> bytes:
        target = inside(self.path, path)
        return await asyncio.to_thread(_read_file, target, path, max_bytes)

    async def write_bytes(self, path: str, data: bytes) -> None:
        target = inside(self.path, path)
        if target == Path(os.path.realpath(self.path)):
            raise IsADirectoryError(f"{path!r} is the workspace itself, not a file")
        await asyncio.to_thread(_write_file, target, data, path)

    def snapshot(self, cancel: Cancel | None = None) -> Snapshot:
        states: dict[str, FileState] = {}
        budget = TextBudget()
        if os.path.islink(self.path):  # replaced by a link (`ln -s / workspace`): every file of it was deleted,
            return states  # as a container's read finds it; the walk would have read what the link leads to

        def unlisted(error: OSError) -> None:
            """A folder the walk could not list (the agent's `chmod 000`, a path past PATH_MAX): what it
            holds is unknown, so it is a change whose content was not read — never "nothing there"."""
            if isinstance(error, FileNotFoundError):
                return  # gone (`rm -rf` of the workspace itself): its files were deleted
            rel = os.path.relpath(error.filename, self.path) if isinstance(error.filename, str) else "."
            states[Path(rel).as_posix()] = FileState.unlisted(error.errno, str(error.strerror or error))

        for dirpath, dirnames, filenames in os.walk(self.path, onerror=unlisted):
            if cancel is not None:
                cancel.check()
            dirnames.sort()
            linked = [name for name in dirnames if _is_link(Path(dirpath) / name)]  # listed, not followed
            for name in [*filenames, *linked]:
                full = Path(dirpath) / name
                state = _state(full, cancel, budget)
                if state is not None:
                    states[full.relative_to(self.path).as_posix()] = state
        return states

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        return list(argv)

    def exec_cwd(self, cwd: str | None = None) -> str | None:
        return str(inside(self.path, cwd or "."))

    async def teardown(self, *, keep: bool) -> str | None:
        try:
            if keep:
                kill_everything_in(self.root, self.groups)
                (self.root / KEPT_FILE).write_text(json.dumps({"kept_at": time.time()}))
                return self.workdir
            # Off the loop: removing a large workspace takes seconds, and other attempts go on.
            await asyncio.to_thread(_remove, self.root, self.groups)
            return None
        finally:
            _live.forget(str(self.root))

    def info(self) -> dict[str, object]:
        return {"kind": "local"}


class LocalKind:
    name = "local"
    runs_on_host = True

    async def check(self, spec: SandboxSpec) -> str | None:
        if spec.template and not Path(spec.template).is_dir():
            return f"sandbox template {spec.template} is not a directory"
        return await asyncio.to_thread(template_problem, spec.template) if spec.template else None

    def identity(self, spec: SandboxSpec) -> str | None:
        return None

    async def probe(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_ms: int) -> CommandResult:
        """On this host, as a local workspace's commands run."""
        try:
            return await run_host(argv, timeout_ms=timeout_ms)
        except OSError as exc:  # not found, not executable: what a shell would answer
            return CommandResult(127 if isinstance(exc, FileNotFoundError) else 126, "", str(exc), 0.0)

    async def create(self, spec: SandboxSpec, *, label: str, about: Mapping[str, str] | None = None,
                     background: bool = False) -> LocalWorkspace:
        root = Path(tempfile.mkdtemp(prefix=PREFIX)).resolve()
        workspace = LocalWorkspace(root)
        _live.remember(str(root), lambda: _remove(root, workspace.groups))
        try:
            owner = {"pid": os.getpid(), "host": socket.gethostname(), "created": time.time(), "label": label,
                     **dict(about or {})}
            (root / OWNER_FILE).write_text(json.dumps(owner))
            if spec.template:
                await asyncio.to_thread(_copy_template, spec.template, workspace.path)
            else:
                workspace.path.mkdir()
        except BaseException:
            await workspace.teardown(keep=False)
            raise
        return workspace
