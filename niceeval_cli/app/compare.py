"""`niceeval compare`: read two sides through the `Store`, class their pairs (`comparison`).

Two runs (`BASE [NEW]`, NEW defaulting to the latest run), or two experiments of one run
(`--experiments A B [RUN]`). Unknown or ambiguous ids are user errors (exit 2); `--fail-on`
turns chosen classes into exit 1, so CI can gate a change on "nothing regressed".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .. import _collector
from .._errors import ExitCode, UsageError
from .._states import (
    ASSERTION_STATE_OF,
    ATTEMPT_STATE_OF,
    GATE_OF,
    KIND_OF,
    AssertionState,
)
from ..comparison import AttemptFacts, PairClass, UnitFold, compare, compare_folds
from ..experiment_totals import experiment_totals
from ..outcomes import assertion_severity_sql
from ..reports.data import CompareResult, Results
from ..stats import DEFAULT_ALPHA, DEFAULT_CONFIDENCE, Significance
from ..store.rows import RunRow

if TYPE_CHECKING:
    from ..store import Store

__all__ = [
    "SIGNIFICANT_REGRESSION",
    "CompareResult",
    "FailOn",
    "GateDecision",
    "Results",
    "assertion_states",
    "attempt_facts",
    "compare_experiments",
    "compare_runs",
    "exit_code",
    "experiments_result",
    "gate",
    "load_comparison",
    "parse_fail_on",
    "run_results",
]




def run_results(store: Store, run: RunRow) -> Results:
    """Every assertion result of a run's attempts (reused ones included), in one read-only query.

    Through `Store.sql` (tuples, no per-row dicts): a run's every result is read at once.
    Ordered by attempt, then severity (outcomes.md), then registration order.
    """
    # A shard group reads as its member runs (scale.md).
    run_ids = ", ".join("'" + member.replace("'", "''") + "'" for member in store.run_scope(run.id))
    columns, rows = store.sql(  # the three columns comparing reads, not the results' texts
        "SELECT r.attempt_id, r.key, r.state FROM run_slots s JOIN assertion_results r ON r.attempt_id = s.attempt_id "
        f"WHERE s.run_id IN ({run_ids}) ORDER BY r.attempt_id, {assertion_severity_sql('r.state')}, r.ordinal"
    )
    return Results(columns, rows)


def attempt_facts(
    store: Store,
    run: RunRow,
    rows: Sequence[Mapping[str, Any]] | None = None,
    results: Results | Iterable[tuple[str, str, str]] | None = None,
) -> list[AttemptFacts]:
    """Every attempt of a run (reused ones included) with its assertion states by key.

    Three queries whatever the size of the run: attempts, their results, the run's slots.
    `rows` / `results` are the run's attempt and assertion rows when the caller has read them
    (`results` may be a stream of (attempt_id, key, state), grouped by attempt).
    """
    rows_have_rules = rows is None
    if rows is None:
        rows = store.attempt_columns(run.id, _FACT_COLUMNS)
    if results is None:
        results = run_results(store, run)
    if isinstance(results, Results):
        at, key, state = (results.columns.index(c) for c in ("attempt_id", "key", "state"))
        results = ((r[at], r[key], r[state]) for r in results.rows)
    states = assertion_states(results)
    if rows_have_rules:  # the slot's pass rule came with each row
        return [_facts(row, row["pass_rule"], states.get(row["id"], _NO_STATES)) for row in rows]
    rules = {(s.experiment_id, s.eval_id): s.pass_rule for s in store.run_slots(run.id)}
    return [_facts(row, rules.get((row["experiment_id"], row["eval_id"])), states.get(row["id"], _NO_STATES))
            for row in rows]


_NO_STATES: Mapping[str, AssertionState] = MappingProxyType({})

#: What `_facts` reads of an attempt row.
_FACT_COLUMNS = ("id", "experiment_id", "eval_id", "kind", "state", "gate", "score", "max_score", "case_id",
                 "ordinal", "unavailable_weight", "duration_ms", "cost_usd", "eval_module", "eval_name")


def assertion_states(results: Iterable[tuple[str, str, str]]) -> dict[str, Mapping[str, AssertionState]]:
    """attempt id → its assertion states by key (a later result of a key wins), from results grouped
    by attempt. Attempts whose states are alike share one read-only mapping: a run of many
    attempts holds a handful of them, not an entry per assertion result."""
    shared: dict[tuple[tuple[str, AssertionState], ...], Mapping[str, AssertionState]] = {}
    keys: dict[str, str] = {}
    found: dict[str, Mapping[str, AssertionState]] = {}
    current: str | None = None
    pairs: list[tuple[str, AssertionState]] = []

    def settle() -> None:
        if current is None:
            return
        if current in found:  # not grouped after all: merge with what was seen of it
            pairs[:0] = list(found[current].items())
        both = tuple(pairs)
        mapping = shared.get(both)
        if mapping is None:
            mapping = shared[both] = MappingProxyType(dict(both))
        found[current] = mapping

    for attempt_id, key, state in results:
        if attempt_id != current:
            settle()
            current, pairs = attempt_id, []
        pairs.append((keys.setdefault(key, key), ASSERTION_STATE_OF[state]))
    settle()
    return found


def _facts(row: Mapping[str, Any], rule: str | None, states: Mapping[str, AssertionState]) -> AttemptFacts:
    gate = row.get("gate")
    return AttemptFacts(
        experiment_id=row["experiment_id"],
        eval_id=row["eval_id"],
        kind=KIND_OF[row["kind"]],
        state=ATTEMPT_STATE_OF[row["state"]],
        gate=None if gate is None else GATE_OF[gate],
        score=row.get("score"),
        max_score=row.get("max_score"),
        case_id=row.get("case_id"),  # NULL (or no column, before datasets) for evals without cases
        ordinal=row["ordinal"],
        pass_rule=rule,
        assertion_states=states,
        unavailable_weight=row.get("unavailable_weight"),
        duration_ms=row.get("duration_ms"),
        cost_usd=row.get("cost_usd"),
        eval_module=row.get("eval_module"),
        eval_name=row.get("eval_name"),
    )


def load_comparison(
    path: Path, base: str | None, new: str | None = None, *, experiments: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA, confidence: float = DEFAULT_CONFIDENCE,
) -> CompareResult:
    """`niceeval compare BASE [NEW]` or `niceeval compare --experiments A B [RUN]` (RUN in `base`),
    the store opened read-only (so it works while a run is writing)."""
    from ..store import Store

    if experiments is not None:
        if len(experiments) != 2:
            raise UsageError("--experiments takes two experiment ids: A (base) and B (new).")
        if new is not None:
            raise UsageError("with --experiments A B give at most one run (the run holding both experiments).")
    elif base is None:
        raise UsageError("give the BASE run id (or the start of one); `niceeval query runs` lists them.")
    with Store.open(Path(path), readonly=True) as store, _collector.building():
        if experiments is not None:
            return compare_experiments(store, experiments[0], experiments[1], base, alpha=alpha,
                                       confidence=confidence)
        assert base is not None
        return compare_runs(store, base, new, alpha=alpha, confidence=confidence)


def compare_runs(store: Store, base_ref: str, new_ref: str | None = None, *, alpha: float = DEFAULT_ALPHA,
                 confidence: float = DEFAULT_CONFIDENCE) -> CompareResult:
    """BASE against NEW (default: the latest run); ids are exact or unique prefixes.

    Each run's units are folded in SQL (`Store.unit_folds`): 10 000 rows to pair rather than
    100 000 attempts and their results — for a finished run, the rows stored when it was
    finalised — on connections of their own in two threads (SQLite runs a statement without the
    GIL, so on two cores a fold on read overlaps). Where the store cannot fold a run's attempts
    by counts, both runs' attempts are read and compared as they are. (scipy, for the tests, is
    imported meanwhile by a helper process when the caller started one: `scipy_helper`.)"""
    base_run = store.resolve_run(base_ref)
    new_run = store.resolve_run(new_ref)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="niceeval-compare") as pool:
        base_folding = pool.submit(_unit_folds, store.path, base_run.id)
        new_folding = pool.submit(_unit_folds, store.path, new_run.id)
        base_units, new_units = base_folding.result(), new_folding.result()
    comparison = None
    missing = (_missing(store, base_run), _missing(store, new_run))
    if base_units is not None and new_units is not None:
        comparison = compare_folds(base_units, new_units, alpha=alpha, confidence=confidence, missing=missing)
    if comparison is None:
        comparison = compare(attempt_facts(store, base_run), attempt_facts(store, new_run), alpha=alpha,
                             confidence=confidence, missing=missing)
    return CompareResult(base_run, new_run, comparison)


def _missing(store: Store, run: RunRow) -> Counter[tuple[str, str, str | None]]:
    """Per unit, the run's (or shard group's) planned attempts no attempt filled: a unit missing
    some is decided only as far as they could not change it (a missing shard may pass it)."""
    if not run.not_run:
        return Counter()
    return Counter((slot.experiment_id, slot.eval_id, slot.case_id) for slot in store.not_run(run.id))


def _unit_folds(path: Path, run_id: str) -> list[UnitFold] | None:
    """`Store.unit_folds` on a connection of its own (a connection stays in its thread)."""
    from ..store import Store

    with Store.open(path, readonly=True) as store:
        return store.unit_folds(run_id)


def compare_experiments(store: Store, a: str, b: str, run_ref: str | None = None, *, alpha: float = DEFAULT_ALPHA,
                        confidence: float = DEFAULT_CONFIDENCE) -> CompareResult:
    """Experiment A (playing BASE) against B (playing NEW) in one run (default: the latest)."""
    run = store.resolve_run(run_ref)
    return experiments_result(run, attempt_facts(store, run), a, b, alpha=alpha, confidence=confidence)


def experiments_result(run: RunRow, facts: Sequence[AttemptFacts], a: str, b: str, *,
                       alpha: float = DEFAULT_ALPHA, confidence: float = DEFAULT_CONFIDENCE) -> CompareResult:
    """A against B over one run's attempts; an experiment the run does not hold is a usage error."""
    present = list(dict.fromkeys([*run.experiments, *sorted({f.experiment_id for f in facts})]))  # file order
    for name in (a, b):
        if name not in present:
            known = ", ".join(present) or "none"
            raise UsageError(
                f"--experiments: run {run.id} has no experiment {name!r}; its experiments are: {known}."
            )
    if a == b:
        raise UsageError(f"--experiments needs two different experiments, got {a!r} twice.")
    comparison = compare(facts, facts, experiments=(a, b), alpha=alpha, confidence=confidence)
    totals = (experiment_totals(facts, a), experiment_totals(facts, b))
    return CompareResult(run, run, comparison, experiments=(a, b), totals=totals)


#: `--fail-on significant-regression` (statistics.md): a gate of its own, beside the class names.
SIGNIFICANT_REGRESSION = "significant-regression"


@dataclass(frozen=True)
class FailOn:
    """What `--fail-on` gates on: pair classes (exit 1 when any pair is in one), and/or the
    noise-aware `significant-regression` gate (exit 1 / 5 / 0)."""

    classes: tuple[PairClass, ...] = ()
    significant_regression: bool = False


def parse_fail_on(values: Iterable[str]) -> FailOn:
    """`--fail-on` values (repeatable; commas also separate), checked against the class names
    and `significant-regression`.

    A value that names no class (`""`, `",,,"`) is a usage error: read as nothing, it would
    silently turn the CI gate off."""
    choices = ", ".join([*(c.value for c in PairClass), SIGNIFICANT_REGRESSION])
    classes: list[PairClass] = []
    significant = False
    for value in values:
        names = [part.strip() for part in value.split(",") if part.strip()]
        if not names:
            raise UsageError(
                f"--fail-on {value!r} names no comparison class, so it would gate nothing; give one or more "
                f"of {choices} (repeat the flag or separate them with commas), or leave --fail-on out."
            )
        for name in names:
            if name == SIGNIFICANT_REGRESSION:
                significant = True
                continue
            try:
                classes.append(PairClass(name))
            except ValueError:
                raise UsageError(f"--fail-on {name!r} is not a comparison class; choose from {choices}.") from None
    return FailOn(tuple(dict.fromkeys(classes)), significant)


@dataclass(frozen=True)
class GateDecision:
    code: ExitCode
    # for stderr: why the gate failed (1) or could not tell (5), or what it passed over (0)
    note: str | None = None


def gate(result: CompareResult, fail_on: FailOn) -> GateDecision:
    """The exit code of `--fail-on`: 1 when a class gate trips, or when a regression is
    significant or an experiment's paired interval lies wholly below 0; 5 when the only
    regressions are within noise or untestable ("could not tell"); else 0."""
    comparison = result.comparison
    if fail_on.classes and comparison.any_in(fail_on.classes):
        tripped = [f"{n} {cls.value}" for cls in fail_on.classes if (n := len(comparison.of(cls)))]
        return GateDecision(ExitCode.FAILED, "gate failed: " + ", ".join(tripped) + " (--fail-on "
                            + ",".join(cls.value for cls in fail_on.classes) + ")")
    if not fail_on.significant_regression:
        return GateDecision(ExitCode.OK, _unweighed(result, fail_on))
    regressed = comparison.of(PairClass.REGRESSED)
    significant = sum(1 for p in regressed if p.significance is Significance.SIGNIFICANT)
    below = [change for change in comparison.experiments if change.difference.wholly_below_zero]
    if significant or below:
        causes = [f"{significant} regression{'s' if significant != 1 else ''} significant"] if significant else []
        causes += [f"{change.experiment_id}'s paired {change.style}-style difference lies wholly below 0"
                   for change in below]
        return GateDecision(ExitCode.FAILED,
                            "gate failed: " + "; ".join(causes) + " (--fail-on significant-regression)")
    if regressed:
        within = sum(1 for p in regressed if p.significance is Significance.WITHIN_NOISE)
        untestable = len(regressed) - within
        parts = [f"{n} regression{'s' if n != 1 else ''} {what}" for n, what in
                 ((within, "within noise"), (untestable, "untestable")) if n]
        return GateDecision(ExitCode.UNDECIDED, "could not tell: " + " and ".join(parts) + "; run more attempts "
                            "(niceeval run --attempts N) so each unit has more evidence")
    return GateDecision(ExitCode.OK, _unweighed(result, fail_on))


#: Pairs NEW holds no verdict for — undecided now, or gone — which a gate passes over unless named.
_NO_NEW_VERDICT = {PairClass.UNDECIDED: "undecided now",
                   PairClass.REMOVED: "removed (in BASE only)"}


def _unweighed(result: CompareResult, fail_on: FailOn) -> str | None:
    """A gate that passes says which pairs it passed over without evidence from NEW, so a NEW
    run whose evals all errored (or that ran none of them) never reads as a clean pass."""
    if not (fail_on.classes or fail_on.significant_regression):
        return None
    counts = [(cls, len(result.comparison.of(cls))) for cls in _NO_NEW_VERDICT if cls not in fail_on.classes]
    parts = [f"{n} pair{'s' if n != 1 else ''} {_NO_NEW_VERDICT[cls]}" for cls, n in counts if n]
    if not parts:
        return None
    flags = " ".join(f"--fail-on {cls.value}" for cls, n in counts if n)
    return ("gate passed without weighing " + " and ".join(parts) + f": NEW holds no verdict for them; add {flags} "
            "to fail on them")


def exit_code(result: CompareResult, fail_on: FailOn | Sequence[PairClass]) -> ExitCode:
    """The gate's exit code (a plain sequence of classes: the class gate alone)."""
    if not isinstance(fail_on, FailOn):
        fail_on = FailOn(tuple(fail_on))
    return gate(result, fail_on).code
