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
import sys

from .. import _collector, _interrupt
from . import _common
from ._common import app

#: Each module registers its commands when imported: this order is `niceeval --help`'s.
COMMAND_MODULES = ("run", "read", "project", "compare", "label", "judge", "regrade", "sandbox")
for _module in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_module}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (typer handles usage errors: exit 2)."""
    _common._console_script = True
    # Ctrl-C / SIGTERM: already held by the package's first line in the `niceeval` process; this
    # covers an entry through `main()` itself (a `python -c` launcher). Inside a command's body a
    # signal raises KeyboardInterrupt (the guard: exit 130), outside one it never raises.
    _interrupt.hold()
    _collector.start()
    app(args=sys.argv[1:] if argv is None else argv, prog_name="niceeval")


__all__ = ["app", "main"]
