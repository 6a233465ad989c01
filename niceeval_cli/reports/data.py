"""What the application hands the reports: one record per command's result (`app/` fills them
from the store, `reports/` turns them into output and never climbs back into `app`).

Plain frozen dataclasses over store rows, runner outcomes and comparisons; nothing here reads,
prints or imports rich.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import ExitCode

if TYPE_CHECKING:
    from .._records import TurnRecord
    from ..comparison import AttemptFacts, Comparison
    from ..experiment_totals import ExperimentTotals
    from ..runner import PlanTotals, RunOutcome
    from ..sandbox import KeptSandbox
    from ..store import MergeResult, OutcomeGroup, PassedEvals, PlanSlot
    from ..store.report_reads import AttemptTexts
    from ..store.rows import AssertionRow, AttemptRow, RunRow


# ── run ───────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class SealedRun:
    """A run's sealed rows as the summary and JUnit read them (from the store, after the run)."""

    run: RunRow
    groups: Sequence[OutcomeGroup]
    shown: list[tuple[AttemptRow, list[AssertionRow]]]  # the attempts the summary expands
    more: int = 0  # attempts the summary would expand beyond its limit (`view` shows them)
    attempts: list[AttemptRow] = field(default_factory=list)  # all of them (JUnit only)
    results: dict[str, list[AssertionRow]] = field(default_factory=dict)  # attempt id → results (JUnit)
    key_problem: bool = False  # some judge item is unavailable for want of an API key
    unobserved: bool = False  # some tool assertion is unavailable: the adapter did not observe tool calls
    costs: list[dict[str, object]] = field(default_factory=list)  # Store.costs: cost per experiment
    kept_sandboxes: list[tuple[str, str]] = field(default_factory=list)  # (experiment · eval#n, where) kept
    passed_evals: tuple[PassedEvals, ...] = ()  # evals whose every attempt passed: counted, not in `groups`
    not_run: tuple[PlanSlot, ...] = ()  # planned slots no attempt filled (JUnit only): interrupted, setup error


@dataclass(frozen=True)
class RunReport:
    outcome: RunOutcome
    sealed: SealedRun | None  # None: nothing was recorded (no run id)
    not_run: int | None  # planned slots with no sealed attempt (interrupted, setup error)
    confidence: float = 0.95  # the project's [stats] confidence: the summary's intervals

    @property
    def plan(self) -> PlanTotals | None:
        """What the plan decided (the runner counted it once); None: the run was not planned."""
        return self.outcome.plan


# ── view ──────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class ViewFilters:
    experiments: Sequence[str] = ()
    eval_prefixes: Sequence[str] = ()
    states: Sequence[str] = ()


@dataclass(frozen=True)
class RunPage:
    """What `view` shows for a run: the grouped outcomes for the header, the listed attempts."""

    run: RunRow
    groups: list[OutcomeGroup]
    experiments: list[str]  # the run's experiments the filters keep, in run order
    expanded: list[tuple[AttemptRow, list[AssertionRow]]]
    collapsed: list[AttemptRow]
    matching: int  # attempts matching the filters (the page shows at most `limit` of them)
    filters: ViewFilters
    not_run: int | None  # planned slots never run; None while the store does not record the plan
    costs: list[dict[str, object]] = field(default_factory=list)  # Store.costs: cost per experiment
    not_run_slots: tuple[PlanSlot, ...] = ()  # a shard group's slots no shard filled (listed as "not run")
    # (reason, count) of the run's own recorded-without-deciding results that could not be measured,
    # whatever the filters (Store.unavailable_records): the note its run summary printed
    unavailable_records: tuple[tuple[str, int], ...] = ()

    @property
    def shown(self) -> int:
        return len(self.expanded) + len(self.collapsed)


@dataclass(frozen=True)
class AttemptDetail:
    """`view @ATTEMPT_ID`: one attempt and all its results."""

    attempt: AttemptRow
    results: list[AssertionRow]
    turns: list[TurnRecord] = field(default_factory=list)  # the transcript (agents.md)


# ── compare ───────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class CompareResult:
    """The two sides read, and what comparing them found."""

    base_run: RunRow
    new_run: RunRow
    comparison: Comparison
    experiments: tuple[str, str] | None = None  # (A, B) when two experiments of one run were compared
    totals: tuple[ExperimentTotals, ExperimentTotals] | None = None


@dataclass(frozen=True)
class Results:
    """A run's assertion results as column names and tuples, grouped by attempt (severity order inside)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]

    def index(self, name: str) -> int | None:
        return self.columns.index(name) if name in self.columns else None


# ── report ────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class ReportData:
    """Everything the report shows, as read from the store (rows keep the store's column names).

    The short rows are read at once; each attempt's long texts (results, transcript, error, ...)
    only when the page is written, one attempt at a time (`details`), so a run of huge texts
    never sits in memory whole (issue 23, item 17).
    """

    store_path: Path
    run: RunRow
    attempts: Sequence[Mapping[str, Any]]  # the run's attempts, worst first (the store's order), no long texts
    facts: list[AttemptFacts]  # what comparing and the totals read, one per attempt (same order)
    baseline: CompareResult | None = None  # --baseline RUN_ID: that run against this one
    experiments: CompareResult | None = None  # two experiments of this run, A against B
    groups: list[OutcomeGroup] = field(default_factory=list)  # the run's outcomes grouped (view's header)
    #: planned slots no attempt filled (`--budget`, Ctrl-C, a missing shard): a pass so far is not passed
    not_run_slots: tuple[PlanSlot, ...] = ()
    costs: list[dict[str, Any]] = field(default_factory=list)  # per experiment, as `Store.costs` sums them
    #: text limit → a reader of one attempt's texts cut to it (attempt id → AttemptTexts), open for
    #: the `with` block: the page asks only for the attempts it embeds, one at a time.
    details: Callable[[int], AbstractContextManager[Callable[[str], AttemptTexts]]] | None = None
    #: Each judge identity's agreement with people's labels in the store (app.agreement's
    #: IdentityAgreement); empty without labels, and then the report has no "Judges" section.
    judges: Sequence[Any] = ()
    #: `[stats]` (or `report --alpha` / `--confidence`): every interval and significance the page shows.
    alpha: float = 0.05
    confidence: float = 0.95


# ── merge ─────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class MergeReport:
    target: Path
    sources: tuple[Path, ...]
    result: MergeResult
    merged: RunRow | None  # the merged logical run (a group for shards); None: the sources had no runs
    not_run: tuple[PlanSlot, ...]  # its planned slots that no attempt filled (a missing shard's)
    sealed: SealedRun | None = None  # its sealed rows, read for JUnit (`junit=True`)

    @property
    def exit_code(self) -> int:
        """The merged run's decided exit code (a group's from its sealed rows), for `--exit-code`."""
        if self.merged is None or self.merged.exit_code is None:
            return int(ExitCode.OK) if self.merged is None else int(ExitCode.UNDECIDED)
        return int(self.merged.exit_code)


# ── sandbox ───────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class SandboxListing:
    """What `sandbox list` shows (and `prune` removed): local workspaces and containers."""

    sandboxes: list[KeptSandbox]
    #: `prune` only: workspaces left because a process NiceEval did not start works inside (pids)
    left: list[tuple[KeptSandbox, list[int]]] = field(default_factory=list)

    def as_json(self) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = [
            {"kind": s.kind, "location": s.location, "status": s.status, "created": s.created, **dict(s.about)}
            for s in self.sandboxes
        ]
        rows += [{"kind": s.kind, "location": s.location, "status": "left-in-use", "created": s.created,
                  "pids": pids, **dict(s.about)} for s, pids in self.left]
        return rows


# ── init ──────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class InitFile:
    path: Path
    content: str


@dataclass(frozen=True)
class InitEntry:
    path: str  # relative to the folder `init` ran in
    written: bool  # False: it already existed and was left unchanged


@dataclass(frozen=True)
class InitReport:
    entries: list[InitEntry] = field(default_factory=list)  # in the order they were considered

    @property
    def written(self) -> list[str]:
        return [e.path for e in self.entries if e.written]


# ── listing ───────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class ProjectListing:
    """What `list --json` prints (`evals`, `experiments`, `warnings`), plus where evals were
    looked for. One record per eval (with its number of cases), or per case with `--cases`."""

    evals: list[dict[str, Any]]
    experiments: list[dict[str, Any]]
    where: str  # the eval roots, relative to the project
    warnings: list[str] = field(default_factory=list)  # evals whose case ids are row positions
    cases: bool = False  # one record per case (`list --cases`)

    def as_json(self) -> dict[str, list[Any]]:
        return {"evals": self.evals, "experiments": self.experiments, "warnings": self.warnings}


__all__ = [
    "AttemptDetail",
    "CompareResult",
    "InitEntry",
    "InitFile",
    "InitReport",
    "MergeReport",
    "ProjectListing",
    "ReportData",
    "Results",
    "RunPage",
    "RunReport",
    "SandboxListing",
    "SealedRun",
    "ViewFilters",
]
