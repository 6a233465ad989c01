"""typer's CliRunner with niceeval's click command built once per process.

`typer.testing.CliRunner.invoke(app, ...)` turns the typer app into its click command tree on
every call: each command's signature and annotations read again, ~20 ms of CPU, a third to a half
of a quick in-process `niceeval query` and thousands of calls across the suite. The app never
changes within a process (its commands register when `niceeval_cli.cli` is imported), and a
click command keeps no state between invocations (each parses into a new context), so the tree
is built once and handed to every invoke. Everything else is typer's own runner: isolation of
stdin/stdout/stderr and the environment, exit codes, `catch_exceptions`.
"""

from __future__ import annotations

from typing import Any

import typer.main
import typer.testing

_BUILT: dict[int, tuple[typer.Typer, Any]] = {}


def _command_once(app: typer.Typer) -> Any:
    """The click command of `app`, built on its first use (keyed by the app object itself)."""
    built = _BUILT.get(id(app))
    if built is None or built[0] is not app:
        built = _BUILT[id(app)] = (app, typer.main.get_command(app))
    return built[1]


class CliRunner(typer.testing.CliRunner):
    """`CliRunner().invoke(app, args, ...)` as typer's, the app's command tree built once."""

    def invoke(self, app: typer.Typer, *args: Any, **kw: Any) -> Any:
        original = typer.testing._get_command
        typer.testing._get_command = _command_once  # the one name typer's invoke builds the tree with
        try:
            return super().invoke(app, *args, **kw)
        finally:
            typer.testing._get_command = original
