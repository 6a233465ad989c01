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

__all__ = ["COMMAND_EXIT_CODES", "EXIT_MEANING", "ExitCode", "Interrupted", "NiceEvalError", "SetupError", "UsageError"]


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


_O, _F, _U, _S, _I, _D, _X, _C = (
    ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE, ExitCode.SETUP, ExitCode.INTERNAL, ExitCode.UNDECIDED,
    ExitCode.STORE_UNAVAILABLE, ExitCode.INTERRUPTED,
)
_BUG = "internal error (a bug in NiceEval): a short message and where the traceback was written"
_STOPPED = "interrupted (Ctrl-C or SIGTERM)"
_STORE_BUSY = "the store cannot be used now (locked beyond the busy timeout, disk full, read-only)"

#: The exit codes each command can end with, and what each means there: every command's
#: `--help` lists its own from here (cli/_common.py), and docs/cli.md says the same.
COMMAND_EXIT_CODES: dict[str, dict[ExitCode, str]] = {
    "run": {
        _O: "every pass-style eval passed under its pass_rule, every score attempt scored with its gate passed",
        _F: "a definite failure: a pass-style eval failed, or a score gate failed",
        _U: "usage or configuration error (bad flag, invalid niceeval.toml, an eval module that does not "
            "import, nothing selected, a --junit path that cannot be written)",
        _S: "setup error: a judge, adapter or sandbox preflight failed; the affected attempts were not dispatched",
        _I: _BUG,
        _D: "nothing failed for certain, but something could not be decided (errored, unrankable, "
            "gate unavailable, slots not run)",
        _X: "the store could not be written (locked beyond the busy timeout, disk full, read-only); "
            "what was sealed is kept",
        _C: _STOPPED + ": in-flight attempts sealed errored (interrupted), the run marked interrupted",
    },
    "regrade": {
        _O: "every regraded pass-style eval passed, every score attempt scored with its gate passed",
        _F: "a definite failure under the new judge: a pass-style eval failed, or a score gate failed",
        _U: "usage error: unknown run or experiment, a bad flag value, nothing to regrade, or attempts "
            "sealed without their judge inputs (unless --skip-missing)",
        _S: "setup error: the new judge's preflight failed; the attempts it would grade were not regraded",
        _I: _BUG,
        _D: "nothing failed for certain, but something could not be decided (errored, unrankable, "
            "gate unavailable, a judge unavailable)",
        _X: "the store could not be written (locked beyond the busy timeout, disk full, read-only); "
            "what was sealed is kept",
        _C: _STOPPED + ": attempts regraded before the interrupt are kept, the run marked interrupted",
    },
    "view": {
        _O: "shown",
        _U: "usage error: unknown or ambiguous run or attempt id, unknown --state, no store yet, "
            "not a NiceEval store",
        _I: _BUG, _X: _STORE_BUSY, _C: _STOPPED,
    },
    "query": {
        _O: "rows printed",
        _U: "usage error: unknown target, format or run id, no store yet, invalid SQL, a --sql statement that "
            "tries to write",
        _I: _BUG, _X: _STORE_BUSY,
        _C: _STOPPED + ", also while a --sql statement runs",
    },
    "list": {
        _O: "listed",
        _U: "configuration error: invalid niceeval.toml, an eval module that does not import",
        _I: _BUG, _C: _STOPPED,
    },
    "init": {
        _O: "written (a file that exists already is left as it is)",
        _U: "the folder cannot be written",
        _I: _BUG, _C: _STOPPED,
    },
    "compare": {
        _O: "compared (whatever changed), unless --fail-on says otherwise",
        _F: "a pair is in a --fail-on class (significant-regression: a regression larger than the noise)",
        _U: "usage error: unknown or ambiguous run id, an experiment the run does not hold, a bad --format or "
            "--fail-on",
        _I: _BUG,
        _D: "--fail-on significant-regression and nothing significant, but a regression could not be told "
            "from the noise (within noise or untestable): run more attempts",
        _X: _STORE_BUSY, _C: _STOPPED,
    },
    "report": {
        _O: "written; its path is printed",
        _U: "usage error: unknown or ambiguous run id, a --baseline or --experiments that does not apply, an "
            "--out path that cannot be written",
        _I: _BUG, _X: _STORE_BUSY, _C: _STOPPED,
    },
    "merge": {
        _O: "merged (with --exit-code: and the merged run passed)",
        _F: "with --exit-code: the merged run has a definite failure",
        _U: "merge refused, nothing written: the same id with other content, shards of another plan or N, a "
            "malformed row, a bad path",
        _S: "with --exit-code: the merged run had a setup error",
        _I: _BUG,
        _D: "with --exit-code: nothing failed for certain, but something is undecided or a shard is missing",
        _X: _STORE_BUSY, _C: _STOPPED,
    },
    "label": {
        _O: "the label was recorded",
        _U: "usage error: unknown or ambiguous attempt, unknown key, a value not on the assertion's scale, "
            "no store yet",
        _I: _BUG, _X: _STORE_BUSY, _C: _STOPPED,
    },
    "label import": {
        _O: "every row was recorded",
        _U: "nothing written: a bad row (not JSON, a missing field, an unknown attempt or key, a value off the "
            "scale; the message names file and line), a file that cannot be read",
        _I: _BUG, _X: _STORE_BUSY, _C: _STOPPED,
    },
    "label export": {
        _O: "labels printed",
        _U: "usage error: unknown or ambiguous run id, no store yet",
        _I: _BUG, _X: _STORE_BUSY, _C: _STOPPED,
    },
    "review": {
        _O: "stopped with Ctrl-C (every click was stored as it was made)",
        _U: "usage error: unknown or ambiguous run id, a bad --only, a --port that cannot be listened on, no store yet",
        _I: _BUG, _X: _STORE_BUSY,
    },
    "judge agreement": {
        _O: "figures printed (also when no judge result is labelled)",
        _U: "usage error: unknown or ambiguous run id, a bad --format or --confidence, --run with --between, "
            "no store yet",
        _I: _BUG, _X: _STORE_BUSY, _C: _STOPPED,
    },
    "sandbox list": {_O: "listed", _I: _BUG, _C: _STOPPED},
    "sandbox prune": {_O: "removed what could be removed (a sandbox in use is left, with a note)", _I: _BUG,
                      _C: _STOPPED},
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
