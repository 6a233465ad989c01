"""`niceeval list` and `niceeval init` output: a ProjectListing / InitReport (app/) as text."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .data import InitReport, ProjectListing
from .formats import print_json
from .terminal import emit as _out
from .terminal.lines import Line, blank, line, pad
from .viewmodels.text import name, plural


def _eval_columns(listing: ProjectListing) -> tuple[str, ...]:
    if listing.cases:
        return ("id", "kind", "tags", "adapter", "file")
    return ("id", "kind", "cases", "tags", "adapter", "file")


def _title(listing: ProjectListing) -> str:
    title = f"{len(listing.evals)} eval(s) under {name(listing.where)}"
    if listing.cases:
        cases = [e for e in listing.evals if e["case_id"] is not None]
        evals = len({e["eval_id"] for e in cases})
        title += f" ({plural(len(cases), 'case')} of {plural(evals, 'eval')}, one line each)"
    return title


def show(listing: ProjectListing, *, console: Console, json_out: bool = False) -> None:
    if json_out:
        print_json(listing.as_json())
        return
    evals, experiments = listing.evals, listing.experiments
    if _out.is_plain(console):
        _out.emit(console, _plain_lines(listing))
        return
    columns = _eval_columns(listing)
    table = Table(title=_title(listing), title_justify="left", highlight=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for e in evals:
        table.add_row(*(Text(_cell(e, c)) for c in columns))
    console.print(table)
    for warning in listing.warnings:
        console.print(Text(f"warning: {name(warning)}", style="yellow"))
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
    if column == "cases":
        return str(value) if value is not None else "—"
    return name(value) if value is not None else "—"


def _experiment_cell(record: dict[str, Any], column: str) -> str:
    if column == "evals":
        cases = record.get("selected_cases") or 0
        evals = len(record["selected_evals"])
        return f"{evals} selected" + (f" ({plural(cases, 'case')})" if cases and cases != evals else "")
    value = record[column]
    return name(value) if value else "—"


def _plain_lines(listing: ProjectListing) -> list[Line]:
    columns = list(_eval_columns(listing))
    out = [line(f"{_title(listing)}:")]
    rows = [[_cell(e, c) for c in columns] for e in listing.evals]
    out += _aligned(columns, rows)
    out += [line(f"warning: {name(warning)}") for warning in listing.warnings]
    experiments = listing.experiments
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
