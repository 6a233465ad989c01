"""scipy's statistics computed in a helper process while `compare` reads and pairs.

`import scipy.stats` costs about a second of CPU, as much as a 100 000-attempt `compare` spends
reading its folds, pairing and writing; in one process the two add up (threads take turns on the
GIL). `scipy_beside()` starts a helper interpreter at once — it imports scipy, then answers the
statistics' batches (`stats.ScipyCalls`) over its stdin and stdout, one JSON line each way —
while this process reads the store and pairs the units; `niceeval compare` starts it before its
own imports. The numbers are scipy's own either way (JSON writes floats with `repr`, which reads
back to the same float, NaN included). A comparison that tests nothing never asks it, and it is
killed at the end, as it is in every case.

The helper is a convenience, never a dependency: on one core, with scipy already imported here,
or when the helper cannot be started or stops answering, the same calls run in this process.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import IO, Any

from ..stats import IN_PROCESS, computed_by

__all__ = ["ScipyProcess", "scipy_beside", "serve", "start_helper"]

#: The batches a helper answers (the `ScipyCalls` methods).
_OPERATIONS = frozenset({"fisher", "welch", "bh", "t_ppf"})

#: The helper's program: this interpreter's import path, then `serve()`.
_BOOT = ("import json, os, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "from niceeval_cli.app.scipy_helper import serve; serve(); os._exit(0)")


class ScipyProcess:
    """`ScipyCalls` answered by a helper process; once it fails, by this process for good."""

    def __init__(self, process: subprocess.Popen[str] | None) -> None:
        self._process = process

    @property
    def pid(self) -> int | None:
        """The helper's process id while it answers; None once this process answers."""
        return None if self._process is None else self._process.pid

    def fisher(self, tables: Sequence[tuple[int, int, int, int]]) -> list[float]:
        return self._ask("fisher", [list(table) for table in tables])

    def welch(self, samples: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[float]:
        return self._ask("welch", [[list(base), list(new)] for base, new in samples])

    def bh(self, p_values: Sequence[float]) -> list[float]:
        return self._ask("bh", list(p_values))

    def t_ppf(self, points: Sequence[tuple[float, int]]) -> list[float]:
        return self._ask("t_ppf", [list(point) for point in points])

    def _ask(self, operation: str, batch: list[Any]) -> list[float]:
        process = self._process
        if process is not None and process.stdin is not None and process.stdout is not None:
            try:
                process.stdin.write(json.dumps([operation, batch]) + "\n")
                process.stdin.flush()
                reply = json.loads(process.stdout.readline() or "null")
            except (OSError, ValueError):
                reply = None
            if isinstance(reply, dict) and isinstance(reply.get("ok"), list):
                return [float(value) for value in reply["ok"]]
            self.close()  # gone, or it failed: this process answers (and raises what scipy raises)
        return list(getattr(IN_PROCESS, operation)(*_arguments(operation, batch)))

    def close(self) -> None:
        """Stop the helper (it holds nothing: killed, not asked)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _arguments(operation: str, batch: list[Any]) -> tuple[Any, ...]:
    if operation == "fisher":
        return ([tuple(table) for table in batch],)
    if operation == "welch":
        return ([(base, new) for base, new in batch],)
    if operation == "t_ppf":
        return ([(probability, int(df)) for probability, df in batch],)
    return (batch,)


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def start_helper() -> ScipyProcess | None:
    """A helper process, importing scipy from now on; None when one cannot be started."""
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, json.dumps(sys.path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
    except OSError:
        return None
    return ScipyProcess(process)


@contextlib.contextmanager
def scipy_beside() -> Iterator[None]:
    """Within the block, the statistics' scipy values come from a helper process started now
    (importing scipy while the caller works), when that can help: two cores or more and scipy
    not yet imported here."""
    calls = None if "scipy.stats" in sys.modules or _cores() < 2 else start_helper()
    if calls is None:
        yield
        return
    try:
        with computed_by(calls):
            yield
    finally:
        calls.close()


def serve(requests: IO[str] | None = None, replies: IO[str] | None = None) -> None:
    """The helper's loop: scipy imports in a thread from the start while this one waits for the
    first request, then one JSON line is answered per request until the requests end — at once,
    even mid-import: a caller that is gone (killed, interrupted while starting this helper) closed
    them, and nothing is left running for it. A failed batch answers `{"error": ...}` (the caller
    then computes it itself)."""
    loading = threading.Thread(target=_import_scipy, name="niceeval-scipy-import", daemon=True)
    loading.start()
    requests = requests or sys.stdin
    replies = replies or sys.stdout
    for line in requests:
        loading.join()
        try:
            operation, batch = json.loads(line)
            if operation not in _OPERATIONS:
                raise ValueError(f"unknown operation {operation!r}")
            reply: dict[str, Any] = {"ok": getattr(IN_PROCESS, operation)(*_arguments(operation, batch))}
        except Exception as error:  # any failure is answered: the caller recomputes it and sees it
            reply = {"error": repr(error)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def _import_scipy() -> None:
    with contextlib.suppress(Exception):  # a failed import shows at the first batch, in its answer
        import scipy.stats  # noqa: F401
