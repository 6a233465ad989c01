"""The `niceeval` command (typer). Thin: it parses, calls one app/ function, hands the result to
reports/ and prints a NiceEvalError as one paragraph with its exit code.

Heavy imports (runner, store, rich, pydantic) happen inside the commands so that
`niceeval --version` and `--help` stay fast. The command modules keep real annotations (no
`from __future__ import annotations`): typer builds every command on each start and reads their
annotations; as strings they were compiled again each time (benchmarks/README.md, start-up).

One module per group of commands (`run`, `read`: view and query, `project`: merge, list and
init, `compare`: compare and report, `label`: human labels, `judge`: judge agreement,
`regrade`, `sandbox`), registered on the one typer app of `_common` in the order `niceeval --help` lists them.
The console script is `niceeval_cli.cli:main`.
"""

import importlib
import signal
import sys

from .. import _collector
from . import _common
from ._common import app

#: Each module registers its commands when imported: this order is `niceeval --help`'s.
COMMAND_MODULES = ("run", "read", "project", "compare", "label", "judge", "regrade", "sandbox")
for _module in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_module}")


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (typer handles usage errors: exit 2)."""
    _common._console_script = True
    # SIGTERM during start-up (config, discovery, planning: before the run loop installs its own
    # handlers) ends the command like Ctrl-C does: exit 130, never rc 143 halfway through a write.
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    _collector.start()
    app(args=sys.argv[1:] if argv is None else argv, prog_name="niceeval")


__all__ = ["app", "main"]
