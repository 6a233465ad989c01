"""What every docker sandbox of one run and spec starts from, worked out once per process.

A container's daemon work is what bounds a docker-sandboxed run (benchmarks/README.md, issue 28):
each `docker cp` costs the daemon about as much as a third of starting a container. Two of them
per attempt are the same every time within a run:

- the template: read once into one tar (frozen for the run: a template edited mid-run does not
  reach later attempts half-changed), then piped into each container (`docker cp -`);
- the baseline: when nothing runs before it (no `prepare`), every container of the run made from
  the same image id, the same template bytes and the same workdir starts with the same files, so
  the first container's snapshot is every container's (each attempt gets its own copy).

Only a run's own attempts share (the key holds the run id); a template over `TAR_LIMIT` bytes
is copied from its directory per attempt as before, and its baseline is taken per attempt.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from pathlib import Path

from ._workspace import Snapshot

__all__ = ["TAR_LIMIT", "shared_baseline", "template_tar"]

#: Template bytes held in memory as one tar at most (per run and spec); larger ones are copied
#: from the directory per attempt.
TAR_LIMIT = 64 << 20
_KEEP = 4  # entries of each cache: a run uses few distinct specs, and an old run's are dropped first
# Directories whose content differs per container (hostname, hosts, mounts): never a shared baseline.
_PER_CONTAINER = ("/etc", "/proc", "/sys", "/dev", "/run")

_lock = threading.Lock()
_tars: OrderedDict[Hashable, bytes | None] = OrderedDict()
_baselines: OrderedDict[Hashable, Snapshot] = OrderedDict()
_pending: dict[Hashable, asyncio.Future[Snapshot]] = {}


def _put(cache: OrderedDict[Hashable, object], key: Hashable, value: object) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _KEEP:
        cache.popitem(last=False)


def _tar_of(template: str) -> bytes | None:
    """The template directory as a tar of relative entries (directories, files, symlinks; owned by
    root, as `docker cp` makes them anyway), or None over TAR_LIMIT bytes."""
    import tarfile  # here: only a docker sandbox makes tars, and every run imports this module

    root = Path(template)
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in [*dirnames, *sorted(filenames)]:
                path = Path(dirpath) / name
                info = archive.gettarinfo(str(path), path.relative_to(root).as_posix())
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                if info.isreg():
                    total += info.size
                    if total > TAR_LIMIT:
                        return None
                    with path.open("rb") as handle:
                        archive.addfile(info, handle)
                elif info.isdir() or info.issym():
                    archive.addfile(info)
                # anything else was refused before dispatch (template_problem)
    return buffer.getvalue()


def template_tar(key: Hashable | None, template: str) -> bytes | None:
    """The template as one tar, built once per `key` (a run and a spec); None (copy the directory)
    without a key or over TAR_LIMIT. Blocking: call it in a worker thread."""
    if key is None:
        return None
    with _lock:
        if key in _tars:
            return _tars[key]
    try:
        tar = _tar_of(template)
    except OSError:
        tar = None  # the directory copy reports what is wrong with it
    with _lock:
        if key not in _tars:
            _put(_tars, key, tar)  # type: ignore[arg-type]
        return _tars[key]


def stable_workdir(workdir: str) -> bool:
    """False for a workdir whose content differs per container before anything runs in it."""
    clean = "/" + workdir.strip("/")
    return clean != "/" and not any(clean == top or clean.startswith(top + "/") for top in _PER_CONTAINER)


async def shared_baseline(key: Hashable | None, take: Callable[[], Awaitable[Snapshot]]) -> Snapshot:
    """The baseline of a container whose start is `key`: taken once (the attempts that ask while it
    is being taken wait for it), a copy handed to each. Without a key, `take()` every time."""
    if key is None:
        return await take()
    with _lock:
        known = _baselines.get(key)
    if known is not None:
        return dict(known)
    pending = _pending.get(key)
    if pending is not None and not pending.done() and pending.get_loop() is asyncio.get_running_loop():
        try:
            return dict(await asyncio.shield(pending))
        except Exception:
            return await take()  # the first one's read failed: read this container's own
    future: asyncio.Future[Snapshot] = asyncio.get_running_loop().create_future()
    _pending[key] = future
    try:
        snapshot = await take()
    except BaseException as exc:
        if not future.done():
            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("baseline not taken"))
            future.exception()  # retrieved here: nobody may be waiting
        raise
    finally:
        if _pending.get(key) is future:
            del _pending[key]
    with _lock:
        _put(_baselines, key, snapshot)  # type: ignore[arg-type]
    future.set_result(snapshot)
    return dict(snapshot)
