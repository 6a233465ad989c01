"""The one broken-pipe policy: a reader that went away (`niceeval run | head`) stops the output.

stdout is pointed at /dev/null, so later writes and the interpreter's final flush at exit do not
fail again (the Python docs' recipe for SIGPIPE). The caller decides what else follows: a run's
event relay drops that listener and the run goes on to its own exit code; any other command
ends with exit 0 like other Unix tools (`cli/_common._guard`).
"""

from __future__ import annotations

import os
import sys


def reader_went_away() -> None:
    """Point stdout at /dev/null after a BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


__all__ = ["reader_went_away"]
