"""`niceeval judge agreement`'s output: one row per judge identity (json, csv) or a table to read.

Machine formats carry the figures as numbers (null where undefined); the table shows them to
four decimals, `—` where undefined (kappa when every decision on both sides was the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from . import formats

COLUMNS = (
    "model", "factory", "version", "criterion_sha256", "criterion", "labels", "accuracy", "accuracy_low",
    "accuracy_high", "kappa", "tpr", "tnr", "tp", "fp", "fn", "tn", "exact", "exact_n", "unmeasured",
)
#: With `--between`: the reference judge's identity too, and `pairs` for `labels`.
BETWEEN_COLUMNS = (
    "model", "factory", "version", "criterion_sha256", "criterion", "reference_model", "reference_version",
    "reference_criterion_sha256", "pairs", *COLUMNS[6:],
)


def _who(identity: Any) -> str:
    return f"{identity.model or '(no model)'} · {identity.factory} · {identity.version or '?'}"


def machine_rows(results: Sequence[Any], *, between: bool) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """Columns and one dict per identity, every figure a number or None."""
    rows = []
    for item in results:
        f, judge = item.figures, item.judge
        row: dict[str, Any] = {
            "model": judge.model, "factory": judge.factory, "version": judge.version,
            "criterion_sha256": judge.short, "criterion": judge.text,
        }
        if between:
            ref = item.reference
            row.update({"reference_model": ref.model, "reference_version": ref.version,
                        "reference_criterion_sha256": ref.short, "pairs": f.n})
        else:
            row["labels"] = f.n
        row.update({
            "accuracy": f.accuracy, "accuracy_low": f.interval.low if f.interval else None,
            "accuracy_high": f.interval.high if f.interval else None, "kappa": f.kappa, "tpr": f.tpr,
            "tnr": f.tnr, "tp": f.confusion.tp, "fp": f.confusion.fp, "fn": f.confusion.fn, "tn": f.confusion.tn,
            "exact": f.exact, "exact_n": f.exact_n, "unmeasured": item.unmeasured,
        })
        rows.append(row)
    return (BETWEEN_COLUMNS if between else COLUMNS), rows


def _four(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def table_rows(results: Sequence[Any], *, between: bool) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """The table to read: figures to four decimals, the accuracy with its interval."""
    count = "pairs" if between else "labels"
    columns = ("judge", "criterion", *(("reference",) if between else ()), count, "accuracy", "kappa", "TPR",
               "TNR", "TP/FP/FN/TN", "exact")
    rows = []
    for item in results:
        f = item.figures
        accuracy = _four(f.accuracy)
        if f.interval is not None:
            accuracy += f" [{f.interval.low:.4f}, {f.interval.high:.4f}]"
        c = f.confusion
        row = {
            "judge": _who(item.judge), "criterion": f"{item.judge.short}  {item.judge.text}",
            count: str(f.n) + (f" (+{item.unmeasured} unmeasured)" if item.unmeasured else ""),
            "accuracy": accuracy, "kappa": _four(f.kappa), "TPR": _four(f.tpr), "TNR": _four(f.tnr),
            "TP/FP/FN/TN": f"{c.tp}/{c.fp}/{c.fn}/{c.tn}",
            "exact": "" if not f.exact_n else f"{_four(f.exact)} of {f.exact_n}",
        }
        if between:
            row["reference"] = f"{_who(item.reference)} · {item.reference.short}"
        rows.append(row)
    return columns, rows


def write(out: IO[str], results: Sequence[Any], fmt: str, *, between: bool, tty: bool) -> None:
    """Print the figures in `fmt` (table, json, csv; ndjson too)."""
    if fmt == "table":
        if not results:
            what = "pairs of judge results in both runs" if between else "labelled judge results"
            out.write(f"No {what}: label some with `niceeval label @ATTEMPT KEY --value V`.\n" if not between
                      else f"No {what}.\n")
            return
        columns, text_rows = table_rows(results, between=between)
        formats.write_rows(out, columns, text_rows, "table", tty=tty)
        return
    columns, rows = machine_rows(results, between=between)
    formats.write_rows(out, columns, rows, fmt, tty=tty)


__all__ = ["BETWEEN_COLUMNS", "COLUMNS", "machine_rows", "table_rows", "write"]
