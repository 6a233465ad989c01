"""`niceeval merge`, `niceeval list` and `niceeval init`: the project and its stores."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import ConfigOpt, _console, _exit_codes, _flag, _guard, command


@command(
    short_help="Merge stores (CI shards) into one; a shard group reads as one run.",
    epilog="**Examples**\n\n"
           "* `niceeval merge shard-*/results.db --into merged.db --exit-code`: the merge job of a CI matrix\n"
           "* `niceeval view GROUP --store merged.db`: the group as one run\n\n" + _exit_codes("merge"),
)
@_guard
def merge(
    stores: Annotated[list[Path], typer.Argument(metavar="STORE...", help="Stores to merge (shard results).")],
    into: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--into", metavar="FILE", help="The target store (default: the project's).")] = None,
    junit: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--junit", metavar="FILE", help="Also write JUnit XML of the merged run.")] = None,
    exit_code: Annotated[bool, _flag("--exit-code", help="Exit with the merged run's exit code.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Copy the sealed rows of each STORE into one store, in one transaction.

    Identical rows are skipped (merging twice changes nothing); the same id with other content
    refuses the whole merge (exit 2). Shard runs of one group then read as one run.
    """
    from ..app.merge import merge_stores
    from ..app.project import store_path
    from ..reports import merge_output

    report = merge_stores(into if into is not None else store_path(None, config), stores, junit=junit is not None)
    if junit is not None and report.sealed is not None:
        merge_output.write_merged_junit(report, junit)
    merge_output.show(report, _console())
    raise typer.Exit(report.exit_code if exit_code else 0)


@command("list", short_help="List discovered evals and configured experiments.",
             epilog="**Example**: `niceeval list --json | jq '.evals[].id'`\n\n" + _exit_codes("list"))
@_guard
def list_evals(
    json_out: Annotated[bool, _flag(
        "--json", help='Print {"evals": [...], "experiments": [...], "warnings": [...]}.')] = False,
    cases: Annotated[bool, _flag(
        "--cases", help="One line per case of an eval with cases (its id is `<eval id>[<case id>]`).")] = False,
    config: ConfigOpt = None,
) -> None:
    """List discovered evals and configured experiments (what `niceeval run` would select)."""
    from .._stdout import json_only
    from ..app.listing import list_project
    from ..app.project import load_project
    from ..reports import listing

    with json_only(json_out):  # with --json, what an eval module prints on import goes to stderr
        found = list_project(load_project(config), cases=cases)
    listing.show(found, console=_console(), json_out=json_out)


@command(short_help="Write a minimal project that runs as it is.",
             epilog="Writes niceeval.toml and evals/example.py in the current folder; never overwrites a file.\n\n"
                    + _exit_codes("init"))
@_guard
def init() -> None:
    """Write a minimal niceeval.toml and evals/example.py that run as they are (never overwrites)."""
    from ..app.init import init_project
    from ..reports import listing

    listing.show_init(init_project(Path.cwd()), console=_console())
