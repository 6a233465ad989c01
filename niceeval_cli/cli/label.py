"""`niceeval label @ATTEMPT [KEY] --value V`, `label import FILE`, `label export`: human labels."""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ._common import ConfigOpt, StoreOpt, Text, _exit_codes, _Group, _guard, app, command

#: The command `niceeval label @ATTEMPT ...` runs: any first word that is not `import` / `export`.
DEFAULT_COMMAND = "add"


class _LabelGroup(_Group):
    """`label` is a group (`import`, `export`) whose bare form labels one attempt: a first word
    that names no subcommand is the attempt, handed to the default command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [DEFAULT_COMMAND, *args]
        result: list[str] = super().parse_args(ctx, args)
        return result


label_app = typer.Typer(
    name="label",
    help="Human labels: what a person says an assertion (or a whole attempt) should have been.\n\n"
         "`niceeval label @ATTEMPT [KEY] --value V [--comment C] [--author A]` labels one assertion (by its "
         "key; without KEY the whole attempt, 1 = pass, 0 = fail). `label import FILE` and `label export` move "
         "labels as JSON Lines.",
    no_args_is_help=True, add_completion=False, rich_markup_mode="markdown", cls=_LabelGroup,
    epilog=_exit_codes("label"),
)
app.add_typer(label_app, name="label", short_help="Label an assertion by hand; import or export labels.")


@command(DEFAULT_COMMAND, on=label_app, hidden=True,
         short_help="Label one assertion (or a whole attempt).",
         epilog="**Examples**\n\n"
                "* `niceeval label @3f2a capital --value 0 --comment 'names Lyon'`\n"
                "* `niceeval label @3f2a --value 1`: the whole attempt should pass\n\n" + _exit_codes("label"))
@_guard
def label_add(
    attempt: Annotated[str, typer.Argument(
        metavar="@ATTEMPT", help="The attempt: @ and its id (a prefix is enough).", show_default=False)],
    key: Annotated[Text, typer.Argument(
        metavar="[KEY]", help="The assertion's key (`niceeval query assertions` lists them); leave it out to label "
        "the whole attempt.", show_default=False)] = None,
    value: Annotated[str, typer.Option(
        "--value", metavar="V", help="A value on the assertion's scale: 0 or 1 (closed_qa, summarizes, any "
        "non-judge assertion, a whole attempt), 0, 0.4, 0.6 or 1 (factuality).", show_default=False)] = "",
    comment: Annotated[Text, typer.Option("--comment", metavar="C", help="Why (kept with the label).")] = None,
    author: Annotated[Text, typer.Option(
        "--author", metavar="A", help="Who labels (default: `git config user.name`, else the login name).")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Record one human label; a later label by the same author for the same assertion supersedes it."""
    from .._errors import UsageError
    from ..app.labels import label_one
    from ..app.project import store_path
    from ..reports import visible

    if not value:
        raise UsageError("--value is required: the label's value on the assertion's scale, such as --value 1.")
    done = label_one(store_path(store, config), attempt, key, value, comment=comment, author=author)
    what = f"assertion {done.assertion_key!r} of attempt" if done.assertion_key is not None else "the whole attempt"
    author = visible(done.author, 160)
    typer.echo(f"labelled {what} {done.attempt_id}: {done.value:g} by {author} (label {done.label_id})")


@command("import", on=label_app, short_help="Insert labels from a JSON Lines file (all or nothing).",
         epilog="Each line: `{\"attempt_id\": ..., \"assertion_key\": ... or null, \"value\": ..., "
                "\"author\": ..., \"comment\": ...}` (author and comment optional).\n\n" + _exit_codes("label import"))
@_guard
def label_import(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A JSON Lines file, one label a line.",
                                         show_default=False)],
    author: Annotated[Text, typer.Option(
        "--author", metavar="A", help="Author of rows that name none (default: `git config user.name`, else the "
        "login name).")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Insert every label of FILE, or, if any row is bad, none (the message names file and line)."""
    from ..app.labels import import_labels
    from ..app.project import store_path

    done = import_labels(store_path(store, config), file, author=author)
    already = f"; {done.already} already stored, left as they are" if done.already else ""
    typer.echo(f"imported {done.stored} label(s) from {file}{already}")


@command("export", on=label_app, short_help="Print stored labels as JSON Lines.",
         epilog=_exit_codes("label export"))
@_guard
def label_export(
    run_ref: Annotated[Text, typer.Option(
        "--run", metavar="RUN_ID", help="Only labels of this run's attempts (default: every stored label).")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Print labels, oldest first, in `label import`'s shape (superseded ones too)."""
    from ..app.labels import export_labels
    from ..app.project import store_path
    from ..reports.formats import terminal_stream

    export_labels(store_path(store, config), run_ref, terminal_stream(sys.stdout, sys.stdout.isatty()))


@command("review", short_help="Label a run's assertions in a local page (127.0.0.1).",
         epilog="**Examples**\n\n"
                "* `niceeval review`: the latest run's judge assertions\n"
                "* `niceeval review 01M95G --only failed --port 8765`\n\n"
                "Keys on the page: 0–9 pick the scale's value, ← → move. Ctrl-C stops the server.\n\n"
                + _exit_codes("review"))
@_guard
def review(
    run_ref: Annotated[Text, typer.Argument(
        metavar="[RUN_ID]", help="The run (default: the latest).", show_default=False)] = None,
    only: Annotated[str, typer.Option(
        "--only", metavar="judge|failed|all", help="Which assertions: judge ones (default), failed ones, all.")
    ] = "judge",
    port: Annotated[int, typer.Option("--port", metavar="P", min=0, max=65535,
                                      help="Listen on this port (default: a free one).")] = 0,
    author: Annotated[Text, typer.Option(
        "--author", metavar="A", help="Who labels (default: `git config user.name`, else the login name).")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve a page on 127.0.0.1 that shows each assertion's material, the judge's measurement,
    threshold and explanation and earlier labels; each click stores one label."""
    from ..app.labels import resolved_author
    from ..app.project import store_path
    from ..app.review import load_session, serve
    from ..reports.review_page import page_html

    who = resolved_author(author)
    session = load_session(store_path(store, config), run_ref, only)

    def announce(url: str) -> None:
        typer.echo(f"niceeval review: {len(session.items)} assertion(s) of run {session.run_id} at {url} "
                   f"(labelling as {who}; Ctrl-C stops)")
        sys.stdout.flush()

    serve(session, who, page_html(session.run_id, session.items, session.token), port, announce)
