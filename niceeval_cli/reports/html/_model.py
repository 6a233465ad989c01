"""The HTML report's view-model: from `ReportData` to what the template and the page script read.

Pure. The page is built in two parts: the skeleton (header, experiments, matrix, charts, one
summary row per attempt, comparisons) rendered by Jinja2 with autoescape, and the attempt
details (assertions, transcript, traceback, ...) embedded once as JSON and rendered by the
page's script when an attempt is opened. Every verdict comes from `outcomes` / `comparison`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from ..._states import ATTEMPT_WORDS
from .._safe import NAMED_ESCAPES, UNSAFE_RANGES
from ..agreement_output import table_rows
from ..data import ReportData
from . import _charts
from ._attempts import AttemptItem, attempt_items
from ._charts import Chart
from ._comparisons import ComparisonView, comparison_view
from ._details import Limits, payload_chunks
from ._matrix import MatrixRow, matrix_rows
from ._summary import (
    ExperimentColumn,
    Header,
    experiment_column,
    experiment_costs_by_id,
    experiment_ids,
    run_summary,
)
from ._words import model_of

#: Open attempts rendered before the page shows; the rest follow in idle slices.
FIRST_SLICE = 60
#: Summary rows in the list when the page shows; the others wait in inert <template>s, moved in
#: LATER_CHUNK at a time after it shows (laying out 10 000 rows at once holds the page for a long time).
SERVER_ROWS = 1000
LATER_CHUNK = 500
#: How much of the run's texts the page embeds (docs/reports.md, "Size").
LIMITS = Limits()
#: Attempts the list holds (worst first): the others are counted by the header, experiments, matrix
#: and charts, not listed — a run of a million attempts still makes a page a browser opens.
LISTED_ROWS = 20_000
#: Matrix rows (worst first, then where the experiments differ): the others are counted under it.
MATRIX_ROWS = 5_000
#: What the page script escapes in the details it builds, exactly as the terminal does (one home: _safe).
SAFE_TEXT = {"ranges": UNSAFE_RANGES, "named": NAMED_ESCAPES}


@dataclass(frozen=True)
class Page:
    header: Header
    experiments: list[ExperimentColumn]
    matrix: list[MatrixRow]
    charts: list[Chart]
    attempts: list[AttemptItem]  # the listed attempts; the HTML shows the first `server_rows` at once
    states: list[str]  # state words present, for the filter
    tags: list[str]
    baseline: ComparisonView | None
    versus: ComparisonView | None
    payload: Callable[[], Iterable[str]]  # the page's data as JSON text, in pieces (read as it is written)
    server_rows: int = SERVER_ROWS
    baseline_run: str | None = None  # --baseline: the run this one is compared with, named in the header
    unlisted: int = 0  # attempts past LISTED_ROWS: counted everywhere, not in the list
    matrix_left_out: int = 0  # matrix rows past MATRIX_ROWS
    #: The "Judges" section (judge-trust.md §4): its column heads and one text row per judge identity.
    judge_columns: tuple[str, ...] = ()
    judges: tuple[tuple[str, ...], ...] = ()

    @property
    def written_rows(self) -> list[AttemptItem]:
        return self.attempts[: self.server_rows]

    @property
    def later_rows(self) -> list[list[AttemptItem]]:
        """The other rows in chunks, each moved into the list in one step after the page shows."""
        rest = self.attempts[self.server_rows:]
        return [rest[i:i + LATER_CHUNK] for i in range(0, len(rest), LATER_CHUNK)]


def build_page(data: ReportData, *, server_rows: int = SERVER_ROWS, limits: Limits = LIMITS,
               listed: int = LISTED_ROWS, matrix_max: int = MATRIX_ROWS) -> Page:
    experiments = experiment_ids(data)
    models: dict[str, str | None] = {}
    for row in data.attempts:
        if row["experiment_id"] not in models:
            models[row["experiment_id"]] = model_of(row)
    header = run_summary(data)
    costs = experiment_costs_by_id(data)
    columns = [experiment_column(e, data.facts, models.get(e), header.summaries.get(e), costs.get(e))
               for e in experiments]
    items = attempt_items(data, listed)
    matrix = matrix_rows(data, experiments)
    words = {i.word for i in items}
    baseline = versus = None
    if data.baseline is not None:
        baseline = comparison_view(data.baseline, f"Against baseline run {data.baseline.base_run.id}")
    if data.experiments is not None and data.experiments.experiments is not None:
        a, b = data.experiments.experiments
        versus = comparison_view(data.experiments, f"Experiment {a} against {b}", data.facts, models, costs)
    judge_columns, judge_rows = table_rows(data.judges, between=False) if data.judges else ((), [])
    return Page(
        judge_columns=judge_columns,
        judges=tuple(tuple(row[c] for c in judge_columns) for row in judge_rows),
        header=header,
        experiments=columns,
        matrix=matrix[:matrix_max],
        charts=_charts.charts(columns, data.facts, experiments),
        attempts=items,
        states=[w for w in ATTEMPT_WORDS if w in words],
        tags=sorted({t for i in items for t in i.tags}),
        baseline=baseline,
        versus=versus,
        payload=partial(payload_chunks, data, {"run": data.run.id, "first_slice": FIRST_SLICE, "safe": SAFE_TEXT,
                                               "text_limit": limits.text}, limits, listed),
        server_rows=server_rows,
        baseline_run=data.baseline.base_run.id if data.baseline is not None else None,
        unlisted=max(0, len(data.attempts) - listed),
        matrix_left_out=max(0, len(matrix) - matrix_max),
    )
