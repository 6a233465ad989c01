"""`niceeval query` output formats: json, ndjson, csv, table.

Machine formats carry stored text unchanged when piped (JSON-text columns as JSON values in
json/ndjson, `json_columns`); to a terminal (`visible=True`) control characters are made visible
as `view` does, so a stored escape sequence cannot act on the reader's terminal.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

from .._registry import OUTPUT_FORMATS
from ._safe import visible
from .json_columns import decoder

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
    "turns": ("attempt_id", "session", "ordinal", "status", "input", "message", "elapsed_ms", "cost_usd"),
    "events": ("attempt_id", "turn_ordinal", "seq", "kind", "name", "status", "input", "output", "text"),
}



#: The rows `--format table` shows without `--limit`: a table is read on a screen, and rich lays
#: out every cell before printing the first line (400 000 rows took 400 s and 4.7 GB).
TABLE_ROWS = 1000


@dataclass(frozen=True)
class FormatOptions:
    width: int | None = None
    target: str | None = None  # None: the rows of a `--sql` statement, columns kept as they are
    tty: bool = False  # stdout is a terminal: control characters in stored text are made visible


#: A format writes rows (dicts keyed by column) to a text stream. Registered in OUTPUT_FORMATS.
Writer = Callable[[IO[str], Sequence[str], Iterable[Mapping[str, Any]], FormatOptions], None]


def _json(out: IO[str], columns: Sequence[str], rows: Iterable[Mapping[str, Any]], opts: FormatOptions) -> None:
    """One array, written a row at a time (what json.dumps of the whole list writes)."""
    decode = decoder(opts.target)
    _write(out, "[", opts.tty)
    for n, row in enumerate(rows):
        _write(out, (", " if n else "") + json.dumps(decode(row), ensure_ascii=False), opts.tty)
    _write(out, "]\n", opts.tty)


def _ndjson(out: IO[str], columns: Sequence[str], rows: Iterable[Mapping[str, Any]], opts: FormatOptions) -> None:
    decode = decoder(opts.target)
    for row in rows:
        _write(out, json.dumps(decode(row), ensure_ascii=False) + "\n", opts.tty)


def _csv(out: IO[str], columns: Sequence[str], rows: Iterable[Mapping[str, Any]], opts: FormatOptions) -> None:
    writer = csv.writer(_Visible(out) if opts.tty else out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])


def _table(out: IO[str], columns: Sequence[str], rows: Iterable[Mapping[str, Any]], opts: FormatOptions) -> None:
    rows = list(rows)
    from rich.table import Table
    from rich.text import Text

    from ._console import PipeConsole

    console = PipeConsole(file=out, width=opts.width)
    if not console.is_terminal and opts.width is None:
        console.width = 200  # piped: wide enough to read, rows still one per line mostly
    target = opts.target
    if target in TABLE_COLUMNS:
        columns = [c for c in TABLE_COLUMNS[target] if c in columns]
    table = Table(*columns, show_lines=False, highlight=False)
    for row in rows:
        table.add_row(*(Text(visible(_table_cell(target, c, row), 120, single_line=True)) for c in columns))
    console.print(table)
    hidden = " (selected columns; --format json shows them all)" if target in TABLE_COLUMNS else ""
    console.print(f"{len(rows)} row(s){hidden}", style="dim")


for _name, _writer in (("json", _json), ("ndjson", _ndjson), ("csv", _csv), ("table", _table)):
    OUTPUT_FORMATS.register(_name, _writer)

FORMATS: tuple[str, ...] = OUTPUT_FORMATS.names()


def names() -> tuple[str, ...]:
    """The registered formats' names (`--format`), asked of the registry when called."""
    return OUTPUT_FORMATS.names()


def write_rows(
    out: IO[str],
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    fmt: str,
    *,
    width: int | None = None,
    target: str | None = None,
    tty: bool = False,
) -> None:
    """Write rows in the registered format `fmt` (see FormatOptions for the flags)."""
    writer = cast(Writer, OUTPUT_FORMATS.get(fmt))
    writer(out, columns, rows, FormatOptions(width, target, tty))


def _write(out: IO[str], text: str, tty: bool) -> None:
    out.write(for_terminal(text, tty))


def for_terminal(text: str, tty: bool) -> str:
    """Machine output (JSON, CSV) as it may reach the reader: unchanged for a pipe or a file; on a
    terminal (`tty`) with control characters and bidi overrides made visible, line breaks kept,
    as `view` shows them — JSON escapes C0 controls, not C1 ones (`\x9b` is a CSI) or U+202E."""
    return _shown(text) if tty else text


def _shown(text: str) -> str:
    """Control characters made visible, line breaks kept (JSON already escapes C0 controls; C1
    controls, DEL and bidi overrides it passes through, and CSV passes everything)."""
    return "\n".join(visible(part, None) for part in text.split("\n"))


def print_json(value: Any) -> None:
    """`value` as one JSON line on stdout (`list --json`, `sandbox list --json`), made visible on a terminal."""
    sys.stdout.write(for_terminal(json.dumps(value, ensure_ascii=False) + "\n", sys.stdout.isatty()))


def terminal_stream(out: IO[str], tty: bool) -> IO[str]:
    """`out` for a writer of machine output (`label export`): on a terminal, a stream that makes
    control characters visible on the way (`for_terminal`); else `out` itself."""
    return cast(IO[str], _Visible(out)) if tty else out


class _Visible:
    """A file-like for csv.writer that makes control characters visible on the way to a TTY."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(_shown(text))

    def flush(self) -> None:
        self.out.flush()


#: `query units`' columns that are null for a pass-style unit with fewer decided attempts than k.
_OF_K = ("pass_at_k", "pass_hat_k")


def _table_cell(target: str | None, column: str, row: Mapping[str, Any]) -> str:
    """A table cell. A pass-style unit's pass@k / pass^k with k above its decided attempts is
    "—" with that reason (statistics.md; `null` in the machine formats), not an empty cell."""
    value = row.get(column)
    if value is None and target == "units" and column in _OF_K and row.get("passed") is not None:
        return f"— ({row.get('decided')} decided < k {row.get('k')})"
    return _cell(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


__all__ = [
    "FORMATS", "TABLE_ROWS", "FormatOptions", "Writer", "for_terminal", "names", "print_json", "terminal_stream",
    "write_rows",
]
