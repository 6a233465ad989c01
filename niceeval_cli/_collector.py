"""The cyclic garbage collector's one policy for the `niceeval` process.

A command builds what it keeps for its whole length (modules, definitions, 20 000 plan slots)
and makes few cycles while it does, yet each full collection walks everything built so far.
So the console script starts the collector at a high threshold over a frozen start-up
(`start`); a run's release point (`runner/_run.py`: planned and recorded) freezes what the run
keeps and collects what its attempts leave at a threshold above CPython's usual (`release`). A reading
command that builds its whole answer before printing it (`compare`) builds it with the
collector off and freezes it (`building`). A library or test caller that never called `start`
keeps its collector as it is.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: The first threshold while a command builds what it keeps (CPython's default is 700).
BUILD_THRESHOLD = 20_000
#: The first threshold while a run's attempts go (CPython's default is 700). A sealed attempt's
#: test context lets go of its turns and sessions (`TestContext._release`), so an attempt leaves
#: no cycles to collect; what the young generation holds is the attempts in flight, which every
#: collection walked again — at 700, every few attempts (benchmarks/README.md, session 8).
ATTEMPTS_THRESHOLD = 5_000

_started = False


def start() -> None:
    """The console script's start: what is loaded lives for the whole command."""
    global _started
    _started = True
    gc.freeze()
    _set_first_threshold(BUILD_THRESHOLD)


def release() -> None:
    """A run's release point: what exists stays for the run (frozen); attempts are collected."""
    if not _started:
        return
    gc.freeze()
    _set_first_threshold(ATTEMPTS_THRESHOLD)


@contextlib.contextmanager
def building() -> Iterator[None]:
    """A reading command's answer being built (`compare`: two runs folded, paired, tested): it
    lives until the command ends and makes no cycles worth a collection, yet even above the build
    threshold the collector walked its young objects dozens of times (benchmarks/README.md,
    compare). Off meanwhile; what was built is then frozen."""
    if not _started:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _set_first_threshold(first: int) -> None:
    _, second, third = gc.get_threshold()
    gc.set_threshold(first, second, third)


__all__ = ["ATTEMPTS_THRESHOLD", "BUILD_THRESHOLD", "building", "release", "start"]
