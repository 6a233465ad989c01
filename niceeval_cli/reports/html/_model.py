"""The HTML report's view-model: from `ReportData` to what the template and the page script read.

Pure. The page is built in two parts: the skeleton (header, experiments, matrix, charts, one
summary row per attempt, comparisons) rendered by Jinja2 with autoescape, and the attempt
details (assertions, transcript, traceback, ...) embedded once as JSON and rendered by the
page's script when an attempt is opened. Every verdict comes from `outcomes` / `comparison`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, cast

from ... import outcomes
from ..._records import AttemptRecord
from ..._states import AttemptState, EvalKind, GateState
from ...app.compare import CompareResult, Results
from ...app.report import ReportData
from ...comparison import (
    AttemptFacts,
    ExperimentTotals,
    Pair,
    PairClass,
    Side,
    case_eval_id,
    experiment_totals,
    fold_side,
    shown_eval_id,
)
from .. import _tally
from .._safe import visible
from ..compare_output import LISTED, side_text
from ..viewmodels import attempt as attempt_vm
from ..viewmodels.run import ExperimentSummary, run_header
from ..viewmodels.text import duration, join, num, percent, when
from . import _charts
from ._charts import Chart

#: Open attempts rendered before the page shows; the rest follow in idle slices.
FIRST_SLICE = 300
#: Summary rows in the list when the page shows; the others wait in inert <template>s, moved in
#: LATER_CHUNK at a time after it shows (laying out 10 000 rows at once takes over a second).
SERVER_ROWS = 1000
LATER_CHUNK = 500
_NAME = 200


def attempt_word(state: str, gate: str | None) -> str:
    """The one word for an attempt's outcome (`gate failed` is its own word), as `view` says it."""
    return _tally.attempt_word(state, gate)


class _Attributes:
    """A store row (dict) read by attribute, for the view-models that take records."""

    __slots__ = ("_row",)

    def __init__(self, row: Mapping[str, Any]) -> None:
        self._row = row

    def __getattr__(self, name: str) -> Any:
        return self._row.get(name)


def score_text(row: Mapping[str, Any]) -> str:
    """`45 of 100 · 50 unavailable · not rankable` (the view-model's words, never a fabricated zero)."""
    if row.get("kind") != EvalKind.SCORE.value:
        return ""
    return attempt_vm.score_text(cast(AttemptRecord, _Attributes(row)))


def slug(word: str) -> str:
    return word.replace(" ", "-")


_OK_WORDS = frozenset({"passed", "scored"})
STATE_WORDS = ("errored", "failed", "unrankable", "gate failed", "gate unavailable", "passed", "scored")
MARKS = {"errored": "!", "failed": "✗", "unrankable": "?", "gate failed": "✗", "gate unavailable": "?",
         "passed": "✓", "scored": "✓", "unavailable": "?", "mismatched": "✗", "below": "✗", "matched": "✓",
         "met": "✓", "measured": "·", "removed": "−", "added": "+"}


def _json_value(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tags(row: Mapping[str, Any], cache: dict[tuple[str, str], tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The eval's tags, from what its fingerprint hashed (one parse per experiment and eval)."""
    key = (row["experiment_id"], row["eval_id"])
    if cache is not None and key in cache:
        return cache[key]
    found = _parse_tags(row)
    if cache is not None:
        cache[key] = found
    return found


def _parse_tags(row: Mapping[str, Any]) -> tuple[str, ...]:
    parts = _json_value(row.get("fingerprint_parts"))
    if isinstance(parts, dict):
        options = parts.get("eval_options")
        if isinstance(options, dict) and isinstance(options.get("tags"), list):
            return tuple(str(t) for t in options["tags"])
    return ()


def _model(row: Mapping[str, Any]) -> str | None:
    parts = _json_value(row.get("fingerprint_parts"))
    model = parts.get("model") if isinstance(parts, dict) else None
    return str(model) if model else None


# ── header and experiments ───────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Header:
    run_id: str
    started: str
    ended: str
    status: str
    argv: str
    version: str
    attempts: int
    reused: int
    counts: list[tuple[str, int]]  # (word, count), worst first
    exit_text: str  # `exit 1 (a definite failure: 1 eval failed)`, as `view` says it
    cost: str | None  # reported and estimated costs, never added together (agents.md)
    took: str  # `started … · took … · niceeval …` (view's header line)
    not_run: str | None  # `16 of 20 planned slots were not run`
    summaries: dict[str, ExperimentSummary]  # view's per-experiment summary, by experiment id


@dataclass(frozen=True)
class ExperimentColumn:
    id: str
    model: str | None
    totals: ExperimentTotals
    pass_rate: str  # evals passed under pass_rule
    attempt_rate: str
    score: str | None  # earned / max · unavailable · not rankable
    mean: str | None
    duration: str
    cost: str


def _header(data: ReportData) -> Header:
    run = data.run
    counts: dict[str, int] = {}
    reused = 0
    reported: list[float] = []
    estimated: list[float] = []
    for row in data.attempts:
        word = attempt_word(row["state"], row.get("gate"))
        counts[word] = counts.get(word, 0) + 1
        reused += row.get("relation") == "reference"
        if row.get("cost_usd") is not None:
            reported.append(row["cost_usd"])
        if row.get("estimated_cost_usd") is not None:
            estimated.append(row["estimated_cost_usd"])
    view = run_header(run, _tally.tally(data.groups, run.experiments), not_run=run.not_run)
    return Header(
        run_id=run.id,
        started=when(run.started_at),
        ended=when(run.ended_at),
        status=str(run.status.value),
        argv=visible(" ".join(["niceeval", *run.argv]), 400, single_line=True),
        version=run.niceeval_version or "—",
        attempts=len(data.attempts),
        reused=reused,
        counts=[(w, counts[w]) for w in STATE_WORDS if w in counts],
        exit_text=view.exit or "running: no exit code yet",
        cost=join([f"${math.fsum(reported):.4f} reported" if reported else "",
                   f"${math.fsum(estimated):.4f} estimated from prices" if estimated else ""]) or None,
        took=view.when,
        not_run=view.not_run,
        summaries={s.experiment_id: s for s in view.experiments},
    )


def experiment_ids(data: ReportData) -> list[str]:
    seen = [a["experiment_id"] for a in data.attempts]
    return list(dict.fromkeys([e for e in data.run.experiments if e in set(seen)] + sorted(set(seen))))


def _column(experiment: str, facts: Sequence[AttemptFacts], model: str | None,
            summary: ExperimentSummary | None = None) -> ExperimentColumn:
    t = experiment_totals(facts, experiment)
    score = mean = None
    lines = summary.scores if summary is not None else None
    if lines is not None:  # view's own words for the same totals
        score = join([lines.totals, lines.rankable, lines.gates])
        mean = lines.spread
    elif t.score_attempts:
        score = f"{num(t.earned)} of {num(t.max_score)}"
        if t.unavailable_weight:
            score += f" · {num(t.unavailable_weight)} unavailable"
        if t.unrankable or t.rankable < t.score_attempts:
            score += " · not rankable"
        mean = "no rankable score"
        if t.mean_score is not None:
            mean = f"{num(t.mean_score)} mean over {t.rankable} rankable"
    rate = f"{percent(t.eval_pass_rate)} ({t.pass_evals_passed}/{t.pass_evals} evals)" if t.pass_evals else "—"
    attempt_rate = f"{percent(t.attempt_pass_rate)} ({t.attempts_passed}/{t.pass_attempts})" if t.pass_attempts else "—"
    return ExperimentColumn(
        id=experiment, model=model, totals=t, pass_rate=rate, attempt_rate=attempt_rate, score=score, mean=mean,
        duration=duration(t.duration_ms), cost="—" if t.cost_usd is None else f"${t.cost_usd:.4f}",
    )


# ── the matrix ───────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Cell:
    word: str  # css state: passed | failed | errored | unavailable | scored | gate-failed | none
    text: str
    mark: str
    severity: int


@dataclass
class MatrixRow:
    eval_id: str
    case_id: str | None
    cells: list[Cell]
    tags: tuple[str, ...]
    severity: int
    cases: list[MatrixRow] = field(default_factory=list)  # dataset cases, grouped under their eval


_NONE_CELL = Cell("none", "—", "", outcomes.attempt_severity(AttemptState.PASSED, None) + 1)


def _cell(side: Side, reasons: Iterable[str | None]) -> Cell:
    severity = outcomes.attempt_severity(side.state, side.gate)
    if side.kind is EvalKind.PASS:
        word = side.state.value
        if word == "errored" and all(r == "evidence-unavailable" for r in reasons):
            word = "unavailable"
        text = word
        if side.attempts > 1:
            text += f" {side.passed}/{side.attempts}"
        return Cell(word, text, MARKS.get(word, ""), severity)
    text = side_text(side)
    if side.state is AttemptState.UNRANKABLE:
        word = "unavailable"
    elif side.state is AttemptState.ERRORED:
        word = "errored"
    elif side.gate is GateState.FAILED:
        word = "gate-failed"
    elif side.gate is GateState.UNAVAILABLE:
        word = "unavailable"
    else:
        word = "scored"
    return Cell(word, text, MARKS.get(word.replace("-", " "), ""), severity)


def _matrix(data: ReportData, experiments: Sequence[str]) -> list[MatrixRow]:
    groups: dict[tuple[str, str | None, str], list[AttemptFacts]] = {}
    reasons: dict[tuple[str, str | None, str], list[str | None]] = {}
    tags: dict[str, tuple[str, ...]] = {}
    tag_cache: dict[tuple[str, str], tuple[str, ...]] = {}
    for row, fact in zip(data.attempts, data.facts, strict=True):
        parent = case_eval_id(fact.eval_id, fact.case_id)  # `refunds[r-017]` is a case of `refunds`
        key = (parent, fact.case_id, fact.experiment_id)
        groups.setdefault(key, []).append(fact)
        reasons.setdefault(key, []).append(row.get("reason"))
        if parent not in tags:
            tags[parent] = _tags(row, tag_cache)
    cases: dict[str, dict[str | None, MatrixRow]] = {}
    for (eval_id, case_id, experiment), facts in groups.items():
        by_case = cases.setdefault(eval_id, {})
        row_ = by_case.get(case_id)
        if row_ is None:
            row_ = by_case[case_id] = MatrixRow(eval_id, case_id, [_NONE_CELL] * len(experiments), tags[eval_id],
                                                _NONE_CELL.severity)
        facts.sort(key=lambda f: f.ordinal)
        cell = _cell(fold_side(facts, keys=False), reasons[(eval_id, case_id, experiment)])
        row_.cells[experiments.index(experiment)] = cell
        row_.severity = min(row_.severity, cell.severity)
    rows: list[MatrixRow] = []
    for eval_id, by_case in cases.items():
        if list(by_case) == [None]:
            rows.append(by_case[None])
            continue
        case_rows = sorted(by_case.values(), key=lambda r: (r.severity, r.case_id or ""))
        rows.append(_eval_of_cases(eval_id, case_rows, len(experiments), tags[eval_id]))
    rows.sort(key=lambda r: (r.severity, r.eval_id))
    return rows


def _eval_of_cases(eval_id: str, case_rows: list[MatrixRow], width: int, tags: tuple[str, ...]) -> MatrixRow:
    """An eval with dataset cases: per experiment the share of cases that passed (scored cleanly)."""
    cells: list[Cell] = []
    for column in range(width):
        present = [r.cells[column] for r in case_rows if r.cells[column] is not _NONE_CELL]
        if not present:
            cells.append(_NONE_CELL)
            continue
        ok = sum(1 for c in present if c.word in ("passed", "scored"))
        worst = min(present, key=lambda c: c.severity)
        word = "passed" if ok == len(present) else worst.word
        cells.append(Cell(word, f"{ok}/{len(present)} cases", MARKS.get(word.replace("-", " "), ""), worst.severity))
    severity = min(c.severity for c in cells)
    return MatrixRow(eval_id, None, cells, tags, severity, cases=case_rows)


# ── attempts ─────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class AttemptItem:
    """One summary row of the attempts list (its details live in the JSON payload, same index)."""

    index: int
    id: str
    experiment_id: str
    eval_id: str
    case_id: str | None
    ordinal: int
    word: str
    mark: str
    score: str
    duration: str
    tags: tuple[str, ...]
    open: bool
    reused_from: str | None

    @property
    def state_slug(self) -> str:
        return slug(self.word)

    @property
    def tags_text(self) -> str:
        return " ".join(self.tags)



#: The assertion columns the page reads (those the store has), sent once as the payload's `columns`.
RESULT_COLUMNS = ("state", "key", "label", "group_name", "role", "weight", "contribution", "measurement",
                  "threshold", "reason", "explanation", "match_name", "evidence", "judge_audit", "extras",
                  "source_file", "source_line", "or_stop")


class _Codes(dict[Any, int]):
    """Value → 1-based code, a new code the first time a value is seen (lookups stay in C).

    SQLite gives str, int, float, bytes or None; 1 and 1.0 share a code, which the page reads
    as the same number either way.
    """

    def __missing__(self, value: Any) -> int:
        self[value] = code = len(self)
        return code


def _results_by_attempt(results: Results) -> tuple[list[str], list[Any], dict[str, list[list[int]]]]:
    """Each attempt's results as rows of indexes into one table of distinct values (1-based; 0 = empty).

    Results repeat a lot (states, keys, labels, match names, files, evidence), so 100 000 of them
    travel as ~4 MB of small integers instead of ~15 MB of repeated text, and the page parses
    them that much faster. 0 and None stay different values (None is code 0).
    """
    columns = [c for c in RESULT_COLUMNS if c in results.columns]
    project = itemgetter(*(results.columns.index(c) for c in columns))
    at = results.columns.index("attempt_id")
    table = _Codes({None: 0})
    code = table.__getitem__
    grouped: dict[str, list[list[int]]] = {}
    for row in results.rows:  # already by attempt, severity order inside
        grouped.setdefault(row[at], []).append(list(map(code, project(row))))
    return columns, list(table)[1:], grouped


_ATTEMPT_FIELDS = ("reason", "error", "traceback", "stop_cause", "case_value", "sandbox", "notes", "started_at",
                   "duration_ms", "input_tokens", "output_tokens", "judge_tokens", "cost_usd", "estimated_cost_usd")


def _attempt_payload(row: Mapping[str, Any], results: list[list[int]],
                     turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    # What the summary row already shows (eval, experiment, state, score) is not repeated here.
    item: dict[str, Any] = {"id": row["id"], "results": results}
    score = score_text(row)
    if score:
        item["score"] = score
    if row.get("relation") == "reference":
        item["reused_from"] = row["run_id"]
    for name_ in _ATTEMPT_FIELDS:
        value = row.get(name_)
        if value is not None:
            item[name_] = value
    if row.get("case_id") is not None:
        item["case"] = row["case_id"]
    if turns:
        item["turns"] = list(turns)
    return item


def _attempts(data: ReportData, server_rows: int) -> tuple[list[AttemptItem], dict[str, Any]]:
    columns, values, results = _results_by_attempt(data.results)
    tag_cache: dict[tuple[str, str], tuple[str, ...]] = {}
    items: list[AttemptItem] = []
    payload: list[dict[str, Any]] = []
    for i, row in enumerate(data.attempts):
        word = attempt_word(row["state"], row.get("gate"))
        items.append(AttemptItem(
            index=i,
            id=row["id"],
            experiment_id=row["experiment_id"],
            eval_id=row["eval_id"],
            case_id=None if shown_eval_id(row["eval_id"], row.get("case_id")) == row["eval_id"] else row.get(
                "case_id"),  # shown apart only when the eval id does not carry it already
            ordinal=row["ordinal"],
            word=word,
            mark=MARKS.get(word, ""),
            score=score_text(row),
            duration=duration(row.get("duration_ms")),
            tags=_tags(row, tag_cache),
            open=word not in _OK_WORDS,
            reused_from=row["run_id"] if row.get("relation") == "reference" else None,
        ))
        payload.append(_attempt_payload(row, results.get(row["id"], []), data.turns.get(row["id"], ())))
    return items, {"columns": columns, "values": values, "attempts": payload}


# ── comparisons ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class PairItem:
    cls: str
    experiment: str
    eval_id: str
    case_id: str | None
    base: str
    new: str
    changed: str


@dataclass(frozen=True)
class ComparisonView:
    title: str
    base_label: str
    new_label: str
    counts: list[tuple[str, int]]
    sections: list[tuple[str, str, list[PairItem]]]  # (class, title, pairs) listed pair by pair
    rest: list[tuple[str, list[PairItem]]]  # the other classes, collapsed
    totals: list[ExperimentColumn] | None = None


def _pair_item(pair: Pair) -> PairItem:
    experiment = pair.experiment_id if pair.base_experiment_id == pair.experiment_id else ""
    return PairItem(pair.cls.value, experiment, shown_eval_id(pair.eval_id, pair.case_id), pair.case_id,
                    side_text(pair.base), side_text(pair.new), ", ".join(pair.changed_keys))


def _comparison(result: CompareResult, title: str, facts: Sequence[AttemptFacts] | None = None,
                models: Mapping[str, str | None] | None = None) -> ComparisonView:
    comparison = result.comparison
    titles = {PairClass.REGRESSED: "Regressed", PairClass.FIXED: "Fixed", PairClass.UNDECIDED: "Undecided now",
              PairClass.DECIDED: "Decided now", PairClass.STILL_FAILING: "Still failing",
              PairClass.ADDED: "Added", PairClass.REMOVED: "Removed", PairClass.UNCHANGED: "Unchanged"}
    totals = None
    if result.experiments is not None:
        a, b = result.experiments
        base_label, new_label = a, b
        titles[PairClass.FIXED], titles[PairClass.REGRESSED] = f"{b} wins", f"{b} loses"
        if facts is not None:
            totals = [_column(x, facts, (models or {}).get(x)) for x in result.experiments]
    else:
        base_label, new_label = f"run {result.base_run.id}", f"run {result.new_run.id}"
    sections = [(c.value, titles[c], [_pair_item(p) for p in comparison.of(c)])
                for c in comparison.order if c in LISTED]
    rest = [(titles[c], [_pair_item(p) for p in comparison.of(c)])
            for c in comparison.order if c not in LISTED and c is not PairClass.UNCHANGED]
    counts = [(c.value, n) for c, n in comparison.counts().items()]
    return ComparisonView(title, base_label, new_label, counts, [s for s in sections if s[2]],
                          [r for r in rest if r[1]], totals)


# ── the page ─────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Page:
    header: Header
    experiments: list[ExperimentColumn]
    matrix: list[MatrixRow]
    charts: list[Chart]
    attempts: list[AttemptItem]  # every attempt; the HTML holds the first `server_rows` of them
    states: list[str]  # state words present, for the filter
    tags: list[str]
    baseline: ComparisonView | None
    versus: ComparisonView | None
    payload: dict[str, Any]
    server_rows: int = SERVER_ROWS

    @property
    def written_rows(self) -> list[AttemptItem]:
        return self.attempts[: self.server_rows]

    @property
    def later_rows(self) -> list[list[AttemptItem]]:
        """The other rows in chunks, each moved into the list in one step after the page shows."""
        rest = self.attempts[self.server_rows:]
        return [rest[i:i + LATER_CHUNK] for i in range(0, len(rest), LATER_CHUNK)]


def build_page(data: ReportData, *, server_rows: int = SERVER_ROWS) -> Page:
    experiments = experiment_ids(data)
    models: dict[str, str | None] = {}
    for row in data.attempts:
        if row["experiment_id"] not in models:
            models[row["experiment_id"]] = _model(row)
    header = _header(data)
    columns = [_column(e, data.facts, models.get(e), header.summaries.get(e)) for e in experiments]
    items, payload = _attempts(data, server_rows)
    words = {i.word for i in items}
    baseline = versus = None
    if data.baseline is not None:
        baseline = _comparison(data.baseline, f"Against baseline run {data.baseline.base_run.id}")
    if data.experiments is not None and data.experiments.experiments is not None:
        a, b = data.experiments.experiments
        versus = _comparison(data.experiments, f"Experiment {a} against {b}", data.facts, models)
    return Page(
        header=header,
        experiments=columns,
        matrix=_matrix(data, experiments),
        charts=_charts.charts(columns, data.facts, experiments),
        attempts=items,
        states=[w for w in STATE_WORDS if w in words],
        tags=sorted({t for i in items for t in i.tags}),
        baseline=baseline,
        versus=versus,
        payload={"run": data.run.id, "first_slice": FIRST_SLICE, **payload},
        server_rows=server_rows,
    )
