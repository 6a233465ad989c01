"""What a container's workspace tar holds: the state of each file, read as the stream passes.

A docker workspace is read as one tar (`tar -c` inside the container, or the daemon's archive
call), never unpacked on the host: symlinks stay links, devices stay named, and a large file is
hashed as it passes, never held (`FileState.of_stream`).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import PurePosixPath
from typing import IO

from . import _engine, _engine_ops
from ._workspace import Cancel, FileState, Snapshot, TextBudget

__all__ = ["read_states", "tar_states"]

_NODES = (("ischr", "character device"), ("isblk", "block device"), ("isfifo", "fifo"))


def tar_states(stream: IO[bytes], cancel: Cancel | None = None) -> dict[str, FileState]:
    """The states of a `docker cp ... -` tar, read as a stream (a large workspace is never held whole:
    a file over DIFFABLE_BYTES is hashed as it passes, never kept)."""
    import tarfile  # here: only a docker sandbox reads tars, and every run imports this module

    states: dict[str, FileState] = {}
    budget = TextBudget()
    with tarfile.open(fileobj=stream, mode="r|*") as archive:
        while (member := archive.next()) is not None:
            # A tar keeps every member it read (for lookups a stream never makes; typeshed omits the
            # list): 200 000 files held 90 MB of them until the end (benchmarks/README.md, "Sandbox attack")
            archive.members.clear()  # type: ignore[attr-defined]
            if cancel is not None:
                cancel.check()
            parts = PurePosixPath(member.name).parts[1:]  # drop the workdir's own name
            if not parts:
                continue
            rel = PurePosixPath(*parts).as_posix()
            node = next((name for test, name in _NODES if getattr(member, test)()), None)
            if member.islnk():
                states[rel] = _hard_link(states, member.linkname)
            elif member.issym():
                states[rel] = FileState.link(member.linkname.encode("utf-8", "surrogateescape"))
            elif node is not None:
                states[rel] = FileState.special(node)
            elif member.isfile():
                handle = archive.extractfile(member)
                states[rel] = (FileState.of_stream(handle.read, member.size, cancel, budget) if handle is not None
                               else FileState.of(b""))
    return states


def _hard_link(states: dict[str, FileState], linkname: str) -> FileState:
    """A second name of a file met earlier in the stream (tar writes a hard link's content once): the
    same file, so the same state. It is no symlink: `ln a.txt b` adds `b`, it does not modify `a.txt`."""
    parts = PurePosixPath(linkname).parts[1:]
    found = states.get(PurePosixPath(*parts).as_posix()) if parts else None
    if found is not None:
        return found
    return FileState(hashlib.sha256(b"H" + linkname.encode("utf-8", "surrogateescape")).hexdigest(), None, 0,
                     unread="a hard link to a file the read did not see")


def read_states(process: subprocess.Popen[bytes] | _engine.ExecProcess | _engine_ops.ArchiveProcess,
                cancel: Cancel | None) -> tuple[Snapshot | None, str]:
    """The states of the tar `process` streams out (None: not a tar stream) and its stderr, once it
    has ended; a cancelled read raises here (killed on purpose: not a broken workspace)."""
    import tarfile

    assert process.stdout is not None and process.stderr is not None
    states: Snapshot | None
    try:
        states = tar_states(process.stdout, cancel)
    except tarfile.TarError:
        states = None
    except BaseException:
        process.kill()
        raise
    finally:
        process.stdout.close()
        error = process.stderr.read().decode(errors="replace").strip()
        process.stderr.close()
        process.wait()
    if cancel is not None:
        cancel.check()
    return states, error
