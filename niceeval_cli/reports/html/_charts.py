"""Charts as plain geometry (rectangles and labels) for inline SVG, each with a text-equivalent table.

No charting library: the template draws `<rect>` and `<text>` from these numbers. Every bar
carries its value as text, so nothing relies on colour alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..._states import AttemptState, EvalKind

if TYPE_CHECKING:
    from ...comparison import AttemptFacts
    from ._summary import ExperimentColumn

WIDTH = 640
_LABEL_W = 190
_BAR_W = 300
_ROW_H = 26
_PANEL_H = 96
_TOP = 18

SCORE_BINS = tuple(f"{10 * i}–{10 * (i + 1)}%" for i in range(10))
_DURATION_EDGES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
DURATION_BINS = ("< 10 ms", "10–30 ms", "30–100 ms", "0.1–0.3 s", "0.3–1 s", "1–3 s", "3–10 s", "10–30 s",
                 "30–100 s", "≥ 100 s")


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    cls: str
    title: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"
    cls: str = ""


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    summary: str  # the SVG's accessible description
    width: int
    height: int
    rects: list[Rect]
    labels: list[Label]
    head: list[str]  # the text-equivalent table
    rows: list[list[str]]


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pass_rate_chart(columns: Sequence[ExperimentColumn]) -> Chart | None:
    """Eval pass rate (under pass_rule) per experiment, one horizontal bar each."""
    shown = [c for c in columns if c.totals.pass_evals]
    if not shown:
        return None
    rects: list[Rect] = []
    labels: list[Label] = []
    rows: list[list[str]] = []
    for i, c in enumerate(shown):
        rate = c.totals.eval_pass_rate
        y = _TOP + i * _ROW_H
        rects.append(Rect(_LABEL_W, y, _BAR_W, _ROW_H - 8, "track", ""))
        if rate is not None:  # no decided eval: no bar (a 0 % bar would read as every eval failing)
            rects.append(Rect(_LABEL_W, y, round(_BAR_W * rate, 1), _ROW_H - 8, "bar passed", f"{c.id}: {c.pass_rate}"))
        labels.append(Label(_LABEL_W - 8, y + 13, _short(c.id), "end"))
        labels.append(Label(_LABEL_W + _BAR_W + 8, y + 13, c.pass_rate))
        estimate = c.stats.pass_estimate if c.stats is not None else None
        summary = estimate.summary if estimate is not None else None
        interval_words = (c.stats.pass_rate or "—") if c.stats is not None else "—"
        if summary is not None and summary.interval is not None:
            rects += _error_bar(y, summary.estimate, summary.interval.low, summary.interval.high,
                                f"{c.id}: {interval_words}")
        rows.append([c.id, c.pass_rate, c.attempt_rate, interval_words])
    return Chart("chart-pass-rate", "Pass rate per experiment",
                 "Horizontal bars: the share of decided pass-style evals that passed under their pass_rule; the "
                 "black error bar: the mean pass rate over evals with its confidence interval.",
                 WIDTH, _TOP + len(shown) * _ROW_H + 4, rects, labels,
                 ["experiment", "evals passed", "attempts passed", "mean over evals with its interval"], rows)


def _error_bar(y: float, estimate: float, low: float, high: float, title: str) -> list[Rect]:
    """An interval drawn from the data: a whisker from low to high, caps at both ends, a tick at
    the estimate (statistics.md, "Where it shows")."""
    middle = y + (_ROW_H - 8) / 2
    left, right, at = (round(_LABEL_W + _BAR_W * v, 1) for v in (low, high, estimate))
    return [
        Rect(left, round(middle - 0.75, 1), round(max(right - left, 1.0), 1), 1.5, "whisker", title),
        Rect(round(left - 0.75, 1), round(middle - 5, 1), 1.5, 10, "whisker cap", title),
        Rect(round(right - 0.75, 1), round(middle - 5, 1), 1.5, 10, "whisker cap", title),
        Rect(round(at - 1.5, 1), round(middle - 3, 1), 3, 6, "whisker estimate", title),
    ]


def _histogram(
    chart_id: str, title: str, summary: str, bins: Sequence[str], counts: dict[str, list[int]], unit: str
) -> Chart:
    """Small multiples: one panel of vertical bars per experiment, the count above each bar."""
    rects: list[Rect] = []
    labels: list[Label] = []
    panel_w = WIDTH - _LABEL_W
    bar_w = panel_w / len(bins)
    for p, (experiment, values) in enumerate(counts.items()):
        top = _TOP + p * (_PANEL_H + 24)
        peak = max(values) or 1
        labels.append(Label(_LABEL_W - 8, top + _PANEL_H / 2, _short(experiment), "end"))
        for i, n in enumerate(values):
            h = round((_PANEL_H - 16) * n / peak, 1)
            x = _LABEL_W + i * bar_w
            rects.append(Rect(round(x + 2, 1), top + _PANEL_H - h, round(bar_w - 4, 1), h, "bar",
                              f"{experiment}: {n} {unit} in {bins[i]}"))
            if n:
                labels.append(Label(round(x + bar_w / 2, 1), top + _PANEL_H - h - 3, str(n), "middle", "count"))
        for i in (0, len(bins) - 1):
            labels.append(Label(round(_LABEL_W + i * bar_w + bar_w / 2, 1), top + _PANEL_H + 14, bins[i],
                                "middle", "axis"))
    height = _TOP + len(counts) * (_PANEL_H + 24)
    rows = [[experiment, *map(str, values)] for experiment, values in counts.items()]
    return Chart(chart_id, title, summary, WIDTH, height, rects, labels, ["experiment", *bins], rows)


def score_chart(facts: Sequence[AttemptFacts], experiments: Sequence[str]) -> Chart | None:
    """Rankable scores as a share of their maximum, in tenths, per experiment."""
    counts: dict[str, list[int]] = {}
    for f in facts:
        if EvalKind(f.kind) is not EvalKind.SCORE or AttemptState(f.state) is not AttemptState.SCORED:
            continue
        if f.score is None or not f.max_score:
            continue
        share = min(max(f.score / f.max_score, 0.0), 1.0)
        counts.setdefault(f.experiment_id, [0] * len(SCORE_BINS))[min(int(share * 10), 9)] += 1
    if not counts:
        return None
    ordered = {e: counts[e] for e in experiments if e in counts}
    return _histogram("chart-scores", "Score distribution per experiment",
                      "Bars: rankable score-style attempts by score as a share of the maximum, in tenths.",
                      SCORE_BINS, ordered, "attempts")


def _duration_bin(ms: float) -> int:
    for i, edge in enumerate(_DURATION_EDGES):
        if ms < edge:
            return i
    return len(_DURATION_EDGES)


def duration_chart(facts: Sequence[AttemptFacts], experiments: Sequence[str]) -> Chart | None:
    """Attempt durations on a logarithmic scale, per experiment."""
    counts: dict[str, list[int]] = {}
    for f in facts:
        if f.duration_ms is None or not math.isfinite(f.duration_ms):
            continue
        counts.setdefault(f.experiment_id, [0] * len(DURATION_BINS))[_duration_bin(f.duration_ms)] += 1
    if not counts:
        return None
    ordered = {e: counts[e] for e in experiments if e in counts}
    return _histogram("chart-durations", "Duration distribution per experiment",
                      "Bars: attempts by duration, on a logarithmic scale.", DURATION_BINS, ordered, "attempts")


def charts(columns: Sequence[ExperimentColumn], facts: Sequence[AttemptFacts], experiments: Sequence[str]) -> list[
    Chart
]:
    made = [pass_rate_chart(columns), score_chart(facts, experiments), duration_chart(facts, experiments)]
    return [c for c in made if c is not None]
