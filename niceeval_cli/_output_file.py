"""Writing a file the user named (`run --junit PATH`, `merge --junit PATH`, `report --out PATH`).

The user names a place to write; what they mean is whatever that name points at:
- a symlink is followed: the file it points at is written, the link stays a link (replacing the
  link with a regular file would, as root, turn `--junit /dev/stdout` into a plain file);
- a regular file (or a new one) is written atomically: a temp file beside the *resolved* target,
  then renamed over it, so a reader never sees half a file; a file that existed keeps its mode;
- a name for one of this process's open files (`/dev/stdout`, `/dev/fd/N`) is written through
  that open file, after what the command printed there (`--junit /dev/stdout > out.txt` keeps
  both, in order);
- anything else that is not a regular file (a terminal, a pipe, a FIFO, a device) is written
  directly: there is nothing to rename over.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["write_output"]

_MAX_HOPS = 40  # symlinks followed before giving up (the kernel's own limit)
#: Names that stand for one of this process's open files, not for a place on disk.
_FD_ALIAS = re.compile(r"/(?:dev|proc/(self|thread-self|\d+))/fd/(\d+)")
_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def write_output(path: Path | str, write: Callable[[BinaryIO], object]) -> Path:
    """Call `write` with a binary handle on what `path` names, as the module doc says; returns
    the path written (the resolved target). OSError (IsADirectoryError for a folder) reaches
    the caller, which words it for its flag."""
    given = Path(path)
    named = _open_file_named(given)
    if named is not None:
        for stream in (sys.stdout, sys.stderr):  # what the command printed comes first
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        with os.fdopen(os.dup(named), "wb") as handle:
            write(handle)
        return given
    try:
        info: os.stat_result | None = os.stat(given)  # follows links, /proc's magic ones too
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(given))
    if info is not None and not stat.S_ISREG(info.st_mode):
        with os.fdopen(os.open(given, os.O_WRONLY), "wb") as handle:
            write(handle)
        return given
    target = Path(os.path.realpath(given))  # every link resolved; a dangling one names its target
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(temp, mode)  # mkstemp makes it private; an output file is as readable as any other
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def _open_file_named(path: Path) -> int | None:
    """The descriptor `path` names when it, or a link on the way to its target, is an alias of
    one of this process's open files (`/dev/stdout` → 1); None for a place on disk."""
    current = str(path.absolute())
    for _ in range(_MAX_HOPS):
        match = _FD_ALIAS.fullmatch(current)
        if match and match.group(1) not in (None, "self", "thread-self", str(os.getpid())):
            match = None  # another process's open file: a place like any other
        fd = _STREAMS.get(current, int(match.group(2)) if match else None)
        if fd is not None:
            try:
                os.fstat(fd)
            except OSError:
                return None  # not open here: let opening the name say what is wrong
            return fd
        try:
            hop = os.readlink(current)
        except OSError:  # not a link (or not ours to read): a place on disk
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), hop))
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
