"""`niceeval compare` output: the terminal page (regressions first) and the machine formats.

Terminal: what moved is listed pair by pair (regressed, fixed, undecided, decided; for two
experiments B's wins and losses first), the rest is summarised as counts. Machine formats
(`json`, `ndjson`, `csv`) carry one row per pair with the columns of `comparison.ROW_COLUMNS`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from .._states import Derived, GateState
from ..app.compare import CompareResult
from ..comparison import ROW_COLUMNS, ExperimentTotals, Pair, PairClass, Side, shown_eval_id
from ._formats import write_rows
from ._safe import visible

__all__ = ["MACHINE_FORMATS", "print_comparison", "rate_changes", "side_text", "write_comparison"]

MACHINE_FORMATS = ("json", "ndjson", "csv")
#: Classes listed pair by pair; the others are counted.
LISTED = (PairClass.REGRESSED, PairClass.FIXED, PairClass.UNDECIDED, PairClass.DECIDED)
_STYLE = {
    PairClass.REGRESSED: "bold red", PairClass.FIXED: "green", PairClass.UNDECIDED: "yellow",
    PairClass.DECIDED: "cyan",
}
_TITLE = {
    PairClass.REGRESSED: "Regressed", PairClass.FIXED: "Fixed", PairClass.UNDECIDED: "Undecided now",
    PairClass.DECIDED: "Decided now",
}
_NAME_LIMIT = 160


def write_comparison(out: IO[str], result: CompareResult, fmt: str, *, tty: bool = False) -> None:
    """One row per pair, in reading order; in csv `changed_keys` is a JSON list. To a terminal
    (`tty`) control characters in stored text are made visible, as `query` does."""
    rows: list[dict[str, Any]] = [p.row() for p in result.comparison.pairs]
    if fmt == "csv":
        rows = [{**r, "changed_keys": json.dumps(r["changed_keys"], ensure_ascii=False)} for r in rows]
    write_rows(out, ROW_COLUMNS, rows, fmt, tty=tty)


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.2f}"


def side_text(side: Side | None) -> str:
    """`passed`, `failed 1/5`, `7/10`, `gate failed 4/10`, `unrankable 3/10`, `—` (absent)."""
    if side is None:
        return "—"
    if side.kind.value == "pass":
        word = side.state.value
    else:
        parts = [side.state.value] if side.state.value != "scored" else []
        if side.gate is GateState.FAILED:
            parts.append(Derived.GATE_FAILED.label)
        elif side.gate is GateState.UNAVAILABLE:
            parts.append(Derived.GATE_UNAVAILABLE.label)
        if side.score is not None:
            parts.append(f"{_num(side.score)}/{_num(side.max_score)}")
        word = " ".join(parts) or "scored"
    if side.attempts > 1:
        word += f" ({side.passed}/{side.attempts} passed)"
    return word


def _pair_name(pair: Pair) -> str:
    eval_id = shown_eval_id(pair.eval_id, pair.case_id)
    text = f"{pair.experiment_id}  {eval_id}" if pair.base_experiment_id == pair.experiment_id else eval_id
    return visible(text, _NAME_LIMIT, single_line=True)


def _pair_line(pair: Pair) -> Text:
    text = Text("  ")
    text.append(_pair_name(pair), style="bold")
    text.append(f"   {side_text(pair.base)} → {side_text(pair.new)}")
    if pair.changed_keys:
        keys = ", ".join(pair.changed_keys[:5]) + (f", … (+{len(pair.changed_keys) - 5})" if len(pair.changed_keys) > 5
                                                    else "")
        text.append("   changed: " + visible(keys, 400, single_line=True), style="dim")
    return text


def rate_changes(result: CompareResult) -> list[Pair]:
    """Unchanged or still-failing pairs of repeated attempts whose pass rate moved (3/5 → 1/5 under
    pass_rule "any" is still a pass): not a class of their own, but worth a line."""
    return [
        p for p in result.comparison.pairs
        if p.cls in (PairClass.UNCHANGED, PairClass.STILL_FAILING) and p.base is not None and p.new is not None
        and max(p.base.attempts, p.new.attempts) > 1 and p.base.pass_rate != p.new.pass_rate
    ]


def _counts(result: CompareResult) -> str:
    return " · ".join(f"{n} {c.value}" for c, n in result.comparison.counts().items())


def _totals_lines(totals: Sequence[ExperimentTotals]) -> list[Text]:
    lines = [Text("Totals", style="bold")]
    for t in totals:
        parts = [f"  {visible(t.experiment_id, _NAME_LIMIT, single_line=True)}:", f"{t.attempts} attempts"]
        if t.pass_evals:
            rate = t.eval_pass_rate or 0.0
            parts.append(f"evals {t.pass_evals_passed}/{t.pass_evals} passed ({rate:.0%})")
            parts.append(f"attempts {t.attempts_passed}/{t.pass_attempts} passed")
        if t.score_attempts:
            mean = "—" if t.mean_score is None else _num(t.mean_score)
            parts.append(f"mean score {mean} over {t.rankable} rankable")
            if t.unrankable:
                parts.append(f"{t.unrankable} not rankable")
        if t.cost_usd is not None:
            parts.append(f"${t.cost_usd:.4f}")
        parts.append(f"{t.duration_ms / 1000:.1f} s")
        lines.append(Text(parts[0] + " " + " · ".join(parts[1:])))
    return lines


def print_comparison(console: Console, result: CompareResult) -> None:
    """The terminal page: header, counts, the pairs that moved, then how to get every row."""
    lines: list[Text] = []
    if result.experiments is not None:
        a, b = (visible(x, _NAME_LIMIT, single_line=True) for x in result.experiments)
        lines.append(Text(f"Compare experiments {a} (base) → {b} (new) in run {result.new_run.id}", style="bold"))
        if result.totals is not None:
            lines += _totals_lines(result.totals)
        titles = {**_TITLE, PairClass.FIXED: f"{b} wins (fixed)", PairClass.REGRESSED: f"{b} loses (regressed)"}
        listed = [c for c in result.comparison.order if c in LISTED]
    else:
        lines.append(Text(f"Compare run {result.base_run.id} (base) → {result.new_run.id} (new)", style="bold"))
        titles, listed = _TITLE, list(LISTED)
    lines.append(Text("  " + _counts(result)))
    for cls in listed:
        pairs = result.comparison.of(cls)
        if not pairs:
            continue
        lines.append(Text(""))
        lines.append(Text(f"{titles[cls]} ({len(pairs)})", style=_STYLE[cls]))
        lines += [_pair_line(p) for p in pairs]
    moved = rate_changes(result)
    if moved:
        lines.append(Text(""))
        lines.append(Text(f"Same result, pass rate changed ({len(moved)})", style="dim"))
        lines += [_pair_line(p) for p in moved]
    if not any(result.comparison.of(c) for c in LISTED) and not moved:
        lines += [Text(""), Text("Nothing regressed, got fixed or changed between decided and undecided.")]
    lines.append(Text(""))
    lines.append(Text("Every pair: add --format json (or ndjson, csv).", style="dim"))
    for text in lines:
        console.print(text, highlight=False, markup=False, soft_wrap=True)
