"""The rich Console every command prints through, handing a reader that went away to the one
broken-pipe policy (`_stdout`, applied by the command guard: exit 0).

rich's own answer to a broken pipe (`Console.on_broken_pipe`) points stdout at /dev/null and
exits 1, which the guard lets through as any SystemExit: `niceeval query --format table | head`
and `niceeval compare ... | head` exited 1, as if something had failed, where every other output
exits 0.
"""

from __future__ import annotations

import errno

from rich.console import Console


class PipeConsole(Console):
    """A Console that raises BrokenPipeError when its reader went away, instead of exiting 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True  # nothing more to write: the guard points stdout at /dev/null
        raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")


__all__ = ["PipeConsole"]
