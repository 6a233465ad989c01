"""`local`: a fresh temporary directory per attempt. No isolation: commands run as the user, on the host.

Layout: `<tmp>/niceeval-sandbox-XXXX/` holds `owner.json` (who made it, for `niceeval sandbox
list`), `kept.json` once kept, and `workspace/` — the workdir, so those files never show in the
workspace's diff.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from . import _live
from ._proc import kill_group, run_host
from ._spec import Command, SandboxSpec
from ._workspace import CommandResult, FileState, Snapshot

__all__ = [
    "KEPT_FILE", "OWNER_FILE", "PREFIX", "WORK_DIR", "LocalKind", "LocalWorkspace", "argv_of", "inside",
    "kill_everything_in",
]

PREFIX = "niceeval-sandbox-"
OWNER_FILE = "owner.json"
KEPT_FILE = "kept.json"
WORK_DIR = "workspace"


def inside(root: Path, path: str) -> Path:
    """`path` relative to the workspace root; refuses paths that leave it."""
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"{path!r}: sandbox paths are relative to the workspace and stay inside it")
    return root / rel


def argv_of(command: Command | Sequence[str]) -> list[str]:
    return ["sh", "-c", command] if isinstance(command, str) else list(command)


def _processes_under(root: Path) -> list[int]:
    """Pids whose working directory is inside `root` (Linux /proc; elsewhere none are found)."""
    found = []
    prefix = str(root)
    for entry in Path("/proc").glob("[0-9]*") if Path("/proc").is_dir() else ():
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if (cwd == prefix or cwd.startswith(prefix + os.sep)) and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def kill_everything_in(root: Path, groups: set[int]) -> None:
    """Kill the groups we started and any process still working inside `root` (a daemonised one)."""
    for pid in list(groups):
        kill_group(pid)
    groups.clear()
    for pid in _processes_under(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _remove(root: Path, groups: set[int]) -> None:
    kill_everything_in(root, groups)
    shutil.rmtree(root, ignore_errors=True)


class LocalWorkspace:
    kind = "local"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / WORK_DIR
        self.workdir = str(self.path)
        self.groups: set[int] = set()

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult:
        where = inside(self.path, cwd) if cwd else self.path
        full_env = {**os.environ, **env} if env else None
        return await run_host(argv_of(command), cwd=str(where), env=full_env, input=input,
                              timeout_ms=timeout_ms, groups=self.groups)

    async def read_bytes(self, path: str) -> bytes:
        target = inside(self.path, path)
        if not target.is_file():
            raise FileNotFoundError(f"{path}: no such file in the sandbox workspace")
        return target.read_bytes()

    async def write_bytes(self, path: str, data: bytes) -> None:
        target = inside(self.path, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def snapshot(self) -> Snapshot:
        states: dict[str, FileState] = {}
        for dirpath, dirnames, filenames in os.walk(self.path):
            dirnames.sort()
            linked = [name for name in dirnames if (Path(dirpath) / name).is_symlink()]  # listed, not followed
            for name in [*filenames, *linked]:
                full = Path(dirpath) / name
                rel = full.relative_to(self.path).as_posix()
                try:
                    if full.is_symlink():
                        states[rel] = FileState.link(os.readlink(full).encode("utf-8", "surrogateescape"))
                    elif full.is_file():
                        with full.open("rb") as handle:
                            states[rel] = FileState.of_stream(handle.read, os.fstat(handle.fileno()).st_size)
                except OSError:
                    continue  # vanished or unreadable between the walk and the read
        return states

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        return list(argv)

    def exec_cwd(self, cwd: str | None = None) -> str | None:
        return str(inside(self.path, cwd) if cwd else self.path)

    async def teardown(self, *, keep: bool) -> str | None:
        try:
            if keep:
                kill_everything_in(self.root, self.groups)
                (self.root / KEPT_FILE).write_text(json.dumps({"kept_at": time.time()}))
                return self.workdir
            _remove(self.root, self.groups)
            return None
        finally:
            _live.forget(str(self.root))

    def info(self) -> dict[str, object]:
        return {"kind": "local"}


class LocalKind:
    name = "local"

    async def check(self, spec: SandboxSpec) -> str | None:
        if spec.template and not Path(spec.template).is_dir():
            return f"sandbox template {spec.template} is not a directory"
        return None

    def identity(self, spec: SandboxSpec) -> str | None:
        return None

    async def create(self, spec: SandboxSpec, *, label: str, about: Mapping[str, str] | None = None) -> LocalWorkspace:
        root = Path(tempfile.mkdtemp(prefix=PREFIX)).resolve()
        workspace = LocalWorkspace(root)
        _live.remember(str(root), lambda: _remove(root, workspace.groups))
        try:
            owner = {"pid": os.getpid(), "host": socket.gethostname(), "created": time.time(), "label": label,
                     **dict(about or {})}
            (root / OWNER_FILE).write_text(json.dumps(owner))
            if spec.template:
                shutil.copytree(spec.template, workspace.path, symlinks=True)
            else:
                workspace.path.mkdir()
        except BaseException:
            await workspace.teardown(keep=False)
            raise
        return workspace
