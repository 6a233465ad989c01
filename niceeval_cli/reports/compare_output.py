"""`niceeval compare` output: the terminal page (regressions first) and the machine formats.

Terminal: what moved is listed pair by pair (regressed, fixed, undecided, decided; for two
experiments B's wins and losses first) with its significance, then each experiment's paired
difference; the rest is summarised as counts. Machine formats: `json` is one object
`{"pairs": [...], "experiments": [...]}`, `ndjson` the pair rows then the experiment rows (each
with `"row"`), `csv` the pair rows (statistics.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from .._states import Derived, GateState
from ..comparison import (
    EXPERIMENT_COLUMNS,
    ROW_COLUMNS,
    ExperimentChange,
    Pair,
    PairClass,
    Side,
    shown_eval_id,
)
from ..experiment_totals import ExperimentTotals
from ..stats import Significance
from ._safe import visible
from .data import CompareResult
from .formats import for_terminal, write_rows

__all__ = ["MACHINE_FORMATS", "change_line", "print_comparison", "rate_changes", "side_text", "write_comparison"]

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
    experiments = [change.row() for change in result.comparison.experiments]
    if fmt == "csv":
        rows = [{**r, "changed_keys": json.dumps(r["changed_keys"], ensure_ascii=False)} for r in rows]
        write_rows(out, ROW_COLUMNS, rows, fmt, tty=tty)
    elif fmt == "json":
        # plain rows made here: json need not track the containers it is inside (10 000 rows)
        text = json.dumps({"pairs": rows, "experiments": experiments}, ensure_ascii=False, check_circular=False)
        out.write(for_terminal(text + "\n", tty))
    else:
        write_rows(out, ("row", *ROW_COLUMNS), [{"row": "pair", **r} for r in rows], fmt, tty=tty)
        write_rows(out, ("row", *EXPERIMENT_COLUMNS), [{"row": "experiment", **r} for r in experiments], fmt,
                   tty=tty)


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
    if side.attempts > 1 or side.missing:
        errored = f" · {side.errored} errored, not counted" if side.errored else ""
        missing = f" · {side.missing} not run" if side.missing else ""
        word += f" ({side.passed}/{side.decided} passed{errored}{missing})"
    return word


def _pair_name(pair: Pair) -> str:
    eval_id = shown_eval_id(pair.eval_id, pair.case_id)
    text = f"{pair.experiment_id}  {eval_id}" if pair.base_experiment_id == pair.experiment_id else eval_id
    return visible(text, _NAME_LIMIT, single_line=True)


_SIGNIFICANCE_STYLE = {
    Significance.SIGNIFICANT: "bold", Significance.WITHIN_NOISE: "dim", Significance.UNTESTABLE: "dim",
}


def significance_text(pair: Pair) -> str | None:
    """`significant (q = 0.012)`, `within noise (q = 0.41)`, `untestable` — regressed and fixed only."""
    significance = pair.significance
    if significance is None:
        return None
    q = pair.stats.test.q_value if pair.stats is not None else None
    word = significance.value.replace("-", " ")
    return word if q is None else f"{word} ({_p('q', q)})"


def _p(name: str, value: float) -> str:
    """`q = 0.012`, or `q < 0.001` below what three decimals show."""
    return f"{name} < 0.001" if value < 0.001 else f"{name} = {value:.3f}"


def _pair_line(pair: Pair) -> Text:
    text = Text("  ")
    text.append(_pair_name(pair), style="bold")
    text.append(f"   {side_text(pair.base)} → {side_text(pair.new)}")
    significance = significance_text(pair)
    if significance is not None:
        assert pair.significance is not None
        text.append(f"   · {significance}", style=_SIGNIFICANCE_STYLE[pair.significance])
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
            rate = t.eval_pass_rate
            parts.append(f"evals {t.pass_evals_passed}/{t.pass_evals_decided} passed ({rate:.0%})" if rate is not None
                         else "evals: none decided")
            if t.pass_evals_undecided:
                parts.append(f"{t.pass_evals_undecided} undecided")
            decided = t.pass_attempts - t.attempts_errored
            parts.append(f"attempts {t.attempts_passed}/{decided} passed")
            if t.attempts_errored:
                parts.append(f"{t.attempts_errored} errored, not counted")
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


def _points(x: float) -> str:
    return f"{x * 100:+.1f}".replace("-", "−")


def change_line(change: ExperimentChange, *, named: bool) -> str:
    """`pass rate 91.2% → 84.0%, Δ −7.2 points [−12.9, −1.5], p = 0.013 (paired over 53 evals)`."""
    d = change.difference
    if change.style == "pass":
        head = f"pass rate {d.base:.1%} → {d.new:.1%}, Δ {_points(d.difference)} points"
        bounds = "" if d.interval is None else f" [{_points(d.interval.low)}, {_points(d.interval.high)}]"
    else:
        head = f"mean score {d.base:.3f} → {d.new:.3f}, Δ {d.difference:+.3f}".replace("-", "−")
        bounds = "" if d.interval is None else (
            f" [{d.interval.low:+.3f}, {d.interval.high:+.3f}]".replace("-", "−"))
    p = "" if d.p_value is None else f", {_p('p', d.p_value)}"
    units = f"paired over {d.n_units} eval{'s' if d.n_units != 1 else ''}"
    name = f"{visible(change.experiment_id, _NAME_LIMIT, single_line=True)}: " if named else ""
    return f"  {name}{head}{bounds}{p} ({units})"


def _changes_lines(result: CompareResult) -> list[Text]:
    changes = result.comparison.experiments
    if not changes:
        return []
    named = result.experiments is None
    lines = [Text(""), Text("Paired over the evals decided on both sides", style="bold")]
    lines += [Text(change_line(c, named=named)) for c in changes]
    if result.comparison.single_attempts and result.comparison.of(PairClass.REGRESSED):
        lines.append(Text("  With one attempt per eval, a single flip cannot be told from noise; the paired line "
                          "above can. Run more attempts to test each eval.", style="dim"))
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
    lines += _changes_lines(result)
    lines.append(Text(""))
    lines.append(Text("Every pair: add --format json (or ndjson, csv).", style="dim"))
    for text in lines:
        console.print(text, highlight=False, markup=False, soft_wrap=True)
