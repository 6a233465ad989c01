"""A run's template baked into an image once, so its containers start with the template in them.

Copying the template into every container (`docker cp`) costs the daemon about a third of what
starting the container does (benchmarks/README.md, issue 28). The template is the same for every
attempt of a run (`_starts` freezes it), so the first attempt of a (run, spec) starts a bake in
the background — a stopped helper container from the image, the template copied in, `docker
commit` — and attempts created once it is done start from the baked image with nothing to copy.
Attempts created meanwhile copy the template as before; both start with the same files, so the
shared baseline holds for either.

Isolation is unchanged: the baked image is a read-only lower layer like the image itself; each
attempt still has its own container and writable layer. The image and the helper carry
`niceeval.template.*` labels (run, owner pid, host): the run removes its images when its last
container is gone (the last-line cleanup, `_live`, which every run ends with), the sweep after a Ray
run (`sweep_run`), and `niceeval sandbox prune` whatever a dead process left. An image still
used by a kept container stays until that container is pruned.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import subprocess
from collections.abc import Callable, Hashable

from . import _live

__all__ = ["TEMPLATE_LABEL", "Bakery", "remove_images", "settle_bakes", "template_images"]

#: The label namespace of baked images and their helper containers (never `niceeval.sandbox`:
#: the attempts' containers inherit an image's labels, and they must not look like helpers).
TEMPLATE_LABEL = "niceeval.template"
HELPER_PREFIX = "niceeval-template-"


def _docker(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    from ._docker import client_env, docker

    return subprocess.run([docker(), *args], input=input, capture_output=True, timeout=timeout, check=False,
                          env=client_env())


def _quiet(*args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return _docker(*args, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _remove_container(name: str) -> None:
    _quiet("rm", "-f", "-v", name)


def _remove_image(image: str) -> None:
    """Never forced: an image a kept container still uses stays (prune removes it with the container)."""
    _quiet("rmi", image)


class Bakery:
    """The baked image per (run, spec) key of this process; one bake per key, in a worker thread."""

    def __init__(self) -> None:
        self._images: dict[Hashable, str | None] = {}  # key → image id; None: baking, or could not
        self._count = 0

    def image_for(self, key: Hashable, base: str, workdir: str, tar: bytes, run: str) -> str | None:
        """The baked image of `key`, or None while it bakes (the first call starts it) or if it failed.
        Called on the event loop; `settle_bakes()` waits for the bakes it started."""
        if key in self._images:
            return self._images[key]
        self._images[key] = None
        self._count += 1
        helper = f"{HELPER_PREFIX}{os.getpid()}-{self._count}"
        task = asyncio.ensure_future(asyncio.to_thread(self._bake, helper, base, workdir, tar, run))
        task.add_done_callback(functools.partial(self._baked, key))
        _baking.add(task)
        return None

    def _baked(self, key: Hashable, task: asyncio.Future[str | None]) -> None:
        _baking.discard(task)
        if not task.cancelled() and task.exception() is None:
            self._images[key] = task.result()

    @staticmethod
    def _bake(helper: str, base: str, workdir: str, tar: bytes, run: str) -> str | None:
        labels = [f"{TEMPLATE_LABEL}.run={run}", f"{TEMPLATE_LABEL}.owner={os.getpid()}",
                  f"{TEMPLATE_LABEL}.host={socket.gethostname()}"]
        _live.remember(helper, functools.partial(_remove_container, helper))
        image = None
        try:
            made = _docker("create", "--name", helper, *(f"--label={item}" for item in labels), "--network", "none",
                           "-w", workdir, "--entrypoint", "sh", base, "-c", "exit 0")
            if made.returncode == 0 and _docker("cp", "-", f"{helper}:{workdir}", input=tar).returncode == 0:
                committed = _docker("commit", helper)
                if committed.returncode == 0:
                    image = committed.stdout.decode().strip() or None
        except (OSError, subprocess.TimeoutExpired):
            image = None
        finally:
            _quiet("rm", "-f", "-v", helper)
            _live.forget(helper)
        if image is not None:
            baked = image
            # Removed with the run's last-line cleanup (never forced: a kept container keeps it).
            _live.remember(f"image {baked}", lambda: _remove_image(baked))
        return image


_baking: set[asyncio.Future[str | None]] = set()


async def settle_bakes() -> None:
    """Wait for every bake this process started (a run ends after them: their images are its to remove)."""
    while _baking:
        await asyncio.wait(set(_baking))


def template_images(run: str | None = None) -> list[tuple[str, dict[str, str]]]:
    """Baked images on this daemon (of run `run`): (id, labels)."""
    import json

    wanted = f"{TEMPLATE_LABEL}.run={run}" if run else f"{TEMPLATE_LABEL}.run"
    done = _quiet("images", "-q", "--no-trunc", "--filter", f"label={wanted}")
    ids = sorted(set(done.stdout.decode().split())) if done is not None and done.returncode == 0 else []
    if not ids:
        return []
    inspected = _quiet("image", "inspect", *ids)
    try:
        rows = json.loads(inspected.stdout or b"[]") if inspected is not None else []
    except ValueError:
        return []
    return [(str(row.get("Id")), dict((row.get("Config") or {}).get("Labels") or {})) for row in rows]


def remove_images(run: str | None, *, makers_gone: bool, alive: Callable[[int | None, str | None], bool]) -> int:
    """Remove baked images (of `run`, or all) whose maker is gone (or `makers_gone`), and their
    leftover helper containers; `alive(pid, host)` says whether a maker still runs. Never forced."""
    def gone(owner: str, host: str | None) -> bool:
        return makers_gone or not alive(int(owner) if owner.isdigit() else None, host)

    removed = 0
    helpers = _quiet("ps", "-a", "--filter", f"name={HELPER_PREFIX}",
                     "--filter", f"label={TEMPLATE_LABEL}.run={run}" if run else f"label={TEMPLATE_LABEL}.run",
                     "--format", f'{{{{.ID}}}} {{{{.Label "{TEMPLATE_LABEL}.owner"}}}} '
                                 f'{{{{.Label "{TEMPLATE_LABEL}.host"}}}}')
    if helpers is not None and helpers.returncode == 0:
        for line in helpers.stdout.decode().splitlines():
            helper, owner, host = [*line.split(" "), "", ""][:3]
            if helper and gone(owner, host):
                _quiet("rm", "-f", "-v", helper)
    for image, labels in template_images(run):
        if gone(labels.get(f"{TEMPLATE_LABEL}.owner", ""), labels.get(f"{TEMPLATE_LABEL}.host")):
            done = _quiet("rmi", image)
            removed += done is not None and done.returncode == 0
    return removed
