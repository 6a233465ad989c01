"""`niceeval list` and `niceeval init` output: a ProjectListing / InitReport (app/) as text."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..app.init import InitReport
from ..app.listing import ProjectListing
from .terminal import emit as _out
from .terminal.lines import Line, blank, line, pad
from .viewmodels.text import name


def show(listing: ProjectListing, *, console: Console, json_out: bool = False) -> None:
    if json_out:
        sys.stdout.write(json.dumps(listing.as_json(), ensure_ascii=False) + "\n")
        return
    evals, experiments, where = listing.evals, listing.experiments, listing.where
    if _out.is_plain(console):
        _out.emit(console, _plain_lines(evals, experiments, where))
        return
    table = Table(title=f"{len(evals)} eval(s) under {name(where)}", title_justify="left", highlight=False)
    for column in ("id", "kind", "tags", "adapter", "file"):
        table.add_column(column, overflow="fold")
    for e in evals:
        table.add_row(*(Text(_cell(e, c)) for c in ("id", "kind", "tags", "adapter", "file")))
    console.print(table)
    table = Table(title=f"{len(experiments)} experiment(s)", title_justify="left", highlight=False)
    for column in ("id", "adapter", "model", "evals", "description"):
        table.add_column(column, overflow="fold")
    for x in experiments:
        table.add_row(*(Text(_experiment_cell(x, c)) for c in ("id", "adapter", "model", "evals", "description")))
    console.print(table)


def _cell(record: dict[str, Any], column: str) -> str:
    value = record[column]
    if column == "tags":
        return ", ".join(name(t) for t in value) or "—"
    if column == "adapter" and value is None:
        return "(experiment's)"
    return name(value) if value is not None else "—"


def _experiment_cell(record: dict[str, Any], column: str) -> str:
    if column == "evals":
        return f"{len(record['selected_evals'])} selected"
    value = record[column]
    return name(value) if value else "—"


def _plain_lines(evals: list[dict[str, Any]], experiments: list[dict[str, Any]], where: str) -> list[Line]:
    out = [line(f"{len(evals)} eval(s) under {name(where)}:")]
    rows = [[_cell(e, c) for c in ("id", "kind", "tags", "adapter", "file")] for e in evals]
    out += _aligned(["id", "kind", "tags", "adapter", "file"], rows)
    out += [blank(), line(f"{len(experiments)} experiment(s):")]
    rows = [[_experiment_cell(x, c) for c in ("id", "adapter", "model", "evals", "description")]
            for x in experiments]
    out += _aligned(["id", "adapter", "model", "evals", "description"], rows)
    return out


def _aligned(header: list[str], rows: list[list[str]]) -> list[Line]:
    """Columns padded by terminal cells, so CJK ids line up with ASCII ones."""
    widths = [max(cell_len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [line("  ".join(pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip(), indent=2)
            for row in [header, *rows]]



def init_lines(report: InitReport) -> list[Line]:
    """What was written and what was skipped, then the next step."""
    lines = []
    for entry in report.entries:
        if entry.written:
            lines.append(line(("wrote   ", "green"), name(entry.path)))
        else:
            lines.append(line(("skipped ", "yellow"), f"{name(entry.path)} (it already exists; left unchanged)"))
    lines += [blank(), line("Next: ", ("niceeval run", "bold"), " then ", ("niceeval view", "bold"),
                            " (niceeval list shows what was discovered).")]
    return lines


def show_init(report: InitReport, *, console: Console) -> None:
    _out.emit(console, init_lines(report))
