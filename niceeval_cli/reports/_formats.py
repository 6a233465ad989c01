"""`niceeval query` output formats: json, ndjson, csv, table.

Machine formats carry stored text unchanged when piped (JSON-text columns as JSON values in
json/ndjson, `json_columns`); to a terminal (`visible=True`) control characters are made visible
as `view` does, so a stored escape sequence cannot act on the reader's terminal.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ._safe import visible
from .json_columns import decoded

FORMATS = ("json", "ndjson", "csv", "table")

#: What `--format table` shows of each target: a table is for reading, and 25 columns in a
#: terminal are unreadable. Machine formats (json, ndjson, csv) carry every column.
TABLE_COLUMNS = {
    "runs": ("id", "started_at", "status", "exit_code", "not_run", "experiments"),  # not_run: once recorded
    "attempts": (
        "id", "experiment_id", "eval_id", "ordinal", "state", "reason", "score", "max_score",
        "unavailable_weight", "gate", "duration_ms", "relation",
    ),
    "assertions": (
        "attempt_id", "eval_id", "ordinal", "label", "state", "measurement", "threshold", "contribution",
        "weight", "reason", "explanation",
    ),
}


def write_rows(
    out: IO[str],
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    fmt: str,
    *,
    width: int | None = None,
    target: str | None = None,
    tty: bool = False,
) -> None:
    """`tty`: stdout is a terminal, so control characters in stored text are made visible.
    `target` None (the rows of a `--sql` statement): columns are the statement's own, kept as they are."""
    decode = decoded if target is not None else dict
    if fmt == "json":
        _write(out, json.dumps([decode(r) for r in rows], ensure_ascii=False) + "\n", tty)
    elif fmt == "ndjson":
        for row in rows:
            _write(out, json.dumps(decode(row), ensure_ascii=False) + "\n", tty)
    elif fmt == "csv":
        writer = csv.writer(_Visible(out) if tty else out, lineterminator="\n")
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


def _write(out: IO[str], text: str, tty: bool) -> None:
    out.write(_shown(text) if tty else text)


def _shown(text: str) -> str:
    """Control characters made visible, line breaks kept (JSON already escapes C0 controls; C1
    controls, DEL and bidi overrides it passes through, and CSV passes everything)."""
    return "\n".join(visible(part, None) for part in text.split("\n"))


class _Visible:
    """A file-like for csv.writer that makes control characters visible on the way to a TTY."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(_shown(text))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
