"""A docker workspace's writes held until it is next looked at, and its reads through one `exec`.

Every `docker cp` or `docker exec` costs the daemon about a third of a container start
(benchmarks/README.md, issue 28), and an eval that writes a file and then checks its changes paid
two of them: the write in, the read out. Nothing can see a write before the workspace is next
used, so a write is held here and goes in with whatever comes next:

- a read of the whole workspace (a change assertion's snapshot, the baseline) is one
  `docker exec -u 0 ... sh -c` that first puts the held files in (`tar -x`) and then streams the
  workspace out (`tar -c`) — one daemon operation for both;
- anything else (a command, a read of one file, `exec_argv`, keeping the container) puts them
  in first with one `docker cp -`, as a write always did.

An image without `tar` (only `sh` is required) is found on its first read (exit 97, nothing
done) and remembered per image id: its workspaces write and read with `docker cp` as before.
A held write that fails is reported by the read that carried it (`OSError` naming the files).
The snapshot keeps `docker cp`'s semantics: it runs as root, a held file replaces whatever
non-directory (a symlink included) was at its path, and the stream is the workdir itself. Either
way in, a sandbox with `user=` then gives the written paths to that user (`owned_paths`).
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "NO_TAR",
    "TOO_LONG",
    "WRITE_FAILED",
    "Held",
    "fed",
    "feed",
    "has_tar",
    "owned_paths",
    "read_script",
    "remember_tar",
    "tar_of_files",
    "write_script",
    "written",
]

NO_TAR, WRITE_FAILED = 97, 98
TOO_LONG = "File name too long"  # a tar's word for a file past PATH_MAX (made one `chdir` at a time)

# $1 the workdir's parent, $2 its name, then the held paths (relative to the workdir; their tar on stdin).
_READ = ('command -v tar >/dev/null 2>&1 || exit 97; p=$1; n=$2; shift 2; '
         'if [ $# -gt 0 ]; then cd -- "$p/$n" || exit 98; '
         'for f; do if [ -L "$f" ] || [ ! -d "$f" ]; then rm -f -- "$f" || exit 98; fi; done; '
         'tar -x -f - >&2 || exit 98; fi; '
         'cd -- "$p" && exec tar -c -f - -- "$n"')

# $1 the workdir, then the held paths; their tar on stdin. Run as the sandbox's `user=`: a write lands
# only where the agent's user could write, even through a directory the agent swapped for a link after
# the path was checked (as root it could write, and `chown`, anywhere in the container).
_WRITE = ('command -v tar >/dev/null 2>&1 || exit 97; cd -- "$1" || exit 98; shift; '
          'for f; do if [ -L "$f" ] || [ ! -d "$f" ]; then rm -f -- "$f" || exit 98; fi; done; '
          'tar -x -o -f - >&2 || exit 98')

_tar_known: dict[str, bool] = {}  # image id → whether its containers have `tar`
_tar_lock = threading.Lock()


def has_tar(image_id: str | None) -> bool | None:
    """Whether containers of `image_id` have `tar` (None: not known yet)."""
    if image_id is None:
        return False  # nothing to remember it by: the `docker cp` path
    with _tar_lock:
        return _tar_known.get(image_id)


def remember_tar(image_id: str | None, present: bool) -> None:
    if image_id is not None:
        with _tar_lock:
            _tar_known[image_id] = present


def read_script(workdir: str, paths: list[str]) -> list[str]:
    """`sh -c` argv (after `docker exec -u 0 [-i] CONTAINER`) that writes `paths` from stdin, then tars the workdir."""
    clean = "/" + workdir.strip("/")
    parent, name = posixpath.split(clean)
    return ["sh", "-c", _READ, "sh", parent or "/", name, *paths]


def write_script(workdir: str, paths: list[str]) -> list[str]:
    """`sh -c` argv (after `docker exec -i -u USER CONTAINER`) that writes `paths` from stdin as that user."""
    return ["sh", "-c", _WRITE, "sh", workdir, *paths]


def feed(process: Any, data: bytes) -> threading.Thread:
    """`data` written to a started exec's stdin, then closed, from a thread (its output is read
    meanwhile, or a large tar and a large answer would wait on each other)."""
    def write() -> None:
        with contextlib.suppress(OSError):
            process.stdin.write(data)
        with contextlib.suppress(OSError):
            process.stdin.close()

    feeding = threading.Thread(target=write, daemon=True)
    feeding.start()
    return feeding


def fed(process: Any, data: bytes) -> tuple[int, str]:
    """`feed`, and the exec waited for: its exit code and its stderr."""
    feeding = feed(process, data)
    if process.stdout is not None:
        while process.stdout.read(1 << 16):
            pass
    error = process.stderr.read().decode(errors="replace").strip()
    code = process.wait()
    feeding.join(timeout=5)
    return code, error


def written(code: int, error: str, paths: list[str], image_id: str | None, user: str | None) -> bool:
    """Whether the write script (`_WRITE`) wrote `paths`: False when the image has no `tar` (nothing
    done); an OSError naming them when it failed (a directory the user may not write into)."""
    if code == NO_TAR:
        remember_tar(image_id, False)
        return False
    if code != 0:
        raise OSError(f"{', '.join(sorted(paths))}: could not write into the sandbox as user {user!r}: "
                      f"{error or f'exit {code}'}")
    remember_tar(image_id, True)
    return True


def tar_of_files(files: list[tuple[str, bytes]]) -> bytes:
    """The held files as one tar of workspace-relative members (a later write of a path wins)."""
    import tarfile

    last = dict(files)
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for rel, data in last.items():
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.mtime = len(data), 0o644, now
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Held:
    """The writes of one workspace not yet in its container (thread-safe: reads run in worker threads)."""

    __slots__ = ("_files", "_lock")

    def __init__(self) -> None:
        self._files: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()

    def add(self, rel: str, data: bytes) -> None:
        with self._lock:
            self._files.append((rel, data))

    def take(self) -> list[tuple[str, bytes]]:
        with self._lock:
            files, self._files = self._files, []
            return files

    def give_back(self, files: list[tuple[str, bytes]]) -> None:
        """Put taken files back in front (their read did nothing: no `tar` in the image)."""
        with self._lock:
            self._files = [*files, *self._files]

    def flush(self, copy_in: Callable[[bytes], subprocess.CompletedProcess[bytes]]) -> list[str]:
        """Put every held file in with one `docker cp -` (`copy_in(tar)`); raises OSError naming them.
        Returns the paths put in."""
        files = self.take()
        if not files:
            return []
        done = copy_in(tar_of_files(files))
        if done.returncode != 0:
            raise OSError(f"{', '.join(sorted({rel for rel, _ in files}))}: could not write into the sandbox: "
                          f"{done.stderr.decode(errors='replace').strip()}")
        return list(dict(files))


def owned_paths(rels: list[str]) -> list[str]:
    """The written paths and the directories above them inside the workspace: what a sandbox's
    `user=` is given, as the template is given to it (`chown -R` after the copy)."""
    found: set[str] = set()
    for rel in rels:
        while rel and rel not in found:
            found.add(rel)
            rel = posixpath.dirname(rel)
    return sorted(found)

