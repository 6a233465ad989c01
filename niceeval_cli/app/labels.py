"""`niceeval label`, `label import`, `label export` (judge-trust.md, "Human labels").

A label is checked against the store before it is written (the attempt and key exist, the value
is on the assertion's scale); a file is checked whole before any of it is written, and its first
bad row is named by file and line.
"""

from __future__ import annotations

import getpass
import json
import math
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .._errors import UsageError

EXPORT_FIELDS = ("attempt_id", "assertion_key", "value", "author", "comment", "created_at")
_REQUIRED = ("attempt_id", "assertion_key", "value")


@dataclass(frozen=True)
class Imported:
    """What `label import` did with a file's rows: stored, or left because the store holds them."""

    stored: int
    already: int  # rows carrying their time that the store holds already (an export imported again)


@dataclass(frozen=True)
class Labelled:
    """What `niceeval label` wrote: the new row's id and what it names."""

    label_id: str
    attempt_id: str
    assertion_key: str | None
    value: float
    author: str


def default_author() -> str:
    """`git config user.name`, else the login name (judge-trust.md)."""
    git = shutil.which("git")
    if git is not None:
        try:
            done = subprocess.run([git, "config", "user.name"], capture_output=True, text=True, timeout=5,
                                  check=False)
            name = done.stdout.strip()
            if done.returncode == 0 and name:
                return name
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def resolved_author(author: str | None) -> str:
    """`--author` as given (never empty, storable), else `default_author()`: `label`, `label import`
    and `review` alike."""
    from ..store import StoreError
    from ..store.labels import unicode_text

    if author is None:
        return default_author()
    if not author.strip():
        raise UsageError("--author is empty: give a name (or leave --author out for `git config user.name`).")
    try:
        unicode_text("--author", author)
    except StoreError as error:
        raise UsageError(str(error)) from None
    return author


def parse_value(text: str) -> float:
    """A label value from the command line: a number such as 1, 0 or 0.4."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UsageError(f"--value {text!r} is not a number: give a value on the assertion's scale, such as 1 or 0.")
    return value


def _existing(store_file: Path) -> Path:
    """Labels name sealed attempts: without a store there is nothing to label (and none is made)."""
    from ..store import StoreError

    if not store_file.exists():
        raise StoreError(f"No results yet at {store_file}; run `niceeval run` first.")
    return store_file


def label_one(store_file: Path, attempt_ref: str, key: str | None, value: str, *, comment: str | None,
              author: str | None) -> Labelled:
    """Insert one label for `@ATTEMPT [KEY]`; exit 2 (StoreError) for an unknown attempt or key or a
    value off the scale."""
    from ..store import LabelInput, Store

    number = parse_value(value)
    who = resolved_author(author)
    with Store.open(_existing(store_file)) as store:
        target = store.label_target(attempt_ref, key)
        stored = _checked(target, number)
        (label_id,) = store.add_labels([LabelInput(target.attempt_id, key, stored, who, comment)])
    return Labelled(label_id, target.attempt_id, key, stored, who)


def _checked(target: Any, value: float) -> float:
    from ..store.labels import checked_value

    return checked_value(target, value)


def import_labels(store_file: Path, file: Path, *, author: str | None = None) -> Imported:
    """Insert every row of a JSONL file, or none: the first bad row (not JSON, a missing field, an
    unknown attempt or key, a value off the scale) is a UsageError naming the file and line. A row
    with `created_at` keeps that time, and is left out when the store holds it already."""
    from ..store import LabelInput, Store, StoreError

    try:
        text = file.read_text(encoding="utf-8-sig")  # a byte-order mark, as some editors write, is not a row
    except OSError as error:
        raise UsageError(f"Cannot read the label file {file}: {error.strerror or error}.") from error
    except UnicodeDecodeError as error:
        raise UsageError(f"{file} is not UTF-8 text ({error.reason} at byte {error.start}); "
                         "label files are JSON Lines.") from error
    fallback: str | None = None
    labels: list[LabelInput] = []
    with Store.open(_existing(store_file)) as store:
        # Lines end at "\n" only (JSON Lines): splitlines() would also cut a row at a U+2028, U+0085 or
        # \x1c in its text, which JSON leaves unescaped (and `label export` writes as they are).
        for line_no, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            where = f"{file}, line {line_no}"
            row = _row(line, where)
            key = row["assertion_key"]
            who = row.get("author")
            if who is None:
                fallback = fallback if fallback is not None else resolved_author(author)
                who = fallback
            try:
                target = store.exact_label_target(row["attempt_id"], key)
                stored = _checked(target, row["value"])
                labels.append(LabelInput(target.attempt_id, key, stored, who, row.get("comment"),
                                         row.get("created_at")))
            except StoreError as error:
                raise UsageError(f"{where}: {error} Nothing of {file} was written.") from None
        added = store.add_labels(labels) if labels else []
    return Imported(len(added), len(labels) - len(added))


def _row(line: str, where: str) -> dict[str, Any]:
    """One file row, its fields' types checked."""
    try:
        row = json.loads(line)
    except ValueError as error:
        raise UsageError(f"{where}: not JSON ({error}). Nothing was written.") from None
    if not isinstance(row, dict):
        raise UsageError(f"{where}: expected a JSON object like {{\"attempt_id\": ..., \"assertion_key\": ..., "
                         f"\"value\": ...}}, got {type(row).__name__}. Nothing was written.")
    missing = [name for name in _REQUIRED if name not in row]
    if missing:
        raise UsageError(f"{where}: missing field {', '.join(repr(m) for m in missing)} (each row has "
                         "attempt_id, assertion_key — null for the whole attempt — and value). Nothing was written.")
    problems = []
    if not isinstance(row["attempt_id"], str) or not row["attempt_id"]:
        problems.append("attempt_id must be an attempt id (text)")
    if row["assertion_key"] is not None and not isinstance(row["assertion_key"], str):
        problems.append("assertion_key must be text, or null for the whole attempt")
    value = row["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        problems.append(f"value must be a number on the assertion's scale, got {json.dumps(value)}")
    author = row.get("author")
    if author is not None and (not isinstance(author, str) or not author.strip()):
        problems.append("author must be non-empty text")
    if row.get("comment") is not None and not isinstance(row.get("comment"), str):
        problems.append("comment must be text")
    made = row.get("created_at")
    if made is not None:
        from ..store import label_time

        try:
            if not isinstance(made, str):
                raise ValueError(f"created_at must be text, an ISO 8601 time, got {json.dumps(made)}")
            row["created_at"] = label_time(made)
        except ValueError as error:
            problems.append(str(error))
    if problems:
        raise UsageError(f"{where}: {'; '.join(problems)}. Nothing was written.")
    return row


def export_labels(store_file: Path, run_ref: str | None, out: IO[str]) -> int:
    """Write stored labels as JSONL (the import's shape), oldest first; every label unless `run_ref`."""
    from ..store import Store

    count = 0
    with Store.open(store_file, readonly=True) as store:
        run_ids = None
        if run_ref is not None:
            _kind, ref_id = store.resolve_ref(run_ref)
            run_ids = store.run_scope(ref_id)
        for row in _exported(store.labels(run_ids)):
            out.write(row + "\n")
            count += 1
    return count


def _exported(rows: Iterator[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps({name: row[name] for name in EXPORT_FIELDS}, ensure_ascii=False)


__all__ = ["EXPORT_FIELDS", "Imported", "Labelled", "default_author", "export_labels", "import_labels", "label_one",
           "parse_value", "resolved_author"]
