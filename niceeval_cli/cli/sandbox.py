"""`niceeval sandbox list|prune`: the sandboxes NiceEval left on this machine."""

from typing import Annotated

import typer

from ._common import _console, _exit_codes, _flag, _Group, _guard, app, command

sandbox_app = typer.Typer(
    name="sandbox", help="The sandboxes NiceEval left on this machine (kept, orphaned, in use).",
    no_args_is_help=True, add_completion=False, rich_markup_mode="markdown", cls=_Group,
)
app.add_typer(sandbox_app, name="sandbox", short_help="List or remove kept sandboxes (`--keep-sandbox`).")


@command("list", on=sandbox_app, short_help="Show kept, orphaned and in-use sandboxes.",
                     epilog=_exit_codes("sandbox list"))
@_guard
def sandbox_list(
    json_out: Annotated[bool, _flag("--json", help="Print a JSON list.")] = False,
) -> None:
    """Show every local workspace and container NiceEval left here, with its run, attempt and eval."""
    from ..app.sandbox import list_kept
    from ..reports import sandboxes

    sandboxes.show(list_kept(), console=_console(), json_out=json_out)


@command("prune", on=sandbox_app, short_help="Remove kept and orphaned sandboxes (never one in use).",
                     epilog=_exit_codes("sandbox prune"))
@_guard
def sandbox_prune(
    json_out: Annotated[bool, _flag("--json", help="Print a JSON list of what was removed.")] = False,
) -> None:
    """Remove the kept and orphaned sandboxes; one whose run is still going is left alone."""
    from ..app.sandbox import prune_kept
    from ..reports import sandboxes

    sandboxes.show(prune_kept(), console=_console(), removed=True, json_out=json_out)
