"""What an eval or experiment declares about its workspace (sandbox.md, "Declaring").

A spec is plain data: it crosses process boundaries (executors, shards), is merged field by field
(eval > experiment > project) and is fingerprinted. Live workspaces are made from it by a kind.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

__all__ = [
    "DOCKER_PIDS_LIMIT", "Command", "SandboxSpec", "SandboxSpecError", "docker_sandbox",
    "local_sandbox", "node_kind", "template_digest", "template_problem",
]

#: A command is a shell string (run with `sh -c`) or an argv list.
Command = str | tuple[str, ...]

_UNSET: Any = object()

#: The fields only a docker sandbox has.
DOCKER_ONLY = ("image", "network", "cpus", "memory", "user", "workdir")

#: Processes and threads a docker sandbox's container may hold at once (its cgroup's `pids.max`): a
#: fork bomb stops here instead of taking every process id of the host (the kernel's `pid_max`, often
#: 32768, is shared by the whole machine).
DOCKER_PIDS_LIMIT = 4096


class SandboxSpecError(ValueError):
    """A sandbox declaration that cannot work (raised where it is declared, naming the field)."""


@dataclass(frozen=True)
class SandboxSpec:
    """A sandbox declaration. `None` fields are "not declared here" until merged with the defaults."""

    kind: str | None = None
    template: str | None = None  # a directory; absolute once resolved against its declaring file
    prepare: tuple[Command, ...] | None = None
    image: str | None = None
    network: str | None = None
    cpus: float | None = None
    memory: str | None = None
    user: str | None = None
    workdir: str | None = None
    declared: frozenset[str] = field(default=frozenset(), compare=False)  # fields named by the author

    def over(self, base: SandboxSpec | None) -> SandboxSpec:
        """This declaration on top of `base`: only the fields this one names override (sandbox.md)."""
        if base is None:
            return self
        values = {f.name: getattr(base, f.name) for f in fields(self) if f.name != "declared"}
        for name in self.declared:
            values[name] = getattr(self, name)
        if "kind" in self.declared and self.kind != base.kind and "image" not in self.declared:
            values["image"] = None if self.kind == "local" else values["image"]
        return SandboxSpec(**values, declared=base.declared | self.declared)

    def resolved(self) -> SandboxSpec:
        """Defaults filled in; checked for what can be checked without I/O."""
        kind = self.kind or "local"
        if kind == "local":  # what a docker layer below set does not apply to a local sandbox
            return replace(self, kind=kind, prepare=tuple(self.prepare or ()), image=None, network=None,
                           cpus=None, memory=None, user=None, workdir=None)
        spec = replace(
            self,
            kind=kind,
            prepare=tuple(self.prepare or ()),
            network=self.network or "none",
            workdir=self.workdir or "/workspace",
        )
        if kind == "docker" and not spec.image:
            raise SandboxSpecError("a docker sandbox needs `image` (a local image name or id)")
        return spec

    def fingerprint_view(self, *, image_id: str | None = None) -> dict[str, Any]:
        """What can change a result: kind, image id, template content, prepare, network, limits."""
        view: dict[str, Any] = {
            "kind": self.kind,
            "image": image_id or self.image,
            "template": template_digest(self.template) if self.template else None,
            "prepare": [list(c) if isinstance(c, tuple) else c for c in (self.prepare or ())],
            "network": self.network,
            "cpus": self.cpus,
            "memory": self.memory,
            "user": self.user,
            "workdir": self.workdir,
        }
        if self.kind == "docker":
            view["pids_limit"] = DOCKER_PIDS_LIMIT  # a limit the agent meets, as cpus and memory are
        if self.user is not None:
            # The files an eval writes became `user`'s (they were root's, which the agent could
            # not edit), then were written as `user` (root followed a link the agent swapped in),
            # in a workspace folder that is `user`'s: a result sealed before re-executes once.
            view["writes_owned_by"] = "user, written as the user"
        return view


def _command(value: object, where: str) -> Command:
    if isinstance(value, str):
        if not value.strip():
            raise SandboxSpecError(f"{where}: a prepare command must not be empty")
        return value
    if isinstance(value, Sequence) and value and all(isinstance(w, str) and w for w in value):
        return tuple(value)
    raise SandboxSpecError(f"{where}: expected a shell string or a non-empty list of strings, got {value!r}")


def _commands(prepare: object) -> tuple[Command, ...]:
    if isinstance(prepare, str):
        return (_command(prepare, "prepare"),)
    if not isinstance(prepare, Sequence):
        raise SandboxSpecError(f"prepare: expected a list of commands, got {type(prepare).__name__}")
    return tuple(_command(c, f"prepare[{i}]") for i, c in enumerate(prepare))


def _build(kind: str | None, base_dir: Path | None, **given: Any) -> SandboxSpec:
    declared = {name for name, value in given.items() if value is not _UNSET}
    values = {name: (None if value is _UNSET else value) for name, value in given.items()}
    if values.get("template") is not None:
        path = Path(os.fspath(str(values["template"])))
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        values["template"] = str(path)
    if values.get("prepare") is not None:
        values["prepare"] = _commands(values["prepare"])
    if values.get("network") is not None and not isinstance(values["network"], str):
        raise SandboxSpecError(f"network: expected a docker network name such as 'none', got {values['network']!r}")
    if values.get("cpus") is not None:
        cpus = values["cpus"]
        if isinstance(cpus, bool) or not isinstance(cpus, int | float) or cpus <= 0:
            raise SandboxSpecError(f"cpus: expected a positive number, got {cpus!r}")
    for name in ("memory", "user", "workdir", "image"):
        if values.get(name) is not None and (not isinstance(values[name], str) or not values[name]):
            raise SandboxSpecError(f"{name}: expected non-empty text, got {values[name]!r}")
    return SandboxSpec(kind=kind, declared=frozenset(declared | ({"kind"} if kind else set())), **values)


def local_sandbox(template: str | os.PathLike[str] | None = _UNSET, prepare: Sequence[Any] | str = _UNSET,
                  *, _base_dir: Path | None = None) -> SandboxSpec:
    """A fresh temporary directory per attempt, the template copied in. No isolation (docs/sandbox.md)."""
    return _build("local", _base_dir or _caller_dir(), template=template, prepare=prepare)


def docker_sandbox(image: str, template: str | os.PathLike[str] | None = _UNSET, prepare: Sequence[Any] | str = _UNSET,
                   network: str = _UNSET, cpus: float | None = _UNSET, memory: str | None = _UNSET,
                   user: str | None = _UNSET, workdir: str = _UNSET, *, _base_dir: Path | None = None) -> SandboxSpec:
    """One container per attempt from a local image, no network unless asked (docs/sandbox.md)."""
    return _build("docker", _base_dir or _caller_dir(), image=image, template=template, prepare=prepare,
                  network=network, cpus=cpus, memory=memory, user=user, workdir=workdir)


def spec_from_mapping(table: Mapping[str, Any], base_dir: Path) -> SandboxSpec:
    """A sandbox table (`[sandbox]`, `[experiments.<id>.sandbox]`) → a spec naming only its keys.

    Without `kind` the table is partial: it overrides fields of the sandbox it is merged over.
    """
    given = dict(table)
    kind = given.pop("kind", None)
    if kind is not None and (not isinstance(kind, str) or not kind):
        raise SandboxSpecError(f"kind: expected a sandbox kind such as 'local' or 'docker', got {kind!r}")
    allowed = {"template", "prepare"} | (set(DOCKER_ONLY) if kind != "local" else set())
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise SandboxSpecError(f"unknown key(s) {', '.join(unknown)} for kind {kind!r}; allowed: "
                               f"kind, {', '.join(sorted(allowed))}")
    return _build(kind, base_dir, **{name: given.get(name, _UNSET) for name in allowed})


def _caller_dir() -> Path | None:
    import sys

    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("niceeval_cli.sandbox"):
        frame = frame.f_back  # type: ignore[assignment]
    filename = frame.f_globals.get("__file__") if frame is not None else None
    return Path(filename).resolve().parent if filename else None


def node_kind(mode: int) -> str | None:
    """What a non-regular, non-directory, non-symlink file is ("fifo", "character device", ...)."""
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return None


def _entries(root: Path, *, empty_dirs: bool = False) -> list[tuple[str, Path, os.stat_result]]:
    """Every entry under `root` except directories, sorted, never following a link; with
    `empty_dirs`, the empty directories too (a workspace gets them; the others are implied by
    the paths of what they hold)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                found.append((path.relative_to(root).as_posix(), path, info))
            elif empty_dirs and not any(os.scandir(path)):
                found.append((path.relative_to(root).as_posix(), path, info))
    return sorted(found, key=lambda entry: entry[1].relative_to(root).parts)  # as Path sorts: stable digests


def template_problem(template: str) -> str | None:
    """Why `template` cannot be copied into a workspace (a device, FIFO or socket in it), or None.

    Such a node has no content to copy: a device can read forever (/dev/zero), a FIFO blocks.
    """
    for rel, _path, info in _entries(Path(template)):
        node = node_kind(info.st_mode)
        if node is not None:
            return (f"sandbox template {template} contains {rel}, a {node}: a template holds regular files, "
                    "directories and symlinks; remove it (or create it in `prepare`)")
    return None


def template_digest(template: str) -> str:
    """sha256 over the template's relative paths, modes and contents (sorted), and its empty
    directories (copied into every workspace as they are): its identity.

    Symlinks count by their target and special files by their kind: neither is ever opened."""
    root = Path(template)
    h = hashlib.sha256()
    if not root.is_dir():
        h.update(b"missing:" + template.encode("utf-8", "surrogatepass"))
        return h.hexdigest()
    for rel_text, path, info in _entries(root, empty_dirs=True):
        rel = rel_text.encode("utf-8", "surrogatepass")
        h.update(len(rel).to_bytes(4, "big") + rel)
        if stat.S_ISDIR(info.st_mode):  # an empty one: a template without any digests as before
            h.update(b"D")
        elif stat.S_ISLNK(info.st_mode):
            h.update(b"L" + os.readlink(path).encode("utf-8", "surrogatepass"))
        elif stat.S_ISREG(info.st_mode):
            h.update(b"X" if os.access(path, os.X_OK) else b"F")
            content = hashlib.sha256()
            with path.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    content.update(chunk)
            h.update(content.digest())
        else:
            h.update(b"S" + (node_kind(info.st_mode) or "other").encode())
    return h.hexdigest()
