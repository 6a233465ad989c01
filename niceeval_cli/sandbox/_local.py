"""`local`: a fresh temporary directory per attempt. No isolation: commands run as the user, on the host."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from ._proc import kill_group, run_host
from ._spec import Command, SandboxSpec
from ._workspace import CommandResult, FileState, Snapshot

__all__ = ["PREFIX", "LocalKind", "LocalWorkspace"]

PREFIX = "niceeval-sandbox-"


def inside(root: Path, path: str) -> Path:
    """`path` relative to the workspace root; refuses paths that leave it."""
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"{path!r}: sandbox paths are relative to the workspace and stay inside it")
    return root / rel


def argv_of(command: Command | Sequence[str]) -> list[str]:
    return ["sh", "-c", command] if isinstance(command, str) else list(command)


class LocalWorkspace:
    kind = "local"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workdir = str(root)
        self.groups: set[int] = set()

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult:
        where = inside(self.root, cwd) if cwd else self.root
        full_env = {**os.environ, **env} if env else None
        return await run_host(argv_of(command), cwd=str(where), env=full_env, input=input,
                              timeout_ms=timeout_ms, groups=self.groups)

    async def read_bytes(self, path: str) -> bytes:
        target = inside(self.root, path)
        if not target.is_file():
            raise FileNotFoundError(f"{path}: no such file in the sandbox workspace")
        return target.read_bytes()

    async def write_bytes(self, path: str, data: bytes) -> None:
        target = inside(self.root, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def snapshot(self) -> Snapshot:
        states: dict[str, FileState] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            linked = [name for name in dirnames if (Path(dirpath) / name).is_symlink()]  # listed, not followed
            for name in [*filenames, *linked]:
                full = Path(dirpath) / name
                rel = full.relative_to(self.root).as_posix()
                try:
                    if full.is_symlink():
                        states[rel] = FileState.link(os.readlink(full).encode("utf-8", "surrogateescape"))
                    elif full.is_file():
                        states[rel] = FileState.of(full.read_bytes())
                except OSError:
                    continue  # vanished or unreadable between the walk and the read
        return states

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        return list(argv)

    def exec_cwd(self, cwd: str | None = None) -> str:
        return str(inside(self.root, cwd) if cwd else self.root)

    async def teardown(self, *, keep: bool) -> str | None:
        for pid in list(self.groups):
            kill_group(pid)
        self.groups.clear()
        if keep:
            return self.workdir
        shutil.rmtree(self.root, ignore_errors=True)
        return None

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

    async def create(self, spec: SandboxSpec, *, label: str) -> LocalWorkspace:
        root = Path(tempfile.mkdtemp(prefix=PREFIX))
        try:
            if spec.template:
                shutil.copytree(spec.template, root, dirs_exist_ok=True, symlinks=True)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return LocalWorkspace(root)
