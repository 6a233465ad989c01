"""`niceeval sandbox list` / `prune`: the workspaces and containers NiceEval left on this machine.

Kept ones (`--keep-sandbox`) are listed with where they are; one whose owning process is gone
without tearing it down (a `kill -9`) is `orphaned`; one whose owner still runs is `in-use` and
never pruned.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ._baked import remove_images
from ._docker import LABEL, docker
from ._local import KEPT_FILE, OWNER_FILE, PREFIX, WORK_DIR, kill_started_in, remove_tree, visitors_of

__all__ = ["KeptSandbox", "Pruned", "alive", "list_sandboxes", "prune_sandboxes"]

KEPT, ORPHANED, IN_USE = "kept", "orphaned", "in-use"


@dataclass(frozen=True)
class KeptSandbox:
    kind: str  # local | docker
    location: str  # the workdir, or "docker container <name>"
    status: str  # kept | orphaned | in-use
    created: float | None
    about: Mapping[str, str]  # run, attempt, eval, experiment (as recorded at creation)

    @property
    def name(self) -> str:
        return self.location.removeprefix("docker container ")


def alive(pid: object, host: object) -> bool:
    if host != socket.gethostname() or not isinstance(pid, int):
        return host != socket.gethostname()  # another machine's: assume alive, never prune it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _local(tmp: Path) -> list[KeptSandbox]:
    found = []
    for root in sorted(tmp.glob(PREFIX + "*")):
        try:
            owner = json.loads((root / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # not one of ours (or half made; its creator removes it)
        kept = (root / KEPT_FILE).is_file()
        status = KEPT if kept else IN_USE if alive(owner.get("pid"), owner.get("host")) else ORPHANED
        about = {k: str(v) for k, v in owner.items() if k not in ("pid", "host", "created", "label")}
        found.append(KeptSandbox("local", str(root / WORK_DIR), status, owner.get("created"), about))
    return found


def _docker() -> list[KeptSandbox]:
    try:
        ids = subprocess.run([docker(), "ps", "-aq", "--filter", f"label={LABEL}"],
                             capture_output=True, text=True, timeout=30, check=False).stdout.split()
        if not ids:
            return []
        inspected = subprocess.run([docker(), "inspect", *ids], capture_output=True, text=True, timeout=60,
                                   check=False).stdout
        rows = json.loads(inspected or "[]")
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []
    found = []
    for row in rows:
        labels = (row.get("Config") or {}).get("Labels") or {}
        owner = labels.get(f"{LABEL}.owner", "")
        running = (row.get("State") or {}).get("Running", False)
        maker_alive = alive(int(owner) if owner.isdigit() else None, labels.get(f"{LABEL}.host"))
        status = IN_USE if running and maker_alive else ORPHANED if running else KEPT
        about = {k.removeprefix(f"{LABEL}."): v for k, v in labels.items()
                 if k.startswith(f"{LABEL}.") and k not in (f"{LABEL}.owner", f"{LABEL}.host")}
        name = str(row.get("Name", "")).lstrip("/")
        found.append(KeptSandbox("docker", f"docker container {name}", status, None, about))
    return found


def list_sandboxes(tmp: Path | None = None, *, docker_too: bool = True) -> list[KeptSandbox]:
    """Every NiceEval workspace and container on this machine, kept or not."""
    found = _local(Path(tmp or tempfile.gettempdir()))
    if docker_too and shutil.which(docker()):
        found += _docker()
    return found


@dataclass(frozen=True)
class Pruned:
    """What `prune` removed, and what it left because someone is working in it."""

    removed: list[KeptSandbox]
    left: list[tuple[KeptSandbox, list[int]]]  # a local workspace and the pids working inside it


def prune_sandboxes(tmp: Path | None = None, *, docker_too: bool = True) -> Pruned:
    """Remove the kept and orphaned sandboxes (never one in use). A local workspace that a process
    NiceEval did not start is working in (a user's shell) is left, with those pids; only the
    processes NiceEval started there are killed."""
    removed: list[KeptSandbox] = []
    left: list[tuple[KeptSandbox, list[int]]] = []
    for item in list_sandboxes(tmp, docker_too=docker_too):
        if item.status == IN_USE:
            continue
        if item.kind == "local":
            root = Path(item.location).parent
            visitors = visitors_of(root)
            if visitors:
                left.append((item, visitors))
                continue
            kill_started_in(root)
            remove_tree(root)
        else:
            subprocess.run([docker(), "rm", "-f", "-v", item.name], capture_output=True, timeout=60, check=False)
        removed.append(item)
    if docker_too and shutil.which(docker()):
        # Template images (`_baked`) of dead runs: once their kept containers went, nothing uses them.
        remove_images(None, makers_gone=False, alive=alive)
    return Pruned(removed, left)
