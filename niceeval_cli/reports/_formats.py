"""`niceeval query` output formats: json, ndjson, csv, table. Machine formats carry stored text unchanged."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ._safe import visible

FORMATS = ("json", "ndjson", "csv", "table")

#: What `--format table` shows of each target: a table is for reading, and 25 columns in a
#: terminal are unreadable. Machine formats (json, ndjson, csv) carry every column.
TABLE_COLUMNS = {
    "runs": ("id", "started_at", "status", "exit_code", "experiments"),
    "attempts": (
        "id", "experiment_id", "eval_id", "ordinal", "state", "reason", "score", "max_score",
        "unavailable_weight", "gate", "duration_ms", "relation",
    ),
    "assertions": (
        "attempt_id", "eval_id", "ordinal", "label", "state", "measurement", "threshold", "contribution",
        "weight", "reason", "explanation",
    ),
    "turns": ("attempt_id", "eval_id", "session", "ordinal", "status", "input", "message", "observed",
              "input_tokens", "output_tokens", "cost_usd"),
    "events": ("attempt_id", "eval_id", "turn_ordinal", "seq", "kind", "name", "status", "input", "output", "text"),
}


def write_rows(
    out: IO[str],
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    fmt: str,
    *,
    width: int | None = None,
    target: str | None = None,
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

        console = Console(file=out, width=width)
        if not console.is_terminal and width is None:
            console.width = 200  # piped: wide enough to read, rows still one per line mostly
        if target in TABLE_COLUMNS:
            columns = [c for c in TABLE_COLUMNS[target] if c in columns]
        table = Table(*columns, show_lines=False, highlight=False)
        for row in rows:
            table.add_row(*(Text(visible(_cell(row.get(c)), 120, single_line=True)) for c in columns))
        console.print(table)
        hidden = " (selected columns; --format json shows them all)" if target in TABLE_COLUMNS else ""
        console.print(f"{len(rows)} row(s){hidden}", style="dim")
    else:  # pragma: no cover - typer validates the choice
        raise ValueError(fmt)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
