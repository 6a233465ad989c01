"""Exit codes and the one error base class (low module: anything may import it).

Exception tree::

    NiceEvalError            a problem the user can fix; printed as one paragraph, never a traceback
     ├── ConfigError         niceeval.toml, eval options, selection (exit 2)
     ├── DiscoveryError      an eval module that does not import (exit 2)
     ├── StoreError          unknown / ambiguous ids, foreign or newer store (exit 2)
     │    └── StoreUnavailable  locked for too long, disk full, read-only (exit 6)
     ├── UsageError          a bad flag or argument (exit 2)
     ├── SetupError          the system under test or a judge is unreachable (exit 3)
     └── Interrupted         SIGINT / SIGTERM ended a long read (`query --sql`) (exit 130)

Each class carries its exit code, so the CLI needs no list of "user error" types.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "Interrupted", "NiceEvalError", "SetupError", "UsageError"]


class ExitCode(IntEnum):
    """Every exit code `niceeval` uses (docs/cli.md, "Exit codes")."""

    OK = 0
    FAILED = 1  # a definite failure was sealed
    USAGE = 2  # usage or configuration error
    SETUP = 3  # a preflight (judge, adapter, sandbox) failed; affected attempts not dispatched
    INTERNAL = 4  # a bug in NiceEval
    UNDECIDED = 5  # no definite failure, but something could not be decided
    STORE_UNAVAILABLE = 6  # the store cannot be written now: locked too long, disk full, read-only
    INTERRUPTED = 130


EXIT_MEANING: dict[int, str] = {
    ExitCode.OK: "everything passed",
    ExitCode.FAILED: "a definite failure",
    ExitCode.USAGE: "usage or configuration error",
    ExitCode.SETUP: "setup error",
    ExitCode.INTERNAL: "internal error",
    ExitCode.UNDECIDED: "something could not be decided",
    ExitCode.STORE_UNAVAILABLE: "the store could not be written",
    ExitCode.INTERRUPTED: "interrupted",
}


class NiceEvalError(Exception):
    """A mistake or condition the user can act on: one paragraph on stderr, exit `exit_code`."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(NiceEvalError):
    """A bad flag, argument or combination of them."""


class SetupError(NiceEvalError):
    """Something the run needs is not reachable; nothing affected was dispatched."""

    exit_code = ExitCode.SETUP


class Interrupted(NiceEvalError):
    """The user stopped a command that was reading (Ctrl-C / SIGTERM); nothing was changed."""

    exit_code = ExitCode.INTERRUPTED
