"""The eval × experiment matrix, worst rows first, dataset cases grouped under their eval."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ... import outcomes
from ..._states import AttemptState, Derived, EvalKind, GateState
from ...comparison import (
    AttemptFacts,
    Side,
    case_eval_id,
    fold_side,
)
from ..compare_output import side_text
from ..data import ReportData
from ..viewmodels.standing import score_standing
from ..viewmodels.stats import counts_text
from ._words import MARKS, eval_tags, tags_attribute


@dataclass(frozen=True)
class Cell:
    word: str  # css state: passed | failed | errored | unavailable | scored | gate-failed | none
    text: str
    mark: str
    severity: int
    grade: str | None = None  # a score's standing (viewmodels/standing.py): high | middling | low
    title: str = ""  # the standing in words, for the cell's tooltip and screen readers
    ok: bool = False  # passed, or a score whose gates held that stands high
    rank: int = 3  # 0 low, 1 middling, 2 high score; 3 anything else (rows sort low scores first)

    @property
    def css(self) -> str:
        return f"s-{self.word}" + (f" g-{self.grade}" if self.grade else "")


@dataclass
class MatrixRow:
    eval_id: str
    case_id: str | None
    cells: list[Cell]
    tags: tuple[str, ...]
    severity: int
    cases: list[MatrixRow] = field(default_factory=list)  # dataset cases, grouped under their eval
    differs: bool = False  # the experiments disagree on this row (or on one of its cases)

    @property
    def all_ok(self) -> bool:
        return all(c.ok for c in self.cells if c is not _NONE_CELL) and all(r.all_ok for r in self.cases)

    @property
    def tags_attribute(self) -> str:
        return tags_attribute(self.tags)

    @property
    def collapsed(self) -> bool:
        """A case group whose cases all passed alike in every experiment: its cases start folded."""
        return bool(self.cases) and self.all_ok and not self.differs

    def sort_key(self, name: str) -> tuple[int, int, int, str]:
        """Worst first; then rows where the experiments differ, low scores, the name (reports.md)."""
        return (self.severity, 0 if self.differs else 1, min((c.rank for c in self.cells), default=3), name)


_NONE_CELL = Cell("none", "—", "", outcomes.attempt_severity(AttemptState.PASSED, None) + 1)


def _cell(side: Side, reasons: Iterable[str | None], confidence: float) -> Cell:
    severity = outcomes.attempt_severity(side.state, side.gate)
    if side.kind is EvalKind.PASS:
        word = side.state.value
        if word == "errored" and all(r == "evidence-unavailable" for r in reasons):
            word = "unavailable"
        text = word
        if side.attempts > 1:  # s/n over decided attempts with its Wilson interval (statistics.md)
            text += " " + counts_text(side.passed, side.decided - side.passed, side.errored, confidence)
        return Cell(word, text, MARKS.get(word, ""), severity, ok=word == "passed")
    text = side_text(side)
    if side.state is AttemptState.ERRORED:
        word = "errored"
    elif side.gate is GateState.FAILED:  # a definite failure, unrankable or not (its text says both)
        word = Derived.GATE_FAILED.value
    elif side.state is AttemptState.UNRANKABLE:
        word = "unavailable"
    elif side.gate is GateState.UNAVAILABLE:
        word = "unavailable"
    else:
        word = "scored"
    standing = score_standing(side.score, side.max_score) if word == "scored" else None
    if standing is None:
        return Cell(word, text, MARKS.get(word.replace("-", " "), ""), severity)
    title = standing.words + (" · gates passed" if side.gate is GateState.PASSED else "")
    return Cell(word, text, standing.mark, severity, standing.grade, title, ok=standing.grade == "high",
                rank=standing.rank)


def _differ(cells: Sequence[Cell]) -> bool:
    """The experiments disagree: different outcomes or scores, or the row is missing from one."""
    return len(cells) > 1 and len({(c.word, c.text) for c in cells}) > 1


def matrix_rows(data: ReportData, experiments: Sequence[str]) -> list[MatrixRow]:
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
            tags[parent] = eval_tags(row, tag_cache)
    cases: dict[str, dict[str | None, MatrixRow]] = {}
    for (eval_id, case_id, experiment), facts in groups.items():
        by_case = cases.setdefault(eval_id, {})
        row_ = by_case.get(case_id)
        if row_ is None:
            row_ = by_case[case_id] = MatrixRow(eval_id, case_id, [_NONE_CELL] * len(experiments), tags[eval_id],
                                                _NONE_CELL.severity)
        facts.sort(key=lambda f: f.ordinal)
        cell = _cell(fold_side(facts, keys=False), reasons[(eval_id, case_id, experiment)], data.confidence)
        row_.cells[experiments.index(experiment)] = cell
        row_.severity = min(row_.severity, cell.severity)
    rows: list[MatrixRow] = []
    for eval_id, by_case in cases.items():
        for row_ in by_case.values():
            row_.differs = _differ(row_.cells)
        if list(by_case) == [None]:
            rows.append(by_case[None])
            continue
        case_rows = sorted(by_case.values(), key=lambda r: r.sort_key(r.case_id or ""))
        rows.append(_eval_of_cases(eval_id, case_rows, len(experiments), tags[eval_id]))
    rows.sort(key=lambda r: r.sort_key(r.eval_id))
    return rows


def _eval_of_cases(eval_id: str, case_rows: list[MatrixRow], width: int, tags: tuple[str, ...]) -> MatrixRow:
    """An eval with dataset cases: per experiment the share of cases that passed (scored high, gates held)."""
    cells: list[Cell] = []
    for column in range(width):
        present = [r.cells[column] for r in case_rows if r.cells[column] is not _NONE_CELL]
        if not present:
            cells.append(_NONE_CELL)
            continue
        ok = sum(1 for c in present if c.ok)
        worst = min(present, key=lambda c: (c.severity, c.rank))
        text = f"{ok}/{len(present)} cases"
        if ok == len(present):
            cells.append(Cell("passed", text, MARKS["passed"], worst.severity, ok=True))
        else:
            title = f"worst case: {worst.title}" if worst.title else ""
            cells.append(Cell(worst.word, text, worst.mark, worst.severity, worst.grade, title, rank=worst.rank))
    severity = min(c.severity for c in cells)
    differs = _differ(cells) or any(r.differs for r in case_rows)
    return MatrixRow(eval_id, None, cells, tags, severity, cases=case_rows, differs=differs)
