"""The comparisons the report ends with: the run against its baseline, experiment A against B."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...comparison import (
    AttemptFacts,
    Pair,
    PairClass,
    shown_eval_id,
)
from ..compare_output import LISTED, change_line, side_text, significance_text
from ..data import CompareResult
from ..viewmodels.cost import ExperimentCost
from ..viewmodels.text import when
from ._summary import ExperimentColumn, experiment_column


@dataclass(frozen=True)
class PairItem:
    cls: str
    experiment: str
    eval_id: str
    case_id: str | None
    base: str
    new: str
    changed: str
    significance: str = ""  # regressed / fixed: `significant (q = 0.012)`, `within noise (q = 0.41)`


@dataclass(frozen=True)
class ComparisonView:
    title: str
    base_label: str
    new_label: str
    counts: list[tuple[str, int]]
    sections: list[tuple[str, str, list[PairItem]]]  # (class, title, pairs) listed pair by pair
    rest: list[tuple[str, list[PairItem]]]  # the other classes, collapsed
    totals: list[ExperimentColumn] | None = None
    base_started: str = ""  # when the baseline run started (between runs)
    changes: list[str] = field(default_factory=list)  # the paired differences with their intervals

    @property
    def counts_text(self) -> str:
        """`2 regressed · 1 fixed · 3 unchanged` (the classes that occur), for the page's header."""
        return " · ".join(f"{n} {cls}" for cls, n in self.counts if n) or "no pairs"


def _pair_item(pair: Pair) -> PairItem:
    experiment = pair.experiment_id if pair.base_experiment_id == pair.experiment_id else ""
    return PairItem(pair.cls.value, experiment, shown_eval_id(pair.eval_id, pair.case_id), pair.case_id,
                    side_text(pair.base), side_text(pair.new), ", ".join(pair.changed_keys),
                    significance_text(pair) or "")


def comparison_view(result: CompareResult, title: str, facts: Sequence[AttemptFacts] | None = None,
                models: Mapping[str, str | None] | None = None,
                costs: Mapping[str, ExperimentCost] | None = None) -> ComparisonView:
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
            totals = [experiment_column(x, facts, (models or {}).get(x), cost=(costs or {}).get(x))
                      for x in result.experiments]
    else:
        base_label, new_label = f"run {result.base_run.id}", f"run {result.new_run.id}"
    sections = [(c.value, titles[c], [_pair_item(p) for p in comparison.of(c)])
                for c in comparison.order if c in LISTED]
    rest = [(titles[c], [_pair_item(p) for p in comparison.of(c)])
            for c in comparison.order if c not in LISTED and c is not PairClass.UNCHANGED]
    counts = [(c.value, n) for c, n in comparison.counts().items()]
    changes = [change_line(c, named=result.experiments is None).strip() for c in comparison.experiments]
    return ComparisonView(title, base_label, new_label, counts, [s for s in sections if s[2]],
                          [r for r in rest if r[1]], totals, when(result.base_run.started_at), changes)
