"""The sandboxes of one run that nobody will tear down any more: swept after the run.

An attempt tears its sandbox down itself, and the process's last-line cleanup (`_live`) removes
what an attempt could not reach. A process that dies outright — a Ray worker killed or lost with
its node, a worker the driver had to kill after Ctrl-C — does neither: its workspaces stay, with
the processes its attempts started, and its containers keep running. Each sandbox records the
run it belongs to and the process that made it (`owner.json`, the container's labels); after a
run, the driver sweeps that run's sandboxes whose maker is gone and that were not kept.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ._baked import remove_images
from ._docker import docker
from ._kept import KEPT, ORPHANED, KeptSandbox, alive, list_sandboxes
from ._local import kill_everything_in, remove_tree

__all__ = ["sweep_run"]


def sweep_run(run_id: str, tmp: Path | None = None, *, docker_too: bool = True,
              makers_gone: bool = False) -> list[KeptSandbox]:
    """Remove run `run_id`'s orphaned sandboxes (maker gone, not kept) on this machine: the
    processes NiceEval started in a local workspace (its marker, wherever they went) and those
    still working inside it, the workspace, the container — what the attempt's teardown does.
    Kept sandboxes are never touched, nor those whose maker still runs — unless `makers_gone`
    (the caller has just killed every process that made this run's sandboxes: its Ray workers).
    The run's baked template images go too (one a kept container uses stays: never forced)."""
    removed = []
    for item in list_sandboxes(tmp, docker_too=docker_too):
        if item.about.get("run") != run_id or item.status == KEPT:
            continue
        if item.status != ORPHANED and not makers_gone:
            continue
        if item.kind == "local":
            root = Path(item.location).parent
            kill_everything_in(root, set())  # what its teardown would have killed: marked, or working inside
            remove_tree(root)
        else:
            try:
                subprocess.run([docker(), "rm", "-f", "-v", item.name], capture_output=True, timeout=60, check=False)
            except (OSError, subprocess.TimeoutExpired):
                continue
        removed.append(item)
    if docker_too and shutil.which(docker()):
        remove_images(run_id, makers_gone=makers_gone, alive=alive)  # its template images (`_baked`)
    return removed
