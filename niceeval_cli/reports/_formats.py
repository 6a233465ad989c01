"""`niceeval query` output formats: json, ndjson, csv, table. Machine formats carry stored text unchanged."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ._safe import visible

FORMATS = ("json", "ndjson", "csv", "table")


def write_rows(
    out: IO[str], columns: Sequence[str], rows: Sequence[Mapping[str, Any]], fmt: str, *, width: int | None = None
) -> None:
    if fmt == "json":
        json.dump([dict(r) for r in rows], out, ensure_ascii=False)
        out.write("\n")
    elif fmt == "ndjson":
        for row in rows:
            out.write(json.dumps(dict(row), ensure_ascii=False))
            out.write("\n")
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    elif fmt == "table":
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        console = Console(file=out, width=width, soft_wrap=False)
        table = Table(*columns, show_lines=False, highlight=False)
        for row in rows:
            table.add_row(*(Text(visible(row.get(c), 120, single_line=True)) for c in columns))
        console.print(table)
        console.print(f"{len(rows)} row(s)", style="dim")
    else:  # pragma: no cover - typer validates the choice
        raise ValueError(fmt)
