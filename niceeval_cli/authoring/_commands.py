"""A workspace command that could not run is unknown evidence, not a result.

`t.check(tests.exit_code, equals(0))` must not read "expected equals(0), got 1" when the test
runner is not installed in the workspace: nothing was tested, so nothing failed. A command that
could not start (no such program, not executable, `python -m` of a module that is not installed)
gets an unavailable `exit_code` whose reason keeps the command's own words (its stderr), so every
match over it is `unavailable` — the shared rule for unknown evidence — while `returncode`,
`stdout` and `stderr` keep what the process said.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import replace

from ..expect import NumericMaterial
from ..sandbox import CommandResult

__all__ = ["COMMAND_UNAVAILABLE", "could_not_run", "not_started", "settle"]

#: The reason's first words (`command-unavailable: <what the command said>`).
COMMAND_UNAVAILABLE = "command-unavailable"
_SHELL_CANNOT = {126: "not executable", 127: "not found"}  # POSIX: the shell could not run it
_REASON_CHARS = 500  # of the command's stderr kept in the reason (the whole stderr stays on the result)
# runpy's own words when `python -m X` finds no module X (a test that fails to import prints others)
_NO_MODULE = re.compile(
    r"^\S*: (?:No module named ([\w.]+)|Error while finding module specification for '([\w.]+)'.*)$")


def could_not_run(command: str | Sequence[str], result: CommandResult) -> str | None:
    """Why `command` never ran, in its own words (None when it ran, whatever it exited with)."""
    if result.timed_out or result.exit_code is None or not isinstance(result.exit_code, int):
        return None
    said = _last_line(result.stderr)
    if result.exit_code in _SHELL_CANNOT:
        return said or f"exit {result.exit_code}: the program was {_SHELL_CANNOT[result.exit_code]}"
    if result.exit_code == 1:
        found = _NO_MODULE.match(said)
        module = _module_argument(command)
        if found and module is not None:
            missing = found.group(1) or found.group(2)
            if module == missing or module.startswith(missing + "."):
                return said
    return None


def settle(command: str | Sequence[str], result: CommandResult) -> CommandResult:
    """`result`, with an unavailable `exit_code` when the command could not run."""
    why = could_not_run(command, result)
    if why is None:
        return result
    return replace(result, exit_code=NumericMaterial.unavailable(_reason(why)), returncode=result.returncode)


def not_started(error: OSError, duration_ms: float = 0.0) -> CommandResult:
    """The result of a command whose program could not be started at all (no such file, no permission)."""
    said = f"{type(error).__name__}: {error}"
    return CommandResult(NumericMaterial.unavailable(_reason(said)), "", said, duration_ms, returncode=None)


def _reason(said: str) -> str:
    said = " ".join(said.split())
    if len(said) > _REASON_CHARS:
        said = said[:_REASON_CHARS] + "…"
    return f"{COMMAND_UNAVAILABLE}: {said}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _module_argument(command: str | Sequence[str]) -> str | None:
    """X of `python -m X ...` (an argv, or a shell string split as the shell would)."""
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:
            return None
    else:
        words = list(command)
    for i, word in enumerate(words[:-1]):
        if word == "-m":
            return words[i + 1]
    return None
