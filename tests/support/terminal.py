"""A command run on a real terminal (a pty), as a user at a shell runs it: what it writes there,
read until it closes the terminal, and its exit code. One home for the tests that check what
NiceEval does differently on a terminal (escaped control characters, live progress)."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["on_a_terminal"]


def on_a_terminal(argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, columns: int | None = None,
                  stdin: bool = False, stderr: bool = True, quiet_s: float = 60) -> tuple[int, str, str]:
    """(exit code, what the terminal showed, stderr when not on the terminal) of `argv`: stdout
    (and stderr, unless `stderr=False`; stdin too with `stdin=True`) on a pty `columns` wide.
    Reading ends when the child closes the terminal or has written nothing for `quiet_s`."""
    master, slave = os.openpty()
    if columns is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=slave if stdin else subprocess.DEVNULL,
                            stdout=slave, stderr=slave if stderr else subprocess.PIPE)
    os.close(slave)
    chunks = []
    try:
        while select.select([master], [], [], quiet_s)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
        errors = proc.stderr.read().decode("utf-8", "replace") if proc.stderr is not None else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(master)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace"), errors
